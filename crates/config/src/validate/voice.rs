//! The `voice` block: Maven as a Wyoming conversation agent, and the speech services `maven
//! listen` uses.

use std::net::{IpAddr, SocketAddr};

use serde_json::Value;

use super::Validator;
use crate::{ProblemKind, VoiceConfig};

impl Validator<'_> {
    pub(crate) fn voice(&mut self, v: Option<&Value>) -> VoiceConfig {
        let mut voice = VoiceConfig::default();
        let Some(v) = v else { return voice };
        let Some(o) = self.object(
            "voice",
            v,
            &[
                "listen",
                "peers",
                "asr",
                "tts",
                "wake",
                "language",
                "allow_private",
            ],
            true,
        ) else {
            return voice;
        };
        if let Some(s) = self.string(&o, "listen") {
            match s.parse::<SocketAddr>() {
                Ok(a) => voice.listen = Some(a),
                Err(_) => self.bad_value(
                    "voice.listen",
                    "an address and port such as \"127.0.0.1:10600\"",
                    format!("{s:?}"),
                ),
            }
        }
        for p in self.string_list(&o, "peers") {
            match p.parse::<IpAddr>() {
                Ok(a) => voice.peers.push(a),
                Err(_) => self.bad_value(
                    "voice.peers",
                    "IP addresses such as \"192.168.1.20\"",
                    format!("{p:?}"),
                ),
            }
        }
        if let Some(a) = voice.listen.filter(|a| !a.ip().is_loopback()) {
            if voice.peers.is_empty() {
                self.problem(
                    "voice.listen",
                    ProblemKind::Refused {
                        reason: format!(
                            "{a} is not on the loopback: name the addresses allowed to connect in voice.peers (on the loopback only the owner's own processes may)"
                        ),
                    },
                );
            }
        }
        for (key, slot) in [
            ("asr", &mut voice.asr),
            ("tts", &mut voice.tts),
            ("wake", &mut voice.wake),
        ] {
            if let Some(s) = self.string(&o, key) {
                match wyoming::Address::parse(&s) {
                    Ok(a) => *slot = Some(a),
                    Err(e) => self.bad_value(
                        &format!("voice.{key}"),
                        "a Wyoming service address, tcp://HOST:PORT or unix://PATH",
                        format!("{s:?} ({e})"),
                    ),
                }
            }
        }
        if let Some(l) = self.string(&o, "language") {
            match l.as_str() {
                "en" | "ru" => voice.language = l,
                _ => self.bad_value("voice.language", "\"en\" or \"ru\"", format!("{l:?}")),
            }
        }
        voice.allow_private = self.boolean(&o, "allow_private", false);
        voice
    }
}

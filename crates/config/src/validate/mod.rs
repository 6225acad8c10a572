//! One validator per block of the file: the top level and the small blocks here, the
//! larger ones in their own files.

mod acts;
mod fetch;
mod mcp;
mod voice;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::read::{describe, show_duration, Obj, Validator};
use crate::{
    Config, McpTiming, ProblemKind, RouterConfig, RouterKind, RouterTools, Secret, WebConfig,
    DEFAULT_SESSION_HOURS, MAX_SESSION_HOURS,
};

/// The hard maximum of any MCP request deadline (M-6).
const MAX_MCP_TIMEOUT: Duration = Duration::from_secs(600);

impl Validator<'_> {
    pub(crate) fn config(&mut self, root: &Map<String, Value>) -> Config {
        let top = self.keys(
            "",
            root,
            &[
                "web",
                "router",
                "fetch",
                "feeds",
                "feed_min_interval",
                "mcp_servers",
                "mcp_timing",
                "acts",
                "voice",
                "sentences",
            ],
            true,
        );
        let feed_min_interval =
            self.positive_duration(&top, "feed_min_interval", Duration::from_secs(300));
        let web = self.web(root.get("web"));
        let router = self.router(root.get("router"));
        let fetch = self.fetch(root.get("fetch"));
        let feeds = self.feeds(root.get("feeds"), feed_min_interval);
        let mcp_servers = self.mcp_servers(root.get("mcp_servers"));
        let mcp_timing = self.mcp_timing(root.get("mcp_timing"));
        let acts = self.acts(root.get("acts"), &mcp_servers);
        let voice = self.voice(root.get("voice"));
        let mut sentences = Vec::new();
        for (i, p) in self.string_list(&top, "sentences").into_iter().enumerate() {
            let what = " (a sentence file or a folder of them)";
            if let Some(p) = self.absolute_path(&format!("sentences[{i}]"), what, p) {
                sentences.push(p);
            }
        }
        Config {
            source: None,
            web,
            router,
            fetch,
            feeds,
            feed_min_interval,
            mcp_servers,
            mcp_timing,
            acts,
            voice,
            sentences,
        }
    }

    pub(crate) fn mcp_timing(&mut self, v: Option<&Value>) -> McpTiming {
        let mut t = McpTiming::default();
        let Some(v) = v else { return t };
        let keys = &[
            "backoff_min",
            "backoff_max",
            "health",
            "refresh",
            "min_uptime",
        ];
        let Some(o) = self.object("mcp_timing", v, keys, true) else {
            return t;
        };
        t.backoff_min = self.positive_duration(&o, "backoff_min", t.backoff_min);
        t.backoff_max = self.positive_duration(&o, "backoff_max", t.backoff_max);
        t.health = self.positive_duration(&o, "health", t.health);
        t.refresh = self.positive_duration(&o, "refresh", t.refresh);
        if let Some(d) = self.duration(&o, "min_uptime") {
            t.min_uptime = d;
        }
        if t.backoff_min > t.backoff_max {
            self.bad_value(
                "mcp_timing.backoff_min",
                format!("at most backoff_max ({})", show_duration(t.backoff_max)),
                show_duration(t.backoff_min),
            );
        }
        t
    }

    pub(crate) fn web(&mut self, v: Option<&Value>) -> WebConfig {
        let default_listen = SocketAddr::from(([127, 0, 0, 1], 8765));
        let mut web = WebConfig {
            listen: default_listen,
            hosts: vec!["localhost".into(), "127.0.0.1".into()],
            passphrase_hash: None,
            session: Duration::from_secs(DEFAULT_SESSION_HOURS * 3600),
        };
        let Some(v) = v else { return web };
        let Some(o) = self.object(
            "web",
            v,
            &["listen", "hosts", "passphrase_hash", "session_hours"],
            true,
        ) else {
            return web;
        };
        if let Some(h) = self.positive(&o, "session_hours") {
            if h > MAX_SESSION_HOURS {
                self.bad_value(
                    "web.session_hours",
                    "at most 720 (thirty days)",
                    h.to_string(),
                );
            } else {
                web.session = Duration::from_secs(h * 3600);
            }
        }
        if let Some(s) = self.string(&o, "listen") {
            match s.parse::<SocketAddr>() {
                Ok(a) => web.listen = a,
                Err(_) => self.bad_value(
                    "web.listen",
                    "an address and port such as \"127.0.0.1:8765\"",
                    format!("{s:?}"),
                ),
            }
        }
        if o.map.contains_key("hosts") {
            web.hosts = self.string_list(&o, "hosts");
        }
        if let Some(h) = self.string(&o, "passphrase_hash") {
            if !h.starts_with("$argon2id$") {
                self.problem(
                    "web.passphrase_hash",
                    ProblemKind::BadSecret {
                        expected: "an argon2id hash (\"$argon2id$...\")",
                    },
                );
            } else {
                web.passphrase_hash = Some(Secret(h));
            }
        }
        web
    }

    pub(crate) fn router(&mut self, v: Option<&Value>) -> RouterConfig {
        let mut r = RouterConfig {
            kind: RouterKind::Rules,
            url: None,
            model: None,
            context_tokens: 4096,
            timeout: Duration::from_secs(30),
            allow_private: false,
            headers: BTreeMap::new(),
            tools: RouterTools::Auto,
        };
        let Some(v) = v else { return r };
        let Some(o) = self.object(
            "router",
            v,
            &[
                "kind",
                "url",
                "model",
                "context_tokens",
                "timeout",
                "allow_private",
                "headers",
                "tools",
            ],
            true,
        ) else {
            return r;
        };
        if let Some(t) = o.map.get("tools") {
            match t.as_str() {
                Some("auto") => r.tools = RouterTools::Auto,
                Some("off") => r.tools = RouterTools::Off,
                Some(_) => self.bad_value("router.tools", "\"auto\" or \"off\"", describe(t)),
                None => self.wrong_type("router.tools", "\"auto\" or \"off\"", t),
            }
        }
        if let Some(k) = o.map.get("kind") {
            match k.as_str() {
                Some("rules") => r.kind = RouterKind::Rules,
                Some("llm") => r.kind = RouterKind::Llm,
                Some(_) => self.bad_value("router.kind", "\"rules\" or \"llm\"", describe(k)),
                None => self.wrong_type("router.kind", "\"rules\" or \"llm\"", k),
            }
        }
        // The endpoint's secrets only need to resolve when the llm router is in use.
        let o = Obj {
            enabled: r.kind == RouterKind::Llm,
            ..o
        };
        r.url = self.http_url(&o, "url");
        r.model = self.nonempty_string(&o, "model");
        if let Some(n) = self.positive(&o, "context_tokens") {
            if n < 512 {
                self.bad_value(
                    "router.context_tokens",
                    "at least 512 tokens",
                    n.to_string(),
                );
            } else {
                r.context_tokens = n;
            }
        }
        r.timeout = self.positive_duration(&o, "timeout", r.timeout);
        r.allow_private = self.boolean(&o, "allow_private", false);
        r.headers = self.secret_map(&o, "headers");
        if r.kind == RouterKind::Llm && r.url.is_none() && !o.map.contains_key("url") {
            self.problem(
                "router.url",
                ProblemKind::Missing {
                    needed: "the llm router needs the URL of an OpenAI-compatible endpoint",
                },
            );
        }
        r
    }
}

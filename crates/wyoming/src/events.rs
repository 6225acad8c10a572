//! The typed events Maven meets, read from and made into [`Event`]s.
//!
//! [`Message::from_event`] reads an event of a known type into its variant (an unknown type is
//! [`Message::Other`], kept as it came); [`Message::into_event`] makes the wire event. Fields
//! this crate does not know are ignored when read, as the reference library does.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Error, Event};

/// The format of PCM audio: samples per second, bytes per sample, channels (interleaved,
/// little-endian signed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AudioFormat {
    /// Samples per second (16000).
    pub rate: u32,
    /// Bytes per sample (2 for S16_LE).
    pub width: u16,
    /// Channels (1 for mono).
    pub channels: u16,
}

impl AudioFormat {
    /// 16 kHz, 16-bit, mono: what speech-to-text services take and what `arecord` records.
    pub const SPEECH: AudioFormat = AudioFormat {
        rate: 16_000,
        width: 2,
        channels: 1,
    };

    /// Bytes per second of this format.
    pub fn bytes_per_second(&self) -> u64 {
        u64::from(self.rate) * u64::from(self.width) * u64::from(self.channels)
    }

    /// Bytes per frame (one sample of each channel).
    pub fn frame_bytes(&self) -> usize {
        usize::from(self.width) * usize::from(self.channels)
    }
}

impl std::fmt::Display for AudioFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} Hz, {} bytes per sample, {} channel{}",
            self.rate,
            self.width,
            self.channels,
            if self.channels == 1 { "" } else { "s" }
        )
    }
}

/// Who made a program or model (`{name, url}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribution {
    /// The author's name.
    #[serde(default)]
    pub name: String,
    /// Where it comes from.
    #[serde(default)]
    pub url: String,
}

/// A model of a program (speech-to-text model, a voice, a conversation agent's language set).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// Its name.
    pub name: String,
    /// Who made it.
    #[serde(default)]
    pub attribution: Attribution,
    /// Whether it is installed.
    #[serde(default)]
    pub installed: bool,
    /// A description for people.
    #[serde(default)]
    pub description: Option<String>,
    /// Its version.
    #[serde(default)]
    pub version: Option<String>,
    /// The languages it takes (`en`, `ru`).
    #[serde(default)]
    pub languages: Vec<String>,
}

/// A program a service offers, of any kind (`asr`, `tts`, `handle`, `wake`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// Its name.
    pub name: String,
    /// Who made it.
    #[serde(default)]
    pub attribution: Attribution,
    /// Whether it is installed.
    #[serde(default)]
    pub installed: bool,
    /// A description for people.
    #[serde(default)]
    pub description: Option<String>,
    /// Its version.
    #[serde(default)]
    pub version: Option<String>,
    /// Its models (`asr`, `handle`, `wake`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<Model>,
    /// Its voices (`tts`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub voices: Vec<Model>,
    /// A `handle` program that streams its answer (`handled-start`, `-chunk`, `-stop`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub supports_handled_streaming: bool,
    /// An `asr` program that streams its transcript.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub supports_transcript_streaming: bool,
    /// A `tts` program that takes its text streamed (`synthesize-start`, `-chunk`, `-stop`) and
    /// answers each sentence's audio as it is made, then `synthesize-stopped`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub supports_synthesize_streaming: bool,
}

/// What a service offers (`info`): its programs by kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Info {
    /// Speech-to-text programs.
    #[serde(default)]
    pub asr: Vec<Program>,
    /// Text-to-speech programs.
    #[serde(default)]
    pub tts: Vec<Program>,
    /// Conversation agents (`transcript` in, `handled` out).
    #[serde(default)]
    pub handle: Vec<Program>,
    /// Intent recognisers.
    #[serde(default)]
    pub intent: Vec<Program>,
    /// Wake-word detectors.
    #[serde(default)]
    pub wake: Vec<Program>,
    /// Microphones.
    #[serde(default)]
    pub mic: Vec<Program>,
    /// Sound outputs.
    #[serde(default)]
    pub snd: Vec<Program>,
}

/// `transcript`: what was said, as text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The text.
    pub text: String,
    /// Its language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The conversation's context (Home Assistant's `conversation_id`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
}

/// `transcribe`: what the speech that follows should be transcribed as.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcribe {
    /// The model to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The language spoken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The conversation's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
}

/// The voice of a `synthesize`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Voice {
    /// The voice's name from the service's `info`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its language.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The speaker, for a voice with several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
}

/// `synthesize`: text to speak.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Synthesize {
    /// The text.
    pub text: String,
    /// The voice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<Voice>,
}

/// `synthesize-start`: streamed text to speak begins; its sentences follow as
/// `synthesize-chunk`s, then `synthesize-stop`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SynthesizeStart {
    /// The voice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<Voice>,
    /// The conversation's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
}

/// `synthesize-chunk`: a piece of streamed text to speak (one sentence of
/// [`crate::text::sentences`] when this crate sends it). Like every event's data, its text is
/// bounded by [`crate::codec::Limits::data`] when read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SynthesizeChunk {
    /// The piece's text.
    pub text: String,
}

/// `audio-start` and `audio-chunk`'s header: the format and a time in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudioHeader {
    /// Samples per second.
    pub rate: u32,
    /// Bytes per sample.
    pub width: u16,
    /// Channels.
    pub channels: u16,
    /// Milliseconds since the audio started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
}

impl AudioHeader {
    /// The format it announces.
    pub fn format(&self) -> AudioFormat {
        AudioFormat {
            rate: self.rate,
            width: self.width,
            channels: self.channels,
        }
    }

    /// A header of `format` with no timestamp.
    pub fn of(format: AudioFormat) -> AudioHeader {
        AudioHeader {
            rate: format.rate,
            width: format.width,
            channels: format.channels,
            timestamp: None,
        }
    }
}

/// `audio-stop`: the end of the audio.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AudioStop {
    /// Milliseconds since the audio started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
}

/// `detect`: listen for these wake words (all when empty).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detect {
    /// The wake words' names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Vec<String>>,
}

/// `detection`: a wake word was heard.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detection {
    /// Which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When, in milliseconds since the audio started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
}

/// `handled` and `not-handled`: a conversation agent's answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Handled {
    /// The answer's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The conversation's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
}

/// `handled-start`: a streamed answer begins.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandledStart {
    /// The conversation's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
}

/// `handled-chunk`: a piece of a streamed answer (one sentence of [`crate::text::sentences`]
/// when this crate's server sends it; joined, the pieces are the `handled` text). Its text is
/// bounded by [`crate::codec::Limits::data`] when read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandledChunk {
    /// The piece's text.
    pub text: String,
}

/// `error`: the peer could not do what was asked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorEvent {
    /// What went wrong, for people.
    pub text: String,
    /// A code for programs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// `ping` and `pong`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ping {
    /// Echoed back in the `pong`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A Wyoming event, typed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// `describe`: what do you offer?
    Describe,
    /// `info`: what a service offers.
    Info(Info),
    /// `transcribe`.
    Transcribe(Transcribe),
    /// `transcript`.
    Transcript(Transcript),
    /// `audio-start`.
    AudioStart(AudioHeader),
    /// `audio-chunk`, with its PCM.
    AudioChunk(AudioHeader, Vec<u8>),
    /// `audio-stop`.
    AudioStop(AudioStop),
    /// `synthesize`.
    Synthesize(Synthesize),
    /// `synthesize-start`.
    SynthesizeStart(SynthesizeStart),
    /// `synthesize-chunk`.
    SynthesizeChunk(SynthesizeChunk),
    /// `synthesize-stop`: the streamed text is whole.
    SynthesizeStop,
    /// `synthesize-stopped`: the audio of the streamed text is whole.
    SynthesizeStopped,
    /// `detect`.
    Detect(Detect),
    /// `detection`.
    Detection(Detection),
    /// `not-detected`.
    NotDetected,
    /// `handled`.
    Handled(Handled),
    /// `not-handled`.
    NotHandled(Handled),
    /// `handled-start`.
    HandledStart(HandledStart),
    /// `handled-chunk`.
    HandledChunk(HandledChunk),
    /// `handled-stop`.
    HandledStop,
    /// `error`.
    Error(ErrorEvent),
    /// `ping`.
    Ping(Ping),
    /// `pong`.
    Pong(Ping),
    /// Any other type, as it came.
    Other(Event),
}

fn data_of<T: DeserializeOwned>(event: &Event) -> Result<T, Error> {
    serde_json::from_value(Value::Object(event.data.clone())).map_err(|e| Error::BadEvent {
        kind: event.kind.clone(),
        reason: crate::error::clip(&e.to_string(), 300),
    })
}

fn event_of<T: Serialize>(kind: &str, data: &T) -> Event {
    let data = match serde_json::to_value(data) {
        Ok(Value::Object(m)) => m,
        // The data types above are structs of strings, numbers and maps: always an object.
        _ => Map::new(),
    };
    Event {
        kind: kind.to_owned(),
        data,
        payload: Vec::new(),
    }
}

impl Message {
    /// The event's `type`.
    pub fn kind(&self) -> &str {
        match self {
            Message::Describe => "describe",
            Message::Info(_) => "info",
            Message::Transcribe(_) => "transcribe",
            Message::Transcript(_) => "transcript",
            Message::AudioStart(_) => "audio-start",
            Message::AudioChunk(..) => "audio-chunk",
            Message::AudioStop(_) => "audio-stop",
            Message::Synthesize(_) => "synthesize",
            Message::SynthesizeStart(_) => "synthesize-start",
            Message::SynthesizeChunk(_) => "synthesize-chunk",
            Message::SynthesizeStop => "synthesize-stop",
            Message::SynthesizeStopped => "synthesize-stopped",
            Message::Detect(_) => "detect",
            Message::Detection(_) => "detection",
            Message::NotDetected => "not-detected",
            Message::Handled(_) => "handled",
            Message::NotHandled(_) => "not-handled",
            Message::HandledStart(_) => "handled-start",
            Message::HandledChunk(_) => "handled-chunk",
            Message::HandledStop => "handled-stop",
            Message::Error(_) => "error",
            Message::Ping(_) => "ping",
            Message::Pong(_) => "pong",
            Message::Other(e) => &e.kind,
        }
    }

    /// Reads `event` as its type says; [`Error::BadEvent`] names the type and what its data
    /// lacks. A payload on an event that has none is ignored.
    pub fn from_event(event: Event) -> Result<Message, Error> {
        Ok(match event.kind.as_str() {
            "describe" => Message::Describe,
            "info" => Message::Info(data_of(&event)?),
            "transcribe" => Message::Transcribe(data_of(&event)?),
            "transcript" => Message::Transcript(data_of(&event)?),
            "audio-start" => Message::AudioStart(data_of(&event)?),
            "audio-chunk" => {
                let header = data_of(&event)?;
                Message::AudioChunk(header, event.payload)
            }
            "audio-stop" => Message::AudioStop(data_of(&event)?),
            "synthesize" => Message::Synthesize(data_of(&event)?),
            "synthesize-start" => Message::SynthesizeStart(data_of(&event)?),
            "synthesize-chunk" => Message::SynthesizeChunk(data_of(&event)?),
            "synthesize-stop" => Message::SynthesizeStop,
            "synthesize-stopped" => Message::SynthesizeStopped,
            "detect" => Message::Detect(data_of(&event)?),
            "detection" => Message::Detection(data_of(&event)?),
            "not-detected" => Message::NotDetected,
            "handled" => Message::Handled(data_of(&event)?),
            "not-handled" => Message::NotHandled(data_of(&event)?),
            "handled-start" => Message::HandledStart(data_of(&event)?),
            "handled-chunk" => Message::HandledChunk(data_of(&event)?),
            "handled-stop" => Message::HandledStop,
            "error" => Message::Error(data_of(&event)?),
            "ping" => Message::Ping(data_of(&event)?),
            "pong" => Message::Pong(data_of(&event)?),
            _ => Message::Other(event),
        })
    }

    /// The wire event.
    pub fn into_event(self) -> Event {
        let kind = self.kind().to_owned();
        match self {
            Message::Describe
            | Message::NotDetected
            | Message::HandledStop
            | Message::SynthesizeStop
            | Message::SynthesizeStopped => Event::new(kind),
            Message::Info(d) => event_of(&kind, &d),
            Message::Transcribe(d) => event_of(&kind, &d),
            Message::Transcript(d) => event_of(&kind, &d),
            Message::AudioStart(d) => event_of(&kind, &d),
            Message::AudioChunk(d, pcm) => Event {
                payload: pcm,
                ..event_of(&kind, &d)
            },
            Message::AudioStop(d) => event_of(&kind, &d),
            Message::Synthesize(d) => event_of(&kind, &d),
            Message::SynthesizeStart(d) => event_of(&kind, &d),
            Message::SynthesizeChunk(d) => event_of(&kind, &d),
            Message::Detect(d) => event_of(&kind, &d),
            Message::Detection(d) => event_of(&kind, &d),
            Message::Handled(d) | Message::NotHandled(d) => event_of(&kind, &d),
            Message::HandledStart(d) => event_of(&kind, &d),
            Message::HandledChunk(d) => event_of(&kind, &d),
            Message::Error(d) => event_of(&kind, &d),
            Message::Ping(d) | Message::Pong(d) => event_of(&kind, &d),
            Message::Other(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(kind: &str, data: Value) -> Event {
        let Value::Object(data) = data else {
            panic!("an object")
        };
        Event {
            kind: kind.to_owned(),
            data,
            payload: Vec::new(),
        }
    }

    #[test]
    fn the_reference_librarys_events_read_as_their_types() {
        let table = [
            (
                event(
                    "transcript",
                    json!({"text": "List tasks in box.", "language": "en", "context": {"conversation_id": "c1"}}),
                ),
                Message::Transcript(Transcript {
                    text: "List tasks in box.".into(),
                    language: Some("en".into()),
                    context: Some(
                        json!({"conversation_id": "c1"})
                            .as_object()
                            .unwrap()
                            .clone(),
                    ),
                }),
            ),
            (
                event(
                    "audio-start",
                    json!({"rate": 22050, "width": 2, "channels": 1, "timestamp": null}),
                ),
                Message::AudioStart(AudioHeader {
                    rate: 22050,
                    width: 2,
                    channels: 1,
                    timestamp: None,
                }),
            ),
            (
                event(
                    "synthesize",
                    json!({"text": "hi", "voice": {"name": "en_US-joe-medium"}}),
                ),
                Message::Synthesize(Synthesize {
                    text: "hi".into(),
                    voice: Some(Voice {
                        name: Some("en_US-joe-medium".into()),
                        ..Voice::default()
                    }),
                }),
            ),
            (
                event("handled", json!({})),
                Message::Handled(Handled::default()),
            ),
            (
                event(
                    "synthesize-start",
                    json!({"voice": {"name": "en_US-joe-medium"}, "context": {"conversation_id": "c1"}}),
                ),
                Message::SynthesizeStart(SynthesizeStart {
                    voice: Some(Voice {
                        name: Some("en_US-joe-medium".into()),
                        ..Voice::default()
                    }),
                    context: Some(
                        json!({"conversation_id": "c1"})
                            .as_object()
                            .unwrap()
                            .clone(),
                    ),
                }),
            ),
            (
                event("synthesize-chunk", json!({"text": "Done. "})),
                Message::SynthesizeChunk(SynthesizeChunk {
                    text: "Done. ".into(),
                }),
            ),
            (event("synthesize-stop", json!({})), Message::SynthesizeStop),
            (
                event("synthesize-stopped", json!({})),
                Message::SynthesizeStopped,
            ),
            (
                event(
                    "handled-start",
                    json!({"context": {"conversation_id": "c1"}}),
                ),
                Message::HandledStart(HandledStart {
                    context: Some(
                        json!({"conversation_id": "c1"})
                            .as_object()
                            .unwrap()
                            .clone(),
                    ),
                }),
            ),
            (
                event("handled-chunk", json!({"text": "Two tasks."})),
                Message::HandledChunk(HandledChunk {
                    text: "Two tasks.".into(),
                }),
            ),
            (event("handled-stop", json!({})), Message::HandledStop),
            (
                event("error", json!({"text": "no model", "code": "E1"})),
                Message::Error(ErrorEvent {
                    text: "no model".into(),
                    code: Some("E1".into()),
                }),
            ),
            (
                event("run-satellite", json!({"x": 1})),
                Message::Other(event("run-satellite", json!({"x": 1}))),
            ),
        ];
        for (ev, want) in table {
            let got = Message::from_event(ev.clone()).unwrap();
            assert_eq!(got, want);
            assert_eq!(
                Message::from_event(got.into_event()).unwrap(),
                want,
                "{ev:?}"
            );
        }
    }

    #[test]
    fn a_known_event_with_wrong_data_is_named() {
        let table = [
            (event("transcript", json!({})), "a Wyoming `transcript` event is malformed: missing field `text`"),
            (
                event("audio-chunk", json!({"rate": "fast", "width": 2, "channels": 1})),
                "a Wyoming `audio-chunk` event is malformed: invalid type: string \"fast\", expected u32",
            ),
            (event("synthesize-chunk", json!({})), "a Wyoming `synthesize-chunk` event is malformed: missing field `text`"),
            (event("handled-chunk", json!({"text": 7})), "a Wyoming `handled-chunk` event is malformed: invalid type: integer `7`, expected a string"),
            (
                event("audio-start", json!({"rate": 16000, "width": 70000, "channels": 1})),
                "a Wyoming `audio-start` event is malformed: invalid value: integer `70000`, expected u16",
            ),
        ];
        for (ev, want) in table {
            assert_eq!(Message::from_event(ev).unwrap_err().to_string(), want);
        }
    }

    /// A streamed piece of text is held to the data bound like any event: a chunk one byte
    /// over it is refused before it is read, one at the bound is read.
    #[tokio::test]
    async fn a_streamed_chunk_is_held_to_the_data_bound() {
        let limits = crate::codec::Limits {
            data: 1024,
            ..crate::codec::Limits::default()
        };
        for (kind, text) in [("synthesize-chunk", "a"), ("handled-chunk", "b")] {
            let chunk = |n: usize| {
                let text = text.repeat(n);
                match kind {
                    "synthesize-chunk" => Message::SynthesizeChunk(SynthesizeChunk { text }),
                    _ => Message::HandledChunk(HandledChunk { text }),
                }
            };
            // {"text":"…"} is 11 bytes beside the text.
            let fits = crate::codec::encode(&chunk(1024 - 11).into_event());
            let mut r = tokio::io::BufReader::new(fits.as_slice());
            let got = crate::codec::read_event(&mut r, &limits)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(Message::from_event(got).unwrap(), chunk(1024 - 11));
            let over = crate::codec::encode(&chunk(1024 - 10).into_event());
            let mut r = tokio::io::BufReader::new(over.as_slice());
            let err = crate::codec::read_event(&mut r, &limits).await.unwrap_err();
            assert!(err.is_too_big(), "{kind}: {err:?}");
        }
    }

    #[test]
    fn info_reads_what_faster_whisper_sends() {
        let data = json!({"asr": [{"name": "faster-whisper", "attribution": {"name": "Guillaume Klein", "url": "https://github.com/guillaumekln/faster-whisper/"}, "installed": true, "description": "Faster Whisper transcription with CTranslate2", "version": "3.8.1", "models": [{"name": "tiny.en", "attribution": {"name": "Systran", "url": "https://huggingface.co/Systran"}, "installed": true, "description": "tiny.en", "version": "1.2.1", "languages": ["en"]}], "supports_transcript_streaming": true, "requires_external_vad": true}], "tts": [], "handle": [], "intent": [], "wake": [], "mic": [], "snd": []});
        let Message::Info(info) = Message::from_event(event("info", data)).unwrap() else {
            panic!("not info")
        };
        assert_eq!(info.asr[0].models[0].languages, ["en"]);
        assert!(info.asr[0].supports_transcript_streaming);
    }
}

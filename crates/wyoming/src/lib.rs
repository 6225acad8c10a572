//! wyoming: the Wyoming voice protocol — the wire Home Assistant, Rhasspy and the speech
//! services people run at home (faster-whisper, Piper, openWakeWord) speak — for Maven, bounded
//! like every reader of bytes from outside.
//!
//! - [`codec`]: one event on the wire (a JSON header line, its data, its payload), read within
//!   bounds of size and time ([`codec::Limits`]) and written as the reference library writes it.
//! - [`events`]: the typed events ([`Message`]): `describe`/`info`, `transcribe`/`transcript`,
//!   `audio-start`/`-chunk`/`-stop`, `synthesize` and its streamed form
//!   (`synthesize-start`/`-chunk`/`-stop`/`-stopped`), `detect`/`detection`/`not-detected`,
//!   `handled`/`not-handled` and the streamed `handled-start`/`-chunk`/`-stop`, `error`,
//!   `ping`/`pong`.
//! - [`Address`]: `tcp://HOST:PORT` or `unix://PATH`.
//! - [`Client`]: one connection to a speech service — [`Client::describe`],
//!   [`Client::transcribe`], [`Client::synthesize`], and [`Client::speak`], whose audio comes
//!   sentence by sentence as it is made ([`Synthesis`]) — each bounded in time, bytes and
//!   events.
//!   Its TCP connections are opened by the caller's [`Dialer`]: this crate opens none itself.
//!   [`Client::into_split`] gives a [`Sender`] and a [`Receiver`] to stream live audio while an
//!   answer is awaited.
//! - [`server::serve`]: an accepted connection dispatched to a [`server::Handler`] (`describe`
//!   → `info`, `transcript` → `handled`/`not-handled`, a streaming agent's answer sentence by
//!   sentence before it).
//! - [`text::sentences`]: an answer cut into the sentences it is streamed and spoken in.
//! - [`audio`]: WAV files, 16 kHz mono speech from other rates, the end of an utterance.
//!
//! ```no_run
//! # async fn demo(dialer: impl wyoming::Dialer) -> Result<(), wyoming::Error> {
//! let asr = wyoming::Address::parse("tcp://127.0.0.1:10300")?;
//! let tts = wyoming::Address::parse("unix:///run/piper.sock")?;
//! let limits = wyoming::ClientLimits::default();
//! let speech = wyoming::Client::connect(&tts, &dialer, limits).await?.synthesize("Hello.", None).await?;
//! let pcm = wyoming::audio::to_speech(speech.format, &speech.pcm)?;
//! let mut stt = wyoming::Client::connect(&asr, &dialer, limits).await?;
//! let transcript = stt.transcribe(&pcm, wyoming::AudioFormat::SPEECH, Some("en")).await?;
//! assert!(transcript.text.contains("Hello"));
//! # Ok(()) }
//! ```
//!
//! No byte from a peer can cause a panic: the crate takes the panic lints, and its reader is
//! fuzzed (`fuzz/fuzz_targets/wyoming_reader.rs`).

#![warn(clippy::expect_used, clippy::panic)]

mod address;
pub mod audio;
mod client;
pub mod codec;
mod error;
pub mod events;
pub mod server;
pub mod text;

pub use address::Address;
pub use client::{
    check_speech_format, Client, ClientLimits, DialError, Dialer, Receiver, Sender, Speech, Stream,
    Synthesis,
};
pub use codec::{read_event, write_event, Event, Limits};
pub use error::Error;
pub use events::{AudioFormat, Info, Message, Transcript, Voice};

/// Entry points for the fuzz targets. Not part of the stable API.
#[doc(hidden)]
pub mod fuzzing {
    use crate::codec::{read_event, Limits};
    use crate::events::Message;

    /// Reads arbitrary bytes as a stream of events under small bounds, each event typed, and
    /// the bytes as a WAV file. Must not panic.
    pub fn reader(data: &[u8]) {
        let _ = crate::audio::read_wav(data);
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
        else {
            return;
        };
        let limits = Limits {
            header: 256,
            data: 256,
            payload: 1024,
            ..Limits::default()
        };
        rt.block_on(async {
            let mut r = tokio::io::BufReader::with_capacity(16, data);
            while let Ok(Some(event)) = read_event(&mut r, &limits).await {
                if let Ok(m) = Message::from_event(event) {
                    let _ = crate::codec::encode(&m.into_event());
                }
            }
        });
    }
}

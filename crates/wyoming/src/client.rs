//! A client of a Wyoming service: speech to text, text to speech, `describe`.
//!
//! A [`Client`] holds one connection. [`Client::connect`] dials a TCP address through the
//! caller's [`Dialer`] (the daemon passes its guarded door; tests a loopback dialer) or connects
//! a Unix socket itself. Each exchange ([`Client::describe`], [`Client::transcribe`],
//! [`Client::synthesize`], [`Client::speak`]) is bounded as a whole by [`ClientLimits::answer`]
//! and, event by event, by [`ClientLimits::event`]; what the service sends back is bounded in
//! bytes of audio and in events. A service that answers `error` is [`Error::Service`].
//!
//! [`Client::speak`] sends a text sentence by sentence ([`crate::text::sentences`]): streamed
//! (`synthesize-start`, a `synthesize-chunk` each, the whole `synthesize` for a service that
//! ignores the stream, `synthesize-stop`) to a service whose `info` says
//! `supports_synthesize_streaming`, else one `synthesize` per sentence, each sent when the
//! audio of the one before has ended; its [`Synthesis`] gives the audio as it comes, so the
//! first sentence can play while the next is synthesized.
//!
//! # Cancel safety
//!
//! No exchange is cancel safe, and none is after an error: the stream may be left inside an
//! event. A client whose exchange failed or was dropped must be dropped too.

use std::future::Future;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, BufReader, ReadHalf, WriteHalf};
use tokio::net::TcpStream;

use crate::error::clip;
use crate::events::{
    AudioFormat, AudioHeader, AudioStop, Info, Message, Synthesize, SynthesizeChunk,
    SynthesizeStart, Transcribe, Transcript, Voice,
};
use crate::{codec, Address, Error};

/// A byte stream a client or a server speaks Wyoming over.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// The error a [`Dialer`] returns (shown as the cause of [`Error::Connect`]).
pub type DialError = Box<dyn std::error::Error + Send + Sync>;

/// Opens the TCP connection to a `tcp://` service. The daemon's is its guarded door (which
/// vets the address it dials); there is no default, so that no TCP connection is opened but
/// through the caller's.
pub trait Dialer: Send + Sync {
    /// A connected stream to `host`:`port`.
    fn dial(
        &self,
        host: &str,
        port: u16,
    ) -> impl Future<Output = Result<TcpStream, DialError>> + Send;
}

/// The bounds of a client's exchanges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientLimits {
    /// Each event read or written.
    pub event: codec::Limits,
    /// The connect (the dial or the Unix socket). Default 10 s.
    pub connect: Duration,
    /// One whole exchange, from the first byte sent to the last byte of the answer. Default
    /// 120 s.
    pub answer: Duration,
    /// The most audio a `synthesize` answer may hold. Default 32 MiB (12 minutes of Piper's
    /// 22 kHz mono).
    pub audio_bytes: u64,
    /// The most events one answer may take. Default 65 536.
    pub events: u64,
}

impl Default for ClientLimits {
    fn default() -> Self {
        ClientLimits {
            event: codec::Limits::default(),
            connect: Duration::from_secs(10),
            answer: Duration::from_secs(120),
            audio_bytes: 32 * 1024 * 1024,
            events: 65_536,
        }
    }
}

/// Synthesized speech: its format and its PCM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Speech {
    /// The format the service announced.
    pub format: AudioFormat,
    /// The samples, interleaved little-endian.
    pub pcm: Vec<u8>,
}

/// The audio formats a client takes back from a text-to-speech service: 16-bit samples, one or
/// two channels, 8 to 48 kHz.
pub fn check_speech_format(format: AudioFormat) -> Result<(), Error> {
    if format.width != 2
        || !(1..=2).contains(&format.channels)
        || !(8_000..=48_000).contains(&format.rate)
    {
        return Err(Error::Audio {
            reason: format!(
                "{format}; 16-bit samples (width 2), 1 or 2 channels, 8000 to 48000 Hz are taken"
            ),
        });
    }
    Ok(())
}

/// `exchange` within `after`, or [`Error::Timeout`] naming `what`.
async fn deadline<T>(
    what: &'static str,
    after: Duration,
    exchange: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    match tokio::time::timeout(after, exchange).await {
        Ok(result) => result,
        Err(_) => Err(Error::Timeout { what, after }),
    }
}

/// One connection to a Wyoming service.
pub struct Client {
    conn: BufReader<Box<dyn Stream>>,
    limits: ClientLimits,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to `address`: a `tcp://` one through `dialer`, a `unix://` one directly; both
    /// within [`ClientLimits::connect`].
    pub async fn connect<D: Dialer>(
        address: &Address,
        dialer: &D,
        limits: ClientLimits,
    ) -> Result<Client, Error> {
        let connect = async {
            let stream: Box<dyn Stream> = match address {
                Address::Tcp { host, port } => Box::new(dialer.dial(host, *port).await?),
                Address::Unix(path) => Box::new(tokio::net::UnixStream::connect(path).await?),
            };
            Ok::<_, DialError>(stream)
        };
        match tokio::time::timeout(limits.connect, connect).await {
            Ok(Ok(stream)) => Ok(Client::from_stream(stream, limits)),
            Ok(Err(source)) => Err(Error::Connect {
                address: address.to_string(),
                source,
            }),
            Err(_) => Err(Error::Timeout {
                what: "connection to the Wyoming service",
                after: limits.connect,
            }),
        }
    }

    /// A client over a stream that is already connected.
    pub fn from_stream(stream: Box<dyn Stream>, limits: ClientLimits) -> Client {
        Client {
            conn: BufReader::new(stream),
            limits,
        }
    }

    /// The client as two halves that can be used at once: a [`Sender`] that streams events
    /// (live audio to a wake-word or speech-to-text service) while a [`Receiver`] waits for the
    /// answer (a `detection`, a `transcript`).
    pub fn into_split(self) -> (Sender, Receiver) {
        let (r, w) = tokio::io::split(self.conn);
        (
            Sender {
                w,
                limits: self.limits,
            },
            Receiver {
                r: BufReader::new(r),
                limits: self.limits,
            },
        )
    }

    /// Sends one event.
    pub async fn send(&mut self, message: Message) -> Result<(), Error> {
        codec::write_event(&mut self.conn, &message.into_event(), &self.limits.event).await
    }

    /// Receives one event, typed; `None` when the service closed the connection between events.
    pub async fn receive(&mut self) -> Result<Option<Message>, Error> {
        match codec::read_event(&mut self.conn, &self.limits.event).await? {
            Some(event) => Message::from_event(event).map(Some),
            None => Ok(None),
        }
    }

    /// The next event of an answer: counted against [`ClientLimits::events`]; a close is
    /// [`Error::Closed`] naming `awaited`, an `error` event is [`Error::Service`].
    async fn next(&mut self, seen: &mut u64, awaited: &'static str) -> Result<Message, Error> {
        *seen += 1;
        if *seen > self.limits.events {
            return Err(Error::TooMuch {
                what: awaited,
                limit: self.limits.events,
                unit: "events",
            });
        }
        match self.receive().await? {
            None => Err(Error::Closed { awaited }),
            Some(Message::Error(e)) => Err(Error::Service {
                text: clip(&e.text, 500),
                code: e.code.map(|c| clip(&c, 100)),
            }),
            Some(m) => Ok(m),
        }
    }

    /// Asks what the service offers (`describe` → `info`). Events before the `info` (a
    /// `pong`, a streaming notice) are skipped, within the bounds.
    pub async fn describe(&mut self) -> Result<Info, Error> {
        deadline("answer to `describe`", self.limits.answer, async move {
            let c = self;
            c.send(Message::Describe).await?;
            let mut seen = 0;
            loop {
                if let Message::Info(info) = c.next(&mut seen, "its `info`").await? {
                    return Ok(info);
                }
            }
        })
        .await
    }

    /// Sends `pcm` (in `format`) to a speech-to-text service, as `transcribe {language}`,
    /// `audio-start`, `audio-chunk`s of a tenth of a second, `audio-stop`, and returns its
    /// `transcript`. Streamed transcript pieces (`transcript-start`, `-chunk`, `-stop`) are
    /// skipped: the final `transcript` holds the whole text.
    pub async fn transcribe(
        &mut self,
        pcm: &[u8],
        format: AudioFormat,
        language: Option<&str>,
    ) -> Result<Transcript, Error> {
        let frame = format.frame_bytes();
        if format.rate == 0 || frame == 0 || !pcm.len().is_multiple_of(frame) {
            return Err(Error::Audio {
                reason: format!(
                    "{} bytes of {format} is not a whole number of samples",
                    pcm.len()
                ),
            });
        }
        let chunk = usize::try_from(format.bytes_per_second() / 10)
            .unwrap_or(usize::MAX)
            .max(frame)
            / frame
            * frame;
        let transcribe = Transcribe {
            language: language.map(str::to_owned),
            ..Transcribe::default()
        };
        deadline(
            "`transcript` after the audio",
            self.limits.answer,
            async move {
                let c = self;
                c.send(Message::Transcribe(transcribe)).await?;
                let header = AudioHeader::of(format);
                c.send(Message::AudioStart(header)).await?;
                for piece in pcm.chunks(chunk) {
                    c.send(Message::AudioChunk(header, piece.to_vec())).await?;
                }
                c.send(Message::AudioStop(AudioStop::default())).await?;
                let mut seen = 0;
                loop {
                    match c.next(&mut seen, "a `transcript`").await? {
                        Message::Transcript(t) => return Ok(t),
                        Message::Other(e) if e.kind.starts_with("transcript-") => {}
                        Message::Pong(_) => {}
                        other => {
                            return Err(Error::Unexpected {
                                got: clip(&other.kind().escape_debug().to_string(), 100),
                                expected: "a `transcript`",
                            })
                        }
                    }
                }
            },
        )
        .await
    }

    /// Asks a text-to-speech service to speak `text` (`synthesize`) and gathers its answer:
    /// `audio-start`, `audio-chunk`s of the same format, `audio-stop`. The format must be one
    /// [`check_speech_format`] takes; the audio is bounded by [`ClientLimits::audio_bytes`].
    pub async fn synthesize(&mut self, text: &str, voice: Option<Voice>) -> Result<Speech, Error> {
        let request = Synthesize {
            text: text.to_owned(),
            voice,
        };
        let max = self.limits.audio_bytes;
        deadline("synthesized audio", self.limits.answer, async move {
            let c = self;
            c.send(Message::Synthesize(request)).await?;
            let mut seen = 0;
            let mut format = None;
            let mut pcm = Vec::new();
            loop {
                match c.next(&mut seen, "synthesized audio").await? {
                    Message::AudioStart(h) => {
                        if format.is_some() {
                            return Err(Error::Unexpected {
                                got: "audio-start".to_owned(),
                                expected: "an `audio-chunk` or `audio-stop` (audio had started)",
                            });
                        }
                        check_speech_format(h.format())?;
                        format = Some(h.format());
                    }
                    Message::AudioChunk(h, bytes) => {
                        let Some(f) = format else {
                            return Err(Error::Unexpected {
                                got: "audio-chunk".to_owned(),
                                expected: "`audio-start` first",
                            });
                        };
                        if h.format() != f {
                            return Err(Error::Audio {
                                reason: format!(
                                    "a chunk of {} in audio that started as {f}",
                                    h.format()
                                ),
                            });
                        }
                        if !bytes.len().is_multiple_of(f.frame_bytes()) {
                            return Err(Error::Audio {
                                reason: format!(
                                    "a chunk of {} bytes is not a whole number of {f} frames",
                                    bytes.len()
                                ),
                            });
                        }
                        if (pcm.len() + bytes.len()) as u64 > max {
                            return Err(Error::TooMuch {
                                what: "synthesized audio",
                                limit: max,
                                unit: "bytes",
                            });
                        }
                        pcm.extend_from_slice(&bytes);
                    }
                    Message::AudioStop(_) => {
                        let Some(format) = format else {
                            return Err(Error::Unexpected {
                                got: "audio-stop".to_owned(),
                                expected: "`audio-start` first",
                            });
                        };
                        return Ok(Speech { format, pcm });
                    }
                    Message::Other(e) if e.kind.starts_with("synthesize-") => {}
                    Message::SynthesizeStopped | Message::Pong(_) => {}
                    other => {
                        return Err(Error::Unexpected {
                            got: clip(&other.kind().escape_debug().to_string(), 100),
                            expected: "synthesized audio",
                        })
                    }
                }
            }
        })
        .await
    }

    /// Asks a text-to-speech service to speak `text` sentence by sentence: streamed when
    /// `streaming` (the service's `info` says `supports_synthesize_streaming`), else one
    /// `synthesize` per sentence. The audio comes through the [`Synthesis`], as it is made;
    /// the whole exchange is bounded by [`ClientLimits::answer`], its audio by
    /// [`ClientLimits::audio_bytes`] and its events by [`ClientLimits::events`].
    pub async fn speak(
        &mut self,
        text: &str,
        voice: Option<Voice>,
        streaming: bool,
    ) -> Result<Synthesis<'_>, Error> {
        let until = tokio::time::Instant::now() + self.limits.answer;
        let pieces = crate::text::sentences(text);
        let mut left: std::collections::VecDeque<String> = pieces
            .iter()
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        let done = left.is_empty();
        let send = async {
            if done {
            } else if streaming {
                self.send(Message::SynthesizeStart(SynthesizeStart {
                    voice: voice.clone(),
                    context: None,
                }))
                .await?;
                for piece in &pieces {
                    self.send(Message::SynthesizeChunk(SynthesizeChunk {
                        text: (*piece).to_owned(),
                    }))
                    .await?;
                }
                self.send(Message::Synthesize(Synthesize {
                    text: text.to_owned(),
                    voice: voice.clone(),
                }))
                .await?;
                self.send(Message::SynthesizeStop).await?;
                left.clear();
            } else if let Some(first) = left.pop_front() {
                self.send(Message::Synthesize(Synthesize {
                    text: first,
                    voice: voice.clone(),
                }))
                .await?;
            }
            Ok::<_, Error>(())
        };
        match tokio::time::timeout_at(until, send).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(Error::Timeout {
                    what: "synthesized audio",
                    after: self.limits.answer,
                })
            }
        }
        Ok(Synthesis {
            client: self,
            left,
            streaming,
            voice,
            format: None,
            in_audio: false,
            seen: 0,
            bytes: 0,
            until,
            done,
        })
    }
}

/// The audio of a [`Client::speak`], as the service makes it.
///
/// Not cancel safe: a [`Synthesis::next`] dropped before it returned leaves the connection
/// inside an event (drop the client too).
pub struct Synthesis<'a> {
    client: &'a mut Client,
    /// The sentences not yet sent, one `synthesize` each (a service that does not stream).
    left: std::collections::VecDeque<String>,
    streaming: bool,
    voice: Option<Voice>,
    /// The format of the first audio: every sentence's must be the same.
    format: Option<AudioFormat>,
    in_audio: bool,
    seen: u64,
    bytes: u64,
    until: tokio::time::Instant,
    done: bool,
}

impl std::fmt::Debug for Synthesis<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Synthesis")
            .field("left", &self.left.len())
            .field("streaming", &self.streaming)
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

impl Synthesis<'_> {
    /// The next piece of audio, in the format of the first (one that [`check_speech_format`]
    /// takes; a sentence in another format is [`Error::Audio`]); `None` once the audio of the
    /// last sentence ended (`synthesize-stopped` for a stream).
    pub async fn next(&mut self) -> Result<Option<(AudioFormat, Vec<u8>)>, Error> {
        if self.done {
            return Ok(None);
        }
        let after = self.client.limits.answer;
        match tokio::time::timeout_at(self.until, self.step()).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout {
                what: "synthesized audio",
                after,
            }),
        }
    }

    async fn step(&mut self) -> Result<Option<(AudioFormat, Vec<u8>)>, Error> {
        let max = self.client.limits.audio_bytes;
        loop {
            match self
                .client
                .next(&mut self.seen, "synthesized audio")
                .await?
            {
                Message::AudioStart(h) => {
                    if self.in_audio {
                        return Err(Error::Unexpected {
                            got: "audio-start".to_owned(),
                            expected: "an `audio-chunk` or `audio-stop` (audio had started)",
                        });
                    }
                    check_speech_format(h.format())?;
                    match self.format {
                        Some(f) if f != h.format() => {
                            return Err(Error::Audio {
                                reason: format!("a sentence of {} after one of {f}", h.format()),
                            })
                        }
                        _ => self.format = Some(h.format()),
                    }
                    self.in_audio = true;
                }
                Message::AudioChunk(h, bytes) => {
                    let (true, Some(f)) = (self.in_audio, self.format) else {
                        return Err(Error::Unexpected {
                            got: "audio-chunk".to_owned(),
                            expected: "`audio-start` first",
                        });
                    };
                    if h.format() != f {
                        return Err(Error::Audio {
                            reason: format!(
                                "a chunk of {} in audio that started as {f}",
                                h.format()
                            ),
                        });
                    }
                    if !bytes.len().is_multiple_of(f.frame_bytes()) {
                        return Err(Error::Audio {
                            reason: format!(
                                "a chunk of {} bytes is not a whole number of {f} frames",
                                bytes.len()
                            ),
                        });
                    }
                    self.bytes += bytes.len() as u64;
                    if self.bytes > max {
                        return Err(Error::TooMuch {
                            what: "synthesized audio",
                            limit: max,
                            unit: "bytes",
                        });
                    }
                    return Ok(Some((f, bytes)));
                }
                Message::AudioStop(_) => {
                    if !self.in_audio {
                        return Err(Error::Unexpected {
                            got: "audio-stop".to_owned(),
                            expected: "`audio-start` first",
                        });
                    }
                    self.in_audio = false;
                    if self.streaming {
                        continue;
                    }
                    match self.left.pop_front() {
                        Some(text) => {
                            let voice = self.voice.clone();
                            self.client
                                .send(Message::Synthesize(Synthesize { text, voice }))
                                .await?;
                        }
                        None => {
                            self.done = true;
                            return Ok(None);
                        }
                    }
                }
                Message::SynthesizeStopped if self.streaming && !self.in_audio => {
                    self.done = true;
                    return Ok(None);
                }
                Message::Pong(_) => {}
                other => {
                    return Err(Error::Unexpected {
                        got: clip(&other.kind().escape_debug().to_string(), 100),
                        expected: "synthesized audio",
                    })
                }
            }
        }
    }
}

/// The sending half of a [`Client`] ([`Client::into_split`]).
pub struct Sender {
    w: WriteHalf<BufReader<Box<dyn Stream>>>,
    limits: ClientLimits,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl Sender {
    /// Sends one event, within the event deadline. Not cancel safe.
    pub async fn send(&mut self, message: Message) -> Result<(), Error> {
        codec::write_event(&mut self.w, &message.into_event(), &self.limits.event).await
    }
}

/// The receiving half of a [`Client`] ([`Client::into_split`]).
pub struct Receiver {
    r: BufReader<ReadHalf<BufReader<Box<dyn Stream>>>>,
    limits: ClientLimits,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

impl Receiver {
    /// The next event, typed; `None` when the service closed the connection between events. An
    /// `error` event is [`Error::Service`].
    ///
    /// It waits for the event's first byte as long as that takes, and is cancel safe until
    /// then (a wake word may come minutes later: bound the wait with a timeout of your own, or
    /// use it in a `select!`); once the event began, it is read within the event deadline and
    /// is not cancel safe.
    pub async fn receive(&mut self) -> Result<Option<Message>, Error> {
        if self.r.fill_buf().await?.is_empty() {
            return Ok(None);
        }
        match codec::read_event(&mut self.r, &self.limits.event).await? {
            None => Ok(None),
            Some(event) => match Message::from_event(event)? {
                Message::Error(e) => Err(Error::Service {
                    text: clip(&e.text, 500),
                    code: e.code.map(|c| clip(&c, 100)),
                }),
                m => Ok(Some(m)),
            },
        }
    }
}

//! `maven listen`: Maven's own voice satellite.
//!
//! Without `--input` it listens until Ctrl-C (or the end of the recorder's audio), one
//! conversation for the whole session (`listen:<pid>`). The microphone is a child process
//! (`--recorder COMMAND`, else `arecord`, else `pw-record`: raw 16 kHz mono S16_LE on its
//! stdout), read into a bounded buffer that keeps the newest audio. A turn starts on the wake
//! word (`voice.wake`, a Wyoming wake-word service the audio streams to) or, without one, on
//! Enter (push-to-talk); the speech is cut at the end of the utterance. After an answer that
//! asks something (the answer's `pending`: a yes awaited, a server's question), it listens again
//! at once, without the wake word, for [`FOLLOW_UP`] (or `--follow-up SECONDS`) of audio; then
//! the wake word (or Enter) again. What was recorded while Maven answered is dropped, so its
//! own voice is not heard as the owner's.
//!
//! With `--input FILE` (a WAV, `-` for stdin) it makes one turn and ends, as scripts want.
//!
//! Each turn: the words from the Wyoming speech-to-text service `voice.asr`; the turn spoken to
//! the running daemon; the answer spoken by the Wyoming text-to-speech service `voice.tts`
//! sentence by sentence (streamed where its `info` says `supports_synthesize_streaming`, else
//! one `synthesize` per sentence), each piece of audio played as it comes (`aplay`, else
//! `pw-play`), or written whole into `--output`. `--speak-whole` asks for the whole answer in
//! one `synthesize` and plays it once it is whole (what the benchmark compares). It prints what
//! it heard and what Maven answered on stdout, what it is doing on stderr, and each turn's
//! timings from the end of the speech.
//!
//! The speech services are doors (`voice`): a loopback or LAN service needs
//! `voice.allow_private`, as every door does, and every read is bounded in size and time.

use std::collections::VecDeque;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::time::Instant;

use crate::exit::{errln, outln, EXIT_FAILED, EXIT_USAGE};
use wire::methods::Request;
use wire::views::TurnView;

/// The largest WAV read from a file or stdin.
const MAX_WAV: u64 = 64 * 1024 * 1024;
/// How long `maven listen` listens for the answer to a question it just asked, without the
/// wake word: seconds of audio in which speech must begin (`--follow-up` changes it).
pub(crate) const FOLLOW_UP: Duration = Duration::from_secs(8);
/// The longest follow-up window `--follow-up` takes.
pub(crate) const MAX_FOLLOW_UP: Duration = Duration::from_secs(120);
/// One read of the microphone: a tenth of a second of 16 kHz mono S16_LE.
const MIC_CHUNK: usize = 3_200;
/// The microphone's buffer: the newest 30 s of audio; older pieces are dropped.
const MIC_BUFFER_CHUNKS: usize = 300;

/// The arguments of `maven listen`.
pub(crate) struct Listen<'a> {
    pub(crate) config: Option<&'a Path>,
    pub(crate) data_dir: &'a Path,
    pub(crate) input: Option<&'a str>,
    pub(crate) output: Option<&'a Path>,
    pub(crate) recorder: Option<&'a str>,
    pub(crate) follow_up: Duration,
    pub(crate) speak_whole: bool,
}

/// Dials the speech services through the `voice` door.
pub(crate) struct Door(webfetch::Fetcher);

impl Door {
    /// The `voice` door of `cfg` (`config::Door::Voice`): the `fetch` block's host lists, body
    /// cap and deadlines like every door, and loopback and LAN services only with
    /// `voice.allow_private`.
    pub(crate) fn of(cfg: &config::Config) -> Result<Door, config::DoorError> {
        Ok(Door(webfetch::Fetcher::new(
            cfg.door(&config::Door::Voice)?,
        )))
    }
}

impl wyoming::Dialer for Door {
    async fn dial(
        &self,
        host: &str,
        port: u16,
    ) -> Result<tokio::net::TcpStream, wyoming::DialError> {
        self.0
            .connect_tcp(host, port)
            .await
            .map(|(s, _)| s)
            .map_err(|e| wyoming::DialError::from(e.to_string()))
    }
}

/// What every turn of a run needs.
struct Ctx<'a> {
    door: Door,
    asr: wyoming::Address,
    tts: wyoming::Address,
    language: String,
    data_dir: &'a Path,
    output: Option<PathBuf>,
    speak_whole: bool,
    /// Whether the text-to-speech service takes streamed text (its `info`), asked once.
    tts_streams: Option<bool>,
    conversation: String,
}

/// Runs the command.
pub(crate) fn run(args: Listen<'_>) -> ExitCode {
    let Some(cfg) = super::load_config(args.config) else {
        return ExitCode::from(EXIT_USAGE);
    };
    let (Some(asr), Some(tts)) = (cfg.voice.asr.clone(), cfg.voice.tts.clone()) else {
        errln!(
            "maven listen: the configuration names no {}: set \"voice\": {{\"asr\": \"tcp://HOST:PORT\", \"tts\": \"tcp://HOST:PORT\"}} (Wyoming services, e.g. wyoming-faster-whisper and wyoming-piper)",
            if cfg.voice.asr.is_none() { "voice.asr" } else { "voice.tts" }
        );
        return ExitCode::from(EXIT_USAGE);
    };
    let door = match Door::of(&cfg) {
        Ok(d) => d,
        Err(e) => {
            errln!("maven listen: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut ctx = Ctx {
        door,
        asr,
        tts,
        language: cfg.voice.language.clone(),
        data_dir: args.data_dir,
        output: args.output.map(Path::to_path_buf),
        speak_whole: args.speak_whole,
        tts_streams: None,
        conversation: format!("listen:{}", std::process::id()),
    };
    let wake = cfg.voice.wake.clone();
    super::runtime(async move {
        let result = match args.input {
            Some(input) => one_shot(&mut ctx, input).await,
            None => {
                tokio::select! {
                    r = session(&mut ctx, &args, wake.as_ref()) => r,
                    _ = tokio::signal::ctrl_c() => {
                        errln!("stopped");
                        Ok(())
                    }
                }
            }
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err((code, message)) => {
                errln!("maven listen: {}", shown::block(&message));
                ExitCode::from(code)
            }
        }
    })
}

type Failed = (u8, String);

fn failed(what: &str) -> impl Fn(wyoming::Error) -> Failed + '_ {
    move |e| (EXIT_FAILED, format!("{what}: {:#}", anyhow::Error::new(e)))
}

/// `--input`: one turn from a WAV file.
async fn one_shot(ctx: &mut Ctx<'_>, input: &str) -> Result<(), Failed> {
    let speech = from_file(input)?;
    let turn = turn(ctx, &speech, Instant::now()).await?;
    if turn.turn.ok {
        Ok(())
    } else {
        Err((EXIT_FAILED, "the turn did not succeed".to_owned()))
    }
}

/// Listens until the recorder's audio ends (Ctrl-C is the caller's).
async fn session(
    ctx: &mut Ctx<'_>,
    args: &Listen<'_>,
    wake: Option<&wyoming::Address>,
) -> Result<(), Failed> {
    let mut mic = Microphone::start(args.recorder)?;
    // Push-to-talk reads stdin only without a wake word.
    let mut enter = wake.is_none().then(Enter::new);
    let mut follow_up = false;
    loop {
        let wait = if follow_up {
            errln!(
                "listening for the answer ({} s, no wake word)…",
                args.follow_up.as_secs()
            );
            args.follow_up
        } else {
            let started = match (wake, enter.as_mut()) {
                (Some(wake), _) => {
                    errln!("waiting for the wake word…");
                    wait_for_wake_word(ctx, wake, &mut mic).await?
                }
                (None, Some(enter)) => {
                    errln!("press Enter to talk (Ctrl-C ends)…");
                    enter.wait(&mut mic).await
                }
                (None, None) => false,
            };
            if !started {
                return mic.ended().await;
            }
            errln!("listening…");
            Duration::from_millis(u64::from(wyoming::audio::EndpointConfig::default().wait_ms))
        };
        let Some(speech) = utterance(&mut mic, wait).await? else {
            if mic.is_over() {
                return mic.ended().await;
            }
            errln!("nothing was heard");
            follow_up = false;
            continue;
        };
        errln!("heard you; answering…");
        follow_up = match turn(ctx, &speech, Instant::now()).await {
            Ok(t) => awaits_answer(&t.turn),
            Err((_, message)) => {
                errln!("maven listen: {}", shown::block(&message));
                false
            }
        };
        // What the microphone took while Maven answered is not the owner's.
        mic.clear();
    }
}

/// Whether the answer asks the owner something: what the next turn answers (`pending`), or an
/// act that still waits for a yes or for a server's question to be answered (a plain yes is
/// asked again with the same word).
fn awaits_answer(answer: &turns::Answer) -> bool {
    answer.pending.is_some()
        || answer.act.as_ref().is_some_and(|a| {
            matches!(
                a.outcome,
                turns::Outcome::AwaitsConfirmation | turns::Outcome::AwaitsAnswer
            )
        })
}

/// One turn: `speech` (16 kHz mono) to words, the words to the daemon, its answer spoken.
async fn turn(ctx: &mut Ctx<'_>, speech: &[u8], ended: Instant) -> Result<TurnView, Failed> {
    let limits = wyoming::ClientLimits::default();
    let hear = async {
        let mut stt = wyoming::Client::connect(&ctx.asr, &ctx.door, limits)
            .await
            .map_err(failed(&format!("speech to text at {}", ctx.asr)))?;
        let asked = Instant::now();
        let heard = stt
            .transcribe(speech, wyoming::AudioFormat::SPEECH, Some(&ctx.language))
            .await
            .map_err(failed(&format!("speech to text at {}", ctx.asr)))?;
        Ok::<_, Failed>((heard, asked.elapsed()))
    };
    // Whether the text-to-speech service takes streamed text, asked once, while the speech is
    // transcribed.
    let probe = async {
        match (ctx.speak_whole, ctx.tts_streams) {
            (false, None) => Some(tts_streams(&ctx.door, &ctx.tts).await),
            _ => None,
        }
    };
    let (heard, probed) = tokio::join!(hear, probe);
    let (heard, asr_engine) = heard?;
    if let Some(streams) = probed {
        ctx.tts_streams = Some(streams?);
    }
    let transcribed = Instant::now();
    let heard = heard.text.trim().to_owned();
    outln!("you: {}", shown::line(&heard));
    if heard.is_empty() {
        return Err((EXIT_FAILED, "nothing was heard".to_owned()));
    }
    let req = Request::SpokenTurn {
        text: heard,
        conversation: ctx.conversation.clone(),
    };
    let turn = crate::ipc::client::ask::<TurnView>(ctx.data_dir, &req)
        .await
        .map_err(|e| (e.exit_code(), e.to_string()))?;
    let answered = Instant::now();
    let said = turns::render::speech(&turn.turn);
    outln!("maven: {}", shown::line(&said));
    // wyoming-piper 2.5 cuts a sentence after "…" and fails on what is left when it has no
    // word ("…)." is "# channels not specified"); three dots are read the same.
    let spoken = speak(ctx, &said.replace('…', "...")).await?;
    let first = spoken.first.unwrap_or(spoken.whole);
    let to_first = first - ended;
    let engines = asr_engine + spoken.tts_first;
    errln!(
        "timings: heard in {:.2} s, answered in {:.2} s, first audio in {:.2} s, whole audio in {:.2} s (from the end of the speech; the engines {:.2} s: speech to text {:.2} s, text to speech to its first audio {:.2} s; Maven {:.3} s: the turn {:.3} s, the rest {:.3} s; {})",
        (transcribed - ended).as_secs_f64(),
        (answered - transcribed).as_secs_f64(),
        to_first.as_secs_f64(),
        (spoken.whole - ended).as_secs_f64(),
        engines.as_secs_f64(),
        asr_engine.as_secs_f64(),
        spoken.tts_first.as_secs_f64(),
        to_first.saturating_sub(engines).as_secs_f64(),
        (answered - transcribed).as_secs_f64(),
        to_first
            .saturating_sub(engines)
            .saturating_sub(answered - transcribed)
            .as_secs_f64(),
        if spoken.streamed {
            "spoken sentence by sentence, streamed"
        } else if ctx.speak_whole {
            "spoken whole"
        } else {
            "spoken sentence by sentence"
        }
    );
    Ok(turn)
}

/// When the answer's audio began and ended.
struct Spoken {
    /// The first piece of audio handed to the player (or the file).
    first: Option<Instant>,
    /// The last.
    whole: Instant,
    /// From the first text sent to the service to its first audio.
    tts_first: Duration,
    /// Whether the text went as a stream.
    streamed: bool,
}

/// Speaks `said`: sentence by sentence, each piece of audio played as it comes, or (with
/// `--speak-whole`) in one `synthesize` played once whole; into `--output` when given.
async fn speak(ctx: &mut Ctx<'_>, said: &str) -> Result<Spoken, Failed> {
    let limits = wyoming::ClientLimits::default();
    let what = format!("text to speech at {}", ctx.tts);
    if ctx.speak_whole {
        let mut tts = wyoming::Client::connect(&ctx.tts, &ctx.door, limits)
            .await
            .map_err(failed(&what))?;
        let asked = Instant::now();
        let voice = tts.synthesize(said, None).await.map_err(failed(&what))?;
        let got = Instant::now();
        let wav = wyoming::audio::write_wav(voice.format, &voice.pcm)
            .map_err(failed("the answer's audio"))?;
        match &ctx.output {
            Some(path) => std::fs::write(path, &wav)
                .map_err(|e| (EXIT_FAILED, format!("{}: {e}", path.display())))?,
            None => play(&wav).await?,
        }
        return Ok(Spoken {
            first: Some(got),
            whole: got,
            tts_first: got - asked,
            streamed: false,
        });
    }
    let streaming = match ctx.tts_streams {
        Some(s) => s,
        None => {
            let s = tts_streams(&ctx.door, &ctx.tts).await?;
            ctx.tts_streams = Some(s);
            s
        }
    };
    let mut tts = wyoming::Client::connect(&ctx.tts, &ctx.door, limits)
        .await
        .map_err(failed(&what))?;
    let asked = Instant::now();
    let mut synthesis = tts
        .speak(said, None, streaming)
        .await
        .map_err(failed(&what))?;
    let mut first = None;
    let mut tts_first = Duration::ZERO;
    let mut format = None;
    let mut pcm = Vec::new();
    let mut player: Option<RawPlayer> = None;
    while let Some((f, piece)) = synthesis.next().await.map_err(failed(&what))? {
        if first.is_none() {
            tts_first = asked.elapsed();
        }
        format = Some(f);
        match &ctx.output {
            Some(_) => pcm.extend_from_slice(&piece),
            None => {
                if player.is_none() {
                    player = Some(RawPlayer::start(f)?);
                }
                if let Some(p) = player.as_mut() {
                    p.write(&piece).await;
                }
            }
        }
        if first.is_none() {
            first = Some(Instant::now());
        }
    }
    let whole = Instant::now();
    if let (Some(path), Some(f)) = (&ctx.output, format) {
        let wav = wyoming::audio::write_wav(f, &pcm).map_err(failed("the answer's audio"))?;
        std::fs::write(path, &wav)
            .map_err(|e| (EXIT_FAILED, format!("{}: {e}", path.display())))?;
    }
    if let Some(p) = player {
        p.finish().await;
    }
    Ok(Spoken {
        first,
        whole,
        tts_first,
        streamed: streaming,
    })
}

/// Whether the text-to-speech service at `tts` takes streamed text (its `info`).
async fn tts_streams(door: &Door, tts: &wyoming::Address) -> Result<bool, Failed> {
    let what = format!("text to speech at {tts}");
    let mut c = wyoming::Client::connect(tts, door, wyoming::ClientLimits::default())
        .await
        .map_err(failed(&what))?;
    let info = c.describe().await.map_err(failed(&what))?;
    Ok(info
        .tts
        .iter()
        .any(|p| p.installed && p.supports_synthesize_streaming))
}

/// 16 kHz mono speech from a WAV file (`-`: stdin), up to its utterance's end.
fn from_file(input: &str) -> Result<Vec<u8>, Failed> {
    let mut bytes = Vec::new();
    let read = if input == "-" {
        std::io::stdin().take(MAX_WAV + 1).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(input).and_then(|f| f.take(MAX_WAV + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| (EXIT_USAGE, format!("{input}: {e}")))?;
    if bytes.len() as u64 > MAX_WAV {
        return Err((EXIT_USAGE, format!("{input}: more than 64 MiB of audio")));
    }
    let (format, pcm) =
        wyoming::audio::read_wav(&bytes).map_err(|e| (EXIT_USAGE, format!("{input}: {e}")))?;
    wyoming::audio::to_speech(format, pcm).map_err(|e| (EXIT_USAGE, format!("{input}: {e}")))
}

/// The microphone: a recorder child whose stdout is read, always, into a buffer of the newest
/// [`MIC_BUFFER_CHUNKS`] pieces, so a recorder is never held up while Maven answers.
struct Microphone {
    child: tokio::process::Child,
    shared: Arc<MicShared>,
}

#[derive(Default)]
struct MicShared {
    pieces: Mutex<MicBuffer>,
    more: tokio::sync::Notify,
}

#[derive(Default)]
struct MicBuffer {
    pieces: VecDeque<Vec<u8>>,
    /// The recorder's stdout ended (or failed: why).
    over: Option<Option<String>>,
}

impl MicShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, MicBuffer> {
        self.pieces.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Microphone {
    /// Starts `recorder` (run by `sh -c`), else `arecord`, else `pw-record`.
    fn start(recorder: Option<&str>) -> Result<Microphone, Failed> {
        let candidates: Vec<(&str, Vec<&str>)> = match recorder {
            Some(cmd) => vec![("sh", vec!["-c", cmd])],
            None => vec![
                (
                    "arecord",
                    vec!["-q", "-t", "raw", "-f", "S16_LE", "-r", "16000", "-c", "1"],
                ),
                (
                    "pw-record",
                    vec!["--rate", "16000", "--channels", "1", "--format", "s16", "-"],
                ),
            ],
        };
        let mut child = None;
        for (program, args) in candidates {
            if let Ok(c) = tokio::process::Command::new(program)
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
            {
                child = Some(c);
                break;
            }
        }
        let Some(mut child) = child else {
            return Err((
                EXIT_FAILED,
                "no microphone recorder: install arecord (alsa-utils) or pw-record (PipeWire), give --recorder COMMAND, or give --input FILE.wav".to_owned(),
            ));
        };
        let Some(mut out) = child.stdout.take() else {
            return Err((EXIT_FAILED, "the recorder gave no output".to_owned()));
        };
        let shared = Arc::new(MicShared::default());
        let feed = shared.clone();
        tokio::spawn(async move {
            let mut carry = Vec::new();
            let mut buf = vec![0u8; MIC_CHUNK];
            loop {
                let why = match out.read(&mut buf).await {
                    Ok(0) => None,
                    Ok(n) => {
                        carry.extend_from_slice(buf.get(..n).unwrap_or_default());
                        // Whole samples only; the odd byte waits for the next read.
                        let whole = carry.len() / 2 * 2;
                        let piece: Vec<u8> = carry.drain(..whole).collect();
                        if !piece.is_empty() {
                            let mut b = feed.lock();
                            if b.pieces.len() == MIC_BUFFER_CHUNKS {
                                b.pieces.pop_front();
                            }
                            b.pieces.push_back(piece);
                        }
                        feed.more.notify_one();
                        continue;
                    }
                    Err(e) => Some(e.to_string()),
                };
                feed.lock().over = Some(why);
                feed.more.notify_one();
                return;
            }
        });
        Ok(Microphone { child, shared })
    }

    /// The next piece of audio; `None` once the recorder's audio ended and all was read.
    async fn next(&mut self) -> Option<Vec<u8>> {
        loop {
            {
                let mut b = self.shared.lock();
                if let Some(p) = b.pieces.pop_front() {
                    return Some(p);
                }
                if b.over.is_some() {
                    return None;
                }
            }
            self.shared.more.notified().await;
        }
    }

    /// Drops what was recorded and not read.
    fn clear(&mut self) {
        self.shared.lock().pieces.clear();
    }

    fn is_over(&self) -> bool {
        let b = self.shared.lock();
        b.over.is_some() && b.pieces.is_empty()
    }

    /// The session's end once the recorder's audio ended: a recorder that failed is an error.
    async fn ended(&mut self) -> Result<(), Failed> {
        let why = self.shared.lock().over.clone().flatten();
        let status = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        match (why, status) {
            (Some(e), _) => Err((EXIT_FAILED, format!("the microphone: {e}"))),
            (None, Ok(Ok(s))) if !s.success() => {
                Err((EXIT_FAILED, format!("the microphone's recorder ended: {s}")))
            }
            _ => {
                errln!("the microphone's audio ended");
                Ok(())
            }
        }
    }
}

/// The utterance the microphone hears next: from when speech begins (within `wait` of audio)
/// to the quiet after it. `None` when no speech began in time, or the audio ended first.
async fn utterance(mic: &mut Microphone, wait: Duration) -> Result<Option<Vec<u8>>, Failed> {
    let config = wyoming::audio::EndpointConfig {
        wait_ms: u32::try_from(wait.as_millis()).unwrap_or(u32::MAX),
        ..wyoming::audio::EndpointConfig::default()
    };
    let mut ends = wyoming::audio::Endpointer::new(wyoming::AudioFormat::SPEECH, config)
        .map_err(failed("the microphone"))?;
    let mut pcm = Vec::new();
    while let Some(piece) = mic.next().await {
        pcm.extend_from_slice(&piece);
        match ends.push(&piece) {
            wyoming::audio::Endpoint::Waiting | wyoming::audio::Endpoint::Speaking => {}
            wyoming::audio::Endpoint::Ended { .. } | wyoming::audio::Endpoint::TooLong => {
                return Ok(Some(pcm))
            }
            wyoming::audio::Endpoint::NoSpeech => return Ok(None),
        }
    }
    Ok(match ends.push(&[]) {
        wyoming::audio::Endpoint::Speaking => Some(pcm),
        _ => None,
    })
}

/// Streams the microphone to the wake-word service until it hears the wake word (`true`), or
/// the audio ends (`false`).
async fn wait_for_wake_word(
    ctx: &Ctx<'_>,
    wake: &wyoming::Address,
    mic: &mut Microphone,
) -> Result<bool, Failed> {
    let what = format!("the wake-word service at {wake}");
    let client = wyoming::Client::connect(wake, &ctx.door, wyoming::ClientLimits::default())
        .await
        .map_err(failed(&what))?;
    let (mut tx, mut rx) = client.into_split();
    let header = wyoming::events::AudioHeader::of(wyoming::AudioFormat::SPEECH);
    tx.send(wyoming::Message::Detect(wyoming::events::Detect::default()))
        .await
        .map_err(failed(&what))?;
    tx.send(wyoming::Message::AudioStart(header))
        .await
        .map_err(failed(&what))?;
    // Only what is said from now on.
    mic.clear();
    loop {
        tokio::select! {
            piece = mic.next() => {
                let Some(piece) = piece else {
                    return Ok(false);
                };
                tx.send(wyoming::Message::AudioChunk(header, piece))
                    .await
                    .map_err(failed(&what))?;
            }
            heard = rx.receive() => match heard.map_err(failed(&what))? {
                Some(wyoming::Message::Detection(d)) => {
                    errln!(
                        "heard the wake word{}",
                        d.name.map(|n| format!(" ({})", shown::line(&shown::cut(&n, 64)))).unwrap_or_default()
                    );
                    return Ok(true);
                }
                Some(wyoming::Message::NotDetected) | None => {
                    return Err((EXIT_FAILED, format!("{what}: it stopped listening")));
                }
                Some(_) => {}
            },
        }
    }
}

/// Push-to-talk: Enter on stdin, read by a thread of its own (one message per Enter; the
/// channel closes at the end of stdin).
struct Enter {
    pressed: tokio::sync::mpsc::Receiver<()>,
}

impl Enter {
    fn new() -> Enter {
        let (tx, pressed) = tokio::sync::mpsc::channel(4);
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = [0u8; 256];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        let presses = buf
                            .get(..n)
                            .unwrap_or_default()
                            .iter()
                            .filter(|b| **b == b'\n');
                        for _ in presses {
                            if tx.blocking_send(()).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        Enter { pressed }
    }

    /// Waits for Enter (`true`) or the end of stdin or of the audio (`false`); the audio
    /// meanwhile is dropped.
    async fn wait(&mut self, mic: &mut Microphone) -> bool {
        loop {
            tokio::select! {
                pressed = self.pressed.recv() => {
                    mic.clear();
                    return pressed.is_some();
                }
                piece = mic.next() => {
                    if piece.is_none() {
                        return false;
                    }
                }
            }
        }
    }
}

/// The system player, fed raw PCM as it comes.
struct RawPlayer {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
}

impl RawPlayer {
    fn start(format: wyoming::AudioFormat) -> Result<RawPlayer, Failed> {
        let (rate, channels) = (format.rate.to_string(), format.channels.to_string());
        let candidates: [(&str, Vec<&str>); 2] = [
            (
                "aplay",
                vec![
                    "-q", "-t", "raw", "-f", "S16_LE", "-r", &rate, "-c", &channels, "-",
                ],
            ),
            (
                "pw-play",
                vec![
                    "--rate",
                    &rate,
                    "--channels",
                    &channels,
                    "--format",
                    "s16",
                    "-",
                ],
            ),
        ];
        for (program, args) in candidates {
            if let Ok(mut child) = tokio::process::Command::new(program)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
            {
                let stdin = child.stdin.take();
                return Ok(RawPlayer { child, stdin });
            }
        }
        Err((
            EXIT_FAILED,
            "no audio player: install aplay (alsa-utils) or pw-play (PipeWire), or give --output OUT.wav".to_owned(),
        ))
    }

    async fn write(&mut self, pcm: &[u8]) {
        use tokio::io::AsyncWriteExt as _;
        if let Some(stdin) = self.stdin.as_mut() {
            if stdin.write_all(pcm).await.is_err() {
                self.stdin = None;
            }
        }
    }

    /// Closes the player's input and waits for the audio to end.
    async fn finish(mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait().await;
    }
}

/// Plays a WAV on the system player.
async fn play(wav: &[u8]) -> Result<(), Failed> {
    use tokio::io::AsyncWriteExt as _;
    for program in ["aplay", "pw-play"] {
        let args: &[&str] = if program == "aplay" {
            &["-q", "-"]
        } else {
            &["-"]
        };
        let Ok(mut child) = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
        else {
            continue;
        };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(wav).await;
        }
        let _ = child.wait().await;
        return Ok(());
    }
    let _ = std::io::stdout().flush();
    Err((
        EXIT_FAILED,
        "no audio player: install aplay (alsa-utils) or pw-play (PipeWire), or give --output OUT.wav".to_owned(),
    ))
}

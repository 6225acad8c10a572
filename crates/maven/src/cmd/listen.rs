//! `maven listen`: Maven's own voice loop. Speech from a WAV file (`--input`, `-` for stdin) or
//! the microphone (`arecord`, else `pw-record`, as a child: 16 kHz mono S16_LE), cut at the end
//! of the utterance; the words from the Wyoming speech-to-text service `voice.asr`; the turn
//! spoken to the running daemon (one conversation per run); the answer spoken by the Wyoming
//! text-to-speech service `voice.tts`, into `--output` or the system player (`aplay`, else
//! `pw-play`). It prints what it heard and what Maven answered.
//!
//! The speech services are doors (`voice`): a loopback or LAN service needs
//! `voice.allow_private`, as every door does, and every read is bounded in size and time.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{ExitCode, Stdio};

use crate::exit::{errln, outln, EXIT_FAILED, EXIT_USAGE};
use wire::methods::Request;
use wire::views::TurnView;

/// The largest WAV read from a file or stdin.
const MAX_WAV: u64 = 64 * 1024 * 1024;

/// The arguments of `maven listen`.
pub(crate) struct Listen<'a> {
    pub(crate) config: Option<&'a Path>,
    pub(crate) data_dir: &'a Path,
    pub(crate) input: Option<&'a str>,
    pub(crate) output: Option<&'a Path>,
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
    let language = cfg.voice.language.clone();
    super::runtime(async move {
        match listen(&args, &door, &asr, &tts, &language).await {
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

async fn listen(
    args: &Listen<'_>,
    door: &Door,
    asr: &wyoming::Address,
    tts: &wyoming::Address,
    language: &str,
) -> Result<(), Failed> {
    let speech = match args.input {
        Some(input) => from_file(input)?,
        None => from_microphone().await?,
    };
    let limits = wyoming::ClientLimits::default();
    // From the end of the speech (the whole of a file, or the end the endpointer found).
    let ended = tokio::time::Instant::now();
    let mut stt = wyoming::Client::connect(asr, door, limits)
        .await
        .map_err(failed(&format!("speech to text at {asr}")))?;
    let heard = stt
        .transcribe(&speech, wyoming::AudioFormat::SPEECH, Some(language))
        .await
        .map_err(failed(&format!("speech to text at {asr}")))?;
    let heard = heard.text.trim().to_owned();
    let transcribed = ended.elapsed();
    outln!("you: {}", shown::line(&heard));
    if heard.is_empty() {
        return Err((EXIT_FAILED, "nothing was heard".to_owned()));
    }
    let conversation = format!("listen:{}", std::process::id());
    let req = Request::SpokenTurn {
        text: heard,
        conversation,
    };
    let turn = crate::ipc::client::ask::<TurnView>(args.data_dir, &req)
        .await
        .map_err(|e| (e.exit_code(), e.to_string()))?;
    let said = turns::render::speech(&turn.turn);
    let answered = ended.elapsed();
    outln!("maven: {}", shown::line(&said));
    let mut tts_client = wyoming::Client::connect(tts, door, limits)
        .await
        .map_err(failed(&format!("text to speech at {tts}")))?;
    let voice = tts_client
        .synthesize(&said, None)
        .await
        .map_err(failed(&format!("text to speech at {tts}")))?;
    let spoken = ended.elapsed();
    errln!(
        "timings: heard in {:.2} s, answered in {:.2} s, spoken in {:.2} s (from the end of the speech to the answer's audio)",
        transcribed.as_secs_f64(),
        (answered - transcribed).as_secs_f64(),
        (spoken - answered).as_secs_f64()
    );
    let wav = wyoming::audio::write_wav(voice.format, &voice.pcm)
        .map_err(failed("the answer's audio"))?;
    match args.output {
        Some(path) => std::fs::write(path, &wav)
            .map_err(|e| (EXIT_FAILED, format!("{}: {e}", path.display())))?,
        None => play(&wav).await?,
    }
    if turn.turn.ok {
        Ok(())
    } else {
        Err((EXIT_FAILED, "the turn did not succeed".to_owned()))
    }
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

/// Records from the microphone until the utterance ends (or no speech comes).
async fn from_microphone() -> Result<Vec<u8>, Failed> {
    use tokio::io::AsyncReadExt as _;
    let candidates: [(&str, &[&str]); 2] = [
        (
            "arecord",
            &["-q", "-t", "raw", "-f", "S16_LE", "-r", "16000", "-c", "1"],
        ),
        (
            "pw-record",
            &["--rate", "16000", "--channels", "1", "--format", "s16", "-"],
        ),
    ];
    let mut child = None;
    for (program, args) in candidates {
        if let Ok(c) = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
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
            "no microphone recorder: install arecord (alsa-utils) or pw-record (PipeWire), or give --input FILE.wav".to_owned(),
        ));
    };
    let Some(mut out) = child.stdout.take() else {
        return Err((EXIT_FAILED, "the recorder gave no output".to_owned()));
    };
    let mut ends = wyoming::audio::Endpointer::new(
        wyoming::AudioFormat::SPEECH,
        wyoming::audio::EndpointConfig::default(),
    )
    .map_err(failed("the microphone"))?;
    let mut pcm = Vec::new();
    let mut buf = vec![0u8; 3200];
    errln!("listening…");
    loop {
        let n = out
            .read(&mut buf)
            .await
            .map_err(|e| (EXIT_FAILED, format!("the microphone: {e}")))?;
        let Some(chunk) = buf.get(..n).filter(|c| !c.is_empty()) else {
            break;
        };
        pcm.extend_from_slice(chunk);
        match ends.push(chunk) {
            wyoming::audio::Endpoint::Waiting | wyoming::audio::Endpoint::Speaking => {}
            wyoming::audio::Endpoint::Ended { .. } => break,
            wyoming::audio::Endpoint::NoSpeech => {
                return Err((EXIT_FAILED, "no speech was heard".to_owned()))
            }
            wyoming::audio::Endpoint::TooLong => break,
        }
    }
    let _ = child.kill().await;
    Ok(pcm)
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

//! Voice through the real daemon: the PyPI `wyoming` library talks to `voice.listen` as Home
//! Assistant's conversation agent would (describe, transcripts — each handled answer streamed
//! first, its chunks joined the plain `handled`'s text — a confirmation with and without its
//! one-time word, a Russian turn, another uid closed at accept); `maven listen` turns speech
//! that Piper synthesised into a turn with faster-whisper, and speaks the answer with Piper —
//! the answer's audio transcribed back; and as a satellite, its microphone a program that says
//! Piper's speech in real time: push-to-talk, a question and its "yes WORD" in the follow-up
//! window of the same session (the act runs once), and openWakeWord's ok_nabu starting a turn.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use crate::support::{eventually, installed, reported, testenv, testkit_mcp, Home};

/// The speech venv's python, as its link (resolved, it would be the system's, without the
/// venv's packages).
fn voice_python() -> PathBuf {
    let p = testenv().join(".venv-voice/bin/python");
    installed(&p);
    p
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs the reference library's client (`testenv/wyoming_client.py`): its exit code and the
/// JSON it printed.
fn client(cmd: Option<&Path>, port: u16, args: &[&str]) -> (i32, Value) {
    let script = testenv().join("wyoming_client.py");
    let mut c = match cmd {
        Some(setpriv) => {
            let mut c = Command::new(setpriv);
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
                .arg(voice_python());
            c
        }
        None => Command::new(voice_python()),
    };
    let out = c
        .arg(&script)
        .arg(format!("tcp://127.0.0.1:{port}"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

/// The last event of a transcript's answer: its type and its text.
fn answer(events: &Value) -> (String, String) {
    let last = events
        .as_array()
        .and_then(|a| a.last())
        .cloned()
        .unwrap_or_default();
    (
        last["type"].as_str().unwrap_or("").to_owned(),
        last["data"]["text"].as_str().unwrap_or("").to_owned(),
    )
}

/// One transcript through the reference library, read as Home Assistant's agent reads it (up
/// to `handled` or `not-handled`); a handled answer came first as a stream whose chunks join to
/// the plain `handled`'s text.
pub(crate) fn say(port: u16, text: &str, lang: &str, conv: &str) -> (String, String) {
    let (code, v) = client(None, port, &["transcript", text, lang, conv]);
    assert_eq!(code, 0, "{v}");
    let (kind, said) = answer(&v);
    let events = v.as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    if kind == "handled" {
        let chunks = &kinds[1..kinds.len() - 2];
        assert_eq!(kinds[0], "handled-start", "{v}");
        assert!(
            !chunks.is_empty() && chunks.iter().all(|k| *k == "handled-chunk"),
            "{v}"
        );
        assert_eq!(kinds[kinds.len() - 2], "handled-stop", "{v}");
        assert_eq!(events[0]["data"]["context"]["conversation_id"], conv, "{v}");
        let joined: String = events[1..events.len() - 2]
            .iter()
            .map(|e| e["data"]["text"].as_str().unwrap())
            .collect();
        assert_eq!(joined, said, "{v}");
    } else {
        assert_eq!(kinds, [kind.as_str()], "not handled is never streamed: {v}");
    }
    (kind, said)
}

/// The one-time word at the end of a spoken question ("…To run it, say: yes, orange.").
pub(crate) fn word_of(question: &str) -> String {
    question
        .rsplit(", ")
        .next()
        .and_then(|w| w.strip_suffix('.'))
        .unwrap_or_else(|| panic!("{question}"))
        .to_owned()
}

fn voice_home(port: u16, extra: Value) -> Home {
    let home = Home::new();
    let mut config = json!({
        "voice": {"listen": format!("127.0.0.1:{port}")},
        "acts": [{"name": "wipe_cache", "cmd": ["rm", "-f", "/nonexistent/maven-voice-test"]}]
    });
    if let (Some(c), Value::Object(e)) = (config.as_object_mut(), extra) {
        for (k, v) in e {
            c.insert(k, v);
        }
    }
    home.write_config(&config.to_string());
    // The local act is proposed at the first start; the owner enables it.
    let d = home.start();
    assert!(d.signal("-TERM").status.success());
    home.enable(&["wipe_cache"]);
    home
}

#[test]
fn home_assistants_client_talks_to_maven_and_a_recording_cannot_confirm() {
    let port = free_port();
    let home = voice_home(port, json!({}));
    let _d = home.start();

    // describe: a `handle` program named maven, in English and Russian, that streams.
    let (code, info) = client(None, port, &["describe"]);
    assert_eq!(code, 0, "{info}");
    assert_eq!(info[0]["name"], "maven", "{info}");
    assert_eq!(info[0]["supports_handled_streaming"], true, "{info}");
    assert_eq!(
        info[0]["models"][0]["languages"],
        json!(["en", "ru"]),
        "{info}"
    );

    // A turn as a recogniser writes it.
    let (kind, text) = say(port, "What can you do?", "en", "c1");
    assert_eq!(kind, "handled");
    assert!(
        text.starts_with("I can tell you what's new in your feeds"),
        "{text}"
    );
    // What Maven cannot help with is handed back.
    let (kind, _) = say(port, "Book me a flight to Lisbon.", "en", "c1");
    assert_eq!(kind, "not-handled");

    // A write: the question ends with a one-time word; a bare yes is asked again; the word from
    // another conversation does nothing. The question streams as two sentences.
    let (_, v) = client(None, port, &["transcript", "Wipe cache.", "en", "c1"]);
    let chunks: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "handled-chunk")
        .map(|e| e["data"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(chunks[0], "About to run wipe cache. ", "{v}");
    assert!(chunks[1].starts_with("To run it, say: yes, "), "{v}");
    let (kind, question) = say(port, "Wipe cache.", "en", "c1");
    assert_eq!(kind, "handled");
    assert!(
        question.starts_with("About to run wipe cache. To run it, say: yes, "),
        "{question}"
    );
    let word = word_of(&question);
    let (_, again) = say(port, "Yes.", "en", "c1");
    assert_eq!(
        again,
        format!("A plain yes does not run wipe cache. To run it, say: yes, {word}.")
    );
    let (_, other) = say(port, &format!("Yes, {word}."), "en", "c2");
    assert!(!other.contains("ran;"), "{other}");
    // Asked again and answered with the word, in the same conversation: it runs.
    let (_, question) = say(port, "Wipe cache.", "en", "c1");
    let word = word_of(&question);
    let (kind, ran) = say(port, &format!("Yes, {word}."), "en", "c1");
    assert_eq!(kind, "handled");
    assert!(ran.starts_with("wipe cache ran;"), "{ran}");

    // A Russian turn is answered in Russian.
    let (kind, text) = say(port, "Что нового в лентах?", "ru", "c3");
    assert_eq!(kind, "handled");
    // No feed is configured: the digest says how to add one (the command read without its
    // quote marks).
    assert!(
        text.starts_with("Лент пока нет. Добавьте ленту: maven feeds add URL"),
        "{text}"
    );
    let (_, question) = say(port, "Wipe cache пожалуйста.", "ru", "c3");
    assert!(
        question.contains("Чтобы выполнить, скажите: да, "),
        "{question}"
    );
    assert_eq!(
        say(port, "Нет.", "ru", "c3").1,
        "Отменено: wipe cache не выполнено."
    );

    // Another uid on this machine is closed at accept, before a byte is read.
    let setpriv = Path::new("/usr/bin/setpriv");
    if rustix::process::geteuid().is_root() && setpriv.exists() {
        let (code, v) = client(Some(setpriv), port, &["describe"]);
        assert_ne!(code, 0, "another uid was answered: {v}");
        assert_eq!(v, Value::Null);
    }
    drop(_d);
    // Exactly one run, confirmed with the word.
    let log = crate::hardening::acts_log(&home);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(
        log[0].confirmed_by.as_deref(),
        Some(format!("owner (voice, c1: \"yes {word}\")").as_str())
    );
}

/// A server the daemon started — sandboxed with `"network": "direct"`, or unsandboxed — tries
/// the red team's sequence on the voice listener: it says a write, reads the one-time word
/// from Maven's own question and says "yes WORD". Each is closed at accept, before a byte is
/// read, and nothing runs; the same program started by the owner (no descendant of the
/// daemon) is answered, so what stopped the servers is the gate.
#[test]
fn a_server_the_daemon_started_cannot_say_a_write_and_its_yes() {
    let port = free_port();
    let spec = json!({"voice_confirm": format!("127.0.0.1:{port}")}).to_string();
    let log = tempfile::NamedTempFile::new().unwrap();
    let home = voice_home(
        port,
        json!({"mcp_servers": {
            "direct": {"command": testkit_mcp(), "args": ["--attacks", spec],
                "enabled": true, "sandbox": {"network": "direct"}},
            "plain": {"command": testkit_mcp(), "args": ["--attacks", spec],
                "enabled": true, "sandbox": false}
        }}),
    );
    let d = home.start_logging_to(log.path());
    for server in ["direct", "plain"] {
        let got = reported(&home, server, "ATTACKS ");
        assert_eq!(got["voice_confirm"], "closed", "{server}: {got}");
    }
    let text = eventually("the refusals in the log", || {
        let text = std::fs::read_to_string(log.path()).ok()?;
        (text.matches("voice: connection refused").count() >= 2).then_some(text)
    });
    // A root daemon's sandboxed server runs as a uid of its own; anyone else's is in a user
    // namespace of its own.
    let sandboxed = if rustix::process::geteuid().is_root() {
        "is not the owner's (0)"
    } else {
        "it runs in another user namespace (a sandbox)"
    };
    assert!(
        text.contains(sandboxed),
        "the direct server's refusal: {text}"
    );
    assert!(
        text.contains("it descends from the daemon"),
        "the unsandboxed server's refusal: {text}"
    );
    let acts = home.json(&["acts", "--json"]);
    assert_eq!(acts, json!([]), "nothing ran");

    // The same attack from a process of the owner's that the daemon did not start: answered.
    let out = Command::new(testkit_mcp())
        .args([
            "--attacks",
            &json!({"voice_confirm": format!("127.0.0.1:{port}")}).to_string(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let got: Value = stderr
        .lines()
        .find_map(|l| l.strip_prefix("ATTACKS "))
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("{stderr}"));
    let asked = got["voice_confirm"]["asked"].as_str().unwrap_or_default();
    assert!(
        asked.starts_with("About to run wipe cache. To run it, say: yes, "),
        "{got}"
    );
    let answered = got["voice_confirm"]["answered"]
        .as_str()
        .unwrap_or_default();
    assert!(answered.starts_with("wipe cache ran;"), "{got}");
    drop(d);
    assert_eq!(crate::hardening::acts_log(&home).len(), 1);
}

/// A Wyoming speech service from the test peers, on a loopback port.
pub(crate) struct Engine(Child);

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
    }
}

pub(crate) fn engine(launcher: &str, port: u16) -> Engine {
    let script = installed(&testenv().join(launcher));
    let child = Command::new("bash")
        .arg(script)
        .arg(format!("tcp://127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Listening once the port cannot be bound any more (nothing is dialled to find out).
    eventually(&format!("{launcher} to listen"), || {
        TcpListener::bind(("127.0.0.1", port))
            .is_err()
            .then_some(())
    });
    Engine(child)
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
fn maven_listen_hears_speech_answers_it_and_speaks_the_answer() {
    let (asr_port, tts_port) = (free_port(), free_port());
    let _whisper = engine("run-wyoming-whisper.sh", asr_port);
    let _piper = engine("run-wyoming-piper.sh", tts_port);
    let voice = json!({
        "asr": format!("tcp://127.0.0.1:{asr_port}"),
        "tts": format!("tcp://127.0.0.1:{tts_port}"),
        "allow_private": true
    });
    let home = voice_home(free_port(), json!({}));
    // The same home, with the speech services.
    let mut cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(home.config()).unwrap()).unwrap();
    cfg["voice"]["asr"] = voice["asr"].clone();
    cfg["voice"]["tts"] = voice["tts"].clone();
    cfg["voice"]["allow_private"] = json!(true);
    home.write_config(&cfg.to_string());
    let _d = home.start();

    // Piper says a sentence; that WAV is what the owner said.
    let said = home.dir.path().join("said.wav");
    let out = home.run(&["listen", "--help"]);
    assert!(out.status.success());
    speak(tts_port, "What can you do?", &said);
    let answer_wav = home.dir.path().join("answer.wav");
    let out = home.run(&[
        "listen",
        "--input",
        said.to_str().unwrap(),
        "--output",
        answer_wav.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // What the pipeline took, from the end of the speech to the answer's audio.
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let timings = stderr
        .lines()
        .find(|l| l.starts_with("timings: heard in "))
        .unwrap_or_else(|| panic!("{stderr}"));
    eprintln!("maven listen {timings}");
    let heard = stdout
        .lines()
        .find_map(|l| l.strip_prefix("you: "))
        .unwrap_or("");
    assert!(heard.to_lowercase().contains("what can you do"), "{stdout}");
    let answered = stdout
        .lines()
        .find_map(|l| l.strip_prefix("maven: "))
        .unwrap_or("");
    assert!(
        answered.starts_with("I can tell you what's new in your feeds"),
        "{stdout}"
    );
    // The answer's audio says it: transcribed back, it names the feeds.
    let back = transcribe(asr_port, &answer_wav);
    assert!(back.to_lowercase().contains("feeds"), "{back}");

    // A service that is not Wyoming gets a clear error and nothing else.
    let junk = TcpListener::bind("127.0.0.1:0").unwrap();
    let junk_port = junk.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in junk.incoming().flatten() {
            use std::io::Write as _;
            let mut s = s;
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\n\r\nhello\n");
        }
    });
    cfg["voice"]["asr"] = json!(format!("tcp://127.0.0.1:{junk_port}"));
    home.write_config(&cfg.to_string());
    let out = home.run(&[
        "listen",
        "--input",
        said.to_str().unwrap(),
        "--output",
        "/dev/null",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "maven listen: speech to text at tcp://127.0.0.1:{junk_port}:"
        )),
        "{err}"
    );
}

/// Piper (through the library's own client) speaks `text` into a WAV file.
fn speak(port: u16, text: &str, wav: &Path) {
    let code = r#"
import asyncio, sys, wave
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize
from wyoming.audio import AudioChunk, AudioStop, AudioStart
async def main():
    uri, text, path = sys.argv[1:]
    async with AsyncClient.from_uri(uri) as c:
        await c.write_event(Synthesize(text=text).event())
        pcm, fmt = b"", None
        while True:
            e = await c.read_event()
            if AudioStart.is_type(e.type):
                fmt = AudioStart.from_event(e)
            elif AudioChunk.is_type(e.type):
                pcm += AudioChunk.from_event(e).audio
            elif AudioStop.is_type(e.type):
                break
    with wave.open(path, "wb") as w:
        w.setnchannels(fmt.channels); w.setsampwidth(fmt.width); w.setframerate(fmt.rate)
        w.writeframes(pcm)
asyncio.run(main())
"#;
    let st = Command::new(voice_python())
        .args(["-c", code, &format!("tcp://127.0.0.1:{port}"), text])
        .arg(wav)
        .status()
        .unwrap();
    assert!(st.success());
}

/// faster-whisper (through the library's own client) transcribes a WAV file.
fn transcribe(port: u16, wav: &Path) -> String {
    let code = r#"
import asyncio, sys, wave
from wyoming.client import AsyncClient
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
async def main():
    uri, path = sys.argv[1:]
    with wave.open(path, "rb") as w:
        rate, width, ch, pcm = w.getframerate(), w.getsampwidth(), w.getnchannels(), w.readframes(w.getnframes())
    async with AsyncClient.from_uri(uri) as c:
        await c.write_event(Transcribe(language="en").event())
        await c.write_event(AudioStart(rate=rate, width=width, channels=ch).event())
        for i in range(0, len(pcm), 8192):
            await c.write_event(AudioChunk(rate=rate, width=width, channels=ch, audio=pcm[i:i+8192]).event())
        await c.write_event(AudioStop().event())
        while True:
            e = await c.read_event()
            if Transcript.is_type(e.type):
                print(Transcript.from_event(e).text)
                return
asyncio.run(main())
"#;
    let out = Command::new(voice_python())
        .args(["-c", code, &format!("tcp://127.0.0.1:{port}")])
        .arg(wav)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The microphone of a `maven listen` session in a test: a program (`--recorder`) that writes
/// 16 kHz mono S16_LE in real time — silence, and each raw file whose path is appended as a
/// line to its control file, as it is appended (then the path is appended to CTRL.played);
/// "END" ends it.
const MIC: &str = r#"
import os, sys, time
ctrl = sys.argv[1]
out = sys.stdout.buffer
start, sent, done = time.monotonic(), 0, 0
def send(piece):
    global sent
    out.write(piece)
    out.flush()
    sent += 1
    delay = start + sent * 0.1 - time.monotonic()
    if delay > 0:
        time.sleep(delay)
try:
    while True:
        try:
            lines = open(ctrl).read().splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines[done:]:
            if line == "END":
                sys.exit(0)
            data = open(line, "rb").read()
            for i in range(0, len(data), 3200):
                send(data[i:i + 3200])
            with open(ctrl + ".played", "a") as played:
                played.write(line + "\n")
        done = len(lines)
        send(bytes(3200))
except BrokenPipeError:
    pass
"#;

/// A `maven listen` session: its microphone's control file, and what it printed so far.
struct Session {
    child: Child,
    ctrl: PathBuf,
    dir: PathBuf,
    out: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    err: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    tts_port: u16,
    said: usize,
    /// How many lines of stderr and stdout the test has waited past.
    seen_err: usize,
    seen_out: usize,
}

impl Session {
    fn start(home: &Home, tts_port: u16, extra: &[&str]) -> Session {
        let dir = home.dir.path().to_path_buf();
        let mic = dir.join("mic.py");
        std::fs::write(&mic, MIC).unwrap();
        let ctrl = dir.join("mic.ctrl");
        std::fs::write(&ctrl, "").unwrap();
        let recorder = format!("exec python3 {} {}", mic.display(), ctrl.display());
        let answer = dir.join("answer.wav");
        let mut args = vec![
            "listen",
            "--recorder",
            &recorder,
            "--output",
            answer.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let mut child = home
            .command_for(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = |r: Box<dyn std::io::Read + Send>| {
            let v = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let w = v.clone();
            std::thread::spawn(move || {
                use std::io::BufRead as _;
                for l in std::io::BufReader::new(r).lines().map_while(Result::ok) {
                    w.lock().unwrap().push(l);
                }
            });
            v
        };
        let out = lines(Box::new(child.stdout.take().unwrap()));
        let err = lines(Box::new(child.stderr.take().unwrap()));
        Session {
            child,
            ctrl,
            dir,
            out,
            err,
            tts_port,
            said: 0,
            seen_err: 0,
            seen_out: 0,
        }
    }

    /// Piper says `text` into the microphone.
    fn say(&mut self, text: &str) {
        self.said += 1;
        let wav = self.dir.join(format!("said-{}.wav", self.said));
        speak(self.tts_port, text, &wav);
        let bytes = std::fs::read(&wav).unwrap();
        let (format, pcm) = wyoming::audio::read_wav(&bytes).unwrap();
        let raw = wav.with_extension("raw");
        std::fs::write(&raw, wyoming::audio::to_speech(format, pcm).unwrap()).unwrap();
        self.feed(raw.to_str().unwrap());
        // Said, to its end.
        let played = self.ctrl.with_extension("ctrl.played");
        let n = self.said;
        eventually("the microphone to say it", || {
            let p = std::fs::read_to_string(&played).ok()?;
            (p.lines().count() >= n).then_some(())
        });
    }

    fn feed(&self, line: &str) {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.ctrl)
            .unwrap();
        writeln!(f, "{line}").unwrap();
    }

    fn enter(&mut self) {
        use std::io::Write as _;
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Waits for the next line of stderr (after the last waited for) that starts with
    /// `prefix`.
    fn next_err(&mut self, prefix: &str) -> String {
        let (err, out, from) = (self.err.clone(), self.out.clone(), self.seen_err);
        let (i, line) = eventually_long(
            &format!("a stderr line {prefix:?}"),
            || {
                let lines = err.lock().unwrap();
                lines
                    .iter()
                    .enumerate()
                    .skip(from)
                    .find(|(_, l)| l.starts_with(prefix))
                    .map(|(i, l)| (i, l.clone()))
            },
            || {
                format!(
                    "stdout {:?}\nstderr {:?}",
                    out.lock().unwrap(),
                    err.lock().unwrap()
                )
            },
        );
        self.seen_err = i + 1;
        line
    }

    /// Waits for Maven's next answer (a `maven: ` line of stdout).
    fn next_answer(&mut self) -> String {
        let (err, out, from) = (self.err.clone(), self.out.clone(), self.seen_out);
        let (i, line) = eventually_long(
            "an answer",
            || {
                let lines = out.lock().unwrap();
                lines
                    .iter()
                    .enumerate()
                    .skip(from)
                    .find_map(|(i, l)| l.strip_prefix("maven: ").map(|a| (i, a.to_owned())))
            },
            || {
                format!(
                    "stdout {:?}\nstderr {:?}",
                    out.lock().unwrap(),
                    err.lock().unwrap()
                )
            },
        );
        self.seen_out = i + 1;
        line
    }

    /// Ctrl-C: the session ends, exit 0; what it printed.
    fn stop(mut self) -> (Vec<String>, Vec<String>) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success());
        let status = self.child.wait().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let (out, err) = (
            self.out.lock().unwrap().clone(),
            self.err.lock().unwrap().clone(),
        );
        assert!(status.success(), "{status}: {out:?} {err:?}");
        (out, err)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `f` for up to three minutes (speech engines on a shared machine), saying `context` if
/// it never comes.
#[expect(
    clippy::disallowed_methods,
    reason = "the test waits for real speech engines by the wall clock"
)]
fn eventually_long<T>(
    what: &str,
    mut f: impl FnMut() -> Option<T>,
    context: impl Fn() -> String,
) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}: {}",
            context()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A home with the speech services and a stdio server `todo` whose one tool, `clear_done`,
/// writes; its row enabled; the daemon started. The server records each call it receives.
fn listen_home(voice: Value) -> (Home, crate::support::Daemon, PathBuf) {
    let home = Home::new();
    let tools = home.dir.path().join("tools.json");
    let record = home.dir.path().join("record.txt");
    std::fs::write(
        &tools,
        json!([{"name": "clear_done", "description": "Deletes every done task.",
                "inputSchema": {"type": "object"}}])
        .to_string(),
    )
    .unwrap();
    std::fs::write(&record, "").unwrap();
    crate::support::writable_by_root_servers(&record);
    home.write_config(
        &json!({
            "voice": voice,
            "mcp_servers": {"todo": {
                "command": testkit_mcp(),
                "args": [format!("--tools-file={}", tools.display()),
                         format!("--record={}", record.display())],
                "enabled": true,
                "sandbox": {"read": [tools], "write": [record]}
            }}
        })
        .to_string(),
    );
    let d = home.start();
    eventually("discovery", || {
        (home.json(&["tools", "--json"]).as_array()?.len() == 1).then_some(())
    });
    assert!(d.signal("-TERM").status.success());
    home.enable(&["todo_clear_done"]);
    let d = home.start();
    eventually("the server to be ready", || {
        (home.json(&["mcp", "status", "--json"])[0]["state"] == "ready").then_some(())
    });
    (home, d, record)
}

/// Push-to-talk, then a question answered in the follow-up window without Enter: one session,
/// one conversation, so "yes WORD" runs the act, once.
#[test]
fn maven_listen_asks_and_hears_the_yes_in_the_follow_up_window_of_the_same_session() {
    let (asr_port, tts_port) = (free_port(), free_port());
    let _whisper = engine("run-wyoming-whisper.sh", asr_port);
    let _piper = engine("run-wyoming-piper.sh", tts_port);
    let (home, _d, record) = listen_home(json!({
        "asr": format!("tcp://127.0.0.1:{asr_port}"),
        "tts": format!("tcp://127.0.0.1:{tts_port}"),
        "allow_private": true
    }));
    let help = home.run(&["listen", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--follow-up <SECONDS>"), "{help}");
    assert!(help.contains("[default: 8]"), "{help}");

    let mut s = Session::start(&home, tts_port, &[]);
    s.next_err("press Enter to talk");
    // Speech before Enter is not heard.
    s.say("What can you do?");
    // Whisper tiny mishears some of the one-time words ("yes employ" as "Yes, employee."), the
    // same way each time Piper says them. Maven then asks again with the same word, still
    // listening without Enter (said once more, otherwise); after two tries the owner says no,
    // and asks again for a new word (four questions at most). A word misheard as another word
    // of the lists ends the question: asked again too.
    let (mut turns, mut ran, mut confirmed_with) = (0, false, String::new());
    'asking: for _ in 1..=4 {
        s.enter();
        s.next_err("listening…");
        s.say("To do, clear done.");
        turns += 1;
        let question = s.next_answer();
        assert!(
            question.starts_with("About to run todo clear done. To run it, say: yes, "),
            "{question}"
        );
        let mut word = word_of(&question);
        for (tried, say) in ["Yes {word}.", "Yes, {word}!", "No."].iter().enumerate() {
            // At once, without Enter: the follow-up window.
            s.next_err("listening for the answer (8 s, no wake word)");
            s.say(&say.replace("{word}", &word));
            turns += 1;
            let reply = s.next_answer();
            if reply.starts_with("todo clear done ran") {
                ran = true;
                confirmed_with = word;
                break 'asking;
            }
            if tried == 2 {
                assert!(reply.starts_with("Cancelled"), "{reply}");
                break;
            }
            // Misheard as another word of the lists ("steak" as "stay"): the question ends.
            if reply.starts_with("That does not confirm todo clear done: it names a word other") {
                break;
            }
            assert!(
                reply
                    .starts_with("A plain yes does not run todo clear done. To run it, say: yes, "),
                "{reply}: {:?}",
                s.out.lock().unwrap()
            );
            word = word_of(&reply);
        }
        s.next_err("press Enter to talk");
    }
    assert!(ran, "never heard: {:?}", s.out.lock().unwrap());
    // An answer that asks nothing: back to Enter.
    s.next_err("press Enter to talk");
    let (out, err) = s.stop();
    let heard: Vec<_> = out.iter().filter(|l| l.starts_with("you: ")).collect();
    assert_eq!(heard.len(), turns, "{out:?}");
    assert!(err.iter().any(|l| l == "stopped"), "{err:?}");
    // Each turn's timings, spoken sentence by sentence (Piper streams).
    let timings: Vec<_> = err.iter().filter(|l| l.starts_with("timings: ")).collect();
    assert_eq!(timings.len(), turns, "{err:?}");
    assert!(
        timings[0].contains("spoken sentence by sentence, streamed"),
        "{timings:?}"
    );
    eprintln!("{}", timings[0]);

    // Once: the server got one call, and the acts log says so.
    let calls = std::fs::read_to_string(&record).unwrap();
    assert_eq!(calls.matches("tools/call").count(), 1, "{calls}");
    let acts = home.json(&["acts", "--json"]);
    let acts = acts.as_array().unwrap();
    assert_eq!(acts.len(), 1, "{acts:?}");
    assert_eq!(acts[0]["act"], "todo_clear_done", "{acts:?}");
    // Confirmed in the session's own conversation, `listen, PID`.
    let confirmed = acts[0]["confirmed_by"].as_str().unwrap();
    let session = confirmed
        .strip_prefix("owner (listen, ")
        .and_then(|r| r.strip_suffix(&format!(": \"yes {confirmed_with}\")")))
        .unwrap_or_else(|| panic!("{acts:?}"));
    assert!(
        !session.is_empty() && session.chars().all(|c| c.is_ascii_digit()),
        "{acts:?}"
    );
    assert_eq!(acts[0]["outcome"], "ok", "{acts:?}");

    // A recorder that fails ends the session with its status; a window out of range is refused.
    let out = home.run(&["listen", "--recorder", "exit 3"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("maven listen: the microphone's recorder ended: exit status: 3"),
        "{err}"
    );
    let out = home.run(&["listen", "--follow-up", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

/// With `voice.wake`, a turn starts only on the wake word (openWakeWord's packaged ok_nabu,
/// said by Piper): what is said before it is not heard. A question's follow-up window that
/// hears nothing ends, and the wake word is needed again; nothing ran.
#[test]
fn maven_listen_starts_a_turn_on_the_wake_word() {
    let (asr_port, tts_port, wake_port) = (free_port(), free_port(), free_port());
    let _whisper = engine("run-wyoming-whisper.sh", asr_port);
    let _piper = engine("run-wyoming-piper.sh", tts_port);
    let _wake = engine("run-wyoming-wake.sh", wake_port);
    let (home, _d, record) = listen_home(json!({
        "asr": format!("tcp://127.0.0.1:{asr_port}"),
        "tts": format!("tcp://127.0.0.1:{tts_port}"),
        "wake": format!("tcp://127.0.0.1:{wake_port}"),
        "allow_private": true
    }));
    let mut s = Session::start(&home, tts_port, &["--follow-up", "2"]);
    s.next_err("waiting for the wake word");
    s.say("What can you do?");
    s.say("Okay Nabu.");
    s.next_err("heard the wake word (ok_nabu");
    s.next_err("listening…");
    s.say("To do, clear done.");
    let question = s.next_answer();
    assert!(
        question.starts_with("About to run todo clear done. To run it, say: yes, "),
        "{question}"
    );
    s.next_err("listening for the answer (2 s, no wake word)");
    s.next_err("nothing was heard");
    s.next_err("waiting for the wake word");
    let (out, _) = s.stop();
    let heard: Vec<_> = out.iter().filter(|l| l.starts_with("you: ")).collect();
    assert_eq!(heard.len(), 1, "{out:?}");
    assert!(heard[0].to_lowercase().contains("clear done"), "{out:?}");
    let calls = std::fs::read_to_string(&record).unwrap();
    assert_eq!(calls.matches("tools/call").count(), 0, "{calls}");
    assert_eq!(home.json(&["acts", "--json"]), json!([]));
}

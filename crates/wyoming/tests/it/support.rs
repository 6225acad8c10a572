//! Finding and running the test peers.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;

use tokio::net::TcpStream;

/// The test peers' directory (`scripts/install-test-peers.sh` fills it).
pub(crate) fn testenv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testenv")
}

/// `p`, which must exist (a test peer), with every link resolved.
pub(crate) fn installed(p: &Path) -> PathBuf {
    assert!(
        p.exists(),
        "test peer missing: {} does not exist; run scripts/install-test-peers.sh",
        p.display()
    );
    std::fs::canonicalize(p).unwrap()
}

/// The Python of the Wyoming venv (the reference library is importable there); not resolved,
/// since a venv's Python is a link that finds its packages by the name it was started as.
pub(crate) fn voice_python() -> PathBuf {
    let python = testenv().join(".venv-voice/bin/python");
    installed(&python);
    python
}

/// Dials loopback addresses only: the tests' stand-in for the daemon's door.
pub(crate) struct Loopback;

impl wyoming::Dialer for Loopback {
    async fn dial(&self, host: &str, port: u16) -> Result<TcpStream, wyoming::DialError> {
        let ip: std::net::IpAddr = host.parse()?;
        if !ip.is_loopback() {
            return Err(format!("the tests dial loopback only, not {ip}").into());
        }
        #[expect(
            clippy::disallowed_methods,
            reason = "the tests' dialer, to a vetted loopback address"
        )]
        let stream = TcpStream::connect((ip, port)).await?;
        Ok(stream)
    }
}

/// A running peer process, killed when dropped; its stderr is collected for failure messages.
pub(crate) struct Peer {
    child: Child,
    pub(crate) address: wyoming::Address,
    name: String,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    _dir: Option<tempfile::TempDir>,
}

impl Peer {
    /// What the peer wrote on stderr so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawns `cmd` with its stderr collected by a thread; `on_line` sees each line until it
/// returns a value, which is returned with the child (or the test fails after `within`).
fn spawn_watching<T: Send + 'static>(
    name: &str,
    mut cmd: Command,
    within: Duration,
    on_line: impl Fn(&str) -> Option<T> + Send + 'static,
) -> (Child, T, std::sync::Arc<std::sync::Mutex<String>>) {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
    let stderr = child.stderr.take().unwrap();
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let sink = log.clone();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stderr);
        let mut tx = Some(tx);
        let mut line = String::new();
        while r.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(v) = on_line(line.trim_end()) {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(v);
                }
            }
            sink.lock().unwrap().push_str(&line);
            line.clear();
        }
        let mut rest = String::new();
        let _ = r.read_to_string(&mut rest);
        sink.lock().unwrap().push_str(&rest);
    });
    match rx.recv_timeout(within) {
        Ok(v) => (child, v, log),
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            std::thread::sleep(Duration::from_millis(100));
            panic!(
                "{name} was not ready within {within:?}; its stderr:\n{}",
                log.lock().unwrap()
            );
        }
    }
}

/// A Wyoming engine from testenv (`run-wyoming-whisper.sh`, `run-wyoming-piper.sh`) on a
/// Unix socket in a directory of its own, once it says it is ready.
pub(crate) fn engine_on_unix(launcher: &str) -> Peer {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("engine.sock");
    let mut cmd = Command::new(installed(&testenv().join(launcher)));
    cmd.arg(format!("unix://{}", sock.display()))
        .env("TMPDIR", dir.path());
    engine(launcher, cmd, wyoming::Address::Unix(sock), Some(dir))
}

/// A Wyoming engine from testenv on `tcp://127.0.0.1:PORT`, a port that was free a moment
/// before.
pub(crate) fn engine_on_tcp(launcher: &str) -> Peer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(installed(&testenv().join(launcher)));
    cmd.arg(format!("tcp://127.0.0.1:{port}"))
        .env("TMPDIR", dir.path());
    let address = wyoming::Address::Tcp {
        host: "127.0.0.1".into(),
        port,
    };
    engine(launcher, cmd, address, Some(dir))
}

fn engine(
    name: &str,
    cmd: Command,
    address: wyoming::Address,
    dir: Option<tempfile::TempDir>,
) -> Peer {
    let (child, (), stderr) = spawn_watching(name, cmd, Duration::from_secs(120), |l| {
        l.ends_with(":Ready").then_some(())
    });
    Peer {
        child,
        address,
        name: name.to_owned(),
        stderr,
        _dir: dir,
    }
}

/// The scripted hostile Wyoming service (`testenv/wyoming_hostile.py MODE`) on 127.0.0.1.
pub(crate) fn hostile(mode: &str) -> Peer {
    let mut cmd = Command::new(voice_python());
    cmd.arg(installed(&testenv().join("wyoming_hostile.py")))
        .arg(mode);
    let name = format!("wyoming_hostile.py {mode}");
    let (child, port, stderr) = spawn_watching(&name, cmd, Duration::from_secs(20), |l| {
        l.strip_prefix("WYOMING_PEER_LISTENING tcp://127.0.0.1:")
            .and_then(|p| p.parse::<u16>().ok())
    });
    Peer {
        child,
        address: wyoming::Address::Tcp {
            host: "127.0.0.1".into(),
            port,
        },
        name,
        stderr,
        _dir: None,
    }
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {}", self.name, self.address)
    }
}

/// A client of `peer` with `limits`. The engines log "Ready" a moment before they listen: a
/// refused connect is tried again for a while.
pub(crate) async fn client(peer: &Peer, limits: wyoming::ClientLimits) -> wyoming::Client {
    let t = Instant::now();
    loop {
        match wyoming::Client::connect(&peer.address, &Loopback, limits).await {
            Ok(c) => return c,
            Err(wyoming::Error::Connect { .. }) if secs(t) < 30.0 => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!(
                "cannot connect to {peer:?}: {e} ({:?}); stderr:\n{}",
                std::error::Error::source(&e),
                peer.stderr()
            ),
        }
    }
}

/// The words of `text`: lower case, without punctuation.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// How many of `expected`'s words `heard` has, as a fraction (a loose match: recognisers
/// split, join and spell words their own way).
pub(crate) fn word_match(expected: &str, heard: &str) -> f64 {
    let heard = words(heard);
    let expected = words(expected);
    let found = expected.iter().filter(|w| heard.contains(w)).count();
    found as f64 / expected.len().max(1) as f64
}

/// Seconds since `t`, for the timing notes the tests print.
pub(crate) fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

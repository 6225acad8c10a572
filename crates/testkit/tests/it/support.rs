//! Shared helpers: configs for the test server, a record file, zombie checks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp::{ClientOptions, Era, Limits, McpTimeouts, Protocol, ServerConfig, Transport};

/// The test server binary.
pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_testkit-mcp")
}

/// Deadlines short enough for hostile tests, long enough for a slow CI machine to start a
/// process.
pub(crate) fn short() -> McpTimeouts {
    McpTimeouts {
        init: Duration::from_secs(10),
        list: Duration::from_secs(10),
        call: Duration::from_secs(10),
    }
}

/// A stdio config running the test server with these flags.
pub(crate) fn stdio(args: &[&str], timeouts: McpTimeouts) -> ServerConfig {
    ServerConfig {
        protocol: mcp::Protocol::Auto,
        name: "kit".to_owned(),
        transport: Transport::Stdio {
            command: bin().to_owned(),
            args: args.iter().map(|s| (*s).to_owned()).collect(),
            env: BTreeMap::new(),
        },
        timeouts,
    }
}

/// Both eras, for the hostile cases that apply to each.
pub(crate) const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

/// The test server's flag for an era (`--modern`, or none).
pub(crate) fn era_flag(era: Era) -> Option<&'static str> {
    (era == Era::Modern).then_some("--modern")
}

/// The configuration key that pins an era.
pub(crate) fn pin(era: Era) -> Protocol {
    match era {
        Era::Legacy => Protocol::Legacy,
        Era::Modern => Protocol::Modern,
    }
}

/// A stdio config running the test server in `era` with these flags, the client pinned to it.
pub(crate) fn stdio_in(era: Era, args: &[&str], timeouts: McpTimeouts) -> ServerConfig {
    let mut flags: Vec<&str> = era_flag(era).into_iter().collect();
    flags.extend_from_slice(args);
    ServerConfig {
        protocol: pin(era),
        ..stdio(&flags, timeouts)
    }
}

/// Limits with quick shutdown graces.
pub(crate) fn limits() -> Limits {
    Limits {
        close_grace: Duration::from_millis(500),
        term_grace: Duration::from_millis(500),
        ..Limits::default()
    }
}

pub(crate) fn options() -> ClientOptions {
    ClientOptions::default().with_limits(limits())
}

/// A temporary file the server records what it received into.
pub(crate) struct Record {
    _dir: tempfile::TempDir,
    pub(crate) path: PathBuf,
}

impl Record {
    pub(crate) fn new() -> Record {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("record");
        Record { _dir: dir, path }
    }

    pub(crate) fn arg(&self) -> String {
        format!("--record={}", self.path.display())
    }

    pub(crate) fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Wait (bounded) until a line satisfying `f` shows up; the lines seen.
    pub(crate) async fn wait_for(&self, f: impl Fn(&str) -> bool) -> Vec<String> {
        for _ in 0..200 {
            let l = self.lines();
            if l.iter().any(|x| f(x)) {
                return l;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        self.lines()
    }
}

/// Whether a process id still exists (a zombie still does).
pub(crate) fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Run `f` under an outer bound far beyond every deadline the test sets, so a hang fails the
/// test instead of wedging the suite.
pub(crate) async fn bounded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("the test outlived its outer bound")
}

/// `testkit-mcp --http` running on loopback, killed when dropped.
pub(crate) struct HttpServer {
    pub(crate) port: u16,
    pub(crate) ip: &'static str,
    /// What [`HttpServer::config`] pins.
    pub(crate) protocol: Protocol,
    _child: tokio::process::Child,
}

impl HttpServer {
    /// Start it with these flags and read its port (the first line of its stdout).
    pub(crate) async fn start(flags: &[&str]) -> HttpServer {
        HttpServer::start_on("127.0.0.1", flags).await
    }

    /// Start it in `era` with these flags; its config pins that era.
    pub(crate) async fn start_in(era: Era, flags: &[&str]) -> HttpServer {
        let mut all: Vec<&str> = era_flag(era).into_iter().collect();
        all.extend_from_slice(flags);
        let mut s = HttpServer::start(&all).await;
        s.protocol = pin(era);
        s
    }

    /// Start it on a given loopback address.
    pub(crate) async fn start_on(ip: &'static str, flags: &[&str]) -> HttpServer {
        use tokio::io::AsyncBufReadExt as _;
        let mut child = tokio::process::Command::new(bin())
            .arg("--http")
            .arg(format!("--bind={ip}"))
            .args(flags)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("testkit-mcp starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        tokio::time::timeout(
            Duration::from_secs(30),
            tokio::io::BufReader::new(stdout).read_line(&mut line),
        )
        .await
        .expect("testkit-mcp announced no port")
        .expect("reading its stdout");
        let port = line.trim().parse().expect("a port on the first line");
        HttpServer {
            port,
            ip,
            protocol: Protocol::Auto,
            _child: child,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}:{}/mcp", self.ip, self.port)
    }

    /// A config reaching it through a door that allows private addresses (loopback).
    pub(crate) fn config(&self, timeouts: McpTimeouts) -> ServerConfig {
        let mut door = webfetch::DoorConfig::new("mcp:kit");
        door.allow_private = true;
        door.host_interval = Duration::ZERO;
        let mut headers = BTreeMap::new();
        headers.insert("Authorization".to_owned(), "Bearer test-token".to_owned());
        ServerConfig {
            protocol: self.protocol,
            name: "kit".to_owned(),
            transport: Transport::Http {
                url: self.url(),
                headers,
                door,
            },
            timeouts,
        }
    }
}

/// `{"text": text}`, the arguments of `echo`.
pub(crate) fn args(text: &str) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    m.insert("text".to_owned(), serde_json::json!(text));
    m
}

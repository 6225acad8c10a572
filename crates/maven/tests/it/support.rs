//! Starting and stopping real daemon processes.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub(crate) fn maven() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_maven"));
    c.env_remove("MAVEN_CONFIG")
        .env_remove("MAVEN_DATA")
        .env("RUST_LOG", "info");
    c
}

/// A temporary home for one test: a data directory and a config path.
pub(crate) struct Home {
    pub(crate) dir: tempfile::TempDir,
}

impl Home {
    pub(crate) fn new() -> Home {
        Home {
            dir: tempfile::Builder::new().prefix("mvn").tempdir().unwrap(),
        }
    }
    pub(crate) fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
    pub(crate) fn config(&self) -> PathBuf {
        self.dir.path().join("config.json")
    }
    pub(crate) fn write_config(&self, json: &str) {
        std::fs::write(self.config(), json).unwrap();
    }
    /// Runs a CLI command against this home's data directory and config.
    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
    /// One turn, confirmed with "yes" when it asks; asserts it succeeded and returns what it
    /// printed.
    pub(crate) fn say_confirming(&self, text: &str) -> String {
        let out = self.run(&["say", text]);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        let out = if said.contains("(yes/no)") {
            self.run(&["say", "yes"])
        } else {
            out
        };
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{said} {}", stderr(&out));
        said
    }
    /// The command of [`Home::run`], not started yet.
    pub(crate) fn command_for(&self, args: &[&str]) -> Command {
        let mut c = self.command();
        c.args(args).stdin(Stdio::null());
        c
    }
    /// `maven` with this home's data directory and config.
    fn command(&self) -> Command {
        let mut c = maven();
        c.arg("--data").arg(self.data());
        if self.config().exists() {
            c.arg("--config").arg(self.config());
        } else {
            // Point the default config somewhere empty, never at the user's own.
            c.env("XDG_CONFIG_HOME", self.dir.path().join("xdg"));
        }
        c
    }
    /// Enables rows through the store directly (the daemon must be stopped): the stand-in for
    /// the page's step-up path.
    pub(crate) fn enable(&self, names: &[&str]) {
        for n in names {
            self.try_enable(n).unwrap();
        }
    }
    /// Enables one row through the store directly, as the page's step-up path would (the
    /// daemon must be stopped), and says what the store answered.
    pub(crate) fn try_enable(&self, name: &str) -> Result<store::ToolRow, store::Error> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            #[expect(
                clippy::disallowed_methods,
                reason = "a test reads the database of a daemon that has stopped"
            )]
            let s = store::Store::open(&self.data().join("maven.db"))
                .await
                .unwrap();
            let r = s
                .owner_sets_tool_state(
                    name,
                    store::ToolState::Enabled,
                    &stepup::testing::step_up(),
                    "test",
                )
                .await;
            s.close().await.unwrap();
            r
        })
    }
    /// Runs a CLI command that prints JSON and returns it.
    pub(crate) fn json(&self, args: &[&str]) -> serde_json::Value {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "maven {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
    /// Starts a daemon and waits until it answers `status`.
    pub(crate) fn start(&self) -> Daemon {
        let d = self.spawn();
        d.wait_ready(self)
    }
    /// Starts a daemon that logs into `log` (a pipe nobody reads while the daemon runs holds
    /// 64 KiB of log at most) and waits until it answers `status`.
    pub(crate) fn start_logging_to(&self, log: &std::path::Path) -> Daemon {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        self.spawn_with(Stdio::from(file)).wait_ready(self)
    }
    /// Starts a daemon with one more environment variable (which the commands run next to it
    /// do not have) and waits until it answers `status`.
    pub(crate) fn start_with_env(&self, key: &str, value: &str) -> Daemon {
        let child = self
            .command()
            .env(key, value)
            .arg("daemon")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Daemon { child: Some(child) }.wait_ready(self)
    }
    /// Starts a daemon without waiting.
    pub(crate) fn spawn(&self) -> Daemon {
        self.spawn_with(Stdio::piped())
    }
    fn spawn_with(&self, stderr: Stdio) -> Daemon {
        let child = self
            .command()
            .arg("daemon")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        Daemon { child: Some(child) }
    }
    /// Sends one raw line to the daemon's socket and reads one line back.
    pub(crate) fn raw(&self, line: &str) -> serde_json::Value {
        let mut s = UnixStream::connect(self.data().join("maven.sock")).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.write_all(line.as_bytes()).unwrap();
        s.write_all(b"\n").unwrap();
        let mut r = BufReader::new(s);
        let mut buf = String::new();
        r.read_line(&mut buf).unwrap();
        serde_json::from_str(&buf).unwrap()
    }
}

/// A running daemon process; killed when dropped.
pub(crate) struct Daemon {
    pub(crate) child: Option<Child>,
}

impl Daemon {
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    #[expect(
        clippy::disallowed_methods,
        reason = "the test times real daemon processes by the wall clock"
    )]
    fn wait_ready(mut self, home: &Home) -> Daemon {
        let deadline = Instant::now() + Duration::from_secs(60);
        let sock = home.data().join("maven.sock");
        loop {
            if sock.exists() && home.run(&["status", "--json"]).status.success() {
                return self;
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                let out = self.child.take().unwrap().wait_with_output().unwrap();
                panic!(
                    "daemon exited early with {status}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            assert!(Instant::now() < deadline, "daemon not ready within 60 s");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends a signal with the `kill` command and waits for the exit; returns the output.
    pub(crate) fn signal(mut self, sig: &str) -> Output {
        let child = self.child.take().unwrap();
        let st = Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        child.wait_with_output().unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Waits for a child to exit within a deadline and returns its output.
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
pub(crate) fn wait_exit(d: Daemon, within: Duration) -> Output {
    let mut d = d;
    let mut child = d.child.take().unwrap();
    let deadline = Instant::now() + within;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("process did not exit within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `testkit-mcp` test server, built on demand when this package's tests run alone.
/// A fresh directory that a sandboxed server can see but is not granted: outside every
/// directory the sandbox hides (`/tmp`, `/var/tmp`, `/run`, `/dev/shm`, the owner's home), so
/// a read of it is Landlock's refusal (EACCES), not a missing file. Where the checkout and its
/// target directory live decides nothing: the candidates are tried in turn, and `None` (with
/// the reason printed) when none is usable.
pub(crate) fn visible_but_not_granted() -> Option<tempfile::TempDir> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let hidden = |p: &std::path::Path| {
        sandbox::HIDDEN
            .iter()
            .map(std::path::Path::new)
            .chain(home.as_deref().filter(|h| h.parent().is_some()))
            .any(|h| p.starts_with(h))
    };
    let candidates = [
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
        PathBuf::from("/var/lib"),
        PathBuf::from("/opt"),
        PathBuf::from("/srv"),
    ];
    for base in candidates {
        let Ok(base) = std::fs::canonicalize(&base) else {
            continue;
        };
        if hidden(&base) || sandbox::SYSTEM_READ.iter().any(|s| base.starts_with(s)) {
            continue;
        }
        if let Ok(d) = tempfile::Builder::new()
            .prefix("maven-visible-")
            .tempdir_in(&base)
        {
            return Some(d);
        }
    }
    eprintln!(
        "no directory outside the sandbox's hidden ones is writable here (the target directory, /var/lib, /opt, /srv): the visible-but-not-granted check is skipped"
    );
    None
}

/// The trust line of a sandboxed testkit-mcp with the default policy but `network`: it reads
/// the directory that holds it (shown as `~/…` below the owner's home).
pub(crate) fn testkit_trust(network: bool) -> String {
    let dir = testkit_mcp().parent().unwrap().to_path_buf();
    let shown = match std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| dir.strip_prefix(&h).ok().map(std::path::Path::to_path_buf))
    {
        Some(rest) => format!("~/{}", rest.display()),
        None => dir.display().to_string(),
    };
    let net = if network {
        "network through Maven: public addresses only"
    } else {
        "no network"
    };
    format!("sandboxed local process: reads {shown} (its program), writes only its own directory, {net}, memory bounded per process")
}

pub(crate) fn testkit_mcp() -> PathBuf {
    let bin = bin_dir().join("testkit-mcp");
    if !bin.exists() {
        build("testkit", "testkit-mcp");
    }
    assert!(bin.exists(), "no testkit-mcp at {}", bin.display());
    bin
}

/// The bundled demo server, built now (a build of this package's tests does not build it).
pub(crate) fn demo_server() -> PathBuf {
    build("demo-todo", "maven-demo-todo");
    bin_dir().join("maven-demo-todo")
}

/// Where the workspace's binaries are built: beside the test binary's directory.
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(|d| d.parent()).unwrap().to_path_buf()
}

/// Builds one binary of a workspace package.
fn build(package: &str, bin: &str) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = Command::new(cargo)
        .args(["build", "-p", package, "--bin", bin])
        .status()
        .unwrap();
    assert!(st.success(), "cannot build {bin}");
}

/// Reads an HTTP request's head (up to the blank line, at most 64 KiB, 5 s) from a test
/// server's connection.
pub(crate) fn read_head(conn: &mut std::net::TcpStream) -> Vec<u8> {
    use std::io::Read;
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65536 {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    head
}

/// A free port on loopback (bound and released).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Polls `f` every 50 ms for up to 60 s.
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
pub(crate) fn eventually<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A loopback HTTP/1.1 responder for feed tests: one request per connection, each answered with
/// the `(status, body)` that `answer` gives (as RSS). Returns the feed's URL.
#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
pub(crate) fn serve_feed(answer: impl Fn() -> (u16, String) + Send + 'static) -> String {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/feed.xml", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            read_head(&mut conn);
            let (status, body) = answer();
            let resp = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/rss+xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = conn.write_all(resp.as_bytes());
        }
    });
    url
}

/// The entry of a JSON list (servers, tool rows) with this name.
pub(crate) fn by_name<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    v.as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {v}"))
}

/// A daemon running as root gives each server a uid of its own, which may write only what
/// that uid may write (Maven never widens a grant): a test that grants `p` for writing, as
/// the owner of a root daemon would, opens it to every uid (mode 0666 for a file, 0777 for a
/// directory). Nothing to do for an ordinary owner.
pub(crate) fn writable_by_root_servers(p: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt as _;
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let mode = if p.is_dir() { 0o777 } else { 0o666 };
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The port of the running daemon's page, as `maven status` gives its address.
pub(crate) fn page_port(home: &Home) -> u16 {
    let url = home.json(&["status", "--json"])["web"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    url.strip_prefix("http://localhost:")
        .and_then(|r| r.strip_suffix("/tools"))
        .unwrap()
        .parse()
        .unwrap()
}

/// The JSON a line `PREFIX {json}` of a server's stderr tail carries, once it is there.
pub(crate) fn reported(home: &Home, server: &str, prefix: &str) -> serde_json::Value {
    eventually(&format!("{server} to report {prefix}"), || {
        let v = home.json(&["mcp", "status", "--json"]);
        let tail = by_name(&v, server)["stderr_tail"].as_str()?.to_owned();
        let line = tail.lines().find_map(|l| l.strip_prefix(prefix))?;
        serde_json::from_str(line.trim()).ok()
    })
}

/// The test peers' directory (`scripts/install-test-peers.sh` fills it).
pub(crate) fn testenv() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testenv")
}

/// `p`, which must exist (a test peer), with every link resolved.
pub(crate) fn installed(p: &std::path::Path) -> PathBuf {
    assert!(
        p.exists(),
        "test peer missing: {} does not exist; run scripts/install-test-peers.sh",
        p.display()
    );
    std::fs::canonicalize(p).unwrap()
}

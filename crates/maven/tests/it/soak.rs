//! Soak: a real daemon hosts 20 `testkit-mcp` servers (10 stdio children, 10 Streamable HTTP
//! processes of the test's own on loopback) while a seeded chaos loop crashes them (SIGKILL),
//! hangs them (SIGSTOP, SIGCONT a little later), restarts the HTTP ones on their port, rewrites
//! the tool lists of half of them, and speaks turns that call their `echo` tools. Afterwards,
//! with every server let alone again:
//!
//! - the daemon is still running, and every server is back: the ten whose tools never changed
//!   answer a call through a turn, the others are ready with exactly the tools of their last
//!   list (A-8: whatever a connected server no longer offers is withdrawn, nothing else);
//! - the rows the owner enabled on the unchanging servers are still enabled: crashes, hangs and
//!   restarts never disarm an approval;
//! - no zombie among the daemon's children, exactly one live child per stdio server, and after
//!   the daemon stops no stdio server is left behind;
//! - the daemon's open file descriptors are back to their count before the chaos, and its
//!   resident memory has not grown by more than a bound;
//! - the store's rows and trails keep A-5..A-7 (see `invariants::check_rows`).
//!
//! `MAVEN_SOAK_SECS` (default 20) sets the length of the chaos, `MAVEN_SOAK_SEED` the seed
//! (printed, so a failure can be replayed). The counts are printed at the end.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::invariants::{block_on, check_rows, env_or, Rng};
use crate::support::{eventually, testkit_mcp, wait_exit, Home};

const STDIO: usize = 10;
const HTTP: usize = 10;
/// Every tool name a list may hold; all of them are in each server's `allow_tools`. "a-b" and
/// "a_b" flatten alike, so two identities compete for one row name.
const NAMES: &[&str] = &["echo", "list", "del", "a-b", "a_b", "x"];
/// How much the daemon's resident memory may grow over the soak.
const RSS_SLACK_KIB: u64 = 32 * 1024;

fn echo_tool() -> Value {
    json!({"name": "echo", "description": "Echo the text back.",
           "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                           "required": ["text"]},
           "annotations": {"readOnlyHint": true}})
}

fn plain_tool(name: &str, description: &str, read_only: bool) -> Value {
    let mut t = json!({"name": name, "description": description,
                       "inputSchema": {"type": "object"}});
    if read_only {
        t["annotations"] = json!({"readOnlyHint": true});
    }
    t
}

/// The list an unchanging server offers for the whole soak.
fn steady_tools() -> Vec<Value> {
    vec![echo_tool(), plain_tool("del", "Deletes things.", false)]
}

/// A random list for a changing server (echo stays, in a random description).
fn random_tools(rng: &mut Rng) -> Vec<Value> {
    let mut tools = Vec::new();
    for name in NAMES {
        if *name == "echo" {
            let mut e = echo_tool();
            if rng.chance(30) {
                e["description"] = json!(format!("Echo, version {}.", rng.below(3)));
            }
            tools.push(e);
        } else if rng.chance(60) {
            let d = ["Lists things.", "Deletes things.", "Does x."][rng.below(3) as usize];
            tools.push(plain_tool(name, d, rng.chance(50)));
        }
    }
    tools
}

/// Writes a tool list atomically (the server re-reads it on every listing).
fn write_tools(path: &Path, tools: &[Value]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, Value::Array(tools.to_vec()).to_string()).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// One of the test's own HTTP servers.
struct HttpServer {
    tools: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl HttpServer {
    /// Starts it (on `self.port`, or a free port the first time) and waits until it listens.
    fn start(&mut self) {
        let mut cmd = Command::new(testkit_mcp());
        cmd.arg("--http")
            .arg(format!("--tools-file={}", self.tools.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if self.port != 0 {
            cmd.arg(format!("--port={}", self.port));
        }
        let mut child = cmd.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port: u16 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("testkit-mcp --http printed {line:?} instead of its port"));
        assert!(
            self.port == 0 || self.port == port,
            "restarted on another port"
        );
        self.port = port;
        self.child = Some(child);
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn signal(pid: u32, sig: &str) {
    // The process may be gone already (killed, reaped): that is not an error here.
    let _ = Command::new("kill")
        .args([sig, &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// `(pid, ppid, state)` of every process whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<(u32, u32, char)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if !String::from_utf8_lossy(&cmdline).contains(marker) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces, so split after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let state = f.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let ppid = f.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        out.push((pid, ppid, state));
    }
    out
}

/// Zombies (state Z) among `pid`'s children, by scanning every process's parent.
fn zombie_children(pid: u32) -> Vec<u32> {
    processes_with("")
        .into_iter()
        .filter(|(_, ppid, state)| *ppid == pid && *state == 'Z')
        .map(|(p, _, _)| p)
        .collect()
}

fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn fd_targets(pid: u32) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .map(|t| t.display().to_string())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The names of the tools a list offers.
fn names_of(tools: &[Value]) -> BTreeSet<String> {
    tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// Prints the end of the daemon's log when the test fails.
struct TailOnPanic(PathBuf);

impl Drop for TailOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.0).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            eprintln!(
                "--- the daemon's log, last 40 lines ---\n{}",
                lines[lines.len().saturating_sub(40)..].join("\n")
            );
        }
    }
}

#[derive(Default, Debug)]
struct Counts {
    stdio_kills: u32,
    stdio_hangs: u32,
    http_kills: u32,
    http_hangs: u32,
    rewrites: u32,
    turns: u32,
    turns_answered: u32,
}

/// What the chaos loop undoes a little later.
enum Later {
    /// SIGCONT to a process it stopped.
    Cont(u32),
    /// Start again the HTTP server it killed.
    Restart(usize),
}

impl Later {
    fn run(self, http: &mut [HttpServer]) {
        match self {
            Later::Cont(p) => signal(p, "-CONT"),
            Later::Restart(i) => {
                if http[i].child.is_none() {
                    http[i].start();
                }
            }
        }
    }
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn twenty_flapping_servers_leave_no_leak_and_no_broken_invariant() {
    let secs = env_or("MAVEN_SOAK_SECS", 20);
    let seed = env_or("MAVEN_SOAK_SEED", 0x50a6);
    eprintln!("soak: {secs} s of chaos, MAVEN_SOAK_SEED={seed}");
    let mut rng = Rng(seed);

    let home = Home::new();
    let dir = home.dir.path().join("soak-tools");
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.display().to_string();
    // Even-numbered servers never change their list; odd-numbered ones do.
    let steady = |i: usize| i.is_multiple_of(2);
    let mut lists: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut servers = serde_json::Map::new();
    let timeouts = json!({"init": "2s", "list": "2s", "call": "2s"});
    // Writes server `prefix``i`'s first list and returns its name and the list's path.
    let mut first_list = |prefix: char, i: usize, rng: &mut Rng| {
        let name = format!("{prefix}{i}");
        let path = dir.join(format!("{name}.json"));
        let tools = if steady(i) {
            steady_tools()
        } else {
            random_tools(rng)
        };
        write_tools(&path, &tools);
        lists.insert(name.clone(), tools);
        (name, path)
    };
    for i in 0..STDIO {
        let (name, path) = first_list('s', i, &mut rng);
        servers.insert(
            name,
            json!({"command": testkit_mcp().to_str().unwrap(),
                   "args": [format!("--tools-file={}", path.display())],
                   "enabled": true, "allow_tools": NAMES, "timeouts": timeouts,
                   "sandbox": {"read": [&dir]}}),
        );
    }
    let mut http: Vec<HttpServer> = Vec::new();
    for i in 0..HTTP {
        let (name, path) = first_list('h', i, &mut rng);
        let mut s = HttpServer {
            tools: path,
            port: 0,
            child: None,
        };
        s.start();
        servers.insert(
            name,
            json!({"url": format!("http://127.0.0.1:{}/mcp", s.port), "allow_private": true,
                   "host_interval": "0s", "enabled": true, "allow_tools": NAMES,
                   "timeouts": timeouts}),
        );
        http.push(s);
    }
    home.write_config(
        &json!({
            "mcp_servers": servers,
            "mcp_timing": {"backoff_min": "100ms", "backoff_max": "1s", "health": "500ms",
                           "refresh": "1s", "min_uptime": "0s"},
        })
        .to_string(),
    );
    let all: Vec<String> = lists.keys().cloned().collect();
    let is_steady = |name: &str| name[1..].parse::<usize>().map(steady).unwrap_or(false);

    // Discovery proposes; the owner enables every row of the unchanging servers.
    let log = home.dir.path().join("daemon.log");
    let _tail = TailOnPanic(log.clone());
    let d = home.start_logging_to(&log);
    let rows_offered = |home: &Home, lists: &BTreeMap<String, Vec<Value>>| {
        let rows = home.json(&["tools", "--json"]);
        let mut live: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for r in rows.as_array().unwrap() {
            if r["state"] != "withdrawn" {
                if let (Some(s), Some(t)) = (r["cmd"][1].as_str(), r["cmd"][2].as_str()) {
                    live.entry(s.to_owned()).or_default().insert(t.to_owned());
                }
            }
        }
        lists
            .iter()
            .all(|(s, l)| live.get(s).cloned().unwrap_or_default() == names_of(l))
    };
    eventually("every server's tools proposed", || {
        rows_offered(&home, &lists).then_some(())
    });
    assert!(d.signal("-TERM").status.success());
    let approved: Vec<String> = all
        .iter()
        .filter(|s| is_steady(s))
        .flat_map(|s| [format!("{s}_echo"), format!("{s}_del")])
        .collect();
    home.enable(&approved.iter().map(String::as_str).collect::<Vec<_>>());

    let mut d = home.start_logging_to(&log);
    let pid = d.pid();
    let all_ready = |home: &Home| {
        let st = home.json(&["mcp", "status", "--json"]);
        st.as_array().unwrap().iter().all(|s| s["state"] == "ready")
    };
    eventually("all 20 servers ready", || all_ready(&home).then_some(()));
    let stdio_children = || -> Vec<u32> {
        processes_with(&marker)
            .into_iter()
            .filter(|(_, ppid, state)| *ppid == pid && *state != 'Z')
            .map(|(p, _, _)| p)
            .collect()
    };
    eventually("one child per stdio server", || {
        (stdio_children().len() == STDIO).then_some(())
    });
    let fds_before = fd_count(pid);
    let fd_list_before = fd_targets(pid);
    let rss_before = rss_kib(pid);

    // The chaos.
    let mut counts = Counts::default();
    let mut later: Vec<(Instant, Later)> = Vec::new();
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20 + rng.below(180)));
        let now = Instant::now();
        let (due, rest): (Vec<_>, Vec<_>) = later.drain(..).partition(|(at, _)| *at <= now);
        later = rest;
        for (_, l) in due {
            l.run(&mut http);
        }
        let pause = Duration::from_millis(200 + rng.below(2800));
        match rng.below(100) {
            0..=24 => {
                let kids = stdio_children();
                if let Some(p) = kids.get(rng.below(kids.len().max(1) as u64) as usize) {
                    signal(*p, "-KILL");
                    counts.stdio_kills += 1;
                }
            }
            25..=39 => {
                let kids = stdio_children();
                if let Some(p) = kids.get(rng.below(kids.len().max(1) as u64) as usize) {
                    signal(*p, "-STOP");
                    later.push((now + pause, Later::Cont(*p)));
                    counts.stdio_hangs += 1;
                }
            }
            40..=54 => {
                let i = rng.below(HTTP as u64) as usize;
                if http[i].child.is_some() {
                    http[i].kill();
                    later.push((now + pause, Later::Restart(i)));
                    counts.http_kills += 1;
                }
            }
            55..=64 => {
                let i = rng.below(HTTP as u64) as usize;
                if let Some(p) = http[i].pid() {
                    signal(p, "-STOP");
                    later.push((now + pause, Later::Cont(p)));
                    counts.http_hangs += 1;
                }
            }
            65..=84 => {
                let name = &all[rng.below(all.len() as u64) as usize];
                if !is_steady(name) {
                    let tools = random_tools(&mut rng);
                    write_tools(&dir.join(format!("{name}.json")), &tools);
                    lists.insert(name.clone(), tools);
                    counts.rewrites += 1;
                }
            }
            _ => {
                let name = &all[rng.below(all.len() as u64) as usize];
                let out = home.run(&["say", &format!("{name} echo soak")]);
                counts.turns += 1;
                let code = out.status.code();
                assert!(
                    matches!(code, Some(0 | 1)),
                    "a turn during the soak ended with {code:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                if code == Some(0) && String::from_utf8_lossy(&out.stdout).contains("soak") {
                    counts.turns_answered += 1;
                }
            }
        }
        assert!(
            d.child.as_mut().unwrap().try_wait().unwrap().is_none(),
            "the daemon died during the soak"
        );
    }

    // Let every server alone: continue the hung, restart the killed.
    for (_, l) in later.drain(..) {
        l.run(&mut http);
    }
    for p in stdio_children() {
        signal(p, "-CONT");
    }
    for s in &mut http {
        if s.child.is_none() {
            s.start();
        }
        if let Some(p) = s.pid() {
            signal(p, "-CONT");
        }
    }

    eventually("all 20 servers ready again", || {
        all_ready(&home).then_some(())
    });
    eventually("every server's rows to match its last list (A-8)", || {
        rows_offered(&home, &lists).then_some(())
    });
    let rows = home.json(&["tools", "--json"]);
    for name in &approved {
        let r = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name.as_str())
            .unwrap_or_else(|| panic!("row {name} is gone"));
        assert_eq!(
            r["state"], "enabled",
            "{name}: crashes, hangs and restarts never disarm an approval"
        );
    }
    for name in all.iter().filter(|s| is_steady(s)) {
        let out = home.run(&["say", &format!("{name} echo still-here")]);
        let answer = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && answer.contains("still-here"),
            "{name} does not answer after the soak: {answer} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    eventually("no zombie child", || {
        zombie_children(pid).is_empty().then_some(())
    });
    eventually("exactly one child per stdio server", || {
        (stdio_children().len() == STDIO).then_some(())
    });
    // Every kind of descriptor but sockets must be back to its count. A door keeps idle
    // keep-alive connections per origin (webfetch's pool, up to 16, evicted when next used): a
    // call that raced a health check to an HTTP server may leave one more idle connection to it
    // than before, so sockets may grow by at most one per HTTP server; a leak grows without
    // bound (each flap, each call) and is caught all the same.
    let sockets = |l: &[String]| l.iter().filter(|t| t.starts_with("socket:")).count();
    let sockets_before = sockets(&fd_list_before);
    let others_before = fd_list_before.len() - sockets_before;
    let grown = |l: &[String]| {
        let s = sockets(l);
        s > sockets_before + HTTP || l.len() - s > others_before
    };
    let mut fd_list_after = fd_targets(pid);
    let settle = Instant::now() + Duration::from_secs(30);
    while grown(&fd_list_after) && Instant::now() < settle {
        std::thread::sleep(Duration::from_millis(200));
        fd_list_after = fd_targets(pid);
    }
    let fds_after = fd_list_after.len();
    assert!(
        !grown(&fd_list_after),
        "open descriptors grew from {fds_before} to {fds_after}:\nbefore {fd_list_before:?}\nafter {fd_list_after:?}"
    );
    let rss_after = rss_kib(pid);
    assert!(
        rss_after <= rss_before + RSS_SLACK_KIB,
        "resident memory grew from {rss_before} KiB to {rss_after} KiB"
    );
    let st = home.json(&["mcp", "status", "--json"]);
    let dials: u64 = st
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["dials"].as_u64())
        .sum();

    // Stop: no stdio server outlives the daemon.
    let out = wait_exit(
        {
            signal(pid, "-TERM");
            d
        },
        Duration::from_secs(30),
    );
    assert!(
        out.status.success(),
        "the daemon stops cleanly after the soak"
    );
    eventually("no stdio server left behind", || {
        processes_with(&marker)
            .iter()
            .all(|(p, _, _)| http.iter().any(|h| h.pid() == Some(*p)))
            .then_some(())
    });

    let db = home.data().join("maven.db");
    block_on(async {
        let s = store::Store::open(&db).await.unwrap();
        check_rows(&s, &BTreeMap::new()).await;
        s.close().await.unwrap();
    });
    eprintln!(
        "soak: {counts:?}; dials {dials}; fds {fds_before} -> {fds_after}; VmRSS {rss_before} -> {rss_after} KiB"
    );
    assert!(
        counts.stdio_kills + counts.http_kills > 0 && counts.rewrites > 0,
        "the chaos did nothing: {counts:?}"
    );
    assert!(
        dials > all.len() as u64,
        "{dials} dials for {} servers: no server was dialled again",
        all.len()
    );
}

//! X-1..X-4: stdio servers run sandboxed; from inside, every escape the hostile test server
//! tries is denied with a specific errno and the test's canaries and listeners see nothing;
//! no child of the daemon, sandboxed or not, double-forked or not, may speak to its socket;
//! real servers (the reference filesystem server, the Python SDK, the demo) work sandboxed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{by_name, eventually, testkit_mcp, visible_but_not_granted, Home};

/// The JSON a line `PREFIX {json}` of a server's stderr tail carries, once it is there.
fn reported(home: &Home, server: &str, prefix: &str) -> Value {
    eventually(&format!("{server} to report {prefix}"), || {
        let v = home.json(&["mcp", "status", "--json"]);
        let tail = by_name(&v, server)["stderr_tail"].as_str()?.to_owned();
        let line = tail.lines().find_map(|l| l.strip_prefix(prefix))?;
        serde_json::from_str(line.trim()).ok()
    })
}

#[test]
fn a_sandboxed_server_is_denied_every_escape() {
    let home = Home::new();
    let owner = home.dir.path().join("owner");
    std::fs::create_dir_all(&owner).unwrap();
    let canary = owner.join(".ssh-key");
    std::fs::write(&canary, "secret").unwrap();
    let written = owner.join("written-by-server");
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    #[expect(clippy::disallowed_methods, reason = "the test's own loopback canary")]
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let mut victim = std::process::Command::new("sleep")
        .arg("120")
        .spawn()
        .unwrap();
    let data = home.data();
    // Outside every hidden directory and not granted: Landlock's refusal.
    let visible = visible_but_not_granted();
    let source = visible.as_ref().map(|d| d.path().join("visible.txt"));
    if let Some(s) = &source {
        std::fs::write(s, "visible").unwrap();
    }
    let beside_command = testkit_mcp().with_file_name("written-by-a-sandboxed-server");
    let _ = std::fs::remove_file(&beside_command);
    let spec = json!({
        "canary": canary, "files": {"source": source.clone().unwrap_or_else(|| canary.clone())}, "db": data.join("maven.db"), "list": data,
        "socket": data.join("maven.sock"), "write": beside_command, "write_hidden": written,
        "tcp": tcp.local_addr().unwrap().port(), "udp": udp.local_addr().unwrap().port(),
        "pid": victim.id(), "setuid": true, "fork": 500,
    });
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0"},
            "mcp_servers": {"evil": {
                "command": testkit_mcp(), "args": ["--attacks", spec.to_string()],
                "enabled": true, "sandbox": {"network": false, "processes": 16}}}
        })
        .to_string(),
    );
    let _d = home.start_logging_to(&home.dir.path().join("daemon.log"));
    let got = reported(&home, "evil", "ATTACKS ");
    // The test's directory is under /tmp, hidden like the owner's home: what is inside does
    // not exist for the server (ENOENT); what is visible but not granted is refused (EACCES).
    let want = json!({
        "canary": "ENOENT", "read source": "EACCES", "db": "ENOENT", "list": "EACCES",
        "ipc": "ENOENT", "write": "EACCES", "write_hidden": "ENOENT",
        "tcp": "EACCES", "udp": "ENETUNREACH",
        "signal": "EPERM", "ptrace": "EPERM", "setuid": "EPERM",
        "NoNewPrivs": "1", "CapEff": "0000000000000000", "CapPrm": "0000000000000000",
    });
    for (k, v) in want.as_object().unwrap() {
        if k == "read source" && source.is_none() {
            // Without a visible directory the file is the hidden canary: not there at all.
            assert_eq!(got[k], "ENOENT", "{k}: {got}");
            continue;
        }
        assert_eq!(&got[k], v, "{k}: {got}");
    }
    assert_eq!(got["fork"]["stopped_by"], "EAGAIN", "{got}");
    assert!(got["fork"]["started"].as_u64().unwrap() < 16, "{got}");
    // The real uid is never 0 (the kernel's process bound does not apply to it).
    let real_uid = got["Uid"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    assert_ne!(real_uid, "0", "{got}");
    // Nothing reached the test.
    assert!(
        tcp.accept().is_err(),
        "a TCP connection reached the listener"
    );
    assert!(
        udp.recv(&mut [0u8; 64]).is_err(),
        "a datagram reached the test"
    );
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the victim was signalled"
    );
    assert!(!written.exists() && !beside_command.exists());
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "secret");
    // The server itself still works.
    let v = home.json(&["mcp", "status", "--json"]);
    let evil = by_name(&v, "evil");
    assert_eq!(evil["state"], "ready", "{evil}");
    assert_eq!(
        evil["trust"],
        "sandboxed local process: reads none of your files, writes only its own directory, no network"
    );
    victim.kill().unwrap();
    victim.wait().unwrap();
}

#[test]
fn no_child_of_the_daemon_may_use_its_socket() {
    let home = Home::new();
    let sock = home.data().join("maven.sock");
    let spec = json!({"socket": sock, "orphan": true});
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0"},
            "mcp_servers": {"plain": {
                "command": testkit_mcp(), "args": ["--attacks", spec.to_string()],
                "enabled": true, "sandbox": false}}
        })
        .to_string(),
    );
    let log = home.dir.path().join("daemon.log");
    let d = home.start_logging_to(&log);
    let got = reported(&home, "plain", "ATTACKS ");
    assert_eq!(got["ipc"], "closed", "{got}");
    // The orphan, re-parented to the daemon (its subreaper), is refused as well.
    let orphan = reported(&home, "plain", "ORPHAN ");
    assert_eq!(orphan["ipc"], "closed", "{orphan}");
    assert_eq!(orphan["ppid"], d.pid(), "{orphan}");
    let text = std::fs::read_to_string(&log).unwrap();
    let refusals: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("IPC connection refused"))
        .collect();
    assert_eq!(refusals.len(), 2, "{text}");
    assert!(
        refusals
            .iter()
            .all(|l| l.contains(r#"server="plain""#) && l.contains("it descends from the daemon")),
        "{refusals:?}"
    );
    let v = home.json(&["mcp", "status", "--json"]);
    assert_eq!(
        by_name(&v, "plain")["trust"],
        "unsandboxed local process: runs as you, with your files and your network"
    );
    // The owner's own CLI is still answered.
    assert_eq!(home.json(&["say", "--json", "help"])["ok"], true);
    // The orphan, once exited, is reaped.
    eventually("the orphan to be reaped", || {
        let zombies =
            std::fs::read_to_string(format!("/proc/{}/task/{}/children", d.pid(), d.pid()))
                .unwrap_or_default();
        zombies
            .split_whitespace()
            .all(|p| {
                std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .map(|s| !s.contains(") Z "))
                    .unwrap_or(true)
            })
            .then_some(())
    });
}

#[test]
fn a_missing_command_is_not_started_and_says_why() {
    let home = Home::new();
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0"},
            "mcp_servers": {"gone": {"command": "no-such-server-anywhere", "enabled": true}}
        })
        .to_string(),
    );
    let _d = home.start();
    let v = home.json(&["mcp", "status", "--json"]);
    let gone = by_name(&v, "gone");
    assert_eq!(gone["state"], "not started: its sandbox cannot be applied");
    assert_eq!(
        gone["last_error"],
        "sandbox: the command \"no-such-server-anywhere\" is not an executable file on PATH; the server was not started. \"sandbox\": false in its block runs it unsandboxed, as the owner's explicit choice"
    );
}

// ---- real servers, sandboxed, through the same launcher the daemon uses ----

fn testenv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testenv")
}

fn installed(p: &Path) -> PathBuf {
    assert!(
        p.exists(),
        "test peer missing: {} does not exist; run scripts/install-test-peers.sh",
        p.display()
    );
    std::fs::canonicalize(p).unwrap()
}

/// A client of `command args` inside `policy`'s sandbox, launched by the maven binary.
async fn sandboxed(
    data: &Path,
    policy: sandbox::Policy,
    command: &str,
    args: &[String],
) -> mcp::Client {
    let path = std::env::var_os("PATH");
    let ctx = sandbox::Context {
        data_dir: data,
        path: path.as_deref(),
        deny_ports: vec![],
        owner_home: std::env::var_os("HOME").map(Into::into),
    };
    let plan = sandbox::Plan::resolve("peer", &policy, command, &ctx).unwrap();
    sandbox::prepare(&plan).unwrap();
    let config = mcp::ServerConfig {
        protocol: mcp::Protocol::default(),
        name: "peer".into(),
        transport: mcp::Transport::Stdio {
            command: env!("CARGO_BIN_EXE_maven").into(),
            args: plan.launcher_args(command, args),
            env: BTreeMap::new(),
        },
        timeouts: mcp::McpTimeouts {
            init: Duration::from_secs(60),
            list: Duration::from_secs(30),
            call: Duration::from_secs(30),
        },
    };
    match mcp::Client::connect(&config, mcp::ClientOptions::default()).await {
        Ok(c) => c,
        Err(e) => panic!("{command}: connect: {e}"),
    }
}

async fn call_text(c: &mcp::Client, tool: &str, args: Value) -> (bool, String) {
    let Value::Object(args) = args else { panic!() };
    let out = c.call_tool(tool, args).await.unwrap();
    (out.is_error, out.text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_filesystem_server_runs_sandboxed() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let shared = t.path().join("shared");
    // Visible to the server (not under a hidden directory such as /tmp) but not granted.
    let Some(outside) = visible_but_not_granted() else {
        return;
    };
    let other = outside.path().join("other");
    for d in [&shared, &other] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(shared.join("note.txt"), "hello").unwrap();
    std::fs::write(other.join("secret.txt"), "secret").unwrap();
    let script = installed(
        &testenv().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
    );
    let node = installed(&testenv().join("node_modules/.bin/node"));
    let policy = sandbox::Policy {
        read: vec![installed(&testenv().join("node_modules"))],
        write: vec![shared.clone()],
        network: false,
        ..sandbox::Policy::default()
    };
    // The server is told both directories; only `shared` is inside its sandbox.
    let args = [script, shared.clone(), other.clone()]
        .map(|p| p.display().to_string())
        .to_vec();
    let c = sandboxed(&data, policy, &node.display().to_string(), &args).await;
    let (err, text) = call_text(&c, "list_directory", json!({"path": shared})).await;
    assert!(!err && text.contains("note.txt"), "{text}");
    let (err, text) = call_text(
        &c,
        "write_file",
        json!({"path": shared.join("new.txt"), "content": "written"}),
    )
    .await;
    assert!(!err, "{text}");
    assert_eq!(
        std::fs::read_to_string(shared.join("new.txt")).unwrap(),
        "written"
    );
    let (err, text) = call_text(
        &c,
        "read_text_file",
        json!({"path": other.join("secret.txt")}),
    )
    .await;
    assert!(err, "read outside the sandbox: {text}");
    assert!(
        !text.contains("secret") || text.contains("EACCES"),
        "{text}"
    );
    assert!(
        text.contains("EACCES") || text.contains("permission denied"),
        "{text}"
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_server_runs_sandboxed() {
    let t = tempfile::tempdir().unwrap();
    let python = testenv().join(".venv/bin/python");
    installed(&python);
    let script = installed(&testenv().join("python_server.py"));
    let policy = sandbox::Policy {
        read: vec![script.clone()],
        network: false,
        ..sandbox::Policy::default()
    };
    let c = sandboxed(
        &t.path().join("data"),
        policy,
        &python.display().to_string(),
        &[script.display().to_string(), "stdio".into()],
    )
    .await;
    let tools = c.list_tools().await.unwrap();
    assert!(!tools.tools.is_empty());
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_server_runs_sandboxed() {
    let t = tempfile::tempdir().unwrap();
    let demo = testkit_mcp().with_file_name("maven-demo-todo");
    if !demo.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = std::process::Command::new(cargo)
            .args(["build", "-p", "demo-todo"])
            .status()
            .unwrap();
        assert!(st.success(), "cannot build demo-todo");
    }
    let c = sandboxed(
        &t.path().join("data"),
        sandbox::Policy {
            network: false,
            ..sandbox::Policy::default()
        },
        &demo.display().to_string(),
        &[],
    )
    .await;
    let (err, text) = call_text(&c, "list_tasks", json!({"project": "inbox"})).await;
    assert!(!err, "{text}");
    c.close().await;
}

/// The daemon usually runs as its owner, not as root: the same launcher, run by an
/// unprivileged uid (here nobody, through `setpriv`, when the tests run as root), confines the
/// server the same way, and its process bound counts only the sandbox's own processes.
#[test]
fn the_sandbox_works_for_an_unprivileged_owner() {
    let setpriv = Path::new("/usr/bin/setpriv");
    if !rustix::process::geteuid().is_root() || !setpriv.exists() {
        eprintln!("skipped: needs root (to become nobody) and setpriv");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let owner = t.path().join("owner");
    for d in [&data, &owner] {
        std::fs::create_dir_all(d).unwrap();
    }
    let canary = owner.join("canary");
    std::fs::write(&canary, "secret").unwrap();
    let server = testkit_mcp().display().to_string();
    let policy = sandbox::Policy {
        network: false,
        processes: 8,
        ..sandbox::Policy::default()
    };
    let path = std::env::var_os("PATH");
    let ctx = sandbox::Context {
        data_dir: &data,
        path: path.as_deref(),
        deny_ports: vec![],
        owner_home: std::env::var_os("HOME").map(Into::into),
    };
    let plan = sandbox::Plan::resolve("peer", &policy, &server, &ctx).unwrap();
    sandbox::prepare(&plan).unwrap();
    let sandboxes = data.join("sandbox");
    for p in [
        t.path(),
        &data,
        &sandboxes,
        &owner,
        &canary,
        &plan.home,
        &plan.tmp,
    ] {
        std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
    }
    let spec = json!({"canary": canary, "list": data, "write": owner.join("w"), "setuid": true, "fork": 100});
    let out = std::process::Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_maven"))
        .args(plan.launcher_args(&server, &["--attacks".into(), spec.to_string()]))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("ATTACKS "))
        .unwrap_or_else(|| panic!("no report: {err}"));
    let got: Value = serde_json::from_str(line).unwrap();
    for (k, v) in [
        ("canary", "ENOENT"),
        ("list", "EACCES"),
        ("write", "ENOENT"),
        // uid 0 does not exist in the sandbox's user namespace (only the owner's uid is mapped).
        ("setuid", "EINVAL"),
        ("NoNewPrivs", "1"),
        ("CapEff", "0000000000000000"),
    ] {
        assert_eq!(got[k], v, "{k}: {got}");
    }
    assert_eq!(got["fork"]["stopped_by"], "EAGAIN", "{got}");
    assert_eq!(
        got["Uid"].as_str().unwrap().split_whitespace().next(),
        Some("65534")
    );
}

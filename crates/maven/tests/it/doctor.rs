//! `maven doctor` against broken set-ups, each message asserted, and a healthy one.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use crate::support::{demo_server, free_port, Home};

/// A data directory with mode 0700, as the daemon makes it.
fn private_data(home: &Home) {
    std::fs::create_dir(home.data()).unwrap();
    std::fs::set_permissions(home.data(), std::fs::Permissions::from_mode(0o700)).unwrap();
}

/// Runs `doctor --json` and returns its exit code and checks.
fn doctor(home: &Home) -> (Option<i32>, Vec<Value>) {
    let out = home.run(&["doctor", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code(), v.as_array().unwrap().clone())
}

fn find<'a>(checks: &'a [Value], name: &str) -> &'a Value {
    checks
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no check {name:?} in {checks:?}"))
}

#[test]
fn broken_setups_each_say_what_and_what_to_do() {
    // Held for the whole test: the port configured in the "taken port" case.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port();
    struct Case {
        what: &'static str,
        config: String,
        setup: fn(&Home),
        check: &'static str,
        status: &'static str,
        message: String,
        fix: &'static str,
        /// The checks that fail.
        failing: &'static [&'static str],
    }
    let free = free_port();
    let web = |port: u16| format!(r#""web": {{"listen": "127.0.0.1:{port}"}}"#);
    let cases = [
        Case {
            what: "a 0644 database",
            config: format!("{{{}}}", web(free)),
            setup: |h| {
                private_data(h);
                let db = h.data().join("maven.db");
                std::fs::write(&db, b"").unwrap();
                std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
            },
            check: "database",
            status: "fail",
            message: "{data}/maven.db has mode 0644: others may read it (want 0600)".into(),
            fix: "chmod 600 {data}/maven.db",
            failing: &["database"],
        },
        Case {
            what: "a 0644 database in a 0755 data directory",
            config: format!("{{{}}}", web(free)),
            setup: |h| {
                std::fs::create_dir(h.data()).unwrap();
                let db = h.data().join("maven.db");
                std::fs::write(&db, b"").unwrap();
                std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
                std::fs::set_permissions(h.data(), std::fs::Permissions::from_mode(0o755)).unwrap();
            },
            check: "database",
            status: "fail",
            message: "{data}/maven.db has mode 0644: others may read it (want 0600)".into(),
            fix: "chmod 600 {data}/maven.db",
            failing: &["data-dir", "database"],
        },
        Case {
            what: "a 0755 data directory",
            config: format!("{{{}}}", web(free)),
            setup: |h| {
                std::fs::create_dir(h.data()).unwrap();
                std::fs::set_permissions(h.data(), std::fs::Permissions::from_mode(0o755)).unwrap();
            },
            check: "data-dir",
            status: "fail",
            message: "{data} has mode 0755: others may read it (want 0700)".into(),
            fix: "chmod 700 {data}",
            failing: &["data-dir"],
        },
        Case {
            what: "a missing command",
            config: format!(
                r#"{{{}, "mcp_servers": {{"files": {{"command": "no-such-mcp-server-x",
                    "enabled": true}}}}}}"#,
                web(free)
            ),
            setup: private_data,
            check: "mcp:files",
            status: "fail",
            message: "command not found: no-such-mcp-server-x (not on PATH: {path})".into(),
            fix: "install it, or give its absolute path in mcp_servers.files.command",
            failing: &["mcp:files"],
        },
        Case {
            what: "a missing command, unsandboxed",
            config: format!(
                r#"{{{}, "mcp_servers": {{"files": {{"command": "no-such-mcp-server-x",
                    "sandbox": false, "enabled": true}}}}}}"#,
                web(free)
            ),
            setup: private_data,
            check: "mcp:files",
            status: "fail",
            message: "command not found: no-such-mcp-server-x (not on PATH: {path})".into(),
            fix: "install it, or give its absolute path in mcp_servers.files.command",
            failing: &["mcp:files"],
        },
        Case {
            what: "a missing command with its own PATH",
            config: format!(
                r#"{{{}, "mcp_servers": {{"files": {{"command": "no-such-mcp-server-x",
                    "env": {{"PATH": "/nonexistent/bin:/usr/bin"}}, "enabled": true}}}}}}"#,
                web(free)
            ),
            setup: private_data,
            check: "mcp:files",
            status: "fail",
            message:
                "command not found: no-such-mcp-server-x (not on PATH: /nonexistent/bin:/usr/bin)"
                    .into(),
            fix: "install it, or give its absolute path in mcp_servers.files.command",
            failing: &["mcp:files"],
        },
        Case {
            what: "a missing absolute path",
            config: format!(
                r#"{{{}, "mcp_servers": {{"files": {{"command": "/nonexistent/mcp-x",
                    "enabled": true}}}}}}"#,
                web(free)
            ),
            setup: private_data,
            check: "mcp:files",
            status: "fail",
            message: "command not found: /nonexistent/mcp-x (no such executable file)".into(),
            fix: "install it, or fix mcp_servers.files.command",
            failing: &["mcp:files"],
        },
        Case {
            what: "a missing relative path",
            config: format!(
                r#"{{{}, "mcp_servers": {{"files": {{"command": "nonexistent/mcp-x",
                    "sandbox": false, "enabled": true}}}}}}"#,
                web(free)
            ),
            setup: private_data,
            check: "mcp:files",
            status: "fail",
            message: "command not found: nonexistent/mcp-x (no such executable file)".into(),
            fix: "install it, or fix mcp_servers.files.command",
            failing: &["mcp:files"],
        },
        Case {
            what: "a door that refuses its URL",
            config: format!(
                r#"{{{}, "mcp_servers": {{"lan": {{"url": "http://10.1.2.3/mcp",
                    "enabled": true}}}}}}"#,
                web(free)
            ),
            setup: private_data,
            check: "door mcp:lan",
            status: "fail",
            message: "http://10.1.2.3/mcp: refused: 10.1.2.3 is private".into(),
            fix: "change the URL of mcp_servers.lan, or widen its door (allow_private on the \
                  block, fetch.allow_hosts / fetch.deny_hosts) if the address is yours",
            failing: &["door mcp:lan"],
        },
        Case {
            what: "a taken port",
            config: format!("{{{}}}", web(taken_port)),
            setup: private_data,
            check: "web",
            status: "fail",
            message: format!("127.0.0.1:{taken_port} (web.listen) is taken by another program"),
            fix: "stop that program, or set web.listen to a free port",
            failing: &["web"],
        },
        Case {
            what: "a config error",
            config: r#"{"mcp_servers": {"vikunja": {"url": "https://v.example/mcp",
                        "max_tools": "12"}}}"#
                .into(),
            setup: private_data,
            check: "config",
            status: "fail",
            message: "{config}: mcp_servers.vikunja.max_tools: expected a positive integer, \
                      got \"12\""
                .into(),
            fix: "fix the file (`maven config check` lists the same problems); the checks \
                  that need the configuration were skipped",
            failing: &["config"],
        },
    ];
    for case in cases {
        let home = Home::new();
        home.write_config(&case.config);
        (case.setup)(&home);
        let (code, checks) = doctor(&home);
        let what = case.what;
        let want_code = if case.failing.is_empty() { 0 } else { 1 };
        assert_eq!(code, Some(want_code), "{what}: {checks:?}");
        let c = find(&checks, case.check);
        let fill = |s: &str| {
            s.replace("{data}", &home.data().display().to_string())
                .replace("{config}", &home.config().display().to_string())
                .replace("{path}", &std::env::var("PATH").unwrap_or_default())
        };
        assert_eq!(c["status"], case.status, "{what}: {c}");
        if case.check.starts_with("mcp:") {
            // A command that does not exist is no sandbox matter, whatever the block says.
            assert!(
                !c["message"].as_str().unwrap().contains("sandbox"),
                "{what}: {c}"
            );
            assert!(
                !c["fix"].as_str().unwrap().contains("sandbox"),
                "{what}: {c}"
            );
        }
        assert_eq!(c["message"], fill(&case.message), "{what}: {c}");
        assert_eq!(c["fix"], fill(case.fix), "{what}: {c}");
        let failing: Vec<&str> = checks
            .iter()
            .filter(|c| c["status"] == "fail")
            .filter_map(|c| c["check"].as_str())
            .collect();
        assert_eq!(failing, case.failing, "{what}: only the broken part fails");
        // The text form says the same on one line.
        let out = home.run(&["doctor"]);
        assert_eq!(out.status.code(), Some(want_code), "{what}");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = format!(
            "{:<4}  {}: {} — {}",
            case.status,
            case.check,
            fill(&case.message),
            fill(case.fix)
        );
        assert!(text.lines().any(|l| l == line), "{what}: {text}");
    }
    drop(taken);
}

#[test]
fn a_healthy_setup_passes_before_and_after_the_first_start() {
    let home = Home::new();
    let port = free_port();
    home.write_config(&format!(
        r#"{{"web": {{"listen": "127.0.0.1:{port}"}},
            "mcp_servers": {{
              "local": {{"command": "sh", "enabled": false}},
              "shell": {{"command": "/bin/sh", "enabled": true}},
              "remote": {{"url": "https://mcp.example.invalid/mcp", "enabled": true}}}}}}"#
    ));
    // Before the first start: the data directory is missing (a warning), so is the daemon.
    let (code, checks) = doctor(&home);
    assert_eq!(code, Some(0), "{checks:?}");
    assert_eq!(find(&checks, "data-dir")["status"], "warn");
    assert_eq!(find(&checks, "daemon")["status"], "warn");
    assert_eq!(
        find(&checks, "door mcp:remote")["message"],
        "https://mcp.example.invalid/mcp: ok (resolved at connect time)"
    );
    assert_eq!(
        find(&checks, "mcp:shell")["message"],
        "/bin/sh resolves to /bin/sh"
    );
    assert!(
        checks.iter().all(|c| c["check"] != "mcp:local"),
        "a disabled server is not checked: {checks:?}"
    );
    assert!(!home.data().exists(), "doctor created nothing");

    // The daemon would dial the servers: run it on the page alone.
    home.write_config(&format!(r#"{{"web": {{"listen": "127.0.0.1:{port}"}}}}"#));
    let daemon = home.start();
    let (code, checks) = doctor(&home);
    assert_eq!(code, Some(0), "{checks:?}");
    // The database is as SQLite creates it (by the umask) inside the 0700 directory.
    for c in &checks {
        let want = if c["check"] == "database" {
            ["ok", "warn"]
        } else {
            ["ok", "ok"]
        };
        assert!(want.contains(&c["status"].as_str().unwrap()), "{c}");
    }
    assert_eq!(
        find(&checks, "web")["message"],
        format!("127.0.0.1:{port} (web.listen) is taken by the daemon on this data directory")
    );
    assert!(find(&checks, "daemon")["message"]
        .as_str()
        .unwrap()
        .starts_with("a daemon answers on "));
    assert!(find(&checks, "database")["message"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{}/maven.db", home.data().display())));
    drop(daemon);
}

#[test]
fn the_sandbox_bounds_this_machine_enforces_are_reported() {
    let home = Home::new();
    private_data(&home);
    home.write_config(&format!(
        r#"{{"web": {{"listen": "127.0.0.1:{}"}}, "mcp_servers": {{"s": {{"command": "/bin/cat", "enabled": true}}}}}}"#,
        free_port()
    ));
    let (_, checks) = doctor(&home);
    let processes = find(&checks, "sandbox bounds: processes");
    assert_eq!(processes["status"], "ok", "{processes}");
    assert!(processes["message"]
        .as_str()
        .unwrap()
        .contains("ends with it: a PID namespace of its own"));
    assert_eq!(find(&checks, "sandbox bounds: sockets")["status"], "ok");
    let memory = find(&checks, "sandbox bounds: memory");
    assert!(
        memory["message"]
            .as_str()
            .unwrap()
            .contains("the trust line says \"memory bounded per process\""),
        "{memory}"
    );
    assert!(find(&checks, "sandbox bounds: disk")["message"]
        .as_str()
        .unwrap()
        .contains("sandbox.disk"));
}

#[test]
fn a_write_grant_over_shared_code_is_named_by_doctor() {
    let home = Home::new();
    private_data(&home);
    let fake_home = home.dir.path().join("me");
    home.write_config(
        &serde_json::json!({"mcp_servers": {"f": {"command": "/bin/cat",
            "sandbox": {"write": [fake_home.join(".npm")]}}}})
        .to_string(),
    );
    let out = home
        .command_for(&["doctor", "--json"])
        .env("HOME", &fake_home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let config = find(v.as_array().unwrap(), "config");
    assert_eq!(config["status"], "fail", "{config}");
    assert!(
        config["message"].as_str().unwrap().contains(&format!(
            "mcp_servers.f.sandbox.write[0]: {} covers {} (npm's cache",
            fake_home.join(".npm").display(),
            fake_home.join(".npm").display()
        )),
        "{config}"
    );
}

#[test]
fn beside_a_daemon_each_server_is_reported_as_it_runs_and_a_crashed_one_fails() {
    let home = Home::new();
    let demo = demo_server();
    let config = |servers: Value| {
        serde_json::json!({"web": {"listen": "127.0.0.1:0"}, "mcp_servers": servers}).to_string()
    };
    // A healthy server alone: every line ok.
    home.write_config(&config(serde_json::json!({
        "todo": {"command": demo, "enabled": true},
        "off": {"command": "/bin/false", "enabled": false}
    })));
    let d = home.start();
    // Ready, and its listing reconciled (a listing proposes its rows a moment after it ends).
    let (code, checks) = crate::support::eventually("the demo server to be ready", || {
        let (code, checks) = doctor(&home);
        let todo = find(&checks, "daemon mcp:todo");
        (todo["status"] == "ok"
            && todo["message"]
                .as_str()
                .is_some_and(|m| m.contains("3 proposed")))
        .then_some((code, checks))
    });
    assert_eq!(code, Some(0), "{checks:?}");
    let todo = find(&checks, "daemon mcp:todo");
    assert_eq!(
        todo["message"],
        "ready (3 tools offered, 3 proposed, 0 enabled)"
    );
    assert_eq!(todo["fix"], "nothing to do");
    assert!(
        checks.iter().all(|c| c["check"] != "daemon mcp:off"),
        "a disabled server has no line: {checks:?}"
    );
    assert!(d.signal("-TERM").status.success());

    // One that exits at once and one whose command does not exist: each fails, by its state.
    home.write_config(&config(serde_json::json!({
        "todo": {"command": demo, "enabled": true},
        "quits": {"command": "/bin/false", "sandbox": false, "enabled": true},
        "gone": {"command": "no-such-mcp-server-x", "enabled": true}
    })));
    let d = home.start();
    let (code, checks) = crate::support::eventually("the failing server to back off", || {
        let (code, checks) = doctor(&home);
        let quits = find(&checks, "daemon mcp:quits");
        (quits["status"] == "fail" && find(&checks, "daemon mcp:todo")["status"] == "ok")
            .then_some((code, checks))
    });
    assert_eq!(code, Some(1), "{checks:?}");
    let path = std::env::var("PATH").unwrap_or_default();
    let gone = find(&checks, "daemon mcp:gone");
    assert_eq!(gone["status"], "fail");
    assert_eq!(
        gone["message"],
        format!(
            "not started: command not found; last error: command not found: no-such-mcp-server-x (not on PATH: {path})"
        )
    );
    assert_eq!(
        gone["fix"],
        "install it, or fix mcp_servers.gone.command, then `maven reload`"
    );
    let quits = find(&checks, "daemon mcp:quits");
    let message = quits["message"].as_str().unwrap();
    let until = message
        .strip_prefix("backing off until ")
        .and_then(|m| m.split_once("; last error: "))
        .unwrap_or_else(|| panic!("{quits}"));
    assert!(
        until.0.len() == 20 && until.0.ends_with('Z'),
        "an RFC 3339 time: {quits}"
    );
    assert!(
        until.1.contains("exited with code 1"),
        "the last error says how it ended: {quits}"
    );
    assert_eq!(
        quits["fix"],
        "fix what the error names (its stderr is in `maven mcp status`; `maven mcp inspect quits` dials it alone); the daemon dials it again by itself"
    );
    let failing: Vec<&str> = checks
        .iter()
        .filter(|c| c["status"] == "fail")
        .filter_map(|c| c["check"].as_str())
        .collect();
    assert_eq!(
        failing,
        ["mcp:gone", "daemon mcp:gone", "daemon mcp:quits"],
        "the offline check of the missing command, then the daemon's two servers"
    );
    // The text form: the same line, exit 1.
    let out = home.run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = format!(
        "fail  daemon mcp:gone: {} — {}",
        gone["message"].as_str().unwrap(),
        gone["fix"].as_str().unwrap()
    );
    assert!(text.lines().any(|l| l == line), "{text}");
    // `mcp status` says a server that never listed has none listed, never `null`.
    let out = home.run(&["mcp", "status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .any(|l| l == "  tools:    none listed yet, 0 proposed, 0 enabled"),
        "{text}"
    );
    assert!(!text.contains("null"), "{text}");
    drop(d);
}

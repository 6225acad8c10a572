//! `maven reload`, SIGHUP and `maven mcp import --write` against a real daemon and real
//! servers: only what changed is touched, an invalid file changes nothing, a narrowed
//! `allow_tools` withdraws at once.

use serde_json::{json, Value};

use crate::support::{by_name, eventually, free_port, stderr, testkit_mcp, Home};

/// A testkit server block; `marker` is an argument the server ignores, which names its
/// process on the machine.
fn server(marker: &str) -> Value {
    let bin = testkit_mcp();
    json!({"command": bin.to_str().unwrap(), "args": ["--named", marker], "enabled": true})
}

fn ready(home: &Home, names: &[&str]) -> Value {
    eventually(&format!("{names:?} ready"), || {
        let st = home.json(&["mcp", "status", "--json"]);
        names
            .iter()
            .all(|n| {
                st.as_array()
                    .unwrap()
                    .iter()
                    .any(|s| s["name"] == *n && s["state"] == "ready")
            })
            .then_some(st)
    })
}

/// Whether a process of this machine has `marker` among its arguments.
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| c.split(|b| *b == 0).any(|a| a == marker.as_bytes()))
            .unwrap_or(false)
    })
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_reload_starts_stops_and_restarts_only_what_changed() {
    let home = Home::new();
    let dir = home.dir.path().display().to_string();
    let m = |n: &str| format!("{dir}/marker-{n}");
    home.write_config(
        &json!({"mcp_servers": {"kept": server(&m("kept")), "changed": server(&m("changed")), "gone": server(&m("gone"))}})
            .to_string(),
    );
    let _d = home.start();
    let before = ready(&home, &["kept", "changed", "gone"]);
    assert!(running(&m("gone")));
    let kept_dials = by_name(&before, "kept")["dials"].clone();

    let mut changed = server(&m("changed"));
    changed["args"] = json!(["--named", m("changed"), "--named", "again"]);
    home.write_config(
        &json!({"mcp_servers": {"kept": server(&m("kept")), "changed": changed, "new": server(&m("new")), "dark": {"command": "/nonexistent/never-run", "enabled": false}}})
            .to_string(),
    );
    let out = home.run(&["reload"]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    for want in [
        &format!("reloaded {}", home.config().display()),
        "servers started: new",
        "servers stopped: gone",
        "servers restarted: changed",
        "servers known, not enabled (never dialled): dark",
        "servers unchanged (connections kept): kept",
    ] {
        assert!(said.lines().any(|l| l == want), "{want:?} in\n{said}");
    }
    let after = ready(&home, &["kept", "changed", "new"]);
    // The unchanged server kept its one connection; the gone one's process has ended.
    assert_eq!(by_name(&after, "kept")["dials"], kept_dials);
    assert!(after
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["name"] != "gone"));
    assert_eq!(by_name(&after, "dark")["state"], "dark");
    eventually("the removed server's process to end", || {
        (!running(&m("gone"))).then_some(())
    });
    assert!(running(&m("kept")) && running(&m("new")));

    // JSON: the same, typed.
    let v = home.json(&["reload", "--json"]);
    assert_eq!(v["kept"], json!(["changed", "dark", "kept", "new"]));
    assert_eq!(v["added"], json!([]));
}

#[test]
fn an_invalid_file_is_refused_as_config_check_refuses_it_and_sighup_reloads() {
    let home = Home::new();
    let dir = home.dir.path().display().to_string();
    let marker = format!("{dir}/marker-a");
    home.write_config(&json!({"mcp_servers": {"a": server(&marker)}}).to_string());
    let log = home.dir.path().join("daemon.log");
    let d = home.start_logging_to(&log);
    ready(&home, &["a"]);

    home.write_config(r#"{"mcp_servers": {"a": {"command": 3}}, "feed_min_interval": "often"}"#);
    let check = home.run(&["config", "check"]);
    assert_eq!(check.status.code(), Some(1));
    let out = home.run(&["reload"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    // Every problem `config check` names, in its words.
    let problems = stderr(&check);
    assert!(problems.lines().count() >= 2, "{problems}");
    for p in problems.lines() {
        assert!(err.contains(p.trim()), "{p:?} in\n{err}");
    }
    assert!(
        err.contains("the configuration in force stays; nothing changed"),
        "{err}"
    );
    // Nothing of the running state was lost.
    let st = ready(&home, &["a"]);
    assert_eq!(by_name(&st, "a")["dials"], 1);

    // SIGHUP reloads the file once it is valid again.
    let second = format!("{dir}/marker-b");
    home.write_config(
        &json!({"mcp_servers": {"a": server(&marker), "b": server(&second)}}).to_string(),
    );
    let st = std::process::Command::new("kill")
        .args(["-HUP", &d.pid().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    ready(&home, &["a", "b"]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("SIGHUP received: reloading the configuration"),
        "{text}"
    );
    assert!(
        text.contains("reload refused") || text.contains("configuration reloaded"),
        "{text}"
    );
}

#[test]
fn a_narrowed_allow_tools_withdraws_enabled_rows_on_reload_and_at_start() {
    let home = Home::new();
    let dir = home.dir.path().display().to_string();
    let marker = format!("{dir}/marker-kit");
    home.write_config(&json!({"mcp_servers": {"kit": server(&marker)}}).to_string());
    let d = home.start();
    eventually("the kit's rows", || {
        let t = home.json(&["tools", "--json"]);
        (t.as_array().unwrap().len() == 2).then_some(())
    });
    drop(d);
    home.enable(&["kit_echo", "kit_delete_item"]);
    let _d = home.start();
    ready(&home, &["kit"]);

    let mut narrowed = server(&marker);
    narrowed["allow_tools"] = json!(["echo"]);
    home.write_config(&json!({"mcp_servers": {"kit": narrowed}}).to_string());
    let out = home.run(&["reload"]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(
        said.contains("withdrawn kit_delete_item: withdrawn: not named in allow_tools of mcp:kit"),
        "{said}"
    );
    let tools = home.json(&["tools", "--json"]);
    assert_eq!(by_name(&tools, "kit_delete_item")["state"], "withdrawn");
    assert_eq!(by_name(&tools, "kit_echo")["state"], "enabled");
    // What is withdrawn is not offered: help does not name it, and it does not run.
    let help = stdout(&home.run(&["say", "help"]));
    assert!(!help.contains("kit_delete_item"), "{help}");
    let said = stdout(&home.run(&["say", "kit_delete_item 3"]));
    assert!(!said.contains("About to run"), "{said}");
    // The server's listing after its restart keeps it withdrawn, and counts it refused.
    let st = eventually("the kit listed again", || {
        let st = home.json(&["mcp", "status", "--json"]);
        let kit = by_name(&st, "kit");
        (kit["state"] == "ready" && kit["tools_refused"].as_array()?.len() == 1)
            .then(|| kit.clone())
    });
    assert_eq!(st["tools_enabled"], 1);
    assert_eq!(st["tools_proposed"], 0);
    drop(_d);

    // A withdrawn row cannot be enabled.
    let e = home.try_enable("kit_delete_item").unwrap_err();
    assert!(matches!(e, store::Error::BadTransition { .. }), "{e}");

    // At start, before any listing: a file narrowed while the daemon was down.
    let mut other = server(&marker);
    other["allow_tools"] = json!(["delete_item"]);
    home.write_config(&json!({"mcp_servers": {"kit": other}}).to_string());
    let _d = home.start();
    let tools = home.json(&["tools", "--json"]);
    assert_eq!(by_name(&tools, "kit_echo")["state"], "withdrawn");
    assert!(
        by_name(&tools, "kit_echo")["provenance"]
            .as_str()
            .unwrap()
            .starts_with("withdrawn: not named in allow_tools of mcp:kit"),
        "{tools}"
    );
}

#[test]
fn mcp_import_write_merges_refuses_a_taken_name_keeps_a_backup_and_reloads() {
    let home = Home::new();
    let dir = home.dir.path();
    let marker = format!("{}/marker-a", dir.display());
    home.write_config(&json!({"mcp_servers": {"a": server(&marker)}}).to_string());
    let _d = home.start();
    ready(&home, &["a"]);
    let mem_dir = dir.join("mem");
    std::fs::create_dir_all(&mem_dir).unwrap();
    let mem_file = mem_dir.join("memory.json");
    let other = dir.join("claude.json");
    std::fs::write(
        &other,
        json!({"mcpServers": {
            "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                       "env": {"MEMORY_FILE_PATH": mem_file, "API_TOKEN": "abc123", "LOG_LEVEL": "debug"}},
            "a": {"command": "other"}
        }})
        .to_string(),
    )
    .unwrap();
    let before = std::fs::read_to_string(home.config()).unwrap();

    // A name already in the file: refused, naming it, and nothing written.
    let out = home.run(&["mcp", "import", other.to_str().unwrap(), "--write"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "mcp_servers.a already in {}: nothing was written (add --replace to replace it)",
            home.config().display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(home.config()).unwrap(), before);

    // --replace: merged, validated, the previous file kept, the daemon reloaded.
    let out = home.run(&[
        "mcp",
        "import",
        other.to_str().unwrap(),
        "--write",
        "--replace",
    ]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(
        said.contains(&format!("wrote {}", home.config().display())),
        "{said}"
    );
    assert!(
        said.contains("servers known, not enabled (never dialled): a, memory"),
        "{said}"
    );
    let bak = format!("{}.bak", home.config().display());
    assert_eq!(std::fs::read_to_string(bak).unwrap(), before);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(home.config()).unwrap()).unwrap();
    let memory = &written["mcp_servers"]["memory"];
    assert_eq!(memory["enabled"], false);
    // A path and a plain value stay as written; only the secret becomes a reference.
    assert_eq!(
        memory["env"]["MEMORY_FILE_PATH"],
        mem_file.to_str().unwrap()
    );
    assert_eq!(memory["env"]["LOG_LEVEL"], "debug");
    assert_eq!(memory["env"]["API_TOKEN"], "${MCP_MEMORY_API_TOKEN}");
    assert!(!std::fs::read_to_string(home.config())
        .unwrap()
        .contains("abc123"));
    // The file it names does not exist yet: its directory is granted.
    assert_eq!(
        memory["sandbox"]["write"],
        json!([mem_dir.to_str().unwrap()])
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "memory: writes {} (the directory of a file it makes, named in env.MEMORY_FILE_PATH)",
            mem_dir.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("memory: env.API_TOKEN is now ${MCP_MEMORY_API_TOKEN}: set MCP_MEMORY_API_TOKEN in the daemon's environment"),
        "{err}"
    );
    let st = home.json(&["mcp", "status", "--json"]);
    assert_eq!(by_name(&st, "memory")["state"], "dark");
    assert_eq!(by_name(&st, "a")["state"], "dark");
    eventually("the replaced server's process to end", || {
        (!running(&marker)).then_some(())
    });
}

#[test]
fn a_second_reload_while_one_applies_is_refused_and_changes_nothing() {
    let home = Home::new();
    let dir = home.dir.path().display().to_string();
    let (kept, stubborn) = (
        format!("{dir}/marker-kept"),
        format!("{dir}/marker-stubborn"),
    );
    let mut slow = server(&stubborn);
    // Neither a closed stdin nor SIGTERM ends it: stopping it takes both graces (4 s).
    slow["args"] = json!(["--named", stubborn, "--ignore-sigterm"]);
    home.write_config(
        &json!({"mcp_servers": {"kept": server(&kept), "stubborn": slow}}).to_string(),
    );
    let _d = home.start();
    ready(&home, &["kept", "stubborn"]);
    home.write_config(&json!({"mcp_servers": {"kept": server(&kept)}}).to_string());
    // Two reloads at once: the one that applies holds the other off while the stubborn
    // server is stopped (at least its 2 s grace).
    let (mut a, mut b) = (home.command_for(&["reload"]), home.command_for(&["reload"]));
    let a = std::thread::spawn(move || a.output().unwrap());
    let b = std::thread::spawn(move || b.output().unwrap());
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    let (first, second) = if a.status.success() { (a, b) } else { (b, a) };
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(stdout(&first).contains("servers stopped: stubborn"));
    assert_eq!(second.status.code(), Some(1), "{}", stdout(&second));
    assert!(
        stderr(&second).contains(
            "a reload is already being applied; nothing changed by this one (try again when it is done)"
        ),
        "{}",
        stderr(&second)
    );
    let st = ready(&home, &["kept"]);
    assert_eq!(by_name(&st, "kept")["dials"], 1);
    eventually("the stubborn server's process to end", || {
        (!running(&stubborn)).then_some(())
    });
}

#[expect(
    clippy::disallowed_methods,
    reason = "a test asks whether the daemon's own loopback listeners are there"
)]
fn listening(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

#[test]
fn the_page_and_the_voice_listener_follow_a_reload() {
    let home = Home::new();
    let (page1, page2, voice1, voice2) = (free_port(), free_port(), free_port(), free_port());
    let config = |page: u16, voice: u16| {
        json!({"web": {"listen": format!("127.0.0.1:{page}")},
               "voice": {"listen": format!("127.0.0.1:{voice}")}})
        .to_string()
    };
    home.write_config(&config(page1, voice1));
    let _d = home.start();
    assert_eq!(crate::support::page_port(&home), page1);
    assert!(listening(voice1));

    home.write_config(&config(page2, voice2));
    let out = home.run(&["reload"]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(
        said.lines()
            .any(|l| l == "page: served afresh on the new settings (sign in again)"),
        "{said}"
    );
    assert!(
        said.lines()
            .any(|l| l == "voice: the listener follows the new settings"),
        "{said}"
    );
    let st = eventually("the page on its new port", || {
        let st = home.json(&["status", "--json"]);
        (st["web"]["listening"]["listening"]["addr"] == format!("127.0.0.1:{page2}")).then_some(st)
    });
    assert_eq!(
        st["web"]["url"],
        format!("http://localhost:{page2}/tools"),
        "{st}"
    );
    let (code, _, _) = crate::web::get(page2, "/tools", &format!("localhost:{page2}"), "");
    assert_eq!(code, 200);
    eventually("the old page and voice ports to be let go", || {
        (!listening(page1) && !listening(voice1)).then_some(())
    });
    assert!(listening(voice2));
}

#[test]
fn a_reload_dials_a_failing_server_again_without_waiting_for_its_backoff() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = Home::new();
    // A server that starts only once the owner has made `ok` beside it.
    let dir = home.dir.path().join("srv");
    std::fs::create_dir_all(&dir).unwrap();
    for d in [home.dir.path(), dir.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let script = dir.join("srv.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n[ -f \"$(dirname \"$0\")/ok\" ] || {{ echo 'srv: not set up yet' >&2; exit 3; }}\nexec {} \"$@\"\n",
            testkit_mcp().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cfg = json!({"mcp_servers": {"srv": {"command": script, "enabled": true,
        "sandbox": {"read": [testkit_mcp().parent().unwrap()]}}},
        "mcp_timing": {"backoff_min": "10m", "backoff_max": "30m"}})
    .to_string();
    home.write_config(&cfg);
    let _d = home.start();
    eventually("the server to back off", || {
        let st = home.json(&["mcp", "status", "--json"]);
        by_name(&st, "srv")["state"]
            .get("backing_off")
            .is_some()
            .then_some(())
    });
    // The owner fixes it; the file did not change, and its backoff has ten minutes to run.
    std::fs::write(dir.join("ok"), "").unwrap();
    let out = home.run(&["reload"]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(
        said.lines()
            .any(|l| l == "servers that were failing, dialled again now: srv"),
        "{said}"
    );
    let st = ready(&home, &["srv"]);
    assert_eq!(by_name(&st, "srv")["dials"], 2, "{st}");
}

//! The first hour of a new owner, against the real daemon and real servers (the Python SDK's
//! server and the reference filesystem server of `testenv/`): switching a server on and off
//! and naming its tools by command, the refusal that names the command, refusals grouped with
//! their fix, a reload that names a server it could not start, the passphrase written into the
//! file the daemon reads.

use std::io::Write as _;
use std::process::Stdio;

use serde_json::{json, Value};

use crate::support::{by_name, eventually, installed, maven, stderr, testenv, Home};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The Python SDK's test server (`lookup_word(word)`, read-only; `delete_note(note_id)`), as an
/// imported block: not enabled.
fn words_block() -> Value {
    // The venv's own interpreter (its link, not what it points to), its packages granted.
    let venv = installed(&testenv().join(".venv"));
    let script = installed(&testenv().join("python_server.py"));
    json!({
        "command": venv.join("bin/python").display().to_string(),
        "args": [script.display().to_string(), "stdio"],
        "enabled": false,
        "sandbox": {"read": [venv.display().to_string(), script.display().to_string()], "network": false}
    })
}

fn state(home: &Home, name: &str) -> Value {
    by_name(&home.json(&["mcp", "status", "--json"]), name).clone()
}

fn wait_state(home: &Home, name: &str, want: &str) -> Value {
    eventually(&format!("{name} {want}"), || {
        let s = state(home, name);
        (s["state"] == want && (want != "ready" || s["tools_offered"].is_u64())).then_some(s)
    })
}

#[test]
fn mcp_enable_allow_and_disable_write_the_file_and_reload_the_daemon() {
    let home = Home::new();
    home.write_config(&json!({"mcp_servers": {"words": words_block()}}).to_string());
    let config = home.config().display().to_string();
    let d = home.start();
    assert_eq!(state(&home, "words")["state"], "dark");

    // An unknown server: refused, naming the file and the servers it has.
    let out = home.run(&["mcp", "enable", "wrods"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim_end(),
        format!("maven mcp enable: {config}: no server named \"wrods\" in mcp_servers; its servers: words")
    );

    let out = home.run(&["mcp", "enable", "words"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).lines().collect::<Vec<_>>(),
        [
            "mcp_servers.words: \"enabled\": true".to_owned(),
            format!("wrote {config}"),
            format!("the previous file is kept as {config}.bak"),
            format!("reloaded {config}"),
            "servers started: words".to_owned(),
        ]
    );
    let file: Value = serde_json::from_slice(&std::fs::read(home.config()).unwrap()).unwrap();
    assert_eq!(file["mcp_servers"]["words"]["enabled"], true);
    wait_state(&home, "words", "ready");
    let out = home.run(&["mcp", "enable", "words"]);
    assert!(out.status.success());
    assert_eq!(
        stdout(&out).trim_end(),
        format!("words is already enabled in {config}: nothing to change")
    );

    // The page's step-up stands in for the owner enabling the read-only tool.
    drop(d);
    home.enable(&["words_lookup_word"]);
    let d = home.start();
    wait_state(&home, "words", "ready");

    // Help and the refusal both name the command that makes the sentence its argument.
    let help = stdout(&home.run(&["say", "help"]));
    assert!(
        help.contains("words lookup word — Look a word up in a small built-in dictionary. Reads only; \"words lookup word …\" takes the rest of the sentence as its argument once its server's allow_tools names it: maven mcp allow words lookup_word"),
        "{help}"
    );
    let out = home.run(&["say", "words", "lookup", "word", "maven"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out).trim_end(),
        "words_lookup_word needs an argument: word (string). Run `maven mcp allow words lookup_word` to name it in the server's allow_tools, and the rest of the sentence becomes its argument."
    );

    // A tool the server does not offer: refused, naming what it offers; nothing written.
    let before = std::fs::read(home.config()).unwrap();
    let out = home.run(&["mcp", "allow", "words", "lookup_wrod"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim_end(),
        format!("maven mcp allow: the server \"words\" offers no tool lookup_wrod; it offers: delete_note, lookup_word; nothing was written to {config}")
    );
    assert_eq!(std::fs::read(home.config()).unwrap(), before);

    let out = home.run(&["mcp", "allow", "words", "lookup_word"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim_end(),
        "note: with allow_tools set, words offers only the tools it names: delete_note is no longer offered (name it too to keep it: `maven mcp allow words delete_note`)"
    );
    let said = stdout(&out);
    assert_eq!(
        said.lines().next(),
        Some("mcp_servers.words.allow_tools: lookup_word added"),
        "{said}"
    );
    assert!(
        said.lines().any(|l| l == "servers restarted: words"),
        "{said}"
    );
    let file: Value = serde_json::from_slice(&std::fs::read(home.config()).unwrap()).unwrap();
    assert_eq!(
        file["mcp_servers"]["words"]["allow_tools"],
        json!(["lookup_word"])
    );
    wait_state(&home, "words", "ready");
    let out = home.run(&["say", "words", "lookup", "word", "maven"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(
        stdout(&out).trim_end(),
        "words_lookup_word ran; the MCP server \"words\" returned:\none who is expert in a particular field"
    );

    let out = home.run(&["mcp", "disable", "words"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert_eq!(
        said.lines().next(),
        Some("mcp_servers.words: \"enabled\": false")
    );
    assert!(
        said.lines()
            .any(|l| l == "servers known, not enabled (never dialled): words"),
        "{said}"
    );
    wait_state(&home, "words", "dark");
    drop(d);
}

#[test]
fn refusals_over_the_cap_are_one_line_with_the_command_that_fixes_them() {
    let home = Home::new();
    let shared = home.dir.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    // A root daemon's server runs under a uid of its own: it must reach the directory.
    if rustix::process::geteuid().is_root() {
        use std::os::unix::fs::PermissionsExt as _;
        let open = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(home.dir.path(), open).unwrap();
    }
    crate::support::writable_by_root_servers(&shared);
    let node = installed(&testenv().join("node_modules/.bin/node"));
    let script = installed(
        &testenv().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
    );
    let modules = installed(&testenv().join("node_modules"));
    home.write_config(
        &json!({"mcp_servers": {"files": {
            "command": node.display().to_string(),
            "args": [script.display().to_string(), shared.display().to_string()],
            "enabled": true,
            "sandbox": {"read": [modules.display().to_string()], "write": [shared.display().to_string()], "network": false}
        }}})
        .to_string(),
    );
    let _d = home.start();
    let s = eventually("files over its cap", || {
        let s = state(&home, "files");
        s["state"]["over_cap"].is_string().then_some(s)
    });
    let offered = s["tools_offered"].as_u64().unwrap();
    assert!(offered > 12, "{s}");
    assert_eq!(s["tools_refused"].as_array().unwrap().len() as u64, offered);
    let text = stdout(&home.run(&["mcp", "status"]));
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("  refused:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        lines[at],
        format!("  refused:  {offered} tools — the server offers {offered} tools, more than max_tools (12), and allow_tools is not set")
    );
    assert!(
        lines[at + 1].starts_with("            ") && lines[at + 1].contains("read_text_file"),
        "{text}"
    );
    assert_eq!(
        lines[at + 2],
        "  fix:      maven mcp allow files TOOL… names the tools it may offer (`maven mcp inspect files` says which claim to be read-only)"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("  refused:")).count(),
        1,
        "{text}"
    );

    // `mcp inspect` names the tools that claim read-only, as a command; run as said, the
    // others are refused on one line.
    let out = home.run(&["mcp", "inspect", "files"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let inspected = stdout(&out);
    let command = inspected
        .lines()
        .find(|l| l.starts_with("or run: "))
        .unwrap_or_else(|| panic!("{inspected}"));
    assert_eq!(
        command,
        "or run: maven mcp allow files read_file read_text_file read_media_file read_multiple_files list_directory list_directory_with_sizes directory_tree search_files get_file_info list_allowed_directories"
    );
    let args: Vec<&str> = command
        .strip_prefix("or run: maven ")
        .unwrap()
        .split(' ')
        .collect();
    let out = home.run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let named = args.len() as u64 - 3;
    let s = eventually("files ready with the read-only tools", || {
        let s = state(&home, "files");
        (s["state"] == "ready" && s["tools_proposed"] == named).then_some(s)
    });
    let text = stdout(&home.run(&["mcp", "status"]));
    assert!(
        text.lines().any(|l| l
            == format!(
                "  refused:  {} tools — not named in allow_tools",
                s["tools_offered"].as_u64().unwrap() - named
            )),
        "{text}"
    );
    assert!(!text.contains("  fix:"), "{text}");
}

#[test]
fn a_reload_names_a_server_it_could_not_start_and_one_removed() {
    let home = Home::new();
    home.write_config(&json!({}).to_string());
    let _d = home.start();
    home.write_config(
        &json!({"mcp_servers": {"ghost": {"command": "/nonexistent/ghost-server", "enabled": true}}})
            .to_string(),
    );
    let out = home.run(&["reload"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.lines().any(|l| l
            == "server not started: ghost: command not found: /nonexistent/ghost-server (no such executable file)"),
        "{said}"
    );
    let v = home.json(&["reload", "--json"]);
    assert_eq!(
        v["not_started"],
        json!([[
            "ghost",
            "command not found: /nonexistent/ghost-server (no such executable file)"
        ]])
    );
    home.write_config(&json!({}).to_string());
    let said = stdout(&home.run(&["reload"]));
    assert!(
        said.lines().any(|l| l == "servers stopped: ghost"),
        "{said}"
    );
    assert!(!said.contains("not started"), "{said}");
}

#[test]
fn web_passphrase_write_sets_the_hash_in_the_file_the_daemon_reads_and_reloads_it() {
    let home = Home::new();
    home.write_config(&json!({"web": {"listen": "127.0.0.1:0"}}).to_string());
    let config = home.config().display().to_string();
    let _d = home.start();
    // No --config: the file is the one the running daemon reads.
    let mut child = maven()
        .arg("--data")
        .arg(home.data())
        .env("XDG_CONFIG_HOME", home.dir.path().join("elsewhere"))
        .args(["web", "passphrase", "--write"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"correct horse battery\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).lines().collect::<Vec<_>>(),
        [
            "web.passphrase_hash: set".to_owned(),
            format!("wrote {config}"),
            format!("the previous file is kept as {config}.bak"),
            format!("reloaded {config}"),
            "page: served afresh on the new settings (sign in again)".to_owned(),
        ]
    );
    let file: Value = serde_json::from_slice(&std::fs::read(home.config()).unwrap()).unwrap();
    assert!(
        file["web"]["passphrase_hash"]
            .as_str()
            .unwrap()
            .starts_with("$argon2id$"),
        "{file}"
    );
    assert_eq!(file["web"]["listen"], "127.0.0.1:0");

    // Without --write: the hash, and a reload is said to be enough.
    let mut child = maven()
        .args(["web", "passphrase"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"correct horse battery\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(stdout(&out).starts_with("$argon2id$"));
    assert_eq!(
        stderr(&out).trim_end(),
        "Put this line in the configuration as \"web\": {\"passphrase_hash\": \"...\"} and run `maven reload` (a restart is not needed); `maven web passphrase --write` does both."
    );

    // Another file written: the daemon, which reads this one, is not reloaded, and says so.
    let other = home.dir.path().join("other.json");
    let import = home.dir.path().join("claude.json");
    std::fs::write(
        &import,
        json!({"mcpServers": {"t": {"command": "uvx", "args": ["mcp-server-time"]}}}).to_string(),
    )
    .unwrap();
    let out = maven()
        .arg("--data")
        .arg(home.data())
        .arg("--config")
        .arg(&other)
        .args(["mcp", "import", import.to_str().unwrap(), "--write"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let other = other.display().to_string();
    assert_eq!(
        stdout(&out).lines().last(),
        Some(&*format!("the running daemon reads {config}, not {other}: it was not reloaded; to use this file, start the daemon with --config {other}, or edit the daemon's file with --config {config}")),
        "{}",
        stdout(&out)
    );
}

fn rss(title: &str, items: &[(&str, Option<&str>)]) -> String {
    let items: String = items
        .iter()
        .map(|(t, date)| {
            let date = date.map_or(String::new(), |d| format!("<pubDate>{d}</pubDate>"));
            format!("<item><title>{t}</title><guid>{t}</guid>{date}</item>")
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><rss version=\"2.0\"><channel><title>{title}</title><link>http://example.org/</link>{items}</channel></rss>"
    )
}

#[test]
fn a_russian_feed_is_named_from_its_title_its_notes_come_newest_first_and_a_refresh_waits_a_second()
{
    // After the first polls the feed gains an item of 2004: noted last, listed by its date.
    let later = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let gained = later.clone();
    let feed = crate::support::serve_feed(move || {
        let mut items = vec![
            ("май 12", Some("Mon, 12 May 2025 08:00:00 GMT")),
            ("старое", Some("Tue, 03 Jun 2003 09:39:21 GMT")),
            ("май 13", Some("Tue, 13 May 2025 08:00:00 GMT")),
        ];
        if gained.load(std::sync::atomic::Ordering::SeqCst) {
            items.push(("2004", Some("Thu, 01 Jan 2004 00:00:00 GMT")));
        }
        (200, rss("«Новости науки»", &items))
    });
    let home = Home::new();
    home.write_config("{}");
    let out = home.run(&["feeds", "add", &feed, "--allow-private"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("added the feed novosti-nauki: "),
        "{}",
        stdout(&out)
    );
    // A second feed on the same host.
    let second = feed.replace("/feed.xml", "/other.xml");
    let out = home.run(&[
        "feeds",
        "add",
        &second,
        "--allow-private",
        "--name",
        "other",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));

    let _d = home.start();
    let notes = eventually("the feeds polled", || {
        let v = home.json(&["notes", "--json", "--source", "rss:novosti-nauki"]);
        let other = home.json(&["notes", "--json", "--source", "rss:other"]);
        (v.as_array().unwrap().len() == 3 && other.as_array().unwrap().len() == 3).then_some(v)
    });
    let texts: Vec<&str> = notes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["май 13", "май 12", "старое"]);
    let text = stdout(&home.run(&["notes", "--source", "rss:novosti-nauki"]));
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        "[published 2025-05-13T08:00:00Z] rss:novosti-nauki — май 13"
    );

    // Right after the polls: the host's one-second spacing is waited out, each feed polled.
    later.store(true, std::sync::atomic::Ordering::SeqCst);
    let out = home.run(&["feeds", "refresh"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).lines().collect::<Vec<_>>(),
        ["novosti-nauki: polled, 1 new", "other: polled, 1 new"]
    );
    let notes = home.json(&["notes", "--json", "--source", "rss:novosti-nauki"]);
    let texts: Vec<&str> = notes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["май 13", "май 12", "2004", "старое"]);
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
fn a_model_router_that_is_down_is_said_in_status_doctor_and_the_turn() {
    let port = crate::support::free_port();
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    let home = Home::new();
    home.write_config(
        &json!({"router": {"kind": "llm", "url": url, "allow_private": true, "model": "tiny"}, "web": {"listen": "127.0.0.1:0"}})
            .to_string(),
    );
    let _d = home.start();
    let status = stdout(&home.run(&["status"]));
    assert!(
        status
            .lines()
            .any(|l| l == format!("router: llm — {url} (model tiny) — not asked yet")),
        "{status}"
    );

    // A sentence the rules router cannot place goes to the model, which is not there.
    let out = home.run(&["say", "book", "me", "a", "flight"]);
    let said = stdout(&out);
    let last = said.lines().last().unwrap();
    assert!(
        last.starts_with("(The model router gave no answer — the router endpoint failed: ")
            && last.ends_with(" — so the rules router answered.)"),
        "{said}"
    );
    assert_eq!(
        said.lines()
            .filter(|l| l.contains("model router gave"))
            .count(),
        1
    );

    let v = home.json(&["status", "--json"]);
    let r = &v["router"];
    assert_eq!(r["kind"], "llm");
    assert_eq!(r["endpoint"], url.as_str());
    assert_eq!(r["model"], "tiny");
    assert!(r["last_answer"].is_null());
    assert!(
        r["last_error"]
            .as_str()
            .unwrap()
            .starts_with("the router endpoint failed: "),
        "{r}"
    );
    assert!(r["last_error_at"].as_str().unwrap().ends_with('Z'));
    let status = stdout(&home.run(&["status"]));
    assert!(
        status.lines().any(|l| l.starts_with(&format!(
            "router: llm — {url} (model tiny) — last request failed at "
        ))),
        "{status}"
    );

    // doctor probes the endpoint and reads the daemon's last error.
    let out = home.run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let probe = text
        .lines()
        .find(|l| l.contains("router endpoint:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        probe.starts_with(&format!("fail  router endpoint: {url}: no answer: "))
            && probe.ends_with(&format!("start the model server at {url}, or fix router.url (or set \"router\": {{\"kind\": \"rules\"}}); until then every turn the rules router cannot place falls back to it, and says so")),
        "{probe}"
    );
    assert!(
        text.lines().any(|l| l
            .starts_with("warn  daemon router: the daemon's last request to the model failed at ")),
        "{text}"
    );

    // Something listening there: the probe says it answers.
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    std::thread::spawn(move || {
        use std::io::Write as _;
        for mut c in listener.incoming().flatten() {
            crate::support::read_head(&mut c);
            let _ = c.write_all(
                b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let text = stdout(&home.run(&["doctor"]));
    assert!(
        text.lines().any(|l| l
            == format!("ok    router endpoint: {url} answers (HTTP 405 to a GET; the model is asked only by a turn) — nothing to do")),
        "{text}"
    );
}

#[test]
fn doctor_asks_each_speech_service_describe_and_names_what_it_offers() {
    let (asr_port, tts_port) = (crate::support::free_port(), crate::support::free_port());
    let _whisper = crate::voice::engine("run-wyoming-whisper.sh", asr_port);
    let _piper = crate::voice::engine("run-wyoming-piper.sh", tts_port);
    let (asr, tts) = (
        format!("tcp://127.0.0.1:{asr_port}"),
        format!("tcp://127.0.0.1:{tts_port}"),
    );
    let closed = format!("tcp://127.0.0.1:{}", crate::support::free_port());
    let home = Home::new();
    // The wake-word service is the speech-to-text one by mistake.
    home.write_config(
        &json!({"voice": {"asr": asr, "tts": tts, "wake": asr, "allow_private": true}}).to_string(),
    );
    let text = stdout(&home.run(&["doctor"]));
    let line = |key: &str| {
        text.lines()
            .find(|l| l.contains(&format!(" voice {key}: ")))
            .unwrap_or_else(|| panic!("no voice {key} line in\n{text}"))
            .to_owned()
    };
    let l = line("asr");
    assert!(
        l.starts_with(&format!("ok    voice asr: {asr} answers describe: "))
            && l.ends_with(" (speech-to-text) — nothing to do"),
        "{l}"
    );
    let l = line("tts");
    assert!(
        l.starts_with(&format!("ok    voice tts: {tts} answers describe: "))
            && l.to_lowercase().contains("piper")
            && l.ends_with(" (text-to-speech) — nothing to do"),
        "{l}"
    );
    assert_eq!(
        line("wake"),
        format!("fail  voice wake: {asr} answers describe, but offers no wake-word program — point voice.wake at a wake-word service")
    );

    // The voice door is built from the fetch block like every door: a host it denies is
    // refused before a connection, though a real service listens there.
    home.write_config(
        &json!({"voice": {"asr": asr, "allow_private": true}, "fetch": {"deny_hosts": ["127.0.0.1"]}})
            .to_string(),
    );
    let out = home.run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let l = text
        .lines()
        .find(|l| l.contains(" voice asr: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        l.starts_with(&format!("fail  voice asr: {asr}: "))
            && l.contains("127.0.0.1 is on the denylist"),
        "{l}"
    );

    // Nothing listening: said, with the fix.
    home.write_config(&json!({"voice": {"asr": closed, "allow_private": true}}).to_string());
    let out = home.run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let l = text
        .lines()
        .find(|l| l.contains(" voice asr: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        l.starts_with(&format!("fail  voice asr: {closed}: "))
            && l.ends_with(" — start the speech-to-text service (see the README's \"Voice\"), or fix voice.asr; a loopback or LAN service needs \"voice\": {\"allow_private\": true}"),
        "{l}"
    );
}

#[test]
fn a_root_daemons_server_that_cannot_write_its_grant_is_said_before_the_start_with_the_chown_line()
{
    let home = Home::new();
    let shared = home.dir.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    // Both open to every uid but for writing: only the grant's own mode is in the way.
    for p in [home.dir.path(), &shared] {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let above = home.dir.path().display().to_string();
    let s = shared.display().to_string();
    let import = home.dir.path().join("claude.json");
    std::fs::write(
        &import,
        json!({"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", s]}}})
            .to_string(),
    )
    .unwrap();
    home.write_config("{}");
    let out = home.run(&["mcp", "import", import.to_str().unwrap(), "--write"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let root = rustix::process::geteuid().is_root();
    let id = sandbox::FIRST_SERVER_UID;
    let said = format!("a root daemon runs files as a uid of its own ({id}), which cannot write {s} (owner uid 0, mode 755): `chown -R {id} {s}` gives it to that uid (for a path only this server uses), or run the daemon as an ordinary user");
    if !root {
        // An ordinary owner's server runs as the owner: nothing to say.
        assert!(!err.contains("a root daemon"), "{err}");
        return;
    }
    assert!(err.lines().any(|l| l == format!("note: {said}")), "{err}");
    let out = home.run(&["config", "check"]);
    assert!(out.status.success());
    assert!(
        stderr(&out)
            .lines()
            .any(|l| l == format!("note: mcp_servers.files: {said}")),
        "{}",
        stderr(&out)
    );
    let out = home.run(&["mcp", "enable", "files"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&home.run(&["doctor"]));
    assert!(
        text.lines().any(|l| l
            == format!("fail  sandbox grants mcp:files: {said} — fix the owner as said, then `maven reload`; until then its start is refused")),
        "{text}"
    );
    // The fix as said; then the directory above it, which lets no other uid through.
    std::os::unix::fs::chown(&shared, Some(id), None).unwrap();
    let mode = |p: &std::path::Path, m: u32| {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    mode(home.dir.path(), 0o700);
    let text = stdout(&home.run(&["doctor"]));
    assert!(
        text.lines().any(|l| l
            == format!("fail  sandbox grants mcp:files: a root daemon runs files as a uid of its own ({id}), which cannot reach {s}: {above} (owner uid 0, mode 700) does not let it through: `chmod o+x {above}` does (or grant a path elsewhere) — fix the owner as said, then `maven reload`; until then its start is refused")),
        "{text}"
    );
    mode(home.dir.path(), 0o701);
    let text = stdout(&home.run(&["doctor"]));
    assert!(!text.contains("a root daemon runs files"), "{text}");
    let out = home.run(&["config", "check"]);
    assert!(!stderr(&out).contains("a root daemon"), "{}", stderr(&out));
}

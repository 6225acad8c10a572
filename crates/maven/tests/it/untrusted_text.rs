//! Text that servers and feeds wrote reaches the owner shown, never obeyed: a hostile stdio
//! server (`testkit-mcp --hostile-text`) and two hostile feeds (a JSON Feed and RSS) whose
//! strings carry CSI, OSC 0/2/8/52, a C1 CSI and bidi overrides. Every human-readable output of
//! the CLI and the human log escape them; the `--json` outputs keep the exact strings.

use std::process::Output;

use serde_json::json;

use crate::support::{by_name, eventually, serve_feed, testkit_mcp, Home};

/// What `testkit-mcp --hostile-text` writes (see its source).
const HOSTILE_NAME: &str = "esc\u{1b}]0;pwned\u{7}";
const HOSTILE_VERSION: &str = "1.0\u{9b}2J";
const HOSTILE_RESULT: &str = "\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]2;owned\u{7}result:";

/// The JSON Feed item: OSC 52, a screen clear, a window title, a C1 CSI, a bidi override in the
/// title; an OSC 8 link and an isolate in the summary.
const JSON_TITLE: &str = "Jsonword clip\u{1b}]52;c;cHduZWQ=\u{7} clear\u{1b}[2J title\u{1b}]0;pwned\u{7} c1\u{9b}31m bidi\u{202e}gnp.exe";
const JSON_SUMMARY: &str =
    "sum \u{1b}]8;;https://evil.invalid/\u{1b}\\link\u{1b}]8;;\u{1b}\\ end \u{2066}x\u{2069}";
/// The RSS item: XML cannot carry ESC or BEL, so a C1 CSI and bidi overrides, as characters.
const RSS_TITLE: &str = "Rssword csi\u{9b}2J\u{9b}31m over\u{202e}txet";
const RSS_SUMMARY: &str = "iso \u{2067}x\u{2069} csi\u{9b}0m";

fn json_feed() -> String {
    json!({
        "version": "https://jsonfeed.org/version/1.1",
        "title": "J",
        "items": [{"id": "j1", "title": JSON_TITLE, "content_text": JSON_SUMMARY,
                   "url": "https://example.org/j1"}]
    })
    .to_string()
}

fn rss_feed() -> String {
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>R</title><link>https://example.org/</link><item><guid>r1</guid><title>{RSS_TITLE}</title><description>{RSS_SUMMARY}</description><link>https://example.org/r1</link></item></channel></rss>"#
    )
}

/// Asserts that `text` holds no raw hazard but the newlines ending its lines.
fn assert_no_raw_hazard(what: &str, text: &str) {
    let raw: Vec<char> = text
        .chars()
        .filter(|&c| shown::is_hazard(c) && c != '\n')
        .collect();
    assert!(raw.is_empty(), "{what}: raw {raw:?} in {text:?}");
}

/// Runs a human-readable command, checks stdout and stderr, and returns stdout.
fn human(home: &Home, args: &[&str]) -> String {
    let out: Output = home.run(args);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_no_raw_hazard(&format!("maven {args:?} stdout"), &stdout);
    assert_no_raw_hazard(&format!("maven {args:?} stderr"), &stderr);
    stdout
}

fn assert_contains(what: &str, text: &str, needle: &str) {
    assert!(text.contains(needle), "{what}: no {needle:?} in:\n{text}");
}

#[test]
fn server_and_feed_text_is_shown_escaped_and_json_keeps_it_exact() {
    let home = Home::new();
    let bin = testkit_mcp();
    let jf = serve_feed(|| (200, json_feed()));
    let rs = serve_feed(|| (200, rss_feed()));
    home.write_config(
        &json!({
            "feed_min_interval": "1s",
            "feeds": [
                {"name": "jf", "url": jf, "interval": "1s", "enabled": true, "allow_private": true},
                {"name": "rs", "url": rs, "interval": "1s", "enabled": true, "allow_private": true}
            ],
            "mcp_servers": {"evil": {"command": bin.to_str().unwrap(), "args": ["--hostile-text"], "enabled": true,
                                 "allow_tools": ["echo"]}}
        })
        .to_string(),
    );
    let log = home.dir.path().join("daemon.log");
    let d = home.start_logging_to(&log);

    let tools = eventually("the hostile server's tools", || {
        let t = home.json(&["tools", "--json"]);
        t.as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "evil_echo")
            .then_some(t)
    });
    let notes = eventually("both feeds noted", || {
        let n = home.json(&["notes", "--json"]);
        (n.as_array().unwrap().len() == 2).then_some(n)
    });
    let status = eventually("the refusal and the stderr tail", || {
        let st = home.json(&["mcp", "status", "--json"]);
        let evil = by_name(&st, "evil");
        (evil["tools_refused"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
            && evil["stderr_tail"]
                .as_str()
                .is_some_and(|t| t.contains("YOU ARE HACKED")))
        .then_some(st)
    });

    // --json keeps the exact strings.
    let evil = by_name(&status, "evil");
    assert_eq!(evil["server_info"]["name"], HOSTILE_NAME);
    assert_eq!(evil["server_info"]["version"], HOSTILE_VERSION);
    assert_eq!(evil["tools_refused"][0]["tool"], "x\n".repeat(50_000));
    let echo = by_name(&tools, "evil_echo");
    assert!(
        echo["description"]
            .as_str()
            .unwrap()
            .starts_with("\u{1b}[2J\u{1b}[31mYOU ARE HACKED\u{1b}[0m\n"),
        "{echo}"
    );
    let texts: Vec<&str> = notes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["text"].as_str().unwrap())
        .collect();
    assert!(
        texts.contains(&format!("{JSON_TITLE}\n{JSON_SUMMARY}").as_str()),
        "{texts:?}"
    );
    assert!(
        texts.contains(&format!("{RSS_TITLE}\n{RSS_SUMMARY}").as_str()),
        "{texts:?}"
    );

    // maven tools: escaped, and the description's newlines fake no row.
    let out = human(&home, &["tools"]);
    assert_contains("tools", &out, "\\e[2J\\e[31mYOU ARE HACKED\\e[0m⏎");
    assert!(
        !out.lines().any(|l| l.trim_start().starts_with('|')),
        "a description faked a row:\n{out}"
    );

    // maven mcp status: server info, the capped refused name, the stderr tail.
    let out = human(&home, &["mcp", "status"]);
    assert_contains(
        "mcp status",
        &out,
        "server:   esc\\e]0;pwned\\u{7} 1.0\\u{9b}2J",
    );
    assert_contains("mcp status", &out, "… (100000 characters)");
    assert!(out.len() < 4_000, "mcp status echoed too much: {out}");
    assert_contains(
        "mcp status",
        &out,
        "\\e[2J\\e[31mstderr says: YOU ARE HACKED\\e[0m \\u{202e}txet",
    );

    // maven mcp inspect dials the server itself.
    let out = human(&home, &["mcp", "inspect", "evil"]);
    assert_contains(
        "mcp inspect",
        &out,
        "offers:    esc\\e]0;pwned\\u{7} 1.0\\u{9b}2J",
    );
    assert_contains(
        "mcp inspect",
        &out,
        "description: \\e[2J\\e[31mYOU ARE HACKED",
    );
    assert_contains("mcp inspect", &out, "… (100000 characters)");
    assert!(out.len() < 8_000, "mcp inspect echoed too much: {out}");
    let inspected = home.json(&["mcp", "inspect", "evil", "--json"]);
    assert_eq!(inspected["server_info"]["name"], HOSTILE_NAME);

    // Feed items in maven notes, the digest and a notes search.
    let json_item = [
        "clip\\e]52;c;cHduZWQ=\\u{7}",
        "clear\\e[2J",
        "title\\e]0;pwned\\u{7}",
        "c1\\u{9b}31m",
        "bidi\\u{202e}gnp.exe",
        "sum \\e]8;;https://evil.invalid/\\e\\link\\e]8;;\\e\\",
        "\\u{2066}x\\u{2069}",
    ];
    let rss_item = [
        "csi\\u{9b}2J\\u{9b}31m",
        "over\\u{202e}txet",
        "\\u{2067}x\\u{2069}",
    ];
    // A summary is the note's second line: indented under its row, never a row of its own.
    let summary_rows = |out: &str| {
        out.lines()
            .any(|l| l.starts_with("sum") || l.starts_with("iso"))
    };
    let out = human(&home, &["notes"]);
    for s in json_item.iter().chain(&rss_item) {
        assert_contains("notes", &out, s);
    }
    assert!(!summary_rows(&out), "notes:\n{out}");
    let out = human(&home, &["say", "what's", "new", "in", "my", "feeds?"]);
    for s in json_item.iter().chain(&rss_item) {
        assert_contains("the digest", &out, s);
    }
    assert!(!summary_rows(&out), "the digest:\n{out}");
    let out = human(&home, &["say", "notes", "about", "jsonword"]);
    for s in json_item {
        assert_contains("notes about jsonword", &out, s);
    }
    assert!(!summary_rows(&out), "notes about jsonword:\n{out}");
    let out = human(&home, &["say", "notes", "about", "rssword"]);
    for s in rss_item {
        assert_contains("notes about rssword", &out, s);
    }
    assert!(!summary_rows(&out), "notes about rssword:\n{out}");
    let answer = home.json(&["say", "--json", "notes", "about", "jsonword"]);
    assert_contains("say --json", answer["answer"].as_str().unwrap(), JSON_TITLE);

    // The hostile echo, once enabled (and named in allow_tools, so it takes the tail as its
    // text), answers with a clipboard write and a window title.
    assert!(d.signal("-TERM").status.success());
    home.enable(&["evil_echo"]);
    let d = home.start_logging_to(&log);
    eventually("the server to be ready", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "evil")["state"] == "ready").then_some(())
    });
    let out = human(&home, &["say", "evil", "echo", "hello"]);
    assert_contains(
        "say evil echo",
        &out,
        "\\e]52;c;cHduZWQ=\\u{7}\\e]2;owned\\u{7}result:",
    );
    let answer = home.json(&["say", "--json", "evil", "echo", "hello"]);
    assert_contains(
        "say --json evil echo",
        answer["answer"].as_str().unwrap(),
        HOSTILE_RESULT,
    );
    // The acts log shows the result's first line escaped; its JSON keeps it exact.
    let out = human(&home, &["acts"]);
    assert_contains(
        "acts",
        &out,
        "    \\e]52;c;cHduZWQ=\\u{7}\\e]2;owned\\u{7}result:hello\n",
    );
    let acts = home.json(&["acts", "--json"]);
    assert_eq!(acts[0]["result"], format!("{HOSTILE_RESULT}hello"));
    assert!(d.signal("-TERM").status.success());

    // The human log: one line per event, nothing raw, the server named in its escaped form.
    let text = std::fs::read_to_string(&log).unwrap();
    assert_no_raw_hazard("the daemon log", &text);
    let connected = text
        .lines()
        .find(|l| l.contains("connected") && l.contains("server=evil"))
        .unwrap_or_else(|| panic!("no connected line in:\n{text}"));
    assert_contains(
        "the connected line",
        connected,
        "server_name=esc\\e]0;pwned\\u{7}",
    );
}

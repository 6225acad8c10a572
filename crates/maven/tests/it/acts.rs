//! `maven acts` and an interrupted `maven say`: a Ctrl-C (SIGINT) on the real `maven say`
//! while a slow tool runs ends the command with 130 and says where the result goes; the act
//! still finishes in the daemon, and `maven acts` shows its outcome and its result's first
//! line, through the daemon and, once it stopped, from the store.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{eventually, stderr, testkit_mcp, wait_exit, Daemon, Home};

/// What `maven say` says on stderr when interrupted.
const INTERRUPTED: &str = "maven say: interrupted. The daemon goes on with the turn: an act it \
runs finishes there and is recorded; `maven acts` shows its result.\n";

/// How long the slow tool takes to answer.
const SLOW_MS: u64 = 6000;

fn calls(record: &std::path::Path) -> usize {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.trim() == "tools/call")
        .count()
}

#[test]
fn an_interrupted_say_leaves_the_act_running_and_acts_shows_its_result() {
    let home = Home::new();
    let tools = home.dir.path().join("tools.json");
    let record = home.dir.path().join("record.txt");
    std::fs::write(
        &tools,
        json!([{"name": "report", "description": "Writes a slow report.",
                "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object"}}])
        .to_string(),
    )
    .unwrap();
    std::fs::write(&record, "").unwrap();
    crate::support::writable_by_root_servers(&record);
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0"},
            "mcp_servers": {"slow": {
                "command": testkit_mcp().to_str().unwrap(),
                "args": [format!("--tools-file={}", tools.display()),
                         format!("--record={}", record.display()),
                         format!("--call-delay-ms={SLOW_MS}")],
                "enabled": true,
                "allow_tools": ["report"],
                "sandbox": {"read": [tools], "write": [record]}
            }}
        })
        .to_string(),
    );
    let d = home.start();
    eventually("discovery", || {
        (home.json(&["tools", "--json"]).as_array().unwrap().len() == 1).then_some(())
    });
    assert!(d.signal("-TERM").status.success());
    // Nothing ran yet: the store has no act.
    let out = home.run(&["acts"]);
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).as_ref()
        ),
        (Some(0), "no acts recorded yet\n"),
        "{}",
        stderr(&out)
    );
    home.enable(&["slow_report"]);
    let d = home.start();
    eventually("the server to be ready", || {
        (home.json(&["mcp", "status", "--json"])[0]["state"] == "ready").then_some(())
    });

    let say = home
        .command_for(&["say", "slow", "report"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = say.id();
    let say = Daemon { child: Some(say) };
    eventually("the call to reach the server", || {
        (calls(&record) == 1).then_some(())
    });
    let st = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = wait_exit(say, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(stderr(&out), INTERRUPTED);
    assert!(out.stdout.is_empty(), "nothing on stdout");

    // The act goes on in the daemon: recorded as sent, then settled with its result.
    let acts =
        |home: &Home| -> Vec<Value> { home.json(&["acts", "--json"]).as_array().unwrap().clone() };
    let running = acts(&home);
    assert_eq!(running.len(), 1, "{running:?}");
    assert_eq!(running[0]["act"], "slow_report");
    assert_eq!(running[0]["outcome"], "unknown", "{running:?}");
    assert_eq!(running[0]["result"], "sent; no answer yet");
    let done = eventually("the act to settle", || {
        let a = acts(&home);
        (a[0]["outcome"] == "ok").then(|| a[0].clone())
    });
    assert_eq!(done["result"], "called report");
    assert_eq!(done["utterance"], "slow report");
    assert_eq!(done["confirmed_by"], Value::Null);
    let ms = done["duration_ms"].as_u64().unwrap();
    assert!((SLOW_MS..SLOW_MS + 5000).contains(&ms), "{done}");
    assert_eq!(calls(&record), 1, "run once");

    // The text: one line of facts, the result's first line under it.
    let text = |home: &Home| {
        let out = home.run(&["acts", "--limit", "5"]);
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let at = done["at"].as_str().unwrap();
    let want =
        format!("{at}  slow_report  ok  {ms} ms  no confirmation asked\n    called report\n");
    assert_eq!(text(&home), want);

    // Without the daemon, the same from the store.
    assert!(d.signal("-TERM").status.success());
    assert_eq!(text(&home), want);
    let offline = acts(&home);
    assert_eq!(offline[0], done);
}

#[test]
fn acts_without_a_daemon_or_a_store_says_so_and_a_bad_limit_is_refused() {
    let home = Home::new();
    let out = home.run(&["acts"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("maven acts: no maven daemon is running for "),
        "{}",
        stderr(&out)
    );
    assert!(!home.data().exists(), "nothing created");
    let out = home.run(&["acts", "--limit", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

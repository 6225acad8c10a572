//! Commands that need no daemon, and what the CLI says when one is needed but absent.

use crate::support::{stderr, Home};

#[test]
fn config_check_accepts_a_valid_file() {
    let home = Home::new();
    home.write_config(
        r#"{"feeds": [{"name": "lwn", "url": "https://lwn.net/headlines/rss"}],
            "mcp_servers": {"todo": {"command": "todo-server", "enabled": false}}}"#,
    );
    let out = home.run(&["config", "check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ok (1 feeds, 1 MCP servers, 0 acts)"),
        "{text}"
    );
}

#[test]
fn config_check_names_file_path_value_and_exits_1() {
    let home = Home::new();
    home.write_config(
        r#"{"mcp_servers": {"vikunja": {"url": "https://v.example/mcp", "max_tools": "12"}}}"#,
    );
    let out = home.run(&["config", "check"]);
    assert_eq!(out.status.code(), Some(1));
    let want = format!(
        "{}: mcp_servers.vikunja.max_tools: expected a positive integer, got \"12\"",
        home.config().display()
    );
    assert_eq!(stderr(&out).trim(), want);
}

#[test]
fn config_check_of_an_explicit_missing_file_fails() {
    let home = Home::new();
    let missing = home.dir.path().join("nope.json");
    let out = home.run(&["config", "check", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cannot read the file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn commands_without_a_daemon_say_so_and_exit_2() {
    let home = Home::new();
    for cmd in [&["status"][..], &["tools", "--json"], &["notes"], &["acts"]] {
        let out = home.run(cmd);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}");
        let err = stderr(&out);
        assert!(
            err.contains("no maven daemon is running")
                && err.contains("start one with `maven daemon`"),
            "{cmd:?}: {err}"
        );
    }
}

#[test]
fn daemon_with_invalid_config_does_not_start() {
    let home = Home::new();
    home.write_config(r#"{"feeds": [{"name": "x", "url": "gopher://x.example/"}]}"#);
    let out = home.run(&["daemon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("feeds[0].url: expected an http or https URL, got \"gopher://x.example/\""),
        "{}",
        stderr(&out)
    );
    assert!(!home.data().join("maven.db").exists(), "nothing written");
}

#[test]
fn usage_errors_exit_2() {
    let home = Home::new();
    let out = home.run(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_demo_configuration_is_valid() {
    let home = Home::new();
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/demo.json");
    let out = home.run(&["config", "check", demo]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn feeds_parse_resolves_links_against_the_content_location() {
    let home = Home::new();
    let file = home.dir.path().join("feed.xml");
    std::fs::write(
        &file,
        r#"<rss version="2.0"><channel><title>t</title><link>home/</link>
           <item><title>i</title><link>a.html</link></item></channel></rss>"#,
    )
    .unwrap();
    let out = home.run(&[
        "feeds",
        "parse",
        file.to_str().unwrap(),
        "--url",
        "http://fetched.example/feeds/rss.xml",
        "--content-location",
        "/mirror/rss.xml",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["link"], "http://fetched.example/mirror/home/");
    assert_eq!(
        v["items"][0]["link"],
        "http://fetched.example/mirror/a.html"
    );
}

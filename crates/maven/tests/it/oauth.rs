//! OAuth under the real daemon, against the test kit's loopback authorization server: a server
//! that asks for authorization is parked (not dialled in a loop), `maven mcp inspect` shows the
//! discovery, `maven mcp login` authorizes it through a browser stand-in (plain HTTP GETs that
//! follow nothing), the daemon dials again and proposes its tool, `maven mcp logout` forgets.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::support::{by_name, eventually, stderr, Home};

/// The test kit's authorization server, in a runtime of its own for the test's length.
fn authserver() -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let s = testkit::authserver::AuthServer::start(testkit::authserver::Hostile::None)
                .await
                .unwrap();
            tx.send(s.base.clone()).unwrap();
            std::future::pending::<()>().await;
        });
    });
    rx.recv().unwrap()
}

/// One GET of a loopback URL through a loopback door, following nothing: (status, Location).
fn get(url: &str) -> (u16, Option<String>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut door = webfetch::DoorConfig::new("test-browser");
        door.allow_private = true;
        let f = webfetch::Fetcher::new(door);
        let resp = f
            .send(webfetch::Request::get(url).follow_redirects(false))
            .await
            .unwrap();
        (
            resp.status().as_u16(),
            resp.header_str("location").map(str::to_owned),
        )
    })
}

#[test]
fn a_server_that_asks_is_parked_inspected_logged_in_and_out() {
    let home = Home::new();
    let base = authserver();
    home.write_config(
        &json!({"mcp_servers": {
            "notes": {"url": format!("{base}/mcp"), "allow_private": true, "enabled": true}
        }})
        .to_string(),
    );
    let _d = home.start();

    let st = eventually("needs authorization", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "notes")["state"] == "needs authorization").then_some(st)
    });
    let notes = by_name(&st, "notes");
    assert_eq!(notes["auth"], "needs authorization");
    assert_eq!(
        notes["last_error"],
        "needs authorization: run `maven mcp login notes`"
    );
    // Parked: not dialled again.
    std::thread::sleep(Duration::from_millis(500));
    let st = home.json(&["mcp", "status", "--json"]);
    assert_eq!(by_name(&st, "notes")["dials"], 1);

    // inspect: discovery only, exit 1, the findings on stdout.
    let out = home.run(&["mcp", "inspect", "notes", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("needs authorization: run `maven mcp login notes`"),
        "{}",
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["auth"]["state"], "needs authorization");
    assert_eq!(v["auth"]["issuer"], base.as_str());
    assert_eq!(
        v["auth"]["resource_metadata_url"],
        format!("{base}/.well-known/oauth-protected-resource/mcp")
    );
    assert_eq!(v["auth"]["registration"], "dynamic");
    assert_eq!(v["auth"]["scopes"], json!(["s0"]));

    // login: the printed link, the AS's redirect to the command's loopback callback.
    let mut login = Command::new(env!("CARGO_BIN_EXE_maven"))
        .args(["--data"])
        .arg(home.data())
        .arg("--config")
        .arg(home.config())
        .args(["mcp", "login", "notes"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(login.stdout.take().unwrap()).lines();
    let link = loop {
        let l = lines.next().expect("login printed no link").unwrap();
        if l.starts_with("http://") {
            break l;
        }
    };
    assert!(link.contains("code_challenge_method=S256"), "{link}");
    let (status, callback) = get(&link);
    assert_eq!(status, 302);
    let callback = callback.unwrap();
    assert!(callback.starts_with("http://127.0.0.1:"), "{callback}");
    assert_eq!(get(&callback).0, 200);
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let done = login.wait().unwrap();
    assert!(done.success(), "{rest:?}");
    assert!(
        rest.iter()
            .any(|l| l == &format!("notes: authorized by {base}")),
        "{rest:?}"
    );

    // The daemon read the new tokens and dialled again: ready, its tool proposed.
    let st = eventually("authorized and ready", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "notes")["state"] == "ready").then_some(st)
    });
    let auth = by_name(&st, "notes")["auth"].as_str().unwrap().to_owned();
    assert!(
        auth.starts_with(&format!("authorized by {base} (scopes: s0 offline_access;")),
        "{auth}"
    );
    assert!(auth.ends_with("refresh yes)"), "{auth}");
    assert!(
        !st.to_string().contains("access-"),
        "no token in status: {st}"
    );
    eventually("the tool proposed", || {
        let t = home.json(&["tools", "--json"]);
        t.as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "notes_whoami" && r["state"] == "proposed")
            .then_some(())
    });

    // logout: forgotten (and revoked).
    let out = home.run(&["mcp", "logout", "notes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let st = home.json(&["mcp", "status", "--json"]);
    assert_ne!(
        by_name(&st, "notes")["auth"]
            .as_str()
            .map(|a| a.starts_with("authorized")),
        Some(true)
    );
}

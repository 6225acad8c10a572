use std::time::Duration;

use super::*;

fn env(k: &str) -> Option<String> {
    match k {
        "TOKEN" => Some("s3cret".into()),
        _ => None,
    }
}

fn check(json: &str) -> Result<Config, Vec<String>> {
    Config::parse("config.json", json.as_bytes(), &env).map_err(|e| {
        e.to_string()
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    })
}

fn check_err(json: &str, expect: &[&str]) {
    match check(json) {
        Ok(_) => panic!("expected errors {expect:?} for {json}"),
        Err(got) => assert_eq!(got, expect, "for {json}"),
    }
}

#[test]
fn the_sandbox_key() {
    let c = check(
        r#"{"mcp_servers": {
            "a": {"command": "x"},
            "b": {"command": "x", "sandbox": false},
            "c": {"command": "x", "sandbox": {"read": ["/srv/notes"], "write": ["/srv/notes/out"],
                  "network": false, "memory": 134217728, "processes": 8}}}}"#,
    )
    .unwrap();
    let sb = |n: &str| {
        assert_eq!(c.mcp_servers[n].target.name(), "stdio");
        c.mcp_servers[n].sandbox.clone()
    };
    assert_eq!(sb("a"), Some(sandbox::Policy::default()));
    assert_eq!(sb("b"), None);
    assert_eq!(
        sb("c"),
        Some(sandbox::Policy {
            read: vec!["/srv/notes".into()],
            write: vec!["/srv/notes/out".into()],
            network: sandbox::Network::None,
            memory: 134_217_728,
            processes: 8,
            ..sandbox::Policy::default()
        })
    );
    check_err(
        r#"{"mcp_servers": {"v": {"command": "x", "sandbox": {"read": ["notes", "/a/../b"], "write": [1],
            "network": "no", "memory": 1024, "processes": 0, "net": true}}}}"#,
        &[
            r#"config.json: mcp_servers.v.sandbox.net: unknown key (expected one of: read, write, network, hosts, connect, memory, processes, disk, allow_shared_code)"#,
            r#"config.json: mcp_servers.v.sandbox.read[0]: expected an absolute path without "..", got "notes""#,
            r#"config.json: mcp_servers.v.sandbox.read[1]: expected an absolute path without "..", got "/a/../b""#,
            r#"config.json: mcp_servers.v.sandbox.write[0]: expected a string, got 1"#,
            r#"config.json: mcp_servers.v.sandbox.network: expected true, false or "direct", got "no""#,
            r#"config.json: mcp_servers.v.sandbox.memory: expected at least 67108864 bytes (64 MiB), got 1024"#,
            r#"config.json: mcp_servers.v.sandbox.processes: expected a positive integer, got 0"#,
        ],
    );
    check_err(
        r#"{"mcp_servers": {"v": {"command": "x", "sandbox": "yes"}, "h": {"url": "http://a.example/", "sandbox": true}}}"#,
        &[
            r#"config.json: mcp_servers.v.sandbox: expected true, false or an object {"read", "write", "network", "hosts", "connect", "memory", "processes", "disk", "allow_shared_code"}, got "yes""#,
            r#"config.json: mcp_servers.h.sandbox: only a local server (with "command") takes this key"#,
        ],
    );
}

#[test]
fn a_write_never_covers_shared_code_nor_the_servers_own_program() {
    let env = |k: &str| match k {
        "HOME" => Some("/home/me".to_owned()),
        "PATH" => Some("/usr/bin:/home/me/tools/bin".to_owned()),
        _ => None,
    };
    let parse = |text: &str| Config::parse("config.json", text.as_bytes(), &env);
    let err = |text: &str| match parse(text) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted: {text}"),
    };
    let e = err(
        r#"{"mcp_servers": {"f": {"command": "npx", "args": ["-y", "@x/fs", "/home/me/docs"],
            "sandbox": {"write": ["/home/me/docs", "/home/me/.npm", "/home/me/tools/bin/x"]}}}}"#,
    );
    assert!(
        e.contains("mcp_servers.f.sandbox.write[1]: /home/me/.npm covers /home/me/.npm (npm's cache (npx runs packages from it)), where other programs load code from: a server could plant code that you later run outside any sandbox.")
            && e.contains("set \"allow_shared_code\": true in this sandbox if that is what you mean"),
        "{e}"
    );
    assert!(
        e.contains("mcp_servers.f.sandbox.write[2]: /home/me/tools/bin/x covers /home/me/tools/bin (a directory on PATH)"),
        "{e}"
    );
    assert!(!e.contains("write[0]"), "{e}");
    // The owner who knows says so.
    parse(
        r#"{"mcp_servers": {"f": {"command": "npx", "sandbox": {"write": ["/home/me/.npm"], "allow_shared_code": true}}}}"#,
    )
    .unwrap();
    // Its own script, never, whatever the block says.
    let e = err(
        r#"{"mcp_servers": {"py": {"command": "python3", "args": ["/home/me/srv/server.py"],
            "sandbox": {"write": ["/home/me/srv/server.py"], "allow_shared_code": true},
            "enabled": true}}}"#,
    );
    assert!(
        e.contains("mcp_servers.py.sandbox.write[0]: /home/me/srv/server.py covers /home/me/srv/server.py (the script python3 runs): a server that can rewrite its own code keeps a compromise across restarts"),
        "{e}"
    );
    let e = err(
        r#"{"mcp_servers": {"py": {"command": "python3", "args": ["-u", "/home/me/srv/server.py"],
            "sandbox": {"write": ["/home/me/srv"]}}}}"#,
    );
    assert!(e.contains("the script python3 runs"), "{e}");
    let e = err(
        r#"{"mcp_servers": {"s": {"command": "/opt/srv/bin/server", "sandbox": {"write": ["/opt/srv"], "allow_shared_code": true}}}}"#,
    );
    assert!(e.contains("(the program this server runs)"), "{e}");
    // A disk bound.
    let c = parse(r#"{"mcp_servers": {"d": {"command": "x", "sandbox": {"disk": 33554432}}}}"#)
        .unwrap();
    match (&c.mcp_servers["d"].target, &c.mcp_servers["d"].sandbox) {
        (McpTarget::Stdio { .. }, Some(p)) => assert_eq!(p.disk, 32 * 1024 * 1024),
        t => panic!("{t:?}"),
    }
    let e = err(r#"{"mcp_servers": {"d": {"command": "x", "sandbox": {"disk": 1024}}}}"#);
    assert!(
        e.contains("sandbox.disk: expected at least 16777216 bytes (16 MiB), got 1024"),
        "{e}"
    );
}

#[test]
fn empty_object_is_all_defaults() {
    let c = check("{}").unwrap();
    assert!(c.feeds.is_empty());
    assert!(c.mcp_servers.is_empty());
    assert_eq!(c.router.kind, RouterKind::Rules);
    assert_eq!(c.web.listen.to_string(), "127.0.0.1:8765");
    assert_eq!(c.feed_min_interval, Duration::from_secs(300));
    assert_eq!(c.fetch.max_body, 2 * 1024 * 1024);
    assert_eq!(c.mcp_timing.backoff_min, Duration::from_secs(60));
    assert_eq!(c.mcp_timing.backoff_max, Duration::from_secs(30 * 60));
}

#[test]
fn protocol_reaches_the_client() {
    let c = check(
        r#"{"mcp_servers": {"a": {"command": "x"}, "m": {"command": "x", "protocol": "2026-07-28"}, "l": {"url": "https://l.example/mcp", "protocol": "2025-11-25"}}}"#,
    )
    .unwrap();
    let p = |n: &str| c.mcp_server(n).unwrap().protocol;
    assert_eq!(p("a"), mcp::Protocol::Auto);
    assert_eq!(p("m"), mcp::Protocol::Modern);
    assert_eq!(p("l"), mcp::Protocol::Legacy);
}

#[test]
fn mcp_timing_reaches_the_manager() {
    let c = check(
        r#"{"mcp_timing": {"backoff_min": "200ms", "backoff_max": "2s", "health": "1s", "refresh": "3s", "min_uptime": "0s"}}"#,
    )
    .unwrap();
    let o = c.mcp_timing.manager_options();
    assert_eq!(o.backoff_min, Duration::from_millis(200));
    assert_eq!(o.backoff_max, Duration::from_secs(2));
    assert_eq!(o.health_interval, Duration::from_secs(1));
    assert_eq!(o.refresh_interval, Duration::from_secs(3));
    assert_eq!(o.min_uptime, Duration::ZERO);
}

#[test]
fn errors_name_file_path_value_and_expectation() {
    let table: &[(&str, &[&str])] = &[
        (
            r#"{"mcp_servers": {"vikunja": {"url": "http://x.example/mcp", "max_tools": "12"}}}"#,
            &[r#"config.json: mcp_servers.vikunja.max_tools: expected a positive integer, got "12""#],
        ),
        (
            r#"{"mcp_servers": {"v": {"command": "x", "max_tool": 3}}}"#,
            &["config.json: mcp_servers.v.max_tool: unknown key (expected one of: command, args, env, url, headers, allow_private, host_interval, enabled, allow_tools, max_tools, timeouts, protocol, oauth, sandbox)"],
        ),
        (
            r#"{"mcp_servers": {"v": {"command": "x", "enabled": false, "timeouts": {"call": "11m"}}}}"#,
            &[r#"config.json: mcp_servers.v.timeouts.call: expected at most "10m", got "\"11m\"""#],
        ),
        (
            r#"{"mcp_servers": {"v": {"command": "x", "timeouts": {"init": 10}}}}"#,
            &[r#"config.json: mcp_servers.v.timeouts.init: expected a duration string such as "30s", got 10"#],
        ),
        (
            r#"{"mcp_servers": {"v": {"command": "x", "timeouts": {"list": "10 parsecs"}}}}"#,
            &[r#"config.json: mcp_servers.v.timeouts.list: expected a duration such as "500ms", "30s", "5m", "1h" or "1d", got "10 parsecs""#],
        ),
        (
            r#"{"mcp_servers": {"v": {"command": "x", "url": "http://a.example/"}}}"#,
            &[r#"config.json: mcp_servers.v: expected either "command" (a local process) or "url" (an HTTP endpoint), not both"#],
        ),
        (
            r#"{"mcp_servers": {"v": {"enabled": true}}}"#,
            &[r#"config.json: mcp_servers.v: missing: a server block needs "command" (a local process) or "url" (an HTTP endpoint)"#],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "ftp://a.example/"}}}"#,
            &[r#"config.json: mcp_servers.v.url: expected an http or https URL, got "ftp://a.example/""#],
        ),
        (
            r#"{"mcp_servers": {"v": {"command": "x", "headers": {}}}}"#,
            &[r#"config.json: mcp_servers.v.headers: only an HTTP server (with "url") takes this key"#],
        ),
        (
            r#"{"mcp_servers": {"a-b": {"command": "x"}, "a_b": {"command": "y"}}}"#,
            &[r#"config.json: mcp_servers.a_b: server names "a-b" and "a_b" both flatten to "a_b"; tool rows would collide"#],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/", "enabled": true, "headers": {"Authorization": "Bearer ${NOPE}"}}}}"#,
            &["config.json: mcp_servers.v.headers.Authorization: environment variable NOPE is not set"],
        ),
        (
            r#"{"mcp_servers": {"v": {"command": "x", "protocol": "2025-06-18"}}}"#,
            &[r#"config.json: mcp_servers.v.protocol: expected "auto", "2026-07-28" or "2025-11-25", got "2025-06-18""#],
        ),
        (
            r#"{"mcp_servers": {"v": {"command": "x", "protocol": true}}}"#,
            &[r#"config.json: mcp_servers.v.protocol: expected "auto", "2026-07-28" or "2025-11-25", got true"#],
        ),
        (
            r#"{"mcp_servers": {"v": {"command": "x", "allow_tools": ["ok", "bad name"]}}}"#,
            &[r#"config.json: mcp_servers.v.allow_tools[1]: expected a tool name matching [A-Za-z0-9_.-]{1,128}, got "bad name""#],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"client_id": "c", "client_secret": "hunter2"}}}}"#,
            &["config.json: mcp_servers.v.oauth.client_secret: expected a ${ENV} reference (a secret is not written in the file), got a literal string"],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"client_secret": "${TOKEN}"}}}}"#,
            &["config.json: mcp_servers.v.oauth.client_secret: missing: oauth.client_secret needs oauth.client_id"],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"client_metadata_url": "http://maven.example/client.json"}}}}"#,
            &[r#"config.json: mcp_servers.v.oauth.client_metadata_url: expected an https URL with a path, got "http://maven.example/client.json""#],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"client": "c"}}}}"#,
            &["config.json: mcp_servers.v.oauth.client: unknown key (expected one of: client_id, client_secret, client_metadata_url, dpop, grant, private_key_file, key_id, workload_token_file, idp)"],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"grant": "password"}}}}"#,
            &[r#"config.json: mcp_servers.v.oauth.grant: expected "authorization_code", "client_credentials", "jwt_bearer" or "enterprise", got "password""#],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"grant": "client_credentials", "client_id": "c"}}}}"#,
            &["config.json: mcp_servers.v.oauth.grant: missing: the client_credentials grant needs oauth.client_id and oauth.client_secret or oauth.private_key_file"],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"grant": "jwt_bearer"}}}}"#,
            &["config.json: mcp_servers.v.oauth.grant: missing: the jwt_bearer grant needs oauth.workload_token_file"],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"grant": "jwt_bearer", "workload_token_file": "token.jwt"}}}}"#,
            &[
                r#"config.json: mcp_servers.v.oauth.workload_token_file: expected an absolute path without "..", got "token.jwt""#,
                "config.json: mcp_servers.v.oauth.grant: missing: the jwt_bearer grant needs oauth.workload_token_file",
            ],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"workload_token_file": "/run/token"}}}}"#,
            &[r#"config.json: mcp_servers.v.oauth.workload_token_file: missing: oauth.workload_token_file is for oauth.grant "jwt_bearer""#],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"grant": "enterprise", "client_id": "c", "idp": {"client_id": "i", "id_token_file": "/run/id"}}}}}"#,
            &["config.json: mcp_servers.v.oauth.idp.token_endpoint: missing: oauth.idp needs token_endpoint, client_id and id_token_file"],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"client_id": "c", "key_id": "k"}}}}"#,
            &["config.json: mcp_servers.v.oauth.key_id: missing: oauth.key_id needs oauth.private_key_file"],
        ),
        (
            r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "oauth": {"dpop": "always"}}}}"#,
            &[r#"config.json: mcp_servers.v.oauth.dpop: expected "auto", "never" or "required", got "always""#],
        ),
        (
            r#"{"mcp_servers": {"v": {"command": "x", "oauth": {}}}}"#,
            &[r#"config.json: mcp_servers.v.oauth: only an HTTP server (with "url") takes this key"#],
        ),
        (
            r#"{"feeds": [{"name": "a", "url": "https://a.example/rss"}, {"name": "a", "url": "https://b.example/rss"}]}"#,
            &[r#"config.json: feeds[1].name: duplicate feed name "a""#],
        ),
        (
            r#"{"feeds": [{"url": "https://a.example/rss", "intervall": "1h"}]}"#,
            &[
                "config.json: feeds[0].intervall: unknown key (expected one of: name, url, interval, enabled, max_body, allow_private, baseline)",
                "config.json: feeds[0].name: missing: every feed needs a name",
            ],
        ),
        (
            r#"{"feeds": {"name": "a"}}"#,
            &[r#"config.json: feeds: expected a list of feed objects, got {"name":"a"}"#],
        ),
        (
            r#"{"feeds": [{"name": "a", "url": "https://a.example/", "enabled": "yes"}]}"#,
            &[r#"config.json: feeds[0].enabled: expected true or false, got "yes""#],
        ),
        (
            r#"{"feeds": [{"name": "a", "url": "https://a.example/", "max_body": 0}]}"#,
            &["config.json: feeds[0].max_body: expected a positive integer, got 0"],
        ),
        (
            r#"{"acts": [{"name": "uptime", "cmd": ["mcp", "x", "y"]}]}"#,
            &[r#"config.json: acts[0].cmd: "mcp" is reserved for tools discovered on MCP servers; it is never run as a program"#],
        ),
        (
            r#"{"acts": [{"name": "Up Time", "cmd": ["uptime"]}]}"#,
            &[r#"config.json: acts[0].name: expected lowercase letters, digits and '_', at most 64, got "Up Time""#],
        ),
        (
            r#"{"acts": [{"name": "x", "cmd": []}]}"#,
            &["config.json: acts[0].cmd: expected a non-empty list: the program and its arguments"],
        ),
        (
            r#"{"router": {"kind": "gpt"}}"#,
            &[r#"config.json: router.kind: expected "rules" or "llm", got "gpt""#],
        ),
        (
            r#"{"router": {"kind": "llm"}}"#,
            &["config.json: router.url: missing: the llm router needs the URL of an OpenAI-compatible endpoint"],
        ),
        (
            r#"{"web": {"listen": "localhost"}}"#,
            &[r#"config.json: web.listen: expected an address and port such as "127.0.0.1:8765", got "localhost""#],
        ),
        (
            r#"{"fetch": {"deny_hosts": ["http://evil.example/"]}}"#,
            &[r#"config.json: fetch.deny_hosts[0]: expected a host name such as "example.org" or "*.example.org", or an IP address, got "http://evil.example/""#],
        ),
        (
            r#"{"fetch": {"timeouts": {"total": "0s"}}}"#,
            &[r#"config.json: fetch.timeouts.total: expected a duration above zero, got "0""#],
        ),
        (
            r#"{"sentences": ["mine/en.yaml"]}"#,
            &[r#"config.json: sentences[0]: expected an absolute path without ".." (a sentence file or a folder of them), got "mine/en.yaml""#],
        ),
        (
            r#"{"feed_min_interval": 300}"#,
            &[r#"config.json: feed_min_interval: expected a duration string such as "30s", got 300"#],
        ),
        (
            r#"{"mcp_timing": {"backoff_min": "2m", "backoff_max": "90s"}}"#,
            &[r#"config.json: mcp_timing.backoff_min: expected at most backoff_max ("90s"), got "2m""#],
        ),
        (
            r#"{"mcp_timing": {"health": "0ms", "retry": "1s"}}"#,
            &[
                "config.json: mcp_timing.retry: unknown key (expected one of: backoff_min, backoff_max, health, refresh, min_uptime)",
                r#"config.json: mcp_timing.health: expected a duration above zero, got "0""#,
            ],
        ),
        (
            r#"{"mcp_serverz": {}}"#,
            &["config.json: mcp_serverz: unknown key (expected one of: web, router, fetch, feeds, feed_min_interval, mcp_servers, mcp_timing, acts, voice, sentences)"],
        ),
        (
            r#"[1, 2]"#,
            &["config.json: expected a JSON object at the top level, got [1,2]"],
        ),
        (
            "{\n  \"feeds\": [,]\n}",
            &["config.json: line 2 column 13: not valid JSON: expected value"],
        ),
    ];
    for (json, expect) in table {
        check_err(json, expect);
    }
}

#[test]
fn disabled_blocks_are_checked_too() {
    check_err(
        r#"{"mcp_servers": {"dark": {"command": "x", "enabled": false, "max_tools": -1}}}"#,
        &["config.json: mcp_servers.dark.max_tools: expected a positive integer, got -1"],
    );
    check_err(
        r#"{"feeds": [{"name": "off", "url": "not a url", "enabled": false}]}"#,
        &[
            r#"config.json: feeds[0].url: expected an http or https URL, got "not a url" (relative URL without a base)"#,
        ],
    );
}

#[test]
fn env_references_resolve_and_stay_secret() {
    let c = check(
        r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "enabled": true, "headers": {"Authorization": "Bearer ${TOKEN}"}}}}"#,
    )
    .unwrap();
    let McpTarget::Http { headers, .. } = &c.mcp_servers["v"].target else {
        panic!("expected http")
    };
    assert_eq!(headers["Authorization"].expose(), "Bearer s3cret");
    assert!(
        !format!("{c:?}").contains("s3cret"),
        "secret leaked into Debug"
    );
}

#[test]
fn the_target_as_written_keeps_its_references() {
    let c = check(
        r#"{"mcp_servers": {"gh": {"command": "gh-mcp", "args": ["--token", "${TOKEN}"], "enabled": true},
            "r": {"url": "https://a.example/mcp?k=${TOKEN}", "enabled": true}}}"#,
    )
    .unwrap();
    assert_eq!(c.mcp_servers["gh"].written, "gh-mcp --token ${TOKEN}");
    assert_eq!(
        c.mcp_servers["r"].written,
        "https://a.example/mcp?k=${TOKEN}"
    );
    let McpTarget::Stdio { args, .. } = &c.mcp_servers["gh"].target else {
        panic!("expected stdio")
    };
    assert_eq!(args[1], "s3cret", "the child still gets the value");
}

#[test]
fn session_hours_default_and_bounds() {
    let c = check("{}").unwrap();
    assert_eq!(c.web.session, Duration::from_secs(12 * 3600));
    let c = check(r#"{"web": {"session_hours": 1}}"#).unwrap();
    assert_eq!(c.web.session, Duration::from_secs(3600));
    for bad in ["0", "721", "\"12\""] {
        let e = check(&format!(r#"{{"web": {{"session_hours": {bad}}}}}"#)).unwrap_err();
        assert!(e[0].contains("web.session_hours"), "{e:?}");
    }
}

#[test]
fn the_oauth_grants_that_need_no_person_are_read_with_their_files() {
    let grant = |oauth: &str| {
        let c = check(&format!(
            r#"{{"mcp_servers": {{"v": {{"url": "https://a.example/mcp", "enabled": true, "oauth": {oauth}}}}}}}"#
        ))
        .unwrap();
        c.mcp_servers["v"].oauth.clone()
    };
    let o = grant(r#"{"client_id": "c", "client_secret": "${TOKEN}"}"#);
    assert_eq!(o.grant, oauth::Grant::AuthorizationCode, "the default");
    let o = grant(
        r#"{"grant": "client_credentials", "client_id": "c", "private_key_file": "/etc/maven/key.pem", "key_id": "k1"}"#,
    );
    assert_eq!(o.grant, oauth::Grant::ClientCredentials);
    assert_eq!(
        o.private_key_file.as_deref(),
        Some(std::path::Path::new("/etc/maven/key.pem"))
    );
    assert_eq!(o.key_id.as_deref(), Some("k1"));
    let o = grant(r#"{"grant": "jwt_bearer", "workload_token_file": "/run/token.jwt"}"#);
    assert_eq!(
        o.grant,
        oauth::Grant::JwtBearer(oauth::TokenSource::File("/run/token.jwt".into()))
    );
    let o = grant(
        r#"{"grant": "enterprise", "client_id": "c", "client_secret": "${TOKEN}", "idp": {"token_endpoint": "https://idp.example/token", "client_id": "i", "client_secret": "${TOKEN}", "id_token_file": "/run/id.jwt"}}"#,
    );
    assert_eq!(
        o.grant,
        oauth::Grant::Enterprise(oauth::Enterprise {
            token_endpoint: "https://idp.example/token".to_owned(),
            client_id: "i".to_owned(),
            client_secret: Some("s3cret".to_owned()),
            id_token: oauth::TokenSource::File("/run/id.jwt".into()),
        })
    );
    assert!(
        !format!("{o:?}").contains("s3cret"),
        "secret leaked into Debug: {o:?}"
    );
}

#[test]
fn the_oauth_block_resolves_its_secret_and_keeps_it_secret() {
    let c = check(
        r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "enabled": true, "oauth": {"client_id": "maven", "client_secret": "${TOKEN}", "client_metadata_url": "https://maven.example/client.json"}}}}"#,
    )
    .unwrap();
    let o = &c.mcp_servers["v"].oauth;
    assert_eq!(o.client_id.as_deref(), Some("maven"));
    assert_eq!(o.client_secret.as_ref().map(Secret::expose), Some("s3cret"));
    assert_eq!(
        o.client_metadata_url.as_deref(),
        Some("https://maven.example/client.json")
    );
    assert!(
        !format!("{c:?}").contains("s3cret"),
        "secret leaked into Debug"
    );
    assert_eq!(o.dpop, oauth::DpopMode::Auto, "the default");
    for (word, mode) in [
        ("never", oauth::DpopMode::Never),
        ("required", oauth::DpopMode::Required),
        ("auto", oauth::DpopMode::Auto),
    ] {
        let c = check(&format!(
            r#"{{"mcp_servers": {{"v": {{"url": "https://a.example/mcp", "oauth": {{"dpop": "{word}"}}}}}}}}"#
        ))
        .unwrap();
        assert_eq!(c.mcp_servers["v"].oauth.dpop, mode);
    }
}

#[test]
fn unset_env_in_disabled_block_is_not_an_error() {
    let c = check(
        r#"{"mcp_servers": {"v": {"url": "https://a.example/mcp", "headers": {"Authorization": "Bearer ${NOPE}"}}}}"#,
    )
    .unwrap();
    assert!(!c.mcp_servers["v"].enabled);
}

#[test]
fn every_error_is_reported_at_once() {
    let err = check(r#"{"feed_min_interval": "x", "acts": 3, "router": []}"#).unwrap_err();
    assert_eq!(err.len(), 3, "{err:?}");
}

#[test]
fn durations() {
    let table = [
        ("500ms", Some(500)),
        ("30s", Some(30_000)),
        ("5m", Some(300_000)),
        ("1h", Some(3_600_000)),
        ("1d", Some(86_400_000)),
        ("0s", Some(0)),
        ("5", None),
        ("s", None),
        ("-5s", None),
        ("1.5s", None),
        ("5 m", None),
        ("99999999999999d", None),
    ];
    for (s, ms) in table {
        assert_eq!(parse_duration(s).map(|d| d.as_millis() as u64), ms, "{s}");
    }
}

#[test]
fn doors_take_global_defaults_and_their_own_overrides() {
    let c = check(
        r#"{"fetch": {"deny_hosts": ["evil.example"], "max_body": 1000},
            "feeds": [{"name": "lan", "url": "http://192.168.1.5/rss", "allow_private": true, "max_body": 5000}],
            "mcp_servers": {"h": {"url": "http://127.0.0.1:9/mcp", "allow_private": true}, "s": {"command": "x"}}}"#,
    )
    .unwrap();
    let door = |name: &str| c.door(&name.parse::<crate::Door>()?);
    let d = door("feed:lan").unwrap();
    assert!(d.allow_private);
    assert_eq!(d.max_body, 5000);
    assert_eq!(d.deny_hosts, vec!["evil.example".to_string()]);
    let g = door("fetch").unwrap();
    assert!(!g.allow_private);
    assert_eq!(g.max_body, 1000);
    assert_eq!(door("mcp:h").unwrap().host_interval, Duration::ZERO);
    assert_eq!(
        door("mcp:h").unwrap().timeouts.headers,
        Duration::from_secs(60),
        "never shorter than the call deadline"
    );
    assert_eq!(
        door("mcp:s").unwrap_err().to_string(),
        "MCP server \"s\" is a local process, not an HTTP endpoint"
    );
    assert_eq!(
        door("feed:nope").unwrap_err().to_string(),
        "no feed named \"nope\" in the config"
    );
    assert_eq!(
        door("ftp").unwrap_err().to_string(),
        "unknown door \"ftp\": expected fetch, router, voice, feed:<name> or mcp:<name>"
    );
    assert_eq!(
        door("feed:").unwrap_err(),
        crate::DoorError::Unknown("feed:".into())
    );
    for d in [
        crate::Door::Fetch,
        crate::Door::Router,
        crate::Door::Feed("a:b".into()),
        crate::Door::Mcp("m".into()),
        crate::Door::Voice,
    ] {
        assert_eq!(d.to_string().parse::<crate::Door>().unwrap(), d);
    }
}

#[test]
fn the_voice_door_and_a_sandbox_proxy_are_built_from_the_fetch_block_too() {
    let c = check(
        r#"{"fetch": {"deny_hosts": ["evil.example"], "allow_hosts": ["*.example"], "max_body": 1000, "timeouts": {"total": "7s"}},
            "voice": {"asr": "tcp://127.0.0.1:10300", "allow_private": true},
            "mcp_servers": {"p": {"command": "/bin/true", "sandbox": {"hosts": ["api.example"]}},
                            "d": {"command": "/bin/true", "sandbox": {"network": "direct"}},
                            "u": {"command": "/bin/true", "sandbox": false}}}"#,
    )
    .unwrap();
    let v = c.door(&crate::Door::Voice).unwrap();
    assert_eq!(v.name, "voice");
    assert!(v.allow_private);
    assert_eq!(v.deny_hosts, vec!["evil.example".to_string()]);
    assert_eq!(v.allow_hosts, vec!["*.example".to_string()]);
    assert_eq!(v.max_body, 1000);
    assert_eq!(v.timeouts.total, Duration::from_secs(7));
    assert_eq!(v.host_interval, Duration::ZERO);
    let off = check(r#"{"voice": {"asr": "tcp://127.0.0.1:10300"}}"#).unwrap();
    assert!(!off.door(&crate::Door::Voice).unwrap().allow_private);

    let p = c.door(&crate::Door::Sandbox("p".into())).unwrap();
    assert_eq!(p.name, "mcp:p");
    assert_eq!(p.allow_hosts, vec!["api.example".to_string()]);
    assert_eq!(p.deny_hosts, vec!["evil.example".to_string()]);
    for s in ["d", "u"] {
        assert_eq!(
            c.door(&crate::Door::Sandbox(s.into())).unwrap_err(),
            crate::DoorError::NoProxy(s.into())
        );
    }
    assert_eq!(
        c.door(&crate::Door::Sandbox("nope".into())).unwrap_err(),
        crate::DoorError::NoServer("nope".into())
    );
}

#[test]
fn feed_interval_never_below_minimum() {
    let c = check(
        r#"{"feed_min_interval": "10m", "feeds": [{"name": "a", "url": "https://a.example/", "interval": "1m"}]}"#,
    )
    .unwrap();
    assert_eq!(c.feeds[0].interval, Duration::from_secs(600));
}

#[test]
fn problems_are_typed() {
    let err = Config::parse(
        "config.json",
        br#"{"mcp_servers": {"v": {"command": "x", "max_tools": "12", "allow_tools": [], "max_tool": 3}}, "acts": [{"name": "a", "cmd": [], "timeout": "0s"}]}"#,
        &env,
    )
    .unwrap_err();
    assert_eq!(err.file(), "config.json");
    let got: Vec<(&str, &ProblemKind)> = err
        .problems()
        .iter()
        .map(|p| (p.path.as_str(), &p.kind))
        .collect();
    assert!(matches!(
        got[..],
        [
            ("mcp_servers.v.max_tool", ProblemKind::UnknownKey { .. }),
            (
                "mcp_servers.v.max_tools",
                ProblemKind::WrongType {
                    expected: "a positive integer",
                    ..
                }
            ),
            ("acts[0].cmd", ProblemKind::Empty { .. }),
            ("acts[0].timeout", ProblemKind::BadValue { .. }),
        ]
    ));
    let ProblemKind::WrongType { found, .. } = got[1].1 else {
        unreachable!()
    };
    assert_eq!(found, "\"12\"");

    let missing = Config::load(Some(Path::new("/nonexistent/maven/config.json"))).unwrap_err();
    assert!(matches!(missing, Error::Read { .. }), "{missing:?}");
    assert!(missing.problems().is_empty());
    let syntax = Config::parse("c.json", b"{,}", &env).unwrap_err();
    assert!(
        matches!(
            syntax,
            Error::Syntax {
                line: 1,
                column: 2,
                ..
            }
        ),
        "{syntax:?}"
    );
    let encoding = Config::parse("c.json", b"{\"a\": \"\xff\"}", &env).unwrap_err();
    assert!(
        matches!(encoding, Error::Encoding { offset: 7, .. }),
        "{encoding:?}"
    );
}

#[test]
fn the_voice_block_names_its_services_and_refuses_an_open_listen_without_peers() {
    let c = check(
        r#"{"voice": {"listen": "127.0.0.1:10600", "asr": "tcp://127.0.0.1:10300",
            "tts": "unix:///run/piper.sock", "language": "ru", "allow_private": true}}"#,
    )
    .unwrap();
    assert_eq!(c.voice.listen, Some("127.0.0.1:10600".parse().unwrap()));
    assert_eq!(
        c.voice.asr.as_ref().map(|a| a.to_string()).as_deref(),
        Some("tcp://127.0.0.1:10300")
    );
    assert_eq!(
        c.voice.tts.as_ref().map(|a| a.to_string()).as_deref(),
        Some("unix:///run/piper.sock")
    );
    assert_eq!(c.voice.language, "ru");
    assert!(c.voice.allow_private);
    assert!(
        check("{}").unwrap().voice.listen.is_none(),
        "off when absent"
    );

    let err = check(r#"{"voice": {"listen": "0.0.0.0:10600"}}"#)
        .unwrap_err()
        .join("\n");
    assert!(
        err.contains("voice.listen: 0.0.0.0:10600 is not on the loopback: name the addresses allowed to connect in voice.peers"),
        "{err}"
    );
    check(r#"{"voice": {"listen": "0.0.0.0:10600", "peers": ["192.168.1.20"]}}"#).unwrap();
    for (bad, want) in [
        (r#"{"voice": {"listen": "here"}}"#, "voice.listen"),
        (r#"{"voice": {"peers": ["nas"]}}"#, "voice.peers"),
        (
            r#"{"voice": {"asr": "http://127.0.0.1:10300"}}"#,
            "voice.asr",
        ),
        (r#"{"voice": {"language": "de"}}"#, "voice.language"),
        (r#"{"voice": {"volume": 3}}"#, "voice.volume"),
    ] {
        let err = check(bad).unwrap_err().join("\n");
        assert!(err.contains(want), "{bad}: {err}");
    }
}

//! Plain sentences, without a model, through the real servers people install first — PyPI's
//! `mcp-server-time`, `mcp-server-git` and `mcp-server-fetch`, npm's `server-filesystem`,
//! `server-memory` (a plain `npm install`) and `server-everything`, and the demo's — installed
//! as their READMEs say (`scripts/install-test-peers.sh`), each under a name of the owner's
//! own choosing: the phrasebook knows them by their `serverInfo.name`. English and Russian;
//! the phrasebook alone, then the owner's own files beside the configuration. A write asked
//! through a template shows its arguments and runs once on yes.

use serde_json::{json, Value};

use crate::support::{
    demo_server, eventually, installed, stderr, testenv, writable_by_root_servers, Home,
};

fn out(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The owner's sentence, and what the daemon printed.
fn say(home: &Home, text: &str) -> String {
    let o = home.run(&["say", text]);
    let s = out(&o);
    assert!(!s.is_empty(), "{text}: nothing printed; {}", stderr(&o));
    s
}

/// The arguments of the newest act named `act` in the acts log.
fn last_arguments(home: &Home, act: &str) -> Value {
    let acts = home.json(&["acts", "--json"]);
    acts.as_array()
        .and_then(|a| a.iter().find(|r| r["act"] == act))
        .map(|r| r["arguments"].clone())
        .unwrap_or_else(|| panic!("{act} is not in the acts log: {acts}"))
}

const ACTS: &[&str] = &[
    "clock_get_current_time",
    "files_list_directory",
    "mem_create_entities",
    "mem_search_nodes",
    "repo_git_status",
    "ref_get_sum",
    "web_fetch",
    "todo_update_task",
    "todo_list_tasks",
];

#[test]
fn plain_sentences_reach_the_servers_people_install_first_in_both_languages() {
    let servers = installed(&testenv().join(".venv-servers/bin"));
    let node = installed(&testenv().join("node_modules/.bin/node"));
    let node_modules = installed(&testenv().join("node_modules"));
    let plain = installed(&testenv().join("plain-npm"));
    let node_bin = std::fs::canonicalize(testenv().join("node_modules/.bin")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let shared = work.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("note.txt"), "hello").unwrap();
    writable_by_root_servers(work.path());
    writable_by_root_servers(&shared);
    let repo = work.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let st = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.org")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.org")
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "a").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    std::fs::write(repo.join("b.txt"), "b").unwrap();
    let home = Home::new();
    let memory = home.data().join("sandbox/mem/memory.jsonl");
    home.write_config(
        &json!({
            "web": {"listen": "127.0.0.1:0"},
            "mcp_servers": {
                "todo": {"command": demo_server(), "enabled": true},
                "clock": {"command": servers.join("mcp-server-time"), "enabled": true,
                    "sandbox": {"network": false}},
                "repo": {"command": servers.join("mcp-server-git"), "enabled": true,
                    // A root daemon's server runs as a uid of its own: git would call the
                    // repository another's ("dubious ownership").
                    "env": {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory",
                        "GIT_CONFIG_VALUE_0": "*"},
                    "sandbox": {"read": [repo], "network": false}},
                "web": {"command": servers.join("mcp-server-fetch"), "enabled": true},
                // Both offer more tools than the default cap of 12.
                "files": {"command": node, "enabled": true, "max_tools": 20,
                    "args": [node_modules.join("@modelcontextprotocol/server-filesystem/dist/index.js"), shared],
                    "sandbox": {"read": [node_modules], "write": [shared], "network": false}},
                "ref": {"command": node, "enabled": true, "max_tools": 20,
                    "args": [node_modules.join("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"],
                    "sandbox": {"read": [node_modules], "network": false}},
                "mem": {"command": plain.join("node_modules/.bin/mcp-server-memory"), "enabled": true,
                    "env": {"PATH": format!("{}:/usr/bin:/bin", node_bin.display()),
                        "MEMORY_FILE_PATH": memory},
                    "sandbox": {"network": false}}
            }
        })
        .to_string(),
    );
    // The first start proposes every tool; the owner enables the ones this test says.
    let d = home.start();
    eventually("every act proposed", || {
        let t = home.json(&["tools", "--json"]);
        let names: Vec<&str> = t
            .as_array()?
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        ACTS.iter().all(|a| names.contains(a)).then_some(())
    });
    drop(d);
    home.enable(ACTS);
    let _d = home.start();
    eventually("every server ready", || {
        let v = home.json(&["mcp", "status", "--json"]);
        v.as_array()?
            .iter()
            .all(|s| s["state"] == "ready")
            .then_some(())
    });

    // Read-only acts run at once, with the words said in their slots.
    let got = say(&home, "What time is it in Tokyo?");
    assert!(
        got.starts_with("clock_get_current_time ran;") && got.contains("Asia/Tokyo"),
        "{got}"
    );
    let got = say(&home, "Который час в Токио?");
    assert!(
        got.starts_with("clock_get_current_time выполнено") && got.contains("Asia/Tokyo"),
        "{got}"
    );
    assert_eq!(
        last_arguments(&home, "clock_get_current_time"),
        json!({"timezone": "Asia/Tokyo"})
    );
    let got = say(&home, &format!("list the files in {}", shared.display()));
    assert!(
        got.starts_with("files_list_directory ran;") && got.contains("note.txt"),
        "{got}"
    );
    let got = say(&home, &format!("покажи файлы в папке {}", shared.display()));
    assert!(
        got.starts_with("files_list_directory выполнено") && got.contains("note.txt"),
        "{got}"
    );
    let got = say(&home, &format!("git status of {}", repo.display()));
    assert!(
        got.starts_with("repo_git_status ran;") && got.contains("b.txt"),
        "{got}"
    );
    let got = say(&home, "what is 2 plus 3?");
    assert!(
        got.starts_with("ref_get_sum ran;") && got.contains('5'),
        "{got}"
    );
    let got = say(&home, "сложи 20 и 22");
    assert!(
        got.starts_with("ref_get_sum выполнено") && got.contains("42"),
        "{got}"
    );
    assert_eq!(
        last_arguments(&home, "ref_get_sum"),
        json!({"a": 20, "b": 22})
    );
    // The address as written, the punctuation of the sentence left off.
    say(&home, "Fetch http://127.0.0.1:9/page.");
    assert_eq!(
        last_arguments(&home, "web_fetch"),
        json!({"url": "http://127.0.0.1:9/page"})
    );

    // A write asks first, showing every argument, and runs once on yes.
    let asked = say(&home, "remember that my sister's birthday is May 3");
    assert_eq!(
        asked.trim_end(),
        r#"About to run mem_create_entities with {"entities":[{"entityType":"fact","name":"my sister's birthday is May 3","observations":[]}]} (not set: none). Run it? (yes/no)"#
    );
    assert!(say(&home, "yes").starts_with("mem_create_entities ran;"));
    let got = say(&home, "what do you remember about sister");
    assert!(
        got.starts_with("mem_search_nodes ran;") && got.contains("May 3"),
        "{got}"
    );
    let asked = say(&home, "отметь задачу 2 как выполненную");
    assert!(
        asked.starts_with(r#"Собираюсь выполнить todo_update_task с {"done":true,"task_id":2}"#),
        "{asked}"
    );
    assert!(say(&home, "да").starts_with("todo_update_task выполнено"));
    let got = say(&home, "list the tasks in inbox");
    assert!(got.contains("2. [x]"), "task 2 done: {got}");
    let runs = home.json(&["acts", "--json"]);
    let updates = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["act"] == "todo_update_task")
        .count();
    assert_eq!(updates, 1, "{runs}");

    // --explain says which template matched, from which file, or why none did.
    let e = stderr(&home.run(&["say", "--explain", "What time is it in Tokyo?"]));
    assert!(
        e.contains("explain: the phrasebook's template \"what time is it [now|right now] in {city:timezone} [now|right now]\" (phrasebook/en/time.yaml:")
            && e.contains("matched: clock_get_current_time with {\"timezone\":\"Asia/Tokyo\"}"),
        "{e}"
    );
    let e = stderr(&home.run(&["say", "--explain", "book me a flight"]));
    assert!(
        e.contains("explain: no sentence template matched; the rules router decided"),
        "{e}"
    );

    // The owner's own file, beside the configuration: it comes first, and names acts by the
    // owner's names.
    let dir = home.config().parent().unwrap().join("sentences/en");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mine.yaml"),
        "language: en\nintents:\n  clock_get_current_time:\n    data:\n      - sentences:\n          - \"what's the time at {place:timezone}\"\nlists:\n  place:\n    values:\n      - in: \"(the office|work)\"\n        out: \"Europe/Berlin\"\n",
    )
    .unwrap();
    let r = home.run(&["reload"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let got = say(&home, "What's the time at the office?");
    assert!(
        got.starts_with("clock_get_current_time ran;") && got.contains("Europe/Berlin"),
        "{got}"
    );
    // A broken file is named with its place by config check, and the phrasebook goes on.
    std::fs::write(
        dir.join("broken.yaml"),
        "language: en\nintents:\n  x:\n    data:\n      - sentences:\n          - \"(unclosed\"\n",
    )
    .unwrap();
    let check = home.run(&["config", "check"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(
        stderr(&check).contains(&format!(
            "sentences: {}:6:",
            dir.join("broken.yaml").display()
        )),
        "{}",
        stderr(&check)
    );
    let doctor = out(&home.run(&["doctor"]));
    assert!(
        doctor.lines().any(|l| l.starts_with("fail")
            && l.contains("sentences: ")
            && l.contains(&format!("{}:6:", dir.join("broken.yaml").display()))),
        "{doctor}"
    );
    let _ = home.run(&["reload"]);
    let got = say(&home, "What time is it in Tokyo?");
    assert!(got.starts_with("clock_get_current_time ran;"), "{got}");
}

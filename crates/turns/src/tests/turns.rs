//! Tests of the turn pipeline: their sentences in Russian are test inputs, kept out of the code.

use super::*;
use std::sync::Arc;
use std::time::Duration;

/// The owner's terminal.
fn term() -> Conversation {
    Conversation::terminal()
}

/// The Wyoming voice conversation `id`.
fn voice(id: &str) -> Conversation {
    Conversation::new(Front::Voice, id)
}

fn mcp_row(server: &str, tool: &str) -> ToolRow {
    ToolRow {
        name: allowlist::naming::flatten_name(server, tool),
        kind: store::ToolKind::Mcp,
        server: server.into(),
        tool: tool.into(),
        cmd: vec!["mcp".into(), server.into(), tool.into()],
        scope: format!("mcp:{server}"),
        state: ToolState::Enabled,
        destructive: false,
        fingerprint: None,
        description: String::new(),
        input_schema: serde_json::json!({}),
        shape: serde_json::json!({}),
        approved_shape: None,
        provenance: String::new(),
        created: time::OffsetDateTime::UNIX_EPOCH,
        updated: time::OffsetDateTime::UNIX_EPOCH,
    }
}

#[test]
fn a_tool_named_as_its_server_is_said_once_and_routed_so() {
    let fetch = mcp_row("fetch", "fetch");
    let todo = mcp_row("todo", "list_tasks");
    assert_eq!(phrase(&fetch, &[&fetch, &todo]), "fetch");
    assert_eq!(phrase(&todo, &[&fetch, &todo]), "todo list tasks");
    // Said once, it is what the rules router runs.
    let acts: Vec<rules::ActName> = [&fetch, &todo]
        .iter()
        .map(|r| rules::ActName {
            name: r.name.clone(),
            tool: r.tool.clone(),
        })
        .collect();
    assert_eq!(
        rules::match_act("fetch https://example.org/", &acts),
        Some(("fetch_fetch".into(), "https://example.org/".into()))
    );
    // Another server's tool of that name: the full name, which alone is unambiguous.
    let other = mcp_row("web", "fetch");
    assert_eq!(phrase(&fetch, &[&fetch, &other]), "fetch fetch");
}

/// Brings a row to `to` the way the daemon does: the owner (with a step-up) enables and
/// disables, a listing withdraws.
async fn set_state(s: &Store, name: &str, to: ToolState, reason: &str) {
    let (name, reason) = (name.to_owned(), reason.to_owned());
    if let ToolState::Withdrawn = to {
        let change = store::ToolChange::Withdraw { name, reason };
        s.apply_listing(move |_| (vec![change], ())).await.unwrap();
        return;
    }
    let step = stepup::testing::step_up();
    s.owner_sets_tool_state(&name, to, &step, &reason)
        .await
        .unwrap();
}

/// A local act as the configuration's `acts` would have it.
fn act(name: &str, cmd: &[&str], read_only: bool) -> allowlist::LocalAct {
    allowlist::LocalAct {
        name: name.into(),
        cmd: cmd.iter().map(|s| s.to_string()).collect(),
        read_only,
        timeout: Duration::from_secs(30),
        max_output: 64 * 1024,
    }
}

async fn setup(acts: Vec<allowlist::LocalAct>) -> (tempfile::TempDir, Store, Turns) {
    let dir = tempfile::tempdir().unwrap();
    #[expect(clippy::disallowed_methods, reason = "a test's own database")]
    let store = Store::open(&dir.path().join("m.db")).await.unwrap();
    let approvals = allowlist::Approvals {
        servers: Default::default(),
        acts,
    };
    allowlist::reconcile::propose_local_acts(&store, &approvals.acts, None)
        .await
        .unwrap();
    let executor = Executor::new(store.clone(), Arc::new(approvals), None);
    let turns = Turns::new(store.clone(), executor, None);
    (dir, store, turns)
}

#[tokio::test(start_paused = true)]
async fn a_pending_confirmation_expires_after_two_minutes() {
    let (dir, store, turns) =
        setup(vec![act("wipe", &["rm", "-f", "/nonexistent/x"], false)]).await;
    set_state(&store, "wipe", ToolState::Enabled, "t").await;
    let asked = turns.turn(&term(), "wipe").await;
    assert_eq!(asked.text(), "About to run wipe. Run it? (yes/no)");
    assert_eq!(
        asked.pending,
        Some(Awaits::Confirm {
            act: "wipe".into(),
            tail: String::new(),
            arguments: None,
            expires_in_s: 120
        })
    );
    assert_eq!(
        asked.act,
        Some(Act {
            name: "wipe".into(),
            outcome: Outcome::AwaitsConfirmation
        })
    );
    tokio::time::advance(CONFIRM_WINDOW + Duration::from_secs(1)).await;
    let late = turns.turn(&term(), "yes").await;
    assert_eq!(
        late.text(),
        "Too late: the request to run wipe expired. Ask again."
    );
    assert!(!late.ok);
    assert!(store.acts_log(10).await.unwrap().is_empty(), "nothing ran");
    drop(dir);
}

#[tokio::test]
async fn each_conversation_confirms_only_its_own_question() {
    let (_dir, store, turns) = setup(vec![
        act("wipe_cache", &["rm", "-f", "/nonexistent/x"], false),
        act("uptime", &["true"], true),
    ])
    .await;
    set_state(&store, "wipe_cache", ToolState::Enabled, "t").await;
    set_state(&store, "uptime", ToolState::Enabled, "t").await;
    let page = Conversation::new(Front::Page, "s1");
    let listen = Conversation::new(Front::Listen, "4242");
    let word_of = |text: String| {
        text.rsplit(", ")
            .next()
            .and_then(|w| w.strip_suffix('.'))
            .unwrap_or_else(|| panic!("{text}"))
            .to_owned()
    };
    // Four conversations, one question each.
    assert_eq!(
        turns.turn(&term(), "wipe_cache").await.text(),
        "About to run wipe_cache. Run it? (yes/no)"
    );
    assert_eq!(
        turns.turn(&page, "wipe_cache").await.text(),
        "About to run wipe_cache. Run it? (yes/no)"
    );
    let kitchen = word_of(turns.turn(&voice("kitchen"), "Wipe cache.").await.text());
    let session = word_of(turns.turn(&listen, "Wipe cache.").await.text());
    // Another turn elsewhere, one that runs an act too, drops none of them.
    assert!(turns
        .turn(&voice("bedroom"), "uptime")
        .await
        .text()
        .starts_with("uptime ran;"));
    // The page's no cancels the page's question only.
    assert_eq!(
        turns.turn(&page, "no").await.text(),
        "Cancelled: wipe_cache was not run."
    );
    // The terminal's yes runs the terminal's.
    assert!(turns
        .turn(&term(), "yes")
        .await
        .text()
        .starts_with("wipe_cache ran;"));
    // A word said in another conversation confirms nothing there and ends nothing here.
    let elsewhere = turns
        .turn(&voice("bedroom"), &format!("Yes, {kitchen}."))
        .await
        .text();
    assert!(!elsewhere.contains("ran;"), "{elsewhere}");
    assert!(turns
        .turn(&voice("kitchen"), &format!("Yes, {kitchen}."))
        .await
        .text()
        .starts_with("wipe_cache ran;"));
    assert!(turns
        .turn(&listen, &format!("Yes, {session}."))
        .await
        .text()
        .starts_with("wipe_cache ran;"));
    let log = store.acts_log(10).await.unwrap();
    let wipes = log.iter().filter(|l| l.tool == "wipe_cache").count();
    assert_eq!(wipes, 3, "{log:?}");
    // Each conversation named as its log line says it.
    assert_eq!(term().to_string(), "terminal");
    assert_eq!(voice("kitchen").to_string(), "voice, kitchen");
    assert_eq!(Conversation::new(Front::Page, "").to_string(), "page");
    assert_eq!(listen.to_string(), "listen, 4242");
}

#[tokio::test]
async fn a_russian_sentence_is_answered_in_russian() {
    let (_dir, store, turns) =
        setup(vec![act("wipe", &["rm", "-f", "/nonexistent/x"], false)]).await;
    set_state(&store, "wipe", ToolState::Enabled, "t").await;
    let asked = turns.turn(&term(), "wipe пожалуйста").await;
    assert_eq!(
        asked.text(),
        "Собираюсь выполнить wipe с \"пожалуйста\". Выполнить? (да/нет)"
    );
    assert_eq!(asked.lang, Lang::Ru);
    let no = turns.turn(&term(), "нет").await;
    assert_eq!(no.text(), "Отменено: wipe не выполнено.");
    assert_eq!(no.lang, Lang::Ru);
    assert_eq!(
        turns.turn(&term(), "да").await.text(),
        "Подтверждать нечего."
    );
    // An English "no" to a Russian question is answered in English.
    turns.turn(&term(), "wipe пожалуйста").await;
    assert_eq!(
        turns.turn(&term(), "no").await.text(),
        "Cancelled: wipe was not run."
    );
    assert!(store.acts_log(10).await.unwrap().is_empty(), "nothing ran");
}

#[tokio::test]
async fn help_says_how_to_run_each_act_and_a_near_miss_is_named() {
    let dir = tempfile::tempdir().unwrap();
    #[expect(clippy::disallowed_methods, reason = "a test's own database")]
    let store = Store::open(&dir.path().join("m.db")).await.unwrap();
    let tools: Vec<mcp::Tool> = [
        serde_json::json!({"name": "list_tasks", "description": "Lists tasks.\n\n\n• not an item\n\nof a project",
            "annotations": {"readOnlyHint": true},
            "inputSchema": {"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}}),
        serde_json::json!({"name": "clear_done", "description": "Removes done tasks.",
            "inputSchema": {"type": "object"}}),
        serde_json::json!({"name": "create_entities", "description": "Creates entities.",
            "inputSchema": {"type": "object", "properties": {"entities": {"type": "array"}}, "required": ["entities"]}}),
    ]
    .into_iter()
    .filter_map(mcp::Tool::from_value)
    .collect();
    let policy = allowlist::ServerPolicy {
        name: "todo".into(),
        allow_tools: vec![
            "list_tasks".into(),
            "clear_done".into(),
            "create_entities".into(),
        ],
        max_tools: 12,
    };
    allowlist::reconcile(&store, &policy, &tools).await.unwrap();
    for n in ["todo_list_tasks", "todo_clear_done", "todo_create_entities"] {
        set_state(&store, n, ToolState::Enabled, "t").await;
    }
    let approvals = allowlist::Approvals {
        servers: [("todo".to_owned(), policy.allow_tools.clone())].into(),
        acts: Vec::new(),
    };
    let executor = Executor::new(store.clone(), Arc::new(approvals), None);
    let turns = Turns::new(store.clone(), executor, None);
    let help = turns.turn(&term(), "help").await.text();
    let lines: Vec<&str> = help.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "  • todo clear done — Removes done tasks (asks first); say \"todo clear done\"",
            "  • todo create entities — Creates entities (asks first); \"todo create entities\" needs named arguments, which only a model router (the \"router\" block, kind \"llm\") fills from your own words; or use the service itself",
            "  • todo list tasks — Lists tasks. • not an item of a project; say \"todo list tasks …\" (the rest of the sentence is its argument)",
        ],
        "{help}"
    );
    let miss = turns.turn(&term(), "todo lsit tasks inbox").await.text();
    assert!(
        miss.starts_with("I can't help with that. Did you mean \"todo list tasks\"?"),
        "{miss}"
    );
    let far = turns.turn(&term(), "book me a flight").await.text();
    assert!(!far.contains("Did you mean"), "{far}");
    let ru = turns.turn(&term(), "помощь").await.text();
    assert!(
        ru.contains("скажите «todo list tasks …» (остаток фразы — его аргумент)"),
        "{ru}"
    );
}

#[tokio::test]
async fn an_owners_template_routes_to_its_act_and_a_write_still_asks() {
    let (_dir, store, turns) = setup(vec![
        act("wipe_cache", &["rm", "-f", "/nonexistent/x"], false),
        act("uptime", &["true"], true),
    ])
    .await;
    set_state(&store, "wipe_cache", ToolState::Enabled, "t").await;
    let files = [templates::SentenceFile {
        name: "sentences/en/mine.yaml".into(),
        lang: Some(Lang::En),
        text: "language: en\nintents:\n  wipe_cache:\n    data:\n      - sentences:\n          - \"(clean|wipe) [out] the cache [please]\"\n  uptime:\n    data:\n      - sentences:\n          - \"how long have you been up\"\n".into(),
    }];
    turns.set_templates(templates::Templates::load(&files).unwrap());
    let asked = turns.turn(&term(), "Clean out the cache, please").await;
    assert_eq!(asked.text(), "About to run wipe_cache. Run it? (yes/no)");
    assert!(turns
        .turn(&term(), "yes")
        .await
        .text()
        .starts_with("wipe_cache ran;"));
    // A template of a proposed act says so, in the same words as its name would.
    let proposed = turns.turn(&term(), "how long have you been up").await;
    assert_eq!(
        proposed.text(),
        "I won't run that: uptime is only proposed: enable it on the page first."
    );
    // help names each act's phrase.
    let help = turns.turn(&term(), "help").await.text();
    assert!(help.contains("; or say \"clean the cache\""), "{help}");
    // A file that does not load names its place.
    let broken = [templates::SentenceFile {
        name: "sentences/en/broken.yaml".into(),
        lang: Some(Lang::En),
        text: "intents:\n  wipe_cache:\n    data:\n      - sentences:\n          - \"(unclosed\"\n"
            .into(),
    }];
    let errors = templates::Templates::load(&broken).unwrap_err();
    assert!(
        errors[0]
            .to_string()
            .starts_with("sentences/en/broken.yaml:5:"),
        "{}",
        errors[0]
    );
}

#[tokio::test]
async fn a_wrong_word_or_every_word_ends_a_spoken_question_and_nothing_runs() {
    let (_dir, store, turns) = setup(vec![act(
        "wipe_cache",
        &["rm", "-f", "/nonexistent/x"],
        false,
    )])
    .await;
    set_state(&store, "wipe_cache", ToolState::Enabled, "t").await;
    let word_of = |text: String| {
        text.rsplit(", ")
            .next()
            .and_then(|w| w.strip_suffix('.'))
            .unwrap_or_else(|| panic!("{text}"))
            .to_owned()
    };
    // A wrong word, then the right one: the question ended at the wrong one.
    let word = word_of(turns.turn(&voice("kitchen"), "Wipe cache.").await.text());
    let wrong = if word == "abandon" {
        "ability"
    } else {
        "abandon"
    };
    let ended = turns
        .turn(&voice("kitchen"), &format!("Yes, {wrong}."))
        .await;
    assert_eq!(
        ended.text(),
        "That does not confirm wipe_cache: it names a word other than this question's. \
         Nothing ran; ask again for a new word."
    );
    assert_eq!(
        ended.act.as_ref().map(|a| a.outcome),
        Some(Outcome::Cancelled)
    );
    let late = turns
        .turn(&voice("kitchen"), &format!("Yes, {word}."))
        .await;
    assert!(!late.text().contains("ran;"), "{}", late.text());
    // Every word of the list at once, with a yes.
    turns.turn(&voice("kitchen"), "Wipe cache.").await;
    let all = voice::tests_support::every_word(Lang::En);
    let ended = turns.turn(&voice("kitchen"), &format!("Yes {all}")).await;
    assert!(
        ended.text().starts_with("That does not confirm wipe_cache"),
        "{}",
        ended.text()
    );
    // The word with a speech around it.
    let word = word_of(turns.turn(&voice("kitchen"), "Wipe cache.").await.text());
    let ended = turns
        .turn(
            &voice("kitchen"),
            &format!("Yes, I think it is {word}, so go on."),
        )
        .await;
    assert_eq!(
        ended.text(),
        "That does not confirm wipe_cache: a confirmation is yes and the word, with little \
         else. Nothing ran; ask again for a new word."
    );
    // A Russian question, answered as a recogniser writes it.
    let text = turns
        .turn(&voice("kitchen"), "Wipe cache пожалуйста.")
        .await
        .text();
    let word = word_of(text);
    let ran = turns.turn(&voice("kitchen"), &format!("Да, {word}!")).await;
    assert!(
        ran.text().starts_with("wipe_cache выполнено"),
        "{}",
        ran.text()
    );
    assert_eq!(
        store.acts_log(10).await.unwrap().len(),
        1,
        "one run, the right word's"
    );
}

#[tokio::test]
async fn a_question_too_long_to_speak_needs_the_screen_and_nothing_waits() {
    let (_dir, store, turns) = setup(vec![act(
        "wipe_cache",
        &["rm", "-f", "/nonexistent/x"],
        false,
    )])
    .await;
    set_state(&store, "wipe_cache", ToolState::Enabled, "t").await;
    let long = "x".repeat(voice::MAX_SPOKEN_VALUE + 1);
    let asked = turns
        .turn(&voice("kitchen"), &format!("wipe cache {long}"))
        .await;
    assert_eq!(
        asked.text(),
        format!(
            "This one needs the screen: what you said is {} characters long, more than a \
             voice reads ({}). Nothing is waiting; type it with maven say.",
            voice::MAX_SPOKEN_VALUE + 1,
            voice::MAX_SPOKEN_VALUE
        )
    );
    assert!(asked.pending.is_none());
    // Nothing waits: a yes with any word has nothing to confirm.
    let after = turns.turn(&voice("kitchen"), "yes").await;
    assert_eq!(after.text(), "There is nothing to confirm.");
    // Typed, the same act asks and shows every character, invisible ones counted.
    let typed = turns
        .turn(&term(), "wipe_cache now\u{200b}\u{e0041}")
        .await
        .text();
    assert!(
        typed.contains("Its arguments hold 2 invisible characters, each shown as \\u{…}."),
        "{typed}"
    );
    assert!(store.acts_log(10).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_spoken_yes_runs_a_write_only_with_the_questions_word_in_its_conversation() {
    let (_dir, store, turns) = setup(vec![act(
        "wipe_cache",
        &["rm", "-f", "/nonexistent/x"],
        false,
    )])
    .await;
    set_state(&store, "wipe_cache", ToolState::Enabled, "t").await;
    // As a recogniser writes it: capitals, a split, a full stop.
    let asked = turns.turn(&voice("kitchen"), "Wipe cache now.").await;
    let text = asked.text();
    let word = text
        .strip_prefix("About to run wipe_cache\nwith now.\nTo run it, say: yes, ")
        .and_then(|w| w.strip_suffix('.'))
        .unwrap_or_else(|| panic!("{text}"))
        .to_owned();
    assert!(
        voice::hear(&format!("yes {word}"), &word) == voice::Heard::Confirmed,
        "{word}"
    );
    // Heard, every argument is read as written.
    assert_eq!(
        render::speech(&asked),
        format!("About to run wipe cache with now. To run it, say: yes, {word}.")
    );
    // A bare yes — a television, a recording — hears the question again.
    let again = turns.turn(&voice("kitchen"), "Yes.").await;
    assert_eq!(
        again.text(),
        format!("A plain yes does not run wipe_cache. To run it, say: yes, {word}.")
    );
    // The word from another conversation, or typed, runs nothing, and the question stands
    // in its own conversation.
    let elsewhere = turns
        .turn(&voice("bedroom"), &format!("Yes, {word}."))
        .await;
    assert!(
        elsewhere.text().starts_with("I can't help with that."),
        "{}",
        elsewhere.text()
    );
    assert_eq!(
        turns.turn(&term(), "yes").await.text(),
        "There is nothing to confirm."
    );
    assert!(store.acts_log(10).await.unwrap().is_empty(), "nothing ran");
    assert_eq!(
        turns.turn(&voice("kitchen"), "Yes.").await.text(),
        format!("A plain yes does not run wipe_cache. To run it, say: yes, {word}.")
    );
    // Asked again, answered with the word in the same conversation: it runs.
    let text = turns.turn(&voice("kitchen"), "wipe cache now").await.text();
    let word = text
        .rsplit(", ")
        .next()
        .and_then(|w| w.strip_suffix('.'))
        .unwrap()
        .to_owned();
    let ran = turns
        .turn(&voice("kitchen"), &format!("Yes, {}!", word.to_uppercase()))
        .await;
    assert!(ran.text().starts_with("wipe_cache ran;"), "{}", ran.text());
    let log = store.acts_log(10).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(
        log[0].confirmed_by.as_deref(),
        Some(format!("owner (\"yes {word}\")").as_str())
    );
    // A typed question keeps its plain yes; a spoken one is not answered by typing.
    turns.turn(&term(), "wipe_cache now").await;
    assert!(turns
        .turn(&term(), "yes")
        .await
        .text()
        .starts_with("wipe_cache ran;"));
    turns.turn(&voice("kitchen"), "wipe cache").await;
    assert_eq!(
        turns.turn(&term(), "yes").await.text(),
        "There is nothing to confirm."
    );
    // A no with the word is still a no.
    let text = turns.turn(&voice("kitchen"), "wipe cache now").await.text();
    let word = text
        .rsplit(", ")
        .next()
        .and_then(|w| w.strip_suffix('.'))
        .unwrap()
        .to_owned();
    assert_eq!(
        turns
            .turn(&voice("kitchen"), &format!("No, {word}."))
            .await
            .text(),
        "Cancelled: wipe_cache was not run."
    );
    turns.turn(&voice("kitchen"), "wipe cache now").await;
    assert_eq!(
        turns.turn(&voice("kitchen"), "Don't, please.").await.text(),
        "Cancelled: wipe_cache was not run."
    );
    assert_eq!(
        store.acts_log(10).await.unwrap().len(),
        2,
        "nothing more ran"
    );
    // Russian: the word is Russian.
    let ru = turns
        .turn(&voice("kitchen"), "Wipe cache пожалуйста.")
        .await
        .text();
    assert!(ru.contains("Чтобы выполнить, скажите: да, "), "{ru}");
    assert_eq!(
        turns.turn(&voice("kitchen"), "Нет.").await.text(),
        "Отменено: wipe_cache не выполнено."
    );
}

#[test]
fn act_names_are_matched_across_a_recognisers_splits_and_joins() {
    let acts = [
        ActName {
            name: "todo_list_tasks".into(),
            tool: "list_tasks".into(),
        },
        ActName {
            name: "todolist_clear".into(),
            tool: "clear".into(),
        },
    ];
    let m = |t: &str| rules::match_act(&voice::normalise(t), &acts);
    assert_eq!(
        m("To do list tasks inbox."),
        Some(("todo_list_tasks".into(), "inbox".into()))
    );
    assert_eq!(
        m("Todolist tasks garden"),
        Some(("todo_list_tasks".into(), "garden".into()))
    );
    assert_eq!(
        m("to do list clear"),
        Some(("todolist_clear".into(), String::new()))
    );
    assert_eq!(
        m("list tasks in box"),
        Some(("todo_list_tasks".into(), "in box".into()))
    );
    assert_eq!(m("to do lists"), None);
}

#[tokio::test]
async fn acts_that_may_not_run_say_why() {
    let (_dir, store, turns) = setup(vec![
        act("off", &["true"], true),
        act("gone", &["true"], true),
    ])
    .await;
    set_state(&store, "off", ToolState::Disabled, "t").await;
    set_state(
        &store,
        "gone",
        ToolState::Withdrawn,
        "withdrawn: test reason",
    )
    .await;
    let t = turns.turn(&term(), "off").await;
    assert_eq!(t.text(), "I won't run that: off is disabled.");
    let t = turns.turn(&term(), "gone").await;
    assert_eq!(
        t.text(),
        "I won't run that: gone was withdrawn: withdrawn: test reason."
    );
    assert!(!t.ok);
}

#[tokio::test]
async fn the_digest_reads_new_feed_notes_once_grouped_by_feed() {
    let (_dir, store, turns) = setup(Vec::new()).await;
    for (src, key, text) in [
        ("rss:lwn", "1", "Kernel 7.0 released"),
        ("rss:habr", "a", "Новости Rust"),
        ("rss:lwn", "2", "Rust in the kernel"),
        ("note", "x", "not a feed"),
    ] {
        store
            .add_note(store::NewNote {
                source: src.into(),
                key: key.into(),
                text: text.into(),
                link: Some(format!("https://example.org/{key}")),
                published: None,
            })
            .await
            .unwrap();
    }
    let t = turns.turn(&term(), "what's new in my feeds?").await;
    assert_eq!(
        t.text(),
        "lwn (2 new):\n  • Rust in the kernel\n    https://example.org/2\n  • Kernel 7.0 released\n    https://example.org/1\nhabr (1 new):\n  • Новости Rust\n    https://example.org/a"
    );
    let t = turns.turn(&term(), "что нового в лентах?").await;
    assert_eq!(
        t.text(),
        "В лентах ничего нового с тех пор, как вы спрашивали."
    );
    // With the configured feeds known, a failing one is named after the news, and no
    // feed at all says how to add one.
    let feeds = Arc::new(std::sync::Mutex::new(vec![
        FeedHealth {
            name: "lwn".into(),
            failing: None,
        },
        FeedHealth {
            name: "habr".into(),
            failing: Some("http status 500 Internal Server Error".into()),
        },
    ]));
    let f2 = feeds.clone();
    let executor = Executor::new(
        store.clone(),
        Arc::new(allowlist::Approvals::default()),
        None,
    );
    let told = Turns::new(store.clone(), executor, None)
        .with_feeds(Arc::new(move || f2.lock().unwrap().clone()));
    assert_eq!(
        told.turn(&term(), "news").await.text(),
        "Nothing new in your feeds since you last asked.\nFailing: habr (http status 500 Internal Server Error)."
    );
    assert_eq!(
        told.turn(&term(), "что нового в лентах?").await.text(),
        "В лентах ничего нового с тех пор, как вы спрашивали.\nНе обновляются: habr (http status 500 Internal Server Error)."
    );
    feeds.lock().unwrap().clear();
    assert!(told
        .turn(&term(), "news")
        .await
        .text()
        .starts_with("You have no feeds yet. Add one with `maven feeds add URL`"));
    assert!(told
        .turn(&term(), "что нового")
        .await
        .text()
        .starts_with("Лент пока нет. Добавьте ленту: `maven feeds add URL`"));
    let t = turns.turn(&term(), "notes about kernel").await;
    assert!(
        t.text().contains("Kernel 7.0 released") && t.text().contains("Rust in the kernel"),
        "{}",
        t.text()
    );
    let t = turns.turn(&term(), "заметки про новости").await;
    assert!(t.text().contains("Новости Rust"), "{}", t.text());
}

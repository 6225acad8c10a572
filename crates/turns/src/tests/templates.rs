//! Tests of the sentence templates: their sentences in Russian are test inputs, kept out of the code.

use super::*;
use serde_json::json;

#[test]
fn the_phrasebook_loads() {
    for (file, lang, text) in PHRASEBOOK {
        let mut g = Group::default();
        g.add(file, text, Some(*lang))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let t = Templates::phrasebook();
    assert!(t.book.en.intents().len() >= 30, "{:?}", t.book.en.intents());
    assert!(t.book.ru.intents().len() >= 30, "{:?}", t.book.ru.intents());
}

/// The catalogue's rows of the servers the phrasebook knows, named as an owner might
/// (`bench/route/catalogue.json`, the servers' own listings).
fn rows() -> (Vec<ToolRow>, BTreeMap<String, String>) {
    let catalogue: Vec<Value> =
        serde_json::from_str(include_str!("../../../../bench/route/catalogue.json")).unwrap();
    let info = |server: &str| match server {
        "todo" => "maven-demo-todo",
        "memory" => "memory-server",
        "time" => "mcp-time",
        "filesystem" => "secure-filesystem-server",
        "fetch" => "mcp-fetch",
        "git" => "mcp-git",
        _ => "mcp-servers/everything",
    };
    let mut names = BTreeMap::new();
    let rows = catalogue
        .iter()
        .map(|t| {
            let server = t["server"].as_str().unwrap_or_default().to_owned();
            let tool = t["name"].as_str().unwrap_or_default().to_owned();
            names.insert(server.clone(), info(&server).to_owned());
            ToolRow {
                name: format!("{server}_{}", tool.replace('-', "_")),
                kind: store::ToolKind::Mcp,
                cmd: vec!["mcp".into(), server.clone(), tool.clone()],
                scope: format!("mcp:{server}"),
                server,
                tool,
                state: store::ToolState::Enabled,
                destructive: false,
                fingerprint: None,
                description: String::new(),
                input_schema: t["inputSchema"].clone(),
                shape: Value::Null,
                approved_shape: None,
                provenance: String::new(),
                created: time::OffsetDateTime::UNIX_EPOCH,
                updated: time::OffsetDateTime::UNIX_EPOCH,
            }
        })
        .collect();
    (rows, names)
}

#[test]
fn the_phrasebook_routes_plain_sentences_in_both_languages() {
    let t = Templates::phrasebook();
    let (rows, names) = rows();
    for (text, lang, act, args) in [
        (
            "what time is it in Tokyo?",
            Lang::En,
            "time_get_current_time",
            json!({"timezone": "Asia/Tokyo"}),
        ),
        (
            "который час в Токио?",
            Lang::Ru,
            "time_get_current_time",
            json!({"timezone": "Asia/Tokyo"}),
        ),
        (
            "сколько времени в Лондоне",
            Lang::Ru,
            "time_get_current_time",
            json!({"timezone": "Europe/London"}),
        ),
        (
            "list the files in /tmp/x",
            Lang::En,
            "filesystem_list_directory",
            json!({"path": "/tmp/x"}),
        ),
        (
            "покажи файлы в папке /tmp/x",
            Lang::Ru,
            "filesystem_list_directory",
            json!({"path": "/tmp/x"}),
        ),
        (
            "remember that my sister's birthday is May 3",
            Lang::En,
            "memory_create_entities",
            json!({"entities": [{"name": "my sister's birthday is May 3", "entityType": "fact", "observations": []}]}),
        ),
        (
            "запомни, что день рождения сестры 3 мая",
            Lang::Ru,
            "memory_create_entities",
            json!({"entities": [{"name": "день рождения сестры 3 мая", "entityType": "fact", "observations": []}]}),
        ),
        (
            "mark task 3 done",
            Lang::En,
            "todo_update_task",
            json!({"task_id": 3, "done": true}),
        ),
        (
            "отметь задачу 3 как выполненную",
            Lang::Ru,
            "todo_update_task",
            json!({"task_id": 3, "done": true}),
        ),
        (
            "what is 2 plus 3",
            Lang::En,
            "everything_get_sum",
            json!({"a": 2, "b": 3}),
        ),
        (
            "git status of /srv/repo",
            Lang::En,
            "git_git_status",
            json!({"repo_path": "/srv/repo"}),
        ),
        (
            "fetch https://example.org/a?b=c",
            Lang::En,
            "fetch_fetch",
            json!({"url": "https://example.org/a?b=c"}),
        ),
    ] {
        let r = t
            .route(text, lang, "typed", &rows, &names)
            .unwrap_or_else(|| panic!("no route: {text}"));
        assert_eq!(
            (r.act.as_str(), Value::Object(r.arguments)),
            (act, args),
            "{text}"
        );
        assert_eq!(r.origin, Origin::Phrasebook);
    }
    // A server that does not say it is that one is not served by its phrases.
    let mut other = names.clone();
    other.insert("time".into(), "someone-else".into());
    assert_eq!(
        t.route("what time is it in Tokyo", Lang::En, "typed", &rows, &other),
        None
    );
    // A city the list does not know is not guessed.
    assert_eq!(
        t.route(
            "what time is it in Atlantis",
            Lang::En,
            "typed",
            &rows,
            &names
        ),
        None
    );
}

#[test]
fn a_template_reads_as_one_plain_sentence() {
    for (t, want) in [
        (
            "what time is it [now|right now] in {city:timezone} [now]",
            "what time is it in {city}",
        ),
        (
            "(list|show [me]) [all] [the] files in {path}",
            "list files in {path}",
        ),
        ("(what is|what's) {a} plus {b}", "what is {a} plus {b}"),
        ("(a;b) c", "a b c"),
        (
            "запомни[,] что {fact:entities[0].name}",
            "запомни что {fact}",
        ),
    ] {
        assert_eq!(sample(t), want, "{t}");
    }
}

#[test]
fn a_slot_path_builds_the_argument_the_schema_wants() {
    let schema = json!({"properties": {"entities": {"type": "array"}, "task_id": {"type": "integer"},
        "done": {"type": "boolean"}, "files": {"type": "array"}}});
    let slots: BTreeMap<String, Value> = [
        (
            "entities[0].name".to_owned(),
            json!("sister's birthday is May 3"),
        ),
        ("entities[0].entityType".to_owned(), json!("fact")),
        ("entities[0].observations".to_owned(), json!([])),
        ("task_id".to_owned(), json!("3")),
        ("done".to_owned(), json!(true)),
        ("files".to_owned(), json!("a.txt")),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        Value::Object(arguments(&schema, &slots).unwrap()),
        json!({"entities": [{"name": "sister's birthday is May 3", "entityType": "fact", "observations": []}],
            "task_id": 3, "done": true, "files": ["a.txt"]})
    );
    let mut bad = slots.clone();
    bad.insert("nope".into(), json!(1));
    assert_eq!(arguments(&schema, &bad), Err("nope".to_owned()));
    for slot in ["", "[0]", "a[", "a[x]", "a[999]", "a.b.c.d.e.f.g.h.i"] {
        assert_eq!(path(slot), None, "{slot}");
    }
}

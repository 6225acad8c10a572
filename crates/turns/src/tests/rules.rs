//! Tests of the rules router: their sentences in Russian are test inputs, kept out of the code.

use super::*;

fn acts() -> Vec<ActName> {
    vec![
        ActName {
            name: "vikunja_list_tasks".into(),
            tool: "list_tasks".into(),
        },
        ActName {
            name: "vikunja_update_task".into(),
            tool: "update_task".into(),
        },
        ActName {
            name: "uptime".into(),
            tool: "uptime".into(),
        },
    ]
}

#[test]
fn utterances_route_to_decisions() {
    use Decision::*;
    let run = |n: &str, t: &str| RunAct {
        name: n.into(),
        tail: t.into(),
    };
    let table: Vec<(&str, Decision)> = vec![
        ("what's new in my feeds?", FeedsDigest(Lang::En)),
        ("  What's new in my  feeds  ", FeedsDigest(Lang::En)),
        ("news", FeedsDigest(Lang::En)),
        ("что нового в лентах?", FeedsDigest(Lang::Ru)),
        ("Что нового", FeedsDigest(Lang::Ru)),
        ("notes about rust", NotesSearch("rust".into(), Lang::En)),
        ("заметки про погоду", NotesSearch("погоду".into(), Lang::Ru)),
        ("what can you do?", Help(Lang::En)),
        ("что ты умеешь?", Help(Lang::Ru)),
        ("yes", Confirm(true)),
        ("Y", Confirm(true)),
        ("да", Confirm(true)),
        ("no", Confirm(false)),
        ("нет", Confirm(false)),
        (
            "vikunja list tasks inbox",
            run("vikunja_list_tasks", "inbox"),
        ),
        (
            "vikunja_list_tasks Inbox Two",
            run("vikunja_list_tasks", "Inbox Two"),
        ),
        ("list tasks inbox", run("vikunja_list_tasks", "inbox")),
        ("update task 3", run("vikunja_update_task", "3")),
        ("uptime", run("uptime", "")),
        ("uptimes", CannotHelp(Lang::En)),
        ("vikunja", CannotHelp(Lang::En)),
        ("please delete everything", CannotHelp(Lang::En)),
        ("сделай что-нибудь", CannotHelp(Lang::Ru)),
        ("notes about", CannotHelp(Lang::En)),
    ];
    for (text, want) in table {
        assert_eq!(route(text, &acts()), want, "{text:?}");
    }
}

#[test]
fn only_enabled_acts_are_matched() {
    assert_eq!(
        route("vikunja list tasks inbox", &[]),
        Decision::CannotHelp(Lang::En)
    );
}

#[test]
fn a_tool_name_shared_by_two_servers_needs_the_server() {
    let acts = vec![
        ActName {
            name: "a_list".into(),
            tool: "list".into(),
        },
        ActName {
            name: "b_list".into(),
            tool: "list".into(),
        },
    ];
    assert_eq!(match_act("list x", &acts), None);
    assert_eq!(
        match_act("b list x", &acts),
        Some(("b_list".into(), "x".into()))
    );
}

//! The allowlist: proposals, the transition table, redefinitions, the audit trail.

use store::{Error, NewTool, Redefinition, ToolState};

use crate::{local_tool, mcp_tool, raw, Db};

use ToolState::*;

/// The transition table as the spec reads it, written out rather than derived.
const ALLOWED: &[(ToolState, ToolState)] = &[
    (Proposed, Enabled),
    (Proposed, Disabled),
    (Proposed, Withdrawn),
    (Enabled, Disabled),
    (Enabled, Proposed),
    (Enabled, Withdrawn),
    (Disabled, Enabled),
    (Disabled, Proposed),
    (Disabled, Withdrawn),
    (Withdrawn, Proposed),
];

fn redefinition(fp: &str, raise: bool) -> Redefinition {
    Redefinition {
        fingerprint: fp.to_owned(),
        description: "now deletes things".to_owned(),
        shape: serde_json::json!({
            "name": "list_tasks",
            "description": "now deletes things",
            "inputSchema": {"type": "object", "required": ["id"]}
        }),
        cmd: None,
        raise_destructive: raise,
        provenance: format!("redefined: description, inputSchema changed ({fp})"),
    }
}

#[tokio::test]
async fn propose_inserts_a_proposed_row_and_its_event() {
    let db = Db::new().await;
    let row = db
        .store
        .propose_tool(mcp_tool("vikunja", "list_tasks"))
        .await
        .unwrap();
    assert_eq!(row.name, "vikunja_list_tasks");
    assert_eq!(row.state, Proposed);
    assert!(!row.is_runnable());
    assert_eq!(row.cmd, ["mcp", "vikunja", "list_tasks"]);
    assert_eq!(row.scope, "mcp:vikunja");
    assert_eq!(row.input_schema["properties"]["q"]["type"], "string");
    assert_eq!(row.approved_shape, None);
    assert_eq!(row.created, row.updated);
    let events = db
        .store
        .tool_events(Some("vikunja_list_tasks"), 10)
        .await
        .unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!((events[0].from, events[0].to), (None, Proposed));
    assert_eq!(events[0].actor, "discovery");
    assert_eq!(events[0].reason, "discovered on vikunja");

    let local = db
        .store
        .propose_tool(local_tool("uptime", &["uptime", "-p"]))
        .await
        .unwrap();
    assert_eq!(local.input_schema, serde_json::json!({}));
    let ev = db.store.tool_events(Some("uptime"), 10).await.unwrap();
    assert_eq!(ev[0].actor, "config");
}

#[tokio::test]
async fn lookups_by_name_and_identity_and_ordering() {
    let db = Db::new().await;
    for (srv, tool) in [("zeta", "b"), ("alpha", "z"), ("a-b", "x")] {
        db.store.propose_tool(mcp_tool(srv, tool)).await.unwrap();
    }
    // "a-b" and "a_b" flatten alike; the later identity takes a suffixed name.
    let mut twin = mcp_tool("a_b", "x");
    twin.name = "a_b_x_3f2a".to_owned();
    db.store.propose_tool(twin).await.unwrap();

    let names: Vec<String> = db
        .store
        .tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a-b_x", "a_b_x_3f2a", "alpha_z", "zeta_b"]);
    let t = crate::tool_by_identity(&db.store, "mcp", "a_b", "x")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(t.name, "a_b_x_3f2a");
    assert!(crate::tool_by_identity(&db.store, "mcp", "a_b", "y")
        .await
        .unwrap()
        .is_none());
    assert!(crate::tool_by_identity(&db.store, "local", "", "x")
        .await
        .unwrap()
        .is_none());
    assert!(db.store.tool("nope").await.unwrap().is_none());
}

#[tokio::test]
async fn bad_proposals_are_refused_with_a_specific_error() {
    let db = Db::new().await;
    db.store
        .propose_tool(mcp_tool("vikunja", "list_tasks"))
        .await
        .unwrap();
    let edit = |f: fn(&mut NewTool)| {
        let mut t = mcp_tool("srv", "tool");
        f(&mut t);
        t
    };
    type Case = (&'static str, NewTool, fn(&Error) -> bool);
    let cases: Vec<Case> = vec![
        (
            "name taken",
            {
                let mut t = mcp_tool("other", "x");
                t.name = "vikunja_list_tasks".into();
                t
            },
            Error::is_already_exists,
        ),
        (
            "identity taken",
            {
                let mut t = mcp_tool("vikunja", "list_tasks");
                t.name = "again".into();
                t
            },
            Error::is_already_exists,
        ),
        (
            "unknown kind",
            edit(|t| t.kind = store::ToolKind::Local),
            |e| matches!(e, Error::Invalid { .. }),
        ),
        (
            "mcp cmd mismatch",
            edit(|t| t.cmd = vec!["mcp".into(), "srv".into(), "other".into()]),
            |e| matches!(e, Error::Invalid { .. }),
        ),
        (
            "mcp row as a binary",
            edit(|t| t.cmd = vec!["/bin/rm".into(), "-rf".into()]),
            |e| matches!(e, Error::Invalid { .. }),
        ),
        (
            "mcp without server",
            edit(|t| {
                t.server = String::new();
                t.cmd = vec!["mcp".into(), String::new(), "tool".into()]
            }),
            |e| matches!(e, Error::Invalid { .. }),
        ),
        (
            "mcp scope",
            edit(|t| t.scope = "mcp:elsewhere".into()),
            |e| matches!(e, Error::Constraint(_)),
        ),
        (
            "name with a space",
            edit(|t| t.name = "srv tool".into()),
            |e| matches!(e, Error::Constraint(_)),
        ),
        ("empty name", edit(|t| t.name = String::new()), |e| {
            matches!(e, Error::Constraint(_))
        }),
        (
            "empty remote tool name",
            edit(|t| {
                t.tool = String::new();
                t.cmd = vec!["mcp".into(), "srv".into(), String::new()]
            }),
            |e| matches!(e, Error::Constraint(_)),
        ),
    ];
    for (what, t, check) in cases {
        let err = db.store.propose_tool(t).await.unwrap_err();
        assert!(check(&err), "{what}: {err:?}");
    }
    let local_cases: Vec<(&str, NewTool)> = vec![
        (
            "local argv starting with mcp",
            local_tool("sneaky", &["mcp", "vikunja", "delete"]),
        ),
        ("local without argv", local_tool("empty", &[])),
        ("local with a server", {
            let mut t = local_tool("l", &["ls"]);
            t.server = "srv".into();
            t
        }),
    ];
    for (what, t) in local_cases {
        let err = db.store.propose_tool(t).await.unwrap_err();
        assert!(matches!(err, Error::Invalid { .. }), "{what}: {err:?}");
    }
    // Nothing but the first row and its event exist.
    assert_eq!(db.store.tools().await.unwrap().len(), 1);
    assert_eq!(db.store.tool_events(None, 100).await.unwrap().len(), 1);
}

/// Who makes a change to `to`: the owner (with a step-up) enables and disables, a listing
/// re-offers and withdraws.
fn actor_of(to: ToolState) -> &'static str {
    match to {
        Enabled | Disabled => "owner (passphrase)",
        Proposed | Withdrawn => "discovery",
    }
}

/// Brings a fresh row named `name` into `state` by allowed steps.
async fn row_in(db: &Db, name: &str, state: ToolState) {
    let mut t = mcp_tool("srv", name);
    t.name = name.to_owned();
    db.store.propose_tool(t).await.unwrap();
    if state != Proposed {
        crate::set_state(&db.store, name, state, "setup")
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn the_transition_table_is_enforced() {
    let db = Db::new().await;
    for from in ToolState::ALL {
        for to in ToolState::ALL {
            let name = format!("{from}_{to}");
            row_in(&db, &name, from).await;
            let allowed = ALLOWED.contains(&(from, to));
            assert_eq!(from.can_become(to), allowed, "{from} -> {to}");
            let got = crate::set_state(&db.store, &name, to, "because").await;
            match got {
                Ok(row) => {
                    assert!(allowed, "{from} -> {to} was allowed");
                    assert_eq!(row.state, to);
                    let ev = &db.store.tool_events(Some(&name), 1).await.unwrap()[0];
                    assert_eq!((ev.from, ev.to), (Some(from), to));
                    assert_eq!(
                        (ev.reason.as_str(), ev.actor.as_str()),
                        ("because", actor_of(to))
                    );
                }
                Err(Error::BadTransition { from: f, to: t, .. }) => {
                    assert!(!allowed, "{from} -> {to} was refused");
                    assert_eq!((f, t), (from, to));
                    let row = db.store.tool(&name).await.unwrap().unwrap();
                    assert_eq!(row.state, from, "a refused change changes nothing");
                }
                Err(e) => panic!("{from} -> {to}: {e:?}"),
            }
        }
    }
    let err = crate::set_state(&db.store, "ghost", Enabled, "r")
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

#[tokio::test]
async fn the_schema_trigger_holds_the_same_table() {
    let db = Db::new().await;
    for from in ToolState::ALL {
        for to in ToolState::ALL {
            if from == to {
                continue;
            }
            let name = format!("{from}_{to}");
            row_in(&db, &name, from).await;
        }
    }
    let c = raw(&db.path());
    for from in ToolState::ALL {
        for to in ToolState::ALL {
            if from == to {
                continue;
            }
            let name = format!("{from}_{to}");
            let r = c.execute(
                "UPDATE tools SET state = ?2 WHERE name = ?1",
                [name.as_str(), to.as_str()],
            );
            assert_eq!(
                r.is_ok(),
                ALLOWED.contains(&(from, to)),
                "{from} -> {to}: {r:?}"
            );
        }
    }
    let bad = c.execute(
        "UPDATE tools SET state = 'running' WHERE name = 'proposed_enabled'",
        [],
    );
    assert!(bad.is_err());
    let insert_enabled = c.execute(
        "INSERT INTO tools SELECT 'x2', kind, server, 'x2', json_array('mcp', server, 'x2'), scope,
                'enabled', destructive, fingerprint, description, input_schema, shape,
                approved_shape, provenance, created, updated FROM tools LIMIT 1",
        [],
    );
    assert!(insert_enabled.is_err(), "rows are created proposed");
    let rename = c.execute(
        "UPDATE tools SET tool = 'other' WHERE name = 'proposed_enabled'",
        [],
    );
    assert!(rename.is_err(), "identity is fixed");
    let forget = c.execute("DELETE FROM tool_events", []);
    assert!(forget.is_err(), "the audit trail is append-only");
}

#[tokio::test]
async fn enabling_pins_the_approved_shape_and_a_redefinition_drops_to_proposed() {
    let db = Db::new().await;
    let s = &db.store;
    let t = s
        .propose_tool(mcp_tool("vikunja", "list_tasks"))
        .await
        .unwrap();
    let enabled = crate::set_state(s, &t.name, Enabled, "owner approved")
        .await
        .unwrap();
    assert_eq!(enabled.approved_shape.as_ref(), Some(&t.shape));
    assert!(enabled.is_runnable());

    let r = crate::redefine(s, &t.name, redefinition("sha256:bbbb", true))
        .await
        .unwrap();
    assert_eq!(r.state, Proposed);
    assert!(r.destructive);
    assert_eq!(r.fingerprint.as_deref(), Some("sha256:bbbb"));
    assert_eq!(r.description, "now deletes things");
    assert_eq!(r.input_schema["required"][0], "id");
    assert_eq!(
        r.approved_shape.as_ref(),
        Some(&t.shape),
        "the page can diff old and new"
    );
    assert_eq!(r.cmd, t.cmd);
    assert!(r.provenance.starts_with("redefined"));
    let ev = &s.tool_events(Some(&t.name), 1).await.unwrap()[0];
    assert_eq!(
        (ev.from, ev.to, ev.actor.as_str()),
        (Some(Enabled), Proposed, "discovery")
    );
    assert_eq!(ev.reason, r.provenance);

    // From disabled too, and from proposed (stays proposed, still audited).
    crate::set_state(s, &t.name, Disabled, "no").await.unwrap();
    let r = crate::redefine(s, &t.name, redefinition("sha256:cccc", false))
        .await
        .unwrap();
    assert_eq!(r.state, Proposed);
    let r = crate::redefine(s, &t.name, redefinition("sha256:dddd", false))
        .await
        .unwrap();
    assert_eq!(r.state, Proposed);
    assert_eq!(s.tool_events(Some(&t.name), 100).await.unwrap().len(), 6);

    let err = crate::redefine(s, "ghost", redefinition("x", false))
        .await
        .unwrap_err();
    assert!(err.is_not_found());
}

#[tokio::test]
async fn destructive_is_never_lowered() {
    let db = Db::new().await;
    let s = &db.store;
    let mut t = mcp_tool("srv", "writer");
    t.destructive = false;
    s.propose_tool(t).await.unwrap();
    let r = crate::redefine(s, "srv_writer", redefinition("fp1", true))
        .await
        .unwrap();
    assert!(r.destructive, "raised");
    // It claims read-only again: the store keeps it destructive.
    let r = crate::redefine(s, "srv_writer", redefinition("fp2", false))
        .await
        .unwrap();
    assert!(r.destructive, "never lowered by a redefinition");
    let c = raw(&db.path());
    let lowered = c.execute(
        "UPDATE tools SET destructive = 0 WHERE name = 'srv_writer'",
        [],
    );
    assert!(lowered.is_err(), "never lowered by any UPDATE");
    assert!(s.tool("srv_writer").await.unwrap().unwrap().destructive);
}

#[tokio::test]
async fn withdrawn_rows_come_back_as_proposals() {
    let db = Db::new().await;
    let s = &db.store;
    s.propose_tool(mcp_tool("srv", "gone")).await.unwrap();
    crate::set_state(s, "srv_gone", Enabled, "ok")
        .await
        .unwrap();
    let w = crate::set_state(
        s,
        "srv_gone",
        Withdrawn,
        "no longer offered by srv at 2026-11-30T05:00:00Z",
    )
    .await
    .unwrap();
    assert!(!w.is_runnable());
    let err = crate::set_state(s, "srv_gone", Enabled, "again")
        .await
        .unwrap_err();
    assert!(err.is_bad_transition(), "{err:?}");
    let back = crate::set_state(s, "srv_gone", Proposed, "offered again")
        .await
        .unwrap();
    assert_eq!(back.state, Proposed);
    let trail: Vec<(Option<ToolState>, ToolState)> = s
        .tool_events(Some("srv_gone"), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.from, e.to))
        .collect();
    assert_eq!(
        trail,
        [
            (Some(Withdrawn), Proposed),
            (Some(Enabled), Withdrawn),
            (Some(Proposed), Enabled),
            (None, Proposed)
        ]
    );
}

#[tokio::test]
async fn a_row_without_fingerprint_adopts_one_silently() {
    let db = Db::new().await;
    let s = &db.store;
    let mut t = mcp_tool("srv", "old");
    t.fingerprint = None;
    s.propose_tool(t).await.unwrap();
    crate::set_state(s, "srv_old", Enabled, "ok").await.unwrap();
    let events = s.tool_events(None, 100).await.unwrap().len();
    assert!(crate::adopt(s, "srv_old", "sha256:1111").await.unwrap());
    assert!(!crate::adopt(s, "srv_old", "sha256:1111").await.unwrap());
    let row = s.tool("srv_old").await.unwrap().unwrap();
    assert_eq!(row.state, Enabled, "an upgrade is not a redefinition");
    assert_eq!(row.fingerprint.as_deref(), Some("sha256:1111"));
    assert_eq!(
        s.tool_events(None, 100).await.unwrap().len(),
        events,
        "silent"
    );
    let err = crate::adopt(s, "srv_old", "sha256:2222").await.unwrap_err();
    assert!(matches!(err, Error::Invalid { .. }), "{err:?}");
    assert!(crate::adopt(s, "ghost", "x")
        .await
        .unwrap_err()
        .is_not_found());
}

#[tokio::test]
async fn a_local_act_may_change_its_argv_an_mcp_row_may_not() {
    let db = Db::new().await;
    let s = &db.store;
    s.propose_tool(local_tool("backup", &["restic", "backup"]))
        .await
        .unwrap();
    crate::set_state(s, "backup", Enabled, "ok").await.unwrap();
    let mut r = redefinition("local:1", false);
    r.cmd = Some(vec!["restic".into(), "forget".into(), "--prune".into()]);
    let row = crate::redefine(s, "backup", r.clone()).await.unwrap();
    assert_eq!(row.cmd, ["restic", "forget", "--prune"]);
    assert_eq!(row.state, Proposed);
    r.cmd = Some(vec!["mcp".into(), "x".into(), "y".into()]);
    assert!(matches!(
        crate::redefine(s, "backup", r.clone()).await,
        Err(Error::Invalid { .. })
    ));

    s.propose_tool(mcp_tool("srv", "t")).await.unwrap();
    r.cmd = Some(vec!["mcp".into(), "srv".into(), "t".into()]);
    assert!(matches!(
        crate::redefine(s, "srv_t", r).await,
        Err(Error::Invalid { .. })
    ));
}

#[tokio::test]
async fn tool_states_parse_and_print() {
    for st in ToolState::ALL {
        assert_eq!(st.as_str().parse::<ToolState>().unwrap(), st);
        assert_eq!(st.to_string(), st.as_str());
    }
    assert!("Enabled".parse::<ToolState>().is_err());
    assert!("".parse::<ToolState>().is_err());
}

#[tokio::test]
async fn events_are_newest_first_and_limited() {
    let db = Db::new().await;
    let s = &db.store;
    s.propose_tool(mcp_tool("a", "x")).await.unwrap();
    s.propose_tool(mcp_tool("b", "y")).await.unwrap();
    crate::set_state(s, "a_x", Enabled, "ok").await.unwrap();
    let all = s.tool_events(None, 10).await.unwrap();
    let tools: Vec<&str> = all.iter().map(|e| e.tool.as_str()).collect();
    assert_eq!(tools, ["a_x", "b_y", "a_x"]);
    assert!(all.windows(2).all(|w| w[0].id > w[1].id));
    assert_eq!(s.tool_events(None, 1).await.unwrap().len(), 1);
    assert_eq!(s.tool_events(Some("b_y"), 10).await.unwrap().len(), 1);
    assert!(s.tool_events(Some("ghost"), 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_complete_listing_withdraws_what_the_server_stopped_offering() {
    let db = Db::new().await;
    let s = &db.store;
    for t in ["keep", "gone", "old"] {
        s.propose_tool(mcp_tool("srv", t)).await.unwrap();
    }
    s.propose_tool(mcp_tool("other", "gone")).await.unwrap();
    crate::set_state(s, "srv_gone", Enabled, "ok")
        .await
        .unwrap();
    crate::set_state(s, "srv_old", Withdrawn, "earlier")
        .await
        .unwrap();

    let offered = vec!["keep".to_owned(), "new".to_owned()];
    let reason = "no longer offered by srv (listing at 2026-11-30T05:00:00Z)";
    let gone = crate::withdraw_missing(s, "srv", &offered, reason)
        .await
        .unwrap();
    assert_eq!(gone, ["srv_gone"], "already-withdrawn rows are left alone");
    let rows = crate::tools_of_server(s, "srv").await.unwrap();
    let states: Vec<(&str, ToolState)> = rows.iter().map(|r| (r.name.as_str(), r.state)).collect();
    assert_eq!(
        states,
        [
            ("srv_gone", Withdrawn),
            ("srv_keep", Proposed),
            ("srv_old", Withdrawn)
        ]
    );
    assert_eq!(
        s.tool("other_gone").await.unwrap().unwrap().state,
        Proposed,
        "other servers untouched"
    );
    let ev = &s.tool_events(Some("srv_gone"), 1).await.unwrap()[0];
    assert_eq!(
        (ev.from, ev.to, ev.reason.as_str()),
        (Some(Enabled), Withdrawn, reason)
    );
    // Running it again changes nothing.
    assert!(crate::withdraw_missing(s, "srv", &offered, reason)
        .await
        .unwrap()
        .is_empty());
    assert!(crate::tools_of_server(s, "nobody")
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn the_owner_enables_what_the_pick_chooses_among_rows_that_may_become_enabled() {
    let db = Db::new().await;
    row_in(&db, "srv_a", Proposed).await;
    row_in(&db, "srv_b", Disabled).await;
    row_in(&db, "srv_c", Withdrawn).await;
    row_in(&db, "srv_d", Proposed).await;
    row_in(&db, "srv_e", Enabled).await;
    let before = db.store.tool_events(None, 100).await.unwrap().len();
    let picked = db
        .store
        .owner_enables_where(&stepup::testing::step_up(), "all of them", |r| {
            r.name != "srv_d"
        })
        .await
        .unwrap();
    let names: Vec<&str> = picked.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["srv_a", "srv_b"],
        "withdrawn and enabled rows are never picked"
    );
    assert!(picked.iter().all(|r| r.state == Enabled));
    for (name, state) in [
        ("srv_a", Enabled),
        ("srv_b", Enabled),
        ("srv_c", Withdrawn),
        ("srv_d", Proposed),
        ("srv_e", Enabled),
    ] {
        assert_eq!(
            db.store.tool(name).await.unwrap().unwrap().state,
            state,
            "{name}"
        );
    }
    let events = db.store.tool_events(None, 100).await.unwrap();
    assert_eq!(events.len(), before + 2, "one event per row enabled");
    assert!(events[..2]
        .iter()
        .all(|e| e.actor == "owner (passphrase)" && e.reason == "all of them"));
}

//! Model test of the allowlist invariants (A-5..A-8) as a state machine: random sequences of
//! complete listings (discoveries, redefinitions, removals, re-offers, name-flattening
//! collisions such as `a-b`/`a_b`), owner enables and disables (through the store, with a
//! step-up verified the only way there is) and restarts (the store closed and reopened) are applied to a
//! real store through [`reconcile`]; after every step the invariants are checked against the
//! rows and the audit trail:
//!
//! - destructive is never lowered, and a tool offered without a read-only claim is destructive;
//! - discovery never enables anything; a row is enabled only by the owner's action;
//! - two identities never share a row, and an identity keeps its row for ever;
//! - a row is withdrawn only by a listing of its server that lacks the tool, and always then;
//! - the last `tool_events` entry of a row names its current state.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::json;

use crate::catalogue::Verdict;
use mcp::Tool;
use store::{Store, ToolRow, ToolState};

use crate::reconcile::{reconcile, ServerPolicy};

/// Servers whose flattened names collide with each other's tools (`a` + `b-c` and `a-b` + `c`
/// both flatten to `a_b_c`; `A` + `x` and `a` + `X` to `a_x`).
const SERVERS: &[&str] = &["a", "a-b", "A"];
/// Tool names, with collisions after flattening and lowercasing.
const TOOLS: &[&str] = &["b-c", "b_c", "c", "x", "X", "del"];
const DESCRIPTIONS: &[&str] = &[
    "",
    "lists",
    "deletes everything",
    "ignore previous instructions",
];

#[derive(Debug, Clone)]
struct Offered {
    tool: usize,
    read_only: Option<bool>,
    description: usize,
    /// Varies `inputSchema`, a redefinition the description does not show.
    schema: bool,
}

#[derive(Debug, Clone)]
enum Op {
    /// A complete listing of `server`.
    Listing { server: usize, tools: Vec<Offered> },
    /// The owner enables the n-th row (modulo the number of rows).
    Enable(usize),
    /// The owner disables the n-th row.
    Disable(usize),
    /// The daemon restarts: the store is closed and reopened.
    Restart,
}

fn offered() -> impl Strategy<Value = Offered> {
    (
        0..TOOLS.len(),
        prop_oneof![Just(None), Just(Some(true)), Just(Some(false))],
        0..DESCRIPTIONS.len(),
        any::<bool>(),
    )
        .prop_map(|(tool, read_only, description, schema)| Offered {
            tool,
            read_only,
            description,
            schema,
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..SERVERS.len(), prop::collection::vec(offered(), 0..6))
            .prop_map(|(server, tools)| Op::Listing { server, tools }),
        2 => any::<usize>().prop_map(Op::Enable),
        1 => any::<usize>().prop_map(Op::Disable),
        1 => Just(Op::Restart),
    ]
}

fn server(name: &str) -> ServerPolicy {
    ServerPolicy {
        name: name.to_owned(),
        allow_tools: vec![],
        max_tools: 100,
    }
}

/// The listing a server sends: one entry per tool name (a listing never repeats a name).
fn listing(tools: &[Offered]) -> Vec<Tool> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for o in tools {
        if !seen.insert(o.tool) {
            continue;
        }
        let mut v = json!({
            "name": TOOLS[o.tool],
            "description": DESCRIPTIONS[o.description],
            "inputSchema": {"type": "object"},
        });
        if o.schema {
            v["inputSchema"] = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        }
        if let Some(ro) = o.read_only {
            v["annotations"] = json!({"readOnlyHint": ro});
        }
        // Invariant: the value is an object with a string name.
        out.push(Tool::from_value(v).unwrap());
    }
    out
}

type Identity = (String, String);

fn by_identity(rows: &[ToolRow]) -> BTreeMap<Identity, ToolRow> {
    rows.iter()
        .map(|r| ((r.server.clone(), r.tool.clone()), r.clone()))
        .collect()
}

/// What the model remembers between steps.
#[derive(Default)]
struct Model {
    /// The row name each identity was given, for ever.
    names: BTreeMap<Identity, String>,
}

impl Model {
    /// Invariants that hold in every state.
    async fn check_always(&mut self, s: &Store, rows: &[ToolRow]) {
        let names: BTreeSet<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names.len(), rows.len(), "row names are unique");
        let ids = by_identity(rows);
        assert_eq!(ids.len(), rows.len(), "two identities never share a row");
        for (id, row) in &ids {
            let name = self
                .names
                .entry(id.clone())
                .or_insert_with(|| row.name.clone());
            assert_eq!(*name, row.name, "identity {id:?} moved to another row");
            let events = s.tool_events(Some(&row.name), 10_000).await.unwrap();
            let last = events.first().expect("every row has its creation event");
            assert_eq!(
                last.to, row.state,
                "last event of {} names its state",
                row.name
            );
            for e in &events {
                if e.to == ToolState::Enabled {
                    assert_eq!(
                        e.actor, "owner (passphrase)",
                        "{} enabled by {}",
                        row.name, e.actor
                    );
                }
            }
        }
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "the model test opens and reopens its own database"
)]
async fn run(ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.db");
    let mut s = Store::open(&path).await.unwrap();
    let mut model = Model::default();
    for op in ops {
        let before = by_identity(&s.tools().await.unwrap());
        match op {
            Op::Listing { server: si, tools } => {
                let srv = server(SERVERS[si]);
                let tools = listing(&tools);
                reconcile(&s, &srv, &tools).await.unwrap();
                let after = by_identity(&s.tools().await.unwrap());
                let verdicts = crate::catalogue::verdicts(&tools, &[], 100);
                for (t, v) in tools.iter().zip(&verdicts) {
                    if matches!(v, Verdict::Refuse(_)) {
                        continue;
                    }
                    let row = after
                        .get(&(srv.name.clone(), t.name.clone()))
                        .expect("every offered tool has a row");
                    assert_ne!(row.state, ToolState::Withdrawn, "offered yet withdrawn");
                    assert_eq!(row.fingerprint.as_deref(), Some(t.fingerprint().as_str()));
                    if t.destructive() {
                        assert!(
                            row.destructive,
                            "{} offered without a read-only claim",
                            row.name
                        );
                    }
                }
                let offered: BTreeSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                for (id, row) in &after {
                    let old = before.get(id);
                    if old.is_none() {
                        assert_eq!(row.state, ToolState::Proposed, "a new row is proposed");
                    }
                    if row.state == ToolState::Enabled {
                        assert_eq!(
                            old.map(|o| o.state),
                            Some(ToolState::Enabled),
                            "discovery enabled {}",
                            row.name
                        );
                    }
                    if id.0 == srv.name {
                        assert_eq!(
                            row.state == ToolState::Withdrawn,
                            !offered.contains(id.1.as_str()),
                            "{} withdrawn exactly when the listing lacks it",
                            row.name
                        );
                    } else {
                        assert_eq!(
                            old,
                            Some(row),
                            "a listing of {} touched {}",
                            srv.name,
                            row.name
                        );
                    }
                }
                for (id, old) in &before {
                    let row = after.get(id).expect("rows are never deleted");
                    assert!(
                        !old.destructive || row.destructive,
                        "destructive lowered on {}",
                        row.name
                    );
                }
            }
            Op::Enable(n) | Op::Disable(n) => {
                let to = if matches!(op, Op::Enable(_)) {
                    ToolState::Enabled
                } else {
                    ToolState::Disabled
                };
                let rows = s.tools().await.unwrap();
                if rows.is_empty() {
                    continue;
                }
                let target = &rows[n % rows.len()];
                let result = crate::testing::owner_sets(&s, &target.name, to).await;
                let after = by_identity(&s.tools().await.unwrap());
                let row = &after[&(target.server.clone(), target.tool.clone())];
                match result {
                    Ok(_) => {
                        assert!(target.state.can_become(to));
                        assert_eq!(row.state, to);
                    }
                    Err(store::Error::BadTransition { .. }) => {
                        assert!(!target.state.can_become(to));
                        assert_eq!(
                            row.state, target.state,
                            "a refused transition changed nothing"
                        );
                    }
                    Err(e) => panic!("unexpected error: {e}"),
                }
                assert!(
                    target.state != ToolState::Withdrawn || row.state == ToolState::Withdrawn,
                    "the owner cannot bring back a withdrawn row"
                );
                assert!(
                    !target.destructive || row.destructive,
                    "destructive lowered"
                );
                for (id, other) in &before {
                    if *id != (target.server.clone(), target.tool.clone()) {
                        assert_eq!(
                            Some(other),
                            after.get(id),
                            "owner action leaked to another row"
                        );
                    }
                }
            }
            Op::Restart => {
                s.close().await.unwrap();
                drop(s);
                s = Store::open(&path).await.unwrap();
                let after = by_identity(&s.tools().await.unwrap());
                assert_eq!(before, after, "a restart changes no row");
            }
        }
        let rows = s.tools().await.unwrap();
        model.check_always(&s, &rows).await;
    }
    s.close().await.unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn allowlist_invariants_hold_across_any_sequence(ops in prop::collection::vec(op(), 1..40)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(run(ops));
    }
}

/// The collisions the generator is meant to reach, spelled out: `a` + `b-c`, `a` + `b_c` and
/// `a-b` + `c` all flatten to `a_b_c`, and each identity keeps its own row through an enable,
/// a restart and a withdrawal.
#[tokio::test]
async fn flattening_collisions_across_servers_keep_separate_rows() {
    let o = |tool: usize, ro: Option<bool>| Offered {
        tool,
        read_only: ro,
        description: 1,
        schema: false,
    };
    let ops = vec![
        Op::Listing {
            server: 0,
            tools: vec![o(0, Some(true)), o(1, None)],
        },
        Op::Listing {
            server: 1,
            tools: vec![o(2, Some(true))],
        },
        Op::Enable(0),
        Op::Enable(2),
        Op::Restart,
        Op::Listing {
            server: 0,
            tools: vec![o(1, Some(true))],
        },
        Op::Listing {
            server: 0,
            tools: vec![o(0, Some(false)), o(1, Some(true))],
        },
        Op::Enable(0),
    ];
    run(ops).await;
}

//! Invariants shared by the tests that drive a daemon through crashes and chaos: a seeded
//! generator, and the allowlist rules (A-5..A-8) checked on the store of a stopped daemon.

use std::collections::BTreeMap;

/// splitmix64: a small seeded generator, enough to pick kill points.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn step(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.step() % n
    }
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A number from the environment (a test's length or seed), or `default`.
pub(crate) fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Checks the tool rows and their event trail: identities and names unique, `cmd` the row's
/// identity, destructive never lowered against `destructive` (the flags seen last time),
/// every trail starting with the creation and chained, ending in the row's state, enabled only
/// ever by the owner and only in the shape the owner approved. Returns the rows' destructive flags.
pub(crate) async fn check_rows(
    s: &store::Store,
    destructive: &BTreeMap<(String, String), bool>,
) -> BTreeMap<(String, String), bool> {
    let rows = s.tools().await.unwrap();
    let names: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names.len(), rows.len(), "row names are unique");
    let mut now = BTreeMap::new();
    for r in &rows {
        let id = (r.server.clone(), r.tool.clone());
        assert!(
            now.insert(id.clone(), r.destructive).is_none(),
            "two rows for {id:?}"
        );
        assert_eq!(r.cmd, ["mcp", r.server.as_str(), r.tool.as_str()]);
        if destructive.get(&id) == Some(&true) {
            assert!(r.destructive, "destructive lowered on {}", r.name);
        }
        let mut events = s.tool_events(Some(&r.name), 100_000).await.unwrap();
        events.reverse(); // oldest first
        let first = events.first().expect("a row has its creation event");
        assert_eq!(
            first.from, None,
            "{}: the trail starts with the creation",
            r.name
        );
        for w in events.windows(2) {
            assert_eq!(
                w[1].from,
                Some(w[0].to),
                "{}: event {} does not start where {} ended",
                r.name,
                w[1].id,
                w[0].id
            );
        }
        let last = events.last().expect("non-empty");
        assert_eq!(last.to, r.state, "{}: last event vs row state", r.name);
        for e in &events {
            if e.to == store::ToolState::Enabled {
                assert_eq!(
                    e.actor, "owner (passphrase)",
                    "{} enabled by {}",
                    r.name, e.actor
                );
            }
        }
        if r.state == store::ToolState::Enabled {
            assert_eq!(
                r.approved_shape.as_ref(),
                Some(&r.shape),
                "{} is enabled in a shape the owner did not approve (A-7)",
                r.name
            );
        }
    }
    now
}

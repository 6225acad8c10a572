//! What a reload of the configuration changes (`maven reload`, SIGHUP), decided from the file
//! as written: the JSON the daemon loaded before beside the JSON it loads now, block by block.
//!
//! A server restarts when its own block changed, or a block every server's connection is made
//! from (`fetch`: the doors; `mcp_timing`: the manager's timing; `web.listen`: the page's port,
//! which every sandbox denies); a server whose block did not change keeps its task and its
//! connection. The feeds' poller restarts when `feeds`, `feed_min_interval` or `fetch` changed;
//! the router is rebuilt when `router` or `fetch` changed; the page is served afresh (its
//! sessions ended: the owner signs in again) when `web` changed, and the voice listener when
//! `voice` changed.

use serde_json::Value;

/// The top-level blocks whose change restarts every server.
const EVERY_SERVER: &[&str] = &["fetch", "mcp_timing"];

/// The difference between the file the daemon runs on and the one it loads now.
#[derive(Debug)]
pub(crate) struct Diff<'a> {
    old: &'a Value,
    new: &'a Value,
}

impl<'a> Diff<'a> {
    pub(crate) fn new(old: &'a Value, new: &'a Value) -> Diff<'a> {
        Diff { old, new }
    }

    fn differs(&self, key: &str) -> bool {
        self.old.get(key) != self.new.get(key)
    }

    /// Whether server `name` must be stopped and started afresh (a server new to the file
    /// counts as changed).
    pub(crate) fn server_changed(&self, name: &str) -> bool {
        let block = |v: &Value| v.get("mcp_servers").and_then(|s| s.get(name)).cloned();
        block(self.old) != block(self.new)
            || EVERY_SERVER.iter().any(|k| self.differs(k))
            || self.old.pointer("/web/listen") != self.new.pointer("/web/listen")
    }

    /// Whether the feeds' poller restarts.
    pub(crate) fn feeds_changed(&self) -> bool {
        ["feeds", "feed_min_interval", "fetch"]
            .iter()
            .any(|k| self.differs(k))
    }

    /// Whether the router is made afresh.
    pub(crate) fn router_changed(&self) -> bool {
        ["router", "fetch"].iter().any(|k| self.differs(k))
    }

    /// Whether the configuration's acts changed.
    pub(crate) fn acts_changed(&self) -> bool {
        self.differs("acts")
    }

    /// Whether the page is served afresh.
    pub(crate) fn page_changed(&self) -> bool {
        self.differs("web")
    }

    /// Whether the voice listener is started afresh.
    pub(crate) fn voice_changed(&self) -> bool {
        self.differs("voice")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_server_restarts_only_for_its_own_block_or_a_shared_one() {
        let old =
            json!({"mcp_servers": {"a": {"command": "x"}, "b": {"command": "y"}}, "feeds": []});
        let new = json!({"mcp_servers": {"a": {"command": "x"}, "b": {"command": "y", "args": ["1"]}, "c": {"url": "https://c.example/mcp"}}, "feeds": []});
        let d = Diff::new(&old, &new);
        assert!(!d.server_changed("a"));
        assert!(d.server_changed("b"));
        assert!(d.server_changed("c"), "a new server counts as changed");
        assert!(!d.feeds_changed() && !d.router_changed() && !d.acts_changed());
        assert!(!d.page_changed() && !d.voice_changed());
        let fetch = json!({"mcp_servers": {"a": {"command": "x"}}, "fetch": {"allow_hosts": ["a.example"]}});
        let d = Diff::new(&old, &fetch);
        assert!(d.server_changed("a"), "fetch builds every door");
        assert!(d.feeds_changed() && d.router_changed());
    }

    #[test]
    fn the_page_and_voice_follow_and_a_new_page_port_restarts_every_server() {
        let old = json!({"web": {"listen": "127.0.0.1:8765"}});
        let new = json!({"web": {"listen": "127.0.0.1:9000"}, "voice": {"listen": "127.0.0.1:10700"}, "router": {"kind": "rules"}});
        let d = Diff::new(&old, &new);
        assert!(d.page_changed() && d.voice_changed() && d.router_changed());
        assert!(
            d.server_changed("a"),
            "the page's port is denied to every sandbox"
        );
        let hours = json!({"web": {"listen": "127.0.0.1:8765", "session_hours": 2}});
        let d = Diff::new(&old, &hours);
        assert!(d.page_changed() && !d.server_changed("a"));
        let same = Diff::new(&old, &old);
        assert!(!same.page_changed() && !same.server_changed("a") && !same.feeds_changed());
    }
}

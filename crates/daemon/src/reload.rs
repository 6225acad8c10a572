//! What a reload of the configuration changes (`maven reload`, SIGHUP), decided from the typed
//! configuration: the [`Config`] the daemon runs on beside the one it loads now, block by
//! block, compared as values (a default written out equals the default left out).
//!
//! A server restarts when its own block changed, or a block every server's connection is made
//! from (`fetch`: the doors; `mcp_timing`: the manager's timing; `web.listen`: the page's port,
//! which every sandbox denies); a server whose block did not change keeps its task and its
//! connection. The feeds' poller restarts when `feeds`, `feed_min_interval` or `fetch` changed;
//! the router is rebuilt when `router` or `fetch` changed; the page is served afresh (its
//! sessions ended: the owner signs in again) when `web` changed, and the voice listener when
//! `voice` changed.

use config::Config;

/// The difference between the configuration the daemon runs on and the one it loads now.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Diff<'a> {
    old: &'a Config,
    new: &'a Config,
}

impl<'a> Diff<'a> {
    pub(crate) fn new(old: &'a Config, new: &'a Config) -> Diff<'a> {
        Diff { old, new }
    }

    /// Whether a block every server's connection is made from changed.
    fn every_server(&self) -> bool {
        self.old.fetch != self.new.fetch
            || self.old.mcp_timing != self.new.mcp_timing
            || self.old.web.listen != self.new.web.listen
    }

    /// Whether server `name` must be stopped and started afresh (a server new to the file
    /// counts as changed).
    pub(crate) fn server_changed(&self, name: &str) -> bool {
        self.old.mcp_servers.get(name) != self.new.mcp_servers.get(name) || self.every_server()
    }

    /// Whether server `name` was enabled before this reload.
    pub(crate) fn was_enabled(&self, name: &str) -> bool {
        self.old.mcp_servers.get(name).is_some_and(|b| b.enabled)
    }

    /// The servers of the old configuration that the new one no longer names.
    pub(crate) fn removed_servers(&self) -> impl Iterator<Item = &'a String> + 'a {
        let new = self.new;
        self.old
            .mcp_servers
            .keys()
            .filter(move |n| !new.mcp_servers.contains_key(*n))
    }

    /// Whether the feeds' poller restarts.
    pub(crate) fn feeds_changed(&self) -> bool {
        self.old.feeds != self.new.feeds
            || self.old.feed_min_interval != self.new.feed_min_interval
            || self.old.fetch != self.new.fetch
    }

    /// Whether the router is made afresh.
    pub(crate) fn router_changed(&self) -> bool {
        self.old.router != self.new.router || self.old.fetch != self.new.fetch
    }

    /// Whether the configuration's acts changed.
    pub(crate) fn acts_changed(&self) -> bool {
        self.old.acts != self.new.acts
    }

    /// Whether the page is served afresh.
    pub(crate) fn page_changed(&self) -> bool {
        self.old.web != self.new.web
    }

    /// Whether the voice listener is started afresh.
    pub(crate) fn voice_changed(&self) -> bool {
        self.old.voice != self.new.voice
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> Config {
        match Config::parse("config.json", json.as_bytes(), &|_| None) {
            Ok(c) => c,
            Err(e) => panic!("{json}: {e}"),
        }
    }

    #[test]
    fn a_server_restarts_only_for_its_own_block_or_a_shared_one() {
        let old = config(
            r#"{"mcp_servers": {"a": {"command": "/bin/x", "sandbox": false}, "b": {"command": "/bin/y", "sandbox": false}}, "feeds": []}"#,
        );
        let new = config(
            r#"{"mcp_servers": {"a": {"command": "/bin/x", "sandbox": false}, "b": {"command": "/bin/y", "args": ["1"], "sandbox": false}, "c": {"url": "https://c.example/mcp"}}, "feeds": []}"#,
        );
        let d = Diff::new(&old, &new);
        assert!(!d.server_changed("a"));
        assert!(d.server_changed("b"));
        assert!(d.server_changed("c"), "a new server counts as changed");
        assert!(!d.feeds_changed() && !d.router_changed() && !d.acts_changed());
        assert!(!d.page_changed() && !d.voice_changed());
        assert_eq!(d.removed_servers().count(), 0);
        let fetch = config(
            r#"{"mcp_servers": {"a": {"command": "/bin/x", "sandbox": false}}, "fetch": {"allow_hosts": ["a.example"]}}"#,
        );
        let d = Diff::new(&old, &fetch);
        assert!(d.server_changed("a"), "fetch builds every door");
        assert!(d.feeds_changed() && d.router_changed());
        assert_eq!(d.removed_servers().collect::<Vec<_>>(), ["b"]);
    }

    #[test]
    fn a_default_written_out_changes_nothing() {
        let old = config(r#"{"mcp_servers": {"a": {"command": "/bin/x", "sandbox": false}}}"#);
        let new = config(
            r#"{"mcp_servers": {"a": {"command": "/bin/x", "sandbox": false, "enabled": false}}, "fetch": {}, "feeds": [], "web": {"listen": "127.0.0.1:8765"}}"#,
        );
        let d = Diff::new(&old, &new);
        assert!(!d.server_changed("a") && !d.feeds_changed() && !d.page_changed());
        assert!(!d.was_enabled("a"));
        let on = config(
            r#"{"mcp_servers": {"a": {"command": "/bin/x", "sandbox": false, "enabled": true}}}"#,
        );
        let d = Diff::new(&on, &old);
        assert!(d.was_enabled("a") && d.server_changed("a"));
    }

    #[test]
    fn the_page_and_voice_follow_and_a_new_page_port_restarts_every_server() {
        let old = config(r#"{"web": {"listen": "127.0.0.1:8765"}}"#);
        let new = config(
            r#"{"web": {"listen": "127.0.0.1:9000"}, "voice": {"listen": "127.0.0.1:10700"}, "router": {"kind": "llm", "url": "http://127.0.0.1:8080/v1/chat/completions", "allow_private": true}}"#,
        );
        let d = Diff::new(&old, &new);
        assert!(d.page_changed() && d.voice_changed() && d.router_changed());
        assert!(
            d.server_changed("a"),
            "the page's port is denied to every sandbox"
        );
        let hours = config(r#"{"web": {"listen": "127.0.0.1:8765", "session_hours": 2}}"#);
        let d = Diff::new(&old, &hours);
        assert!(d.page_changed() && !d.server_changed("a"));
        let same = Diff::new(&old, &old);
        assert!(!same.page_changed() && !same.server_changed("a") && !same.feeds_changed());
        assert!(!same.voice_changed() && !same.router_changed() && !same.acts_changed());
    }
}

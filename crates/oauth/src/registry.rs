//! The daemon's one set of authorizations, by server.

use std::sync::Arc;

use crate::OAuth;

/// The authorizations of a daemon's servers: one [`OAuth`] per HTTP server, by name. The daemon
/// builds it once; the connection manager (each server's requests) and the page (Connect,
/// the callback, Disconnect) borrow the same one, so both act on the same tokens.
#[derive(Debug, Default)]
pub struct Registry {
    by_server: std::collections::BTreeMap<String, Arc<OAuth>>,
}

impl Registry {
    /// The registry of these authorizations, each under its [`OAuth::server`] (a later one of
    /// the same name replaces an earlier).
    pub fn new(all: impl IntoIterator<Item = OAuth>) -> Registry {
        Registry {
            by_server: all
                .into_iter()
                .map(|o| (o.server().to_owned(), Arc::new(o)))
                .collect(),
        }
    }

    /// The authorization of `server`, if it has one.
    pub fn get(&self, server: &str) -> Option<&Arc<OAuth>> {
        self.by_server.get(server)
    }

    /// Every authorization, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<OAuth>> {
        self.by_server.values()
    }

    /// No server has one.
    pub fn is_empty(&self) -> bool {
        self.by_server.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemoryStore, OAuthConfig};

    #[test]
    fn a_registry_finds_each_authorization_by_its_server() {
        let one = |name: &str| {
            OAuth::new(
                OAuthConfig {
                    server: name.to_owned(),
                    resource_url: format!("https://{name}.example/mcp"),
                    client_id: None,
                    client_secret: None,
                    client_metadata_url: None,
                    redirect_uri: "http://127.0.0.1:1/oauth/callback".to_owned(),
                    client_name: "test".to_owned(),
                },
                webfetch::Fetcher::new(webfetch::DoorConfig::new("test")),
                Arc::new(MemoryStore::default()),
            )
        };
        let r = Registry::new([one("b"), one("a")]);
        assert_eq!(r.get("a").map(|o| o.server()), Some("a"));
        assert_eq!(r.get("b").map(|o| o.server()), Some("b"));
        assert!(
            r.get("c").is_none(),
            "no authorization for a server not given"
        );
        let names: Vec<_> = r.iter().map(|o| o.server().to_owned()).collect();
        assert_eq!(names, ["a", "b"], "in name order");
        assert!(!r.is_empty());
        assert!(Registry::default().is_empty());
    }
}

//! Resource not found, as each era says it: -32002 before 2026-07-28, -32602 in it.

use mcp::{Client, Error, Protocol, ServerConfig};

use crate::support::{bounded, options, short, stdio};

#[tokio::test]
async fn resource_not_found_in_both_eras() {
    bounded(async {
        for (flags, protocol) in [
            (&[][..], Protocol::Legacy),
            (&["--modern"][..], Protocol::Modern),
        ] {
            let config = ServerConfig {
                protocol,
                ..stdio(flags, short())
            };
            let c = Client::connect(&config, options()).await.unwrap();
            match c.read_resource("missing://x").await {
                Err(Error::ResourceNotFound { uri }) => assert_eq!(uri, "missing://x"),
                other => panic!("{protocol:?}: {other:?}"),
            }
            // The connection is still usable.
            assert_eq!(c.read_resource("mem://note").await.unwrap(), "a note");
            c.close().await;
        }
    })
    .await;
}

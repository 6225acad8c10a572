//! Maven as a Wyoming conversation agent (`voice.listen`): what Home Assistant and other voice
//! systems call with a `transcript`, answered with `handled` (or `not-handled` when Maven
//! cannot help) from the same turn as `maven say`, spoken: the transcript normalised, a write
//! asked with a one-time word, the answer rendered to be heard. A handled answer is streamed
//! first, sentence by sentence (`handled-start`, `handled-chunk`s, `handled-stop`: the agent's
//! `info` says `supports_handled_streaming`), then sent whole as `handled`
//! (`wyoming::server`).
//!
//! Who may connect is decided at accept by the gate (`gate::serve`), before a byte is read: on
//! the loopback only the owner's own processes (by the socket's uid); elsewhere only the
//! addresses in `voice.peers` (the configuration refuses a non-loopback `listen` without
//! them), one of this machine's judged like a local one; and never a process the daemon
//! started or one of its descendants, sandboxed or not (the processes holding the peer's
//! socket, found by its inode, judged as IPC judges its peers: `gate::lineage`), so no server
//! can say a write and then its yes. Every voice turn is
//! logged with its peer. A conversation is the Wyoming context's
//! `conversation_id`, else the connection.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Connections served at once; one more is closed at once.
const MAX_CONNECTIONS: usize = 16;
/// The longest a turn may take before the client is answered that Maven cannot help.
const TURN_DEADLINE: Duration = Duration::from_secs(120);

/// Who may connect.
#[derive(Debug, Clone)]
pub(crate) enum Gate {
    /// Loopback: only processes of this uid.
    Owner(u32),
    /// Elsewhere: only these addresses.
    Peers(Vec<IpAddr>),
}

impl Gate {
    /// The gate for a listen address: the owner's uid on the loopback, else the peers.
    pub(crate) fn for_listen(addr: SocketAddr, peers: &[IpAddr]) -> Gate {
        if addr.ip().is_loopback() {
            Gate::Owner(gate::owner_uid())
        } else {
            Gate::Peers(peers.to_vec())
        }
    }

    /// The gate of the voice listener: the owner's uid on the loopback, `voice.peers`
    /// elsewhere, and in both never a process the daemon started or one of its descendants (a
    /// server, sandboxed or not, would otherwise say a write and then its yes). A peer of
    /// `voice.peers` on another machine has no socket here; one on this machine does, and is
    /// judged as on the loopback.
    fn door(&self) -> gate::Gate {
        let door = match self {
            Gate::Owner(owner) => gate::Gate::open("voice").owner(*owner),
            Gate::Peers(peers) => gate::Gate::open("voice").peers(peers.clone()),
        };
        door.no_descendants().on_refusal(|peer, why| {
            let why = match why {
                gate::Refusal::NotListed(ip) => format!("{ip} is not in voice.peers"),
                other => other.to_string(),
            };
            tracing::warn!(peer = %peer, reason = %why, "voice: connection refused");
        })
    }
}

/// The agent: Maven's turn, spoken.
struct Agent {
    turns: Arc<turns::Turns>,
    peer: SocketAddr,
    connection: u64,
}

impl wyoming::server::Handler for Agent {
    fn info(&self) -> wyoming::Info {
        let attribution = wyoming::events::Attribution {
            name: "Maven".to_owned(),
            url: String::new(),
        };
        wyoming::Info {
            handle: vec![wyoming::events::Program {
                name: "maven".to_owned(),
                attribution: attribution.clone(),
                installed: true,
                description: Some(
                    "Maven: a personal assistant that runs only the tools its owner approved"
                        .to_owned(),
                ),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
                models: vec![wyoming::events::Model {
                    name: "maven".to_owned(),
                    attribution,
                    installed: true,
                    description: Some("Maven's turn, in English and Russian".to_owned()),
                    version: Some(env!("CARGO_PKG_VERSION").to_owned()),
                    languages: vec!["en".to_owned(), "ru".to_owned()],
                }],
                // The answer also comes sentence by sentence, before the plain `handled`.
                supports_handled_streaming: true,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    async fn handle(&self, transcript: wyoming::Transcript) -> wyoming::server::Answer {
        let conversation = transcript
            .context
            .as_ref()
            .and_then(|c| c.get("conversation_id"))
            .and_then(Value::as_str)
            .map(|c| turns::Conversation::new(turns::Front::Voice, c))
            .unwrap_or_else(|| {
                turns::Conversation::new(
                    turns::Front::Voice,
                    &format!("connection {}", self.connection),
                )
            });
        tracing::info!(
            peer = %self.peer,
            conversation = %conversation,
            said = %shown::line(&shown::cut(&transcript.text, 200)),
            "voice turn"
        );
        let turn = self.turns.turn(&conversation, &transcript.text);
        match tokio::time::timeout(TURN_DEADLINE, turn).await {
            Ok(answer) => wyoming::server::Answer {
                handled: answer.understood,
                text: turns::render::speech(&answer),
                context: None,
            },
            Err(_) => wyoming::server::Answer {
                handled: false,
                text: "That took too long; nothing more will be done with it.".to_owned(),
                context: None,
            },
        }
    }
}

/// Serves the Wyoming protocol on `listener` until `cancel`, through `gate::serve`.
pub(crate) async fn serve(
    listener: TcpListener,
    gate: Gate,
    turns: Arc<turns::Turns>,
    cancel: CancellationToken,
) {
    let slots = gate::Slots::new(MAX_CONNECTIONS).when_full(|_, peer| {
        tracing::warn!(peer = %peer, "voice: every connection slot is in use; refused");
    });
    let count = AtomicU64::new(0);
    let served = cancel.clone();
    let handler = move |stream: tokio::net::TcpStream, admitted: gate::Admitted| {
        let agent = Agent {
            turns: turns.clone(),
            peer: admitted
                .peer
                .addr()
                .unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0))),
            connection: count.fetch_add(1, Ordering::Relaxed),
        };
        let cancel = served.clone();
        async move {
            let _slot = admitted.slot;
            let limits = wyoming::server::ServerLimits::default();
            tokio::select! {
                _ = cancel.cancelled() => {}
                r = wyoming::server::serve(stream, &agent, &limits) => {
                    if let Err(e) = r {
                        tracing::info!(peer = %agent.peer, error = %e, "voice: connection ended");
                    }
                }
            }
        }
    };
    gate::serve(listener, gate.door(), slots, handler, cancel).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beyond_the_loopback_only_voice_peers_are_admitted_and_one_elsewhere_without_a_socket_here() {
        let listed: IpAddr = "192.0.2.7".parse().unwrap();
        let door = Gate::for_listen("0.0.0.0:10700".parse().unwrap(), &[listed]).door();
        let local = Some("192.0.2.1:10700".parse().unwrap());
        // Not listed: refused before anything else is asked.
        assert_eq!(
            door.judge(&gate::Peer::Tcp {
                local,
                remote: "192.0.2.8:40000".parse().unwrap(),
            }),
            Err(gate::Refusal::NotListed("192.0.2.8".parse().unwrap()))
        );
        // Listed, on another machine (no socket of this one): admitted, its uid unknown.
        assert_eq!(
            door.judge(&gate::Peer::Tcp {
                local,
                remote: SocketAddr::new(listed, 40000),
            }),
            Ok(None)
        );
    }

    #[test]
    fn on_the_loopback_a_peer_whose_socket_is_gone_is_refused() {
        let door = Gate::for_listen("127.0.0.1:10700".parse().unwrap(), &[]).door();
        assert_eq!(
            door.judge(&gate::Peer::Tcp {
                local: Some("127.0.0.1:10700".parse().unwrap()),
                remote: "127.0.0.1:9".parse().unwrap(),
            }),
            Err(gate::Refusal::NotOwner {
                uid: None,
                owner: gate::owner_uid()
            })
        );
    }
}

//! Maven as a Wyoming conversation agent (`voice.listen`): what Home Assistant and other voice
//! systems call with a `transcript`, answered with `handled` (or `not-handled` when Maven
//! cannot help) from the same turn as `maven say`, spoken: the transcript normalised, a write
//! asked with a one-time word, the answer rendered to be heard. A handled answer is streamed
//! first, sentence by sentence (`handled-start`, `handled-chunk`s, `handled-stop`: the agent's
//! `info` says `supports_handled_streaming`), then sent whole as `handled`
//! (`wyoming::server`).
//!
//! Who may connect is decided at accept, before a byte is read: on the loopback only the
//! owner's own processes (the page's peer check, by the socket's uid); elsewhere only the
//! addresses in `voice.peers` (the configuration refuses a non-loopback `listen` without
//! them); and never a process the daemon started or one of its descendants, sandboxed or not
//! (the processes holding the peer's socket, found by its inode, judged as IPC judges its
//! peers: `ipc::peer`), so no server can say a write and then its yes. Every voice turn is
//! logged with its peer. A conversation is the Wyoming context's
//! `conversation_id`, else the connection.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Connections served at once; more wait in the kernel's backlog.
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
            Gate::Owner(crate::web::owner_uid())
        } else {
            Gate::Peers(peers.to_vec())
        }
    }

    /// Whether the connection `local` ← `peer` may be served, and if not, why. Decided before
    /// a byte is read: the owner's uid on the loopback, `voice.peers` elsewhere, and in both
    /// never a process the daemon started or one of its descendants (a server, sandboxed or
    /// not, would otherwise say a write and then its yes).
    pub(crate) fn admits(&self, local: SocketAddr, peer: SocketAddr) -> Result<(), String> {
        let socket = crate::web::peer_socket(local, peer);
        match self {
            Gate::Owner(owner) => match socket {
                Some(s) if s.uid == *owner => {}
                Some(s) => return Err(format!("uid {} is not the owner's ({owner})", s.uid)),
                None => return Err("its uid cannot be known".to_owned()),
            },
            Gate::Peers(peers) => {
                if !peers.contains(&peer.ip()) {
                    return Err(format!("{} is not in voice.peers", peer.ip()));
                }
                // A peer on another machine has no socket here; one on this machine does, and
                // is judged as on the loopback.
                if socket.is_none() {
                    return Ok(());
                }
            }
        }
        let Some(s) = socket else {
            return Err("its uid cannot be known".to_owned());
        };
        crate::ipc::peer::admit_socket(s.inode).map_err(|r| {
            let mut why = format!("pid {}: {}", r.pid, r.reason);
            if let Some(child) = r.child {
                why.push_str(&format!(" (through the daemon's child {child})"));
            }
            why
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
            .map(|c| format!("wyoming:{}", shown::cut(c, 128)))
            .unwrap_or_else(|| format!("connection:{}", self.connection));
        tracing::info!(
            peer = %self.peer,
            conversation = %conversation,
            said = %shown::line(&shown::cut(&transcript.text, 200)),
            "voice turn"
        );
        let turn = self.turns.turn_spoken(&transcript.text, &conversation);
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

/// Serves the Wyoming protocol on `listener` until `cancel`.
pub(crate) async fn serve(
    listener: TcpListener,
    gate: Gate,
    turns: Arc<turns::Turns>,
    cancel: CancellationToken,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let count = AtomicU64::new(0);
    let tasks = tokio_util::task::TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            _ = cancel.cancelled() => break,
            a = listener.accept() => a,
        };
        let (stream, peer) = match accepted {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "voice: accept failed");
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    _ = tokio::time::sleep(Duration::from_millis(100)) => continue,
                }
            }
        };
        let local = match stream.local_addr() {
            Ok(l) => l,
            Err(_) => continue,
        };
        if let Err(why) = gate.admits(local, peer) {
            tracing::warn!(peer = %peer, reason = %why, "voice: connection refused");
            drop(stream);
            continue;
        }
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            tracing::warn!(peer = %peer, "voice: every connection slot is in use; refused");
            drop(stream);
            continue;
        };
        let agent = Agent {
            turns: turns.clone(),
            peer,
            connection: count.fetch_add(1, Ordering::Relaxed),
        };
        let cancel = cancel.clone();
        tasks.spawn(async move {
            let _permit = permit;
            let limits = wyoming::server::ServerLimits::default();
            tokio::select! {
                _ = cancel.cancelled() => {}
                r = wyoming::server::serve(stream, &agent, &limits) => {
                    if let Err(e) = r {
                        tracing::info!(peer = %agent.peer, error = %e, "voice: connection ended");
                    }
                }
            }
        });
    }
    tasks.close();
    tasks.wait().await;
}

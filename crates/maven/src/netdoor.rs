//! The one way out of a sandboxed server's network namespace: a server whose sandbox says
//! `"network": true` lives in a namespace with only loopback, and its launcher hands the
//! listening sockets it bound there (Maven's proxy at `sandbox::PROXY`, one per `connect`
//! grant) to this door, a Unix socket in the data directory. The daemon (or `mcp inspect`)
//! then serves them: the proxy through webfetch's connect-time guard (public addresses only,
//! names resolved by Maven, limited to the block's `hosts`), each granted endpoint relayed raw.
//!
//! A launcher proves which server it starts with a token it alone was given (in its
//! environment, removed before the server runs); a token names one server, and a server's
//! listeners are served until its launcher's connection to the door closes (the server
//! stopped), or until a newer start of the same server hands over its own.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rand::RngCore as _;
use tokio::io::AsyncReadExt as _;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use webfetch::relay::{Counters, Event, Limits, Outcome, Tally};

/// The door's file name in the data directory.
pub(crate) const SOCKET: &str = "door.sock";

/// Hand-overs read at once (each for at most `sandbox::door::TIMEOUT`, on a blocking thread);
/// a connection beyond them is closed at once, so a flood of them ties up nothing else.
const MAX_PENDING: usize = 16;

/// What one token admits.
#[derive(Debug, Clone)]
struct Admitted {
    server: String,
    /// The door its relays go out through (`config::Door::Sandbox`).
    relay: webfetch::DoorConfig,
    connect: Vec<SocketAddr>,
}

/// The door: who may hand over listeners, and what each server's network has done.
pub(crate) struct Door {
    path: PathBuf,
    /// Token → what it admits.
    admitted: Mutex<HashMap<String, Admitted>>,
    /// Server → its counters (kept across its starts) and the stop of its last hand-over (an
    /// older start's relay stops when a newer one arrives).
    nets: Mutex<BTreeMap<String, Net>>,
    /// Whether [`Door::bind`] made its socket (removed when the door goes).
    bound: std::sync::atomic::AtomicBool,
}

impl Drop for Door {
    /// The socket goes with the door (a daemon's at its stop, `mcp inspect`'s at its end).
    fn drop(&mut self) {
        if self.bound.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

struct Net {
    counters: Arc<Counters>,
    stop: CancellationToken,
    /// Its last refused connections, newest last (at most [`REFUSALS_KEPT`]).
    refusals: Arc<Mutex<std::collections::VecDeque<Refusal>>>,
}

/// How many of a server's refused connections are kept for its status.
pub(crate) const REFUSALS_KEPT: usize = 5;

/// A connection the proxy refused a server: when, what it asked for, and why (the words the
/// proxy answered it, which name the address a name resolved to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) at: time::OffsetDateTime,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) why: String,
}

impl Door {
    /// A door at `path` (not yet bound).
    pub(crate) fn new(path: PathBuf) -> Arc<Door> {
        Arc::new(Door {
            path,
            admitted: Mutex::new(HashMap::new()),
            nets: Mutex::new(BTreeMap::new()),
            bound: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The door of the data directory `data_dir`.
    pub(crate) fn in_data_dir(data_dir: &Path) -> Arc<Door> {
        Door::new(data_dir.join(SOCKET))
    }

    /// Its socket's path (what each proxied plan's `door` names).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Admits server `name` with this `network`: the token its launcher will show. A
    /// server admitted again gets a new token; the old one keeps working for a start already
    /// under way.
    pub(crate) fn admit(
        &self,
        name: &str,
        relay: webfetch::DoorConfig,
        connect: &[sandbox::Endpoint],
    ) -> String {
        let connect = connect.iter().map(|e| e.addr).collect();
        let mut b = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut b);
        let token = hex::encode(b);
        lock(&self.admitted).insert(
            token.clone(),
            Admitted {
                server: name.to_owned(),
                relay,
                connect,
            },
        );
        lock(&self.nets)
            .entry(name.to_owned())
            .or_insert_with(|| Net {
                counters: Arc::new(Counters::default()),
                stop: CancellationToken::new(),
                refusals: Arc::default(),
            });
        token
    }

    /// What server `name`'s network has done since the daemon started (`None`: it has no
    /// proxy).
    pub(crate) fn tally(&self, name: &str) -> Option<Tally> {
        lock(&self.nets).get(name).map(|n| n.counters.tally())
    }

    /// Server `name`'s last refused connections, newest first.
    pub(crate) fn refusals(&self, name: &str) -> Vec<Refusal> {
        let kept = lock(&self.nets).get(name).map(|n| n.refusals.clone());
        kept.map(|r| lock(&r).iter().rev().cloned().collect())
            .unwrap_or_default()
    }

    /// Binds the door's socket (a stale one from a crashed daemon is replaced; the data
    /// directory's lock is held, so it is no live daemon's), readable and writable by its
    /// owner only.
    pub(crate) fn bind(&self) -> std::io::Result<std::os::unix::net::UnixListener> {
        use std::os::unix::fs::PermissionsExt as _;
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let l = std::os::unix::net::UnixListener::bind(&self.path)?;
        self.bound.store(true, std::sync::atomic::Ordering::Relaxed);
        std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o600))?;
        l.set_nonblocking(true)?;
        Ok(l)
    }

    /// Serves the door until `cancel` (through `gate::serve`): each hand-over on a task of
    /// its own, every relay ended with it.
    ///
    /// The gate admits any peer that reaches the socket: the launchers it serves are the
    /// daemon's own descendants (so the descendant check cannot apply), the socket's mode 0600
    /// keeps other users out, and a token proves which server a launcher starts.
    pub(crate) async fn serve(
        self: Arc<Self>,
        listener: std::os::unix::net::UnixListener,
        cancel: CancellationToken,
    ) {
        let listener = match tokio::net::UnixListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(error = %e, "the sandbox network door cannot be served");
                return;
            }
        };
        let slots = gate::Slots::new(MAX_PENDING)
            .when_full(|_, _| {
                tracing::warn!(
                    "sandbox network door: {MAX_PENDING} hand-overs already pending; a connection was closed"
                );
            })
            // A stop ends every hand-over at once (each also ends on `cancel`).
            .grace(std::time::Duration::ZERO);
        let served = cancel.clone();
        let handler = move |conn: tokio::net::UnixStream, admitted: gate::Admitted| {
            self.clone().hand_over(conn, admitted.slot, served.clone())
        };
        gate::serve(
            listener,
            gate::Gate::open("sandbox network door"),
            slots,
            handler,
            cancel,
        )
        .await;
    }

    /// One launcher's hand-over: read, check, answer, serve until it hangs up.
    async fn hand_over(
        self: Arc<Self>,
        conn: tokio::net::UnixStream,
        slot: gate::Slot,
        cancel: CancellationToken,
    ) {
        let Ok(std) = conn.into_std().and_then(|s| {
            s.set_nonblocking(false)?;
            Ok(s)
        }) else {
            return;
        };
        let received = tokio::task::spawn_blocking(move || {
            let handed = sandbox::door::receive(&std);
            (std, handed)
        })
        .await;
        // Read: the next hand-over may be.
        drop(slot);
        let Ok((std, handed)) = received else {
            return;
        };
        let handed = match handed {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!(error = %e, "sandbox network door: a hand-over was refused");
                let _ = sandbox::door::answer(&std, Err(&e));
                return;
            }
        };
        let admitted = lock(&self.admitted).get(&handed.token).cloned();
        let checked = match admitted {
            None => Err("the door does not know this token".to_owned()),
            Some(a) => self.check(&a, &handed.listeners).map(|()| a),
        };
        let admitted = match checked {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(error = %e, "sandbox network door: a hand-over was refused");
                let _ = sandbox::door::answer(&std, Err(&e));
                return;
            }
        };
        let server = admitted.server.clone();
        let (counters, stop, refusals) = {
            let mut nets = lock(&self.nets);
            let Some(net) = nets.get_mut(&server) else {
                return;
            };
            // A newer start of this server: the older one's relay (if its launcher still
            // lives) stops here.
            net.stop.cancel();
            net.stop = CancellationToken::new();
            (net.counters.clone(), net.stop.clone(), net.refusals.clone())
        };
        let relays = match serve_listeners(&admitted, handed.listeners, &counters, refusals) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(server = %server, error = %e, "sandbox network door");
                let _ = sandbox::door::answer(&std, Err(&e));
                return;
            }
        };
        if sandbox::door::answer(&std, Ok(())).is_err() {
            return;
        }
        tracing::info!(server = %server, "network through Maven's proxy");
        // Served while the launcher's connection lives.
        let Ok(mut conn) = std
            .set_nonblocking(true)
            .and_then(|()| tokio::net::UnixStream::from_std(std))
        else {
            return;
        };
        let hung_up = async {
            let mut buf = [0u8; 256];
            while let Ok(n) = conn.read(&mut buf).await {
                if n == 0 {
                    break;
                }
            }
        };
        tokio::select! {
            () = hung_up => {}
            () = stop.cancelled() => {}
            () = cancel.cancelled() => {}
        }
        drop(relays);
    }

    /// The listeners handed over are exactly what the token admits: one proxy, and only
    /// granted endpoints.
    fn check(
        &self,
        admitted: &Admitted,
        listeners: &[(sandbox::door::Purpose, std::net::TcpListener)],
    ) -> Result<(), String> {
        let mut proxies = 0;
        for (purpose, _) in listeners {
            match purpose {
                sandbox::door::Purpose::Proxy => proxies += 1,
                sandbox::door::Purpose::Connect(a) if admitted.connect.contains(a) => {}
                sandbox::door::Purpose::Connect(a) => {
                    return Err(format!(
                        "{a} is not in the sandbox.connect of {}",
                        admitted.server
                    ))
                }
            }
        }
        if proxies != 1 {
            return Err(format!("{proxies} proxy listeners handed over, not one"));
        }
        Ok(())
    }
}

/// Starts a relay task per listener; dropping the set ends them all.
fn serve_listeners(
    admitted: &Admitted,
    listeners: Vec<(sandbox::door::Purpose, std::net::TcpListener)>,
    counters: &Arc<Counters>,
    refusals: Arc<Mutex<std::collections::VecDeque<Refusal>>>,
) -> Result<JoinSet<()>, String> {
    let fetcher = Arc::new(
        webfetch::Fetcher::builder(admitted.relay.clone())
            .test_hooks_from_env()
            .build(),
    );
    let server = admitted.server.clone();
    let log: Arc<dyn Fn(Event) + Send + Sync> = Arc::new(move |e: Event| {
        log_event(&server, &e);
        if let Outcome::Refused(why) = &e.outcome {
            let mut kept = lock(&refusals);
            if kept.len() >= REFUSALS_KEPT {
                kept.pop_front();
            }
            kept.push_back(Refusal {
                at: time::OffsetDateTime::now_utc(),
                host: e.host.clone(),
                port: e.port,
                why: why.clone(),
            });
        }
    });
    let mut set = JoinSet::new();
    for (purpose, l) in listeners {
        l.set_nonblocking(true)
            .map_err(|e| format!("a listener handed over: {e}"))?;
        let l = tokio::net::TcpListener::from_std(l)
            .map_err(|e| format!("a listener handed over: {e}"))?;
        match purpose {
            sandbox::door::Purpose::Proxy => {
                set.spawn(webfetch::relay::serve_proxy(
                    l,
                    fetcher.clone(),
                    Limits::default(),
                    counters.clone(),
                    log.clone(),
                ));
            }
            sandbox::door::Purpose::Connect(target) => {
                set.spawn(webfetch::relay::serve_granted(
                    l,
                    target,
                    Limits::default(),
                    counters.clone(),
                    log.clone(),
                ));
            }
        }
    }
    Ok(set)
}

/// One line per connection a server made through Maven.
fn log_event(server: &str, e: &Event) {
    let peer = e.peer.map(|p| p.to_string()).unwrap_or_default();
    match &e.outcome {
        Outcome::Closed => tracing::info!(
            server = %server, host = %e.host, port = e.port, peer = %peer,
            bytes_out = e.bytes_out, bytes_in = e.bytes_in,
            "network: connection closed"
        ),
        Outcome::Refused(why) => tracing::warn!(
            server = %server, host = %e.host, port = e.port, why = %why,
            "network: connection refused"
        ),
        Outcome::Failed(why) => tracing::warn!(
            server = %server, host = %e.host, port = e.port, peer = %peer,
            bytes_out = e.bytes_out, bytes_in = e.bytes_in, why = %why,
            "network: connection failed"
        ),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

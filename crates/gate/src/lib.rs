//! The one accept loop of every socket Maven serves: [`serve`].
//!
//! Each door (IPC, the page, the voice listener, the sandbox's network door, the relays of a
//! sandboxed server's network) hands its listener to [`serve`] with
//! - a [`Gate`]: who may connect, judged from what the kernel says of the peer **before a byte
//!   is read and before the connection takes a slot**: the owner's uid (a Unix peer's
//!   `SO_PEERCRED`, a TCP peer's socket as the kernel's socket diagnostics know it, see
//!   [`diag`]); never a process the daemon started or one of its descendants (see
//!   [`lineage`]); on a TCP listener beyond loopback, only the listed addresses. A refused
//!   connection is closed at once and told to the door's [`Gate::on_refusal`];
//! - [`Slots`]: the bound on open connections, the last few of which may be kept apart
//!   ([`Slots::reserved`]: the page's slots for signed-in sessions), and what a connection
//!   beyond the bound is answered ([`Slots::when_full`]) — it is never queued;
//! - a handler, which serves an admitted connection on a task of its own, given the stream
//!   and what the gate learned ([`Admitted`]: the peer, its uid, whether it holds a reserved
//!   slot, and the [`Slot`] itself, freed when the handler drops it);
//! - a `CancellationToken`: on cancel the loop stops accepting (the listener is closed), open
//!   connections have [`Slots::grace`] to finish, and what is left is aborted. Dropping the
//!   future of [`serve`] aborts every connection it serves.
//!
//! A leaf: it knows no door of Maven's, only sockets, processes and the kernel's answers.

#![warn(clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

pub mod diag;
pub mod lineage;

pub use diag::{owner_uid, peer_socket, PeerSocket};
pub use lineage::{become_subreaper, reap_adopted, Lineage};
/// The stop [`serve`] takes.
pub use tokio_util::sync::CancellationToken;

/// A Unix peer's credentials (`SO_PEERCRED`), as the daemon's namespaces see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cred {
    /// Its effective uid.
    pub uid: u32,
    /// Its pid; `None` when the credentials name no process.
    pub pid: Option<i32>,
}

/// What the kernel says of an accepted connection's peer, read before any byte of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// A TCP connection `local` ← `remote` (`local` is `None` when it cannot be read).
    Tcp {
        /// The connection's own address.
        local: Option<SocketAddr>,
        /// The peer's address.
        remote: SocketAddr,
    },
    /// A Unix socket connection; `None` when its credentials cannot be read.
    Unix(Option<Cred>),
}

impl Peer {
    /// The peer's address, for a TCP connection.
    pub fn addr(&self) -> Option<SocketAddr> {
        match self {
            Peer::Tcp { remote, .. } => Some(*remote),
            Peer::Unix(_) => None,
        }
    }
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Peer::Tcp { remote, .. } => write!(f, "{remote}"),
            Peer::Unix(Some(Cred { pid: Some(pid), .. })) => write!(f, "pid {pid}"),
            Peer::Unix(_) => f.write_str("a Unix peer"),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for tokio::net::TcpListener {}
    impl Sealed for tokio::net::UnixListener {}
}

/// A listener [`serve`] accepts on: tokio's TCP and Unix listeners.
pub trait Listener: sealed::Sealed + Send + Sync + 'static {
    /// An accepted connection.
    type Stream: Send + 'static;
    /// The next connection and what the kernel says of its peer.
    fn next(&self) -> impl Future<Output = io::Result<(Self::Stream, Peer)>> + Send;
}

impl Listener for tokio::net::TcpListener {
    type Stream = tokio::net::TcpStream;

    async fn next(&self) -> io::Result<(Self::Stream, Peer)> {
        #[expect(
            clippy::disallowed_methods,
            reason = "the gate's accept: every socket Maven serves is accepted here, its peer judged before a byte is read"
        )]
        let (stream, remote) = self.accept().await?;
        let local = stream.local_addr().ok();
        Ok((stream, Peer::Tcp { local, remote }))
    }
}

impl Listener for tokio::net::UnixListener {
    type Stream = tokio::net::UnixStream;

    async fn next(&self) -> io::Result<(Self::Stream, Peer)> {
        #[expect(
            clippy::disallowed_methods,
            reason = "the gate's accept: every socket Maven serves is accepted here, its peer judged before a byte is read"
        )]
        let (stream, _) = self.accept().await?;
        let cred = stream.peer_cred().ok().map(|c| Cred {
            uid: c.uid(),
            pid: c.pid(),
        });
        Ok((stream, Peer::Unix(cred)))
    }
}

/// Why the gate refused a peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A process of another uid than the owner's (`uid`), or one whose uid cannot be told
    /// (`None`: its socket is gone, or the kernel could not be asked).
    NotOwner {
        /// The peer's uid, when known.
        uid: Option<u32>,
        /// The owner's.
        owner: u32,
    },
    /// An address not among the admitted peers ([`Gate::peers`]).
    NotListed(IpAddr),
    /// A loopback peer whose socket cannot be found, so that neither its uid nor its
    /// process can be told.
    Unknown,
    /// A process the daemon started or one of its descendants, or one that cannot be told
    /// not to be.
    Descendant(Lineage),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotOwner {
                uid: Some(uid),
                owner,
            } => write!(f, "uid {uid} is not the owner's ({owner})"),
            Refusal::NotOwner { uid: None, .. } | Refusal::Unknown => {
                f.write_str("its uid cannot be known")
            }
            Refusal::NotListed(ip) => write!(f, "{ip} is not among the admitted peers"),
            Refusal::Descendant(r) => {
                write!(f, "pid {}: {}", r.pid, r.reason)?;
                if let Some(child) = r.child {
                    write!(f, " (through the daemon's child {child})")?;
                }
                Ok(())
            }
        }
    }
}

/// What a refusal is told to: the peer and why.
type OnRefusal = Box<dyn Fn(&Peer, &Refusal) + Send + Sync>;

/// Who may connect to one door. [`Gate::open`] admits anyone; each check added narrows it.
pub struct Gate {
    door: &'static str,
    owner: Option<u32>,
    no_descendants: bool,
    peers: Option<Vec<IpAddr>>,
    on_refusal: Option<OnRefusal>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("door", &self.door)
            .field("owner", &self.owner)
            .field("no_descendants", &self.no_descendants)
            .field("peers", &self.peers)
            .finish()
    }
}

impl Gate {
    /// The gate of the door named `door` (in the log's words) that admits any peer.
    pub fn open(door: &'static str) -> Gate {
        Gate {
            door,
            owner: None,
            no_descendants: false,
            peers: None,
            on_refusal: None,
        }
    }

    /// Admits only processes of `uid`: a Unix peer by its credentials, a TCP peer by its
    /// socket as the kernel's socket diagnostics know it (so a TCP peer on another machine,
    /// whose uid cannot be known here, is refused).
    pub fn owner(mut self, uid: u32) -> Gate {
        self.owner = Some(uid);
        self
    }

    /// Refuses every process the daemon (this process) started and every descendant of one
    /// ([`lineage`]): a Unix peer by its pid, a TCP peer by the processes holding its
    /// socket. A TCP peer on another machine (one listed by [`Gate::peers`], whose socket is
    /// not on this machine) is none of them.
    pub fn no_descendants(mut self) -> Gate {
        self.no_descendants = true;
        self
    }

    /// Admits on TCP only these addresses.
    pub fn peers(mut self, peers: Vec<IpAddr>) -> Gate {
        self.peers = Some(peers);
        self
    }

    /// What a refusal is told to (the door's counters and log); the connection is closed.
    pub fn on_refusal(mut self, f: impl Fn(&Peer, &Refusal) + Send + Sync + 'static) -> Gate {
        self.on_refusal = Some(Box::new(f));
        self
    }

    /// Judges `peer`: `Ok` with its uid when it was learned, else why it is refused.
    pub fn judge(&self, peer: &Peer) -> Result<Option<u32>, Refusal> {
        match *peer {
            Peer::Unix(cred) => self.judge_unix(cred),
            Peer::Tcp { local, remote } => self.judge_tcp(local, remote),
        }
    }

    fn judge_unix(&self, cred: Option<Cred>) -> Result<Option<u32>, Refusal> {
        if let Some(owner) = self.owner {
            if cred.map(|c| c.uid) != Some(owner) {
                return Err(Refusal::NotOwner {
                    uid: cred.map(|c| c.uid),
                    owner,
                });
            }
        }
        if self.no_descendants {
            let Some(cred) = cred else {
                return Err(Refusal::Descendant(Lineage {
                    pid: 0,
                    child: None,
                    group: None,
                    reason: "its credentials cannot be read",
                }));
            };
            lineage::admit_pid(cred.pid).map_err(Refusal::Descendant)?;
        }
        Ok(cred.map(|c| c.uid))
    }

    fn judge_tcp(
        &self,
        local: Option<SocketAddr>,
        remote: SocketAddr,
    ) -> Result<Option<u32>, Refusal> {
        if let Some(peers) = &self.peers {
            if !peers.contains(&remote.ip()) {
                return Err(Refusal::NotListed(remote.ip()));
            }
        }
        if self.owner.is_none() && !self.no_descendants {
            return Ok(None);
        }
        let socket = local.and_then(|l| diag::peer_socket(l, remote));
        if let Some(owner) = self.owner {
            match socket {
                Some(s) if s.uid == owner => {}
                _ => {
                    return Err(Refusal::NotOwner {
                        uid: socket.map(|s| s.uid),
                        owner,
                    })
                }
            }
        }
        let Some(s) = socket else {
            // A listed peer on another machine has no socket here; any other is one that
            // cannot be told (fail closed).
            return if self.peers.is_some() && !remote.ip().is_loopback() {
                Ok(None)
            } else {
                Err(Refusal::Unknown)
            };
        };
        if self.no_descendants {
            lineage::admit_socket(s.inode).map_err(Refusal::Descendant)?;
        }
        Ok(Some(s.uid))
    }
}

/// What is done with a connection beyond the bound.
type WhenFull<S> = Box<dyn Fn(S, &Peer) + Send + Sync>;

/// The bound on a door's open connections.
pub struct Slots<S> {
    max: usize,
    reserved: usize,
    grace: Duration,
    when_full: WhenFull<S>,
}

impl<S> std::fmt::Debug for Slots<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slots")
            .field("max", &self.max)
            .field("reserved", &self.reserved)
            .field("grace", &self.grace)
            .finish()
    }
}

/// Default of [`Slots::grace`].
pub const GRACE: Duration = Duration::from_secs(3);

impl<S: Send + 'static> Slots<S> {
    /// At most `max` connections open at once; one beyond them is closed at once (see
    /// [`Slots::when_full`]); none kept apart; open connections have [`GRACE`] after a cancel.
    pub fn new(max: usize) -> Slots<S> {
        Slots {
            max,
            reserved: 0,
            grace: GRACE,
            when_full: Box::new(|_, _| {}),
        }
    }

    /// Of the `max`, the last `reserved` are taken only when the others are full; the
    /// handler is told ([`Admitted::reserved`]) and decides what such a connection is served.
    pub fn reserved(mut self, reserved: usize) -> Slots<S> {
        self.reserved = reserved.min(self.max);
        self
    }

    /// What a connection beyond the bound is given (an answer written without waiting, a
    /// count, a log line) before it is closed; by default it is only closed.
    pub fn when_full(mut self, f: impl Fn(S, &Peer) + Send + Sync + 'static) -> Slots<S> {
        self.when_full = Box::new(f);
        self
    }

    /// How long open connections may run on after a cancel before they are aborted.
    pub fn grace(mut self, grace: Duration) -> Slots<S> {
        self.grace = grace;
        self
    }
}

/// One of the slots of [`Slots`]: held while the connection is served, freed when dropped.
#[derive(Debug)]
pub struct Slot {
    _permit: OwnedSemaphorePermit,
}

/// What the gate learned of an admitted connection.
#[derive(Debug)]
pub struct Admitted {
    /// Its peer.
    pub peer: Peer,
    /// The peer's uid, when the gate learned it: a Unix peer's, or a TCP peer's that was
    /// looked up (by [`Gate::owner`] or [`Gate::no_descendants`]).
    pub uid: Option<u32>,
    /// It holds one of the slots of [`Slots::reserved`].
    pub reserved: bool,
    /// Its slot: the handler holds it while it serves the connection (or drops it sooner to
    /// let another in).
    pub slot: Slot,
}

/// After a failed accept (out of descriptors, a connection reset before it was accepted),
/// the loop waits this long rather than spin.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Accepts on `listener` until `cancel`: each connection's peer judged by `gate` before a
/// byte is read and before it takes a slot, then bounded by `slots`, then served by
/// `handler` on a task of its own. On cancel the listener is closed, open connections have
/// [`Slots::grace`] to finish, and the rest are aborted (as they are when this future is
/// dropped).
pub async fn serve<L, H, F>(
    listener: L,
    gate: Gate,
    slots: Slots<L::Stream>,
    handler: H,
    cancel: CancellationToken,
) where
    L: Listener,
    H: Fn(L::Stream, Admitted) -> F,
    F: Future<Output = ()> + Send + 'static,
{
    let general = Arc::new(Semaphore::new(slots.max - slots.reserved));
    let kept = Arc::new(Semaphore::new(slots.reserved));
    let mut open = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = cancel.cancelled() => break,
            Some(done) = open.join_next(), if !open.is_empty() => {
                if let Err(e) = done {
                    if e.is_panic() {
                        tracing::error!(door = gate.door, error = %e, "a connection's task panicked");
                    }
                }
                continue;
            }
            a = listener.next() => a,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(error = %e, "{}: accept failed", gate.door);
                tokio::select! {
                    () = cancel.cancelled() => break,
                    () = tokio::time::sleep(ACCEPT_PAUSE) => continue,
                }
            }
        };
        let uid = match gate.judge(&peer) {
            Ok(uid) => uid,
            Err(why) => {
                drop(stream);
                if let Some(f) = &gate.on_refusal {
                    f(&peer, &why);
                }
                continue;
            }
        };
        let (permit, reserved) = match general.clone().try_acquire_owned() {
            Ok(p) => (p, false),
            Err(_) => match kept.clone().try_acquire_owned() {
                Ok(p) => (p, true),
                Err(_) => {
                    (slots.when_full)(stream, &peer);
                    continue;
                }
            },
        };
        let admitted = Admitted {
            peer,
            uid,
            reserved,
            slot: Slot { _permit: permit },
        };
        open.spawn(handler(stream, admitted));
    }
    drop(listener);
    let finished = async { while open.join_next().await.is_some() {} };
    if tokio::time::timeout(slots.grace, finished).await.is_err() {
        tracing::debug!(
            door = gate.door,
            open = open.len(),
            "connections still open after the grace were closed"
        );
    }
    open.shutdown().await;
}

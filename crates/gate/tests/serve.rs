//! The gate's accept loop on real sockets, with real peers: another uid's process, a child of
//! this process (the daemon, here), this process itself.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly by design")]
#![allow(clippy::disallowed_macros, reason = "a test says why it is skipped")]

use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use gate::{Admitted, Gate, Peer, Refusal, Slots};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What the door under test saw.
#[derive(Debug)]
enum Seen {
    Admitted { uid: Option<u32>, reserved: bool },
    Refused(Refusal),
    Full,
}

/// A door under test: each admitted connection is answered "served\n" and held until its peer
/// closes it; each refusal and each connection beyond the bound is reported.
fn door<L: gate::Listener>(
    listener: L,
    gate: Gate,
    slots: Slots<L::Stream>,
    cancel: CancellationToken,
) -> (mpsc::UnboundedReceiver<Seen>, tokio::task::JoinHandle<()>)
where
    L::Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let refused = tx.clone();
    let full = tx.clone();
    let gate = gate.on_refusal(move |_: &Peer, why: &Refusal| {
        let _ = refused.send(Seen::Refused(why.clone()));
    });
    let slots = slots.when_full(move |_, _| {
        let _ = full.send(Seen::Full);
    });
    let served = tokio::spawn(gate::serve(
        listener,
        gate,
        slots,
        move |mut stream: L::Stream, a: Admitted| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(Seen::Admitted {
                    uid: a.uid,
                    reserved: a.reserved,
                });
                let _slot = a.slot;
                let _ = stream.write_all(b"served\n").await;
                let mut buf = [0u8; 64];
                while let Ok(n) = stream.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                }
            }
        },
        cancel,
    ));
    (rx, served)
}

async fn next(rx: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("the door reported nothing within 10 s")
        .expect("the door stopped")
}

#[expect(
    clippy::disallowed_methods,
    reason = "a test peer of a door under test"
)]
async fn connect(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port)).await.unwrap()
}

/// Reads what the door says before it closes.
async fn said<S: tokio::io::AsyncRead + Unpin>(s: &mut S) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 7];
    while got.len() < 7 {
        match tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// `program args…` run as `nobody` (uid 65534): another local user. `None` when this test
/// does not run as root and so cannot be another user.
fn as_nobody(program: &str, args: &[&str]) -> Option<std::process::Child> {
    if gate::owner_uid() != 0 {
        println!("skipped: only root can run a process as another user (uid 65534) here");
        return None;
    }
    Some(
        Command::new(program)
            .args(args)
            .current_dir("/")
            .uid(65534)
            .gid(65534)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

#[tokio::test]
async fn another_uids_tcp_peer_is_refused_before_a_byte_is_read() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let owner = gate::owner_uid();
    let cancel = CancellationToken::new();
    let (mut rx, served) = door(
        l,
        Gate::open("test").owner(owner),
        Slots::new(4),
        cancel.clone(),
    );

    // It sends nothing and waits for an answer: the refusal needs no byte of it.
    let script =
        format!("exec 3<>/dev/tcp/127.0.0.1/{port}; timeout 5 cat <&3; echo \"closed: $?\"");
    let Some(child) = as_nobody("bash", &["-c", &script]) else {
        cancel.cancel();
        return;
    };
    match next(&mut rx).await {
        Seen::Refused(r) => assert_eq!(
            r,
            Refusal::NotOwner {
                uid: Some(65534),
                owner
            }
        ),
        other => panic!("another uid's peer was not refused: {other:?}"),
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("served"),
        "another uid was served: {stdout}"
    );
    assert!(
        stdout.contains("closed: 0"),
        "the connection was not closed at once: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The owner's own process is served, and its uid is known.
    let mut own = connect(port).await;
    assert_eq!(said(&mut own).await, "served\n");
    match next(&mut rx).await {
        Seen::Admitted { uid, reserved } => {
            assert_eq!(uid, Some(owner));
            assert!(!reserved);
        }
        other => panic!("the owner was not served: {other:?}"),
    }
    drop(own);
    cancel.cancel();
    served.await.unwrap();
}

#[tokio::test]
async fn another_uids_unix_peer_is_refused_by_its_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("door.sock");
    let l = UnixListener::bind(&path).unwrap();
    // Every user may reach the socket: only the gate stands in the way.
    use std::os::unix::fs::PermissionsExt as _;
    for p in [dir.path(), path.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let owner = gate::owner_uid();
    let cancel = CancellationToken::new();
    let (mut rx, served) = door(
        l,
        Gate::open("test").owner(owner),
        Slots::new(4),
        cancel.clone(),
    );

    let script = format!(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({:?})\ns.settimeout(5)\nprint('said', repr(s.recv(64)))",
        path.to_str().unwrap()
    );
    let Some(child) = as_nobody("python3", &["-c", &script]) else {
        cancel.cancel();
        return;
    };
    match next(&mut rx).await {
        Seen::Refused(r) => assert_eq!(
            r,
            Refusal::NotOwner {
                uid: Some(65534),
                owner
            }
        ),
        other => panic!("another uid's peer was not refused: {other:?}"),
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        "said b''",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut own = UnixStream::connect(&path).await.unwrap();
    assert_eq!(said(&mut own).await, "served\n");
    assert!(matches!(
        next(&mut rx).await,
        Seen::Admitted { uid: Some(u), .. } if u == owner
    ));
    drop(own);
    cancel.cancel();
    served.await.unwrap();
}

/// A child of this process that connects with `python3` (`connect` is its Python) and holds
/// the connection; what it was told is on its stdout.
fn child_connecting(connect: &str) -> std::process::Child {
    Command::new("python3")
        .args([
            "-c",
            &format!("import socket,sys\n{connect}\ns.settimeout(5)\nprint('said', repr(s.recv(64)))\nsys.stdout.flush()"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn a_descendant_is_refused_on_tcp_and_unix_and_this_process_admitted() {
    let cancel = CancellationToken::new();

    // TCP: the processes holding the peer's socket.
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let gate = Gate::open("test").owner(gate::owner_uid()).no_descendants();
    let (mut rx, served) = door(l, gate, Slots::new(4), cancel.clone());
    let child = child_connecting(&format!(
        "s = socket.create_connection(('127.0.0.1', {port}))"
    ));
    let pid = child.id();
    match next(&mut rx).await {
        Seen::Refused(Refusal::Descendant(r)) => {
            assert_eq!(r.reason, "it descends from the daemon");
            assert_eq!(r.child, Some(pid));
            assert_eq!(r.pid, pid);
        }
        other => panic!("a child was not refused: {other:?}"),
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "said b''");
    let mut own = connect(port).await;
    assert_eq!(said(&mut own).await, "served\n");
    assert!(matches!(next(&mut rx).await, Seen::Admitted { .. }));

    // Unix: the pid of the peer's credentials.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("door.sock");
    let l = UnixListener::bind(&path).unwrap();
    let (mut urx, userved) = door(
        l,
        Gate::open("test").no_descendants(),
        Slots::new(4),
        cancel.clone(),
    );
    let child = child_connecting(&format!(
        "s = socket.socket(socket.AF_UNIX)\ns.connect({:?})",
        path.to_str().unwrap()
    ));
    let pid = child.id();
    match next(&mut urx).await {
        Seen::Refused(Refusal::Descendant(r)) => {
            assert_eq!(r.reason, "it descends from the daemon");
            assert_eq!(r.child, Some(pid));
            assert_eq!(r.pid, pid);
        }
        other => panic!("a child was not refused: {other:?}"),
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "said b''");
    let mut own_unix = UnixStream::connect(&path).await.unwrap();
    assert_eq!(said(&mut own_unix).await, "served\n");
    assert!(matches!(next(&mut urx).await, Seen::Admitted { .. }));

    drop((own, own_unix));
    cancel.cancel();
    served.await.unwrap();
    userved.await.unwrap();
}

#[tokio::test]
async fn an_address_not_listed_is_refused() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let cancel = CancellationToken::new();
    let gate = Gate::open("test").peers(vec!["192.0.2.1".parse().unwrap()]);
    let (mut rx, served) = door(l, gate, Slots::new(4), cancel.clone());
    let mut c = connect(port).await;
    match next(&mut rx).await {
        Seen::Refused(r) => {
            assert_eq!(r, Refusal::NotListed("127.0.0.1".parse().unwrap()));
            assert_eq!(r.to_string(), "127.0.0.1 is not among the admitted peers");
        }
        other => panic!("an address not listed was not refused: {other:?}"),
    }
    assert_eq!(said(&mut c).await, "");
    cancel.cancel();
    served.await.unwrap();
}

#[tokio::test]
async fn the_bound_holds_and_the_reserved_slots_are_taken_last() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let cancel = CancellationToken::new();
    let (mut rx, served) = door(
        l,
        Gate::open("test"),
        Slots::new(2).reserved(1),
        cancel.clone(),
    );
    let mut first = connect(port).await;
    assert_eq!(said(&mut first).await, "served\n");
    assert!(matches!(
        next(&mut rx).await,
        Seen::Admitted {
            reserved: false,
            uid: None
        }
    ));
    let mut second = connect(port).await;
    assert_eq!(said(&mut second).await, "served\n");
    assert!(matches!(
        next(&mut rx).await,
        Seen::Admitted { reserved: true, .. }
    ));
    // Beyond the bound: closed at once, never queued.
    let mut third = connect(port).await;
    assert!(matches!(next(&mut rx).await, Seen::Full));
    assert_eq!(said(&mut third).await, "");
    // A slot freed by a connection that ended is taken again, the general one first.
    drop(first);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut fourth = connect(port).await;
    assert_eq!(said(&mut fourth).await, "served\n");
    assert!(matches!(
        next(&mut rx).await,
        Seen::Admitted {
            reserved: false,
            ..
        }
    ));
    let mut fifth = connect(port).await;
    assert!(matches!(next(&mut rx).await, Seen::Full));
    assert_eq!(said(&mut fifth).await, "");
    drop((second, fourth));
    cancel.cancel();
    served.await.unwrap();
}

#[tokio::test]
async fn cancel_stops_accepting_and_ends_what_outlives_the_grace() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let cancel = CancellationToken::new();
    // The handler ignores the cancel: the gate ends it after the grace.
    let (mut rx, served) = door(
        l,
        Gate::open("test"),
        Slots::new(4).grace(Duration::from_millis(300)),
        cancel.clone(),
    );
    let mut held = connect(port).await;
    assert_eq!(said(&mut held).await, "served\n");
    assert!(matches!(next(&mut rx).await, Seen::Admitted { .. }));
    let t = tokio::time::Instant::now();
    cancel.cancel();
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("serve did not return after the grace")
        .unwrap();
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "serve returned after {took:?}"
    );
    // The connection that outlived the grace was closed, and nothing is accepted any more.
    let mut buf = [0u8; 8];
    let n = tokio::time::timeout(Duration::from_secs(2), held.read(&mut buf))
        .await
        .expect("the held connection was not closed");
    assert!(matches!(n, Ok(0) | Err(_)), "{n:?}");
    #[expect(
        clippy::disallowed_methods,
        reason = "a test peer of a door under test"
    )]
    let again = TcpStream::connect(("127.0.0.1", port)).await;
    assert!(again.is_err(), "a connection was accepted after the cancel");
}

//! The service manager's notifications, received on a datagram socket the test listens on as
//! `NOTIFY_SOCKET`: `READY=1` once the daemon answers, `WATCHDOG=1` pings with a small
//! `WATCHDOG_USEC`, `STOPPING=1` after SIGTERM.

use std::os::unix::net::UnixDatagram;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{maven, wait_exit, Daemon, Home};

fn recv(sock: &UnixDatagram) -> String {
    let mut buf = [0u8; 256];
    let n = sock
        .recv(&mut buf)
        .expect("no notification within the timeout");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

fn spawn(home: &Home, notify: &std::path::Path, watchdog_usec: Option<&str>) -> Daemon {
    let mut c = maven();
    c.arg("--data")
        .arg(home.data())
        .env("XDG_CONFIG_HOME", home.dir.path().join("xdg"))
        .env("NOTIFY_SOCKET", notify)
        .env_remove("WATCHDOG_USEC")
        .env_remove("WATCHDOG_PID")
        .arg("daemon")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(u) = watchdog_usec {
        c.env("WATCHDOG_USEC", u);
    }
    Daemon {
        child: Some(c.spawn().unwrap()),
    }
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real daemon processes by the wall clock"
)]
fn ready_when_ipc_answers_watchdog_pings_and_stopping_on_sigterm() {
    let home = Home::new();
    let path = home.dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&path).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // 200 ms: a ping every 100 ms.
    let d = spawn(&home, &path, Some("200000"));

    assert_eq!(recv(&sock), "READY=1");
    // Ready means answering: status works at once.
    assert!(home.run(&["status", "--json"]).status.success());
    let t0 = Instant::now();
    let mut pings = 0;
    while pings < 3 {
        let m = recv(&sock);
        assert_eq!(m, "WATCHDOG=1");
        pings += 1;
    }
    assert!(t0.elapsed() < Duration::from_secs(10));

    Daemon::kill_term(&d);
    loop {
        let m = recv(&sock);
        if m == "STOPPING=1" {
            break;
        }
        assert_eq!(m, "WATCHDOG=1", "unexpected notification");
    }
    let out = wait_exit(d, Duration::from_secs(30));
    assert!(out.status.success(), "{:?}", out.status);
}

#[test]
fn an_abstract_socket_and_another_watchdog_pid() {
    use std::os::linux::net::SocketAddrExt;
    let home = Home::new();
    let name = format!("maven-it-notify-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let sock = UnixDatagram::bind_addr(&addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut c = maven();
    c.arg("--data")
        .arg(home.data())
        .env("XDG_CONFIG_HOME", home.dir.path().join("xdg"))
        .env("NOTIFY_SOCKET", format!("@{name}"))
        // The watchdog is some other process's: this daemon sends no pings.
        .env("WATCHDOG_USEC", "100000")
        .env("WATCHDOG_PID", "1")
        .arg("daemon")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let d = Daemon {
        child: Some(c.spawn().unwrap()),
    };
    assert_eq!(recv(&sock), "READY=1");
    std::thread::sleep(Duration::from_millis(400));
    Daemon::kill_term(&d);
    assert_eq!(recv(&sock), "STOPPING=1");
    let out = wait_exit(d, Duration::from_secs(30));
    assert!(out.status.success());
}

impl Daemon {
    /// Sends SIGTERM without waiting.
    fn kill_term(&self) {
        let st = std::process::Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
    }
}

//! The service manager's notifications (systemd's `sd_notify` protocol, written by hand): one
//! datagram per state change to the socket named by `$NOTIFY_SOCKET` (a path, or an abstract
//! address when it starts with `@`). `READY=1` once IPC answers, `STOPPING=1` when shutdown
//! begins, `WATCHDOG=1` every half `$WATCHDOG_USEC` while the runtime runs (when
//! `$WATCHDOG_PID` is set it must name this process). Without `$NOTIFY_SOCKET` nothing is sent.

use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Sends one state to the service manager, when there is one. A failure is logged, never fatal.
fn send(state: &str) {
    let Some(target) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    if let Err(e) = send_to(&target, state) {
        tracing::warn!(error = %e, state, "cannot notify the service manager");
    }
}

fn send_to(target: &std::ffi::OsStr, state: &str) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = target.as_bytes();
    let addr = match bytes.strip_prefix(b"@") {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(name)?
        }
        None => SocketAddr::from_pathname(target)?,
    };
    let sock = UnixDatagram::unbound()?;
    sock.send_to_addr(state.as_bytes(), &addr)?;
    Ok(())
}

/// The daemon answers on its socket.
pub(crate) fn ready() {
    send("READY=1");
}

/// Shutdown has begun.
pub(crate) fn stopping() {
    send("STOPPING=1");
}

/// The watchdog's ping interval, half of `$WATCHDOG_USEC`, when the watchdog is on for this
/// process.
fn watchdog_interval() -> Option<Duration> {
    std::env::var_os("NOTIFY_SOCKET")?;
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.trim().parse().ok()?;
    if usec == 0 {
        return None;
    }
    if let Ok(pid) = std::env::var("WATCHDOG_PID") {
        if pid.trim().parse::<u32>().ok() != Some(std::process::id()) {
            return None;
        }
    }
    Some(Duration::from_micros(usec / 2).max(Duration::from_millis(1)))
}

/// Starts the watchdog's pings on the runtime (so a stalled runtime stops them), when asked for.
pub(crate) fn spawn_watchdog(cancel: &CancellationToken, tracker: &TaskTracker) {
    let Some(every) = watchdog_interval() else {
        return;
    };
    tracing::info!(interval = ?every, "watchdog pings on");
    let cancel = cancel.clone();
    tracker.spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tick.tick() => send("WATCHDOG=1"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_reaches_a_path_and_an_abstract_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let rx = UnixDatagram::bind(&path).unwrap();
        send_to(path.as_os_str(), "READY=1").unwrap();
        let mut buf = [0u8; 64];
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1");

        use std::os::linux::net::SocketAddrExt;
        let name = format!("maven-notify-test-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let rx = UnixDatagram::bind_addr(&addr).unwrap();
        send_to(std::ffi::OsStr::new(&format!("@{name}")), "STOPPING=1").unwrap();
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"STOPPING=1");
    }
}

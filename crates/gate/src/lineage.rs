//! Whether a peer descends from the daemon (X-3, V-7): no process the daemon started — a
//! server, sandboxed or not, or anything that server started — may speak to a door that acts
//! for the owner, so a server can never walk the confirm turn it is guarded by.
//!
//! A peer is refused when the daemon is among its ancestors (the `/proc/PID/stat` parent
//! chain) or when it lives in another user namespace than the daemon's (every sandbox has its
//! own). The daemon is a child subreaper ([`become_subreaper`]), so a double-forked server,
//! whose parent died, is re-parented to the daemon rather than to init and still descends
//! from it. A peer that cannot be looked up is refused (fail closed); a pid of 0 (a process
//! outside the daemon's pid namespace, which no descendant can be) is not a descendant.
//!
//! A Unix peer's pid comes from `SO_PEERCRED` ([`admit_pid`]); a TCP peer on this machine is
//! judged by every process holding its socket, found by the socket's inode
//! ([`admit_socket`]).

use std::path::PathBuf;

/// The longest parent chain walked (a chain is far shorter; a loop cannot hold the walk).
const MAX_DEPTH: usize = 4096;

/// Why a peer is refused for its descent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lineage {
    /// The peer's pid.
    pub pid: u32,
    /// The daemon's direct child it descends from (a server's process), when known.
    pub child: Option<u32>,
    /// Its process group, when known (a server's group unless it left it).
    pub group: Option<u32>,
    /// Why.
    pub reason: &'static str,
}

/// Makes the daemon the reaper of its orphaned descendants (`PR_SET_CHILD_SUBREAPER`).
pub fn become_subreaper() -> std::io::Result<()> {
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
    Ok(())
}

/// Checks a Unix peer by the pid of its credentials (`SO_PEERCRED`; `None` when they name
/// no process): `Ok` for a process that does not descend from this daemon.
pub fn admit_pid(pid: Option<i32>) -> Result<(), Lineage> {
    let refuse = |reason| Lineage {
        pid: 0,
        child: None,
        group: None,
        reason,
    };
    match pid {
        None => Err(refuse("its credentials name no process")),
        Some(0) => Ok(()),
        Some(pid) => match u32::try_from(pid) {
            Ok(pid) => check(pid, std::process::id()),
            Err(_) => Err(refuse("its pid is not valid")),
        },
    }
}

/// The most processes [`holders`] looks at, and the most descriptors of one.
const MAX_PROCESSES: usize = 65_536;
const MAX_FDS: usize = 65_536;

/// The processes that hold the socket `inode` (a descriptor linking to `socket:[INODE]`):
/// those this daemon can see and read the descriptors of (its own uid's, and its sandboxes').
pub(crate) fn holders(inode: u32) -> Vec<u32> {
    let want = format!("socket:[{inode}]");
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in procs.flatten().take(MAX_PROCESSES) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        if fds
            .flatten()
            .take(MAX_FDS)
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == want.as_str()))
        {
            out.push(pid);
        }
    }
    out
}

/// Checks the processes holding the peer's socket `inode`: `Ok` when at least one is found
/// and none descends from this daemon or lives in another user namespace (X-3, V-7: a
/// server, sandboxed or not, never speaks to a door that acts for the owner). A socket no
/// process can be found holding is refused (fail closed).
pub fn admit_socket(inode: u32) -> Result<(), Lineage> {
    let daemon = std::process::id();
    let found = holders(inode);
    if found.is_empty() {
        return Err(Lineage {
            pid: 0,
            child: None,
            group: None,
            reason: "no process can be found holding its socket",
        });
    }
    for pid in found {
        check(pid, daemon)?;
    }
    Ok(())
}

/// `Ok` when `pid` does not descend from `daemon` and shares its user namespace.
pub fn check(pid: u32, daemon: u32) -> Result<(), Lineage> {
    let mut r = Lineage {
        pid,
        child: None,
        group: None,
        reason: "",
    };
    let Some(first) = stat(pid) else {
        r.reason = "it cannot be looked up";
        return Err(r);
    };
    r.group = Some(first.pgrp);
    let ns = |p: &str| std::fs::read_link(PathBuf::from(p)).ok();
    let theirs = ns(&format!("/proc/{pid}/ns/user"));
    if theirs.is_none() || theirs != ns("/proc/self/ns/user") {
        r.reason = "it runs in another user namespace (a sandbox)";
        // Its ancestry still names the server when it can be read.
        r.child = direct_child(pid, daemon);
        return Err(r);
    }
    if pid == daemon {
        return Ok(());
    }
    let (mut cur, mut st) = (pid, first);
    for _ in 0..MAX_DEPTH {
        if st.ppid == daemon {
            r.child = Some(cur);
            r.reason = "it descends from the daemon";
            return Err(r);
        }
        if st.ppid <= 1 {
            return Ok(());
        }
        cur = st.ppid;
        st = match stat(cur) {
            Some(s) => s,
            None => {
                r.reason = "its ancestry cannot be read";
                return Err(r);
            }
        };
    }
    r.reason = "its ancestry is too deep";
    Err(r)
}

fn direct_child(pid: u32, daemon: u32) -> Option<u32> {
    let mut cur = pid;
    for _ in 0..MAX_DEPTH {
        let st = stat(cur)?;
        if st.ppid == daemon {
            return Some(cur);
        }
        if st.ppid <= 1 {
            return None;
        }
        cur = st.ppid;
    }
    None
}

/// The fields of `/proc/PID/stat` used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) state: char,
    pub(crate) ppid: u32,
    pub(crate) pgrp: u32,
}

/// Reads `/proc/PID/stat`. The command name (field 2) may hold any byte, `)` included, so the
/// fields are read after its last `)`.
pub(crate) fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &[u8]) -> Option<Stat> {
    let close = text.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(text.get(close + 1..)?).ok()?;
    let mut f = rest.split_ascii_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    Some(Stat { state, ppid, pgrp })
}

/// Reaps orphans the daemon adopted as subreaper: a child of the daemon that is still a
/// zombie on two passes in a row and is not in the daemon's own process group. The runtime
/// reaps the servers it started as soon as they exit (each has a task waiting on it); a local
/// act stays in the daemon's group and its task may read its output before it waits, so it is
/// never taken. `seen` carries the zombies of the previous pass.
pub fn reap_adopted(seen: &mut Vec<u32>) -> usize {
    let me = std::process::id();
    let Some(own_group) = stat(me).map(|s| s.pgrp) else {
        return 0;
    };
    let mut zombies = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    for t in tasks.flatten() {
        let Ok(list) = std::fs::read_to_string(t.path().join("children")) else {
            continue;
        };
        for pid in list
            .split_ascii_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
        {
            if stat(pid).is_some_and(|s| s.state == 'Z' && s.ppid == me && s.pgrp != own_group) {
                zombies.push(pid);
            }
        }
    }
    let mut reaped = 0;
    for &pid in zombies.iter().filter(|p| seen.contains(p)) {
        let Some(p) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            continue;
        };
        if let Ok(Some(_)) = rustix::process::waitpid(Some(p), rustix::process::WaitOptions::NOHANG)
        {
            reaped += 1;
        }
    }
    zombies.retain(|p| !seen.contains(p));
    *seen = zombies;
    reaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_follow_the_last_parenthesis() {
        assert_eq!(
            parse_stat(b"42 (a) b) c) S 7 42 42 0 -1"),
            Some(Stat {
                state: 'S',
                ppid: 7,
                pgrp: 42
            })
        );
        assert_eq!(parse_stat(b"42 (x"), None);
        assert_eq!(parse_stat(b""), None);
    }

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "a loopback listener of this test's own"
    )]
    fn a_socket_held_by_a_child_is_refused_and_ones_own_admitted() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        // A child of this process (the daemon, here) connects and holds its socket.
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                &format!(
                    "import socket,time; s=socket.create_connection(('127.0.0.1',{port})); time.sleep(10)"
                ),
            ])
            .spawn()
            .unwrap();
        let (s, peer) = l.accept().unwrap();
        let sock = crate::diag::peer_socket(s.local_addr().unwrap(), peer).unwrap();
        assert_eq!(holders(sock.inode), vec![child.id()]);
        let r = admit_socket(sock.inode).unwrap_err();
        assert_eq!(r.reason, "it descends from the daemon");
        assert_eq!(r.child, Some(child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
        // This process's own connection is admitted.
        let c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (s, peer) = l.accept().unwrap();
        assert_eq!(peer, c.local_addr().unwrap());
        let sock = crate::diag::peer_socket(s.local_addr().unwrap(), peer).unwrap();
        assert_eq!(admit_socket(sock.inode), Ok(()));
        // A socket nobody holds is refused.
        assert_eq!(
            admit_socket(u32::MAX).unwrap_err().reason,
            "no process can be found holding its socket"
        );
    }

    #[test]
    fn a_child_is_refused_and_a_stranger_admitted() {
        let me = std::process::id();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let r = check(child.id(), me).unwrap_err();
        assert_eq!(r.child, Some(child.id()));
        assert_eq!(r.reason, "it descends from the daemon");
        // Our parent (the test runner's) does not descend from us.
        let parent = stat(me).unwrap().ppid;
        assert_eq!(check(parent, me), Ok(()));
        assert_eq!(check(me, me), Ok(()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(
            check(u32::MAX - 1, me).unwrap_err().reason,
            "it cannot be looked up"
        );
    }
}

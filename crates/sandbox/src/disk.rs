//! The disk bound of a sandboxed server: what its private directory lists, and what its
//! processes hold open that no directory lists any more (a file unlinked while open still
//! takes its blocks until the last descriptor closes), against the bound in force — the
//! smaller of `sandbox.disk` and the free space of the private directory's file system less
//! [`RESERVE`], so that the server is stopped before Maven's own store runs out of room.

use std::collections::HashSet;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::Duration;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

use crate::plan::Plan;

/// Space kept free on the data directory's file system for Maven's store: 32 MiB. The store
/// grows by a few KiB a turn; 32 MiB is room for its write-ahead log to checkpoint (SQLite
/// needs about the size of the log again, bounded at a few MiB by its autocheckpoint) many
/// times over, for the owner's step-up and the acts log while a server that filled the disk is
/// being stopped, and it is small enough not to refuse a server on a small partition.
pub(crate) const RESERVE: u64 = 32 * 1024 * 1024;

pub(crate) use crate::ids::MAX_ENTRIES;

/// The shortest time between two measures of a running server; a measure that took long
/// (a large directory) waits ten times its own duration, so measuring costs at most a tenth
/// of a core.
pub(crate) const CHECK: Duration = Duration::from_millis(250);

/// The bound in force for one start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bound {
    /// In bytes.
    pub(crate) bytes: u64,
    /// Whether the free space (not `sandbox.disk`) set it.
    pub(crate) by_free_space: bool,
    /// The free space of the file system when it was set, in bytes.
    pub(crate) free: u64,
}

impl Bound {
    /// Whether the file system has no room beyond [`RESERVE`] at all: whatever the server
    /// holds, the fault is not its own.
    pub(crate) fn no_room(&self) -> bool {
        self.by_free_space && self.free <= RESERVE
    }
}

const MIB: u64 = 1024 * 1024;

/// The bound in force when the server starts with `used` bytes already in its private
/// directory: `sandbox.disk`, or less when the file system has less room than that beyond
/// [`RESERVE`].
pub(crate) fn in_force(plan: &Plan, used: u64) -> Bound {
    let free = rustix::fs::statvfs(&plan.home)
        .map(|s| s.f_bavail.saturating_mul(s.f_frsize))
        .unwrap_or(u64::MAX);
    let room = used.saturating_add(free.saturating_sub(RESERVE));
    if room < plan.disk {
        Bound {
            bytes: room,
            by_free_space: true,
            free,
        }
    } else {
        Bound {
            bytes: plan.disk,
            by_free_space: false,
            free,
        }
    }
}

/// What a server occupies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    /// Bytes its private directory lists.
    pub(crate) listed: u64,
    /// Bytes of files its processes hold open that no directory lists.
    pub(crate) deleted: u64,
    /// Whether the private directory lists more than [`MAX_ENTRIES`].
    pub(crate) too_many: bool,
}

impl Usage {
    pub(crate) fn total(&self) -> u64 {
        self.listed.saturating_add(self.deleted)
    }

    /// Whether it is over `bound`.
    pub(crate) fn over(&self, bound: Bound) -> bool {
        self.too_many || self.total() > bound.bytes
    }
}

/// The bytes `dir` and everything below it occupy on disk; links are not followed. `None`
/// when it lists more than [`MAX_ENTRIES`].
pub(crate) fn listed(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt as _;
    let mut total = 0u64;
    let mut todo = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return None;
            }
            let Ok(m) = e.metadata() else { continue };
            total = total.saturating_add(m.blocks().saturating_mul(512));
            if m.is_dir() {
                todo.push(e.path());
            }
        }
    }
    Some(total)
}

/// The bytes of regular files without a name (unlinked) that the process `root` and its
/// descendants hold open, each file once, read through `proc` (a descriptor of the machine's
/// `/proc`, opened before the server's own was mounted over it).
pub(crate) fn held_deleted(proc: &OwnedFd, root: u32) -> u64 {
    let mut pids = vec![root];
    let mut seen: HashSet<u32> = pids.iter().copied().collect();
    let mut files: HashSet<(u64, u64)> = HashSet::new();
    let mut total = 0u64;
    let mut i = 0;
    while i < pids.len() {
        let pid = pids[i];
        i += 1;
        for child in children(proc, pid) {
            if seen.len() < 1_000_000 && seen.insert(child) {
                pids.push(child);
            }
        }
        let Some(fds) = dir_at(proc, &format!("{pid}/fd")) else {
            continue;
        };
        for name in fds {
            let Ok(st) = rustix::fs::statat(proc, format!("{pid}/fd/{name}"), AtFlags::empty())
            else {
                continue;
            };
            if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || st.st_nlink != 0 {
                continue;
            }
            if files.insert((st.st_dev, st.st_ino)) {
                let blocks = u64::try_from(st.st_blocks).unwrap_or(0);
                total = total.saturating_add(blocks.saturating_mul(512));
            }
        }
    }
    total
}

/// The children of every thread of `pid`.
fn children(proc: &OwnedFd, pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for tid in dir_at(proc, &format!("{pid}/task")).unwrap_or_default() {
        let Ok(fd) = rustix::fs::openat(
            proc,
            format!("{pid}/task/{tid}/children"),
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            continue;
        };
        let mut text = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = rustix::io::read(&fd, &mut buf) {
            text.extend_from_slice(&buf[..n]);
            if text.len() > 1 << 20 {
                break;
            }
        }
        out.extend(
            String::from_utf8_lossy(&text)
                .split_whitespace()
                .filter_map(|w| w.parse::<u32>().ok()),
        );
    }
    out
}

/// The names in directory `rel` of `proc` (`.` and `..` left out).
fn dir_at(proc: &OwnedFd, rel: &str) -> Option<Vec<String>> {
    let fd = rustix::fs::openat(
        proc.as_fd(),
        rel,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut dir = Dir::read_from(&fd).ok()?;
    let mut names = Vec::new();
    while let Some(Ok(e)) = dir.read() {
        let name = e.file_name().to_string_lossy();
        if name != "." && name != ".." {
            names.push(name.into_owned());
        }
    }
    Some(names)
}

/// A size as the owner reads it: MiB from one MiB up, KiB below that.
pub(crate) fn size(bytes: u64) -> String {
    if bytes >= MIB {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{} KiB", bytes.div_ceil(1024))
    }
}

/// What the owner is told when a server is over its bound (the caller says what was done),
/// and what to do about it.
pub(crate) fn over_words(plan: &Plan, bound: Bound, usage: Usage) -> (String, &'static str) {
    if bound.no_room() && !usage.too_many {
        return (
            format!(
                "the file system of its private directory {} has {} free, no more than the {} kept for Maven's store",
                plan.home.display(),
                size(bound.free),
                size(RESERVE)
            ),
            NO_ROOM_ADVICE,
        );
    }
    let why = if bound.by_free_space {
        format!(
            "its bound of {} (the free space of the data directory's file system, less {} kept for Maven's store; sandbox.disk is {})",
            size(bound.bytes),
            size(RESERVE),
            size(plan.disk)
        )
    } else {
        format!("its bound of {} (sandbox.disk)", size(bound.bytes))
    };
    let what = if usage.too_many {
        format!(
            "its private directory {} lists more than {MAX_ENTRIES} entries, more than",
            plan.home.display()
        )
    } else if usage.deleted > 0 {
        format!(
            "its private directory {} holds {} and its processes hold {} more in deleted files still open, more than",
            plan.home.display(),
            size(usage.listed),
            size(usage.deleted)
        )
    } else {
        format!(
            "its private directory {} holds {}, more than",
            plan.home.display(),
            size(usage.listed)
        )
    };
    (format!("{what} {why}"), OVER_ADVICE)
}

pub(crate) const OVER_ADVICE: &str = "Free space in it, or raise \"disk\" in its sandbox";

/// The advice when the file system itself is full.
pub(crate) const NO_ROOM_ADVICE: &str = "Free space on that file system";

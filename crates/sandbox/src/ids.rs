//! The uid and gid of a root daemon's server: one of its own, as systemd's
//! `DynamicUser` gives a service — never 0, never nobody, never one `/etc/passwd` or
//! `/etc/group` names, never another server's — kept across starts by the owner of the
//! server's private directory, which belongs to it.

use std::collections::HashSet;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

/// The first uid (and gid) a root daemon gives a server: 2,147,352,576, the start of a block
/// of 65,536 ids just below 2^31 that neither systemd's own ranges (dynamic users
/// 61184–65519, containers from 524288 in blocks) nor the usual subordinate id ranges of
/// `/etc/subuid` (from 100000, 65,536 per user) reach on an ordinary machine.
pub const FIRST_SERVER_UID: u32 = 0x7FFE_0000;
/// A directory listing more entries than this is refused (given to a uid) or over its bound
/// (measured) whatever they hold: no walk stops early and lets the rest pass.
pub(crate) const MAX_ENTRIES: usize = 1_000_000;

/// How many ids the block holds.
pub const SERVER_UIDS: u32 = 0x1_0000;

fn in_block(id: u32) -> bool {
    (FIRST_SERVER_UID..FIRST_SERVER_UID + SERVER_UIDS).contains(&id)
}

/// The ids named by `/etc/passwd` and `/etc/group` (their third field).
fn named_ids() -> HashSet<u32> {
    let mut ids = HashSet::new();
    for file in ["/etc/passwd", "/etc/group"] {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        ids.extend(
            text.lines()
                .filter_map(|l| l.split(':').nth(2)?.parse::<u32>().ok()),
        );
    }
    ids
}

/// The id of the server whose private directory is `home` (in `DATA/sandbox/`): the one its
/// directory already belongs to when that is still its own, else the first free one of the
/// block; the directory and everything in it (links included, never followed) are given to it.
pub(crate) fn allocate(home: &Path) -> std::io::Result<u32> {
    let id = choose(home)?;
    let owned = home
        .symlink_metadata()
        .is_ok_and(|m| m.uid() == id && m.gid() == id);
    if !owned {
        give(home, id)?;
    }
    Ok(id)
}

/// The uid a root daemon's server whose private directory is `home` (in `DATA/sandbox/`) runs
/// as: the one its directory already belongs to, else the one its next start gives it (the
/// first free id of the block, as that start chooses it; another server started first may take
/// it). Changes nothing: what a check says before the start.
pub fn server_uid(home: &Path) -> std::io::Result<u32> {
    choose(home)
}

/// The id [`allocate`] gives the server whose private directory is `home`.
fn choose(home: &Path) -> std::io::Result<u32> {
    let named = named_ids();
    let mut taken: HashSet<u32> = HashSet::new();
    if let Some(sandboxes) = home.parent() {
        let entries = match std::fs::read_dir(sandboxes) {
            Ok(d) => Some(d),
            // No server has started yet: none is taken.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        for e in entries.into_iter().flatten().flatten() {
            if e.path() == home {
                continue;
            }
            if let Ok(m) = e.path().symlink_metadata() {
                taken.insert(m.uid());
            }
        }
    }
    let own = home
        .symlink_metadata()
        .ok()
        .filter(|m| m.is_dir())
        .map(|m| m.uid());
    let free = |id: &u32| in_block(*id) && !taken.contains(id) && !named.contains(id);
    let id = match own.filter(free) {
        Some(id) => id,
        None => (FIRST_SERVER_UID..FIRST_SERVER_UID + SERVER_UIDS)
            .find(free)
            .ok_or_else(|| {
                std::io::Error::other(format!(
                    "no uid of the block {FIRST_SERVER_UID}–{} is free for a server of its own",
                    FIRST_SERVER_UID + SERVER_UIDS - 1
                ))
            })?,
    };
    Ok(id)
}

/// Gives `dir` and everything below it to `id` (uid and gid), without following a link.
fn give(dir: &Path, id: u32) -> std::io::Result<()> {
    let err = |p: &dyn std::fmt::Display, e: rustix::io::Errno| {
        std::io::Error::other(format!("{p}: giving it to uid {id}: {e}"))
    };
    let (uid, gid) = (
        Some(rustix::process::Uid::from_raw(id)),
        Some(rustix::process::Gid::from_raw(id)),
    );
    let flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY;
    let top = rustix::fs::open(dir, flags, Mode::empty()).map_err(|e| err(&dir.display(), e))?;
    rustix::fs::fchown(&top, uid, gid).map_err(|e| err(&dir.display(), e))?;
    let mut todo: Vec<OwnedFd> = vec![top];
    let mut seen = 0usize;
    while let Some(d) = todo.pop() {
        let mut names = Vec::new();
        let mut list = Dir::read_from(&d).map_err(|e| err(&dir.display(), e))?;
        while let Some(Ok(e)) = list.read() {
            let name = e.file_name().to_owned();
            if name.as_bytes() == b"." || name.as_bytes() == b".." {
                continue;
            }
            names.push((name, e.file_type()));
        }
        for (name, kind) in names {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Err(std::io::Error::other(format!(
                    "{} lists more than {} entries",
                    dir.display(),
                    MAX_ENTRIES
                )));
            }
            rustix::fs::chownat(&d, &name, uid, gid, AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| err(&dir.display(), e))?;
            if kind == FileType::Directory {
                if let Ok(sub) = rustix::fs::openat(&d, &name, flags, Mode::empty()) {
                    todo.push(sub);
                }
            }
        }
    }
    Ok(())
}

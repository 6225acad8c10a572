//! The data directory's file names and its lock: a leaf, taken by the daemon for its life and
//! by the offline commands that open the store (so that no daemon starts meanwhile). The store
//! is opened only through a held lock ([`DataLock::open_store`]): `store::Store::open` is a
//! disallowed method everywhere else (clippy.toml), so no command can open the database beside
//! a running daemon.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The database file's name inside the data directory.
pub const DB_NAME: &str = "maven.db";
/// The lock file's name inside the data directory.
const LOCK_NAME: &str = "maven.lock";

/// An exclusive lock on the data directory, held for the daemon's life. The kernel releases it
/// when the process dies, however it dies, so a crash never leaves a lock behind.
pub struct DataLock {
    _file: File,
    dir: PathBuf,
}

impl DataLock {
    /// Take the lock (the daemon, and the offline commands that open the store).
    pub fn acquire(dir: &Path) -> anyhow::Result<DataLock> {
        let path = dir.join(LOCK_NAME);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                anyhow::bail!(
                    "another maven daemon is already running on the data directory {}{}; stop it first, or give this one another --data",
                    dir.display(),
                    if pid.is_empty() { String::new() } else { format!(" (pid {pid})") }
                );
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()))
            }
        }
        file.set_len(0)?;
        file.rewind()?;
        writeln!(file, "{}", std::process::id())?;
        Ok(DataLock {
            _file: file,
            dir: dir.to_owned(),
        })
    }

    /// The database of the locked data directory (created when missing). The one place the
    /// binary opens the store, so whoever opens it holds the lock.
    #[expect(
        clippy::disallowed_methods,
        reason = "the one sanctioned open: the data directory's lock is held by `self`"
    )]
    pub async fn open_store(&self) -> Result<store::Store, store::Error> {
        store::Store::open(&self.dir.join(DB_NAME)).await
    }
}

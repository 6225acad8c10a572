//! What the daemon's services share: the configuration in force and the lock helpers; the
//! leaf of `daemon`.

use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use config::Config;

/// The configuration in force: replaced whole by a reload, read by every task that needs it.
pub(crate) type Current = Arc<RwLock<Arc<Config>>>;

/// The configuration in force now.
pub(super) fn current(config: &Current) -> Arc<Config> {
    read(config).clone()
}

/// A lock's data, also when a holder panicked: every write of the daemon's locks replaces a
/// whole value, so what a poisoned lock holds is still whole.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// [`lock`] for reading a `RwLock`.
pub(super) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

/// [`lock`] for writing a `RwLock`.
pub(super) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

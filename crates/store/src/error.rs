//! The one error type of the store.

use std::path::PathBuf;

use rusqlite::ErrorCode;

use crate::ToolState;

/// Everything that can go wrong in the store.
///
/// Each variant names what happened; the classifiers (`is_not_found`, `is_busy`, …) let callers
/// decide what to do without matching on variants that may grow.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database was written by a newer Maven: this build refuses it and leaves it untouched.
    #[error(
        "database {path} has schema version {found}, newer than version {supported} known to \
         this build; refusing to open it (the file was not modified)"
    )]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// The version stamped in the file.
        found: u32,
        /// The newest version this build can migrate to.
        supported: u32,
    },
    /// The file is an SQLite database of some other program; it is left untouched.
    #[error(
        "{path} is not a Maven database (application_id {application_id:#010x}, {tables} \
         existing objects); refusing to open it (the file was not modified)"
    )]
    ForeignDatabase {
        /// The file.
        path: PathBuf,
        /// The file's `PRAGMA application_id`.
        application_id: u32,
        /// How many schema objects the file already holds.
        tables: u32,
    },
    /// The file could not be opened or set up (missing directory, permissions, no WAL support).
    #[error("cannot open database {path}: {message}")]
    Open {
        /// The file.
        path: PathBuf,
        /// What SQLite or the setup said.
        message: String,
    },
    /// The named row does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// A row with that name or identity already exists.
    #[error("already exists: {0}")]
    AlreadyExists(String),
    /// The requested tool state change is not in the transition table.
    #[error("tool {name}: state change {from} -> {to} is not allowed")]
    BadTransition {
        /// The tool's local name.
        name: String,
        /// Its current state.
        from: ToolState,
        /// The refused target state.
        to: ToolState,
    },
    /// An argument was refused before it reached SQLite.
    #[error("invalid {what}: {why}")]
    Invalid {
        /// Which argument.
        what: &'static str,
        /// Why it was refused.
        why: String,
    },
    /// A schema constraint (CHECK, UNIQUE, foreign key, trigger) refused a write; the whole
    /// transaction was rolled back.
    #[error("constraint violated: {0}")]
    Constraint(String),
    /// The file is damaged, not a database, or holds a value this build cannot read.
    #[error("database is corrupt: {0}")]
    Corrupt(String),
    /// Another process held the database lock for longer than the busy timeout.
    #[error("database is busy (locked by another connection beyond the busy timeout)")]
    Busy,
    /// Any other SQLite failure.
    #[error("sqlite: {0}")]
    Sqlite(rusqlite::Error),
    /// The store was closed (or its worker thread is gone); no request can be served.
    #[error("the store is closed")]
    Closed,
    /// The operation panicked on the store's worker thread; its transaction was rolled back and
    /// the worker keeps serving.
    #[error("a store operation panicked; its transaction was rolled back")]
    Panicked,
}

impl Error {
    /// The named row does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound(_))
    }

    /// A row with that name or identity already exists.
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Error::AlreadyExists(_))
    }

    /// A refused tool state change.
    pub fn is_bad_transition(&self) -> bool {
        matches!(self, Error::BadTransition { .. })
    }

    /// The database lock was held too long by someone else; retrying later may succeed.
    pub fn is_busy(&self) -> bool {
        matches!(self, Error::Busy)
    }

    /// The store is closed; nothing will succeed on this handle again.
    pub fn is_closed(&self) -> bool {
        matches!(self, Error::Closed)
    }

    /// The file belongs to a newer build (or another program) and was left untouched.
    pub fn is_refused_file(&self) -> bool {
        matches!(
            self,
            Error::NewerSchema { .. } | Error::ForeignDatabase { .. }
        )
    }

    /// A schema constraint or an argument check refused the write.
    pub fn is_constraint(&self) -> bool {
        matches!(self, Error::Constraint(_) | Error::Invalid { .. })
    }

    /// The file is damaged or is not a database.
    pub fn is_corrupt(&self) -> bool {
        matches!(self, Error::Corrupt(_))
    }

    pub(crate) fn invalid(what: &'static str, why: impl Into<String>) -> Error {
        Error::Invalid {
            what,
            why: why.into(),
        }
    }

    pub(crate) fn corrupt(why: impl Into<String>) -> Error {
        Error::Corrupt(why.into())
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Error {
        match &e {
            rusqlite::Error::SqliteFailure(f, msg) => {
                let text = msg.clone().unwrap_or_else(|| f.to_string());
                match f.code {
                    ErrorCode::ConstraintViolation => Error::Constraint(text),
                    ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => Error::Corrupt(text),
                    ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Error::Busy,
                    _ => Error::Sqlite(e),
                }
            }
            rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
            | rusqlite::Error::InvalidColumnType(..) => Error::Corrupt(e.to_string()),
            _ => Error::Sqlite(e),
        }
    }
}

//! Why a configuration file was refused: the file, and for a file that is JSON, every problem
//! found, each with its JSON path.
//!
//! `Display` writes one line per problem, each starting with the file: `config.json:
//! feeds[0].name: missing: every feed needs a name`.

use std::fmt;

/// Why a configuration could not be loaded.
#[derive(Debug)]
pub enum Error {
    /// The file could not be read (an explicitly named file that does not exist, a permission).
    Read {
        /// The file, as shown in the message.
        file: String,
        /// What reading it answered.
        source: std::io::Error,
    },
    /// The file is not UTF-8.
    Encoding {
        /// The file, as shown in the message.
        file: String,
        /// Offset of the first byte that is not UTF-8.
        offset: usize,
    },
    /// The file is not JSON.
    Syntax {
        /// The file, as shown in the message.
        file: String,
        /// Line of the error, from 1.
        line: usize,
        /// Column of the error, from 1.
        column: usize,
        /// What the JSON parser said, without its position.
        message: String,
    },
    /// The file is JSON but not a valid configuration: every problem found, in file order.
    Invalid {
        /// The file, as shown in the message.
        file: String,
        /// The problems; never empty.
        problems: Vec<Problem>,
    },
}

impl Error {
    /// The file the error is about, as shown in its message.
    pub fn file(&self) -> &str {
        match self {
            Error::Read { file, .. }
            | Error::Encoding { file, .. }
            | Error::Syntax { file, .. }
            | Error::Invalid { file, .. } => file,
        }
    }

    /// The validation problems; empty unless the error is [`Error::Invalid`].
    pub fn problems(&self) -> &[Problem] {
        match self {
            Error::Invalid { problems, .. } => problems,
            _ => &[],
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Read { file, source } => write!(f, "{file}: cannot read the file: {source}"),
            Error::Encoding { file, offset } => write!(
                f,
                "{file}: the file is not UTF-8 (invalid byte at offset {offset})"
            ),
            Error::Syntax {
                file,
                line,
                column,
                message,
            } => write!(
                f,
                "{file}: line {line} column {column}: not valid JSON: {message}"
            ),
            Error::Invalid { file, problems } => {
                for (i, p) in problems.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{file}: {p}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// One problem of a file that is JSON: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The JSON path, such as `mcp_servers.vikunja.max_tools` or `feeds[0].name`; empty for
    /// the top level.
    pub path: String,
    /// What is wrong there.
    pub kind: ProblemKind,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}: {}", self.path, self.kind)
        }
    }
}

/// What is wrong at one JSON path.
///
/// Values are kept as the message shows them (`found`, `value`): JSON cut at 60 characters, or a
/// quoted string, so that the text of every message stays what the owner has always seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemKind {
    /// A key the block needs is absent. `needed` says who needs what, as in "every feed needs a
    /// name".
    Missing {
        /// Who needs the key and why.
        needed: &'static str,
    },
    /// A key the block does not have.
    UnknownKey {
        /// The keys the block has.
        expected: &'static [&'static str],
    },
    /// The value has the wrong JSON type (a string where a number belongs, a list where an
    /// object belongs).
    WrongType {
        /// What belongs there, as in "a positive integer".
        expected: &'static str,
        /// The value found, as the message shows it.
        found: String,
    },
    /// The value has the right type but is not acceptable.
    BadValue {
        /// The value found, as the message shows it.
        value: String,
        /// What is acceptable.
        expected: String,
    },
    /// A URL that is not an http or https URL with a host.
    NotHttpUrl {
        /// The URL as written (after `${NAME}` expansion).
        url: String,
        /// Why it does not parse as a URL at all, when it does not.
        reason: Option<String>,
    },
    /// A value that must not be shown (a passphrase hash) is not acceptable; it is not kept.
    BadSecret {
        /// What is acceptable.
        expected: &'static str,
    },
    /// A list that must have items is empty.
    Empty {
        /// What the list must hold.
        expected: &'static str,
    },
    /// A `${` with no `}` after it.
    UnterminatedReference,
    /// A `${...}` whose inside is not an environment variable name.
    BadReference {
        /// What is inside the braces.
        name: String,
    },
    /// A `${NAME}` reference in an enabled block whose variable is not set.
    Unresolved {
        /// The variable.
        var: String,
    },
    /// A name already used by an earlier entry of the same list.
    Duplicate {
        /// What the name names: "feed name", "act name".
        what: &'static str,
        /// The name.
        name: String,
    },
    /// Two MCP server names that flatten to one tool-row prefix.
    FlattenCollision {
        /// The earlier name.
        first: String,
        /// This name.
        second: String,
        /// What both flatten to.
        flat: String,
    },
    /// Two keys that exclude each other are both present.
    Conflict {
        /// The choice, as in `either "command" (...) or "url" (...)`.
        expected: &'static str,
    },
    /// A key that only the other kind of block takes.
    WrongKind {
        /// The kind of block that takes it, as in `an HTTP server (with "url")`.
        only: &'static str,
    },
    /// A value the rules refuse, with the whole reason (what it covers, why, what to write
    /// instead).
    Refused {
        /// The reason.
        reason: String,
    },
    /// A command name kept for tools discovered on MCP servers.
    Reserved {
        /// The name.
        name: String,
    },
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemKind::Missing { needed } => write!(f, "missing: {needed}"),
            ProblemKind::UnknownKey { expected } => write!(
                f,
                "unknown key (expected one of: {})",
                expected.join(", ")
            ),
            ProblemKind::WrongType { expected, found } => {
                write!(f, "expected {expected}, got {found}")
            }
            ProblemKind::Refused { reason } => f.write_str(reason),
            ProblemKind::BadValue { value, expected } => {
                write!(f, "expected {expected}, got {value}")
            }
            ProblemKind::NotHttpUrl { url, reason } => {
                write!(f, "expected an http or https URL, got {url:?}")?;
                match reason {
                    Some(r) => write!(f, " ({r})"),
                    None => Ok(()),
                }
            }
            ProblemKind::BadSecret { expected } => {
                write!(f, "expected {expected}, got another value")
            }
            ProblemKind::Empty { expected } => write!(f, "expected {expected}"),
            ProblemKind::UnterminatedReference => {
                f.write_str("unterminated ${ in string (expected ${NAME})")
            }
            ProblemKind::BadReference { name } => write!(
                f,
                "expected an environment variable name inside ${{}}, got {name:?}"
            ),
            ProblemKind::Unresolved { var } => {
                write!(f, "environment variable {var} is not set")
            }
            ProblemKind::Duplicate { what, name } => write!(f, "duplicate {what} {name:?}"),
            ProblemKind::FlattenCollision {
                first,
                second,
                flat,
            } => write!(
                f,
                "server names {first:?} and {second:?} both flatten to {flat:?}; tool rows would collide"
            ),
            ProblemKind::Conflict { expected } => write!(f, "expected {expected}, not both"),
            ProblemKind::WrongKind { only } => write!(f, "only {only} takes this key"),
            ProblemKind::Reserved { name } => write!(
                f,
                "{name:?} is reserved for tools discovered on MCP servers; it is never run as a program"
            ),
        }
    }
}

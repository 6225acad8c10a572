//! What can go wrong loading sentence files, each naming `FILE:LINE:COL` and why.

use std::fmt;

/// Where in a file something is: 1-based line and column when the file was text (YAML), or the
/// path of keys when it was a JSON value (`intents.HassTurnOn.data[0].sentences[2]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file's name as the caller gave it.
    pub file: String,
    /// 1-based line, 0 when the data had no text (a JSON value).
    pub line: u32,
    /// 1-based column, 0 when the data had no text.
    pub col: u32,
    /// The path of keys to the place (always filled for JSON values, may be empty for YAML).
    pub path: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}:{}", self.file, self.line, self.col)
        } else if self.path.is_empty() {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{} at {}", self.file, self.path)
        }
    }
}

/// An error loading or compiling sentence data. Every variant names where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file is larger than [`crate::limits::MAX_FILE_BYTES`].
    #[error("{at}: the file is {size} bytes, more than the {max} a sentence file may have")]
    FileTooLarge {
        /// The file.
        at: Location,
        /// Its size.
        size: usize,
        /// The bound.
        max: usize,
    },
    /// The YAML does not parse.
    #[error("{at}: not YAML: {why}")]
    Yaml {
        /// Where the YAML parser stopped.
        at: Location,
        /// The parser's reason.
        why: String,
    },
    /// A YAML feature sentence files never need and that is refused (anchors, aliases, tags,
    /// several documents).
    #[error("{at}: {what} are not allowed in a sentence file")]
    YamlFeature {
        /// Where it is.
        at: Location,
        /// What was found ("anchors", "aliases", "tags", "several documents").
        what: &'static str,
    },
    /// A mapping has the same key twice.
    #[error("{at}: the key '{key}' is given twice")]
    DuplicateKey {
        /// The second one.
        at: Location,
        /// The key.
        key: String,
    },
    /// A value has the wrong shape.
    #[error("{at}: {why}")]
    Shape {
        /// Where it is.
        at: Location,
        /// What was expected.
        why: String,
    },
    /// A sentence template does not parse.
    #[error("{at}: template '{template}': {why}")]
    Template {
        /// Where the template is.
        at: Location,
        /// The template (cut to 200 characters).
        template: String,
        /// Why, with the character offset in the template.
        why: String,
    },
    /// A template nests groups deeper than [`crate::limits::MAX_NESTING`].
    #[error("{at}: template nests groups deeper than {max}")]
    TooDeep {
        /// Where the template is.
        at: Location,
        /// The bound.
        max: usize,
    },
    /// A list holds more values than [`crate::limits::MAX_LIST_VALUES`].
    #[error("{at}: list '{list}' has more than {max} values")]
    ListTooLong {
        /// Where the list is.
        at: Location,
        /// The list.
        list: String,
        /// The bound.
        max: usize,
    },
    /// A number range is invalid or larger than [`crate::limits::MAX_RANGE_NUMBERS`] numbers.
    #[error("{at}: range of list '{list}': {why}")]
    Range {
        /// Where the range is.
        at: Location,
        /// The list.
        list: String,
        /// Why.
        why: String,
    },
    /// Expansion rules refer to each other in a cycle.
    #[error("{at}: expansion rules refer to each other in a cycle: {cycle}")]
    RuleCycle {
        /// Where the template that reached the cycle is.
        at: Location,
        /// The rules of the cycle, `<a> -> <b> -> <a>`.
        cycle: String,
    },
    /// A template refers to a rule nobody defines.
    #[error("{at}: no expansion rule <{rule}>")]
    MissingRule {
        /// Where the template is.
        at: Location,
        /// The rule.
        rule: String,
    },
    /// A template grows past [`crate::limits::MAX_TEMPLATE_SIZE`] once rules are inlined and
    /// permutations spelled out, or a permutation has more than [`crate::limits::MAX_PERMUTATION`] items.
    #[error("{at}: template expands to more than {max} steps ({why})")]
    TooLarge {
        /// Where the template is.
        at: Location,
        /// The bound.
        max: usize,
        /// What grew.
        why: String,
    },
    /// The whole data set grows past [`crate::limits::MAX_TOTAL_SIZE`].
    #[error("{at}: the sentence data expands to more than {max} steps in all")]
    TotalTooLarge {
        /// The file whose data crossed the bound.
        at: Location,
        /// The bound.
        max: usize,
    },
    /// Two files give the data different languages.
    #[error("{at}: language '{found}' where '{expected}' was loaded before")]
    Language {
        /// Where the second language is.
        at: Location,
        /// The first.
        expected: String,
        /// The second.
        found: String,
    },
}

impl Error {
    /// Where the error is.
    pub fn location(&self) -> &Location {
        match self {
            Error::FileTooLarge { at, .. }
            | Error::Yaml { at, .. }
            | Error::YamlFeature { at, .. }
            | Error::DuplicateKey { at, .. }
            | Error::Shape { at, .. }
            | Error::Template { at, .. }
            | Error::TooDeep { at, .. }
            | Error::ListTooLong { at, .. }
            | Error::Range { at, .. }
            | Error::RuleCycle { at, .. }
            | Error::MissingRule { at, .. }
            | Error::TooLarge { at, .. }
            | Error::TotalTooLarge { at, .. }
            | Error::Language { at, .. } => at,
        }
    }
}

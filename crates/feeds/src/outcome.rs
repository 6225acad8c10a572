//! What a parse gives besides items: the limits, the one error ("not a feed at all") and the
//! warnings collector.

/// The largest input accepted (offsets inside the parser are 32-bit).
pub const MAX_INPUT: usize = 512 << 20;
/// The most items kept from one document.
pub const MAX_ITEMS: usize = 50_000;
/// The most warnings kept for one document.
pub const MAX_WARNINGS: usize = 64;

/// The input is not a feed at all.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotAFeed {
    /// Nothing but whitespace.
    #[error("the input is empty")]
    Empty,
    /// Larger than [`MAX_INPUT`].
    #[error("the input is larger than {max} bytes")]
    TooLarge {
        /// The limit.
        max: usize,
    },
    /// An HTML page (a common answer from a moved or broken feed URL).
    #[error("the input is an HTML page, not a feed")]
    Html,
    /// XML whose root element is not a feed.
    #[error("the root element <{0}> is not rss, rdf:RDF or feed")]
    UnknownRoot(String),
    /// Neither XML nor JSON.
    #[error("the input is neither XML nor JSON")]
    NotMarkup,
    /// JSON that is not a JSON Feed.
    #[error("JSON that is not a JSON Feed: {0}")]
    NotJsonFeed(String),
}

impl NotAFeed {
    /// The input was an HTML page.
    pub fn is_html(&self) -> bool {
        matches!(self, NotAFeed::Html)
    }

    /// The input was empty.
    pub fn is_empty_input(&self) -> bool {
        matches!(self, NotAFeed::Empty)
    }
}

/// Collects warnings up to [`MAX_WARNINGS`].
#[derive(Default)]
pub(crate) struct Warnings {
    list: Vec<String>,
    dropped: usize,
}

impl Warnings {
    pub(crate) fn push(&mut self, w: impl Into<String>) {
        if self.list.len() < MAX_WARNINGS {
            self.list.push(w.into());
        } else {
            self.dropped += 1;
        }
    }

    pub(crate) fn finish(mut self) -> Vec<String> {
        if self.dropped > 0 {
            self.list
                .push(format!("{} more warnings not shown", self.dropped));
        }
        self.list
    }
}

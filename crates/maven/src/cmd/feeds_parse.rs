//! `maven feeds parse FILE|- [--url URL] [--content-type CT] [--content-location URL]`: prints
//! the parsed feed as the
//! JSON object of F-9.

use crate::exit::errln;
use std::io::Read;
use std::process::ExitCode;

/// Reads `file` (`-` for stdin), parses it as a feed and prints the JSON. Exit 0 when a feed was
/// recognised (even with warnings), 1 when the input is not a feed, 2 when it cannot be read.
pub(crate) fn run(
    file: &str,
    url: Option<&str>,
    content_type: Option<&str>,
    content_location: Option<&str>,
) -> ExitCode {
    let bytes = if file == "-" {
        let mut buf = Vec::new();
        match std::io::stdin()
            .lock()
            .take(feeds::MAX_INPUT as u64 + 1)
            .read_to_end(&mut buf)
        {
            Ok(_) => buf,
            Err(e) => {
                errln!("maven: cannot read standard input: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        match std::fs::read(file) {
            Ok(b) => b,
            Err(e) => {
                errln!("maven: cannot read {file}: {e}");
                return ExitCode::from(2);
            }
        }
    };
    let hints = feeds::Hints {
        url,
        content_type,
        content_location,
    };
    match feeds::parse(&bytes, &hints) {
        Ok(feed) => {
            crate::exit::outln!("{}", feed.to_json());
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("maven: not a feed: {e}");
            ExitCode::from(1)
        }
    }
}

//! Feeds arbitrary bytes to the feed parser (with and without hints), the HTML-to-text renderer
//! and the date parser. Any panic is a bug.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    feeds::fuzzing::parse_bytes(data);
});

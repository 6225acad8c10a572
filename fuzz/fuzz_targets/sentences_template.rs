//! Sentence templates and sentence files on arbitrary bytes: the `sentences` crate parses a
//! template, loads a YAML file and matches a sentence against it; every answer is a value or an
//! error naming its place, never a panic or a hang.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    sentences::fuzzing::template_and_file(text);
});

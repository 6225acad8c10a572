//! The Wyoming event reader (small bounds) on arbitrary bytes, each event typed and written
//! back, and the bytes read as a WAV file: must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    wyoming::fuzzing::reader(data);
});

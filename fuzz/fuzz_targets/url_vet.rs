//! URL parsing and vetting (W-1, W-3, W-5) on arbitrary bytes: must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    webfetch::fuzzing::url_vet(data);
});

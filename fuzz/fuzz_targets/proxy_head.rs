//! The proxy's request-head reader (Maven's proxy for sandboxed servers) on arbitrary bytes:
//! must never panic, and what it forwards must parse back.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    webfetch::fuzzing::proxy_head(data);
});

//! The SSE event parser on arbitrary bytes in data-chosen chunk sizes: must never panic and
//! never assemble an event over its cap.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mcp::fuzzing::sse(data);
});

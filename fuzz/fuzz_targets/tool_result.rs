//! The `tools/call` result reader (a one-pass borrowed reading of whatever a server answered)
//! on arbitrary JSON, checked against a generic reading of the same bytes. Must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mcp::fuzzing::tool_result(data);
});

//! The stdio line framer (a small cap) on arbitrary bytes, each frame handed to the JSON-RPC
//! core: must never panic, never hold more than the cap + 1 bytes of a line.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mcp::fuzzing::line_framer(data);
});

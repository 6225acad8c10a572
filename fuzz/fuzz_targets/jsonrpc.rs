//! The JSON-RPC message classifier on one arbitrary frame: the input, newlines removed, is
//! sent as a single line through the framer into the core (responses, requests, notifications,
//! batches, wrong ids, result+error, non-JSON). Must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut frame: Vec<u8> = data.iter().copied().filter(|b| *b != b'\n').collect();
    frame.push(b'\n');
    mcp::fuzzing::line_framer(&frame);
});

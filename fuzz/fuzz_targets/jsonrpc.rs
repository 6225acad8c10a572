//! The JSON-RPC message classifier on whole frames of any length: the input is split at
//! newlines and each piece goes straight to the core, which has requests pending (responses,
//! requests, notifications, batches, wrong or duplicate ids, result+error, non-JSON, deep
//! nesting). Must never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mcp::fuzzing::jsonrpc(data);
});

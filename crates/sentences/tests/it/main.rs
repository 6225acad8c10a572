//! Tests of the sentence matcher: against hassil on Home Assistant's data, hostile files, the
//! step count that shows matching linear in the sentence, and the format's features.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly by design")]
#![allow(clippy::disallowed_macros, reason = "tests print what they measured")]

mod differential;
mod format;
mod hostile;
mod linear;

//! Integration tests of the `maven` binary: real daemon processes on temporary data
//! directories, talked to through the real CLI and the real socket.

mod support;

mod cli;
mod daemon;

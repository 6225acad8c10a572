//! Integration tests of the maven binary.

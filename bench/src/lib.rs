//! Benchmarks live in `benches/` and `src/bin/`; see BENCHMARKS.md. The library holds what two
//! of them share: the P-4 feed corpus and the parse calls measured on it ([`feed_corpus`]).

pub mod feed_corpus;

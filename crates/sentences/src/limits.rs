//! The bounds every file and template is held to, each refused with its place and why.

/// The largest sentence file, in bytes.
pub const MAX_FILE_BYTES: usize = 1 << 20;
/// The most values one list may have.
pub const MAX_LIST_VALUES: usize = 100_000;
/// The deepest nesting of groups in a template, and of expansion rules in each other.
pub const MAX_NESTING: usize = 32;
/// The most items of one permutation `(a;b;…)`: spelled out, it is every order (720 for 6).
pub const MAX_PERMUTATION: usize = 6;
/// The most steps one template may compile to, rules inlined and permutations spelled out (a
/// step is about one character of text).
pub const MAX_TEMPLATE_SIZE: usize = 200_000;
/// The most steps all templates and lists may compile to together.
pub const MAX_TOTAL_SIZE: usize = 16_000_000;
/// The most numbers one range may hold.
pub const MAX_RANGE_NUMBERS: usize = 100_000;

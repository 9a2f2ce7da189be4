//! The bodies of the fuzz targets in `fuzz/`, as ordinary code that stable
//! Rust compiles: the libFuzzer targets include this file by `#[path]`, and
//! `tests/local/fuzz_replay.rs` feeds every committed input (the replay set
//! `fuzz/replay/<name>/` and the regressions) to the same functions, so CI
//! keeps the guarantees without nightly.
//!
//! Each target takes the raw fuzzer input and panics only when a property is
//! broken (a codec of this crate panicked, a round trip gave the wrong
//! values, ...). Errors returned by the codecs are fine: hostile input must
//! be refused, not survived silently.
//!
//! Panics inside zarrs 0.23.14 itself that fuzzing found are not fed to it
//! (each avoidance is marked `ZARRS-AVOID` and listed in
//! `docs/reliability.md`); what this crate writes is checked never to need
//! such an avoidance.
#![allow(dead_code)]

#[cfg(feature = "async")]
pub mod async_read;
pub mod chunk_decode;
pub mod input;
pub mod model;
pub mod shards;
pub mod slices;
pub mod targets;

pub use chunk_decode::chunk_decode;
pub use shards::shards;
pub use slices::slices;
pub use targets::{configuration, decode, differential, round_trip};

/// A target: its name and its body.
pub type Target = (&'static str, fn(&[u8]));

/// The targets by name, as `fuzz/fuzz_targets/<name>.rs`, the replay sets
/// `fuzz/replay/<name>/` and the local corpora `fuzz/corpus/<name>/` call
/// them.
pub const TARGETS: [Target; 7] = [
    ("configuration", configuration),
    ("decode", decode),
    ("round_trip", round_trip),
    ("differential", differential),
    ("slices", slices),
    ("chunk_decode", chunk_decode),
    ("shards", shards),
];

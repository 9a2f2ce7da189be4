//! The integration tests that need neither a remote store nor a fresh
//! process, in one test binary: one link of the crate and its dependencies
//! instead of one per file (each of those binaries was over 100 MB, and
//! together they filled CI's disk). Each module was a file of its own under
//! `tests/` and still reads as one; `cargo test --test local MODULE::` runs
//! one of them.
//!
//! Tests that need a process of their own stay separate: `first_day.rs`,
//! `registered_codecs.rs`, `packbits_equivalence.rs` and
//! `vlen_equivalence.rs` need zarrs' codecs as registered without
//! `register_overrides()` (which these modules call), `threads.rs` the
//! global thread pool; the remote stores' tests are in `tests/remote/`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/http_server.rs"]
mod http_server;
#[path = "../../examples/inspect.rs"]
#[allow(dead_code)] // the example's `main` and what only it uses
mod inspect;

mod async_stores;
mod bad_inputs;
mod bytes_equivalence;
mod cast_value_differential;
mod chunk_decode;
mod core_fixtures;
mod docs;
mod fuzz_replay;
mod http_store;
mod inspect_example;
mod open_errors;
mod packbits_fixtures;
mod read_engine;
mod read_ext;
mod readme_snippet;
mod transpose_equivalence;
mod vlen_fixtures;
mod vlen_v2_equivalence;
mod vlen_v2_fixtures;
mod write_ext;
mod zarr_python_fixtures;
mod zarr_python_reads_ours;

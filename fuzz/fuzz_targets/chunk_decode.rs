//! `chunk_decode`: see `tests/fuzz_harness/chunk_decode.rs` for the input
//! format and the property checked.
#![no_main]

#[path = "../../tests/fuzz_harness/mod.rs"]
mod fuzz_harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_harness::chunk_decode(data));

//! The array metadata documents whose codecs have been checked in this
//! process (`validate_codecs_for_reading`, which round-trips a chunk of
//! fill value through the chain: about a millisecond for a 256 x 256
//! `scale_offset` + `cast_value` + blosc inner chunk). zarr-python builds a
//! pipeline at every open of an array, and a tile server opens the same
//! product again and again: the check is made once per document.
//!
//! The outcome depends on the document alone (the codecs registered in the
//! process do not change once `register_overrides` has run, which every
//! `ChunkArray` does first), so the exact text is the key. Only successes
//! are kept: a failure is checked again, and gives the same error.

use std::collections::VecDeque;
use std::sync::Mutex;

/// Documents kept at most: the arrays a process opens again and again.
const KEPT: usize = 64;

static CHECKED: Mutex<VecDeque<String>> = Mutex::new(VecDeque::new());

fn checked() -> std::sync::MutexGuard<'static, VecDeque<String>> {
    // A panic while the lock was held leaves a list of whole strings.
    CHECKED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether `metadata` passed the check in this process (it is then the
/// last to go).
pub fn contains(metadata: &str) -> bool {
    let mut checked = checked();
    let Some(i) = checked.iter().position(|m| m == metadata) else {
        return false;
    };
    if let Some(found) = checked.remove(i) {
        checked.push_back(found);
    }
    true
}

/// `metadata` passed the check (the least recently used of more than
/// [`KEPT`] goes).
pub fn insert(metadata: &str) {
    let mut checked = checked();
    if checked.iter().any(|m| m == metadata) {
        return;
    }
    if checked.len() >= KEPT {
        checked.pop_front();
    }
    checked.push_back(metadata.to_owned());
}

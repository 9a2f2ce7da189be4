//! The codec configurations whose codecs have been checked in this process
//! (`validate_codecs_for_reading`, which round-trips a chunk of fill value
//! through the chain: about a millisecond for a 256 x 256 `scale_offset` +
//! `cast_value` + blosc inner chunk). zarr-python builds a pipeline at
//! every open of an array, and a tile server opens the same product, and
//! the bands of a product that share their codecs, again and again: the
//! check is made once per configuration.
//!
//! The outcome depends on the metadata document alone (the codecs
//! registered in the process do not change once `register_overrides` has
//! run, which every `ChunkArray` does first), and of it not on the array's
//! `shape`, `attributes` or `dimension_names`: the check encodes one chunk
//! of the grid's chunk shape with the data type, fill value and codecs.
//! So the key is the document without those ([`key`]) (for the chunk grids
//! zarr-python opens: regular and rectilinear, whose first chunk's shape
//! does not depend on the array's). Only successes are kept: a failure is
//! checked again, and gives the same error. The check for writes (whether
//! the fill value survives the codecs, `fill_value_warning`) is kept under
//! the same key, with its answer.

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

/// What of `metadata` the check depends on: the document without `shape`,
/// `attributes` and `dimension_names`, as JSON; the text itself if it does
/// not parse as an object (then only that very text matches it).
pub fn key(metadata: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(metadata) {
        Ok(serde_json::Value::Object(mut document)) => {
            for name in ["shape", "attributes", "dimension_names"] {
                document.remove(name);
            }
            serde_json::Value::Object(document).to_string()
        }
        _ => metadata.to_owned(),
    }
}

/// Whether the configuration `key` passed the check in this process (it is
/// then the last to go).
pub fn contains(key: &str) -> bool {
    let mut checked = checked();
    let Some(i) = checked.iter().position(|m| m == key) else {
        return false;
    };
    if let Some(found) = checked.remove(i) {
        checked.push_back(found);
    }
    true
}

/// The configuration `key` passed the check (the least recently used of
/// more than [`KEPT`] goes).
pub fn insert(key: String) {
    let mut checked = checked();
    if checked.iter().any(|m| *m == key) {
        return;
    }
    if checked.len() >= KEPT {
        checked.pop_front();
    }
    checked.push_back(key);
}

/// The answers of the check for writes, by key: why zarrs refuses to write
/// arrays of that configuration, or `None`.
static REFUSALS: Mutex<VecDeque<(String, Option<String>)>> = Mutex::new(VecDeque::new());

/// The check for writes of the configuration `key`, if made in this
/// process: `Some(None)` when zarrs writes such arrays.
pub fn refusal(key: &str) -> Option<Option<String>> {
    let refusals = REFUSALS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    refusals
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, answer)| answer.clone())
}

/// The check for writes of `key` answered `answer` (the oldest of more than
/// [`KEPT`] goes).
pub fn insert_refusal(key: String, answer: Option<String>) {
    let mut refusals = REFUSALS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if refusals.iter().any(|(k, _)| *k == key) {
        return;
    }
    if refusals.len() >= KEPT {
        refusals.pop_front();
    }
    refusals.push_back((key, answer));
}

#[cfg(test)]
mod tests {
    use super::key;

    #[test]
    fn the_key_leaves_out_what_the_check_does_not_read() {
        let a = r#"{"shape":[10,20],"data_type":"uint16","attributes":{"a":1},"codecs":[{"name":"bytes"}],"dimension_names":["y","x"]}"#;
        let b =
            r#"{"shape":[5,5],"data_type":"uint16","attributes":{},"codecs":[{"name":"bytes"}]}"#;
        assert_eq!(key(a), key(b));
        let c = r#"{"shape":[5,5],"data_type":"int16","codecs":[{"name":"bytes"}]}"#;
        assert_ne!(key(a), key(c));
        assert_eq!(key("not json"), "not json");
    }
}

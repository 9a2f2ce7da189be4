//! The codec configurations whose codecs have been checked in this process
//! (`validate_codecs_for_reading_with_warning`, which round-trips a chunk
//! of fill value through the chain: about a millisecond for a 256 x 256
//! `scale_offset` + `cast_value` + blosc inner chunk), with the check's
//! warning (why zarrs refuses to write such arrays, if it does). zarr-python
//! builds a pipeline at every open of an array, and a tile server opens the
//! same product, and the bands of a product that share their codecs, again
//! and again: the check is made once per configuration.
//!
//! The outcome depends on the metadata document alone (the codecs
//! registered in the process do not change once `register_overrides` has
//! run, which every `ChunkArray` does first), and of it not on the array's
//! `shape`, `attributes` or `dimension_names`: the check encodes one chunk
//! of the grid's chunk shape with the data type, fill value and codecs.
//! So the key is the document without those ([`key`]) (for the chunk grids
//! zarr-python opens: regular and rectilinear, whose first chunk's shape
//! does not depend on the array's). Only successes are kept: a failure is
//! checked again, and gives the same error.

use std::collections::VecDeque;
use std::sync::Mutex;

/// Configurations kept at most: the arrays a process opens again and again.
const KEPT: usize = 64;

/// Each configuration checked, with its warning, the most recently used
/// last.
static CHECKED: Mutex<VecDeque<(String, Option<String>)>> = Mutex::new(VecDeque::new());

fn checked() -> std::sync::MutexGuard<'static, VecDeque<(String, Option<String>)>> {
    // A panic while the lock was held leaves a list of whole entries.
    CHECKED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What of the metadata document `document` (a JSON object) the check
/// depends on: the document without `shape`, `attributes` and
/// `dimension_names` (not copied: attributes can be large), as JSON.
pub fn key(document: &serde_json::Map<String, serde_json::Value>) -> String {
    let kept: serde_json::Map<String, serde_json::Value> = document
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "shape" | "attributes" | "dimension_names"))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    serde_json::Value::Object(kept).to_string()
}

/// The warning of the configuration `key`, if it passed the check in this
/// process (it is then the last to go).
pub fn get(key: &str) -> Option<Option<String>> {
    let mut checked = checked();
    let i = checked.iter().position(|(k, _)| k == key)?;
    let found = checked.remove(i)?;
    let warning = found.1.clone();
    checked.push_back(found);
    Some(warning)
}

/// The configuration `key` passed the check, with `warning` (the least
/// recently used of more than [`KEPT`] goes).
pub fn insert(key: String, warning: Option<String>) {
    let mut checked = checked();
    if checked.iter().any(|(k, _)| *k == key) {
        return;
    }
    if checked.len() >= KEPT {
        checked.pop_front();
    }
    checked.push_back((key, warning));
}

#[cfg(test)]
mod tests {
    use super::key;

    fn object(text: &str) -> serde_json::Map<String, serde_json::Value> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn the_key_leaves_out_what_the_check_does_not_read() {
        let a = object(
            r#"{"shape":[10,20],"data_type":"uint16","attributes":{"a":1},"codecs":[{"name":"bytes"}],"dimension_names":["y","x"]}"#,
        );
        let b = object(
            r#"{"shape":[5,5],"data_type":"uint16","attributes":{},"codecs":[{"name":"bytes"}]}"#,
        );
        assert_eq!(key(&a), key(&b));
        let c = object(r#"{"shape":[5,5],"data_type":"int16","codecs":[{"name":"bytes"}]}"#);
        assert_ne!(key(&a), key(&c));
    }
}

//! Replays every committed fuzz input (the replay set `fuzz/replay/<target>/`
//! and `fuzz/regressions/<target>/`) through the functions the libFuzzer
//! targets in `fuzz/` call, so the properties they check hold on stable
//! Rust, in CI, without nightly. `scripts/fuzz.sh` runs the targets
//! themselves; their full working corpus (`fuzz/corpus/<target>/`) stays
//! local and is not read here (`scripts/fuzz_replay_set.sh` minimises it
//! into the replay set).

#[path = "../fuzz_harness/mod.rs"]
mod fuzz_harness;

use std::path::Path;

/// Every file under `fuzz/<kind>/<target>/`, sorted.
fn inputs(kind: &str, target: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind)
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn replay(target: &str) {
    let (_, run) = fuzz_harness::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .unwrap();
    let replay_set = inputs("replay", target);
    assert!(
        !replay_set.is_empty(),
        "fuzz/replay/{target}/ is missing or empty: the replay would prove nothing"
    );
    for file in replay_set.iter().chain(&inputs("regressions", target)) {
        let data = std::fs::read(file).unwrap();
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(outcome.is_ok(), "{target}: {} panics", file.display());
    }
}

#[test]
fn configuration_corpus() {
    replay("configuration");
}

#[test]
fn decode_corpus() {
    replay("decode");
    // The huge-page advice and fault-in of `ArrayReadExt`'s large outputs
    // (unsafe code in src/read/output.rs) must stay reached by the target.
    let large = fuzz_harness::targets::LARGE_READS.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        large > 0,
        "no decode input read an output of 4 MiB or more (fuzz/regressions/decode/large-output-*)"
    );
}

#[test]
fn round_trip_corpus() {
    replay("round_trip");
}

#[test]
fn differential_corpus() {
    replay("differential");
}

#[test]
fn slices_corpus() {
    replay("slices");
    let split = fuzz_harness::slices::SPLIT.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        split > 0,
        "no slices input split a buffer of 2 MiB or more across threads"
    );
}

#[test]
fn shards_corpus() {
    replay("shards");
    let refused = fuzz_harness::shards::REFUSED.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        refused > 0,
        "no shards input was refused: the index checks are not reached"
    );
    let load = |n: &std::sync::atomic::AtomicUsize| n.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        load(&fuzz_harness::shards::WRITES_REFUSED) > 0
            && load(&fuzz_harness::shards::WRITES_DONE) > 0,
        "shards: no write into the spoiled store was refused, or none was done"
    );
    #[cfg(feature = "async")]
    assert!(
        fuzz_harness::shards::ASYNC_READS.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "no shards window's async read was compared with the sync one"
    );
}

#[test]
fn chunk_decode_corpus() {
    replay("chunk_decode");
    // The fused path (and the output window's unsafe code) must stay
    // reached by the committed inputs.
    let fused =
        fuzz_harness::chunk_decode::FUSED_DECODES.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        fused > 0,
        "no chunk_decode input decoded a window by the fused path"
    );
}

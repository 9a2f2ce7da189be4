//! `examples/inspect.rs` over every bundled fixture store, on the
//! filesystem and over HTTP, against the shapes, data types and values the
//! writers recorded; and its errors, in words.

use crate::common;
use crate::http_server;
use crate::inspect;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{copy_tree, fixtures, le_to_ne};
use http_server::HttpServer;
use zarrs_extension_codecs::numeric::{NumericType, Value};

/// Every directory of fixture stores with `NAME.expected.json` beside them.
const FIXTURE_DIRS: [&str; 5] = [
    "zarr-python",
    "zarr-python-core",
    "tensorstore",
    "zarrs-builtin/packbits",
    "zarrs-builtin/vlen",
];

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Run the example with `args`; its output, or its error message.
fn run(args: &[&str]) -> Result<String, String> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let mut out = Vec::new();
    inspect::inspect(&args, &mut out).map_err(|e| e.to_string())?;
    Ok(String::from_utf8(out).unwrap())
}

/// The value of the line labelled `label` in the example's output.
fn field<'a>(output: &'a str, label: &str) -> &'a str {
    output
        .lines()
        .find_map(|l| {
            l.strip_prefix(label)
                .filter(|_| l.len() > 10)
                .map(|_| l[10..].trim())
        })
        .unwrap_or_else(|| panic!("no {label:?} line in\n{output}"))
}

/// Min and max of the non-NaN values of `expected` (little-endian, as the
/// writers stored them), or None if there are none.
fn expected_min_max(numeric: NumericType, expected: &[u8]) -> Option<(Value, Value)> {
    let size = numeric.size();
    let values: Vec<Value> = le_to_ne(expected, size)
        .chunks_exact(size)
        .map(|e| numeric.read_value(e))
        .filter(|v| !matches!(v, Value::Float(f) if f.is_nan()))
        .collect();
    let order = |a: &&Value, b: &&Value| match (**a, **b) {
        (Value::Int(a), Value::Int(b)) => a.cmp(&b),
        (Value::Float(a), Value::Float(b)) => a.total_cmp(&b),
        _ => unreachable!("one numeric type has one kind of value"),
    };
    let min = values.iter().min_by(order)?;
    let max = values.iter().max_by(order)?;
    Some((*min, *max))
}

#[test]
fn every_fixture_store_locally_and_over_http() {
    let root = fixtures_root();
    let server = HttpServer::serve(&root).unwrap();
    let mut count = 0;
    for dir in FIXTURE_DIRS {
        for name in common::fixture_names(&root.join(dir)) {
            let store_path = root.join(dir).join(format!("{name}.zarr"));
            let store = store_path.to_str().unwrap();
            let meta: serde_json::Value = serde_json::from_slice(
                &std::fs::read(root.join(dir).join(format!("{name}.expected.json"))).unwrap(),
            )
            .unwrap();
            // The zarrs.vlen stores list their values in the JSON, not a .bin.
            let expected = std::fs::read(root.join(dir).join(format!("{name}.expected.bin")));
            let output = run(&[store]).unwrap_or_else(|e| panic!("{store}: {e}"));
            let shape: Vec<u64> = common::u64s(&meta["shape"]);
            assert_eq!(field(&output, "shape"), format!("{shape:?}"), "{store}");
            assert_eq!(
                field(&output, "data type"),
                meta["data_type"].as_str().unwrap(),
                "{store}"
            );
            let elements: u64 = shape.iter().product();
            assert!(
                field(&output, "elements").starts_with(&format!("{elements} (")),
                "{store}:\n{output}"
            );
            assert!(!field(&output, "codecs").contains('?'), "{output}");

            // min / max against the values the writer recorded.
            let store_handle = Arc::new(zarrs::filesystem::FilesystemStore::new(store).unwrap());
            zarrs_extension_codecs::register_overrides();
            let array = zarrs::array::Array::open(store_handle, "/").unwrap();
            // packbits with a bit range stores only some bits of the values
            // written (which is what expected.bin holds there).
            let zarr_json = std::fs::read_to_string(store_path.join("zarr.json")).unwrap();
            let lossy = zarr_json.contains("_bit\"");
            if let Some(numeric) = NumericType::from_data_type(array.data_type())
                && !lossy
            {
                let range = field(&output, "min / max");
                match expected_min_max(numeric, expected.as_ref().unwrap()) {
                    Some((min, max)) => assert_eq!(range, format!("{min} / {max}"), "{store}"),
                    None => assert_eq!(range, "(no values that are not NaN)", "{store}"),
                }
            }

            // The same over HTTP (through object_store), but for the
            // location and what was fetched.
            let url = format!("{}/{dir}/{name}.zarr", server.url());
            #[cfg(feature = "remote")]
            {
                let over_http = run(&[&url]).unwrap_or_else(|e| panic!("{url}: {e}"));
                let without_location = |o: &str| {
                    o.lines()
                        .skip(1)
                        .filter(|l| !l.starts_with("fetched "))
                        .collect::<Vec<_>>()
                        .join("\n")
                };
                assert_eq!(
                    without_location(&over_http),
                    without_location(&output),
                    "{url}"
                );
                assert_eq!(field(&over_http, "array"), url);
                assert!(field(&over_http, "fetched").ends_with(" requests"));
            }
            #[cfg(not(feature = "remote"))]
            assert!(run(&[&url]).unwrap_err().contains("`remote` feature"));
            count += 1;
        }
    }
    assert!(count >= 120, "only {count} fixture stores found");
}

/// The corner printed for the main job's store is zarr-python's values.
#[test]
fn corner_values_are_zarr_pythons() {
    let fixture = fixtures(&fixtures_root().join("zarr-python"))
        .into_iter()
        .find(|f| f.name == "sharded_so_cv_f64_u8_nan")
        .unwrap();
    let output = run(&[fixture.store.to_str().unwrap()]).unwrap();
    assert_eq!(
        field(&output, "codecs"),
        "sharding_indexed[scale_offset -> cast_value -> bytes | index bytes -> crc32c]"
    );
    let rows: Vec<Vec<String>> = output
        .split_once("values [0..3, 0..6]:\n")
        .unwrap()
        .1
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), 3, "{output}");
    let expected = le_to_ne(&fixture.expected, 8);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), 6);
        for (j, printed) in row.iter().enumerate() {
            let at = (i * 53 + j) * 8;
            let value = f64::from_ne_bytes(expected[at..at + 8].try_into().unwrap());
            assert_eq!(printed, &Value::Float(value).to_string(), "[{i}, {j}]");
        }
    }
}

/// Stores zarr-python cannot decode either: an error naming the codec.
#[test]
fn undecodable_stores_give_an_error_naming_the_codec() {
    let dir = fixtures_root().join("zarr-python/decode_errors");
    let names = common::fixture_names(&dir);
    assert_eq!(names.len(), 2);
    for name in names {
        let store = dir.join(format!("{name}.zarr"));
        let store = store.to_str().unwrap();
        let message = run(&[store]).unwrap_err();
        assert!(
            message.starts_with(&format!("cannot read {store}: ")) || message.starts_with(store),
            "{message}"
        );
        let codec = name.split('_').next().unwrap();
        let codec = if codec == "cv" {
            "cast_value"
        } else {
            "scale_offset"
        };
        assert!(message.contains(codec), "{message}");
    }
}

#[test]
fn errors_in_words() {
    let missing = fixtures_root().join("no-such-store.zarr");
    let missing = missing.to_str().unwrap();
    assert_eq!(
        run(&[missing]).unwrap_err(),
        format!(
            "no such directory {missing}: give the path of a Zarr V3 store (a directory holding zarr.json)"
        )
    );

    let not_a_store = fixtures_root();
    let not_a_store = not_a_store.to_str().unwrap();
    assert_eq!(
        run(&[not_a_store]).unwrap_err(),
        format!(
            "no zarr.json at {not_a_store}/zarr.json: give the directory or URL of a Zarr V3 store, or add --array /path/inside it"
        )
    );

    let store = fixtures_root().join("zarr-python/so_f32.zarr");
    let store = store.to_str().unwrap();
    assert_eq!(
        run(&[store, "--array", "/nothing"]).unwrap_err(),
        format!(
            "no zarr.json at {store}/nothing/zarr.json: check the --array path (run without --array to list a group's arrays)"
        )
    );
    assert!(
        run(&[store, "--array"])
            .unwrap_err()
            .starts_with("--array needs a path")
    );
    assert!(
        run(&[])
            .unwrap_err()
            .starts_with("usage: inspect PATH_OR_URL")
    );

    let server = HttpServer::serve(&fixtures_root()).unwrap();
    let url = format!("{}/zarr-python/nothing.zarr", server.url());
    #[cfg(feature = "remote")]
    assert!(
        run(&[&url])
            .unwrap_err()
            .starts_with(&format!("no zarr.json at {url}/zarr.json: ")),
    );
    #[cfg(not(feature = "remote"))]
    let _ = url;
}

/// A group holding two arrays, one of them in a subgroup and with the bare
/// string `"bytes"` as a codec: listed, and each inspected with `--array`.
#[test]
fn arrays_inside_groups() {
    let dir = tempfile::tempdir().unwrap();
    let group = dir.path().join("product.zarr");
    let group_json = r#"{"zarr_format": 3, "node_type": "group", "attributes": {}}"#;
    std::fs::create_dir_all(group.join("bands")).unwrap();
    std::fs::write(group.join("zarr.json"), group_json).unwrap();
    std::fs::write(group.join("bands/zarr.json"), group_json).unwrap();
    copy_tree(
        &fixtures_root().join("zarr-python/sharded_so_cv_f64_u8_nan.zarr"),
        &group.join("reflectance"),
    );
    let uint8 = group.join("bands/mask");
    copy_tree(
        &fixtures_root().join("zarr-python-core/bytes_uint8.zarr"),
        &uint8,
    );
    let metadata = std::fs::read_to_string(uint8.join("zarr.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&metadata).unwrap();
    json["codecs"] = serde_json::json!(["bytes"]);
    std::fs::write(uint8.join("zarr.json"), json.to_string()).unwrap();

    let group = group.to_str().unwrap();
    let listing = run(&[group]).unwrap();
    assert_eq!(
        listing,
        format!(
            "group      {group}\n  array    /bands/mask\n  array    /reflectance\ninspect one with: --array PATH\n"
        )
    );
    let mask = run(&[group, "--array", "/bands/mask"]).unwrap();
    assert_eq!(
        field(&mask, "array"),
        format!("{group} (array /bands/mask)")
    );
    assert_eq!(field(&mask, "codecs"), "bytes");
    assert_eq!(field(&mask, "data type"), "uint8");
    let reflectance = run(&[group, "--array", "reflectance"]).unwrap();
    assert_eq!(field(&reflectance, "shape"), "[37, 53]");

    // Over HTTP a plain group cannot be listed: the error says what to do.
    if cfg!(not(feature = "remote")) {
        return;
    }
    let server = HttpServer::serve(dir.path()).unwrap();
    let url = format!("{}/product.zarr", server.url());
    assert!(
        run(&[&url])
            .unwrap_err()
            .ends_with("an HTTP store cannot be listed: pass --array /path/to/array")
    );
    let over_http = run(&[&url, "--array", "/bands/mask"]).unwrap();
    assert_eq!(field(&over_http, "codecs"), "bytes");
}

// The progress line: its text, the terminal decision, drawing and clearing,
// and nothing on a pipe.

use inspect::progress::{self, Fetched, Progress, Snapshot};
use std::sync::atomic::Ordering;
use std::time::Duration;

#[test]
fn progress_line_text() {
    let remote = Snapshot {
        elapsed: Duration::from_secs(8),
        // 412 MiB in 8 s: 51.5 MiB/s.
        fetched: Some(Fetched {
            bytes: 412 * 1024 * 1024,
            requests: 96,
        }),
        chunks: Some((37, 128)),
    };
    assert_eq!(
        progress::line(&remote),
        "fetched 412.0 MiB in 96 requests, 37/128 chunks decoded, 51.5 MiB/s, 8.0 s"
    );
    let local = Snapshot {
        elapsed: Duration::from_millis(4000),
        fetched: None,
        chunks: Some((10, 40)),
    };
    assert_eq!(
        progress::line(&local),
        "10/40 chunks decoded, 2.5 chunks/s, 4.0 s"
    );
    // A remote window: bytes only (a window is one read call).
    let window = Snapshot {
        elapsed: Duration::from_millis(2500),
        fetched: Some(Fetched {
            bytes: 1536,
            requests: 3,
        }),
        chunks: None,
    };
    assert_eq!(
        progress::line(&window),
        "fetched 1.5 KiB in 3 requests, 614 B/s, 2.5 s"
    );
    let local_window = Snapshot {
        elapsed: Duration::from_millis(2500),
        fetched: None,
        chunks: None,
    };
    assert_eq!(progress::line(&local_window), "reading, 2.5 s");
    assert_eq!(progress::human_bytes(1023.0), "1023 B");
    assert_eq!(
        progress::human_bytes(3.0 * 1024.0 * 1024.0 * 1024.0),
        "3.0 GiB"
    );
}

#[test]
fn progress_only_on_a_terminal() {
    assert!(Progress::for_stderr(false).is_none());
    assert!(Progress::for_stderr(true).is_some());
}

/// A writer whose bytes the test can read afterwards.
#[derive(Clone, Default)]
struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

#[test]
fn progress_draws_in_place_and_clears_at_the_end() {
    let sink = Shared::default();
    let shown =
        Progress::new(Box::new(sink.clone())).with_timing(Duration::ZERO, Duration::from_millis(5));
    let fetched = || {
        Some(Fetched {
            bytes: 2048,
            requests: 2,
        })
    };
    let answer = progress::run(Some(&shown), Some(4), &fetched, |done| {
        done.fetch_add(4, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(50));
        42
    });
    assert_eq!(answer, 42);
    let text = sink.text();
    // Each redraw goes back to the line's start and erases its rest; the
    // last one erases the line.
    assert!(
        text.starts_with("\rfetched 2.0 KiB in 2 requests, "),
        "{text:?}"
    );
    assert!(text.contains("4/4 chunks decoded"), "{text:?}");
    assert!(text.ends_with("\r\x1b[K"), "{text:?}");
    assert!(!text.contains('\n'), "{text:?}");
    assert!(
        text.matches('\r').count() >= 3,
        "redrawn, then cleared: {text:?}"
    );

    // A read shorter than the delay shows nothing at all.
    let quiet_sink = Shared::default();
    let quiet = Progress::new(Box::new(quiet_sink.clone()));
    progress::run(Some(&quiet), Some(4), &|| None, |done| {
        done.fetch_add(4, Ordering::Relaxed);
    });
    assert_eq!(quiet_sink.text(), "");
}

/// Run as a child process by [`no_progress_when_stderr_is_piped`], with
/// stderr a pipe: inspect a store as `main` does, with progress from the
/// first instant. Does nothing in a normal test run.
#[test]
fn child_for_progress_tests() {
    let Ok(mode) = std::env::var("INSPECT_PROGRESS_CHILD") else {
        return;
    };
    use std::io::IsTerminal;
    let is_terminal = match mode.as_str() {
        "decide" => std::io::stderr().is_terminal(),
        "force" => true,
        other => panic!("INSPECT_PROGRESS_CHILD={other}"),
    };
    let progress = Progress::for_stderr(is_terminal)
        .map(|p| p.with_timing(Duration::ZERO, Duration::from_millis(1)));
    // The store's directory, or its URL from the parent.
    let store = std::env::var("INSPECT_PROGRESS_LOCATION").unwrap_or_else(|_| {
        let path = fixtures_root().join("zarr-python/cv_f32_f64.zarr");
        path.to_str().unwrap().to_string()
    });
    inspect::inspect_to_stdout_with(&[store], progress.as_ref()).unwrap();
}

#[test]
fn no_progress_when_stderr_is_piped() {
    let child_at = |mode: &str, location: Option<&str>| {
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        if let Some(location) = location {
            command.env("INSPECT_PROGRESS_LOCATION", location);
        }
        let output = command
            // The test's name in the `local` binary: module, then function.
            .args([
                "--exact",
                "inspect_example::child_for_progress_tests",
                "--nocapture",
            ])
            .env("INSPECT_PROGRESS_CHILD", mode)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8(output.stdout).unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(output.status.success(), "{stdout}\n{stderr}");
        assert!(stdout.contains("data type  float32"), "{stdout}");
        stderr
    };
    let child = |mode: &str| child_at(mode, None);
    // As main decides: a pipe is not a terminal, so nothing is drawn.
    let piped = child("decide");
    assert!(
        !piped.contains('\r') && !piped.contains("chunks decoded"),
        "{piped:?}"
    );
    // The same read with the decision forced draws on that pipe: what the
    // first assertion would see if the decision were wrong.
    let forced = child("force");
    assert!(forced.starts_with('\r'), "{forced:?}");
    assert!(forced.contains("/5 chunks decoded"), "{forced:?}");
    assert!(forced.ends_with("\r\x1b[K"), "{forced:?}");

    // Over HTTP the line counts what was fetched.
    #[cfg(feature = "remote")]
    {
        let server = HttpServer::serve(&fixtures_root()).unwrap();
        let url = format!("{}/zarr-python/cv_f32_f64.zarr", server.url());
        let over_http = child_at("force", Some(&url));
        assert!(over_http.starts_with("\rfetched "), "{over_http:?}");
        assert!(over_http.contains(" requests, "), "{over_http:?}");
        assert!(over_http.ends_with("\r\x1b[K"), "{over_http:?}");
        assert!(!child_at("decide", Some(&url)).contains('\r'));
    }
}

/// A URL is shown redacted in every message, whatever the case of its
/// scheme (`HTTPS://` is a URL, not a directory name to print as given),
/// with the crate's `remote` feature or without it.
#[test]
fn urls_in_any_case_are_shown_redacted() {
    for location in [
        "HTTPS://reader:pa55-w0rd@127.0.0.1:9/x.zarr?sig=s1gnature",
        "Http://reader:pa55-w0rd@127.0.0.1:9/x.zarr?sig=s1gnature",
        "gs://reader:pa55-w0rd@bucket/x.zarr?sig=s1gnature",
    ] {
        let error = run(&[location]).expect_err(location);
        for secret in ["pa55-w0rd", "s1gnature"] {
            assert!(!error.contains(secret), "{location}: {error}");
        }
        assert!(error.contains("***"), "{location}: {error}");
    }
}

// Which read path `inspect` takes, and what a window of a shard costs.

#[cfg(feature = "remote")]
/// The sharded fixture: 37 x 53 `float64`, shards of 16 x 16, inner
/// chunks of 4 x 8 (`scale_offset -> cast_value -> bytes` inside).
const SHARDED: &str = "zarr-python/sharded_so_cv_f64_u8_nan";

#[cfg(feature = "remote")]
/// Min and max of the non-NaN values of [`SHARDED`] in `rows` x `cols`,
/// as zarr-python wrote them.
fn sharded_min_max(rows: std::ops::Range<usize>, cols: std::ops::Range<usize>) -> String {
    min_max_37_53(SHARDED, rows, cols)
}

/// Min and max of the non-NaN values in `rows` x `cols` of a 37 x 53
/// `float64` fixture (`DIR/NAME`), as zarr-python wrote them.
fn min_max_37_53(
    fixture: &str,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
) -> String {
    let values: Vec<f64> = std::fs::read(fixtures_root().join(format!("{fixture}.expected.bin")))
        .unwrap()
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let inside: Vec<f64> = rows
        .flat_map(|row| values[row * 53 + cols.start..row * 53 + cols.end].to_vec())
        .filter(|v| !v.is_nan())
        .collect();
    let min = inside.iter().copied().fold(f64::INFINITY, f64::min);
    let max = inside.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{} / {}", Value::Float(min), Value::Float(max))
}

#[cfg(feature = "remote")]
/// A `uint16` store of 2048 x 2048 in one shard of 8 MiB, inner chunks of
/// 256 x 256 (`bytes`, 128 KiB) stored in C order after the index (`bytes`,
/// at the start); value `(i * 37) % 60000` at element `i` (C order). The
/// shard is written here, not by zarrs, whose layout of inner chunks
/// changes from run to run (they are appended as their encodes end).
/// Shards of more than 4 MiB are more than the remote store reads ahead
/// with an index (`src/remote/read_ahead.rs`), so the index is read alone.
fn large_shard_store(dir: &Path) {
    use zarrs::array::codec::ShardingCodecBuilder;
    use zarrs::array::codec::array_to_bytes::sharding::ShardingIndexLocation;
    use zarrs::array::{ArrayBuilder, data_type};
    const SIDE: u64 = 2048;
    const INNER: u64 = 256;
    let store = Arc::new(zarrs::filesystem::FilesystemStore::new(dir).unwrap());
    let inner = vec![std::num::NonZeroU64::new(INNER).unwrap(); 2];
    let mut sharding = ShardingCodecBuilder::new(inner, &data_type::uint16());
    sharding
        .index_location(ShardingIndexLocation::Start)
        .index_bytes_to_bytes_codecs(vec![]);
    let array = ArrayBuilder::new(
        vec![SIDE, SIDE],
        vec![SIDE, SIDE],
        data_type::uint16(),
        0u16,
    )
    .array_to_bytes_codec(Arc::new(sharding.build()))
    .build(store, "/")
    .unwrap();
    array.store_metadata().unwrap();
    let per_side = SIDE / INNER;
    let chunk_bytes = INNER * INNER * 2;
    let index_bytes = per_side * per_side * 16;
    let mut shard = Vec::new();
    for k in 0..per_side * per_side {
        shard.extend_from_slice(&(index_bytes + k * chunk_bytes).to_le_bytes());
        shard.extend_from_slice(&chunk_bytes.to_le_bytes());
    }
    for (ci, cj) in (0..per_side).flat_map(|ci| (0..per_side).map(move |cj| (ci, cj))) {
        for r in ci * INNER..(ci + 1) * INNER {
            for c in cj * INNER..(cj + 1) * INNER {
                shard.extend_from_slice(&(((r * SIDE + c) * 37 % 60_000) as u16).to_le_bytes());
            }
        }
    }
    std::fs::create_dir_all(dir.join("c/0")).unwrap();
    std::fs::write(dir.join("c/0/0"), shard).unwrap();
}

/// A window over 2 x 2 inner chunks of one shard, cutting all four, read
/// over HTTP with the shard's index not yet known: `zarr.json`, the index,
/// and ONE request for the four chunks (the read engine's
/// `get_partial_many`: object_store coalesces ranges less than 1 MiB
/// apart, and the index range it asks for again with them, to check they
/// belong to the index it used, is one of them). zarrs'
/// `retrieve_array_subset` sends one request per inner chunk beside the
/// index: 6.
#[cfg(feature = "remote")]
#[test]
fn a_window_of_a_shard_is_its_index_and_one_request_over_http() {
    let dir = tempfile::tempdir().unwrap();
    large_shard_store(&dir.path().join("large.zarr"));
    // Inner chunks [0..2, 1..3] of the shard.
    let (rows, cols) = (100u64..356, 300u64..556);
    let window = format!("{}:{},{}:{}", rows.start, rows.end, cols.start, cols.end);
    let values = rows
        .clone()
        .flat_map(|r| cols.clone().map(move |c| (r * 2048 + c) * 37 % 60_000));
    let (min, max) = (values.clone().min().unwrap(), values.max().unwrap());
    for _ in 0..3 {
        let server = HttpServer::serve(dir.path()).unwrap();
        let url = format!("{}/large.zarr", server.url());
        let output = run(&[&url, "--window", &window]).unwrap();
        let requests = server.requests();
        let served = server.bytes_served();
        let paths: Vec<&str> = served.keys().map(String::as_str).collect();
        assert_eq!(paths, ["/large.zarr/c/0/0", "/large.zarr/zarr.json"]);
        assert_eq!(
            requests, 3,
            "zarr.json, the index, the chunks: {output}{served:?}"
        );
        assert!(
            field(&output, "fetched").ends_with(" in 3 requests"),
            "{output}"
        );
        assert_eq!(field(&output, "read by"), "the crate's read engine");
        assert_eq!(field(&output, "window"), "[100..356, 300..556]");
        assert_eq!(field(&output, "min / max"), format!("{min} / {max}"));
        let corner: Vec<u64> = (0..6)
            .map(|c| (100 * 2048 + 300 + c) * 37 % 60_000)
            .collect();
        let first_row: Vec<u64> = output
            .split_once("values [100..103, 300..306]:\n")
            .unwrap_or_else(|| panic!("{output}"))
            .1
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(first_row, corner);
    }
}

/// The same over a zarr-python fixture whose shards (388 bytes) the
/// remote store reads whole with their index: `zarr.json` and that one
/// request, the window's chunks answered from it (zarrs' path: 6
/// requests). The window's values are zarr-python's.
#[cfg(feature = "remote")]
#[test]
fn a_window_of_a_small_shard_is_one_request_over_http() {
    let (rows, cols) = (2..6, 5..11); // inner chunks [0..2, 0..2] of shard c/0/0
    let window = format!("{}:{},{}:{}", rows.start, rows.end, cols.start, cols.end);
    let server = HttpServer::serve(&fixtures_root()).unwrap();
    let url = format!("{}/{SHARDED}.zarr", server.url());
    let output = run(&[&url, "--window", &window]).unwrap();
    let prefix = format!("/{SHARDED}.zarr");
    let served = server.bytes_served();
    let paths: Vec<&str> = served.keys().map(String::as_str).collect();
    assert_eq!(
        paths,
        [format!("{prefix}/c/0/0"), format!("{prefix}/zarr.json")]
    );
    assert!(server.requests() <= 3, "{output}");
    assert_eq!(field(&output, "read by"), "the crate's read engine");
    assert_eq!(field(&output, "window"), "[2..6, 5..11]");
    assert_eq!(
        field(&output, "min / max"),
        sharded_min_max(rows.clone(), cols.clone())
    );
}

/// The whole sharded array through the engine: one request per shard
/// (12) and `zarr.json`; the same output locally.
#[cfg(feature = "remote")]
#[test]
fn the_whole_sharded_array_is_one_request_per_shard_over_http() {
    let server = HttpServer::serve(&fixtures_root()).unwrap();
    let url = format!("{}/{SHARDED}.zarr", server.url());
    let output = run(&[&url]).unwrap();
    assert_eq!(field(&output, "read by"), "the crate's read engine");
    assert_eq!(field(&output, "min / max"), sharded_min_max(0..37, 0..53));
    assert_eq!(server.requests(), 1 + 3 * 4, "{output}");
    let local = fixtures_root().join(format!("{SHARDED}.zarr"));
    let local = run(&[local.to_str().unwrap()]).unwrap();
    assert_eq!(
        output
            .lines()
            .skip(1)
            .filter(|l| !l.starts_with("fetched "))
            .collect::<Vec<_>>(),
        local.lines().skip(1).collect::<Vec<_>>()
    );
}

/// Data types the engine does not read (variable-length strings and
/// bytes), and a layout it does not read (sharding behind array -> array
/// codecs): read by zarrs, whole and in a window, and the output says so
/// and why; the values are the writers'.
#[test]
fn what_the_engine_does_not_read_is_read_by_zarrs() {
    let root = fixtures_root();
    for (store, window, reason) in [
        (
            "zarr-python-strings/utf8_2d",
            "1:4,2:7",
            "zarrs (the engine does not read variable-length data types: string)",
        ),
        (
            "zarrs-builtin/vlen/string_sharded_u32_start",
            "0:3,1:4",
            "zarrs (the engine does not read variable-length data types: string)",
        ),
        (
            "zarr-python-strings/bytes_1d",
            "0:2",
            "zarrs (the engine does not read variable-length data types: bytes)",
        ),
        (
            "zarr-python/sharded_outer_so_cv_f64_u8_nan",
            "2:6,5:11",
            "zarrs (the engine does not read sharding_indexed behind array -> array codecs: scale_offset -> cast_value)",
        ),
    ] {
        let path = root.join(format!("{store}.zarr"));
        let path = path.to_str().unwrap();
        let whole = run(&[path]).unwrap_or_else(|e| panic!("{store}: {e}"));
        assert_eq!(field(&whole, "read by"), reason, "{whole}");
        let windowed = run(&[path, "--window", window]).unwrap_or_else(|e| panic!("{store}: {e}"));
        assert_eq!(field(&windowed, "read by"), reason, "{windowed}");
    }

    // The strings printed are zarr-python's: the first row of `utf8_2d`'s
    // corner (its first chunk is 3 x 4).
    let meta: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("zarr-python-strings/utf8_2d.expected.json")).unwrap(),
    )
    .unwrap();
    let store = root.join("zarr-python-strings/utf8_2d.zarr");
    let output = run(&[store.to_str().unwrap()]).unwrap();
    let first_row = output
        .split_once("values [0..3, 0..4]:\n")
        .unwrap_or_else(|| panic!("{output}"))
        .1
        .lines()
        .next()
        .unwrap();
    for value in &meta["values"].as_array().unwrap()[..4] {
        assert!(
            first_row.contains(&value.to_string()),
            "{value} in {output}"
        );
    }

    // The sharded float64 array behind scale_offset: zarrs' values are
    // zarr-python's.
    let outer = "zarr-python/sharded_outer_so_cv_f64_u8_nan";
    let store = root.join(format!("{outer}.zarr"));
    let output = run(&[store.to_str().unwrap(), "--window", "2:6,5:11"]).unwrap();
    assert_eq!(
        field(&output, "min / max"),
        min_max_37_53(outer, 2..6, 5..11)
    );
}

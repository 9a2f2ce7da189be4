//! Print what zarrs decodes from any Zarr V3 array: its codec chain, shape,
//! data type, fill value, element counts, min / max where they make sense,
//! and a corner of its values.
//!
//! ```sh
//! cargo run --release --example inspect -- PATH_OR_URL [--array /group/array] [--window 0:256,1024:1280]
//! cargo run --release --example inspect -- fixtures/zarr-python/so_f32.zarr
//! cargo run --release --features remote --example inspect -- http://127.0.0.1:8000/data.zarr --array /b
//! cargo run --release --features remote --example inspect -- s3://bucket/product.zarr --window 0:256,0:256
//! ```
//!
//! `PATH_OR_URL` is a store directory, or (with the crate's `remote`
//! feature) an `http(s)://` or `s3://bucket/prefix` URL of one, read through
//! object_store (`zarrs_extension_codecs::remote`; S3 settings from the
//! usual AWS environment variables, anonymous without credentials). Given a
//! group, it lists the group's arrays (on a filesystem, or remotely from
//! the group's consolidated metadata); `--array` picks one. `--window`
//! summarises one half-open range per dimension instead of the whole
//! array. For a URL, the last line says what was fetched: bytes and
//! requests. Any data type
//! zarrs has: numeric ones (sub-byte and 8-bit floats too) get min / max,
//! `bool` a count of `true`, the others (complex, strings, ...) their values.
//! On a terminal, a read that takes more than two seconds shows a progress
//! line on stderr (bytes fetched, chunks decoded, rate), cleared at the
//! end; piped or redirected, nothing.
//!
//! It reads through the crate's read engine (`ArrayReadExt`: a window of
//! a shard is its index and one coalesced request for its inner chunks)
//! every array the engine reads, and through zarrs the rest (strings and
//! other data types without a fixed size, ...); a line `read by` says
//! which, and why not the engine (docs/inspect.md).

#[path = "inspect/progress.rs"]
pub mod progress;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value as Json;
use zarrs::array::{Array, ArrayBytes, ArraySubset, CodecOptions, DataType, FillValue};
use zarrs::plugin::{ExtensionName, ZarrVersion};
use zarrs::storage::{ReadableStorage, ReadableStorageTraits, StoreKey};
use zarrs_extension_codecs::numeric::{NumericType, Value};
use zarrs_extension_codecs::{ArrayReadExt, WindowAt, error_chain};

/// An error in words, saying what to do about it.
#[derive(Debug)]
pub struct InspectError(String);

impl std::fmt::Display for InspectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InspectError {}

fn error(message: impl Into<String>) -> InspectError {
    InspectError(message.into())
}

const USAGE: &str =
    "usage: inspect PATH_OR_URL [--array /path/in/store] [--window START:END,START:END,...]";

#[allow(dead_code)] // unused where this file is included as a module
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = inspect_to_stdout(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Run with `args` (as on the command line), printing to stdout, with a
/// progress line on stderr if it is a terminal.
pub fn inspect_to_stdout(args: &[String]) -> Result<(), InspectError> {
    let progress = progress::Progress::for_stderr(std::io::stderr().is_terminal());
    inspect_to_stdout_with(args, progress.as_ref())
}

/// [`inspect_to_stdout`] with `progress` (none: no progress line).
pub fn inspect_to_stdout_with(
    args: &[String],
    progress: Option<&progress::Progress>,
) -> Result<(), InspectError> {
    let stdout = std::io::stdout();
    run(args, &[], &mut stdout.lock(), progress)
}

/// Run with `args` (as on the command line), printing to `out`, without
/// progress.
#[allow(dead_code)] // for the tests that include this file
pub fn inspect(args: &[String], out: &mut dyn Write) -> Result<(), InspectError> {
    inspect_with(args, &[], out)
}

/// [`inspect`], with object_store S3 settings (`("aws_endpoint_url",
/// "http://...")`, ...) over those of the environment, for `s3://` URLs.
#[allow(dead_code)] // for the tests that include this file
pub fn inspect_with(
    args: &[String],
    s3_config: &[(&str, &str)],
    out: &mut dyn Write,
) -> Result<(), InspectError> {
    run(args, s3_config, out, None)
}

fn run(
    args: &[String],
    s3_config: &[(&str, &str)],
    out: &mut dyn Write,
    progress: Option<&progress::Progress>,
) -> Result<(), InspectError> {
    // This crate's bytes / transpose / packbits / zarrs.vlen read what
    // zarrs' built-ins cannot (see the README); scale_offset and cast_value
    // are registered by linking the crate.
    zarrs_extension_codecs::register_overrides();
    let args = parse_args(args)?;
    let array_path = args.array;
    let source = Source::open(&args.location, s3_config)?;
    let node = source.node_metadata(&array_path)?;
    let print = |e: std::io::Error| error(format!("cannot write the output: {e}"));
    match node["node_type"].as_str() {
        Some("array") => print_array(
            &source,
            &array_path,
            &node,
            args.window.as_deref(),
            out,
            progress,
        ),
        Some("group") => {
            let arrays = source.arrays_in_group(&array_path, &node)?;
            writeln!(out, "group      {}", source.describe(&array_path)).map_err(print)?;
            if arrays.is_empty() {
                writeln!(out, "  (no arrays)").map_err(print)?;
            }
            for path in &arrays {
                writeln!(out, "  array    {path}").map_err(print)?;
            }
            writeln!(out, "inspect one with: --array PATH").map_err(print)?;
            Ok(())
        }
        other => Err(error(format!(
            "{}: node_type is {}, expected \"array\" or \"group\": is this a Zarr V3 store?",
            source.key_description(&array_path),
            other.map_or_else(|| "missing".to_string(), |t| format!("{t:?}"))
        ))),
    }
}

/// The command line.
struct Args {
    /// The store's directory or URL.
    location: String,
    /// The array's path in the store.
    array: String,
    /// `--window`: one half-open range per dimension.
    window: Option<Vec<std::ops::Range<u64>>>,
}

/// `START:END,START:END,...` as ranges.
fn parse_window(text: &str) -> Result<Vec<std::ops::Range<u64>>, InspectError> {
    text.split(',')
        .map(|range| {
            let bad = || {
                error(format!(
                    "--window {text}: {range:?} is not START:END (two whole numbers, START < END), e.g. --window 0:256,1024:1280"
                ))
            };
            let (start, end) = range.trim().split_once(':').ok_or_else(bad)?;
            let start: u64 = start.trim().parse().map_err(|_| bad())?;
            let end: u64 = end.trim().parse().map_err(|_| bad())?;
            if start >= end {
                return Err(bad());
            }
            Ok(start..end)
        })
        .collect()
}

fn parse_args(args: &[String]) -> Result<Args, InspectError> {
    let mut location = None;
    let mut array = "/".to_string();
    let mut window = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--window" => {
                let text = args.next().ok_or_else(|| {
                    error(format!(
                        "--window needs one START:END per dimension, e.g. 0:256,1024:1280\n{USAGE}"
                    ))
                })?;
                window = Some(parse_window(text)?);
            }
            "--array" => {
                let path = args.next().ok_or_else(|| {
                    error(format!("--array needs a path, e.g. /group/array\n{USAGE}"))
                })?;
                array = format!("/{}", path.trim_matches('/'));
            }
            "-h" | "--help" => return Err(error(USAGE)),
            flag if flag.starts_with("--") => {
                return Err(error(format!("unknown option {flag}\n{USAGE}")));
            }
            _ if location.is_some() => {
                return Err(error(format!("more than one store given ({arg})\n{USAGE}")));
            }
            _ => location = Some(arg.clone()),
        }
    }
    let location = location.ok_or_else(|| error(USAGE))?;
    Ok(Args {
        location,
        array,
        window,
    })
}

/// A store opened for reading: a directory or a URL.
struct Source {
    location: String,
    store: ReadableStorage,
    /// The directory, for listing a group's arrays.
    directory: Option<PathBuf>,
    /// The remote store, for what it fetched.
    #[cfg(feature = "remote")]
    remote: Option<Arc<zarrs_extension_codecs::remote::RemoteStore>>,
}

/// Whether `location` is a URL rather than a directory: a scheme (in any
/// case: `HTTPS://` is `https://`) and `://`. Every URL is shown redacted,
/// whichever the scheme, and whether this example reads it or not.
fn is_url(location: &str) -> bool {
    location.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

impl Source {
    #[cfg(feature = "remote")]
    fn open_url(location: &str, s3_config: &[(&str, &str)]) -> Result<Self, InspectError> {
        let url = location.trim_end_matches('/');
        let mut options = zarrs_extension_codecs::remote::RemoteOptions::default();
        for (name, value) in s3_config {
            options = options.with_s3_config(name, value);
        }
        let store = zarrs_extension_codecs::remote::RemoteStore::open(url, &options)
            .map(Arc::new)
            .map_err(|e| error(e.to_string()))?;
        Ok(Self {
            location: store.url().to_string(),
            store: store.clone(),
            directory: None,
            remote: Some(store),
        })
    }

    #[cfg(not(feature = "remote"))]
    fn open_url(location: &str, _: &[(&str, &str)]) -> Result<Self, InspectError> {
        let shown = zarrs_extension_codecs::redact_url(location);
        Err(error(format!(
            "{shown}: reading URLs needs the crate's `remote` feature: cargo run --release --features remote --example inspect -- {shown}"
        )))
    }

    /// Where zarrs reads a window (an array the read engine does not read):
    /// zarrs fetches each inner chunk of a shard on a rayon thread of its
    /// own, one blocking request each, so for a remote store a pool larger
    /// than the cores has them all in flight at once (see
    /// docs/performance.md, "Remote reads"). The engine needs none: it
    /// asks for a shard's inner chunks in one call, and keeps more fetches
    /// in flight by itself when they wait on the network.
    fn io_pool(&self) -> rayon::ThreadPool {
        let threads = if is_url(&self.location) { 16 } else { 0 };
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool")
    }

    /// `fetched    N bytes in M requests`, for a remote store.
    fn fetched(&self) -> Option<String> {
        self.fetched_counts()
            .map(|f| format!("{} bytes in {} requests", f.bytes, f.requests))
    }

    /// What a remote store has fetched so far.
    fn fetched_counts(&self) -> Option<progress::Fetched> {
        #[cfg(feature = "remote")]
        if let Some(remote) = &self.remote {
            let fetched = remote.fetched();
            return Some(progress::Fetched {
                bytes: fetched.bytes,
                requests: fetched.requests,
            });
        }
        None
    }

    fn open(location: &str, s3_config: &[(&str, &str)]) -> Result<Self, InspectError> {
        if is_url(location) {
            return Self::open_url(location, s3_config);
        }
        let directory = Path::new(location);
        if !directory.is_dir() {
            return Err(error(if directory.exists() {
                format!(
                    "{location} is a file: give the store's directory (the one holding zarr.json)"
                )
            } else {
                format!(
                    "no such directory {location}: give the path of a Zarr V3 store (a directory holding zarr.json)"
                )
            }));
        }
        let store = zarrs::filesystem::FilesystemStore::new(directory)
            .map_err(|e| error(format!("cannot open {location}: {e}")))?;
        Ok(Self {
            location: location.to_string(),
            store: Arc::new(store),
            directory: Some(directory.to_path_buf()),
            #[cfg(feature = "remote")]
            remote: None,
        })
    }

    /// `LOCATION` or `LOCATION (array /a/b)`, for messages.
    fn describe(&self, path: &str) -> String {
        if path == "/" {
            self.location.clone()
        } else {
            format!("{} (array {path})", self.location)
        }
    }

    /// Where the `zarr.json` of the node at `path` is, for messages.
    fn key_description(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.location.trim_end_matches('/'),
            metadata_key(path)
        )
    }

    /// The `zarr.json` of the node at `path`, parsed.
    fn node_metadata(&self, path: &str) -> Result<Json, InspectError> {
        let where_ = self.key_description(path);
        let key = StoreKey::new(metadata_key(path))
            .map_err(|e| error(format!("{path} is not a valid path in a store: {e}")))?;
        let bytes = self
            .store
            .get(&key)
            .map_err(|e| {
                // Remote stores name the key themselves.
                let e = e.to_string();
                if e.starts_with(&where_) {
                    error(format!("cannot read {e}"))
                } else {
                    error(format!("cannot read {where_}: {e}"))
                }
            })?
            .ok_or_else(|| {
                let hint = if path == "/" {
                    "give the directory or URL of a Zarr V3 store, or add --array /path/inside it"
                } else {
                    "check the --array path (run without --array to list a group's arrays)"
                };
                error(format!("no zarr.json at {where_}: {hint}"))
            })?;
        serde_json::from_slice(&bytes)
            .map_err(|e| error(format!("{where_} is not valid JSON: {e}")))
    }

    /// The paths of the arrays under the group at `path`, sorted.
    fn arrays_in_group(&self, path: &str, group: &Json) -> Result<Vec<String>, InspectError> {
        let prefix = path.trim_end_matches('/');
        // zarr-python's consolidated metadata lists every node below the group.
        if let Some(nodes) = group["consolidated_metadata"]["metadata"].as_object() {
            let mut arrays: Vec<String> = nodes
                .iter()
                .filter(|(_, node)| node["node_type"] == "array")
                .map(|(name, _)| format!("{prefix}/{}", name.trim_matches('/')))
                .collect();
            arrays.sort();
            return Ok(arrays);
        }
        let Some(directory) = &self.directory else {
            let kind = if self.location.starts_with("s3://") {
                "an S3"
            } else {
                "an HTTP"
            };
            return Err(error(format!(
                "{} is a group without consolidated metadata, and {kind} store cannot be listed: pass --array /path/to/array",
                self.describe(path)
            )));
        };
        let mut arrays = Vec::new();
        list_arrays(
            &directory.join(prefix.trim_start_matches('/')),
            prefix,
            &mut arrays,
        );
        arrays.sort();
        Ok(arrays)
    }
}

/// The store key of the `zarr.json` of the node at `path`.
fn metadata_key(path: &str) -> String {
    match path.trim_matches('/') {
        "" => "zarr.json".to_string(),
        inner => format!("{inner}/zarr.json"),
    }
}

/// Collect the arrays below `directory` (the node at `path`), not descending
/// into arrays (their chunks).
fn list_arrays(directory: &Path, path: &str, arrays: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let child = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(json) = std::fs::read(child.join("zarr.json")) else {
            continue;
        };
        let child_path = format!("{path}/{name}");
        match serde_json::from_slice::<Json>(&json)
            .ok()
            .as_ref()
            .map(|j| &j["node_type"])
        {
            Some(Json::String(t)) if t == "array" => arrays.push(child_path),
            Some(Json::String(t)) if t == "group" => list_arrays(&child, &child_path, arrays),
            _ => {}
        }
    }
}

/// Open the array at `path` and print it (or the part of it in `window`).
fn print_array(
    source: &Source,
    path: &str,
    node: &Json,
    window: Option<&[std::ops::Range<u64>]>,
    out: &mut dyn Write,
    progress: Option<&progress::Progress>,
) -> Result<(), InspectError> {
    let described = source.describe(path);
    // The crate's advice for a codec or data type zarrs cannot open (the
    // zarrs feature it needs, register_overrides(), or an unlinked crate).
    let array = open_with_metadata(source, path, node).map_err(|e| {
        let hint = zarrs_extension_codecs::open_error_hint(&e)
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        error(format!("cannot open {described}: {e}{hint}"))
    })?;
    zarrs_extension_codecs::validate_codecs_for_reading(&array)
        .map_err(|e| error(format!("{described}: {e}")))?;
    if let Some(warning) = zarrs_extension_codecs::fill_value_warning(&array) {
        eprintln!("warning: {described}: {warning}");
    }
    let metadata = serde_json::to_value(array.metadata())
        .map_err(|e| error(format!("{described}: metadata: {e}")))?;
    let data_type = array.data_type().clone();
    let fill_value = array.fill_value().clone();
    let window = window
        .map(|ranges| window_subset(&array, ranges))
        .transpose()
        .map_err(|e| error(format!("{described}: {e}")))?;
    let cannot_read = |e: Box<dyn std::error::Error>| {
        error(format!(
            "cannot read {described}: {}",
            error_chain(e.as_ref())
        ))
    };
    let fetched = || source.fetched_counts();
    let read_by = ReadBy::for_array(&array);
    let (stats, corner, corner_bytes) = match &window {
        None => {
            let chunks = array
                .chunks_in_array_subset(&array.subset_all())
                .map_err(|e| cannot_read(Box::new(e)))?
                .ok_or_else(|| {
                    cannot_read("the chunk grid does not say which chunks cover the array".into())
                })?;
            let (stats, first_chunk) =
                progress::run(progress, Some(chunks.num_elements()), &fetched, |decoded| {
                    read_all(&array, &chunks, &data_type, &fill_value, &read_by, decoded)
                })
                .map_err(cannot_read)?;
            let (corner, bytes) =
                read_corner(&array, &data_type, first_chunk).map_err(cannot_read)?;
            (stats, corner, bytes)
        }
        Some(window) => progress::run(progress, None, &fetched, |_| {
            let read = || {
                read_window(&array, window, &data_type, &fill_value, &read_by)
                    .map_err(|e| error_chain(e.as_ref()))
            };
            if read_by.through_read_ext() {
                read()
            } else {
                source.io_pool().install(read)
            }
        })
        .map_err(|e| error(format!("cannot read {described}: {e}")))?,
    };

    let mut text = String::new();
    let mut line = |label: &str, value: String| text.push_str(&format!("{label:<10} {value}\n"));
    line("array", described.clone());
    line("shape", format!("{:?}", array.shape()));
    let chunk_shape = &metadata["chunk_grid"]["configuration"]["chunk_shape"];
    let chunk_shape: Option<Vec<u64>> = serde_json::from_value(chunk_shape.clone()).ok();
    line(
        "chunks",
        chunk_shape.map_or_else(|| metadata["chunk_grid"].to_string(), |s| format!("{s:?}")),
    );
    line("data type", type_name(&data_type));
    line("fill value", metadata["fill_value"].to_string());
    line("codecs", codec_chain(&metadata["codecs"]));
    if let Some(window) = &window {
        line("window", ranges(window));
    }
    line("read by", read_by.to_string());
    line("elements", stats.counts());
    if let Some(range) = stats.range() {
        line("min / max", range);
    }
    text.push_str(&format!("values {}:\n", ranges(&corner)));
    text.push_str(&format_corner(&corner, &corner_bytes, &data_type));
    if let Some(fetched) = source.fetched() {
        text.push_str(&format!("{:<10} {fetched}\n", "fetched"));
    }
    out.write_all(text.as_bytes())
        .map_err(|e| error(format!("cannot write the output: {e}")))
}

/// The array at `path` from its `zarr.json` already read (`node`), so that
/// a remote store is not asked for it twice; zarrs' `Array::open` (and its
/// error) if zarrs cannot parse it.
fn open_with_metadata(
    source: &Source,
    path: &str,
    node: &Json,
) -> Result<Array<dyn ReadableStorageTraits>, zarrs::array::ArrayCreateError> {
    match serde_json::from_value::<zarrs::metadata::ArrayMetadata>(node.clone()) {
        Ok(metadata) => Array::new_with_metadata(source.store.clone(), path, metadata),
        Err(_) => Array::open(source.store.clone(), path),
    }
}

/// The Zarr V3 name of a data type (zarrs' `Display` adds the V2 name).
fn type_name(data_type: &DataType) -> String {
    data_type
        .name(ZarrVersion::V3)
        .map_or_else(|| data_type.to_string(), |n| n.into_owned())
}

/// A codec chain from metadata: bare-string codecs by name, and the inner
/// chains (and index chains) of `sharding_indexed`, nested at any depth.
fn codec_chain(codecs: &Json) -> String {
    let codec = |c: &Json| -> String {
        match c {
            Json::String(name) => name.clone(),
            _ => {
                let name = c["name"].as_str().unwrap_or("(unnamed codec)").to_string();
                match (
                    c["configuration"].get("codecs"),
                    c["configuration"].get("index_codecs"),
                ) {
                    (Some(inner), Some(index)) => {
                        format!(
                            "{name}[{} | index {}]",
                            codec_chain(inner),
                            codec_chain(index)
                        )
                    }
                    (Some(inner), None) => format!("{name}[{}]", codec_chain(inner)),
                    _ => name,
                }
            }
        }
    };
    codecs
        .as_array()
        .map(|cs| cs.iter().map(codec).collect::<Vec<_>>().join(" -> "))
        .unwrap_or_else(|| "(none)".to_string())
}

/// What is counted over every element.
struct Stats {
    elements: u64,
    fill: u64,
    nan: u64,
    /// Count of `true`, for `bool`.
    true_count: Option<u64>,
    /// Min and max of the non-NaN values, for numeric types.
    min_max: Option<(Value, Value)>,
    numeric: Option<NumericType>,
}

impl Stats {
    fn counts(&self) -> String {
        let mut parts = vec![format!("{} fill value", self.fill)];
        if self.numeric.is_some_and(NumericType::is_float) {
            parts.push(format!("{} NaN", self.nan));
        }
        if let Some(t) = self.true_count {
            parts.push(format!("{t} true"));
        }
        format!("{} ({})", self.elements, parts.join(", "))
    }

    fn range(&self) -> Option<String> {
        self.numeric?;
        Some(match self.min_max {
            Some((min, max)) => format!("{min} / {max}"),
            None => "(no values that are not NaN)".to_string(),
        })
    }

    fn add(&mut self, element: &[u8], fill: &[u8]) {
        self.elements += 1;
        if element == fill {
            self.fill += 1;
        }
        if let Some(t) = &mut self.true_count {
            *t += u64::from(element.first() == Some(&1));
        }
        let Some(numeric) = self.numeric else { return };
        let value = numeric.read_value(element);
        if matches!(value, Value::Float(v) if v.is_nan()) {
            self.nan += 1;
            return;
        }
        self.min_max = Some(match self.min_max {
            None => (value, value),
            Some((min, max)) => (
                if less(value, min) { value } else { min },
                if less(max, value) { value } else { max },
            ),
        });
    }
}

fn less(a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::Int(a), Value::Int(b)) => a < b,
        (Value::Float(a), Value::Float(b)) => a < b,
        _ => false,
    }
}

/// Empty statistics for `data_type`.
fn new_stats(data_type: &DataType) -> Stats {
    Stats {
        elements: 0,
        fill: 0,
        nan: 0,
        true_count: (type_name(data_type) == "bool").then_some(0),
        min_max: None,
        numeric: NumericType::from_data_type(data_type),
    }
}

/// Decoded bytes read at once when reading a whole array: chunks are
/// fetched and decoded in parallel batches of about this size (a remote
/// store then has several requests in flight).
const BATCH_BYTES: u64 = 256 << 20;

/// Read the array's `chunks` one by one (in batches, each read at once),
/// counting, and adding each to `done` (for the progress line); also the
/// first chunk's elements, for the corner. A batch is one call to
/// [`ArrayReadExt`] where `read_by` says so (the engine plans its chunks or
/// shards together, one request per shard read whole), else a chunk per
/// call to zarrs, in parallel.
fn read_all(
    array: &Array<dyn ReadableStorageTraits>,
    chunks: &zarrs::array::ArraySubset,
    data_type: &DataType,
    fill_value: &FillValue,
    read_by: &ReadBy,
    done: &AtomicU64,
) -> Result<(Stats, Option<ArrayBytes<'static>>), Box<dyn std::error::Error>> {
    use rayon::prelude::*;
    let mut stats = new_stats(data_type);
    let fill = fill_value.as_ne_bytes();
    let chunk_bytes = array
        .chunk_subset(&vec![0; array.dimensionality()])?
        .num_elements()
        * data_type.fixed_size().unwrap_or(16) as u64;
    let batch = (BATCH_BYTES / chunk_bytes.max(1)).clamp(1, 64) as usize;
    let indices: Vec<Vec<u64>> = chunks.indices().into_iter().map(|c| c.to_vec()).collect();
    let mut first = None;
    if read_by.through_read_ext() {
        for group in indices.chunks(batch) {
            let windows = group
                .iter()
                .map(|chunk| array.chunk_subset_bounded(chunk))
                .collect::<Result<Vec<_>, _>>()?;
            let stacked = Stacked::read(array, &windows)?;
            for i in 0..windows.len() {
                let bytes = stacked.window(i, data_type)?;
                for_each_element(&bytes, data_type, |element| stats.add(element, fill));
                if first.is_none() {
                    first = Some(bytes.into_owned());
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        }
        return Ok((stats, first));
    }
    for group in indices.chunks(batch) {
        let decoded: Vec<ArrayBytes<'static>> = group
            .par_iter()
            .map(|chunk| {
                retrieve_chunk_bounded(array, chunk, data_type).map_err(|e| error_chain(e.as_ref()))
            })
            .collect::<Result<_, _>>()?;
        for bytes in decoded {
            for_each_element(&bytes, data_type, |element| stats.add(element, fill));
            if first.is_none() {
                first = Some(bytes);
            }
            done.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok((stats, first))
}

/// Which path reads the array: the crate's read engine, through
/// [`ArrayReadExt`]; or zarrs, and why the engine does not.
enum ReadBy {
    /// The engine: a window of a shard is its index and one request for
    /// the inner chunks it needs.
    Engine,
    /// Zarrs, through [`ArrayReadExt`] (which falls back to zarrs'
    /// `retrieve_array_subset_into_opt` for a fixed-size data type in a
    /// layout the engine does not read); the reason.
    ZarrsThroughReadExt(String),
    /// Zarrs' `retrieve_array_subset` / `retrieve_chunk` (data types
    /// [`ArrayReadExt`] does not read: no fixed size, or a mask); the
    /// reason.
    Zarrs(String),
}

impl ReadBy {
    /// The path for `array`: the crate's read engine, unless it says why
    /// not (`engine_refusal`); then zarrs, behind `ArrayReadExt` for a
    /// fixed-size data type without a mask, directly for the others.
    fn for_array(array: &Array<dyn ReadableStorageTraits>) -> Self {
        let Some(reason) = zarrs_extension_codecs::read::engine_refusal(array) else {
            return Self::Engine;
        };
        let data_type = array.data_type();
        if data_type.is_optional() || data_type.fixed_size().is_none() {
            Self::Zarrs(reason)
        } else {
            Self::ZarrsThroughReadExt(reason)
        }
    }

    /// Whether [`ArrayReadExt`] reads (the engine, or zarrs behind it).
    fn through_read_ext(&self) -> bool {
        !matches!(self, Self::Zarrs(_))
    }
}

impl std::fmt::Display for ReadBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Engine => f.write_str("the crate's read engine"),
            Self::ZarrsThroughReadExt(reason) | Self::Zarrs(reason) => {
                write!(f, "zarrs (the engine does not read {reason})")
            }
        }
    }
}

/// Windows of an array read in one call to [`ArrayReadExt`], stacked
/// along the first dimension of one output (the widest of each other
/// dimension), so that the engine plans all their chunks or shards
/// together.
struct Stacked {
    out: Vec<u8>,
    shape: Vec<u64>,
    placed: Vec<WindowAt>,
    element_size: usize,
}

impl Stacked {
    /// Read `windows` (inside the array; one only for a zero-dimensional
    /// array).
    fn read(
        array: &Array<dyn ReadableStorageTraits>,
        windows: &[ArraySubset],
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let data_type = array.data_type();
        let element_size = data_type
            .fixed_size()
            .ok_or_else(|| format!("data type {} has no fixed size", type_name(data_type)))?;
        let dims = array.dimensionality();
        if dims == 0 && windows.len() > 1 {
            return Err("a zero-dimensional array has one window".into());
        }
        let mut shape = vec![0u64; dims];
        let mut placed = Vec::with_capacity(windows.len());
        for window in windows {
            let mut at = vec![0; dims];
            if let Some(first) = shape.first().copied() {
                at[0] = first;
                shape[0] += window.shape()[0];
                for (d, &len) in window.shape().iter().enumerate().skip(1) {
                    shape[d] = shape[d].max(len);
                }
            }
            placed.push(WindowAt {
                window: window.clone(),
                at,
            });
        }
        let elements = usize::try_from(shape.iter().product::<u64>())?;
        let mut out = vec![0u8; elements * element_size];
        array.retrieve_windows_into_bytes_opt(
            &placed,
            &mut out,
            &shape,
            &CodecOptions::default(),
        )?;
        Ok(Self {
            out,
            shape,
            placed,
            element_size,
        })
    }

    /// The bytes of window `i` (C order): borrowed where the window spans
    /// the output's other dimensions, else copied out.
    fn window(
        &self,
        i: usize,
        data_type: &DataType,
    ) -> Result<ArrayBytes<'_>, Box<dyn std::error::Error>> {
        let placed = &self.placed[i];
        let window_shape = placed.window.shape();
        if window_shape.get(1..) == self.shape.get(1..) {
            let row =
                usize::try_from(self.shape.iter().skip(1).product::<u64>())? * self.element_size;
            let start = usize::try_from(placed.at.first().copied().unwrap_or(0))? * row;
            let len = usize::try_from(placed.window.num_elements())? * self.element_size;
            return Ok(ArrayBytes::Fixed(std::borrow::Cow::Borrowed(
                &self.out[start..start + len],
            )));
        }
        let inside = ArraySubset::new_with_start_shape(placed.at.clone(), window_shape.to_vec())?;
        Ok(ArrayBytes::Fixed(std::borrow::Cow::Borrowed(&self.out))
            .extract_array_subset(&inside, &self.shape, data_type)?
            .into_owned())
    }

    /// The bytes of the one window read, if one.
    fn into_only(self) -> Option<ArrayBytes<'static>> {
        let one = self.placed.len() == 1 && self.placed[0].window.shape() == self.shape.as_slice();
        if one {
            Some(ArrayBytes::Fixed(std::borrow::Cow::Owned(self.out)))
        } else {
            None
        }
    }
}

/// `ranges` as a subset of the array, if it lies inside it.
fn window_subset(
    array: &Array<dyn ReadableStorageTraits>,
    ranges: &[std::ops::Range<u64>],
) -> Result<ArraySubset, String> {
    let shape = array.shape();
    if ranges.len() != shape.len() {
        return Err(format!(
            "--window has {} ranges, the array {} dimensions (shape {shape:?})",
            ranges.len(),
            shape.len()
        ));
    }
    for (d, (range, &len)) in ranges.iter().zip(shape).enumerate() {
        if range.end > len {
            return Err(format!(
                "--window {}..{} is outside dimension {d} of the array (0..{len}, shape {shape:?})",
                range.start, range.end
            ));
        }
    }
    Ok(ArraySubset::new_with_ranges(ranges))
}

/// Read `window` (through [`ArrayReadExt`] or zarrs, as `read_by` says),
/// counting; and up to 3 x 6 values at its origin.
fn read_window(
    array: &Array<dyn ReadableStorageTraits>,
    window: &ArraySubset,
    data_type: &DataType,
    fill_value: &FillValue,
    read_by: &ReadBy,
) -> Result<(Stats, ArraySubset, ArrayBytes<'static>), Box<dyn std::error::Error>> {
    let mut stats = new_stats(data_type);
    let bytes: ArrayBytes<'static> = if read_by.through_read_ext() {
        Stacked::read(array, std::slice::from_ref(window))?
            .into_only()
            .ok_or("one window read, not one window given back")?
    } else {
        array.retrieve_array_subset(window)?
    };
    let fill = fill_value.as_ne_bytes();
    for_each_element(&bytes, data_type, |element| stats.add(element, fill));
    let inside = corner(window.shape());
    let corner_bytes = bytes
        .extract_array_subset(&inside, window.shape(), data_type)?
        .into_owned();
    let ranges: Vec<_> = inside
        .to_ranges()
        .iter()
        .zip(window.start())
        .map(|(r, &start)| r.start + start..r.end + start)
        .collect();
    Ok((stats, ArraySubset::new_with_ranges(&ranges), corner_bytes))
}

/// The elements of chunk `chunk` inside the array (an edge chunk is cut at
/// the array's bounds), read as a whole chunk: zarrs 0.23.14 fails to read
/// the in-bounds part of an edge chunk of a `transpose` + `vlen-utf8` array
/// with `retrieve_array_subset` ("indexer references array indices ...
/// out-of-bounds"), with its built-in codecs as with this crate's.
fn retrieve_chunk_bounded(
    array: &Array<dyn ReadableStorageTraits>,
    chunk: &[u64],
    data_type: &DataType,
) -> Result<ArrayBytes<'static>, Box<dyn std::error::Error>> {
    let whole = array.chunk_subset(chunk)?;
    let bounded = array.chunk_subset_bounded(chunk)?;
    let bytes: ArrayBytes<'static> = array.retrieve_chunk(chunk)?;
    if whole == bounded {
        return Ok(bytes);
    }
    let inside = ArraySubset::new_with_start_shape(vec![0; chunk.len()], bounded.shape().to_vec())?;
    Ok(bytes
        .extract_array_subset(&inside, whole.shape(), data_type)?
        .into_owned())
}

/// Call `f` with the bytes of each element, for fixed- and variable-size
/// data types.
fn for_each_element(bytes: &ArrayBytes<'_>, data_type: &DataType, mut f: impl FnMut(&[u8])) {
    match bytes {
        ArrayBytes::Fixed(raw) => {
            let size = data_type.fixed_size().unwrap_or(1).max(1);
            raw.chunks_exact(size).for_each(f);
        }
        ArrayBytes::Variable(variable) => {
            let (raw, offsets) = (variable.bytes(), variable.offsets());
            offsets.windows(2).for_each(|w| f(&raw[w[0]..w[1]]));
        }
        ArrayBytes::Optional(optional) => {
            for_each_element(optional.data(), data_type, f);
        }
    }
}

/// Up to 3 x 6 values at the array's origin (the last two dimensions),
/// inside the first chunk (read as in [`retrieve_chunk_bounded`], unless
/// `first_chunk` has it already).
fn read_corner(
    array: &Array<dyn ReadableStorageTraits>,
    data_type: &DataType,
    first_chunk: Option<ArrayBytes<'static>>,
) -> Result<(ArraySubset, ArrayBytes<'static>), Box<dyn std::error::Error>> {
    let origin = vec![0; array.dimensionality()];
    let first = array.chunk_subset_bounded(&origin)?;
    let corner = corner(first.shape());
    let bytes = match first_chunk {
        Some(bytes) => bytes,
        None => retrieve_chunk_bounded(array, &origin, data_type)?,
    };
    let bytes = bytes
        .extract_array_subset(&corner, first.shape(), data_type)?
        .into_owned();
    Ok((corner, bytes))
}

/// Up to 3 x 6 of `shape` at its origin (the last two dimensions).
fn corner(shape: &[u64]) -> ArraySubset {
    let n = shape.len();
    let ranges: Vec<_> = shape
        .iter()
        .enumerate()
        .map(|(d, &len)| {
            let take = match n - d {
                1 => 6,
                2 => 3,
                _ => 1,
            };
            0..len.min(take)
        })
        .collect();
    ArraySubset::new_with_ranges(&ranges)
}

/// `[0..3, 0..6]`.
fn ranges(subset: &ArraySubset) -> String {
    let ranges: Vec<String> = subset
        .to_ranges()
        .iter()
        .map(|r| format!("{}..{}", r.start, r.end))
        .collect();
    format!("[{}]", ranges.join(", "))
}

/// The corner's values, one row per line (by the last dimension).
fn format_corner(corner: &ArraySubset, bytes: &ArrayBytes<'_>, data_type: &DataType) -> String {
    let numeric = NumericType::from_data_type(data_type);
    let mut values = Vec::new();
    for_each_element(bytes, data_type, |element| {
        values.push(match numeric {
            Some(numeric) => numeric.read_value(element).to_string(),
            // zarrs' own formatting of one element: the fill-value JSON.
            None => data_type
                .metadata_fill_value(&FillValue::new(element.to_vec()))
                .ok()
                .and_then(|json| serde_json::to_string(&json).ok())
                .unwrap_or_else(|| format!("{element:02x?}")),
        });
    });
    let row = corner.shape().last().copied().unwrap_or(1).max(1) as usize;
    let width = values.iter().map(String::len).max().unwrap_or(0);
    values
        .chunks(row)
        .map(|r| {
            let cells: Vec<String> = r.iter().map(|v| format!("{v:>width$}")).collect();
            format!("  {}\n", cells.join(" "))
        })
        .collect()
}

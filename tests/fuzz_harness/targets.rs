//! The four targets. Each takes the raw fuzzer input.

use std::num::NonZeroU64;
use std::sync::Arc;

use arbitrary::Unstructured;
use serde_json::{Value, json};
use zarrs::array::codec::api::{Codec, CodecMetadataOptions, CodecOptions, CodecTraitsV3};
use zarrs::array::{Array, ArrayBytes, ArrayMetadata, ArraySubset, DataType, FillValue};
use zarrs::metadata::v3::{ArrayMetadataV3, MetadataV3};
use zarrs::plugin::{ExtensionName, ZarrVersion};
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator, InvalidByteRangeError};
use zarrs::storage::store::MemoryStore;
use zarrs::storage::{
    MaybeBytesIterator, ReadableStorageTraits, StorageError, StoreKey, WritableStorageTraits,
};

use super::input::{self, Dt, Elements, Kind};
use super::model::{self, Chain, V};

/// The codec names the configuration target picks from (`endian` is the
/// older name of `bytes`).
pub const CODEC_NAMES: [&str; 7] = [
    "scale_offset",
    "cast_value",
    "bytes",
    "transpose",
    "packbits",
    "zarrs.vlen",
    "endian",
];

/// The configuration keys of each codec, to steer generated JSON.
fn config_keys(name: &str) -> &'static [&'static str] {
    match name {
        "scale_offset" => &["offset", "scale"],
        "cast_value" => &[
            "data_type",
            "rounding",
            "out_of_range",
            "scalar_map",
            "encode",
            "decode",
        ],
        "bytes" | "endian" => &["endian"],
        "transpose" => &["order"],
        "packbits" => &[
            "padding_encoding",
            "first_bit",
            "last_bit",
            "start_bit",
            "end_bit",
        ],
        _ => &[
            "index_codecs",
            "data_codecs",
            "index_data_type",
            "index_location",
            "name",
            "configuration",
        ],
    }
}

/// Largest array / chunk the decode target builds (elements), so that a
/// shape in hostile metadata cannot make the harness itself allocate
/// gigabytes.
const MAX_ELEMENTS: u64 = 4096;

fn setup() {
    zarrs_extension_codecs::register_overrides();
}

// --- configuration ----------------------------------------------------------

/// Input: one byte picking the codec name, then its configuration as JSON
/// text (a fixture's) or, when that is no JSON, bytes from which a JSON
/// value is generated.
///
/// Property: creating the codec through zarrs' registry returns an error or
/// a codec; a codec's written configuration creates a codec again, which
/// writes the same configuration. Meeting data types never panics.
pub fn configuration(data: &[u8]) {
    setup();
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let name = CODEC_NAMES[usize::from(selector) % CODEC_NAMES.len()];
    let config = match serde_json::from_slice::<Value>(rest) {
        Ok(config) => config,
        Err(_) => {
            let mut u = Unstructured::new(rest);
            match input::json_value(&mut u, config_keys(name), 3) {
                Ok(config) => config,
                Err(_) => return,
            }
        }
    };
    let metadata = if selector >= 128 {
        json!({ "name": name })
    } else {
        json!({ "name": name, "configuration": config })
    };
    let Ok(metadata) = serde_json::from_value::<MetadataV3>(metadata) else {
        return;
    };
    let codec = match Codec::from_metadata(&metadata) {
        Ok(codec) => codec,
        Err(error) => {
            assert!(!error.to_string().is_empty(), "{metadata}: empty error");
            return;
        }
    };
    let written = rewritten(&codec);
    let again = Codec::from_metadata(&written)
        .unwrap_or_else(|e| panic!("{metadata} wrote {written}, which fails: {e}"));
    assert_eq!(
        rewritten(&again).to_string(),
        written.to_string(),
        "{metadata}: written metadata differs after a re-creation"
    );
    meet_data_types(&codec);
}

/// The metadata a codec writes (name and configuration).
fn rewritten(codec: &Codec) -> MetadataV3 {
    let name = codec.name(ZarrVersion::V3).expect("a V3 name").into_owned();
    match codec.configuration_v3(&CodecMetadataOptions::default()) {
        Some(configuration) => MetadataV3::new_with_configuration(name, configuration),
        None => MetadataV3::new(name),
    }
}

/// What a codec does when it meets each data type: errors or not, no panic.
fn meet_data_types(codec: &Codec) {
    let shape = [NonZeroU64::new(3).unwrap(), NonZeroU64::new(2).unwrap()];
    for dt in input::DATA_TYPES {
        let Ok(data_type) = data_type_of(dt) else {
            continue;
        };
        let fill = fill_value(&data_type, dt);
        match codec {
            Codec::ArrayToArray(c) => {
                let _ = c.encoded_data_type(&data_type);
                let _ = c.encoded_fill_value(&data_type, &fill);
                let _ = c.encoded_shape(&shape);
            }
            Codec::ArrayToBytes(c) => {
                let _ = c.encoded_representation(&shape, &data_type, &fill);
            }
            Codec::BytesToBytes(_) => {}
        }
    }
}

fn data_type_of(dt: Dt) -> Result<DataType, String> {
    let metadata: MetadataV3 = serde_json::from_value(json!(dt.name)).map_err(|e| e.to_string())?;
    DataType::from_metadata(&metadata).map_err(|e| e.to_string())
}

fn fill_value(data_type: &DataType, dt: Dt) -> FillValue {
    match dt.kind {
        Kind::Str => FillValue::new(Vec::new()),
        _ => FillValue::new(vec![0; data_type.fixed_size().unwrap_or(1)]),
    }
}

// --- decode -----------------------------------------------------------------

/// Input: a mode byte; even: a little-endian `u16` length and that many
/// bytes of array metadata JSON (fixtures seed these), odd: a generated
/// array (any of this crate's codecs, in or out of `sharding_indexed`). Then
/// 8 bytes choosing windows, and the rest is the bytes of chunk 0. When bits
/// 1 to 3 of the mode byte are all set, chunk 0 is also read as the first
/// chunk of a tall array (see [`large_read`]).
///
/// Property: decoding chunk 0 whole, and windows of it (the partial
/// decoders), returns `Ok` or `Err`, never panics; where both succeed, a
/// window equals the same region of the whole chunk.
pub fn decode(data: &[u8]) {
    setup();
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (metadata, rest) = if mode & 1 == 0 {
        let Some((len, rest)) = rest.split_first_chunk::<2>() else {
            return;
        };
        let len = usize::from(u16::from_le_bytes(*len));
        if rest.len() < len {
            return;
        }
        let Ok(metadata) = serde_json::from_slice::<Value>(&rest[..len]) else {
            return;
        };
        (metadata, &rest[len..])
    } else {
        let mut u = Unstructured::new(rest);
        let Ok(metadata) = generated_array(&mut u) else {
            return;
        };
        (metadata, u.take_rest())
    };
    let (selector, chunk) = rest.split_at(rest.len().min(8));
    let large = mode & LARGE_READ_MODE == LARGE_READ_MODE;
    decode_chunk(metadata, selector, chunk, large);
}

/// Mode bits asking the decode target for [`large_read`] too: one input in
/// eight, as such a read costs a few milliseconds.
pub const LARGE_READ_MODE: u8 = 0b1110;

/// A generated array for the decode target.
pub fn generated_array(u: &mut Unstructured) -> arbitrary::Result<Value> {
    let dt = *u.choose(&input::DATA_TYPES)?;
    let shape = input::shape(u, 256)?;
    let chunk = input::chunk_shape(u, &shape)?;
    let codecs = if u.arbitrary()? {
        let inner = input::inner_shape(u, &chunk)?;
        let inner_codecs = input::chain(u, dt, inner.len(), true)?;
        vec![input::sharding(u, &inner, inner_codecs)?]
    } else {
        input::chain(u, dt, shape.len(), true)?
    };
    Ok(input::array_metadata(&shape, &chunk, dt, &codecs))
}

/// Whether `metadata` stays within the harness's limits and avoids the
/// zarrs panics that are not this crate's.
pub fn acceptable(metadata: &Value) -> bool {
    fn walk(value: &Value) -> bool {
        match value {
            Value::Object(map) => map.iter().all(|(key, value)| {
                let shape_ok = match key.as_str() {
                    "shape" | "chunk_shape" => value.as_array().is_some_and(|dims| {
                        dims.len() <= 4
                            && dims
                                .iter()
                                .try_fold(1u64, |n, d| n.checked_mul(d.as_u64()?))
                                .is_some_and(|n| n <= MAX_ELEMENTS)
                    }),
                    // ZARRS-AVOID(vlen-array): zarrs' built-in `vlen-array`
                    // (and `zarrs.vlen_v2` and its URL, the generic names)
                    // slice out of range on corrupt offsets
                    // (array_to_bytes/vlen_v2.rs).
                    // `vlen-utf8` and `vlen-bytes` are fed: `setup()`
                    // installs this crate's overrides for them.
                    "name" => !value.as_str().is_some_and(|n| {
                        [
                            "vlen-array",
                            "zarrs.vlen_v2",
                            "https://codec.zarrs.dev/array_to_bytes/vlen_v2",
                        ]
                        .contains(&n)
                    }),
                    _ => true,
                };
                shape_ok && walk(value)
            }),
            Value::Array(items) => items.iter().all(walk),
            _ => true,
        }
    }
    walk(metadata)
}

/// An array of `metadata` over a checked in-memory store whose chunk 0 is
/// `chunk`, or `None` if zarrs refuses the metadata or the array has no
/// dimensions.
pub fn array_with_chunk_zero(metadata: Value, chunk: &[u8]) -> Option<Array<CheckedStore>> {
    let metadata = serde_json::from_value::<ArrayMetadataV3>(metadata).ok()?;
    let inner = Arc::new(MemoryStore::new());
    let store = Arc::new(CheckedStore(inner.clone()));
    let array = Array::new_with_metadata(store, "/", ArrayMetadata::V3(metadata)).ok()?;
    if array.dimensionality() == 0 {
        return None;
    }
    let indices = vec![0u64; array.dimensionality()];
    inner
        .set(&array.chunk_key(&indices), chunk.to_vec().into())
        .unwrap();
    Some(array)
}

fn decode_chunk(metadata_json: Value, selector: &[u8], chunk: &[u8], large: bool) {
    if !acceptable(&metadata_json) {
        return;
    }
    if !shard_index_is_sane(&metadata_json, chunk) {
        return;
    }
    let Some(array) = array_with_chunk_zero(metadata_json.clone(), chunk) else {
        return;
    };
    let indices = vec![0u64; array.dimensionality()];
    let Ok(chunk_shape) = array.chunk_shape(&indices) else {
        return;
    };
    let chunk_shape: Vec<u64> = chunk_shape.iter().map(|d| d.get()).collect();
    let whole = array.retrieve_chunk::<ArrayBytes<'static>>(&indices);

    // Windows inside chunk 0 (and the array), drawn from the selector.
    let array_shape = array.shape().to_vec();
    let bounded: Vec<u64> = chunk_shape
        .iter()
        .zip(&array_shape)
        .map(|(&c, &a)| c.min(a))
        .collect();
    if bounded.contains(&0) {
        return;
    }
    for w in 0..2 {
        let ranges: Vec<std::ops::Range<u64>> = bounded
            .iter()
            .enumerate()
            .map(|(d, &n)| {
                let s = u64::from(*selector.get((w * 4 + d) % 8).unwrap_or(&0));
                let start = s % n;
                let len = 1 + (s / 7) % (n - start);
                start..start + len
            })
            .collect();
        let window = ArraySubset::new_with_ranges(&ranges);
        let by_chunk_subset = array.retrieve_chunk_subset::<ArrayBytes<'static>>(&indices, &window);
        let by_array_subset = array.retrieve_array_subset::<ArrayBytes<'static>>(&window);
        typed_reads_agree(&array, &window, &by_array_subset);
        if let (Ok(a), Ok(b)) = (&by_chunk_subset, &by_array_subset) {
            assert_eq!(a, b, "chunk subset and array subset {ranges:?} differ");
        }
        if let (Ok(whole), Ok(part)) = (&whole, &by_chunk_subset) {
            let expected = whole
                .extract_array_subset(&window, &chunk_shape, array.data_type())
                .expect("a window inside the chunk");
            assert_eq!(
                &expected, part,
                "window {ranges:?} differs from the whole chunk's decoding"
            );
        }
    }
    if large {
        large_read(metadata_json, &chunk_shape, array.data_type(), chunk);
    }
}

/// Outputs of at least this many bytes take `ArrayReadExt`'s huge-page path
/// (`HUGE_PAGE_ADVICE_MIN_BYTES` in `src/read/output.rs`).
const LARGE_OUTPUT_BYTES: u64 = 4 << 20;

/// How many reads [`large_read`] has made (the replay checks that the
/// committed inputs reach it).
pub static LARGE_READS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Reads the whole of a tall array whose first chunk is `chunk`:
/// `ArrayReadExt`'s new outputs of 4 MiB or more are advised for huge pages
/// and faulted in over threads before zarrs decodes into them, a path no
/// window of the small arrays above reaches. The array has a `rectilinear`
/// chunk grid with two chunks down the first dimension: chunk 0, of the
/// metadata's `regular` chunk shape, and below it one absent chunk (read as
/// the fill value) tall enough to make the output at least
/// [`LARGE_OUTPUT_BYTES`]. Skipped for variable-size data types and for
/// chunk grids other than `regular`.
fn large_read(mut metadata: Value, chunk_shape: &[u64], data_type: &DataType, chunk: &[u8]) {
    let Some(size) = data_type.fixed_size() else {
        return;
    };
    if metadata["chunk_grid"]["name"] != "regular" {
        return;
    }
    let row_bytes = (chunk_shape[1..].iter().product::<u64>() * size as u64).max(1);
    let rows = LARGE_OUTPUT_BYTES.div_ceil(row_bytes);
    let mut grid: Vec<Value> = chunk_shape.iter().map(|&c| json!(c)).collect();
    grid[0] = json!([chunk_shape[0], rows]);
    let mut shape = chunk_shape.to_vec();
    shape[0] += rows;
    metadata["shape"] = json!(shape);
    metadata["chunk_grid"] = json!({
        "name": "rectilinear",
        "configuration": {"kind": "inline", "chunk_shapes": grid}
    });
    let Some(array) = array_with_chunk_zero(metadata, chunk) else {
        return;
    };
    let all = array.subset_all();
    let zarrs_read = array.retrieve_array_subset::<ArrayBytes<'static>>(&all);
    if typed_reads_agree(&array, &all, &zarrs_read) {
        LARGE_READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `window` read by `retrieve_windows_into_bytes_opt` as its top and bottom
/// halves (first dimension), the bottom placed first in the output, then
/// put back in order; one placement for a window of fewer than two rows.
fn placed_halves<S: ?Sized + ReadableStorageTraits + 'static>(
    array: &Array<S>,
    window: &ArraySubset,
    size: usize,
) -> Result<Vec<u8>, zarrs::array::ArrayError> {
    use zarrs_extension_codecs::{ArrayReadExt, WindowAt};
    let shape = window.shape().to_vec();
    let mut out = vec![0xA5u8; window.num_elements_usize() * size];
    let options = CodecOptions::default();
    if shape.first().is_none_or(|&rows| rows < 2) {
        let placed = [WindowAt {
            window: window.clone(),
            at: vec![0; shape.len()],
        }];
        array.retrieve_windows_into_bytes_opt(&placed, &mut out, &shape, &options)?;
        return Ok(out);
    }
    let (rows, start) = (shape[0], window.start()[0]);
    let top_rows = rows / 2;
    let part = |from: u64, len: u64| {
        let mut ranges = window.to_ranges();
        ranges[0] = from..from + len;
        ArraySubset::new_with_ranges(&ranges)
    };
    let mut top_at = vec![0; shape.len()];
    top_at[0] = rows - top_rows;
    let placed = [
        WindowAt {
            window: part(start, top_rows),
            at: top_at,
        },
        WindowAt {
            window: part(start + top_rows, rows - top_rows),
            at: vec![0; shape.len()],
        },
    ];
    array.retrieve_windows_into_bytes_opt(&placed, &mut out, &shape, &options)?;
    let row_bytes = out.len() / rows as usize;
    let split = (rows - top_rows) as usize * row_bytes;
    let (bottom, top) = out.split_at(split);
    Ok([top, bottom].concat())
}

/// Whether both typed reads failed with an error saying one of `texts`.
fn both_say(typed: &impl ToString, sliced: &impl ToString, texts: &[&str]) -> bool {
    [typed.to_string(), sliced.to_string()]
        .iter()
        .all(|e| texts.iter().any(|text| e.contains(text)))
}

/// `ArrayReadExt`'s typed reads of `window` (a new vector, and a slice
/// filled with a pattern first) give what zarrs' byte read gave, or both fail.
/// Returns whether the typed reads ran and succeeded.
fn typed_reads_agree<S: ?Sized + ReadableStorageTraits + 'static>(
    array: &Array<S>,
    window: &ArraySubset,
    zarrs_read: &Result<ArrayBytes<'static>, zarrs::array::ArrayError>,
) -> bool {
    fn as_type<T, S>(
        array: &Array<S>,
        window: &ArraySubset,
        zarrs_read: &Result<ArrayBytes<'static>, zarrs::array::ArrayError>,
    ) -> bool
    where
        T: zarrs::array::Element + bytemuck::Pod,
        S: ?Sized + ReadableStorageTraits + 'static,
    {
        use zarrs_extension_codecs::ArrayReadExt;
        let typed = array.retrieve_array_subset_vec::<T>(window);
        let mut slice = vec![T::zeroed(); window.num_elements_usize()];
        bytemuck::cast_slice_mut::<T, u8>(&mut slice).fill(0xA5);
        let sliced = array.retrieve_array_subset_into_slice::<T>(window, &mut slice);
        // The same window as two placed halves, swapped in one output: the
        // same values where both read. (Either may fail alone: a part of a
        // chunk is decoded through a region around it, which differs with
        // the window, and an element there that cannot be decoded fails
        // the read whose region holds it, as in zarrs' own reads.)
        let placed = placed_halves(array, window, size_of::<T>());
        if let (Ok(placed), Ok(typed)) = (&placed, &typed) {
            assert_eq!(
                placed.as_slice(),
                bytemuck::cast_slice::<T, u8>(typed),
                "placed windows"
            );
        }
        match (zarrs_read, typed, sliced) {
            (Ok(ArrayBytes::Fixed(want)), Ok(typed), Ok(())) => {
                assert_eq!(
                    bytemuck::cast_slice::<T, u8>(&typed),
                    &want[..],
                    "typed vec"
                );
                assert_eq!(
                    bytemuck::cast_slice::<T, u8>(&slice),
                    &want[..],
                    "typed slice"
                );
                true
            }
            (Err(_), Err(_), Err(_)) => false,
            // The read engine checks a shard index where zarrs does not:
            // an inner chunk of a chain that writes a fixed number of bytes
            // must have that many (zarrs 0.23.14 decodes e.g. an empty one
            // of `cast_value` + `transpose` + `bytes` as success), and no
            // range may reach past the shard's end (zarrs' partial decoder
            // reads the part of such a chunk it needs and does not look).
            (Ok(_), Err(typed), Err(sliced))
                if both_say(
                    &typed,
                    &sliced,
                    &["index entry of inner chunk", "past the shard's end"],
                ) =>
            {
                false
            }
            // A chunk that decodes to the wrong number of bytes is damaged:
            // the read engine refuses it for any window, as zarrs refuses it
            // read whole, but zarrs' partial decoder takes the bytes a
            // window needs from it without looking at its size. Accepted
            // only where zarrs' own read of the whole chunk fails.
            (Ok(_), Err(typed), Err(sliced))
                if both_say(&typed, &sliced, &["the chunk holds"])
                    && array
                        .retrieve_chunk::<ArrayBytes<'static>>(&vec![0; array.dimensionality()])
                        .is_err() =>
            {
                false
            }
            (want, typed, sliced) => panic!(
                "typed reads disagree with zarrs: zarrs ok {}, vec ok {} ({:?}), slice ok {}",
                want.is_ok(),
                typed.is_ok(),
                typed.as_ref().err().map(ToString::to_string),
                sliced.is_ok()
            ),
        }
    }
    macro_rules! dispatch {
        ($($t:ty),*) => {$(
            if <$t as zarrs::array::Element>::validate_data_type(array.data_type()).is_ok() {
                return as_type::<$t, S>(array, window, zarrs_read);
            }
        )*};
    }
    dispatch!(
        u8,
        i8,
        u16,
        i16,
        u32,
        i32,
        u64,
        i64,
        f32,
        f64,
        half::f16,
        half::bf16
    );
    false
}

/// ZARRS-AVOID(shard-index-overflow): zarrs 0.23.14's `sharding_indexed`
/// decoder adds an index entry's offset and size unchecked
/// (`sharding_codec.rs:347`, "attempt to add with overflow" with debug
/// assertions), and so does the byte interval partial decoder it puts
/// around an inner chunk, to the offset of a byte range read inside that
/// chunk (`zarrs_codec` 0.2.1 `byte_interval_partial_decoder.rs:55`, when
/// the entry's size is shorter than the inner chunk's codecs expect and its
/// offset is near `u64::MAX`). A shard (chunk 0 of an array whose only
/// array -> bytes codec is `sharding_indexed`, index `bytes` + optional
/// `crc32c`) is fed only if every entry is "missing" (both `u64::MAX`) or
/// ends at 2^63 or below (far above any shard, and reads inside a chunk of the
/// harness's size cannot overflow from there); other sharding layouts
/// (nested, other index codecs) are not fed at all.
pub fn shard_index_is_sane(metadata: &Value, chunk: &[u8]) -> bool {
    let text = metadata.to_string();
    let count = text.matches("\"sharding_indexed\"").count();
    if count == 0 {
        return true;
    }
    let codecs = metadata["codecs"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let [sharding] = codecs else {
        return false;
    };
    let config = &sharding["configuration"];
    if count != 1 || sharding["name"] != "sharding_indexed" {
        return false;
    }
    let (Some(outer), Some(inner)) = (
        metadata["chunk_grid"]["configuration"]["chunk_shape"].as_array(),
        config["chunk_shape"].as_array(),
    ) else {
        return false;
    };
    let mut n: u64 = 1;
    for (o, i) in outer.iter().zip(inner) {
        let (Some(o), Some(i)) = (o.as_u64(), i.as_u64()) else {
            return false;
        };
        if i == 0 {
            return false;
        }
        n = n.saturating_mul(o.div_ceil(i));
    }
    let index_codecs = config["index_codecs"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let (big, crc) = match index_codecs {
        [b] if b["name"] == "bytes" => (b["configuration"]["endian"] == "big", false),
        [b, c] if b["name"] == "bytes" && c["name"] == "crc32c" => {
            (b["configuration"]["endian"] == "big", true)
        }
        _ => return false,
    };
    let Some(len) = n.checked_mul(16).and_then(|l| usize::try_from(l).ok()) else {
        return false;
    };
    let total = len + if crc { 4 } else { 0 };
    if chunk.len() < total {
        // Too short for its index: zarrs refuses it before reading entries.
        return true;
    }
    let index = if config["index_location"] == "start" {
        &chunk[..len]
    } else {
        &chunk[chunk.len() - total..chunk.len() - total + len]
    };
    index.chunks_exact(16).all(|entry| {
        let read = |b: &[u8]| {
            let b: [u8; 8] = b.try_into().unwrap();
            if big {
                u64::from_be_bytes(b)
            } else {
                u64::from_le_bytes(b)
            }
        };
        let (offset, size) = (read(&entry[..8]), read(&entry[8..]));
        (offset == u64::MAX && size == u64::MAX)
            || offset.checked_add(size).is_some_and(|end| end <= 1 << 63)
    })
}

/// A memory store whose byte ranges are checked: zarrs' `MemoryStore`
/// (0.23.14) underflows on a suffix range longer than the value and on
/// ranges whose end overflows, when a shard is shorter than its index or its
/// index holds huge offsets. ZARRS-AVOID(memory-store-ranges): the harness
/// reads through this wrapper, which returns the error `FilesystemStore`
/// returns.
pub struct CheckedStore(pub Arc<MemoryStore>);

impl ReadableStorageTraits for CheckedStore {
    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        let Some(value) = self.0.get(key)? else {
            return Ok(None);
        };
        let len = value.len() as u64;
        Ok(Some(Box::new(byte_ranges.map(move |range| {
            let (start, end) = match range {
                ByteRange::FromStart(offset, None) => (Some(offset), Some(len)),
                ByteRange::FromStart(offset, Some(n)) => (Some(offset), offset.checked_add(n)),
                ByteRange::Suffix(n) => (len.checked_sub(n), Some(len)),
            };
            match (start, end) {
                (Some(start), Some(end)) if start <= end && end <= len => {
                    Ok(value.slice(start as usize..end as usize))
                }
                _ => Err(InvalidByteRangeError::new(range, len).into()),
            }
        }))))
    }

    fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        self.0.size_key(key)
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

// --- round trip ---------------------------------------------------------------

/// Input: bytes for a generated array of this crate's codecs (lossless
/// `packbits`, i.e. without bit ranges), in or out of `sharding_indexed`,
/// and its values.
///
/// Property: writing then reading the whole array gives the values back
/// (lossless chains), the specification's result element by element
/// (`scale_offset` / `cast_value`, see `model`), or an error when writing;
/// what was written always reads back.
pub fn round_trip(data: &[u8]) {
    setup();
    let mut u = Unstructured::new(data);
    let Ok(case) = RoundTripCase::generate(&mut u) else {
        return;
    };
    case.run();
}

struct RoundTripCase {
    dt: Dt,
    shape: Vec<u64>,
    /// The innermost chunk shape (inside the shard when sharded).
    inner: Vec<u64>,
    metadata: Value,
    chain: Chain,
    values: Elements,
}

impl RoundTripCase {
    fn generate(u: &mut Unstructured) -> arbitrary::Result<Self> {
        let dt = *u.choose(&input::DATA_TYPES)?;
        let shape = input::shape(u, 256)?;
        let chunk = input::chunk_shape(u, &shape)?;
        let sharded = u.arbitrary::<bool>()?;
        let inner = if sharded {
            input::inner_shape(u, &chunk)?
        } else {
            chunk.clone()
        };
        let chain_codecs = input::chain(u, dt, inner.len(), false)?;
        let chain = chain_model(dt, &chain_codecs);
        let codecs = if sharded {
            vec![input::sharding(u, &inner, chain_codecs)?]
        } else {
            chain_codecs
        };
        let n = shape.iter().product::<u64>() as usize;
        let values = input::elements(u, dt, n)?;
        Ok(Self {
            metadata: input::array_metadata(&shape, &chunk, dt, &codecs),
            dt,
            shape,
            inner,
            chain,
            values,
        })
    }

    fn run(self) {
        let what = self.metadata.to_string();
        let metadata: ArrayMetadataV3 = serde_json::from_value(self.metadata.clone())
            .unwrap_or_else(|e| panic!("generated metadata {what}: {e}"));
        let store = Arc::new(MemoryStore::new());
        let array = match Array::new_with_metadata(store.clone(), "/", ArrayMetadata::V3(metadata))
        {
            Ok(array) => array,
            // Configurations the crate refuses when creating the codec
            // (e.g. `scale` or `offset` not representable in the type).
            Err(_) => return,
        };
        // The crate's own check of a codec chain against the data type and
        // fill value (zarrs creates arrays without it) refuses an `offset`
        // or `scale` outside the data type and a fill value that the specs
        // cannot encode. An array it accepts must round-trip (below).
        let valid = zarrs_extension_codecs::validate_codecs(&array);
        let parameters_valid = model::parameters_valid(self.dt, &self.chain);
        if self.numeric() {
            if self.fill_value_outcome().1.is_err() {
                assert!(
                    valid.is_err(),
                    "{what}: validate_codecs accepts a fill value the chain cannot encode"
                );
            }
            assert!(
                parameters_valid || valid.is_err(),
                "{what}: validate_codecs accepts an offset or scale outside the data type"
            );
        }
        let all = ArraySubset::new_with_shape(self.shape.clone());
        let written = match &self.values {
            Elements::Fixed(bytes) => {
                array.store_array_subset(&all, ArrayBytes::new_flen(bytes.clone()))
            }
            Elements::Strings(strings) => array.store_array_subset(&all, strings.clone()),
        };
        if valid.is_err() {
            // An array the crate refuses: what was written need not read
            // back (the read checks the fill value too), but writing fails
            // only where the model says so, and nothing panics.
            if let (Err(e), true) = (&written, parameters_valid) {
                self.check_write_error(e);
            }
            let _ = array.retrieve_array_subset::<ArrayBytes<'static>>(&all);
            return;
        }
        // Everything written must be readable by both paths, unless the
        // model says an element does not survive: a lossy cast may encode a
        // value to one that does not decode (uint64 18446744073709551615 ->
        // float64 2^64, outside uint64), which the spec makes an error.
        let read = |what: &str| -> Option<ArrayBytes<'static>> {
            match array.retrieve_array_subset::<ArrayBytes<'static>>(&all) {
                Ok(read) => Some(read),
                Err(e) => {
                    assert!(
                        self.some_element_fails(),
                        "{what}: reading back what was written fails: {e}"
                    );
                    None
                }
            }
        };
        match (written, &self.values) {
            (Err(e), _) => self.check_write_error(&e),
            (Ok(()), Elements::Strings(strings)) => {
                match array.retrieve_array_subset::<Vec<String>>(&all) {
                    Ok(read) => assert_eq!(&read, strings, "{what}"),
                    // ZARRS-AVOID(transpose-cache): zarrs 0.23.14 reads an
                    // edge chunk in part through a cache built with the
                    // shape before `transpose` when the array -> bytes codec
                    // does not decode partially (`KNOWN_ZARRS_CACHE_BUG` in
                    // tests/local/core_fixtures.rs), whichever `transpose` is used.
                    Err(e)
                        if what.contains("\"transpose\"")
                            && e.to_string().contains("out-of-bounds") => {}
                    Err(e) => panic!("{what}: reading back fails: {e}"),
                }
            }
            (Ok(()), Elements::Fixed(input)) => {
                let Some(read) = read(&what) else {
                    return;
                };
                let read = read.into_fixed().unwrap().into_owned();
                self.check_values(input, &read, &what);
                // Partial reads inside the chunks agree with the whole.
                let window: Vec<_> = self.shape.iter().map(|&d| d / 3..d - d / 3).collect();
                let window = ArraySubset::new_with_ranges(&window);
                let part = array
                    .retrieve_array_subset::<ArrayBytes<'static>>(&window)
                    .unwrap_or_else(|e| panic!("{what}: window read fails: {e}"));
                let expected = ArrayBytes::new_flen(read)
                    .extract_array_subset(&window, &self.shape, array.data_type())
                    .unwrap()
                    .into_owned();
                assert_eq!(part, expected, "{what}: window differs");
            }
        }
    }

    fn numeric(&self) -> bool {
        matches!(self.dt.kind, Kind::Int { .. } | Kind::Float { .. })
    }

    /// Writing failed: only allowed where the model says an element (or the
    /// fill value, which zarrs encodes for partial chunks) cannot be encoded.
    fn check_write_error(&self, error: &zarrs::array::ArrayError) {
        let Elements::Fixed(input) = &self.values else {
            panic!("{}: writing strings fails: {error}", self.metadata);
        };
        let lossless = self.chain.scale_offset.is_none() && self.chain.cast.is_none();
        assert!(
            !lossless,
            "{}: a lossless chain refuses valid values: {error}",
            self.metadata
        );
        if !self.numeric() {
            return;
        }
        let fill_survives = self.fill_value_survives();
        let elements_ok = self.outcomes(input).all(|o| o.is_ok_and(|v| v.is_some()));
        assert!(
            !(fill_survives && elements_ok),
            "{}: writing fails although every element and the fill value encode: {error}",
            self.metadata
        );
    }

    /// For each element (C order), whether every element of its innermost
    /// chunk is the fill value (all bytes zero): zarrs writes nothing for
    /// such a chunk (nor, sharded, for such an inner chunk).
    fn in_all_fill_chunk(&self, input: &[u8]) -> Vec<bool> {
        let size = self.dt.size;
        let chunk_of = |mut i: usize| -> Vec<u64> {
            let mut chunk = vec![0; self.shape.len()];
            for d in (0..self.shape.len()).rev() {
                let extent = self.shape[d] as usize;
                chunk[d] = (i % extent) as u64 / self.inner[d];
                i /= extent;
            }
            chunk
        };
        let written: std::collections::HashSet<Vec<u64>> = input
            .chunks_exact(size)
            .enumerate()
            .filter(|(_, e)| e.iter().any(|&b| b != 0))
            .map(|(i, _)| chunk_of(i))
            .collect();
        (0..input.len() / size)
            .map(|i| !written.contains(&chunk_of(i)))
            .collect()
    }

    /// Whether the model says some element cannot be encoded or decoded.
    fn some_element_fails(&self) -> bool {
        let Elements::Fixed(input) = &self.values else {
            return false;
        };
        self.numeric() && self.outcomes(input).any(|o| o.is_err())
    }

    /// The model's round trip of each element of `input`.
    fn outcomes<'a>(&'a self, input: &'a [u8]) -> impl Iterator<Item = model::Outcome> + 'a {
        input
            .chunks_exact(self.dt.size)
            .map(|e| model::round_trip(model::read(self.dt, e), self.dt, &self.chain))
    }

    /// The fill value (0) and the model's round trip of it.
    fn fill_value_outcome(&self) -> (V, model::Outcome) {
        let zero = model::read(self.dt, &vec![0; self.dt.size]);
        (zero, model::round_trip(zero, self.dt, &self.chain))
    }

    /// Whether the model encodes the fill value and decodes it back.
    fn fill_value_survives(&self) -> bool {
        let (zero, outcome) = self.fill_value_outcome();
        matches!(outcome, Ok(Some(v)) if model::same(v, zero))
    }

    fn check_values(&self, input: &[u8], read: &[u8], what: &str) {
        assert_eq!(input.len(), read.len(), "{what}");
        let lossless = self.chain.scale_offset.is_none() && self.chain.cast.is_none();
        if lossless || !self.numeric() {
            assert_eq!(read, input, "{what}: lossless chain changed values");
            return;
        }
        let size = self.dt.size;
        let all_fill = self.in_all_fill_chunk(input);
        for (i, (x, y)) in input
            .chunks_exact(size)
            .zip(read.chunks_exact(size))
            .enumerate()
        {
            let (x, y) = (model::read(self.dt, x), model::read(self.dt, y));
            // An all-fill chunk is not written (zarrs skips it, and no codec
            // runs), so its elements may read back as themselves, even where
            // the chain could not encode them.
            let skipped = all_fill[i] && model::same(y, x);
            match model::round_trip(x, self.dt, &self.chain) {
                Ok(Some(expected)) => assert!(
                    model::same(y, expected) || skipped,
                    "{what}: element {i} = {x:?} read back as {y:?}, expected {expected:?}"
                ),
                Ok(None) => {}
                Err(()) => assert!(
                    skipped,
                    "{what}: element {i} = {x:?} should not have been encodable, read back {y:?}"
                ),
            }
        }
    }
}

/// The model of a generated chain (its `scale_offset` and `cast_value`).
fn chain_model(dt: Dt, codecs: &[Value]) -> Chain {
    let number = |config: &Value, key: &str, default: i64| -> V {
        let value = &config[key];
        match dt.kind {
            Kind::Float { .. } => V::F(value.as_f64().unwrap_or(default as f64)),
            _ => V::I(i128::from(value.as_i64().unwrap_or(default))),
        }
    };
    let mut chain = Chain {
        scale_offset: None,
        cast: None,
    };
    for codec in codecs {
        let config = &codec["configuration"];
        match codec["name"].as_str() {
            Some("scale_offset") => {
                chain.scale_offset =
                    Some((number(config, "offset", 0), number(config, "scale", 1)));
            }
            Some("cast_value") => {
                let target = input::data_type(config["data_type"].as_str().unwrap()).unwrap();
                let rounding = config["rounding"]
                    .as_str()
                    .unwrap_or("nearest-even")
                    .to_string();
                let oor = config["out_of_range"].as_str().map(str::to_string);
                chain.cast = Some((target, rounding, oor));
            }
            _ => {}
        }
    }
    chain
}

// --- differential -------------------------------------------------------------

/// Input: bytes choosing one of `bytes`, `packbits`, `transpose`,
/// `zarrs.vlen`, a configuration both this crate and zarrs' built-in accept,
/// a data type, a shape, valid values and arbitrary encoded bytes.
///
/// Property: both encode the values to the same bytes and decode each
/// other's output to the values; on the arbitrary bytes, where both decode,
/// they decode to the same values. Outside the documented departures (see
/// README): sub-byte types and `bool` in `bytes` (the built-in keeps upper
/// bits), `packbits` partial decoding (not exercised here: whole chunks
/// only), `transpose` `"C"` / `"F"` (only permutations are generated), and
/// `zarrs.vlen` on corrupt chunks (the built-in can panic, so it decodes
/// only chunks this crate accepted, ZARRS-AVOID(builtin-vlen)).
pub fn differential(data: &[u8]) {
    setup();
    let mut u = Unstructured::new(data);
    let _ = differential_case(&mut u);
}

fn differential_case(u: &mut Unstructured) -> arbitrary::Result<()> {
    let which = u.int_in_range(0..=4u8)?;
    let fixed: Vec<Dt> = input::DATA_TYPES
        .into_iter()
        .filter(|d| d.kind != Kind::Str)
        .collect();
    let (dt, codec) = match which {
        0 => {
            // Byte-aligned types: the built-in keeps upper bits of sub-byte
            // types and any `bool` byte (documented departures).
            let aligned: Vec<Dt> = fixed
                .iter()
                .copied()
                .filter(|d| {
                    !matches!(d.kind, Kind::Bool | Kind::Int { bits: 2 | 4, .. })
                        && d.name != "float4_e2m1fn"
                })
                .collect();
            let dt = *u.choose(&aligned)?;
            (dt, input::bytes_codec(u, dt)?)
        }
        1 => {
            let dt = *u.choose(&fixed)?;
            let Value::Object(codec) = input::array_to_bytes(u, dt, true)? else {
                unreachable!()
            };
            if codec["name"] != "packbits" || packbits_departure(dt, &codec["configuration"]) {
                return Ok(());
            }
            (dt, Value::Object(codec))
        }
        2 => (*u.choose(&fixed)?, Value::Null),
        3 => (input::data_type("string").unwrap(), input::vlen_codec(u)?),
        // The `vlen-utf8` / `vlen-bytes` overrides (over strings: the
        // built-ins take any variable-length type).
        _ => {
            let name = if u.arbitrary()? {
                "vlen-utf8"
            } else {
                "vlen-bytes"
            };
            (input::data_type("string").unwrap(), json!({ "name": name }))
        }
    };
    let shape = input::shape(u, 64)?;
    let codec = if which == 2 {
        let order = input::permutation(u, shape.len())?;
        json!({ "name": "transpose", "configuration": { "order": order } })
    } else {
        codec
    };
    let n = shape.iter().product::<u64>() as usize;
    let values = input::elements(u, dt, n)?;
    let arbitrary_bytes = u.bytes(u.len())?.to_vec();
    compare_with_builtin(dt, &shape, &codec, &values, &arbitrary_bytes);
    Ok(())
}

/// Whether a `packbits` configuration is in one of the built-in's documented
/// departures (`tests/packbits_equivalence.rs`): whole byte-multiple
/// components with a padding encoding (the built-in omits the padding byte),
/// or a signed type whose bit range ends below its top byte (the built-in
/// does not sign-extend).
fn packbits_departure(dt: Dt, config: &Value) -> bool {
    let bits = input::packbits_bits(dt);
    let first = config["first_bit"].as_u64().unwrap_or(0);
    let last = config["last_bit"].as_u64().unwrap_or(u64::from(bits) - 1);
    let whole = first == 0 && last == u64::from(bits) - 1;
    let padding = config["padding_encoding"].as_str().unwrap_or("none") != "none";
    let component_bytes = u64::from(bits).div_ceil(8);
    let signed = matches!(dt.kind, Kind::Int { signed: true, .. });
    (whole && bits.is_multiple_of(8) && padding) || (signed && last / 8 != component_bytes - 1)
}

/// The built-in codec of the same name, created from the same metadata.
fn builtin(metadata: &MetadataV3) -> Result<Codec, String> {
    use zarrs::array::codec::{
        BytesCodec, PackBitsCodec, TransposeCodec, VlenBytesCodec, VlenCodec, VlenUtf8Codec,
    };
    match metadata.name() {
        "bytes" => BytesCodec::create(metadata),
        "packbits" => PackBitsCodec::create(metadata),
        "transpose" => TransposeCodec::create(metadata),
        "vlen-utf8" => VlenUtf8Codec::create(metadata),
        "vlen-bytes" => VlenBytesCodec::create(metadata),
        _ => VlenCodec::create(metadata),
    }
    .map_err(|e| e.to_string())
}

/// Encode or decode with an array -> array codec followed by `bytes`, or an
/// array -> bytes codec, as raw bytes (fixed types) or strings.
enum Coded {
    Bytes(Vec<u8>),
    Array(ArrayBytes<'static>),
}

fn encode(
    codec: &Codec,
    bytes: ArrayBytes<'_>,
    shape: &[NonZeroU64],
    data_type: &DataType,
    fill: &FillValue,
) -> Result<Coded, String> {
    let options = CodecOptions::default();
    match codec {
        Codec::ArrayToArray(c) => c
            .encode(bytes, shape, data_type, fill, &options)
            .map(|b| Coded::Array(b.into_owned())),
        Codec::ArrayToBytes(c) => c
            .encode(bytes, shape, data_type, fill, &options)
            .map(|b| Coded::Bytes(b.into_owned())),
        Codec::BytesToBytes(_) => unreachable!(),
    }
    .map_err(|e| e.to_string())
}

fn decode_with(
    codec: &Codec,
    encoded: &Coded,
    shape: &[NonZeroU64],
    data_type: &DataType,
    fill: &FillValue,
) -> Result<ArrayBytes<'static>, String> {
    let options = CodecOptions::default();
    match (codec, encoded) {
        (Codec::ArrayToArray(c), Coded::Array(bytes)) => c
            .decode(bytes.clone(), shape, data_type, fill, &options)
            .map(ArrayBytes::into_owned),
        (Codec::ArrayToBytes(c), Coded::Bytes(bytes)) => c
            .decode(
                std::borrow::Cow::Borrowed(bytes),
                shape,
                data_type,
                fill,
                &options,
            )
            .map(ArrayBytes::into_owned),
        _ => unreachable!(),
    }
    .map_err(|e| e.to_string())
}

fn compare_with_builtin(
    dt: Dt,
    shape: &[u64],
    codec: &Value,
    values: &Elements,
    arbitrary_bytes: &[u8],
) {
    let Ok(metadata) = serde_json::from_value::<MetadataV3>(codec.clone()) else {
        return;
    };
    let what = format!("{codec} on {} {shape:?}", dt.name);
    let (Ok(ours), Ok(theirs)) = (
        Codec::from_metadata(&metadata).map_err(|e| e.to_string()),
        builtin(&metadata),
    ) else {
        return;
    };
    let Ok(data_type) = data_type_of(dt) else {
        return;
    };
    let fill = fill_value(&data_type, dt);
    let shape: Vec<NonZeroU64> = shape.iter().map(|&d| NonZeroU64::new(d).unwrap()).collect();
    let input = match values {
        Elements::Fixed(bytes) => ArrayBytes::new_flen(bytes.clone()),
        Elements::Strings(strings) => {
            let mut bytes = Vec::new();
            let mut offsets = vec![0usize];
            for s in strings {
                bytes.extend_from_slice(s.as_bytes());
                offsets.push(bytes.len());
            }
            ArrayBytes::new_vlen(bytes, offsets.try_into().unwrap()).unwrap()
        }
    };
    let by_ours = encode(&ours, input.clone(), &shape, &data_type, &fill);
    let by_theirs = encode(&theirs, input.clone(), &shape, &data_type, &fill);
    let (by_ours, by_theirs) = match (by_ours, by_theirs) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(_), Err(_)) => return,
        (a, b) => panic!(
            "{what}: one encodes, one refuses: ours {:?}, built-in {:?}",
            a.err(),
            b.err()
        ),
    };
    match (&by_ours, &by_theirs) {
        (Coded::Bytes(a), Coded::Bytes(b)) => assert_eq!(a, b, "{what}: encodings differ"),
        (Coded::Array(a), Coded::Array(b)) => assert_eq!(a, b, "{what}: encodings differ"),
        _ => unreachable!(),
    }
    // `packbits` bit ranges drop bits: the reference is then this crate's
    // decoding of its own encoding (which the spec rule fixes, see
    // tests/packbits_equivalence.rs); otherwise the input itself.
    let lossy = codec["configuration"].get("first_bit").is_some();
    let reference = if lossy {
        decode_with(&ours, &by_ours, &shape, &data_type, &fill)
            .unwrap_or_else(|e| panic!("{what}: ours cannot decode its own encoding: {e}"))
    } else {
        input
    };
    for (name, codec, encoded) in [("ours", &ours, &by_theirs), ("built-in", &theirs, &by_ours)] {
        let decoded = decode_with(codec, encoded, &shape, &data_type, &fill)
            .unwrap_or_else(|e| panic!("{what}: {name} cannot decode the other's encoding: {e}"));
        assert_eq!(
            decoded, reference,
            "{what}: {name} decodes the other's encoding differently"
        );
    }
    // Arbitrary encoded bytes: where both decode, the same values.
    let arbitrary = match by_ours {
        Coded::Bytes(_) => Coded::Bytes(arbitrary_bytes.to_vec()),
        Coded::Array(_) => {
            let size = dt.size;
            let n = shape.iter().map(|d| d.get() as usize).product::<usize>() * size;
            if arbitrary_bytes.len() < n
                || dt.kind == Kind::Bool
                || matches!(dt.kind, Kind::Int { bits: 2 | 4, .. })
            {
                return;
            }
            Coded::Array(ArrayBytes::new_flen(arbitrary_bytes[..n].to_vec()))
        }
    };
    let Ok(decoded_ours) = decode_with(&ours, &arbitrary, &shape, &data_type, &fill) else {
        return;
    };
    // ZARRS-AVOID(builtin-vlen): only chunks this crate accepted reach the
    // built-in.
    if let Ok(decoded_theirs) = decode_with(&theirs, &arbitrary, &shape, &data_type, &fill) {
        assert_eq!(
            decoded_ours, decoded_theirs,
            "{what}: decodings of arbitrary bytes differ"
        );
    }
}

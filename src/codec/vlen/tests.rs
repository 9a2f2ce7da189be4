//! `zarrs.vlen` codec tests: hand-worked layouts, corrupt chunks, partial
//! decoding. Equivalence with zarrs' built-in is in `tests/vlen_equivalence.rs`.

use std::num::NonZeroU64;
use std::sync::{Arc, Mutex};

use serde_json::json;
use zarrs::array::codec::api::{
    ArrayBytes, ArrayBytesOffsets, ArrayPartialDecoderTraits, ArrayToBytesCodecTraits,
    BytesPartialDecoderTraits, CodecError, CodecMetadataOptions, CodecOptions, CodecTraits,
};
use zarrs::array::{ArrayIndices, ArraySubset, DataType, FillValue, data_type};
use zarrs::metadata::Configuration;
use zarrs::storage::StorageError;
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator, extract_byte_ranges};

use super::{VlenCodec, VlenCodecConfiguration};
use crate::test_support;

const BYTES_LE: &str = r#"{"name": "bytes", "configuration": {"endian": "little"}}"#;
const BYTES_BE: &str = r#"{"name": "bytes", "configuration": {"endian": "big"}}"#;
const BYTES: &str = r#"{"name": "bytes"}"#;
const CRC: &str = r#"{"name": "crc32c"}"#;

fn configuration(json: serde_json::Value) -> Configuration {
    serde_json::from_value(json).unwrap()
}

fn codec_from(json: serde_json::Value) -> Result<VlenCodec, String> {
    VlenCodecConfiguration::parse(&configuration(json))
        .and_then(|c| VlenCodec::new_with_configuration(&c))
        .map_err(|e| e.to_string())
}

fn codec(index: &str, data: &str, index_data_type: &str, location: Option<&str>) -> VlenCodec {
    let mut config = json!({
        "index_codecs": serde_json::from_str::<serde_json::Value>(&format!("[{index}]")).unwrap(),
        "data_codecs": serde_json::from_str::<serde_json::Value>(&format!("[{data}]")).unwrap(),
        "index_data_type": index_data_type,
    });
    if let Some(location) = location {
        config["index_location"] = json!(location);
    }
    codec_from(config).unwrap()
}

fn strings(values: &[&str]) -> ArrayBytes<'static> {
    let mut offsets = vec![0];
    let mut data = vec![];
    for v in values {
        data.extend_from_slice(v.as_bytes());
        offsets.push(data.len());
    }
    ArrayBytes::new_vlen(data, ArrayBytesOffsets::new(offsets).unwrap()).unwrap()
}

fn shape(dims: &[u64]) -> Vec<NonZeroU64> {
    dims.iter().map(|&d| NonZeroU64::new(d).unwrap()).collect()
}

fn encode(codec: &VlenCodec, values: &[&str]) -> Vec<u8> {
    codec
        .encode(
            strings(values),
            &shape(&[values.len() as u64]),
            &data_type::string(),
            &FillValue::from(""),
            &CodecOptions::default(),
        )
        .unwrap()
        .into_owned()
}

fn decode(codec: &VlenCodec, chunk: &[u8], n: u64) -> Result<ArrayBytes<'static>, CodecError> {
    codec
        .decode(
            chunk.to_vec().into(),
            &shape(&[n]),
            &data_type::string(),
            &FillValue::from(""),
            &CodecOptions::default(),
        )
        .map(ArrayBytes::into_owned)
}

/// The layout worked out by hand from the spec.
#[test]
fn layout_by_hand() {
    let values = ["ab", "", "cde"];
    // uint32, start: 4 offsets (0, 2, 2, 5) x 4 bytes = 16 bytes of index,
    // whose length 16 is the first 8 bytes (LE), then the data "abcde".
    let start = codec(BYTES_LE, BYTES, "uint32", Some("start"));
    let mut expected = vec![16, 0, 0, 0, 0, 0, 0, 0];
    expected.extend([0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0]);
    expected.extend(b"abcde");
    assert_eq!(encode(&start, &values), expected);
    // The older configuration (no index_location) is the same layout.
    let old = codec(BYTES_LE, BYTES, "uint32", None);
    assert_eq!(encode(&old, &values), expected);
    // uint64 big-endian offsets, end: data, 4 x 8 = 32 bytes of index, then
    // the length 32 (LE).
    let end = codec(BYTES_BE, BYTES, "uint64", Some("end"));
    let mut expected = b"abcde".to_vec();
    for offset in [0u64, 2, 2, 5] {
        expected.extend(offset.to_be_bytes());
    }
    expected.extend(32u64.to_le_bytes());
    assert_eq!(encode(&end, &values), expected);
    for (codec, chunk) in [(&start, encode(&start, &values)), (&end, expected)] {
        assert_eq!(decode(codec, &chunk, 3).unwrap(), strings(&values));
    }
}

/// A chunk of two empty elements has no data section: the 8-byte length
/// field and 3 offsets x 4 bytes.
#[test]
fn all_empty_elements() {
    for data in [BYTES, &format!("{BYTES}, {CRC}")] {
        let codec = codec(BYTES_LE, data, "uint32", Some("end"));
        let chunk = encode(&codec, &["", ""]);
        assert_eq!(chunk.len(), 8 + 3 * 4);
        assert_eq!(decode(&codec, &chunk, 2).unwrap(), strings(&["", ""]));
        // Data bytes that the offsets do not account for are an error.
        let mut extra = vec![1];
        extra.extend(&chunk);
        assert!(decode(&codec, &extra, 2).is_err());
    }
}

/// Unused bytes before the first element are not encoded.
#[test]
fn input_with_leading_unused_bytes() {
    // Unused bytes before and after the elements "a", "bc", owned (whose
    // buffer is reused) and borrowed.
    let buffer = b"xxabcyy".to_vec();
    let offsets = [2usize, 3, 5];
    let crc_data = format!("{BYTES}, {CRC}");
    for data in [BYTES, &crc_data] {
        for location in ["start", "end"] {
            let codec = codec(BYTES_LE, data, "uint32", Some(location));
            let expected = encode(&codec, &["a", "bc"]);
            // With room to spare, the buffer takes the index in place.
            let mut roomy = Vec::with_capacity(100);
            roomy.extend_from_slice(&buffer);
            let inputs = [
                ArrayBytes::new_vlen(
                    buffer.clone(),
                    ArrayBytesOffsets::new(offsets.to_vec()).unwrap(),
                ),
                ArrayBytes::new_vlen(roomy, ArrayBytesOffsets::new(offsets.to_vec()).unwrap()),
                ArrayBytes::new_vlen(&buffer[..], ArrayBytesOffsets::new(&offsets[..]).unwrap()),
            ];
            for input in inputs {
                let chunk = codec
                    .encode(
                        input.unwrap(),
                        &shape(&[2]),
                        &data_type::string(),
                        &FillValue::from(""),
                        &CodecOptions::default(),
                    )
                    .unwrap();
                assert_eq!(&*chunk, &expected[..], "{data} {location}");
            }
        }
    }
    // By hand, start: 12 | 0, 1, 3 | "abc".
    let start = codec(BYTES_LE, BYTES, "uint32", Some("start"));
    let mut by_hand = 12u64.to_le_bytes().to_vec();
    [0u32, 1, 3]
        .iter()
        .for_each(|o| by_hand.extend(o.to_le_bytes()));
    by_hand.extend(b"abc");
    assert_eq!(encode(&start, &["a", "bc"]), by_hand);
}

#[test]
fn every_configuration_round_trips() {
    let values = ["", "α", "beta", "", "γγγγγγγγγγ", "z"];
    let crc_index = format!("{BYTES_LE}, {CRC}");
    let crc_data = format!("{BYTES}, {CRC}");
    let scaled_index =
        format!(r#"{{"name": "scale_offset", "configuration": {{"scale": 2}}}}, {BYTES_LE}"#);
    for index in [BYTES_LE, BYTES_BE, &crc_index, &scaled_index] {
        for data in [BYTES, &crc_data] {
            for index_data_type in ["uint32", "uint64"] {
                for location in [None, Some("start"), Some("end")] {
                    let codec = codec(index, data, index_data_type, location);
                    let chunk = encode(&codec, &values);
                    let decoded = decode(&codec, &chunk, values.len() as u64).unwrap();
                    assert_eq!(decoded, strings(&values), "{index} {data} {location:?}");
                }
            }
        }
    }
}

/// `this crate's` scale_offset in the index chain really is applied: the
/// offsets 0, 1, 3 are stored doubled, as 0, 2, 6.
#[test]
fn index_chain_is_applied() {
    let scaled =
        format!(r#"{{"name": "scale_offset", "configuration": {{"scale": 2}}}}, {BYTES_LE}"#);
    let codec = codec(&scaled, BYTES, "uint32", Some("start"));
    let chunk = encode(&codec, &["a", "bc"]);
    assert_eq!(&chunk[8..20], &[0, 0, 0, 0, 2, 0, 0, 0, 6, 0, 0, 0]);
}

#[test]
fn configuration_written_in_the_current_form() {
    let codec = codec(BYTES_LE, BYTES, "uint64", None);
    let written = codec
        .configuration_v3(&CodecMetadataOptions::default())
        .unwrap();
    let written = serde_json::to_value(written).unwrap();
    assert_eq!(written["index_location"], "start");
    assert_eq!(written["index_data_type"], "uint64");
    assert_eq!(written["index_codecs"][0]["name"], "bytes");
    assert_eq!(
        written["index_codecs"][0]["configuration"]["endian"],
        "little"
    );
}

#[test]
fn creation_errors_name_field_and_value() {
    let cases = [
        // The index is multi-byte: `bytes` needs `endian`.
        (
            json!({"index_codecs": [{"name": "bytes"}], "data_codecs": [{"name": "bytes"}],
                   "index_data_type": "uint32"}),
            "zarrs.vlen: index_codecs = [{\"name\":\"bytes\"}]: endianness must be specified",
        ),
        (
            json!({"index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                   "data_codecs": [{"name": "no_such_codec"}], "index_data_type": "uint32"}),
            "zarrs.vlen: data_codecs = [\"no_such_codec\"]: codec no_such_codec is not supported",
        ),
        (
            json!({"index_codecs": [{"name": "crc32c"}], "data_codecs": [{"name": "bytes"}],
                   "index_data_type": "uint32"}),
            "zarrs.vlen: index_codecs = [\"crc32c\"]: missing array to bytes codec",
        ),
        (
            json!({"index_codecs": [], "data_codecs": [{"name": "bytes"}],
                   "index_data_type": "uint32"}),
            "zarrs.vlen: index_codecs = []: missing array to bytes codec",
        ),
    ];
    for (json, expected) in cases {
        let err = codec_from(json.clone()).unwrap_err();
        assert!(err.contains(expected), "{json}: {err}");
    }
}

#[test]
fn fixed_size_and_optional_types_are_refused() {
    let codec = codec(BYTES_LE, BYTES, "uint32", None);
    let err = codec
        .encoded_representation(&shape(&[2]), &data_type::uint8(), &FillValue::from(0u8))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("zarrs.vlen: data type uint8"), "{err}");
    assert!(err.contains("has a fixed size (1 bytes)"), "{err}");
    let err = codec
        .decode(
            vec![0; 24].into(),
            &shape(&[2]),
            &data_type::float32(),
            &FillValue::from(0f32),
            &CodecOptions::default(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("fixed size"), "{err}");
    for data_type in [data_type::string(), data_type::bytes()] {
        codec
            .encoded_representation(&shape(&[2]), &data_type, &FillValue::from(""))
            .unwrap();
    }
    let optional: DataType = data_type::optional(data_type::string());
    assert!(
        codec
            .encoded_representation(&shape(&[2]), &optional, &FillValue::from(""))
            .is_err()
    );
}

/// Each corruption the spec rules out, built by hand on
/// `["ab", "", "cde"]` with uint32 offsets at the start.
#[test]
fn corrupt_offsets_are_errors() {
    let codec = codec(BYTES_LE, BYTES, "uint32", Some("start"));
    let chunk = |offsets: [u32; 4], data: &[u8]| {
        let mut chunk = 16u64.to_le_bytes().to_vec();
        offsets.iter().for_each(|o| chunk.extend(o.to_le_bytes()));
        chunk.extend(data);
        chunk
    };
    assert!(decode(&codec, &chunk([0, 2, 2, 5], b"abcde"), 3).is_ok());
    let cases = [
        (
            chunk([0, 3, 2, 5], b"abcde"),
            "offset 2 (2) is less than offset 1 (3)",
        ),
        (
            chunk([1, 2, 2, 5], b"abcde"),
            "offset 0 is 1, but the first offset must be 0",
        ),
        (
            chunk([0, 2, 2, 4], b"abcde"),
            "last offset is 4, but the data has 5 bytes",
        ),
        (
            chunk([0, 2, 2, 6], b"abcde"),
            "last offset is 6, but the data has 5 bytes",
        ),
        (
            chunk([0, 2, 9, 5], b"abcde"),
            "offset 3 (5) is less than offset 2 (9)",
        ),
        (chunk([0, u32::MAX, 2, 5], b"abcde"), "less than"),
        (
            {
                let mut c = chunk([0, 2, 2, 5], b"abcde");
                c[..8].copy_from_slice(&1000u64.to_le_bytes());
                c
            },
            "index length field is 1000, but only 21 bytes follow the field",
        ),
        (
            {
                let mut c = chunk([0, 2, 2, 5], b"abcde");
                c[..8].copy_from_slice(&u64::MAX.to_le_bytes());
                c
            },
            "index length field is 18446744073709551615",
        ),
        (
            {
                let mut c = chunk([0, 2, 2, 5], b"abcde");
                c[..8].copy_from_slice(&12u64.to_le_bytes());
                c
            },
            "decoded index has 12 bytes, expected 16",
        ),
        (vec![16, 0, 0], "fewer than the 8-byte index length field"),
    ];
    for (chunk, expected) in cases {
        let err = decode(&codec, &chunk, 3).unwrap_err().to_string();
        assert!(err.contains(expected), "{err}");
        assert!(err.starts_with("zarrs.vlen: "), "{err}");
    }
    // The wrong number of elements for the chunk shape.
    assert!(decode(&codec, &chunk([0, 2, 2, 5], b"abcde"), 4).is_err());
}

use crate::test_rng::SplitMix64 as Rng;

/// Random truncations and corruptions of valid chunks never panic.
/// Truncation is always an error, and so is any corruption when both chains
/// end in `crc32c`; without checksums a corrupt chunk may decode, but only to
/// consistent offsets.
#[test]
fn random_corruption_never_panics() {
    let values = ["", "a", "bc", "def", "", "ghij", "klmno", "p"];
    let crc_index = format!("{BYTES_LE}, {CRC}");
    let crc_data = format!("{BYTES}, {CRC}");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (index, data, checked) in [
        (BYTES_LE, BYTES, false),
        (BYTES_BE, BYTES, false),
        // Corrupt offsets reach the data chain as its decoded size.
        (BYTES_LE, crc_data.as_str(), false),
        (crc_index.as_str(), crc_data.as_str(), true),
    ] {
        for index_data_type in ["uint32", "uint64"] {
            for location in ["start", "end"] {
                let codec = codec(index, data, index_data_type, Some(location));
                let chunk = encode(&codec, &values);
                // Under Miri, every 7th length and 20 corruptions per layout.
                for len in (0..chunk.len()).step_by(test_support::size(1, 7)) {
                    assert!(
                        decode(&codec, &chunk[..len], 8).is_err(),
                        "truncated to {len}"
                    );
                    assert!(decode(&codec, &chunk[chunk.len() - len..], 8).is_err());
                }
                for _ in 0..test_support::size(2000, 20) {
                    let mut corrupt = chunk.clone();
                    for _ in 0..=rng.below(3) {
                        let at = rng.below(corrupt.len());
                        corrupt[at] ^= 1 << rng.below(8);
                    }
                    match decode(&codec, &corrupt, 8) {
                        Err(_) => {}
                        Ok(_) if corrupt == chunk => {}
                        Ok(_) if checked => panic!("undetected corruption {corrupt:?}"),
                        Ok(decoded) => {
                            let (data, offsets) = decoded.into_variable().unwrap().into_parts();
                            assert_eq!(offsets.first(), Some(&0));
                            assert_eq!(offsets.last(), data.len());
                            assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
                        }
                    }
                }
            }
        }
    }
}

/// A chunk held in memory that records the byte ranges read from it.
struct Recorder {
    chunk: Option<Vec<u8>>,
    reads: Mutex<Vec<ByteRange>>,
}

impl Recorder {
    fn new(chunk: Option<Vec<u8>>) -> Arc<Self> {
        Arc::new(Self {
            chunk,
            reads: Mutex::new(Vec::new()),
        })
    }

    fn bytes_read(&self) -> u64 {
        let len = self.chunk.as_ref().map_or(0, Vec::len) as u64;
        self.reads
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.length(len))
            .sum()
    }
}

impl BytesPartialDecoderTraits for Recorder {
    fn exists(&self) -> Result<bool, StorageError> {
        Ok(self.chunk.is_some())
    }

    fn size_held(&self) -> usize {
        0
    }

    fn partial_decode_many(
        &self,
        decoded_regions: ByteRangeIterator,
        _options: &CodecOptions,
    ) -> Result<Option<Vec<std::borrow::Cow<'_, [u8]>>>, CodecError> {
        let ranges: Vec<ByteRange> = decoded_regions.collect();
        self.reads.lock().unwrap().extend(ranges.iter().copied());
        let Some(chunk) = &self.chunk else {
            return Ok(None);
        };
        Ok(Some(
            extract_byte_ranges(chunk, ranges.into_iter())?
                .into_iter()
                .map(Into::into)
                .collect(),
        ))
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }
}

fn partial_decoder(
    codec: VlenCodec,
    recorder: &Arc<Recorder>,
    dims: &[u64],
) -> Arc<dyn ArrayPartialDecoderTraits> {
    Arc::new(codec)
        .partial_decoder(
            recorder.clone(),
            &shape(dims),
            &data_type::string(),
            &FillValue::from("fill"),
            &CodecOptions::default(),
        )
        .unwrap()
}

/// 4 x 5 chunk of strings `"rRcC"` with varying lengths.
fn grid() -> Vec<String> {
    (0..20)
        .map(|i| "x".repeat(i % 4) + &format!("{}{}", i / 5, i % 5))
        .collect()
}

fn expected(values: &[String], indices: impl Iterator<Item = usize>) -> ArrayBytes<'static> {
    let picked: Vec<&str> = indices.map(|i| values[i].as_str()).collect();
    strings(&picked)
}

#[test]
fn partial_decode_reads_only_the_needed_bytes() {
    let values = grid();
    let refs: Vec<&str> = values.iter().map(String::as_str).collect();
    let options = CodecOptions::default();
    let subset = ArraySubset::new_with_ranges(&[1..3, 2..4]);
    let wanted = [7, 8, 12, 13];
    for (index, index_len) in [
        (BYTES_LE, 21 * 4),
        (&format!("{BYTES_LE}, {CRC}"), 21 * 4 + 4),
    ] {
        let codec = codec(index, BYTES, "uint32", Some("start"));
        let chunk = encode(&codec, &refs);
        let recorder = Recorder::new(Some(chunk.clone()));
        let decoder = partial_decoder(codec, &recorder, &[4, 5]);
        assert!(decoder.supports_partial_decode());
        let decoded = decoder.partial_decode(&subset, &options).unwrap();
        assert_eq!(decoded, expected(&values, wanted.into_iter()));
        // The length field and the index (one read, since its size is
        // fixed), the last data byte (the probe), then the two rows of two
        // elements each.
        let element_bytes: usize = wanted.iter().map(|&i| values[i].len()).sum();
        assert_eq!(
            recorder.bytes_read(),
            (8 + index_len + 1 + element_bytes) as u64
        );
        assert!(recorder.bytes_read() < chunk.len() as u64);
        // The index is read once: a second request reads elements only.
        recorder.reads.lock().unwrap().clear();
        let points: Vec<ArrayIndices> = vec![vec![3, 4], vec![0, 0]];
        let decoded = decoder.partial_decode(&points, &options).unwrap();
        assert_eq!(decoded, expected(&values, [19, 0].into_iter()));
        assert_eq!(
            recorder.bytes_read(),
            (values[19].len() + values[0].len()) as u64
        );
    }
}

#[test]
fn partial_decode_of_whole_chunks() {
    let values = grid();
    let refs: Vec<&str> = values.iter().map(String::as_str).collect();
    let options = CodecOptions::default();
    let subset = ArraySubset::new_with_ranges(&[0..4, 1..2]);
    let wanted = [1, 6, 11, 16];
    let crc_data = format!("{BYTES}, {CRC}");
    // The index at the end, or a data chain other than `bytes`: whole reads.
    for (data, location) in [(BYTES, "end"), (crc_data.as_str(), "start")] {
        let codec = codec(BYTES_LE, data, "uint64", Some(location));
        let chunk = encode(&codec, &refs);
        let recorder = Recorder::new(Some(chunk.clone()));
        let decoder = partial_decoder(codec.clone(), &recorder, &[4, 5]);
        assert!(!decoder.supports_partial_decode());
        let decoded = decoder.partial_decode(&subset, &options).unwrap();
        assert_eq!(decoded, expected(&values, wanted.into_iter()));
        let all = ArraySubset::new_with_ranges(&[0..4, 0..5]);
        let decoded = decoder.partial_decode(&all, &options).unwrap();
        assert_eq!(decoded, strings(&refs));
        // A corrupt chunk is an error here too.
        let recorder = Recorder::new(Some(chunk[1..].to_vec()));
        let decoder = partial_decoder(codec, &recorder, &[4, 5]);
        assert!(decoder.partial_decode(&subset, &options).is_err());
    }
}

#[test]
fn partial_decode_of_missing_and_corrupt_chunks() {
    let options = CodecOptions::default();
    let subset = ArraySubset::new_with_ranges(&[0..1, 0..2]);
    for location in ["start", "end"] {
        let codec = codec(BYTES_LE, BYTES, "uint32", Some(location));
        let recorder = Recorder::new(None);
        let decoder = partial_decoder(codec.clone(), &recorder, &[4, 5]);
        let decoded = decoder.partial_decode(&subset, &options).unwrap();
        assert_eq!(decoded, strings(&["fill", "fill"]));
    }
    let values = grid();
    let refs: Vec<&str> = values.iter().map(String::as_str).collect();
    let codec = codec(BYTES_LE, BYTES, "uint32", Some("start"));
    let chunk = encode(&codec, &refs);
    let corrupt = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut chunk = chunk.clone();
        f(&mut chunk);
        let recorder = Recorder::new(Some(chunk));
        partial_decoder(codec.clone(), &recorder, &[4, 5])
            .partial_decode(&subset, &options)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    // A length field that disagrees with the fixed index size.
    let err = corrupt(&|c| c[..8].copy_from_slice(&u64::MAX.to_le_bytes()));
    assert!(
        err.contains("but the index codecs produce exactly 84 bytes"),
        "{err}"
    );
    // A decreasing offset (offset 1 := 0xff..).
    let err = corrupt(&|c| c[12..16].copy_from_slice(&u32::MAX.to_le_bytes()));
    assert!(err.contains("is less than offset 1"), "{err}");
    // Non-decreasing offsets far beyond the chunk: only the probe of the
    // last claimed byte is read, never an element range of that length.
    let recorder = Recorder::new(Some({
        let mut c = chunk.clone();
        let last = 8 + 20 * 4; // offset 20, the last of 21
        c[last..last + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        c
    }));
    let all = ArraySubset::new_with_ranges(&[0..4, 0..5]);
    assert!(
        partial_decoder(codec.clone(), &recorder, &[4, 5])
            .partial_decode(&all, &options)
            .is_err()
    );
    let reads = recorder.reads.lock().unwrap().clone();
    assert_eq!(
        reads.last(),
        Some(&ByteRange::FromStart(
            8 + 84 + u64::from(u32::MAX) - 1,
            Some(1)
        ))
    );
    assert!(
        reads.iter().all(|r| r.length(0) <= chunk.len() as u64),
        "{reads:?}"
    );
    // Truncated inside the index: the read past the end fails.
    assert!(!corrupt(&|c| c.truncate(50)).is_empty());
    // Truncated data: reading the last element fails (a partial read cannot
    // see a truncation after the elements it reads).
    let mut truncated = chunk.clone();
    truncated.pop();
    let recorder = Recorder::new(Some(truncated));
    let last = ArraySubset::new_with_ranges(&[3..4, 4..5]);
    assert!(
        partial_decoder(codec, &recorder, &[4, 5])
            .partial_decode(&last, &options)
            .is_err()
    );
}

/// The async partial decoder, over an in-memory chunk whose futures are
/// ready at once (polled with a no-op waker).
#[cfg(feature = "async")]
mod async_partial {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use zarrs::array::codec::api::{
        AsyncArrayPartialDecoderTraits, AsyncBytesPartialDecoderTraits,
    };

    use super::*;

    fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        let mut context = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
                return output;
            }
        }
    }

    #[async_trait::async_trait]
    impl AsyncBytesPartialDecoderTraits for Recorder {
        async fn exists(&self) -> Result<bool, StorageError> {
            BytesPartialDecoderTraits::exists(self)
        }

        fn size_held(&self) -> usize {
            0
        }

        async fn partial_decode_many<'a>(
            &'a self,
            decoded_regions: ByteRangeIterator<'a>,
            options: &CodecOptions,
        ) -> Result<Option<Vec<std::borrow::Cow<'a, [u8]>>>, CodecError> {
            BytesPartialDecoderTraits::partial_decode_many(self, decoded_regions, options)
        }

        fn supports_partial_decode(&self) -> bool {
            true
        }
    }

    #[test]
    fn async_partial_decode_matches_sync() {
        let values = grid();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let options = CodecOptions::default();
        let subset = ArraySubset::new_with_ranges(&[1..3, 2..4]);
        for location in ["start", "end"] {
            let codec = codec(BYTES_LE, BYTES, "uint32", Some(location));
            let recorder = Recorder::new(Some(encode(&codec, &refs)));
            let decoder: Arc<dyn AsyncArrayPartialDecoderTraits> =
                block_on(Arc::new(codec).async_partial_decoder(
                    recorder.clone(),
                    &shape(&[4, 5]),
                    &data_type::string(),
                    &FillValue::from("fill"),
                    &options,
                ))
                .unwrap();
            let decoded = block_on(decoder.partial_decode(&subset, &options)).unwrap();
            assert_eq!(decoded, expected(&values, [7, 8, 12, 13].into_iter()));
            let missing = Recorder::new(None);
            let decoder = block_on(
                Arc::new(super::codec(BYTES_LE, BYTES, "uint32", Some(location)))
                    .async_partial_decoder(
                        missing,
                        &shape(&[4, 5]),
                        &data_type::string(),
                        &FillValue::from("fill"),
                        &options,
                    ),
            )
            .unwrap();
            let decoded = block_on(decoder.partial_decode(&subset, &options)).unwrap();
            assert_eq!(decoded, strings(&["fill"; 4]));
        }
    }
}

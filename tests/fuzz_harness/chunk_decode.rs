//! `chunk_decode`: hostile chunk bytes through the read path's
//! `ChunkDecoder` (`src/read/chunk_decode.rs`), fused and not.
//!
//! Input: as the `decode` target (a mode byte, array metadata as JSON text
//! or generated, eight selector bytes, then chunk 0's bytes), where a
//! generated array also gets a bytes->bytes codec one time in two
//! (`crc32c`, `gzip` or `zstd`), so that the fused path meets truncated,
//! oversized and garbage input of each.
//!
//! Property: nothing panics; two windows of chunk 0 (drawn from the
//! selector) decoded into a larger output give what zarrs'
//! `retrieve_chunk_subset` gives whenever both succeed, and write nothing
//! outside the window; a missing chunk fills the window with the fill
//! value.

use std::sync::atomic::{AtomicUsize, Ordering};

use arbitrary::Unstructured;
use serde_json::{Value, json};
use zarrs::array::codec::api::CodecOptions;
use zarrs::array::{ArrayBytes, ArraySubset};
use zarrs_extension_codecs::read::chunk_decode::ExposedChunkDecoder;

use super::targets::{acceptable, array_with_chunk_zero, generated_array, shard_index_is_sane};

/// How many windows the fused path decoded without an error (the replay
/// checks that the committed inputs reach it).
pub static FUSED_DECODES: AtomicUsize = AtomicUsize::new(0);

/// The byte around each window that stands for "not written".
const GUARD: u8 = 0xa5;

pub fn chunk_decode(data: &[u8]) {
    zarrs_extension_codecs::register_overrides();
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
        let Ok(mut metadata) = generated_array(&mut u) else {
            return;
        };
        if mode & 2 == 2 {
            let Ok(name) = u.choose(&["crc32c", "gzip", "zstd"]) else {
                return;
            };
            let codec = match *name {
                "gzip" => json!({"name": "gzip", "configuration": {"level": 1}}),
                "zstd" => json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}}),
                _ => json!({"name": "crc32c"}),
            };
            if let Some(codecs) = metadata["codecs"].as_array_mut() {
                codecs.push(codec);
            }
        }
        (metadata, u.take_rest())
    };
    let (selector, chunk) = rest.split_at(rest.len().min(8));
    decode_windows(metadata, selector, chunk);
}

fn decode_windows(metadata: Value, selector: &[u8], chunk: &[u8]) {
    if !acceptable(&metadata)
        || !shard_index_is_sane(&metadata, chunk)
        || !crc32c_is_safe(&metadata, chunk)
    {
        return;
    }
    let Some(array) = array_with_chunk_zero(metadata, chunk) else {
        return;
    };
    let Some(size) = array.data_type().fixed_size() else {
        return;
    };
    let indices = vec![0u64; array.dimensionality()];
    let Ok(decoder) = ExposedChunkDecoder::new(&array, &indices) else {
        return;
    };
    let Ok(chunk_shape) = array.chunk_shape(&indices) else {
        return;
    };
    let chunk_shape: Vec<u64> = chunk_shape.iter().map(|d| d.get()).collect();
    let options = CodecOptions::default();
    for w in 0..2 {
        let pick = |d: usize| u64::from(*selector.get((w * 4 + d) % 8).unwrap_or(&0));
        let ranges: Vec<std::ops::Range<u64>> = chunk_shape
            .iter()
            .enumerate()
            .map(|(d, &n)| {
                let s = pick(d);
                let start = s % n;
                let len = 1 + (s / 7) % (n - start);
                start..start + len
            })
            .collect();
        let window = ArraySubset::new_with_ranges(&ranges);
        // The window sits one element in from the output's start in the
        // dimensions the selector says, with one more after it.
        let start: Vec<u64> = (0..ranges.len()).map(|d| pick(d) & 1).collect();
        let out_shape: Vec<u64> = window
            .shape()
            .iter()
            .zip(&start)
            .map(|(&n, &s)| n + s + 1)
            .collect();
        let len = out_shape.iter().product::<u64>() as usize * size;
        let zarrs_read = array.retrieve_chunk_subset::<ArrayBytes<'static>>(&indices, &window);
        let mut out = vec![GUARD; len];
        let ours =
            decoder.decode_window(Some(chunk), &window, &mut out, &out_shape, &start, &options);
        if let (Ok(ArrayBytes::Fixed(want)), Ok(())) = (&zarrs_read, &ours) {
            let got = window_bytes(&out, &out_shape, &start, window.shape(), size);
            assert!(
                got.0 == want[..],
                "window {ranges:?}: values differ from zarrs'"
            );
            assert!(
                got.1.iter().all(|&b| b == GUARD),
                "window {ranges:?}: bytes outside the window written"
            );
        }
        if ours.is_ok() && decoder.is_fused() {
            FUSED_DECODES.fetch_add(1, Ordering::Relaxed);
        }
        // A missing chunk: the fill value in the window.
        let mut out = vec![GUARD; len];
        decoder
            .decode_window(None, &window, &mut out, &out_shape, &start, &options)
            .expect("a missing chunk reads as the fill value");
        let (inside, outside) = window_bytes(&out, &out_shape, &start, window.shape(), size);
        let fill = array.fill_value().as_ne_bytes();
        assert!(inside.chunks_exact(size).all(|e| e == fill), "fill value");
        assert!(
            outside.iter().all(|&b| b == GUARD),
            "fill outside the window"
        );
    }
}

/// The bytes of the window `start` / `shape` of an output of `out_shape`
/// (C order), and the bytes outside it.
fn window_bytes(
    out: &[u8],
    out_shape: &[u64],
    start: &[u64],
    shape: &[u64],
    size: usize,
) -> (Vec<u8>, Vec<u8>) {
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    for (i, element) in out.chunks_exact(size).enumerate() {
        let mut rest = i as u64;
        let mut within = true;
        for d in (0..out_shape.len()).rev() {
            let k = rest % out_shape[d];
            rest /= out_shape[d];
            within &= (start[d]..start[d] + shape[d]).contains(&k);
        }
        if within {
            inside.extend_from_slice(element);
        } else {
            outside.extend_from_slice(element);
        }
    }
    (inside, outside)
}

/// ZARRS-AVOID(crc32c-short): zarrs 0.23.14's crc32c partial decoder
/// subtracts the checksum's 4 bytes from what it read unchecked
/// (`strip_suffix_partial_decoder.rs:50`, "attempt to subtract with
/// overflow"), which zarrs' `retrieve_chunk_subset` reaches on a chunk
/// shorter than 4 bytes. `crc32c` is fed only as the last codec of the
/// chain (what it reads is then the chunk itself) and with 4 bytes or more.
/// The crate's `ChunkDecoder` never uses that partial decoder.
fn crc32c_is_safe(metadata: &Value, chunk: &[u8]) -> bool {
    if !metadata.to_string().contains("crc32c") {
        return true;
    }
    let codecs = metadata["codecs"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let only_last = codecs
        .iter()
        .filter(|c| c.to_string().contains("crc32c"))
        .count()
        == 1
        && codecs.last().is_some_and(|c| c["name"] == "crc32c");
    only_last && chunk.len() >= 4
}

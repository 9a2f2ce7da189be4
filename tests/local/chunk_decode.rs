//! The read path's `ChunkDecoder` (`src/read/chunk_decode.rs`) from
//! outside the crate:
//!
//! - every zarr-python fixture store, decoded chunk by chunk into one output
//!   (each chunk into its window, edge chunks cut to the array), equals what
//!   zarr-python decoded;
//! - the fused decode allocates no chunk-sized buffer: a 4 MiB chunk (512 x
//!   1024 float64 stored as uint16 through `scale_offset` + `cast_value` +
//!   `bytes`) decodes into the caller's buffer with a few small allocations
//!   at most, where zarrs' chain decode allocates the cast chunk (4 MiB) on
//!   the way. Counted by a global allocator this module installs for the
//!   whole `local` test binary, counting on the test's thread only.

use crate::common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::borrow::Cow;
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{compare, fixtures, le_to_ne, zarr_python_fixtures};
use zarrs::array::{Array, ArraySubset};
use zarrs::filesystem::FilesystemStore;
use zarrs_extension_codecs::numeric::NumericType;

use serde_json::json;
use zarrs::array::codec::api::ArrayToBytesCodecTraits;
use zarrs::array::{ArrayBuilder, CodecOptions, data_type};
use zarrs::storage::store::MemoryStore;
use zarrs_extension_codecs::codec::bytes::BytesCodec;
use zarrs_extension_codecs::codec::cast_value::CastValueCodec;
use zarrs_extension_codecs::codec::scale_offset::ScaleOffsetCodec;
use zarrs_extension_codecs::read::chunk_decode::ExposedChunkDecoder;

/// The system allocator, counting the bytes of the largest allocation made
/// on a thread while its `COUNTING` is set.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}
static LARGEST: AtomicUsize = AtomicUsize::new(0);

/// Whether this thread counts (`false` while the thread is being torn down).
fn counting() -> bool {
    COUNTING.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters (an atomic, a `const`-initialised thread local) allocate nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counting() {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if counting() {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counting() {
            LARGEST.fetch_max(new_size, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The largest allocation `f` makes.
fn largest_allocation(f: impl FnOnce()) -> usize {
    LARGEST.store(0, Ordering::Relaxed);
    COUNTING.set(true);
    f();
    COUNTING.set(false);
    LARGEST.load(Ordering::Relaxed)
}

#[test]
fn fused_decode_allocates_no_chunk_sized_buffer() {
    let (rows, cols) = (512u64, 1024u64);
    let store = Arc::new(MemoryStore::new());
    let array = ArrayBuilder::new(
        vec![rows, cols],
        vec![rows, cols],
        data_type::float64(),
        10.0f64,
    )
    .array_to_array_codecs(vec![
        Arc::new(ScaleOffsetCodec::new(Some(json!(10)), Some(json!(100))).unwrap()),
        Arc::new(
            CastValueCodec::new_with_json(&json!({"data_type": "uint16", "out_of_range": "clamp"}))
                .unwrap(),
        ),
    ])
    .array_to_bytes_codec(Arc::new(BytesCodec::little()))
    .build(store, "/")
    .unwrap();
    let n = (rows * cols) as usize;
    let values: Vec<f64> = (0..n).map(|i| 10.0 + (i % 65536) as f64 / 100.0).collect();
    array.store_chunk(&[0, 0], values).unwrap();
    let encoded = array.retrieve_encoded_chunk(&[0, 0]).unwrap().unwrap();
    let decoder = ExposedChunkDecoder::new(&array, &[0, 0]).unwrap();
    assert!(decoder.is_fused());
    let options = CodecOptions::default().with_concurrent_target(1);
    let mut out = vec![0.0f64; n];

    let fused = largest_allocation(|| {
        decoder
            .decode_whole_into(&encoded, bytemuck::cast_slice_mut(&mut out), &options)
            .unwrap();
    });
    // zarrs' chain decode of the same chunk, for comparison (and to show
    // that the counter sees a chunk-sized buffer when there is one).
    let (codecs, shape) = (array.codecs(), array.chunk_shape(&[0, 0]).unwrap());
    let (dt, fv) = (array.data_type().clone(), array.fill_value().clone());
    let mut zarrs_bytes = Vec::new();
    let zarrs = largest_allocation(|| {
        let decoded = codecs
            .decode(Cow::Borrowed(&encoded), &shape, &dt, &fv, &options)
            .unwrap();
        zarrs_bytes = decoded.into_fixed().unwrap().into_owned();
    });
    assert_eq!(bytemuck::cast_slice::<f64, u8>(&out), &zarrs_bytes[..]);
    let chunk_bytes = n * 8;
    assert!(zarrs >= chunk_bytes, "zarrs' largest allocation: {zarrs}");
    // Its largest: the lookup table of a two-byte stored type (65,536
    // final values, 512 KiB of float64), whatever the chunk's size.
    assert!(
        fused <= 512 << 10,
        "the fused decode allocated {fused} bytes at once (chunk: {chunk_bytes})"
    );
}

/// Every zarr-python fixture, chunk by chunk through `ChunkDecoder` into
/// one output of the array's shape, against zarr-python's own decoding.
#[test]
fn zarr_python_fixtures_decode_chunk_by_chunk() {
    let mut failures = Vec::new();
    let mut fused_chunks = 0;
    let all = fixtures(&zarr_python_fixtures());
    for fixture in &all {
        let store = Arc::new(FilesystemStore::new(&fixture.store).unwrap());
        let array = Array::open(store, "/").unwrap();
        let data_type = NumericType::from_data_type(array.data_type()).expect("numeric fixture");
        let size = data_type.size();
        let expected = le_to_ne(&fixture.expected, size);
        let shape = array.shape().to_vec();
        let mut out = vec![0u8; expected.len()];
        let options = CodecOptions::default();
        let grid = ArraySubset::new_with_shape(array.chunk_grid_shape().to_vec());
        let result = grid.indices().into_iter().try_for_each(|indices| {
            let decoder = ExposedChunkDecoder::new(&array, &indices).map_err(|e| e.to_string())?;
            fused_chunks += usize::from(decoder.is_fused());
            let in_array = array
                .chunk_subset_bounded(&indices)
                .map_err(|e| e.to_string())?;
            let part = ArraySubset::new_with_shape(in_array.shape().to_vec());
            let encoded = array
                .retrieve_encoded_chunk(&indices)
                .map_err(|e| e.to_string())?;
            decoder
                .decode_window(
                    encoded.as_deref(),
                    &part,
                    &mut out,
                    &shape,
                    in_array.start(),
                    &options,
                )
                .map_err(|e| format!("chunk {indices:?}: {e}"))
        });
        match result {
            Ok(()) => {
                if let Err(e) = compare(data_type, &out, &expected) {
                    failures.push(format!("{}: {e}", fixture.name));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", fixture.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures differ:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
    assert!(
        all.len() >= 20,
        "expected the full fixture set, found {}",
        all.len()
    );
    assert!(fused_chunks > 0, "no fixture chunk took the fused path");
}

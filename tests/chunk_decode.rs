//! The read path's fused chunk decode allocates no chunk-sized buffer: a
//! 4 MiB chunk (512 x 1024 float64 stored as uint16 through `scale_offset`
//! + `cast_value` + `bytes`) decodes into the caller's buffer with a few
//! small allocations at most, where zarrs' chain decode allocates the cast
//! chunk (4 MiB) on the way. Counted by a global allocator of this test
//! binary's own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::json;
use zarrs::array::codec::api::ArrayToBytesCodecTraits;
use zarrs::array::{ArrayBuilder, CodecOptions, data_type};
use zarrs::storage::store::MemoryStore;
use zarrs_extension_codecs::codec::bytes::BytesCodec;
use zarrs_extension_codecs::codec::cast_value::CastValueCodec;
use zarrs_extension_codecs::codec::scale_offset::ScaleOffsetCodec;
use zarrs_extension_codecs::read::chunk_decode::ExposedChunkDecoder;

/// The system allocator, counting the bytes of the largest allocation made
/// while `COUNTING` is set.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters are atomics and allocate nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
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
        if COUNTING.load(Ordering::Relaxed) {
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
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
    COUNTING.store(true, Ordering::Relaxed);
    f();
    COUNTING.store(false, Ordering::Relaxed);
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
    assert!(
        fused < 64 << 10,
        "the fused decode allocated {fused} bytes at once (chunk: {chunk_bytes})"
    );
}

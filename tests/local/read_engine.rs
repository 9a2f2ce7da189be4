//! The read engine (`src/read/engine`) behind `ArrayReadExt` /
//! `AsyncArrayReadExt`: values bitwise equal to zarrs' own reads on
//! sharded and unsharded arrays (random windows, edges, missing shards and
//! missing inner chunks), the requests it sends (counted by a store
//! wrapper), errors on hostile shard indexes that name the shard and the
//! inner chunk, and async reads that leave the runtime free.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::Rng;
use zarrs::array::codec::ShardingCodecBuilder;
use zarrs::array::codec::array_to_bytes::sharding::ShardingIndexLocation;
use zarrs::array::{Array, ArrayBuilder, ArraySubset, CodecOptions, data_type};
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator, InvalidByteRangeError};
use zarrs::storage::store::MemoryStore;
use zarrs::storage::{
    MaybeBytes, MaybeBytesIterator, ReadableStorageTraits, StorageError, StoreKey,
    WritableStorageTraits,
};
use zarrs_extension_codecs::ArrayReadExt;

/// Requests a store was asked for: whole gets, `get_partial_many` calls,
/// and the ranges in those calls.
#[derive(Default)]
struct Counts {
    gets: AtomicU64,
    partial_calls: AtomicU64,
    ranges: AtomicU64,
}

impl Counts {
    fn take(&self) -> [u64; 3] {
        [
            self.gets.swap(0, Ordering::SeqCst),
            self.partial_calls.swap(0, Ordering::SeqCst),
            self.ranges.swap(0, Ordering::SeqCst),
        ]
    }
}

/// A [`MemoryStore`] that counts what it is asked for.
struct CountingStore {
    inner: Arc<MemoryStore>,
    counts: Arc<Counts>,
}

impl ReadableStorageTraits for CountingStore {
    fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        self.counts.gets.fetch_add(1, Ordering::SeqCst);
        self.inner.get(key)
    }

    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        self.counts.partial_calls.fetch_add(1, Ordering::SeqCst);
        let ranges: Vec<ByteRange> = byte_ranges.collect();
        self.counts
            .ranges
            .fetch_add(ranges.len() as u64, Ordering::SeqCst);
        // Ranges checked here: zarrs 0.23.14's `MemoryStore` underflows on
        // a suffix longer than the value and on ranges whose end overflows
        // (see ZARRS-AVOID(memory-store-ranges) in tests/fuzz_harness).
        let Some(value) = self.inner.get(key)? else {
            return Ok(None);
        };
        let len = value.len() as u64;
        Ok(Some(Box::new(ranges.into_iter().map(move |range| {
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
        self.inner.size_key(key)
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

const SHAPE: [u64; 2] = [70, 50];
const SHARD: [u64; 2] = [32, 24];
const INNER: [u64; 2] = [8, 6];
const FILL: u16 = 7;

/// A 70 x 50 uint16 array in shards of 32 x 24 (edge shards), inner chunks
/// of 8 x 6; shard [1, 1] never written, inner chunk [0, 0] of shard
/// [0, 1] all fill value (so not stored). Returns the store and the
/// values written.
fn sharded(
    location: ShardingIndexLocation,
    compress: bool,
    crc: bool,
) -> (Arc<MemoryStore>, Vec<u16>) {
    let store = Arc::new(MemoryStore::new());
    let mut sharding = ShardingCodecBuilder::new(
        INNER
            .iter()
            .map(|&n| std::num::NonZeroU64::new(n).unwrap())
            .collect::<Vec<_>>(),
        &data_type::uint16(),
    );
    sharding.index_location(location);
    if compress {
        sharding.bytes_to_bytes_codecs(vec![Arc::new(zarrs::array::codec::ZstdCodec::new(
            1, false,
        ))]);
    }
    if !crc {
        sharding.index_bytes_to_bytes_codecs(vec![]);
    }
    let array = ArrayBuilder::new(SHAPE.to_vec(), SHARD.to_vec(), data_type::uint16(), FILL)
        .array_to_bytes_codec(Arc::new(sharding.build()))
        .build(store.clone(), "/")
        .unwrap();
    array.store_metadata().unwrap();
    let mut values: Vec<u16> = (0..SHAPE[0] * SHAPE[1])
        .map(|i| (i * 37 % 60_000 + 100) as u16)
        .collect();
    for r in 0..8 {
        for c in 24..30 {
            values[(r * SHAPE[1] + c) as usize] = FILL;
        }
    }
    array
        .store_array_subset(&array.subset_all(), values.clone())
        .unwrap();
    array.erase_chunk(&[1, 1]).unwrap();
    for r in 32..64 {
        for c in 24..48 {
            values[(r * SHAPE[1] + c) as usize] = FILL;
        }
    }
    (store, values)
}

fn counted(store: &Arc<MemoryStore>) -> (Array<CountingStore>, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let counting = Arc::new(CountingStore {
        inner: store.clone(),
        counts: counts.clone(),
    });
    (Array::open(counting, "/").unwrap(), counts)
}

/// Windows of every kind: whole, one element, shard-aligned, inner-chunk
/// aligned, at the edges, and random ones.
fn windows(rng: &mut Rng) -> Vec<ArraySubset> {
    let mut out = vec![
        ArraySubset::new_with_ranges(&[0..70, 0..50]),
        ArraySubset::new_with_ranges(&[0..1, 0..1]),
        ArraySubset::new_with_ranges(&[69..70, 49..50]),
        ArraySubset::new_with_ranges(&[0..32, 0..24]),
        ArraySubset::new_with_ranges(&[32..64, 24..48]),
        ArraySubset::new_with_ranges(&[8..16, 6..18]),
        ArraySubset::new_with_ranges(&[3..29, 5..20]),
        ArraySubset::new_with_ranges(&[60..70, 40..50]),
        ArraySubset::new_with_ranges(&[0..8, 24..30]),
        ArraySubset::new_with_ranges(&[30..35, 0..50]),
    ];
    for _ in 0..40 {
        let r0 = rng.below(SHAPE[0]);
        let c0 = rng.below(SHAPE[1]);
        let r1 = r0 + 1 + rng.below(SHAPE[0] - r0);
        let c1 = c0 + 1 + rng.below(SHAPE[1] - c0);
        out.push(ArraySubset::new_with_ranges(&[r0..r1, c0..c1]));
    }
    out
}

fn expected(values: &[u16], window: &ArraySubset) -> Vec<u16> {
    let r = window.to_ranges();
    let mut out = Vec::new();
    for row in r[0].clone() {
        for col in r[1].clone() {
            out.push(values[(row * SHAPE[1] + col) as usize]);
        }
    }
    out
}

#[test]
fn sharded_windows_equal_zarrs_and_the_values_written() {
    let mut rng = Rng(0x5eed_1234);
    for location in [ShardingIndexLocation::End, ShardingIndexLocation::Start] {
        for (compress, crc) in [(false, false), (true, true)] {
            let (store, values) = sharded(location, compress, crc);
            let (array, _) = counted(&store);
            for window in windows(&mut rng) {
                let zarrs_read: Vec<u16> = array.retrieve_array_subset(&window).unwrap();
                for threads in [1, 3] {
                    let options = CodecOptions::default().with_concurrent_target(threads);
                    let ours = array
                        .retrieve_array_subset_vec_opt::<u16>(&window, &options)
                        .unwrap();
                    assert_eq!(
                        ours, zarrs_read,
                        "{location:?} {compress} {window:?} {threads}"
                    );
                    assert_eq!(ours, expected(&values, &window), "{window:?}");
                }
            }
        }
    }
}

/// A batch of windows, each into its own place in one output (shards
/// swapped left and right, rows of the output left between them), reads
/// what the values written hold at each window and leaves the rest of the
/// output as it was (the engine's path; the next test takes zarrs').
#[test]
fn placed_windows_fill_their_places_and_nothing_else() {
    use zarrs_extension_codecs::WindowAt;
    let (store, values) = sharded(ShardingIndexLocation::End, true, true);
    let (array, _) = counted(&store);
    // Output 72 x 50: the array's rows 0..70 with the shard columns swapped
    // (0..24 <-> 24..48 of each row, 48..50 kept), rows 70..72 untouched.
    let out_shape = [72u64, 50];
    let placed = [
        WindowAt {
            window: ArraySubset::new_with_ranges(&[0..70, 0..24]),
            at: vec![0, 24],
        },
        WindowAt {
            window: ArraySubset::new_with_ranges(&[0..70, 24..48]),
            at: vec![0, 0],
        },
        WindowAt {
            window: ArraySubset::new_with_ranges(&[0..70, 48..50]),
            at: vec![0, 48],
        },
        WindowAt {
            window: ArraySubset::new_with_ranges(&[5..5, 0..3]),
            at: vec![71, 0],
        },
    ];
    let mut want = vec![0xabcd_u16; 72 * 50];
    for r in 0..70usize {
        for c in 0..50usize {
            let to = match c {
                0..24 => c + 24,
                24..48 => c - 24,
                _ => c,
            };
            want[r * 50 + to] = values[r * 50 + c];
        }
    }
    for threads in [1, 3] {
        let options = CodecOptions::default().with_concurrent_target(threads);
        let mut out = vec![0xabcd_u16; 72 * 50];
        array
            .retrieve_windows_into_bytes_opt(
                &placed,
                bytemuck::cast_slice_mut(&mut out),
                &out_shape,
                &options,
            )
            .unwrap();
        assert!(out == want, "threads {threads}");
    }
    // Overlapping places, a place outside the output, a window outside the
    // array and a wrong-sized buffer are refused before anything is written.
    let mut out = vec![0xabcd_u16; 72 * 50];
    let overlapping = [
        placed[0].clone(),
        WindowAt {
            at: vec![1, 20],
            ..placed[1].clone()
        },
    ];
    let outside = [WindowAt {
        at: vec![3, 0],
        ..placed[0].clone()
    }];
    let beyond = [WindowAt {
        window: ArraySubset::new_with_ranges(&[60..71, 0..2]),
        at: vec![0, 0],
    }];
    for (bad, says) in [
        (&overlapping[..], "overlapping"),
        (&outside[..], "reaches outside the output"),
        (&beyond[..], "reaches outside array"),
    ] {
        let error = array
            .retrieve_windows_into_bytes_opt(
                bad,
                bytemuck::cast_slice_mut(&mut out),
                &out_shape,
                &CodecOptions::default(),
            )
            .unwrap_err()
            .to_string();
        assert!(error.contains(says), "{error}");
    }
    let error = array
        .retrieve_windows_into_bytes_opt(
            &placed,
            &mut [0u8; 10],
            &out_shape,
            &CodecOptions::default(),
        )
        .unwrap_err()
        .to_string();
    assert!(error.contains("output of 10 bytes"), "{error}");
    assert!(out.iter().all(|&v| v == 0xabcd));
}

/// The same through zarrs, for an array the engine leaves to it (sharding
/// behind an array -> array codec), against zarrs' own window reads.
#[test]
fn placed_windows_through_zarrs_equal_its_window_reads() {
    use zarrs_extension_codecs::WindowAt;
    let store = Arc::new(MemoryStore::new());
    let sharding = ShardingCodecBuilder::new(
        vec![std::num::NonZeroU64::new(4).unwrap(); 2],
        &data_type::uint16(),
    )
    .build();
    let array = ArrayBuilder::new(vec![12, 10], vec![8, 8], data_type::uint16(), FILL)
        .array_to_array_codecs(vec![Arc::new(zarrs::array::codec::TransposeCodec::new(
            zarrs::array::codec::array_to_array::transpose::TransposeOrder::new(&[1, 0]).unwrap(),
        ))])
        .array_to_bytes_codec(Arc::new(sharding))
        .build(store, "/")
        .unwrap();
    let values: Vec<u16> = (0..120).map(|i| i * 3 + 1).collect();
    array
        .store_array_subset(&array.subset_all(), values)
        .unwrap();
    let a = ArraySubset::new_with_ranges(&[0..8, 2..8]);
    let b = ArraySubset::new_with_ranges(&[8..12, 0..10]);
    let placed = [
        WindowAt {
            window: a.clone(),
            at: vec![4, 0],
        },
        WindowAt {
            window: b.clone(),
            at: vec![0, 0],
        },
    ];
    let mut out = vec![0u16; 12 * 10];
    array
        .retrieve_windows_into_bytes_opt(
            &placed,
            bytemuck::cast_slice_mut(&mut out),
            &[12, 10],
            &CodecOptions::default(),
        )
        .unwrap();
    let got_a: Vec<u16> = (4..12)
        .flat_map(|r| out[r * 10..r * 10 + 6].to_vec())
        .collect();
    let got_b: Vec<u16> = out[..40].to_vec();
    assert_eq!(got_a, array.retrieve_array_subset::<Vec<u16>>(&a).unwrap());
    assert_eq!(got_b, array.retrieve_array_subset::<Vec<u16>>(&b).unwrap());
    assert!((4..12).all(|r| out[r * 10 + 6..r * 10 + 10].iter().all(|&v| v == 0)));
}

/// The index of shard [0, 1] has the missing marker for inner chunk
/// [0, 0] (what the test relies on to read a missing inner chunk).
#[test]
fn the_fixture_has_a_missing_inner_chunk() {
    let (store, _) = sharded(ShardingIndexLocation::End, false, false);
    let shard = store
        .get(&StoreKey::new("c/0/1").unwrap())
        .unwrap()
        .unwrap();
    let index = &shard[shard.len() - 16 * 16..];
    assert_eq!(&index[..16], &[0xff; 16]);
    assert!(
        store
            .get(&StoreKey::new("c/1/1").unwrap())
            .unwrap()
            .is_none()
    );
}

#[test]
fn requests_per_window() {
    let (store, _) = sharded(ShardingIndexLocation::End, true, true);
    let (array, counts) = counted(&store);
    counts.take(); // opening read zarr.json
    let options = CodecOptions::default().with_concurrent_target(1);
    // Inside one shard, four inner chunks: its index, then one call for
    // the chunks that asks for the index again (checked against the one
    // their ranges came from).
    let window = ArraySubset::new_with_ranges(&[3..13, 2..9]);
    array
        .retrieve_array_subset_vec_opt::<u16>(&window, &options)
        .unwrap();
    assert_eq!(counts.take(), [0, 2, 1 + (1 + 4)]);
    // The whole array: one get per shard (3 x 3, edge shards too, one of
    // them absent).
    array
        .retrieve_array_subset_vec_opt::<u16>(&array.subset_all(), &options)
        .unwrap();
    assert_eq!(counts.take(), [9, 0, 0]);
    // Two threads: the same requests.
    let options = CodecOptions::default().with_concurrent_target(2);
    array
        .retrieve_array_subset_vec_opt::<u16>(&array.subset_all(), &options)
        .unwrap();
    assert_eq!(counts.take(), [9, 0, 0]);
    // A window over the absent shard: its index only.
    let window = ArraySubset::new_with_ranges(&[40..41, 30..31]);
    let got = array
        .retrieve_array_subset_vec_opt::<u16>(&window, &options)
        .unwrap();
    assert_eq!(got, [FILL]);
    assert_eq!(counts.take(), [0, 1, 1]);
}

/// Unsharded chunks: one get per chunk the window needs whole; a part of
/// a compressed chunk is one get too, a part of an uncompressed one is
/// read by zarrs' partial decoder (ranges, no whole get).
#[test]
fn unsharded_arrays_read_one_get_per_chunk() {
    for compress in [true, false] {
        let store = Arc::new(MemoryStore::new());
        let mut builder =
            ArrayBuilder::new(vec![9, 10], vec![4, 4], data_type::float32(), f32::NAN);
        if compress {
            builder.bytes_to_bytes_codecs(vec![Arc::new(zarrs::array::codec::ZstdCodec::new(
                1, false,
            ))]);
        }
        let array = builder.build(store.clone(), "/").unwrap();
        array.store_metadata().unwrap();
        let values: Vec<f32> = (0..90).map(|i| i as f32 * 0.5).collect();
        array
            .store_array_subset(&array.subset_all(), values.clone())
            .unwrap();
        array.erase_chunk(&[1, 2]).unwrap();
        let (array, counts) = counted(&store);
        let mut rng = Rng(99);
        for _ in 0..30 {
            let r0 = rng.below(9);
            let c0 = rng.below(10);
            let window = ArraySubset::new_with_ranges(&[
                r0..r0 + 1 + rng.below(9 - r0),
                c0..c0 + 1 + rng.below(10 - c0),
            ]);
            let zarrs_read: Vec<f32> = array.retrieve_array_subset(&window).unwrap();
            counts.take();
            let ours = array.retrieve_array_subset_vec::<f32>(&window).unwrap();
            let chunks = array.chunks_in_array_subset(&window).unwrap().unwrap();
            let whole = chunks
                .indices()
                .into_iter()
                .filter(|i| {
                    let bounded = array.chunk_subset_bounded(i).unwrap();
                    bounded.overlap(&window).unwrap() == bounded
                })
                .count() as u64;
            let [gets, _, _] = counts.take();
            if compress {
                assert_eq!(gets, chunks.num_elements(), "{window:?}");
            } else {
                assert_eq!(gets, whole, "{window:?}");
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&ours), bits(&zarrs_read), "{window:?}");
        }
    }
}

/// A shard of `sharded(End, false, false)` with index entry `entry` set to
/// (offset, nbytes).
fn hostile(entry: usize, offset: u64, nbytes: u64) -> Array<CountingStore> {
    let (store, _) = sharded(ShardingIndexLocation::End, false, false);
    let key = StoreKey::new("c/0/0").unwrap();
    let mut shard = store.get(&key).unwrap().unwrap().to_vec();
    let start = shard.len() - 16 * 16 + entry * 16;
    shard[start..start + 8].copy_from_slice(&offset.to_le_bytes());
    shard[start + 8..start + 16].copy_from_slice(&nbytes.to_le_bytes());
    store.set(&key, shard.into()).unwrap();
    counted(&store).0
}

fn read_error(array: &Array<CountingStore>, window: &ArraySubset) -> String {
    array
        .retrieve_array_subset_vec::<u16>(window)
        .unwrap_err()
        .to_string()
}

#[test]
fn hostile_indexes_are_errors_naming_shard_and_inner_chunk() {
    let part = ArraySubset::new_with_ranges(&[8..9, 6..7]); // inner chunk [1, 1]
    let whole = ArraySubset::new_with_ranges(&[0..32, 0..24]);
    // Inner chunk [1, 1] is entry 5 (4 per row).
    let array = hostile(5, 1 << 40, 96);
    for window in [&part, &whole] {
        let message = read_error(&array, window);
        assert!(message.contains("c/0/0"), "{message}");
        assert!(message.contains("[1, 1]"), "{message}");
        assert!(message.contains("past the shard's end"), "{message}");
    }
    let array = hostile(5, u64::MAX - 10, 96);
    let message = read_error(&array, &part);
    assert!(
        message.contains("c/0/0") && message.contains("[1, 1]"),
        "{message}"
    );
    assert!(message.contains("overflows"), "{message}");
    let array = hostile(5, u64::MAX, 96);
    let message = read_error(&array, &part);
    assert!(message.contains("missing-chunk marker"), "{message}");
    // Other than the 96 bytes `bytes` writes for 8 x 6 uint16. Zero bytes
    // too: zarrs 0.23.14's sharding partial decoder reads a part of a
    // 0-byte inner chunk as the fill value, with no error (its whole-shard
    // decode refuses it), even with only its own `bytes` codec.
    let array = hostile(5, 0, 0);
    assert!(
        array.retrieve_array_subset::<Vec<u16>>(&part).is_ok(),
        "zarrs fixed this: say so in docs/reliability.md"
    );
    for nbytes in [97, 10, 0] {
        let array = hostile(5, 0, nbytes);
        let message = read_error(&array, &part);
        assert!(
            message.contains("c/0/0") && message.contains("[1, 1]"),
            "{message}"
        );
        assert!(message.contains("not the 96 bytes"), "{message}");
    }
    // Pointing at another inner chunk's bytes is not detectable: it reads
    // those values, as every implementation does.
    let array = hostile(5, 0, 96);
    assert!(array.retrieve_array_subset_vec::<u16>(&part).is_ok());
}

#[test]
fn a_truncated_shard_is_named() {
    let (store, _) = sharded(ShardingIndexLocation::End, false, false);
    let key = StoreKey::new("c/0/0").unwrap();
    store.set(&key, vec![1u8; 100].into()).unwrap();
    let (array, _) = counted(&store);
    for window in [
        ArraySubset::new_with_ranges(&[0..1, 0..1]),
        ArraySubset::new_with_ranges(&[0..32, 0..24]),
    ] {
        let message = read_error(&array, &window);
        assert!(message.contains("c/0/0"), "{message}");
    }
}

/// A store that forwards to a [`MemoryStore`] and, at the first read of
/// inner chunks of shard `c/0/0` (a call with a bounded range: its index
/// is at the end, a suffix) once `rewrite` is set, first runs it.
struct Rewriting {
    inner: Arc<MemoryStore>,
    rewrite: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl ReadableStorageTraits for Rewriting {
    fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        self.inner.get(key)
    }

    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        let ranges: Vec<ByteRange> = byte_ranges.collect();
        let chunks = ranges
            .iter()
            .any(|r| matches!(r, ByteRange::FromStart(_, Some(_))));
        if key.as_str() == "c/0/0" && chunks {
            let rewrite = self.rewrite.lock().unwrap().take();
            if let Some(rewrite) = rewrite {
                rewrite();
            }
        }
        self.inner
            .get_partial_many(key, Box::new(ranges.into_iter()))
    }

    fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        self.inner.size_key(key)
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

/// A store that keeps nothing (memory, a file system, a remote store with
/// no index kept) can still have a shard rewritten between a read's index
/// and its inner chunks. Here the rewrite leaves inner chunk [0, 0] of
/// shard [0, 0] at the fill value (so not stored): every other inner chunk
/// moves one place (96 bytes) towards the start. Before the engine read the
/// index again with the chunks, the window of inner chunk [0, 1] read the
/// new shard at the old offset, that is the new inner chunk [0, 2]'s
/// values, silently (no compression, no `crc32c`). Now it sees the index
/// changed, fails with "the object changed", and `ArrayReadExt` reads once
/// more: the new values.
#[test]
fn a_shard_rewritten_between_its_index_and_its_chunks_reads_its_new_values() {
    let (store, values) = sharded(ShardingIndexLocation::End, false, false);
    let rewriting = Arc::new(Rewriting {
        inner: store.clone(),
        rewrite: std::sync::Mutex::new(None),
    });
    let array = Array::open(rewriting.clone(), "/").unwrap();
    let window = ArraySubset::new_with_ranges(&[0..8, 6..12]); // inner chunk [0, 1]
    let got = array.retrieve_array_subset_vec::<u16>(&window).unwrap();
    assert_eq!(got, expected(&values, &window));
    let shard = ArraySubset::new_with_ranges(&[0..32, 0..24]);
    let mut new_values = values.clone();
    for row in 0..32 {
        for col in 0..24 {
            let v = &mut new_values[(row * SHAPE[1] + col) as usize];
            *v = if row < 8 && col < 6 { FILL } else { *v + 1000 };
        }
    }
    let writer = Array::open(store.clone(), "/").unwrap();
    let shard_values = expected(&new_values, &shard);
    *rewriting.rewrite.lock().unwrap() = Some(Box::new(move || {
        writer.store_array_subset(&shard, shard_values).unwrap();
    }));
    let got = array.retrieve_array_subset_vec::<u16>(&window).unwrap();
    assert!(rewriting.rewrite.lock().unwrap().is_none(), "no chunk read");
    assert_eq!(got, expected(&new_values, &window));
}

#[cfg(feature = "async")]
mod async_reads {
    use std::time::{Duration, Instant};

    use object_store::local::LocalFileSystem;
    use zarrs::filesystem::FilesystemStore;
    use zarrs_extension_codecs::AsyncArrayReadExt;
    use zarrs_object_store::AsyncObjectStore;

    use super::*;

    /// `sharded(...)`'s store copied to a directory, opened sync and async.
    fn on_disk(
        location: ShardingIndexLocation,
    ) -> (tempfile::TempDir, Array<FilesystemStore>, Vec<u16>) {
        let (store, values) = sharded(location, true, true);
        let dir = tempfile::tempdir().unwrap();
        for (key, bytes) in common::store_contents(&store) {
            let path = dir.path().join(key);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let array = Array::open(Arc::new(FilesystemStore::new(dir.path()).unwrap()), "/").unwrap();
        (dir, array, values)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn async_windows_equal_the_sync_ones() {
        let mut rng = Rng(7);
        for location in [ShardingIndexLocation::End, ShardingIndexLocation::Start] {
            let (dir, sync_array, values) = on_disk(location);
            let store =
                AsyncObjectStore::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
            let array = Array::async_open(Arc::new(store), "/").await.unwrap();
            for window in windows(&mut rng) {
                let ours = array
                    .async_retrieve_array_subset_vec::<u16>(&window)
                    .await
                    .unwrap();
                assert_eq!(ours, expected(&values, &window), "{window:?}");
                let sync = sync_array
                    .retrieve_array_subset_vec::<u16>(&window)
                    .unwrap();
                assert_eq!(ours, sync);
                let mut slice = vec![0u16; ours.len()];
                array
                    .async_retrieve_array_subset_into_slice(&window, &mut slice)
                    .await
                    .unwrap();
                assert_eq!(slice, ours);
            }
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn async_errors_name_the_chunk() {
        let (dir, _, _) = on_disk(ShardingIndexLocation::End);
        std::fs::write(dir.path().join("c/0/1"), vec![3u8; 300]).unwrap();
        let store = AsyncObjectStore::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
        let array = Array::async_open(Arc::new(store), "/").await.unwrap();
        let window = ArraySubset::new_with_ranges(&[0..10, 20..30]);
        let message = array
            .async_retrieve_array_subset_vec::<u16>(&window)
            .await
            .unwrap_err()
            .to_string();
        assert!(message.contains("c/0/1"), "{message}");
    }

    /// An async store over another that answers the first call for the
    /// shard `key`'s chunks (the second `get_partial_many` of it: the first
    /// reads its index) with the remote store's `ObjectChanged` error, as
    /// when the shard is rewritten while it is read; and counts the calls.
    struct ChangesOnce {
        inner: AsyncObjectStore<LocalFileSystem>,
        key: &'static str,
        calls: AtomicU64,
    }

    #[async_trait::async_trait]
    impl zarrs::storage::AsyncReadableStorageTraits for ChangesOnce {
        async fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
            self.inner.get(key).await
        }

        async fn get_partial_many<'a>(
            &'a self,
            key: &StoreKey,
            byte_ranges: ByteRangeIterator<'a>,
        ) -> Result<zarrs::storage::AsyncMaybeBytesIterator<'a>, StorageError> {
            if key.as_str() == self.key && self.calls.fetch_add(1, Ordering::SeqCst) == 1 {
                // Let the other shards' decodes start first.
                tokio::time::sleep(Duration::from_millis(20)).await;
                return Err(
                    zarrs_extension_codecs::ObjectChanged::new(key.as_str(), "test").into(),
                );
            }
            self.inner.get_partial_many(key, byte_ranges).await
        }

        async fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
            self.inner.size_key(key).await
        }

        fn supports_get_partial(&self) -> bool {
            true
        }
    }

    /// A shard that changed while a whole read of many shards ran: the
    /// read is made again, once (into the same `Vec` for `_vec`, after the
    /// first attempt's decodes have ended; into new buffers for
    /// `_into_slice`), and gives the values written.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_shard_changed_mid_read_is_read_again() {
        let (dir, _, values) = on_disk(ShardingIndexLocation::End);
        for into_slice in [false, true] {
            let store = Arc::new(ChangesOnce {
                inner: AsyncObjectStore::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap()),
                key: "c/2/0",
                calls: AtomicU64::new(0),
            });
            let array = Array::async_open(store.clone(), "/").await.unwrap();
            let window = ArraySubset::new_with_ranges(&[1..70, 1..50]);
            let got = if into_slice {
                let mut out = vec![0u16; window.num_elements_usize()];
                array
                    .async_retrieve_array_subset_into_slice(&window, &mut out)
                    .await
                    .unwrap();
                out
            } else {
                array
                    .async_retrieve_array_subset_vec::<u16>(&window)
                    .await
                    .unwrap()
            };
            assert_eq!(got, expected(&values, &window));
            // Index and chunks, the changed chunks, then index and chunks.
            assert_eq!(store.calls.load(Ordering::SeqCst), 4);
        }
    }

    /// An async store whose chunk `get`s each wait for one more poll and
    /// count how many are in flight at once (the most seen); everything
    /// but `zarr.json` is missing.
    struct InFlight {
        metadata: zarrs::storage::Bytes,
        now: AtomicU64,
        most: AtomicU64,
    }

    #[async_trait::async_trait]
    impl zarrs::storage::AsyncReadableStorageTraits for InFlight {
        async fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
            if key.as_str() == "zarr.json" {
                return Ok(Some(self.metadata.clone()));
            }
            let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            tokio::task::yield_now().await;
            self.now.fetch_sub(1, Ordering::SeqCst);
            Ok(None)
        }

        async fn get_partial_many<'a>(
            &'a self,
            key: &StoreKey,
            _byte_ranges: ByteRangeIterator<'a>,
        ) -> Result<zarrs::storage::AsyncMaybeBytesIterator<'a>, StorageError> {
            panic!("{key}: a whole chunk is read with get")
        }

        async fn size_key(&self, _key: &StoreKey) -> Result<Option<u64>, StorageError> {
            Ok(None)
        }

        fn supports_get_partial(&self) -> bool {
            true
        }
    }

    /// A float64 array of 3 chunks of 1536 x 2048 (24 MiB decoded each),
    /// stored as `stored` (a `cast_value` data type, or none), nothing
    /// written: the most chunk `get`s in flight at once while it is read
    /// whole, and whether it read as the fill value.
    async fn most_fetches_in_flight(stored: Option<&str>) -> u64 {
        let mut codecs = vec![];
        if let Some(data_type) = stored {
            codecs.push(serde_json::json!({
                "name": "cast_value", "configuration": {"data_type": data_type}
            }));
        }
        codecs.push(serde_json::json!({"name": "bytes", "configuration": {"endian": "little"}}));
        let metadata = serde_json::json!({
            "zarr_format": 3, "node_type": "array", "shape": [1536, 6144],
            "data_type": "float64", "fill_value": 2.5,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1536, 2048]}},
            "chunk_key_encoding": {"name": "default"},
            "codecs": codecs,
        });
        let store = Arc::new(InFlight {
            metadata: serde_json::to_vec(&metadata).unwrap().into(),
            now: AtomicU64::new(0),
            most: AtomicU64::new(0),
        });
        let array = Array::async_open(store.clone(), "/").await.unwrap();
        let got = array
            .async_retrieve_array_subset_vec::<f64>(&array.subset_all())
            .await
            .unwrap();
        assert!(got.iter().all(|&v| v == 2.5));
        store.most.load(Ordering::SeqCst)
    }

    /// Fetches are budgeted by the bytes they hold, decodes by the bytes
    /// they write: chunks of 24 MiB decoded but 3 MiB stored (`cast_value`
    /// to uint8) are all fetched at once though only 2 fit the 64 MiB of
    /// decoded buffers (the read used to wait on 2 fetches at a time); the
    /// same chunks stored as float64 are fetched 2 at a time.
    #[tokio::test(flavor = "current_thread")]
    async fn async_fetches_are_budgeted_by_stored_bytes() {
        zarrs_extension_codecs::register_overrides();
        assert_eq!(most_fetches_in_flight(Some("uint8")).await, 3);
        assert_eq!(most_fetches_in_flight(None).await, 2);
    }

    /// A large async read on a current-thread runtime: a task that yields
    /// in a loop keeps being polled, never waiting long, while the read
    /// runs (its decodes are on rayon's threads, not the runtime's).
    #[test]
    fn an_async_read_leaves_the_runtime_free() {
        // 2048 x 2048 float64 (32 MiB), unsharded chunks of 512 x 512 with
        // zstd: hundreds of milliseconds of decoding in a test build.
        let dir = tempfile::tempdir().unwrap();
        let fs = Arc::new(FilesystemStore::new(dir.path()).unwrap());
        let n = 2048u64;
        let array = ArrayBuilder::new(vec![n, n], vec![512, 512], data_type::float64(), 0.0f64)
            .bytes_to_bytes_codecs(vec![Arc::new(zarrs::array::codec::ZstdCodec::new(
                1, false,
            ))])
            .build(fs, "/")
            .unwrap();
        array.store_metadata().unwrap();
        let values: Vec<f64> = (0..n * n).map(|i| (i % 1013) as f64 * 0.25).collect();
        array
            .store_array_subset(&array.subset_all(), values.clone())
            .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let attempt = || {
            runtime.block_on(async {
                let store =
                    AsyncObjectStore::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
                let array = Array::async_open(Arc::new(store), "/").await.unwrap();
                let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
                let ticker = tokio::spawn({
                    let done = done.clone();
                    async move {
                        let mut last = Instant::now();
                        let mut longest = Duration::ZERO;
                        while !done.load(Ordering::SeqCst) {
                            tokio::task::yield_now().await;
                            let now = Instant::now();
                            longest = longest.max(now - last);
                            last = now;
                        }
                        longest
                    }
                });
                let start = Instant::now();
                let got = array
                    .async_retrieve_array_subset_vec::<f64>(&array.subset_all())
                    .await
                    .unwrap();
                let read_time = start.elapsed();
                done.store(true, Ordering::SeqCst);
                assert!(got == values);
                (ticker.await.unwrap(), read_time)
            })
        };
        // The read's steps on the runtime (fetches, copying a decoded chunk
        // of 2 MiB into the output) are short; decoding on the runtime
        // would block it for the whole read (one poll). Half of the read,
        // in one of three attempts: since zstd chunks of `bytes` alone are
        // copied run by run (the engine's fused path), a read is short
        // enough for one scheduling hiccup of a loaded machine to look like
        // half of it, which three in a row do not.
        let mut seen = Vec::new();
        for _ in 0..3 {
            let (longest_wait, read_time) = attempt();
            if longest_wait * 2 < read_time {
                return;
            }
            seen.push((longest_wait, read_time));
        }
        panic!("the runtime was blocked for most of each read (longest wait, read): {seen:?}");
    }
}

/// `retrieve_windows_into_bytes_stored_opt` says, per window, whether a
/// shard it reads is stored, as zarr-python's "chunk present" (a shard
/// that exists, whatever its inner chunks), by the engine's fetch and,
/// for an array the engine leaves to zarrs, by asking the store: a
/// missing shard read in part or whole is `false`; a stored shard is
/// `true` even where the window's inner chunk is not stored.
#[test]
fn windows_say_whether_their_shards_are_stored() {
    use zarrs_extension_codecs::WindowAt;
    let place = |ranges: [std::ops::Range<u64>; 2], col: u64| WindowAt {
        window: ArraySubset::new_with_ranges(&ranges),
        at: vec![0, col],
    };
    let batch = [
        place([0..8, 0..6], 0),      // shard [0, 0]
        place([32..40, 24..30], 6),  // shard [1, 1], never written
        place([0..8, 24..30], 12),   // shard [0, 1], its inner chunk [0, 0] not stored
        place([64..70, 48..50], 18), // shard [2, 2], whole
        place([32..64, 24..48], 20), // shard [1, 1], whole
    ];
    let want_stored = [true, false, true, true, false];
    let out_shape = [32u64, 44];
    let (store, values) = sharded(ShardingIndexLocation::End, true, true);
    let engine_read = Array::open(store.clone(), "/").unwrap();
    assert!(zarrs_extension_codecs::read::engine_refusal(&engine_read).is_none());
    let zarrs_read = Array::open(behind_a_transpose(&store), "/").unwrap();
    assert!(zarrs_extension_codecs::read::engine_refusal(&zarrs_read).is_some());
    for (what, array) in [("engine", &engine_read), ("zarrs", &zarrs_read)] {
        for threads in [1, 3] {
            let options = CodecOptions::default().with_concurrent_target(threads);
            let mut out = vec![0u8; (out_shape[0] * out_shape[1]) as usize * 2];
            let stored = array
                .retrieve_windows_into_bytes_stored_opt(&batch, &mut out, &out_shape, &options)
                .unwrap();
            assert_eq!(stored, want_stored, "{what}, {threads} threads");
            let out: &[u16] = bytemuck::cast_slice(&out);
            for part in &batch {
                let shape = part.window.shape();
                let want = expected(&values, &part.window);
                for (i, v) in want.iter().enumerate() {
                    let (r, c) = (i as u64 / shape[1], i as u64 % shape[1]);
                    let got = out[(r * out_shape[1] + part.at[1] + c) as usize];
                    assert_eq!(got, *v, "{what}: {} at {r}, {c}", part.window);
                }
            }
        }
    }
}

/// `store`'s array with the same shards behind a transpose of order
/// [0, 1]: the engine leaves sharding behind an array -> array codec to
/// zarrs.
fn behind_a_transpose(store: &MemoryStore) -> Arc<MemoryStore> {
    let mut metadata: serde_json::Value = serde_json::from_slice(
        &store
            .get(&"zarr.json".try_into().unwrap())
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    let codecs = metadata["codecs"].as_array_mut().unwrap();
    codecs.insert(
        0,
        serde_json::json!({"name": "transpose", "configuration": {"order": [0, 1]}}),
    );
    let behind = MemoryStore::new();
    for (key, bytes) in common::store_contents(store) {
        behind
            .set(&key.as_str().try_into().unwrap(), bytes.into())
            .unwrap();
    }
    behind
        .set(
            &"zarr.json".try_into().unwrap(),
            serde_json::to_vec(&metadata).unwrap().into(),
        )
        .unwrap();
    Arc::new(behind)
}

/// A store that answers its first partial read of shard `c/0/0` with the
/// remote store's typed change (as when the shard is rewritten and a kept
/// index is dropped), then reads as its inner store does.
struct ChangesOnceSync {
    inner: Arc<MemoryStore>,
    changed: AtomicU64,
}

impl ReadableStorageTraits for ChangesOnceSync {
    fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        self.inner.get(key)
    }

    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        if key.as_str() == "c/0/0" && self.changed.fetch_add(1, Ordering::SeqCst) == 0 {
            return Err(zarrs_extension_codecs::ObjectChanged::new(key.as_str(), "test").into());
        }
        self.inner.get_partial_many(key, byte_ranges)
    }

    fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        self.inner.size_key(key)
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

/// A change of a shard reported by the store, met by zarrs' own read (an
/// array the engine leaves to zarrs): the error stays typed through the
/// read's messages, and the read goes again and gives the values. Before,
/// the error that named the chunk was plain text, and the read failed.
#[test]
fn a_change_met_by_zarrs_read_is_read_again() {
    let (store, values) = sharded(ShardingIndexLocation::End, true, true);
    let changes = Arc::new(ChangesOnceSync {
        inner: behind_a_transpose(&store),
        changed: AtomicU64::new(0),
    });
    let array = Array::open(changes.clone(), "/").unwrap();
    assert!(zarrs_extension_codecs::read::engine_refusal(&array).is_some());
    let window = ArraySubset::new_with_ranges(&[0..8, 0..6]);
    let got = array.retrieve_array_subset_vec::<u16>(&window).unwrap();
    assert_eq!(got, expected(&values, &window));
    assert!(changes.changed.load(Ordering::SeqCst) >= 2, "no change met");
    changes.changed.store(0, Ordering::SeqCst);
    let mut out = vec![0u8; 8 * 6 * 2];
    let placed = [zarrs_extension_codecs::WindowAt {
        window: window.clone(),
        at: vec![0, 0],
    }];
    array
        .retrieve_windows_into_bytes_opt(&placed, &mut out, &[8, 6], &CodecOptions::default())
        .unwrap();
    assert_eq!(
        bytemuck::cast_slice::<u8, u16>(&out),
        expected(&values, &window)
    );
    assert!(changes.changed.load(Ordering::SeqCst) >= 2, "no change met");
}

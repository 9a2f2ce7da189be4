//! `shards`: the read engine (`src/read/engine`) on hostile shards.
//!
//! Input: a byte of flags (index at the start or the end, `crc32c` on the
//! index or not, threads), a byte choosing how shard `c/0/0` is spoiled
//! (replaced by the input's bytes; its index entries overwritten by
//! numbers from the input, so inner chunks point anywhere, overflow, or
//! half-mark themselves missing; cut short; or left valid), then the
//! numbers and two windows. The array is 12 x 10 uint16 in shards of
//! 8 x 6, inner chunks 4 x 3, fill value 7.
//!
//! Property: `ArrayReadExt` never panics; a window that does not touch the
//! spoiled shard reads the values written; an error from a window that
//! touches it names the shard's key. Then a third window is written with
//! `ArrayWriteExt` (which reads the spoiled shard's index and the inner
//! chunks the window covers in part): never a panic, an error names the
//! shard, and a window written reads back as written. With the `async` feature,
//! `AsyncArrayReadExt` reads each window too (through
//! `async_read::async_of`) and gives the same values, or an error naming
//! the shard where the sync read gave one. zarrs' own read is not run on these
//! shards (ZARRS-AVOID(shard-index-overflow), see `targets.rs`); reads go
//! through `CheckedStore` (ZARRS-AVOID(memory-store-ranges)).

use std::num::NonZeroU64;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arbitrary::Unstructured;
use zarrs::array::codec::ShardingCodecBuilder;
use zarrs::array::codec::array_to_bytes::sharding::ShardingIndexLocation;
use zarrs::array::{Array, ArrayBuilder, ArraySubset, CodecOptions, data_type};
use zarrs::storage::store::MemoryStore;
use zarrs::storage::{ReadableStorageTraits, StoreKey, WritableStorageTraits};
use zarrs_extension_codecs::{ArrayReadExt, ArrayWriteExt};

use super::targets::CheckedStore;

const SHAPE: [u64; 2] = [12, 10];
const SHARD: [u64; 2] = [8, 6];
const INNER: [u64; 2] = [4, 3];
const FILL: u16 = 7;
/// Entries in a shard's index (2 x 2 inner chunks).
const ENTRIES: usize = 4;

/// Inputs whose spoiled shard was read and refused with an error (so the
/// replay shows the checks are reached).
pub static REFUSED: AtomicUsize = AtomicUsize::new(0);

/// Windows whose `AsyncArrayReadExt` values were compared with the sync
/// read's (so the replay shows the async engine is reached).
pub static ASYNC_READS: AtomicUsize = AtomicUsize::new(0);

/// `ArrayWriteExt` writes into the spoiled store that were refused, and
/// that succeeded (so the replay shows both ends are reached).
pub static WRITES_REFUSED: AtomicUsize = AtomicUsize::new(0);
/// See [`WRITES_REFUSED`].
pub static WRITES_DONE: AtomicUsize = AtomicUsize::new(0);

pub fn shards(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let _ = run(&mut u);
}

fn value(row: u64, col: u64) -> u16 {
    (row * 131 + col * 17 + 1000) as u16
}

fn run(u: &mut Unstructured) -> arbitrary::Result<()> {
    let flags: u8 = u.arbitrary()?;
    let start = flags & 1 != 0;
    let crc = flags & 2 != 0;
    let threads = 1 + usize::from((flags >> 2) & 3);
    let store = Arc::new(MemoryStore::new());
    let subchunk: Vec<NonZeroU64> = INNER.iter().map(|&n| NonZeroU64::new(n).unwrap()).collect();
    let mut sharding = ShardingCodecBuilder::new(subchunk, &data_type::uint16());
    sharding.index_location(if start {
        ShardingIndexLocation::Start
    } else {
        ShardingIndexLocation::End
    });
    if !crc {
        sharding.index_bytes_to_bytes_codecs(vec![]);
    }
    let array = ArrayBuilder::new(SHAPE.to_vec(), SHARD.to_vec(), data_type::uint16(), FILL)
        .array_to_bytes_codec(Arc::new(sharding.build()))
        .build(store.clone(), "/")
        .unwrap();
    array.store_metadata().unwrap();
    let values: Vec<u16> = (0..SHAPE[0])
        .flat_map(|r| (0..SHAPE[1]).map(move |c| value(r, c)))
        .collect();
    array
        .store_array_subset(&array.subset_all(), values)
        .unwrap();

    let key = StoreKey::new("c/0/0").unwrap();
    let shard = store.get(&key).unwrap().unwrap().to_vec();
    let index_len = ENTRIES * 16;
    let index_at = if start {
        0
    } else {
        shard.len() - index_len - if crc { 4 } else { 0 }
    };
    let spoiled = match u.int_in_range(0..=3u8)? {
        0 => {
            let len = u.int_in_range(0..=400usize)?;
            u.bytes(len.min(u.len()))?.to_vec()
        }
        1 => {
            let mut shard = shard;
            for entry in 0..ENTRIES * 2 {
                let n: u64 = match u.int_in_range(0..=3u8)? {
                    0 => u64::MAX,
                    1 => u.int_in_range(0..=shard.len() as u64 + 8)?,
                    _ => u.arbitrary()?,
                };
                let at = index_at + entry * 8;
                shard[at..at + 8].copy_from_slice(&n.to_le_bytes());
            }
            shard
        }
        2 => {
            let keep = u.int_in_range(0..=shard.len())?;
            shard[..keep].to_vec()
        }
        _ => shard,
    };
    store.set(&key, spoiled.into()).unwrap();

    let checked = Arc::new(CheckedStore(store.clone()));
    let array = Array::open(checked.clone(), "/").unwrap();
    #[cfg(feature = "async")]
    let async_array = super::async_read::block_on(Array::async_open(
        Arc::new(super::async_read::async_of(checked)),
        "/",
    ))
    .unwrap();
    let options = CodecOptions::default().with_concurrent_target(threads);
    for _ in 0..2 {
        let (rows, cols) = draw_window(u)?;
        let window = ArraySubset::new_with_ranges(&[rows.clone(), cols.clone()]);
        let touches = rows.start < SHARD[0] && cols.start < SHARD[1];
        let read = array.retrieve_array_subset_vec_opt::<u16>(&window, &options);
        #[cfg(feature = "async")]
        {
            use zarrs_extension_codecs::AsyncArrayReadExt;
            let async_read = super::async_read::block_on(
                async_array.async_retrieve_array_subset_vec_opt::<u16>(&window, &options),
            );
            match (&read, async_read) {
                (Ok(sync), Ok(got)) => {
                    assert_eq!(&got, sync, "{window:?}: async read");
                    ASYNC_READS.fetch_add(1, Ordering::Relaxed);
                }
                (Err(_), Err(e)) => {
                    let message = e.to_string();
                    assert!(message.contains("c/0/0"), "{window:?}: async: {message}");
                }
                (sync, got) => panic!("{window:?}: sync {sync:?}, async {got:?}"),
            }
        }
        match read {
            Ok(got) if !touches => {
                let want: Vec<u16> = rows
                    .clone()
                    .flat_map(|r| cols.clone().map(move |c| value(r, c)))
                    .collect();
                assert_eq!(got, want, "{window:?} does not touch the spoiled shard");
            }
            Ok(_) => {}
            Err(e) => {
                let message = e.to_string();
                assert!(touches, "{window:?}: {message}");
                assert!(message.contains("c/0/0"), "{window:?}: {message}");
                REFUSED.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    // A write into the spoiled store (`ArrayWriteExt`; a window that covers
    // the shard in part reads its index and the inner chunks it covers in
    // part): never a panic; an error names the shard; after a success the
    // window reads back as written.
    let (rows, cols) = draw_window(u)?;
    let window = ArraySubset::new_with_ranges(&[rows.clone(), cols.clone()]);
    let touches = rows.start < SHARD[0] && cols.start < SHARD[1];
    let new: Vec<u16> = rows
        .flat_map(|r| cols.clone().map(move |c| value(r, c).wrapping_add(5000)))
        .collect();
    let writable = Array::open(store, "/").unwrap();
    let written = writable.store_window(&window, &new);
    match written {
        Ok(()) => {
            let back = array
                .retrieve_array_subset_vec_opt::<u16>(&window, &options)
                .unwrap_or_else(|e| panic!("{window:?}: written, then: {e}"));
            assert_eq!(back, new, "{window:?}: read back after the write");
            WRITES_DONE.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => {
            let message = e.to_string();
            assert!(touches, "{window:?}: write: {message}");
            assert!(message.contains("c/0/0"), "{window:?}: write: {message}");
            WRITES_REFUSED.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// A window of the array from the input: its rows and columns.
fn draw_window(u: &mut Unstructured) -> arbitrary::Result<(Range<u64>, Range<u64>)> {
    let r0 = u.int_in_range(0..=SHAPE[0] - 1)?;
    let c0 = u.int_in_range(0..=SHAPE[1] - 1)?;
    let r1 = u.int_in_range(r0 + 1..=SHAPE[0])?;
    let c1 = u.int_in_range(c0 + 1..=SHAPE[1])?;
    Ok((r0..r1, c0..c1))
}

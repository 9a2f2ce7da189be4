//! zstd, when it is the only bytes->bytes codec of a fused chain (feature
//! `zstd`): the frames are decompressed by a context kept per thread,
//! straight into the output where the window is the whole chunk laid out as
//! one run of the output (a `bytes`-only chain in native order: the
//! decompressed bytes are the values), else into a buffer kept per thread.
//!
//! zarrs' zstd codec makes a new context and a new chunk-sized buffer for
//! each chunk, and the fused path then copies that buffer into the output.
//! For a window of one 512 KiB chunk that copy, the buffer and the context
//! are a fifth of the read beside the decompression, and the buffer's half
//! MiB pushes the caller's own data out of the core's cache.
//!
//! The bytes decompressed are the same: libzstd decompresses every frame
//! of the input (checking each frame's checksum where it has one, and
//! skipping skippable frames), as in zarrs' codec; a frame that
//! decompresses to more than the chunk holds is an error before anything
//! past the chunk is written, one that decompresses to less an error after.
//! Straight into the output, a damaged chunk may leave part of its bytes
//! there beside the error (a read that fails may have written part of its
//! output, as the engine says of every error).
//!
//! This runs libzstd on the bytes zarrs' `ZstdCodec` would decode (the
//! codec is recognised by its type, and has no call that decodes into a
//! caller's buffer): a zarrs that changed what its codec does with them
//! would need the same change here.
//!
//! What a thread keeps: a decompression context (about 100 KiB) and a
//! buffer of at most [`KEPT_BUFFER`] (1 MiB, the decoded size of a 512 x
//! 1024 `uint16` chunk; larger chunks get a buffer of their own, freed
//! after them).

use std::cell::RefCell;

use zarrs::array::codec::ZstdCodec;
use zarrs::array::codec::api::{BytesToBytesCodecTraits, CodecError};

/// A buffer of at most this many bytes is kept for the thread's next chunk;
/// a larger one is freed after its chunk (a thread that decoded one large
/// chunk would otherwise hold it for as long as it lives).
const KEPT_BUFFER: usize = 1 << 20;

thread_local! {
    static CONTEXT: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Whether `codec` is zarrs' zstd codec (and not one registered under its
/// name by someone else).
pub(super) fn is_zstd(codec: &dyn BytesToBytesCodecTraits) -> bool {
    codec.as_any().downcast_ref::<ZstdCodec>().is_some()
}

/// Decompress `encoded` into `dst`, which it must fill exactly.
///
/// # Errors
/// If the frames do not decompress, or not to `dst.len()` bytes.
pub(super) fn decompress_into(encoded: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let written = with_context(|context| context.decompress_to_buffer(encoded, dst))
        .map_err(|e| error(&e))?;
    exactly(written, dst.len())
}

/// `f` of `encoded` decompressed (`expected` bytes, else an error), in the
/// thread's buffer.
///
/// # Errors
/// If the frames do not decompress, or not to `expected` bytes.
pub(super) fn with_decompressed<R>(
    encoded: &[u8],
    expected: usize,
    f: impl FnOnce(&[u8]) -> Result<R, CodecError>,
) -> Result<R, CodecError> {
    let run = |buffer: &mut Vec<u8>| {
        buffer.clear();
        buffer
            .try_reserve_exact(expected)
            .map_err(|e| CodecError::Other(format!("zstd: {expected} bytes: {e}")))?;
        // Into the buffer's capacity: a frame that decompresses to more
        // than that is an error, and `len` becomes what was written.
        let written = with_context(|context| context.decompress_to_buffer(encoded, buffer))
            .map_err(|e| error(&e))?;
        exactly(written, expected)?;
        f(buffer)
    };
    // A decode nested on this thread while its buffer is in use (rayon runs
    // other tasks while it waits for a part of this chunk) takes a buffer
    // of its own.
    BUFFER.with(|kept| match kept.try_borrow_mut() {
        Ok(mut buffer) => {
            let result = run(&mut buffer);
            if buffer.capacity() > KEPT_BUFFER {
                *buffer = Vec::new();
            }
            result
        }
        Err(_) => run(&mut Vec::new()),
    })
}

/// `f` with the thread's decompression context (made at first use; a new
/// one for a decode nested on this thread while its context is in use).
fn with_context<R>(
    f: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> std::io::Result<R>,
) -> std::io::Result<R> {
    CONTEXT.with(|kept| match kept.try_borrow_mut() {
        Ok(mut context) => {
            let context = match &mut *context {
                Some(context) => context,
                empty => empty.insert(zstd::bulk::Decompressor::new()?),
            };
            f(context)
        }
        Err(_) => f(&mut zstd::bulk::Decompressor::new()?),
    })
}

fn exactly(written: usize, expected: usize) -> Result<(), CodecError> {
    if written == expected {
        Ok(())
    } else {
        Err(CodecError::Other(format!(
            "zstd: the chunk decompresses to {written} bytes, where it holds {expected}"
        )))
    }
}

fn error(e: &std::io::Error) -> CodecError {
    CodecError::Other(format!("zstd: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(data: &[u8]) -> Vec<u8> {
        zstd::bulk::compress(data, 3).unwrap()
    }

    #[test]
    fn decompresses_into_a_buffer_it_fills() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let encoded = frame(&data);
        let mut out = vec![0u8; data.len()];
        decompress_into(&encoded, &mut out).unwrap();
        assert_eq!(out, data);
        // Twice: the thread's context is used again.
        out.fill(0);
        decompress_into(&encoded, &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn every_frame_is_decompressed() {
        let mut encoded = frame(b"abc");
        encoded.extend(frame(b"defg"));
        let mut out = [0u8; 7];
        decompress_into(&encoded, &mut out).unwrap();
        assert_eq!(&out, b"abcdefg");
        let got = with_decompressed(&encoded, 7, |bytes| Ok(bytes.to_vec())).unwrap();
        assert_eq!(got, b"abcdefg");
    }

    #[test]
    fn a_size_other_than_the_chunks_is_an_error() {
        let encoded = frame(&[7u8; 1000]);
        let mut short = vec![0u8; 999];
        let e = decompress_into(&encoded, &mut short).unwrap_err();
        assert!(e.to_string().starts_with("zstd: "), "{e}");
        let mut long = vec![0u8; 1001];
        let e = decompress_into(&encoded, &mut long).unwrap_err();
        assert!(
            e.to_string().contains("1000 bytes, where it holds 1001"),
            "{e}"
        );
        let e = with_decompressed(&encoded, 999, |_| Ok(())).unwrap_err();
        assert!(e.to_string().starts_with("zstd: "), "{e}");
        let e = with_decompressed(&encoded, 1001, |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("where it holds 1001"), "{e}");
    }

    #[test]
    fn garbage_and_nothing_are_errors() {
        let mut out = [0u8; 4];
        assert!(decompress_into(b"not zstd", &mut out).is_err());
        assert!(decompress_into(&[], &mut out).is_err());
        let mut encoded = frame(b"abcd");
        let last = encoded.len() - 1;
        encoded.truncate(last);
        assert!(decompress_into(&encoded, &mut out).is_err());
        assert!(with_decompressed(&encoded, 4, |_| Ok(())).is_err());
    }

    #[test]
    fn a_nested_decode_gets_a_buffer_of_its_own() {
        let outer = frame(b"outer");
        let inner = frame(b"inner!");
        let got = with_decompressed(&outer, 5, |a| {
            let b = with_decompressed(&inner, 6, |b| Ok(b.to_vec()))?;
            Ok((a.to_vec(), b))
        })
        .unwrap();
        assert_eq!(got, (b"outer".to_vec(), b"inner!".to_vec()));
    }

    #[test]
    fn a_large_buffer_is_not_kept() {
        let size = KEPT_BUFFER + 1;
        let encoded = frame(&vec![1u8; size]);
        with_decompressed(&encoded, size, |bytes| {
            assert_eq!(bytes.len(), size);
            Ok(())
        })
        .unwrap();
        BUFFER.with(|b| assert!(b.borrow().capacity() <= KEPT_BUFFER));
    }
}

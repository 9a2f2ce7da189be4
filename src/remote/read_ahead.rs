//! Shards read whole with their index
//! ([`RemoteOptions::shard_read_ahead_bytes`](super::RemoteOptions::shard_read_ahead_bytes)),
//! held for the one call that reads their inner chunks next.
//!
//! A shard is held from the read of its index until the next call of any
//! kind on its key, which takes it: a call for inner chunks that asks for
//! the index range too (the read engine's, which checks that range against
//! the index it used) is answered from it with no request; any other call
//! drops it and goes to the server. So held bytes answer only the call
//! that follows the index read they came with, never a later read of the
//! shard (which starts by reading the index again: kept, with its version,
//! or fetched), and a shard rewritten meanwhile is seen as with no read-ahead.
//! With two readers of one shard at once, that next call may be the other
//! reader's chunk call: it is answered from these bytes only as far as its
//! index range equals the index that reader used (the engine's check), so
//! its chunks sit at the offsets it used; zarrs' own reads never ask for
//! the index range with their chunks, so they are never answered from here.

use std::collections::{HashMap, VecDeque};

use zarrs::storage::Bytes;
use zarrs::storage::byte_range::ByteRange;

use super::reader::shown_range;

/// A whole shard, and the range of its index it was read for.
pub(crate) struct Whole {
    index_range: ByteRange,
    bytes: Bytes,
}

impl Whole {
    /// The bytes of each of `ranges`, if one of them is the index range the
    /// shard was read for (a call for inner chunks that checks the index);
    /// `None` otherwise. `Err` names the first range that does not lie
    /// inside the shard.
    pub(crate) fn answer(&self, ranges: &[ByteRange]) -> Option<Result<Vec<Bytes>, String>> {
        if !ranges.contains(&self.index_range) {
            return None;
        }
        let len = self.bytes.len() as u64;
        Some(
            ranges
                .iter()
                .map(|&range| {
                    let (start, end) = match range {
                        ByteRange::FromStart(start, Some(n)) => (start, start.checked_add(n)),
                        ByteRange::FromStart(start, None) => (start, Some(len)),
                        ByteRange::Suffix(n) => (len.saturating_sub(n), (n <= len).then_some(len)),
                    };
                    match end {
                        Some(end) if start <= end && end <= len => {
                            Ok(self.bytes.slice(start as usize..end as usize))
                        }
                        _ => Err(format!(
                            "byte range {} lies past the end of the shard ({len} bytes, read whole with its index)",
                            shown_range(range)
                        )),
                    }
                })
                .collect(),
        )
    }
}

/// Whole shards held, by key, within a limit of bytes (oldest dropped
/// first: a call for its chunks then goes to the server), and the index
/// reads under way that may hold what they read.
pub(crate) struct ReadAhead {
    limit: usize,
    bytes: usize,
    held: HashMap<String, Whole>,
    order: VecDeque<String>,
    /// The ticket of the index read of each key that may still hold its
    /// shard: the last one begun, until another call on the key.
    in_flight: HashMap<String, u64>,
    tickets: u64,
}

impl ReadAhead {
    /// Nothing held, at most `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            bytes: 0,
            held: HashMap::new(),
            order: VecDeque::new(),
            in_flight: HashMap::new(),
            tickets: 0,
        }
    }

    /// An index read of `key` that reads ahead begins: what is held of the
    /// key is dropped; the ticket [`finish`](Self::finish) needs.
    pub(crate) fn begin(&mut self, key: &str) -> u64 {
        self.take(key);
        self.tickets += 1;
        self.in_flight.insert(key.to_string(), self.tickets);
        self.tickets
    }

    /// The index read `ticket` of `key` ended: hold `whole` (the shard,
    /// read whole, and the range of its index) if no other call on the key
    /// came since it began. One that did may have read a newer version of
    /// the shard (another reader's index read, answered after a rewrite,
    /// before this slower answer came): this older answer must not be the
    /// one its call for chunks gets.
    pub(crate) fn finish(&mut self, key: &str, ticket: u64, whole: Option<(ByteRange, Bytes)>) {
        if self.in_flight.get(key) != Some(&ticket) {
            return;
        }
        self.in_flight.remove(key);
        let Some((index_range, bytes)) = whole else {
            return;
        };
        if bytes.len() > self.limit {
            return;
        }
        while self.bytes + bytes.len() > self.limit {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            self.drop_held(&oldest);
        }
        self.bytes += bytes.len();
        self.order.push_back(key.to_string());
        self.held
            .insert(key.to_string(), Whole { index_range, bytes });
    }

    /// What is held of `key`, no longer held; an index read of the key
    /// under way will not hold what it reads (see [`finish`](Self::finish)).
    pub(crate) fn take(&mut self, key: &str) -> Option<Whole> {
        self.in_flight.remove(key);
        self.drop_held(key)
    }

    fn drop_held(&mut self, key: &str) -> Option<Whole> {
        let whole = self.held.remove(key)?;
        self.bytes -= whole.bytes.len();
        if let Some(at) = self.order.iter().position(|k| k == key) {
            self.order.remove(at);
        }
        Some(whole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard() -> Bytes {
        Bytes::from((0u8..100).collect::<Vec<_>>())
    }

    #[test]
    fn answers_only_a_call_that_asks_for_the_index_range() {
        let whole = Whole {
            index_range: ByteRange::Suffix(20),
            bytes: shard(),
        };
        assert!(whole.answer(&[ByteRange::FromStart(0, Some(4))]).is_none());
        let got = whole
            .answer(&[
                ByteRange::Suffix(20),
                ByteRange::FromStart(10, Some(5)),
                ByteRange::FromStart(95, None),
            ])
            .unwrap()
            .unwrap();
        assert_eq!(got[0].as_ref(), &(80u8..100).collect::<Vec<_>>()[..]);
        assert_eq!(got[1].as_ref(), &[10, 11, 12, 13, 14]);
        assert_eq!(got[2].as_ref(), &[95, 96, 97, 98, 99]);
    }

    #[test]
    fn a_range_past_the_shard_is_an_error() {
        let whole = Whole {
            index_range: ByteRange::Suffix(20),
            bytes: shard(),
        };
        for bad in [
            ByteRange::FromStart(90, Some(11)),
            ByteRange::FromStart(u64::MAX, Some(2)),
            ByteRange::FromStart(101, None),
            ByteRange::Suffix(101),
        ] {
            let error = whole
                .answer(&[ByteRange::Suffix(20), bad])
                .unwrap()
                .unwrap_err();
            assert!(
                error.contains("past the end of the shard (100 bytes"),
                "{error}"
            );
        }
    }

    /// Hold `shard()` as `key` through an index read begun and ended.
    fn hold(held: &mut ReadAhead, key: &str) {
        let ticket = held.begin(key);
        held.finish(key, ticket, Some((ByteRange::Suffix(20), shard())));
    }

    #[test]
    fn a_shard_is_taken_once_and_the_limit_holds() {
        let mut held = ReadAhead::new(250);
        hold(&mut held, "a");
        hold(&mut held, "b");
        assert!(held.take("a").is_some());
        assert!(held.take("a").is_none());
        hold(&mut held, "c");
        hold(&mut held, "d");
        // 300 bytes asked for, 250 allowed: the oldest ("b") went.
        assert!(held.take("b").is_none());
        assert!(held.take("c").is_some() && held.take("d").is_some());
        assert_eq!(held.bytes, 0);
        let ticket = held.begin("big");
        held.finish(
            "big",
            ticket,
            Some((ByteRange::Suffix(20), Bytes::from(vec![0u8; 251]))),
        );
        assert!(held.take("big").is_none());
        assert!(held.in_flight.is_empty());
    }

    /// Two index reads of one shard at once, the first answered last (it
    /// may be of an older version than the second, begun after a
    /// rewrite): the second's shard is the one held, and the first holds
    /// nothing. A call on the key between an index read's start and end
    /// likewise keeps it from holding.
    #[test]
    fn only_the_last_index_read_begun_holds_its_shard() {
        let mut held = ReadAhead::new(1000);
        let old = Bytes::from(vec![1u8; 100]);
        let new = Bytes::from(vec![2u8; 100]);
        let first = held.begin("s");
        let second = held.begin("s");
        held.finish("s", second, Some((ByteRange::Suffix(20), new.clone())));
        held.finish("s", first, Some((ByteRange::Suffix(20), old.clone())));
        let whole = held.take("s").unwrap();
        let got = whole.answer(&[ByteRange::FromStart(0, Some(1))]).is_none();
        assert!(got, "the call must ask for the index range");
        assert_eq!(
            whole.answer(&[ByteRange::Suffix(20)]).unwrap().unwrap()[0],
            new.slice(80..)
        );

        let ticket = held.begin("s");
        assert!(held.take("s").is_none());
        held.finish("s", ticket, Some((ByteRange::Suffix(20), old)));
        assert!(held.take("s").is_none());
        assert!(held.in_flight.is_empty());
        assert_eq!(held.bytes, 0);
    }
}

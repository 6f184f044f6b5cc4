//! A run of key-value pairs kept in a few large buffers, for bulk loads.
//!
//! A bulk load builds millions of small keys. Held as a `Vec<u8>` each, they
//! cost an allocation to build, a pointer chase per comparison while
//! sorting and a free each at the end — together most of a load's time.
//! A [`Run`] appends every pair, behind an 8-byte length header, to 4 MiB
//! blocks. Pairs pushed in key order (records by id, counters) are read
//! straight back from the blocks. Once a pair comes out of order, the run
//! makes a small fixed-size entry per pair and sorts those: each carries
//! the 16 bytes that follow the prefix all keys share (a graph id, say) as
//! one integer, so most comparisons are an integer compare and touch no key
//! bytes at all. A sort ends by copying the pairs into new blocks in key
//! order and dropping the entries, so every run is read the same way.
//!
//! An entry costs 32 bytes, more than most pairs (an edge's user id and
//! its internal id take about 25). So a run out of order sorts every
//! [`PART_PAIRS`] pairs it holds into a part of its own, kept in memory
//! with each key coded against the one before it (a few bytes a pair), and
//! frees the blocks and entries; reading the run merges the parts, as it
//! merges parts spilled to files.

use crate::{KvError, Result};
use std::cmp::Ordering;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

/// Where one pair lies in the blocks, with its sort prefix.
#[derive(Clone, Copy)]
struct Entry {
    /// Key bytes `[shared..shared + 16]`, big-endian, zero-padded: ordered
    /// as those bytes are, or tied.
    prefix: u128,
    /// The block (high 32 bits) and the offset of the key in it (low 32).
    at: u64,
    key_len: u32,
    value_len: u32,
}

/// Pairs go into blocks of this size (a larger pair gets a block of its
/// own): a growing run never copies what it holds, as one doubling
/// buffer would, touching fresh memory twice over.
const BLOCK: usize = 4 << 20;

/// Key length and value length, as two little-endian u32, before each pair.
const HEADER: usize = 8;

/// Key-value pairs in a few large blocks, pushed in any order and sorted
/// by key.
#[derive(Default)]
pub struct Run {
    blocks: Vec<Vec<u8>>,
    len: usize,
    /// The last pair pushed (its key's place and length), while every pair
    /// so far came in ascending order.
    last: Option<(u64, u32)>,
    /// One per pair, made once a pair came out of order; empty otherwise.
    entries: Vec<Entry>,
    out_of_order: bool,
    /// Pairs expected, to size the entries if they are made.
    expected: usize,
    /// Sorted parts, in files to bound memory (see `spill`) or packed in
    /// memory (see `PART_PAIRS`).
    spills: Vec<Spill>,
    /// Pairs out of order held before they are packed; `PART_PAIRS` when 0
    /// (tests set fewer).
    part_pairs: usize,
}

/// Pairs out of order a run holds before it packs them into a sorted part
/// of its own (entries for this many take 32 MiB).
pub const PART_PAIRS: usize = 1 << 20;

/// What [`Run::visit`] calls with each pair. Its error type is the
/// caller's (it holds a read error of the run too): `Err(None)` of an
/// `Option<KvError>`, say, stops a visit that found what it looked for.
pub type Visitor<'a, E> = dyn FnMut(&[u8], &[u8]) -> std::result::Result<(), E> + 'a;

/// A sorted part of a run, of `len` pairs.
struct Spill {
    at: Stored,
    len: usize,
}

enum Stored {
    /// In a file of its own: pairs behind their headers, as in a block.
    /// Removed when the run is dropped.
    File(PathBuf),
    /// In memory, each pair as the varints shared (bytes of the key before
    /// it), suffix length and value length, then the suffix and the value.
    Packed(Vec<u8>),
    /// A sorted run of its own, without parts (see [`Run::merged`]).
    Sorted(Run),
}

impl Drop for Run {
    fn drop(&mut self) {
        for s in &self.spills {
            if let Stored::File(path) = &s.at {
                // A file left behind is harmless; it lies in a scratch folder.
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

impl Run {
    pub fn new() -> Run {
        Run::default()
    }

    /// Appends a pair.
    pub fn push(&mut self, key: &[u8], value: &[u8]) {
        self.push_parts(&[key], value);
    }

    /// Appends a pair whose key is the concatenation of `key_parts`, without
    /// building it first.
    pub fn push_parts(&mut self, key_parts: &[&[u8]], value: &[u8]) {
        let key_len: usize = key_parts.iter().map(|p| p.len()).sum();
        let (header_at, block) = room(&mut self.blocks, HEADER + key_len + value.len());
        block.extend_from_slice(&(key_len as u32).to_le_bytes());
        block.extend_from_slice(&(value.len() as u32).to_le_bytes());
        for p in key_parts {
            block.extend_from_slice(p);
        }
        block.extend_from_slice(value);
        let at = header_at + HEADER as u64;
        let (key_len, value_len) = (key_len as u32, value.len() as u32);
        self.len += 1;
        if self.out_of_order {
            self.entries.push(Entry {
                prefix: 0,
                at,
                key_len,
                value_len,
            });
            if self.entries.len() >= self.part_pairs() {
                self.pack_part();
            }
            return;
        }
        let in_order = self.last.is_none_or(|(last_at, last_len)| {
            key_at(&self.blocks, last_at, last_len) <= key_at(&self.blocks, at, key_len)
        });
        if in_order {
            self.last = Some((at, key_len));
        } else {
            self.make_entries();
        }
    }

    /// One entry per pair, from the blocks: the run's order is lost.
    fn make_entries(&mut self) {
        self.out_of_order = true;
        self.last = None;
        let mut entries = Vec::with_capacity(self.expected.max(self.len).min(self.part_pairs()));
        for (bi, block) in self.blocks.iter().enumerate() {
            let mut pos = 0;
            while pos < block.len() {
                let (k, v) = header(block, pos);
                entries.push(Entry {
                    prefix: 0,
                    at: ((bi as u64) << 32) | (pos + HEADER) as u64,
                    key_len: k as u32,
                    value_len: v as u32,
                });
                pos += HEADER + k + v;
            }
        }
        self.entries = entries;
    }

    fn part_pairs(&self) -> usize {
        match self.part_pairs {
            0 => PART_PAIRS,
            n => n,
        }
    }

    /// Expects `pairs` pairs in all (sizes the entries, should the run need
    /// them).
    pub fn reserve(&mut self, pairs: usize) {
        self.expected = pairs;
    }

    /// Pairs held, in memory and in spilled parts.
    pub fn len(&self) -> usize {
        self.len + self.spills.iter().map(|s| s.len).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory the run holds (blocks, entries, packed parts).
    pub fn memory(&self) -> usize {
        let packed: usize = self
            .spills
            .iter()
            .map(|s| match &s.at {
                Stored::Packed(bytes) => bytes.capacity(),
                Stored::Sorted(run) => run.memory(),
                Stored::File(_) => 0,
            })
            .sum();
        self.blocks.iter().map(Vec::capacity).sum::<usize>()
            + self.entries.capacity() * std::mem::size_of::<Entry>()
            + packed
    }

    /// One run of the pairs of `runs`, each sorted and kept as it is, as
    /// parts of the new one: reading it merges them. Nothing is copied (two
    /// halves of a large run built apart need not be joined into a third).
    pub fn merged(runs: Vec<Run>) -> Run {
        let mut out = Run::new();
        for mut run in runs {
            run.sort();
            out.spills.append(&mut run.spills);
            if run.len > 0 {
                let len = std::mem::take(&mut run.len);
                let mut held = Run::new();
                std::mem::swap(&mut held.blocks, &mut run.blocks);
                held.len = len;
                out.spills.push(Spill {
                    at: Stored::Sorted(held),
                    len,
                });
            }
        }
        out
    }

    /// Sorts the pairs in memory into a packed part (see `Stored::Packed`)
    /// and frees their blocks and entries.
    fn pack_part(&mut self) {
        self.sort();
        let held: usize = self.blocks.iter().map(Vec::len).sum();
        // Most keys share most of their bytes with the one before.
        let mut bytes = Vec::with_capacity(held / 2);
        let mut prev: &[u8] = &[];
        for (k, v) in self.iter() {
            let shared = k.iter().zip(prev).take_while(|(a, b)| a == b).count();
            for n in [shared, k.len() - shared, v.len()] {
                put_varint(&mut bytes, n);
            }
            bytes.extend_from_slice(&k[shared..]);
            bytes.extend_from_slice(v);
            prev = k;
        }
        bytes.shrink_to_fit();
        self.spills.push(Spill {
            at: Stored::Packed(bytes),
            len: self.len,
        });
        self.clear_memory();
    }

    /// Forgets the pairs held in blocks (written to a part).
    fn clear_memory(&mut self) {
        self.blocks = Vec::new();
        self.len = 0;
        self.last = None;
    }

    /// Sorts the pairs in memory and writes them to a new file in `dir`,
    /// freeing their memory; pairs pushed later start a new part. Reading
    /// the run ([`Run::visit`]) merges the parts in key order.
    pub fn spill(&mut self, dir: &Path) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        self.sort();
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = dir.join(format!(
            "plexus-run-{}-{}.tmp",
            std::process::id(),
            NEXT.fetch_add(1, AtomicOrdering::Relaxed)
        ));
        let written = (|| -> std::io::Result<()> {
            let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
            for b in &self.blocks {
                out.write_all(b)?;
            }
            out.into_inner().map_err(|e| e.into_error())?.sync_data()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&path);
            return Err(e.into());
        }
        self.spills.push(Spill {
            at: Stored::File(path),
            len: self.len,
        });
        self.clear_memory();
        Ok(())
    }

    /// Calls `f` with every pair in key order once sorted (in the order
    /// pushed before, if nothing was spilled), merging spilled parts. Stops
    /// at the first error, of reading or of `f`.
    pub fn visit<E: From<KvError>>(&self, f: &mut Visitor<'_, E>) -> std::result::Result<(), E> {
        if self.spills.is_empty() {
            return self.iter().try_for_each(|(k, v)| f(k, v));
        }
        let mut parts: Vec<Part<'_>> = Vec::with_capacity(self.spills.len() + 1);
        for s in &self.spills {
            let mut p = match &s.at {
                Stored::File(path) => Part::File {
                    reader: std::io::BufReader::with_capacity(
                        1 << 16,
                        std::fs::File::open(path).map_err(KvError::from)?,
                    ),
                    pair: Vec::new(),
                    key_len: 0,
                    done: false,
                },
                Stored::Packed(bytes) => Part::Packed {
                    bytes,
                    key: Vec::new(),
                    value: None,
                },
                Stored::Sorted(run) => Part::Memory(run.iter(), None),
            };
            p.advance()?;
            parts.push(p);
        }
        let mut memory = Part::Memory(self.iter(), None);
        memory.advance()?;
        parts.push(memory);
        // A handful of parts: the smallest head is found by a scan.
        loop {
            let mut best: Option<usize> = None;
            for (i, p) in parts.iter().enumerate() {
                if let Some(k) = p.key() {
                    if best.is_none_or(|b| parts[b].key().is_some_and(|bk| k < bk)) {
                        best = Some(i);
                    }
                }
            }
            let Some(i) = best else {
                return Ok(());
            };
            if let Some((k, v)) = parts[i].pair() {
                f(k, v)?;
            }
            parts[i].advance()?;
        }
    }

    fn pair_of(&self, e: &Entry) -> (&[u8], &[u8]) {
        let block = &self.blocks[(e.at >> 32) as usize];
        let o = e.at as u32 as usize;
        let k = o + e.key_len as usize;
        (&block[o..k], &block[k..k + e.value_len as usize])
    }

    /// The pairs, in key order once sorted (in the order pushed before).
    pub fn iter(&self) -> Pairs<'_> {
        Pairs(if self.out_of_order {
            Walk::Entries(self, self.entries.iter())
        } else {
            Walk::Blocks {
                blocks: &self.blocks,
                block: 0,
                pos: 0,
            }
        })
    }

    /// Sorts the pairs by key (pairs with equal keys keep no particular order).
    pub fn sort(&mut self) {
        if !self.out_of_order {
            return;
        }
        // The prefix every key shares adds nothing to a comparison: the
        // integer prefix starts after it.
        let blocks = &self.blocks;
        let first = entry_key(blocks, &self.entries[0]).to_vec();
        let shared = self.entries.iter().fold(first.len(), |n, e| {
            let k = entry_key(blocks, e);
            k.iter()
                .zip(&first[..n])
                .take_while(|(a, b)| a == b)
                .count()
        });
        for e in &mut self.entries {
            let key = &entry_key(blocks, e)[shared..];
            let mut b = [0u8; 16];
            let n = key.len().min(16);
            b[..n].copy_from_slice(&key[..n]);
            e.prefix = u128::from_be_bytes(b);
        }
        let rest = |e: &Entry| {
            let k = entry_key(blocks, e);
            &k[(shared + 16).min(k.len())..]
        };
        let cmp = |a: &Entry, b: &Entry| -> Ordering {
            // Equal prefixes: either key may end inside them (then the
            // shorter sorts first, as zero padding ties with real zeros).
            a.prefix
                .cmp(&b.prefix)
                .then_with(|| rest(a).cmp(rest(b)))
                .then_with(|| a.key_len.cmp(&b.key_len))
        };
        self.entries.sort_unstable_by(cmp);
        self.compact();
    }

    /// Copies the pairs into new blocks in key order and drops the
    /// entries. After a sort the pairs lie scattered: every later pass over
    /// them (the backend's write, counting degrees) would miss the cache at
    /// each pair, one miss at a time, while this copy's independent reads
    /// overlap.
    fn compact(&mut self) {
        let total: usize = self.blocks.iter().map(Vec::len).sum();
        let mut blocks: Vec<Vec<u8>> = Vec::with_capacity(total / BLOCK + 1);
        for e in &self.entries {
            let o = e.at as u32 as usize - HEADER;
            let need = HEADER + (e.key_len + e.value_len) as usize;
            let pair = &self.blocks[(e.at >> 32) as usize][o..o + need];
            room(&mut blocks, need).1.extend_from_slice(pair);
        }
        self.blocks = blocks;
        self.entries = Vec::new();
        self.out_of_order = false;
        self.last = None;
    }

    /// Whether the run lies in sorted parts, in files or packed in memory:
    /// then only `visit` reads all of it (`iter` gives the pairs held
    /// outside the parts).
    pub fn parted(&self) -> bool {
        !self.spills.is_empty()
    }

    /// Whether parts of the run lie in files.
    pub fn spilled(&self) -> bool {
        self.spills.iter().any(|s| matches!(s.at, Stored::File(_)))
    }

    /// The first key `visit` gives.
    pub fn first_key(&self) -> Result<Option<Vec<u8>>> {
        let mut first = None;
        let found = self.visit(&mut |k, _| {
            first = Some(k.to_vec());
            Err(None)
        });
        stopped(found).map(|()| first)
    }

    /// Fails unless the keys are strictly ascending (sorted, no duplicates).
    pub fn check_sorted(&self) -> Result<()> {
        match self.first_out_of_order()? {
            None => Ok(()),
            Some(_) => Err(KvError::NotSorted),
        }
    }

    /// The first key that appears twice in a row: sorted runs must not hold
    /// duplicates, and callers name the clash.
    pub fn first_duplicate(&self) -> Result<Option<Vec<u8>>> {
        Ok(self
            .first_out_of_order()?
            .filter(|(prev, k)| prev == k)
            .map(|(_, k)| k))
    }

    /// The first two neighbours not strictly ascending.
    fn first_out_of_order(&self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if self.spills.is_empty() {
            // In memory: neighbours compared in place, nothing copied.
            let mut keys = self.iter().map(|(k, _)| k);
            let Some(mut prev) = keys.next() else {
                return Ok(None);
            };
            for k in keys {
                if prev >= k {
                    return Ok(Some((prev.to_vec(), k.to_vec())));
                }
                prev = k;
            }
            return Ok(None);
        }
        let mut prev: Vec<u8> = Vec::new();
        let mut first = true;
        let mut found = None;
        let visited = self.visit(&mut |k, _| {
            if !first && prev.as_slice() >= k {
                found = Some((prev.clone(), k.to_vec()));
                return Err(None);
            }
            first = false;
            prev.clear();
            prev.extend_from_slice(k);
            Ok(())
        });
        stopped(visited).map(|()| found)
    }
}

/// A visit's outcome when `Err(None)` stopped it on purpose: success.
fn stopped(visited: std::result::Result<(), Option<KvError>>) -> Result<()> {
    match visited {
        Ok(()) | Err(None) => Ok(()),
        Err(Some(e)) => Err(e),
    }
}

/// The pairs of a run, in order.
pub struct Pairs<'a>(Walk<'a>);

enum Walk<'a> {
    /// Straight from the blocks (a run pushed in order, or sorted).
    Blocks {
        blocks: &'a [Vec<u8>],
        block: usize,
        pos: usize,
    },
    /// Through the entries (a run pushed out of order, not yet sorted).
    Entries(&'a Run, std::slice::Iter<'a, Entry>),
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Walk::Entries(run, entries) => entries.next().map(|e| run.pair_of(e)),
            Walk::Blocks { blocks, block, pos } => loop {
                let b = blocks.get(*block)?;
                if *pos >= b.len() {
                    *block += 1;
                    *pos = 0;
                    continue;
                }
                let (k, v) = header(b, *pos);
                let key = *pos + HEADER;
                *pos = key + k + v;
                return Some((&b[key..key + k], &b[key + k..key + k + v]));
            },
        }
    }
}

/// One sorted part of a run being merged, with its current pair.
enum Part<'a> {
    File {
        reader: std::io::BufReader<std::fs::File>,
        pair: Vec<u8>,
        key_len: usize,
        done: bool,
    },
    Memory(Pairs<'a>, Option<(&'a [u8], &'a [u8])>),
    /// A packed part: what is left of it, and its current key and value.
    Packed {
        bytes: &'a [u8],
        key: Vec<u8>,
        value: Option<&'a [u8]>,
    },
}

impl Part<'_> {
    fn advance(&mut self) -> Result<()> {
        match self {
            Part::Memory(pairs, head) => *head = pairs.next(),
            Part::Packed { bytes, key, value } => {
                if bytes.is_empty() {
                    *value = None;
                    return Ok(());
                }
                // The run wrote these bytes itself; a bad one is a bug, but
                // reported, not a panic.
                let bad = || KvError::Corrupt("a packed part of a sorted run".into());
                let shared = take_varint(bytes).ok_or_else(bad)?;
                let suffix = take_varint(bytes).ok_or_else(bad)?;
                let len = take_varint(bytes).ok_or_else(bad)?;
                if shared > key.len() || suffix.saturating_add(len) > bytes.len() {
                    return Err(bad());
                }
                key.truncate(shared);
                key.extend_from_slice(&bytes[..suffix]);
                let (v, rest) = bytes[suffix..].split_at(len);
                *value = Some(v);
                *bytes = rest;
            }
            Part::File {
                reader,
                pair,
                key_len,
                done,
            } => {
                let mut h = [0u8; HEADER];
                match reader.read_exact(&mut h) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                        *done = true;
                        return Ok(());
                    }
                    Err(e) => return Err(e.into()),
                }
                let (k, v) = header(&h, 0);
                pair.resize(k + v, 0);
                reader.read_exact(pair)?;
                *key_len = k;
            }
        }
        Ok(())
    }

    fn pair(&self) -> Option<(&[u8], &[u8])> {
        match self {
            Part::Memory(_, head) => *head,
            Part::Packed { key, value, .. } => value.map(|v| (key.as_slice(), v)),
            Part::File {
                pair,
                key_len,
                done,
                ..
            } => (!done).then(|| pair.split_at(*key_len)),
        }
    }

    fn key(&self) -> Option<&[u8]> {
        self.pair().map(|(k, _)| k)
    }
}

fn put_varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Reads a varint off the front of `bytes`; `None` when it is cut short or
/// too long.
fn take_varint(bytes: &mut &[u8]) -> Option<usize> {
    let mut n = 0usize;
    for (i, b) in bytes.iter().enumerate().take(10) {
        n |= usize::from(b & 0x7F).checked_shl(7 * i as u32)?;
        if b & 0x80 == 0 {
            *bytes = &bytes[i + 1..];
            return Some(n);
        }
    }
    None
}

/// The key and value lengths in the header at `pos`.
fn header(block: &[u8], pos: usize) -> (usize, usize) {
    let word = |i: usize| {
        let mut b = [0u8; 4];
        b.copy_from_slice(&block[i..i + 4]);
        u32::from_le_bytes(b) as usize
    };
    (word(pos), word(pos + 4))
}

/// The last block, or a new one when `need` more bytes do not fit it,
/// and where those bytes will start (block and offset, as `Entry::at`).
fn room(blocks: &mut Vec<Vec<u8>>, need: usize) -> (u64, &mut Vec<u8>) {
    if blocks.last().is_none_or(|b| b.capacity() - b.len() < need) {
        blocks.push(Vec::with_capacity(need.max(BLOCK)));
    }
    let index = blocks.len() - 1;
    let block = &mut blocks[index];
    (((index as u64) << 32) | block.len() as u64, block)
}

fn key_at(blocks: &[Vec<u8>], at: u64, len: u32) -> &[u8] {
    let o = at as u32 as usize;
    &blocks[(at >> 32) as usize][o..o + len as usize]
}

fn entry_key<'a>(blocks: &'a [Vec<u8>], e: &Entry) -> &'a [u8] {
    key_at(blocks, e.at, e.key_len)
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Run({} pairs)", self.len())
    }
}

impl FromIterator<(Vec<u8>, Vec<u8>)> for Run {
    fn from_iter<I: IntoIterator<Item = (Vec<u8>, Vec<u8>)>>(pairs: I) -> Run {
        let mut run = Run::new();
        for (k, v) in pairs {
            run.push(&k, &v);
        }
        run
    }
}

#[cfg(test)]
mod tests {
    use super::Run;

    /// Pseudo-random keys of assorted lengths sharing assorted prefixes:
    /// the run sorts them as a plain sort of the byte strings does.
    #[test]
    fn sorts_as_bytes_do() {
        let mut x = 0x2545F4914F6CDD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for shared in [0usize, 3, 4, 20] {
            let mut keys: Vec<Vec<u8>> = (0..2000)
                .map(|_| {
                    let len = (next() % 30) as usize;
                    let mut k = vec![7u8; shared];
                    k.extend((0..len).map(|_| (next() % 3) as u8));
                    k
                })
                .collect();
            let mut run = Run::new();
            for (i, k) in keys.iter().enumerate() {
                run.push(k, &(i as u32).to_be_bytes());
            }
            run.sort();
            keys.sort();
            let got: Vec<Vec<u8>> = run.iter().map(|(k, _)| k.to_vec()).collect();
            assert_eq!(got, keys, "shared prefix {shared}");
            // Values travel with their keys.
            for (k, v) in run.iter() {
                let i = u32::from_be_bytes(v.try_into().unwrap()) as usize;
                assert!(keys.binary_search(&k.to_vec()).is_ok());
                assert!(i < 2000);
            }
            assert_eq!(
                run.check_sorted().is_ok(),
                run.first_duplicate().unwrap().is_none()
            );
            assert_eq!(run.len(), 2000);
        }
    }

    /// Thousands of pairs in order (read straight from the blocks, across
    /// several), then one out of order: the entries are made from the
    /// blocks, and the sort still puts every pair in its place.
    #[test]
    fn in_order_then_out_of_order() {
        let big = vec![7u8; 3000];
        let mut run = Run::new();
        for i in 0..3000u32 {
            run.push(&(i * 2 + 1).to_be_bytes(), &big[..(i as usize % 3000)]);
        }
        assert!(run.check_sorted().is_ok());
        assert_eq!(run.iter().count(), 3000);
        assert!(run.blocks.len() > 1, "the pairs span blocks");
        run.push(&2u32.to_be_bytes(), b"late");
        run.sort();
        let keys: Vec<u32> = run
            .iter()
            .map(|(k, _)| u32::from_be_bytes(k.try_into().unwrap()))
            .collect();
        let mut want: Vec<u32> = (0..3000).map(|i| i * 2 + 1).collect();
        want.push(2);
        want.sort();
        assert_eq!(keys, want);
        let (_, v) = run.iter().find(|(k, _)| *k == 2u32.to_be_bytes()).unwrap();
        assert_eq!(v, b"late");
        // Equal keys in a row keep the run "in order", and are caught.
        let mut dup = Run::new();
        for k in [b"a", b"b", b"b"] {
            dup.push(k, b"");
        }
        assert!(dup.check_sorted().is_err());
        assert_eq!(dup.first_duplicate().unwrap(), Some(b"b".to_vec()));
    }

    /// Parts spilled to files at several points, some in order and some
    /// not, plus a part left in memory: a visit merges them in key order,
    /// the checks see across parts, and dropping the run removes the files.
    #[test]
    fn spilled_parts_merge_in_order() {
        let dir = std::env::temp_dir().join(format!("plexus-run-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut x = 0x9E3779B97F4A7C15u64;
        let mut run = Run::new();
        let mut want = Vec::new();
        for i in 0..5000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // A stretch in order, then random keys.
            let k = if i < 1000 { i } else { x % 1_000_000 + 1000 };
            run.push(&k.to_be_bytes(), &i.to_le_bytes());
            want.push(k);
            if i % 1300 == 1299 {
                run.spill(&dir).unwrap();
            }
        }
        run.sort();
        want.sort();
        let mut got = Vec::new();
        run.visit(&mut |k, v| -> crate::Result<()> {
            assert_eq!(v.len(), 8);
            got.push(u64::from_be_bytes(k.try_into().unwrap()));
            Ok(())
        })
        .unwrap();
        assert_eq!(got, want);
        assert_eq!(run.len(), 5000);
        let dup = want.windows(2).any(|w| w[0] == w[1]);
        assert_eq!(run.check_sorted().is_err(), dup);
        let files = || std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(files(), 3);
        // A key repeated across two parts is caught.
        let mut twice = Run::new();
        twice.push(b"k", b"");
        twice.spill(&dir).unwrap();
        twice.push(b"k", b"");
        assert_eq!(twice.first_duplicate().unwrap(), Some(b"k".to_vec()));
        drop((run, twice));
        assert_eq!(files(), 0, "spill files are removed with their run");
        std::fs::remove_dir(&dir).unwrap();
    }

    /// A run out of order packs every few pairs into a sorted part in
    /// memory; with a part spilled to a file and another run merged in, a
    /// visit still gives every pair in key order with its value, and the
    /// checks see across parts.
    #[test]
    fn packed_parts_merge_in_order() {
        let dir = std::env::temp_dir().join(format!("plexus-run-packed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut x = 0x2545F4914F6CDD1Du64;
        let mut run = Run::new();
        run.part_pairs = 700;
        let mut want = Vec::new();
        for i in 0..5000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Keys of assorted lengths that share prefixes of assorted lengths.
            let k = format!("id{}", x % 3_000_000).into_bytes();
            let v = i.to_le_bytes()[..(i % 9) as usize].to_vec();
            run.push(&k, &v);
            want.push((k, v));
            if i == 2500 {
                run.spill(&dir).unwrap();
            }
        }
        assert!(run.spills.len() >= 6, "{} parts", run.spills.len());
        assert!(run.parted() && run.spilled());
        let mut other = Run::new();
        for i in 0..300u64 {
            let k = format!("id{}", i * 10_007).into_bytes();
            other.push(&k, b"o");
            want.push((k, b"o".to_vec()));
        }
        let mut run = Run::merged(vec![run, other]);
        run.sort();
        want.sort();
        let mut got = Vec::new();
        run.visit(&mut |k, v| -> crate::Result<()> {
            got.push((k.to_vec(), v.to_vec()));
            Ok(())
        })
        .unwrap();
        // Equal keys may come in either order: compare as sorted pairs.
        got.sort();
        assert_eq!(got, want);
        assert_eq!(run.len(), 5300);
        let dup = want.windows(2).any(|w| w[0].0 == w[1].0);
        assert_eq!(run.first_duplicate().unwrap().is_some(), dup);
        assert!(run.memory() > 0);
        drop(run);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn parts_make_one_key() {
        let mut run = Run::new();
        run.push_parts(&[b"ab", b"c"], b"v");
        run.push(b"abb", b"");
        run.sort();
        let pairs: Vec<_> = run.iter().collect();
        assert_eq!(
            pairs,
            vec![(&b"abb"[..], &b""[..]), (&b"abc"[..], &b"v"[..])]
        );
        assert!(run.check_sorted().is_ok());
    }
}

//! A power cut can leave fjall's journal with a torn last page: the file
//! keeps its length, but the bytes the disk did not write read as zeros.
//! Opening must then keep every whole batch before the tear and drop the
//! torn one, at every byte the tear can start at — never panic.
//!
//! Kept from CI: a power cut tore an item's header between its value
//! length and its on-disk length, and fjall's `debug_assert_eq!` on the
//! two aborted the open in test builds (release builds skip the assert
//! and the batch's checksum drops the item). The workspace turns fjall's
//! debug assertions off; this test fails if they come back on.
#![cfg(feature = "fjall")]

use plexus_kv::{open, Backend, Ks, KvOptions, WriteBatch};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const A: Ks = Ks(0);
const BATCHES: u32 = 4;
const ITEMS: u32 = 4;

fn key(batch: u32, i: u32) -> Vec<u8> {
    format!("b{batch:02}-k{i:02}").into_bytes()
}

/// Writes `BATCHES` batches of `ITEMS` items each and closes the store.
fn write_batches(dir: &Path) {
    let s = open(Backend::Fjall, dir, &["a"], &KvOptions::default()).unwrap();
    for batch in 0..BATCHES {
        let mut b = WriteBatch::new();
        for i in 0..ITEMS {
            b.put(A, key(batch, i), vec![u8::try_from(i).unwrap(); 8]);
        }
        s.write(b).unwrap();
    }
}

fn journals(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "jnl") {
                out.push(p);
            }
        }
    }
    out
}

/// Copies a store, all but the file at `skip`.
fn copy_dir(from: &Path, to: &Path, skip: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target, skip);
        } else if e.path() != skip {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// How many batches the store holds whole; panics on a partial batch.
fn whole_batches(dir: &Path) -> u32 {
    let s = open(Backend::Fjall, dir, &["a"], &KvOptions::default()).unwrap();
    let snap = s.snapshot().unwrap();
    let mut whole = 0;
    for batch in 0..BATCHES {
        let present = (0..ITEMS)
            .filter(|&i| snap.get(A, &key(batch, i)).unwrap().is_some())
            .count();
        assert!(
            present == 0 || present == ITEMS as usize,
            "batch {batch} is torn: {present} of {ITEMS} items"
        );
        assert!(
            present == 0 || whole == batch,
            "batch {batch} survived after a lost one"
        );
        if present == ITEMS as usize {
            whole += 1;
        }
    }
    whole
}

#[test]
fn a_torn_journal_tail_keeps_the_whole_batches_before_it() {
    let src = tempfile::tempdir().unwrap();
    write_batches(src.path());
    let jnl = journals(src.path())
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .expect("fjall wrote a journal");
    let rel = jnl.strip_prefix(src.path()).unwrap().to_path_buf();
    let bytes = std::fs::read(&jnl).unwrap();
    assert_eq!(whole_batches(src.path()), BATCHES);

    // fjall may preallocate the file: the journal's bytes end at its last
    // non-zero byte (a batch ends with a fixed trailer). The last batch
    // and a few bytes of the one before span these; tear at each one.
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let span = end.min(60 * ITEMS as usize);
    let mut seen_loss = false;
    for at in end - span..end {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(src.path(), dir.path(), &jnl);
        // The same length, zeros from the tear on; past `end` the file
        // was zeros already, so a sparse extension reads the same.
        let mut torn = bytes[..end].to_vec();
        torn[at..].fill(0);
        let f = std::fs::File::create(dir.path().join(&rel)).unwrap();
        f.write_all_at(&torn, 0).unwrap();
        f.set_len(bytes.len() as u64).unwrap();
        let whole = whole_batches(dir.path());
        assert!(
            whole >= BATCHES - 2,
            "a tear at byte {at} of {end} lost earlier batches: {whole} whole"
        );
        seen_loss |= whole < BATCHES;
    }
    assert!(
        seen_loss,
        "no tear lost the last batch: the journal was not read"
    );
}

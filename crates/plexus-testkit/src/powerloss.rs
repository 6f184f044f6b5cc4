//! A disk that loses what was not synced: the log a writing process keeps of
//! every page it changes between syncs, and the power cut that puts those
//! pages back after the process is killed.
//!
//! A SIGKILL alone is a weak test of durability: the kernel keeps every
//! page the process wrote, synced or not, so a store that never syncs
//! passes it. A power cut loses the pages the kernel had not written yet.
//! `power_writer` (a test binary) interposes the C library's write and
//! sync calls: before a page of a file under the database folder is first
//! changed after that file's last sync, it appends the page's old bytes to
//! this log (raw system calls, so the log survives the kill); a sync ends
//! the file's pending epoch. After the kill, [`cut_power`] writes the old
//! bytes back — all of them, or a random subset (a disk that reorders
//! writes) — and cuts files back to their synced length, which is what a
//! disk could hold after losing power at that moment.
//!
//! What the model leaves out: directory entries (a created or renamed file
//! is kept even if its folder was never synced) and writes through shared
//! memory maps (LMDB writes with `pwrite`, fjall with `write`).

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The unit the disk loses or keeps.
pub const PAGE: u64 = 4096;

/// The environment variable naming the log; the writer tracks the folder
/// it is given as its database.
pub const LOG_ENV: &str = "PLEXUS_POWERLOSS_LOG";

/// A file identity that survives renames.
pub type Inode = (u64, u64);

/// One record of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// The first change to a file since its last sync: its length then.
    Epoch { file: Inode, len: u64 },
    /// A page's bytes before its first change in the epoch (shorter than a
    /// page where the file ended).
    Page {
        file: Inode,
        page: u64,
        old: Vec<u8>,
    },
    /// Pages written through a synchronous descriptor: durable at once.
    Durable { file: Inode, first: u64, last: u64 },
    /// The file was synced, or removed: nothing of it is pending.
    Synced { file: Inode },
    /// Every file was synced (`sync`, `syncfs`).
    SyncedAll,
}

const EPOCH: u8 = b'E';
const PAGE_TAG: u8 = b'P';
const DURABLE: u8 = b'K';
const SYNCED: u8 = b'S';
const SYNCED_ALL: u8 = b'A';

impl Record {
    /// The record's bytes in the log.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut head = |tag: u8, (dev, ino): Inode| {
            out.push(tag);
            out.extend_from_slice(&dev.to_le_bytes());
            out.extend_from_slice(&ino.to_le_bytes());
        };
        match self {
            Record::Epoch { file, len } => {
                head(EPOCH, *file);
                out.extend_from_slice(&len.to_le_bytes());
            }
            Record::Page { file, page, old } => {
                head(PAGE_TAG, *file);
                out.extend_from_slice(&page.to_le_bytes());
                // A page is at most `PAGE` bytes: the length fits in u32.
                out.extend_from_slice(&(old.len() as u32).to_le_bytes());
                out.extend_from_slice(old);
            }
            Record::Durable { file, first, last } => {
                head(DURABLE, *file);
                out.extend_from_slice(&first.to_le_bytes());
                out.extend_from_slice(&last.to_le_bytes());
            }
            Record::Synced { file } => head(SYNCED, *file),
            Record::SyncedAll => head(SYNCED_ALL, (0, 0)),
        }
        out
    }

    /// Reads the records of a log. A record cut short by the kill ends it:
    /// the write it announced never started.
    pub fn decode_all(mut bytes: &[u8]) -> Vec<Record> {
        let mut out = Vec::new();
        while let Some((r, rest)) = Self::decode(bytes) {
            out.push(r);
            bytes = rest;
        }
        out
    }

    fn decode(bytes: &[u8]) -> Option<(Record, &[u8])> {
        let (&tag, rest) = bytes.split_first()?;
        let (dev, rest) = take_u64(rest)?;
        let (ino, rest) = take_u64(rest)?;
        let file = (dev, ino);
        Some(match tag {
            EPOCH => {
                let (len, rest) = take_u64(rest)?;
                (Record::Epoch { file, len }, rest)
            }
            PAGE_TAG => {
                let (page, rest) = take_u64(rest)?;
                let (n, rest) = rest.split_first_chunk::<4>()?;
                let n = u32::from_le_bytes(*n) as usize;
                if n as u64 > PAGE || rest.len() < n {
                    return None;
                }
                let (old, rest) = rest.split_at(n);
                let old = old.to_vec();
                (Record::Page { file, page, old }, rest)
            }
            DURABLE => {
                let (first, rest) = take_u64(rest)?;
                let (last, rest) = take_u64(rest)?;
                (Record::Durable { file, first, last }, rest)
            }
            SYNCED => (Record::Synced { file }, rest),
            SYNCED_ALL => (Record::SyncedAll, rest),
            _ => return None,
        })
    }
}

fn take_u64(b: &[u8]) -> Option<(u64, &[u8])> {
    let (n, rest) = b.split_first_chunk::<8>()?;
    Some((u64::from_le_bytes(*n), rest))
}

/// How much of what was not synced the disk loses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// Every page changed since its file's last sync, and the length.
    All,
    /// Each such page with even odds, and the length with even odds: a disk
    /// that wrote some of the kernel's pages, in any order.
    Some,
}

/// What a power cut put back.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cut {
    /// Pages given their old bytes.
    pub pages: u64,
    /// Files cut back to their synced length.
    pub truncated: u64,
    /// The files changed, relative to the root.
    pub files: Vec<PathBuf>,
}

/// A file's unsynced changes: its synced length and its pages' old bytes.
#[derive(Debug, Default)]
struct Pending {
    len: u64,
    pages: BTreeMap<u64, Vec<u8>>,
}

/// The changes the log says were not synced when the writer died, by file.
fn pending(records: Vec<Record>) -> HashMap<Inode, Pending> {
    let mut files: HashMap<Inode, Pending> = HashMap::new();
    for r in records {
        match r {
            Record::Epoch { file, len } => {
                files.insert(
                    file,
                    Pending {
                        len,
                        ..Default::default()
                    },
                );
            }
            Record::Page { file, page, old } => {
                if let Some(p) = files.get_mut(&file) {
                    p.pages.entry(page).or_insert(old);
                }
            }
            Record::Durable { file, first, last } => {
                if let Some(p) = files.get_mut(&file) {
                    p.pages.retain(|page, _| !(first..=last).contains(page));
                }
            }
            Record::Synced { file } => {
                files.remove(&file);
            }
            Record::SyncedAll => files.clear(),
        }
    }
    files
}

/// Applies a power cut to the files under `root` as the log at `log`
/// describes, choosing with `coin` (called once per choice) under
/// [`Loss::Some`].
pub fn cut_power(
    log: &Path,
    root: &Path,
    loss: Loss,
    coin: &mut dyn FnMut() -> bool,
) -> io::Result<Cut> {
    let records = match std::fs::read(log) {
        Ok(b) => Record::decode_all(&b),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    let files = pending(records);
    let mut cut = Cut::default();
    for path in files_under(root)? {
        let meta = std::fs::metadata(&path)?;
        let Some(p) = files.get(&(meta.dev(), meta.ino())) else {
            continue;
        };
        let mut lose = |all: bool| all || coin();
        let f = std::fs::OpenOptions::new().write(true).open(&path)?;
        let size = meta.len();
        let before = (cut.pages, cut.truncated);
        for (page, old) in &p.pages {
            if !lose(loss == Loss::All) {
                continue;
            }
            let at = page.saturating_mul(PAGE);
            if at >= size {
                continue;
            }
            // Beyond the old bytes the page did not exist: a disk that
            // kept the new length but not the data shows zeros there.
            let end = (at + PAGE).min(size);
            let mut bytes = old.clone();
            bytes.resize((end - at) as usize, 0);
            f.write_all_at(&bytes, at)?;
            cut.pages += 1;
        }
        if size > p.len && lose(loss == Loss::All) {
            f.set_len(p.len)?;
            cut.truncated += 1;
        }
        f.sync_all()?;
        if (cut.pages, cut.truncated) != before {
            let name = path.strip_prefix(root).unwrap_or(&path);
            cut.files.push(name.to_path_buf());
        }
    }
    Ok(cut)
}

fn files_under(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            let t = e.file_type()?;
            if t.is_dir() {
                dirs.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(dir: &Path, records: &[Record]) -> PathBuf {
        let p = dir.join("log");
        let bytes: Vec<u8> = records.iter().flat_map(Record::encode).collect();
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn inode(p: &Path) -> Inode {
        let m = std::fs::metadata(p).unwrap();
        (m.dev(), m.ino())
    }

    #[test]
    fn records_round_trip_and_a_torn_tail_is_dropped() {
        let rs = vec![
            Record::Epoch {
                file: (1, 2),
                len: 10,
            },
            Record::Page {
                file: (1, 2),
                page: 3,
                old: vec![7; 100],
            },
            Record::Durable {
                file: (1, 2),
                first: 0,
                last: 1,
            },
            Record::Synced { file: (1, 2) },
            Record::SyncedAll,
        ];
        let bytes: Vec<u8> = rs.iter().flat_map(Record::encode).collect();
        assert_eq!(Record::decode_all(&bytes), rs);
        let torn = &bytes[..bytes.len() - 20];
        assert_eq!(Record::decode_all(torn), rs[..3].to_vec());
    }

    #[test]
    fn unsynced_pages_and_length_are_lost_and_synced_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("db");
        std::fs::create_dir(&root).unwrap();
        let (a, b) = (root.join("a"), root.join("b"));
        // a: one synced page, then a second page and a change to the first.
        std::fs::write(&a, [1u8; 4096 * 2]).unwrap();
        // b: written and synced.
        std::fs::write(&b, [9u8; 10]).unwrap();
        let (ia, ib) = (inode(&a), inode(&b));
        let l = log(
            dir.path(),
            &[
                Record::Epoch {
                    file: ia,
                    len: 4096,
                },
                Record::Page {
                    file: ia,
                    page: 0,
                    old: vec![5; 4096],
                },
                Record::Page {
                    file: ia,
                    page: 0,
                    old: vec![1; 4096],
                },
                Record::Page {
                    file: ia,
                    page: 1,
                    old: vec![],
                },
                Record::Epoch { file: ib, len: 0 },
                Record::Page {
                    file: ib,
                    page: 0,
                    old: vec![],
                },
                Record::Synced { file: ib },
            ],
        );
        let cut = cut_power(&l, &root, Loss::All, &mut || unreachable!()).unwrap();
        assert_eq!((cut.pages, cut.truncated), (2, 1));
        assert_eq!(cut.files, [PathBuf::from("a")]);
        // The first pre-image of the epoch wins.
        assert_eq!(std::fs::read(&a).unwrap(), vec![5u8; 4096]);
        assert_eq!(std::fs::read(&b).unwrap(), vec![9u8; 10]);
    }

    #[test]
    fn a_partial_loss_keeps_the_length_and_zeroes_lost_new_pages() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("db");
        std::fs::create_dir(&root).unwrap();
        let a = root.join("a");
        std::fs::write(&a, [1u8; 4096 + 100]).unwrap();
        let ia = inode(&a);
        let l = log(
            dir.path(),
            &[
                Record::Epoch {
                    file: ia,
                    len: 4000,
                },
                Record::Page {
                    file: ia,
                    page: 0,
                    old: vec![3; 4000],
                },
                Record::Page {
                    file: ia,
                    page: 1,
                    old: vec![],
                },
                Record::Durable {
                    file: ia,
                    first: 0,
                    last: 0,
                },
            ],
        );
        // Lose every page, keep the length.
        let mut coins = [true, false].into_iter();
        let cut = cut_power(&l, &root, Loss::Some, &mut || coins.next().unwrap()).unwrap();
        assert_eq!((cut.pages, cut.truncated), (1, 0));
        let mut want = vec![1u8; 4096];
        want.extend([0u8; 100]);
        assert_eq!(std::fs::read(&a).unwrap(), want, "page 0 was durable");
    }
}

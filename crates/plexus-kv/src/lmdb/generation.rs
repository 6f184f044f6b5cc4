//! Where an LMDB store's files live, and how a compaction replaces them.
//!
//! A store's folder holds one *generation*: an LMDB environment (its
//! `data.mdb` and `lock.mdb`). Generation 0 lies in the folder itself, as
//! every store began; generation `n` lies in the subfolder `gen-<n>`.
//! `CURRENT` names the live one (absent: 0). A compaction writes a compact
//! copy of the live generation into the next one's folder, syncs it, and
//! only then points `CURRENT` at it (written beside and renamed, so a crash
//! leaves either the old pointer or the new one, and the copy it names is
//! whole). A new folder per generation keeps the environments apart: LMDB
//! must not open one file twice in a process, and the old environment is
//! still read by snapshots taken before the swap.

use crate::{KvError, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file naming the live generation.
const CURRENT: &str = "CURRENT";

/// LMDB's two files of an environment.
const FILES: [&str; 2] = ["data.mdb", "lock.mdb"];

/// The folder of generation `n` of the store in `folder`.
pub(super) fn folder(store: &Path, n: u64) -> PathBuf {
    match n {
        0 => store.to_path_buf(),
        n => store.join(format!("gen-{n}")),
    }
}

/// The live generation of the store in `store` (0 when `CURRENT` is
/// absent, as in a store never compacted).
pub(super) fn current(store: &Path) -> Result<u64> {
    let path = store.join(CURRENT);
    match std::fs::read_to_string(&path) {
        Ok(text) => text.trim().parse().map_err(|_| KvError::Backend {
            backend: "lmdb",
            message: format!(
                "{} should name the store's live generation, but holds {:?}",
                path.display(),
                text.chars().take(40).collect::<String>()
            ),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(KvError::Io(e)),
    }
}

/// Points `CURRENT` at generation `n`, durably: written beside, synced,
/// renamed over the old pointer, and the folder synced.
pub(super) fn point_to(store: &Path, n: u64) -> Result<()> {
    let tmp = store.join("CURRENT.tmp");
    let mut f = std::fs::File::create(&tmp)?;
    writeln!(f, "{n}")?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, store.join(CURRENT))?;
    sync_folder(store)
}

/// An empty folder for generation `n` (a leftover of a compaction that
/// stopped is removed first).
pub(super) fn fresh(store: &Path, n: u64) -> Result<PathBuf> {
    let dir = folder(store, n);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Removes generation `n`'s files. Snapshots still open on it keep
/// reading: the files stay mapped until the environment closes.
pub(super) fn remove(store: &Path, n: u64) -> Result<()> {
    if n == 0 {
        for name in FILES {
            gone(std::fs::remove_file(store.join(name)))?;
        }
        return Ok(());
    }
    gone(std::fs::remove_dir_all(folder(store, n)))
}

/// A removal's outcome: what was missing already is removed.
fn gone(removed: std::io::Result<()>) -> Result<()> {
    match removed {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(KvError::Io(e)),
        _ => Ok(()),
    }
}

/// Removes every generation but `live`: what a compaction that stopped
/// (before or after its swap) left behind. Only the process that writes
/// the store may do this (it alone compacts).
pub(super) fn clear_others(store: &Path, live: u64) -> Result<()> {
    if live != 0 {
        remove(store, 0)?;
    }
    for entry in std::fs::read_dir(store)? {
        let name = entry?.file_name();
        let number = name
            .to_str()
            .and_then(|s| s.strip_prefix("gen-"))
            .and_then(|s| s.parse::<u64>().ok());
        if let Some(n) = number.filter(|&n| n != live && n != 0) {
            remove(store, n)?;
        }
    }
    Ok(())
}

fn sync_folder(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pointer_names_the_live_generation_and_leftovers_go() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = dir.path();
        assert_eq!(current(store).expect("read"), 0);
        std::fs::write(store.join("data.mdb"), b"old").expect("write");
        let g3 = fresh(store, 3).expect("fresh");
        std::fs::write(g3.join("data.mdb"), b"new").expect("write");
        fresh(store, 4).expect("an unfinished one");
        point_to(store, 3).expect("point");
        assert_eq!(current(store).expect("read"), 3);
        clear_others(store, 3).expect("clear");
        assert!(!store.join("data.mdb").exists());
        assert!(!folder(store, 4).exists());
        assert!(g3.join("data.mdb").exists());
    }

    #[test]
    fn a_damaged_pointer_is_an_error_that_names_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join(CURRENT), "x1").expect("write");
        let e = current(dir.path()).expect_err("damaged");
        assert!(e.to_string().contains("CURRENT"), "{e}");
    }
}

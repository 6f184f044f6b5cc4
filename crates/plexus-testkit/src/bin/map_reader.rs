//! A reader in another process, for the test of LMDB's map growth
//! (`tests/map_growth.rs`): opens the store at the path given read-only,
//! then for each line on standard input takes a new snapshot and prints
//! how many entries the first keyspace holds (or the error), until the
//! input ends.

use plexus_kv::{Backend, KeyRange, Ks, KvOptions};
use std::io::{BufRead, Write};

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: map_reader <lmdb folder>");
        return std::process::ExitCode::from(2);
    };
    let opts = KvOptions {
        read_only: true,
        // As small as the writer's first map: the file's own size wins.
        lmdb_initial_map_size: 1 << 20,
        ..KvOptions::default()
    };
    let kv = match plexus_kv::open(Backend::Lmdb, path.as_ref(), &["a"], &opts) {
        Ok(kv) => kv,
        Err(e) => {
            eprintln!("open: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
        let counted = kv.snapshot().and_then(|s| {
            let mut n = 0u64;
            s.visit(Ks(0), &KeyRange::all(), &mut |_, _| {
                n += 1;
                Ok(true)
            })?;
            Ok(n)
        });
        let said = match counted {
            Ok(n) => writeln!(out, "{n}"),
            Err(e) => writeln!(out, "error: {e}"),
        };
        if said.and_then(|()| out.flush()).is_err() {
            break;
        }
    }
    std::process::ExitCode::SUCCESS
}

//! LMDB's map growth seen from another process: a reader opened while the
//! writer's map was small keeps reading after the writer grows it past the
//! reader's map (LMDB answers the reader's next transaction with
//! `MDB_MAP_RESIZED` until it adopts the new size, which `plexus_kv` does).

use plexus_kv::{Backend, Ks, KvOptions, WriteBatch};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

#[test]
fn a_reader_in_another_process_follows_the_writers_map_growth() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv");
    let opts = KvOptions {
        lmdb_initial_map_size: 1 << 20,
        ..KvOptions::default()
    };
    let kv = plexus_kv::open(Backend::Lmdb, &path, &["a"], &opts).unwrap();
    let write = |from: u32, to: u32| {
        let mut b = WriteBatch::new();
        for i in from..to {
            // 4 KiB values: each entry fills a page of its own.
            b.put(Ks(0), i.to_be_bytes().to_vec(), vec![7u8; 4096]);
        }
        kv.write(b).unwrap();
    };
    write(0, 10);
    let map_before = std::fs::metadata(path.join("data.mdb"))
        .map(|m| m.len())
        .unwrap_or(0);

    let mut child = Command::new(env!("CARGO_BIN_EXE_map_reader"))
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_child = child.stdin.take().unwrap();
    let mut from_child = BufReader::new(child.stdout.take().unwrap());
    let mut ask = || -> String {
        writeln!(to_child, "count").unwrap();
        to_child.flush().unwrap();
        let mut line = String::new();
        from_child.read_line(&mut line).unwrap();
        line.trim().to_string()
    };
    assert_eq!(ask(), "10");

    // 16 MiB more: the 1 MiB map doubles several times in the writer.
    for k in 0..8 {
        write(10 + k * 512, 10 + (k + 1) * 512);
    }
    let grown = std::fs::metadata(path.join("data.mdb")).unwrap().len();
    assert!(
        grown > 8 * map_before.max(1 << 20),
        "the file grew: {grown} bytes"
    );
    assert_eq!(
        ask(),
        (10 + 8 * 512).to_string(),
        "the reader sees every commit"
    );
    write(10_000, 10_001);
    assert_eq!(ask(), (11 + 8 * 512).to_string());
    drop(to_child);
    assert!(child.wait().unwrap().success());
}

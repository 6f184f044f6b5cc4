//! One suite of behaviours every backend must have, run against each backend.

use plexus_kv::{open, Backend, KeyRange, Ks, KvOptions, KvStore, Run, ScanOptions, WriteBatch};
use std::ops::Bound;
use std::sync::Arc;

const A: Ks = Ks(0);
const B: Ks = Ks(1);

fn store(backend: Backend, dir: &tempfile::TempDir) -> Arc<dyn KvStore> {
    #[cfg(feature = "postgres")]
    if backend == Backend::Postgres {
        return postgres_store(dir);
    }
    open(backend, dir.path(), &["a", "b"], &KvOptions::default()).unwrap()
}

/// The server the test command started (`scripts/postgres`), named by
/// `PLEXUS_TEST_POSTGRES`; a store per test folder, in a schema named
/// after it, so that reopening the folder reopens the store.
#[cfg(feature = "postgres")]
fn postgres_store(dir: &tempfile::TempDir) -> Arc<dyn KvStore> {
    let url = std::env::var("PLEXUS_TEST_POSTGRES").expect(
        "PLEXUS_TEST_POSTGRES names no PostgreSQL server: run the tests with scripts/test, \
         which starts one (or start one and set it to its URL)",
    );
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in dir.path().as_os_str().as_encoded_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
    }
    let schema = format!("t_{}_{h:016x}", std::process::id());
    plexus_kv::open_postgres(&url, &schema, &["a", "b"], &KvOptions::default()).unwrap()
}

/// Options that open an existing store for reading only.
fn read_only() -> KvOptions {
    KvOptions {
        read_only: true,
        ..KvOptions::default()
    }
}

fn keys(s: &dyn KvStore, ks: Ks, range: KeyRange, opts: ScanOptions) -> Vec<Vec<u8>> {
    let snap = s.snapshot().unwrap();
    let out = snap.scan(ks, &range, opts).map(|r| r.unwrap().0).collect();
    out
}

fn put_all(s: &dyn KvStore, ks: Ks, ks_keys: &[&[u8]]) {
    let mut b = WriteBatch::new();
    for k in ks_keys {
        b.put(ks, k.to_vec(), k.to_vec());
    }
    s.write(b).unwrap();
}

fn basic_ops(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    put_all(&*s, A, &[b"k1", b"k2", b"k3"]);
    let snap = s.snapshot().unwrap();
    assert_eq!(snap.get(A, b"k2").unwrap(), Some(b"k2".to_vec()));
    assert_eq!(snap.get(B, b"k2").unwrap(), None, "keyspaces are separate");
    assert_eq!(
        snap.multi_get(A, &[b"k3", b"zz", b"k1"]).unwrap(),
        vec![Some(b"k3".to_vec()), None, Some(b"k1".to_vec())]
    );
    drop(snap);
    let mut b = WriteBatch::new();
    b.delete(A, b"k2".to_vec());
    b.put(A, b"k1".to_vec(), b"new".to_vec());
    s.write(b).unwrap();
    let snap = s.snapshot().unwrap();
    assert_eq!(snap.get(A, b"k2").unwrap(), None);
    assert_eq!(snap.get(A, b"k1").unwrap(), Some(b"new".to_vec()));
}

/// A batch whose keys lie before, among and past a keyspace's last key,
/// with a delete and a repeated put between them (the LMDB backend writes
/// the keys past the last one in append mode, the others by a search).
fn batches_past_the_last_key(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    put_all(&*s, A, &[b"m1", b"m3", b"m5"]);
    let mut b = WriteBatch::new();
    for k in [&b"a0"[..], b"m2", b"m5", b"m6", b"z1"] {
        b.put(A, k.to_vec(), [k, b"'"].concat());
    }
    b.put(B, b"b1".to_vec(), b"other".to_vec());
    b.put(A, b"z3".to_vec(), b"z3".to_vec());
    b.delete(A, b"m1".to_vec());
    b.put(A, b"z2".to_vec(), b"z2".to_vec());
    b.put(A, b"z2".to_vec(), b"again".to_vec());
    s.write(b).unwrap();
    let snap = s.snapshot().unwrap();
    let all: Vec<(Vec<u8>, Vec<u8>)> = snap
        .scan(A, &KeyRange::all(), ScanOptions::default())
        .map(Result::unwrap)
        .collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = [
        (&b"a0"[..], &b"a0'"[..]),
        (b"m2", b"m2'"),
        (b"m3", b"m3"),
        (b"m5", b"m5'"),
        (b"m6", b"m6'"),
        (b"z1", b"z1'"),
        (b"z2", b"again"),
        (b"z3", b"z3"),
    ]
    .iter()
    .map(|(k, v)| (k.to_vec(), v.to_vec()))
    .collect();
    assert_eq!(all, want);
    assert_eq!(snap.get(B, b"b1").unwrap(), Some(b"other".to_vec()));
}

fn scans(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    put_all(
        &*s,
        A,
        &[b"a1", b"a2", b"a3", b"b1", b"\xff\xff", b"\xff\xff\x01"],
    );
    let all = ScanOptions::default();
    assert_eq!(
        keys(&*s, A, KeyRange::prefix(b"a"), all),
        vec![b"a1".to_vec(), b"a2".to_vec(), b"a3".to_vec()]
    );
    let rev = ScanOptions {
        reverse: true,
        limit: Some(2),
    };
    assert_eq!(
        keys(&*s, A, KeyRange::prefix(b"a"), rev),
        vec![b"a3".to_vec(), b"a2".to_vec()]
    );
    let lim = ScanOptions {
        reverse: false,
        limit: Some(1),
    };
    assert_eq!(keys(&*s, A, KeyRange::all(), lim), vec![b"a1".to_vec()]);
    assert_eq!(keys(&*s, A, KeyRange::prefix(b"\xff\xff"), all).len(), 2);
    let r = KeyRange {
        start: Bound::Excluded(b"a1".to_vec()),
        end: Bound::Included(b"b1".to_vec()),
    };
    assert_eq!(
        keys(&*s, A, r, all),
        vec![b"a2".to_vec(), b"a3".to_vec(), b"b1".to_vec()]
    );
    let empty = KeyRange {
        start: Bound::Included(b"z".to_vec()),
        end: Bound::Excluded(b"a".to_vec()),
    };
    assert!(keys(&*s, A, empty, all).is_empty());
    assert!(keys(&*s, B, KeyRange::all(), all).is_empty());
}

fn visits_lend_what_scans_give(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    put_all(&*s, A, &[b"a1", b"a2", b"a3", b"b1"]);
    let snap = s.snapshot().unwrap();
    for range in [
        KeyRange::prefix(b"a"),
        KeyRange::all(),
        KeyRange {
            start: Bound::Excluded(b"a1".to_vec()),
            end: Bound::Included(b"b1".to_vec()),
        },
        KeyRange {
            start: Bound::Included(b"z".to_vec()),
            end: Bound::Excluded(b"a".to_vec()),
        },
    ] {
        let scanned: Vec<(Vec<u8>, Vec<u8>)> = snap
            .scan(A, &range, ScanOptions::default())
            .map(|p| p.unwrap())
            .collect();
        let mut visited = Vec::new();
        snap.visit(A, &range, &mut |k, v| {
            visited.push((k.to_vec(), v.to_vec()));
            Ok(true)
        })
        .unwrap();
        assert_eq!(visited, scanned, "{range:?}");
        let mut backwards = Vec::new();
        snap.visit_rev(A, &range, &mut |k, v| {
            backwards.push((k.to_vec(), v.to_vec()));
            Ok(true)
        })
        .unwrap();
        backwards.reverse();
        assert_eq!(backwards, scanned, "reversed {range:?}");
    }
    // Returning false stops the visit.
    let mut seen = 0;
    snap.visit(A, &KeyRange::all(), &mut |_, _| {
        seen += 1;
        Ok(seen < 2)
    })
    .unwrap();
    assert_eq!(seen, 2);
    let mut last = Vec::new();
    snap.visit_rev(A, &KeyRange::all(), &mut |k, _| {
        last.push(k.to_vec());
        Ok(false)
    })
    .unwrap();
    assert_eq!(last, vec![b"b1".to_vec()]);
    // The last key at most a bound, and not below a floor.
    let floor = |min: &[u8], key: &[u8]| {
        let mut got = None;
        snap.floor(A, min, key, &mut |k, _| {
            got = Some(k.to_vec());
            Ok(true)
        })
        .unwrap();
        got
    };
    assert_eq!(floor(b"a", b"a2"), Some(b"a2".to_vec()));
    assert_eq!(floor(b"a", b"a25"), Some(b"a2".to_vec()));
    assert_eq!(floor(b"a", b"zz"), Some(b"b1".to_vec()));
    assert_eq!(floor(b"a", b"a0"), None);
    // Bounds longer than the memory store keeps inline in its tree.
    let long = [b"a2".as_slice(), &[b'z'; 40]].concat();
    assert_eq!(floor(b"a", &long), Some(b"a2".to_vec()));
    assert_eq!(floor(b"a", &[b'a'; 40]), Some(b"a3".to_vec()));
    assert_eq!(
        floor(b"a4", b"b0"),
        None,
        "a3, the last key at most b0, is below a4"
    );
}

fn snapshots_are_isolated(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    put_all(&*s, A, &[b"x"]);
    let old = s.snapshot().unwrap();
    let mut b = WriteBatch::new();
    b.put(A, b"y".to_vec(), b"1".to_vec());
    b.delete(A, b"x".to_vec());
    s.write(b).unwrap();
    assert_eq!(old.get(A, b"x").unwrap(), Some(b"x".to_vec()));
    assert_eq!(old.get(A, b"y").unwrap(), None);
    assert_eq!(
        old.scan(A, &KeyRange::all(), ScanOptions::default())
            .count(),
        1
    );
    let new = s.snapshot().unwrap();
    assert_eq!(new.get(A, b"x").unwrap(), None);
}

fn counters_and_range_deletes(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    let mut b = WriteBatch::new();
    b.add(B, b"c".to_vec(), 5);
    b.add(B, b"c".to_vec(), 2);
    b.add(B, b"z".to_vec(), 1);
    s.write(b).unwrap();
    let snap = s.snapshot().unwrap();
    assert_eq!(
        plexus_kv::decode_counter(&snap.get(B, b"c").unwrap().unwrap()),
        7
    );
    drop(snap);
    let mut b = WriteBatch::new();
    b.add(B, b"c".to_vec(), -7);
    s.write(b).unwrap();
    assert_eq!(
        s.snapshot().unwrap().get(B, b"c").unwrap(),
        None,
        "zero deletes"
    );

    put_all(&*s, A, &[b"p1", b"p2", b"p3", b"q"]);
    let mut b = WriteBatch::new();
    b.put(A, b"p4".to_vec(), b"".to_vec());
    b.delete_range(A, b"p".to_vec(), b"q".to_vec());
    b.put(A, b"p9".to_vec(), b"kept".to_vec());
    s.write(b).unwrap();
    assert_eq!(
        keys(&*s, A, KeyRange::all(), ScanOptions::default()),
        vec![b"p9".to_vec(), b"q".to_vec()]
    );
}

fn batches_are_atomic(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    let mut b = WriteBatch::new();
    b.put(A, b"ok".to_vec(), b"1".to_vec());
    b.put(Ks(7), b"bad".to_vec(), b"1".to_vec());
    assert!(s.write(b).is_err());
    assert_eq!(s.snapshot().unwrap().get(A, b"ok").unwrap(), None);
}

fn bulk_append(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    let mut it = (0u32..1000).map(|i| (i.to_be_bytes().to_vec(), vec![1]));
    assert_eq!(s.bulk_append(A, &mut it).unwrap(), 1000);
    // Keys interleaving existing ones still work (no append fast path).
    let mut it = (0u32..10).map(|i| ((i * 2).to_be_bytes().to_vec(), vec![2]));
    s.bulk_append(A, &mut it).unwrap();
    let mut bad = vec![(b"z".to_vec(), vec![]), (b"y".to_vec(), vec![])].into_iter();
    assert!(s.bulk_append(B, &mut bad).is_err());
    assert!(keys(&*s, B, KeyRange::all(), ScanOptions::default()).is_empty());
    let snap = s.snapshot().unwrap();
    assert_eq!(
        snap.scan(A, &KeyRange::all(), ScanOptions::default())
            .count(),
        1000
    );
    assert_eq!(snap.get(A, &4u32.to_be_bytes()).unwrap(), Some(vec![2]));
}

fn sorted_runs_are_atomic(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    put_all(&*s, A, &[b"m"]);
    let runs = vec![
        (
            A,
            vec![
                (b"a".to_vec(), b"1".to_vec()),
                (b"z".to_vec(), b"2".to_vec()),
            ]
            .into_iter()
            .collect(),
        ),
        (
            B,
            vec![(b"k1".to_vec(), vec![]), (b"k2".to_vec(), vec![])]
                .into_iter()
                .collect(),
        ),
    ];
    let mut batch = WriteBatch::new();
    batch.add(B, b"count".to_vec(), 2);
    s.write_sorted(
        &mut runs.into_iter().map(|(ks, r)| Ok((ks, Arc::new(r)))),
        batch,
    )
    .unwrap();
    let all = ScanOptions::default();
    assert_eq!(
        keys(&*s, A, KeyRange::all(), all),
        vec![b"a".to_vec(), b"m".to_vec(), b"z".to_vec()]
    );
    assert_eq!(keys(&*s, B, KeyRange::all(), all).len(), 3);
    let bad = vec![
        (A, Run::from_iter([(b"q".to_vec(), vec![])])),
        (
            B,
            Run::from_iter([(b"y".to_vec(), vec![]), (b"x".to_vec(), vec![])]),
        ),
    ];
    assert!(s
        .write_sorted(
            &mut bad.into_iter().map(|(ks, r)| Ok((ks, Arc::new(r)))),
            WriteBatch::new(),
        )
        .is_err());
    assert_eq!(
        s.snapshot().unwrap().get(A, b"q").unwrap(),
        None,
        "nothing of a failed write lands"
    );
}

fn survives_reopen(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = store(backend, &dir);
        put_all(&*s, B, &[b"kept"]);
    }
    let s = store(backend, &dir);
    assert_eq!(
        s.snapshot().unwrap().get(B, b"kept").unwrap(),
        Some(b"kept".to_vec())
    );
}

/// One size per keyspace, growing with what a keyspace holds (fjall counts
/// only its tables on disk, so what is still in its memtable shows as 0).
fn stored_sizes(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    assert_eq!(s.stored_sizes().unwrap().len(), 2);
    let big: Vec<Vec<u8>> = (0..2000u32).map(|i| i.to_be_bytes().repeat(8)).collect();
    put_all(&*s, B, &big.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let sizes = s.stored_sizes().unwrap();
    if backend != Backend::Fjall {
        assert!(sizes[1] >= 2000 * 64, "{sizes:?}");
        assert!(sizes[0] < sizes[1], "{sizes:?}");
    }
}

/// Scans longer than a backend's page (postgres fetches 1,024 rows a round
/// trip), both ways, with limits; and one batch that puts, deletes, counts
/// and puts again the same keys, applied in order.
fn long_scans_and_ordered_batches(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    let all: Vec<Vec<u8>> = (0..2500u32).map(|i| i.to_be_bytes().to_vec()).collect();
    put_all(&*s, A, &all.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let fwd = ScanOptions::default();
    assert_eq!(keys(&*s, A, KeyRange::all(), fwd), all);
    let rev = ScanOptions {
        reverse: true,
        limit: Some(2100),
    };
    let want: Vec<Vec<u8>> = all.iter().rev().take(2100).cloned().collect();
    assert_eq!(keys(&*s, A, KeyRange::all(), rev), want);
    let range = KeyRange {
        start: Bound::Excluded(all[10].clone()),
        end: Bound::Included(all[2049].clone()),
    };
    assert_eq!(keys(&*s, A, range, fwd), all[11..=2049].to_vec());

    let mut b = WriteBatch::new();
    b.put(B, b"x".to_vec(), b"1".to_vec());
    b.put(B, b"x".to_vec(), b"2".to_vec());
    b.delete(B, b"x".to_vec());
    b.add(B, b"n".to_vec(), 5);
    b.put(B, b"x".to_vec(), b"3".to_vec());
    b.add(B, b"n".to_vec(), -2);
    b.delete_range(A, all[0].clone(), all[2000].clone());
    s.write(b).unwrap();
    let snap = s.snapshot().unwrap();
    assert_eq!(snap.get(B, b"x").unwrap(), Some(b"3".to_vec()));
    assert_eq!(
        snap.get(B, b"n")
            .unwrap()
            .map(|v| plexus_kv::decode_counter(&v)),
        Some(3)
    );
    assert_eq!(keys(&*s, A, KeyRange::all(), fwd), all[2000..].to_vec());
}

/// Many ranges in one call give what a visit of each gives, in the order
/// of the ranges, and stop when told to.
fn many_ranges_at_once(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let s = store(backend, &dir);
    let all: Vec<Vec<u8>> = (0..300u32)
        .map(|i| vec![(i / 100) as u8, (i % 100) as u8])
        .collect();
    put_all(&*s, A, &all.iter().map(Vec::as_slice).collect::<Vec<_>>());
    let ranges = vec![
        KeyRange::prefix(&[2]),
        KeyRange::prefix(&[0]),
        KeyRange::prefix(&[9]),
        KeyRange {
            start: Bound::Included(vec![1, 98]),
            end: Bound::Unbounded,
        },
        KeyRange {
            start: Bound::Unbounded,
            end: Bound::Excluded(vec![0, 2]),
        },
        KeyRange {
            start: Bound::Excluded(vec![1, 5]),
            end: Bound::Included(vec![1, 7]),
        },
    ];
    let snap = s.snapshot().unwrap();
    let mut want = Vec::new();
    for (i, r) in ranges.iter().enumerate() {
        snap.visit(A, r, &mut |k, _| {
            want.push((i, k.to_vec()));
            Ok(true)
        })
        .unwrap();
    }
    let mut got = Vec::new();
    snap.visit_ranges(A, &ranges, &mut |i, k, v| {
        assert_eq!(k, v);
        got.push((i, k.to_vec()));
        Ok(true)
    })
    .unwrap();
    assert_eq!(got, want);
    assert_eq!(got.len(), 100 + 100 + 102 + 2 + 2);
    // The ranges a remote store answers in one statement (no excluded
    // start, no included end).
    let mut got = Vec::new();
    snap.visit_ranges(A, &ranges[..5], &mut |i, k, _| {
        got.push((i, k.to_vec()));
        Ok(true)
    })
    .unwrap();
    let five: Vec<(usize, Vec<u8>)> = want.iter().filter(|(i, _)| *i < 5).cloned().collect();
    assert_eq!(got, five);
    let mut first = Vec::new();
    snap.visit_ranges(A, &ranges[..2], &mut |i, k, _| {
        first.push((i, k.to_vec()));
        Ok(first.len() < 3)
    })
    .unwrap();
    assert_eq!(first, want[..3].to_vec());
}

/// The shared tests for one backend, plus any it alone can run.
macro_rules! suite {
    ($module:ident, $backend:expr $(, $extra:ident)*) => {
        mod $module {
            suite!(@tests $backend, basic_ops, batches_past_the_last_key, scans, visits_lend_what_scans_give, snapshots_are_isolated, counters_and_range_deletes, batches_are_atomic, bulk_append, sorted_runs_are_atomic, stored_sizes, long_scans_and_ordered_batches, many_ranges_at_once $(, $extra)*);
        }
    };
    (@tests $backend:expr $(, $test:ident)*) => {
        $(#[test] fn $test() { super::$test($backend) })*
    };
}

suite!(lmdb, plexus_kv::Backend::Lmdb, survives_reopen);
suite!(memory, plexus_kv::Backend::Memory);
#[cfg(feature = "fjall")]
suite!(fjall, plexus_kv::Backend::Fjall, survives_reopen);
#[cfg(feature = "postgres")]
suite!(postgres, plexus_kv::Backend::Postgres, survives_reopen);

/// An LMDB store whose map starts at a megabyte, so writes soon grow it.
fn small_map(dir: &tempfile::TempDir) -> Arc<dyn KvStore> {
    let opts = KvOptions {
        durable: false,
        lmdb_initial_map_size: 1 << 20,
        ..KvOptions::default()
    };
    open(Backend::Lmdb, dir.path(), &["a", "b"], &opts).unwrap()
}

/// A hundred values of a kilobyte under keys `chunk | i`.
fn kilobytes(chunk: u32) -> WriteBatch {
    let mut b = WriteBatch::new();
    for i in 0..100u32 {
        b.put(
            A,
            [chunk.to_be_bytes(), i.to_be_bytes()].concat(),
            vec![7u8; 1000],
        );
    }
    b
}

#[test]
fn lmdb_map_grows_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let s = small_map(&dir);
    let reader = s.snapshot().unwrap();
    let s2 = s.clone();
    // A snapshot is open while the map fills: the resize waits for it.
    let writer = std::thread::spawn(move || {
        for chunk in 0..40u32 {
            s2.write(kilobytes(chunk)).unwrap();
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(reader.get(A, &[0; 8]).unwrap(), None);
    drop(reader);
    writer.join().unwrap();
    let snap = s.snapshot().unwrap();
    assert_eq!(
        snap.scan(A, &KeyRange::all(), ScanOptions::default())
            .count(),
        4000
    );
}

/// Read transactions are kept open between snapshots (`lmdb.rs`, `Idle`):
/// a snapshot taken after a commit sees it, whether the snapshot before it
/// was closed before the commit or held across it and closed after.
#[test]
fn lmdb_kept_snapshots_see_every_commit() {
    let dir = tempfile::tempdir().unwrap();
    let s = small_map(&dir);
    for i in 0..50u32 {
        let held = s.snapshot().unwrap();
        let mut b = WriteBatch::new();
        b.put(A, i.to_be_bytes().to_vec(), vec![1]);
        s.write(b).unwrap();
        // Closed after the commit: it reads the state before it.
        assert_eq!(held.get(A, &i.to_be_bytes()).unwrap(), None);
        drop(held);
        let snap = s.snapshot().unwrap();
        assert_eq!(snap.get(A, &i.to_be_bytes()).unwrap(), Some(vec![1]));
        let count = snap
            .scan(A, &KeyRange::all(), ScanOptions::default())
            .count();
        assert_eq!(count, i as usize + 1);
    }
}

/// A write that must grow the map while read transactions are kept idle
/// closes them first: a resize waits for every reader, for at most 30 s,
/// then fails the write.
#[test]
fn lmdb_map_grows_beside_kept_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let s = small_map(&dir);
    for chunk in 0..40u32 {
        // Two snapshots open at once, then both kept.
        let (a, b) = (s.snapshot().unwrap(), s.snapshot().unwrap());
        drop((a, b));
        s.write(kilobytes(chunk)).unwrap();
    }
    let snap = s.snapshot().unwrap();
    assert_eq!(
        snap.scan(A, &KeyRange::all(), ScanOptions::default())
            .count(),
        4000
    );
}

/// Readers that keep opening snapshots while writes grow the map again and
/// again: each snapshot is taken either before a resize closes the gate or
/// after it opens again (the gate's slow path), and reads what was
/// committed when it was taken.
#[test]
fn lmdb_map_grows_beside_readers_opening_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let s = small_map(&dir);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (s, done) = (s.clone(), done.clone());
            std::thread::spawn(move || {
                let mut seen = 0;
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    let snap = s.snapshot().unwrap();
                    let n = snap
                        .scan(A, &KeyRange::all(), ScanOptions::default())
                        .count();
                    // Chunks commit whole, and never go away.
                    assert_eq!(n % 100, 0);
                    assert!(n >= seen);
                    seen = n;
                }
                seen
            })
        })
        .collect();
    for chunk in 0..60u32 {
        s.write(kilobytes(chunk)).unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    for r in readers {
        assert!(r.join().unwrap() <= 6000);
    }
    let snap = s.snapshot().unwrap();
    assert_eq!(
        snap.scan(A, &KeyRange::all(), ScanOptions::default())
            .count(),
        6000
    );
}

#[test]
fn lmdb_rejects_oversized_keys_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(Backend::Lmdb, &dir);
    let mut b = WriteBatch::new();
    b.put(A, vec![1u8; 5000], vec![]);
    let e = s.write(b).unwrap_err();
    assert_eq!(e.kind(), plexus_common::ErrorKind::ResourceLimit);
}

/// Sorted runs that overflow the map: the write grows it and writes every
/// run again, those already taken from the iterator included.
#[test]
fn lmdb_sorted_runs_survive_map_growth() {
    let dir = tempfile::tempdir().unwrap();
    let s = small_map(&dir);
    let run = |n: u32| -> Run {
        (0..n)
            .map(|i| (i.to_be_bytes().to_vec(), vec![9u8; 500]))
            .collect()
    };
    let mut runs = vec![(A, run(3000)), (B, run(3000))]
        .into_iter()
        .map(|(ks, r)| Ok((ks, Arc::new(r))));
    let mut batch = WriteBatch::new();
    batch.add(B, b"zz-count".to_vec(), 6000);
    s.write_sorted(&mut runs, batch).unwrap();
    let snap = s.snapshot().unwrap();
    for ks in [A, B] {
        assert_eq!(
            snap.scan(ks, &KeyRange::all(), ScanOptions::default())
                .count(),
            3000 + usize::from(ks == B)
        );
    }
}

/// A run the map's room surely held is freed once written; should the map
/// fill after that, the write is refused whole (nothing written) rather
/// than leaving the freed run's keyspace empty. With room reserved first,
/// the same load fits.
#[test]
fn lmdb_sorted_runs_freed_early_are_never_written_empty() {
    let dir = tempfile::tempdir().unwrap();
    let opts = KvOptions {
        durable: false,
        lmdb_initial_map_size: 64 << 20,
        ..KvOptions::default()
    };
    let s = open(Backend::Lmdb, dir.path(), &["a", "b"], &opts).unwrap();
    let run = |n: u32, len: usize| -> Arc<Run> {
        Arc::new(
            (0..n)
                .map(|i| (i.to_be_bytes().to_vec(), vec![9u8; len]))
                .collect(),
        )
    };
    // The first run (4 MiB of memory) fits half the room; the second's
    // 20,000 values of 4,000 bytes (overflow pages) do not fit the map.
    let (small, large) = (run(100, 100), run(20_000, 4_000));
    let load = |s: &dyn KvStore| {
        let mut runs = vec![(A, small.clone()), (B, large.clone())]
            .into_iter()
            .map(Ok);
        s.write_sorted(&mut runs, WriteBatch::new())
    };
    let e = load(&*s).unwrap_err();
    assert_eq!(e.kind(), plexus_common::ErrorKind::ResourceLimit, "{e}");
    assert!(e.to_string().contains("nothing was written"), "{e}");
    let count = |ks| {
        let snap = s.snapshot().unwrap();
        snap.scan(ks, &KeyRange::all(), ScanOptions::default())
            .count()
    };
    assert_eq!((count(A), count(B)), (0, 0), "nothing of the refused load");
    s.reserve(400 << 20).unwrap();
    load(&*s).unwrap();
    assert_eq!((count(A), count(B)), (100, 20_000));
}

#[test]
fn lmdb_opens_read_only() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = store(Backend::Lmdb, &dir);
        put_all(&*s, B, &[b"kept"]);
    }
    let opts = read_only();
    let s = open(Backend::Lmdb, dir.path(), &["a", "b"], &opts).unwrap();
    assert_eq!(
        s.snapshot().unwrap().get(B, b"kept").unwrap(),
        Some(b"kept".to_vec())
    );
    let mut b = WriteBatch::new();
    b.put(A, b"x".to_vec(), b"y".to_vec());
    assert!(matches!(s.write(b), Err(plexus_kv::KvError::ReadOnly)));
}

/// A keyspace a newer build keeps and an older one did not write: read-only
/// (LMDB cannot add it then), the open names it and what to do.
#[test]
fn lmdb_read_only_names_a_missing_keyspace() {
    let dir = tempfile::tempdir().unwrap();
    drop(store(Backend::Lmdb, &dir));
    let opts = read_only();
    let e = match open(Backend::Lmdb, dir.path(), &["a", "b", "newer"], &opts) {
        Ok(_) => panic!("a store without keyspace 'newer' opened read-only"),
        Err(e) => e,
    };
    assert!(
        matches!(&e, plexus_kv::KvError::MissingKeyspace(n) if n == "newer"),
        "{e:?}"
    );
    assert!(e.to_string().contains("open it once for writing"), "{e}");
    // Opened for writing, the keyspace is added; read-only then opens.
    drop(
        open(
            Backend::Lmdb,
            dir.path(),
            &["a", "b", "newer"],
            &KvOptions::default(),
        )
        .unwrap(),
    );
    assert!(open(Backend::Lmdb, dir.path(), &["a", "b", "newer"], &opts).is_ok());
}

/// A store of 20,000 values of 1 KiB, then every one but each tenth
/// deleted: most of its pages are free.
fn mostly_deleted(s: &dyn KvStore) {
    let key = |i: u32| format!("k{i:06}").into_bytes();
    let mut b = WriteBatch::new();
    for i in 0..20_000 {
        b.put(A, key(i), vec![i as u8; 1024]);
    }
    s.write(b).unwrap();
    let mut b = WriteBatch::new();
    for i in (0..20_000).filter(|i| i % 10 != 0) {
        b.delete(A, key(i));
    }
    s.write(b).unwrap();
}

fn values(s: &dyn KvStore) -> Vec<(Vec<u8>, Vec<u8>)> {
    let snap = s.snapshot().unwrap();
    let out = snap
        .scan(A, &KeyRange::all(), ScanOptions::default())
        .map(Result::unwrap)
        .collect();
    out
}

#[test]
fn lmdb_compaction_gives_space_back_and_keeps_every_value() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(Backend::Lmdb, &dir);
    mostly_deleted(&*s);
    let before = values(&*s);
    assert_eq!(before.len(), 2_000);
    // A snapshot taken before the swap reads the old files to its end.
    let old = s.snapshot().unwrap();
    let c = s.compact().unwrap();
    assert!(
        c.bytes_after * 4 < c.bytes_before,
        "the copy should be far smaller: {c:?}"
    );
    assert_eq!(s.disk_size().unwrap(), c.bytes_after);
    assert!(values(&*s) == before, "the values after compaction differ");
    put_all(&*s, A, &[b"after"]);
    assert_eq!(old.get(A, b"k000010").unwrap(), Some(vec![10u8; 1024]));
    assert_eq!(old.get(A, b"after").unwrap(), None);
    drop(old);
    // The old environment closes once its last snapshot has ended (on a
    // thread of its own), unmapping the old, deleted file.
    let mapped_deleted = || {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let dir = dir.path().to_string_lossy().into_owned();
        maps.lines()
            .any(|l| l.contains(&dir) && l.ends_with("(deleted)"))
    };
    let waited = std::time::Instant::now();
    while mapped_deleted() && waited.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!mapped_deleted(), "the old generation is still mapped");
    // A second compaction moves on to the next generation.
    s.compact().unwrap();
    put_all(&*s, B, &[b"second"]);
    drop(s);
    let s = store(Backend::Lmdb, &dir);
    let mut want = before.clone();
    want.insert(0, (b"after".to_vec(), b"after".to_vec()));
    assert!(values(&*s) == want, "the values after reopening differ");
    assert_eq!(
        s.snapshot().unwrap().get(B, b"second").unwrap(),
        Some(b"second".to_vec())
    );
    // Only the live generation's files are left.
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["CURRENT", "gen-2"]);
    // A reader beside the writer opens the live generation.
    let opts = read_only();
    drop(s);
    let r = open(Backend::Lmdb, dir.path(), &["a", "b"], &opts).unwrap();
    assert!(values(&*r) == want, "a reader sees other values");
    assert!(matches!(r.compact(), Err(plexus_kv::KvError::ReadOnly)));
}

#[test]
fn lmdb_compaction_runs_beside_readers_and_writers() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(Backend::Lmdb, &dir);
    mostly_deleted(&*s);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (started, reading) = std::sync::mpsc::channel();
    std::thread::scope(|t| {
        let reader = t.spawn(|| {
            let mut reads = 0u32;
            while reads == 0 || !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let snap = s.snapshot().unwrap();
                assert_eq!(snap.get(A, b"k000100").unwrap(), Some(vec![100u8; 1024]));
                reads += 1;
                if reads == 1 {
                    started.send(()).unwrap();
                }
            }
            reads
        });
        // Compactions start once the reader reads: on a busy machine it
        // might otherwise not run before they end.
        reading.recv().unwrap();
        // Puts, counter additions, deletes and a sorted run, while
        // compactions copy, replay what landed meanwhile and swap.
        let writer = t.spawn(|| {
            for i in 0..200u32 {
                let mut b = WriteBatch::new();
                b.put(B, format!("w{i:03}").into_bytes(), vec![1]);
                b.add(A, b"count".to_vec(), 1);
                if i % 20 == 19 {
                    b.delete(B, format!("w{:03}", i - 1).into_bytes());
                }
                s.write(b).unwrap();
                if i == 100 {
                    let run = (0..50u32).map(|j| (format!("z{j:03}").into_bytes(), vec![2]));
                    s.bulk_append(B, &mut run.collect::<Vec<_>>().into_iter())
                        .unwrap();
                }
            }
        });
        let (mut compactions, mut replayed) = (0, 0);
        while !writer.is_finished() || compactions < 3 {
            replayed += s.compact().unwrap().batches_replayed;
            compactions += 1;
        }
        // Back to back, the copies overlap the writes: some are replayed.
        assert!(replayed > 0);
        writer.join().unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Its reads, each checked, went on beside the compactions.
        assert!(reader.join().unwrap() >= 1);
    });
    // No write was lost or applied twice across the swaps.
    let snap = s.snapshot().unwrap();
    let n = snap
        .scan(B, &KeyRange::all(), ScanOptions::default())
        .count();
    assert_eq!(n, 200 - 10 + 50);
    let count = snap
        .get(A, b"count")
        .unwrap()
        .map(|v| plexus_kv::decode_counter(&v));
    assert_eq!(count, Some(200));
}

/// A write that fills the map while a compaction runs lands (in the copy,
/// whose map grows), and the compaction succeeds: whichever comes first.
#[test]
fn lmdb_map_growth_during_compaction_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let opts = KvOptions {
        lmdb_initial_map_size: 48 << 20,
        ..KvOptions::default()
    };
    let s = open(Backend::Lmdb, dir.path(), &["a", "b"], &opts).unwrap();
    let batch = |ks: Ks, prefix: &str, n: u32| {
        let mut b = WriteBatch::new();
        for i in 0..n {
            b.put(ks, format!("{prefix}{i:06}").into_bytes(), vec![7u8; 1024]);
        }
        b
    };
    for part in 0..30 {
        s.write(batch(A, &format!("a{part:02}-"), 1000)).unwrap();
    }
    std::thread::scope(|t| {
        let compaction = t.spawn(|| s.compact().unwrap());
        std::thread::sleep(std::time::Duration::from_millis(5));
        s.write(batch(B, "b", 20_000)).unwrap();
        compaction.join().unwrap();
    });
    let snap = s.snapshot().unwrap();
    let count = |ks: Ks| {
        snap.scan(ks, &KeyRange::all(), ScanOptions::default())
            .count()
    };
    assert_eq!((count(A), count(B)), (30_000, 20_000));
    drop(snap);
    drop(s);
    let s = open(Backend::Lmdb, dir.path(), &["a", "b"], &opts).unwrap();
    let snap = s.snapshot().unwrap();
    let n = snap
        .scan(B, &KeyRange::all(), ScanOptions::default())
        .count();
    assert_eq!(n, 20_000);
}

#[test]
fn compaction_is_refused_clearly_where_the_backend_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(Backend::Memory, &dir);
    let e = s.compact().unwrap_err();
    assert!(e.to_string().contains("no compaction"), "{e}");
}

#[cfg(feature = "fjall")]
#[test]
fn fjall_refuses_read_only_clearly() {
    let dir = tempfile::tempdir().unwrap();
    drop(store(Backend::Fjall, &dir));
    let opts = read_only();
    let e = open(Backend::Fjall, dir.path(), &["a", "b"], &opts)
        .err()
        .unwrap();
    assert!(e.to_string().contains("one process"), "{e}");
}

/// What each call costs on the postgres backend, in round trips to the
/// server, once its statements are prepared on the connection: a get, a
/// multi-get and a short scan are one each, a scan one per 1,024 rows, and
/// a batch of puts to one keyspace three (begin, one statement, commit).
#[cfg(feature = "postgres")]
#[test]
fn postgres_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(Backend::Postgres, &dir);
    let trips = || s.round_trips().unwrap();
    let all: Vec<Vec<u8>> = (0..2500u32).map(|i| i.to_be_bytes().to_vec()).collect();
    let refs: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
    // Twice: the first prepares the statement on the connection.
    for round in 0..2 {
        let before = trips();
        put_all(&*s, A, &refs);
        if round == 1 {
            assert_eq!(trips() - before, 3, "a batch of puts");
        }
    }
    let snap = s.snapshot().unwrap();
    for round in 0..2 {
        let before = trips();
        snap.get(A, &all[7]).unwrap();
        let got = trips() - before;
        let before = trips();
        snap.multi_get(A, &[&all[1], &all[2], &all[3]]).unwrap();
        let multi = trips() - before;
        let before = trips();
        let n = snap
            .scan(A, &KeyRange::all(), ScanOptions::default())
            .count();
        let scan = trips() - before;
        assert_eq!(n, 2500);
        if round == 1 {
            assert_eq!((got, multi, scan), (1, 1, 3));
        }
    }
    let local = tempfile::tempdir().unwrap();
    assert_eq!(store(Backend::Lmdb, &local).round_trips(), None);
}

/// A commit larger than one statement may carry (64 MiB) goes as several
/// statements of one transaction, all of it or none.
#[cfg(feature = "postgres")]
#[test]
fn postgres_takes_a_commit_larger_than_a_statement() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(Backend::Postgres, &dir);
    let mut b = WriteBatch::new();
    for i in 0..80u32 {
        b.put(A, i.to_be_bytes().to_vec(), vec![i as u8; 1 << 20]);
    }
    s.write(b).unwrap();
    let snap = s.snapshot().unwrap();
    let n = snap
        .scan(A, &KeyRange::all(), ScanOptions::default())
        .count();
    assert_eq!(n, 80);
    assert_eq!(
        snap.get(A, &79u32.to_be_bytes()).unwrap(),
        Some(vec![79; 1 << 20])
    );
}

//! Writers and readers on threads for a bounded time, with invariants
//! checked on every snapshot, on LMDB:
//! * transfers between accounts keep the total (snapshot isolation keeps
//!   it: a transfer writes both accounts it reads);
//! * withdrawals that each check the pair's joint balance keep it
//!   non-negative only under serializable isolation (under snapshot
//!   isolation two of them can both pass the check: write skew).
//!
//! The integrity check passes at the end.

use plexus::{Database, GraphRead, Isolation, NodeId, Props, StorageError, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const RUN_FOR: Duration = Duration::from_millis(2500);

fn balance(t: &impl GraphRead, n: NodeId) -> i64 {
    match t.node_property(n, "balance").unwrap() {
        Some(Value::Int(b)) => b,
        other => panic!("balance is {other:?}"),
    }
}

fn accounts(db: &Database, prefix: &str, n: usize, each: i64) -> Vec<NodeId> {
    let mut t = db.write("default").unwrap();
    let ids = (0..n)
        .map(|i| {
            let props = Props::from([("balance".to_string(), Value::Int(each))]);
            t.create_node(Some(&format!("{prefix}{i}")), &["Account"], &props)
                .unwrap()
        })
        .collect();
    t.commit().unwrap();
    ids
}

/// Runs `f` until it commits; conflicts are retried, anything else fails.
fn retry(conflicts: &AtomicU64, mut f: impl FnMut() -> Result<(), plexus::Error>) {
    loop {
        match f() {
            Ok(()) => return,
            Err(plexus::Error::Storage(StorageError::Conflict(_))) => {
                conflicts.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
}

#[test]
fn transfers_keep_the_total_on_every_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db"), Default::default()).unwrap();
    let ids = Arc::new(accounts(&db, "acct", 20, 100));
    let (stop, commits, conflicts, reads) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let mut threads = Vec::new();
    for w in 0..4u64 {
        let (db, ids, stop, commits, conflicts) = (
            db.clone(),
            ids.clone(),
            stop.clone(),
            commits.clone(),
            conflicts.clone(),
        );
        threads.push(std::thread::spawn(move || {
            let mut seed = w * 7919 + 1;
            while !stop.load(Ordering::Relaxed) {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let (a, b) = (
                    ids[(seed >> 33) as usize % ids.len()],
                    ids[(seed >> 40) as usize % ids.len()],
                );
                if a == b {
                    continue;
                }
                let amount = (seed >> 50) as i64 % 30;
                retry(&conflicts, || {
                    let mut t = db.write("default")?;
                    let (ba, bb) = (balance(&t, a), balance(&t, b));
                    t.set_node_property(a, "balance", Value::Int(ba - amount))?;
                    t.set_node_property(b, "balance", Value::Int(bb + amount))?;
                    t.commit()?;
                    Ok(())
                });
                commits.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for _ in 0..2 {
        let (db, ids, stop, reads) = (db.clone(), ids.clone(), stop.clone(), reads.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let snap = db.read("default").unwrap();
                let total: i64 = ids.iter().map(|n| balance(&snap, *n)).sum();
                assert_eq!(total, 2000, "a snapshot saw money appear or vanish");
                reads.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    while started.elapsed() < RUN_FOR {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    assert!(
        commits.load(Ordering::Relaxed) > 10,
        "writers made progress"
    );
    assert!(reads.load(Ordering::Relaxed) > 10, "readers made progress");
    let report = db.check("default").unwrap();
    assert!(report.is_ok(), "{:?}", report.problems);
    eprintln!(
        "transfers: {} commits, {} conflicts retried, {} snapshots checked",
        commits.load(Ordering::Relaxed),
        conflicts.load(Ordering::Relaxed),
        reads.load(Ordering::Relaxed)
    );
}

/// Withdrawals from one of two accounts, each allowed only when the two
/// together stay non-negative; the invariant is checked on every snapshot.
fn withdrawals(isolation: Isolation) -> (i64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db"), Default::default()).unwrap();
    let mut lowest = i64::MAX;
    let mut skews = 0;
    let conflicts = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + RUN_FOR / 2;
    let mut round = 0;
    while Instant::now() < deadline {
        round += 1;
        let pair = accounts(&db, &format!("r{round}-"), 2, 50);
        // Two withdrawals of 80, one from each account, started together:
        // each sees 100 in all, so each alone is allowed, not both.
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let hands: Vec<_> = (0..2)
            .map(|i| {
                let (db, pair, barrier, conflicts) =
                    (db.clone(), pair.clone(), barrier.clone(), conflicts.clone());
                std::thread::spawn(move || {
                    retry(&conflicts, || {
                        let mut t = db.write_with("default", isolation)?;
                        let joint = balance(&t, pair[0]) + balance(&t, pair[1]);
                        barrier_once(&barrier);
                        if joint >= 80 {
                            let mine = balance(&t, pair[i]);
                            t.set_node_property(pair[i], "balance", Value::Int(mine - 80))?;
                        }
                        t.commit()?;
                        Ok(())
                    })
                })
            })
            .collect();
        for h in hands {
            h.join().unwrap();
        }
        let snap = db.read("default").unwrap();
        let joint = balance(&snap, pair[0]) + balance(&snap, pair[1]);
        lowest = lowest.min(joint);
        if joint < 0 {
            skews += 1;
        }
    }
    assert!(db.check("default").unwrap().is_ok());
    (lowest, skews)
}

/// Waits at the barrier the first time only (a retried attempt goes on).
fn barrier_once(b: &std::sync::Barrier) {
    thread_local!(static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if !DONE.with(|d| d.replace(true)) {
        b.wait();
    }
}

#[test]
fn serializable_isolation_keeps_what_snapshot_isolation_cannot() {
    let (lowest, skews) = withdrawals(Isolation::Serializable);
    assert!(
        lowest >= 0,
        "serializable let the joint balance reach {lowest}"
    );
    assert_eq!(skews, 0);
    // The same under snapshot isolation shows the write skew, which is
    // what makes the check above able to fail.
    let (lowest, skews) = withdrawals(Isolation::Snapshot);
    assert!(
        lowest < 0 && skews > 0,
        "snapshot isolation never skewed ({lowest})"
    );
}

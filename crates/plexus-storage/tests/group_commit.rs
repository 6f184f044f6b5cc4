//! Group commit, made deterministic: the store's write is held shut while
//! transactions queue behind it, so the test knows exactly which commits
//! share a write.

use plexus_common::Value;
use plexus_kv::{Backend, Ks, KvOptions, KvPair, KvStore, Op, Snapshot, WriteBatch};
use plexus_storage::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// An in-memory store whose writes wait while the gate is shut, which
/// refuses any batch holding a value with the poison marker (before
/// writing anything), and which writes a batch holding the sync-fail marker
/// and then fails as a failed fsync would.
struct GatedKv {
    inner: Arc<dyn KvStore>,
    shut: Mutex<bool>,
    opened: Condvar,
    writes: AtomicU64,
}

const POISON: &[u8] = b"poison";
const SYNC_FAILS: &[u8] = b"syncfail";

impl GatedKv {
    fn new() -> Arc<GatedKv> {
        let inner = plexus_kv::open(
            Backend::Memory,
            std::path::Path::new(""),
            KEYSPACE_NAMES,
            &KvOptions::default(),
        )
        .unwrap();
        Arc::new(GatedKv {
            inner,
            shut: Mutex::new(false),
            opened: Condvar::new(),
            writes: AtomicU64::new(0),
        })
    }

    fn set_shut(&self, shut: bool) {
        *self.shut.lock().unwrap() = shut;
        self.opened.notify_all();
    }
}

impl KvStore for GatedKv {
    fn snapshot(&self) -> plexus_kv::Result<Box<dyn Snapshot>> {
        self.inner.snapshot()
    }

    fn write(&self, batch: WriteBatch) -> plexus_kv::Result<()> {
        self.writes.fetch_add(1, Ordering::SeqCst);
        let shut = self.shut.lock().unwrap();
        let (_open, timeout) = self
            .opened
            .wait_timeout_while(shut, Duration::from_secs(20), |s| *s)
            .unwrap();
        assert!(!timeout.timed_out(), "the gate stayed shut");
        let marked = |mark: &[u8]| {
            batch.ops.iter().any(|op| {
                matches!(op, Op::Put { value, .. } if value.windows(mark.len()).any(|w| w == mark))
            })
        };
        if marked(POISON) {
            return Err(plexus_kv::KvError::KeyTooLong { len: 999, max: 511 });
        }
        let sync_fails = marked(SYNC_FAILS);
        self.inner.write(batch)?;
        if sync_fails {
            return Err(plexus_kv::KvError::Io(std::io::Error::other(
                "fsync failed (EIO)",
            )));
        }
        Ok(())
    }

    fn bulk_append(
        &self,
        ks: Ks,
        pairs: &mut dyn Iterator<Item = KvPair>,
    ) -> plexus_kv::Result<u64> {
        self.inner.bulk_append(ks, pairs)
    }

    fn disk_size(&self) -> plexus_kv::Result<u64> {
        self.inner.disk_size()
    }

    fn stored_sizes(&self) -> plexus_kv::Result<Vec<u64>> {
        self.inner.stored_sizes()
    }

    fn backend(&self) -> Backend {
        Backend::Memory
    }
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn props(k: &str, v: &str) -> Props {
    Props::from([(k.to_string(), Value::String(v.to_string()))])
}

/// Commits `f`'s transaction on a thread of its own.
fn commit_on_thread(
    s: &Storage,
    f: impl FnOnce(&mut WriteTxn) + Send + 'static,
) -> std::thread::JoinHandle<Result<()>> {
    let s = s.clone();
    std::thread::spawn(move || {
        let mut t = s.write("default")?;
        f(&mut t);
        t.commit()
    })
}

/// Shuts the gate and starts a commit of node `first`, which reaches the
/// store's write and stays there until the gate opens.
fn hold_first_commit(kv: &GatedKv, s: &Storage) -> std::thread::JoinHandle<Result<()>> {
    let written = kv.writes.load(Ordering::SeqCst);
    kv.set_shut(true);
    let first = commit_on_thread(s, |t| {
        t.create_node(Some("first"), &["N"], &Props::new()).unwrap();
    });
    wait_until("the first commit reaches the store", || {
        kv.writes.load(Ordering::SeqCst) > written
    });
    first
}

type Commit = std::thread::JoinHandle<Result<()>>;

/// Waits for the queued commits to be waiting, checks that none of them,
/// nor the first (held in the store's write), has been acknowledged, and
/// opens the gate.
fn release_when_queued(kv: &GatedKv, s: &Storage, first: &Commit, queued: &[Commit]) {
    let n = queued.len() as u64;
    wait_until("the commits queue", || s.commit_stats().waiting == n);
    // Nothing is acknowledged before the write that holds it returns.
    std::thread::sleep(Duration::from_millis(20));
    assert!(
        !first.is_finished(),
        "acknowledged before its write returned"
    );
    assert!(
        queued.iter().all(|h| !h.is_finished()),
        "acknowledged before any write"
    );
    kv.set_shut(false);
}

/// One commit holds the write; while it does, the next ones queue, then
/// go together in one write, validated in arrival order.
#[test]
fn commits_that_wait_together_share_one_write() {
    let kv = GatedKv::new();
    let s = Storage::open(kv.clone()).unwrap();
    // Names are interned in writes of their own: intern them before the
    // gate shuts.
    let mut t = s.write("default").unwrap();
    let shared = t
        .create_node(Some("shared"), &["N"], &props("v", "0"))
        .unwrap();
    t.commit().unwrap();
    let before = s.commit_stats();
    let written = kv.writes.load(Ordering::SeqCst);
    let first = hold_first_commit(&kv, &s);
    // Two writers of the same node (one must lose) and one bystander.
    let mut queued = Vec::new();
    for v in ["a", "b"] {
        queued.push(commit_on_thread(&s, move |t| {
            t.set_node_property(shared, "v", Value::String(v.into()))
                .unwrap();
        }));
    }
    queued.push(commit_on_thread(&s, |t| {
        t.create_node(Some("bystander"), &["N"], &Props::new())
            .unwrap();
    }));
    release_when_queued(&kv, &s, &first, &queued);

    first.join().unwrap().unwrap();
    let outcomes: Vec<Result<()>> = queued.into_iter().map(|h| h.join().unwrap()).collect();
    let conflicts = outcomes
        .iter()
        .filter(|r| matches!(r, Err(StorageError::Conflict(_))))
        .count();
    assert_eq!(conflicts, 1, "{outcomes:?}");
    assert!(outcomes[2].is_ok(), "the bystander commits");

    let after = s.commit_stats();
    assert_eq!(
        after.groups - before.groups,
        2,
        "one write each: first, then the rest"
    );
    assert_eq!(after.commits - before.commits, 3);
    assert_eq!(after.conflicts - before.conflicts, 1);
    assert_eq!(after.largest_group, 2);
    assert_eq!(kv.writes.load(Ordering::SeqCst) - written, 2, "two writes");

    let r = s.read("default").unwrap();
    for key in ["first", "bystander"] {
        assert!(r.node_id(key).unwrap().is_some(), "{key} landed");
    }
    let v = r.node_property(shared, "v").unwrap();
    let winner = if outcomes[0].is_ok() { "a" } else { "b" };
    assert_eq!(v, Some(Value::String(winner.into())));
    assert!(s.check_integrity("default").unwrap().is_ok());
}

/// A store and three commits queued in one group behind a first (which
/// landed): the one named `marked` carries the store's `mark`.
fn group_with_one_marked(
    keys: [&'static str; 3],
    marked: &'static str,
    mark: &'static str,
) -> (Arc<GatedKv>, Storage, Vec<Commit>) {
    let kv = GatedKv::new();
    let s = Storage::open(kv.clone()).unwrap();
    // Names are interned in writes of their own: intern them before the
    // gate shuts.
    let mut t = s.write("default").unwrap();
    t.create_node(Some("setup"), &["N"], &props("x", "ok"))
        .unwrap();
    t.commit().unwrap();
    let first = hold_first_commit(&kv, &s);
    let queued: Vec<_> = keys
        .into_iter()
        .map(|key| {
            commit_on_thread(&s, move |t| {
                let p = if key == marked {
                    props("x", mark)
                } else {
                    Props::new()
                };
                t.create_node(Some(key), &["N"], &p).unwrap();
            })
        })
        .collect();
    release_when_queued(&kv, &s, &first, &queued);
    first.join().unwrap().unwrap();
    (kv, s, queued)
}

/// A member whose batch the store refuses fails alone: the others of its
/// group are written one by one instead.
#[test]
fn a_failing_member_does_not_take_its_group_down() {
    let (_kv, s, queued) = group_with_one_marked(["good1", "bad", "good2"], "bad", "poison");
    let outcomes: Vec<Result<()>> = queued.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(outcomes[0].is_ok() && outcomes[2].is_ok(), "{outcomes:?}");
    assert!(
        matches!(outcomes[1], Err(StorageError::Kv(_))),
        "{outcomes:?}"
    );
    let r = s.read("default").unwrap();
    let expected = [
        ("first", true),
        ("good1", true),
        ("bad", false),
        ("good2", true),
    ];
    for (key, present) in expected {
        assert_eq!(r.node_id(key).unwrap().is_some(), present, "{key}");
    }
    assert!(s.check_integrity("default").unwrap().is_ok());
}

/// A group's write that lands and then fails in its sync has an unknown
/// outcome: no member is written again (which would apply it twice: its
/// counters, its degrees), every member gets the error, and the store takes
/// no write until opened again — which shows each member exactly once.
#[test]
fn a_group_whose_sync_fails_is_not_written_twice_and_fences_the_store() {
    let (kv, s, queued) = group_with_one_marked(["m1", "m2", "m3"], "m2", "syncfail");
    for h in queued {
        let e = h.join().unwrap().unwrap_err();
        assert_eq!(e.kind(), plexus_common::ErrorKind::Io, "{e}");
    }
    // Fenced: a new write is refused, naming the failed sync; reads go on.
    let mut t = s.write("default").unwrap();
    t.create_node(Some("after"), &["N"], &Props::new()).unwrap();
    let e = t.commit().unwrap_err();
    assert!(e.to_string().contains("fsync failed"), "{e}");
    assert!(s
        .read("default")
        .unwrap()
        .node_id("setup")
        .unwrap()
        .is_some());
    // Opened again: the group's write is there once, the store whole.
    let again = Storage::open(kv.inner.clone()).unwrap();
    let r = again.read("default").unwrap();
    for key in ["setup", "first", "m1", "m2", "m3"] {
        assert!(r.node_id(key).unwrap().is_some(), "{key}");
    }
    assert!(r.node_id("after").unwrap().is_none());
    assert_eq!(r.node_count().unwrap(), 5);
    assert_eq!(r.label_count("N").unwrap(), 5);
    assert!(again.check_integrity("default").unwrap().is_ok());
    let mut t = again.write("default").unwrap();
    t.create_node(Some("after"), &["N"], &Props::new()).unwrap();
    t.commit().unwrap();
}

/// The hub's edges, sorted: (type, other end, edge); its degree agrees.
fn hub_edges(s: &Storage, hub: NodeId) -> Vec<(String, NodeId, EdgeId)> {
    let r = s.read("default").unwrap();
    let mut v: Vec<_> = r
        .neighbors(hub, Direction::Out, None)
        .unwrap()
        .into_iter()
        .map(|n| (r.type_name(n.rel_type).unwrap().to_string(), n.node, n.edge))
        .collect();
    v.sort();
    assert_eq!(r.degree(hub, Direction::Out, None).unwrap(), v.len() as u64);
    v
}

fn adjacency_keys(s: &Storage) -> u64 {
    let space = s.space().unwrap();
    space
        .keyspaces
        .iter()
        .find(|k| k.name == "adjacency")
        .unwrap()
        .entries
}

/// Members of one group adding and removing edges at one hub are settled
/// together against the hub's block (`adjacency.rs`): kept as deltas
/// while few, folded into the block once many. Every edge added lands,
/// every edge removed goes, two removals of one edge conflict, and the
/// integrity check holds.
#[test]
fn a_group_writing_one_hub_settles_its_adjacency_together() {
    let kv = GatedKv::new();
    let s = Storage::open(kv.clone()).unwrap();
    let mut t = s.write("default").unwrap();
    let hub = t.create_node(Some("hub"), &["N"], &Props::new()).unwrap();
    let leaves: Vec<NodeId> = (0..100)
        .map(|i| {
            t.create_node(Some(&format!("l{i}")), &["N"], &Props::new())
                .unwrap()
        })
        .collect();
    let mut block = Vec::new();
    for (i, l) in leaves.iter().enumerate().take(80) {
        let ty = if i % 2 == 0 { "A" } else { "B" };
        block.push(t.create_edge(None, hub, *l, ty, &Props::new()).unwrap());
    }
    t.create_edge(None, hub, leaves[0], "C", &Props::new())
        .unwrap();
    t.commit().unwrap();
    let mut old = hub_edges(&s, hub);
    old.retain(|(t, _, _)| t != "C");
    let mut added = 1;
    // One block for the hub, one for each of the 80 leaves with an edge.
    assert_eq!(adjacency_keys(&s), 81);

    for round in 0..2 {
        let first = hold_first_commit(&kv, &s);
        let before = s.commit_stats();
        // Round 0: a few changes, kept as deltas beside the hub's block of
        // 81. Round 1: 70 more edges, past what it keeps: folded.
        let adds = if round == 0 { 3 } else { 35 };
        let mut queued = Vec::new();
        for m in 0..2 {
            let ls = leaves.clone();
            queued.push(commit_on_thread(&s, move |t| {
                for i in 0..adds {
                    t.create_edge(None, hub, ls[m * 40 + i], "C", &Props::new())
                        .unwrap();
                }
            }));
        }
        // Two removals of one block edge (one must conflict), one of another,
        // and an edge added and removed in the same transaction.
        let (twice, once) = (block[2 * round], block[2 * round + 1]);
        for e in [twice, twice, once] {
            queued.push(commit_on_thread(&s, move |t| {
                assert!(t.delete_edge(e).unwrap());
            }));
        }
        let l0 = leaves[0];
        queued.push(commit_on_thread(&s, move |t| {
            let e = t.create_edge(None, hub, l0, "A", &Props::new()).unwrap();
            assert!(t.delete_edge(e).unwrap());
        }));
        release_when_queued(&kv, &s, &first, &queued);
        first.join().unwrap().unwrap();
        let outcomes: Vec<Result<()>> = queued.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(
            outcomes.iter().filter(|r| r.is_err()).count(),
            1,
            "{outcomes:?}"
        );
        assert!(outcomes[2].is_ok() != outcomes[3].is_ok(), "{outcomes:?}");
        let after = s.commit_stats();
        assert_eq!(
            after.groups - before.groups,
            2,
            "the first, then the rest together"
        );

        old.retain(|(_, _, e)| *e != twice && *e != once);
        added += 2 * adds;
        let got = hub_edges(&s, hub);
        let kept: Vec<_> = got.iter().filter(|(t, _, _)| t != "C").cloned().collect();
        assert_eq!(kept, old);
        assert_eq!(got.len() - kept.len(), added);
        let report = s.check_integrity("default").unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        // Round 0 left the hub 6 added and 2 removed deltas; round 1's 70
        // more were folded into its block with them.
        assert_eq!(adjacency_keys(&s), if round == 0 { 81 + 8 } else { 81 });
        // The next round's first commit creates it again.
        let mut t = s.write("default").unwrap();
        let first = t.node_id("first").unwrap().unwrap();
        t.delete_node(first, DeleteMode::Detach).unwrap();
        t.commit().unwrap();
    }
}

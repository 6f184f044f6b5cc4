//! Kills a writing process with SIGKILL at random moments and checks, after
//! each reopen, that every acknowledged commit is there, that no partial
//! commit is visible, and that every invariant holds.

use plexus::{Backend, Database, Options};
use plexus_testkit::crash::{
    concurrent_observed, concurrent_progress, expected, observed, progress, vector_problems,
};
use rand::Rng;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn kills() -> usize {
    std::env::var("PLEXUS_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

fn crash_loop(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut acked: Option<u64> = None;
    for round in 0..kills() {
        let lines = run_and_kill(&path, backend, None);
        acked = lines.iter().map(|l| l.parse::<u64>().unwrap()).max();
        let db = Database::open(&path, Options::default()).unwrap();
        let m = progress(&db).unwrap();
        assert!(
            m >= acked,
            "round {round}: acknowledged step {acked:?} is missing (found {m:?})"
        );
        assert!(
            m <= acked.map(|a| a + 1),
            "round {round}: found step {m:?} beyond the one in flight after {acked:?}"
        );
        assert_eq!(
            observed(&db).unwrap(),
            expected(m),
            "round {round}: the graph is not the state after step {m:?}"
        );
        let report = db.check("default").unwrap();
        assert!(report.is_ok(), "round {round}: {:?}", report.problems);
        assert_eq!(
            vector_problems(&db).unwrap(),
            Vec::<String>::new(),
            "round {round}"
        );
        acked = m;
    }
    assert!(
        acked.unwrap_or(0) > kills() as u64,
        "the writer made progress"
    );
}

#[test]
fn lmdb_survives_sigkill() {
    crash_loop(Backend::Lmdb);
}

#[cfg(feature = "fjall")]
#[test]
fn fjall_survives_sigkill() {
    crash_loop(Backend::Fjall);
}

/// Starts the writer, lets it commit for a random moment after its first
/// acknowledgement, kills it, and returns every line it acknowledged.
fn run_and_kill(path: &std::path::Path, backend: Backend, threads: Option<u64>) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crash_writer"));
    child.arg(path).arg(backend.name());
    if let Some(t) = threads {
        child.arg(t.to_string());
    }
    let mut child = child
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = vec![rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the writer acknowledges commits")];
    std::thread::sleep(Duration::from_millis(rand::thread_rng().gen_range(0..60)));
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    lines
}

/// Eight threads commit at once (so commits share writes) until killed;
/// after each reopen, every acknowledged step of every thread is there,
/// each thread's steps are a prefix ending at most one step past its last
/// acknowledged one, no node lacks its edge, and the integrity check passes.
fn concurrent_crash_loop(backend: Backend) {
    const THREADS: u64 = 8;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut acked: BTreeMap<u64, u64> = BTreeMap::new();
    for round in 0..kills().div_ceil(2) {
        for line in run_and_kill(&path, backend, Some(THREADS)) {
            let (t, i) = line.split_once(' ').expect("thread and step");
            let (t, i): (u64, u64) = (t.parse().unwrap(), i.parse().unwrap());
            let a = acked.entry(t).or_default();
            *a = (*a).max(i + 1);
        }
        let db = Database::open(&path, Options::default()).unwrap();
        let (steps, nodes) = concurrent_observed(&db).unwrap();
        let mut total = 0;
        for t in 0..THREADS {
            let have = steps.get(&t).cloned().unwrap_or_default();
            let done = concurrent_progress(&db, t).unwrap().map_or(0, |s| s + 1);
            let want = acked.get(&t).copied().unwrap_or(0);
            assert!(
                done >= want,
                "round {round}: thread {t} acknowledged {want} steps, {done} are there"
            );
            assert!(
                done <= want + 1,
                "round {round}: thread {t} is {done} steps in after {want}"
            );
            assert_eq!(
                have,
                (0..done).collect(),
                "round {round}: thread {t}'s steps are not the first {done}"
            );
            acked.insert(t, done);
            total += have.len();
        }
        assert_eq!(nodes, total, "round {round}: a node without its edge");
        let report = db.check("default").unwrap();
        assert!(report.is_ok(), "round {round}: {:?}", report.problems);
    }
    let total: u64 = acked.values().sum();
    assert!(
        total > kills() as u64,
        "the writers made progress ({total})"
    );
}

#[test]
fn lmdb_grouped_commits_survive_sigkill() {
    concurrent_crash_loop(Backend::Lmdb);
}

#[cfg(feature = "fjall")]
#[test]
fn fjall_grouped_commits_survive_sigkill() {
    concurrent_crash_loop(Backend::Fjall);
}

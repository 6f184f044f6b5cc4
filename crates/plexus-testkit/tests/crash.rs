//! Kills a writing process with SIGKILL at random moments and checks, after
//! each reopen, that every acknowledged commit is there, that no partial
//! commit is visible, and that every invariant holds. The same again on a
//! disk that loses what was not synced (`plexus_testkit::powerloss`): a
//! power cut after each kill puts back every page changed since its file's
//! last sync, or a random subset of them.

use plexus::{Backend, Database, Options};
use plexus_testkit::crash::{
    concurrent_observed, concurrent_progress, expected, observed, progress, progress_in,
    vector_problems,
};
use plexus_testkit::powerloss::{self, Loss};
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

/// How the writer dies.
#[derive(Debug, Clone, Copy)]
enum Death {
    /// SIGKILL: the kernel keeps every page the writer wrote.
    Kill,
    /// SIGKILL, then the disk loses what was not synced.
    PowerCut(Loss),
    /// A power cut under a writer that never syncs (it must lose commits).
    PowerCutUnsynced,
}

fn crash_loop(backend: Backend, death: Death) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut acked: Option<u64> = None;
    let rounds = match death {
        Death::Kill => kills(),
        _ => kills().div_ceil(2),
    };
    for round in 0..rounds {
        let lines = run_and_kill(&path, backend, None, death);
        acked = lines
            .iter()
            .map(|l| l.parse::<u64>().unwrap())
            .max()
            .or(acked);
        let db = match Database::open(&path, Options::default()) {
            // Killed while creating the store, before any commit: the next
            // writer must finish the creation.
            Err(e) if acked.is_none() => {
                eprintln!("round {round}: killed during creation: {e}");
                continue;
            }
            other => other.unwrap(),
        };
        // One snapshot for every check (see `progress_in`).
        let r = db.read("default").unwrap();
        let m = progress_in(&r).unwrap();
        assert!(
            m >= acked,
            "round {round}: acknowledged step {acked:?} is missing (found {m:?})"
        );
        assert!(
            m.is_none_or(|m| m <= acked.map_or(0, |a| a + 1)),
            "round {round}: found step {m:?} beyond the one in flight after {acked:?}"
        );
        assert_eq!(
            observed(&r).unwrap(),
            expected(m),
            "round {round}: the graph is not the state after step {m:?}"
        );
        let report = db.check("default").unwrap();
        assert!(report.is_ok(), "round {round}: {:?}", report.problems);
        let problems = vector_problems(&r).unwrap();
        if !problems.is_empty() {
            keep_for_study(dir, round);
            panic!("round {round}: the vector index disagrees: {problems:?}");
        }
        acked = m;
    }
    assert!(
        acked.unwrap_or(0) > kills() as u64,
        "the writer made progress"
    );
}

/// With `PLEXUS_CRASH_KEEP` set, keeps a store that failed a check (its
/// folder is named on stderr) for study; a temporary folder otherwise.
fn keep_for_study(dir: tempfile::TempDir, round: usize) {
    if std::env::var_os("PLEXUS_CRASH_KEEP").is_some() {
        eprintln!(
            "round {round}: the store is kept in {}",
            dir.keep().display()
        );
    }
}

#[test]
fn lmdb_survives_sigkill() {
    crash_loop(Backend::Lmdb, Death::Kill);
}

#[cfg(feature = "fjall")]
#[test]
fn fjall_survives_sigkill() {
    crash_loop(Backend::Fjall, Death::Kill);
}

/// The postgres backend, on the server the test command started: a
/// SIGKILL of the Plexus process mid-commit loses no acknowledged commit
/// and leaves no partial one (the server's transaction decides).
#[cfg(feature = "postgres")]
#[test]
fn postgres_survives_sigkill() {
    crash_loop(Backend::Postgres, Death::Kill);
}

#[cfg(feature = "postgres")]
#[test]
fn postgres_grouped_commits_survive_sigkill() {
    concurrent_crash_loop(Backend::Postgres, Death::Kill);
}

#[test]
fn lmdb_survives_a_power_cut() {
    crash_loop(Backend::Lmdb, Death::PowerCut(Loss::All));
}

#[test]
fn lmdb_survives_a_power_cut_that_keeps_some_pages() {
    crash_loop(Backend::Lmdb, Death::PowerCut(Loss::Some));
}

#[cfg(feature = "fjall")]
#[test]
fn fjall_survives_a_power_cut() {
    crash_loop(Backend::Fjall, Death::PowerCut(Loss::All));
}

#[cfg(feature = "fjall")]
#[test]
fn fjall_survives_a_power_cut_that_keeps_some_pages() {
    crash_loop(Backend::Fjall, Death::PowerCut(Loss::Some));
}

/// The power-cut test can fail: a writer that acknowledges commits it did
/// not sync loses them. (A SIGKILL alone would not show it: the kernel
/// keeps the pages.)
#[test]
fn a_power_cut_loses_commits_acknowledged_without_a_sync() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    run_and_kill(&path, Backend::Lmdb, None, Death::Kill);
    let before = progress(&Database::open(&path, Options::default()).unwrap()).unwrap();
    let lines = run_and_kill(&path, Backend::Lmdb, None, Death::PowerCutUnsynced);
    let acked = lines.iter().map(|l| l.parse::<u64>().unwrap()).max();
    assert!(acked > before, "the unsynced writer acknowledged commits");
    match Database::open(&path, Options::default()) {
        Err(e) => eprintln!("the store is damaged, as expected: {e}"),
        Ok(db) => {
            let found = progress(&db).unwrap();
            assert!(
                found < acked,
                "acknowledged step {acked:?} survived a power cut without a sync (found {found:?})"
            );
        }
    }
}

/// Starts the writer, lets it commit for a random moment after its first
/// acknowledgement, kills it (and cuts the power), and returns every line
/// it acknowledged.
fn run_and_kill(
    path: &std::path::Path,
    backend: Backend,
    threads: Option<u64>,
    death: Death,
) -> Vec<String> {
    let log = path.with_extension("writes");
    // A power cut hurts most right after a write: the writer dies there
    // itself, after a random number of writes.
    let mut die_at = None;
    let mut child = match death {
        Death::Kill => Command::new(env!("CARGO_BIN_EXE_crash_writer")),
        Death::PowerCut(_) => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_power_writer"));
            // One writer in four may die while creating or opening the
            // store (fjall's creation alone takes about 500 writes); the
            // others after opening, within their first commits.
            let mut rng = rand::thread_rng();
            let n = if rng.gen_ratio(1, 4) {
                rng.gen_range(1..=600u64)
            } else {
                c.env("PLEXUS_POWERLOSS_FROM", "open");
                rng.gen_range(1..=150u64)
            };
            c.env(powerloss::LOG_ENV, &log)
                .env("PLEXUS_POWERLOSS_DIE_AT", n.to_string());
            die_at = Some(n);
            c
        }
        Death::PowerCutUnsynced => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_power_writer"));
            c.env(powerloss::LOG_ENV, &log)
                .env("PLEXUS_POWERLOSS_DURABLE", "no");
            c
        }
    };
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
    let mut lines = Vec::new();
    if die_at.is_some() {
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the writer dies at its chosen write"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    } else {
        lines.push(
            rx.recv_timeout(Duration::from_secs(60))
                .expect("the writer acknowledges commits"),
        );
        std::thread::sleep(Duration::from_millis(rand::thread_rng().gen_range(0..60)));
        child.kill().unwrap();
    }
    child.wait().unwrap();
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let loss = match death {
        Death::Kill => return lines,
        Death::PowerCut(loss) => loss,
        Death::PowerCutUnsynced => Loss::All,
    };
    let mut rng = rand::thread_rng();
    let cut = powerloss::cut_power(&log, path, loss, &mut || rng.gen_bool(0.5)).unwrap();
    eprintln!(
        "power cut at write {die_at:?}, after {} acknowledgements: {cut:?}",
        lines.len()
    );
    std::fs::remove_file(&log).unwrap();
    lines
}

/// Eight threads commit at once (so commits share writes) until killed;
/// after each reopen, every acknowledged step of every thread is there,
/// each thread's steps are a prefix ending at most one step past its last
/// acknowledged one, no node lacks its edge, and the integrity check passes.
fn concurrent_crash_loop(backend: Backend, death: Death) {
    const THREADS: u64 = 8;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut acked: BTreeMap<u64, u64> = BTreeMap::new();
    for round in 0..kills().div_ceil(2) {
        for line in run_and_kill(&path, backend, Some(THREADS), death) {
            let (t, i) = line.split_once(' ').expect("thread and step");
            let (t, i): (u64, u64) = (t.parse().unwrap(), i.parse().unwrap());
            let a = acked.entry(t).or_default();
            *a = (*a).max(i + 1);
        }
        let db = match Database::open(&path, Options::default()) {
            Err(e) if acked.is_empty() => {
                eprintln!("round {round}: killed during creation: {e}");
                continue;
            }
            other => other.unwrap(),
        };
        // One snapshot for every check (see `progress_in`).
        let r = db.read("default").unwrap();
        let (steps, nodes) = concurrent_observed(&r).unwrap();
        let mut total = 0;
        for t in 0..THREADS {
            let have = steps.get(&t).cloned().unwrap_or_default();
            let done = concurrent_progress(&r, t).unwrap().map_or(0, |s| s + 1);
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
    concurrent_crash_loop(Backend::Lmdb, Death::Kill);
}

#[cfg(feature = "fjall")]
#[test]
fn fjall_grouped_commits_survive_sigkill() {
    concurrent_crash_loop(Backend::Fjall, Death::Kill);
}

#[test]
fn lmdb_grouped_commits_survive_a_power_cut() {
    concurrent_crash_loop(Backend::Lmdb, Death::PowerCut(Loss::Some));
}

#[cfg(feature = "fjall")]
#[test]
fn fjall_grouped_commits_survive_a_power_cut() {
    concurrent_crash_loop(Backend::Fjall, Death::PowerCut(Loss::Some));
}

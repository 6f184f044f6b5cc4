//! Kills a writing process with SIGKILL at random moments and checks, after
//! each reopen, that every acknowledged commit is there, that no partial
//! commit is visible, and that every invariant holds.

use plexus::{Backend, Database, Options};
use plexus_testkit::crash::{expected, observed, progress};
use rand::Rng;
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
    let mut rng = rand::thread_rng();
    for round in 0..kills() {
        let mut child = Command::new(env!("CARGO_BIN_EXE_crash_writer"))
            .arg(&path)
            .arg(backend.name())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line.parse::<u64>().unwrap()).is_err() {
                    break;
                }
            }
        });
        // Let it get going, then kill it at a random moment.
        let first = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the writer acknowledges commits");
        acked = Some(first);
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..60)));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        while let Ok(s) = rx.try_recv() {
            acked = Some(s);
        }
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

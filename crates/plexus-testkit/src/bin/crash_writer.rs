//! Writes the crash-test workload until killed, printing each step number
//! once its commit has been acknowledged.
//!
//! Usage: crash_writer <database folder> <lmdb|fjall> [threads]
//!
//! With a thread count, that many threads write the concurrent workload at
//! once (their commits grouped into shared writes) and each acknowledged
//! step is printed as `thread step`.

use plexus::{Backend, Database, Options};
use plexus_testkit::crash;
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(backend)) = (args.get(1), args.get(2).and_then(|b| Backend::parse(b)))
    else {
        eprintln!("usage: crash_writer <database folder> <lmdb|fjall> [threads]");
        std::process::exit(2);
    };
    let opts = Options {
        backend: Some(backend),
        durable: true,
        ..Default::default()
    };
    // The test that starts this writer runs others beside it, whose
    // writers it forks: a fork made while the test still held this
    // database's lock keeps a copy of that lock until it execs. So a lock
    // held by the test's own process is waited for, briefly.
    let mut tries = 0;
    let db = loop {
        match Database::open_or_create(path, opts.clone()) {
            Err(plexus::Error::Locked(_, holder))
                if tries < 100 && holder == Some(std::os::unix::process::parent_id()) =>
            {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other.expect("open"),
        }
    };
    match args.get(3).map(|t| t.parse::<u64>()) {
        None => sequential(&db),
        Some(Ok(threads)) if threads > 0 => concurrent(&db, threads),
        Some(_) => {
            eprintln!("threads must be a positive number");
            std::process::exit(2);
        }
    }
}

fn sequential(db: &Database) {
    crash::prepare(db).expect("schema");
    let mut next = crash::progress(db).expect("progress").map_or(0, |s| s + 1);
    let stdout = std::io::stdout();
    loop {
        crash::step(db, next).expect("step");
        let mut o = stdout.lock();
        writeln!(o, "{next}").expect("stdout");
        o.flush().expect("stdout");
        next += 1;
    }
}

fn concurrent(db: &Database, threads: u64) {
    crash::concurrent_prepare(db).expect("hub");
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut next = crash::concurrent_progress(&db, t)
                    .expect("progress")
                    .map_or(0, |s| s + 1);
                loop {
                    crash::concurrent_step(&db, t, next).expect("step");
                    let mut o = std::io::stdout().lock();
                    writeln!(o, "{t} {next}").expect("stdout");
                    o.flush().expect("stdout");
                    next += 1;
                }
            })
        })
        .collect();
    for h in handles {
        if h.join().is_err() {
            std::process::exit(1);
        }
    }
}

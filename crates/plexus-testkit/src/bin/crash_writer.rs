//! Writes the crash-test workload until killed, printing each step number
//! once its commit has been acknowledged.
//!
//! Usage: crash_writer <database folder> <lmdb|fjall>

use plexus::{Backend, Database, Options};
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(backend)) = (args.get(1), args.get(2).and_then(|b| Backend::parse(b)))
    else {
        eprintln!("usage: crash_writer <database folder> <lmdb|fjall>");
        std::process::exit(2);
    };
    let db = Database::open_or_create(
        path,
        Options {
            backend: Some(backend),
            durable: true,
            ..Default::default()
        },
    )
    .expect("open");
    plexus_testkit::crash::prepare(&db).expect("schema");
    let mut next = plexus_testkit::crash::progress(&db)
        .expect("progress")
        .map_or(0, |s| s + 1);
    let stdout = std::io::stdout();
    loop {
        plexus_testkit::crash::step(&db, next).expect("step");
        let mut o = stdout.lock();
        writeln!(o, "{next}").expect("stdout");
        o.flush().expect("stdout");
        next += 1;
    }
}

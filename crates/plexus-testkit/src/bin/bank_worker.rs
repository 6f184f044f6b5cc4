//! One process of the multi-process bank test (`plexus_testkit::bank`).
//!
//! Usage: bank_worker <database folder> <graph> <accounts> <milliseconds> <seed>
//!
//! Prints its tally as the last line; exits 1 with the error otherwise.

use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = || -> Result<plexus_testkit::bank::Tally, String> {
        let [dir, graph, accounts, millis, seed] = args.as_slice() else {
            return Err(
                "usage: bank_worker <database folder> <graph> <accounts> <milliseconds> <seed>"
                    .into(),
            );
        };
        let number = |what: &str, s: &str| {
            s.parse::<u64>()
                .map_err(|e| format!("{what} '{s}' is not a number: {e}"))
        };
        let accounts = i64::try_from(number("accounts", accounts)?).map_err(|e| e.to_string())?;
        let millis = number("milliseconds", millis)?;
        let seed = number("seed", seed)?;
        let db =
            plexus::Database::open(dir, plexus::Options::default()).map_err(|e| e.to_string())?;
        plexus_testkit::bank::work(&db, graph, accounts, Duration::from_millis(millis), seed)
            .map_err(|e| e.to_string())
    };
    match run() {
        Ok(t) => println!("{t}"),
        Err(e) => {
            eprintln!("bank_worker: {e}");
            std::process::exit(1);
        }
    }
}

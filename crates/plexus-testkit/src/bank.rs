//! The multi-process bank workload: processes that share one database on
//! a server move money between accounts at random, each a transaction of
//! its own, and check now and then that the money adds up. A lost update
//! makes or destroys money, or loses a transfer's count; a process that
//! sees a total other than the starting one has read a state no
//! serial order of transfers produces.
//!
//! The worker (`src/bin/bank_worker.rs`) prints one line at the end,
//! [`Tally`]'s `Display`; the test (`tests/bank.rs`) adds the tallies up and
//! compares them with what the store holds.

use plexus::{Database, ErrorKind, Params, Value};
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

/// Every account starts with this much.
pub const OPENING_BALANCE: i64 = 1_000;

/// What one worker did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Transfers committed (each moved money and counted a move on both
    /// accounts).
    pub transfers: u64,
    /// Attempts refused because another transaction won (retried).
    pub conflicts: u64,
    /// Totals read and checked.
    pub checks: u64,
    /// Totals read that were wrong.
    pub violations: u64,
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "transfers={} conflicts={} checks={} violations={}",
            self.transfers, self.conflicts, self.checks, self.violations
        )
    }
}

impl Tally {
    /// Reads a worker's last line; `None` when it is not one.
    pub fn parse(line: &str) -> Option<Tally> {
        let mut t = Tally::default();
        for part in line.split_whitespace() {
            let (k, v) = part.split_once('=')?;
            let v: u64 = v.parse().ok()?;
            match k {
                "transfers" => t.transfers = v,
                "conflicts" => t.conflicts = v,
                "checks" => t.checks = v,
                "violations" => t.violations = v,
                _ => return None,
            }
        }
        Some(t)
    }
}

/// Creates `accounts` accounts in `graph` (with an index on their id).
pub fn open_accounts(db: &Database, graph: &str, accounts: i64) -> plexus::Result<()> {
    if !db.graphs().iter().any(|g| g == graph) {
        db.create_graph(graph)?;
    }
    db.query(
        graph,
        "CREATE INDEX FOR (a:Account) ON (a.id)",
        &Params::new(),
    )?;
    let mut p = Params::new();
    p.insert("n".into(), Value::Int(accounts));
    p.insert("b".into(), Value::Int(OPENING_BALANCE));
    db.query(
        graph,
        "UNWIND range(1, $n) AS i CREATE (:Account {id: i, balance: $b, moves: 0})",
        &p,
    )?;
    Ok(())
}

/// The total balance, the number of accounts and the sum of their moves.
pub fn books(db: &Database, graph: &str) -> plexus::Result<(i64, i64, i64)> {
    let t = db.query(
        graph,
        "MATCH (a:Account) RETURN sum(a.balance) AS total, count(a) AS n, sum(a.moves) AS moves",
        &Params::new(),
    )?;
    let int = |i: usize| match t.rows.first().and_then(|r| r.get(i)) {
        Some(Value::Int(v)) => *v,
        _ => -1,
    };
    Ok((int(0), int(1), int(2)))
}

const TRANSFER: &str = "MATCH (a:Account {id: $from}), (b:Account {id: $to}) \
     WHERE a.balance >= $amount \
     SET a.balance = a.balance - $amount, b.balance = b.balance + $amount, \
         a.moves = a.moves + 1, b.moves = b.moves + 1 \
     RETURN count(*) AS moved";

/// Moves money in `graph` for `run`, checking the total every few
/// transfers; a conflict is counted and the transfer given up (the next
/// one is drawn afresh). Other errors end the run.
pub fn work(
    db: &Database,
    graph: &str,
    accounts: i64,
    run: Duration,
    seed: u64,
) -> plexus::Result<Tally> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut tally = Tally::default();
    let end = Instant::now() + run;
    while Instant::now() < end {
        if rng.gen_ratio(1, 8) {
            let (total, n, _) = books(db, graph)?;
            tally.checks += 1;
            if total != OPENING_BALANCE * accounts || n != accounts {
                tally.violations += 1;
            }
            continue;
        }
        let from = rng.gen_range(1..=accounts);
        let to = loop {
            let to = rng.gen_range(1..=accounts);
            if to != from {
                break to;
            }
        };
        let mut p = Params::new();
        p.insert("from".into(), Value::Int(from));
        p.insert("to".into(), Value::Int(to));
        p.insert("amount".into(), Value::Int(rng.gen_range(1..=50)));
        match db.query(graph, TRANSFER, &p) {
            Ok(t) => {
                if t.rows.first().and_then(|r| r.first()) == Some(&Value::Int(1)) {
                    tally.transfers += 1;
                }
            }
            Err(e) if e.kind() == ErrorKind::Conflict => tally.conflicts += 1,
            Err(e) => return Err(e),
        }
    }
    Ok(tally)
}

//! The openCypher TCK as a ratchet: the number of passing scenarios may
//! never fall below the count committed in `tck-baseline.txt`. Raise the
//! baseline in the same commit that raises the count.

use plexus_testkit::tck;

fn scenarios() -> Vec<tck::Scenario> {
    let dir = std::env::var_os("PLEXUS_TCK_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(tck::default_dir);
    let scenarios = tck::load(&dir).unwrap_or_else(|e| {
        panic!(
            "the openCypher TCK is not readable at {}: {e} (set PLEXUS_TCK_DIR)",
            dir.display()
        )
    });
    assert!(
        scenarios.len() > 3800,
        "expected the whole TCK, found {} scenarios",
        scenarios.len()
    );
    scenarios
}

fn ratchet(store: tck::Store) {
    let results = tck::run_all_on(scenarios(), store);
    let summary = tck::summarize(&results);
    let baseline: usize = include_str!("../tck-baseline.txt").trim().parse().unwrap();
    eprintln!(
        "TCK on {store:?}: {} of {} scenarios pass (baseline {baseline})",
        summary.passed, summary.total
    );
    assert!(
        summary.passed >= baseline,
        "TCK pass count on {store:?} fell from {baseline} to {}",
        summary.passed
    );
}

#[test]
fn tck_pass_count_never_falls() {
    ratchet(tck::Store::Memory);
}

#[test]
fn tck_pass_count_never_falls_on_lmdb() {
    ratchet(tck::Store::Lmdb);
}

/// Every tenth scenario on the postgres backend gives what it gives in
/// memory: the same scenarios pass, the same fail. `PLEXUS_TCK_POSTGRES_STEP=1`
/// runs every scenario (about three minutes).
#[cfg(feature = "postgres")]
#[test]
fn a_tck_sample_on_postgres_matches_memory() {
    let step = std::env::var("PLEXUS_TCK_POSTGRES_STEP")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(10);
    let sample: Vec<tck::Scenario> = scenarios().into_iter().step_by(step).collect();
    let memory = tck::run_all_on(sample.clone(), tck::Store::Memory);
    let postgres = tck::run_all_on(sample, tck::Store::Postgres);
    let pass = |o: &tck::Outcome| matches!(o, tck::Outcome::Passed);
    let passing = memory.iter().filter(|(_, o)| pass(o)).count();
    eprintln!(
        "TCK sample: {passing} of {} pass in memory, {} on postgres",
        memory.len(),
        postgres.iter().filter(|(_, o)| pass(o)).count()
    );
    assert!(passing > 300, "the sample ran: {passing} passed");
    let differ: Vec<String> = memory
        .iter()
        .zip(&postgres)
        .filter(|((_, a), (_, b))| pass(a) != pass(b))
        .map(|((s, a), (_, b))| format!("{} / {}: memory {a:?}, postgres {b:?}", s.file, s.name))
        .collect();
    assert!(
        differ.is_empty(),
        "scenarios that differ on postgres: {differ:#?}"
    );
}

#[test]
fn the_harness_compares_strictly() {
    // A scenario whose expected value differs from the engine's must fail.
    let s = tck::Scenario {
        area: "x".into(),
        file: "x".into(),
        name: "x".into(),
        text: "    Given any graph\n    When executing query:\n      \"\"\"\n      RETURN 1 AS a\n      \"\"\"\n    Then the result should be, in any order:\n      | a   |\n      | 1.0 |\n    And no side effects\n".into(),
        dir: tck::default_dir(),
    };
    assert!(
        matches!(tck::run(&s), tck::Outcome::Failed(_)),
        "1 must not equal 1.0"
    );
    let ok = tck::Scenario {
        text: s.text.replace("| 1.0 |", "| 1   |"),
        ..s
    };
    assert_eq!(tck::run(&ok), tck::Outcome::Passed);
}

fn scenario(text: &str) -> tck::Scenario {
    tck::Scenario {
        area: "x".into(),
        file: "x".into(),
        name: "x".into(),
        text: text.into(),
        dir: tck::default_dir(),
    }
}

#[test]
fn the_harness_compares_nodes_and_side_effects() {
    let text = "    Given an empty graph
    And having executed:
      \"\"\"
      CREATE (:A {name: 'a'})
      \"\"\"
    When executing query:
      \"\"\"
      MATCH (a:A) CREATE (a)-[:T {k: 1}]->(b:B) RETURN a, b
      \"\"\"
    Then the result should be, in any order:
      | a                 | b    |
      | (:A {name: 'a'})  | (:B) |
    And the side effects should be:
      | +nodes         | 1 |
      | +relationships | 1 |
      | +properties    | 1 |
      | +labels        | 1 |
";
    assert_eq!(tck::run(&scenario(text)), tck::Outcome::Passed);
    for wrong in [
        text.replace("| (:A {name: 'a'})  |", "| (:A {name: 'b'})  |"),
        text.replace("| (:B) |", "| (:C) |"),
        text.replace("| +nodes         | 1 |", "| +nodes         | 2 |"),
        text.replace("| +labels        | 1 |\n", ""),
    ] {
        assert!(
            matches!(tck::run(&scenario(&wrong)), tck::Outcome::Failed(_)),
            "should fail:\n{wrong}"
        );
    }
}

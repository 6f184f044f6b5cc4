//! Claims, rules, truth maintenance, explanations and modal entailment,
//! including the example of GestaltDB's documentation restated in
//! Plexus's API.

use plexus_common::Value;
use plexus_knowledge::{
    accessibility, claim_status, create_rule, entails, evaluate, explain, is_derived,
    justifications, maintain_truth, run_rules, Atom, ExplainNode, Formula, Frame, KnowledgeError,
    Limits, ModalLimits, Modality, Relation, RunOptions, Status,
};
use plexus_storage::Storage;
use plexus_temporal::{
    claims_as_of, commit_versions, ClaimObject, ClaimQuery, ClaimState, Interval, Kind, Polarity,
    Props, State, TemporalError, Version, VersionWrite,
};

fn entity(s: &str) -> ClaimObject {
    ClaimObject::Entity(s.into())
}

fn claim(s: &str, p: &str, o: &str, agent: &str) -> ClaimState {
    ClaimState::new(s, p, entity(o), agent)
}

fn assert_claims(db: &Storage, claims: Vec<(ClaimState, Interval)>) -> Vec<Version> {
    let writes: Vec<_> = claims
        .into_iter()
        .map(|(c, i)| VersionWrite::assert_claim(c, i))
        .collect();
    commit_versions(db, "default", &writes).unwrap()
}

/// Retracts the claim of version `v` from valid time `from` on.
fn retract_from(db: &Storage, v: &Version, from: i64) {
    let w = VersionWrite::retract(Kind::Claim, &v.logical_id, Interval::from(from));
    commit_versions(db, "default", &[w]).unwrap();
}

fn atom(s: &str, p: &str, o: &str) -> Atom {
    Atom::parse(s, p, o).unwrap()
}

fn status(db: &Storage, world: &str, s: &str, p: &str, o: &str, at: i64) -> Status {
    let r = db.read("default").unwrap();
    claim_status(&r, world, s, p, &entity(o), None, at)
        .unwrap()
        .status
}

fn at(v: i64) -> RunOptions {
    RunOptions {
        at: Some(v),
        ..RunOptions::default()
    }
}

/// GestaltDB's epistemic example (`agent_skill/references/epistemic.md`):
/// contradictory claims are BOTH; a correction keeps history; a rule
/// derives one claim, whose explanation is rooted at its version.
#[test]
fn gestaltdbs_documented_example() {
    let db = Storage::in_memory().unwrap();
    let jan = 1_704_067_200_000_000; // 2024-01-01T00:00:00Z
    let mar = 1_709_251_200_000_000; // 2024-03-01T00:00:00Z
    let jun = 1_717_200_000_000_000; // 2024-06-01T00:00:00Z
    let positive = ClaimState {
        source: Some("hr.csv".into()),
        confidence: Some(0.97),
        world: "reported".into(),
        ..claim("alice", "WORKS_FOR", "acme", "source:hr")
    };
    let negative = ClaimState {
        polarity: Polarity::Negative,
        confidence: Some(0.7),
        world: "reported".into(),
        ..claim("alice", "WORKS_FOR", "acme", "source:audit")
    };
    let written = assert_claims(
        &db,
        vec![
            (positive.clone(), Interval::from(jan)),
            (negative, Interval::from(jan)),
        ],
    );
    assert_eq!(
        status(&db, "reported", "alice", "WORKS_FOR", "acme", jun),
        Status::Both
    );
    let r = db.read("default").unwrap();
    let both = claim_status(
        &r,
        "reported",
        "alice",
        "WORKS_FOR",
        &entity("acme"),
        None,
        jun,
    )
    .unwrap();
    assert_eq!(both.confidence, Some(0.7), "both: the lower of the two");
    drop(r);

    // The correction: confidence and provenance, same identity.
    let corrected = ClaimState {
        confidence: Some(0.99),
        provenance: Props::from([("reviewed".into(), Value::Bool(true))]),
        ..positive.clone()
    };
    let c = commit_versions(
        &db,
        "default",
        &[VersionWrite::correct(
            &written[0].id,
            State::Claim(corrected),
        )],
    )
    .unwrap();
    assert_eq!(c[0].logical_id, positive.claim_id());
    assert_eq!(c[0].supersedes.as_deref(), Some(written[0].id.as_str()));

    assert_claims(
        &db,
        vec![(
            ClaimState {
                world: "reported".into(),
                ..claim("acme", "MEMBER_OF", "industry", "source:registry")
            },
            Interval::from(mar),
        )],
    );
    create_rule(
        &db,
        "default",
        "employment-implies-affiliation",
        vec![atom("?p", "WORKS_FOR", "?c"), atom("?c", "MEMBER_OF", "?g")],
        atom("?p", "AFFILIATED_WITH", "?g"),
        None,
    )
    .unwrap();
    let run = run_rules(&db, "default", &at(jun)).unwrap();
    assert_eq!(run.asserted, 1);
    let derived = &run.versions[0];
    // The conclusion holds from when both premises do.
    assert_eq!(derived.valid, Interval::from(mar));
    let r = db.read("default").unwrap();
    let ex = explain(&r, &derived.logical_id, jun, 100, 10_000)
        .unwrap()
        .unwrap();
    assert_eq!(ex.root, derived.id);
    assert!(!ex.truncated);
    let premises: Vec<&str> = ex
        .edges
        .iter()
        .filter(|e| matches!(e.relation, Relation::Premise { .. }))
        .map(|e| e.to.as_str())
        .collect();
    // The corrected version is the premise that held at June.
    assert_eq!(premises.len(), 2);
    assert_eq!(premises[0], c[0].id);
    assert!(ex
        .nodes
        .iter()
        .any(|n| matches!(n, ExplainNode::Rule(r) if r.id == "employment-implies-affiliation")));
    assert_eq!(
        status(&db, "reported", "alice", "AFFILIATED_WITH", "industry", jun),
        Status::Supported
    );
}

#[test]
fn four_values_follow_the_claims_over_valid_and_system_time() {
    let db = Storage::in_memory().unwrap();
    db.keep_history("default").unwrap();
    let st = |at| status(&db, "default", "x", "P", "y", at);
    assert_eq!(st(5), Status::Unknown);
    let yes = assert_claims(
        &db,
        vec![(
            claim("x", "P", "y", "a"),
            Interval::new(0, Some(10)).unwrap(),
        )],
    );
    let before_denial = db.system_time().unwrap();
    assert_eq!(st(5), Status::Supported);
    assert_eq!(st(10), Status::Unknown, "half-open");
    let no = ClaimState {
        polarity: Polarity::Negative,
        ..claim("x", "P", "y", "b")
    };
    assert_claims(&db, vec![(no.clone(), Interval::from(5))]);
    assert_eq!(st(2), Status::Supported);
    assert_eq!(st(7), Status::Both);
    assert_eq!(st(12), Status::Refuted);
    // Retract the assertion over [0, 10): refuted where the denial holds.
    commit_versions(
        &db,
        "default",
        &[VersionWrite::retract(
            Kind::Claim,
            &yes[0].logical_id,
            Interval::new(0, Some(10)).unwrap(),
        )
        .reason("wrong source")],
    )
    .unwrap();
    assert_eq!(st(2), Status::Unknown);
    assert_eq!(st(7), Status::Refuted);
    // As known before the denial: supported.
    let then = db.read_as_of("default", before_denial).unwrap();
    let s = claim_status(&then, "default", "x", "P", &entity("y"), None, 7).unwrap();
    assert_eq!(s.status, Status::Supported);
    // One agent's view.
    let r = db.read("default").unwrap();
    let b = claim_status(&r, "default", "x", "P", &entity("y"), Some("a"), 12).unwrap();
    assert_eq!(b.status, Status::Unknown);
}

#[test]
fn claims_refuse_what_would_break_their_identity() {
    let db = Storage::in_memory().unwrap();
    let e = commit_versions(
        &db,
        "default",
        &[VersionWrite::retract(
            Kind::Claim,
            "claim:nobody",
            Interval::from(0),
        )],
    )
    .unwrap_err();
    assert!(matches!(e, TemporalError::UnknownEntity(_)), "{e}");
    let v = assert_claims(&db, vec![(claim("x", "P", "y", "a"), Interval::from(0))]);
    let other = claim("x", "P", "z", "a");
    let e = commit_versions(
        &db,
        "default",
        &[VersionWrite::correct(&v[0].id, State::Claim(other))],
    )
    .unwrap_err();
    assert!(matches!(e, TemporalError::ClaimIdentity { .. }), "{e}");
    let bad = ClaimState {
        confidence: Some(2.0),
        ..claim("x", "P", "y", "c")
    };
    let e = commit_versions(
        &db,
        "default",
        &[VersionWrite::assert_claim(bad, Interval::from(0))],
    )
    .unwrap_err();
    assert!(e.to_string().contains("confidence 2"), "{e}");
    // Literal objects are found apart from entities of the same text.
    let lit = ClaimState::new("x", "AGE", ClaimObject::Literal(Value::Int(41)), "a");
    assert_claims(&db, vec![(lit, Interval::from(0))]);
    let r = db.read("default").unwrap();
    let q = ClaimQuery::statement("default", "x", "AGE", ClaimObject::Literal(Value::Int(41)));
    assert_eq!(claims_as_of(&r, &q, 1).unwrap().len(), 1);
    let q = ClaimQuery::statement("default", "x", "AGE", ClaimObject::Literal(Value::Int(42)));
    assert!(claims_as_of(&r, &q, 1).unwrap().is_empty());
}

fn chain(db: &Storage, n: usize) -> Vec<Version> {
    let claims = (0..n)
        .map(|i| {
            (
                claim(&format!("n{i}"), "ANC", &format!("n{}", i + 1), "a"),
                Interval::from(0),
            )
        })
        .collect();
    assert_claims(db, claims)
}

fn transitive(db: &Storage) {
    create_rule(
        db,
        "default",
        "transitive",
        vec![atom("?x", "ANC", "?y"), atom("?y", "ANC", "?z")],
        atom("?x", "ANC", "?z"),
        Some("transitive-v1"),
    )
    .unwrap();
}

fn derived_count(db: &Storage, at: i64) -> usize {
    let r = db.read("default").unwrap();
    let q = ClaimQuery {
        world: Some("default".into()),
        predicate: Some("ANC".into()),
        ..ClaimQuery::default()
    };
    claims_as_of(&r, &q, at)
        .unwrap()
        .iter()
        .filter(|v| matches!(&v.state, State::Claim(c) if is_derived(c)))
        .count()
}

#[test]
fn a_run_over_its_limits_writes_nothing_and_a_repeat_writes_nothing() {
    let db = Storage::in_memory().unwrap();
    chain(&db, 12);
    transitive(&db);
    for (limits, what) in [
        (
            Limits {
                max_derivations: 20,
                ..Limits::default()
            },
            "maxDerivations",
        ),
        (
            Limits {
                max_iterations: 2,
                ..Limits::default()
            },
            "maxIterations",
        ),
        (
            Limits {
                max_justifications: 30,
                ..Limits::default()
            },
            "maxJustifications",
        ),
    ] {
        let opts = RunOptions { limits, ..at(1) };
        match run_rules(&db, "default", &opts) {
            Err(KnowledgeError::Limit { what: w, .. }) => assert_eq!(w, what),
            other => panic!("{what}: {other:?}"),
        }
        assert_eq!(derived_count(&db, 1), 0, "{what}: nothing written");
    }
    let run = run_rules(&db, "default", &at(1)).unwrap();
    // Every pair i < j of 13 nodes, minus the 12 given.
    assert_eq!(run.asserted, 13 * 12 / 2 - 12);
    assert_eq!(derived_count(&db, 1), 66);
    let again = run_rules(&db, "default", &at(1)).unwrap();
    assert_eq!((again.asserted, again.corrected), (0, 0), "idempotent");
    let zero = RunOptions {
        limits: Limits {
            max_iterations: 0,
            ..Limits::default()
        },
        ..at(1)
    };
    assert!(matches!(
        run_rules(&db, "default", &zero),
        Err(KnowledgeError::InvalidLimit { .. })
    ));
}

/// An incremental maintenance pass over its limits writes nothing and
/// leaves the changes marked, so that the next pass within its limits
/// still starts from them.
#[test]
fn an_incremental_pass_over_its_limits_writes_nothing() {
    let db = Storage::in_memory().unwrap();
    chain(&db, 6);
    transitive(&db);
    run_rules(&db, "default", &at(1)).unwrap();
    let first = maintain_truth(&db, "default", &at(1)).unwrap();
    assert!(!first.incremental && first.versions.is_empty());
    assert_eq!(derived_count(&db, 1), 7 * 6 / 2 - 6);
    // Extend the chain by six links: 13 nodes, 66 conclusions.
    let more = (6..12)
        .map(|i| {
            (
                claim(&format!("n{i}"), "ANC", &format!("n{}", i + 1), "a"),
                Interval::from(0),
            )
        })
        .collect();
    assert_claims(&db, more);
    let tight = RunOptions {
        limits: Limits {
            max_derivations: 20,
            ..Limits::default()
        },
        ..at(1)
    };
    match maintain_truth(&db, "default", &tight) {
        Err(KnowledgeError::Limit { what, .. }) => assert_eq!(what, "maxDerivations"),
        other => panic!("{other:?}"),
    }
    assert_eq!(derived_count(&db, 1), 15, "nothing written");
    let next = maintain_truth(&db, "default", &at(1)).unwrap();
    assert!(next.incremental);
    assert_eq!(next.asserted, 66 - 15);
    assert_eq!(derived_count(&db, 1), 66);
    // Retracting the middle link cuts the chain in two: 21 + 15 pairs
    // less their 11 links.
    let r = db.read("default").unwrap();
    let q = ClaimQuery {
        world: Some("default".into()),
        subject: Some("n6".into()),
        predicate: Some("ANC".into()),
        object: Some(entity("n7")),
        agent: Some("a".into()),
        ..ClaimQuery::default()
    };
    let link = claims_as_of(&r, &q, 1).unwrap().remove(0);
    drop(r);
    retract_from(&db, &link, 0);
    let cut = maintain_truth(&db, "default", &at(1)).unwrap();
    assert!(cut.incremental);
    assert_eq!(derived_count(&db, 1), 21 + 15 - 11);
    assert_eq!(cut.retracted, 66 - (21 + 15 - 11));
}

/// A claim written while the first maintenance pass (which starts
/// tracking changes) runs conflicts with it, whichever commits first: it
/// could otherwise land unseen by that pass and unmarked for the next.
#[test]
fn a_claim_written_beside_the_first_pass_conflicts_with_it() {
    use plexus_knowledge::maintain_truth_in;
    use plexus_temporal::write_version;
    for pass_first in [true, false] {
        let db = Storage::in_memory().unwrap();
        chain(&db, 2);
        transitive(&db);
        run_rules(&db, "default", &at(1)).unwrap();
        let mut pass = db.write("default").unwrap();
        let mut writer = db.write("default").unwrap();
        let link = VersionWrite::assert_claim(claim("n2", "ANC", "n3", "a"), Interval::from(0));
        write_version(&mut writer, &link).unwrap();
        maintain_truth_in(&mut pass, &at(1)).unwrap();
        let (first, second) = if pass_first {
            (pass, writer)
        } else {
            (writer, pass)
        };
        first.commit().unwrap();
        let e = second.commit().unwrap_err();
        assert!(e.to_string().contains("concurrent"), "{e}");
        if pass_first {
            // Written again, the claim is marked, and the next pass adds
            // what it derives: n0..n3 closed, 6 pairs less 3 links.
            assert_claims(
                &db,
                vec![(claim("n2", "ANC", "n3", "a"), Interval::from(0))],
            );
            let next = maintain_truth(&db, "default", &at(1)).unwrap();
            assert!(next.incremental);
            assert_eq!(derived_count(&db, 1), 3);
        }
    }
}

/// Conclusions of `world` holding at `at`.
fn derived_in(db: &Storage, world: &str, at: i64) -> usize {
    let r = db.read("default").unwrap();
    let q = ClaimQuery {
        world: Some(world.into()),
        predicate: Some("ANC".into()),
        ..ClaimQuery::default()
    };
    let all = claims_as_of(&r, &q, at).unwrap();
    all.iter()
        .filter(|v| matches!(&v.state, State::Claim(c) if is_derived(c)))
        .count()
}

/// A pass restricted to one world starts from that world's changes and
/// leaves the others' conclusions alone; a pass over every world after it
/// is a full one again.
#[test]
fn a_pass_in_one_world_leaves_the_others_alone() {
    let db = Storage::in_memory().unwrap();
    let link = |w: &str, i: usize| {
        let c = claim(&format!("n{i}"), "ANC", &format!("n{}", i + 1), "a");
        (
            ClaimState {
                world: w.into(),
                ..c
            },
            Interval::from(0),
        )
    };
    let links: Vec<_> = ["w1", "w2"]
        .iter()
        .flat_map(|w| (0..4).map(move |i| link(w, i)))
        .collect();
    let written = assert_claims(&db, links);
    transitive(&db);
    run_rules(&db, "default", &at(1)).unwrap();
    // Five nodes per world: 10 pairs less 4 links.
    assert_eq!((derived_in(&db, "w1", 1), derived_in(&db, "w2", 1)), (6, 6));
    let in_w1 = RunOptions {
        world: Some("w1".into()),
        ..at(1)
    };
    assert!(!maintain_truth(&db, "default", &in_w1).unwrap().incremental);
    // Cut each world's chain after its second link.
    retract_from(&db, &written[1], 0);
    retract_from(&db, &written[5], 0);
    let pass = maintain_truth(&db, "default", &in_w1).unwrap();
    assert!(pass.incremental);
    // w1: n0..n1 and n2..n4 are left, 1 + 3 pairs less 3 links; w2 untouched.
    assert_eq!((derived_in(&db, "w1", 1), derived_in(&db, "w2", 1)), (1, 6));
    let all = maintain_truth(&db, "default", &at(1)).unwrap();
    assert!(!all.incremental, "another world set: a full pass");
    assert_eq!((derived_in(&db, "w1", 1), derived_in(&db, "w2", 1)), (1, 1));
}

#[test]
fn truth_maintenance_keeps_independent_support_and_drops_the_unsupported() {
    let db = Storage::in_memory().unwrap();
    // x→y two ways: via a and via b.
    let base = assert_claims(
        &db,
        vec![
            (claim("x", "ANC", "a", "s"), Interval::from(0)),
            (claim("a", "ANC", "y", "s"), Interval::from(0)),
            (claim("x", "ANC", "b", "s"), Interval::from(0)),
            (claim("b", "ANC", "y", "s"), Interval::from(0)),
        ],
    );
    transitive(&db);
    let first = maintain_truth(&db, "default", &at(1)).unwrap();
    assert_eq!(first.asserted, 1);
    let xy = first.versions[0].logical_id.clone();
    let r = db.read("default").unwrap();
    let v = plexus_temporal::as_of(&r, Kind::Claim, &xy, 1)
        .unwrap()
        .unwrap();
    let State::Claim(c) = &v.state else { panic!() };
    assert_eq!(justifications(c).len(), 2);
    drop(r);
    let same = maintain_truth(&db, "default", &at(1)).unwrap();
    assert_eq!(same.versions.len(), 0, "nothing changed");

    // One support goes: the conclusion stays, with one justification.
    retract_from(&db, &base[0], 0);
    let second = maintain_truth(&db, "default", &RunOptions::default()).unwrap();
    assert_eq!(
        (second.corrected, second.retracted),
        (1, 0),
        "resumed at the last instant"
    );
    assert_eq!(
        status(&db, "default", "x", "ANC", "y", 1),
        Status::Supported
    );
    let r = db.read("default").unwrap();
    let v = plexus_temporal::as_of(&r, Kind::Claim, &xy, 1)
        .unwrap()
        .unwrap();
    let State::Claim(c) = &v.state else { panic!() };
    let js = justifications(c);
    assert_eq!(js.len(), 1);
    assert_eq!(js[0].1, [base[2].id.clone(), base[3].id.clone()]);
    drop(r);

    // The last one goes: retracted, and the history says why.
    retract_from(&db, &base[3], 0);
    let third = maintain_truth(&db, "default", &at(1)).unwrap();
    assert_eq!(third.retracted, 1);
    assert_eq!(status(&db, "default", "x", "ANC", "y", 1), Status::Unknown);
    assert_eq!(
        third.versions[0].reason.as_deref(),
        Some("final rule support disappeared")
    );
}

#[test]
fn a_cycle_of_conclusions_does_not_hold_itself_up() {
    let db = Storage::in_memory().unwrap();
    let base = assert_claims(
        &db,
        vec![(claim("p", "LIKES", "q", "s"), Interval::from(0))],
    );
    // LIKES ⇒ FRIEND, FRIEND ⇒ LIKES.
    create_rule(
        &db,
        "default",
        "f",
        vec![atom("?a", "LIKES", "?b")],
        atom("?a", "FRIEND", "?b"),
        None,
    )
    .unwrap();
    create_rule(
        &db,
        "default",
        "l",
        vec![atom("?a", "FRIEND", "?b")],
        atom("?a", "LIKES", "?b"),
        None,
    )
    .unwrap();
    let run = run_rules(&db, "default", &at(0)).unwrap();
    assert_eq!(run.asserted, 2, "FRIEND, and LIKES by the rules");
    retract_from(&db, &base[0], 0);
    let m = maintain_truth(&db, "default", &at(0)).unwrap();
    assert_eq!(m.retracted, 2);
    assert_eq!(
        status(&db, "default", "p", "FRIEND", "q", 0),
        Status::Unknown
    );
    assert_eq!(
        status(&db, "default", "p", "LIKES", "q", 0),
        Status::Unknown
    );
}

#[test]
fn truth_maintenance_narrows_a_conclusion_whose_premise_narrowed() {
    let db = Storage::in_memory().unwrap();
    let base = assert_claims(
        &db,
        vec![
            (claim("x", "ANC", "a", "s"), Interval::from(0)),
            (claim("a", "ANC", "y", "s"), Interval::from(0)),
        ],
    );
    transitive(&db);
    maintain_truth(&db, "default", &at(5)).unwrap();
    // The premise now ends at 10: so does the conclusion.
    retract_from(&db, &base[1], 10);
    let m = maintain_truth(&db, "default", &at(5)).unwrap();
    assert_eq!(m.corrected, 1);
    assert_eq!(
        status(&db, "default", "x", "ANC", "y", 9),
        Status::Supported
    );
    assert_eq!(status(&db, "default", "x", "ANC", "y", 10), Status::Unknown);
}

#[test]
fn explanations_follow_derived_premises_within_their_bounds() {
    let db = Storage::in_memory().unwrap();
    chain(&db, 4);
    transitive(&db);
    run_rules(&db, "default", &at(0)).unwrap();
    let r = db.read("default").unwrap();
    let q = ClaimQuery::statement("default", "n0", "ANC", entity("n4"));
    let root = claims_as_of(&r, &q, 0)
        .unwrap()
        .into_iter()
        .find(|v| matches!(&v.state, State::Claim(c) if is_derived(c)))
        .unwrap();
    let full = explain(&r, &root.logical_id, 0, 100, 10_000)
        .unwrap()
        .unwrap();
    assert!(!full.truncated);
    // Every given link of the chain is reached, and each claim node is
    // either given or derived with its rule.
    let claims: Vec<&Version> = full
        .nodes
        .iter()
        .filter_map(|n| match n {
            ExplainNode::Claim(v) => Some(v),
            ExplainNode::Rule(_) => None,
        })
        .collect();
    let given = claims
        .iter()
        .filter(|v| matches!(&v.state, State::Claim(c) if !is_derived(c)))
        .count();
    assert_eq!(given, 4);
    let shallow = explain(&r, &root.logical_id, 0, 1, 10_000)
        .unwrap()
        .unwrap();
    assert!(shallow.truncated);
    assert!(shallow.nodes.len() < full.nodes.len());
    let small = explain(&r, &root.logical_id, 0, 100, 2).unwrap().unwrap();
    assert!(small.truncated);
    assert!(
        explain(&r, &root.logical_id, -1, 100, 10)
            .unwrap()
            .is_none(),
        "not valid then"
    );
}

fn formula(v: serde_like::V) -> Formula {
    Formula::from_value(&v.0).unwrap()
}

/// Builds maps and lists for formulas without a JSON dependency.
mod serde_like {
    use plexus_common::Value;
    use std::collections::BTreeMap;
    pub struct V(pub Value);
    pub fn map(pairs: &[(&str, V)]) -> V {
        V(Value::Map(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.0.clone()))
                .collect::<BTreeMap<_, _>>(),
        ))
    }
    pub fn s(x: &str) -> V {
        V(Value::String(x.into()))
    }
    pub fn list(items: Vec<V>) -> V {
        V(Value::List(items.into_iter().map(|v| v.0).collect()))
    }
    pub fn atom(s_: &str, p: &str, o: &str) -> V {
        map(&[("subject", s(s_)), ("predicate", s(p)), ("object", s(o))])
    }
    pub fn op(name: &str, f: V) -> V {
        map(&[("operator", s(name)), ("formula", f)])
    }
    pub fn modal(name: &str, agent: &str, f: V) -> V {
        map(&[("operator", s(name)), ("agent", s(agent)), ("formula", f)])
    }
    pub fn nary(name: &str, fs: Vec<V>) -> V {
        map(&[("operator", s(name)), ("operands", list(fs))])
    }
}

use serde_like::{atom as fa, modal, nary, op};

/// Worlds w1 and w2 accessible from `real` for agent `ann` (belief and
/// modal frames); w1 says rain, w2 says rain and denies sun; `real`
/// asserts and denies wind.
fn worlds(db: &Storage) {
    let link = |from, to, frame| (accessibility("ann", from, to, frame), Interval::from(0));
    let in_world = |w: &str, c: ClaimState| {
        (
            ClaimState {
                world: w.into(),
                ..c
            },
            Interval::from(0),
        )
    };
    let deny = |c: ClaimState| ClaimState {
        polarity: Polarity::Negative,
        ..c
    };
    assert_claims(
        db,
        vec![
            link("real", "w1", Frame::Belief),
            link("real", "w2", Frame::Belief),
            link("real", "w1", Frame::Modal),
            link("real", "w2", Frame::Modal),
            in_world("w1", claim("sky", "IS", "rain", "obs")),
            in_world("w2", claim("sky", "IS", "rain", "obs")),
            in_world("w2", deny(claim("sky", "IS", "sun", "obs"))),
            in_world("w1", claim("sky", "IS", "sun", "obs")),
            in_world("real", claim("air", "IS", "wind", "obs")),
            in_world("real", deny(claim("air", "IS", "wind", "obs2"))),
        ],
    );
}

#[test]
fn modalities_are_four_valued_over_accessible_worlds() {
    let db = Storage::in_memory().unwrap();
    worlds(&db);
    let r = db.read("default").unwrap();
    let ask = |m, f| {
        entails(&r, "ann", formula(f), m, "real", 0, ModalLimits::default())
            .unwrap()
            .status
    };
    assert_eq!(
        ask(Modality::Believes, fa("sky", "IS", "rain")),
        Status::Supported
    );
    // Sun: asserted in w1, denied in w2.
    assert_eq!(
        ask(Modality::Necessary, fa("sky", "IS", "sun")),
        Status::Refuted
    );
    assert_eq!(
        ask(Modality::Possible, fa("sky", "IS", "sun")),
        Status::Supported
    );
    // Not sun: false in w1, true in w2; believed only if true in both.
    assert_eq!(
        ask(Modality::Believes, op("NOT", fa("sky", "IS", "sun"))),
        Status::Refuted
    );
    assert_eq!(
        ask(Modality::Possible, op("NOT", fa("sky", "IS", "sun"))),
        Status::Supported
    );
    // Nothing about snow anywhere: unknown, not false.
    assert_eq!(
        ask(Modality::Believes, fa("sky", "IS", "snow")),
        Status::Unknown
    );
    // No knowledge frame for ann: unknown.
    assert_eq!(
        ask(Modality::Knows, fa("sky", "IS", "rain")),
        Status::Unknown
    );
    // Another agent has no links.
    let bob = entails(
        &r,
        "bob",
        formula(fa("sky", "IS", "rain")),
        Modality::Believes,
        "real",
        0,
        ModalLimits::default(),
    )
    .unwrap();
    assert_eq!(bob.status, Status::Unknown);
    // A contradiction in `real` is both, and entails nothing unrelated.
    let here = |f| {
        evaluate(&r, &formula(f), "real", 0, ModalLimits::default())
            .unwrap()
            .status
    };
    assert_eq!(here(fa("air", "IS", "wind")), Status::Both);
    assert_eq!(here(fa("sky", "IS", "rain")), Status::Unknown);
    assert_eq!(
        here(nary(
            "AND",
            vec![fa("air", "IS", "wind"), fa("sky", "IS", "rain")]
        )),
        Status::Refuted,
        "and: false from wind's denial, not true since rain is not"
    );
    assert_eq!(
        here(nary(
            "OR",
            vec![fa("air", "IS", "wind"), fa("sky", "IS", "rain")]
        )),
        Status::Supported,
        "or: true from wind, not false since rain is not"
    );
    // Nested: ann believes that it is possible (from w1, w2: no links) —
    // unknown.
    assert_eq!(
        ask(
            Modality::Believes,
            modal("POSSIBLE", "ann", fa("sky", "IS", "rain"))
        ),
        Status::Unknown
    );
    // The explanation names the accessible worlds and the evidence.
    let e = entails(
        &r,
        "ann",
        formula(fa("sky", "IS", "rain")),
        Modality::Believes,
        "real",
        0,
        ModalLimits::default(),
    )
    .unwrap();
    let Value::Map(m) = &e.explanation else {
        panic!()
    };
    let Some(Value::List(links)) = m.get("accessibility") else {
        panic!()
    };
    assert_eq!(links.len(), 2);
}

#[test]
fn modal_evaluations_are_bounded_and_formulas_checked() {
    let db = Storage::in_memory().unwrap();
    worlds(&db);
    // A loop: real → real in ann's belief frame.
    assert_claims(
        &db,
        vec![(
            accessibility("ann", "real", "real", Frame::Belief),
            Interval::from(0),
        )],
    );
    let r = db.read("default").unwrap();
    let mut f = fa("sky", "IS", "rain");
    for _ in 0..6 {
        f = modal("BELIEVES", "ann", f);
    }
    let deep = formula(f);
    let e = evaluate(&r, &deep, "real", 0, ModalLimits::default()).unwrap_err();
    assert!(
        matches!(
            e,
            KnowledgeError::Limit {
                what: "maxDepth",
                ..
            }
        ),
        "{e}"
    );
    let ok = evaluate(
        &r,
        &deep,
        "real",
        0,
        ModalLimits {
            max_depth: 6,
            max_states: 1000,
        },
    )
    .unwrap();
    assert!(ok.states > 6);
    let e = evaluate(
        &r,
        &deep,
        "real",
        0,
        ModalLimits {
            max_depth: 6,
            max_states: 5,
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            KnowledgeError::Limit {
                what: "maxStates",
                ..
            }
        ),
        "{e}"
    );

    let bad = |v: serde_like::V| Formula::from_value(&v.0).unwrap_err().to_string();
    assert!(bad(nary("AND", vec![fa("a", "b", "c")])).contains("two operands"));
    let e = bad(nary(
        "OR",
        vec![
            fa("a", "b", "c"),
            serde_like::map(&[("subject", serde_like::s("a"))]),
        ],
    ));
    assert!(
        e.contains("formula.operands[1]") && e.contains("predicate"),
        "{e}"
    );
    assert!(
        bad(serde_like::map(&[("operator", serde_like::s("MAYBE"))])).contains("unknown operator")
    );
    assert!(bad(op("BELIEVES", fa("a", "b", "c"))).contains("agent"));
    let mut nest = fa("a", "b", "c");
    for _ in 0..100 {
        nest = op("NOT", nest);
    }
    assert!(bad(nest).contains("at most 64"));
}

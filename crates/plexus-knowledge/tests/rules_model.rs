//! Rule runs and truth maintenance against a naive reference: random
//! claims over a few entities, recursive rules, random retractions; the
//! stored conclusions (which, over which validity) must equal the
//! fixpoint a plain repeat-until-nothing-changes evaluation finds, on
//! memory and LMDB.

use plexus_knowledge::{create_rule, is_derived, maintain_truth, run_rules, Atom, RunOptions};
use plexus_kv::{Backend, KvOptions};
use plexus_storage::{Storage, KEYSPACE_NAMES};
use plexus_temporal::{
    claims_holding, commit_versions, ClaimObject, ClaimQuery, ClaimState, Interval, Kind, State,
    VersionWrite,
};
use proptest::prelude::*;
use std::collections::BTreeMap;

const AT: i64 = 10;
type Key = (String, String, String);

/// A base claim: (subject, predicate, object, agent, interval).
#[derive(Debug, Clone)]
struct C {
    s: u8,
    p: u8,
    o: u8,
    agent: u8,
    valid: (i64, Option<i64>),
}

fn pred(p: u8) -> &'static str {
    ["ANC", "Q"][p as usize % 2]
}

fn c() -> impl Strategy<Value = C> {
    (
        0u8..5,
        0u8..2,
        0u8..5,
        0u8..2,
        0i64..10,
        proptest::option::of(11i64..30),
    )
        .prop_map(|(s, p, o, agent, from, to)| C {
            s,
            p,
            o,
            agent,
            valid: (from, to),
        })
}

fn state(c: &C) -> ClaimState {
    ClaimState::new(
        &format!("n{}", c.s),
        pred(c.p),
        ClaimObject::Entity(format!("n{}", c.o)),
        &format!("a{}", c.agent),
    )
}

/// The rules as (body, head) over string terms.
fn rules() -> Vec<(Vec<[&'static str; 3]>, [&'static str; 3])> {
    vec![
        (
            vec![["?x", "ANC", "?y"], ["?y", "ANC", "?z"]],
            ["?x", "ANC", "?z"],
        ),
        (
            vec![["?x", "ANC", "?y"], ["?y", "Q", "?z"]],
            ["?x", "R", "?z"],
        ),
        (vec![["?x", "R", "?x"]], ["?x", "SELF", "loop"]),
    ]
}

fn hull(a: Interval, b: Interval) -> Interval {
    Interval {
        from: a.from.min(b.from),
        to: a.to.zip(b.to).map(|(x, y)| x.max(y)),
    }
}

fn meet(a: Interval, b: Interval) -> Option<Interval> {
    let to = match (a.to, b.to) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    Interval::new(a.from.max(b.from), to).ok()
}

/// Every way to match `body` over `facts`, naively: bindings and the
/// intersection of the premises' validity.
fn solve(
    body: &[[&str; 3]],
    facts: &[(Key, Interval)],
    b: BTreeMap<String, String>,
    valid: Option<Interval>,
    out: &mut Vec<(BTreeMap<String, String>, Interval)>,
) {
    let Some((first, rest)) = body.split_first() else {
        if let Some(v) = valid {
            out.push((b, v));
        }
        return;
    };
    for ((s, p, o), v) in facts {
        if p != first[1] {
            continue;
        }
        let mut nb = b.clone();
        let ok = [(first[0], s), (first[2], o)].iter().all(|(t, val)| {
            if let Some(var) = t.strip_prefix('?') {
                match nb.get(var) {
                    Some(x) => x == *val,
                    None => {
                        nb.insert(var.to_string(), val.to_string());
                        true
                    }
                }
            } else {
                t == val
            }
        });
        let nv = match valid {
            None => Some(*v),
            Some(w) => meet(w, *v),
        };
        if ok && nv.is_some() {
            solve(rest, facts, nb, nv, out);
        }
    }
}

/// The naive fixpoint: every rule over every fact, again and again, until
/// no conclusion is new or grows.
fn model(base: &[(Key, Interval)]) -> BTreeMap<Key, Interval> {
    let mut derived: BTreeMap<Key, Interval> = BTreeMap::new();
    loop {
        let facts: Vec<(Key, Interval)> = base
            .iter()
            .cloned()
            .chain(derived.iter().map(|(k, v)| (k.clone(), *v)))
            .collect();
        let mut next = derived.clone();
        for (body, head) in rules() {
            let mut found = Vec::new();
            solve(&body, &facts, BTreeMap::new(), None, &mut found);
            for (b, v) in found {
                let g = |t: &str| t.strip_prefix('?').map_or(t.to_string(), |x| b[x].clone());
                let k = (g(head[0]), head[1].to_string(), g(head[2]));
                let e = next.entry(k).or_insert(v);
                *e = hull(*e, v);
            }
        }
        if next == derived {
            return derived;
        }
        derived = next;
    }
}

/// What the store holds: conclusions holding at `AT`, with their stretch.
fn stored(db: &Storage) -> BTreeMap<Key, Interval> {
    let r = db.read("default").unwrap();
    let q = ClaimQuery {
        world: Some("default".into()),
        ..ClaimQuery::default()
    };
    claims_holding(&r, &q, AT)
        .unwrap()
        .into_iter()
        .filter_map(|(held, v)| match v.state {
            State::Claim(c) if is_derived(&c) => Some((
                (
                    c.subject,
                    c.predicate,
                    c.object.entity().unwrap_or_default().to_string(),
                ),
                held,
            )),
            _ => None,
        })
        .collect()
}

/// The base claims that hold at `AT`, as the model takes them.
fn live(claims: &[C], gone: &[bool]) -> Vec<(Key, Interval)> {
    claims
        .iter()
        .zip(gone)
        .filter(|(_, g)| !**g)
        .map(|(c, _)| {
            let s = state(c);
            let v = Interval::new(c.valid.0, c.valid.1).unwrap();
            ((s.subject, s.predicate, format!("n{}", c.o)), v)
        })
        .filter(|(_, v)| v.contains(AT))
        .collect()
}

fn check(db: &Storage, claims: &[C], retract: &[bool]) -> Result<(), TestCaseError> {
    let mut writes = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut kept = Vec::new();
    for c in claims {
        // One claim per identity (a second would overwrite its timeline).
        if seen.insert(state(c).claim_id()) {
            let v = Interval::new(c.valid.0, c.valid.1).unwrap();
            writes.push(VersionWrite::assert_claim(state(c), v));
            kept.push(c.clone());
        }
    }
    commit_versions(db, "default", &writes).unwrap();
    for (i, (body, head)) in rules().into_iter().enumerate() {
        let atoms = body
            .iter()
            .map(|a| Atom::parse(a[0], a[1], a[2]).unwrap())
            .collect();
        let head = Atom::parse(head[0], head[1], head[2]).unwrap();
        create_rule(db, "default", &format!("r{i}"), atoms, head, None).unwrap();
    }
    let opts = RunOptions {
        at: Some(AT),
        ..RunOptions::default()
    };
    run_rules(db, "default", &opts).unwrap();
    let none = vec![false; kept.len()];
    prop_assert_eq!(stored(db), model(&live(&kept, &none)), "after the run");
    // Retract some base claims over all time; maintenance must follow.
    let gone: Vec<bool> = (0..kept.len())
        .map(|i| retract.get(i).copied().unwrap_or(false))
        .collect();
    let retractions: Vec<_> = kept
        .iter()
        .zip(&gone)
        .filter(|(_, g)| **g)
        .map(|(c, _)| VersionWrite::retract(Kind::Claim, &state(c).claim_id(), Interval::from(-1)))
        .collect();
    if !retractions.is_empty() {
        commit_versions(db, "default", &retractions).unwrap();
    }
    maintain_truth(db, "default", &opts).unwrap();
    prop_assert_eq!(stored(db), model(&live(&kept, &gone)), "after maintenance");
    // A second pass changes nothing.
    let again = maintain_truth(db, "default", &opts).unwrap();
    prop_assert_eq!(again.versions.len(), 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn conclusions_equal_the_naive_fixpoint(
        claims in proptest::collection::vec(c(), 1..14),
        retract in proptest::collection::vec(any::<bool>(), 14),
        lmdb in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = if lmdb {
            let kv = plexus_kv::open(Backend::Lmdb, dir.path(), KEYSPACE_NAMES, &KvOptions::default()).unwrap();
            Storage::open(kv).unwrap()
        } else {
            Storage::in_memory().unwrap()
        };
        check(&db, &claims, &retract)?;
    }
}

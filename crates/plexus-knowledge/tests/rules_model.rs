//! Rule runs and truth maintenance against a naive reference: random
//! claims over a few entities, recursive rules, random retractions; the
//! stored conclusions (which, over which validity) must equal the
//! fixpoint a plain repeat-until-nothing-changes evaluation finds, on
//! memory and LMDB.

use plexus_knowledge::{
    create_rule, is_derived, justifications, maintain_truth, run_rules, Atom, RunOptions,
};
use plexus_kv::{Backend, KvOptions};
use plexus_storage::{Storage, KEYSPACE_NAMES};
use plexus_temporal::{
    claims_holding, commit_versions, holding, version, ClaimObject, ClaimQuery, ClaimState,
    Interval, Kind, Polarity, State, VersionWrite,
};
use proptest::prelude::*;
use std::collections::BTreeMap;

const AT: i64 = 10;
type Key = (String, String, String);

/// A base claim: (subject, predicate, object, agent, interval); a denial
/// when `negative` (no premise of a rule).
#[derive(Debug, Clone)]
struct C {
    s: u8,
    p: u8,
    o: u8,
    agent: u8,
    valid: (i64, Option<i64>),
    negative: bool,
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
        proptest::bool::weighted(0.2),
    )
        .prop_map(|(s, p, o, agent, from, to, negative)| C {
            s,
            p,
            o,
            agent,
            valid: (from, to),
            negative,
        })
}

fn state(c: &C) -> ClaimState {
    let polarity = if c.negative {
        Polarity::Negative
    } else {
        Polarity::Positive
    };
    ClaimState {
        polarity,
        ..ClaimState::new(
            &format!("n{}", c.s),
            pred(c.p),
            ClaimObject::Entity(format!("n{}", c.o)),
            &format!("a{}", c.agent),
        )
    }
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
                let g = |t: &str| {
                    t.strip_prefix('?')
                        .map_or_else(|| t.to_string(), |x| b[x].clone())
                };
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

/// Every claim of the world holding at `AT`, with the stretch it holds over.
fn holding_now(db: &Storage) -> Vec<(Interval, plexus_temporal::Version)> {
    let r = db.read("default").unwrap();
    let q = ClaimQuery {
        world: Some("default".into()),
        ..ClaimQuery::default()
    };
    claims_holding(&r, &q, AT).unwrap()
}

/// What the store holds: conclusions holding at `AT`, with their stretch.
fn stored(db: &Storage) -> BTreeMap<Key, Interval> {
    holding_now(db)
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

/// Whether every premise a stored conclusion's justifications name is the
/// version of its claim holding at `AT` (a premise rewritten since names
/// its new version).
fn premises_current(db: &Storage) -> bool {
    let r = db.read("default").unwrap();
    holding_now(db).into_iter().all(|(_, v)| {
        let State::Claim(c) = &v.state else {
            return true;
        };
        justifications(c).iter().flat_map(|(_, ps)| ps).all(|p| {
            let Some(premise) = version(&r, p).unwrap() else {
                return false;
            };
            let now = holding(&r, Kind::Claim, &premise.logical_id, AT).unwrap();
            now.is_some_and(|(_, cur)| cur.id == *p)
        })
    })
}

/// The base claims that hold at `AT`, as the model takes them.
fn live(claims: &[C], gone: &[bool]) -> Vec<(Key, Interval)> {
    claims
        .iter()
        .zip(gone)
        .filter(|(c, g)| !**g && !c.negative)
        .map(|(c, _)| {
            let s = state(c);
            let v = Interval::new(c.valid.0, c.valid.1).unwrap();
            ((s.subject, s.predicate, format!("n{}", c.o)), v)
        })
        .filter(|(_, v)| v.contains(AT))
        .collect()
}

/// The claims of `claims` with a claim id not yet in `seen`, one each (a
/// second would overwrite its timeline), as writes.
fn first_of_each(
    claims: &[C],
    seen: &mut std::collections::HashSet<String>,
) -> (Vec<C>, Vec<VersionWrite>) {
    let mut kept = Vec::new();
    let mut writes = Vec::new();
    for c in claims {
        if seen.insert(state(c).claim_id()) {
            let v = Interval::new(c.valid.0, c.valid.1).unwrap();
            writes.push(VersionWrite::assert_claim(state(c), v));
            kept.push(c.clone());
        }
    }
    (kept, writes)
}

/// Retracts over all time the claims of `claims` that `gone` marks and
/// `before` did not.
fn retract(db: &Storage, claims: &[C], gone: &[bool], before: &[bool]) {
    let retractions: Vec<_> = claims
        .iter()
        .enumerate()
        .filter(|(i, _)| gone[*i] && !before.get(*i).copied().unwrap_or(false))
        .map(|(_, c)| VersionWrite::retract(Kind::Claim, &state(c).claim_id(), Interval::from(-1)))
        .collect();
    if !retractions.is_empty() {
        commit_versions(db, "default", &retractions).unwrap();
    }
}

/// Corrects the claims of `claims` that `wider` names and `gone` does not
/// to a validity holding over theirs and more (a new version of each, so
/// the conclusions resting on it name a new premise).
fn widen(db: &Storage, claims: &mut [C], gone: &[bool], wider: &[Option<(i64, Option<i64>)>]) {
    let r = db.read("default").unwrap();
    let mut writes = Vec::new();
    for (i, c) in claims.iter_mut().enumerate() {
        let Some(Some((from, to))) = wider.get(i) else {
            continue;
        };
        if gone[i] {
            continue;
        }
        let (_, now) = holding(&r, Kind::Claim, &state(c).claim_id(), AT)
            .unwrap()
            .unwrap();
        let to = c.valid.1.zip(*to).map(|(a, b)| a.max(b));
        c.valid = (c.valid.0.min(*from), to);
        let v = Interval::new(c.valid.0, c.valid.1).unwrap();
        writes.push(VersionWrite::correct(&now.id, State::Claim(state(c))).valid(v));
    }
    drop(r);
    if !writes.is_empty() {
        commit_versions(db, "default", &writes).unwrap();
    }
}

fn check(
    db: &Storage,
    claims: &[C],
    retract_at: &[bool],
    more: &[C],
    retract_later: &[bool],
    wider: &[Option<(i64, Option<i64>)>],
) -> Result<(), TestCaseError> {
    let mut seen = std::collections::HashSet::new();
    let (mut kept, writes) = first_of_each(claims, &mut seen);
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
    let mut gone: Vec<bool> = (0..kept.len())
        .map(|i| retract_at.get(i).copied().unwrap_or(false))
        .collect();
    retract(db, &kept, &gone, &[]);
    let first = maintain_truth(db, "default", &opts).unwrap();
    prop_assert!(!first.incremental, "the first pass reads every claim");
    prop_assert_eq!(stored(db), model(&live(&kept, &gone)), "after maintenance");
    prop_assert!(
        premises_current(db),
        "a justification names an old premise version"
    );
    // A second pass changes nothing.
    let again = maintain_truth(db, "default", &opts).unwrap();
    prop_assert!(again.incremental);
    prop_assert_eq!(again.versions.len(), 0);
    // More claims and retractions; the pass starts from them alone.
    let (added, writes) = first_of_each(more, &mut seen);
    if !writes.is_empty() {
        commit_versions(db, "default", &writes).unwrap();
    }
    kept.extend(added);
    gone.resize(kept.len(), false);
    let later: Vec<bool> = (0..kept.len())
        .map(|i| gone[i] || retract_later.get(i).copied().unwrap_or(false))
        .collect();
    widen(db, &mut kept, &later, wider);
    retract(db, &kept, &later, &gone);
    let next = maintain_truth(db, "default", &opts).unwrap();
    prop_assert!(next.incremental);
    prop_assert_eq!(
        stored(db),
        model(&live(&kept, &later)),
        "after incremental maintenance"
    );
    prop_assert!(
        premises_current(db),
        "a justification names an old premise version"
    );
    let again = maintain_truth(db, "default", &opts).unwrap();
    prop_assert_eq!(again.versions.len(), 0, "a pass after an incremental one");
    Ok(())
}

proptest! {
    // 96 cases in the suite; PROPTEST_CASES asks for more.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(96),
        ..ProptestConfig::default()
    })]

    #[test]
    fn conclusions_equal_the_naive_fixpoint(
        claims in proptest::collection::vec(c(), 1..14),
        retract in proptest::collection::vec(any::<bool>(), 14),
        more in proptest::collection::vec(c(), 0..8),
        later in proptest::collection::vec(any::<bool>(), 22),
        wider in proptest::collection::vec(proptest::option::of((0i64..10, proptest::option::of(11i64..40))), 22),
        lmdb in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = if lmdb {
            let kv = plexus_kv::open(Backend::Lmdb, dir.path(), KEYSPACE_NAMES, &KvOptions::default()).unwrap();
            Storage::open(kv).unwrap()
        } else {
            Storage::in_memory().unwrap()
        };
        check(&db, &claims, &retract, &more, &later, &wider)?;
    }
}

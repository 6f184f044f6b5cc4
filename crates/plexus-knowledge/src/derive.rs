//! The fixpoint of the rules over a set of facts, semi-naively and within
//! limits: each round joins only combinations that use at least one fact
//! new (or grown) in the round before, each exactly once, and every join
//! step looks facts up by predicate and a bound subject or object.
//!
//! A conclusion holds over the union (hull) of the validity of its
//! derivations, each the intersection of its premises' intervals, as
//! GestaltDB does; premises of one derivation share a world, and the
//! conclusion is in it.

use crate::error::{KnowledgeError, Result};
use crate::rules::{Atom, Rule, Term};
use plexus_temporal::Interval;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A conclusion's identity: subject, predicate, object, world.
pub(crate) type Key = (String, String, String, String);

/// Where a fact comes from: a stored claim version, or a conclusion of
/// this evaluation (named by its key until it gets a version id).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Ref {
    Version(String),
    Derived(Key),
}

#[derive(Debug, Clone)]
pub(crate) struct Fact {
    pub subject: String,
    pub predicate: String,
    pub object: String,
    pub world: String,
    pub valid: Interval,
    pub from: Ref,
}

/// A derivation: the rule version and its premises in body order.
pub(crate) type Support = (String, Vec<Ref>);

#[derive(Debug, Clone)]
pub(crate) struct Output {
    pub valid: Interval,
    pub supports: BTreeSet<Support>,
}

/// The bounds of one evaluation.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_iterations: u64,
    /// New conclusions.
    pub max_derivations: u64,
    /// Distinct derivations (justifications).
    pub max_justifications: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_iterations: 100,
            max_derivations: 10_000,
            max_justifications: 100_000,
        }
    }
}

impl Limits {
    pub(crate) fn check(&self) -> Result<()> {
        let bounds = [
            ("maxIterations", self.max_iterations),
            ("maxDerivations", self.max_derivations),
            ("maxJustifications", self.max_justifications),
        ];
        match bounds.iter().find(|(_, v)| *v == 0) {
            Some((what, _)) => Err(KnowledgeError::InvalidLimit { what }),
            None => Ok(()),
        }
    }
}

pub(crate) struct Fixpoint {
    pub outputs: BTreeMap<Key, Output>,
    pub iterations: u64,
    pub justifications: u64,
}

/// The facts and their lookups by predicate, subject and object.
struct Facts {
    all: Vec<Fact>,
    by_pred: HashMap<String, Vec<usize>>,
    by_subject: HashMap<(String, String), Vec<usize>>,
    by_object: HashMap<(String, String), Vec<usize>>,
    /// Conclusions (and stored conclusions given as facts) by key.
    derived: HashMap<Key, usize>,
}

impl Facts {
    fn push(&mut self, f: Fact) -> usize {
        let i = self.all.len();
        self.by_pred.entry(f.predicate.clone()).or_default().push(i);
        self.by_subject
            .entry((f.predicate.clone(), f.subject.clone()))
            .or_default()
            .push(i);
        self.by_object
            .entry((f.predicate.clone(), f.object.clone()))
            .or_default()
            .push(i);
        self.all.push(f);
        i
    }

    /// The facts an atom can match under `bindings`.
    fn candidates(&self, a: &Atom, b: &HashMap<&str, &str>) -> &[usize] {
        let bound = |t: &Term| match t {
            Term::Const(c) => Some(c.clone()),
            Term::Var(v) => b.get(v.as_str()).map(|s| s.to_string()),
        };
        let found = if let Some(s) = bound(&a.subject) {
            self.by_subject.get(&(a.predicate.clone(), s))
        } else if let Some(o) = bound(&a.object) {
            self.by_object.get(&(a.predicate.clone(), o))
        } else {
            self.by_pred.get(&a.predicate)
        };
        found.map_or(&[], Vec::as_slice)
    }
}

/// One partial match of a rule body.
struct Partial<'f> {
    bindings: HashMap<&'f str, &'f str>,
    premises: Vec<usize>,
    valid: Option<Interval>,
    world: Option<&'f str>,
}

fn unify<'f>(t: &'f Term, value: &'f str, b: &mut HashMap<&'f str, &'f str>) -> bool {
    match t {
        Term::Const(c) => c == value,
        Term::Var(v) => match b.get(v.as_str()) {
            Some(x) => *x == value,
            None => {
                b.insert(v, value);
                true
            }
        },
    }
}

pub(crate) fn intersect(a: Interval, b: Interval) -> Option<Interval> {
    let from = a.from.max(b.from);
    let to = match (a.to, b.to) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    Interval::new(from, to).ok()
}

pub(crate) fn hull(a: Interval, b: Interval) -> Interval {
    let to = match (a.to, b.to) {
        (Some(x), Some(y)) => Some(x.max(y)),
        _ => None,
    };
    Interval {
        from: a.from.min(b.from),
        to,
    }
}

/// The matches of `rule`'s body that use a fact of `delta` at atom
/// `pivot`, facts not in it before the pivot, and any fact after it.
fn matches<'f>(
    rule: &'f Rule,
    facts: &'f Facts,
    delta: &BTreeSet<usize>,
    pivot: usize,
) -> Vec<Partial<'f>> {
    let mut rows = vec![Partial {
        bindings: HashMap::new(),
        premises: Vec::new(),
        valid: None,
        world: None,
    }];
    for (pos, atom) in rule.when.iter().enumerate() {
        let mut next = Vec::new();
        for row in &rows {
            for &i in facts.candidates(atom, &row.bindings) {
                let in_delta = delta.contains(&i);
                if (pos == pivot && !in_delta) || (pos < pivot && in_delta) {
                    continue;
                }
                let f = &facts.all[i];
                if row.world.is_some_and(|w| w != f.world) {
                    continue;
                }
                let mut b = row.bindings.clone();
                if !unify(&atom.subject, &f.subject, &mut b)
                    || !unify(&atom.object, &f.object, &mut b)
                {
                    continue;
                }
                let valid = match row.valid {
                    None => Some(f.valid),
                    Some(v) => intersect(v, f.valid),
                };
                if valid.is_none() {
                    continue;
                }
                let mut premises = row.premises.clone();
                premises.push(i);
                next.push(Partial {
                    bindings: b,
                    premises,
                    valid,
                    world: Some(&f.world),
                });
            }
        }
        rows = next;
        if rows.is_empty() {
            break;
        }
    }
    rows
}

fn ground(t: &Term, b: &HashMap<&str, &str>) -> String {
    match t {
        Term::Const(c) => c.clone(),
        Term::Var(v) => b
            .get(v.as_str())
            .map_or_else(String::new, |s| s.to_string()),
    }
}

/// Evaluates `rules` over `facts` to their fixpoint. Facts whose `from`
/// is a stored conclusion (`stored`: its key) merge with what the rules
/// derive for that key instead of counting as new.
pub(crate) fn fixpoint(
    rules: &[Rule],
    facts: Vec<Fact>,
    stored: &HashMap<usize, Key>,
    limits: Limits,
) -> Result<Fixpoint> {
    let mut fs = Facts {
        all: Vec::with_capacity(facts.len()),
        by_pred: HashMap::new(),
        by_subject: HashMap::new(),
        by_object: HashMap::new(),
        derived: HashMap::new(),
    };
    for (n, f) in facts.into_iter().enumerate() {
        let i = fs.push(f);
        if let Some(k) = stored.get(&n) {
            fs.derived.insert(k.clone(), i);
        }
    }
    let mut out = Fixpoint {
        outputs: BTreeMap::new(),
        iterations: 0,
        justifications: 0,
    };
    let mut new = 0u64;
    let mut delta: BTreeSet<usize> = (0..fs.all.len()).collect();
    while !delta.is_empty() {
        if out.iterations >= limits.max_iterations {
            return Err(KnowledgeError::Limit {
                what: "maxIterations",
                limit: limits.max_iterations,
            });
        }
        out.iterations += 1;
        // What this round derives: key → (validity, supports).
        let mut round: BTreeMap<Key, (Interval, Vec<Support>)> = BTreeMap::new();
        for rule in rules {
            for pivot in 0..rule.when.len() {
                for m in matches(rule, &fs, &delta, pivot) {
                    let (Some(valid), Some(world)) = (m.valid, m.world) else {
                        continue;
                    };
                    let key = (
                        ground(&rule.then.subject, &m.bindings),
                        rule.then.predicate.clone(),
                        ground(&rule.then.object, &m.bindings),
                        world.to_string(),
                    );
                    let refs = m.premises.iter().map(|&i| fs.all[i].from.clone()).collect();
                    let e = round.entry(key).or_insert((valid, Vec::new()));
                    e.0 = hull(e.0, valid);
                    e.1.push((rule.version_id.clone(), refs));
                }
            }
        }
        let mut next = BTreeSet::new();
        for (key, (valid, supports)) in round {
            let o = out.outputs.entry(key.clone()).or_insert_with(|| Output {
                valid,
                supports: BTreeSet::new(),
            });
            o.valid = hull(o.valid, valid);
            for s in supports {
                if o.supports.insert(s) {
                    out.justifications += 1;
                    if out.justifications > limits.max_justifications {
                        return Err(KnowledgeError::Limit {
                            what: "maxJustifications",
                            limit: limits.max_justifications,
                        });
                    }
                }
            }
            match fs.derived.get(&key) {
                Some(&i) => {
                    let grown = hull(fs.all[i].valid, o.valid);
                    if grown != fs.all[i].valid {
                        fs.all[i].valid = grown;
                        next.insert(i);
                    }
                }
                None => {
                    new += 1;
                    if new > limits.max_derivations {
                        return Err(KnowledgeError::Limit {
                            what: "maxDerivations",
                            limit: limits.max_derivations,
                        });
                    }
                    let i = fs.push(Fact {
                        subject: key.0.clone(),
                        predicate: key.1.clone(),
                        object: key.2.clone(),
                        world: key.3.clone(),
                        valid: o.valid,
                        from: Ref::Derived(key.clone()),
                    });
                    fs.derived.insert(key, i);
                    next.insert(i);
                }
            }
        }
        delta = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(s: &str, p: &str, o: &str, valid: Interval) -> Fact {
        Fact {
            subject: s.into(),
            predicate: p.into(),
            object: o.into(),
            world: "w".into(),
            valid,
            from: Ref::Version(format!("{s}-{p}-{o}")),
        }
    }

    fn transitive() -> Rule {
        let a = |s, p, o| Atom::parse(s, p, o).unwrap();
        Rule::new(
            "t",
            "t1",
            vec![a("?x", "ANC", "?y"), a("?y", "ANC", "?z")],
            a("?x", "ANC", "?z"),
        )
        .unwrap()
    }

    #[test]
    fn a_chain_closes_transitively_with_intersected_validity() {
        let facts = vec![
            fact("a", "ANC", "b", Interval::new(0, Some(10)).unwrap()),
            fact("b", "ANC", "c", Interval::new(5, Some(20)).unwrap()),
            fact("c", "ANC", "d", Interval::from(8)),
        ];
        let fp = fixpoint(&[transitive()], facts, &HashMap::new(), Limits::default()).unwrap();
        let keys: Vec<_> = fp
            .outputs
            .keys()
            .map(|k| format!("{}{}", k.0, k.2))
            .collect();
        assert_eq!(keys, ["ac", "ad", "bd"]);
        let ad = &fp.outputs[&("a".into(), "ANC".into(), "d".into(), "w".into())];
        assert_eq!(ad.valid, Interval::new(8, Some(10)).unwrap());
        // a→d two ways: (a→b, b→d) and (a→c, c→d).
        assert_eq!(ad.supports.len(), 2);
    }

    #[test]
    fn limits_stop_the_evaluation() {
        let facts: Vec<_> = (0..20)
            .map(|i| {
                fact(
                    &format!("n{i}"),
                    "ANC",
                    &format!("n{}", i + 1),
                    Interval::from(0),
                )
            })
            .collect();
        let tight = Limits {
            max_derivations: 10,
            ..Limits::default()
        };
        let e = fixpoint(&[transitive()], facts.clone(), &HashMap::new(), tight);
        assert!(matches!(
            e,
            Err(KnowledgeError::Limit {
                what: "maxDerivations",
                ..
            })
        ));
        let rounds = Limits {
            max_iterations: 2,
            ..Limits::default()
        };
        let e = fixpoint(&[transitive()], facts.clone(), &HashMap::new(), rounds);
        assert!(matches!(
            e,
            Err(KnowledgeError::Limit {
                what: "maxIterations",
                ..
            })
        ));
        let fp = fixpoint(&[transitive()], facts, &HashMap::new(), Limits::default()).unwrap();
        // All pairs i < j over 21 nodes, minus the 20 given edges.
        assert_eq!(fp.outputs.len(), 21 * 20 / 2 - 20);
    }
}

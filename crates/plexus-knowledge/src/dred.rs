//! Incremental truth maintenance: delete and rederive (DRed, Gupta, Mumick
//! and Subrahmanian 1993) over the claims changed since the last pass,
//! reading only what they touch.
//!
//! The store keeps what it needs: every claim version written marks its
//! claim changed (`plexus_temporal::changed_claims`), and every conclusion
//! written records, per premise claim, a dependency entry (`deps`). A pass
//! at the same instant, world and rule versions as the last one:
//!
//! 1. *Over-deletes*: the conclusions that depend on a changed claim,
//!    through the dependency entries and then on each other, holding at
//!    the instant (a changed conclusion itself too).
//! 2. *Rederives* each of them from the claims that were not deleted:
//!    every rule whose head matches it, its body joined with the head's
//!    bindings through the claim index.
//! 3. *Inserts* semi-naively: the changed claims that hold now and the
//!    rederived conclusions are the first round's new facts; each round
//!    joins every rule body with one new fact at one atom and the rest from
//!    the store, and a conclusion that appears, gains a derivation or grows
//!    is a new fact of the next.
//!
//! The conclusions each phase settles are then written as a full pass
//! writes them (`run.rs`), with those resting on a rewritten one rewritten
//! in turn (their premise's version id changed). Every join step looks
//! claims up by world, predicate and a bound subject (or object), as the
//! full evaluation does in memory, so a pass costs what the changes reach.

use crate::derive::{hull, intersect, Key, Limits, Output, Ref, Support};
use crate::error::{KnowledgeError, Result};
use crate::rules::{Atom, Rule, Term};
use plexus_storage::WriteTxn;
use plexus_temporal::{
    claims_holding, holding, ClaimObject, ClaimQuery, Interval, Kind, Polarity, State, Version,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// A fact as a join sees it: its key, validity and where it comes from.
#[derive(Debug, Clone)]
struct Fact {
    key: Key,
    valid: Interval,
    from: Ref,
}

/// A stored conclusion holding at the instant: the stretch it holds over
/// and its version.
pub(crate) type Stored = (Interval, Version);

/// What an incremental pass found, for `run.rs` to write.
pub(crate) struct Outcome {
    /// Conclusions recomputed, rederived or grown, with every derivation.
    pub outputs: BTreeMap<Key, Output>,
    /// The stored versions of the conclusions the pass read.
    pub stored: HashMap<Key, Stored>,
    /// Over-deleted conclusions no derivation restored.
    pub gone: Vec<Key>,
    /// Version id → claim id of the base premises met.
    pub logical: HashMap<String, String>,
    pub iterations: u64,
    pub justifications: u64,
}

/// A claim lookup: world, predicate, and the subject and object if bound.
type Lookup = (String, String, Option<String>, Option<String>);

/// The pass's view of the claims: the store, less the over-deleted
/// conclusions, plus what the pass derived.
struct Pass<'t> {
    txn: &'t WriteTxn,
    at: i64,
    /// Store lookups by what they asked.
    cache: HashMap<Lookup, Vec<Fact>>,
    deleted: HashSet<Key>,
    outcome: Outcome,
}

impl Pass<'_> {
    /// The facts of `world` matching `pred` and the bound parts.
    fn lookup(
        &mut self,
        world: &str,
        pred: &str,
        subject: Option<&str>,
        object: Option<&str>,
    ) -> Result<Vec<Fact>> {
        let ck = (
            world.to_string(),
            pred.to_string(),
            subject.map(str::to_string),
            object.map(str::to_string),
        );
        if !self.cache.contains_key(&ck) {
            let q = ClaimQuery {
                world: Some(world.to_string()),
                predicate: Some(pred.to_string()),
                subject: subject.map(str::to_string),
                object: object.map(|o| ClaimObject::Entity(o.to_string())),
                polarity: Some(Polarity::Positive),
                ..ClaimQuery::default()
            };
            let mut facts = Vec::new();
            for (held, v) in claims_holding(self.txn, &q, self.at)? {
                if let Some(f) = self.fact(held, &v) {
                    facts.push(f);
                }
            }
            self.cache.insert(ck.clone(), facts);
        }
        let stored = self.cache.get(&ck).map(Vec::as_slice).unwrap_or_default();
        let outputs = &self.outcome.outputs;
        let mut out: Vec<Fact> = stored
            .iter()
            .filter(|f| match &f.from {
                Ref::Derived(k) => !self.deleted.contains(k) && !outputs.contains_key(k),
                Ref::Version(_) => true,
            })
            .cloned()
            .collect();
        let matches = |k: &Key| {
            k.1 == pred
                && k.3 == world
                && subject.is_none_or(|s| s == k.0)
                && object.is_none_or(|o| o == k.2)
        };
        // Outputs are keyed subject first: a bound subject is a range.
        let candidates: Box<dyn Iterator<Item = (&Key, &Output)>> = match subject {
            Some(s) => {
                let from = (s.to_string(), String::new(), String::new(), String::new());
                Box::new(outputs.range(from..).take_while(move |(k, _)| k.0 == s))
            }
            None => Box::new(outputs.iter()),
        };
        out.extend(candidates.filter(|(k, _)| matches(k)).map(|(k, o)| Fact {
            key: k.clone(),
            valid: o.valid,
            from: Ref::Derived(k.clone()),
        }));
        Ok(out)
    }

    /// A positive claim version as a fact: a conclusion by its key, a base
    /// claim by its version id (remembering its claim id).
    fn fact(&mut self, held: Interval, v: &Version) -> Option<Fact> {
        let State::Claim(c) = &v.state else {
            return None;
        };
        if c.polarity != Polarity::Positive {
            return None;
        }
        let key = crate::run::key_of(c)?;
        let from = if crate::run::is_derived(c) {
            Ref::Derived(key.clone())
        } else {
            self.outcome
                .logical
                .insert(v.id.clone(), v.logical_id.clone());
            Ref::Version(v.id.clone())
        };
        Some(Fact {
            key,
            valid: held,
            from,
        })
    }

    /// The derivations of `rule` from `first` (bindings, with the premise
    /// of atom `pivot` already matched) over the pass's facts in `world`.
    fn join(
        &mut self,
        rule: &Rule,
        world: &str,
        first: Row,
        pivot: Option<usize>,
    ) -> Result<Vec<(Key, Interval, Support)>> {
        let mut rows = vec![first];
        for (pos, atom) in rule.when.iter().enumerate() {
            if Some(pos) == pivot {
                continue;
            }
            let mut next = Vec::new();
            for row in &rows {
                let s = bound(&atom.subject, &row.bindings);
                let o = bound(&atom.object, &row.bindings);
                for f in self.lookup(world, &atom.predicate, s, o)? {
                    if let Some(r) = row.extend(atom, pos, &f) {
                        next.push(r);
                    }
                }
            }
            rows = next;
        }
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let valid = r.valid;
                let key = (
                    ground(&rule.then.subject, &r.bindings)?,
                    rule.then.predicate.clone(),
                    ground(&rule.then.object, &r.bindings)?,
                    world.to_string(),
                );
                let refs = r.premises.into_iter().collect::<Option<Vec<_>>>()?;
                Some((key, valid, (rule.version_id.clone(), refs)))
            })
            .collect())
    }

    /// Adds derivations to the outputs; the keys that appeared, gained a
    /// derivation or grew.
    fn add(
        &mut self,
        found: Vec<(Key, Interval, Support)>,
        limits: Limits,
        new: &mut u64,
    ) -> Result<BTreeSet<Key>> {
        let mut changed = BTreeSet::new();
        for (key, valid, support) in found {
            if !self.outcome.outputs.contains_key(&key) {
                let unread =
                    !self.deleted.contains(&key) && !self.outcome.stored.contains_key(&key);
                if unread {
                    let id = crate::run::conclusion_id(&key);
                    if let Some((k, stored)) = conclusion(self.txn, &id, self.at)? {
                        self.outcome.stored.insert(k, stored);
                    }
                }
                let start = match self.outcome.stored.get(&key) {
                    Some((held, v)) if !self.deleted.contains(&key) => Output {
                        valid: *held,
                        supports: crate::run::semantic(self.txn, v)?,
                    },
                    // Over-deleted: only what the pass derives counts.
                    Some(_) => Output {
                        valid,
                        supports: BTreeSet::new(),
                    },
                    None => {
                        *new += 1;
                        if *new > limits.max_derivations {
                            return Err(limit("maxDerivations", limits.max_derivations));
                        }
                        Output {
                            valid,
                            supports: BTreeSet::new(),
                        }
                    }
                };
                self.outcome.outputs.insert(key.clone(), start);
            }
            let Some(o) = self.outcome.outputs.get_mut(&key) else {
                continue;
            };
            let grown = hull(o.valid, valid);
            let added = o.supports.insert(support);
            if added {
                self.outcome.justifications += 1;
                if self.outcome.justifications > limits.max_justifications {
                    return Err(limit("maxJustifications", limits.max_justifications));
                }
            }
            if added || grown != o.valid {
                o.valid = grown;
                changed.insert(key);
            }
        }
        Ok(changed)
    }
}

/// A partial match of a rule body: bindings, the premise of each atom
/// matched so far (body order), and the intersection of their validity.
#[derive(Clone)]
struct Row {
    bindings: HashMap<String, String>,
    premises: Vec<Option<Ref>>,
    valid: Interval,
}

impl Row {
    fn new(rule: &Rule) -> Row {
        Row {
            bindings: HashMap::new(),
            premises: vec![None; rule.when.len()],
            valid: Interval::from(i64::MIN),
        }
    }

    /// This row with `f` matched at atom `pos`, if it unifies and its
    /// validity meets the row's.
    fn extend(&self, atom: &Atom, pos: usize, f: &Fact) -> Option<Row> {
        if atom.predicate != f.key.1 {
            return None;
        }
        let mut b = self.bindings.clone();
        if !unify(&atom.subject, &f.key.0, &mut b) || !unify(&atom.object, &f.key.2, &mut b) {
            return None;
        }
        let valid = intersect(self.valid, f.valid)?;
        let mut premises = self.premises.clone();
        *premises.get_mut(pos)? = Some(f.from.clone());
        Some(Row {
            bindings: b,
            premises,
            valid,
        })
    }
}

fn bound<'b>(t: &'b Term, b: &'b HashMap<String, String>) -> Option<&'b str> {
    match t {
        Term::Const(c) => Some(c),
        Term::Var(v) => b.get(v).map(String::as_str),
    }
}

fn unify(t: &Term, value: &str, b: &mut HashMap<String, String>) -> bool {
    match t {
        Term::Const(c) => c == value,
        Term::Var(v) => match b.get(v) {
            Some(x) => x == value,
            None => {
                b.insert(v.clone(), value.to_string());
                true
            }
        },
    }
}

fn ground(t: &Term, b: &HashMap<String, String>) -> Option<String> {
    bound(t, b).map(str::to_string)
}

fn limit(what: &'static str, limit: u64) -> KnowledgeError {
    KnowledgeError::Limit { what, limit }
}

/// The conclusion holding at `at` under claim id `id`, if it is one.
fn conclusion(txn: &WriteTxn, id: &str, at: i64) -> Result<Option<(Key, Stored)>> {
    let Some((held, v)) = holding(txn, Kind::Claim, id, at)? else {
        return Ok(None);
    };
    let key = match &v.state {
        State::Claim(c) if crate::run::is_derived(c) => crate::run::key_of(c),
        _ => None,
    };
    Ok(key.map(|k| (k, (held, v))))
}

/// Runs a pass over the claims `changed` names; see the module.
pub(crate) fn maintain(
    txn: &WriteTxn,
    rules: &[Rule],
    world: Option<&str>,
    at: i64,
    changed: &[String],
    limits: Limits,
) -> Result<Outcome> {
    let mut pass = Pass {
        txn,
        at,
        cache: HashMap::new(),
        deleted: HashSet::new(),
        outcome: Outcome {
            outputs: BTreeMap::new(),
            stored: HashMap::new(),
            gone: Vec::new(),
            logical: HashMap::new(),
            iterations: 0,
            justifications: 0,
        },
    };
    let mut new = 0;
    let inserted = pass.over_delete(changed, world)?;
    let rederived = pass.rederive(rules, limits, &mut new)?;
    let mut facts = inserted;
    facts.extend(rederived.iter().filter_map(|k| derived_fact(&pass, k)));
    pass.insert(rules, facts, limits, &mut new)?;
    let Pass {
        deleted,
        mut outcome,
        ..
    } = pass;
    outcome.gone = deleted
        .into_iter()
        .filter(|k| !outcome.outputs.contains_key(k))
        .collect();
    outcome.gone.sort();
    Ok(outcome)
}

impl Pass<'_> {
    /// Marks deleted the conclusions reached from the claims `changed`
    /// (in `world`, when given); returns those changed claims that hold
    /// now as independent facts.
    fn over_delete(&mut self, changed: &[String], world: Option<&str>) -> Result<Vec<Fact>> {
        let in_world = |w: &str| world.is_none_or(|x| x == w);
        let mut inserted = Vec::new();
        for id in changed {
            if let Some((held, v)) = holding(self.txn, Kind::Claim, id, self.at)? {
                match self.fact(held, &v) {
                    Some(f) if matches!(f.from, Ref::Version(_)) && in_world(&f.key.3) => {
                        inserted.push(f);
                    }
                    _ => {}
                }
            }
        }
        let mut seen: HashSet<String> = HashSet::new();
        let mut frontier: Vec<String> = changed.to_vec();
        while let Some(id) = frontier.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            if let Some((key, stored)) = conclusion(self.txn, &id, self.at)? {
                if in_world(&key.3) {
                    self.deleted.insert(key.clone());
                    self.outcome.stored.insert(key, stored);
                }
            }
            frontier.extend(crate::run::dependents(self.txn, &id)?);
        }
        Ok(inserted)
    }

    /// Derives each deleted conclusion again from what was not deleted;
    /// the ones restored.
    fn rederive(&mut self, rules: &[Rule], limits: Limits, new: &mut u64) -> Result<BTreeSet<Key>> {
        let mut restored = BTreeSet::new();
        let deleted: Vec<Key> = self.deleted.iter().cloned().collect();
        for key in &deleted {
            for rule in rules {
                let Some(first) = head_row(rule, key) else {
                    continue;
                };
                let found = self.join(rule, &key.3, first, None)?;
                restored.extend(self.add(found, limits, new)?);
            }
        }
        // A restored conclusion is no longer deleted: its derivations are
        // in the outputs, which the lookups read.
        for key in &restored {
            self.deleted.remove(key);
        }
        Ok(restored)
    }

    /// Rounds of joins, each with one new fact at one atom, until no
    /// conclusion appears, gains a derivation or grows.
    fn insert(
        &mut self,
        rules: &[Rule],
        mut facts: Vec<Fact>,
        limits: Limits,
        new: &mut u64,
    ) -> Result<()> {
        while !facts.is_empty() {
            if self.outcome.iterations >= limits.max_iterations {
                return Err(limit("maxIterations", limits.max_iterations));
            }
            self.outcome.iterations += 1;
            let mut next = BTreeSet::new();
            for f in &facts {
                for rule in rules {
                    for (pos, atom) in rule.when.iter().enumerate() {
                        let Some(first) = Row::new(rule).extend(atom, pos, f) else {
                            continue;
                        };
                        let found = self.join(rule, &f.key.3, first, Some(pos))?;
                        next.extend(self.add(found, limits, new)?);
                    }
                }
            }
            for key in &next {
                self.deleted.remove(key);
            }
            facts = next.iter().filter_map(|k| derived_fact(self, k)).collect();
        }
        Ok(())
    }
}

/// The first row of `rule` with its head matched to `key`, if it can be.
fn head_row(rule: &Rule, key: &Key) -> Option<Row> {
    if rule.then.predicate != key.1 {
        return None;
    }
    let mut row = Row::new(rule);
    (unify(&rule.then.subject, &key.0, &mut row.bindings)
        && unify(&rule.then.object, &key.2, &mut row.bindings))
    .then_some(row)
}

fn derived_fact(pass: &Pass<'_>, key: &Key) -> Option<Fact> {
    pass.outcome.outputs.get(key).map(|o| Fact {
        key: key.clone(),
        valid: o.valid,
        from: Ref::Derived(key.clone()),
    })
}

/// The stored conclusions resting on `keys` that the pass did not read,
/// transitively: their premise's version id changes, so they are written
/// again with the same derivations.
pub(crate) fn resting_on(
    txn: &WriteTxn,
    at: i64,
    keys: Vec<Key>,
    outcome: &mut Outcome,
) -> Result<HashSet<Key>> {
    let mut rewrite: HashSet<Key> = HashSet::new();
    let mut frontier = keys;
    while let Some(k) = frontier.pop() {
        if !rewrite.insert(k.clone()) {
            continue;
        }
        for id in crate::run::dependents(txn, &crate::run::conclusion_id(&k))? {
            let Some((dk, stored)) = conclusion(txn, &id, at)? else {
                continue;
            };
            if !outcome.outputs.contains_key(&dk) {
                let supports = crate::run::semantic(txn, &stored.1)?;
                outcome.outputs.insert(
                    dk.clone(),
                    Output {
                        valid: stored.0,
                        supports,
                    },
                );
                outcome.stored.insert(dk.clone(), stored);
            }
            frontier.push(dk);
        }
    }
    Ok(rewrite)
}

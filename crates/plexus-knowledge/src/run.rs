//! Rule runs and truth maintenance: the rules' fixpoint over the positive
//! entity claims that hold at a valid instant, written as claims of the
//! agent [`RULE_AGENT`] whose provenance lists their justifications (the
//! rule version and the premise claim versions of each derivation).
//!
//! Both work in one write transaction: the facts come from its snapshot,
//! and a limit reached, or any error, drops it with nothing written.
//!
//! * [`run_rules`] adds: the stored conclusions count as facts, new ones
//!   are asserted, and a stored one whose validity or justifications grew
//!   is corrected. A repeated run over unchanged claims writes nothing.
//! * [`maintain_truth`] reconciles: the fixpoint over the claims not made
//!   by the rules (so a cycle of conclusions cannot hold itself up once
//!   its last independent support is gone), then each stored conclusion
//!   is kept, corrected (its validity or justifications changed, or a
//!   premise conclusion's version did), or retracted when its last
//!   support disappeared; new ones are asserted.

use crate::derive::{fixpoint, Fact, Key, Limits, Output, Ref};
use crate::error::{KnowledgeError, Result};
use crate::rules::{rules, Rule};
use plexus_common::{read_i64, Value};
use plexus_storage::{GraphRead, Storage, WriteTxn};
use plexus_temporal::{
    claims_holding, version, worlds, write_version, ClaimObject, ClaimQuery, ClaimState, Interval,
    Kind, Polarity, Props, State, Version, VersionWrite,
};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The agent of derived claims.
pub const RULE_AGENT: &str = "plexus:rules";
/// The provenance key marking a derived claim, and its value.
const DERIVED_BY: (&str, &str) = ("derivedBy", "plexus.rules");
const JUSTIFICATIONS: &str = "justifications";
/// Where the last run's valid instant is kept (for resuming maintenance).
const LAST_INSTANT: &[u8] = b"M|rules-instant";

/// What a run or a maintenance pass did.
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    pub iterations: u64,
    /// Distinct derivations found.
    pub justifications: u64,
    pub asserted: usize,
    pub corrected: usize,
    pub retracted: usize,
    /// The versions written, in order.
    pub versions: Vec<Version>,
}

/// Which claims a run reads, and its bounds.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The valid instant the premises hold at; `None` (maintenance only):
    /// the last run's.
    pub at: Option<i64>,
    /// `None`: every world (each derivation stays within one).
    pub world: Option<String>,
    pub limits: Limits,
}

/// Whether a claim is a conclusion of the rules.
pub fn is_derived(c: &ClaimState) -> bool {
    c.agent == RULE_AGENT
        && c.provenance.get(DERIVED_BY.0) == Some(&Value::String(DERIVED_BY.1.into()))
}

/// The justifications a derived claim's provenance lists: rule version id
/// and premise version ids.
pub fn justifications(c: &ClaimState) -> Vec<(String, Vec<String>)> {
    let Some(Value::List(items)) = c.provenance.get(JUSTIFICATIONS) else {
        return Vec::new();
    };
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    items
        .iter()
        .filter_map(|j| match j {
            Value::Map(m) => {
                let rule = text(m.get("rule"))?;
                let Some(Value::List(ps)) = m.get("premises") else {
                    return None;
                };
                let premises = ps.iter().map(|p| text(Some(p))).collect::<Option<_>>()?;
                Some((rule, premises))
            }
            _ => None,
        })
        .collect()
}

fn key_of(c: &ClaimState) -> Option<Key> {
    let o = c.object.entity()?;
    Some((
        c.subject.clone(),
        c.predicate.clone(),
        o.to_string(),
        c.world.clone(),
    ))
}

/// The claims a run starts from, split into independent ones and stored
/// conclusions (by key).
struct Input {
    base: Vec<Fact>,
    /// Each with the stretch of valid time it holds over.
    stored: HashMap<Key, (Interval, Version)>,
}

fn read_input(txn: &WriteTxn, rules: &[Rule], world: Option<&str>, at: i64) -> Result<Input> {
    let mut preds: BTreeSet<&str> = BTreeSet::new();
    for r in rules {
        preds.extend(r.when.iter().map(|a| a.predicate.as_str()));
        preds.insert(&r.then.predicate);
    }
    let ws = match world {
        Some(w) => vec![w.to_string()],
        None => worlds(txn)?,
    };
    let mut input = Input {
        base: Vec::new(),
        stored: HashMap::new(),
    };
    for w in &ws {
        for p in &preds {
            let q = ClaimQuery {
                world: Some(w.clone()),
                predicate: Some(p.to_string()),
                polarity: Some(Polarity::Positive),
                ..ClaimQuery::default()
            };
            for (held, v) in claims_holding(txn, &q, at)? {
                let State::Claim(c) = &v.state else { continue };
                let Some(key) = key_of(c) else { continue };
                if is_derived(c) {
                    input.stored.insert(key, (held, v));
                } else {
                    input.base.push(Fact {
                        subject: key.0,
                        predicate: key.1,
                        object: key.2,
                        world: key.3,
                        valid: held,
                        from: Ref::Version(v.id.clone()),
                    });
                }
            }
        }
    }
    Ok(input)
}

fn derived_claim(key: &Key, justifications: Vec<(String, Vec<String>)>) -> ClaimState {
    let encoded = justifications
        .into_iter()
        .map(|(rule, premises)| {
            Value::Map(Props::from([
                ("rule".to_string(), Value::String(rule)),
                (
                    "premises".to_string(),
                    Value::List(premises.into_iter().map(Value::String).collect()),
                ),
            ]))
        })
        .collect();
    ClaimState {
        world: key.3.clone(),
        provenance: Props::from([
            (DERIVED_BY.0.to_string(), Value::String(DERIVED_BY.1.into())),
            (JUSTIFICATIONS.to_string(), Value::List(encoded)),
        ]),
        ..ClaimState::new(
            &key.0,
            &key.1,
            ClaimObject::Entity(key.2.clone()),
            RULE_AGENT,
        )
    }
}

fn resolve(o: &Output, ids: &HashMap<Key, String>) -> BTreeSet<(String, Vec<String>)> {
    o.supports
        .iter()
        .map(|(rule, premises)| {
            let ps = premises
                .iter()
                .map(|p| match p {
                    Ref::Version(v) => v.clone(),
                    Ref::Derived(k) => ids.get(k).cloned().unwrap_or_default(),
                })
                .collect();
            (rule.clone(), ps)
        })
        .collect()
}

fn claim_of(v: &Version) -> Option<&ClaimState> {
    match &v.state {
        State::Claim(c) => Some(c),
        _ => None,
    }
}

/// Runs the rules at `opts.at` in a transaction of its own on `graph`
/// and writes what they add; see the module.
pub fn run_rules(db: &Storage, graph: &str, opts: &RunOptions) -> Result<RunReport> {
    let mut txn = db.write(graph)?;
    let report = run_rules_in(&mut txn, opts)?;
    txn.commit()?;
    Ok(report)
}

/// [`run_rules`] in `txn`. On an error `txn` may hold part of the
/// writes: drop it.
pub fn run_rules_in(txn: &mut WriteTxn, opts: &RunOptions) -> Result<RunReport> {
    opts.limits.check()?;
    let at = opts.at.ok_or(KnowledgeError::NoInstant)?;
    let rules = rules(&*txn)?;
    let mut report = RunReport::default();
    if rules.is_empty() {
        return Ok(report);
    }
    let input = read_input(txn, &rules, opts.world.as_deref(), at)?;
    // Stored conclusions take part as facts under their versions.
    let mut facts = input.base;
    let mut stored_at = HashMap::new();
    for (key, (held, v)) in &input.stored {
        stored_at.insert(facts.len(), key.clone());
        facts.push(Fact {
            subject: key.0.clone(),
            predicate: key.1.clone(),
            object: key.2.clone(),
            world: key.3.clone(),
            valid: *held,
            from: Ref::Version(v.id.clone()),
        });
    }
    let fp = fixpoint(&rules, facts, &stored_at, opts.limits)?;
    report.iterations = fp.iterations;
    report.justifications = fp.justifications;
    let mut ids: HashMap<Key, String> = HashMap::new();
    for key in fp.outputs.keys() {
        let id = match input.stored.get(key) {
            Some((_, v)) => v.id.clone(),
            None => uuid::Uuid::new_v4().to_string(),
        };
        ids.insert(key.clone(), id);
    }
    for (key, o) in &fp.outputs {
        let mut js = resolve(o, &ids);
        let write = match input.stored.get(key) {
            None => {
                VersionWrite::assert_claim(derived_claim(key, js.into_iter().collect()), o.valid)
                    .id(&ids[key])
            }
            Some((held, old)) => {
                let before: BTreeSet<_> = claim_of(old)
                    .map(justifications)
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                let valid = crate::derive::hull(*held, o.valid);
                js.extend(before.iter().cloned());
                if valid == *held && js == before {
                    continue;
                }
                VersionWrite::correct(
                    &old.id,
                    State::Claim(derived_claim(key, js.into_iter().collect())),
                )
                .valid(valid)
            }
        };
        let v = write_version(txn, &write)?;
        match v.op {
            plexus_temporal::Op::Assert => report.asserted += 1,
            _ => report.corrected += 1,
        }
        report.versions.push(v);
    }
    remember(txn, at)?;
    Ok(report)
}

fn remember(txn: &mut WriteTxn, at: i64) -> Result<()> {
    let mut v = Vec::new();
    plexus_common::push_i64(&mut v, at);
    txn.valid_time_write(LAST_INSTANT, LAST_INSTANT, Some(v))?;
    Ok(())
}

/// The valid instant of the last rule run or maintenance pass.
pub fn last_instant(r: &(impl GraphRead + ?Sized)) -> Result<Option<i64>> {
    Ok(r.valid_time_get(LAST_INSTANT)?
        .and_then(|v| read_i64(&v, 0)))
}

/// Reconciles the stored conclusions with the rules' fixpoint over the
/// independent claims at `opts.at` (else the last run's instant); see the
/// module.
pub fn maintain_truth(db: &Storage, graph: &str, opts: &RunOptions) -> Result<RunReport> {
    let mut txn = db.write(graph)?;
    let report = maintain_truth_in(&mut txn, opts)?;
    txn.commit()?;
    Ok(report)
}

/// [`maintain_truth`] in `txn`. On an error `txn` may hold part of the
/// writes: drop it.
pub fn maintain_truth_in(txn: &mut WriteTxn, opts: &RunOptions) -> Result<RunReport> {
    opts.limits.check()?;
    let at = match opts.at {
        Some(t) => t,
        None => last_instant(&*txn)?.ok_or(KnowledgeError::NoInstant)?,
    };
    let rules = rules(&*txn)?;
    let input = read_input(txn, &rules, opts.world.as_deref(), at)?;
    let fp = fixpoint(&rules, input.base, &HashMap::new(), opts.limits)?;
    let mut report = RunReport {
        iterations: fp.iterations,
        justifications: fp.justifications,
        ..RunReport::default()
    };
    let changed = changed_keys(&*txn, &fp.outputs, &input.stored)?;
    let mut ids: HashMap<Key, String> = HashMap::new();
    for key in fp.outputs.keys() {
        let id = match input.stored.get(key) {
            Some((_, v)) if !changed.contains(key) => v.id.clone(),
            _ => uuid::Uuid::new_v4().to_string(),
        };
        ids.insert(key.clone(), id);
    }
    for (key, o) in &fp.outputs {
        if !changed.contains(key) {
            continue;
        }
        let claim = derived_claim(key, resolve(o, &ids).into_iter().collect());
        match input.stored.get(key) {
            None => {
                let w = VersionWrite::assert_claim(claim, o.valid).id(&ids[key]);
                report.versions.push(write_version(txn, &w)?);
                report.asserted += 1;
            }
            Some((held, old)) => {
                let w = VersionWrite::correct(&old.id, State::Claim(claim))
                    .valid(o.valid)
                    .id(&ids[key]);
                report.versions.push(write_version(txn, &w)?);
                report.corrected += 1;
                for gone in trimmed(*held, o.valid) {
                    let w = VersionWrite::retract(Kind::Claim, &old.logical_id, gone)
                        .superseding(&old.id)
                        .reason("derived validity no longer supported");
                    report.versions.push(write_version(txn, &w)?);
                }
            }
        }
    }
    let mut gone: Vec<_> = input
        .stored
        .iter()
        .filter(|(k, _)| !fp.outputs.contains_key(*k))
        .collect();
    gone.sort_by(|a, b| a.0.cmp(b.0));
    for (_, (held, old)) in gone {
        let w = VersionWrite::retract(Kind::Claim, &old.logical_id, *held)
            .superseding(&old.id)
            .reason("final rule support disappeared");
        report.versions.push(write_version(txn, &w)?);
        report.retracted += 1;
    }
    remember(txn, at)?;
    Ok(report)
}

/// The parts of `old` that `new` no longer covers.
fn trimmed(old: Interval, new: Interval) -> Vec<Interval> {
    let mut out = Vec::new();
    if old.from < new.from {
        out.extend(Interval::new(old.from, Some(new.from)).ok());
    }
    if let Some(end) = new.to {
        if old.to.is_none_or(|o| o > end) {
            out.extend(Interval::new(end, old.to).ok());
        }
    }
    out
}

/// The conclusions to write: new ones, stored ones whose validity or
/// support (premises named semantically: a derived premise by its key)
/// differ, and, transitively, those resting on a changed conclusion
/// (its version id changes).
fn changed_keys(
    r: &(impl GraphRead + ?Sized),
    outputs: &std::collections::BTreeMap<Key, Output>,
    stored: &HashMap<Key, (Interval, Version)>,
) -> Result<HashSet<Key>> {
    let mut changed = HashSet::new();
    for (key, o) in outputs {
        let same = match stored.get(key) {
            None => false,
            Some((held, old)) => *held == o.valid && semantic(r, old)? == o.supports,
        };
        if !same {
            changed.insert(key.clone());
        }
    }
    loop {
        let more: Vec<Key> = outputs
            .iter()
            .filter(|(k, _)| !changed.contains(*k))
            .filter(|(_, o)| {
                o.supports.iter().any(|(_, ps)| {
                    ps.iter()
                        .any(|p| matches!(p, Ref::Derived(d) if changed.contains(d)))
                })
            })
            .map(|(k, _)| k.clone())
            .collect();
        if more.is_empty() {
            return Ok(changed);
        }
        changed.extend(more);
    }
}

/// A stored conclusion's justifications with derived premises named by
/// their keys, as the fixpoint names them.
fn semantic(r: &(impl GraphRead + ?Sized), v: &Version) -> Result<BTreeSet<(String, Vec<Ref>)>> {
    let mut out = BTreeSet::new();
    for (rule, premises) in claim_of(v).map(justifications).unwrap_or_default() {
        let mut refs = Vec::with_capacity(premises.len());
        for p in premises {
            let derived = version(r, &p)?
                .as_ref()
                .and_then(claim_of)
                .filter(|c| is_derived(c))
                .and_then(key_of);
            refs.push(derived.map_or(Ref::Version(p), Ref::Derived));
        }
        out.insert((rule, refs));
    }
    Ok(out)
}

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

use crate::derive::{fixpoint, Fact, Key, Limits, Output, Ref, Support};
use crate::error::{KnowledgeError, Result};
use crate::rules::{rules, Rule};
use plexus_common::{read_i64, Value};
use plexus_storage::{GraphRead, Storage, ValidPart::Versioned, WriteTxn};
use plexus_temporal::{
    changed_claims, claims_holding, clear_changed_claims, holding, track_claim_changes, version,
    worlds, write_version, ClaimObject, ClaimQuery, ClaimState, Interval, Kind, Polarity, Props,
    State, Version, VersionWrite,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// The agent of derived claims.
pub const RULE_AGENT: &str = "plexus:rules";
/// The provenance key marking a derived claim, and its value.
const DERIVED_BY: (&str, &str) = ("derivedBy", "plexus.rules");
const JUSTIFICATIONS: &str = "justifications";
/// Where the last run's valid instant is kept (for resuming maintenance).
const LAST_INSTANT: &[u8] = b"M|rules-instant";
/// The stamp of the last maintenance pass (`stamp`).
const MAINTAINED: &[u8] = b"M|rules-maintained";

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
    /// Maintenance only: whether the pass started from the claims changed
    /// since the last one (delete and rederive) rather than from all.
    pub incremental: bool,
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

pub(crate) fn key_of(c: &ClaimState) -> Option<Key> {
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
    /// Version id → claim id of each base fact.
    logical: HashMap<String, String>,
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
        logical: HashMap::new(),
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
                    input.logical.insert(v.id.clone(), v.logical_id.clone());
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
    let input_logical = input.logical;
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
            None => uuid::Uuid::now_v7().to_string(),
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
        record_deps(txn, key, &o.supports, &input_logical)?;
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
    txn.valid_time_write(Versioned, LAST_INSTANT, LAST_INSTANT, Some(v))?;
    Ok(())
}

/// The valid instant of the last rule run or maintenance pass.
pub fn last_instant(r: &(impl GraphRead + ?Sized)) -> Result<Option<i64>> {
    Ok(r.valid_time_get(Versioned, LAST_INSTANT)?
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
    // Marks taken from here on; claims changed before are covered by a
    // full pass (the stamp below is then missing or different).
    track_claim_changes(txn)?;
    let changed = changed_claims(&*txn)?;
    let stamp = stamp(at, opts.world.as_deref(), &rules);
    let incremental =
        txn.valid_time_get(Versioned, MAINTAINED)?.as_deref() == Some(stamp.as_slice());
    let mut report = if incremental {
        incremental_pass(txn, &rules, opts, at, &changed)?
    } else {
        full_pass(txn, &rules, opts, at)?
    };
    report.incremental = incremental;
    clear_changed_claims(txn, &changed)?;
    // What this pass wrote is settled, not a change for the next one.
    let own: Vec<String> = report
        .versions
        .iter()
        .map(|v| v.logical_id.clone())
        .collect();
    clear_changed_claims(txn, &own)?;
    txn.valid_time_write(Versioned, MAINTAINED, MAINTAINED, Some(stamp))?;
    remember(txn, at)?;
    Ok(report)
}

/// What a pass at `at` over `world` with `rules` depends on: an
/// incremental pass needs the last pass's to be the same.
fn stamp(at: i64, world: Option<&str>, rules: &[Rule]) -> Vec<u8> {
    let mut out = Vec::new();
    plexus_common::push_i64(&mut out, at);
    match world {
        Some(w) => {
            out.push(1);
            plexus_common::push_escaped(&mut out, w.as_bytes());
        }
        None => out.push(0),
    }
    let mut versions: Vec<&str> = rules.iter().map(|r| r.version_id.as_str()).collect();
    versions.sort_unstable();
    for v in versions {
        plexus_common::push_escaped(&mut out, v.as_bytes());
    }
    out
}

/// The fixpoint over every independent claim, compared with every stored
/// conclusion.
fn full_pass(txn: &mut WriteTxn, rules: &[Rule], opts: &RunOptions, at: i64) -> Result<RunReport> {
    let input = read_input(txn, rules, opts.world.as_deref(), at)?;
    let fp = fixpoint(rules, input.base, &HashMap::new(), opts.limits)?;
    let mut report = RunReport {
        iterations: fp.iterations,
        justifications: fp.justifications,
        ..RunReport::default()
    };
    let changed = changed_keys(&*txn, &fp.outputs, &input.stored)?;
    let gone: Vec<Key> = input
        .stored
        .keys()
        .filter(|k| !fp.outputs.contains_key(*k))
        .cloned()
        .collect();
    let settled = Settled {
        outputs: &fp.outputs,
        stored: &input.stored,
        changed: &changed,
        gone,
        logical: &input.logical,
        at,
    };
    settled.write(txn, &mut report)?;
    // Every conclusion's dependencies, so that the next pass can be
    // incremental (conclusions written before they were kept have none).
    for (key, o) in &fp.outputs {
        if !changed.contains(key) {
            record_deps(txn, key, &o.supports, &input.logical)?;
        }
    }
    Ok(report)
}

/// Delete and rederive from the claims changed since the last pass
/// (`dred.rs`).
fn incremental_pass(
    txn: &mut WriteTxn,
    rules: &[Rule],
    opts: &RunOptions,
    at: i64,
    changed: &[String],
) -> Result<RunReport> {
    let mut s = crate::dred::maintain(txn, rules, opts.world.as_deref(), at, changed, opts.limits)?;
    let mut report = RunReport {
        iterations: s.iterations,
        justifications: s.justifications,
        ..RunReport::default()
    };
    let mut differ = Vec::new();
    for (key, o) in &s.outputs {
        if differs(&*txn, o, s.stored.get(key))? {
            differ.push(key.clone());
        }
    }
    let rewrite = crate::dred::resting_on(txn, at, differ, &mut s)?;
    let settled = Settled {
        outputs: &s.outputs,
        stored: &s.stored,
        changed: &rewrite,
        gone: s.gone.clone(),
        logical: &s.logical,
        at,
    };
    settled.write(txn, &mut report)?;
    Ok(report)
}

/// The conclusions a pass settled, to write: asserted, corrected (and
/// what no longer holds of them retracted), or retracted.
struct Settled<'a> {
    outputs: &'a BTreeMap<Key, Output>,
    stored: &'a HashMap<Key, (Interval, Version)>,
    /// The outputs to write (new ones, or a changed version).
    changed: &'a HashSet<Key>,
    /// Stored conclusions no longer derived.
    gone: Vec<Key>,
    /// Version id → claim id of base premises.
    logical: &'a HashMap<String, String>,
    /// The instant the pass ran at.
    at: i64,
}

impl Settled<'_> {
    fn write(self, txn: &mut WriteTxn, report: &mut RunReport) -> Result<()> {
        let ids = self.ids(txn)?;
        for (key, o) in self.outputs {
            if !self.changed.contains(key) {
                continue;
            }
            let claim = derived_claim(key, resolve(o, &ids).into_iter().collect());
            match self.stored.get(key) {
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
            record_deps(txn, key, &o.supports, self.logical)?;
        }
        let mut gone = self.gone;
        gone.sort();
        for key in gone {
            let Some((held, old)) = self.stored.get(&key) else {
                continue;
            };
            let w = VersionWrite::retract(Kind::Claim, &old.logical_id, *held)
                .superseding(&old.id)
                .reason("final rule support disappeared");
            report.versions.push(write_version(txn, &w)?);
            report.retracted += 1;
        }
        Ok(())
    }

    /// The version id each output, and each conclusion a written one rests
    /// on, has after the pass: a new one where it is written.
    fn ids(&self, txn: &WriteTxn) -> Result<HashMap<Key, String>> {
        let mut ids: HashMap<Key, String> = HashMap::new();
        for key in self.outputs.keys() {
            let id = match self.stored.get(key) {
                Some((_, v)) if !self.changed.contains(key) => v.id.clone(),
                _ => uuid::Uuid::now_v7().to_string(),
            };
            ids.insert(key.clone(), id);
        }
        for (key, o) in self.outputs {
            if !self.changed.contains(key) {
                continue;
            }
            for (_, premises) in &o.supports {
                for p in premises {
                    let Ref::Derived(k) = p else { continue };
                    if ids.contains_key(k) {
                        continue;
                    }
                    // A conclusion the pass did not read: as stored.
                    let id = conclusion_id(k);
                    if let Some((_, v)) = holding(txn, Kind::Claim, &id, self.at)? {
                        ids.insert(k.clone(), v.id);
                    }
                }
            }
        }
        Ok(ids)
    }
}

/// The claim id of the conclusion with key `key`.
pub(crate) fn conclusion_id(key: &Key) -> String {
    derived_claim(key, Vec::new()).claim_id()
}

/// `DEPS` + premise claim id + conclusion claim id (each escaped): the
/// conclusion rests on the premise. Written with the conclusion, never
/// removed (an entry that no longer holds costs a needless recheck).
const DEPS: &[u8] = b"M|rule-deps|";

fn deps_prefix(premise: &str) -> Vec<u8> {
    let mut k = DEPS.to_vec();
    plexus_common::push_escaped(&mut k, premise.as_bytes());
    k
}

/// Records that the conclusion `key` rests on each premise of `supports`.
fn record_deps(
    txn: &mut WriteTxn,
    key: &Key,
    supports: &BTreeSet<Support>,
    logical: &HashMap<String, String>,
) -> Result<()> {
    let conclusion = conclusion_id(key);
    let mut premises: BTreeSet<String> = BTreeSet::new();
    for (_, refs) in supports {
        for r in refs {
            let id = match r {
                Ref::Derived(k) => conclusion_id(k),
                Ref::Version(v) => match logical.get(v) {
                    Some(id) => id.clone(),
                    None => match version(&*txn, v)? {
                        Some(found) => found.logical_id,
                        None => continue,
                    },
                },
            };
            premises.insert(id);
        }
    }
    for p in premises {
        let mut k = deps_prefix(&p);
        plexus_common::push_escaped(&mut k, conclusion.as_bytes());
        if txn.valid_time_get(Versioned, &k)?.is_none() {
            txn.valid_time_write(Versioned, &k, &k, Some(Vec::new()))?;
        }
    }
    Ok(())
}

/// The claim ids of the conclusions recorded as resting on claim `id`.
pub(crate) fn dependents(r: &(impl GraphRead + ?Sized), id: &str) -> Result<Vec<String>> {
    let lo = deps_prefix(id);
    let mut out = Vec::new();
    r.valid_time_scan(
        Versioned,
        std::ops::Bound::Included(&lo),
        std::ops::Bound::Unbounded,
        false,
        &mut |k, _| {
            let Some(rest) = k.strip_prefix(lo.as_slice()) else {
                return Ok(false);
            };
            if let Some((c, _)) = plexus_common::read_escaped(rest) {
                out.push(String::from_utf8_lossy(&c).into_owned());
            }
            Ok(true)
        },
    )?;
    Ok(out)
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
        if differs(r, o, stored.get(key))? {
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

/// Whether output `o` differs from the conclusion stored for its key (or
/// there is none): in validity or, named semantically, justifications.
fn differs(
    r: &(impl GraphRead + ?Sized),
    o: &Output,
    stored: Option<&(Interval, Version)>,
) -> Result<bool> {
    Ok(match stored {
        None => true,
        Some((held, old)) => *held != o.valid || semantic(r, old)? != o.supports,
    })
}

/// A stored conclusion's justifications with derived premises named by
/// their keys, as the fixpoint names them.
pub(crate) fn semantic(
    r: &(impl GraphRead + ?Sized),
    v: &Version,
) -> Result<BTreeSet<(String, Vec<Ref>)>> {
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

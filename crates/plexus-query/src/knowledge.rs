//! Claims, rules and modal entailment from Cypher: the `kg.*` procedures
//! over `plexus_knowledge` and the claims of `plexus_temporal`. Options
//! come as a map (GestaltDB's style: `{world: 'reported', validTime:
//! datetime('2024-06-01T00:00:00Z')}`); instants are datetimes, ISO 8601
//! strings or microseconds. With `CALL … FOR SYSTEM_TIME AS OF t` the
//! reads are bitemporal.

use crate::builtin::{txn, Graph};
use crate::error::QueryError;
use crate::valid_time::instant_value;
use plexus_common::Value;
use plexus_knowledge::{
    ExplainNode, Formula, Frame, KnowledgeError, Limits, ModalLimits, Modality, Relation,
    RunOptions, RunReport,
};
use plexus_temporal::{
    ClaimObject, ClaimQuery, ClaimState, Interval, Kind, Polarity, Props, State, Version,
    VersionWrite, DEFAULT_WORLD,
};
use std::collections::BTreeMap;

type Records = Result<Vec<Vec<Value>>, QueryError>;
type Options = BTreeMap<String, Value>;

impl From<KnowledgeError> for QueryError {
    fn from(e: KnowledgeError) -> Self {
        match e {
            KnowledgeError::Temporal(t) => t.into(),
            KnowledgeError::Limit { .. } => QueryError::Procedure {
                code: "EvaluationLimit",
                message: e.to_string(),
            },
            other => QueryError::Argument {
                code: "InvalidArgumentValue",
                message: other.to_string(),
            },
        }
    }
}

fn arg_error(proc_name: &str, message: String) -> QueryError {
    QueryError::Argument {
        code: "InvalidArgumentValue",
        message: format!("{proc_name}: {message}"),
    }
}

fn text<'v>(v: &'v Value, proc_name: &str, what: &str) -> Result<&'v str, QueryError> {
    match v {
        Value::String(s) if !s.is_empty() => Ok(s),
        other => Err(arg_error(
            proc_name,
            format!(
                "`{what}` must be a non-empty string, not {}",
                other.value_type().name()
            ),
        )),
    }
}

fn options<'v>(v: &'v Value, proc_name: &str, known: &[&str]) -> Result<&'v Options, QueryError> {
    static EMPTY: Options = Options::new();
    let m = match v {
        Value::Null => &EMPTY,
        Value::Map(m) => m,
        other => {
            return Err(arg_error(
                proc_name,
                format!("options must be a map, not {}", other.value_type().name()),
            ))
        }
    };
    match m.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(arg_error(
            proc_name,
            format!("unknown option `{k}` (known: {})", known.join(", ")),
        )),
        None => Ok(m),
    }
}

fn opt_text(o: &Options, key: &str, proc_name: &str) -> Result<Option<String>, QueryError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Ok(Some(text(v, proc_name, key)?.to_string())),
    }
}

fn opt_instant(o: &Options, key: &str, proc_name: &str) -> Result<Option<i64>, QueryError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => crate::as_of::instant(v, &format!("option `{key}` of {proc_name}")).map(Some),
    }
}

fn need_instant(o: &Options, key: &str, proc_name: &str) -> Result<i64, QueryError> {
    opt_instant(o, key, proc_name)?
        .ok_or_else(|| arg_error(proc_name, format!("option `{key}` is required")))
}

fn opt_count(o: &Options, key: &str, default: u64, proc_name: &str) -> Result<u64, QueryError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Int(n)) if *n > 0 => Ok(*n as u64),
        Some(v) => Err(arg_error(
            proc_name,
            format!("option `{key}` must be a positive integer, not {v:?}"),
        )),
    }
}

fn interval(o: &Options, proc_name: &str) -> Result<Interval, QueryError> {
    if o.get("validFrom").is_none_or(|v| *v == Value::Null) {
        return Err(arg_error(
            proc_name,
            "option `validFrom` is required".into(),
        ));
    }
    let at = |k: &str| o.get(k).unwrap_or(&Value::Null);
    crate::valid_time::interval(at("validFrom"), at("validTo"), proc_name)
}

fn object(v: &Value, o: &Options, proc_name: &str) -> Result<ClaimObject, QueryError> {
    match opt_text(o, "objectKind", proc_name)?.as_deref() {
        None | Some("entity") => Ok(ClaimObject::Entity(text(v, proc_name, "object")?.into())),
        Some("literal") => Ok(ClaimObject::Literal(v.clone())),
        Some(k) => Err(arg_error(
            proc_name,
            format!("objectKind '{k}' is neither 'entity' nor 'literal'"),
        )),
    }
}

fn polarity(o: &Options, proc_name: &str) -> Result<Option<Polarity>, QueryError> {
    match opt_text(o, "polarity", proc_name)? {
        None => Ok(None),
        Some(p) => Ok(Some(Polarity::parse(&p.to_ascii_lowercase())?)),
    }
}

fn confidence(v: Option<&Value>, proc_name: &str) -> Result<Option<f64>, QueryError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Int(i)) => Ok(Some(*i as f64)),
        Some(Value::Float(f)) => Ok(Some(*f)),
        Some(other) => Err(arg_error(
            proc_name,
            format!(
                "confidence must be a number, not {}",
                other.value_type().name()
            ),
        )),
    }
}

fn provenance(v: Option<&Value>, proc_name: &str) -> Result<Props, QueryError> {
    match v {
        None | Some(Value::Null) => Ok(Props::new()),
        Some(Value::Map(m)) => Ok(m.clone()),
        Some(other) => Err(arg_error(
            proc_name,
            format!(
                "provenance must be a map, not {}",
                other.value_type().name()
            ),
        )),
    }
}

const ASSERT_OPTIONS: &[&str] = &[
    "agent",
    "polarity",
    "source",
    "confidence",
    "world",
    "provenance",
    "objectKind",
    "validFrom",
    "validTo",
    "versionId",
];

/// `kg.assertClaim(subject, predicate, object, {agent, validFrom, …})`.
pub(crate) fn assert_claim(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.assertClaim";
    let o = options(&a[3], NAME, ASSERT_OPTIONS)?;
    let agent = opt_text(o, "agent", NAME)?
        .ok_or_else(|| arg_error(NAME, "option `agent` is required".into()))?;
    let claim = ClaimState {
        polarity: polarity(o, NAME)?.unwrap_or(Polarity::Positive),
        source: opt_text(o, "source", NAME)?,
        confidence: confidence(o.get("confidence"), NAME)?,
        world: opt_text(o, "world", NAME)?.unwrap_or_else(|| DEFAULT_WORLD.into()),
        provenance: provenance(o.get("provenance"), NAME)?,
        ..ClaimState::new(
            text(&a[0], NAME, "subject")?,
            text(&a[1], NAME, "predicate")?,
            object(&a[2], o, NAME)?,
            &agent,
        )
    };
    let mut w = VersionWrite::assert_claim(claim, interval(o, NAME)?);
    if let Some(id) = opt_text(o, "versionId", NAME)? {
        w = w.id(&id);
    }
    let v = plexus_temporal::write_version(txn(g, NAME)?, &w)?;
    Ok(vec![vec![Value::String(v.id), Value::String(v.logical_id)]])
}

/// `kg.correctClaim(versionId, {confidence, provenance, validFrom,
/// validTo})`: the claim of that version with what the options change
/// (omitted ones kept, `null` clears), over its interval unless given.
pub(crate) fn correct_claim(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.correctClaim";
    let target = text(&a[0], NAME, "versionId")?;
    let o = options(
        &a[1],
        NAME,
        &["confidence", "provenance", "validFrom", "validTo"],
    )?;
    let t = txn(g, NAME)?;
    let old = plexus_temporal::version(&*t, target)?
        .ok_or_else(|| arg_error(NAME, format!("no version with id '{target}'")))?;
    let State::Claim(mut claim) = old.state else {
        return Err(arg_error(
            NAME,
            format!("version '{target}' is not an assertion of a claim"),
        ));
    };
    if o.contains_key("confidence") {
        claim.confidence = confidence(o.get("confidence"), NAME)?;
    }
    if o.contains_key("provenance") {
        claim.provenance = provenance(o.get("provenance"), NAME)?;
    }
    let mut w = VersionWrite::correct(target, State::Claim(claim));
    if o.contains_key("validFrom") {
        w = w.valid(interval(o, NAME)?);
    }
    let v = plexus_temporal::write_version(t, &w)?;
    Ok(vec![vec![Value::String(v.id), Value::String(v.logical_id)]])
}

/// `kg.retractClaim(claimId, validFrom, validTo, reason)`.
pub(crate) fn retract_claim(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.retractClaim";
    let id = text(&a[0], NAME, "claimId")?;
    let valid = crate::valid_time::interval(&a[1], &a[2], NAME)?;
    let mut w = VersionWrite::retract(Kind::Claim, id, valid);
    if let Value::String(reason) = &a[3] {
        w = w.reason(reason);
    }
    let v = plexus_temporal::write_version(txn(g, NAME)?, &w)?;
    Ok(vec![vec![Value::String(v.id), Value::String(v.logical_id)]])
}

/// The columns of [`claim_row`].
pub(crate) const CLAIM_COLUMNS: &[&str] = &[
    "claimId",
    "versionId",
    "statementId",
    "subject",
    "predicate",
    "object",
    "polarity",
    "agent",
    "source",
    "confidence",
    "world",
    "provenance",
    "validFrom",
    "validTo",
];

fn claim_row(v: Version) -> Option<Vec<Value>> {
    let State::Claim(c) = v.state else {
        return None;
    };
    let object = match &c.object {
        ClaimObject::Entity(e) => Value::String(e.clone()),
        ClaimObject::Literal(l) => l.clone(),
    };
    Some(vec![
        Value::String(v.logical_id),
        Value::String(v.id),
        Value::String(c.statement_id()),
        Value::String(c.subject),
        Value::String(c.predicate),
        object,
        Value::String(c.polarity.name().into()),
        Value::String(c.agent),
        c.source.map_or(Value::Null, Value::String),
        c.confidence.map_or(Value::Null, Value::Float),
        Value::String(c.world),
        Value::Map(c.provenance),
        instant_value(v.valid.from),
        v.valid.to.map_or(Value::Null, instant_value),
    ])
}

/// `kg.claims({subject, predicate, object, objectKind, world, agent,
/// polarity, validTime})`: the claims holding at `validTime`, through the
/// claim index.
pub(crate) fn claims(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.claims";
    let Some(r) = g.read() else { return Ok(vec![]) };
    let known = [
        "subject",
        "predicate",
        "object",
        "objectKind",
        "world",
        "agent",
        "polarity",
        "validTime",
    ];
    let o = options(&a[0], NAME, &known)?;
    let q = ClaimQuery {
        world: opt_text(o, "world", NAME)?,
        predicate: opt_text(o, "predicate", NAME)?,
        subject: opt_text(o, "subject", NAME)?,
        object: match o.get("object") {
            None | Some(Value::Null) => None,
            Some(v) => Some(object(v, o, NAME)?),
        },
        agent: opt_text(o, "agent", NAME)?,
        polarity: polarity(o, NAME)?,
    };
    let at = need_instant(o, "validTime", NAME)?;
    Ok(plexus_temporal::claims_as_of(r, &q, at)?
        .into_iter()
        .filter_map(claim_row)
        .collect())
}

/// `kg.claimStatus(subject, predicate, object, {validTime, world, agent,
/// objectKind})`: supported, refuted, both or unknown, with confidence.
pub(crate) fn claim_status(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.claimStatus";
    let Some(r) = g.read() else { return Ok(vec![]) };
    let o = options(&a[3], NAME, &["validTime", "world", "agent", "objectKind"])?;
    let world = opt_text(o, "world", NAME)?.unwrap_or_else(|| DEFAULT_WORLD.into());
    let s = plexus_knowledge::claim_status(
        r,
        &world,
        text(&a[0], NAME, "subject")?,
        text(&a[1], NAME, "predicate")?,
        &object(&a[2], o, NAME)?,
        opt_text(o, "agent", NAME)?.as_deref(),
        need_instant(o, "validTime", NAME)?,
    )?;
    Ok(vec![vec![
        Value::String(s.status.name().into()),
        s.confidence.map_or(Value::Null, Value::Float),
    ]])
}

fn triple(v: &Value, proc_name: &str, what: &str) -> Result<plexus_knowledge::Atom, QueryError> {
    let bad = || {
        arg_error(
            proc_name,
            format!("{what} must be a list [subject, predicate, object] of strings"),
        )
    };
    let Value::List(items) = v else {
        return Err(bad());
    };
    match items.as_slice() {
        [Value::String(s), Value::String(p), Value::String(o)] => {
            Ok(plexus_knowledge::Atom::parse(s, p, o)?)
        }
        _ => Err(bad()),
    }
}

/// `kg.createRule(id, when, then)`: `when` a list of `[s, p, o]` atoms,
/// `then` one (`?x` a variable).
pub(crate) fn create_rule(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.createRule";
    let id = text(&a[0], NAME, "id")?;
    let Value::List(body) = &a[1] else {
        return Err(arg_error(NAME, "`when` must be a list of atoms".into()));
    };
    let when = body
        .iter()
        .enumerate()
        .map(|(i, v)| triple(v, NAME, &format!("when[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let then = triple(&a[2], NAME, "then")?;
    let rule = plexus_knowledge::define_rule(txn(g, NAME)?, id, when, then, None)?;
    Ok(vec![vec![
        Value::String(rule.id),
        Value::String(rule.version_id),
    ]])
}

const RUN_OPTIONS: &[&str] = &[
    "validTime",
    "world",
    "maxIterations",
    "maxDerivations",
    "maxJustifications",
];

fn run_options(v: &Value, proc_name: &str) -> Result<RunOptions, QueryError> {
    let o = options(v, proc_name, RUN_OPTIONS)?;
    let d = Limits::default();
    Ok(RunOptions {
        at: opt_instant(o, "validTime", proc_name)?,
        world: opt_text(o, "world", proc_name)?,
        limits: Limits {
            max_iterations: opt_count(o, "maxIterations", d.max_iterations, proc_name)?,
            max_derivations: opt_count(o, "maxDerivations", d.max_derivations, proc_name)?,
            max_justifications: opt_count(o, "maxJustifications", d.max_justifications, proc_name)?,
        },
    })
}

fn report_row(r: RunReport) -> Vec<Vec<Value>> {
    let n = |x: usize| Value::Int(x as i64);
    vec![vec![
        Value::Int(r.iterations as i64),
        n(r.asserted),
        n(r.corrected),
        n(r.retracted),
        Value::Int(r.justifications as i64),
    ]]
}

/// The columns of [`report_row`].
pub(crate) const RUN_COLUMNS: &[&str] = &[
    "iterations",
    "asserted",
    "corrected",
    "retracted",
    "justifications",
];

/// The columns of `kg.maintainTruth`: a run's, and whether the pass
/// started from the claims changed since the last one.
pub(crate) const MAINTAIN_COLUMNS: &[&str] = &[
    "iterations",
    "asserted",
    "corrected",
    "retracted",
    "justifications",
    "incremental",
];

/// `kg.runRules({validTime, world, maxIterations, maxDerivations,
/// maxJustifications})`.
pub(crate) fn run_rules(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.runRules";
    let opts = run_options(&a[0], NAME)?;
    if opts.at.is_none() {
        return Err(arg_error(NAME, "option `validTime` is required".into()));
    }
    Ok(report_row(plexus_knowledge::run_rules_in(
        txn(g, NAME)?,
        &opts,
    )?))
}

/// `kg.maintainTruth({validTime?, …})`: without `validTime`, the last
/// run's instant.
pub(crate) fn maintain_truth(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.maintainTruth";
    let opts = run_options(&a[0], NAME)?;
    let report = plexus_knowledge::maintain_truth_in(txn(g, NAME)?, &opts)?;
    let incremental = Value::Bool(report.incremental);
    let mut rows = report_row(report);
    for row in &mut rows {
        row.push(incremental.clone());
    }
    Ok(rows)
}

fn node_value(n: &ExplainNode) -> Value {
    let mut m = Options::new();
    m.insert("id".into(), Value::String(n.id().to_string()));
    match n {
        ExplainNode::Claim(v) => {
            m.insert("kind".into(), Value::String("claim".into()));
            if let Some(row) = claim_row(v.clone()) {
                for (k, x) in CLAIM_COLUMNS.iter().zip(row) {
                    m.insert((*k).into(), x);
                }
            }
        }
        ExplainNode::Rule(r) => {
            m.insert("kind".into(), Value::String("rule".into()));
            m.insert("ruleId".into(), Value::String(r.id.clone()));
            let atom = |a: &plexus_knowledge::Atom| {
                Value::List(a.texts().into_iter().map(Value::String).collect())
            };
            m.insert(
                "when".into(),
                Value::List(r.when.iter().map(atom).collect()),
            );
            m.insert("then".into(), atom(&r.then));
        }
    }
    Value::Map(m)
}

/// `kg.explain(claimId, {validTime, maxDepth, maxNodes})`: the derivation
/// graph as lists of node and edge maps.
pub(crate) fn explain(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.explain";
    let Some(r) = g.read() else { return Ok(vec![]) };
    let o = options(&a[1], NAME, &["validTime", "maxDepth", "maxNodes"])?;
    let Some(ex) = plexus_knowledge::explain(
        r,
        text(&a[0], NAME, "claimId")?,
        need_instant(o, "validTime", NAME)?,
        opt_count(o, "maxDepth", 100, NAME)? as usize,
        opt_count(o, "maxNodes", 10_000, NAME)? as usize,
    )?
    else {
        return Ok(vec![]);
    };
    let edges = ex
        .edges
        .iter()
        .map(|e| {
            let (rel, ordinal) = match e.relation {
                Relation::DerivedBy => ("DERIVED_BY", Value::Null),
                Relation::Premise { ordinal } => ("PREMISE", Value::Int(ordinal as i64)),
            };
            Value::Map(Options::from([
                ("from".into(), Value::String(e.from.clone())),
                ("to".into(), Value::String(e.to.clone())),
                ("relationship".into(), Value::String(rel.into())),
                ("justification".into(), Value::Int(e.justification as i64)),
                ("ordinal".into(), ordinal),
            ]))
        })
        .collect();
    Ok(vec![vec![
        Value::String(ex.root),
        Value::List(ex.nodes.iter().map(node_value).collect()),
        Value::List(edges),
        Value::Bool(ex.truncated),
    ]])
}

/// `kg.assertAccessibility(agent, fromWorld, toWorld, kind, {validFrom,
/// validTo})`: kind `belief`, `knowledge` or `modal`.
pub(crate) fn assert_accessibility(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.assertAccessibility";
    let frame = Frame::parse(text(&a[3], NAME, "kind")?)?;
    let claim = plexus_knowledge::accessibility(
        text(&a[0], NAME, "agent")?,
        text(&a[1], NAME, "fromWorld")?,
        text(&a[2], NAME, "toWorld")?,
        frame,
    );
    let o = options(&a[4], NAME, &["validFrom", "validTo"])?;
    let w = VersionWrite::assert_claim(claim, interval(o, NAME)?);
    let v = plexus_temporal::write_version(txn(g, NAME)?, &w)?;
    Ok(vec![vec![Value::String(v.id), Value::String(v.logical_id)]])
}

/// `kg.entails(agent, proposition, modality, {world, validTime, maxDepth,
/// maxStates})`: the proposition a formula map (`Formula::from_value`).
pub(crate) fn entails(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "kg.entails";
    let Some(r) = g.read() else { return Ok(vec![]) };
    let modality_name = text(&a[2], NAME, "modality")?;
    let modality = Modality::parse(modality_name).ok_or_else(|| {
        arg_error(
            NAME,
            format!("modality '{modality_name}' is none of BELIEVES, KNOWS, POSSIBLE, NECESSARY"),
        )
    })?;
    let o = options(
        &a[3],
        NAME,
        &["world", "validTime", "maxDepth", "maxStates"],
    )?;
    let world = opt_text(o, "world", NAME)?
        .ok_or_else(|| arg_error(NAME, "option `world` is required".into()))?;
    let d = ModalLimits::default();
    let limits = ModalLimits {
        max_depth: opt_count(o, "maxDepth", d.max_depth as u64, NAME)? as usize,
        max_states: opt_count(o, "maxStates", d.max_states as u64, NAME)? as usize,
    };
    let e = plexus_knowledge::entails(
        r,
        text(&a[0], NAME, "agent")?,
        Formula::from_value(&a[1])?,
        modality,
        &world,
        need_instant(o, "validTime", NAME)?,
        limits,
    )?;
    Ok(vec![vec![
        Value::String(e.status.name().into()),
        e.confidence.map_or(Value::Null, Value::Float),
        e.explanation,
    ]])
}

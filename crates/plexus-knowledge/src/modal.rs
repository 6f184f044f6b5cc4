//! Modal entailment over claims: formulas of atoms, NOT, AND, OR and the
//! modalities BELIEVES, KNOWS (over an agent's belief and knowledge
//! frames), POSSIBLE and NECESSARY (over its modal frame), evaluated in a
//! world at a valid instant with four values and explicit bounds.
//!
//! An atom is what the claims of the current world say of a statement
//! (`status.rs`): true if asserted, false if denied — both, or neither,
//! may hold (paraconsistent: a contradiction entails nothing else). NOT
//! swaps true and false; AND is true when all are, false when any is; OR
//! the dual. A modality looks at the worlds the agent's accessibility
//! claims link the current world to: the universal ones (BELIEVES, KNOWS,
//! NECESSARY) are true when the formula is true in every such world and
//! false when it is false in one; POSSIBLE is true when it is true in one
//! and false when it is false in all. No accessible world: unknown.
//!
//! An accessibility link is a positive claim `(from world,
//! plexus:accessible:<frame>, to world)` by the agent, in the from world
//! ([`accessibility`]). Every (subformula, world, depth) is evaluated
//! once; `max_states` bounds how many, `max_depth` how deep modalities
//! nest, and a formula has at most [`MAX_FORMULA_DEPTH`] levels.

use crate::error::{KnowledgeError, Result};
use crate::status::{strongest, Status};
use plexus_common::Value;
use plexus_storage::GraphRead;
use plexus_temporal::{
    claims_as_of, ClaimObject, ClaimQuery, ClaimState, Polarity, State, Version,
};
use std::collections::{BTreeMap, HashMap};

/// The deepest formula accepted (levels of nesting).
pub const MAX_FORMULA_DEPTH: usize = 64;

/// An accessibility frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Frame {
    Belief,
    Knowledge,
    Modal,
}

impl Frame {
    /// The predicate of the frame's accessibility claims.
    pub fn predicate(self) -> &'static str {
        match self {
            Frame::Belief => "plexus:accessible:belief",
            Frame::Knowledge => "plexus:accessible:knowledge",
            Frame::Modal => "plexus:accessible:modal",
        }
    }

    /// `belief`, `knowledge` or `modal`.
    pub fn parse(s: &str) -> Result<Frame> {
        match s.to_ascii_lowercase().as_str() {
            "belief" => Ok(Frame::Belief),
            "knowledge" => Ok(Frame::Knowledge),
            "modal" => Ok(Frame::Modal),
            _ => Err(KnowledgeError::InvalidFormula(format!(
                "accessibility kind '{s}': it is belief, knowledge or modal"
            ))),
        }
    }
}

/// The claim that links `from` to `to` in `agent`'s `frame`.
pub fn accessibility(agent: &str, from: &str, to: &str, frame: Frame) -> ClaimState {
    ClaimState {
        world: from.to_string(),
        ..ClaimState::new(
            from,
            frame.predicate(),
            ClaimObject::Entity(to.to_string()),
            agent,
        )
    }
}

/// A modality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modality {
    Believes,
    Knows,
    Possible,
    Necessary,
}

impl Modality {
    pub fn name(self) -> &'static str {
        match self {
            Modality::Believes => "BELIEVES",
            Modality::Knows => "KNOWS",
            Modality::Possible => "POSSIBLE",
            Modality::Necessary => "NECESSARY",
        }
    }

    pub fn parse(s: &str) -> Option<Modality> {
        match s.to_ascii_uppercase().as_str() {
            "BELIEVES" => Some(Modality::Believes),
            "KNOWS" => Some(Modality::Knows),
            "POSSIBLE" => Some(Modality::Possible),
            "NECESSARY" => Some(Modality::Necessary),
            _ => None,
        }
    }

    fn frame(self) -> (Frame, bool) {
        match self {
            Modality::Believes => (Frame::Belief, true),
            Modality::Knows => (Frame::Knowledge, true),
            Modality::Possible => (Frame::Modal, false),
            Modality::Necessary => (Frame::Modal, true),
        }
    }
}

/// A formula.
#[derive(Debug, Clone, PartialEq)]
pub enum Formula {
    /// What the claims say of a statement (only `agent`'s, when given).
    Atom {
        subject: String,
        predicate: String,
        object: ClaimObject,
        agent: Option<String>,
    },
    Not(Box<Formula>),
    And(Vec<Formula>),
    Or(Vec<Formula>),
    Modal {
        modality: Modality,
        agent: String,
        formula: Box<Formula>,
    },
}

fn bad(m: impl Into<String>) -> KnowledgeError {
    KnowledgeError::InvalidFormula(m.into())
}

fn text(m: &BTreeMap<String, Value>, key: &str, at: &str) -> Result<String> {
    match m.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(bad(format!("{at}: `{key}` must be a non-empty string"))),
    }
}

fn only(m: &BTreeMap<String, Value>, keys: &[&str], at: &str) -> Result<()> {
    match m.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(k) => Err(bad(format!("{at}: unexpected key `{k}`"))),
        None => Ok(()),
    }
}

impl Formula {
    /// A formula from its map form: `{subject, predicate, object[,
    /// objectKind: 'literal'][, agent]}` for an atom (`operator` `ATOM` or
    /// absent), `{operator: 'NOT', formula}`, `{operator: 'AND'|'OR',
    /// operands: [..]}` (two or more), `{operator: 'BELIEVES'|'KNOWS'|
    /// 'POSSIBLE'|'NECESSARY', agent, formula}`. Errors name the path to
    /// the part at fault (`formula.operands[1]`).
    pub fn from_value(v: &Value) -> Result<Formula> {
        Formula::parse(v, "formula", 0)
    }

    fn parse(v: &Value, at: &str, depth: usize) -> Result<Formula> {
        if depth >= MAX_FORMULA_DEPTH {
            return Err(bad(format!(
                "{at}: formulas nest at most {MAX_FORMULA_DEPTH} levels"
            )));
        }
        let Value::Map(m) = v else {
            return Err(bad(format!("{at}: a formula is a map")));
        };
        let op = match m.get("operator") {
            None => "ATOM".to_string(),
            Some(Value::String(s)) => s.to_ascii_uppercase(),
            Some(_) => return Err(bad(format!("{at}: `operator` must be a string"))),
        };
        let sub = |key: &str| -> Result<Box<Formula>> {
            let f = m
                .get(key)
                .ok_or_else(|| bad(format!("{at}: {op} needs `{key}`")))?;
            Ok(Box::new(Formula::parse(
                f,
                &format!("{at}.{key}"),
                depth + 1,
            )?))
        };
        match op.as_str() {
            "ATOM" => {
                only(
                    m,
                    &[
                        "operator",
                        "subject",
                        "predicate",
                        "object",
                        "objectKind",
                        "agent",
                    ],
                    at,
                )?;
                let subject = text(m, "subject", at)?;
                let predicate = text(m, "predicate", at)?;
                let kind = match m.get("objectKind") {
                    None | Some(Value::Null) => "entity",
                    Some(Value::String(k)) => k.as_str(),
                    Some(_) => return Err(bad(format!("{at}: `objectKind` must be a string"))),
                };
                let object = match kind {
                    "entity" => ClaimObject::Entity(text(m, "object", at)?),
                    "literal" => ClaimObject::Literal(
                        m.get("object")
                            .cloned()
                            .ok_or_else(|| bad(format!("{at}: an atom needs `object`")))?,
                    ),
                    k => {
                        return Err(bad(format!(
                            "{at}: `objectKind` '{k}' is neither 'entity' nor 'literal'"
                        )))
                    }
                };
                let agent = match m.get("agent") {
                    None | Some(Value::Null) => None,
                    Some(_) => Some(text(m, "agent", at)?),
                };
                Ok(Formula::Atom {
                    subject,
                    predicate,
                    object,
                    agent,
                })
            }
            "NOT" => {
                only(m, &["operator", "formula"], at)?;
                Ok(Formula::Not(sub("formula")?))
            }
            "AND" | "OR" => {
                only(m, &["operator", "operands"], at)?;
                let Some(Value::List(items)) = m.get("operands") else {
                    return Err(bad(format!("{at}: {op} needs a list `operands`")));
                };
                if items.len() < 2 {
                    return Err(bad(format!("{at}: {op} needs two operands or more")));
                }
                let fs = items
                    .iter()
                    .enumerate()
                    .map(|(i, f)| Formula::parse(f, &format!("{at}.operands[{i}]"), depth + 1))
                    .collect::<Result<Vec<_>>>()?;
                Ok(if op == "AND" {
                    Formula::And(fs)
                } else {
                    Formula::Or(fs)
                })
            }
            name => {
                let modality = Modality::parse(name)
                    .ok_or_else(|| bad(format!("{at}: unknown operator '{name}'")))?;
                only(m, &["operator", "formula", "agent"], at)?;
                Ok(Formula::Modal {
                    modality,
                    agent: text(m, "agent", at)?,
                    formula: sub("formula")?,
                })
            }
        }
    }
}

/// The outcome of an entailment question.
#[derive(Debug, Clone, PartialEq)]
pub struct Entailment {
    pub status: Status,
    pub confidence: Option<f64>,
    /// How it was decided: per subformula its operator, world, status and
    /// evidence (claim versions) or children.
    pub explanation: Value,
    /// How many (subformula, world, depth) states were evaluated.
    pub states: usize,
}

/// The bounds of an evaluation.
#[derive(Debug, Clone, Copy)]
pub struct ModalLimits {
    pub max_depth: usize,
    pub max_states: usize,
}

impl Default for ModalLimits {
    fn default() -> Self {
        ModalLimits {
            max_depth: 4,
            max_states: 1_000,
        }
    }
}

/// A four-valued truth with the confidence of each side.
#[derive(Debug, Clone)]
struct Truth {
    t: bool,
    f: bool,
    tc: Option<f64>,
    fc: Option<f64>,
    why: Value,
}

fn all_conf(cs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let mut out: Option<f64> = None;
    for c in cs {
        let c = c?;
        out = Some(out.map_or(c, |o| o.min(c)));
    }
    out
}

fn any_conf(cs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    cs.flatten().reduce(f64::max)
}

/// `universal`: true when all are, false when any is; else the dual.
fn combine(children: &[Truth], universal: bool) -> (bool, bool, Option<f64>, Option<f64>) {
    let every_t = children.iter().all(|c| c.t);
    let some_t = children.iter().any(|c| c.t);
    let every_f = children.iter().all(|c| c.f);
    let some_f = children.iter().any(|c| c.f);
    let conf_t = |all: bool| {
        if all {
            all_conf(children.iter().map(|c| c.tc))
        } else {
            any_conf(children.iter().filter(|c| c.t).map(|c| c.tc))
        }
    };
    let conf_f = |all: bool| {
        if all {
            all_conf(children.iter().map(|c| c.fc))
        } else {
            any_conf(children.iter().filter(|c| c.f).map(|c| c.fc))
        }
    };
    if universal {
        (
            every_t,
            some_f,
            every_t.then(|| conf_t(true)).flatten(),
            some_f.then(|| conf_f(false)).flatten(),
        )
    } else {
        (
            some_t,
            every_f,
            some_t.then(|| conf_t(false)).flatten(),
            every_f.then(|| conf_f(true)).flatten(),
        )
    }
}

fn evidence_value(v: &Version) -> Value {
    let mut m = BTreeMap::from([
        ("versionId".to_string(), Value::String(v.id.clone())),
        ("claimId".to_string(), Value::String(v.logical_id.clone())),
        ("validFrom".to_string(), Value::Int(v.valid.from)),
        (
            "validTo".to_string(),
            v.valid.to.map_or(Value::Null, Value::Int),
        ),
    ]);
    if let State::Claim(c) = &v.state {
        m.insert("polarity".into(), Value::String(c.polarity.name().into()));
        m.insert("agent".into(), Value::String(c.agent.clone()));
        m.insert("world".into(), Value::String(c.world.clone()));
        m.insert(
            "confidence".into(),
            c.confidence.map_or(Value::Null, Value::Float),
        );
        if let Some(s) = &c.source {
            m.insert("source".into(), Value::String(s.clone()));
        }
    }
    Value::Map(m)
}

struct Eval<'r, R: GraphRead + ?Sized> {
    r: &'r R,
    at: i64,
    limits: ModalLimits,
    /// By the subformula's address (the formula is borrowed, unmoved,
    /// for the whole evaluation), world and depth.
    cache: HashMap<(usize, String, usize), Truth>,
}

impl<R: GraphRead + ?Sized> Eval<'_, R> {
    fn eval(&mut self, f: &Formula, world: &str, depth: usize) -> Result<Truth> {
        let key = (f as *const Formula as usize, world.to_string(), depth);
        if let Some(t) = self.cache.get(&key) {
            return Ok(t.clone());
        }
        if self.cache.len() >= self.limits.max_states {
            return Err(KnowledgeError::Limit {
                what: "maxStates",
                limit: self.limits.max_states as u64,
            });
        }
        let (t, f_, tc, fc, mut why) = match f {
            Formula::Atom {
                subject,
                predicate,
                object,
                agent,
            } => {
                let q = ClaimQuery {
                    agent: agent.clone(),
                    ..ClaimQuery::statement(world, subject, predicate, object.clone())
                };
                let evidence = claims_as_of(self.r, &q, self.at)?;
                let (t, tc) = strongest(&evidence, Polarity::Positive);
                let (f_, fc) = strongest(&evidence, Polarity::Negative);
                let why = BTreeMap::from([
                    ("operator".to_string(), Value::String("ATOM".into())),
                    (
                        "evidence".to_string(),
                        Value::List(evidence.iter().map(evidence_value).collect()),
                    ),
                ]);
                (t, f_, tc, fc, why)
            }
            Formula::Not(g) => {
                let c = self.eval(g, world, depth)?;
                let why = BTreeMap::from([
                    ("operator".to_string(), Value::String("NOT".into())),
                    ("children".to_string(), Value::List(vec![c.why])),
                ]);
                (c.f, c.t, c.fc, c.tc, why)
            }
            Formula::And(gs) | Formula::Or(gs) => {
                let children = gs
                    .iter()
                    .map(|g| self.eval(g, world, depth))
                    .collect::<Result<Vec<_>>>()?;
                let and = matches!(f, Formula::And(_));
                let (t, f_, tc, fc) = combine(&children, and);
                let why = BTreeMap::from([
                    (
                        "operator".to_string(),
                        Value::String(if and { "AND" } else { "OR" }.into()),
                    ),
                    (
                        "children".to_string(),
                        Value::List(children.into_iter().map(|c| c.why).collect()),
                    ),
                ]);
                (t, f_, tc, fc, why)
            }
            Formula::Modal {
                modality,
                agent,
                formula,
            } => self.modal(*modality, agent, formula, world, depth)?,
        };
        why.insert("world".into(), Value::String(world.to_string()));
        why.insert(
            "status".into(),
            Value::String(Status::of(t, f_).name().into()),
        );
        let truth = Truth {
            t,
            f: f_,
            tc,
            fc,
            why: Value::Map(why),
        };
        self.cache.insert(key, truth.clone());
        Ok(truth)
    }

    #[expect(
        clippy::type_complexity,
        reason = "the parts of a Truth before its explanation is complete"
    )]
    fn modal(
        &mut self,
        modality: Modality,
        agent: &str,
        formula: &Formula,
        world: &str,
        depth: usize,
    ) -> Result<(
        bool,
        bool,
        Option<f64>,
        Option<f64>,
        BTreeMap<String, Value>,
    )> {
        if depth >= self.limits.max_depth {
            return Err(KnowledgeError::Limit {
                what: "maxDepth",
                limit: self.limits.max_depth as u64,
            });
        }
        let (frame, universal) = modality.frame();
        let q = ClaimQuery {
            world: Some(world.to_string()),
            predicate: Some(frame.predicate().to_string()),
            subject: Some(world.to_string()),
            agent: Some(agent.to_string()),
            polarity: Some(Polarity::Positive),
            ..ClaimQuery::default()
        };
        let links = claims_as_of(self.r, &q, self.at)?;
        let mut targets: Vec<String> = links
            .iter()
            .filter_map(|v| match &v.state {
                State::Claim(c) => c.object.entity().map(str::to_string),
                _ => None,
            })
            .collect();
        targets.sort();
        targets.dedup();
        let children = targets
            .iter()
            .map(|w| self.eval(formula, w, depth + 1))
            .collect::<Result<Vec<_>>>()?;
        let (t, f_, tc, fc) = if children.is_empty() {
            (false, false, None, None)
        } else {
            combine(&children, universal)
        };
        let why = BTreeMap::from([
            (
                "operator".to_string(),
                Value::String(modality.name().into()),
            ),
            ("agent".to_string(), Value::String(agent.to_string())),
            (
                "accessibility".to_string(),
                Value::List(links.iter().map(evidence_value).collect()),
            ),
            (
                "children".to_string(),
                Value::List(children.into_iter().map(|c| c.why).collect()),
            ),
        ]);
        Ok((t, f_, tc, fc, why))
    }
}

/// Evaluates `formula` in `world` at valid time `at` on `r` (bitemporal
/// when `r` reads as of a system time).
pub fn evaluate(
    r: &(impl GraphRead + ?Sized),
    formula: &Formula,
    world: &str,
    at: i64,
    limits: ModalLimits,
) -> Result<Entailment> {
    if limits.max_depth == 0 {
        return Err(KnowledgeError::InvalidLimit { what: "maxDepth" });
    }
    if limits.max_states == 0 {
        return Err(KnowledgeError::InvalidLimit { what: "maxStates" });
    }
    let mut e = Eval {
        r,
        at,
        limits,
        cache: HashMap::new(),
    };
    let top = e.eval(formula, world, 0)?;
    let status = Status::of(top.t, top.f);
    let confidence = status.confidence(top.tc, top.fc);
    Ok(Entailment {
        status,
        confidence,
        explanation: top.why,
        states: e.cache.len(),
    })
}

/// `agent` `modality` `proposition` in `world` at `at`: the question
/// `kg.entails` asks (BELIEVES, KNOWS, POSSIBLE or NECESSARY).
pub fn entails(
    r: &(impl GraphRead + ?Sized),
    agent: &str,
    proposition: Formula,
    modality: Modality,
    world: &str,
    at: i64,
    limits: ModalLimits,
) -> Result<Entailment> {
    let f = Formula::Modal {
        modality,
        agent: agent.to_string(),
        formula: Box::new(proposition),
    };
    evaluate(r, &f, world, at, limits)
}

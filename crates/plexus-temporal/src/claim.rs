//! Claims: sourced assertions and denials of subject–predicate–object
//! propositions, kept as temporal entities of their own kind (valid
//! intervals, versions, corrections, retractions, system-time history),
//! and found through an index by world, predicate, subject and object.
//!
//! A claim's identity is its proposition (the *statement*) with the
//! context that asserts it: polarity, agent, source and world. So an
//! assertion and a denial of one statement by two agents are two claims
//! that coexist; confidence and provenance are not identity, and a
//! correction changes them. Ids are name-based UUIDs (version 5) of a
//! canonical encoding, the same on every machine and run.
//!
//! Index layout in the valid-time keyspace (after the graph's prefix):
//! `C | world | predicate | subject | object | claim id` → claim id, each
//! part escaped (`push_escaped`), the object as `e` + id or `l` + the
//! value's encoding; `W | world` → world. Written when a claim is first
//! asserted (its identity is known from then on, as GestaltDB has it), so
//! a statement's claims are one prefix scan, a predicate's in a world
//! another.

use crate::error::{Result, TemporalError};
use crate::version::{Kind, Props};
use plexus_common::{decode_value, encode_value, push_escaped, write_bytes, Reader, Value};
use plexus_storage::{GraphRead, WriteTxn};

/// Whether a claim asserts its statement or denies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Polarity {
    Positive,
    Negative,
}

impl Polarity {
    pub fn name(self) -> &'static str {
        match self {
            Polarity::Positive => "positive",
            Polarity::Negative => "negative",
        }
    }

    /// `positive` or `negative`.
    pub fn parse(s: &str) -> Result<Polarity> {
        match s {
            "positive" => Ok(Polarity::Positive),
            "negative" => Ok(Polarity::Negative),
            _ => Err(TemporalError::InvalidClaim(format!(
                "polarity '{s}': it is 'positive' or 'negative'"
            ))),
        }
    }
}

/// A claim's object: an entity (by id) or a literal value.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimObject {
    Entity(String),
    Literal(Value),
}

impl ClaimObject {
    /// The object's bytes in keys and identities.
    fn key(&self) -> Vec<u8> {
        match self {
            ClaimObject::Entity(id) => [b"e", id.as_bytes()].concat(),
            ClaimObject::Literal(v) => {
                let mut out = vec![b'l'];
                encode_value(v, &mut out);
                out
            }
        }
    }

    /// The entity id, for an entity object.
    pub fn entity(&self) -> Option<&str> {
        match self {
            ClaimObject::Entity(id) => Some(id),
            ClaimObject::Literal(_) => None,
        }
    }
}

/// The state a claim version gives its claim.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimState {
    pub subject: String,
    pub predicate: String,
    pub object: ClaimObject,
    pub polarity: Polarity,
    pub agent: String,
    pub source: Option<String>,
    /// From 0 to 1, when known.
    pub confidence: Option<f64>,
    pub world: String,
    pub provenance: Props,
}

/// The world a claim is in unless it names another.
pub const DEFAULT_WORLD: &str = "default";

/// The namespace of claim and statement ids (version 5 UUIDs).
const NAMESPACE: uuid::Uuid = uuid::Uuid::from_u128(0x5d1e_7c0a_4b9f_4e55_9a64_7c1a_e2b3_f4d5);

fn name_id(prefix: &str, canonical: &[u8]) -> String {
    format!("{prefix}:{}", uuid::Uuid::new_v5(&NAMESPACE, canonical))
}

/// The id of the proposition `subject predicate object`, whoever claims it.
pub fn statement_id(subject: &str, predicate: &str, object: &ClaimObject) -> String {
    name_id("statement", &statement_bytes(subject, predicate, object))
}

fn statement_bytes(subject: &str, predicate: &str, object: &ClaimObject) -> Vec<u8> {
    let mut b = Vec::new();
    write_bytes(&mut b, subject.as_bytes());
    write_bytes(&mut b, predicate.as_bytes());
    write_bytes(&mut b, &object.key());
    b
}

impl ClaimState {
    /// A positive claim of `agent` in the default world, without source,
    /// confidence or provenance.
    pub fn new(subject: &str, predicate: &str, object: ClaimObject, agent: &str) -> ClaimState {
        ClaimState {
            subject: subject.into(),
            predicate: predicate.into(),
            object,
            polarity: Polarity::Positive,
            agent: agent.into(),
            source: None,
            confidence: None,
            world: DEFAULT_WORLD.into(),
            provenance: Props::new(),
        }
    }

    /// The claim's identity: its statement, polarity, agent, source and world.
    pub fn claim_id(&self) -> String {
        let mut b = statement_bytes(&self.subject, &self.predicate, &self.object);
        b.push(self.polarity as u8);
        write_bytes(&mut b, self.agent.as_bytes());
        match &self.source {
            None => b.push(0),
            Some(s) => {
                b.push(1);
                write_bytes(&mut b, s.as_bytes());
            }
        }
        write_bytes(&mut b, self.world.as_bytes());
        name_id("claim", &b)
    }

    /// The id of the claim's proposition.
    pub fn statement_id(&self) -> String {
        statement_id(&self.subject, &self.predicate, &self.object)
    }

    /// Refuses empty names and a confidence outside `[0, 1]`.
    pub fn check(&self) -> Result<()> {
        let named = [
            ("subject", &self.subject),
            ("predicate", &self.predicate),
            ("agent", &self.agent),
            ("world", &self.world),
        ];
        for (what, s) in named {
            if s.is_empty() {
                return Err(TemporalError::InvalidClaim(format!("its {what} is empty")));
            }
        }
        if let Some(src) = &self.source {
            if src.is_empty() {
                return Err(TemporalError::InvalidClaim("its source is empty".into()));
            }
        }
        if let ClaimObject::Entity(id) = &self.object {
            if id.is_empty() {
                return Err(TemporalError::InvalidClaim("its object is empty".into()));
            }
        }
        if let Some(c) = self.confidence {
            if !(0.0..=1.0).contains(&c) {
                return Err(TemporalError::InvalidClaim(format!(
                    "confidence {c}: it is a number from 0 to 1"
                )));
            }
        }
        Ok(())
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        write_bytes(out, self.subject.as_bytes());
        write_bytes(out, self.predicate.as_bytes());
        match &self.object {
            ClaimObject::Entity(id) => {
                out.push(b'e');
                write_bytes(out, id.as_bytes());
            }
            ClaimObject::Literal(v) => {
                out.push(b'l');
                encode_value(v, out);
            }
        }
        out.push(self.polarity as u8);
        write_bytes(out, self.agent.as_bytes());
        match &self.source {
            None => out.push(0),
            Some(s) => {
                out.push(1);
                write_bytes(out, s.as_bytes());
            }
        }
        match self.confidence {
            None => out.push(0),
            Some(c) => {
                out.push(1);
                out.extend_from_slice(&c.to_bits().to_le_bytes());
            }
        }
        write_bytes(out, self.world.as_bytes());
        encode_value(&Value::Map(self.provenance.clone()), out);
    }

    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<ClaimState> {
        let bad = |what: &str| TemporalError::Corrupt(format!("claim {what}"));
        let subject = r.string()?;
        let predicate = r.string()?;
        let object = match r.byte()? {
            b'e' => ClaimObject::Entity(r.string()?),
            _ => ClaimObject::Literal(decode_value(r)?),
        };
        let polarity = match r.byte()? {
            0 => Polarity::Positive,
            1 => Polarity::Negative,
            _ => return Err(bad("polarity")),
        };
        let agent = r.string()?;
        let source = match r.byte()? {
            0 => None,
            _ => Some(r.string()?),
        };
        let confidence = match r.byte()? {
            0 => None,
            _ => {
                let b = r.bytes(8)?;
                let bits = u64::from_le_bytes(b.try_into().map_err(|_| bad("confidence"))?);
                Some(f64::from_bits(bits))
            }
        };
        let world = r.string()?;
        let provenance = match decode_value(r)? {
            Value::Map(m) => m,
            _ => return Err(bad("provenance")),
        };
        Ok(ClaimState {
            subject,
            predicate,
            object,
            polarity,
            agent,
            source,
            confidence,
            world,
            provenance,
        })
    }
}

const INDEX: u8 = b'C';
const WORLDS: u8 = b'W';

fn index_key(c: &ClaimState, claim_id: &str) -> Vec<u8> {
    let mut k = vec![INDEX];
    push_escaped(&mut k, c.world.as_bytes());
    push_escaped(&mut k, c.predicate.as_bytes());
    push_escaped(&mut k, c.subject.as_bytes());
    push_escaped(&mut k, &c.object.key());
    k.extend_from_slice(claim_id.as_bytes());
    k
}

/// Indexes a claim asserted for the first time (idempotent): the entry's
/// value is the claim id.
pub(crate) fn index(txn: &mut WriteTxn, c: &ClaimState, claim_id: &str) -> Result<()> {
    crate::graph::put_once(txn, Kind::Claim, claim_id, index_key(c, claim_id))?;
    let mut w = vec![WORLDS];
    w.extend_from_slice(c.world.as_bytes());
    if crate::keyspace::get(txn, &w)?.is_none() {
        // Every claim of a world shares this entry: its conflict subject is
        // the world, so two first claims of a new world conflict (rarely).
        crate::keyspace::write(txn, &w, &w, Some(c.world.as_bytes().to_vec()))?;
    }
    Ok(())
}

/// Set once claim changes are tracked (`track_claim_changes`).
const TRACKED: &[u8] = b"M|claims-tracked";
/// `CHANGED` + a claim id: the claim has a version written since the
/// entry was last cleared.
const CHANGED: &[u8] = b"M|claims-changed|";

/// From this transaction on, every claim version written marks its claim
/// as changed ([`changed_claims`]) until [`clear_changed_claims`] clears
/// it: what incremental truth maintenance starts from. Off until asked
/// for, so stores without rules keep no such marks.
pub fn track_claim_changes(txn: &mut WriteTxn) -> Result<()> {
    if crate::keyspace::get(txn, TRACKED)?.is_none() {
        crate::keyspace::write(txn, TRACKED, TRACKED, Some(vec![1]))?;
    }
    Ok(())
}

/// Whether claim changes are tracked.
pub fn claim_changes_tracked(r: &(impl GraphRead + ?Sized)) -> Result<bool> {
    Ok(crate::keyspace::get(r, TRACKED)?.is_some())
}

/// Marks claim `claim_id` changed, when changes are tracked. Each claim
/// has its own mark (and conflict subject): writers of different claims
/// do not conflict over it. While changes are not tracked, the writer
/// shares the switch: a concurrent transaction turning tracking on (the
/// first maintenance pass, whose snapshot lacks this claim) conflicts
/// with it, so no change lands unmarked after tracking began.
pub(crate) fn mark_changed(txn: &mut WriteTxn, claim_id: &str) -> Result<()> {
    if claim_changes_tracked(txn)? {
        let k = [CHANGED, claim_id.as_bytes()].concat();
        crate::keyspace::write(txn, &k, &k, Some(Vec::new()))?;
    } else {
        txn.valid_time_share(TRACKED);
    }
    Ok(())
}

/// The ids of the claims marked changed, in id order.
pub fn changed_claims(r: &(impl GraphRead + ?Sized)) -> Result<Vec<String>> {
    let mut hi = CHANGED.to_vec();
    if let Some(last) = hi.last_mut() {
        *last += 1;
    }
    let mut out = Vec::new();
    crate::keyspace::scan(
        r,
        std::ops::Bound::Included(CHANGED),
        std::ops::Bound::Excluded(&hi),
        false,
        &mut |k, _| {
            let id = k.get(CHANGED.len()..).unwrap_or_default();
            out.push(String::from_utf8_lossy(id).into_owned());
            Ok(true)
        },
    )?;
    Ok(out)
}

/// Clears the change marks of `claim_ids`.
pub fn clear_changed_claims(txn: &mut WriteTxn, claim_ids: &[String]) -> Result<()> {
    for id in claim_ids {
        let k = [CHANGED, id.as_bytes()].concat();
        crate::keyspace::write(txn, &k, &k, None)?;
    }
    Ok(())
}

/// Which claims to find: each part given narrows the search. The index
/// is ordered world, predicate, subject, object: the parts given from
/// the first on make one prefix scan; a later part without the one
/// before it is a filter.
#[derive(Debug, Clone, Default)]
pub struct ClaimQuery {
    /// `None`: every world.
    pub world: Option<String>,
    pub predicate: Option<String>,
    pub subject: Option<String>,
    pub object: Option<ClaimObject>,
    pub agent: Option<String>,
    pub polarity: Option<Polarity>,
}

impl ClaimQuery {
    /// The claims of one statement in one world.
    pub fn statement(world: &str, subject: &str, predicate: &str, object: ClaimObject) -> Self {
        ClaimQuery {
            world: Some(world.into()),
            predicate: Some(predicate.into()),
            subject: Some(subject.into()),
            object: Some(object),
            ..ClaimQuery::default()
        }
    }

    /// Whether claim state `c` is one the query asks for.
    pub fn matches(&self, c: &ClaimState) -> bool {
        self.world.as_ref().is_none_or(|w| *w == c.world)
            && self.predicate.as_ref().is_none_or(|p| *p == c.predicate)
            && self.subject.as_ref().is_none_or(|s| *s == c.subject)
            && self.object.as_ref().is_none_or(|o| *o == c.object)
            && self.agent.as_ref().is_none_or(|a| *a == c.agent)
            && self.polarity.is_none_or(|p| p == c.polarity)
    }

    /// The index prefix of the parts given in order, in `world`.
    fn prefix(&self, world: &str) -> Vec<u8> {
        let mut k = vec![INDEX];
        push_escaped(&mut k, world.as_bytes());
        let Some(p) = &self.predicate else { return k };
        push_escaped(&mut k, p.as_bytes());
        let Some(s) = &self.subject else { return k };
        push_escaped(&mut k, s.as_bytes());
        if let Some(o) = &self.object {
            push_escaped(&mut k, &o.key());
        }
        k
    }
}

/// The worlds that hold claims, in order.
pub fn worlds(r: &(impl GraphRead + ?Sized)) -> Result<Vec<String>> {
    crate::timeline::values_between(r, &[WORLDS], &[WORLDS + 1])
}

/// The ids of the claims whose index entries the query's prefix covers
/// (agent, polarity and parts after a missing one are not checked here).
pub fn claim_ids(r: &(impl GraphRead + ?Sized), q: &ClaimQuery) -> Result<Vec<String>> {
    let worlds = match &q.world {
        Some(w) => vec![w.clone()],
        None => worlds(r)?,
    };
    let mut out = Vec::new();
    for w in worlds {
        out.extend(crate::graph::ids(r, q.prefix(&w))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim() -> ClaimState {
        ClaimState {
            source: Some("hr.csv".into()),
            confidence: Some(0.97),
            world: "reported".into(),
            provenance: Props::from([("reviewed".into(), Value::Bool(true))]),
            ..ClaimState::new(
                "alice",
                "WORKS_FOR",
                ClaimObject::Entity("acme".into()),
                "hr",
            )
        }
    }

    #[test]
    fn identity_is_the_statement_and_its_context() {
        let c = claim();
        let same = ClaimState {
            confidence: Some(0.5),
            provenance: Props::new(),
            ..c.clone()
        };
        assert_eq!(c.claim_id(), same.claim_id(), "confidence is not identity");
        let denial = ClaimState {
            polarity: Polarity::Negative,
            ..c.clone()
        };
        assert_ne!(c.claim_id(), denial.claim_id());
        assert_eq!(c.statement_id(), denial.statement_id());
        let other_world = ClaimState {
            world: "default".into(),
            ..c.clone()
        };
        assert_ne!(c.claim_id(), other_world.claim_id());
        // An entity and a literal of the same text are different objects.
        let literal = ClaimState {
            object: ClaimObject::Literal(Value::String("acme".into())),
            ..c.clone()
        };
        assert_ne!(c.statement_id(), literal.statement_id());
        assert!(c.claim_id().starts_with("claim:"));
    }

    #[test]
    fn claims_round_trip_and_are_checked() {
        let c = claim();
        let mut b = Vec::new();
        c.encode(&mut b);
        assert_eq!(ClaimState::decode(&mut Reader::new(&b)).unwrap(), c);
        let bad = ClaimState {
            confidence: Some(1.5),
            ..c.clone()
        };
        assert!(bad
            .check()
            .unwrap_err()
            .to_string()
            .contains("confidence 1.5"));
        let nan = ClaimState {
            confidence: Some(f64::NAN),
            ..c.clone()
        };
        assert!(nan.check().is_err());
        let empty = ClaimState {
            agent: String::new(),
            ..c
        };
        assert!(empty.check().unwrap_err().to_string().contains("agent"));
    }
}

//! Versions: what one valid-time write asserted, corrected or retracted,
//! and their encoding.

use crate::claim::ClaimState;
use crate::error::{Result, TemporalError};
use crate::time::Interval;
use plexus_common::{
    decode_value, encode_value, push_i64, read_i64, write_bytes, write_varint, Reader, Value,
};
use std::collections::BTreeMap;

/// Properties by name.
pub type Props = BTreeMap<String, Value>;

/// What a version is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Node,
    Edge,
    /// A sourced assertion or denial (`claim.rs`).
    Claim,
}

impl Kind {
    pub(crate) fn byte(self) -> u8 {
        match self {
            Kind::Node => b'n',
            Kind::Edge => b'e',
            Kind::Claim => b'c',
        }
    }

    fn from_byte(b: u8) -> Result<Kind> {
        match b {
            b'n' => Ok(Kind::Node),
            b'e' => Ok(Kind::Edge),
            b'c' => Ok(Kind::Claim),
            _ => Err(TemporalError::Corrupt("version kind".into())),
        }
    }
}

/// What a version does to its entity over its interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// The entity holds the version's state.
    Assert,
    /// As `Assert`, replacing a version found wrong (`supersedes`).
    Correct,
    /// The entity does not exist (or is not known to).
    Retract,
}

impl Op {
    fn byte(self) -> u8 {
        match self {
            Op::Assert => 0,
            Op::Correct => 1,
            Op::Retract => 2,
        }
    }

    fn from_byte(b: u8) -> Result<Op> {
        match b {
            0 => Ok(Op::Assert),
            1 => Ok(Op::Correct),
            2 => Ok(Op::Retract),
            _ => Err(TemporalError::Corrupt("version operation".into())),
        }
    }
}

/// The state a node version gives its node.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeState {
    pub labels: Vec<String>,
    pub props: Props,
}

/// The state an edge version gives its edge: endpoints are logical node ids.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EdgeState {
    pub src: String,
    pub dst: String,
    pub rel_type: String,
    pub props: Props,
}

/// A version's state.
#[derive(Debug, Clone, PartialEq)]
pub enum State {
    Node(NodeState),
    Edge(EdgeState),
    Claim(ClaimState),
    /// A retraction carries none.
    None,
}

/// One immutable version.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    pub id: String,
    pub kind: Kind,
    pub logical_id: String,
    pub op: Op,
    pub valid: Interval,
    /// The version this one corrects or retracts, when it names one.
    pub supersedes: Option<String>,
    pub reason: Option<String>,
    pub state: State,
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    write_bytes(out, s.as_bytes());
}

fn put_opt(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            put_str(out, s);
        }
    }
}

fn get_opt(r: &mut Reader<'_>) -> Result<Option<String>> {
    Ok(match r.byte()? {
        0 => None,
        _ => Some(r.string()?),
    })
}

fn put_props(out: &mut Vec<u8>, props: &Props) {
    write_varint(out, props.len() as u64);
    for (k, v) in props {
        put_str(out, k);
        encode_value(v, out);
    }
}

fn get_props(r: &mut Reader<'_>) -> Result<Props> {
    let n = r.len()?;
    let mut props = Props::new();
    for _ in 0..n {
        let k = r.string()?;
        props.insert(k, decode_value(r)?);
    }
    Ok(props)
}

impl Version {
    pub(crate) fn encode(&self) -> Vec<u8> {
        // Room for the fixed fields and the ids, so that a small version is
        // encoded without growing (a batch encodes thousands).
        let ids = match &self.state {
            State::Edge(e) => e.src.len() + e.dst.len() + e.rel_type.len(),
            _ => 0,
        };
        let mut out = Vec::with_capacity(64 + self.logical_id.len() + ids);
        out.extend_from_slice(&[self.kind.byte(), self.op.byte()]);
        put_str(&mut out, &self.logical_id);
        push_i64(&mut out, self.valid.from);
        push_i64(&mut out, self.valid.end());
        put_opt(&mut out, self.supersedes.as_deref());
        put_opt(&mut out, self.reason.as_deref());
        match &self.state {
            State::None => out.push(0),
            State::Node(n) => {
                out.push(1);
                write_varint(&mut out, n.labels.len() as u64);
                for l in &n.labels {
                    put_str(&mut out, l);
                }
                put_props(&mut out, &n.props);
            }
            State::Edge(e) => {
                out.push(2);
                put_str(&mut out, &e.src);
                put_str(&mut out, &e.dst);
                put_str(&mut out, &e.rel_type);
                put_props(&mut out, &e.props);
            }
            State::Claim(c) => {
                out.push(3);
                c.encode(&mut out);
            }
        }
        out
    }

    pub(crate) fn decode(id: &str, bytes: &[u8]) -> Result<Version> {
        let mut r = Reader::new(bytes);
        let kind = Kind::from_byte(r.byte()?)?;
        let op = Op::from_byte(r.byte()?)?;
        let logical_id = r.string()?;
        let interval = r.bytes(16)?;
        let bad = || TemporalError::Corrupt("version interval".into());
        let from = read_i64(interval, 0).ok_or_else(bad)?;
        let end = read_i64(interval, 8).ok_or_else(bad)?;
        let supersedes = get_opt(&mut r)?;
        let reason = get_opt(&mut r)?;
        let state = match r.byte()? {
            0 => State::None,
            1 => {
                let n = r.len()?;
                let labels = (0..n).map(|_| r.string()).collect::<Result<_, _>>()?;
                State::Node(NodeState {
                    labels,
                    props: get_props(&mut r)?,
                })
            }
            2 => State::Edge(EdgeState {
                src: r.string()?,
                dst: r.string()?,
                rel_type: r.string()?,
                props: get_props(&mut r)?,
            }),
            _ => State::Claim(ClaimState::decode(&mut r)?),
        };
        Ok(Version {
            id: id.to_string(),
            kind,
            logical_id,
            op,
            valid: Interval::with_end(from, end),
            supersedes,
            reason,
            state,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_round_trip() {
        let v = Version {
            id: "v1".into(),
            kind: Kind::Edge,
            logical_id: "e".into(),
            op: Op::Correct,
            valid: Interval::new(-5, Some(9)).unwrap(),
            supersedes: Some("v0".into()),
            reason: None,
            state: State::Edge(EdgeState {
                src: "a".into(),
                dst: "b".into(),
                rel_type: "KNOWS".into(),
                props: Props::from([("w".into(), Value::Float(0.5))]),
            }),
        };
        assert_eq!(Version::decode("v1", &v.encode()).unwrap(), v);
        let r = Version {
            op: Op::Retract,
            state: State::None,
            valid: Interval::from(3),
            reason: Some("wrong source".into()),
            ..v
        };
        assert_eq!(Version::decode("v1", &r.encode()).unwrap(), r);
        assert!(Version::decode("v1", b"x").is_err());
    }
}

//! Valid time from Cypher: `plexus.temporal.*` procedures over
//! `plexus_temporal` — writing versions of nodes and edges (assert,
//! correct, retract) and reading them as of a valid instant. Instants are
//! datetimes, ISO 8601 strings or microseconds since 1970; a missing end
//! is open. With `MATCH … FOR SYSTEM_TIME AS OF` the reads are bitemporal.

use crate::builtin::{txn, Graph};
use crate::error::QueryError;
use plexus_common::Value;
use plexus_temporal::{
    Direction, EdgeState, Interval, Kind, NodeState, Op, Props, State, TemporalError, Version,
    VersionWrite,
};

type Records = Result<Vec<Vec<Value>>, QueryError>;

impl From<TemporalError> for QueryError {
    fn from(e: TemporalError) -> Self {
        match e {
            TemporalError::Storage(s) => s.into(),
            TemporalError::Corrupt(_) => QueryError::Procedure {
                code: "TemporalStoreDamaged",
                message: e.to_string(),
            },
            other => QueryError::Argument {
                code: "InvalidArgumentValue",
                message: other.to_string(),
            },
        }
    }
}

fn string<'v>(v: &'v Value, proc_name: &str, arg: &str) -> Result<&'v str, QueryError> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(QueryError::type_error(format!(
            "argument `{arg}` of {proc_name} must be a string, not {}",
            other.value_type().name()
        ))),
    }
}

fn props(v: &Value, proc_name: &str) -> Result<Props, QueryError> {
    match v {
        Value::Map(m) => Ok(m.clone()),
        Value::Null => Ok(Props::new()),
        other => Err(QueryError::type_error(format!(
            "argument `properties` of {proc_name} must be a map, not {}",
            other.value_type().name()
        ))),
    }
}

fn labels(v: &Value, proc_name: &str) -> Result<Vec<String>, QueryError> {
    match v {
        Value::Null => Ok(vec![]),
        Value::List(items) => items
            .iter()
            .map(|l| string(l, proc_name, "labels").map(str::to_string))
            .collect(),
        other => Err(QueryError::type_error(format!(
            "argument `labels` of {proc_name} must be a list of strings, not {}",
            other.value_type().name()
        ))),
    }
}

fn kind(v: &Value, proc_name: &str) -> Result<Kind, QueryError> {
    match string(v, proc_name, "kind")? {
        k if k.eq_ignore_ascii_case("node") => Ok(Kind::Node),
        k if k.eq_ignore_ascii_case("relationship") || k.eq_ignore_ascii_case("edge") => {
            Ok(Kind::Edge)
        }
        other => Err(QueryError::Argument {
            code: "InvalidArgumentValue",
            message: format!("{proc_name}: kind '{other}' is neither 'node' nor 'relationship'"),
        }),
    }
}

/// `[from, to)` from two arguments; a null end is open.
pub(crate) fn interval(from: &Value, to: &Value, proc_name: &str) -> Result<Interval, QueryError> {
    let start = crate::as_of::instant(from, &format!("validFrom of {proc_name}"))?;
    let end = match to {
        Value::Null => None,
        v => Some(crate::as_of::instant(
            v,
            &format!("validTo of {proc_name}"),
        )?),
    };
    Ok(Interval::new(start, end)?)
}

fn write(g: &mut Graph<'_>, w: VersionWrite, proc_name: &str) -> Records {
    let v = plexus_temporal::write_version(txn(g, proc_name)?, &w)?;
    Ok(vec![version_id_row(v)])
}

/// What a call that wrote version `v` yields: its id.
pub(crate) fn version_id_row(v: Version) -> Vec<Value> {
    vec![Value::String(v.id)]
}

const ASSERT_NODE: &str = "plexus.temporal.assertNode";
const ASSERT_EDGE: &str = "plexus.temporal.assertRelationship";
const RETRACT: &str = "plexus.temporal.retract";

/// The version `assertNode(id, labels, properties, validFrom, validTo)`
/// writes.
pub(crate) fn assert_node_write(a: &[Value]) -> Result<VersionWrite, QueryError> {
    let state = NodeState {
        labels: labels(&a[1], ASSERT_NODE)?,
        props: props(&a[2], ASSERT_NODE)?,
    };
    let id = string(&a[0], ASSERT_NODE, "id")?;
    let valid = interval(&a[3], &a[4], ASSERT_NODE)?;
    Ok(VersionWrite::assert_node(id, state, valid))
}

pub(crate) fn assert_node(g: &mut Graph<'_>, a: &[Value]) -> Records {
    write(g, assert_node_write(a)?, ASSERT_NODE)
}

/// The version `assertRelationship(id, source, target, type, properties,
/// validFrom, validTo)` writes.
pub(crate) fn assert_edge_write(a: &[Value]) -> Result<VersionWrite, QueryError> {
    let state = EdgeState {
        src: string(&a[1], ASSERT_EDGE, "source")?.to_string(),
        dst: string(&a[2], ASSERT_EDGE, "target")?.to_string(),
        rel_type: string(&a[3], ASSERT_EDGE, "type")?.to_string(),
        props: props(&a[4], ASSERT_EDGE)?,
    };
    let id = string(&a[0], ASSERT_EDGE, "id")?;
    let valid = interval(&a[5], &a[6], ASSERT_EDGE)?;
    Ok(VersionWrite::assert_edge(id, state, valid))
}

pub(crate) fn assert_edge(g: &mut Graph<'_>, a: &[Value]) -> Records {
    write(g, assert_edge_write(a)?, ASSERT_EDGE)
}

/// The version `retract(kind, id, validFrom, validTo, reason)` writes.
pub(crate) fn retract_write(a: &[Value]) -> Result<VersionWrite, QueryError> {
    let k = kind(&a[0], RETRACT)?;
    let id = string(&a[1], RETRACT, "id")?;
    let mut w = VersionWrite::retract(k, id, interval(&a[2], &a[3], RETRACT)?);
    if let Value::String(reason) = &a[4] {
        w = w.reason(reason);
    }
    Ok(w)
}

pub(crate) fn retract(g: &mut Graph<'_>, a: &[Value]) -> Records {
    write(g, retract_write(a)?, RETRACT)
}

/// `correct(versionId, properties, validFrom, validTo)`: the superseded
/// version's labels or endpoints with new properties, over its interval
/// unless one is given.
pub(crate) fn correct(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "plexus.temporal.correct";
    let target = string(&a[0], NAME, "versionId")?;
    let t = txn(g, NAME)?;
    let old = plexus_temporal::version(&*t, target)?
        .ok_or_else(|| TemporalError::UnknownVersion(target.to_string()))?;
    let props = props(&a[1], NAME)?;
    let state = match old.state {
        State::Node(n) => State::Node(NodeState { props, ..n }),
        State::Edge(e) => State::Edge(EdgeState { props, ..e }),
        State::None => {
            return Err(QueryError::Argument {
                code: "InvalidArgumentValue",
                message: format!(
                    "{NAME}: version '{target}' is a retraction, with nothing to correct"
                ),
            })
        }
        State::Claim(_) => {
            return Err(QueryError::Argument {
                code: "InvalidArgumentValue",
                message: format!(
                    "{NAME}: version '{target}' is a claim's: correct it with kg.correctClaim"
                ),
            })
        }
    };
    let mut w = VersionWrite::correct(target, state);
    if a[2] != Value::Null {
        w = w.valid(interval(&a[2], &a[3], NAME)?);
    }
    write(g, w, NAME)
}

/// An instant as a result value: a UTC datetime, or the number of µs
/// where none can hold it.
pub(crate) fn instant_value(at: i64) -> Value {
    match u64::try_from(at) {
        Ok(us) if at != i64::MAX => Value::DateTime(plexus_common::DateTime::from_epoch_micros(us)),
        _ => Value::Int(at),
    }
}

/// A version as a row: id, operation, labels or endpoints, properties,
/// interval, lineage.
fn row(v: Version) -> Vec<Value> {
    let (labels, src, dst, rel_type, props) = match v.state {
        State::Node(n) => (
            Value::List(n.labels.into_iter().map(Value::String).collect()),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Map(n.props),
        ),
        State::Edge(e) => (
            Value::Null,
            Value::String(e.src),
            Value::String(e.dst),
            Value::String(e.rel_type),
            Value::Map(e.props),
        ),
        // A claim's version (a lineage can reach one): its statement as
        // the endpoints and type, its provenance as the properties.
        State::Claim(c) => (
            Value::Null,
            Value::String(c.subject),
            c.object
                .entity()
                .map_or(Value::Null, |e| Value::String(e.to_string())),
            Value::String(c.predicate),
            Value::Map(c.provenance),
        ),
        State::None => (
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ),
    };
    let op = match v.op {
        Op::Assert => "assert",
        Op::Correct => "correct",
        Op::Retract => "retract",
    };
    let opt = |s: Option<String>| s.map_or(Value::Null, Value::String);
    vec![
        Value::String(v.id),
        Value::String(v.logical_id),
        Value::String(op.into()),
        labels,
        src,
        dst,
        rel_type,
        props,
        instant_value(v.valid.from),
        v.valid.to.map_or(Value::Null, instant_value),
        opt(v.supersedes),
        opt(v.reason),
    ]
}

/// The columns of [`row`].
pub(crate) const VERSION_COLUMNS: &[&str] = &[
    "versionId",
    "id",
    "operation",
    "labels",
    "source",
    "target",
    "type",
    "properties",
    "validFrom",
    "validTo",
    "supersedes",
    "reason",
];

/// `asOf(kind, id, at)`: the version holding the entity at valid time
/// `at`, as one row, or none.
pub(crate) fn as_of(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "plexus.temporal.asOf";
    let Some(r) = g.read() else { return Ok(vec![]) };
    let k = kind(&a[0], NAME)?;
    let id = string(&a[1], NAME, "id")?;
    let at = crate::as_of::instant(&a[2], &format!("argument `at` of {NAME}"))?;
    Ok(plexus_temporal::as_of(r, k, id, at)?
        .map(row)
        .into_iter()
        .collect())
}

/// `versions(kind, id)`: every version of the entity, in write order.
pub(crate) fn versions(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "plexus.temporal.versions";
    let Some(r) = g.read() else { return Ok(vec![]) };
    let k = kind(&a[0], NAME)?;
    let id = string(&a[1], NAME, "id")?;
    Ok(plexus_temporal::versions(r, k, id)?
        .into_iter()
        .map(row)
        .collect())
}

fn direction(v: &Value, proc_name: &str) -> Result<Direction, QueryError> {
    match v {
        Value::Null => Ok(Direction::Out),
        v => match string(v, proc_name, "direction")?
            .to_ascii_lowercase()
            .as_str()
        {
            "out" | "outgoing" => Ok(Direction::Out),
            "in" | "incoming" => Ok(Direction::In),
            "both" => Ok(Direction::Both),
            other => Err(QueryError::Argument {
                code: "InvalidArgumentValue",
                message: format!("{proc_name}: direction '{other}' is none of out, in, both"),
            }),
        },
    }
}

fn opt_string<'v>(v: &'v Value, proc_name: &str, arg: &str) -> Result<Option<&'v str>, QueryError> {
    match v {
        Value::Null => Ok(None),
        v => string(v, proc_name, arg).map(Some),
    }
}

/// `nodes(label, at)`: the version of each node with the label at valid
/// time `at`.
pub(crate) fn nodes(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "plexus.temporal.nodes";
    let Some(r) = g.read() else { return Ok(vec![]) };
    let label = string(&a[0], NAME, "label")?;
    let at = crate::as_of::instant(&a[1], &format!("argument `at` of {NAME}"))?;
    Ok(plexus_temporal::nodes_as_of(r, label, at)?
        .into_iter()
        .map(row)
        .collect())
}

/// `neighbors(id, at, direction, type)`: the relationships of a node at
/// valid time `at` (their versions), out of it unless `direction` says
/// `in` or `both`.
pub(crate) fn neighbors(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "plexus.temporal.neighbors";
    let Some(r) = g.read() else { return Ok(vec![]) };
    let id = string(&a[0], NAME, "id")?;
    let at = crate::as_of::instant(&a[1], &format!("argument `at` of {NAME}"))?;
    let steps = plexus_temporal::neighbors_as_of(
        r,
        id,
        direction(&a[2], NAME)?,
        opt_string(&a[3], NAME, "type")?,
        at,
    )?;
    Ok(steps.into_iter().map(|s| row(s.edge)).collect())
}

/// `shortestPath(from, to, at, direction, type, maxHops)`: the node ids
/// and relationship ids of a shortest path at valid time `at`, or no row.
pub(crate) fn shortest_path(g: &mut Graph<'_>, a: &[Value]) -> Records {
    const NAME: &str = "plexus.temporal.shortestPath";
    let Some(r) = g.read() else { return Ok(vec![]) };
    let from = string(&a[0], NAME, "from")?;
    let at = crate::as_of::instant(&a[2], &format!("argument `at` of {NAME}"))?;
    let max_hops = match &a[5] {
        Value::Null => 15,
        Value::Int(n) if *n >= 0 => usize::try_from(*n).unwrap_or(usize::MAX),
        other => {
            return Err(QueryError::Argument {
                code: "InvalidArgumentValue",
                message: format!("{NAME}: maxHops must be a non-negative integer, not {other:?}"),
            })
        }
    };
    let path = plexus_temporal::shortest_path_as_of(
        r,
        from,
        string(&a[1], NAME, "to")?,
        direction(&a[3], NAME)?,
        opt_string(&a[4], NAME, "type")?,
        at,
        max_hops,
    )?;
    let Some(steps) = path else { return Ok(vec![]) };
    let mut nodes = vec![Value::String(from.to_string())];
    nodes.extend(steps.iter().map(|s| Value::String(s.neighbor.clone())));
    let edges = steps
        .into_iter()
        .map(|s| Value::String(s.edge.logical_id))
        .collect();
    Ok(vec![vec![Value::List(nodes), Value::List(edges)]])
}

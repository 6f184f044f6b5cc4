//! The procedures every query may call without registering them: the
//! catalog (`db.labels()`, …), the server's identity (`dbms.components()`)
//! and the APOC procedures that GraphRAG clients send on every write
//! (`apoc.create.addLabels`, `apoc.merge.relationship`). Unlike registered
//! procedures these see the graph, and the APOC ones write to it.

use crate::error::QueryError;
use crate::graph::{node_value, rel_value};
use crate::procedure::ArgType;
use plexus_common::Value;
use plexus_storage::{Direction, EdgeId, Entity, GraphRead, NodeId, Props, WriteTxn};

/// What a built-in procedure may touch: as the query that calls it.
pub(crate) enum Graph<'a> {
    None,
    Read(&'a dyn GraphRead),
    Write(&'a mut WriteTxn),
}

impl Graph<'_> {
    pub(crate) fn read(&self) -> Option<&dyn GraphRead> {
        match self {
            Graph::None => None,
            Graph::Read(g) => Some(*g),
            Graph::Write(t) => Some(&**t),
        }
    }
}

type Body = fn(&mut Graph<'_>, &[Value]) -> Records;

/// A read-only procedure that takes a filter on the nodes or the
/// relationships it yields first: a `YIELD … WHERE` pushed into it
/// (`vector.rs`).
#[derive(Clone, Copy)]
pub(crate) enum Filtered {
    /// Filters nodes, and takes the candidates an index lookup gives.
    Nodes(NodeSearch),
    /// Filters relationships.
    Relationships(EdgeSearch),
}

type Records = Result<Vec<Vec<Value>>, QueryError>;

/// A node search: the arguments, a filter, and the candidates.
pub(crate) type NodeSearch =
    fn(&Graph<'_>, &[Value], Option<&dyn Fn(NodeId) -> bool>, Option<&[NodeId]>) -> Records;

/// A relationship search: the arguments and a filter.
pub(crate) type EdgeSearch = fn(&Graph<'_>, &[Value], Option<&dyn Fn(EdgeId) -> bool>) -> Records;

/// The valid-time version a call writes, from its arguments (as many as
/// the procedure's inputs, the missing ones null).
pub(crate) type VersionOf = fn(&[Value]) -> Result<plexus_temporal::VersionWrite, QueryError>;

/// A built-in procedure: its signature and body.
pub(crate) struct Builtin {
    /// The name as documented; calls match it case-insensitively.
    pub name: &'static str,
    /// What it does, as `SHOW PROCEDURES` says it.
    pub description: &'static str,
    pub inputs: &'static [(&'static str, ArgType)],
    /// Inputs after the first `required` may be left out (they are null).
    pub required: usize,
    pub outputs: &'static [&'static str],
    /// Whether a call writes (the query then runs in a write transaction).
    pub writes: bool,
    body: Body,
    /// Set for procedures that filter what they yield themselves; `body`
    /// is then the call without a filter.
    pub filtered: Option<Filtered>,
    /// Set for procedures that write one valid-time version a call: the
    /// version a call's arguments ask for, so that a call over many rows
    /// writes them all as one batch (`Exec::call`).
    pub batch: Option<VersionOf>,
}

impl Builtin {
    /// Runs the procedure on arguments already evaluated.
    pub fn call(
        &self,
        g: &mut Graph<'_>,
        mut args: Vec<Value>,
    ) -> Result<Vec<Vec<Value>>, QueryError> {
        args.resize(self.inputs.len(), Value::Null);
        (self.body)(g, &args)
    }
}

fn query_nodes(g: &mut Graph<'_>, args: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    crate::vector::query_nodes(g, args, None, None)
}

fn query_relationships(g: &mut Graph<'_>, args: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    crate::vector::query_relationships(g, args, None)
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "db.index.vector.queryNodes",
        description: "Returns the nodes of a vector index nearest a query vector, with their similarity scores.",
        inputs: &[
            ("indexName", ArgType::String),
            ("numberOfNearestNeighbours", ArgType::Integer),
            ("query", ArgType::Any),
        ],
        required: 3,
        outputs: &["node", "score"],
        writes: false,
        body: query_nodes,
        filtered: Some(Filtered::Nodes(crate::vector::query_nodes)),
        batch: None,
    },
    Builtin {
        name: "db.index.vector.queryRelationships",
        description: "Returns the relationships of a vector index nearest a query vector, with their similarity scores.",
        inputs: &[
            ("indexName", ArgType::String),
            ("numberOfNearestNeighbours", ArgType::Integer),
            ("query", ArgType::Any),
        ],
        required: 3,
        outputs: &["relationship", "score"],
        writes: false,
        body: query_relationships,
        filtered: Some(Filtered::Relationships(crate::vector::query_relationships)),
        batch: None,
    },
    Builtin {
        name: "db.create.setRelationshipVectorProperty",
        description: "Sets a vector property of a relationship.",
        inputs: &[
            ("relationship", ArgType::Any),
            ("key", ArgType::String),
            ("vector", ArgType::Any),
        ],
        required: 3,
        outputs: &[],
        writes: true,
        body: crate::vector::set_relationship_vector_property,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "db.create.setNodeVectorProperty",
        description: "Sets a vector property of a node.",
        inputs: &[
            ("node", ArgType::Any),
            ("key", ArgType::String),
            ("vector", ArgType::Any),
        ],
        required: 3,
        outputs: &[],
        writes: true,
        body: crate::vector::set_node_vector_property,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "db.labels",
        description: "Lists the node labels in use.",
        inputs: &[],
        required: 0,
        outputs: &["label"],
        writes: false,
        body: labels,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "db.relationshipTypes",
        description: "Lists the relationship types in use.",
        inputs: &[],
        required: 0,
        outputs: &["relationshipType"],
        writes: false,
        body: relationship_types,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "db.propertyKeys",
        description: "Lists the property keys in use.",
        inputs: &[],
        required: 0,
        outputs: &["propertyKey"],
        writes: false,
        body: property_keys,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "dbms.components",
        description: "Returns the database's name, the Neo4j version it answers as, and its edition.",
        inputs: &[],
        required: 0,
        outputs: &["name", "versions", "edition"],
        writes: false,
        body: components,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "apoc.create.addLabels",
        description: "Adds labels, given as strings, to nodes (APOC's form).",
        inputs: &[("nodes", ArgType::Any), ("labels", ArgType::Any)],
        required: 2,
        outputs: &["node"],
        writes: true,
        body: add_labels,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "apoc.merge.relationship",
        description: "Finds or creates a relationship of a type given as a string, by its identifying properties (APOC's form).",
        inputs: &[
            ("startNode", ArgType::Any),
            ("relType", ArgType::String),
            ("identProps", ArgType::Any),
            ("onCreateProps", ArgType::Any),
            ("endNode", ArgType::Any),
            ("onMatchProps", ArgType::Any),
        ],
        required: 5,
        outputs: &["rel"],
        writes: true,
        body: merge_relationship,
        filtered: None,
        batch: None,
    },
    list_update_builtin(
        "plexus.list.add",
        "Adds a value to a list property of a node or relationship unless the list holds it.",
        LIST_ADD,
        list_add,
    ),
    list_update_builtin(
        "plexus.list.remove",
        "Removes a value from a list property of a node or relationship.",
        LIST_VALUE,
        list_remove,
    ),
    list_update_builtin(
        "plexus.list.union",
        "Adds to a list property of a node or relationship the values it does not hold.",
        LIST_VALUES,
        list_union,
    ),
    Builtin {
        name: "plexus.temporal.assertNode",
        description: "Asserts a version of a node, its labels and properties, over an interval of valid time.",
        inputs: &[
            ("id", ArgType::String),
            ("labels", ArgType::Any),
            ("properties", ArgType::Any),
            ("validFrom", ArgType::Any),
            ("validTo", ArgType::Any),
        ],
        required: 4,
        outputs: &["versionId"],
        writes: true,
        body: crate::valid_time::assert_node,
        filtered: None,
        batch: Some(crate::valid_time::assert_node_write),
    },
    Builtin {
        name: "plexus.temporal.assertRelationship",
        description: "Asserts a version of a relationship over an interval of valid time.",
        inputs: &[
            ("id", ArgType::String),
            ("source", ArgType::String),
            ("target", ArgType::String),
            ("type", ArgType::String),
            ("properties", ArgType::Any),
            ("validFrom", ArgType::Any),
            ("validTo", ArgType::Any),
        ],
        required: 6,
        outputs: &["versionId"],
        writes: true,
        body: crate::valid_time::assert_edge,
        filtered: None,
        batch: Some(crate::valid_time::assert_edge_write),
    },
    Builtin {
        name: "plexus.temporal.retract",
        description: "Retracts a node or relationship over an interval of valid time, with a reason.",
        inputs: &[
            ("kind", ArgType::String),
            ("id", ArgType::String),
            ("validFrom", ArgType::Any),
            ("validTo", ArgType::Any),
            ("reason", ArgType::String),
        ],
        required: 3,
        outputs: &["versionId"],
        writes: true,
        body: crate::valid_time::retract,
        filtered: None,
        batch: Some(crate::valid_time::retract_write),
    },
    Builtin {
        name: "plexus.temporal.correct",
        description: "Corrects a version: its properties or interval, the version corrected kept as superseded.",
        inputs: &[
            ("versionId", ArgType::String),
            ("properties", ArgType::Any),
            ("validFrom", ArgType::Any),
            ("validTo", ArgType::Any),
        ],
        required: 2,
        outputs: &["versionId"],
        writes: true,
        body: crate::valid_time::correct,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "plexus.temporal.asOf",
        description: "Returns the version of a node or relationship that holds at an instant of valid time.",
        inputs: &[
            ("kind", ArgType::String),
            ("id", ArgType::String),
            ("at", ArgType::Any),
        ],
        required: 3,
        outputs: crate::valid_time::VERSION_COLUMNS,
        writes: false,
        body: crate::valid_time::as_of,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "plexus.temporal.versions",
        description: "Returns every version of a node or relationship.",
        inputs: &[("kind", ArgType::String), ("id", ArgType::String)],
        required: 2,
        outputs: crate::valid_time::VERSION_COLUMNS,
        writes: false,
        body: crate::valid_time::versions,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "plexus.temporal.nodes",
        description: "Returns the versions of the nodes with a label that hold at an instant of valid time.",
        inputs: &[("label", ArgType::String), ("at", ArgType::Any)],
        required: 2,
        outputs: crate::valid_time::VERSION_COLUMNS,
        writes: false,
        body: crate::valid_time::nodes,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "plexus.temporal.neighbors",
        description: "Returns the relationships of a node, and their other ends, that hold at an instant of valid time.",
        inputs: &[
            ("id", ArgType::String),
            ("at", ArgType::Any),
            ("direction", ArgType::String),
            ("type", ArgType::String),
        ],
        required: 2,
        outputs: crate::valid_time::VERSION_COLUMNS,
        writes: false,
        body: crate::valid_time::neighbors,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "plexus.temporal.shortestPath",
        description: "Returns a shortest path between two nodes as the graph was at an instant of valid time.",
        inputs: &[
            ("from", ArgType::String),
            ("to", ArgType::String),
            ("at", ArgType::Any),
            ("direction", ArgType::String),
            ("type", ArgType::String),
            ("maxHops", ArgType::Any),
        ],
        required: 3,
        outputs: &["nodes", "relationships"],
        writes: false,
        body: crate::valid_time::shortest_path,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.assertClaim",
        description: "Asserts a sourced claim: subject, predicate and object, with polarity, agent, source, confidence, world and valid time.",
        inputs: &[
            ("subject", ArgType::String),
            ("predicate", ArgType::String),
            ("object", ArgType::Any),
            ("options", ArgType::Any),
        ],
        required: 4,
        outputs: &["versionId", "claimId"],
        writes: true,
        body: crate::knowledge::assert_claim,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.correctClaim",
        description: "Corrects a version of a claim.",
        inputs: &[("versionId", ArgType::String), ("options", ArgType::Any)],
        required: 2,
        outputs: &["versionId", "claimId"],
        writes: true,
        body: crate::knowledge::correct_claim,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.retractClaim",
        description: "Retracts a claim over an interval of valid time, with a reason.",
        inputs: &[
            ("claimId", ArgType::String),
            ("validFrom", ArgType::Any),
            ("validTo", ArgType::Any),
            ("reason", ArgType::String),
        ],
        required: 2,
        outputs: &["versionId", "claimId"],
        writes: true,
        body: crate::knowledge::retract_claim,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.claims",
        description: "Returns the claims that match a filter.",
        inputs: &[("options", ArgType::Any)],
        required: 1,
        outputs: crate::knowledge::CLAIM_COLUMNS,
        writes: false,
        body: crate::knowledge::claims,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.claimStatus",
        description: "Returns the four-valued status of a proposition: supported, refuted, both or unknown.",
        inputs: &[
            ("subject", ArgType::String),
            ("predicate", ArgType::String),
            ("object", ArgType::Any),
            ("options", ArgType::Any),
        ],
        required: 4,
        outputs: &["status", "confidence"],
        writes: false,
        body: crate::knowledge::claim_status,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.createRule",
        description: "Creates a positive Horn rule.",
        inputs: &[
            ("id", ArgType::String),
            ("when", ArgType::Any),
            ("then", ArgType::Any),
        ],
        required: 3,
        outputs: &["ruleId", "versionId"],
        writes: true,
        body: crate::knowledge::create_rule,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.runRules",
        description: "Derives claims with the rules to a fixpoint, within limits; exceeding one writes nothing.",
        inputs: &[("options", ArgType::Any)],
        required: 1,
        outputs: crate::knowledge::RUN_COLUMNS,
        writes: true,
        body: crate::knowledge::run_rules,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.maintainTruth",
        description: "Reconciles the rules' conclusions with the claims they rest on: corrects, retracts and asserts conclusions.",
        inputs: &[("options", ArgType::Any)],
        required: 0,
        outputs: crate::knowledge::MAINTAIN_COLUMNS,
        writes: true,
        body: crate::knowledge::maintain_truth,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.explain",
        description: "Returns the derivation of a claim: the rule versions and premises it rests on.",
        inputs: &[("claimId", ArgType::String), ("options", ArgType::Any)],
        required: 2,
        outputs: &["root", "nodes", "edges", "truncated"],
        writes: false,
        body: crate::knowledge::explain,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.assertAccessibility",
        description: "Asserts an accessibility link between two worlds, for an agent and a modality.",
        inputs: &[
            ("agent", ArgType::String),
            ("fromWorld", ArgType::String),
            ("toWorld", ArgType::String),
            ("kind", ArgType::String),
            ("options", ArgType::Any),
        ],
        required: 5,
        outputs: &["versionId", "claimId"],
        writes: true,
        body: crate::knowledge::assert_accessibility,
        filtered: None,
        batch: None,
    },
    Builtin {
        name: "kg.entails",
        description: "Answers a modal question (BELIEVES, KNOWS, POSSIBLE, NECESSARY) about a formula, four-valued and bounded.",
        inputs: &[
            ("agent", ArgType::String),
            ("proposition", ArgType::Any),
            ("modality", ArgType::String),
            ("options", ArgType::Any),
        ],
        required: 4,
        outputs: &["status", "confidence", "explanation"],
        writes: false,
        body: crate::knowledge::entails,
        filtered: None,
        batch: None,
    },
];

/// The arguments of `plexus.list.add` and `plexus.list.remove`.
const LIST_VALUE: &[(&str, ArgType)] = &[
    ("entity", ArgType::Any),
    ("key", ArgType::String),
    ("value", ArgType::Any),
];

/// The arguments of `plexus.list.add`: those of `plexus.list.remove`, and
/// optionally what to add as well when the value is added.
const LIST_ADD: &[(&str, ArgType)] = &[
    ("entity", ArgType::Any),
    ("key", ArgType::String),
    ("value", ArgType::Any),
    ("then", ArgType::Any),
    ("sorted", ArgType::Any),
];

/// The arguments of `plexus.list.union`.
const LIST_VALUES: &[(&str, ArgType)] = &[
    ("entity", ArgType::Any),
    ("key", ArgType::String),
    ("values", ArgType::Any),
];

/// `plexus.list.add`, `.remove` and `.union`: `(entity, key, value or
/// values)` of a node or relationship, yielding whether the list changed.
const fn list_update_builtin(
    name: &'static str,
    description: &'static str,
    inputs: &'static [(&'static str, ArgType)],
    body: Body,
) -> Builtin {
    Builtin {
        name,
        description,
        inputs,
        required: 3,
        outputs: &["changed"],
        writes: true,
        body,
        filtered: None,
        batch: None,
    }
}

/// The columns of `SHOW PROCEDURES`: those it lists without a YIELD first,
/// as Neo4j does, then those a `YIELD *` adds.
pub(crate) const COLUMNS: &[&str] = &[
    "name",
    "description",
    "mode",
    "worksOnSystem",
    "signature",
    "isBuiltIn",
];
/// How many of [`COLUMNS`] `SHOW PROCEDURES` lists without a YIELD.
pub(crate) const SHOWN: usize = 4;

/// `SHOW PROCEDURES`: one row per built-in procedure, in [`COLUMNS`]'
/// order.
pub(crate) fn rows() -> Vec<Vec<Value>> {
    BUILTINS
        .iter()
        .map(|b| {
            vec![
                Value::from(b.name),
                Value::from(b.description),
                Value::from(if b.writes { "WRITE" } else { "READ" }),
                Value::Bool(false),
                Value::from(b.signature()),
                Value::Bool(true),
            ]
        })
        .collect()
}

impl Builtin {
    /// Neo4j's form of a signature: `name(input :: TYPE, …) :: (output, …)`,
    /// the inputs after the required ones in brackets.
    fn signature(&self) -> String {
        let inputs: Vec<String> = self
            .inputs
            .iter()
            .enumerate()
            .map(|(i, (n, t))| {
                let one = format!("{n} :: {}", t.name());
                if i < self.required {
                    one
                } else {
                    format!("[{one}]")
                }
            })
            .collect();
        format!(
            "{}({}) :: ({})",
            self.name,
            inputs.join(", "),
            self.outputs.join(", ")
        )
    }
}

/// The built-in procedure called `name`, if there is one.
pub(crate) fn get(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name.eq_ignore_ascii_case(name))
}

fn strings(values: Vec<String>) -> Vec<Vec<Value>> {
    values.into_iter().map(|v| vec![Value::String(v)]).collect()
}

fn labels(g: &mut Graph<'_>, _: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    let Some(g) = g.read() else { return Ok(vec![]) };
    let used = g.label_counts()?.into_iter().filter(|(_, n)| *n > 0);
    Ok(strings(used.map(|(l, _)| l).collect()))
}

fn relationship_types(g: &mut Graph<'_>, _: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    let Some(g) = g.read() else { return Ok(vec![]) };
    let used = g.type_counts()?.into_iter().filter(|(_, n)| *n > 0);
    Ok(strings(used.map(|(t, _)| t).collect()))
}

fn property_keys(g: &mut Graph<'_>, _: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    Ok(strings(
        g.read().map(|g| g.property_keys()).unwrap_or_default(),
    ))
}

/// The Neo4j version clients gate features on (neo4j-graphrag reads
/// `versions[0]`): Plexus answers the Cypher of Neo4j 5.26 that it speaks.
pub const NEO4J_COMPATIBLE_VERSION: &str = "5.26.0";

fn components(_: &mut Graph<'_>, _: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    Ok(vec![vec![
        Value::String("Plexus".into()),
        Value::List(vec![Value::String(NEO4J_COMPATIBLE_VERSION.into())]),
        Value::String("community".into()),
    ]])
}

/// The write transaction a writing procedure `name` runs in.
pub(crate) fn txn<'a>(g: &'a mut Graph<'_>, name: &str) -> Result<&'a mut WriteTxn, QueryError> {
    match g {
        Graph::Write(t) => Ok(t),
        _ => Err(QueryError::Unsupported(format!(
            "{name} writes, in a read-only query"
        ))),
    }
}

fn node_arg(v: &Value, proc_name: &str, arg: &str) -> Result<NodeId, QueryError> {
    match v {
        Value::Node(n) => Ok(NodeId(n.id)),
        other => Err(QueryError::type_error(format!(
            "argument `{arg}` of {proc_name} must be a node, not {}",
            other.value_type()
        ))),
    }
}

fn props_arg(v: &Value, proc_name: &str, arg: &str) -> Result<Props, QueryError> {
    match v {
        Value::Null => Ok(Props::new()),
        Value::Map(m) => Ok(m
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()),
        other => Err(QueryError::type_error(format!(
            "argument `{arg}` of {proc_name} must be a map, not {}",
            other.value_type()
        ))),
    }
}

/// `apoc.create.addLabels(nodes, labels) YIELD node`: a node or a list of
/// nodes, each given every label of the list.
fn add_labels(g: &mut Graph<'_>, args: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    const NAME: &str = "apoc.create.addLabels";
    let nodes: Vec<&Value> = match &args[0] {
        Value::List(items) => items.iter().collect(),
        Value::Null => vec![],
        one => vec![one],
    };
    let labels: Vec<&str> = match &args[1] {
        Value::List(items) => items
            .iter()
            .map(|l| match l {
                Value::String(s) if !s.is_empty() => Ok(s.as_str()),
                other => Err(QueryError::type_error(format!(
                    "a label of {NAME} must be a non-empty string, not {other}"
                ))),
            })
            .collect::<Result<_, _>>()?,
        Value::Null => vec![],
        other => {
            return Err(QueryError::type_error(format!(
                "argument `labels` of {NAME} must be a list of strings, not {}",
                other.value_type()
            )))
        }
    };
    let t = txn(g, NAME)?;
    let mut out = Vec::with_capacity(nodes.len());
    for n in nodes {
        let id = node_arg(n, NAME, "nodes")?;
        for l in &labels {
            t.add_label(id, l)?;
        }
        out.push(vec![Value::Node(std::sync::Arc::new(node_value(id)))]);
    }
    Ok(out)
}

/// `plexus.list.add(entity, key, value [, then [, sorted]]) YIELD
/// changed`: adds `value` to the list `key` of a node or relationship
/// unless it holds it. Writers doing so to one entity at the same time do
/// not conflict (`WriteTxn::list_add`). `then`, a map from list names to
/// lists, is added too (each element unless there) only when `value` is;
/// the lists `sorted` names get their elements inserted in order instead
/// of appended (`WriteTxn::list_add_then`).
fn list_add(g: &mut Graph<'_>, args: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    list_update(g, args, "plexus.list.add")
}

/// `plexus.list.remove(entity, key, value) YIELD changed`: removes every
/// occurrence of `value` from the entity's list `key`.
fn list_remove(g: &mut Graph<'_>, args: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    list_update(g, args, "plexus.list.remove")
}

/// `plexus.list.union(entity, key, values) YIELD changed`: adds each of
/// the list `values` that the entity's list `key` does not hold, in order; as
/// commutative as `plexus.list.add`.
fn list_union(g: &mut Graph<'_>, args: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    list_update(g, args, "plexus.list.union")
}

fn list_update(
    g: &mut Graph<'_>,
    args: &[Value],
    name: &str,
) -> Result<Vec<Vec<Value>>, QueryError> {
    let of = match &args[0] {
        Value::Node(n) => Entity::Node(NodeId(n.id)),
        Value::Relationship(r) => Entity::Edge(EdgeId(r.id)),
        other => {
            return Err(QueryError::type_error(format!(
                "argument `entity` of {name} must be a node or a relationship, not {}",
                other.value_type()
            )))
        }
    };
    let Value::String(key) = &args[1] else {
        return Err(QueryError::type_error(format!(
            "argument `key` of {name} must be a string, not {}",
            args[1].value_type()
        )));
    };
    let value = args[2].clone();
    let then = match args.get(3) {
        None | Some(Value::Null) => None,
        Some(Value::Map(m)) => Some(then_elements(m, name)?),
        Some(other) => {
            return Err(QueryError::type_error(format!(
                "argument `then` of {name} must be a map from list names to lists, not {}",
                other.value_type()
            )))
        }
    };
    let sorted = match args.get(4) {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => list_names(v, name)?,
    };
    let t = txn(g, name)?;
    let changed = match name {
        "plexus.list.add" if then.is_some() || !sorted.is_empty() => {
            let sorted: Vec<&str> = sorted.iter().map(String::as_str).collect();
            t.list_add_then(of, key, value, then.unwrap_or_default(), &sorted)?
        }
        "plexus.list.add" => t.list_add(of, key, value)?,
        "plexus.list.remove" => t.list_remove(of, key, value)?,
        _ => match value {
            Value::List(values) => t.list_union(of, key, values)?,
            // Null: nothing to add (as an empty list).
            Value::Null => false,
            other => {
                return Err(QueryError::type_error(format!(
                    "argument `values` of {name} must be a list, not {}",
                    other.value_type()
                )))
            }
        },
    };
    Ok(vec![vec![Value::Bool(changed)]])
}

/// The list names of `plexus.list.add`'s `sorted`.
fn list_names(v: &Value, name: &str) -> Result<Vec<String>, QueryError> {
    let bad = || {
        QueryError::type_error(format!(
            "argument `sorted` of {name} must be a list of list names, not {}",
            v.value_type()
        ))
    };
    let Value::List(items) = v else {
        return Err(bad());
    };
    items
        .iter()
        .map(|i| match i {
            Value::String(s) => Ok(s.clone()),
            _ => Err(bad()),
        })
        .collect()
}

/// The (list, element) pairs of `plexus.list.add`'s `then` map, in its
/// key order; a null list adds nothing.
fn then_elements(
    m: &std::collections::BTreeMap<String, Value>,
    name: &str,
) -> Result<Vec<(String, Value)>, QueryError> {
    let mut out = Vec::new();
    for (list, values) in m {
        match values {
            Value::List(items) => out.extend(items.iter().map(|v| (list.clone(), v.clone()))),
            Value::Null => {}
            other => {
                return Err(QueryError::type_error(format!(
                    "argument `then` of {name} maps '{list}' to {}, not a list",
                    other.value_type()
                )))
            }
        }
    }
    Ok(out)
}

/// `apoc.merge.relationship(start, type, identProps, onCreateProps, end
/// [, onMatchProps]) YIELD rel`: the relationship of that type from start
/// to end whose properties include `identProps`, created with
/// `identProps + onCreateProps` when there is none, else updated with
/// `onMatchProps`.
fn merge_relationship(g: &mut Graph<'_>, args: &[Value]) -> Result<Vec<Vec<Value>>, QueryError> {
    const NAME: &str = "apoc.merge.relationship";
    let start = node_arg(&args[0], NAME, "startNode")?;
    let rel_type = match &args[1] {
        Value::String(s) if !s.is_empty() => s.as_str(),
        _ => {
            return Err(QueryError::Argument {
                code: "InvalidArgumentValue",
                message: format!("{NAME} needs a relationship type (a non-empty string)"),
            })
        }
    };
    let ident = props_arg(&args[2], NAME, "identProps")?;
    let on_create = props_arg(&args[3], NAME, "onCreateProps")?;
    let end = node_arg(&args[4], NAME, "endNode")?;
    let on_match = props_arg(&args[5], NAME, "onMatchProps")?;
    let t = txn(g, NAME)?;
    for nb in t.neighbors(start, Direction::Out, Some(rel_type))? {
        if nb.node != end {
            continue;
        }
        let mut all = true;
        for (k, v) in &ident {
            if t.edge_property(nb.edge, k)?.as_ref() != Some(v) {
                all = false;
                break;
            }
        }
        if all {
            for (k, v) in on_match {
                t.set_edge_property(nb.edge, &k, v)?;
            }
            return Ok(vec![vec![Value::Relationship(std::sync::Arc::new(
                rel_value(nb.edge, start, end),
            ))]]);
        }
    }
    let mut props = ident;
    props.extend(on_create);
    let edge = t.create_edge(None, start, end, rel_type, &props)?;
    Ok(vec![vec![Value::Relationship(std::sync::Arc::new(
        rel_value(edge, start, end),
    ))]])
}

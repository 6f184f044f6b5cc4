//! The Python classes of graph entities and of the temporal values Python's
//! `datetime` cannot hold exactly.

use crate::convert::{map_to_py, split_nanos};
use plexus::Value;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// A node of a query result: its id (the user id it was created or
/// imported with), labels and properties. Equal nodes have equal ids.
#[pyclass(frozen, module = "plexus", name = "Node")]
pub struct Node {
    /// The node's user id (what `elementId()` returns).
    #[pyo3(get)]
    id: String,
    /// Its labels.
    #[pyo3(get)]
    labels: Py<PyTuple>,
    /// Its properties.
    #[pyo3(get)]
    properties: Py<PyDict>,
}

impl Node {
    pub fn from_value(py: Python<'_>, n: &plexus::NodeValue) -> PyResult<Node> {
        Ok(Node {
            id: n.key.clone(),
            labels: PyTuple::new(py, &n.labels)?.unbind(),
            properties: map_to_py(py, &n.props)?.unbind(),
        })
    }
}

/// The properties of an entity by name: `node["name"]`, `node.get("x")`.
macro_rules! entity_methods {
    ($t:ty, { $($own:tt)* }) => {
        #[pymethods]
        impl $t {
            /// The property `key` (a KeyError when it is not set).
            fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
                self.properties
                    .bind(py)
                    .get_item(key)?
                    .ok_or_else(|| PyKeyError::new_err(key.to_string()))
            }

            /// The property `key`, or `default` when it is not set.
            #[pyo3(signature = (key, default=None))]
            fn get<'py>(
                &self,
                py: Python<'py>,
                key: &str,
                default: Option<Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, PyAny>> {
                Ok(match self.properties.bind(py).get_item(key)? {
                    Some(v) => v,
                    None => default.unwrap_or_else(|| py.None().into_bound(py)),
                })
            }

            fn __contains__(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
                self.properties.bind(py).contains(key)
            }

            fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
                other
                    .cast::<Self>()
                    .map(|o| o.get().id == self.id)
                    .unwrap_or(false)
            }

            fn __hash__(&self) -> u64 {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                self.id.hash(&mut h);
                h.finish()
            }

            $($own)*
        }
    };
}

entity_methods!(Node, {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Node(id={:?}, labels={}, properties={})",
            self.id,
            self.labels.bind(py).repr()?,
            self.properties.bind(py).repr()?
        ))
    }
});

/// A relationship of a query result: its id, type, the ids of its start
/// and end nodes, and its properties.
#[pyclass(frozen, module = "plexus", name = "Relationship")]
pub struct Relationship {
    /// The relationship's id.
    #[pyo3(get)]
    id: String,
    /// Its type.
    #[pyo3(get, name = "type")]
    rel_type: String,
    /// The id of its start node.
    #[pyo3(get)]
    start: String,
    /// The id of its end node.
    #[pyo3(get)]
    end: String,
    /// Its properties.
    #[pyo3(get)]
    properties: Py<PyDict>,
}

impl Relationship {
    pub fn from_value(py: Python<'_>, r: &plexus::RelValue) -> PyResult<Relationship> {
        Ok(Relationship {
            id: r.key.clone(),
            rel_type: r.rel_type.clone(),
            start: r.start_key.clone(),
            end: r.end_key.clone(),
            properties: map_to_py(py, &r.props)?.unbind(),
        })
    }
}

entity_methods!(Relationship, {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Relationship(id={:?}, type={:?}, start={:?}, end={:?}, properties={})",
            self.id,
            self.rel_type,
            self.start,
            self.end,
            self.properties.bind(py).repr()?
        ))
    }
});

/// A path: its nodes, and the relationships between them in walk order
/// (`len(path)` is the number of relationships).
#[pyclass(frozen, module = "plexus", name = "Path")]
pub struct Path {
    /// Its nodes, in walk order.
    #[pyo3(get)]
    nodes: Py<PyTuple>,
    /// Its relationships, in walk order.
    #[pyo3(get)]
    relationships: Py<PyTuple>,
}

impl Path {
    pub fn from_value(py: Python<'_>, p: &plexus::PathValue) -> PyResult<Path> {
        let nodes: Vec<Bound<'_, Node>> = p
            .nodes
            .iter()
            .map(|n| Bound::new(py, Node::from_value(py, n)?))
            .collect::<PyResult<_>>()?;
        let rels: Vec<Bound<'_, Relationship>> = p
            .rels
            .iter()
            .map(|r| Bound::new(py, Relationship::from_value(py, r)?))
            .collect::<PyResult<_>>()?;
        Ok(Path {
            nodes: PyTuple::new(py, nodes)?.unbind(),
            relationships: PyTuple::new(py, rels)?.unbind(),
        })
    }
}

#[pymethods]
impl Path {
    fn __len__(&self, py: Python<'_>) -> usize {
        self.relationships.bind(py).len()
    }

    /// The first node.
    #[getter]
    fn start<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.nodes.bind(py).get_item(0)
    }

    /// The last node.
    #[getter]
    fn end<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let nodes = self.nodes.bind(py);
        nodes.get_item(nodes.len().saturating_sub(1))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let ids: Vec<String> = self
            .nodes
            .bind(py)
            .iter()
            .map(|n| n.getattr("id").and_then(|i| i.extract::<String>()))
            .collect::<PyResult<_>>()?;
        Ok(format!("Path({})", ids.join(" → ")))
    }
}

/// A Cypher duration: months, days, seconds and nanoseconds kept apart (a
/// month has no fixed length). Query results use `datetime.timedelta`
/// where it is exact (no months, whole microseconds) and this otherwise;
/// both are accepted as parameters.
#[pyclass(frozen, module = "plexus", name = "Duration")]
pub struct Duration(pub plexus::Duration);

impl Duration {
    pub fn of(d: plexus::Duration) -> Duration {
        Duration(d)
    }
}

#[pymethods]
impl Duration {
    #[new]
    #[pyo3(signature = (months=0, days=0, seconds=0, nanoseconds=0))]
    fn new(months: i64, days: i64, seconds: i64, nanoseconds: i64) -> PyResult<Duration> {
        let (carry, nanos) = split_nanos(nanoseconds);
        let secs = seconds
            .checked_add(carry)
            .ok_or_else(|| PyValueError::new_err("the duration's seconds overflow"))?;
        Ok(Duration(plexus::Duration {
            months,
            days,
            secs,
            nanos,
        }))
    }

    /// Whole months (a month has no fixed length).
    #[getter]
    fn months(&self) -> i64 {
        self.0.months
    }

    /// Whole days.
    #[getter]
    fn days(&self) -> i64 {
        self.0.days
    }

    /// Seconds.
    #[getter]
    fn seconds(&self) -> i64 {
        self.0.secs
    }

    /// Nanoseconds beyond the seconds (0 to 999,999,999).
    #[getter]
    fn nanoseconds(&self) -> i32 {
        self.0.nanos
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Duration>()
            .map(|o| o.get().0 == self.0)
            .unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.0.hash(&mut h);
        h.finish()
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "Duration(months={}, days={}, seconds={}, nanoseconds={})",
            self.0.months, self.0.days, self.0.secs, self.0.nanos
        )
    }
}

/// A date or time that `datetime` cannot hold exactly (nanoseconds, or a
/// year outside 1–9999): its Cypher type and ISO text. Passed back as a
/// parameter it is the same value again.
#[pyclass(frozen, module = "plexus", name = "Temporal")]
pub struct Temporal {
    pub value: Value,
}

impl Temporal {
    pub fn of(v: &Value) -> Temporal {
        Temporal { value: v.clone() }
    }
}

#[pymethods]
impl Temporal {
    /// The Cypher type, as `valueType()` names it (`DATE`, `LOCAL TIME`,
    /// `ZONED TIME`, `LOCAL DATETIME`, `ZONED DATETIME`).
    #[getter]
    fn kind(&self) -> String {
        self.value.value_type().to_string()
    }

    fn __str__(&self) -> String {
        self.value.to_string().trim_matches('\'').to_string()
    }

    fn __repr__(&self) -> String {
        format!("Temporal({}, {:?})", self.kind(), self.__str__())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Temporal>()
            .map(|o| o.get().value == self.value)
            .unwrap_or(false)
    }
}

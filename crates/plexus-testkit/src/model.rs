//! A naive in-memory reference model of `plexus-storage`, with the same
//! documented semantics: upserts, constraints, typed and list indexes,
//! deferred index maintenance, detach deletes.

use plexus_common::{encode_key_value, Value, ValueType};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, PartialEq)]
pub struct MNode {
    pub labels: BTreeSet<String>,
    pub props: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MEdge {
    pub src: String,
    pub dst: String,
    pub rel_type: String,
    pub props: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MIndex {
    pub name: String,
    pub label: Option<String>,
    pub key: String,
    pub list: bool,
    pub typed: Option<ValueType>,
    pub unique: bool,
    pub stale: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Model {
    pub nodes: BTreeMap<String, MNode>,
    pub edges: BTreeMap<String, MEdge>,
    /// In creation order, as the storage keeps them.
    pub indexes: Vec<MIndex>,
    /// (name, label, key)
    pub not_null: Vec<(String, String, String)>,
}

/// The outcome the model expects: success, or a refusal.
pub type Outcome<T> = Result<T, &'static str>;

fn key_of(v: &Value) -> Vec<u8> {
    let mut k = Vec::new();
    encode_key_value(v, &mut k);
    k
}

impl MIndex {
    fn covers(&self, n: &MNode) -> bool {
        self.label.as_ref().is_none_or(|l| n.labels.contains(l))
    }

    /// Encoded values this index holds for a node, or a type error.
    pub fn entries(&self, n: &MNode) -> Outcome<BTreeSet<Vec<u8>>> {
        let mut out = BTreeSet::new();
        if !self.covers(n) {
            return Ok(out);
        }
        let Some(v) = n.props.get(&self.key).filter(|v| !v.is_null()) else {
            return Ok(out);
        };
        let typed_ok = |x: &Value| self.typed.is_none_or(|t| x.value_type() == t);
        if self.list {
            let Value::List(items) = v else {
                return Err("list index on a non-list value");
            };
            for i in items.iter().filter(|i| !i.is_null()) {
                if !typed_ok(i) {
                    return Err("wrong element type");
                }
                out.insert(key_of(i));
            }
        } else {
            if !typed_ok(v) {
                return Err("wrong value type");
            }
            out.insert(key_of(v));
        }
        Ok(out)
    }
}

impl Model {
    /// Checks a node state against constraints and index types, as the
    /// storage does on every write of a node.
    fn validate(&self, key: &str, n: &MNode, old: Option<&MNode>) -> Outcome<()> {
        for (_, label, k) in &self.not_null {
            if n.labels.contains(label) && !n.props.contains_key(k) {
                return Err("not-null violation");
            }
        }
        for idx in &self.indexes {
            let new_e = idx.entries(n)?;
            if idx.unique {
                let old_e = old
                    .map(|o| idx.entries(o).unwrap_or_default())
                    .unwrap_or_default();
                for e in new_e.difference(&old_e) {
                    let clash = self.nodes.iter().any(|(k2, n2)| {
                        k2 != key && idx.entries(n2).unwrap_or_default().contains(e)
                    });
                    if clash {
                        return Err("unique violation");
                    }
                }
            }
        }
        Ok(())
    }

    /// Marks non-unique indexes whose entries this change affects as
    /// stale, as a deferred-mode write does.
    fn defer_touch(&mut self, old: Option<&MNode>, new: Option<&MNode>, defer: bool) {
        if !defer {
            return;
        }
        for idx in self.indexes.iter_mut().filter(|i| !i.unique) {
            let o = old
                .map(|n| idx.entries(n).unwrap_or_default())
                .unwrap_or_default();
            let n = new
                .map(|n| idx.entries(n).unwrap_or_default())
                .unwrap_or_default();
            if o != n {
                idx.stale = true;
            }
        }
    }

    fn write_node(&mut self, key: &str, new: MNode, defer: bool) -> Outcome<()> {
        let old = self.nodes.get(key).cloned();
        self.validate(key, &new, old.as_ref())?;
        self.defer_touch(old.as_ref(), Some(&new), defer);
        self.nodes.insert(key.to_string(), new);
        Ok(())
    }

    pub fn create_node(
        &mut self,
        key: &str,
        labels: &[&str],
        props: &BTreeMap<String, Value>,
        defer: bool,
    ) -> Outcome<()> {
        if self.nodes.contains_key(key) {
            return Err("node exists");
        }
        let n = MNode {
            labels: labels.iter().map(|s| s.to_string()).collect(),
            props: props
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        self.write_node(key, n, defer)
    }

    pub fn upsert_node(
        &mut self,
        key: &str,
        labels: &[&str],
        props: &BTreeMap<String, Value>,
        merge: bool,
        defer: bool,
    ) -> Outcome<()> {
        let Some(old) = self.nodes.get(key).cloned() else {
            return self.create_node(key, labels, props, defer);
        };
        let mut n = old.clone();
        if merge {
            n.labels.extend(labels.iter().map(|s| s.to_string()));
            for (k, v) in props {
                if v.is_null() {
                    n.props.remove(k);
                } else {
                    n.props.insert(k.clone(), v.clone());
                }
            }
        } else {
            n.labels = labels.iter().map(|s| s.to_string()).collect();
            n.props = props
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
        }
        self.write_node(key, n, defer)
    }

    pub fn set_prop(&mut self, key: &str, prop: &str, v: &Value, defer: bool) -> Outcome<()> {
        let mut n = self.nodes.get(key).cloned().ok_or("no node")?;
        if v.is_null() {
            n.props.remove(prop);
        } else {
            n.props.insert(prop.to_string(), v.clone());
        }
        self.write_node(key, n, defer)
    }

    pub fn set_label(&mut self, key: &str, label: &str, add: bool, defer: bool) -> Outcome<()> {
        let mut n = self.nodes.get(key).cloned().ok_or("no node")?;
        if add {
            n.labels.insert(label.to_string());
        } else {
            n.labels.remove(label);
        }
        self.write_node(key, n, defer)
    }

    pub fn delete_node(&mut self, key: &str, detach: bool, defer: bool) -> Outcome<bool> {
        let Some(old) = self.nodes.get(key).cloned() else {
            return Ok(false);
        };
        let touching: Vec<String> = self
            .edges
            .iter()
            .filter(|(_, e)| e.src == key || e.dst == key)
            .map(|(k, _)| k.clone())
            .collect();
        if !touching.is_empty() && !detach {
            return Err("node has edges");
        }
        for e in touching {
            self.edges.remove(&e);
        }
        self.defer_touch(Some(&old), None, defer);
        self.nodes.remove(key);
        Ok(true)
    }

    pub fn create_edge(
        &mut self,
        key: &str,
        src: &str,
        dst: &str,
        t: &str,
        props: &BTreeMap<String, Value>,
    ) -> Outcome<()> {
        if self.edges.contains_key(key) {
            return Err("edge exists");
        }
        if !self.nodes.contains_key(src) || !self.nodes.contains_key(dst) {
            return Err("missing endpoint");
        }
        let props = props
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        self.edges.insert(
            key.into(),
            MEdge {
                src: src.into(),
                dst: dst.into(),
                rel_type: t.into(),
                props,
            },
        );
        Ok(())
    }

    pub fn delete_edge(&mut self, key: &str) -> bool {
        self.edges.remove(key).is_some()
    }

    fn name_taken(&self, name: &str) -> bool {
        self.indexes.iter().any(|i| i.name == name) || self.not_null.iter().any(|c| c.0 == name)
    }

    pub fn create_index(&mut self, idx: MIndex) -> Outcome<()> {
        if self.name_taken(&idx.name) {
            return Err("name taken");
        }
        if self.indexes.iter().any(|i| {
            i.label == idx.label && i.key == idx.key && i.list == idx.list && i.unique == idx.unique
        }) {
            return Err("same index exists");
        }
        let mut seen = BTreeSet::new();
        for n in self.nodes.values() {
            for e in idx.entries(n)? {
                if idx.unique && !seen.insert(e) {
                    return Err("unique violation");
                }
            }
        }
        self.indexes.push(idx);
        Ok(())
    }

    pub fn create_not_null(&mut self, name: &str, label: &str, key: &str) -> Outcome<()> {
        if self.name_taken(name) {
            return Err("name taken");
        }
        if self
            .nodes
            .values()
            .any(|n| n.labels.contains(label) && !n.props.contains_key(key))
        {
            return Err("not-null violation");
        }
        self.not_null.push((name.into(), label.into(), key.into()));
        Ok(())
    }

    pub fn drop_index(&mut self, name: &str) -> Outcome<()> {
        let i = self
            .indexes
            .iter()
            .position(|i| i.name == name && !i.unique)
            .ok_or("no such index")?;
        self.indexes.remove(i);
        Ok(())
    }

    pub fn drop_constraint(&mut self, name: &str) -> Outcome<()> {
        if let Some(i) = self.indexes.iter().position(|i| i.name == name && i.unique) {
            self.indexes.remove(i);
            return Ok(());
        }
        let i = self
            .not_null
            .iter()
            .position(|c| c.0 == name)
            .ok_or("no such constraint")?;
        self.not_null.remove(i);
        Ok(())
    }

    pub fn rebuild(&mut self) {
        self.indexes.iter_mut().for_each(|i| i.stale = false);
    }

    /// The index the storage uses for (label, key, kind): exact label
    /// first, else an index over every node; `Err` when none or stale.
    pub fn choose(&self, label: &str, key: &str, list: bool) -> Outcome<&MIndex> {
        let cands = || {
            self.indexes
                .iter()
                .filter(|i| i.key == key && i.list == list)
        };
        let i = cands()
            .find(|i| i.label.as_deref() == Some(label))
            .or_else(|| cands().find(|i| i.label.is_none()))
            .ok_or("no index")?;
        if i.stale {
            return Err("stale");
        }
        Ok(i)
    }

    /// Nodes an equality lookup must return (numbers compare as Cypher
    /// does, so 1 finds 1.0), by user id.
    pub fn lookup(&self, label: &str, key: &str, v: &Value, list: bool) -> Outcome<Vec<String>> {
        self.choose(label, key, list)?;
        let probes: BTreeSet<Vec<u8>> = twins(v).iter().map(key_of).collect();
        Ok(self
            .nodes
            .iter()
            .filter(|(_, n)| n.labels.contains(label))
            .filter(|(_, n)| match n.props.get(key) {
                Some(Value::List(items)) if list => {
                    items.iter().any(|i| probes.contains(&key_of(i)))
                }
                Some(x) if !list => probes.contains(&key_of(x)),
                _ => false,
            })
            .map(|(k, _)| k.clone())
            .collect())
    }

    /// Nodes with a numeric value in `[lo, hi]`, by user id.
    pub fn range(&self, label: &str, key: &str, lo: i64, hi: i64) -> Outcome<Vec<String>> {
        self.choose(label, key, false)?;
        Ok(self
            .nodes
            .iter()
            .filter(|(_, n)| n.labels.contains(label))
            .filter(|(_, n)| match n.props.get(key) {
                Some(Value::Int(i)) => (lo..=hi).contains(i),
                Some(Value::Float(f)) => *f >= lo as f64 && *f <= hi as f64,
                _ => false,
            })
            .map(|(k, _)| k.clone())
            .collect())
    }

    pub fn degree(&self, key: &str, out: bool) -> u64 {
        self.edges
            .values()
            .filter(|e| if out { e.src == key } else { e.dst == key })
            .count() as u64
    }
}

fn twins(v: &Value) -> Vec<Value> {
    match v {
        Value::Int(i) => vec![v.clone(), Value::Float(*i as f64)],
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9e15 => {
            vec![v.clone(), Value::Int(*f as i64)]
        }
        _ => vec![v.clone()],
    }
}

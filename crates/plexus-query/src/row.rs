//! The row of variables a query's clauses pass along.
//!
//! A row holds a handful of variables, read many times per match. A
//! `BTreeMap<String, Value>` spent one ~700-byte node per row, a heap
//! string per variable at every clone, and a cache miss at every lookup
//! (LDBC IC4 in a profile: 12% of the query on loading a row's tree node).
//! Here a row is one vector of entries sorted by name, whose names are
//! shared (`Rc<str>`): a clone copies the entries and counts references,
//! a lookup scans a few adjacent entries, and iteration keeps the map's
//! order, so everything that walks a row (`RETURN *`, distinct keys,
//! sizes) sees what it saw before.

use plexus_common::Value;
use std::rc::Rc;

/// A variable's name in a row; cloned by reference count.
pub type Name = Rc<str>;

/// Names in `str` order, compared byte by byte inline: names are short,
/// and a call to `memcmp` per comparison was 8% of LDBC IC9 in a profile
/// (IC3's `country`, `countryX` and `countryY` share their first bytes).
fn order(k: &str, name: &str) -> std::cmp::Ordering {
    let (a, b) = (k.as_bytes(), name.as_bytes());
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// What a row takes as a variable's name: anything that reads as one,
/// turned into a shared name only when the row keeps it.
pub trait IntoName {
    fn name(&self) -> &str;
    fn into_name(self) -> Name;
}

impl IntoName for Name {
    fn name(&self) -> &str {
        self
    }
    fn into_name(self) -> Name {
        self
    }
}

impl IntoName for &Name {
    fn name(&self) -> &str {
        self
    }
    fn into_name(self) -> Name {
        self.clone()
    }
}

impl IntoName for String {
    fn name(&self) -> &str {
        self
    }
    fn into_name(self) -> Name {
        self.into()
    }
}

impl IntoName for &String {
    fn name(&self) -> &str {
        self
    }
    fn into_name(self) -> Name {
        self.as_str().into()
    }
}

impl IntoName for &str {
    fn name(&self) -> &str {
        self
    }
    fn into_name(self) -> Name {
        self.into()
    }
}

/// Names shared once for a run of inserts: a matcher binds and unbinds the
/// same few variables for every match, and each bind of a `&str` would
/// allocate its name anew.
#[derive(Default)]
pub(crate) struct Names(std::cell::RefCell<Vec<Name>>);

impl Names {
    /// `name` as a shared name, made the first time it is asked for.
    pub(crate) fn share(&self, name: &str) -> Name {
        let mut names = self.0.borrow_mut();
        if let Some(n) = names.iter().find(|n| &***n == name) {
            return n.clone();
        }
        let n = Name::from(name);
        names.push(n.clone());
        n
    }

    /// `name` as a row takes it: shared from here when the row keeps it.
    pub(crate) fn of<'a>(&'a self, name: &'a str) -> Shared<'a> {
        Shared { names: self, name }
    }
}

/// A name a row shares through [`Names`] if it keeps it.
pub(crate) struct Shared<'a> {
    names: &'a Names,
    name: &'a str,
}

impl IntoName for Shared<'_> {
    fn name(&self) -> &str {
        self.name
    }
    fn into_name(self) -> Name {
        self.names.share(self.name)
    }
}

/// Variables in scope, sorted by name.
#[derive(Clone, Default, PartialEq)]
pub struct Row {
    entries: Vec<(Name, Value)>,
}

impl std::fmt::Debug for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Row {
    pub fn new() -> Row {
        Row::default()
    }

    /// A row with room for `n` variables: a projection knows how many it
    /// binds, and growing the row one insert at a time reallocated it
    /// (3% of LDBC IC4's instructions in a profile).
    pub fn with_capacity(n: usize) -> Row {
        Row {
            entries: Vec::with_capacity(n),
        }
    }

    /// A copy of the row with room for `more` variables besides (a clone
    /// has no spare room, so the first insert after it reallocated).
    pub fn clone_with_room(&self, more: usize) -> Row {
        let mut entries = Vec::with_capacity(self.entries.len() + more);
        entries.extend(self.entries.iter().cloned());
        Row { entries }
    }

    /// Where `name` is, or where it would go.
    fn find(&self, name: &str) -> Result<usize, usize> {
        // Short rows are scanned: most names differ in length or first
        // byte, which is cheaper than a binary search's full comparisons.
        if self.entries.len() <= 8 {
            for (i, (k, _)) in self.entries.iter().enumerate() {
                match order(k, name) {
                    std::cmp::Ordering::Less => {}
                    std::cmp::Ordering::Equal => return Ok(i),
                    std::cmp::Ordering::Greater => return Err(i),
                }
            }
            return Err(self.entries.len());
        }
        self.entries.binary_search_by(|(k, _)| order(k, name))
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.find(name).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        match self.find(name) {
            Ok(i) => Some(&mut self.entries[i].1),
            Err(_) => None,
        }
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.find(name).is_ok()
    }

    /// Binds `name` to `v`, returning what it was bound to; the name is
    /// turned into a shared one only when it is new to the row.
    pub fn insert<K>(&mut self, name: K, v: Value) -> Option<Value>
    where
        K: IntoName,
    {
        match self.find(name.name()) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, v)),
            Err(i) => {
                self.entries.insert(i, (name.into_name(), v));
                None
            }
        }
    }

    /// Binds `name` to `v` unless the row binds it already; then hands
    /// back the binding and `v` (one search for the matcher's bind, which
    /// compares them).
    pub fn insert_absent<K>(&mut self, name: K, v: Value) -> Option<(&Value, Value)>
    where
        K: IntoName,
    {
        match self.find(name.name()) {
            Ok(i) => Some((&self.entries[i].1, v)),
            Err(i) => {
                self.entries.insert(i, (name.into_name(), v));
                None
            }
        }
    }

    pub fn remove(&mut self, name: &str) -> Option<Value> {
        match self.find(name) {
            Ok(i) => Some(self.entries.remove(i).1),
            Err(_) => None,
        }
    }

    /// Names and values, in name order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Name, &Value)> + ExactSizeIterator {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Name> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }
}

impl<K: IntoName> Extend<(K, Value)> for Row {
    fn extend<I: IntoIterator<Item = (K, Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<K: IntoName> FromIterator<(K, Value)> for Row {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Row {
        let mut row = Row::new();
        row.extend(iter);
        row
    }
}

impl<K: IntoName, const N: usize> From<[(K, Value); N]> for Row {
    fn from(entries: [(K, Value); N]) -> Row {
        entries.into_iter().collect()
    }
}

/// `row["x"]` in tests, as the map allowed.
#[cfg(test)]
impl std::ops::Index<&str> for Row {
    type Output = Value;
    fn index(&self, name: &str) -> &Value {
        match self.get(name) {
            Some(v) => v,
            None => panic!("no variable {name} in {self:?}"),
        }
    }
}

impl IntoIterator for Row {
    type Item = (Name, Value);
    type IntoIter = std::vec::IntoIter<(Name, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'r> IntoIterator for &'r Row {
    type Item = (&'r Name, &'r Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'r, (Name, Value)>,
        fn(&'r (Name, Value)) -> (&'r Name, &'r Value),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(String, i64),
        Remove(String),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few short names, so inserts replace and removes hit; more than
        // eight of them, so rows cross from scanning to binary search.
        let name = "[a-l]{1,2}";
        prop_oneof![
            (name, any::<i64>()).prop_map(|(k, v)| Op::Insert(k, v)),
            name.prop_map(Op::Remove),
        ]
    }

    /// A name is made once and shared by every row that keeps it; a row
    /// that finds the name bound already takes nothing.
    #[test]
    fn names_are_made_once() {
        let names = Names::default();
        let (a, b) = (names.share("friend"), names.share("forum"));
        assert!(Rc::ptr_eq(&a, &names.share("friend")));
        assert!(!Rc::ptr_eq(&a, &b));
        let mut row = Row::new();
        assert!(row
            .insert_absent(names.of("friend"), Value::Int(1))
            .is_none());
        assert!(row
            .insert_absent(names.of("friend"), Value::Int(2))
            .is_some());
        let kept = row.keys().next().cloned();
        assert!(kept.is_some_and(|k| Rc::ptr_eq(&k, &a)));
    }

    proptest! {
        /// A row answers as the map it replaced: every lookup, insert,
        /// removal and the order of iteration.
        #[test]
        fn a_row_behaves_as_a_sorted_map(ops in proptest::collection::vec(op(), 0..200)) {
            let mut row = Row::new();
            let mut map = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        prop_assert_eq!(row.insert(k.clone(), Value::Int(v)), map.insert(k, Value::Int(v)));
                    }
                    Op::Remove(k) => prop_assert_eq!(row.remove(&k), map.remove(&k)),
                }
                prop_assert_eq!(row.iter().len(), map.len());
                for k in ["a", "b", "ab", "l", "ll", "z", ""] {
                    prop_assert_eq!(row.get(k), map.get(k));
                    prop_assert_eq!(row.contains_key(k), map.contains_key(k));
                }
                let seen: Vec<(String, Value)> =
                    row.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
                let want: Vec<(String, Value)> =
                    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                prop_assert_eq!(seen, want);
            }
        }
    }
}

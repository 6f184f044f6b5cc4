//! Positive Horn rules over claims, and their catalog.
//!
//! A rule derives a claim `(subject, predicate, object)` from claims that
//! match its body: `?x WORKS_FOR ?c, ?c MEMBER_OF ?g ⇒ ?x AFFILIATED_WITH
//! ?g`. Terms starting with `?` are variables; predicates are constants;
//! every head variable appears in the body (a *safe* rule, so every
//! conclusion is ground).
//!
//! The catalog lives in the valid-time keyspace: `R | rule id` → the id
//! of its latest version, `Q | version id` → that version. Creating a
//! rule again makes a new version; with the graph's history on, the
//! catalog as of any system time is there too.

use crate::error::{KnowledgeError, Result};
use plexus_common::{push_escaped, write_bytes, write_varint, Reader};
use plexus_storage::{GraphRead, Storage, ValidPart::Versioned, WriteTxn};
use std::ops::Bound;

/// The most atoms a rule body may have: the join is a nested search one
/// level per atom.
pub const MAX_BODY: usize = 16;

/// A subject or object of an atom.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Term {
    /// `?name`.
    Var(String),
    Const(String),
}

impl Term {
    fn parse(s: &str, what: &str) -> Result<Term> {
        match s.strip_prefix('?') {
            _ if s.is_empty() => Err(KnowledgeError::InvalidRule(format!("an empty {what}"))),
            Some("") => Err(KnowledgeError::InvalidRule(format!(
                "the {what} '?' is a variable without a name"
            ))),
            Some(v) => Ok(Term::Var(v.to_string())),
            None => Ok(Term::Const(s.to_string())),
        }
    }

    fn text(&self) -> String {
        match self {
            Term::Var(v) => format!("?{v}"),
            Term::Const(c) => c.clone(),
        }
    }
}

/// One `(subject, predicate, object)` pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Atom {
    pub subject: Term,
    pub predicate: String,
    pub object: Term,
}

impl Atom {
    /// `("?x", "WORKS_FOR", "?c")`: `?` marks a variable.
    pub fn parse(subject: &str, predicate: &str, object: &str) -> Result<Atom> {
        if predicate.is_empty() || predicate.starts_with('?') {
            return Err(KnowledgeError::InvalidRule(format!(
                "the predicate '{predicate}' must be a constant, not empty or a variable"
            )));
        }
        Ok(Atom {
            subject: Term::parse(subject, "subject")?,
            predicate: predicate.to_string(),
            object: Term::parse(object, "object")?,
        })
    }

    /// The atom as three strings, variables with their `?`.
    pub fn texts(&self) -> [String; 3] {
        [
            self.subject.text(),
            self.predicate.clone(),
            self.object.text(),
        ]
    }

    fn vars(&self) -> impl Iterator<Item = &str> {
        [&self.subject, &self.object]
            .into_iter()
            .filter_map(|t| match t {
                Term::Var(v) => Some(v.as_str()),
                Term::Const(_) => None,
            })
    }
}

/// One immutable version of a named rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub id: String,
    pub version_id: String,
    pub when: Vec<Atom>,
    pub then: Atom,
}

impl Rule {
    /// Checks a definition: a body of 1 to [`MAX_BODY`] atoms, and every
    /// head variable bound by it.
    pub fn new(id: &str, version_id: &str, when: Vec<Atom>, then: Atom) -> Result<Rule> {
        if id.is_empty() || version_id.is_empty() {
            return Err(KnowledgeError::InvalidRule(
                "a rule needs a non-empty id (and version id)".into(),
            ));
        }
        if when.is_empty() || when.len() > MAX_BODY {
            return Err(KnowledgeError::InvalidRule(format!(
                "rule '{id}' has {} body atoms; a rule has 1 to {MAX_BODY}",
                when.len()
            )));
        }
        let unbound: Vec<&str> = then
            .vars()
            .filter(|v| !when.iter().any(|a| a.vars().any(|b| b == *v)))
            .collect();
        if !unbound.is_empty() {
            return Err(KnowledgeError::InvalidRule(format!(
                "rule '{id}': head variable ?{} is not bound by the body",
                unbound.join(", ?")
            )));
        }
        Ok(Rule {
            id: id.to_string(),
            version_id: version_id.to_string(),
            when,
            then,
        })
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_bytes(&mut out, self.id.as_bytes());
        write_varint(&mut out, self.when.len() as u64);
        for a in self.when.iter().chain([&self.then]) {
            for t in a.texts() {
                write_bytes(&mut out, t.as_bytes());
            }
        }
        out
    }

    fn decode(version_id: &str, bytes: &[u8]) -> Result<Rule> {
        let mut r = Reader::new(bytes);
        let id = r.string()?;
        let n = r.len()?;
        let mut atoms = Vec::with_capacity(n.min(MAX_BODY) + 1);
        for _ in 0..=n {
            let (s, p, o) = (r.string()?, r.string()?, r.string()?);
            atoms.push(Atom::parse(&s, &p, &o)?);
        }
        let then = atoms
            .pop()
            .ok_or_else(|| KnowledgeError::InvalidRule("no head".into()))?;
        Rule::new(&id, version_id, atoms, then)
    }
}

// Rules live in the versioned part of the valid-time keyspace: a rule's
// latest version changes, and a read as of a system time must see the
// rules as they were then.
const LATEST: u8 = b'R';
const VERSION: u8 = b'Q';

fn latest_key(id: &str) -> Vec<u8> {
    let mut k = vec![LATEST];
    push_escaped(&mut k, id.as_bytes());
    k
}

fn version_key(version_id: &str) -> Vec<u8> {
    [&[VERSION], version_id.as_bytes()].concat()
}

/// Writes a new version of rule `id` in `txn` (a UUID as its version id
/// unless `version_id` gives one) and returns it.
pub fn define_rule(
    txn: &mut WriteTxn,
    id: &str,
    when: Vec<Atom>,
    then: Atom,
    version_id: Option<&str>,
) -> Result<Rule> {
    let vid = version_id.map_or_else(|| uuid::Uuid::now_v7().to_string(), str::to_string);
    let rule = Rule::new(id, &vid, when, then)?;
    let vk = version_key(&vid);
    if txn.valid_time_get(Versioned, &vk)?.is_some() {
        return Err(KnowledgeError::RuleVersionExists(vid));
    }
    let lk = latest_key(id);
    txn.valid_time_write(Versioned, &vk, &vk, Some(rule.encode()))?;
    txn.valid_time_write(Versioned, &lk, &lk, Some(vid.into_bytes()))?;
    Ok(rule)
}

/// [`define_rule`] in a transaction of its own on `graph`.
pub fn create_rule(
    db: &Storage,
    graph: &str,
    id: &str,
    when: Vec<Atom>,
    then: Atom,
    version_id: Option<&str>,
) -> Result<Rule> {
    let mut txn = db.write(graph)?;
    let rule = define_rule(&mut txn, id, when, then, version_id)?;
    txn.commit()?;
    Ok(rule)
}

/// The rule version with id `version_id`.
pub fn rule_version(r: &(impl GraphRead + ?Sized), version_id: &str) -> Result<Option<Rule>> {
    match r.valid_time_get(Versioned, &version_key(version_id))? {
        Some(b) => Ok(Some(Rule::decode(version_id, &b)?)),
        None => Ok(None),
    }
}

/// The latest version of every rule, by rule id.
pub fn rules(r: &(impl GraphRead + ?Sized)) -> Result<Vec<Rule>> {
    let mut vids = Vec::new();
    r.valid_time_scan(
        Versioned,
        Bound::Included(&[LATEST]),
        Bound::Excluded(&[LATEST + 1]),
        false,
        &mut |_, v| {
            vids.push(String::from_utf8_lossy(v).into_owned());
            Ok(true)
        },
    )?;
    let mut out = Vec::with_capacity(vids.len());
    for vid in vids {
        if let Some(rule) = rule_version(r, &vid)? {
            out.push(rule);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atom(s: &str, p: &str, o: &str) -> Atom {
        Atom::parse(s, p, o).unwrap()
    }

    #[test]
    fn rules_must_be_safe_and_bounded() {
        let body = vec![atom("?p", "WORKS_FOR", "?c")];
        let e = Rule::new("r", "v", body.clone(), atom("?p", "IN", "?g")).unwrap_err();
        assert!(e.to_string().contains("?g is not bound"), "{e}");
        assert!(Rule::new("r", "v", vec![], atom("a", "IN", "b")).is_err());
        let long = vec![atom("?p", "P", "?c"); MAX_BODY + 1];
        assert!(Rule::new("r", "v", long, atom("?p", "IN", "?c")).is_err());
        assert!(Atom::parse("?x", "?p", "?y").is_err());
        assert!(Atom::parse("?", "P", "?y")
            .unwrap_err()
            .to_string()
            .contains("without a name"));
        let ok = Rule::new("r", "v", body, atom("?p", "IN", "acme")).unwrap();
        assert_eq!(Rule::decode("v", &ok.encode()).unwrap(), ok);
    }
}

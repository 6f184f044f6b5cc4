//! Explanations: the derivation graph behind a claim that holds at a
//! valid instant — its version, the rule versions that derived it and the
//! premise versions each used, down through derived premises, bounded in
//! depth and size.

use crate::error::Result;
use crate::rules::{rule_version, Rule};
use crate::run::justifications;
use plexus_storage::GraphRead;
use plexus_temporal::{as_of, version, Kind, State, Version};
use std::collections::{HashSet, VecDeque};

/// A node of an explanation.
#[derive(Debug, Clone, PartialEq)]
pub enum ExplainNode {
    Claim(Version),
    Rule(Rule),
}

impl ExplainNode {
    /// The version id (claim or rule) that names the node.
    pub fn id(&self) -> &str {
        match self {
            ExplainNode::Claim(v) => &v.id,
            ExplainNode::Rule(r) => &r.version_id,
        }
    }
}

/// How two nodes relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// A conclusion → the rule version of its `justification`-th derivation.
    DerivedBy,
    /// A conclusion → the `ordinal`-th premise of that derivation.
    Premise { ordinal: usize },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExplainEdge {
    pub from: String,
    pub to: String,
    pub justification: usize,
    pub relation: Relation,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub claim_id: String,
    pub root: String,
    pub nodes: Vec<ExplainNode>,
    pub edges: Vec<ExplainEdge>,
    /// Whether a bound stopped the walk before the whole graph.
    pub truncated: bool,
}

/// The explanation of claim `claim_id` as of valid time `at` (`None` when
/// no version of it holds then), `max_depth` derivation steps deep and at
/// most `max_nodes` nodes.
pub fn explain(
    r: &(impl GraphRead + ?Sized),
    claim_id: &str,
    at: i64,
    max_depth: usize,
    max_nodes: usize,
) -> Result<Option<Explanation>> {
    let Some(root) = as_of(r, Kind::Claim, claim_id, at)? else {
        return Ok(None);
    };
    let mut ex = Explanation {
        claim_id: claim_id.to_string(),
        root: root.id.clone(),
        nodes: Vec::new(),
        edges: Vec::new(),
        truncated: false,
    };
    let mut seen: HashSet<String> = HashSet::from([root.id.clone()]);
    let mut queue = VecDeque::from([(root, 0usize)]);
    while let Some((v, depth)) = queue.pop_front() {
        if ex.nodes.len() >= max_nodes {
            ex.truncated = true;
            break;
        }
        let js = match &v.state {
            State::Claim(c) => justifications(c),
            _ => Vec::new(),
        };
        let from = v.id.clone();
        ex.nodes.push(ExplainNode::Claim(v));
        if js.is_empty() {
            continue;
        }
        if depth >= max_depth {
            ex.truncated = true;
            continue;
        }
        for (n, (rule, premises)) in js.into_iter().enumerate() {
            if seen.insert(rule.clone()) {
                if let Some(rv) = rule_version(r, &rule)? {
                    ex.nodes.push(ExplainNode::Rule(rv));
                }
            }
            ex.edges.push(ExplainEdge {
                from: from.clone(),
                to: rule,
                justification: n,
                relation: Relation::DerivedBy,
            });
            for (ordinal, p) in premises.into_iter().enumerate() {
                if seen.insert(p.clone()) {
                    if let Some(pv) = version(r, &p)? {
                        queue.push_back((pv, depth + 1));
                    }
                }
                ex.edges.push(ExplainEdge {
                    from: from.clone(),
                    to: p,
                    justification: n,
                    relation: Relation::Premise { ordinal },
                });
            }
        }
    }
    Ok(Some(ex))
}

//! Label members in memory: whether a node has a label without reading it.
//!
//! A pattern checks the label of every node it reaches (`(f)<-[:HAS_CREATOR]-
//! (m:Post)` asks of each message whether it is a post), and each check is
//! a search of the node records' tree for the record. A [`Members`] is the
//! label's member set as a bitmap over node ids, built from the label's
//! entries (`g|label|node`, packed in blocks of 64, so a build reads a
//! member for a fraction of one record search); a check is then one bit.
//!
//! **When.** A build costs about one record search per 32 members, so
//! members are built only once the label has been checked about that many
//! times at one node version: every [`FIRST_LOOK`] checks a transaction
//! looks for members another one built, else adds its checks to the
//! process's count for the label (`ColumnCache::demand`) and, once that
//! reaches a 32nd of the label's count, builds. A query checking a few
//! nodes never pays for a build; one repeated many times soon stops
//! reading records for its labels.
//!
//! **Never stale**, as property columns (`columns.rs`): members carry the
//! graph's node version (a label change writes the node record, so bumps
//! it), are used only at that version, and share the columns' memory
//! budget and cache. A transaction that changed nodes itself, or reads as
//! of an earlier instant, reads the records; so does every transaction on
//! a store on a server, which reads a walk's records ahead in one round
//! trip instead.

use crate::columns::{Column, Demand, Of};
use crate::error::Result;
use crate::ids::NodeId;
use crate::keys::{
    node_version_key, stat_key, token_prefix, LABELS, STATS, STAT_LABEL, STAT_NODES,
};
use crate::view::TxnCore;
use plexus_common::{read_u64, Value};
use plexus_kv::KeyRange;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Checks of one label a transaction makes between looks for members.
pub(crate) const FIRST_LOOK: u32 = 64;
/// Members a build reads for the cost of one record search (an estimate).
const MEMBERS_PER_SEARCH: u64 = 32;
/// Node records a column's build reads for the cost of one record search:
/// a build is one pass in key order, about 1.4 times a bare pass.
const RECORDS_PER_SEARCH: u64 = 8;

/// The members of one label of one graph, at one node version.
pub(crate) struct Members {
    pub version: i64,
    /// The id bit 0 stands for.
    base: u64,
    bits: Vec<u64>,
}

impl Members {
    /// A bitmap over `ids` (ascending), or `None` when they are so sparse
    /// that it would hold more than 64 bytes a member.
    fn new(version: i64, ids: &[u64]) -> Option<Members> {
        let (Some(&base), Some(&last)) = (ids.first(), ids.last()) else {
            return Some(Members {
                version,
                base: 0,
                bits: Vec::new(),
            });
        };
        let words = usize::try_from((last - base) / 64 + 1).ok()?;
        if words > ids.len().saturating_mul(8).saturating_add(1024) {
            return None;
        }
        let mut bits = vec![0u64; words];
        for id in ids {
            let i = id - base;
            bits[(i / 64) as usize] |= 1 << (i % 64);
        }
        Some(Members {
            version,
            base,
            bits,
        })
    }

    pub fn contains(&self, n: NodeId) -> bool {
        let Some(i) = n.0.checked_sub(self.base) else {
            return false;
        };
        usize::try_from(i / 64)
            .ok()
            .and_then(|w| self.bits.get(w))
            .is_some_and(|word| word >> (i % 64) & 1 == 1)
    }

    pub fn bytes(&self) -> usize {
        self.bits.len() * 8 + 64
    }
}

/// How one transaction has used a label's members or a property's column.
struct Use<T> {
    checks: u32,
    held: Option<Arc<T>>,
    /// Checks (of the whole process) after which a build pays.
    build_at: Option<u64>,
    /// Too sparse, or past the budget: read the records.
    refused: bool,
}

impl<T> Default for Use<T> {
    fn default() -> Self {
        Use {
            checks: 0,
            held: None,
            build_at: None,
            refused: false,
        }
    }
}

/// The labels one transaction has checked and the properties it has read
/// node by node (`TxnCore::uses`).
#[derive(Default)]
pub(crate) struct Uses {
    labels: FxHashMap<u32, Use<Members>>,
    props: FxHashMap<u32, Use<Column>>,
    /// The graph's node version the snapshot sees, read once.
    version: Option<i64>,
}

/// Builds the entry for a key at a version (`None`: refused).
type Build<T> = fn(&TxnCore, u32, i64) -> Result<Option<Arc<T>>>;

/// How a kind of cache entry is looked up, paid for and built.
struct Policy<T> {
    of: Of,
    /// The key of the count a build's cost is proportional to.
    count: fn(&TxnCore, u32) -> Vec<u8>,
    /// Of that count, how much one record search is worth.
    per_search: u64,
    cached: fn(&TxnCore, u32, i64) -> Option<Arc<T>>,
    build: Build<T>,
}

/// Whether node `n` has label `l`, from the label's members when they are
/// held or worth building now; `None` when the caller should read.
pub(crate) fn has_label(c: &TxnCore, n: NodeId, l: u32) -> Result<Option<bool>> {
    let policy = Policy {
        of: Of::Label(l),
        count: |c, l| stat_key(c.g, STAT_LABEL, &l.to_be_bytes()),
        per_search: MEMBERS_PER_SEARCH,
        cached: |c, l, v| c.shared.columns.members(c.g.0, l, v),
        build: |c, l, v| {
            let m = build(c, l, v)?;
            if let Some(m) = &m {
                c.shared.columns.insert_members(c.g.0, l, m.clone());
            }
            Ok(m)
        },
    };
    Ok(served(c, |u| &mut u.labels, l, &policy)?.map(|m| m.contains(n)))
}

/// Property `key` of node `n`, from the property's column when it is held
/// or worth building now (`columns.rs`); `None` when the caller should
/// read the record.
pub(crate) fn node_property(c: &TxnCore, n: NodeId, key: u32) -> Result<Option<Option<Value>>> {
    Ok(
        served(c, |u| &mut u.props, key, &property_policy(key))?
            .map(|col| col.value_of(n).cloned()),
    )
}

/// How a property's column is held and built.
fn property_policy(key: u32) -> Policy<Column> {
    Policy {
        of: Of::Property(key),
        count: |c, _| stat_key(c.g, STAT_NODES, &[]),
        per_search: RECORDS_PER_SEARCH,
        cached: |c, k, v| c.shared.columns.get(c.g.0, k, v),
        build: |c, k, _| crate::columns::column(c, k),
    }
}

/// [`node_property`], lending the value to `f`; false (and `f` not
/// called) when the caller should read the record.
pub(crate) fn with_node_property(
    c: &TxnCore,
    n: NodeId,
    key: u32,
    f: &mut dyn FnMut(Option<&Value>),
) -> Result<bool> {
    Ok(
        match served(c, |u| &mut u.props, key, &property_policy(key))? {
            Some(col) => {
                f(col.value_of(n));
                true
            }
            None => false,
        },
    )
}

/// The entry `key` of the kind `policy` describes, when held or worth
/// building now (see the module's comment).
fn served<T>(
    c: &TxnCore,
    pick: fn(&mut Uses) -> &mut FxHashMap<u32, Use<T>>,
    key: u32,
    policy: &Policy<T>,
) -> Result<Option<Arc<T>>> {
    if !crate::columns::may_serve(c) {
        return Ok(None);
    }
    let mut uses = c.uses.borrow_mut();
    // Held: served from the first check on (a walk reads one property of
    // every node it reaches, and the checks below were a third of a read).
    if let Some(h) = pick(&mut uses).get(&key).and_then(|u| u.held.clone()) {
        return Ok(Some(h));
    }
    // On a server each counter read is a round trip and a walk reads its
    // records ahead in one: the costs this weighs are a local store's.
    if c.shared.kv.round_trips().is_some() {
        return Ok(None);
    }
    let version = match uses.version {
        Some(v) => v,
        None => *uses
            .version
            .insert(c.counter(STATS, &node_version_key(c.g))?),
    };
    let u = pick(&mut uses).entry(key).or_default();
    if u.refused {
        return Ok(None);
    }
    u.checks = u.checks.saturating_add(1);
    // The first check looks for an entry another transaction built; later
    // ones only every so often, to keep the shared cache's lock cold.
    if u.checks != 1 && !u.checks.is_multiple_of(FIRST_LOOK) {
        return Ok(None);
    }
    if let Some(h) = (policy.cached)(c, key, version) {
        u.held = Some(h.clone());
        return Ok(Some(h));
    }
    if u.checks == 1 {
        return Ok(None);
    }
    let build_at = match u.build_at {
        Some(at) => at,
        None => {
            let count = u64::try_from(c.counter(STATS, &(policy.count)(c, key))?).unwrap_or(0);
            *u.build_at.insert(count / policy.per_search)
        }
    };
    // Checks count across transactions: a query repeated at one version
    // pays for a build together.
    let columns = &c.shared.columns;
    match columns.demand(c.g.0, policy.of, version, u64::from(FIRST_LOOK)) {
        Demand::Refused => {
            u.refused = true;
            return Ok(None);
        }
        Demand::Made(made) if made < build_at => return Ok(None),
        Demand::Made(_) => {}
    }
    let built = (policy.build)(c, key, version)?;
    // Each build is paid for by its own reads: one evicted is rebuilt only
    // after as many again, and one refused is not tried again at this
    // version.
    columns.built(c.g.0, policy.of, version, built.is_some());
    u.refused = built.is_none();
    u.held = built.clone();
    Ok(built)
}

/// The members of label `l` as the transaction's snapshot holds them.
fn build(c: &TxnCore, l: u32, version: i64) -> Result<Option<Arc<Members>>> {
    let mut ids = Vec::new();
    let mut short = false;
    c.visit(
        LABELS,
        &KeyRange::prefix(&token_prefix(c.g, l)),
        &mut |k, _| {
            match read_u64(k, k.len().saturating_sub(8)) {
                Some(id) => ids.push(id),
                None => short = true,
            }
            Ok(!short)
        },
    )?;
    if short {
        return Err(crate::error::StorageError::Corrupt(
            "a label member key shorter than a node id".into(),
        ));
    }
    if ids.windows(2).any(|w| w[0] >= w[1]) {
        return Err(crate::error::StorageError::Corrupt(
            "label members out of order".into(),
        ));
    }
    Ok(Members::new(version, &ids)
        .filter(|m| m.bytes() <= crate::columns::COLUMN_BUDGET)
        .map(Arc::new))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_hold_exactly_their_ids() {
        let ids = [5, 6, 70, 200, 1000];
        let m = Members::new(1, &ids).unwrap();
        for n in 0..1100 {
            assert_eq!(m.contains(NodeId(n)), ids.contains(&n), "{n}");
        }
        assert!(!m.contains(NodeId(u64::MAX)));
        let none = Members::new(1, &[]).unwrap();
        assert!(!none.contains(NodeId(0)));
    }

    #[test]
    fn members_too_sparse_for_a_bitmap_are_refused() {
        assert!(Members::new(1, &[0, u64::MAX]).is_none());
        assert!(Members::new(1, &[0, 1 << 40]).is_none());
        // Dense enough: 2 members over 64 × 1024 ids.
        assert!(Members::new(1, &[0, 64 * 1024]).is_some());
    }
}

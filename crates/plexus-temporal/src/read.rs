//! Valid-time reads: an entity as of an instant, a version, an entity's
//! versions and timeline. Each takes any read of the graph: a snapshot of
//! now, a write transaction (its own writes included), or the graph as of
//! a system time (`Storage::read_as_of`), which makes the read bitemporal.

use crate::claim::{claim_ids, ClaimQuery};
use crate::error::Result;
use crate::time::Interval;
use crate::timeline;
use crate::version::{Kind, State, Version};
use plexus_storage::GraphRead;

/// The version that holds entity `id` at valid time `at`, if one does (a
/// retracted or never-asserted instant holds none). One seek back from
/// `at`, however long the entity's history.
pub fn as_of(
    r: &(impl GraphRead + ?Sized),
    kind: Kind,
    id: &str,
    at: i64,
) -> Result<Option<Version>> {
    match timeline::covering(r, kind, id, at)? {
        Some(s) => Ok(Some(Version::decode(&s.version, &s.record)?)),
        None => Ok(None),
    }
}

/// The latest version that holds entity `id` at some instant of the valid
/// range `[from, to)`: the last segment of its timeline starting in the
/// range, else the one covering `from` (segments never overlap). A seek
/// and a scan of the segments inside the range.
pub fn latest_within(
    r: &(impl GraphRead + ?Sized),
    kind: Kind,
    id: &str,
    from: i64,
    to: i64,
) -> Result<Option<Version>> {
    let inside = timeline::segments(r, kind, id, Some(from), Some(to))?;
    let segment = match inside.into_iter().last() {
        Some(s) => Some(s),
        None => timeline::covering(r, kind, id, from)?,
    };
    match segment {
        Some(s) => Ok(Some(Version::decode(&s.version, &s.record)?)),
        None => Ok(None),
    }
}

/// [`as_of`] for a node.
pub fn node_as_of(r: &(impl GraphRead + ?Sized), id: &str, at: i64) -> Result<Option<Version>> {
    as_of(r, Kind::Node, id, at)
}

/// [`as_of`] for an edge.
pub fn edge_as_of(r: &(impl GraphRead + ?Sized), id: &str, at: i64) -> Result<Option<Version>> {
    as_of(r, Kind::Edge, id, at)
}

/// The version that holds entity `id` at valid time `at`, with the
/// stretch of valid time around `at` over which it holds now (its own
/// interval less what later writes took: a retraction of its tail ends
/// the stretch there).
pub fn holding(
    r: &(impl GraphRead + ?Sized),
    kind: Kind,
    id: &str,
    at: i64,
) -> Result<Option<(Interval, Version)>> {
    match timeline::covering(r, kind, id, at)? {
        Some(s) => Ok(Some((s.valid, Version::decode(&s.version, &s.record)?))),
        None => Ok(None),
    }
}

/// The claims the query asks for that hold at valid time `at`, each with
/// the stretch it holds over ([`holding`]): one index scan, then one seek
/// per claim.
pub fn claims_holding(
    r: &(impl GraphRead + ?Sized),
    q: &ClaimQuery,
    at: i64,
) -> Result<Vec<(Interval, Version)>> {
    let mut out = Vec::new();
    for id in claim_ids(r, q)? {
        if let Some((held, v)) = holding(r, Kind::Claim, &id, at)? {
            if matches!(&v.state, State::Claim(c) if q.matches(c)) {
                out.push((held, v));
            }
        }
    }
    Ok(out)
}

/// The claims the query asks for that hold at valid time `at`.
pub fn claims_as_of(
    r: &(impl GraphRead + ?Sized),
    q: &ClaimQuery,
    at: i64,
) -> Result<Vec<Version>> {
    Ok(claims_holding(r, q, at)?
        .into_iter()
        .map(|(_, v)| v)
        .collect())
}

/// The version with id `id`. Read as of a system time, a version recorded
/// after it is not there yet.
pub fn version(r: &(impl GraphRead + ?Sized), id: &str) -> Result<Option<Version>> {
    let Some(bytes) = crate::keyspace::get(r, &timeline::version_key(id))? else {
        return Ok(None);
    };
    if !recorded_by(r, id)? {
        return Ok(None);
    }
    Ok(Some(Version::decode(id, &bytes)?))
}

/// Whether version `id` was recorded by the system time `r` reads as of
/// (always, when `r` reads the graph as it is). Version records are kept
/// outside the history (`keyspace.rs`), so their stamps tell: a version
/// without one was recorded before versions were stamped, and its
/// record's first history version tells instead, when there is one.
fn recorded_by(r: &(impl GraphRead + ?Sized), id: &str) -> Result<bool> {
    let Some(horizon) = r.system_time() else {
        return Ok(true);
    };
    let stamp = match timeline::recorded(r, id)? {
        Some(t) => Some(t),
        None => r.valid_time_recorded(&timeline::version_key(id))?,
    };
    Ok(stamp.is_none_or(|t| t <= horizon))
}

/// Every version of entity `id`, in the order they were written.
pub fn versions(r: &(impl GraphRead + ?Sized), kind: Kind, id: &str) -> Result<Vec<Version>> {
    let mut out = Vec::new();
    for v in timeline::log(r, kind, id)? {
        if let Some(v) = version(r, &v)? {
            out.push(v);
        }
    }
    Ok(out)
}

/// Entity `id`'s timeline: which version holds it over which interval,
/// in valid-time order (gaps are where none holds it).
pub fn segments(
    r: &(impl GraphRead + ?Sized),
    kind: Kind,
    id: &str,
) -> Result<Vec<(Interval, String)>> {
    Ok(timeline::segments(r, kind, id, None, None)?
        .into_iter()
        .map(|s| (s.valid, s.version))
        .collect())
}

//! The four-valued status of a statement: what the claims that hold at an
//! instant say of it, under the open world (no claim is not a denial).

use crate::error::Result;
use plexus_storage::GraphRead;
use plexus_temporal::{claims_as_of, ClaimObject, ClaimQuery, Polarity, State, Version};

/// What the claims say of a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Asserted, never denied.
    Supported,
    /// Denied, never asserted.
    Refuted,
    /// Asserted and denied: contradictory evidence, kept apart from
    /// uncertainty.
    Both,
    /// Neither.
    Unknown,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Supported => "supported",
            Status::Refuted => "refuted",
            Status::Both => "both",
            Status::Unknown => "unknown",
        }
    }

    /// The status of evidence for (`true`) and against (`false`).
    pub fn of(true_: bool, false_: bool) -> Status {
        match (true_, false_) {
            (true, true) => Status::Both,
            (true, false) => Status::Supported,
            (false, true) => Status::Refuted,
            (false, false) => Status::Unknown,
        }
    }

    /// The confidence of this status from the strongest evidence for
    /// (`true_`) and against (`false_`): the side that decided it, the
    /// lower of the two when both did, none when unknown.
    pub fn confidence(self, true_: Option<f64>, false_: Option<f64>) -> Option<f64> {
        match self {
            Status::Supported => true_,
            Status::Refuted => false_,
            Status::Both => true_.zip(false_).map(|(a, b)| a.min(b)),
            Status::Unknown => None,
        }
    }
}

/// A status with its confidence and the claim versions behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    pub status: Status,
    /// Supported: the highest confidence of an assertion; refuted: of a
    /// denial; both: the lower of the two; `None` where no claim gave one.
    pub confidence: Option<f64>,
    pub evidence: Vec<Version>,
}

/// Whether any of the claim versions has polarity `p`, and the highest
/// confidence of those that do.
pub(crate) fn strongest(evidence: &[Version], p: Polarity) -> (bool, Option<f64>) {
    let mut any = false;
    let mut best: Option<f64> = None;
    for v in evidence {
        if let State::Claim(c) = &v.state {
            if c.polarity == p {
                any = true;
                if let Some(x) = c.confidence {
                    best = Some(best.map_or(x, |b| b.max(x)));
                }
            }
        }
    }
    (any, best)
}

/// How evidence combines into a status and a confidence.
pub(crate) fn assess(evidence: Vec<Version>) -> Assessment {
    let (t, tc) = strongest(&evidence, Polarity::Positive);
    let (f, fc) = strongest(&evidence, Polarity::Negative);
    let status = Status::of(t, f);
    let confidence = status.confidence(tc, fc);
    Assessment {
        status,
        confidence,
        evidence,
    }
}

/// The status of `subject predicate object` in `world` at valid time
/// `at`: one index scan for the statement's claims, one seek each. With
/// `agent`, only that agent's claims count.
pub fn claim_status(
    r: &(impl GraphRead + ?Sized),
    world: &str,
    subject: &str,
    predicate: &str,
    object: &ClaimObject,
    agent: Option<&str>,
    at: i64,
) -> Result<Assessment> {
    let q = ClaimQuery {
        agent: agent.map(str::to_string),
        ..ClaimQuery::statement(world, subject, predicate, object.clone())
    };
    Ok(assess(claims_as_of(r, &q, at)?))
}

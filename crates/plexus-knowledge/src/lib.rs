//! GestaltDB's knowledge layer on Plexus: sourced claims with a
//! four-valued status, positive Horn rules that derive claims within
//! limits (with justifications, truth maintenance and explanations), and
//! modal entailment over accessibility links between worlds.
//!
//! Claims themselves are `plexus_temporal` entities (valid time, versions,
//! corrections, retractions, an index by world, predicate, subject and
//! object), so everything here reads them as of a valid instant, and as
//! of a system time too when given `Storage::read_as_of`.
//!
//! ```
//! use plexus_knowledge::{claim_status, Status};
//! use plexus_storage::Storage;
//! use plexus_temporal::{commit_versions, ClaimObject, ClaimState, Interval, Polarity, VersionWrite};
//! let db = Storage::in_memory().unwrap();
//! let acme = || ClaimObject::Entity("acme".into());
//! let hr = ClaimState::new("alice", "WORKS_FOR", acme(), "source:hr");
//! let audit = ClaimState { polarity: Polarity::Negative, ..ClaimState::new("alice", "WORKS_FOR", acme(), "source:audit") };
//! commit_versions(&db, "default", &[
//!     VersionWrite::assert_claim(hr, Interval::from(0)),
//!     VersionWrite::assert_claim(audit, Interval::from(0)),
//! ]).unwrap();
//! let r = db.read("default").unwrap();
//! let s = claim_status(&r, "default", "alice", "WORKS_FOR", &acme(), None, 5).unwrap();
//! assert_eq!(s.status, Status::Both);
//! ```

mod derive;
mod dred;
mod error;
mod explain;
mod modal;
mod rules;
mod run;
mod status;

pub use derive::Limits;
pub use error::{KnowledgeError, Result};
pub use explain::{explain, ExplainEdge, ExplainNode, Explanation, Relation};
pub use modal::{
    accessibility, entails, evaluate, Entailment, Formula, Frame, ModalLimits, Modality,
    MAX_FORMULA_DEPTH,
};
pub use rules::{create_rule, define_rule, rule_version, rules, Atom, Rule, Term, MAX_BODY};
pub use run::{
    is_derived, justifications, last_instant, maintain_truth, maintain_truth_in, run_rules,
    run_rules_in, RunOptions, RunReport, RULE_AGENT,
};
pub use status::{claim_status, Assessment, Status};

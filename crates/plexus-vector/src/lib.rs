//! Approximate nearest-neighbour search for Plexus: distance kernels over
//! f32 and f16 vectors, an HNSW graph and exact scans, by dense slot. The
//! mapping from slots to nodes, persistence in the key-value store and the
//! transactions around them belong to the layers that use this crate.

mod exact;
pub mod hnsw;
pub mod kernels;
pub mod metric;
pub mod sample;

pub use hnsw::{Hnsw, Params, Scratch};
pub use metric::{prepare, Codes, Metric, Precision};

/// What a vector operation refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VectorError {
    /// A vector of another length than the index's.
    Dimension { expected: usize, got: usize },
    /// A NaN or infinite component, at this position.
    NotFinite { at: usize },
    /// A zero vector, which has no direction (cosine).
    ZeroLength,
    /// More than 2^32 vectors in one index.
    Full,
}

impl std::fmt::Display for VectorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VectorError::Dimension { expected, got } => write!(
                f,
                "the vector has {got} dimensions where the index takes {expected}"
            ),
            VectorError::NotFinite { at } => {
                write!(f, "the vector's component {at} is not a finite number")
            }
            VectorError::ZeroLength => {
                write!(f, "a zero vector has no direction to compare by cosine")
            }
            VectorError::Full => write!(f, "the index holds 2^32 vectors, its most"),
        }
    }
}

impl std::error::Error for VectorError {}

/// The exact `k` closest live slots that `filter` passes, closest first:
/// what [`Hnsw::search`] approximates.
pub fn exact_search(
    index: &Hnsw,
    query: &[f32],
    k: usize,
    filter: Option<&dyn Fn(u32) -> bool>,
) -> Result<Vec<(u32, f32)>, VectorError> {
    let codes = index.codes();
    let q = prepare(codes.metric(), codes.dim(), query)?;
    let accept = |s: u32| !index.is_deleted(s) && filter.is_none_or(|f| f(s));
    Ok(exact::top_k(codes, &q, k, &accept)
        .into_iter()
        .map(|n| (n.slot, n.d))
        .collect())
}

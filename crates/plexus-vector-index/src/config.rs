//! A vector index's options, as Neo4j 5 spells them in
//! `OPTIONS {indexConfig: {…}}`, checked and completed with defaults.

use crate::error::VectorIndexError;
use plexus_common::Value;
use plexus_vector::{Metric, Params, Precision};

pub const DIMENSIONS: &str = "vector.dimensions";
pub const SIMILARITY: &str = "vector.similarity_function";
/// Neo4j's switch for compressed storage; in Plexus, f16 codes.
pub const QUANTIZATION: &str = "vector.quantization.enabled";
pub const HNSW_M: &str = "vector.hnsw.m";
pub const HNSW_EF_CONSTRUCTION: &str = "vector.hnsw.ef_construction";

/// The largest number of dimensions an index takes (Neo4j's limit).
pub const MAX_DIMENSIONS: i64 = 4096;

/// A vector index's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub dim: usize,
    pub metric: Metric,
    pub precision: Precision,
    pub params: Params,
}

fn int_in(
    options: &[(String, Value)],
    key: &str,
    lo: i64,
    hi: i64,
) -> Result<Option<i64>, VectorIndexError> {
    match options.iter().find(|(k, _)| k == key).map(|(_, v)| v) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Int(n)) if (lo..=hi).contains(n) => Ok(Some(*n)),
        Some(v) => Err(VectorIndexError::Option {
            key: key.into(),
            why: format!("takes an integer from {lo} to {hi}, not {v}"),
        }),
    }
}

impl Config {
    /// Reads options; `vector.dimensions` is required, the rest default to
    /// cosine, quantization on (f16 codes), `m` 16, `ef_construction` 128.
    pub fn from_options(options: &[(String, Value)]) -> Result<Config, VectorIndexError> {
        let known = [
            DIMENSIONS,
            SIMILARITY,
            QUANTIZATION,
            HNSW_M,
            HNSW_EF_CONSTRUCTION,
        ];
        if let Some((k, _)) = options.iter().find(|(k, _)| !known.contains(&k.as_str())) {
            return Err(VectorIndexError::Option {
                key: k.clone(),
                why: format!("is not a vector index option (known: {})", known.join(", ")),
            });
        }
        let dim = int_in(options, DIMENSIONS, 1, MAX_DIMENSIONS)?.ok_or_else(|| {
            VectorIndexError::Option {
                key: DIMENSIONS.into(),
                why: "is required (the length of the vectors)".into(),
            }
        })?;
        let metric = match options
            .iter()
            .find(|(k, _)| k == SIMILARITY)
            .map(|(_, v)| v)
        {
            None | Some(Value::Null) => Metric::Cosine,
            Some(Value::String(s)) => Metric::parse(s).ok_or_else(|| VectorIndexError::Option {
                key: SIMILARITY.into(),
                why: format!("is 'cosine', 'euclidean' or 'dot', not '{s}'"),
            })?,
            Some(v) => {
                return Err(VectorIndexError::Option {
                    key: SIMILARITY.into(),
                    why: format!("takes a string, not {v}"),
                })
            }
        };
        let precision = match options
            .iter()
            .find(|(k, _)| k == QUANTIZATION)
            .map(|(_, v)| v)
        {
            None | Some(Value::Null) | Some(Value::Bool(true)) => Precision::F16,
            Some(Value::Bool(false)) => Precision::F32,
            Some(v) => {
                return Err(VectorIndexError::Option {
                    key: QUANTIZATION.into(),
                    why: format!("takes true or false, not {v}"),
                })
            }
        };
        let defaults = Params::default();
        let params = Params {
            m: int_in(options, HNSW_M, 2, 512)?.map_or(defaults.m, |m| m as usize),
            ef_construction: int_in(options, HNSW_EF_CONSTRUCTION, 1, 3200)?
                .map_or(defaults.ef_construction, |e| e as usize),
            ..defaults
        };
        Ok(Config {
            dim: dim as usize,
            metric,
            precision,
            params,
        })
    }

    /// Every option, defaults included: what the index stores and `SHOW
    /// VECTOR INDEXES` reports.
    pub fn to_options(&self) -> Vec<(String, Value)> {
        vec![
            (DIMENSIONS.into(), Value::Int(self.dim as i64)),
            (
                HNSW_EF_CONSTRUCTION.into(),
                Value::Int(self.params.ef_construction as i64),
            ),
            (HNSW_M.into(), Value::Int(self.params.m as i64)),
            (
                QUANTIZATION.into(),
                Value::Bool(self.precision == Precision::F16),
            ),
            (SIMILARITY.into(), Value::String(self.metric.name().into())),
        ]
    }
}

/// A property value as a vector: a list of numbers, each finite as an f32.
pub fn vector_of(v: &Value) -> Result<Vec<f32>, VectorIndexError> {
    let Value::List(items) = v else {
        return Err(VectorIndexError::NotAVector(v.value_type().to_string()));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let f = match x {
                Value::Float(f) => *f as f32,
                Value::Int(n) => *n as f32,
                other => {
                    return Err(VectorIndexError::NotAVector(format!(
                        "list holding a {} at position {i}",
                        other.value_type()
                    )))
                }
            };
            if f.is_finite() {
                Ok(f)
            } else {
                Err(VectorIndexError::Vector(
                    plexus_vector::VectorError::NotFinite { at: i },
                ))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn options_are_checked_and_completed() {
        let c = Config::from_options(&opts(&[(DIMENSIONS, Value::Int(3))])).unwrap();
        assert_eq!(
            (c.dim, c.metric, c.precision),
            (3, Metric::Cosine, Precision::F16)
        );
        assert_eq!(Config::from_options(&c.to_options()).unwrap(), c);
        let e = Config::from_options(&opts(&[
            (DIMENSIONS, Value::Int(3)),
            (SIMILARITY, Value::String("EUCLIDEAN".into())),
            (QUANTIZATION, Value::Bool(false)),
        ]))
        .unwrap();
        assert_eq!((e.metric, e.precision), (Metric::Euclidean, Precision::F32));
        for bad in [
            opts(&[]),
            opts(&[(DIMENSIONS, Value::Int(0))]),
            opts(&[(DIMENSIONS, Value::Int(5000))]),
            opts(&[(DIMENSIONS, Value::String("3".into()))]),
            opts(&[
                (DIMENSIONS, Value::Int(3)),
                (SIMILARITY, Value::String("hamming".into())),
            ]),
            opts(&[
                (DIMENSIONS, Value::Int(3)),
                ("vector.dimension", Value::Int(3)),
            ]),
        ] {
            let err = Config::from_options(&bad).unwrap_err().to_string();
            assert!(err.contains("vector."), "{err}");
        }
    }

    #[test]
    fn values_become_vectors() {
        let v = Value::List(vec![Value::Int(1), Value::Float(0.5)]);
        assert_eq!(vector_of(&v).unwrap(), vec![1.0, 0.5]);
        assert!(vector_of(&Value::String("x".into())).is_err());
        assert!(vector_of(&Value::List(vec![Value::Float(1e300)])).is_err());
        assert!(vector_of(&Value::List(vec![Value::String("1".into())])).is_err());
    }
}

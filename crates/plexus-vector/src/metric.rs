//! Metrics, precisions, and the vectors of one index by dense slot.

use crate::kernels;
use crate::VectorError;
use half::f16;

/// How closeness is measured. Searches order by a distance (lower is
/// closer); results carry a score as Neo4j's vector indexes report it
/// (higher is closer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// The angle only: vectors are stored normalised, and the distance is
    /// `1 - cos`. Score `(1 + cos) / 2`, in [0, 1].
    Cosine,
    /// The squared Euclidean distance. Score `1 / (1 + d²)`, in (0, 1].
    Euclidean,
    /// The negated dot product (for vectors whose length means something).
    /// Score: the dot product.
    Dot,
}

impl Metric {
    /// The score of a distance this metric gave.
    pub fn score(self, distance: f32) -> f32 {
        match self {
            Metric::Cosine => 1.0 - distance / 2.0,
            Metric::Euclidean => 1.0 / (1.0 + distance),
            Metric::Dot => -distance,
        }
    }

    /// The name Neo4j's `vector.similarity_function` uses.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Cosine => "cosine",
            Metric::Euclidean => "euclidean",
            Metric::Dot => "dot",
        }
    }

    /// A metric from its name, as Neo4j's options spell it (any case).
    pub fn parse(name: &str) -> Option<Metric> {
        match name.to_ascii_lowercase().as_str() {
            "cosine" => Some(Metric::Cosine),
            "euclidean" | "l2" => Some(Metric::Euclidean),
            "dot" | "dot_product" | "inner_product" => Some(Metric::Dot),
            _ => None,
        }
    }
}

/// How stored vectors are held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    F32,
    /// Half the bytes; distances within about 1e-3 of f32's for
    /// normalised vectors.
    F16,
}

impl Precision {
    pub fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F16 => 2,
        }
    }
}

/// A vector checked and prepared for a metric: finite, of the index's
/// dimension, normalised for cosine.
pub fn prepare(metric: Metric, dim: usize, v: &[f32]) -> Result<Vec<f32>, VectorError> {
    if v.len() != dim {
        return Err(VectorError::Dimension {
            expected: dim,
            got: v.len(),
        });
    }
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(VectorError::NotFinite { at: i });
    }
    let mut out = v.to_vec();
    if metric == Metric::Cosine {
        let norm = kernels::dot(v, v).sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return Err(VectorError::ZeroLength);
        }
        out.iter_mut().for_each(|x| *x /= norm);
    }
    Ok(out)
}

/// The vectors of one index, by slot, in one buffer.
#[derive(Clone, Debug)]
pub struct Codes {
    metric: Metric,
    dim: usize,
    precision: Precision,
    f32s: Vec<f32>,
    f16s: Vec<f16>,
}

impl Codes {
    pub fn new(metric: Metric, dim: usize, precision: Precision) -> Codes {
        Codes {
            metric,
            dim,
            precision,
            f32s: Vec::new(),
            f16s: Vec::new(),
        }
    }

    pub fn metric(&self) -> Metric {
        self.metric
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Slots held.
    pub fn len(&self) -> usize {
        match self.precision {
            Precision::F32 => self.f32s.len(),
            Precision::F16 => self.f16s.len(),
        }
        .checked_div(self.dim)
        .unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the stored vectors.
    pub fn bytes(&self) -> usize {
        self.len() * self.dim * self.precision.bytes()
    }

    /// Stores a prepared vector (see [`prepare`]) in the next slot.
    pub fn push(&mut self, v: &[f32]) -> u32 {
        let slot = self.len() as u32;
        self.set(slot, v);
        slot
    }

    /// Stores a prepared vector in `slot`, growing the buffer with zero
    /// vectors up to it where needed (slots never given a vector are
    /// holes their owner never links nor returns).
    pub fn set(&mut self, slot: u32, v: &[f32]) {
        let at = slot as usize * self.dim;
        let end = at + self.dim;
        match self.precision {
            Precision::F32 => {
                if self.f32s.len() < end {
                    self.f32s.resize(end, 0.0);
                }
                self.f32s[at..end].copy_from_slice(v);
            }
            Precision::F16 => {
                if self.f16s.len() < end {
                    self.f16s.resize(end, f16::ZERO);
                }
                for (c, x) in self.f16s[at..end].iter_mut().zip(v) {
                    *c = f16::from_f32(*x);
                }
            }
        }
    }

    /// The stored form of a prepared vector: little-endian f32 or f16
    /// components, as [`Codes::set_encoded`] reads them back.
    pub fn encode(&self, v: &[f32]) -> Vec<u8> {
        let mut out = Vec::with_capacity(v.len() * self.precision.bytes());
        for x in v {
            match self.precision {
                Precision::F32 => out.extend_from_slice(&x.to_le_bytes()),
                Precision::F16 => out.extend_from_slice(&f16::from_f32(*x).to_le_bytes()),
            }
        }
        out
    }

    /// Stores in `slot` a vector [`Codes::encode`] wrote; refuses bytes of
    /// another length (damaged data) or with components that are not
    /// finite.
    pub fn set_encoded(&mut self, slot: u32, bytes: &[u8]) -> Result<(), VectorError> {
        let width = self.precision.bytes();
        if bytes.len() != self.dim * width {
            return Err(VectorError::Dimension {
                expected: self.dim,
                got: bytes.len() / width,
            });
        }
        let v: Vec<f32> = bytes
            .chunks_exact(width)
            .map(|c| match c {
                [a, b, c, d] => f32::from_le_bytes([*a, *b, *c, *d]),
                [a, b] => f16::from_le_bytes([*a, *b]).to_f32(),
                _ => f32::NAN,
            })
            .collect();
        if let Some(at) = v.iter().position(|x| !x.is_finite()) {
            return Err(VectorError::NotFinite { at });
        }
        self.set(slot, &v);
        Ok(())
    }

    /// The vector in `slot`, as f32 (what f16 storage kept of it).
    pub fn get(&self, slot: u32, out: &mut Vec<f32>) {
        let at = slot as usize * self.dim;
        out.clear();
        match self.precision {
            Precision::F32 => out.extend_from_slice(&self.f32s[at..at + self.dim]),
            Precision::F16 => out.extend(self.f16s[at..at + self.dim].iter().map(|x| x.to_f32())),
        }
    }

    /// The distance from a prepared query to the vector in `slot`.
    pub fn distance(&self, query: &[f32], slot: u32) -> f32 {
        let range = slot as usize * self.dim..(slot as usize + 1) * self.dim;
        let dot = match (self.precision, self.metric) {
            (Precision::F32, Metric::Euclidean) => return kernels::l2sq(query, &self.f32s[range]),
            (Precision::F16, Metric::Euclidean) => {
                return kernels::l2sq_f16(query, &self.f16s[range])
            }
            (Precision::F32, _) => kernels::dot(query, &self.f32s[range]),
            (Precision::F16, _) => kernels::dot_f16(query, &self.f16s[range]),
        };
        match self.metric {
            Metric::Cosine => 1.0 - dot,
            _ => -dot,
        }
    }
}

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
    /// The distance of a prepared query ([`prepare`]) from a stored f32
    /// vector of the same length.
    #[inline]
    pub fn distance(self, query: &[f32], v: &[f32]) -> f32 {
        match self {
            Metric::Euclidean => kernels::l2sq(query, v),
            _ => self.of_dot(kernels::dot(query, v)),
        }
    }

    /// The distance the dot product of a prepared query and a stored vector
    /// gives (not for Euclidean, whose distance is not a dot product).
    #[inline]
    fn of_dot(self, dot: f32) -> f32 {
        match self {
            Metric::Cosine => 1.0 - dot,
            _ => -dot,
        }
    }

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

/// One bit per component of `v`, set where it lies above `center`'s.
fn sign_bits(v: &[f32], center: &[f32], out: &mut [u64]) {
    out.fill(0);
    for (i, (x, c)) in v.iter().zip(center).enumerate() {
        if x > c {
            out[i / 64] |= 1 << (i % 64);
        }
    }
}

/// The positions of the `keep` smallest of `ds` (all when fewer), ties
/// going to the earlier. Hamming distances are small integers, so a count
/// of each finds the cut in two passes, where selecting among pairs moved
/// them about (as long as measuring them, over 20,000 candidates).
fn smallest(ds: &[u32], keep: usize) -> Vec<usize> {
    if keep >= ds.len() {
        return (0..ds.len()).collect();
    }
    let top = ds.iter().copied().max().unwrap_or(0) as usize;
    let mut count = vec![0usize; top + 1];
    for &d in ds {
        count[d as usize] += 1;
    }
    // The cut: every distance below it is kept, and `room` at it.
    let (mut cut, mut below) = (0, 0);
    while below + count[cut] < keep {
        below += count[cut];
        cut += 1;
    }
    let mut room = keep - below;
    let mut out = Vec::with_capacity(keep);
    for (i, &d) in ds.iter().enumerate() {
        let d = d as usize;
        if d < cut || (d == cut && room > 0) {
            room -= usize::from(d == cut);
            out.push(i);
        }
    }
    out
}

/// Words in cache-line-aligned storage: a 1,024-bit sign code then spans
/// exactly two lines, and its first half one.
#[derive(Clone, Debug, Default)]
struct Lines(Vec<Line>);

#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Line([u64; 8]);

impl Lines {
    fn words(&self) -> &[u64] {
        // SAFETY: a `Line` is eight u64s with no padding (`repr(C)`, size
        // 64 = its alignment), so the lines are `8 * len` initialised u64s.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<u64>(), self.0.len() * 8) }
    }

    fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `words`, borrowed uniquely through `self`.
        unsafe {
            std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast::<u64>(), self.0.len() * 8)
        }
    }

    /// At least `words` words, new ones zero.
    fn grow_to(&mut self, words: usize) {
        let lines = words.div_ceil(8);
        if self.0.len() < lines {
            self.0.resize(lines, Line::default());
        }
    }
}

/// The vectors of one index, by slot, in one buffer.
#[derive(Clone, Debug)]
pub struct Codes {
    metric: Metric,
    dim: usize,
    precision: Precision,
    f32s: Vec<f32>,
    f16s: Vec<f16>,
    /// Sign codes, once [`Codes::center_signs`] chose their center: per
    /// slot, one bit per component, set where the component lies above the
    /// center's. A scan over many vectors ranks them by these first (the
    /// differing bits, 128 bytes a vector at 1,024 dimensions against 2,048
    /// of f16) and measures only the nearest few exactly.
    center: Option<Vec<f32>>,
    signs: Lines,
}

impl Codes {
    pub fn new(metric: Metric, dim: usize, precision: Precision) -> Codes {
        Codes {
            metric,
            dim,
            precision,
            f32s: Vec::new(),
            f16s: Vec::new(),
            center: None,
            signs: Lines::default(),
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

    /// Bytes of the stored vectors (and of their sign codes, once made).
    pub fn bytes(&self) -> usize {
        self.len() * self.dim * self.precision.bytes() + self.signs.words().len() * 8
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
        if self.center.is_some() {
            self.write_signs(slot, v);
        }
    }

    /// 64-bit words of one slot's sign code.
    fn words(&self) -> usize {
        self.dim.div_ceil(64)
    }

    fn write_signs(&mut self, slot: u32, v: &[f32]) {
        let Some(center) = &self.center else { return };
        let words = self.dim.div_ceil(64);
        let at = slot as usize * words;
        self.signs.grow_to(at + words);
        sign_bits(v, center, &mut self.signs.words_mut()[at..at + words]);
    }

    /// Takes the mean of the vectors held as the center of sign codes and
    /// gives every slot its code (the next ones get theirs as they are
    /// set). Signs about the origin would say nothing of vectors that all
    /// lie on one side of it; about the mean they split every component.
    pub fn center_signs(&mut self) {
        let n = self.len();
        let mut sum = vec![0f64; self.dim];
        let mut v = Vec::with_capacity(self.dim);
        for slot in 0..n as u32 {
            self.get(slot, &mut v);
            for (s, x) in sum.iter_mut().zip(&v) {
                *s += f64::from(*x);
            }
        }
        let scale = 1.0 / n.max(1) as f64;
        self.center = Some(sum.iter().map(|s| (s * scale) as f32).collect());
        self.signs = Lines::default();
        for slot in 0..n as u32 {
            self.get(slot, &mut v);
            self.write_signs(slot, &v);
        }
    }

    /// Whether slots have sign codes ([`Codes::center_signs`]).
    pub fn has_signs(&self) -> bool {
        self.center.is_some()
    }

    /// The positions in `slots` of the `keep` vectors whose sign codes
    /// differ least from the prepared query's (all of them when `keep`
    /// is not fewer, or there are no sign codes).
    pub fn shortlist(&self, query: &[f32], slots: &[u32], keep: usize) -> Vec<usize> {
        let Some(center) = self.center.as_ref().filter(|_| keep < slots.len()) else {
            return (0..slots.len()).collect();
        };
        let words = self.words();
        let mut q = vec![0u64; words];
        sign_bits(query, center, &mut q);
        let mut ds = Vec::new();
        // Long codes, many candidates: the first half of each code (one
        // cache line at 1,024 dimensions) ranks them all, the whole code
        // the best four times `keep` of those.
        let half = words / 2;
        let positions: Vec<usize> = if half >= 8 && slots.len() > keep.saturating_mul(8) {
            kernels::hamming_rows(&q[..half], words, self.signs.words(), slots, &mut ds);
            smallest(&ds, keep.saturating_mul(4))
        } else {
            (0..slots.len()).collect()
        };
        let some: Vec<u32> = positions.iter().map(|i| slots[*i]).collect();
        ds.clear();
        kernels::hamming_rows(&q, words, self.signs.words(), &some, &mut ds);
        smallest(&ds, keep)
            .into_iter()
            .map(|i| positions[i])
            .collect()
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

    /// Bytes of one stored vector ([`Codes::encode`]'s length).
    pub fn code_bytes(&self) -> usize {
        self.dim * self.precision.bytes()
    }

    /// Appends the stored form of the vector in `slot` to `out`, as
    /// [`Codes::encode`] wrote it.
    pub fn encoded(&self, slot: u32, out: &mut Vec<u8>) {
        let at = slot as usize * self.dim;
        match self.precision {
            Precision::F32 => {
                for x in &self.f32s[at..at + self.dim] {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            Precision::F16 => {
                for x in &self.f16s[at..at + self.dim] {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
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
            Precision::F16 => kernels::widen_f16(&self.f16s[at..at + self.dim], out),
        }
    }

    /// Starts loading the vector in `slot` into the CPU's caches
    /// ([`kernels::prefetch`]), for a distance computed soon after.
    pub fn prefetch(&self, slot: u32) {
        let range = slot as usize * self.dim..(slot as usize + 1) * self.dim;
        match self.precision {
            Precision::F32 => kernels::prefetch(self.f32s.get(range).unwrap_or_default()),
            Precision::F16 => kernels::prefetch(self.f16s.get(range).unwrap_or_default()),
        }
    }

    /// The distances from a prepared query to the vectors in `slots`, in
    /// their order, into `out`: each vector loaded while the ones before
    /// it are scored.
    pub fn distances(&self, query: &[f32], slots: &[u32], out: &mut Vec<f32>) {
        const AHEAD: usize = crate::hnsw::PREFETCH_AHEAD;
        out.clear();
        for &s in slots.iter().take(AHEAD) {
            self.prefetch(s);
        }
        for (i, &s) in slots.iter().enumerate() {
            if let Some(&next) = slots.get(i + AHEAD) {
                self.prefetch(next);
            }
            out.push(self.distance(query, s));
        }
    }

    /// The distance from a prepared query to the vector in `slot`.
    pub fn distance(&self, query: &[f32], slot: u32) -> f32 {
        let range = slot as usize * self.dim..(slot as usize + 1) * self.dim;
        match (self.precision, self.metric) {
            (Precision::F32, m) => m.distance(query, &self.f32s[range]),
            (Precision::F16, Metric::Euclidean) => kernels::l2sq_f16(query, &self.f16s[range]),
            (Precision::F16, m) => m.of_dot(kernels::dot_f16(query, &self.f16s[range])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_keeps_the_least_and_the_earlier_of_ties() {
        let ds = [5, 1, 3, 1, 9, 3, 0, 3];
        assert_eq!(smallest(&ds, 3), [1, 3, 6]);
        assert_eq!(smallest(&ds, 5), [1, 2, 3, 5, 6]);
        assert_eq!(smallest(&ds, 0), Vec::<usize>::new());
        assert_eq!(smallest(&ds, 8), (0..8).collect::<Vec<_>>());
        assert_eq!(smallest(&ds, 20), (0..8).collect::<Vec<_>>());
        assert_eq!(smallest(&[], 2), Vec::<usize>::new());
    }

    /// 6,000 vectors of 1,024 components, all candidates: more than eight
    /// times the shortlist, so the first halves of the sign codes rank
    /// them all before whole codes rank the best. Each query's exact
    /// nearest ten must be in the shortlist (a first stage that ranked at
    /// random would keep about a third of them).
    #[test]
    fn a_two_stage_shortlist_keeps_the_nearest() {
        let (n, dim, keep) = (6000, 1024, 512);
        let rows = crate::sample::gaussian_mixture(n, dim, 32, 7);
        let mut codes = Codes::new(Metric::Euclidean, dim, Precision::F16);
        for r in rows.chunks(dim) {
            codes.push(&prepare(Metric::Euclidean, dim, r).unwrap());
        }
        codes.center_signs();
        let slots: Vec<u32> = (0..n as u32).collect();
        let (mut hit, mut total) = (0, 0);
        for row in rows.chunks(dim).step_by(300) {
            let q = prepare(Metric::Euclidean, dim, row).unwrap();
            let mut ds = Vec::new();
            codes.distances(&q, &slots, &mut ds);
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|a, b| ds[*a].total_cmp(&ds[*b]));
            let short = codes.shortlist(&q, &slots, keep);
            assert_eq!(short.len(), keep);
            hit += order[..10].iter().filter(|i| short.contains(i)).count();
            total += 10;
        }
        let share = hit as f64 / total as f64;
        assert!(share >= 0.97, "{share}");
    }
}

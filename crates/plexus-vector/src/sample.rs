//! Vectors drawn from a seed, for tests and benchmarks: the same on every
//! run and machine.

/// `rows` vectors of `dim` (one after another) around `clusters` centres:
/// centre components drawn from N(0, 1.5²), each vector its row's centre
/// (row `i` belongs to centre `i % clusters`) plus N(0, 1) noise
/// (xorshift and Box–Muller).
pub fn gaussian_mixture(rows: usize, dim: usize, clusters: usize, seed: u64) -> Vec<f32> {
    let mut x = seed | 1;
    let mut uniform = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut normal = move || {
        let (u, v) = (uniform(), uniform());
        ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
    };
    let clusters = clusters.max(1);
    let centres: Vec<f32> = (0..clusters * dim).map(|_| normal() * 1.5).collect();
    let mut out = Vec::with_capacity(rows * dim);
    for i in 0..rows {
        let c = &centres[(i % clusters) * dim..][..dim];
        out.extend(c.iter().map(|c| c + normal()));
    }
    out
}

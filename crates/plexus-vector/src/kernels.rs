//! Distance kernels: dot products and squared Euclidean distances between
//! an f32 query and a stored vector, f32 or f16.
//!
//! On x86-64 with AVX2, FMA and F16C (every such CPU since 2013), the
//! kernels use them, chosen once at run time; elsewhere, loops with eight
//! independent sums, which the compiler turns into whatever SIMD the target
//! has by default (and which keep the same order of additions as the wide
//! path, so results hardly differ).

use half::f16;

/// Which implementation the kernels use, decided once.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Level {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

fn level() -> Level {
    use std::sync::OnceLock;
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c")
            && std::arch::is_x86_feature_detected!("popcnt")
        {
            return Level::Avx2;
        }
        Level::Portable
    })
}

/// `a · b` (the shorter length counts).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` saw the CPU has AVX2, FMA and F16C.
        Level::Avx2 => unsafe { avx2::dot(a, b) },
        Level::Portable => portable::dot(a, b),
    }
}

/// `|a - b|²` (the shorter length counts).
pub fn l2sq(a: &[f32], b: &[f32]) -> f32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `dot`.
        Level::Avx2 => unsafe { avx2::l2sq(a, b) },
        Level::Portable => portable::l2sq(a, b),
    }
}

/// `a · b` for a stored f16 vector `b`.
pub fn dot_f16(a: &[f32], b: &[f16]) -> f32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `dot`.
        Level::Avx2 => unsafe { avx2::dot_f16(a, b) },
        Level::Portable => portable::dot_f16(a, b),
    }
}

/// `|a - b|²` for a stored f16 vector `b`.
pub fn l2sq_f16(a: &[f32], b: &[f16]) -> f32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `dot`.
        Level::Avx2 => unsafe { avx2::l2sq_f16(a, b) },
        Level::Portable => portable::l2sq_f16(a, b),
    }
}

/// `src` widened to f32, appended to `out`: a stored f16 vector decoded
/// for use as a query (linking compares stored vectors with each other).
pub fn widen_f16(src: &[f16], out: &mut Vec<f32>) {
    let at = out.len();
    out.resize(at + src.len(), 0.0);
    let dst = &mut out[at..];
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` saw the CPU has F16C (with AVX2).
        Level::Avx2 => unsafe { avx2::widen_f16(src, dst) },
        Level::Portable => dst.iter_mut().zip(src).for_each(|(d, s)| *d = s.to_f32()),
    }
}

/// The number of bits that differ between `a` and `b` (the shorter length
/// counts): the distance between two sign codes.
pub fn hamming(a: &[u64], b: &[u64]) -> u32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` saw the CPU has POPCNT (with AVX2).
        Level::Avx2 => unsafe { popcnt::hamming(a, b) },
        Level::Portable => hamming_words(a, b),
    }
}

/// The distance from the sign code `q` to the first `q.len()` words of
/// each code of `slots` in `codes` (`stride` words per slot; a slot past
/// the end counts as 0, so it is kept for exact scoring), appended to
/// `out` in the order of `slots`. One call for a whole scan: the POPCNT
/// path is chosen once and stays inlined, and each code is loaded a few
/// slots ahead of its turn.
pub fn hamming_rows(q: &[u64], stride: usize, codes: &[u64], slots: &[u32], out: &mut Vec<u32>) {
    let rows = Rows { q, stride, codes };
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` saw the CPU has POPCNT (with AVX2).
        Level::Avx2 => unsafe { popcnt::hamming_rows(&rows, slots, out) },
        Level::Portable => hamming_rows_with(&rows, slots, out, hamming_words),
    }
}

/// Sign codes to compare a query's with.
struct Rows<'a> {
    q: &'a [u64],
    stride: usize,
    codes: &'a [u64],
}

fn hamming_words(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

#[inline(always)]
fn hamming_rows_with(
    rows: &Rows<'_>,
    slots: &[u32],
    out: &mut Vec<u32>,
    distance: impl Fn(&[u64], &[u64]) -> u32,
) {
    const AHEAD: usize = 8;
    let (q, w) = (rows.q, rows.q.len());
    let code = |s: u32| {
        let at = s as usize * rows.stride;
        rows.codes.get(at..at + w).unwrap_or_default()
    };
    out.reserve(slots.len());
    for (i, &s) in slots.iter().enumerate() {
        if let Some(&next) = slots.get(i + AHEAD) {
            prefetch(code(next));
        }
        out.push(distance(q, code(s)));
    }
}

/// The same loops with the POPCNT instruction, which x86-64's baseline
/// lacks (without it `count_ones` is a dozen instructions a word).
#[cfg(target_arch = "x86_64")]
mod popcnt {
    /// # Safety
    /// The CPU has POPCNT.
    #[target_feature(enable = "popcnt")]
    pub unsafe fn hamming(a: &[u64], b: &[u64]) -> u32 {
        a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
    }

    /// # Safety
    /// The CPU has POPCNT.
    #[target_feature(enable = "popcnt")]
    pub(super) unsafe fn hamming_rows(rows: &super::Rows<'_>, slots: &[u32], out: &mut Vec<u32>) {
        // Codes of 8 or 16 words (512 and 1,024 dimensions, or a first
        // half) get a loop the compiler unrolls.
        match rows.q.len() {
            8 => super::hamming_rows_with(rows, slots, out, fixed::<8>),
            16 => super::hamming_rows_with(rows, slots, out, fixed::<16>),
            _ => super::hamming_rows_with(rows, slots, out, super::hamming_words),
        }
    }

    #[inline(always)]
    fn fixed<const W: usize>(a: &[u64], b: &[u64]) -> u32 {
        match (a.first_chunk::<W>(), b.first_chunk::<W>()) {
            (Some(a), Some(b)) => a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum(),
            _ => 0,
        }
    }
}

/// Asks the CPU to start loading `data` (a stored vector about to be
/// scored) into its caches, a line of 64 bytes at a time: a hint that
/// changes no result. Walks and scans jump between vectors scattered over
/// hundreds of megabytes, so each one scored otherwise waits on memory.
pub fn prefetch<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = data.as_ptr().cast::<i8>();
        for off in (0..std::mem::size_of_val(data)).step_by(64) {
            // SAFETY: SSE is part of x86-64; a prefetch neither reads nor
            // faults, and the address lies inside `data`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// Eight running sums, added in a fixed order at the end.
mod portable {
    use half::f16;

    fn fold8(a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32) -> f32 {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let mut acc = [0f32; 8];
        let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
        let (ra, rb) = (ca.remainder(), cb.remainder());
        for (x, y) in ca.zip(cb) {
            for i in 0..8 {
                acc[i] += f(x[i], y[i]);
            }
        }
        let mut tail = 0f32;
        for (x, y) in ra.iter().zip(rb) {
            tail += f(*x, *y);
        }
        acc.iter().sum::<f32>() + tail
    }

    pub fn dot(a: &[f32], b: &[f32]) -> f32 {
        fold8(a, b, |x, y| x * y)
    }

    pub fn l2sq(a: &[f32], b: &[f32]) -> f32 {
        fold8(a, b, |x, y| (x - y) * (x - y))
    }

    fn widen<R>(b: &[f16], f: impl FnOnce(&[f32]) -> R) -> R {
        // Converted a block at a time, on the stack.
        let mut buf = [0f32; 256];
        if b.len() <= buf.len() {
            half::slice::HalfFloatSliceExt::convert_to_f32_slice(b, &mut buf[..b.len()]);
            return f(&buf[..b.len()]);
        }
        let wide: Vec<f32> = b.iter().map(|x| x.to_f32()).collect();
        f(&wide)
    }

    pub fn dot_f16(a: &[f32], b: &[f16]) -> f32 {
        let n = a.len().min(b.len());
        a[..n]
            .chunks(256)
            .zip(b[..n].chunks(256))
            .map(|(x, y)| widen(y, |y| dot(x, y)))
            .sum()
    }

    pub fn l2sq_f16(a: &[f32], b: &[f16]) -> f32 {
        let n = a.len().min(b.len());
        a[..n]
            .chunks(256)
            .zip(b[..n].chunks(256))
            .map(|(x, y)| widen(y, |y| l2sq(x, y)))
            .sum()
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use half::f16;
    use std::arch::x86_64::*;

    /// The sum of a register's eight lanes.
    #[target_feature(enable = "avx2,fma")]
    fn sum8(v: __m256) -> f32 {
        let hi = _mm256_extractf128_ps(v, 1);
        let lo = _mm256_castps256_ps128(v);
        let s = _mm_add_ps(hi, lo);
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
        _mm_cvtss_f32(s)
    }

    /// Eight lanes of `b` from `i`, widened to f32.
    ///
    /// # Safety
    /// `i + 8 <= b.len()`.
    #[target_feature(enable = "avx2,fma,f16c")]
    unsafe fn load_f16(b: &[f16], i: usize) -> __m256 {
        // SAFETY: the caller keeps `i + 8` within `b`; f16 is 16 bits.
        _mm256_cvtph_ps(unsafe { _mm_loadu_si128(b.as_ptr().add(i).cast()) })
    }

    /// `dst[i] = src[i]` widened, eight at a time (`dst` as long as `src`).
    ///
    /// # Safety
    /// The CPU has AVX2, FMA and F16C.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub unsafe fn widen_f16(src: &[f16], dst: &mut [f32]) {
        let n = src.len().min(dst.len());
        let mut i = 0;
        while i + 8 <= n {
            // SAFETY: `i + 8 <= n` is within both slices.
            unsafe { _mm256_storeu_ps(dst.as_mut_ptr().add(i), load_f16(src, i)) };
            i += 8;
        }
        for j in i..n {
            dst[j] = src[j].to_f32();
        }
    }

    /// Eight lanes of `a` from `i`.
    ///
    /// # Safety
    /// `i + 8 <= a.len()`.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn load(a: &[f32], i: usize) -> __m256 {
        // SAFETY: the caller keeps `i + 8` within `a`.
        unsafe { _mm256_loadu_ps(a.as_ptr().add(i)) }
    }

    /// Two accumulators over 16 lanes a step, `step` giving each lane's
    /// contribution added into the accumulator; the tail in scalar code.
    macro_rules! kernel {
        ($name:ident, $bt:ty, $load_b:ident, $widen:expr, |$acc:ident, $x:ident, $y:ident| $step:expr, |$p:ident, $q:ident| $tail:expr) => {
            /// # Safety
            /// The CPU has AVX2, FMA and F16C.
            #[target_feature(enable = "avx2,fma,f16c")]
            pub unsafe fn $name(a: &[f32], b: &[$bt]) -> f32 {
                let n = a.len().min(b.len());
                let mut acc0 = _mm256_setzero_ps();
                let mut acc1 = _mm256_setzero_ps();
                let mut i = 0;
                while i + 16 <= n {
                    let (x0, y0, x1, y1) =
                        // SAFETY: `i + 16 <= n`, within both slices.
                        unsafe { (load(a, i), $load_b(b, i), load(a, i + 8), $load_b(b, i + 8)) };
                    acc0 = {
                        let ($acc, $x, $y) = (acc0, x0, y0);
                        $step
                    };
                    acc1 = {
                        let ($acc, $x, $y) = (acc1, x1, y1);
                        $step
                    };
                    i += 16;
                }
                let mut total = sum8(_mm256_add_ps(acc0, acc1));
                while i < n {
                    let ($p, $q) = (a[i], $widen(b[i]));
                    total += $tail;
                    i += 1;
                }
                total
            }
        };
    }

    kernel!(
        dot,
        f32,
        load,
        |x: f32| x,
        |acc, x, y| _mm256_fmadd_ps(x, y, acc),
        |p, q| p * q
    );
    kernel!(
        l2sq,
        f32,
        load,
        |x: f32| x,
        |acc, x, y| {
            let d = _mm256_sub_ps(x, y);
            _mm256_fmadd_ps(d, d, acc)
        },
        |p, q| (p - q) * (p - q)
    );
    kernel!(
        dot_f16,
        f16,
        load_f16,
        |x: f16| x.to_f32(),
        |acc, x, y| _mm256_fmadd_ps(x, y, acc),
        |p, q| p * q
    );
    kernel!(
        l2sq_f16,
        f16,
        load_f16,
        |x: f16| x.to_f32(),
        |acc, x, y| {
            let d = _mm256_sub_ps(x, y);
            _mm256_fmadd_ps(d, d, acc)
        },
        |p, q| (p - q) * (p - q)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn exact_dot(a: &[f32], b: &[f32]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| f64::from(*x) * f64::from(*y))
            .sum()
    }

    fn exact_l2(a: &[f32], b: &[f32]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2))
            .sum()
    }

    fn close(got: f32, want: f64, scale: f64) -> bool {
        (f64::from(got) - want).abs() <= 1e-4 * scale.max(1.0)
    }

    proptest! {
        /// Every kernel, on either path, agrees with a sum in f64, for
        /// lengths around the 8- and 16-lane steps; f16 kernels with the
        /// f64 sum over the values the f16 vector holds.
        #[test]
        fn kernels_match_exact_sums(
            pairs in proptest::collection::vec((-4.0f32..4.0, -4.0f32..4.0), 0..300)
        ) {
            let (a, b): (Vec<f32>, Vec<f32>) = pairs.into_iter().unzip();
            let scale: f64 = a.iter().chain(&b).map(|x| f64::from(*x).powi(2)).sum();
            prop_assert!(close(dot(&a, &b), exact_dot(&a, &b), scale));
            prop_assert!(close(l2sq(&a, &b), exact_l2(&a, &b), scale));
            prop_assert!(close(portable::dot(&a, &b), exact_dot(&a, &b), scale));
            prop_assert!(close(portable::l2sq(&a, &b), exact_l2(&a, &b), scale));
            let h: Vec<f16> = b.iter().map(|x| f16::from_f32(*x)).collect();
            let hb: Vec<f32> = h.iter().map(|x| x.to_f32()).collect();
            prop_assert!(close(dot_f16(&a, &h), exact_dot(&a, &hb), scale));
            prop_assert!(close(l2sq_f16(&a, &h), exact_l2(&a, &hb), scale));
            prop_assert!(close(portable::dot_f16(&a, &h), exact_dot(&a, &hb), scale));
            prop_assert!(close(portable::l2sq_f16(&a, &h), exact_l2(&a, &hb), scale));
        }
    }

    #[test]
    fn hamming_counts_differing_bits() {
        assert_eq!(hamming(&[0b1011, u64::MAX], &[0b0001, 0]), 2 + 64);
        assert_eq!(hamming(&[7], &[7, 1]), 0);
        assert_eq!(hamming(&[], &[1]), 0);
    }

    #[test]
    fn hamming_rows_agree_with_hamming_for_every_width() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for stride in [1, 6, 8, 16, 20] {
            let codes: Vec<u64> = (0..stride * 50).map(|_| next()).collect();
            let q: Vec<u64> = (0..stride).map(|_| next()).collect();
            // Slots out of order, repeated, and one past the end.
            let slots = [3u32, 49, 0, 3, 17, 50, 28];
            for width in [stride, stride / 2, 8.min(stride), 16.min(stride)] {
                let mut out = vec![7];
                hamming_rows(&q[..width], stride, &codes, &slots, &mut out);
                let want: Vec<u32> = std::iter::once(7)
                    .chain(slots.iter().map(|&s| {
                        let at = s as usize * stride;
                        codes
                            .get(at..at + width)
                            .map_or(0, |c| hamming(&q[..width], c))
                    }))
                    .collect();
                assert_eq!(out, want, "stride {stride}, width {width}");
            }
        }
    }

    #[test]
    fn widening_f16_matches_each_conversion() {
        let src: Vec<f16> = (0..37)
            .map(|i| f16::from_f32(i as f32 * 0.37 - 5.0))
            .collect();
        let mut out = vec![9.0];
        widen_f16(&src, &mut out);
        let want: Vec<f32> = std::iter::once(9.0)
            .chain(src.iter().map(|x| x.to_f32()))
            .collect();
        assert_eq!(out, want);
    }

    #[test]
    fn lengths_may_differ() {
        assert_eq!(dot(&[1.0, 2.0, 3.0], &[1.0, 1.0]), 3.0);
        assert_eq!(l2sq(&[], &[1.0]), 0.0);
    }
}

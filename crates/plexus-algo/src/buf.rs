//! Immutable arrays of plain numbers that live in memory or in a mapped
//! file: what a [`Csr`](crate::Csr) snapshot is made of, so a saved one
//! opens without reading it (pages load as they are touched, and processes
//! that map the same file share them).

use memmap2::Mmap;
use std::ops::Deref;
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// A number type whose every bit pattern is valid, stored little-endian.
pub trait Plain: sealed::Sealed + Copy + 'static {}
impl Plain for u8 {}
impl Plain for u32 {}
impl Plain for u64 {}

/// An array of `T`: owned, or a range of a mapped file.
pub enum Buf<T: Plain> {
    Owned(Vec<T>),
    Mapped {
        map: Arc<Mmap>,
        /// Byte offset of the first element (a multiple of `T`'s alignment).
        start: usize,
        len: usize,
    },
}

impl<T: Plain> Buf<T> {
    /// `len` elements of `map` from byte `start`, or `None` when they do not
    /// lie within the map or are misaligned for `T`.
    pub fn mapped(map: &Arc<Mmap>, start: usize, len: usize) -> Option<Buf<T>> {
        let size = std::mem::size_of::<T>();
        let end = len.checked_mul(size)?.checked_add(start)?;
        let aligned = (map.as_ptr() as usize).checked_add(start)? % std::mem::align_of::<T>() == 0;
        (end <= map.len() && aligned).then(|| Buf::Mapped {
            map: map.clone(),
            start,
            len,
        })
    }

    /// The bytes of the array, as a file stores them.
    pub fn bytes(&self) -> &[u8] {
        let s: &[T] = self;
        // SAFETY: `T` is a plain number type (u8, u32 or u64: no padding, no
        // invalid bit patterns), so its memory may be read as bytes; the
        // length covers exactly the slice.
        unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
    }
}

impl<T: Plain> Default for Buf<T> {
    fn default() -> Self {
        Buf::Owned(Vec::new())
    }
}

impl<T: Plain> Deref for Buf<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            Buf::Owned(v) => v,
            Buf::Mapped { map, start, len } => {
                // SAFETY: `Buf::mapped` checked that `start..start + len *
                // size_of::<T>()` lies within the map and that the address is
                // aligned for `T`; every bit pattern is a valid `T`; the map
                // is read-only and lives as long as `self` (an `Arc`). The
                // platform is little-endian, as the file (see `lib.rs`).
                unsafe { std::slice::from_raw_parts(map.as_ptr().add(*start).cast::<T>(), *len) }
            }
        }
    }
}

impl<T: Plain + std::fmt::Debug> std::fmt::Debug for Buf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s: &[T] = self;
        write!(f, "Buf[{}]", s.len())
    }
}

impl<T: Plain> From<Vec<T>> for Buf<T> {
    fn from(v: Vec<T>) -> Self {
        Buf::Owned(v)
    }
}

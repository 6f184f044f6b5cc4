//! The allocator of Plexus's binaries (the command line, the benchmarks,
//! the Python module): mimalloc, which frees across threads without a lock
//! (a bulk import allocates rows on a reading thread and frees them on the
//! loading one, which glibc's malloc serialises).
//!
//! The `mimalloc` crate's allocator passes every request to
//! `mi_malloc_aligned`, alignment 8 included. In mimalloc 3 that call has a
//! fast path only while the size's page has a free block at hand; otherwise
//! a size that is not a power of two is *over-allocated* (size plus
//! alignment, in a larger size class, its page marked as holding interior
//! pointers), where plain `mi_malloc` refills the free list and returns a
//! block. A query's short-lived rows, values and strings hit that case all
//! the time: in a loop of `RETURN $id`, allocation was a quarter of the
//! instructions. Every mimalloc block is aligned to at least a word (its
//! size classes are whole words), so a request aligned to a word or less
//! goes to `mi_malloc`, as Rust's own `System` allocator sends such
//! requests to `malloc`; larger alignments keep the aligned calls.

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// Every block mimalloc hands out is aligned to this at least.
const WORD: usize = std::mem::size_of::<usize>();

/// A new block of `layout` from mimalloc's `plain` call when every block
/// is aligned enough for it, else from its `aligned` one.
///
/// # Safety
///
/// Both calls must allocate (`mi_malloc` and `mi_malloc_aligned`, or their
/// zeroing forms).
#[inline(always)]
unsafe fn new_block(
    layout: Layout,
    plain: unsafe extern "C" fn(usize) -> *mut c_void,
    aligned: unsafe extern "C" fn(usize, usize) -> *mut c_void,
) -> *mut u8 {
    // SAFETY: the caller passes mimalloc's allocation calls, which take any
    // size and a power of two alignment.
    unsafe {
        match layout.align() <= WORD {
            true => plain(layout.size()),
            false => aligned(layout.size(), layout.align()),
        }
        .cast()
    }
}

/// mimalloc, entered by `mi_malloc` for word-aligned requests.
///
/// ```
/// #[global_allocator]
/// static GLOBAL: plexus_alloc::Alloc = plexus_alloc::Alloc;
/// let v: Vec<u64> = (0..1000).collect();
/// assert_eq!(v.iter().sum::<u64>(), 499_500);
/// ```
pub struct Alloc;

// SAFETY: each method forwards to the mimalloc call that honours the
// layout's size and alignment (plain calls only where every block is
// aligned enough, see `WORD`), and every block, however allocated, is
// freed or resized by mimalloc, which accepts any of its own blocks.
unsafe impl GlobalAlloc for Alloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: mimalloc's allocation calls take any size and a power of
        // two alignment, which a `Layout` guarantees.
        unsafe { new_block(layout, mi::mi_malloc, mi::mi_malloc_aligned) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe { new_block(layout, mi::mi_zalloc, mi::mi_zalloc_aligned) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator, so by mimalloc.
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` is a live mimalloc block of `layout`; the resized
        // block keeps the alignment asked, as `alloc` gives it.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of every size up to a few pages, at every alignment the
    /// plain and the aligned paths serve, come back aligned, keep their
    /// bytes through growing and shrinking, and zeroed ones are zero.
    #[test]
    fn blocks_are_aligned_and_keep_their_bytes() {
        let a = Alloc;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in (1..300).chain([1000, 4095, 4096, 70_000]) {
                let Ok(layout) = Layout::from_size_align(size, align) else {
                    continue;
                };
                // SAFETY: a non-zero size; each block is written within
                // its size and freed once, with its layout.
                unsafe {
                    let z = a.alloc_zeroed(layout);
                    assert!(!z.is_null());
                    assert_eq!(z as usize % align, 0, "zeroed {size}/{align}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|b| *b == 0));
                    a.dealloc(z, layout);

                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "{size}/{align}");
                    for i in 0..size {
                        *p.add(i) = (i % 251) as u8;
                    }
                    let grown = a.realloc(p, layout, size * 3);
                    assert_eq!(grown as usize % align, 0, "grown {size}/{align}");
                    let kept = |q: *mut u8, n: usize| (0..n).all(|i| *q.add(i) == (i % 251) as u8);
                    assert!(kept(grown, size));
                    let half = size.div_ceil(2);
                    let big = Layout::from_size_align_unchecked(size * 3, align);
                    let shrunk = a.realloc(grown, big, half);
                    assert_eq!(shrunk as usize % align, 0, "shrunk {size}/{align}");
                    assert!(kept(shrunk, half));
                    a.dealloc(shrunk, Layout::from_size_align_unchecked(half, align));
                }
            }
        }
    }
}

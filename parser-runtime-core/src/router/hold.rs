//! Storage without a heap: the hold buffer ([`Hold`], text not yet released, compacted out of
//! line only when an append needs room) and the fixed-capacity slot lists ([`Slots`]) the scan
//! keeps its walks in; both are growable instead with the `alloc` API.

use arrayvec::{ArrayString, ArrayVec};

/// Fixed capacity (no heap) or growable (feature `alloc`) storage.
#[derive(Debug)]
pub(super) enum Slots<T, const N: usize> {
    Fixed(ArrayVec<T, N>),
    #[cfg(feature = "alloc")]
    Heap(alloc::vec::Vec<T>),
}

impl<T, const N: usize> Slots<T, N> {
    /// Empty; growable when `heap` (and the `alloc` feature is on), else of capacity `N`.
    pub(super) fn new(heap: bool) -> Self {
        #[cfg(feature = "alloc")]
        if heap {
            return Self::Heap(alloc::vec::Vec::new());
        }
        let _ = heap;
        Self::Fixed(ArrayVec::new())
    }
    pub(super) fn truncate(&mut self, n: usize) {
        match self {
            Self::Fixed(v) => v.truncate(n),
            #[cfg(feature = "alloc")]
            Self::Heap(v) => v.truncate(n),
        }
    }
    pub(super) fn as_slice(&self) -> &[T] {
        match self {
            Self::Fixed(v) => v,
            #[cfg(feature = "alloc")]
            Self::Heap(v) => v,
        }
    }
    pub(super) fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Self::Fixed(v) => v,
            #[cfg(feature = "alloc")]
            Self::Heap(v) => v,
        }
    }
    pub(super) fn clear(&mut self) {
        match self {
            Self::Fixed(v) => v.clear(),
            #[cfg(feature = "alloc")]
            Self::Heap(v) => v.clear(),
        }
    }
    /// Pushes; `false` when full.
    #[must_use]
    pub(super) fn push(&mut self, t: T) -> bool {
        match self {
            Self::Fixed(v) => v.try_push(t).is_ok(),
            #[cfg(feature = "alloc")]
            Self::Heap(v) => {
                v.push(t);
                true
            }
        }
    }
    pub(super) fn retain(&mut self, f: impl FnMut(&mut T) -> bool) {
        match self {
            Self::Fixed(v) => v.retain(f),
            #[cfg(feature = "alloc")]
            Self::Heap(v) => v.retain_mut(f),
        }
    }
    pub(super) fn capacity(&self) -> usize {
        match self {
            Self::Fixed(_) => N,
            #[cfg(feature = "alloc")]
            Self::Heap(_) => usize::MAX,
        }
    }
}

/// Moves `buf[start..]` to the front. Out of line and cold: the temporary is as large as
/// the buffer, and a caller's stack frame should not be.
#[cold]
#[inline(never)]
fn compact<const N: usize>(buf: &mut ArrayString<N>, start: usize) {
    let mut front = ArrayString::<N>::new();
    // The held part fits: it is shorter than the buffer.
    let _ = front.try_push_str(buf.get(start..).unwrap_or(""));
    *buf = front;
}

/// The hold buffer: text not yet released.
#[derive(Debug)]
pub(super) enum Hold<const N: usize> {
    /// `buf[start..]` is held; released text at the front is dropped by moving `start`, and
    /// the buffer is compacted only when an append needs the room (amortized O(1) per byte).
    Fixed { buf: ArrayString<N>, start: usize },
    #[cfg(feature = "alloc")]
    Heap(alloc::string::String),
}

impl<const N: usize> Hold<N> {
    pub(super) fn as_str(&self) -> &str {
        match self {
            Self::Fixed { buf, start } => buf.get(*start..).unwrap_or(""),
            #[cfg(feature = "alloc")]
            Self::Heap(s) => s,
        }
    }
    pub(super) fn len(&self) -> usize {
        self.as_str().len()
    }
    pub(super) fn room(&self) -> usize {
        match self {
            Self::Fixed { buf, start } => buf.remaining_capacity() + start,
            #[cfg(feature = "alloc")]
            Self::Heap(_) => usize::MAX,
        }
    }
    /// Appends `s`; `false` (nothing appended) when it does not fit.
    pub(super) fn push_str(&mut self, s: &str) -> bool {
        match self {
            Self::Fixed { buf, start } => {
                if buf.remaining_capacity() < s.len() && *start > 0 {
                    compact(buf, *start);
                    *start = 0;
                }
                buf.try_push_str(s).is_ok()
            }
            #[cfg(feature = "alloc")]
            Self::Heap(h) => {
                h.push_str(s);
                true
            }
        }
    }
    /// Drops the first `n` held bytes (a char boundary).
    pub(super) fn drop_front(&mut self, n: usize) {
        match self {
            Self::Fixed { buf, start } => {
                *start += n;
                if *start >= buf.len() {
                    buf.clear();
                    *start = 0;
                }
            }
            #[cfg(feature = "alloc")]
            Self::Heap(h) => {
                h.drain(..n.min(h.len()));
            }
        }
    }
}

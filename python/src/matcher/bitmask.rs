//! Writing masks into a caller's int32 bitmask through the buffer protocol, with the stable
//! ABI of CPython 3.9 (which has no `Py_buffer` access: the abi3 wheel cannot use pyo3's
//! `PyBuffer`). The row is built as a `bytes` object and copied into a byte view of the
//! array with one slice assignment (`memoryview(bitmask).cast("B")[a:b] = row`): CPython's
//! own `memcpy`, no `unsafe` here.
//!
//! Layout (llguidance's and xgrammar's): shape `[batch, words]` (or `[words]`, one row),
//! int32, C-contiguous; bit `i` of word `w` is token `32 * w + i`, 1 = allowed. `words` must
//! be at least `ceil(vocab_size / 32)`; words past the vocabulary are written 0 (a model's
//! logits are often wider than its tokenizer's vocabulary).

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMemoryView, PySlice};

/// A writable int32 bitmask, as a flat byte view.
#[derive(Clone)]
pub struct Target<'py> {
    /// The caller's object (to recognise it at the next fill).
    pub source: Bound<'py, PyAny>,
    bytes: Bound<'py, PyAny>,
    /// Rows (1 for a one-dimensional bitmask).
    pub rows: usize,
    /// Words (int32) per row.
    pub words: usize,
}

fn describe(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

impl<'py> Target<'py> {
    /// Checks `bitmask` (a writable, C-contiguous int32 buffer of one or two dimensions with
    /// at least `ceil(vocab_size / 32)` words per row).
    ///
    /// Errors: TypeError for an object without the buffer protocol or not int32; ValueError
    /// for a read-only, non-contiguous or wrongly shaped buffer.
    pub fn new(bitmask: &Bound<'py, PyAny>, vocab_size: usize) -> PyResult<Self> {
        let view = PyMemoryView::from(bitmask).map_err(|_| {
            PyTypeError::new_err(format!(
                "bitmask: expected a writable int32 array (numpy, or any object with the \
                 buffer protocol), got {} (a torch tensor: pass tensor.numpy() for a CPU \
                 tensor)",
                describe(bitmask)
            ))
        })?;
        let format: String = view.getattr("format")?.extract()?;
        let itemsize: usize = view.getattr("itemsize")?.extract()?;
        let int32 = itemsize == 4
            && matches!(format.as_str(), "i" | "@i" | "=i" | "l" | "@l" | "=l")
            || (itemsize == 4
                && cfg!(target_endian = "little")
                && matches!(format.as_str(), "<i" | "<l"));
        if !int32 {
            return Err(PyTypeError::new_err(format!(
                "bitmask: expected dtype int32 (buffer format 'i'), got format {format:?} with \
                 {itemsize}-byte items"
            )));
        }
        if view.getattr("readonly")?.extract::<bool>()? {
            return Err(PyValueError::new_err("bitmask: the array is read-only"));
        }
        if !view.getattr("c_contiguous")?.extract::<bool>()? {
            return Err(PyValueError::new_err(
                "bitmask: the array must be C-contiguous (np.ascontiguousarray, or allocate \
                 it with allocate_token_bitmask)",
            ));
        }
        let shape: Vec<usize> = view.getattr("shape")?.extract()?;
        let (rows, words) = match shape.as_slice() {
            [words] => (1, *words),
            [rows, words] => (*rows, *words),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "bitmask: expected shape [batch, ceil(vocab_size / 32)], got {shape:?}"
                )))
            }
        };
        let needed = vocab_size.div_ceil(32);
        if words < needed {
            return Err(PyValueError::new_err(format!(
                "bitmask: rows have {words} words, the vocabulary of {vocab_size} tokens needs \
                 {needed} (shape [batch, ceil(vocab_size / 32)])"
            )));
        }
        let bytes = view.call_method1("cast", ("B",))?;
        Ok(Self {
            source: bitmask.clone(),
            bytes,
            rows,
            words,
        })
    }

    /// The row for `index` (negative counts from the end, as numpy's).
    ///
    /// Errors: IndexError for an index outside the rows (numpy's error for it).
    pub fn row(&self, index: i64) -> PyResult<usize> {
        self.row_shown(index, &index)
    }

    /// [`Self::row`] of a Python integer of any size.
    ///
    /// Errors: IndexError for an index outside the rows, TypeError for one that is not an
    /// integer.
    pub fn row_of(&self, index: &Bound<'_, PyAny>) -> PyResult<usize> {
        self.row_shown(super::saturating_int(index)?, index)
    }

    fn row_shown(&self, index: i64, shown: &dyn std::fmt::Display) -> PyResult<usize> {
        let rows = self.rows as i64;
        let at = if index < 0 {
            index.saturating_add(rows)
        } else {
            index
        };
        if (0..rows).contains(&at) {
            Ok(at as usize)
        } else {
            Err(PyIndexError::new_err(format!(
                "index {shown} is outside the bitmask's {rows} rows"
            )))
        }
    }

    /// Detached from the GIL's lifetime (to keep for the next fill).
    pub fn unbind(self) -> (Py<PyAny>, Py<PyAny>, usize, usize) {
        (
            self.source.unbind(),
            self.bytes.unbind(),
            self.rows,
            self.words,
        )
    }

    /// Back from [`Self::unbind`].
    pub fn bind(py: Python<'py>, kept: &(Py<PyAny>, Py<PyAny>, usize, usize)) -> Self {
        Self {
            source: kept.0.bind(py).clone(),
            bytes: kept.1.bind(py).clone(),
            rows: kept.2,
            words: kept.3,
        }
    }

    /// Copies `bytes` (a row of `words * 4` bytes, from [`encode`]) into row `row`.
    pub fn put(&self, row: usize, bytes: &Bound<'py, PyBytes>) -> PyResult<()> {
        let len = self.words * 4;
        let start = (row * len) as isize;
        let slice = PySlice::new(self.bytes.py(), start, start + len as isize, 1);
        self.bytes.set_item(slice, bytes)
    }
}

/// A row of `words` int32 words holding `mask` (64-bit words, bit `id % 64` of word
/// `id / 64`), in native byte order; words past the mask are 0.
pub fn encode<'py>(py: Python<'py>, words: usize, mask: &[u64]) -> PyResult<Bound<'py, PyBytes>> {
    let len = words * 4;
    PyBytes::new_with(py, len, |out| {
        // Two int32 words per 64-bit word: the low half is the lower token ids. `out` is
        // zeroed, so words past the mask stay 0.
        let mut chunks = out.chunks_exact_mut(8);
        for (chunk, &w) in (&mut chunks).zip(mask) {
            chunk[..4].copy_from_slice(&(w as u32).to_ne_bytes());
            chunk[4..].copy_from_slice(&((w >> 32) as u32).to_ne_bytes());
        }
        let tail = chunks.into_remainder();
        if let (4, Some(&w)) = (tail.len(), mask.get(len / 8)) {
            tail.copy_from_slice(&(w as u32).to_ne_bytes());
        }
        Ok(())
    })
}

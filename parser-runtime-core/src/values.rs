//! The value of a region without a heap: while the router routes a region's body it tracks
//! the body's first and last non-space positions and, for `int`/`float`/`bool` fields, the
//! text without the whitespace the parser ignores at its ends, then gives its
//! [`RegionValue`] at close with Python's rules from [`crate::pynum`].

use arrayvec::ArrayString;

use crate::router::{BodyKind, RegionValue, Span, ValueKind, SCALAR_MAX};

/// What the router tracks of the open region to give its [`RegionValue`].
#[derive(Debug)]
pub(crate) struct Values {
    /// Whether values are computed (the no-heap router; the alloc API parses bodies itself).
    on: bool,
    /// Absolute start of the first non-space char of the body.
    text_start: Option<usize>,
    /// Absolute end of the last non-space char of the body.
    text_end: usize,
    /// For `int`/`float`/`bool`: the body without the whitespace its parser ignores at both
    /// ends (see [`Values::skippable`]); whitespace seen after the last kept char waits in
    /// `pending` and is kept only when more text follows it.
    scalar: ArrayString<SCALAR_MAX>,
    pending: ArrayString<SCALAR_MAX>,
    /// `scalar` (or `pending`, then followed by text) overflowed.
    scalar_full: bool,
    pending_full: bool,
    /// The open region's body kind.
    kind: BodyKind,
}

impl Values {
    /// Nothing tracked yet; values are computed only when `on`.
    pub(crate) fn new(on: bool) -> Self {
        Self {
            on,
            text_start: None,
            text_end: 0,
            scalar: ArrayString::new(),
            pending: ArrayString::new(),
            scalar_full: false,
            pending_full: false,
            kind: BodyKind::RAW,
        }
    }

    /// Whether values are computed.
    pub(crate) fn on(&self) -> bool {
        self.on
    }

    /// Starts a region of body kind `kind`.
    pub(crate) fn reset(&mut self, kind: BodyKind) {
        self.kind = kind;
        self.text_start = None;
        self.text_end = 0;
        self.scalar.clear();
        self.pending.clear();
        self.scalar_full = false;
        self.pending_full = false;
    }

    /// Whether the parser of `kind` ignores `c` at either end of the body: with `strip`,
    /// Python whitespace (`str.strip`); without, what `int()`/`float()` strip themselves (C
    /// whitespace, and non-ASCII whitespace, which they turn into a space); `bool` without
    /// `strip` compares the raw body.
    fn skippable(kind: BodyKind, c: char) -> bool {
        match (kind.value, kind.strip) {
            (ValueKind::Int | ValueKind::Float | ValueKind::Bool, true) => {
                crate::pynum::py_is_space(c)
            }
            (ValueKind::Int | ValueKind::Float, false) => {
                matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
                    || (!c.is_ascii() && crate::pynum::py_is_space(c))
            }
            _ => false,
        }
    }

    /// Tracks the text `text`, at absolute `from`, of the open region.
    pub(crate) fn track(&mut self, text: &str, from: usize) {
        if !self.on {
            return;
        }
        match (self.kind.value, self.kind.strip) {
            (ValueKind::Raw, _) | (ValueKind::Text, false) => {}
            (ValueKind::Text, true) => self.track_strip(text, from),
            _ => {
                self.track_strip(text, from);
                self.track_scalar(self.kind, text);
            }
        }
    }

    fn track_scalar(&mut self, kind: BodyKind, text: &str) {
        for c in text.chars() {
            if Self::skippable(kind, c) {
                if !self.scalar.is_empty() && self.pending.try_push(c).is_err() {
                    self.pending_full = true;
                }
                continue;
            }
            if self.pending_full {
                self.scalar_full = true;
            } else if !self.pending.is_empty() {
                if self.scalar.try_push_str(&self.pending).is_err() {
                    self.scalar_full = true;
                }
                self.pending.clear();
            }
            if self.scalar.try_push(c).is_err() {
                self.scalar_full = true;
            }
            self.pending_full = false;
        }
    }

    fn track_strip(&mut self, text: &str, from: usize) {
        if self.text_start.is_none() {
            if let Some((i, _)) = text
                .char_indices()
                .find(|&(_, c)| !crate::pynum::py_is_space(c))
            {
                self.text_start = Some(from + i);
            }
        }
        // Usually the last byte is an ASCII non-space: the text ends there.
        match text.as_bytes().last() {
            Some(&b) if b.is_ascii() && !crate::pynum::py_is_space(char::from(b)) => {
                self.text_end = from + text.len();
            }
            _ => {
                if let Some((i, c)) = text
                    .char_indices()
                    .rev()
                    .find(|&(_, c)| !crate::pynum::py_is_space(c))
                {
                    self.text_end = from + i + c.len_utf8();
                }
            }
        }
    }

    /// The value of a body that spans `raw` (output offsets; `shift` turns absolute positions
    /// into output offsets).
    pub(crate) fn value(
        &self,
        kind: BodyKind,
        raw: Span,
        shift: impl Fn(usize) -> usize,
    ) -> RegionValue {
        let stripped = match self.text_start {
            Some(start) => Span {
                start: shift(start),
                end: shift(self.text_end).max(shift(start)),
            },
            None => Span {
                start: raw.end,
                end: raw.end,
            },
        };
        let span = if kind.strip { stripped } else { raw };
        match kind.value {
            ValueKind::Raw => return RegionValue::Raw(raw),
            ValueKind::Text => return RegionValue::Text(span),
            ValueKind::Int | ValueKind::Float | ValueKind::Bool => {}
        }
        // Without the whitespace the parser ignores at the ends (`track_scalar`).
        let text = self.scalar.as_str();
        let mut digits = ArrayString::<SCALAR_MAX>::new();
        match kind.value {
            ValueKind::Bool => {
                // A body (without its ignored ends) longer than the buffer is not `true`/`1`.
                RegionValue::Bool(!self.scalar_full && crate::pynum::py_true_word(text))
            }
            _ if self.scalar_full => RegionValue::Unsupported(span),
            ValueKind::Int => match crate::pynum::py_int_digits(text, &mut digits) {
                Ok((negative, d)) => {
                    let magnitude = d.parse::<i128>().ok();
                    let value = magnitude
                        .map(|m| if negative { -m } else { m })
                        .and_then(|v| i64::try_from(v).ok());
                    value.map_or(RegionValue::Unsupported(span), RegionValue::Int)
                }
                Err(crate::pynum::NumError::Invalid) => RegionValue::Invalid(span),
                Err(crate::pynum::NumError::TooLong) => RegionValue::Unsupported(span),
            },
            _ => match crate::pynum::py_float_in(text, &mut digits) {
                Ok(f) => RegionValue::Float(f),
                Err(crate::pynum::NumError::Invalid) => RegionValue::Invalid(span),
                Err(crate::pynum::NumError::TooLong) => RegionValue::Unsupported(span),
            },
        }
    }
}

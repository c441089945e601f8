//! Feeding: the [`Driver`] shared by the no-heap [`Router`](super::Router) and
//! `ResponseParser` scans a fed piece in place when nothing is held, else appends it to the
//! hold buffer and scans that, and trims released text; [`Sink`] receives the raw events and
//! [`Stop`] says why processing stopped.

use arrayvec::ArrayString;

use super::hold::Hold;
use super::walk::Core;
use super::{RegionValue, RouteError, Routes, Span};

/// Why processing stopped early: a routing error or the sink's error.
#[derive(Debug)]
pub(crate) enum Stop<E> {
    Route(RouteError),
    Sink(E),
}

impl<E> From<RouteError> for Stop<E> {
    fn from(e: RouteError) -> Self {
        Stop::Route(e)
    }
}

/// Receiver of the router's raw events (absolute positions, the buffer being scanned).
pub(crate) trait Sink {
    type Error;
    /// An explicit region opened: delimiter branch `branch` matched `hay[range]`; `before` is
    /// the character before `hay` (`None` at the start of the text), for word boundaries at
    /// the match's start.
    fn open(
        &mut self,
        field: usize,
        branch: usize,
        hay: &str,
        range: (usize, usize),
        before: Option<char>,
    ) -> Result<(), Self::Error>;
    /// The implicit region opened (its first byte is about to be routed).
    fn open_implicit(&mut self, field: usize) -> Result<(), Self::Error>;
    /// Text routed into the open region.
    fn chunk(&mut self, field: usize, text: &str) -> Result<(), Self::Error>;
    /// The open region's close delimiter matched: branch `branch` of field `field`'s close
    /// matched `hay[range]` (`before` as for [`Self::open`]). Called just before
    /// [`Self::close`], only when a region is open (its named groups join the region's
    /// captures: reference 5.24).
    fn close_delimiter(
        &mut self,
        _field: usize,
        _branch: usize,
        _hay: &str,
        _range: (usize, usize),
        _before: Option<char>,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
    /// The open region closed; `body` in output bytes; `at`: where the body starts, as
    /// `(offset, in_prefix)` (see `Core::located`).
    fn close(
        &mut self,
        field: usize,
        body: Span,
        value: RegionValue,
        at: (usize, bool),
    ) -> Result<(), Self::Error>;
}

/// The driver shared by [`Router`](super::Router) and `ResponseParser`: the core plus the
/// hold buffer.
#[derive(Debug)]
pub(crate) struct Driver<R, const H: usize, const W: usize> {
    pub(crate) core: Core<R, W>,
    pub(super) hold: Hold<H>,
}

impl<R: Routes, const H: usize, const W: usize> Driver<R, H, W> {
    pub(super) fn fixed(routes: R) -> Result<Self, RouteError> {
        Ok(Self {
            core: Core::with_slots(routes, false, H, true)?,
            hold: Hold::Fixed {
                buf: ArrayString::new(),
                start: 0,
            },
        })
    }

    /// A driver with growable buffers (`hold_limit` caps the held bytes).
    #[cfg(feature = "alloc")]
    pub(crate) fn heap(routes: R, hold_limit: usize) -> Result<Self, RouteError> {
        Ok(Self {
            core: Core::with_slots(routes, true, hold_limit, false)?,
            hold: Hold::Heap(alloc::string::String::new()),
        })
    }

    /// Routes `text` (more may follow).
    pub(crate) fn feed<S: Sink>(&mut self, text: &str, sink: &mut S) -> Result<(), Stop<S::Error>> {
        let mut rest = text;
        loop {
            if self.hold.len() == 0 {
                // Matched rather than returned as is: moving the whole result copies the error
                // payload's bytes (overlapping moves that stall store forwarding).
                match self.core.fast(rest, sink) {
                    Some(Ok(())) => return Ok(()),
                    Some(Err(e)) => return Err(e),
                    None => {}
                }
                // Nothing held: scan the fed text in place, then keep its unreleased tail.
                let result = self.core.process(rest, false, sink);
                // Kept even after an error (a region that fails to parse), so a caller that
                // goes on sees the same buffer as the reference.
                let kept = self.keep_tail(rest);
                return result.and(kept);
            }
            // Append what fits (whole chars) and scan the hold buffer.
            let mut n = rest.len().min(self.hold.room());
            while !rest.is_char_boundary(n) {
                n -= 1;
            }
            let appended = n > 0 && self.hold.push_str(&rest[..n]);
            if appended {
                rest = &rest[n..];
            }
            self.core.process(self.hold.as_str(), false, sink)?;
            self.trim();
            if rest.is_empty() {
                return Ok(());
            }
            let next_char = rest.chars().next().map_or(0, char::len_utf8);
            if !appended && self.hold.room() < next_char {
                let keep = self.core.keep_from();
                return Err(Stop::Route(RouteError::HoldOverflow {
                    offset: self.core.output_offset(keep),
                    held: self.hold.len() + next_char,
                    limit: self.core.hold_limit.min(H),
                }));
            }
        }
    }

    /// Ends the output: routes what is held and closes the open region.
    pub(crate) fn finish<S: Sink>(&mut self, sink: &mut S) -> Result<(), Stop<S::Error>> {
        self.core.process(self.hold.as_str(), true, sink)?;
        self.trim();
        Ok(())
    }

    /// After scanning `text` in place: move its unreleased tail into the hold buffer.
    fn keep_tail<E>(&mut self, text: &str) -> Result<(), Stop<E>> {
        let keep = self.core.keep_from();
        let rel = keep - self.core.base;
        if let Some(last) = text[..rel].chars().next_back() {
            self.core.before = Some(last);
        }
        let tail = &text[rel..];
        self.core.base = keep;
        if !tail.is_empty() && !self.hold.push_str(tail) {
            return Err(Stop::Route(RouteError::HoldOverflow {
                offset: self.core.output_offset(keep),
                held: tail.len(),
                limit: H,
            }));
        }
        Ok(())
    }

    /// Drops released text from the front of the hold buffer.
    fn trim(&mut self) {
        let keep = self.core.keep_from();
        let rel = keep - self.core.base;
        if rel == 0 {
            return;
        }
        let held = self.hold.as_str();
        // Fixed buffers drop their front by moving an offset, always. A heap buffer moves what
        // it keeps to the front, so it does so only in big steps: at least 4 KiB, and at least
        // a quarter of what it holds (else a long held stretch whose front is released a few
        // KiB at a time would be moved again and again: time quadratic in what is held).
        if matches!(self.hold, Hold::Fixed { .. })
            || rel == held.len()
            || (rel >= 4096 && rel >= held.len() / 4)
        {
            self.core.before = held[..rel].chars().next_back();
            self.hold.drop_front(rel);
            self.core.base = keep;
        }
    }
}

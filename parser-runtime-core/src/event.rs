//! Streaming events, serialized exactly like the reference's event dicts
//! (`ResponseParser._accumulate`, `_open_explicit`, `_close_current`).

use alloc::string::String;
use alloc::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One streaming event.
///
/// The field name is shared (`Arc<str>`, one per field per parser): an event costs no copy of
/// it.
///
/// Serializes to `{"type": "region_open", "field": F}`,
/// `{"type": "region_chunk", "field": F, "text": T, "dirty": D}` and
/// `{"type": "region_close", "field": F, "value": V}`; in lenient mode also
/// `{"type": "region_malformed", "field": F, "error": E, "text": T}` and
/// `{"type": "region_truncated", "field": F, "text": T}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A region opened: an explicit region at its open delimiter, the implicit region on its
    /// first byte.
    RegionOpen {
        /// The field name.
        field: Arc<str>,
    },
    /// Text routed into the open region. `dirty` is true for structured content parsers
    /// (json, xml-inline, kv-lines, python-call-list): the text is raw and only the close value
    /// is meaningful.
    RegionChunk {
        /// The field name.
        field: Arc<str>,
        /// The text (a whole number of chars).
        text: String,
        /// Whether the text is raw input of a structured parser.
        dirty: bool,
    },
    /// A region closed; `value` is the parsed (and transformed, and tool-typed) value.
    RegionClose {
        /// The field name.
        field: Arc<str>,
        /// The parsed value.
        value: Value,
        /// With a contract (feature `contracts`): the violations of the tool calls this region
        /// added to the message (absent from the JSON when empty).
        #[cfg(feature = "contracts")]
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        violations: alloc::vec::Vec<structured_outputs::Violation>,
    },
    /// Lenient mode only ([`crate::ParserOptions::lenient`]): a region closed but its body
    /// could not be parsed. It adds nothing to its field; `text` (the region as the model
    /// wrote it: open delimiter, body, close delimiter) goes to the content instead (README,
    /// "Lenient mode"). Comes where the region's `region_close` would have come.
    RegionMalformed {
        /// The field name.
        field: Arc<str>,
        /// Why the body could not be parsed (the message of the default mode's error).
        error: String,
        /// The region's raw text: open delimiter, body and close delimiter.
        text: String,
    },
    /// Lenient mode only: the output ended inside a tool-call region (no close delimiter,
    /// e.g. the generation hit its token limit). The region is left out of the field;
    /// `text` (open delimiter and body) goes to the content instead.
    RegionTruncated {
        /// The field name.
        field: Arc<str>,
        /// The region's raw text: open delimiter and body.
        text: String,
    },
}

impl Event {
    /// The field the event belongs to.
    pub fn field(&self) -> &str {
        match self {
            Self::RegionOpen { field }
            | Self::RegionChunk { field, .. }
            | Self::RegionClose { field, .. }
            | Self::RegionMalformed { field, .. }
            | Self::RegionTruncated { field, .. } => field,
        }
    }
}

/// Merges adjacent `region_chunk` events of the same field (chunk boundaries are free between
/// correct implementations; this is how results are compared).
pub fn merge_chunks(events: &[Event]) -> alloc::vec::Vec<Event> {
    let mut out: alloc::vec::Vec<Event> = alloc::vec::Vec::with_capacity(events.len());
    for event in events {
        if let (
            Some(Event::RegionChunk {
                field: last_field,
                text: last_text,
                ..
            }),
            Event::RegionChunk { field, text, .. },
        ) = (out.last_mut(), event)
        {
            if last_field == field {
                last_text.push_str(text);
                continue;
            }
        }
        out.push(event.clone());
    }
    out
}

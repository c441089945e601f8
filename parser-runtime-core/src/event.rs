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
/// `{"type": "region_close", "field": F, "value": V}`.
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
}

impl Event {
    /// The field the event belongs to.
    pub fn field(&self) -> &str {
        match self {
            Self::RegionOpen { field }
            | Self::RegionChunk { field, .. }
            | Self::RegionClose { field, .. } => field,
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

//! Lenient mode's closes ([`super::ParserOptions::lenient`]; README, "Lenient mode").
//!
//! Nothing the model wrote is lost: a region whose body its content parser (or transform, or
//! `join`) rejects is reported by [`Event::RegionMalformed`] instead of failing the message,
//! and a tool-call region the output ends in (no close delimiter) by
//! [`Event::RegionTruncated`], left out of `tool_calls`. In both cases the region's raw text
//! (its open delimiter, body and close delimiter, as written) goes to the content field,
//! where it stands in the output:
//!
//! * when the content field is the implicit field (text outside every region, the usual
//!   case) and neither joins nor repeats, the raw text is appended to the body of the content
//!   region that gave the message its content, and the next content region goes on from
//!   there: `Hello <tool_call>bogus</tool_call> Bye` has the content `Hello
//!   <tool_call>bogus</tool_call> Bye`, in reading order;
//! * when the content field joins or repeats, the raw text is one more region of it;
//! * when the failed region is the content field itself, its raw body is its value (a
//!   string);
//! * without a content field, only the event has the text.
//!
//! The content field's value is made by its own content parser (a `text` field strips the
//! merged text as usual); should that fail, the merged text is stored as a string. The
//! content field gets its own `region_open`, `region_chunk` (the raw text) and
//! `region_close` (the new value) events, so a streaming reader that renders content chunks
//! shows the text where it stands.

use alloc::string::String;
use alloc::string::ToString;
use alloc::vec::Vec;

use serde_json::Value;

use super::Collect;
use crate::error::ParseError;
use crate::event::Event;
use crate::tables::{Role, ToolFamily};
use crate::transform::process_field_limited;

/// What lenient mode remembers about the open region and the content so far.
#[derive(Debug, Default)]
pub(super) struct Lenient {
    /// The open delimiter's text (empty for the implicit region).
    open_text: String,
    /// The close delimiter's text, once it matched.
    close_text: String,
    /// Whether the open region is explicit (opened by its open delimiter).
    explicit: bool,
    /// Whether the open region's close delimiter matched.
    closed_by_delimiter: bool,
    /// Set by `finalize`: a close from now on may be the end of the output.
    pub(super) at_eos: bool,
    /// The raw body behind the content field's current value, when that field is the implicit
    /// one (it neither joins nor repeats): the text a diverted region is appended to.
    content_raw: Option<String>,
    /// Whether the next content region goes on from `content_raw`.
    seed: bool,
    /// Fields a region of which was malformed or truncated: `optional: false` does not fail
    /// the message for them (the event says why the field is missing).
    pub(super) diverted: alloc::vec::Vec<usize>,
    /// [`super::ReasoningCalls::Extract`].
    extract_calls: bool,
}

impl Lenient {
    /// The state of a new parser; `extract_calls`: [`super::ReasoningCalls::Extract`].
    pub(super) fn new(extract_calls: bool) -> Self {
        Self {
            extract_calls,
            ..Self::default()
        }
    }

    /// A region opened: `open` is its open delimiter's text (`None`: the implicit region).
    pub(super) fn opened(&mut self, open: Option<&str>) {
        self.open_text.clear();
        self.open_text.push_str(open.unwrap_or(""));
        self.close_text.clear();
        self.explicit = open.is_some();
        self.closed_by_delimiter = false;
    }

    /// The open region's close delimiter matched `text`.
    pub(super) fn closed_by(&mut self, text: &str) {
        self.close_text.clear();
        self.close_text.push_str(text);
        self.closed_by_delimiter = true;
    }

    /// The text the next content region starts from, once (after a diverted region).
    pub(super) fn take_seed(&mut self) -> Option<String> {
        if !core::mem::take(&mut self.seed) {
            return None;
        }
        self.content_raw.clone()
    }
}

/// The content field a diverted region's text goes to, and whether it is the plain implicit
/// field (no `join`, no `repeats`), whose value is then rebuilt from its raw text.
fn content_target(tpl: &crate::tables::CompiledTemplate) -> Option<(usize, bool)> {
    let f = tpl.fields.iter().position(|f| f.role == Role::Content)?;
    let field = &tpl.fields[f];
    let plain = tpl.implicit == Some(f) && field.join.is_none() && !field.repeats;
    Some((f, plain))
}

/// The region's raw text: open delimiter, body, close delimiter.
fn raw_text(state: &Lenient, body: &str) -> String {
    let mut text =
        String::with_capacity(state.open_text.len() + body.len() + state.close_text.len());
    text.push_str(&state.open_text);
    text.push_str(body);
    text.push_str(&state.close_text);
    text
}

/// The lenient state. Every function of this module runs under [`close`], which the engine
/// calls only when `regions.lenient` is set (`ParserOptions::lenient`), so the `expect`s here
/// state an invariant of the engine, not a property of the input.
fn state<'s>(sink: &'s mut Collect<'_>) -> &'s mut Lenient {
    sink.regions.lenient.as_deref_mut().expect("lenient mode")
}

/// Closes field `f`'s region in lenient mode.
pub(super) fn close(sink: &mut Collect<'_>, f: usize, at: (usize, bool)) -> Result<(), ParseError> {
    let tpl = sink.tpl;
    let field = &tpl.fields[f];
    let lenient = sink.regions.lenient.as_deref().expect("lenient mode");
    let truncated = lenient.at_eos
        && lenient.explicit
        && !lenient.closed_by_delimiter
        // A close that can match the empty string (`</x>|$`) lets the region end with the
        // output: then it is not cut off.
        && field.close.as_ref().is_some_and(|d| !d.can_be_empty)
        && matches!(field.role, Role::ToolCalls { .. });
    if truncated {
        let text = raw_text(lenient, &sink.regions.body);
        sink.events.push(Event::RegionTruncated {
            field: sink.names[f].clone(),
            text: text.clone(),
        });
        return divert(sink, f, text);
    }
    // The body behind the content field's value, kept for a later diverted region.
    let content_body = (content_target(tpl) == Some((f, true))).then(|| sink.regions.body.clone());
    if lenient.extract_calls && field.role == Role::Reasoning {
        if let Some(calls) = extract_calls(sink)? {
            sink.close_parsed(f, at)?;
            return add_calls(sink, calls);
        }
    }
    // XML parameters (Qwen3-Coder): a `</parameter>` the structure shows is inside a value
    // is hidden from the tag pattern while the body is parsed, then put back.
    let masked = matches!(
        field.role,
        Role::ToolCalls {
            family: Some(ToolFamily::XmlParameters)
        }
    ) && mask_inner_parameter_closes(&mut sink.regions.body);
    let mut result = sink.close_parsed(f, at);
    if masked {
        unmask_field(sink, f, result.is_ok());
    }
    let json_region = tpl.watch(Some(f)).is_some_and(|w| w.json_strings);
    if let (Err(ParseError::Content { .. }), true) = (&result, json_region) {
        // A JSON body written with Python literals (`True`, `None`, single quotes): read it
        // as one and parse its JSON form (README, "Lenient mode", repairs).
        if let Some(value) = crate::content::py_literal::read(&sink.regions.body) {
            let original = core::mem::replace(
                &mut sink.regions.body,
                serde_json::to_string(&value).unwrap_or_default(),
            );
            result = sink.close_parsed(f, at);
            if result.is_err() {
                sink.regions.body = original;
            }
        }
    }
    match result {
        Ok(()) => {
            if content_body.is_some() {
                state(sink).content_raw = content_body;
            }
            Ok(())
        }
        Err(ParseError::Content { source, .. }) => {
            let lenient = sink.regions.lenient.as_deref().expect("lenient mode");
            let text = raw_text(lenient, &sink.regions.body);
            sink.events.push(Event::RegionMalformed {
                field: sink.names[f].clone(),
                error: source.to_string(),
                text: text.clone(),
            });
            divert(sink, f, text)
        }
        Err(e) => Err(e),
    }
}

/// The tool-call field, when it repeats (calls are appended to it).
fn repeated_calls_field(tpl: &crate::tables::CompiledTemplate) -> Option<usize> {
    tpl.fields
        .iter()
        .position(|f| matches!(f.role, Role::ToolCalls { .. }) && f.repeats)
}

/// [`super::ReasoningCalls::Extract`]: parses the reasoning body with the same template (lenient,
/// no prefix); when that finds tool calls, the body becomes the text outside them and the calls
/// are returned (typed by the request's tools). `None`: no call, or the body cannot be parsed
/// (the reasoning is kept as it is).
fn extract_calls(sink: &mut Collect<'_>) -> Result<Option<Vec<Value>>, ParseError> {
    let tpl = sink.tpl;
    let Some(calls_field) = repeated_calls_field(tpl) else {
        return Ok(None);
    };
    let options = super::ParserOptions {
        lenient: true,
        ..super::ParserOptions::default()
    };
    let run = || -> Result<(super::Message, Vec<Event>), ParseError> {
        let mut nested = super::ResponseParser::with_options(tpl, "", &[], options)?;
        nested.set_hold_limit(usize::MAX);
        let mut events = nested.feed(&sink.regions.body)?;
        let (message, last) = nested.finalize()?;
        events.extend(last);
        Ok((message, events))
    };
    let Ok((mut message, events)) = run() else {
        return Ok(None);
    };
    let Some(Value::Array(mut calls)) = message.remove(&tpl.fields[calls_field].name) else {
        return Ok(None);
    };
    if calls.is_empty() {
        return Ok(None);
    }
    // The text outside the calls, in order (a malformed call's text included).
    let calls_name = &sink.names[calls_field];
    let mut text = String::new();
    for e in &events {
        if let Event::RegionChunk { field, text: t, .. } = e {
            if field != calls_name {
                text.push_str(t);
            }
        }
    }
    sink.regions.body = text;
    for call in &mut calls {
        sink.regions.tools.coerce(call);
    }
    Ok(Some(calls))
}

/// Appends calls extracted from the reasoning to the tool-call field, each with a
/// `region_open` and `region_close` event.
fn add_calls(sink: &mut Collect<'_>, calls: Vec<Value>) -> Result<(), ParseError> {
    let tpl = sink.tpl;
    let Some(f) = repeated_calls_field(tpl) else {
        return Ok(());
    };
    let field = &tpl.fields[f];
    for call in calls {
        sink.regions
            .store(field, &call)
            .map_err(|source| ParseError::Content {
                field: field.name.clone(),
                offset: 0,
                in_prefix: false,
                source,
            })?;
        sink.events.push(Event::RegionOpen {
            field: sink.names[f].clone(),
        });
        sink.events.push(Event::RegionClose {
            field: sink.names[f].clone(),
            value: call,
            #[cfg(feature = "contracts")]
            violations: alloc::vec::Vec::new(),
        });
    }
    Ok(())
}

/// The close of an XML parameter value.
const PARAMETER_CLOSE: &str = "</parameter>";
/// Stands for a `</parameter>` inside a value while the body is parsed (a private-use
/// character; bodies that hold it are not masked).
const MASK: char = '\u{F8FF}';

/// Replaces each `</parameter>` of an XML-parameters body that is followed by another
/// `</parameter>` before any next `<parameter=` (so the value's own close is still to come)
/// with [`MASK`]: the structure shows it is part of the value. Returns whether any was.
fn mask_inner_parameter_closes(body: &mut String) -> bool {
    if body.contains(MASK) {
        return false;
    }
    let mut out = String::with_capacity(body.len());
    let mut rest = body.as_str();
    let mut any = false;
    while let Some(i) = rest.find(PARAMETER_CLOSE) {
        let after = &rest[i + PARAMETER_CLOSE.len()..];
        let next = after.trim_start_matches(|c: char| c.is_whitespace());
        // Inner: more of the body follows, and the value's own close comes before any next
        // parameter (else this one closes a value and the next parameter follows).
        let inner = !next.is_empty()
            && after
                .find(PARAMETER_CLOSE)
                .is_some_and(|close| after.find("<parameter=").is_none_or(|open| close < open));
        out.push_str(&rest[..i]);
        if inner {
            out.push(MASK);
            any = true;
        } else {
            out.push_str(PARAMETER_CLOSE);
        }
        rest = after;
    }
    out.push_str(rest);
    if any {
        *body = out;
    }
    any
}

/// Puts the masked `</parameter>`s back: in the body (when the close failed, for the raw
/// text), or in the value just stored and its `region_close` event.
fn unmask_field(sink: &mut Collect<'_>, f: usize, closed: bool) {
    fn unmask(v: &mut Value) {
        match v {
            Value::String(s) if s.contains(MASK) => {
                *s = s.replace(MASK, PARAMETER_CLOSE);
            }
            Value::Array(items) => items.iter_mut().for_each(unmask),
            Value::Object(map) => map.values_mut().for_each(unmask),
            _ => {}
        }
    }
    if !closed {
        sink.regions.body = sink.regions.body.replace(MASK, PARAMETER_CLOSE);
        return;
    }
    let field = &sink.tpl.fields[f];
    if let Some(v) = sink.regions.output.get_mut(&field.name) {
        match v {
            Value::Array(list) if field.repeats => list.last_mut().into_iter().for_each(unmask),
            other => unmask(other),
        }
    }
    if let Some(Event::RegionClose { value, .. }) = sink.events.last_mut() {
        unmask(value);
    }
}

/// Sends the raw `text` of field `failed`'s region to the content field (module docs).
fn divert(sink: &mut Collect<'_>, failed: usize, text: String) -> Result<(), ParseError> {
    sink.regions.body.clear();
    sink.regions.captures.clear();
    let diverted = &mut state(sink).diverted;
    if !diverted.contains(&failed) {
        diverted.push(failed);
    }
    let tpl = sink.tpl;
    let Some((target, plain)) = content_target(tpl) else {
        return Ok(());
    };
    let field = &tpl.fields[target];
    let limit = sink.regions.transform_limit;
    let value = if target == failed {
        // The content field itself could not be parsed: its raw text is its value.
        if plain {
            state(sink).content_raw = Some(text.clone());
        }
        Value::String(text.clone())
    } else {
        let merged = if plain {
            let lenient = state(sink);
            let mut merged = lenient.content_raw.take().unwrap_or_default();
            merged.push_str(&text);
            lenient.content_raw = Some(merged.clone());
            lenient.seed = true;
            merged
        } else {
            text.clone()
        };
        match process_field_limited(&merged, field, &[], limit) {
            Ok(value) => value,
            Err(_) => Value::String(merged),
        }
    };
    let stored = if plain {
        sink.regions
            .output
            .insert(field.name.clone(), value.clone());
        true
    } else {
        sink.regions.store(field, &value).is_ok()
    };
    if stored {
        let name = sink.names[target].clone();
        sink.events.push(Event::RegionOpen {
            field: name.clone(),
        });
        sink.events.push(Event::RegionChunk {
            field: name.clone(),
            text,
            dirty: field.dirty(),
        });
        sink.events.push(Event::RegionClose {
            field: name,
            value,
            #[cfg(feature = "contracts")]
            violations: alloc::vec::Vec::new(),
        });
    }
    Ok(())
}

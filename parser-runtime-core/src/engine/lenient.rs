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
    /// Whether content regions go on from `content_raw`: set by the first region whose
    /// text is diverted to the content, for the rest of the output (a later content region
    /// that replaced the merged text, as content regions replace each other in the
    /// reference, would lose what was diverted).
    seed: bool,
    /// Whether the open content region goes on from `content_raw`: its body is appended to it
    /// when it closes.
    continuing: bool,
    /// Whether the content field's value is behind `content_raw`: [`settle`] makes it the
    /// value of the merged text once, at the end of the output (making it at every region
    /// would copy the whole content each time: quadratic).
    stale: bool,
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

    /// The implicit content region opened: after a diverted region it goes on from the
    /// merged text (its body is appended to it when it closes).
    pub(super) fn content_opened(&mut self) {
        self.continuing = self.seed;
    }

    /// The plain content field's region closed with the raw `text`: appended to the merged
    /// text when the region goes on from it (its value is then settled at the end), else the
    /// raw text behind the value the region stored.
    fn record_content(&mut self, text: String) {
        if core::mem::take(&mut self.continuing) {
            match &mut self.content_raw {
                Some(merged) => merged.push_str(&text),
                None => self.content_raw = Some(text),
            }
            self.stale = true;
        } else {
            self.content_raw = Some(text);
            self.stale = false;
        }
    }
}

/// At the end of the output: when text was diverted to the plain content field, its value
/// becomes that of the merged text (the field's content parser on it; the text itself if
/// that fails), once.
pub(super) fn settle(regions: &mut super::Regions, tpl: &crate::tables::CompiledTemplate) {
    let Some(lenient) = regions.lenient.as_deref_mut() else {
        return;
    };
    if !core::mem::take(&mut lenient.stale) {
        return;
    }
    let (Some((target, true)), Some(merged)) = (content_target(tpl), lenient.content_raw.as_ref())
    else {
        return;
    };
    let field = &tpl.fields[target];
    let value = process_field_limited(merged, field, &[], regions.transform_limit)
        .unwrap_or_else(|_| Value::String(merged.clone()));
    regions.output.insert(field.name.clone(), value);
}

/// The content field a diverted region's text goes to, and whether it is the plain implicit
/// field (no `join`, no `repeats`), whose value is then rebuilt from its raw text.
fn content_target(tpl: &crate::tables::CompiledTemplate) -> Option<(usize, bool)> {
    let f = tpl.fields.iter().position(|f| f.role == Role::Content)?;
    let field = &tpl.fields[f];
    let plain = tpl.implicit == Some(f) && field.join.is_none() && !field.repeats;
    Some((f, plain))
}

/// The open region's raw text: open delimiter, body, close delimiter.
fn region_text(sink: &Collect<'_>) -> String {
    let body = &sink.regions.body;
    let Some(state) = sink.regions.lenient.as_deref() else {
        return body.clone();
    };
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
    let Some(lenient) = sink.regions.lenient.as_deref() else {
        return sink.close_parsed(f, at);
    };
    let truncated = lenient.at_eos
        && lenient.explicit
        && !lenient.closed_by_delimiter
        // A close that can match the empty string (`</x>|$`) lets the region end with the
        // output: then it is not cut off.
        && field.close.as_ref().is_some_and(|d| !d.can_be_empty)
        && matches!(field.role, Role::ToolCalls { .. });
    if truncated {
        // A list of calls cut off: the complete calls before the cut are kept.
        if keep_complete_calls(sink, f, at, None)? {
            return Ok(());
        }
        let text = region_text(sink);
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
            if let Some(body) = content_body {
                state(sink).record_content(body);
            }
            Ok(())
        }
        Err(ParseError::Content { source, .. }) => {
            // A list of calls with a bad one: the complete calls before it are kept.
            if keep_complete_calls(sink, f, at, Some(&source))? {
                return Ok(());
            }
            let text = region_text(sink);
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

/// A call-list region (`python-call-list`, `json-call-list`) that did not parse whole, or was
/// cut off by the end of the output (`error: None`): when its body starts with complete
/// calls, they are the region's value (closed as usual, typed by the tools), and the rest of
/// the region's text (from the end of the last complete call to the close delimiter) is
/// reported by `region_malformed` (with `error`) or `region_truncated` and goes to the
/// content. Returns whether it did; `false` leaves the region as it was.
fn keep_complete_calls(
    sink: &mut Collect<'_>,
    f: usize,
    at: (usize, bool),
    error: Option<&crate::ContentError>,
) -> Result<bool, ParseError> {
    let field = &sink.tpl.fields[f];
    if !matches!(field.role, Role::ToolCalls { .. }) {
        return Ok(false);
    }
    let Some((calls, end)) = crate::content::complete_calls(&sink.regions.body, &field.content)
    else {
        return Ok(false);
    };
    let full = core::mem::replace(&mut sink.regions.body, calls);
    let captures = sink.regions.captures.clone();
    if sink.close_parsed(f, at).is_err() {
        sink.regions.body = full;
        sink.regions.captures = captures;
        return Ok(false);
    }
    let mut rest = String::from(&full[end..]);
    rest.push_str(&state(sink).close_text);
    // A list cut off right after its `]` (or after a complete bare call) lost nothing.
    if error.is_none() && rest.trim().is_empty() {
        return Ok(true);
    }
    let name = sink.names[f].clone();
    sink.events.push(match error {
        Some(source) => Event::RegionMalformed {
            field: name,
            error: source.to_string(),
            text: rest.clone(),
        },
        None => Event::RegionTruncated {
            field: name,
            text: rest.clone(),
        },
    });
    divert(sink, f, rest)?;
    Ok(true)
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

/// The text a parameter tag of this body opens with, from its first tag: `<parameter=`
/// (Qwen3-Coder, Seed-OSS, Nemotron 3) or `<parameter name=` (MiniMax M2), up to the first
/// `=`. Only tags of the body's own style count as a next parameter: a value may hold the
/// other style (or a bare `<parameter>`) as text.
fn parameter_opener(s: &str) -> Option<&str> {
    const PARAMETER_OPEN: &str = "<parameter";
    let mut at = 0;
    while let Some(rel) = s.get(at..)?.find(PARAMETER_OPEN) {
        let i = at + rel;
        let end = i + PARAMETER_OPEN.len();
        if matches!(
            s.as_bytes().get(end),
            Some(b'=' | b' ' | b'\t' | b'\n' | b'\r')
        ) {
            // Up to the first `=` of the tag (a short attribute name at most).
            let tail = &s.as_bytes()[end..(end + 32).min(s.len())];
            return tail
                .iter()
                .position(|&b| b == b'=')
                .map(|eq| &s[i..=end + eq]);
        }
        at = end;
    }
    None
}

/// Replaces each `</parameter>` of an XML-parameters body that is followed by another
/// `</parameter>` before any next parameter tag of the body's style ([`parameter_opener`]; so the value's own
/// close is still to come) with [`MASK`]: the structure shows it is part of the value.
/// Returns whether any was.
fn mask_inner_parameter_closes(body: &mut String) -> bool {
    if body.contains(MASK) {
        return false;
    }
    let s = body.as_str();
    let mut out = String::with_capacity(s.len());
    let mut pos = 0;
    let mut any = false;
    // The next `<parameter=` at or after where it was last looked for (`None`: there is none
    // after that point); looked for again only once the scan has passed it, so the whole
    // scan is linear in the body's length.
    let Some(opener) = parameter_opener(s) else {
        return false;
    };
    let next_parameter_open = |from: usize| s[from..].find(opener).map(|o| from + o);
    let mut next_open: Option<usize> = next_parameter_open(0);
    while let Some(rel) = s[pos..].find(PARAMETER_CLOSE) {
        let i = pos + rel;
        let after = i + PARAMETER_CLOSE.len();
        if next_open.is_some_and(|o| o < after) {
            next_open = next_parameter_open(after);
        }
        let rest = &s[after..];
        let next = rest.trim_start_matches(|c: char| c.is_whitespace());
        // Inner: more of the body follows, and the value's own close comes before any next
        // parameter (else this one closes a value and the next parameter follows).
        let inner = !next.is_empty()
            && rest
                .find(PARAMETER_CLOSE)
                .is_some_and(|close| next_open.is_none_or(|open| after + close < open));
        out.push_str(&s[pos..i]);
        if inner {
            out.push(MASK);
            any = true;
        } else {
            out.push_str(PARAMETER_CLOSE);
        }
        pos = after;
    }
    out.push_str(&s[pos..]);
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
            state(sink).record_content(text.clone());
        }
        Value::String(text.clone())
    } else {
        if plain {
            // Appended to the merged text, whose value is settled at the end (`settle`); the
            // events carry the value of this text alone.
            let lenient = state(sink);
            lenient
                .content_raw
                .get_or_insert_with(String::new)
                .push_str(&text);
            lenient.seed = true;
            lenient.stale = true;
        }
        match process_field_limited(&text, field, &[], limit) {
            Ok(value) => value,
            Err(_) => Value::String(text.clone()),
        }
    };
    let stored = if plain {
        if target == failed {
            sink.regions
                .output
                .insert(field.name.clone(), value.clone());
        }
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

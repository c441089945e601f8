//! The streaming engine: routes output text into regions by walking the delimiter DFAs of a
//! [`CompiledTemplate`], and builds the message.
//!
//! Semantics follow the reference `ResponseParser` (transformers 5.24.0, which added the
//! captures of close patterns; `chat_parsing/response_parser.py`): while an explicit region
//! is open only its close is watched; otherwise every explicit open and the implicit field's
//! close are. Among complete matches the earliest start wins, then the longest, then opens
//! before closes, then the field name; a complete match is committed only when no
//! still-pending delimiter starts at or before it. Bytes that may still become a delimiter
//! are held back.
//!
//! Partial matching is incremental: the engine keeps a set of live DFA walks (one per candidate
//! start, deduplicated by DFA state so that only the leftmost start of equal futures is kept) and
//! advances each by one byte per input byte, so streaming cost is linear in the output length
//! whatever the chunking; held text is never rescanned on a later feed.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ops::Deref;

use regex_automata::{Anchored, Input};
use serde_json::{Map, Value};

use crate::error::ParseError;
use crate::event::Event;
use crate::groups;
use crate::router::{Driver, RegionValue, RouteError, Sink, Span, Stop};
#[cfg(feature = "contracts")]
use crate::tables::Role;
use crate::tables::{CompiledTemplate, Delimiter, Owned, Routed};
use crate::tools::ToolSchemas;
use crate::transform::{process_field_limited, py_type_name, TransformLimit};

mod lenient;

use lenient::Lenient;

/// The message: the assistant-message object (`{"role": ..., "content": ..., ...}`).
pub type Message = Map<String, Value>;

/// A streaming response parser: one per generated sequence, holding its template through `T`.
///
/// Use it under one of its two names; both are this type, with the same methods and results:
///
/// * [`ResponseParser<'t>`](ResponseParser) borrows the template (`T = &'t CompiledTemplate`);
/// * [`OwnedResponseParser`] shares ownership of it (`T = Arc<CompiledTemplate>`): no
///   lifetime, `Send` and `Sync`, so it can be stored per stream in a server or a binding and
///   moved between threads.
///
/// Any other `T: Deref<Target = CompiledTemplate> + Clone` works as well (e.g.
/// `Rc<CompiledTemplate>`); the parser keeps two handles (one for the router, one for the
/// message), so an `Arc` is cloned once per parser, never while feeding.
///
/// Reference: `ResponseParser` (transformers 5.24.0, `chat_parsing/response_parser.py`).
/// Routing is done by the no-heap region router ([`crate::router`]); this type adds the
/// message: region bodies, content parsers, transforms, named-group captures and tool typing.
///
/// ```text
/// let mut parser = ResponseParser::new(&template, prefix)?;
/// handle(parser.initial_events());
/// for chunk in stream { handle(&parser.feed(chunk)?); }
/// let (message, events) = parser.finalize()?;
/// ```
#[derive(Debug)]
pub struct Parser<T> {
    tpl: T,
    driver: Driver<Routed<'static, Owned, T>, 0, 0>,
    /// The field names, shared by every event.
    names: Vec<Arc<str>>,
    regions: Regions,
    finalized: bool,
    utf8_tail: Vec<u8>,
    fed_bytes: usize,
    initial_events: Vec<Event>,
}

/// A streaming parser that borrows its template: [`Parser`] with `T = &'t CompiledTemplate`.
/// Generated items' `parser(prefix)` returns `ResponseParser<'static>` (their template is a
/// `&'static CompiledTemplate`), which is already `Send + 'static`.
pub type ResponseParser<'t> = Parser<&'t CompiledTemplate>;

/// A streaming parser that shares ownership of its template: [`Parser`] with
/// `T = Arc<CompiledTemplate>`. It has no lifetime parameter and is `Send` and `Sync`, so a
/// server or a language binding can keep one per stream and move it between threads, with
/// the methods, events and messages of [`ResponseParser`].
///
/// ```
/// use std::sync::{mpsc, Arc};
/// use std::thread::JoinHandle;
/// use parser_runtime_core::{CompiledTemplate, Message, OwnedResponseParser, ParseError};
///
/// /// Parses one stream on its own thread; every stream shares `template`.
/// fn spawn_stream(
///     template: &Arc<CompiledTemplate>,
///     prefix: &str,
///     chunks: mpsc::Receiver<String>,
/// ) -> Result<JoinHandle<Result<Message, ParseError>>, ParseError> {
///     let mut parser = OwnedResponseParser::new(Arc::clone(template), prefix)?;
///     parser.set_hold_limit(1 << 20);
///     Ok(std::thread::spawn(move || {
///         for chunk in chunks {
///             for _event in parser.feed(&chunk)? { /* forward the event */ }
///         }
///         Ok(parser.finalize()?.0)
///     }))
/// }
/// ```
pub type OwnedResponseParser = Parser<Arc<CompiledTemplate>>;

// Both forms can be moved to and shared between threads.
const _: fn() = || {
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<OwnedResponseParser>();
    is_send_sync::<ResponseParser<'static>>();
};

/// The message being built: the open region's body and captures, and the output so far.
#[derive(Debug)]
struct Regions {
    tools: ToolSchemas,
    /// The cap on what a transform produces.
    transform_limit: TransformLimit,
    body: String,
    captures: Vec<(String, String)>,
    /// Emptied texts of chunk events handed back by [`Parser::recycle`], taken by the next
    /// chunks (at most [`SPARE_TEXTS`]).
    spare_texts: Vec<String>,
    /// Lenient mode's state (`None` in the default mode).
    lenient: Option<Box<Lenient>>,
    output: Message,
    /// The contract checked on the message, if any.
    #[cfg(feature = "contracts")]
    contract: Option<Arc<structured_outputs::Contract>>,
    /// Every violation so far (tool calls as they close, the response format at finalize).
    #[cfg(feature = "contracts")]
    violations: Vec<structured_outputs::Violation>,
}

/// The sink the router reports to while one call runs.
struct Collect<'a> {
    tpl: &'a CompiledTemplate,
    names: &'a [Arc<str>],
    regions: &'a mut Regions,
    events: &'a mut Vec<Event>,
}

/// How many emptied chunk texts [`Parser::recycle`] keeps for later chunks.
const SPARE_TEXTS: usize = 8;

/// The largest capacity, in bytes, of a chunk text [`Parser::recycle`] keeps.
const SPARE_TEXT_CAPACITY: usize = 256;

/// The default cap, in bytes, on text held back because it may still become a delimiter
/// (see [`Parser::set_hold_limit`]).
pub const DEFAULT_HOLD_LIMIT: usize = 64 << 20;

/// Options of a parser that apply from its construction on (the prefix replay included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParserOptions {
    /// The time the search for the last start anchor in the prefix may take (default
    /// [`DEFAULT_START_ANCHOR_BUDGET`]; `None`: no limit). Past it the constructor fails with
    /// [`ParseError::StartAnchor`]. Only a `start_anchor_pattern` that backtracks comes near
    /// it (see [`crate::tables::StartAnchor::last_end_within`]); needs the `std` feature.
    pub start_anchor_budget: Option<core::time::Duration>,
    /// The cap on what a field's transform produces (see [`TransformLimit`]).
    pub transform_limit: TransformLimit,
    /// Lenient mode (default off: the reference's behaviour). A region whose body cannot be
    /// parsed no longer fails the message: it is reported by an [`Event::RegionMalformed`]
    /// and its raw text goes to the content; a tool-call region cut off by the end of the
    /// output is reported by an [`Event::RegionTruncated`] and left out of `tool_calls`
    /// (README, "Lenient mode"). Where the default mode succeeds, the message is the same,
    /// except for a tool-call region the output ends in (a truncated call).
    pub lenient: bool,
    /// In lenient mode, what becomes of a tool call the model wrote inside its reasoning
    /// (`<think>... <tool_call>{...}</tool_call> ...</think>`); default
    /// [`ReasoningCalls::Keep`]. Ignored in the default mode (the reference keeps it).
    pub reasoning_calls: ReasoningCalls,
}

/// The policy for tool calls written inside the reasoning (lenient mode; README, "Lenient
/// mode").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningCalls {
    /// Keep it as reasoning text, as the reference does: the model was thinking about the
    /// call, and a call it means to make is written after the reasoning.
    #[default]
    Keep,
    /// Extract it: each complete call in the reasoning becomes a tool call (before the calls
    /// written after the reasoning), and the reasoning keeps the text around it. For models
    /// that do call from inside their reasoning (Qwen3-Coder, issue 17).
    Extract,
}

/// The default time budget of the start-anchor search: one second.
pub const DEFAULT_START_ANCHOR_BUDGET: core::time::Duration = core::time::Duration::from_secs(1);

impl Default for ParserOptions {
    fn default() -> Self {
        Self {
            start_anchor_budget: Some(DEFAULT_START_ANCHOR_BUDGET),
            transform_limit: TransformLimit::DEFAULT,
            lenient: false,
            reasoning_calls: ReasoningCalls::Keep,
        }
    }
}

impl<T: Deref<Target = CompiledTemplate> + Clone> Parser<T> {
    /// A parser for one output. `prefix` is the chat prompt the model saw (it is cut after the
    /// last start anchor and replayed; its events are [`Self::initial_events`]); pass `""` to
    /// opt out explicitly.
    ///
    /// Errors: a region opened and closed inside the prefix that fails to parse.
    pub fn new(template: T, prefix: &str) -> Result<Self, ParseError> {
        Self::with_tools(template, prefix, &[])
    }

    /// Like [`Self::new`], with the request's tools (OpenAI tool JSON): tool-call arguments are
    /// cast by each tool's JSON Schema when a region closes (reference `_coerce_tool_calls`).
    pub fn with_tools(template: T, prefix: &str, tools: &[Value]) -> Result<Self, ParseError> {
        Self::with_options(template, prefix, tools, ParserOptions::default())
    }

    /// Like [`Self::with_tools`], with [`ParserOptions`] (the start-anchor search's time
    /// budget, the transform cap).
    ///
    /// Errors: as [`Self::new`], and [`ParseError::StartAnchor`] when the last start anchor
    /// cannot be found within the budget.
    pub fn with_options(
        template: T,
        prefix: &str,
        tools: &[Value],
        options: ParserOptions,
    ) -> Result<Self, ParseError> {
        let mut driver = Driver::heap(Routed::new(template.clone(), &[]), DEFAULT_HOLD_LIMIT)
            .map_err(|e| route_error(&template, e))?;
        driver.core.lenient = options.lenient;
        driver.core.json_reset();
        let mut parser = Self {
            driver,
            names: template
                .fields
                .iter()
                .map(|f| Arc::from(f.name.as_str()))
                .collect(),
            regions: Regions {
                tools: {
                    let mut schemas = ToolSchemas::from_tools(tools);
                    schemas.set_lenient(options.lenient);
                    schemas
                },
                transform_limit: options.transform_limit,
                body: String::new(),
                captures: Vec::new(),
                spare_texts: Vec::new(),
                lenient: options.lenient.then(|| {
                    Box::new(Lenient::new(
                        options.reasoning_calls == ReasoningCalls::Extract,
                    ))
                }),
                output: template.defaults.clone(),
                #[cfg(feature = "contracts")]
                contract: None,
                #[cfg(feature = "contracts")]
                violations: Vec::new(),
            },
            finalized: false,
            utf8_tail: Vec::new(),
            fed_bytes: 0,
            initial_events: Vec::new(),
            tpl: template,
        };
        if !prefix.is_empty() {
            let cut = parser
                .tpl
                .start_anchor
                .last_end_within(prefix, options.start_anchor_budget)
                .map_err(ParseError::StartAnchor)?;
            let truncated = &prefix[cut..];
            if !truncated.is_empty() {
                parser.driver.core.prefix_len = truncated.len();
                let mut events = Vec::new();
                let result = parser.route(truncated, &mut events);
                parser.initial_events = events;
                result?;
            }
        }
        Ok(parser)
    }

    /// Caps the text held back while a delimiter may still match (bytes; default
    /// [`DEFAULT_HOLD_LIMIT`]). A template whose delimiter can run on (`[^<]*<\|x\|>`, a
    /// whole-pattern look-ahead such as `(?=[\s\S]*?</think>)`) holds text until it resolves;
    /// past the cap, `feed` fails with [`ParseError::HoldOverflow`] instead of growing without
    /// bound. Nothing is dropped or misrouted.
    pub fn set_hold_limit(&mut self, bytes: usize) {
        self.driver.core.hold_limit = bytes;
    }

    /// Caps what a field's `transform` may produce (default [`TransformLimit::DEFAULT`]: 16
    /// bytes per byte of the region's body and named groups, plus 64 KiB); past it the region
    /// fails with [`crate::ContentError::TransformTooLarge`], naming the field. The prefix's
    /// regions are replayed at construction, with [`ParserOptions::transform_limit`].
    pub fn set_transform_limit(&mut self, limit: TransformLimit) {
        self.regions.transform_limit = limit;
    }

    /// Turns the router's outcome memo off or back on (on by default). The memo only saves
    /// the work of rescanning after a commit (docs/internals.md, "Rescans and the outcome
    /// memo"); it never changes an event or a message, which tests show by turning it off.
    #[doc(hidden)]
    pub fn set_rescan_memo(&mut self, on: bool) {
        self.driver.core.set_memo(on);
    }

    /// Checks the message against `contract` (feature `contracts`): each tool call when its
    /// region closes (its violations ride on that `region_close` event), the response format
    /// at [`Self::finalize`]; [`Self::violations`] has them all. Set it before feeding output
    /// (regions closed in the prefix are not checked).
    ///
    /// With strict tools, the strict tools also type the arguments of their calls, reading
    /// each parameter's types through `$ref` and from untyped `enum`/`const` values
    /// ([`structured_outputs::StrictTools::typing_tools`]), where the reference reads only
    /// `type` and `anyOf`/`oneOf` (README, deliberate difference 10).
    #[cfg(feature = "contracts")]
    pub fn set_contract(&mut self, contract: Arc<structured_outputs::Contract>) {
        if let Some(strict) = &contract.strict_tools {
            self.regions
                .tools
                .extend(ToolSchemas::from_tools(&strict.typing_tools()));
        }
        self.regions.contract = Some(contract);
    }

    /// The contract violations found so far: the tool calls closed so far, and after
    /// [`Self::finalize`] the response format's too (feature `contracts`).
    #[cfg(feature = "contracts")]
    pub fn violations(&self) -> &[structured_outputs::Violation] {
        &self.regions.violations
    }

    /// The events produced while replaying the prefix (regions the chat template opened).
    pub fn initial_events(&self) -> &[Event] {
        &self.initial_events
    }

    /// Feeds the next piece of output; returns the events it causes.
    ///
    /// Errors: [`ParseError::Finalized`] after [`Self::finalize`]; [`ParseError::Content`] when
    /// a region that closes cannot be parsed; [`ParseError::InvalidUtf8`] when bytes held by
    /// [`Self::feed_bytes`] are incomplete; [`ParseError::HoldOverflow`].
    pub fn feed(&mut self, text: &str) -> Result<Vec<Event>, ParseError> {
        let mut events = Vec::new();
        self.feed_into(text, &mut events)?;
        Ok(events)
    }

    /// As [`Self::feed`], with the events appended to `events` (a vector the caller keeps and
    /// clears between feeds saves an allocation per feed; bindings that convert each feed's
    /// events at once use it). On an error, `events` holds the events produced before it.
    ///
    /// Errors: as [`Self::feed`].
    pub fn feed_into(&mut self, text: &str, events: &mut Vec<Event>) -> Result<(), ParseError> {
        if self.finalized {
            return Err(ParseError::Finalized);
        }
        if !self.utf8_tail.is_empty() {
            return Err(ParseError::InvalidUtf8 {
                offset: self.fed_bytes - self.utf8_tail.len(),
            });
        }
        self.fed_bytes += text.len();
        self.route(text, events)
    }

    /// Empties `events` (events of this parser that the caller is done with, e.g. those
    /// [`Self::feed_into`] appended, once converted), keeping the allocations of small chunk
    /// texts for the next chunks: a binding that converts each feed's events at once and
    /// recycles them saves an allocation and a free per chunk. Events are the same with or
    /// without it.
    pub fn recycle(&mut self, events: &mut Vec<Event>) {
        for event in events.drain(..) {
            if let Event::RegionChunk { mut text, .. } = event {
                if self.regions.spare_texts.len() < SPARE_TEXTS
                    && text.capacity() <= SPARE_TEXT_CAPACITY
                {
                    text.clear();
                    self.regions.spare_texts.push(text);
                }
            }
        }
    }

    /// Feeds arbitrary bytes: an incomplete UTF-8 sequence at the end is held until the next
    /// call completes it. Errors: [`ParseError::InvalidUtf8`] with the byte offset (in the
    /// output) of invalid UTF-8; otherwise as [`Self::feed`].
    pub fn feed_bytes(&mut self, bytes: &[u8]) -> Result<Vec<Event>, ParseError> {
        if self.finalized {
            return Err(ParseError::Finalized);
        }
        let start_offset = self.fed_bytes - self.utf8_tail.len();
        let mut pending = core::mem::take(&mut self.utf8_tail);
        pending.extend_from_slice(bytes);
        let (valid, tail) = match core::str::from_utf8(&pending) {
            Ok(_) => (pending.len(), 0),
            Err(e) => {
                if e.error_len().is_some() {
                    return Err(ParseError::InvalidUtf8 {
                        offset: start_offset + e.valid_up_to(),
                    });
                }
                (e.valid_up_to(), pending.len() - e.valid_up_to())
            }
        };
        let text =
            core::str::from_utf8(&pending[..valid]).map_err(|e| ParseError::InvalidUtf8 {
                offset: start_offset + e.valid_up_to(),
            })?;
        self.fed_bytes = start_offset + valid + tail;
        let mut events = Vec::new();
        let result = self.route(text, &mut events);
        self.utf8_tail = pending[valid..].to_vec();
        result?;
        Ok(events)
    }

    /// Ends the output: closes every open region, checks `optional: false` fields, drops empty
    /// values (`null`, `""`, `[]`, `{}`) whose key is not in `defaults`, and returns the message
    /// with the final events. Reference: `ResponseParser.finalize`.
    pub fn finalize(&mut self) -> Result<(Message, Vec<Event>), ParseError> {
        if self.finalized {
            return Err(ParseError::Finalized);
        }
        if !self.utf8_tail.is_empty() {
            return Err(ParseError::InvalidUtf8 {
                offset: self.fed_bytes - self.utf8_tail.len(),
            });
        }
        let mut events = Vec::new();
        if let Some(lenient) = &mut self.regions.lenient {
            lenient.at_eos = true;
        }
        let mut sink = Collect {
            tpl: &self.tpl,
            names: &self.names,
            regions: &mut self.regions,
            events: &mut events,
        };
        self.driver
            .finish(&mut sink)
            .map_err(|stop| stop_error(&self.tpl, stop))?;
        lenient::settle(&mut self.regions, &self.tpl);
        let output = &self.regions.output;
        // Lenient mode: a field left out because its region was malformed or truncated is
        // reported by that event, not by a missing-field error.
        let diverted = self
            .regions
            .lenient
            .as_ref()
            .map_or(&[][..], |l| &l.diverted);
        let missing: Vec<String> = self
            .tpl
            .fields
            .iter()
            .enumerate()
            .filter(|(i, f)| !f.optional && !output.contains_key(&f.name) && !diverted.contains(i))
            .map(|(_, f)| f.name.clone())
            .collect();
        if !missing.is_empty() {
            return Err(ParseError::MissingRequired(missing));
        }
        let defaults = &self.tpl.defaults;
        let output = core::mem::take(&mut self.regions.output);
        let message: Message = output
            .into_iter()
            .filter(|(k, v)| defaults.contains_key(k) || !is_empty(v))
            .collect();
        #[cfg(feature = "contracts")]
        if let Some(format) = self
            .regions
            .contract
            .as_ref()
            .and_then(|c| c.response_format.as_ref())
        {
            let mut found = format.check(&message);
            found.append(&mut self.regions.violations);
            self.regions.violations = found;
        }
        self.finalized = true;
        Ok((message, events))
    }

    fn route(&mut self, text: &str, events: &mut Vec<Event>) -> Result<(), ParseError> {
        let mut sink = Collect {
            tpl: &self.tpl,
            names: &self.names,
            regions: &mut self.regions,
            events,
        };
        self.driver
            .feed(text, &mut sink)
            .map_err(|stop| stop_error(&self.tpl, stop))
    }
}

fn route_error(tpl: &CompiledTemplate, e: RouteError) -> ParseError {
    let name = |field: usize| {
        tpl.fields
            .get(field)
            .map_or_else(|| alloc::format!("#{field}"), |f| f.name.clone())
    };
    match e {
        RouteError::HoldOverflow {
            offset,
            held,
            limit,
        } => ParseError::HoldOverflow {
            offset,
            held,
            limit,
        },
        RouteError::NoProgress {
            field,
            offset,
            in_prefix,
        } => ParseError::NoProgress {
            field: name(field),
            offset,
            in_prefix,
        },
        other => ParseError::Route(other),
    }
}

fn stop_error(tpl: &CompiledTemplate, stop: Stop<ParseError>) -> ParseError {
    match stop {
        Stop::Route(e) => route_error(tpl, e),
        Stop::Sink(e) => e,
    }
}

impl Sink for Collect<'_> {
    type Error = ParseError;

    fn open(
        &mut self,
        field: usize,
        branch: usize,
        hay: &str,
        range: (usize, usize),
        before: Option<char>,
    ) -> Result<(), ParseError> {
        let open = self.tpl.fields[field].open.as_ref();
        self.regions.captures = resolve_captures(open, branch, hay, range, before);
        self.regions.body.clear();
        if let Some(lenient) = &mut self.regions.lenient {
            lenient.opened(Some(&hay[range.0..range.1]));
        }
        self.events.push(Event::RegionOpen {
            field: self.names[field].clone(),
        });
        Ok(())
    }

    fn open_implicit(&mut self, field: usize) -> Result<(), ParseError> {
        self.regions.body.clear();
        if let Some(lenient) = &mut self.regions.lenient {
            lenient.opened(None);
            // After a region's text went to the content, the next content region goes on
            // from the merged text (see `lenient::divert`).
            lenient.content_opened();
        }
        self.events.push(Event::RegionOpen {
            field: self.names[field].clone(),
        });
        Ok(())
    }

    fn chunk(&mut self, field: usize, text: &str) -> Result<(), ParseError> {
        self.regions.body.push_str(text);
        let mut owned = self.regions.spare_texts.pop().unwrap_or_default();
        owned.push_str(text);
        self.events.push(Event::RegionChunk {
            field: self.names[field].clone(),
            text: owned,
            dirty: self.tpl.fields[field].dirty(),
        });
        Ok(())
    }

    /// Reference 5.24: the close's named groups that took part join the captures, a close
    /// capture replacing an open capture of the same name (`dict.update`).
    fn close_delimiter(
        &mut self,
        field: usize,
        branch: usize,
        hay: &str,
        range: (usize, usize),
        before: Option<char>,
    ) -> Result<(), ParseError> {
        if let Some(lenient) = &mut self.regions.lenient {
            lenient.closed_by(&hay[range.0..range.1]);
        }
        let close = self.tpl.fields[field].close.as_ref();
        for (name, value) in resolve_captures(close, branch, hay, range, before) {
            match self.regions.captures.iter_mut().find(|(k, _)| *k == name) {
                Some(slot) => slot.1 = value,
                None => self.regions.captures.push((name, value)),
            }
        }
        Ok(())
    }

    fn close(
        &mut self,
        field: usize,
        _body: Span,
        _value: RegionValue,
        at: (usize, bool),
    ) -> Result<(), ParseError> {
        if self.regions.lenient.is_some() {
            return lenient::close(self, field, at);
        }
        self.close_parsed(field, at)
    }
}

impl Collect<'_> {
    /// The default close: parse the body, store the value, report it.
    fn close_parsed(&mut self, field: usize, at: (usize, bool)) -> Result<(), ParseError> {
        #[cfg(feature = "contracts")]
        let calls_before = self.regions.tool_call_count();
        let value = self.regions.close(self.tpl, field, at)?;
        self.events.push(Event::RegionClose {
            field: self.names[field].clone(),
            value,
            #[cfg(feature = "contracts")]
            violations: if matches!(self.tpl.fields[field].role, Role::ToolCalls { .. }) {
                self.regions
                    .check_new_calls(calls_before, self.tpl.fields[field].repeats)
            } else {
                Vec::new()
            },
        });
        Ok(())
    }
}

/// Named groups of a delimiter (an open, or a close: reference 5.24) that took part in its
/// match, resolved with the capture regex of the branch that matched, anchored on the span the
/// DFA found (`hay[range]`; the rest of `hay` is context for look-around at the edges).
/// `before` is the character before `hay` (`None` at the start of the text): when the span
/// starts `hay` and the pattern has a word boundary, the regex runs on a copy of the span with
/// the characters around it, so its `\b` sees what the DFA saw. A name defined more than once
/// gets the value of its copy that closed last, as in the Python module ([`groups`]).
fn resolve_captures(
    delimiter: Option<&Delimiter<Owned>>,
    branch: usize,
    hay: &str,
    range: (usize, usize),
    before: Option<char>,
) -> Vec<(String, String)> {
    let Some(captures) = delimiter
        .and_then(|d| d.branches.get(branch))
        .and_then(|b| b.captures.as_ref())
    else {
        return Vec::new();
    };
    let re = &captures.regex;
    let copy: String;
    let (hay, range) = match before {
        Some(c) if captures.word && range.0 == 0 => {
            let next = hay[range.1..].chars().next().map_or(0, char::len_utf8);
            let mut text = String::with_capacity(4 + range.1 + next);
            text.push(c);
            text.push_str(&hay[..range.1 + next]);
            copy = text;
            let shift = c.len_utf8();
            (copy.as_str(), (range.0 + shift, range.1 + shift))
        }
        _ => (hay, range),
    };
    let input = Input::new(hay)
        .range(range.0..range.1)
        .anchored(Anchored::Yes);
    let mut caps = re.create_captures();
    re.search_captures(&input, &mut caps);
    // Copies of a name defined more than once are merged back (`groups`).
    let named = caps
        .group_info()
        .pattern_names(regex_automata::PatternID::ZERO)
        .enumerate()
        .filter_map(|(i, name)| Some((name?, caps.get_group(i).map(|s| (s.start, s.end)))));
    groups::merge(named)
        .into_iter()
        .filter_map(|(name, span)| {
            let (start, end) = span?;
            Some((name.to_string(), hay[start..end].to_string()))
        })
        .collect()
}

#[cfg(feature = "contracts")]
impl Regions {
    /// Number of tool calls in the message so far.
    fn tool_call_count(&self) -> usize {
        match self.output.get("tool_calls") {
            Some(Value::Array(calls)) => calls.len(),
            _ => 0,
        }
    }

    /// Checks the tool calls a closing `tool_calls` region added (strict tools; other fields
    /// never change the message's `tool_calls`): with `repeats` the calls
    /// from index `before` on (the region appended them); otherwise the region replaced the
    /// list, so every call is checked again and the earlier calls' violations are dropped.
    /// Records the violations and returns the new calls'.
    fn check_new_calls(
        &mut self,
        before: usize,
        repeats: bool,
    ) -> Vec<structured_outputs::Violation> {
        let Some(tools) = self.contract.as_ref().and_then(|c| c.strict_tools.as_ref()) else {
            return Vec::new();
        };
        let calls = match self.output.get("tool_calls") {
            Some(Value::Array(calls)) => calls.as_slice(),
            _ => &[],
        };
        let first = if repeats && calls.len() >= before {
            before
        } else {
            // The list was replaced: forget what its old calls broke.
            self.violations
                .retain(|v| !v.pointer.starts_with("/tool_calls/"));
            0
        };
        let mut found = Vec::new();
        for (i, call) in calls.iter().enumerate().skip(first) {
            found.extend(tools.check_call(call, &alloc::format!("/tool_calls/{i}")));
        }
        self.violations.extend(found.iter().cloned());
        found
    }
}

impl Regions {
    /// Reference `_close_current`: parse the body, type tool calls, store the value.
    fn close(
        &mut self,
        tpl: &CompiledTemplate,
        f: usize,
        (offset, in_prefix): (usize, bool),
    ) -> Result<Value, ParseError> {
        let field = &tpl.fields[f];
        let content_error = |source| ParseError::Content {
            field: field.name.clone(),
            offset,
            in_prefix,
            source,
        };
        let mut value =
            process_field_limited(&self.body, field, &self.captures, self.transform_limit)
                .map_err(content_error)?;
        if !self.tools.is_empty() {
            self.tools.coerce(&mut value);
        }
        self.store(field, &value).map_err(content_error)?;
        self.body.clear();
        self.captures.clear();
        Ok(value)
    }

    /// Stores a region's value in the message (reference `_close_current`: `join`, `repeats`,
    /// or replace).
    fn store(
        &mut self,
        field: &crate::tables::FieldTable,
        value: &Value,
    ) -> Result<(), crate::ContentError> {
        if let Some(join) = &field.join {
            let Value::String(s) = value else {
                return Err(crate::ContentError::JoinNotString {
                    found: py_type_name(value).into(),
                });
            };
            // Reference: `value if previous is None else previous + join + value`, appended in
            // place (a copy of the whole string per region would be quadratic in the number of
            // regions: deepseek-r1's content closes repeated).
            match self.output.get_mut(&field.name) {
                None | Some(Value::Null) => {
                    self.output
                        .insert(field.name.clone(), Value::String(s.clone()));
                }
                Some(Value::String(prev)) => {
                    prev.push_str(join);
                    prev.push_str(s);
                }
                Some(other) => {
                    return Err(crate::ContentError::JoinTargetNotString {
                        found: py_type_name(other).into(),
                    })
                }
            }
        } else if field.repeats {
            // Reference: `setdefault(name, []).append(value)`.
            match self.output.get_mut(&field.name) {
                Some(Value::Array(list)) => list.push(value.clone()),
                None => {
                    self.output
                        .insert(field.name.clone(), Value::Array(alloc::vec![value.clone()]));
                }
                Some(other) => {
                    return Err(crate::ContentError::RepeatsTargetNotList {
                        found: py_type_name(other).into(),
                    })
                }
            }
        } else {
            self.output.insert(field.name.clone(), value.clone());
        }
        Ok(())
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Parses one complete output (reference `parse_response`): feeds `text` in one piece and
/// finalizes.
pub fn parse_response(
    template: &CompiledTemplate,
    text: &str,
    prefix: &str,
    tools: &[Value],
) -> Result<Message, ParseError> {
    let mut parser = ResponseParser::with_tools(template, prefix, tools)?;
    // The whole output is already in memory: holding it back costs nothing more.
    parser.set_hold_limit(usize::MAX);
    parser.feed(text)?;
    Ok(parser.finalize()?.0)
}

/// Parses one complete output and checks it against `contract` (feature `contracts`): the
/// message and every violation (the response format's, then each tool call's, each part in
/// JSON-pointer order). Errors: as [`parse_response`].
#[cfg(feature = "contracts")]
pub fn parse_response_checked(
    template: &CompiledTemplate,
    text: &str,
    prefix: &str,
    tools: &[Value],
    contract: Arc<structured_outputs::Contract>,
) -> Result<(Message, Vec<structured_outputs::Violation>), ParseError> {
    let mut parser = ResponseParser::with_tools(template, prefix, tools)?;
    parser.set_hold_limit(usize::MAX);
    parser.set_contract(contract);
    parser.feed(text)?;
    let (message, _) = parser.finalize()?;
    Ok((message, parser.regions.violations))
}

/// The prefixes of a batch: one for all outputs, or one per output.
#[derive(Debug, Clone, Copy)]
pub enum Prefixes<'a> {
    /// The same prefix for every output.
    Broadcast(&'a str),
    /// One prefix per output (same length as the outputs).
    PerOutput(&'a [&'a str]),
}

/// Parses a batch of outputs. Errors: [`ParseError::BatchLengthMismatch`] when
/// `Prefixes::PerOutput` has a different length than `texts`; otherwise the first error of an
/// output.
pub fn parse_responses(
    template: &CompiledTemplate,
    texts: &[&str],
    prefixes: Prefixes<'_>,
    tools: &[Value],
) -> Result<Vec<Message>, ParseError> {
    if let Prefixes::PerOutput(list) = prefixes {
        if list.len() != texts.len() {
            return Err(ParseError::BatchLengthMismatch {
                outputs: texts.len(),
                prefixes: list.len(),
            });
        }
    }
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let prefix = match prefixes {
                Prefixes::Broadcast(p) => p,
                Prefixes::PerOutput(list) => list[i],
            };
            parse_response(template, text, prefix, tools)
        })
        .collect()
}

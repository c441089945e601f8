//! Heap allocations of the parsers, counted by a global allocator (its own test binary, so
//! the counting allocator sees nothing else).
//!
//! * The no-heap router of a `response_template!` item makes **zero** allocations across
//!   `router()`, every `feed` and `finish`, on a 1 MB reasoning + content + tool-call stream
//!   fed in 1-byte and 4-byte chunks. Its events are checked too: the bytes routed to each
//!   field are exactly the bodies the stream was built from. The same holds for a template
//!   with word boundaries in its delimiters (`data/word-boundary.json`: a context slot, a
//!   delayed match, `<invoke\b[^>]*?\bname=...>`, a look-behind `(?<!-)`), on text full of
//!   non-ASCII characters next to near misses.
//! * The `ResponseParser` (alloc API) is measured on the same stream in 4-byte chunks:
//!   allocations per feed call and per region are printed, and feeds that cause no event
//!   allocate nothing but the amortized growth of the hold buffer (a handful in total).
//!
//! Run by `cargo test` (`harness = false`: a plain `main`, so no other test thread allocates
//! while counting).

use std::alloc::System;

use parser_runtime::router::Router;
use parser_runtime::statics::{StaticRoutes, TableError};
use parser_runtime::{Event, FieldId, RegionEvent};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use workspace_tests::pieces;

parser_runtime::response_template!(SmolLm3 = "../templates/smollm3.json");
parser_runtime::response_template!(WordBoundary = "data/word-boundary.json");

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Allocations (and reallocations) made while `f` runs. The binary runs its checks one after
/// the other on the main thread (no test harness), so nothing else allocates meanwhile.
fn count<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let region = Region::new(GLOBAL);
    let out = f();
    let stats = region.change();
    (out, stats.allocations + stats.reallocations)
}

/// An output of about `size` bytes, with the exact bodies of each field.
struct Stream {
    text: String,
    thinking: usize,
    content: usize,
    tool_calls: usize,
    calls: usize,
}

/// Prose for SmolLM3, with decoys that look like the start of delimiters (`<thin`, `</tool`,
/// `<|im`, `< `), never a whole one.
const WORDS: &[&str] = &[
    "the",
    "model",
    "reads",
    "a",
    "request",
    "and",
    "plans",
    "its",
    "answer",
    "carefully",
    "weather",
    "in",
    "Paris",
    "tomorrow",
    "x < y",
    "<thin",
    "</tool",
    "<|im",
    "a<b",
    "résumé",
    "数据",
    "🙂",
    "if",
    "then",
];

/// Prose for the word-boundary template: its delimiters' words right after word characters,
/// ASCII or not (`éTHINK:`, `xANSWER`), or followed by one (`ANSWERS`, `<invokes`).
const WORD_BOUNDARY_WORDS: &[&str] = &[
    "the",
    "résumé",
    "数据",
    "東京",
    "🙂",
    "a\u{301}",
    "THINKING",
    "éTHINK:",
    "_THINK:",
    "xANSWER",
    "ANSWERS",
    "ANSWER_",
    "<invokes",
    "<invoke_x",
    "<invokeé",
    "name=\"x\"",
    "1",
    "-",
];

/// Deterministic prose from `words`, no whitespace at the end.
fn prose_from(words: &[&str], size: usize, seed: usize) -> String {
    let mut out = String::with_capacity(size + 16);
    let mut i = seed as u64;
    while out.len() < size {
        i = i
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let w = words[(i >> 33) as usize % words.len()];
        out.push_str(w);
        out.push(if (i >> 20).is_multiple_of(11) {
            '\n'
        } else {
            ' '
        });
    }
    out.push('.');
    out
}

/// How a template writes the parts of a stream.
struct Format {
    /// The prose's words.
    words: &'static [&'static str],
    /// The reasoning region's delimiters and what its body has around the prose.
    reasoning: (&'static str, &'static str, &'static str),
    /// Tool call `i`: its body, and the text holding it (with its delimiters).
    call: fn(usize) -> (String, String),
    /// The end of the output.
    end: &'static str,
}

/// An output of about `size` bytes in `format`: reasoning, then content with ten tool calls,
/// with the exact bodies of each field.
fn stream_in(format: &Format, size: usize) -> Stream {
    let (open, close, pad) = format.reasoning;
    let thinking = format!("{pad}{}{pad}", prose_from(format.words, size / 2, 1));
    let mut text = format!("{open}{thinking}{close}");
    let mut content = 0;
    let mut tool_calls = 0;
    let calls = 10;
    for i in 0..calls {
        let part = prose_from(format.words, size / 2 / (calls + 1), 100 + i);
        content += part.len();
        text.push_str(&part);
        let (body, call) = (format.call)(i);
        tool_calls += body.len();
        text.push_str(&call);
    }
    let last = prose_from(format.words, size / 2 / (calls + 1), 999);
    content += last.len();
    text.push_str(&last);
    text.push_str(format.end);
    Stream {
        text,
        thinking: thinking.len(),
        content,
        tool_calls,
        calls,
    }
}

/// A SmolLM3 output of about `size` bytes.
fn stream(size: usize) -> Stream {
    stream_in(
        &Format {
            words: WORDS,
            reasoning: ("<think>", "</think>", ""),
            call: |i| {
                let body = format!(
                    "{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris\", \"day\": \
                     {i}}}}}"
                );
                // The newline before `<tool_call>` belongs to its open delimiter
                // (`\s*<tool_call>`).
                let call = format!("\n<tool_call>{body}</tool_call>");
                (body, call)
            },
            end: "<|im_end|>",
        },
        size,
    )
}

/// An output of about `size` bytes for the word-boundary template.
fn word_boundary_stream(size: usize) -> Stream {
    stream_in(
        &Format {
            words: WORD_BOUNDARY_WORDS,
            reasoning: ("THINK:", "ANSWER:", " "),
            call: |i| {
                let body = format!("<parameter name=\"day\">{i}</parameter>");
                // The newline belongs to the open delimiter (`\s*<invoke\b...`).
                let call = format!("\n<invoke id=\"{i}\" name=\"get_weather\">{body}</invoke>");
                (body, call)
            },
            end: "",
        },
        size,
    )
}

/// Per field: bytes routed, regions opened, regions closed.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    bytes: [usize; 3],
    opens: [usize; 3],
    closes: [usize; 3],
}

/// A router of a generated item, as `Item::router::<4096>`.
type MakeRouter<F> = fn() -> Result<Router<StaticRoutes<'static>, F, 4096>, TableError>;

/// Routes `s` with the no-heap router of a generated item in 1-byte and 4-byte chunks:
/// asserts zero heap allocations across `router()`, every `feed` and `finish`, and that the
/// bytes, opens and closes of each field (`slot`: 0 reasoning, 1 tool calls, 2 content) are
/// the stream's.
fn router_feeds_without_heap_allocations<F: FieldId>(
    what: &str,
    s: &Stream,
    router: MakeRouter<F>,
    slot: fn(F) -> usize,
    lenient: bool,
) {
    for chunk in [1usize, 4] {
        let input = pieces(&s.text, chunk);
        let mut tally = Tally::default();
        let (result, allocations) = count(|| {
            let mut router = router()?;
            router.set_lenient(lenient);
            let mut on_event = |event: RegionEvent<'_, F>| match event {
                RegionEvent::Open { field, .. } => tally.opens[slot(field)] += 1,
                RegionEvent::Chunk { field, text } => tally.bytes[slot(field)] += text.len(),
                RegionEvent::Close { field, .. } => tally.closes[slot(field)] += 1,
            };
            for piece in &input {
                router.feed(piece, &mut on_event)?;
            }
            router.finish(&mut on_event)?;
            Ok::<_, Box<dyn std::error::Error>>(())
        });
        result.expect("routing succeeds");
        assert_eq!(
            allocations, 0,
            "{what}, {chunk}-byte chunks: heap allocations in the router"
        );
        let content_regions = s.calls + 1;
        assert_eq!(
            tally,
            Tally {
                bytes: [s.thinking, s.tool_calls, s.content],
                opens: [1, s.calls, content_regions],
                closes: [1, s.calls, content_regions],
            },
            "{what}, {chunk}-byte chunks"
        );
        println!(
            "core router, {what}, {chunk}-byte chunks: {} feeds over {} bytes, 0 allocations",
            input.len(),
            s.text.len()
        );
    }
}

fn core_router_feeds_without_heap_allocations() {
    let s = stream(1 << 20);
    assert!(s.text.len() >= 1 << 20);
    // Deserialize the embedded DFAs once (no heap either, but keep it out of the loop).
    SmolLm3::routes().expect("embedded tables");
    router_feeds_without_heap_allocations(
        "smollm3",
        &s,
        SmolLm3::router::<4096>,
        smollm3_slot,
        false,
    );
}

fn smollm3_slot(field: SmolLm3) -> usize {
    match field {
        SmolLm3::Thinking => 0,
        SmolLm3::ToolCalls => 1,
        SmolLm3::Content => 2,
    }
}

/// Lenient mode's JSON-aware closes in the no-heap router: every call's JSON holds its own
/// close delimiter (and an escaped quote before it) inside a string, which must not close
/// the region, and tracking the strings allocates nothing.
fn lenient_router_feeds_without_heap_allocations() {
    let s = stream_in(
        &Format {
            words: WORDS,
            reasoning: ("<think>", "</think>", ""),
            call: |i| {
                let body = format!(
                    "{{\"name\": \"web_search\", \"arguments\": {{\"query\": \"why \\\" </tool_call> ends {i}\"}}}}"
                );
                let call = format!("\n<tool_call>{body}</tool_call>");
                (body, call)
            },
            end: "<|im_end|>",
        },
        1 << 20,
    );
    router_feeds_without_heap_allocations(
        "smollm3 lenient",
        &s,
        SmolLm3::router::<4096>,
        smollm3_slot,
        true,
    );
}

fn alloc_api_allocations_per_feed_and_region() {
    let s = stream(1 << 20);
    let template = SmolLm3::template().expect("embedded tables");
    let input = pieces(&s.text, 4);
    let mut parser = parser_runtime::ResponseParser::new(template, "").expect("parser");
    let mut quiet_feeds = 0usize;
    let mut quiet_allocations = 0usize;
    let mut total = 0usize;
    let mut regions = 0usize;
    for piece in &input {
        let (events, n) = count(|| parser.feed(piece).expect("feed"));
        total += n;
        regions += events
            .iter()
            .filter(|e| matches!(e, Event::RegionClose { .. }))
            .count();
        if events.is_empty() {
            quiet_feeds += 1;
            quiet_allocations += n;
        }
    }
    let ((message, _), n) = count(|| parser.finalize().expect("finalize"));
    total += n;
    regions += 1;
    assert_eq!(
        message["tool_calls"].as_array().map(Vec::len),
        Some(s.calls),
        "tool calls"
    );
    // A feed that only holds text back returns an empty Vec (no allocation); the hold buffer
    // grows a few times, then its capacity is reused.
    assert!(
        quiet_allocations <= 4,
        "{quiet_allocations} allocations in {quiet_feeds} feeds without events"
    );
    println!(
        "alloc API, 4-byte chunks: {} feeds, {total} allocations ({:.2} per feed), {regions} \
         regions ({:.0} allocations per region), {quiet_allocations} in {quiet_feeds} feeds \
         without events",
        input.len(),
        total as f64 / input.len() as f64,
        total as f64 / regions as f64
    );
}

fn word_boundary_router_feeds_without_heap_allocations() {
    let s = word_boundary_stream(1 << 20);
    WordBoundary::routes().expect("embedded tables");
    router_feeds_without_heap_allocations(
        "word boundaries",
        &s,
        WordBoundary::router::<4096>,
        |field| match field {
            WordBoundary::ReasoningContent => 0,
            WordBoundary::ToolCalls => 1,
            WordBoundary::Content => 2,
        },
        false,
    );
}

fn main() {
    core_router_feeds_without_heap_allocations();
    word_boundary_router_feeds_without_heap_allocations();
    lenient_router_feeds_without_heap_allocations();
    alloc_api_allocations_per_feed_and_region();
    println!("allocations: ok");
}

//! Time bounds on hostile output (issue 17, item 4): parsing takes time linear in the output's
//! length, on every vendored template and on the shapes that used not to.
//!
//! Each check times one piece of work at two sizes four times apart and asserts that the time
//! grows by less than [`ratio`] (linear is about 4x, quadratic about 16x). The sizes are timed
//! in turn, five turns each, every turn repeated to at least 20 ms (three turns of 5 ms below
//! full size), and the fastest turn of each kept; a ratio over the bound is measured again,
//! up to four times, and then once more at the next size up (4n against 16n), before it
//! fails: work that only copies memory runs from the caches at n but not at 4n (up to about
//! 12x for 4x the input), while past the caches a linear cost is about 4x and a quadratic one
//! 16x again. There are no absolute time thresholds, so a slow or
//! busy machine passes. The sweep over the vendored templates allows [`sweep_ratio`]: some of
//! its outputs parse at gigabytes per second, where the larger input no longer fits the
//! caches and each byte costs up to about 1.6 times more.
//!
//! Sizes: about 1 MB and 4 MB of output with `RTPL_LINEAR_FULL=1` (CI runs this binary on a
//! release build that way: `.ci/run`, with `GLIBC_TUNABLES` keeping glibc's allocator from
//! handing pages back to the system between runs, whose page faults would be paid above 1 MB
//! only); by default a sixteenth of that, which keeps `cargo test`
//! in debug builds quick while a quadratic cost still shows (the ratio does not depend on
//! the size once fixed costs are small). The sweep has one test per vendored template
//! (`hostile_NAME`: `cargo test --test linear hostile_gemma_4` runs one), `RTPL_LINEAR_VERBOSE=1`
//! prints every measurement and `RTPL_LINEAR_NO_MEMO=1`
//! turns the router's outcome memo off (to see what it saves).

use std::time::{Duration, Instant};

use parser_runtime::{CompiledTemplate, ParseError, ParserOptions, ResponseParser, TransformLimit};
use serde_json::{json, Value};
use workspace_tests::{delimiter_pieces, delimiters_of, workspace_root};

/// The bound on t(4n) / t(n): 6 at full size; 10 at a sixteenth, the debug run of `cargo
/// test --workspace`, which shares the machine with the other test binaries (measured there
/// under load: up to 7.6x on `.{100}X`). Quadratic is about 16.
fn ratio() -> f64 {
    if full() {
        6.0
    } else {
        10.0
    }
}

/// The bound on t(4n) / t(n) in the sweep over the vendored templates (memory-bound runs): 8
/// at full size, 12 at a sixteenth (measured under load: up to 12.2x on deepseek-r1-0528's
/// mixed output, whose fastest turn was 10.3x).
fn sweep_ratio() -> f64 {
    if full() {
        8.0
    } else {
        12.0
    }
}

/// Whether to run at full size (1 MB and 4 MB).
fn full() -> bool {
    std::env::var_os("RTPL_LINEAR_FULL").is_some_and(|v| v != "0")
}

/// The smaller of the two sizes, in bytes: `full` at full size, a sixteenth of it otherwise.
fn small(full_size: usize) -> usize {
    if full() {
        full_size
    } else {
        full_size / 16
    }
}

/// The time of `reps` runs of `work`.
fn time(reps: usize, work: &impl Fn()) -> Duration {
    let t = Instant::now();
    for _ in 0..reps {
        work();
    }
    t.elapsed()
}

/// How many runs of `work` take at least 20 ms at full size, 5 ms otherwise (so that timer
/// resolution and one-off costs do not weigh on a fast run). Also the warm-up (first-use
/// tables, the allocator).
fn reps_for(work: &impl Fn()) -> usize {
    let once = time(1, work).max(Duration::from_micros(1));
    let sample = Duration::from_millis(if full() { 20 } else { 5 });
    (sample.as_nanos() / once.as_nanos()).clamp(1, 1000) as usize
}

/// Asserts that `run` on `make(4 * n)` takes less than [`ratio`] times what it takes on
/// `make(n)`. The inputs are built outside the timing.
fn assert_linear<I>(name: &str, n: usize, make: impl Fn(usize) -> I, run: impl Fn(&I)) {
    assert_linear_within(ratio(), name, n, make, run);
}

/// [`assert_linear`] with the bound `bound`. The two sizes are timed in turn, five times
/// each (three below full size), and the fastest of each kept: other work on the machine only
/// ever adds time, and taking turns spreads it over both. A ratio over the bound is measured
/// again, up to four times, before it fails. One measurement at a time: the tests of this
/// binary run on parallel threads, which would time each other.
fn assert_linear_within<I>(
    bound: f64,
    name: &str,
    n: usize,
    make: impl Fn(usize) -> I,
    run: impl Fn(&I),
) {
    let (a, b) = (make(n), make(4 * n));
    let (run_a, run_b) = (|| run(&a), || run(&b));
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let reps = reps_for(&run_a);
    let turns = if full() { 5 } else { 3 };
    let mut best = f64::INFINITY;
    let mut seen = Vec::new();
    for _ in 0..4 {
        let (mut ta, mut tb) = (Duration::MAX, Duration::MAX);
        for _ in 0..turns {
            ta = ta.min(time(reps, &run_a));
            tb = tb.min(time(reps, &run_b));
        }
        let ratio = tb.as_secs_f64() / ta.as_secs_f64().max(1e-9);
        seen.push(format!("{ta:?} -> {tb:?} ({ratio:.1}x)"));
        if std::env::var_os("RTPL_LINEAR_VERBOSE").is_some() {
            eprintln!("{name}: {n} bytes: {ta:?}, {}: {tb:?} ({ratio:.1}x)", 4 * n);
        }
        best = best.min(ratio);
        if best < bound {
            return;
        }
    }
    // Over the bound at n -> 4n: measured again at 4n -> 16n before it fails. Work that only
    // copies memory runs from the caches (and reuses the allocator's pages) at n but not at
    // 4n, which can cost up to about 12x for 4x the input (seen on lenient mode's copies of
    // a 4 MB region); past the caches, both sizes pay the same per byte, so a linear cost is
    // about 4x there, while a quadratic one is 16x again.
    let c = make(16 * n);
    let run_c = || run(&c);
    let reps = reps_for(&run_b);
    run_c();
    let mut next = f64::INFINITY;
    for _ in 0..turns {
        let tb = time(reps, &run_b);
        let tc = time(reps, &run_c);
        next = next.min(tc.as_secs_f64() / tb.as_secs_f64().max(1e-9));
        if std::env::var_os("RTPL_LINEAR_VERBOSE").is_some() {
            eprintln!(
                "{name}: {} bytes: {tb:?}, {}: {tc:?} (next size)",
                4 * n,
                16 * n
            );
        }
    }
    if next < bound {
        eprintln!(
            "{name}: 4x the input took {best:.1}x the time, but {next:.1}x at the next size (past the caches)"
        );
        return;
    }
    panic!(
        "{name}: 4x the input took {best:.1}x the time (bound {bound}x), and {next:.1}x at the next size: {}",
        seen.join(", ")
    );
}

fn template(name: &str) -> CompiledTemplate {
    template_build::load_file(
        &workspace_root()
            .join("templates")
            .join(format!("{name}.json")),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Feeds `output` in 4 KiB chunks and finalizes. A region that fails to parse stays open (as
/// in the reference) and stops each later feed at its close, so after an error the rest is
/// fed to a new parser: every byte is routed once, whatever fails. Returns how many errors
/// there were.
fn parse_all(t: &CompiledTemplate, output: &str, options: ParserOptions) -> usize {
    let new = || {
        let mut p = ResponseParser::with_options(t, "", &[], options).unwrap();
        p.set_hold_limit(usize::MAX);
        // `RTPL_LINEAR_NO_MEMO=1`: without the router's outcome memo, to compare.
        if std::env::var_os("RTPL_LINEAR_NO_MEMO").is_some() {
            p.set_rescan_memo(false);
        }
        p
    };
    let mut p = new();
    let mut errors = 0;
    let mut rest = output;
    while !rest.is_empty() {
        let mut n = rest.len().min(4096);
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        if p.feed(&rest[..n]).is_err() {
            errors += 1;
            p = new();
        }
        rest = &rest[n..];
    }
    errors + usize::from(p.finalize().is_err())
}

/// `piece` repeated to `size` bytes.
fn repeat(piece: &str, size: usize) -> String {
    piece.repeat(size / piece.len().max(1) + 1)
}

// ---------------------------------------------------------------------------------------------
// The shapes that were super-linear.

/// Gemma 4: one call with many `<|"|>` strings and bare keys (the `string_delims` rewrite
/// replaced each string's sentinel with a pass over the whole body).
#[test]
fn gemma4_string_delimiters() {
    let t = template("gemma-4");
    assert_linear(
        "gemma-4 <|\"|> strings",
        small(1 << 20),
        |size| {
            let mut out = String::from("<|tool_call>call:f{");
            let mut i = 0;
            while out.len() < size {
                out.push_str(&format!("k{i}:<|\"|>v{i}<|\"|>,"));
                i += 1;
            }
            out.push_str("z:1}<tool_call|>");
            out
        },
        |out| assert_eq!(parse_all(&t, out, ParserOptions::default()), 0),
    );
}

/// DeepSeek-R1 as trl publishes it (`templates/upstream/deepseek-r1.json`; the vendored
/// `deepseek-r1.json` no longer has this open): a run of `<｜end▁of▁sentence｜>` with no
/// `</think>`, whose open `(?=[\s\S]*?</think>)` stays pending to the end (each close commit
/// rescanned to the end: the former "cascade"), one-shot and in 16-byte chunks.
#[test]
fn deepseek_r1_repeated_end_of_sentence() {
    let t = template("upstream/deepseek-r1");
    let make = |size| repeat("<｜end▁of▁sentence｜>", size);
    assert_linear("deepseek-r1 one-shot", small(1 << 20), make, |out| {
        parser_runtime::parse_response(&t, out, "", &[]).unwrap();
    });
    assert_linear("deepseek-r1 16-byte chunks", small(1 << 18), make, |out| {
        let mut p = ResponseParser::new(&t, "").unwrap();
        for chunk in out.as_bytes().chunks(16) {
            p.feed_bytes(chunk).unwrap();
        }
        p.finalize().unwrap();
    });
}

/// Many regions of a field with `join` (DeepSeek-R1's content, joined with `\n\n`, closed by
/// each of its closes written with nothing open): each region appends to the joined value
/// (a copy of the whole value per region was quadratic: 1 MB 2 s, 4 MB 30 s), one-shot and in
/// 4 KiB chunks; the message is checked against the join written out.
#[test]
fn many_joined_regions() {
    let t = template_build::compile(&json!({"start_anchor": "S", "fields": {
        "content": {"close_pattern": "\\s*</c>", "repeats": true, "join": "\n\n"}}}))
    .unwrap();
    let make = |size| repeat("ab </c>", size);
    let expected = |out: &str| {
        let parts: Vec<&str> = out.split(" </c>").filter(|p| !p.is_empty()).collect();
        parts.join("\n\n")
    };
    assert_linear("joined regions one-shot", small(1 << 20), make, |out| {
        let m = parser_runtime::parse_response(&t, out, "", &[]).unwrap();
        assert_eq!(m["content"].as_str(), Some(expected(out).as_str()));
    });
    assert_linear("joined regions 4 KiB chunks", small(1 << 20), make, |out| {
        assert_eq!(parse_all(&t, out, ParserOptions::default()), 0);
    });
}

/// Lenient mode on many regions that fail: each one's raw text goes to the content, in
/// reading order (the content's value was remade from all the text so far at each one, and
/// each event carried it: 256 KB 16.6 s and 3.3 GB), and an XML parameter value holding many
/// `</parameter>`s (each looked for the next `<parameter=` to the end of the body).
#[test]
fn lenient_regions_that_fail() {
    let lenient = ParserOptions {
        lenient: true,
        ..ParserOptions::default()
    };
    let hermes = template("hermes");
    let piece = "Hi <tool_call>bogus</tool_call> ";
    assert_linear(
        "hermes malformed calls (lenient)",
        small(1 << 20),
        |size| repeat(piece, size),
        |out| {
            let mut p = ResponseParser::with_options(&hermes, "", &[], lenient).unwrap();
            for chunk in out.as_bytes().chunks(4096) {
                p.feed_bytes(chunk).unwrap();
            }
            let (m, _) = p.finalize().unwrap();
            // Nothing lost: the whole output is the content (stripped, as a text field is).
            assert_eq!(m["content"].as_str(), Some(out.trim()));
        },
    );
    let coder = template("qwen3-coder");
    let value_with_closes = |size| {
        let mut out = String::from("<tool_call>\n<function=f>\n<parameter=x>\n");
        out.push_str(&repeat("a</parameter>", size));
        out.push_str("\n</parameter>\n</function>\n</tool_call>");
        out
    };
    assert_linear(
        "qwen3-coder </parameter> in a value (lenient)",
        small(1 << 20),
        value_with_closes,
        |out| {
            assert_eq!(parse_all(&coder, out, lenient), 0);
        },
    );
}

/// The cascade in general: a long-pending delimiter (an open over any text without `<`, a
/// whole-text look-ahead that never matches, a greedy part that gives up late) with
/// commits behind it.
#[test]
fn long_pending_delimiters_do_not_cascade() {
    // A field `a` opened by `open` and closed right after (an empty close that looks at the
    // next character), and an implicit field for the rest.
    let opened_by = |open: &str| {
        json!({"start_anchor": "S", "fields": {
            "a": {"open_pattern": open, "close_pattern": "(?=.)"}, "rest": {}}})
    };
    let cases = [
        // The README's example: `[^<]*` keeps the open pending over text without `<`.
        (
            json!({"start_anchor": "S", "fields": {
                "content": {"open_pattern": "(?:<\\|m\\|>)?[^<]*<\\|text\\|>", "close": "<|end|>"},
                "rest": {"close": "!"}}}),
            "ab!",
            "",
        ),
        (
            json!({"start_anchor": "S", "fields": {
                "r": {"open_pattern": "(?=[\\s\\S]*?</think>)", "close": "</think>"},
                "c": {"close_pattern": "x\\s*|$"}}}),
            "ax",
            "",
        ),
        // A greedy tail that fails late: each `a` matches alone after a walk to the end.
        (opened_by("a(?:[ab]*c)?"), "ab", ""),
        // The same with a look-ahead after the greedy part (its walks carry a match).
        (opened_by("a(?:[ab]*c)?(?=b)"), "ab", ""),
        // A trailing look-ahead that reads to the end at every candidate.
        (opened_by("a(?=[^z]*y)"), "ab", "y"),
    ];
    for (spec, unit, tail) in cases {
        let t = template_build::compile(&spec).unwrap();
        // Every few bytes a region opens and closes: a microsecond or more per byte.
        assert_linear(
            &format!("{spec} on {unit:?}"),
            small(1 << 17),
            |size| repeat(unit, size) + tail,
            |out| {
                parse_all(&t, out, ParserOptions::default());
            },
        );
    }
}

/// A delimiter with a long counted repetition keeps one walk per count live; they are
/// deduplicated in constant time each, so a byte costs at most the DFA's states, and the
/// time is linear once the walk list is full (sizes past the count).
#[test]
fn counted_repetitions() {
    // The issue's counts at full size; a tenth by default (same shapes, quicker in debug).
    // About 25 ns per live walk per byte: 1000 walks make 40 KB/s.
    let (dots, ays) = if full() { (1000, 10_000) } else { (100, 1000) };
    let cases = [
        // Over `y`s every walk lives `dots` + 1 bytes: `dots` of them are live at once, from
        // the first `dots` bytes on.
        (format!(".{{{dots}}}X"), "y".to_owned(), 4 * dots),
        // Runs of `ays - 1` letters: no match completes, and a run of them costs the same
        // (`ays`^2 / 2 walk steps) wherever it is.
        (
            format!("a{{{ays}}}"),
            format!("{}b", "a".repeat(ays - 1)),
            ays,
        ),
    ];
    for (pattern, unit, n) in cases {
        let t = template_build::compile(&json!({"start_anchor": "S", "fields": {
            "x": {"open_pattern": pattern, "close": "</x>"}, "content": {}}}))
        .unwrap();
        assert_linear(
            &pattern,
            n,
            |s| repeat(&unit, s),
            |out| {
                parse_all(&t, out, ParserOptions::default());
            },
        );
    }
}

/// A `start_anchor_pattern` that backtracks over the whole prefix at every match
/// (`a(?=.*z)`): the search stops at its time budget with a typed error, so its cost is
/// bounded; literal anchors and patterns without look-around stay linear.
#[test]
fn start_anchor_search_is_bounded() {
    let hostile = template_build::compile(&json!({
        "start_anchor_pattern": "a(?=.*z)", "fields": {"content": {}}}))
    .unwrap();
    let budget = Duration::from_millis(200);
    let options = ParserOptions {
        start_anchor_budget: Some(budget),
        ..ParserOptions::default()
    };
    let prefix = format!("{}z", "a".repeat(1 << 20));
    let started = Instant::now();
    match ResponseParser::with_options(&hostile, &prefix, &[], options) {
        Err(ParseError::StartAnchor(parser_runtime::tables::AnchorError::Budget { millis })) => {
            assert_eq!(millis, 200);
        }
        other => panic!(
            "expected the start-anchor budget error, got {:?}",
            other.map(|_| ())
        ),
    }
    // One search past the budget at most: a few budgets, not the quadratic minutes.
    assert!(started.elapsed() < budget * 20, "{:?}", started.elapsed());
    // Its cost no longer grows with the prefix: 4x the prefix, about the same time.
    let tight = ParserOptions {
        start_anchor_budget: Some(Duration::from_millis(50)),
        ..ParserOptions::default()
    };
    assert_linear(
        "start_anchor_pattern a(?=.*z) under a budget",
        small(1 << 20),
        |size| format!("{}z", "a".repeat(size)),
        |prefix| {
            let result = ResponseParser::with_options(&hostile, prefix, &[], tight);
            assert!(matches!(result, Err(ParseError::StartAnchor(_))));
        },
    );
    // Under the budget the result is the reference's: the end of the last match.
    let short = format!("{}z", "a".repeat(100));
    assert_eq!(
        hostile.start_anchor.last_end_within(&short, Some(budget)),
        Ok(100)
    );
    for (spec, unit) in [
        (
            json!({"start_anchor": "<|im_start|>assistant\n", "fields": {"content": {}}}),
            "<|im_start|>assistant\nhi ",
        ),
        (
            json!({"start_anchor_pattern": "<\\|im_start\\|>(?:assistant|user)\\n", "fields": {"content": {}}}),
            "<|im_start|>user\nhi ",
        ),
        (
            json!({"start_anchor_pattern": "(?:a+)+b", "fields": {"content": {}}}),
            "aaaab",
        ),
    ] {
        let t = template_build::compile(&spec).unwrap();
        assert_linear(
            &format!("{spec}"),
            small(1 << 20),
            |s| repeat(unit, s),
            |prefix| {
                ResponseParser::with_options(&t, prefix, &[], ParserOptions::default()).unwrap();
            },
        );
    }
}

/// A transform that copies `{content}` 200 times: each call past the cap fails with a typed
/// error naming the field, instead of hundreds of megabytes of message.
#[test]
fn transform_output_is_capped() {
    let copies: Vec<Value> = (0..200).map(|_| json!("{content}")).collect();
    let t = template_build::compile(&json!({"start_anchor": "S", "fields": {
        "tool_calls": {"open": "<c>", "close": "</c>", "repeats": true, "content": "json",
                       "transform": {"copies": copies}},
        "content": {}}}))
    .unwrap();
    let call = format!("<c>{{\"a\": \"{}\"}}</c>", "x".repeat(100_000));
    let output = call.repeat(21);
    let err = parser_runtime::parse_response(&t, &output, "", &[]).unwrap_err();
    match &err {
        ParseError::Content { field, source, .. } => {
            assert_eq!(field, "tool_calls");
            let parser_runtime::ContentError::TransformTooLarge { limit } = source else {
                panic!("{err}");
            };
            assert_eq!(*limit, TransformLimit::DEFAULT.bytes_for(call.len() - 7));
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("tool_calls"), "{err}");
    // Raised, the same output parses.
    let mut p = ResponseParser::with_options(
        &t,
        "",
        &[],
        ParserOptions {
            transform_limit: TransformLimit {
                per_input_byte: 250,
                ..TransformLimit::DEFAULT
            },
            ..ParserOptions::default()
        },
    )
    .unwrap();
    p.feed(&call).unwrap();
    let (m, _) = p.finalize().unwrap();
    assert_eq!(m["tool_calls"][0]["copies"].as_array().unwrap().len(), 200);
    // A transform that names the content once is far from the cap.
    let once = template_build::compile(&json!({"start_anchor": "S", "fields": {
        "tool_calls": {"open": "<c>", "close": "</c>", "repeats": true, "content": "json",
                       "transform": {"type": "function", "function": {"arguments": "{content}", "raw": "{content}"}}},
        "content": {}}}))
    .unwrap();
    parser_runtime::parse_response(&once, &output, "", &[]).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Every vendored template on hostile output.

/// The hostile outputs of a template, by name, each `size` bytes or a little more.
fn hostile_outputs(spec: &Value, size: usize) -> Vec<(&'static str, String)> {
    let pieces = delimiter_pieces(spec);
    let (opens, closes) = (
        delimiters_of(spec, &["open"]),
        delimiters_of(spec, &["close"]),
    );
    // Near-misses: each delimiter without its last character, and with it changed.
    let near: Vec<String> = pieces
        .iter()
        .flat_map(|p| {
            let cut = p.char_indices().last().map_or(0, |(i, _)| i);
            [p[..cut].to_owned(), format!("{}#", &p[..cut])]
        })
        .filter(|p| !p.is_empty())
        .collect();
    // Partial delimiters: every proper prefix of every delimiter, shortest first.
    let prefixes: Vec<&str> = pieces
        .iter()
        .flat_map(|p| p.char_indices().skip(1).map(move |(i, _)| &p[..i]))
        .collect();
    let junk = [
        "\"", "{", "}", "\\", "<", ">", "\n", " ", "a", "<|", "|>", ":", ",", "[", "]", "(", ")",
        "=",
    ];
    let mut out = Vec::new();
    // Every delimiter repeated, one block per delimiter.
    let block = size / pieces.len().max(1) + 1;
    out.push((
        "repeated",
        pieces.iter().map(|p| repeat(p, block)).collect(),
    ));
    // All delimiters in turn, over and over.
    out.push(("cycled", repeat(&pieces.concat(), size)));
    // Opens that are never closed (each open inside the region the previous one opened),
    // and closes with nothing open.
    out.push(("opens only", repeat(&opens.concat(), size)));
    out.push(("closes only", repeat(&closes.concat(), size)));
    out.push(("near-misses", repeat(&near.join(" "), size)));
    out.push(("partial delimiters", repeat(&prefixes.concat(), size)));
    // Each opening delimiter followed by one long string that never ends (and no close).
    let long = |opens: &[String], quoted: bool| {
        let mut s = String::new();
        let each = size / opens.len().max(1) + 1;
        for o in opens {
            s.push_str(o);
            if quoted {
                s.push_str("{\"k\": \"");
            }
            s.push_str(&"x ".repeat(each / 2));
        }
        s
    };
    out.push(("unclosed long strings", long(&pieces, true)));
    out.push(("unclosed long text", long(&pieces, false)));
    // Each open, then a JSON string of escapes and escaped quotes that never ends, with the
    // closes written inside it (a JSON-aware reader stays in the string throughout).
    let mut escapes = String::new();
    let each = size / opens.len().max(1) + 1;
    for o in &opens {
        escapes.push_str(o);
        escapes.push_str("{\"k\": [\"");
        let start = escapes.len();
        while escapes.len() - start < each {
            escapes.push_str("\\\\\\\"");
            escapes.push_str(&closes.concat());
        }
    }
    out.push(("unterminated escapes", escapes));
    // A deterministic mix of delimiters, near-misses and JSON/XML-ish junk.
    let mut mixed = String::new();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    while mixed.len() < size {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let r = (x >> 33) as usize;
        match r % 4 {
            0 => mixed.push_str(&pieces[r / 4 % pieces.len()]),
            1 if !near.is_empty() => mixed.push_str(&near[r / 4 % near.len()]),
            _ => mixed.push_str(junk[r / 4 % junk.len()]),
        }
    }
    out.push(("mixed", mixed));
    out
}

// One test per vendored template (`hostile_NAME`, written by build.rs from
// `templates/*.json`), each running [`hostile_sweep`].
include!(concat!(env!("OUT_DIR"), "/linear_templates.rs"));

/// The published originals in `templates/upstream/` (the templates we changed) run the same
/// sweep ([`hostile_sweep`]): their users may still load them.
#[test]
fn upstream_templates_on_hostile_output() {
    let mut names: Vec<String> = std::fs::read_dir(workspace_root().join("templates/upstream"))
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            (path.extension()? == "json")
                .then(|| format!("upstream/{}", path.file_stem().unwrap().to_string_lossy()))
        })
        .collect();
    names.sort();
    assert!(!names.is_empty());
    for name in names {
        // `RTPL_LINEAR_ONLY=name` runs one template (to look at one failure).
        if std::env::var("RTPL_LINEAR_ONLY").is_ok_and(|only| only != name) {
            continue;
        }
        hostile_sweep(&name);
    }
}

/// The generated tests cover every vendored template (at least the twenty-odd there are).
#[test]
fn every_vendored_template_has_a_sweep() {
    const { assert!(VENDORED_TEMPLATES >= 20) };
    let on_disk = std::fs::read_dir(workspace_root().join("templates"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
        .count();
    assert_eq!(on_disk, VENDORED_TEMPLATES, "rebuild: templates/ changed");
}

/// The vendored template `name` parses about 1 MB and 4 MB (a sixteenth by default) of each
/// kind of hostile output built from its own delimiters in linear time: repeated and cycled
/// delimiters, opens never closed, closes with nothing open, near-misses, every partial
/// delimiter, unclosed regions with long strings, unterminated escapes, and a mix.
fn hostile_sweep(name: &str) {
    let path = workspace_root()
        .join("templates")
        .join(format!("{name}.json"));
    let spec: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let spec = spec.get("response_template").cloned().unwrap_or(spec);
    let t = template_build::load_file(&path).unwrap();
    let n = small(1 << 20);
    let kinds: Vec<&str> = hostile_outputs(&spec, 64).iter().map(|(k, _)| *k).collect();
    let lenient = ParserOptions {
        lenient: true,
        ..ParserOptions::default()
    };
    for (kind, (mode, options)) in kinds.iter().flat_map(|kind| {
        [("", ParserOptions::default()), (" (lenient)", lenient)].map(|mode| (*kind, mode))
    }) {
        assert_linear_within(
            sweep_ratio(),
            &format!("{name}: {kind}{mode}"),
            n,
            |size| {
                hostile_outputs(&spec, size)
                    .into_iter()
                    .find(|(k, _)| *k == kind)
                    .unwrap()
                    .1
            },
            |out| {
                parse_all(&t, out, options);
            },
        );
    }
}

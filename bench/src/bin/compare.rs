//! Compares our parser with `smg-response-template` 0.1.0 (and, through
//! `scripts/bench_reference.py`, with the reference, transformers 5.23.0) on the generated
//! inputs of `response_bench`, in the same process, and prints a Markdown table.
//!
//! ```text
//! compare [--out DIR] [--runs N] [--only SUBSTR]   generate, check, write inputs, measure
//! compare --table-only [--out DIR]                 print the table from DIR/rust.json and
//!                                                  DIR/reference.json (if present)
//! ```
//!
//! Measuring: every input is first parsed by every implementation in every mode and the
//! messages compared (serialized JSON, key order included) with ours one-shot; a mismatch is
//! reported and that cell is not measured. Then each measurement is the median of `--runs`
//! (default 7, at least 5) runs; a run repeats the parse (construct the parser from the
//! loaded template, feed every chunk, finalize, drop the owned events) enough times to last
//! about 50 ms and reports the time of one parse. MB/s are 10^6 bytes of output per second.
//!
//! Ours uses the templates compiled at build time (the `templates` crate) for smollm3 and
//! qwen3-coder, and the run-time compiled template (`template_build::compile_str`) for
//! regex-heavy. DIR (default `target/bench-inputs`) receives `manifest.json` (one entry per
//! input: id, template, prefix, text file, our message), the `*.txt` inputs and `rust.json`
//! (the measurements), which `scripts/bench_reference.py` reads.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use parser_runtime::router::{RegionEvent, Router};
use parser_runtime::{CompiledTemplate, Event, ResponseParser, StaticRoutes};
use response_bench::{chunks, inputs, Format, Input, MODES, PREFIX};
use serde_json::{json, Map, Value};

/// A parsed message (both crates use a `serde_json` map).
type Message = Map<String, Value>;
use smg_response_template as smg;

struct Args {
    out: PathBuf,
    runs: usize,
    table_only: bool,
    only: Option<String>,
}

fn usage() -> ! {
    eprintln!("usage: compare [--out DIR] [--runs N] [--only SUBSTR] [--table-only]");
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        out: Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-inputs"),
        runs: 7,
        table_only: false,
        only: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--out" => args.out = it.next().unwrap_or_else(|| usage()).into(),
            "--runs" => {
                args.runs = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| usage());
                args.runs = args.runs.max(5);
            }
            "--only" => args.only = Some(it.next().unwrap_or_else(|| usage())),
            "--table-only" => args.table_only = true,
            _ => usage(),
        }
    }
    args
}

/// Ours: construct, feed (one piece or chunks), finalize; the message.
fn ours(
    template: &CompiledTemplate,
    text: &str,
    pieces: Option<&[&str]>,
) -> Result<Message, String> {
    match pieces {
        None => {
            parser_runtime::parse_response(template, text, PREFIX, &[]).map_err(|e| e.to_string())
        }
        Some(pieces) => {
            let mut parser = ResponseParser::new(template, PREFIX).map_err(|e| e.to_string())?;
            for piece in pieces {
                black_box(parser.feed(piece).map_err(|e| e.to_string())?);
            }
            let (message, events) = parser.finalize().map_err(|e| e.to_string())?;
            black_box(events);
            Ok(message)
        }
    }
}

/// Hold buffer of the no-heap router in the benchmark, in bytes.
const CORE_HOLD: usize = 64 << 10;

/// Ours, no-heap router over the embedded tables: construct, feed, finish; the bytes routed
/// to each field (events borrow their text; nothing is allocated).
fn core(
    routes: StaticRoutes<'static>,
    text: &str,
    pieces: Option<&[&str]>,
) -> Result<[usize; 8], String> {
    let mut router: Router<StaticRoutes<'static>, usize, CORE_HOLD> =
        Router::new(routes).map_err(|e| e.to_string())?;
    let mut bytes = [0usize; 8];
    let mut on_event = |e: RegionEvent<'_, usize>| {
        if let RegionEvent::Chunk { field, text } = e {
            bytes[field.min(7)] += text.len();
        }
    };
    match pieces {
        None => router
            .feed(text, &mut on_event)
            .map_err(|e| e.to_string())?,
        Some(pieces) => {
            for piece in pieces {
                router
                    .feed(piece, &mut on_event)
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    router.finish(&mut on_event).map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// The bytes per field of the alloc API's events (what `core` must route).
fn chunk_bytes(template: &CompiledTemplate, text: &str) -> [usize; 8] {
    let mut parser = ResponseParser::new(template, PREFIX).expect("constructs");
    parser.set_hold_limit(usize::MAX);
    let mut events = parser.feed(text).expect("feeds");
    events.extend(parser.finalize().expect("finalizes").1);
    let mut bytes = [0usize; 8];
    for e in events {
        if let Event::RegionChunk { field, text, .. } = e {
            if let Some(i) = template.fields.iter().position(|f| *f.name == *field) {
                bytes[i.min(7)] += text.len();
            }
        }
    }
    bytes
}

/// smg-response-template: the same steps with its API.
fn smg_parse(
    template: &smg::ResponseTemplate,
    text: &str,
    pieces: Option<&[&str]>,
) -> Result<Message, String> {
    match pieces {
        None => smg::parse_response(text, template, PREFIX, &[]).map_err(|e| e.to_string()),
        Some(pieces) => {
            let mut parser =
                smg::ResponseParser::new(template, PREFIX, &[]).map_err(|e| e.to_string())?;
            for piece in pieces {
                black_box(parser.feed(piece).map_err(|e| e.to_string())?);
            }
            let (message, events) = parser.finalize().map_err(|e| e.to_string())?;
            black_box(events);
            Ok(message)
        }
    }
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    if n % 2 == 1 {
        samples[n / 2]
    } else {
        (samples[n / 2 - 1] + samples[n / 2]) / 2.0
    }
}

/// Seconds per call of `f`: the median of `runs` runs, each repeating `f` to last ~50 ms.
fn measure(runs: usize, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    f();
    let once = start.elapsed().as_secs_f64().max(1e-9);
    let iters = ((0.05 / once).ceil() as usize).clamp(1, 1_000_000);
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..iters {
                    f();
                }
                start.elapsed().as_secs_f64() / iters as f64
            })
            .collect(),
    )
}

fn first_difference(a: &str, b: &str) -> String {
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let mut at = at.saturating_sub(40);
    while !a.is_char_boundary(at) || !b.is_char_boundary(at) {
        at -= 1;
    }
    let cut = |s: &str| s[at..].chars().take(100).collect::<String>();
    format!("ours …{:?} vs …{:?}", cut(a), cut(b))
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(
        path,
        serde_json::to_string_pretty(value).expect("serializes"),
    )
    .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

fn read_json(path: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

fn run(args: &Args) -> Value {
    std::fs::create_dir_all(&args.out)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", args.out.display()));
    let regex_heavy_runtime = Format::RegexHeavy.runtime_template();
    let ours_template = |format: Format| -> &CompiledTemplate {
        match format {
            Format::RegexHeavy => &regex_heavy_runtime,
            other => other.static_template(),
        }
    };
    let inputs: Vec<Input> = inputs()
        .into_iter()
        .filter(|i| args.only.as_ref().is_none_or(|o| i.id.contains(o.as_str())))
        .collect();

    let mut manifest = Vec::new();
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut profile = Vec::new();
    for input in &inputs {
        let format = input.format;
        let template = ours_template(format);
        let template_value: Value =
            serde_json::from_str(format.template_json()).expect("template JSON");
        let smg_template = smg::load_response_template(&template_value);
        let text = input.text.as_str();
        let expected = ours(template, text, None)
            .unwrap_or_else(|e| panic!("{}: ours fails one-shot: {e}", input.id));
        let expected_json = serde_json::to_string(&expected).expect("serializes");
        let routes = format.static_routes();
        let expected_bytes = chunk_bytes(template, text);

        let file = format!("{}.txt", input.id);
        std::fs::write(args.out.join(&file), text).expect("writes input");
        manifest.push(json!({
            "id": input.id,
            "format": format.name(),
            "size_label": input.size_label,
            "bytes": text.len(),
            "text_file": file,
            "template": template_value,
            "prefix": PREFIX,
            "expected": expected,
        }));

        for (mode, chunk) in MODES {
            let pieces = chunk.map(|n| chunks(text, n));
            let pieces = pieces.as_deref();
            let mut row = json!({
                "id": input.id, "format": format.name(), "size_label": input.size_label,
                "bytes": text.len(), "mode": mode,
                "ours_s": null, "ours_note": null, "smg_s": null, "smg_note": null,
                "core_s": null, "core_note": null,
            });
            let mut cells = Cells {
                row: &mut row,
                notes: &mut notes,
                tag: format!("{} {mode}", input.id),
                runs: args.runs,
            };
            cells.measure(
                "core",
                core(routes, text, pieces),
                |bytes| {
                    (bytes != expected_bytes).then(|| {
                        format!(
                            "core routes {bytes:?} bytes per field, the parser {expected_bytes:?}"
                        )
                    })
                },
                || {
                    black_box(core(routes, text, pieces).ok());
                },
            );
            cells.measure(
                "ours",
                ours(template, text, pieces),
                |m| differs(&expected_json, &m, "ours differs from ours one-shot"),
                || {
                    black_box(ours(template, text, pieces).ok());
                },
            );
            match &smg_template {
                Err(e) => {
                    cells.row["smg_note"] = json!("refused");
                    if mode == "one-shot" {
                        cells
                            .notes
                            .push(format!("{}: smg refuses the template: {e}", input.id));
                    }
                }
                Ok(smg_template) => cells.measure(
                    "smg",
                    smg_parse(smg_template, text, pieces),
                    |m| differs(&expected_json, &m, "smg's message differs"),
                    || {
                        black_box(smg_parse(smg_template, text, pieces).ok());
                    },
                ),
            }
            eprintln!(
                "{} {mode}: core {} ours {} smg {}",
                input.id,
                fmt_mbps(row["core_s"].as_f64(), text.len()),
                fmt_mbps(row["ours_s"].as_f64(), text.len()),
                fmt_mbps(row["smg_s"].as_f64(), text.len())
            );
            rows.push(row);
        }

        // Where the one-shot time goes: construction, feed, finalize (ours).
        let construct = measure(args.runs, || {
            black_box(ResponseParser::new(template, PREFIX).ok());
        });
        let mut feed_s = Vec::new();
        let mut finalize_s = Vec::new();
        for _ in 0..args.runs {
            let mut parser = ResponseParser::new(template, PREFIX).expect("constructs");
            parser.set_hold_limit(usize::MAX);
            let start = Instant::now();
            black_box(parser.feed(text).expect("feeds"));
            let fed = Instant::now();
            black_box(parser.finalize().expect("finalizes"));
            feed_s.push((fed - start).as_secs_f64());
            finalize_s.push(fed.elapsed().as_secs_f64());
        }
        profile.push(json!({
            "id": input.id, "bytes": text.len(), "construct_s": construct,
            "feed_s": median(feed_s), "finalize_s": median(finalize_s),
        }));
    }
    write_json(&args.out.join("manifest.json"), &Value::Array(manifest));
    let results = json!({"runs": args.runs, "rows": rows, "notes": notes, "profile": profile});
    write_json(&args.out.join("rust.json"), &results);
    results
}

/// The cells of one row of measurements (input and mode), an engine's pair `KEY_s` /
/// `KEY_note` each, and the notes of the run.
struct Cells<'a> {
    row: &'a mut Value,
    notes: &'a mut Vec<String>,
    /// `ID MODE`, starting each note.
    tag: String,
    runs: usize,
}

impl Cells<'_> {
    /// The cell of engine `key`, whose parse gave `result`: when `mismatch` finds no
    /// difference from the expected result, the time of `again` (a parse); otherwise no time,
    /// the note "mismatch" with `mismatch`'s description, or "error" with the error.
    fn measure<T>(
        &mut self,
        key: &str,
        result: Result<T, String>,
        mismatch: impl FnOnce(T) -> Option<String>,
        again: impl FnMut(),
    ) {
        let tag = &self.tag;
        match result.map(mismatch) {
            Ok(None) => self.row[format!("{key}_s")] = json!(measure(self.runs, again)),
            Ok(Some(difference)) => {
                self.notes.push(format!("{tag}: {difference}"));
                self.row[format!("{key}_note")] = json!("mismatch");
            }
            Err(e) => {
                self.notes.push(format!("{tag}: {key} fails: {e}"));
                self.row[format!("{key}_note")] = json!("error");
            }
        }
    }
}

/// `what` and the first difference when `message` serializes otherwise than `expected_json`.
fn differs(expected_json: &str, message: &Message, what: &str) -> Option<String> {
    let json = serde_json::to_string(message).expect("serializes");
    (json != expected_json).then(|| format!("{what}: {}", first_difference(expected_json, &json)))
}

fn fmt_mbps(secs: Option<f64>, bytes: usize) -> String {
    match secs {
        Some(s) if s > 0.0 => {
            let mbps = bytes as f64 / s / 1e6;
            if mbps >= 100.0 {
                format!("{mbps:.0}")
            } else if mbps >= 1.0 {
                format!("{mbps:.1}")
            } else {
                format!("{mbps:.3}")
            }
        }
        _ => "-".into(),
    }
}

fn fmt_ratio(ours: Option<f64>, other: Option<f64>) -> String {
    match (ours, other) {
        (Some(o), Some(t)) if o > 0.0 => {
            let r = t / o;
            if r >= 100.0 {
                format!("{r:.0}x")
            } else {
                format!("{r:.1}x")
            }
        }
        _ => "-".into(),
    }
}

/// The Markdown table of `results` (rust.json), with the reference's column from `reference`
/// (reference.json, written by scripts/bench_reference.py) when given.
fn table(results: &Value, reference: Option<&Value>) -> String {
    let mut out = String::new();
    let runs = results["runs"].as_u64().unwrap_or(0);
    let empty = Vec::new();
    let reference_rows = reference
        .and_then(|r| r["rows"].as_array())
        .unwrap_or(&empty);
    let find_reference = |id: &str, mode: &str| {
        reference_rows
            .iter()
            .find(|r| r["id"] == id && r["mode"] == mode)
    };
    let _ = writeln!(
        out,
        "| input | size | mode | ours core MB/s | ours MB/s | smg MB/s | reference MB/s | ours/smg | core/smg | ours/reference |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut footnotes = Vec::new();
    for row in results["rows"].as_array().unwrap_or(&empty) {
        let id = row["id"].as_str().unwrap_or("");
        let mode = row["mode"].as_str().unwrap_or("");
        let bytes = row["bytes"].as_u64().unwrap_or(0) as usize;
        let ours_s = row["ours_s"].as_f64();
        let smg_s = row["smg_s"].as_f64();
        let core_s = row["core_s"].as_f64();
        let cell = |secs: Option<f64>, note: &Value| match (secs, note.as_str()) {
            (None, Some(note)) => note.to_string(),
            _ => fmt_mbps(secs, bytes),
        };
        let mut reference_ratio = None;
        let (reference_cell, reference_s) = match find_reference(id, mode) {
            None => ("-".to_string(), None),
            Some(r) if r["note"] == "timeout" => {
                // One run did not finish in `timeout` seconds: an upper bound on its speed
                // and a lower bound on the ratio.
                let limit = r["timeout"].as_f64().unwrap_or(0.0);
                reference_ratio = Some(format!("> {}", fmt_ratio(ours_s, Some(limit))));
                (
                    format!(
                        "< {} (1 run stopped after {limit:.0} s)",
                        fmt_mbps(Some(limit), bytes)
                    ),
                    None,
                )
            }
            Some(r) => {
                let secs = r["seconds"].as_f64();
                let mut cell = cell(secs, &r["note"]);
                let n = r["runs"].as_u64().unwrap_or(0);
                if secs.is_some() && n < 5 {
                    let _ = write!(cell, " ({n} run{})", if n == 1 { "" } else { "s" });
                }
                (cell, secs)
            }
        };
        let input = row["format"].as_str().unwrap_or("");
        let input = if input == "regex-heavy" {
            "regex-heavy (run-time compiled)"
        } else {
            input
        };
        let _ = writeln!(
            out,
            "| {input} | {} ({bytes} B) | {mode} | {} | {} | {} | {reference_cell} | {} | {} | {} |",
            row["size_label"].as_str().unwrap_or(""),
            cell(core_s, &row["core_note"]),
            cell(ours_s, &row["ours_note"]),
            cell(smg_s, &row["smg_note"]),
            fmt_ratio(ours_s, smg_s),
            fmt_ratio(core_s, smg_s),
            reference_ratio.unwrap_or_else(|| fmt_ratio(ours_s, reference_s)),
        );
    }
    let _ = writeln!(
        out,
        "\nMB/s = 10^6 bytes of output per second, median of {runs} runs for ours and smg \
         (each run the mean of as many parses as fit in ~50 ms); each parse constructs the \
         parser from the loaded template, feeds, finalizes and drops the owned events. \
         \"ours core\" is the no-heap router (`Router` over the embedded tables, 64 KiB hold \
         buffer, borrowed events, raw regions: no message); \"ours\" is the message-building \
         `ResponseParser` with owned events. Chunks are cut at char boundaries."
    );
    if let Some(r) = reference {
        let _ = writeln!(
            out,
            "Reference: transformers {} (Python {}), median of {} runs unless noted.",
            r["transformers"].as_str().unwrap_or("?"),
            r["python"].as_str().unwrap_or("?"),
            r["runs"].as_u64().unwrap_or(0)
        );
        for note in r["notes"].as_array().unwrap_or(&empty) {
            footnotes.push(format!("reference: {}", note.as_str().unwrap_or("")));
        }
    }
    for note in results["notes"].as_array().unwrap_or(&empty) {
        footnotes.push(note.as_str().unwrap_or("").to_string());
    }
    if !footnotes.is_empty() {
        let _ = writeln!(out, "\nNotes:\n");
        for note in footnotes {
            let _ = writeln!(out, "- {note}");
        }
    }

    // Cost per byte by size (ours), and where the one-shot time goes.
    let _ = writeln!(
        out,
        "\nOurs, cost per byte (ns/B) by size:\n\n| input | mode | 10KB | 100KB | 2MB | 2MB / 10KB |\n|---|---|---:|---:|---:|---:|"
    );
    for format in Format::ALL {
        for (mode, _) in MODES {
            let ns = |label: &str| {
                results["rows"]
                    .as_array()
                    .unwrap_or(&empty)
                    .iter()
                    .find(|r| {
                        r["format"] == format.name()
                            && r["mode"] == mode
                            && r["size_label"] == label
                    })
                    .and_then(|r| Some(r["ours_s"].as_f64()? * 1e9 / r["bytes"].as_f64()?))
            };
            let (small, mid, large) = (ns("10KB"), ns("100KB"), ns("2MB"));
            if small.is_none() && mid.is_none() && large.is_none() {
                continue;
            }
            let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
            let ratio = match (small, large) {
                (Some(s), Some(l)) => format!("{:.2}", l / s),
                _ => "-".into(),
            };
            let _ = writeln!(
                out,
                "| {} | {mode} | {} | {} | {} | {ratio} |",
                format.name(),
                f(small),
                f(mid),
                f(large)
            );
        }
    }
    let _ = writeln!(
        out,
        "\nOurs, one-shot split (median of {runs}): parser construction, `feed` of the whole \
         output, `finalize`:\n\n| input | construct (us) | feed (ms) | finalize (ms) | feed MB/s |\n|---|---:|---:|---:|---:|"
    );
    for p in results["profile"].as_array().unwrap_or(&empty) {
        let bytes = p["bytes"].as_f64().unwrap_or(0.0);
        let feed = p["feed_s"].as_f64().unwrap_or(0.0);
        let _ = writeln!(
            out,
            "| {} | {:.2} | {:.3} | {:.3} | {:.0} |",
            p["id"].as_str().unwrap_or(""),
            p["construct_s"].as_f64().unwrap_or(0.0) * 1e6,
            feed * 1e3,
            p["finalize_s"].as_f64().unwrap_or(0.0) * 1e3,
            if feed > 0.0 { bytes / feed / 1e6 } else { 0.0 }
        );
    }
    out
}

fn main() {
    let args = parse_args();
    let results = if args.table_only {
        read_json(&args.out.join("rust.json")).unwrap_or_else(|| {
            eprintln!(
                "compare: no {}; run without --table-only first",
                args.out.join("rust.json").display()
            );
            std::process::exit(1)
        })
    } else {
        run(&args)
    };
    let reference = if args.table_only {
        read_json(&args.out.join("reference.json"))
    } else {
        None
    };
    print!("{}", table(&results, reference.as_ref()));
}

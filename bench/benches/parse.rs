//! Criterion benchmarks of our parser on the generated inputs of `response_bench`.
//!
//! ```text
//! cargo bench -p response-bench [-- FILTER]
//! ```
//!
//! Groups (throughput in bytes of output):
//!
//! * `parse/FORMAT-SIZE/MODE`: the templates compiled at build time (`templates::Smollm3`,
//!   `templates::Qwen3Coder`, the `response_template!` item `RegexHeavy`); MODE is
//!   `one-shot` (`parse_response`), `16-byte` or `4-byte` (`parser(prefix)`, `feed` of each
//!   chunk cut at char boundaries, `finalize`; the owned events are dropped);
//! * `parse-runtime/regex-heavy-SIZE/MODE`: the same with the regex-heavy template compiled
//!   at run time (`template_build::compile_str`);
//! * `parse-core/FORMAT-SIZE/MODE`: the no-heap `Router` over the embedded tables
//!   (`Item::routes()`, 64 KiB hold buffer), borrowed events counted per field;
//! * `construct/FORMAT`: `Item::parser(prefix)` from the static template, after first use;
//! * `construct-core/FORMAT`: `Item::router::<4096>()`, after first use.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use parser_runtime::router::{RegionEvent, Router};
use parser_runtime::{CompiledTemplate, ResponseParser, StaticRoutes};
use response_bench::{chunks, inputs, Format, RegexHeavy, MODES, PREFIX};

fn run(template: &CompiledTemplate, text: &str, pieces: Option<&[&str]>) {
    match pieces {
        None => {
            black_box(parser_runtime::parse_response(template, text, PREFIX, &[]).expect("parses"));
        }
        Some(pieces) => {
            let mut parser = ResponseParser::new(template, PREFIX).expect("constructs");
            for piece in pieces {
                black_box(parser.feed(piece).expect("feeds"));
            }
            black_box(parser.finalize().expect("finalizes"));
        }
    }
}

fn route(routes: StaticRoutes<'static>, text: &str, pieces: Option<&[&str]>) {
    let mut router: Router<_, usize, { 64 << 10 }> = Router::new(routes).expect("router");
    let mut bytes = [0usize; 8];
    let mut on_event = |e: RegionEvent<'_, usize>| {
        if let RegionEvent::Chunk { field, text } = e {
            bytes[field.min(7)] += text.len();
        }
    };
    match pieces {
        None => router.feed(text, &mut on_event).expect("feeds"),
        Some(pieces) => {
            for piece in pieces {
                router.feed(piece, &mut on_event).expect("feeds");
            }
        }
    }
    router.finish(&mut on_event).expect("finishes");
    black_box(bytes);
}

/// The group `group_name` over one input `text` (throughput in its bytes; fewer samples past
/// 1 MiB): one bench per mode of `MODES`, `parse` given the chunks of that mode (`None`: one
/// shot).
fn bench_modes(
    c: &mut Criterion,
    group_name: &str,
    id: &str,
    text: &str,
    parse: impl Fn(Option<&[&str]>),
) {
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Bytes(text.len() as u64));
    if text.len() > 1 << 20 {
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(4));
    } else {
        group.measurement_time(Duration::from_secs(2));
    }
    group.warm_up_time(Duration::from_millis(500));
    for (mode, n) in MODES {
        let pieces = n.map(|n| chunks(text, n));
        let pieces = pieces.as_deref();
        group.bench_function(BenchmarkId::new(id, mode), |b| {
            b.iter(|| parse(pieces));
        });
    }
    group.finish();
}

fn parse_core(c: &mut Criterion) {
    for input in inputs() {
        let text = input.text.as_str();
        let routes = input.format.static_routes();
        bench_modes(c, "parse-core", &input.id, text, |pieces| {
            route(routes, text, pieces)
        });
    }
}

fn construct_core(c: &mut Criterion) {
    let mut group = c.benchmark_group("construct-core");
    // First use deserializes the DFAs; measure what follows.
    templates::Smollm3::routes().expect("routes");
    templates::Qwen3Coder::routes().expect("routes");
    RegexHeavy::routes().expect("routes");
    group.bench_function("smollm3", |b| {
        b.iter(|| black_box(templates::Smollm3::router::<4096>().expect("router")));
    });
    group.bench_function("qwen3-coder", |b| {
        b.iter(|| black_box(templates::Qwen3Coder::router::<4096>().expect("router")));
    });
    group.bench_function("regex-heavy", |b| {
        b.iter(|| black_box(RegexHeavy::router::<4096>().expect("router")));
    });
    group.finish();
}

fn parse(c: &mut Criterion) {
    let runtime = Format::RegexHeavy.runtime_template();
    for input in inputs() {
        let text = input.text.as_str();
        let mut paths: Vec<(&str, &CompiledTemplate)> =
            vec![("parse", input.format.static_template())];
        if input.format == Format::RegexHeavy {
            paths.push(("parse-runtime", &runtime));
        }
        for (group_name, template) in paths {
            bench_modes(c, group_name, &input.id, text, |pieces| {
                run(template, text, pieces)
            });
        }
    }
}

fn construct(c: &mut Criterion) {
    let mut group = c.benchmark_group("construct");
    // First use builds the runtime tables from the static ones; measure what follows.
    templates::Smollm3::parser(PREFIX).expect("constructs");
    templates::Qwen3Coder::parser(PREFIX).expect("constructs");
    RegexHeavy::parser(PREFIX).expect("constructs");
    group.bench_function("smollm3", |b| {
        b.iter(|| black_box(templates::Smollm3::parser(black_box(PREFIX)).expect("constructs")));
    });
    group.bench_function("qwen3-coder", |b| {
        b.iter(|| black_box(templates::Qwen3Coder::parser(black_box(PREFIX)).expect("constructs")));
    });
    group.bench_function("regex-heavy", |b| {
        b.iter(|| black_box(RegexHeavy::parser(black_box(PREFIX)).expect("constructs")));
    });
    group.finish();
}

criterion_group!(benches, construct, construct_core, parse_core, parse);
criterion_main!(benches);

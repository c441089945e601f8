//! Runs one parser on one generated input in a loop, for `perf`:
//! `cargo run --release -p response-bench --example profile -- core|ours smollm3|qwen3-coder|regex-heavy SIZE CHUNK SECONDS`.
//! `SECONDS` written `Nx` runs exactly N parses instead, for instruction counts that do not
//! depend on the machine's load (`valgrind --tool=cachegrind --cache-sim=no`, the difference
//! between `2x` and `0x` is two parses).
use std::hint::black_box;
use std::time::Instant;

use parser_runtime::router::{RegionEvent, Router};
use parser_runtime::{ResponseParser, StaticRoutes};
use response_bench::{chunks, generate, Format, PREFIX};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map_or("core", String::as_str);
    let format = match args.get(1).map_or("smollm3", String::as_str) {
        "qwen3-coder" => Format::Qwen3Coder,
        "regex-heavy" => Format::RegexHeavy,
        _ => Format::Smollm3,
    };
    let size: usize = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let chunk: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0);
    let limit = args.get(4).map_or("3", String::as_str);
    let (seconds, iterations): (f64, usize) = match limit.strip_suffix('x') {
        Some(n) => (f64::INFINITY, n.parse().unwrap_or(1)),
        None => (limit.parse().unwrap_or(3.0), usize::MAX),
    };
    let text = generate(format, size, 1);
    let pieces = if chunk == 0 {
        vec![text.as_str()]
    } else {
        chunks(&text, chunk)
    };
    let routes: StaticRoutes<'static> = format.static_routes();
    let template = format.static_template();
    let start = Instant::now();
    let mut n = 0usize;
    while n < iterations && start.elapsed().as_secs_f64() < seconds {
        if which == "core" {
            let mut router: Router<_, usize, 65536> = Router::new(routes).unwrap();
            let mut total = 0usize;
            for p in &pieces {
                router
                    .feed(p, |e| {
                        if let RegionEvent::Chunk { text, .. } = e {
                            total += text.len();
                        }
                    })
                    .unwrap();
            }
            router.finish(|_| {}).unwrap();
            black_box(total);
        } else {
            let mut parser = ResponseParser::new(template, PREFIX).unwrap();
            parser.set_hold_limit(usize::MAX);
            for p in &pieces {
                black_box(parser.feed(p).unwrap());
            }
            black_box(parser.finalize().unwrap());
        }
        n += 1;
    }
    let secs = start.elapsed().as_secs_f64() / n.max(1) as f64;
    println!(
        "{which} {} {} B chunk {chunk}: {:.1} MB/s",
        format.name(),
        text.len(),
        text.len() as f64 / secs / 1e6
    );
}

//! Shared parts of the fuzz targets (`fuzz_targets/`): the vendored templates with the pieces
//! of their delimiters, the input layout of the output-parsing targets, and the runs they
//! compare (streaming against one-shot, the no-heap router against the parser).
//!
//! # Input layout of `parse_chunks` and `router`
//!
//! ```text
//! byte 0      template: index into the vendored templates (sorted names), modulo their count
//! byte 1      context: 0 = no prefix, no tools; k = the prefix and tools of the template's
//!             fixture k - 1 (modulo their count)
//! byte 2      c = byte % 8: how many chunk sizes follow
//! c bytes     chunk sizes in bytes (each byte + 1), cycled; none: one piece
//! rest        the output; `0xF8 n` stands for delimiter piece n of the template (modulo their
//!             count: every open and close, a sample of each pattern, and each without its
//!             last character). Other bytes are kept; the output is then read as UTF-8 with
//!             invalid bytes replaced (U+FFFD).
//! ```
//!
//! Valid UTF-8 never holds the byte 0xF8, so a fixture text is an output as it is
//! (`seed.py` writes the seed corpus this way).

use std::path::PathBuf;
use std::sync::OnceLock;

use parser_runtime::CompiledTemplate;
use serde_json::Value;

/// The helpers of the workspace tests (`tests/lib.rs`: fixture paths, delimiter pieces),
/// compiled into this crate rather than depended on, so the fuzz build skips the tests
/// crate's build script (which compiles every conformance template).
#[allow(dead_code)]
#[path = "../../tests/lib.rs"]
mod workspace_tests;

pub use workspace_tests::{parse_in_chunks, parse_in_chunks_with, parser_steps, push_text, Step};

/// The escape byte of a delimiter piece in an output (never in valid UTF-8).
pub const PIECE: u8 = 0xF8;

/// A vendored template, compiled, with what the outputs are built from.
pub struct Vendored {
    /// The file stem (`qwen3-coder`).
    pub name: &'static str,
    /// The compiled tables (`templates::by_name`).
    pub template: &'static CompiledTemplate,
    /// Every open and close (literal, or a sample of the pattern), and each without its last
    /// character (a near miss).
    pub pieces: Vec<String>,
    /// The prefix and tools of each fixture (sorted by file name).
    pub contexts: Vec<(String, Vec<Value>)>,
}

/// The workspace root (the parent of `fuzz/`).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The vendored templates, in `templates::names()` order (sorted), built once.
pub fn vendored() -> &'static [Vendored] {
    static ALL: OnceLock<Vec<Vendored>> = OnceLock::new();
    ALL.get_or_init(|| {
        templates::names()
            .map(|name| {
                let template = templates::by_name(name)
                    .expect("listed")
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let spec: Value =
                    serde_json::from_str(templates::source(name).expect("listed")).unwrap();
                let spec = spec.get("response_template").cloned().unwrap_or(spec);
                let mut pieces = workspace_tests::delimiter_pieces(&spec);
                let near: Vec<String> = pieces
                    .iter()
                    .filter_map(|p| {
                        let cut = p.char_indices().last()?.0;
                        (cut > 0).then(|| p[..cut].to_owned())
                    })
                    .collect();
                pieces.extend(near);
                let contexts = workspace_tests::fixture_paths(name)
                    .into_iter()
                    .map(|txt| {
                        let prefix = std::fs::read_to_string(txt.with_extension("prefix"))
                            .unwrap_or_default();
                        let tools = std::fs::read_to_string(txt.with_extension("tools.json"))
                            .ok()
                            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                            .and_then(|v| v.as_array().cloned())
                            .unwrap_or_default();
                        (prefix, tools)
                    })
                    .collect();
                Vendored {
                    name,
                    template,
                    pieces,
                    contexts,
                }
            })
            .collect()
    })
}

/// One decoded input of `parse_chunks` / `router` (see the module documentation).
pub struct Case {
    /// The template.
    pub vendored: &'static Vendored,
    /// The prefix (empty without a context).
    pub prefix: &'static str,
    /// The tools (empty without a context).
    pub tools: &'static [Value],
    /// Chunk sizes in bytes, each at least 1, cycled; empty: one piece.
    pub sizes: Vec<usize>,
    /// The output.
    pub output: String,
}

impl Case {
    /// Decodes `data`; `None` when it is too short to name a template.
    pub fn decode(data: &[u8]) -> Option<Case> {
        let all = vendored();
        let (&t, rest) = data.split_first()?;
        let (&c, rest) = rest.split_first()?;
        let (&k, rest) = rest.split_first()?;
        let k = usize::from(k % 8).min(rest.len());
        let (sizes, rest) = rest.split_at(k);
        let vendored = &all[usize::from(t) % all.len()];
        let (prefix, tools) = match (c, vendored.contexts.len()) {
            (0, _) | (_, 0) => ("", &[][..]),
            (c, n) => {
                let (p, t) = &vendored.contexts[(usize::from(c) - 1) % n];
                (p.as_str(), t.as_slice())
            }
        };
        let mut bytes = Vec::with_capacity(rest.len());
        let mut i = 0;
        while i < rest.len() {
            if rest[i] == PIECE && i + 1 < rest.len() && !vendored.pieces.is_empty() {
                let n = usize::from(rest[i + 1]) % vendored.pieces.len();
                bytes.extend_from_slice(vendored.pieces[n].as_bytes());
                i += 2;
            } else {
                bytes.push(rest[i]);
                i += 1;
            }
        }
        Some(Case {
            vendored,
            prefix,
            tools,
            sizes: sizes.iter().map(|&s| usize::from(s) + 1).collect(),
            output: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}

/// Asserts the chunking invariant: `output` in chunks of `sizes` gives exactly what it gives in
/// one piece (message, events, or the same error), and the one-piece message is
/// `parse_response`'s.
pub fn assert_streaming_equals_one_shot(
    template: &CompiledTemplate,
    prefix: &str,
    tools: &[Value],
    output: &str,
    sizes: &[usize],
) {
    let one_shot = parse_in_chunks(template, prefix, tools, output, &[usize::MAX]);
    let streamed = parse_in_chunks(template, prefix, tools, output, sizes);
    assert_eq!(
        one_shot, streamed,
        "streaming in chunks of {sizes:?} differs from one-shot on {output:?} (prefix {prefix:?})"
    );
    let plain = parser_runtime::parse_response(template, output, prefix, tools)
        .map(Value::Object)
        .map_err(|e| e.to_string());
    assert_eq!(
        plain,
        one_shot.map(|(m, _, _)| m),
        "parse_response differs from feed + finalize on {output:?}"
    );
}

/// Lenient mode (`ParserOptions::lenient`, both reasoning-call policies): streaming in chunks
/// of `sizes` gives exactly the one-shot message, merged events or error.
pub fn assert_lenient_streaming_equals_one_shot(
    template: &CompiledTemplate,
    prefix: &str,
    tools: &[Value],
    output: &str,
    sizes: &[usize],
    extract: bool,
) {
    let options = parser_runtime::ParserOptions {
        lenient: true,
        reasoning_calls: if extract {
            parser_runtime::ReasoningCalls::Extract
        } else {
            parser_runtime::ReasoningCalls::Keep
        },
        ..parser_runtime::ParserOptions::default()
    };
    let one_shot = parse_in_chunks_with(template, prefix, tools, output, &[usize::MAX], options);
    let streamed = parse_in_chunks_with(template, prefix, tools, output, sizes, options);
    assert_eq!(
        one_shot, streamed,
        "lenient mode (extract {extract}): streaming in chunks of {sizes:?} differs from one-shot on {output:?} (prefix {prefix:?})"
    );
}

/// `output` cut into pieces of `sizes` bytes (cycled; empty: one piece), each extended to a
/// character boundary (the router takes `&str`).
pub fn str_pieces<'a>(output: &'a str, sizes: &[usize]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = output;
    let mut i = 0;
    while !rest.is_empty() {
        let mut n = match sizes {
            [] => rest.len(),
            _ => sizes[i % sizes.len()].max(1),
        }
        .min(rest.len());
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        out.push(&rest[..n]);
        rest = &rest[n..];
        i += 1;
    }
    out
}

/// The end-of-generation token of [`small_vocabulary`].
pub const EOS: &str = "<|fuzz_eos|>";

/// A small vocabulary: the 256 single bytes (ids 0..=255), then each of `extra` (multi-byte
/// tokens, e.g. a template's delimiters), then [`EOS`], the only special token and the only
/// end of generation. Every byte string can be spelled, so every valid output can be
/// generated.
pub fn small_vocabulary(extra: &[String]) -> constrain::vocab::Vocabulary {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for e in extra {
        if e.len() > 1 && !tokens.iter().any(|t| t == e.as_bytes()) {
            tokens.push(e.as_bytes().to_vec());
        }
    }
    let eos = tokens.len() as u32;
    tokens.push(EOS.as_bytes().to_vec());
    constrain::vocab::Vocabulary::new(tokens, &[eos], &[eos]).expect("a valid vocabulary")
}

/// Samples `count` outputs of `index` (the sampler of `rtpl constrain`, seeded with `seed`,
/// at most 120 tokens each), checks the mask invariants on each and gives every complete one
/// to `check` as text.
///
/// Invariants: no token of a planned valid text is refused by its mask (`Sample::refused`),
/// every allowed token of every visited state advances (`advance` is `Some`), and a token
/// outside the mask does not.
pub fn sample_outputs(
    index: &constrain::index::TokenIndex,
    seed: u64,
    count: usize,
    mut check: impl FnMut(&str),
) {
    use constrain::index::Step;
    use constrain::sample::{SampleOptions, Sampler};
    use rand::SeedableRng;
    let options = SampleOptions {
        max_tokens: 120,
        ..SampleOptions::default()
    };
    let sampler = Sampler::new(index, options);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    for _ in 0..count {
        let sample = sampler.sample(&mut rng);
        assert_eq!(
            sample.refused, 0,
            "a mask refused a valid token: {sample:?}"
        );
        // Replay: each token is allowed where it was taken, and the masks agree with
        // `advance` on one allowed and one refused token of every state.
        let mut state = index.start();
        for (i, &token) in sample.tokens.iter().enumerate() {
            let mask = index.allowed(state);
            assert!(
                mask.contains(token),
                "token {i} of {sample:?} is masked out"
            );
            if let Some(refused) = (0..index.vocab().len() as u32).find(|&t| !mask.contains(t)) {
                assert_eq!(
                    index.advance(state, refused),
                    None,
                    "a refused token advances"
                );
            }
            match index.advance(state, token) {
                Some(Step::Next(next)) => state = next,
                Some(Step::End) => assert_eq!(i + 1, sample.tokens.len()),
                None => panic!("allowed token {token} does not advance ({sample:?})"),
            }
        }
        if sample.complete {
            let text = String::from_utf8(sample.text.clone())
                .unwrap_or_else(|e| panic!("a complete sample is not UTF-8: {e}: {sample:?}"));
            check(&text);
        }
    }
}

/// A seed for a sampler from the fuzz input (FNV-1a).
pub fn seed_of(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Table bounds for constraints under fuzzing: a tenth of the default states and 32 MiB per
/// automaton, so that one input compiles in well under the fuzzer's time-out (the default
/// bounds are the `constrain` crate's, with budgets of their own).
pub fn fuzz_options() -> constrain::template::Options {
    let mut options = constrain::template::Options::default();
    options.limits.max_states = 20_000;
    options.limits.max_automaton_bytes = 32 << 20;
    options
}

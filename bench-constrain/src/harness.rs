//! The worker side of both binaries: the line protocol a worker speaks to its parent, timing,
//! and the token walk each engine runs over an output.
//!
//! A worker prints `READY ...` once its vocabulary is prepared, then per job `k` (from
//! `--start` on) `COMPILED k ns` or `REJECTED k reason`, then `RESULT k {json}`; the parent
//! (`crate::worker`) waits for each line with the time cap.

use std::io::Write;
use std::time::Instant;

use serde_json::{json, Value};

/// Prints one protocol line and flushes it (the parent reads lines as they come).
pub fn say(line: String) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Nanoseconds since `t`.
pub fn ns(t: Instant) -> u64 {
    t.elapsed().as_nanos() as u64
}

/// `f()` and the nanoseconds it took.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let t0 = Instant::now();
    let out = f();
    (out, ns(t0))
}

/// `s` on one line (whitespace runs become one space), at most 300 characters.
pub fn one_line(s: &str) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    s.chars().take(300).collect()
}

/// The last `n` characters of `s`.
pub fn tail(s: &str, n: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    chars[chars.len().saturating_sub(n)..].iter().collect()
}

/// The value after `--name` in a worker's arguments `args`.
///
/// Panics when it is missing (the parent always passes it).
pub fn flag(args: &[String], name: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| panic!("worker needs {name}"))
}

/// Runs `per_job` for jobs `start..`, turning a panic into `REJECTED k panic: ...`.
pub fn run_jobs<J>(jobs: &[J], start: usize, mut per_job: impl FnMut(usize, &J)) {
    for (k, job) in jobs.iter().enumerate().skip(start) {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| per_job(k, job)));
        if let Err(e) = r {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            say(format!("REJECTED {k} panic: {}", one_line(&msg)));
        }
    }
}

/// What a walk over one output measured.
#[derive(Default)]
pub struct Walk {
    /// Every mask computed, in order (the last one is the mask after the last token, where
    /// EOS is looked up), in nanoseconds.
    pub mask_ns: Vec<u64>,
    /// Every advance by a token, in nanoseconds.
    pub advance_ns: Vec<u64>,
    /// First position whose token the engine does not allow (mask or advance).
    pub disallowed_at: Option<usize>,
    /// EOS allowed after the last token.
    pub eos_ok: bool,
}

impl Walk {
    /// Heap bytes of the recorded times (subtracted from memory measurements).
    pub fn heap(&self) -> isize {
        ((self.mask_ns.capacity() + self.advance_ns.capacity()) * 8) as isize
    }

    fn with_capacity(n: usize) -> Self {
        Self {
            mask_ns: Vec::with_capacity(n + 1),
            advance_ns: Vec::with_capacity(n),
            disallowed_at: None,
            eos_ok: false,
        }
    }

    /// Whether every token was allowed and EOS too at the end.
    pub fn accepted(&self) -> bool {
        self.disallowed_at.is_none() && self.eos_ok
    }

    pub fn to_json(&self) -> Value {
        json!({
            "mask_ns": self.mask_ns,
            "advance_ns": self.advance_ns,
            "disallowed_at": self.disallowed_at,
            "eos_ok": self.eos_ok,
        })
    }
}

/// Walks `tokens` from the engine state `state`: per position `mask(state, token)` computes
/// the mask (timed) and says whether the token is in it, `advance(state, token)` moves on
/// (timed) and says whether it could; at the end `mask(state, eos)` says whether EOS is
/// allowed. The walk stops at the first token not allowed.
pub fn walk_tokens<S>(
    tokens: &[u32],
    eos: u32,
    state: &mut S,
    mut mask: impl FnMut(&mut S, u32) -> (bool, u64),
    mut advance: impl FnMut(&mut S, u32) -> (bool, u64),
) -> Walk {
    let mut w = Walk::with_capacity(tokens.len());
    for (i, &tok) in tokens.iter().enumerate() {
        let (in_mask, t) = mask(state, tok);
        w.mask_ns.push(t);
        if !in_mask {
            w.disallowed_at = Some(i);
            return w;
        }
        let (ok, t) = advance(state, tok);
        w.advance_ns.push(t);
        if !ok {
            w.disallowed_at = Some(i);
            return w;
        }
    }
    let (in_mask, t) = mask(state, eos);
    w.mask_ns.push(t);
    w.eos_ok = in_mask;
    w
}

/// [`walk_tokens`] on our `index` from its start: the mask is `TokenIndex::allowed`, EOS
/// counts only in an accepting state.
pub fn walk_ours(index: &constrain::index::TokenIndex, eos: u32, tokens: &[u32]) -> Walk {
    use constrain::index::Step;
    walk_tokens(
        tokens,
        eos,
        &mut index.start(),
        |&mut state, tok| {
            let (mask, t) = timed(|| index.allowed(state));
            let ok = if tok == eos {
                mask.contains(eos) && index.is_accepting(state)
            } else {
                mask.contains(tok)
            };
            (ok, t)
        },
        |state, tok| {
            let (step, t) = timed(|| index.advance(*state, tok));
            match step {
                Some(Step::Next(s)) => {
                    *state = s;
                    (true, t)
                }
                _ => (false, t),
            }
        },
    )
}

/// [`walk_tokens`] on an llguidance `matcher`: the mask is `compute_mask_or_eos`, the
/// advance `consume_token`.
pub fn walk_llguidance(matcher: &mut llguidance::Matcher, eos: u32, tokens: &[u32]) -> Walk {
    walk_tokens(
        tokens,
        eos,
        matcher,
        |m, tok| {
            let (mask, t) = timed(|| m.compute_mask_or_eos());
            (mask.is_ok_and(|mask| mask.is_allowed(tok)), t)
        },
        |m, tok| {
            let (r, t) = timed(|| m.consume_token(tok));
            (r.is_ok(), t)
        },
    )
}

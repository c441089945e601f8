//! Valid and invalid texts for a compiled schema.
//!
//! A valid instance is a random walk over the bytes of our compiled table (the language of the
//! schema): at each state the walk picks a next state (weighted toward printable ASCII, so
//! strings look like text), and once past a length budget it follows bytes that bring it
//! strictly closer to acceptance, so it always ends in an accepting state. The table is
//! trimmed (every live state can finish), so the walk never gets stuck.

use std::collections::BTreeMap;

use constrain::dfa::{Table, DEAD, START};

use crate::rng::Rng;

/// Weight of a byte when the walk chooses among several (`prev`: the byte before it).
fn weight(b: u8, prev: Option<u8>) -> f64 {
    // Numbers: exponents and fractions now and then, as a model writes them.
    if prev.is_some_and(|p| p.is_ascii_digit()) && matches!(b, b'e' | b'E' | b'.') {
        return 0.3;
    }
    match b {
        b'a'..=b'z' => 8.0,
        b'A'..=b'Z' | b'0'..=b'9' => 4.0,
        b' ' => 3.0,
        b'_' | b'-' | b'.' | b':' => 2.0,
        b'\\' => 0.1,
        0x21..=0x7E => 1.0,
        0x80..=0xFF => 0.05,
        _ => 0.01,
    }
}

fn choose(rng: &mut Rng, weights: &[f64]) -> usize {
    let total: f64 = weights.iter().sum();
    let mut x = rng.unit() * total;
    for (i, w) in weights.iter().enumerate() {
        if x < *w {
            return i;
        }
        x -= w;
    }
    weights.len() - 1
}

/// Words for free-text strings, so string values look like text a model writes (and
/// tokenize like it) rather than random bytes.
const WORDS: &[&str] = &[
    "the",
    "report",
    "for",
    "next",
    "week",
    "meeting",
    "with",
    "team",
    "about",
    "budget",
    "please",
    "send",
    "update",
    "new",
    "order",
    "customer",
    "Berlin",
    "Paris",
    "Tokyo",
    "summary",
    "of",
    "sales",
    "in",
    "Q3",
    "project",
    "status",
    "review",
    "draft",
    "invoice",
    "shipping",
    "delayed",
    "quarterly",
    "results",
    "check",
    "flight",
    "to",
    "London",
    "hotel",
    "near",
    "airport",
    "John",
    "Smith",
    "Maria",
    "García",
    "notes",
    "from",
    "call",
    "and",
    "follow-up",
    "high",
    "priority",
    "issue",
    "login",
    "fails",
    "on",
    "mobile",
    "app",
    "v2.3",
    "café",
    "weather",
    "tomorrow",
    "morning",
    "a",
    "is",
    "an",
    "error",
    "data",
    "export",
    "user",
];

/// A random valid text of `table`'s language, about `budget` bytes or more when the structure
/// needs it. `None` if the language is empty or the bytes are not UTF-8.
pub fn instance(table: &Table, rng: &mut Rng, budget: usize) -> Option<String> {
    let dist = table.distances();
    if dist.get(START as usize).copied().unwrap_or(u32::MAX) == u32::MAX {
        return None;
    }
    let mut state = START;
    let mut out: Vec<u8> = Vec::new();
    loop {
        let here = dist[state as usize];
        let closing = out.len() >= budget;
        // next state -> bytes leading there
        let mut groups: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
        for b in 0..=255u8 {
            let t = table.next(state, b);
            if t == DEAD || dist[t as usize] == u32::MAX {
                continue;
            }
            if closing && dist[t as usize] >= here {
                continue;
            }
            groups.entry(t).or_default().push(b);
        }
        if table.is_accepting(state) && (groups.is_empty() || closing || rng.chance(0.3)) {
            break;
        }
        if groups.is_empty() {
            return None; // cannot happen on a trimmed table
        }
        // A free-text state (most bytes keep it going, as inside a JSON string): write a
        // word when the language allows it here, and otherwise one of the other choices.
        let mut groups: Vec<(u32, Vec<u8>)> = groups.into_iter().collect();
        if let Some(big) = groups.iter().position(|(_, bytes)| bytes.len() >= 64) {
            if !closing && rng.chance(0.75) {
                let mut word = String::new();
                if out.last().is_some_and(|b| b.is_ascii_alphanumeric()) {
                    word.push(' ');
                }
                let w = WORDS[rng.below(WORDS.len())];
                word.push_str(w);
                let t = table.walk(state, word.as_bytes());
                if t != DEAD && dist[t as usize] != u32::MAX {
                    out.extend_from_slice(word.as_bytes());
                    state = t;
                    continue;
                }
            }
            if groups.len() > 1 && rng.chance(0.6) {
                groups.remove(big);
            }
        }
        let prev = out.last().copied();
        let group_weights: Vec<f64> = groups
            .iter()
            .map(|(_, bytes)| bytes.iter().map(|&b| weight(b, prev)).fold(0.0, f64::max))
            .collect();
        let (next, bytes) = &groups[choose(rng, &group_weights)];
        let byte_weights: Vec<f64> = bytes.iter().map(|&b| weight(b, prev)).collect();
        out.push(bytes[choose(rng, &byte_weights)]);
        state = *next;
    }
    String::from_utf8(out).ok()
}

/// Edits of a valid text that may make it invalid (the caller keeps those an independent
/// checker rejects): truncations, and single-byte replacements, deletions and insertions of
/// JSON punctuation and letters.
pub fn mutations(text: &str, rng: &mut Rng, count: usize) -> Vec<String> {
    const BYTES: &[u8] = b"\"{}[],:x1-.n";
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    if bytes.is_empty() {
        return out;
    }
    for i in 0..count {
        let pos = rng.below(bytes.len());
        let mut m = bytes.to_vec();
        match i % 4 {
            0 => m.truncate(pos.max(1).min(bytes.len() - 1)),
            1 => m[pos] = *rng.pick(BYTES),
            2 => {
                m.remove(pos);
            }
            _ => m.insert(pos, *rng.pick(BYTES)),
        }
        if let Ok(s) = String::from_utf8(m) {
            if s != text {
                out.push(s);
            }
        }
    }
    out
}

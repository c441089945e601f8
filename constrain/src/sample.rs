//! Sampling constrained outputs, for the guarantee test and `rtpl constrain`.
//!
//! A sample mixes two moves. Most tokens follow a *plan*: a random valid text (a random path
//! through the segment graph, each segment a random walk of its table, choosing uniformly
//! among distinct next states, then heading for the nearest end), split into tokens at random
//! among the vocabulary tokens that spell its next bytes. Every such token must be allowed by
//! the mask ([`Sample::refused`] counts those that are not: the converse of the guarantee).
//! With probability [`SampleOptions::uniform`] a token is instead drawn uniformly among the
//! allowed tokens, and the plan is redrawn from the state it leads to (a random walk of the
//! whole machine). After [`SampleOptions::max_tokens`] tokens the sample heads for the
//! nearest end.

use std::collections::HashMap;

use rand::Rng;

use crate::dfa::{Table, DEAD};
use crate::index::{Step, TokenIndex};

/// One sampled output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// The token ids, EOS included when the output is complete.
    pub tokens: Vec<u32>,
    /// The decoded bytes (special tokens as their text, EOS left out).
    pub text: Vec<u8>,
    /// Whether it ended with EOS in an accepting state.
    pub complete: bool,
    /// Whether it stopped at the token cap ([`SampleOptions::token_cap`]) before reaching an
    /// end: the shortest way to an end was longer than the tokens left. Such a sample is cut
    /// off, not wrong: its text is a prefix of a valid output, which the masks allowed token
    /// by token. (An incomplete sample that is not cut off ran into a state with no allowed
    /// token, or a vocabulary without EOS.)
    pub cut_off: bool,
    /// Tokens of a planned (valid) text that the mask refused: always 0 unless masks are
    /// wrong.
    pub refused: usize,
}

/// Knobs of [`Sampler::sample`].
#[derive(Debug, Clone, Copy)]
pub struct SampleOptions {
    /// Probability of a uniformly drawn allowed token at each step (default 0.05).
    pub uniform: f64,
    /// Tokens after which the sample heads for the nearest end (default 400).
    pub max_tokens: usize,
    /// Most bytes a planned segment writes before heading for its end (default 24).
    pub segment_bytes: usize,
    /// Most segments a plan visits before heading for the end of turn (default 12).
    pub max_segments: usize,
    /// Most tokens of one sample (default 4,496: `max_tokens` plus 4,096 to reach an end);
    /// a sample that reaches it is [`Sample::cut_off`].
    pub token_cap: usize,
}

impl Default for SampleOptions {
    fn default() -> Self {
        Self {
            uniform: 0.05,
            max_tokens: 400,
            segment_bytes: 24,
            max_segments: 12,
            token_cap: 400 + 4096,
        }
    }
}

/// A random word of `table` from `state`: up to `budget` bytes choosing uniformly among the
/// distinct next states (and stopping at random in states where `ends`), then the shortest way
/// to such a state. With `marked`, the table's class bytes (word assertions at a delimiter's
/// edges) are not written: a word ends where a class byte would end it.
fn walk(
    table: &Table,
    distance: &[u32],
    mut state: u32,
    (budget, marked): (usize, bool),
    ends: impl Fn(u32) -> bool,
    rng: &mut impl Rng,
    out: &mut Vec<u8>,
) -> bool {
    let mut written = 0;
    loop {
        if ends(state) && (written >= budget || rng.random_bool(0.15)) {
            return true;
        }
        // Next states with the bytes that reach them.
        let mut nexts: Vec<(u32, Vec<u8>)> = Vec::new();
        for b in 0..=255u8 {
            if marked && crate::word::is_marker(b) {
                continue;
            }
            let t = table.next(state, b);
            if t == DEAD || distance[t as usize] == u32::MAX {
                continue;
            }
            match nexts.iter_mut().find(|(s, _)| *s == t) {
                Some((_, bytes)) => bytes.push(b),
                None => nexts.push((t, vec![b])),
            }
        }
        if nexts.is_empty() {
            return ends(state);
        }
        let pick = if written < budget {
            rng.random_range(0..nexts.len())
        } else {
            let best = nexts
                .iter()
                .map(|(t, _)| distance[*t as usize])
                .min()
                .unwrap_or(u32::MAX);
            let nearest: Vec<usize> = (0..nexts.len())
                .filter(|&i| distance[nexts[i].0 as usize] == best)
                .collect();
            nearest[rng.random_range(0..nearest.len())]
        };
        let (t, bytes) = &nexts[pick];
        out.push(bytes[rng.random_range(0..bytes.len())]);
        state = *t;
        written += 1;
        if written > budget + 4096 {
            return false;
        }
    }
}

/// A sampler over one index; see the module documentation.
#[derive(Debug)]
pub struct Sampler<'a> {
    index: &'a TokenIndex,
    /// Per machine state, the fewest bytes to an accepting state.
    distance: Vec<u32>,
    /// Per segment, per state of its table, the fewest bytes to its accepting states.
    segment_distance: Vec<Vec<u32>>,
    /// Per segment, the fewest segments to a `last` one (0 for a last one).
    hops: Vec<u32>,
    /// Token bytes -> ids (every token, specials included).
    by_bytes: HashMap<Vec<u8>, Vec<u32>>,
    longest: usize,
    options: SampleOptions,
}

impl<'a> Sampler<'a> {
    /// A sampler (computes distances and a token lookup once).
    pub fn new(index: &'a TokenIndex, options: SampleOptions) -> Self {
        let machine = index.machine();
        let segments = &machine.graph.segments;
        let mut hops = vec![u32::MAX; segments.len()];
        for (i, s) in segments.iter().enumerate() {
            if s.last {
                hops[i] = 0;
            }
        }
        for _ in 0..segments.len() {
            for i in 0..segments.len() {
                let best = segments[i]
                    .next
                    .iter()
                    .map(|&n| hops[n].saturating_add(1))
                    .min()
                    .unwrap_or(u32::MAX);
                if best < hops[i] {
                    hops[i] = best;
                }
            }
        }
        let vocab = index.vocab();
        let mut by_bytes: HashMap<Vec<u8>, Vec<u32>> = HashMap::new();
        let mut longest = 0;
        for id in 0..vocab.len() as u32 {
            let t = vocab.token(id);
            if !t.is_empty() && !vocab.eos().contains(&id) {
                by_bytes.entry(t.to_vec()).or_default().push(id);
                longest = longest.max(t.len());
            }
        }
        Self {
            distance: machine.table.distances(),
            segment_distance: segments.iter().map(|s| s.table.distances()).collect(),
            hops,
            by_bytes,
            longest,
            index,
            options,
        }
    }

    /// A random text from `state` of segment `seg` (`prev`: the character before it): the
    /// rest of the segment, then a random path through the segment graph to the end of turn.
    /// Valid, but where a delimiter's word assertion reads a neighbour the path may not hold
    /// (the caller checks it against the machine).
    fn plan(
        &self,
        mut seg: usize,
        mut state: u32,
        prev: Option<char>,
        rng: &mut impl Rng,
    ) -> Vec<u8> {
        let segments = &self.index.machine().graph.segments;
        let mut out = Vec::new();
        for visited in 0.. {
            let s = &segments[seg];
            let budget = self.options.segment_bytes;
            if !walk(
                &s.table,
                &self.segment_distance[seg],
                state,
                (budget, s.marks.any()),
                |state| s.ends(state) != 0,
                rng,
                &mut out,
            ) {
                break;
            }
            let late = visited >= self.options.max_segments;
            if s.last && (s.next.is_empty() || late || rng.random_bool(0.3)) {
                break;
            }
            let choices: Vec<usize> = if late {
                let best = s
                    .next
                    .iter()
                    .map(|&n| self.hops[n])
                    .min()
                    .unwrap_or(u32::MAX);
                s.next
                    .iter()
                    .copied()
                    .filter(|&n| self.hops[n] == best)
                    .collect()
            } else {
                s.next.clone()
            };
            if choices.is_empty() {
                break;
            }
            seg = choices[rng.random_range(0..choices.len())];
            let last = match String::from_utf8_lossy(&out).chars().next_back() {
                Some(c) => Some(c),
                None => prev,
            };
            state = segments[seg].entry(Some(crate::word::Prev::of(last)));
            if state == DEAD {
                break;
            }
        }
        out
    }

    /// A plan from a machine state (`prev`: the character before it): from one of the
    /// segment states it stands for.
    fn plan_from_state(&self, state: u32, prev: Option<char>, rng: &mut impl Rng) -> Vec<u8> {
        let machine = self.index.machine();
        let elements = machine.elements(state);
        if elements.is_empty() {
            return Vec::new();
        }
        let (seg, s) = elements[rng.random_range(0..elements.len())];
        self.plan(seg as usize, s, prev, rng)
    }

    /// Samples one output; see the module documentation.
    pub fn sample(&self, rng: &mut impl Rng) -> Sample {
        let index = self.index;
        let table = &index.machine().table;
        let mut state = index.start();
        let mut tokens = Vec::new();
        let mut refused = 0;
        // A path through the graph may break a word assertion between two segments: such a
        // plan is drawn again.
        let mut plan = Vec::new();
        for _ in 0..64 {
            plan = self.plan_from_state(state, None, rng);
            if table.matches(&plan) {
                break;
            }
        }
        let mut at = 0;
        // A plan that does not fit the machine (a bug) is abandoned for uniform tokens.
        if !table.matches(&plan) {
            refused += 1;
            plan.clear();
        }
        let mut cut_off = true;
        while tokens.len() < self.options.token_cap {
            let mask = index.allowed(state);
            if mask.count() == 0 {
                cut_off = false;
                break;
            }
            let late = tokens.len() >= self.options.max_tokens;
            let uniform = !late && (plan.is_empty() || rng.random_bool(self.options.uniform));
            let token = if uniform {
                mask.nth(rng.random_range(0..mask.count())).unwrap_or(0)
            } else if at == plan.len() {
                // The plan is done: the state accepts. Without an EOS id the sample ends here
                // (not complete).
                match index.vocab().eos().first() {
                    Some(&eos) => eos,
                    None => {
                        cut_off = false;
                        break;
                    }
                }
            } else {
                // Tokens spelling the plan's next bytes.
                let rest = &plan[at..];
                let mut spelled: Vec<u32> = Vec::new();
                for len in 1..=rest.len().min(self.longest) {
                    if let Some(ids) = self.by_bytes.get(&rest[..len]) {
                        spelled.extend(ids);
                    }
                }
                let allowed: Vec<u32> = spelled
                    .iter()
                    .copied()
                    .filter(|&id| mask.contains(id))
                    .collect();
                // Ordinary tokens of a valid continuation must all be allowed; specials only
                // where a delimiter is written (they may rightly be refused elsewhere).
                refused += spelled
                    .iter()
                    .filter(|&&id| !mask.contains(id) && !index.vocab().is_special(id))
                    .count();
                if allowed.is_empty() {
                    refused += 1;
                    mask.nth(rng.random_range(0..mask.count())).unwrap_or(0)
                } else {
                    allowed[rng.random_range(0..allowed.len())]
                }
            };
            tokens.push(token);
            match index.advance(state, token) {
                Some(Step::Next(next)) => {
                    state = next;
                    let bytes = index.vocab().token(token);
                    if !uniform && plan[at..].starts_with(bytes) {
                        at += bytes.len();
                    } else {
                        // Off the plan: a new one from here.
                        at = 0;
                        plan = if late {
                            Vec::new()
                        } else {
                            let text = index.vocab().decode(&tokens);
                            let prev = String::from_utf8_lossy(&text).chars().next_back();
                            self.plan_from_state(state, prev, rng)
                        };
                        if late || !table.matches_from(state, &plan) {
                            plan.clear();
                            let ends = |s| table.is_accepting(s);
                            walk(
                                table,
                                &self.distance,
                                state,
                                (0, false),
                                ends,
                                rng,
                                &mut plan,
                            );
                        }
                    }
                }
                Some(Step::End) => {
                    let text = index.vocab().decode(&tokens);
                    return Sample {
                        tokens,
                        text,
                        complete: true,
                        cut_off: false,
                        refused,
                    };
                }
                None => {
                    cut_off = false;
                    break;
                }
            }
        }
        let text = index.vocab().decode(&tokens);
        Sample {
            tokens,
            text,
            complete: false,
            cut_off,
            refused,
        }
    }
}

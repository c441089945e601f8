//! Explicit byte-level DFAs: the tables every constraint is compiled into.
//!
//! A [`Table`] is a complete deterministic automaton over bytes, stored with byte classes
//! (bytes that every transition treats alike share a column). State [`DEAD`] (0) rejects
//! everything; [`START`] (1) is the start state. A state is *accepting* when the bytes read so
//! far form a whole word of the language. Tables are built from regex-syntax HIR through our
//! position automaton (regex-automata's Thompson NFA and dense determinizer for look-around;
//! [`Table::from_hir`]), from literals,
//! as the language of texts avoiding a pattern ([`Table::avoiding`]), and combined by
//! intersection; [`Table::trim`] turns every state that cannot reach acceptance into
//! [`DEAD`], so a live state always has a way to finish.

use std::collections::VecDeque;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::Hir;

/// The dead state: nothing is accepted from it.
pub const DEAD: u32 = 0;
/// The start state of every table.
pub const START: u32 = 1;

/// Size and time bounds for building tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most states a table may have (after determinization): [`Budget::States`]. A state
    /// stored as a row counts one; a state read in place from a shared value (a call's
    /// computed state, which has no row of its own: [`Table::splice_shared`]) counts
    /// [`1 / IN_PLACE_PER_STATE`](IN_PLACE_PER_STATE) ([`Table::budget_states`]), so a table
    /// has at most `IN_PLACE_PER_STATE * max_states` states in all.
    pub max_states: usize,
    /// Most bytes regex-automata may use for one NFA, and for one dense DFA while it is
    /// determinized; a quarter of it bounds the estimated heap of the position construction
    /// (past it, regex-automata builds the pattern within at most 16 MiB):
    /// [`Budget::AutomatonBytes`].
    pub max_automaton_bytes: usize,
    /// Most follow entries and candidates the position construction may read while it
    /// determinizes one pattern ([`Budget::Work`]; default 16 Mi, about 0.1 s of work).
    /// Past it, regex-automata tries the pattern within 1 MiB.
    pub max_work: usize,
    /// When building must have ended ([`Budget::Time`]; `None`: no time bound). Set by
    /// `template::compile` from `Options::time_budget`; read at a determinization's first
    /// row and every 64 after it ([`Limits::check_row`]), so it is met within that many
    /// rows' work (regex-automata's own builds are bounded by `max_automaton_bytes`
    /// instead).
    pub deadline: Option<std::time::Instant>,
}

impl Limits {
    /// These limits raised to the default ones where they are lower (the deadline kept):
    /// what the process-wide caches of bounded parts (readers, number automata) build
    /// within, before the caller's own state limit is checked on the result, so that a
    /// compile's outcome does not depend on what is cached.
    pub fn at_least_default(&self) -> Self {
        let d = Self::default();
        Self {
            max_states: self.max_states.max(d.max_states),
            max_automaton_bytes: self.max_automaton_bytes.max(d.max_automaton_bytes),
            max_work: self.max_work.max(d.max_work),
            deadline: self.deadline,
        }
    }
}

impl Default for Limits {
    /// 200,000 states; 256 MiB per NFA or DFA under construction; 16 Mi entries of
    /// determinization work; no deadline.
    fn default() -> Self {
        Self {
            max_states: 200_000,
            max_automaton_bytes: 256 << 20,
            max_work: crate::positions::WORK_BUDGET,
            deadline: None,
        }
    }
}

impl Limits {
    /// [`Budget::States`] when `states` passes [`Self::max_states`], [`Budget::Time`] past
    /// the deadline.
    pub(crate) fn check(&self, states: usize) -> Result<(), BuildError> {
        self.check_states(states)?;
        if self.deadline.is_some_and(|d| std::time::Instant::now() > d) {
            return Err(BuildError::TooLarge {
                budget: Budget::Time,
                what: "building took longer than the time budget".into(),
            });
        }
        Ok(())
    }

    /// [`Self::check`] once per row a determinization has filled (`row` counts them from 1,
    /// `states` are found so far): the state limit at each row, the deadline at the first
    /// row and every [`DEADLINE_EVERY`] rows after it (a clock read per row was a
    /// twentieth of a small schema's compile).
    pub(crate) fn check_row(&self, row: usize, states: usize) -> Result<(), BuildError> {
        if row % DEADLINE_EVERY == 1 {
            self.check(states)
        } else {
            self.check_states(states)
        }
    }

    /// [`Self::check`] without the deadline: `states` against [`Self::max_states`].
    fn check_states(&self, states: usize) -> Result<(), BuildError> {
        if states > self.max_states {
            return Err(BuildError::TooLarge {
                budget: Budget::States,
                what: format!("more than {} states", self.max_states),
            });
        }
        Ok(())
    }
}

/// A determinization reads the clock for [`Limits::deadline`] once per this many rows
/// ([`Limits::check_row`]).
const DEADLINE_EVERY: usize = 64;

/// How many states read in place from shared values (computed states of calls, without
/// rows of their own) count as one state against [`Limits::max_states`]
/// ([`Table::budget_states`]). They cost no table memory, but passes over every state of a
/// table (liveness, a sampler's distances) and a copy into rows (`Table::stored`) still
/// visit them: counting them in full refused schemas whose every value is one shared table
/// called from many places (or built them again with shallower untyped values, at three
/// times the cost), counting them not at all would leave those passes unbounded.
pub const IN_PLACE_PER_STATE: usize = 16;

/// [`Table::budget_states`] of a table of `stored` rows and `computed` states read in place.
fn budget_states(stored: usize, computed: usize) -> usize {
    stored.saturating_add(computed / IN_PLACE_PER_STATE)
}

/// The budget a constraint's compile passed ([`BuildError::TooLarge`],
/// `template::ConstrainError::budget`). Each can be raised: [`Limits`] and
/// `template::Options`, or `rtpl constrain` flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Budget {
    /// [`Limits::max_states`] (default 200,000; `rtpl constrain --max-states`).
    States,
    /// [`Limits::max_automaton_bytes`] (default 256 MiB; `--max-automaton-mb`).
    AutomatonBytes,
    /// [`Limits::max_work`] (default 16 Mi entries read while determinizing one pattern;
    /// `rtpl constrain --max-work-mi`).
    Work,
    /// `json::JsonOptions::max_nodes`, the regex size of a schema's language before any
    /// automaton is built (default 400,000 nodes; `--max-schema-nodes`).
    SchemaNodes,
    /// `template::Options::time_budget` (default 10 s; `--compile-budget-ms`).
    Time,
}

impl Budget {
    /// The option that sets it, as messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Self::States => "Limits::max_states",
            Self::AutomatonBytes => "Limits::max_automaton_bytes",
            Self::Work => "Limits::max_work",
            Self::SchemaNodes => "JsonOptions::max_nodes",
            Self::Time => "Options::time_budget",
        }
    }
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// [`BuildError::TooLarge`]'s message: a size passed, or the time budget.
fn past_budget(budget: &Budget, what: &str) -> String {
    match budget {
        Budget::Time => format!("{what} (budget {budget})"),
        _ => format!("the automaton is too large: {what} (budget {budget})"),
    }
}

/// Most entries of each of a table's arrays [`Table::rows_hash`] reads.
const ROWS_HASH_SAMPLE: usize = 4096;

/// Most bytes regex-automata may use for a pattern past the position construction's budgets
/// (about half a second of determinization on this machine).
const FALLBACK_BYTES: usize = 16 << 20;

/// Most NFA states of a pattern past the position construction's work budget that
/// regex-automata is given (within [`FALLBACK_BYTES`]).
const FALLBACK_WORK_NFA_STATES: usize = 10_000;

/// A table that could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The automaton passed [`Limits`] ("the automaton is too large: more than 50 states
    /// (budget Limits::max_states)"; past the deadline, "building took longer than the
    /// time budget (budget Options::time_budget)").
    #[error("{}", past_budget(.budget, .what))]
    TooLarge {
        /// Which budget.
        budget: Budget,
        /// The numbers.
        what: String,
    },
    /// regex-automata refused the pattern.
    #[error("cannot build the automaton: {0}")]
    Regex(String),
}

/// A complete DFA over bytes with byte classes. See the module documentation.
#[derive(Clone)]
pub struct Table {
    /// Byte -> column.
    classes: [u8; 256],
    /// Columns per state.
    stride: usize,
    /// `states * stride` next states.
    trans: Vec<u32>,
    /// Per state: the bytes so far are a word of the language.
    accept: Vec<bool>,
    /// Known to be trimmed (every state reachable, numbered breadth first, and able to
    /// finish): [`Table::trim`] has nothing to do.
    trimmed: bool,
    /// Known to be minimal ([`Table::minimize`] has nothing to do): built by
    /// [`Table::minimize`] or by the bottom-up product of an acyclic table
    /// ([`Table::intersect`], [`Table::difference`]).
    minimal: bool,
    /// Values read in place instead of copied ([`Table::splice_shared`]): the states from
    /// `accept.len()` on, computed from a shared value table and a return state.
    calls: Option<Arc<Calls>>,
}

/// A state of a [`Table`] with the innermost table that stores it as a row ([`Table::locate`]):
/// the table itself, or a shared value read in place (values may read values). Stepping it
/// ([`Table::next_located`]) looks up that row directly instead of searching for the call.
#[derive(Debug, Clone, Copy)]
pub struct Located<'a> {
    /// The table storing it, the row there, and the offset (`state = offset + local` for a
    /// value; 0 for the table itself). Sixteen bytes: a walk keeps one per trie depth and
    /// reads back what it wrote one step before.
    within: &'a Table,
    /// The row (low 32 bits) and the offset (high 32 bits), in one word: with the table,
    /// two words, which a call returns in registers (a walk's loop stepping past a value
    /// gets it back without a round trip through memory).
    at: u64,
}

impl<'a> Located<'a> {
    #[inline(always)]
    fn new(within: &'a Table, local: u32, offset: u32) -> Self {
        Self {
            within,
            at: (offset as u64) << 32 | local as u64,
        }
    }

    /// The row in the table storing the state.
    #[inline(always)]
    fn local(&self) -> u32 {
        self.at as u32
    }

    /// The offset of the storing table's rows (0 for the table itself).
    #[inline(always)]
    fn offset(&self) -> u32 {
        (self.at >> 32) as u32
    }

    /// The state, numbered in the table that located it.
    #[inline(always)]
    pub fn state(&self) -> u32 {
        self.offset() + self.local()
    }

    /// Whether it is [`DEAD`] (a value's live state is never its row 0, [`DEAD`]).
    #[inline(always)]
    pub fn is_dead(&self) -> bool {
        self.local() == DEAD
    }
}

/// The return states of the last few value states a walk left
/// ([`Table::next_located_with`]): a value state (in the walked table's numbering) and the
/// located state its call returns to.
#[derive(Debug, Clone, Copy, Default)]
pub struct Returns<'a> {
    kept: [Option<(u32, Located<'a>)>; RETURNS_KEPT],
    next: usize,
}

/// How many return states [`Returns`] keeps (a token that leaves nested values at once
/// leaves one per level).
const RETURNS_KEPT: usize = 4;

impl<'a> Returns<'a> {
    #[inline]
    fn find(&self, state: u32) -> Option<Located<'a>> {
        self.kept
            .iter()
            .flatten()
            .find(|(s, _)| *s == state)
            .map(|&(_, ret)| ret)
    }

    fn keep(&mut self, state: u32, ret: Located<'a>) {
        self.kept[self.next] = Some((state, ret));
        self.next = (self.next + 1) % RETURNS_KEPT;
    }
}

/// The shared part of a table built by [`Table::splice_shared`]: each *call* is a place
/// where a word of a value table is read and the table then goes on from a return state.
/// State `starts[c] + r - 1` is call `c` with its value in state `r` (`r >= 1`); its
/// transitions are computed (the value's, then, once the value accepts, the return
/// state's, which never overlap), so one value table serves every place that reads it.
#[derive(Debug)]
struct Calls {
    /// First state of each call (ascending; the first is the number of stored states).
    starts: Vec<u32>,
    /// Per call: its value (index into `values`).
    value: Vec<u32>,
    /// Per call: the stored state it goes on from after the value.
    ret: Vec<u32>,
    /// The value tables (complete, trimmed, without calls of their own).
    values: Vec<Arc<Table>>,
    /// States in all (stored and computed).
    end: u32,
    /// Per block of [`CALL_BLOCK`] computed states (from `starts[0]`): the call holding
    /// the block's first state, so that finding a state's call searches a few calls, not
    /// all of them (4 bytes per block).
    blocks: Vec<u32>,
}

/// Computed states per entry of [`Calls::blocks`].
const CALL_BLOCK: u32 = 64;

impl Calls {
    /// The calls: first states `starts` (ascending), values, return states, the values'
    /// tables, and the number of states in all.
    fn new(
        starts: Vec<u32>,
        value: Vec<u32>,
        ret: Vec<u32>,
        values: Vec<Arc<Table>>,
        end: u32,
    ) -> Self {
        let first = starts.first().copied().unwrap_or(end);
        let mut blocks = Vec::new();
        let mut c = 0usize;
        let mut at = first;
        while at < end {
            while c + 1 < starts.len() && starts[c + 1] <= at {
                c += 1;
            }
            blocks.push(c as u32);
            at = at.saturating_add(CALL_BLOCK);
        }
        Self {
            starts,
            value,
            ret,
            values,
            end,
            blocks,
        }
    }

    /// The call a computed state belongs to, and its value state.
    #[inline]
    fn locate(&self, state: u32) -> Option<(usize, u32)> {
        if state >= self.end {
            return None;
        }
        let first = *self.starts.first()?;
        let b = (state.checked_sub(first)? / CALL_BLOCK) as usize;
        let lo = *self.blocks.get(b)? as usize;
        let hi = self
            .blocks
            .get(b + 1)
            .map_or(self.starts.len(), |&h| h as usize + 1);
        let c = lo
            + self.starts[lo..hi]
                .partition_point(|&s| s <= state)
                .checked_sub(1)?;
        Some((c, state - self.starts[c] + 1))
    }
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("states", &self.len())
            .field("classes", &self.stride)
            .finish()
    }
}

/// Most tables [`Table::from_hir`] keeps, and most bytes they may hold in all (all are
/// dropped when one more would pass either); a table of more than 1/16 of the bytes is not
/// kept.
const HIR_CACHE: usize = 1024;
const HIR_CACHE_BYTES: usize = 64 << 20;

/// A 128-bit digest of `value`'s key bytes ([`DigestKey`]), streamed through a small
/// buffer (the bytes are never stored whole, however long): two SipHash-1-3 hashers under
/// keys drawn at random once per process (std's `RandomState`, whose second key is the
/// first plus one: the second hasher also starts with a byte of its own, so the two never
/// hash the same input under related keys). Two keys that differ get the same digest with
/// probability about 2^-128, and a schema cannot be written to make two of its parts
/// collide without the keys. The keys of [`KeptTables`] and of a compile's values met again
/// (`general::General::slot_of_value`).
pub(crate) fn digest(value: &dyn DigestKey) -> (u64, u64) {
    use std::hash::{BuildHasher, Hasher, RandomState};
    static KEYS: std::sync::OnceLock<(RandomState, RandomState)> = std::sync::OnceLock::new();
    let keys = KEYS.get_or_init(|| (RandomState::new(), RandomState::new()));
    let mut d = KeyWriter {
        hashers: (keys.0.build_hasher(), keys.1.build_hasher()),
        buf: [0; KEY_BUFFER],
        len: 0,
    };
    d.hashers.1.write_u8(0xA5);
    value.write_key(&mut d);
    d.flush();
    (d.hashers.0.finish(), d.hashers.1.finish())
}

/// Bytes [`KeyWriter`] gathers before it hands them to its hashers (one SipHash call per
/// buffer, not per field).
const KEY_BUFFER: usize = 1024;

/// The sink of [`DigestKey::write_key`]: bytes gathered and fed to both hashers of
/// [`digest`].
pub(crate) struct KeyWriter {
    hashers: (std::hash::DefaultHasher, std::hash::DefaultHasher),
    buf: [u8; KEY_BUFFER],
    len: usize,
}

impl KeyWriter {
    fn flush(&mut self) {
        use std::hash::Hasher;
        self.hashers.0.write(&self.buf[..self.len]);
        self.hashers.1.write(&self.buf[..self.len]);
        self.len = 0;
    }

    /// Appends `bytes` as they are (callers write a length or a tag first).
    pub(crate) fn bytes(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.len == KEY_BUFFER {
                self.flush();
            }
            let n = bytes.len().min(KEY_BUFFER - self.len);
            self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
        }
    }

    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }

    pub(crate) fn len_of(&mut self, n: usize) {
        self.bytes(&(n as u64).to_le_bytes());
    }
}

/// A key of [`digest`]: written as a prefix-free sequence of bytes (tags and lengths before
/// what they describe), so two keys write the same bytes only when they are equal.
pub(crate) trait DigestKey {
    /// Writes this key's bytes to `out`.
    fn write_key(&self, out: &mut KeyWriter);
}

impl DigestKey for str {
    fn write_key(&self, out: &mut KeyWriter) {
        out.len_of(self.len());
        out.bytes(self.as_bytes());
    }
}

impl DigestKey for String {
    fn write_key(&self, out: &mut KeyWriter) {
        self.as_str().write_key(out);
    }
}

impl<T: DigestKey> DigestKey for [T] {
    fn write_key(&self, out: &mut KeyWriter) {
        out.len_of(self.len());
        for x in self {
            x.write_key(out);
        }
    }
}

impl<T: DigestKey> DigestKey for Vec<T> {
    fn write_key(&self, out: &mut KeyWriter) {
        self.as_slice().write_key(out);
    }
}

impl DigestKey for u64 {
    fn write_key(&self, out: &mut KeyWriter) {
        out.bytes(&self.to_le_bytes());
    }
}

impl<T: DigestKey + ?Sized> DigestKey for &T {
    fn write_key(&self, out: &mut KeyWriter) {
        (**self).write_key(out);
    }
}

impl<A: DigestKey, B: DigestKey> DigestKey for (A, B) {
    fn write_key(&self, out: &mut KeyWriter) {
        self.0.write_key(out);
        self.1.write_key(out);
    }
}

/// A HIR by its structure, node by node in pre-order (an explicit stack, so a deep HIR
/// does not deepen the call stack): a tag per node kind, then the node's own fields
/// (literal bytes, class ranges, look-around, repetition bounds and greediness, capture
/// index and name), then the count of its children.
impl DigestKey for Hir {
    fn write_key(&self, out: &mut KeyWriter) {
        write_hir_key(self, out, &mut |l, out| {
            out.len_of(l.len());
            out.bytes(l);
        });
    }
}

/// [`DigestKey`] for a HIR (`hir`), each literal's bytes written by `literal` (after the
/// literal's tag; prefix-free on its own): [`Hir`]'s key writes them with their length,
/// `general`'s content keys write a slot's key in place of its placeholder.
pub(crate) fn write_hir_key(
    hir: &Hir,
    out: &mut KeyWriter,
    literal: &mut dyn FnMut(&[u8], &mut KeyWriter),
) {
    use regex_syntax::hir::{Class, HirKind};
    let mut stack: Vec<&Hir> = vec![hir];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Empty => out.bytes(&[0]),
            HirKind::Literal(l) => {
                out.bytes(&[1]);
                literal(&l.0, out);
            }
            HirKind::Class(Class::Unicode(c)) => {
                out.bytes(&[2]);
                out.len_of(c.ranges().len());
                for r in c.ranges() {
                    out.u32(r.start() as u32);
                    out.u32(r.end() as u32);
                }
            }
            HirKind::Class(Class::Bytes(c)) => {
                out.bytes(&[3]);
                out.len_of(c.ranges().len());
                for r in c.ranges() {
                    out.bytes(&[r.start(), r.end()]);
                }
            }
            HirKind::Look(look) => {
                out.bytes(&[4]);
                out.u32(look.as_repr());
            }
            HirKind::Repetition(r) => {
                out.bytes(&[5, u8::from(r.greedy), u8::from(r.max.is_some())]);
                out.u32(r.min);
                out.u32(r.max.unwrap_or(0));
                stack.push(&r.sub);
            }
            HirKind::Capture(c) => {
                out.bytes(&[6, u8::from(c.name.is_some())]);
                out.u32(c.index);
                if let Some(name) = &c.name {
                    name.write_key(out);
                }
                stack.push(&c.sub);
            }
            HirKind::Concat(subs) | HirKind::Alternation(subs) => {
                let tag = if matches!(h.kind(), HirKind::Concat(_)) {
                    7
                } else {
                    8
                };
                out.bytes(&[tag]);
                out.len_of(subs.len());
                stack.extend(subs.iter().rev());
            }
        }
    }
}

/// Tables kept process-wide, keyed by the [`digest`] of a [`DigestKey`] (a HIR, or several
/// HIRs for a product of them) and the size budgets they were built within: at most
/// `max_tables` of them, and at most `max_bytes` with their keys (all are dropped when one
/// more would pass either); a table of more than `max_bytes / share` is not kept. Tables
/// are kept behind an `Arc`, so a table found is shared with every compiled constraint that
/// holds it, not copied.
pub(crate) struct KeptTables<V = Arc<Table>> {
    cache: std::sync::OnceLock<std::sync::Mutex<Kept<V>>>,
    max_tables: usize,
    max_bytes: usize,
    share: usize,
}

/// A key of [`KeptTables`]: the [`digest`] of what was built and the size budgets.
type KeptKey = ((u64, u64), usize, usize, usize);

/// The tables of [`KeptTables`] and their bytes in all.
type Kept<V> = (HashMap<KeptKey, V>, usize);

/// What [`KeptTables`] keeps: shared tables, or tables with what was learned building
/// them; `memory` counts its bytes against the cache's bound.
pub(crate) trait Keepable: Clone {
    /// The bytes it holds ([`Table::memory`] of its tables).
    fn memory(&self) -> usize;
}

impl Keepable for Arc<Table> {
    fn memory(&self) -> usize {
        Table::memory(self)
    }
}

impl<V: Keepable> KeptTables<V> {
    /// An empty cache with these bounds.
    pub(crate) const fn new(max_tables: usize, max_bytes: usize, share: usize) -> Self {
        Self {
            cache: std::sync::OnceLock::new(),
            max_tables,
            max_bytes,
            share,
        }
    }

    /// [`KeptTables::get_or_build`] for what `make` gives.
    pub(crate) fn get_or_make<E>(
        &'static self,
        key: &dyn DigestKey,
        limits: &Limits,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<V, E> {
        let cache = self
            .cache
            .get_or_init(|| std::sync::Mutex::new((HashMap::default(), 0)));
        let key = (
            digest(key),
            limits.max_states,
            limits.max_automaton_bytes,
            limits.max_work,
        );
        if let Some(t) = cache.lock().ok().and_then(|c| c.0.get(&key).cloned()) {
            return Ok(t);
        }
        let kept = make()?;
        let bytes = kept.memory() + std::mem::size_of::<KeptKey>();
        if bytes <= self.max_bytes / self.share {
            if let Ok(mut c) = cache.lock() {
                if c.0.len() >= self.max_tables || c.1 + bytes > self.max_bytes {
                    *c = (HashMap::default(), 0);
                }
                c.0.insert(key, kept.clone());
                c.1 += bytes;
            }
        }
        Ok(kept)
    }
}

impl KeptTables {
    /// The table kept for `key` (its [`digest`]) under
    /// `limits`' size budgets, or `build()`'s, which is kept when it fits. Errors are
    /// `build`'s and are not kept; the deadline is not part of the key (a table found is
    /// served even past it).
    pub(crate) fn get_or_build<E>(
        &'static self,
        key: &dyn DigestKey,
        limits: &Limits,
        build: impl FnOnce() -> Result<Table, E>,
    ) -> Result<Arc<Table>, E> {
        self.get_or_make(key, limits, || build().map(Arc::new))
    }
}

/// Where a table reads values ([`Table::splice_many`], [`Table::splice_shared`]): each
/// distinct (value, continuation) pair that `find` gives once, in `continuations` (its tag
/// is its index + 1; tag 0 is the table itself), and per state the tags of its pairs.
struct Places {
    continuations: Vec<(usize, u32)>,
    tags: Vec<Vec<u32>>,
}

impl Places {
    fn of<F>(table: &Table, find: &F) -> Self
    where
        F: Fn(&Table, u32) -> Vec<(usize, u32)>,
    {
        let mut tag_of: HashMap<(usize, u32), u32> = HashMap::default();
        let mut continuations = Vec::new();
        let mut tags = vec![Vec::new(); table.len()];
        for s in 1..table.len() as u32 {
            tags[s as usize] = find(table, s)
                .into_iter()
                .map(|pair| {
                    *tag_of.entry(pair).or_insert_with(|| {
                        continuations.push(pair);
                        continuations.len() as u32
                    })
                })
                .collect();
        }
        Self {
            continuations,
            tags,
        }
    }

    /// Closes a determinized set of (tag, state) pairs: a state of the table adds the start
    /// of each value it reads as a copy (the tags `copied` selects), an accepting state of a
    /// copy adds its continuation (`accepting(value, state)`); then sorted, each pair once.
    fn close(
        &self,
        set: &mut Vec<(u32, u32)>,
        copied: impl Fn(u32) -> bool,
        accepting: impl Fn(usize, u32) -> bool,
    ) {
        let mut i = 0;
        while i < set.len() {
            let (tag, state) = set[i];
            if tag == 0 {
                for &t in &self.tags[state as usize] {
                    let e = (t, START);
                    if copied(t) && !set.contains(&e) {
                        set.push(e);
                    }
                }
            } else {
                let (k, q) = self.continuations[tag as usize - 1];
                if accepting(k, state) && !set.contains(&(0, q)) {
                    set.push((0, q));
                }
            }
            i += 1;
        }
        set.sort_unstable();
        set.dedup();
    }
}

/// The tables of [`Table::from_hir`].
static HIR_TABLES: KeptTables = KeptTables::new(HIR_CACHE, HIR_CACHE_BYTES, 16);

thread_local! {
    static SHARING: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Whether [`Table::splice_shared`] shares values on this thread (default `true`; `false`:
/// it copies them as [`Table::splice`] does). For tests and measurements that compare
/// with copied tables.
#[doc(hidden)]
pub fn set_sharing(on: bool) {
    SHARING.with(|s| s.set(on));
}

/// Whether [`Table::splice_shared`] shares values on this thread ([`set_sharing`]): part of
/// the key of a spliced table kept process-wide.
pub(crate) fn sharing() -> bool {
    SHARING.with(|s| s.get())
}

/// For [`Table::try_splice_shared`]: the steps of one row already looked up, by their
/// pairs before the closure (most columns of a row step to a few sets: every letter in a
/// string body to one), each closed and hashed once.
#[derive(Default)]
struct RowSteps {
    /// The pairs of every step looked up, one after another.
    pairs: Vec<(u32, u32)>,
    /// Per step: where its pairs start in `pairs`, how many, and its set's id.
    steps: Vec<(usize, usize, u32)>,
    /// The steps by a hash of their pairs: a row of a value copied in steps to many sets
    /// of many pairs, found by hash, not by comparing each.
    index: HashMap<u64, usize>,
}

impl RowSteps {
    fn clear(&mut self) {
        self.pairs.clear();
        self.steps.clear();
        self.index.clear();
    }

    /// The id of the set the pairs of `scratch` close to (`scratch` closed when it is new).
    fn id(
        &mut self,
        scratch: &mut Vec<(u32, u32)>,
        grow: &mut Grow<PairSet>,
        closure: &impl Fn(&mut Vec<(u32, u32)>),
    ) -> u32 {
        let hash = {
            use std::hash::{Hash, Hasher};
            let mut h = rustc_hash::FxHasher::default();
            scratch.hash(&mut h);
            h.finish()
        };
        let same = |&(at, len, _): &(usize, usize, u32)| self.pairs[at..at + len] == scratch[..];
        // The step under this hash, or (two sets, one hash) any step.
        let found = match self.index.get(&hash) {
            Some(&i) if same(&self.steps[i]) => Some(self.steps[i].2),
            Some(_) => self.steps.iter().find(|s| same(s)).map(|s| s.2),
            None => None,
        };
        if let Some(id) = found {
            return id;
        }
        let at = self.pairs.len();
        self.pairs.extend_from_slice(scratch);
        closure(scratch);
        let id = grow.id(PairSet::of_slice(scratch));
        self.index.entry(hash).or_insert(self.steps.len());
        self.steps.push((at, self.pairs.len() - at, id));
        id
    }
}

/// For [`Table::try_splice_shared`]: per column (`value_class[k][c]`: value `k`'s class of
/// column `c`'s bytes), a joint class of the values `ks`, equal for two columns where every
/// one of them has one class; and how many joint classes there are.
fn joint_classes(ks: &[usize], value_class: &[Vec<usize>], stride: usize) -> (Vec<u32>, usize) {
    let mut ids: HashMap<Vec<usize>, u32> = HashMap::default();
    let out = (0..stride)
        .map(|c| {
            let signature: Vec<usize> = ks.iter().map(|&k| value_class[k][c]).collect();
            let next = ids.len() as u32;
            *ids.entry(signature).or_insert(next)
        })
        .collect();
    (out, ids.len())
}

/// One step of [`Table::build_with_calls`]'s machine.
enum Step<K> {
    /// No way on.
    Dead,
    /// To a state.
    To(K),
    /// Into a shared value (its state after the byte), then on from a state.
    Call(Arc<Table>, u32, K),
}

/// A sorted set of `(tag, state)` pairs, one pair without a heap allocation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum PairSet {
    One([(u32, u32); 1]),
    Many(Box<[(u32, u32)]>),
}

impl PairSet {
    fn of(pairs: Vec<(u32, u32)>) -> Self {
        Self::of_slice(&pairs)
    }

    fn of_slice(pairs: &[(u32, u32)]) -> Self {
        match pairs {
            [one] => Self::One([*one]),
            many => Self::Many(many.into()),
        }
    }

    fn pairs(&self) -> &[(u32, u32)] {
        match self {
            Self::One(p) => p,
            Self::Many(p) => p,
        }
    }
}

/// Builds a table state by state: states are discovered breadth first from the start.
struct Grow<K> {
    ids: HashMap<K, u32>,
    queue: VecDeque<K>,
}

impl<K: std::hash::Hash + Eq + Clone> Grow<K> {
    fn new() -> Self {
        Self {
            ids: HashMap::default(),
            queue: VecDeque::new(),
        }
    }

    /// The id of `key`, discovering it (ids start at 1; 0 is dead). A known key is looked
    /// up without a copy (most transitions lead to known states); a new one is copied once,
    /// for the queue.
    fn id(&mut self, key: K) -> u32 {
        self.find(key).0
    }

    /// [`Self::id`] and whether the key is new.
    fn find(&mut self, key: K) -> (u32, bool) {
        if let Some(&id) = self.ids.get(&key) {
            return (id, false);
        }
        let id = self.ids.len() as u32 + 1;
        self.ids.insert(key.clone(), id);
        self.queue.push_back(key);
        (id, true)
    }
}

/// A pair of states on the path of [`Table::product_acyclic`]: the next column to settle and
/// the last successor pair settled with its id.
#[derive(Clone, Copy)]
struct Frame {
    a: u32,
    b: u32,
    column: usize,
    last: (u32, u32, u32),
}

/// The coarsest byte partition finer than every given one: bytes with the same column in all
/// of `maps` share a column. Returns the map and the number of columns.
fn merge_classes(maps: &[&[u8; 256]]) -> ([u8; 256], usize) {
    let mut out = [0u8; 256];
    if maps.len() <= 8 {
        // The columns of up to eight maps in one word: no allocation per byte.
        let mut seen: HashMap<u64, u8> = HashMap::default();
        for (b, slot) in out.iter_mut().enumerate() {
            let key = maps.iter().fold(0u64, |k, m| k << 8 | m[b] as u64);
            let n = seen.len();
            *slot = *seen.entry(key).or_insert(n as u8);
        }
        return (out, seen.len());
    }
    let mut seen: HashMap<Vec<u8>, u8> = HashMap::default();
    for (b, slot) in out.iter_mut().enumerate() {
        let key: Vec<u8> = maps.iter().map(|m| m[b]).collect();
        let n = seen.len();
        *slot = *seen.entry(key).or_insert(n as u8);
    }
    let n = seen.len();
    (out, n)
}

/// One representative byte per column.
pub(crate) fn representatives(classes: &[u8; 256], stride: usize) -> Vec<u8> {
    let mut reps = vec![0u8; stride];
    let mut set = vec![false; stride];
    for (b, &class) in classes.iter().enumerate() {
        let c = class as usize;
        if !set[c] {
            set[c] = true;
            reps[c] = b as u8;
        }
    }
    reps
}

impl Table {
    /// Number of states, the dead state included.
    pub fn len(&self) -> usize {
        match &self.calls {
            Some(calls) => calls.end as usize,
            None => self.accept.len(),
        }
    }

    /// Whether some states are computed from shared value tables ([`Self::splice_shared`]).
    pub fn is_shared(&self) -> bool {
        self.calls.is_some()
    }

    /// States stored as rows (the others are computed from shared values).
    pub fn stored_states(&self) -> usize {
        self.accept.len()
    }

    /// The states this table counts against [`Limits::max_states`]: its stored rows, and its
    /// computed states (read in place from shared values) divided by
    /// [`IN_PLACE_PER_STATE`].
    pub fn budget_states(&self) -> usize {
        budget_states(self.stored_states(), self.len() - self.stored_states())
    }

    /// Whether the language is empty (after [`Self::trim`]: the start state accepts nothing
    /// and leads nowhere).
    pub fn is_empty(&self) -> bool {
        self.len() <= 1
            || (!self.accept[START as usize]
                && self.trans[self.stride..2 * self.stride]
                    .iter()
                    .all(|&t| t == DEAD))
    }

    /// Columns per state (distinct byte classes).
    pub fn classes(&self) -> usize {
        self.stride
    }

    /// The column of `byte`.
    #[inline]
    pub fn class_of(&self, byte: u8) -> usize {
        self.classes[byte as usize] as usize
    }

    /// The next states of stored state `state`, one per column ([`Self::class_of`]);
    /// `None` for a computed state (read in place from a shared value) or one past the
    /// table.
    pub fn row(&self, state: u32) -> Option<&[u32]> {
        let at = state as usize * self.stride;
        self.trans.get(at..at + self.stride)
    }

    /// Heap bytes of the table, shared value tables included ([`Self::shared_memory`]).
    pub fn memory(&self) -> usize {
        self.trans.len() * 4 + self.accept.len() + self.shared_memory()
    }

    /// Heap bytes of the shared value tables this table reads ([`Self::splice_shared`];
    /// they are shared with other tables, e.g. the cached any-value readers), and of the
    /// calls that read them.
    pub fn shared_memory(&self) -> usize {
        self.calls.as_ref().map_or(0, |c| {
            c.starts.len() * 12
                + c.blocks.len() * 4
                + c.values.iter().map(|v| v.memory()).sum::<usize>()
        })
    }

    /// The state after `byte` from `state`.
    #[inline]
    pub fn next(&self, state: u32, byte: u8) -> u32 {
        match self
            .trans
            .get(state as usize * self.stride + self.classes[byte as usize] as usize)
        {
            Some(&t) => t,
            None => self.next_computed(state, byte),
        }
    }

    /// [`Self::next`] from a computed state (past the stored rows).
    #[inline(never)]
    fn next_computed(&self, state: u32, byte: u8) -> u32 {
        let Some((c, r)) = self
            .calls
            .as_ref()
            .and_then(|k| k.locate(state).map(|l| (k, l)))
        else {
            return DEAD;
        };
        let (call, r) = r;
        let value = &c.values[c.value[call] as usize];
        let t = value.next(r, byte);
        if t != DEAD {
            c.starts[call] + t - 1
        } else if value.is_accepting(r) {
            self.next(c.ret[call], byte)
        } else {
            DEAD
        }
    }

    /// `state` with the innermost table that stores it resolved ([`Located`]), for walks
    /// that step many times from each state (token masks). A state past the table is
    /// [`DEAD`].
    #[inline]
    pub fn locate(&self, state: u32) -> Located<'_> {
        let state = if (state as usize) < self.len() {
            state
        } else {
            DEAD
        };
        match self.value_of(state) {
            Some((_, within, local, offset)) => Located::new(within, local, offset),
            None => Located::new(self, state, 0),
        }
    }

    /// [`Self::next`] from a located state: a step that stays in the table storing it is
    /// one lookup there; leaving a value (or entering one) locates the state again.
    ///
    /// The step within one table is inlined into the caller's loop; the rest
    /// ([`Self::next_relocated`]) is not, so that walks stay small enough to be inlined
    /// wherever they are called from.
    #[inline(always)]
    pub fn next_located<'a>(&'a self, from: Located<'a>, byte: u8) -> Located<'a> {
        let w = from.within;
        let t = w.trans[from.local() as usize * w.stride + w.classes[byte as usize] as usize];
        if t != DEAD && (t as usize) < w.accept.len() {
            Located::new(w, t, from.offset())
        } else if t == DEAD && std::ptr::eq(w, self) {
            // [`DEAD`] is a stored state of every table.
            Located::new(self, DEAD, 0)
        } else {
            self.next_relocated(from, t, byte)
        }
    }

    /// [`Self::next_located`] where `t`, the step in the table storing `from`, is [`DEAD`]
    /// or past that table's stored states.
    #[inline(never)]
    fn next_relocated<'a>(&'a self, from: Located<'a>, t: u32, byte: u8) -> Located<'a> {
        self.next_relocated_with(from, t, byte, &mut Returns::default())
    }

    /// [`Self::next_located`], remembering in `returns` the return states of the values it
    /// leaves: a walk over a token trie leaves one value state by many bytes (every token
    /// that closes a string and goes on), and finds where it returns once.
    #[inline(always)]
    pub fn next_located_with<'a>(
        &'a self,
        from: Located<'a>,
        byte: u8,
        returns: &mut Returns<'a>,
    ) -> Located<'a> {
        let w = from.within;
        let t = w.trans[from.local() as usize * w.stride + w.classes[byte as usize] as usize];
        if t != DEAD && (t as usize) < w.accept.len() {
            Located::new(w, t, from.offset())
        } else if t == DEAD && std::ptr::eq(w, self) {
            Located::new(self, DEAD, 0)
        } else {
            self.next_relocated_with(from, t, byte, returns)
        }
    }

    #[inline(never)]
    fn next_relocated_with<'a>(
        &'a self,
        from: Located<'a>,
        t: u32,
        byte: u8,
        returns: &mut Returns<'a>,
    ) -> Located<'a> {
        let w = from.within;
        if t != DEAD {
            return self.locate(from.offset() + t);
        }
        if std::ptr::eq(w, self) || !w.accept[from.local() as usize] {
            // [`DEAD`] is a stored state of every table.
            return Located::new(self, DEAD, 0);
        }
        // The value accepts here: its call's return state goes on, stepped where it is
        // stored (leaving the value that holds that state, in turn, when it accepts).
        let state = from.state();
        let ret = match returns.find(state) {
            Some(ret) => ret,
            None => {
                let ret = match self.return_of(state) {
                    Some(ret) => self.locate(ret),
                    None => Located::new(self, DEAD, 0),
                };
                returns.keep(state, ret);
                ret
            }
        };
        if ret.is_dead() {
            return ret;
        }
        self.next_located_with(ret, byte, returns)
    }

    /// The return state of the innermost call computed state `state` belongs to (the state
    /// the table goes on from once that call's value accepts), numbered here. `None` for a
    /// stored state.
    fn return_of(&self, state: u32) -> Option<u32> {
        let mut found = None;
        let (mut table, mut state, mut offset) = (self, state, 0);
        while let Some(c) = table.calls.as_ref() {
            let Some((call, r)) = c.locate(state) else {
                break;
            };
            found = Some(offset + c.ret[call]);
            offset += c.starts[call] - 1;
            (table, state) = (&*c.values[c.value[call] as usize], r);
        }
        found
    }

    /// The innermost value a computed state reads ([`Self::splice_shared`]; a value table
    /// may read values of its own): an id of the value table (its address, the same for
    /// every call and every table that reads it), the table, the state in it where it is
    /// stored, and the offset of the call (value state `r` is state `offset + r` here).
    /// `None` for a stored state.
    pub fn value_of(&self, state: u32) -> Option<(usize, &Table, u32, u32)> {
        let mut found = None;
        let (mut table, mut state, mut offset) = (self, state, 0);
        while let Some(c) = table.calls.as_ref() {
            let Some((call, r)) = c.locate(state) else {
                break;
            };
            let value = &c.values[c.value[call] as usize];
            offset += c.starts[call] - 1;
            found = Some((Arc::as_ptr(value) as usize, &**value, r, offset));
            (table, state) = (value, r);
        }
        found
    }

    /// [`Self::is_accepting`] of a computed state.
    #[inline(never)]
    fn accepting_computed(&self, state: u32) -> bool {
        self.calls.as_ref().is_some_and(|c| {
            c.locate(state).is_some_and(|(call, r)| {
                c.values[c.value[call] as usize].is_accepting(r)
                    && self.accept[c.ret[call] as usize]
            })
        })
    }

    /// The bytes some accepting state reads without dying (per byte), or `None` where no
    /// state accepts. Stored states by their rows; computed ones call by call, not state by
    /// state: a computed state accepts where its value does and its call's return state
    /// does, and then reads what the value reads there or, where the value dies, what the
    /// return state reads ([`Self::next_located`]). So a call whose return accepts adds its
    /// value's bytes (the same question, one level in, asked once per value; the return
    /// state's row is one of the stored accepting rows already), and a call whose return
    /// does not accept adds nothing (most calls return into an object or array).
    fn live_after_accepting(&self) -> Option<[bool; 256]> {
        let mut live = vec![false; self.stride];
        let mut any = false;
        for (r, _) in self.accept.iter().enumerate().skip(1).filter(|(_, &a)| a) {
            any = true;
            let row = &self.trans[r * self.stride..(r + 1) * self.stride];
            for (l, &t) in live.iter_mut().zip(row) {
                *l |= t != DEAD;
            }
        }
        let mut bytes: [bool; 256] = std::array::from_fn(|b| live[self.classes[b] as usize]);
        if let Some(c) = &self.calls {
            let mut of_value: Vec<Option<Option<[bool; 256]>>> = vec![None; c.values.len()];
            for call in 0..c.starts.len() {
                if !self.accept[c.ret[call] as usize] {
                    continue;
                }
                let k = c.value[call] as usize;
                let Some(inner) =
                    *of_value[k].get_or_insert_with(|| c.values[k].live_after_accepting())
                else {
                    continue;
                };
                any = true;
                for (x, &y) in bytes.iter_mut().zip(&inner) {
                    *x |= y;
                }
            }
        }
        any.then_some(bytes)
    }

    /// The same table with every state stored as a row (the shared values copied in; each
    /// computed state located once, [`Self::locate`], then stepped on every column). It
    /// checks no limit: its rows are [`Self::len`], up to [`IN_PLACE_PER_STATE`] times the
    /// state limit the table was built under, so a caller that may meet a shared table
    /// checks `len` first (`compact`, `trim` and `trim_map` meet only tables built without
    /// calls, or trimmed ones, which `trim` returns as they are; [`Self::splice_many`]
    /// computes the rows it reaches, one at a time).
    pub fn stored(self) -> Self {
        if self.calls.is_none() {
            return self;
        }
        let n = self.len();
        let reps = representatives(&self.classes, self.stride);
        let mut trans = Vec::with_capacity(n * self.stride);
        trans.extend_from_slice(&self.trans);
        let mut accept = Vec::with_capacity(n);
        accept.extend_from_slice(&self.accept);
        for s in self.accept.len() as u32..n as u32 {
            accept.push(self.is_accepting(s));
            // Located once, stepped on every column: a step that stays in the value is one
            // lookup there, not a search of the calls per column.
            let from = self.locate(s);
            trans.extend(reps.iter().map(|&b| self.next_located(from, b).state()));
        }
        Self {
            classes: self.classes,
            stride: self.stride,
            trans,
            accept,
            trimmed: self.trimmed,
            minimal: false,
            calls: None,
        }
    }

    /// One byte per column among the bytes `lo..=hi` (bytes of one column act alike in every
    /// state).
    pub fn columns_in(&self, lo: u8, hi: u8) -> Vec<u8> {
        let mut seen = vec![false; self.stride];
        let mut out = Vec::new();
        for b in lo..=hi {
            let c = self.classes[b as usize] as usize;
            if !seen[c] {
                seen[c] = true;
                out.push(b);
            }
        }
        out
    }

    /// Whether the bytes that led to `state` form a word of the language.
    #[inline]
    pub fn is_accepting(&self, state: u32) -> bool {
        match self.accept.get(state as usize) {
            Some(&a) => a,
            None => self.accepting_computed(state),
        }
    }

    /// The state after `bytes` from `state` ([`DEAD`] once dead).
    pub fn walk(&self, mut state: u32, bytes: &[u8]) -> u32 {
        for &b in bytes {
            state = self.next(state, b);
            if state == DEAD {
                break;
            }
        }
        state
    }

    /// Whether `bytes` read from `state` ends in an accepting state.
    pub fn matches_from(&self, state: u32, bytes: &[u8]) -> bool {
        self.is_accepting(self.walk(state, bytes))
    }

    /// Whether `bytes` is a word of the language.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.is_accepting(self.walk(START, bytes))
    }

    /// A table from its parts (`trans`: `accept.len() * stride` next states, row 0 dead);
    /// `trimmed` when the builder knows it is (see [`Table::trim`]).
    pub(crate) fn from_parts(
        classes: [u8; 256],
        stride: usize,
        trans: Vec<u32>,
        accept: Vec<bool>,
        trimmed: bool,
    ) -> Self {
        debug_assert_eq!(trans.len(), accept.len() * stride);
        Self {
            classes,
            stride,
            trans,
            accept,
            trimmed,
            minimal: false,
            calls: None,
        }
    }

    /// Per state, the fewest bytes from it to an accepting state (`u32::MAX`: none, the dead
    /// state included). For samplers that must finish: follow a byte that lowers it.
    ///
    /// Each state is located once and stepped on every column (a computed state of a shared
    /// value is not searched for per column), and the reverse edges are compressed rows,
    /// not a list per state: a table of 3 million states read in place mostly took 6.4 s
    /// and 319 MB with lists.
    pub fn distances(&self) -> Vec<u32> {
        let n = self.len();
        let reps = representatives(&self.classes, self.stride);
        // `(target, source)`, neighbouring columns to one target once.
        let mut edges: Vec<(u32, u32)> = Vec::new();
        for s in 1..n as u32 {
            let from = self.locate(s);
            let mut last = DEAD;
            for &b in &reps {
                let t = self.next_located(from, b).state();
                if t != DEAD && t != last {
                    edges.push((t, s));
                }
                last = t;
            }
        }
        let (start, sources) = by_target(n, &edges);
        drop(edges);
        let mut distance = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for s in 1..n as u32 {
            if self.is_accepting(s) {
                distance[s as usize] = 0;
                queue.push_back(s);
            }
        }
        while let Some(s) = queue.pop_front() {
            for &p in &sources[start[s as usize] as usize..start[s as usize + 1] as usize] {
                if distance[p as usize] == u32::MAX {
                    distance[p as usize] = distance[s as usize] + 1;
                    queue.push_back(p);
                }
            }
        }
        distance
    }

    /// Whether the table is known to be trimmed ([`Table::trim`] would change nothing).
    pub(crate) fn is_trimmed(&self) -> bool {
        self.trimmed
    }

    /// A hash of what [`Self::same_rows`] compares: the columns, the sizes, and at most
    /// [`ROWS_HASH_SAMPLE`] entries of the rows, accepting flags and calls, evenly spaced
    /// (equal tables hash alike; tables that differ outside the sample are told apart by
    /// [`Self::same_rows`]). Bounded, because a compile hashes every table it gives a slot,
    /// and the tables kept process-wide are large: hashing the whole `format: uri` table
    /// of up to 256 characters (42,375 states) was 40% of a Snowplow schema's compile.
    pub(crate) fn rows_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        fn sample<T: Hash>(items: &[T], h: &mut rustc_hash::FxHasher) {
            items.len().hash(h);
            let step = items.len().div_ceil(ROWS_HASH_SAMPLE).max(1);
            for x in items.iter().step_by(step) {
                x.hash(h);
            }
        }
        let mut h = rustc_hash::FxHasher::default();
        self.classes.hash(&mut h);
        self.stride.hash(&mut h);
        sample(&self.trans, &mut h);
        sample(&self.accept, &mut h);
        if let Some(c) = &self.calls {
            sample(&c.starts, &mut h);
            sample(&c.value, &mut h);
            sample(&c.ret, &mut h);
            for v in c.values.iter().take(ROWS_HASH_SAMPLE) {
                (Arc::as_ptr(v) as usize).hash(&mut h);
            }
        }
        h.finish()
    }

    /// Whether two tables are the same automaton, state for state: the same columns and
    /// rows, and the same values read in place (the same tables, by address). Minimized
    /// tables of one language are numbered alike ([`Self::minimize`]), so this finds them.
    pub(crate) fn same_rows(&self, other: &Self) -> bool {
        let calls = match (&self.calls, &other.calls) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                a.starts == b.starts
                    && a.value == b.value
                    && a.ret == b.ret
                    && a.end == b.end
                    && a.values.len() == b.values.len()
                    && a.values
                        .iter()
                        .zip(&b.values)
                        .all(|(x, y)| Arc::ptr_eq(x, y))
            }
            _ => false,
        };
        calls
            && self.classes == other.classes
            && self.stride == other.stride
            && self.accept == other.accept
            && self.trans == other.trans
    }

    /// Whether two trimmed tables have the same language (a pair of states reached by the
    /// same bytes must agree on acceptance and on being dead). For tests.
    pub fn same_language(&self, other: &Self) -> bool {
        let (classes, stride) = merge_classes(&[&self.classes, &other.classes]);
        let reps = representatives(&classes, stride);
        let mut grow = Grow::new();
        grow.id((START, START));
        while let Some((a, b)) = grow.queue.pop_front() {
            if self.is_accepting(a) != other.is_accepting(b) {
                return false;
            }
            for &byte in &reps {
                let (na, nb) = (self.next(a, byte), other.next(b, byte));
                if (na == DEAD) != (nb == DEAD) {
                    return false;
                }
                if na != DEAD {
                    grow.id((na, nb));
                }
            }
        }
        true
    }

    fn with_classes(classes: [u8; 256], stride: usize) -> Self {
        Self {
            classes,
            stride,
            // The dead state.
            trans: vec![DEAD; stride],
            accept: vec![false],
            trimmed: false,
            minimal: false,
            calls: None,
        }
    }

    fn push_state(&mut self, accepting: bool) {
        self.trans.extend(std::iter::repeat_n(DEAD, self.stride));
        self.accept.push(accepting);
    }

    /// [`Limits::check_row`] for a table that has just grown by one row: its rows past the
    /// dead state (the first pushed is row 1) and its states.
    fn check_size(&self, limits: &Limits) -> Result<(), BuildError> {
        limits.check_row(self.len() - 1, self.len())
    }

    /// The language of `hir`, matched as a whole (anchored at both ends).
    ///
    /// Errors: [`BuildError::TooLarge`] past `limits`; [`BuildError::Regex`] when
    /// regex-automata refuses the HIR (e.g. a look-around assertion a DFA cannot decide).
    ///
    /// Tables built are kept process-wide (at most [`HIR_CACHE`] of them and
    /// [`HIR_CACHE_BYTES`], keyed by the [`digest`] of the HIR's structure and the size budgets;
    /// not the deadline: a table found is served even past it): the same pattern, format,
    /// string bounds or value in another place or another schema is a copy, not a second
    /// construction.
    pub fn from_hir(hir: &Hir, limits: &Limits) -> Result<Self, BuildError> {
        HIR_TABLES
            .get_or_build(hir, limits, || Self::from_hir_uncached(hir, limits))
            .map(Arc::unwrap_or_clone)
    }

    /// [`Self::from_hir`] without the cache.
    fn from_hir_uncached(hir: &Hir, limits: &Limits) -> Result<Self, BuildError> {
        match crate::positions::table(hir, limits) {
            Ok(table) => Ok(table.trim()),
            Err(crate::positions::Refusal::Build(e)) => Err(e),
            Err(crate::positions::Refusal::Look) => Self::from_hir_by_regex_automata(hir, limits),
            // Past the position construction's budgets, regex-automata gets a smaller memory
            // bound too: its time grows with the DFA it builds, and a pattern this large
            // (`\p{L}{1,300}`) would otherwise take tens of seconds.
            Err(crate::positions::Refusal::Budget) => {
                let smaller = Limits {
                    max_automaton_bytes: limits.max_automaton_bytes.min(FALLBACK_BYTES),
                    ..*limits
                };
                Self::from_hir_by_regex_automata(hir, &smaller)
            }
            // Past the work budget, regex-automata's determinizer meets the same large sets,
            // and its time grows with their size, not with the DFA's: it gets the pattern only
            // when its NFA is small (`x(?:[ab]?){3000}`: 6,000 states, 0.4 s), else the work
            // budget is the error (`.{1000}` inside a JSON string took 40 s to fail there).
            Err(crate::positions::Refusal::Work) => {
                let smaller = Limits {
                    max_automaton_bytes: limits.max_automaton_bytes.min(FALLBACK_BYTES),
                    ..*limits
                };
                let work = |e: BuildError, nfa: Option<usize>| {
                    match e {
                    BuildError::TooLarge { .. } => BuildError::TooLarge {
                        budget: Budget::Work,
                        what: format!(
                            "more than {} entries read while determinizing, and {}",
                            limits.max_work,
                            match nfa {
                                Some(n) => format!(
                                    "an NFA of {n} states, more than the {FALLBACK_WORK_NFA_STATES} \
                                     regex-automata is given past that budget"
                                ),
                                None => format!(
                                    "more than {} bytes for regex-automata",
                                    smaller.max_automaton_bytes
                                ),
                            }
                        ),
                    },
                    other => other,
                }
                };
                let nfa = thompson_nfa(hir, &smaller).map_err(|e| work(e, None))?;
                if nfa.states().len() > FALLBACK_WORK_NFA_STATES {
                    let too_large = BuildError::TooLarge {
                        budget: Budget::Work,
                        what: String::new(),
                    };
                    return Err(work(too_large, Some(nfa.states().len())));
                }
                let dfa = dense_from_nfa(&nfa, &smaller, StartKind::Anchored)
                    .map_err(|e| work(e, None))?;
                Self::anchored(&dfa, &smaller)
            }
        }
    }

    /// [`Self::from_hir`] through regex-automata's Thompson NFA and dense determinizer (what
    /// patterns with look-around assertions take, and patterns past the position
    /// construction's budgets; the position construction is checked against it in tests).
    ///
    /// Errors: as [`Self::from_hir`].
    pub fn from_hir_by_regex_automata(hir: &Hir, limits: &Limits) -> Result<Self, BuildError> {
        Self::anchored(&dense_dfa(hir, limits, StartKind::Anchored)?, limits)
    }

    /// The language of a Thompson NFA (one pattern, anchored, matched as a whole), through
    /// regex-automata's dense determinizer: how word-assertion languages
    /// (`template_build::word::language_nfa`) become tables.
    ///
    /// Errors: as [`Self::from_hir`].
    pub fn from_nfa(nfa: &thompson::NFA, limits: &Limits) -> Result<Self, BuildError> {
        Self::anchored(&dense_from_nfa(nfa, limits, StartKind::Anchored)?, limits)
    }

    /// The whole-match language of an anchored regex-automata DFA.
    fn anchored(dfa: &dense::DFA<Vec<u32>>, limits: &Limits) -> Result<Self, BuildError> {
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::Yes))
            .map_err(|e| BuildError::Regex(e.to_string()))?;
        Self::extract(dfa, start, limits, |dfa, sid| {
            let alive = !dfa.is_dead_state(sid);
            let accepting = alive && dfa.is_match_state(dfa.next_eoi_state(sid));
            (alive, accepting)
        })
        .map(Self::trim)
    }

    /// Every UTF-8 text that contains no match of `hir` anywhere (every state accepting): the
    /// language of free text that must not hold a delimiter.
    ///
    /// Errors: as [`Self::from_hir`].
    pub fn avoiding(hir: &Hir, limits: &Limits) -> Result<Self, BuildError> {
        let dfa = dense_dfa(hir, limits, StartKind::Unanchored)?;
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::No))
            .map_err(|e| BuildError::Regex(e.to_string()))?;
        let avoid = Self::extract(&dfa, start, limits, |dfa, sid| {
            // A match state (matches are reported one byte late) or a match ending right
            // here both mean the text holds a match.
            let hit = dfa.is_match_state(sid) || dfa.is_match_state(dfa.next_eoi_state(sid));
            let alive = !dfa.is_dead_state(sid) && !hit;
            (alive, alive)
        })?;
        // Text is UTF-8.
        let utf8 = Self::from_hir(
            &Hir::repetition(regex_syntax::hir::Repetition {
                min: 0,
                max: None,
                greedy: true,
                sub: Box::new(Hir::dot(regex_syntax::hir::Dot::AnyChar)),
            }),
            limits,
        )?;
        avoid.intersect(&utf8, limits)
    }

    /// Every UTF-8 text after which no match of `hir` is in progress: the unanchored search
    /// is back in its start state (no partial match pending). Free text that ends this way
    /// cannot start a match that a delimiter written next would complete.
    ///
    /// Errors: as [`Self::from_hir`].
    pub fn quiet(hir: &Hir, limits: &Limits) -> Result<Self, BuildError> {
        let dfa = dense_dfa(hir, limits, StartKind::Unanchored)?;
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::No))
            .map_err(|e| BuildError::Regex(e.to_string()))?;
        let quiet = Self::extract(&dfa, start, limits, |dfa, sid| {
            (!dfa.is_dead_state(sid), sid == start)
        })?;
        Ok(quiet.trim())
    }

    /// Every text with no non-empty suffix `s` such that `s` followed by a non-empty prefix of a
    /// word of `next` is a word of `pattern` (both anchored tables): text after which writing
    /// `next` cannot complete a match of `pattern` that started inside the text. Exact where
    /// [`Self::quiet`] is conservative.
    ///
    /// Errors: [`BuildError::TooLarge`] past `limits`.
    pub fn no_bad_suffix(pattern: &Self, next: &Self, limits: &Limits) -> Result<Self, BuildError> {
        let (classes, stride) = merge_classes(&[&pattern.classes, &next.classes]);
        let reps = representatives(&classes, stride);
        // Pattern states from which some non-empty prefix of a `next` word reaches acceptance.
        let mut bad = vec![false; pattern.len()];
        for q in 1..pattern.len() as u32 {
            let mut seen = std::collections::HashSet::new();
            let mut stack = vec![(q, START)];
            'search: while let Some((p, n)) = stack.pop() {
                for &b in &reps {
                    let (p2, n2) = (pattern.next(p, b), next.next(n, b));
                    if p2 == DEAD || n2 == DEAD {
                        continue;
                    }
                    if pattern.is_accepting(p2) {
                        bad[q as usize] = true;
                        break 'search;
                    }
                    if seen.insert((p2, n2)) {
                        stack.push((p2, n2));
                    }
                }
            }
        }
        let (pclasses, pstride) = (pattern.classes, pattern.stride);
        let mut keys = Vec::new();
        Self::determinize_keyed(
            pclasses,
            pstride,
            Vec::<u32>::new(),
            |set: &Vec<u32>, byte| {
                // Every pending suffix, plus the one starting at this byte.
                let mut next: Vec<u32> = set
                    .iter()
                    .copied()
                    .chain(std::iter::once(START))
                    .map(|s| pattern.next(s, byte))
                    .filter(|&s| s != DEAD)
                    .collect();
                next.sort_unstable();
                next.dedup();
                Some(next)
            },
            |set: &Vec<u32>| set.iter().all(|&s| !bad[s as usize]),
            limits,
            &mut keys,
        )
    }

    /// Walks a regex-automata DFA from `start` into a table; `judge` says whether a state is
    /// alive and whether it accepts.
    fn extract(
        dfa: &dense::DFA<Vec<u32>>,
        start: regex_automata::util::primitives::StateID,
        limits: &Limits,
        judge: impl Fn(&dense::DFA<Vec<u32>>, regex_automata::util::primitives::StateID) -> (bool, bool),
    ) -> Result<Self, BuildError> {
        let bc = dfa.byte_classes();
        let mut classes = [0u8; 256];
        for (b, class) in classes.iter_mut().enumerate() {
            *class = bc.get(b as u8);
        }
        let stride = bc.alphabet_len() - 1; // without the EOI class
        let reps = representatives(&classes, stride);
        let mut table = Self::with_classes(classes, stride);
        let mut grow = Grow::new();
        let (alive, _) = judge(dfa, start);
        if !alive {
            table.push_state(false);
            return Ok(table);
        }
        grow.id(start);
        while let Some(sid) = grow.queue.pop_front() {
            let (_, accepting) = judge(dfa, sid);
            table.push_state(accepting);
            table.check_size(limits)?;
            let row = table.len() - 1;
            for (c, &b) in reps.iter().enumerate() {
                let next = dfa.next_state(sid, b);
                let (alive, _) = judge(dfa, next);
                table.trans[row * stride + c] = if alive { grow.id(next) } else { DEAD };
            }
        }
        Ok(table)
    }

    /// Exactly `bytes`.
    pub fn literal(bytes: &[u8]) -> Self {
        let mut classes = [0u8; 256];
        for &b in bytes {
            classes[b as usize] = 1;
        }
        // Column 1 would be shared by all bytes of the literal; give each byte its own.
        let mut n = 1u8;
        let mut seen = [false; 256];
        for &b in bytes {
            if !seen[b as usize] {
                seen[b as usize] = true;
                classes[b as usize] = n;
                n += 1;
            }
        }
        let stride = n as usize;
        let mut table = Self::with_classes(classes, stride);
        for (i, &b) in bytes.iter().enumerate() {
            table.push_state(false);
            let row = i + 1;
            table.trans[row * stride + classes[b as usize] as usize] = row as u32 + 1;
        }
        table.push_state(true);
        table
    }

    /// The call a state is in, if it is computed: its value, its value state and its
    /// return state.
    fn call_at(&self, state: u32) -> Option<(&Arc<Self>, u32, u32)> {
        let calls = self.calls.as_ref()?;
        if (state as usize) < self.accept.len() {
            return None;
        }
        let (c, r) = calls.locate(state)?;
        Some((&calls.values[calls.value[c] as usize], r, calls.ret[c]))
    }

    /// [`Self::intersect`] (`minus`: [`Self::difference`]) of tables with shared values:
    /// where both sides read the same shared value in step (or, for a difference, `other`
    /// is dead), the result reads it too, from its own call returning to the pair of
    /// return states; elsewhere pairs of states are built as usual.
    fn product_shared(
        &self,
        other: &Self,
        minus: bool,
        limits: &Limits,
    ) -> Result<Self, BuildError> {
        let (classes, stride) = merge_classes(&[&self.classes, &other.classes]);
        Self::build_with_calls(
            classes,
            stride,
            (START, START),
            |&(a, b): &(u32, u32), byte| {
                let na = self.next(a, byte);
                let nb = other.next(b, byte);
                if na == DEAD || (nb == DEAD && !minus) {
                    return Step::Dead;
                }
                if let Some((v, r, ra)) = self.call_at(na) {
                    let rb = match other.call_at(nb) {
                        Some((w, r2, rb)) if Arc::ptr_eq(v, w) && r2 == r => Some(rb),
                        None if nb == DEAD => Some(DEAD),
                        _ => None,
                    };
                    if let Some(rb) = rb {
                        return Step::Call(v.clone(), r, (ra, rb));
                    }
                }
                Step::To((na, nb))
            },
            |&(a, b): &(u32, u32)| self.is_accepting(a) && (other.is_accepting(b) != minus),
            limits,
        )
    }

    /// Builds a trimmed table from a deterministic machine whose states are keys, where
    /// `step` may also enter a shared value ([`Step::Call`]: the value, its state after the
    /// byte, and the key to go on from once it has read a word). Calls to the same value
    /// with the same return key are one call. The value's end must be decided by the byte
    /// after it (no byte the return key reads goes on with the value from an accepting
    /// state): callers pass values and returns taken from tables that share them.
    fn build_with_calls<K, S, A>(
        classes: [u8; 256],
        stride: usize,
        start: K,
        mut step: S,
        accepting: A,
        limits: &Limits,
    ) -> Result<Self, BuildError>
    where
        K: std::hash::Hash + Eq + Clone,
        S: FnMut(&K, u8) -> Step<K>,
        A: Fn(&K) -> bool,
    {
        const HIGH: u32 = 1 << 31;
        let reps = representatives(&classes, stride);
        let mut table = Self::with_classes(classes, stride);
        let mut grow = Grow::new();
        grow.id(start);
        // Calls: (value, return state id); targets into them: (call, value state).
        let mut values: Vec<Arc<Self>> = Vec::new();
        let mut calls: Vec<(u32, u32)> = Vec::new();
        let mut call_ids: HashMap<(usize, u32), u32> = HashMap::default();
        let mut targets: Vec<(u32, u32)> = Vec::new();
        let mut target_ids: HashMap<(u32, u32), u32> = HashMap::default();
        while let Some(key) = grow.queue.pop_front() {
            table.push_state(accepting(&key));
            table.check_size(limits)?;
            let row = table.len() - 1;
            for (c, &byte) in reps.iter().enumerate() {
                table.trans[row * stride + c] = match step(&key, byte) {
                    Step::Dead => DEAD,
                    Step::To(next) => grow.id(next),
                    Step::Call(value, r, ret) => {
                        let ret = grow.id(ret);
                        let vi = match values.iter().position(|v| Arc::ptr_eq(v, &value)) {
                            Some(i) => i,
                            None => {
                                values.push(value);
                                values.len() - 1
                            }
                        };
                        let n = calls.len() as u32;
                        let call = *call_ids.entry((vi, ret)).or_insert_with(|| {
                            calls.push((vi as u32, ret));
                            n
                        });
                        let n = targets.len() as u32;
                        let t = *target_ids.entry((call, r)).or_insert_with(|| {
                            targets.push((call, r));
                            n
                        });
                        if t >= HIGH {
                            return Err(BuildError::TooLarge {
                                budget: Budget::States,
                                what: "too many calls".into(),
                            });
                        }
                        HIGH | t
                    }
                };
            }
        }
        let n = table.accept.len();
        // Liveness: a call finishes where its return state does (values are trimmed).
        let edge = |t: u32| -> u32 {
            if t & HIGH != 0 {
                calls[targets[(t & !HIGH) as usize].0 as usize].1
            } else {
                t
            }
        };
        let live = table.finishing(n, |t| edge(t) as usize);
        let mut out = Self::with_classes(classes, stride);
        if n <= 1 || !live[START as usize] {
            out.push_state(false);
            out.trimmed = true;
            return Ok(out);
        }
        // Live states reachable from the start, breadth first (through calls to their
        // returns), then the calls they make, in order of first use.
        let mut ids = vec![DEAD; n];
        let mut order = vec![START];
        ids[START as usize] = START;
        let mut call_order: Vec<u32> = Vec::new();
        let mut call_new = vec![u32::MAX; calls.len()];
        let mut i = 0;
        while i < order.len() {
            let s = order[i] as usize;
            i += 1;
            for &t in &table.trans[s * stride..(s + 1) * stride] {
                if t == DEAD {
                    continue;
                }
                let e = edge(t);
                if !live[e as usize] {
                    continue;
                }
                if t & HIGH != 0 {
                    let call = targets[(t & !HIGH) as usize].0 as usize;
                    if call_new[call] == u32::MAX {
                        call_new[call] = call_order.len() as u32;
                        call_order.push(call as u32);
                    }
                }
                if ids[e as usize] == DEAD {
                    ids[e as usize] = order.len() as u32 + 1;
                    order.push(e);
                }
            }
        }
        let stored = order.len() as u32 + 1;
        let mut starts = Vec::with_capacity(call_order.len());
        let mut next_id = stored as u64;
        for &call in &call_order {
            starts.push(next_id as u32);
            next_id += values[calls[call as usize].0 as usize].len() as u64 - 1;
        }
        if next_id >= HIGH as u64 {
            return Err(BuildError::TooLarge {
                budget: Budget::States,
                what: format!("more than {HIGH} states"),
            });
        }
        limits.check(budget_states(
            stored as usize,
            (next_id - stored as u64) as usize,
        ))?;
        for &s in &order {
            let s = s as usize;
            out.push_state(table.accept[s]);
            let row = out.len() - 1;
            for c in 0..stride {
                let t = table.trans[s * stride + c];
                out.trans[row * stride + c] = if t == DEAD || !live[edge(t) as usize] {
                    DEAD
                } else if t & HIGH != 0 {
                    let (call, r) = targets[(t & !HIGH) as usize];
                    starts[call_new[call as usize] as usize] + r - 1
                } else {
                    ids[t as usize]
                };
            }
        }
        out.trimmed = true;
        if call_order.is_empty() {
            return Ok(out);
        }
        // Keep the values used, renumbered.
        let mut kept: Vec<Arc<Self>> = Vec::new();
        let mut value_of = Vec::with_capacity(call_order.len());
        let mut rets = Vec::with_capacity(call_order.len());
        for &call in &call_order {
            let (vi, ret) = calls[call as usize];
            let v = &values[vi as usize];
            let k = match kept.iter().position(|x| Arc::ptr_eq(x, v)) {
                Some(k) => k,
                None => {
                    kept.push(v.clone());
                    kept.len() - 1
                }
            };
            value_of.push(k as u32);
            rets.push(ids[ret as usize]);
        }
        out.calls = Some(Arc::new(Calls::new(
            starts,
            value_of,
            rets,
            kept,
            next_id as u32,
        )));
        Ok(out)
    }

    /// The texts both tables accept.
    ///
    /// Errors: [`BuildError::TooLarge`] past `limits.max_states`.
    pub fn intersect(&self, other: &Self, limits: &Limits) -> Result<Self, BuildError> {
        if self.calls.is_some() || other.calls.is_some() {
            return self.product_shared(other, false, limits);
        }
        if self.is_acyclic() || other.is_acyclic() {
            if let Some(t) = self.product_acyclic(other, false, limits)? {
                return Ok(t);
            }
        }
        self.intersect_breadth_first(other, limits)
    }

    /// [`Self::intersect`] of two tables of stored states, breadth first and then trimmed.
    fn intersect_breadth_first(&self, other: &Self, limits: &Limits) -> Result<Self, BuildError> {
        let (classes, stride) = merge_classes(&[&self.classes, &other.classes]);
        let reps = representatives(&classes, stride);
        let mut table = Self::with_classes(classes, stride);
        let mut grow = Grow::new();
        grow.id((START, START));
        while let Some((a, b)) = grow.queue.pop_front() {
            table.push_state(self.is_accepting(a) && other.is_accepting(b));
            table.check_size(limits)?;
            let row = table.len() - 1;
            for (c, &byte) in reps.iter().enumerate() {
                let (na, nb) = (self.next(a, byte), other.next(b, byte));
                table.trans[row * stride + c] = if na == DEAD || nb == DEAD {
                    DEAD
                } else {
                    grow.id((na, nb))
                };
            }
        }
        Ok(table.trim())
    }

    /// Whether no cycle is reachable from [`START`] (the transitions into [`DEAD`] aside):
    /// the language is finite, every word at most as long as the table has states. Stored
    /// states only (a table with shared values is never taken as acyclic).
    pub(crate) fn is_acyclic(&self) -> bool {
        if self.calls.is_some() {
            return false;
        }
        // Depth-first from the start: 0 unseen, 1 on the path, 2 done.
        let n = self.len();
        if n <= START as usize {
            return true;
        }
        let mut color = vec![0u8; n];
        let mut stack: Vec<(u32, usize)> = vec![(START, 0)];
        color[START as usize] = 1;
        while let Some(top) = stack.last_mut() {
            let (s, c) = *top;
            if c == self.stride {
                color[s as usize] = 2;
                stack.pop();
                continue;
            }
            top.1 += 1;
            let t = self.trans[s as usize * self.stride + c];
            match color[t as usize] {
                _ if t == DEAD => {}
                0 => {
                    color[t as usize] = 1;
                    stack.push((t, 0));
                }
                1 => return false,
                _ => {}
            }
        }
        true
    }

    /// The product of `self` and `other` (`self` and `other`, or with `minus`, `self` and
    /// not `other`) built bottom-up, when the product has no cycle (one side of an
    /// intersection, or `self` of a difference, has a finite language; `maxLength` is the
    /// common case). Each pair of states is met once, depth first, and its row (the ids of
    /// its successors, all settled first) is shared with every equal row met before, so
    /// the result is minimal and trimmed as it is built: a format within a length bound
    /// (`uri` up to 256 characters) makes 150,000 pairs but 42,000 distinct rows, and
    /// only those are stored. `Ok(None)` when a cycle is met after all (the caller builds
    /// the product breadth first instead).
    ///
    /// Errors: [`BuildError::TooLarge`] past `limits`, counted in pairs met (the states
    /// the breadth-first product would have stored before trimming).
    fn product_acyclic(
        &self,
        other: &Self,
        minus: bool,
        limits: &Limits,
    ) -> Result<Option<Self>, BuildError> {
        /// A pair on the current path (its row not settled yet).
        const OPEN: u32 = u32::MAX;
        let (classes, stride) = merge_classes(&[&self.classes, &other.classes]);
        let reps = representatives(&classes, stride);
        let accepts = |a: u32, b: u32| self.is_accepting(a) && (other.is_accepting(b) != minus);
        // Pair -> settled id (1-based in `rows`, or DEAD), or OPEN.
        let mut memo: HashMap<(u32, u32), u32> = HashMap::default();
        // Distinct rows (stride ids and the accept flag last): the hash of a row -> the last
        // id with that hash, each id -> the one before it with the same hash (0: none); the
        // rows in id order.
        let mut distinct: HashMap<u64, u32> = HashMap::default();
        let mut same_hash: Vec<u32> = vec![0];
        let mut rows: Vec<u32> = Vec::new();
        let mut accept: Vec<bool> = Vec::new();
        // The path: pairs and the next column of each; `buf` holds each one's row so far.
        // (The last successor pair of each path entry and its id: neighbouring columns
        // often lead to the same pair.)
        let mut path: Vec<Frame> = vec![Frame {
            a: START,
            b: START,
            column: 0,
            last: (DEAD, DEAD, DEAD),
        }];
        let mut buf: Vec<u32> = vec![DEAD; stride + 1];
        memo.insert((START, START), OPEN);
        // Each column's column in `self` and in `other`.
        let cols_a: Vec<usize> = reps
            .iter()
            .map(|&r| self.classes[r as usize] as usize)
            .collect();
        let cols_b: Vec<usize> = reps
            .iter()
            .map(|&r| other.classes[r as usize] as usize)
            .collect();
        let root = loop {
            let depth = path.len() - 1;
            let Frame {
                a,
                b,
                mut column,
                mut last,
            } = path[depth];
            let row_a = &self.trans[a as usize * self.stride..(a as usize + 1) * self.stride];
            let row_b = &other.trans[b as usize * other.stride..(b as usize + 1) * other.stride];
            let out = &mut buf[depth * (stride + 1)..(depth + 1) * (stride + 1)];
            let mut unmet = None;
            while column < stride {
                let (na, nb) = (row_a[cols_a[column]], row_b[cols_b[column]]);
                let id = if na == DEAD || (!minus && nb == DEAD) {
                    DEAD
                } else if (na, nb) == (last.0, last.1) {
                    last.2
                } else {
                    match memo.get(&(na, nb)).copied() {
                        Some(OPEN) => return Ok(None),
                        Some(id) => {
                            last = (na, nb, id);
                            id
                        }
                        None => {
                            unmet = Some((na, nb));
                            break;
                        }
                    }
                };
                out[column] = id;
                column += 1;
            }
            path[depth].column = column;
            path[depth].last = last;
            if let Some((na, nb)) = unmet {
                memo.insert((na, nb), OPEN);
                if memo.len() > limits.max_states || memo.len().is_multiple_of(256) {
                    limits.check(memo.len())?;
                }
                path.push(Frame {
                    a: na,
                    b: nb,
                    column: 0,
                    last: (DEAD, DEAD, DEAD),
                });
                buf.resize((depth + 2) * (stride + 1), DEAD);
                continue;
            }
            // Every successor settled: this pair's row.
            let at = depth * (stride + 1);
            let acc = accepts(a, b);
            buf[at + stride] = u32::from(acc);
            let row = &buf[at..at + stride + 1];
            let id = if !acc && row[..stride].iter().all(|&t| t == DEAD) {
                DEAD
            } else {
                let hash = {
                    use std::hash::{Hash, Hasher};
                    let mut h = rustc_hash::FxHasher::default();
                    row.hash(&mut h);
                    h.finish()
                };
                let mut found = distinct.get(&hash).copied().unwrap_or(0);
                while found != 0 {
                    let r = found as usize - 1;
                    if accept[r] == acc && rows[r * stride..(r + 1) * stride] == row[..stride] {
                        break;
                    }
                    found = same_hash[found as usize];
                }
                if found == 0 {
                    found = accept.len() as u32 + 1;
                    same_hash.push(distinct.insert(hash, found).unwrap_or(0));
                    rows.extend_from_slice(&row[..stride]);
                    accept.push(acc);
                }
                found
            };
            memo.insert((a, b), id);
            path.pop();
            match path.last_mut() {
                None => break id,
                Some(parent) => {
                    buf[(depth - 1) * (stride + 1) + parent.column] = id;
                    parent.column += 1;
                    if id != DEAD {
                        parent.last = (a, b, id);
                    }
                }
            }
        };
        drop(memo);
        drop(distinct);
        let mut out = Self::with_classes(classes, stride);
        if root == DEAD {
            // The empty language, as `trim` gives it.
            out.push_state(false);
            return Ok(Some(out));
        }
        // Renumber breadth first from the root (every row is reachable and can finish).
        let mut ids = vec![DEAD; accept.len() + 1];
        let mut order = vec![root];
        ids[root as usize] = START;
        let mut i = 0;
        while i < order.len() {
            let r = order[i] as usize - 1;
            i += 1;
            for &t in &rows[r * stride..(r + 1) * stride] {
                if t != DEAD && ids[t as usize] == DEAD {
                    ids[t as usize] = order.len() as u32 + 1;
                    order.push(t);
                }
            }
        }
        out.trans.reserve(order.len() * stride);
        for &old in &order {
            let r = old as usize - 1;
            out.accept.push(accept[r]);
            out.trans.extend(
                rows[r * stride..(r + 1) * stride]
                    .iter()
                    .map(|&t| ids[t as usize]),
            );
        }
        out.trimmed = true;
        out.minimal = true;
        Ok(Some(out))
    }

    /// Builds a table from any deterministic machine whose states are keys: `step` gives the
    /// next key (or `None` for dead), `accepting` says whether a key accepts. `keys` receives
    /// the key of each state of the returned (trimmed) table, index = state (index 0, the
    /// dead state, gets the start key as a placeholder).
    pub(crate) fn determinize_keyed<K, S, A>(
        classes: [u8; 256],
        stride: usize,
        start: K,
        mut step: S,
        accepting: A,
        limits: &Limits,
        keys: &mut Vec<K>,
    ) -> Result<Self, BuildError>
    where
        K: std::hash::Hash + Eq + Clone,
        S: FnMut(&K, u8) -> Option<K>,
        A: Fn(&K) -> bool,
    {
        let reps = representatives(&classes, stride);
        let mut table = Self::with_classes(classes, stride);
        let mut grow = Grow::new();
        let mut found = vec![start.clone()];
        grow.id(start);
        while let Some(key) = grow.queue.pop_front() {
            table.push_state(accepting(&key));
            table.check_size(limits)?;
            let row = table.len() - 1;
            for (c, &byte) in reps.iter().enumerate() {
                table.trans[row * stride + c] = match step(&key, byte) {
                    Some(next) => {
                        let (id, new) = grow.find(next);
                        if let Some(k) = grow.queue.back().filter(|_| new) {
                            found.push(k.clone());
                        }
                        id
                    }
                    None => DEAD,
                };
            }
        }
        let (table, order) = table.trim_map();
        keys.clear();
        keys.push(found[0].clone());
        keys.extend(order.iter().map(|&old| found[old as usize - 1].clone()));
        Ok(table)
    }

    /// Every transition on `placeholder` (a byte no word of `value` holds, e.g. `0xFF`, which
    /// UTF-8 never uses) replaced by a word of `value`: from a state `p` with
    /// `p --placeholder--> q`, the result reads a word of `value` and goes on from `q`. Each
    /// distinct `q` gets its own copy of `value` (a DFA has no return stack); the copies are
    /// merged with the rest by subset construction, so `value` may overlap with what `p`
    /// itself reads (an `anyOf` of a string and an untyped value). Without placeholder
    /// transitions the table is returned as it is.
    ///
    /// Errors: [`BuildError::TooLarge`] past `limits.max_states`.
    pub fn splice(
        self,
        placeholder: u8,
        value: &Self,
        limits: &Limits,
    ) -> Result<Self, BuildError> {
        self.splice_many(
            &[placeholder],
            |table, s| {
                let q = table.next(s, placeholder);
                if q == DEAD {
                    Vec::new()
                } else {
                    vec![(0, q)]
                }
            },
            &[value],
            limits,
        )
    }

    /// [`Self::splice`] for several values at once: `find(self, p)` lists the placeholders
    /// leaving state `p` as `(value index, continuation)` pairs (a placeholder may be a word
    /// of several bytes, e.g. a marker byte and an index); the result reads a word of
    /// `values[k]` there and goes on from the continuation. `markers` are the bytes that
    /// start placeholders: the result never reads them outside a value (values must not hold
    /// them either; UTF-8 text never holds `0xC0`, `0xC1` or `0xF5..=0xFF`).
    ///
    /// Errors: [`BuildError::TooLarge`] past `limits`.
    pub(crate) fn splice_many<F>(
        self,
        markers: &[u8],
        find: F,
        values: &[&Self],
        limits: &Limits,
    ) -> Result<Self, BuildError>
    where
        F: Fn(&Self, u32) -> Vec<(usize, u32)>,
    {
        let places = Places::of(&self, &find);
        let continuations = &places.continuations;
        if continuations.is_empty() {
            return Ok(self);
        }
        // A value that reads values of its own in place is stepped once per copy and per
        // set that holds it: each of its computed states' rows is computed once here instead
        // (each computed step searches the value's calls), when a set first holds the state.
        let mut used = vec![false; values.len()];
        for &(k, _) in continuations {
            used[k] = true;
        }
        // Each of their states is a state of the result (a trimmed value's states are all
        // reached from its start): one past the limit is refused before it is copied.
        for (v, _) in values
            .iter()
            .zip(&used)
            .filter(|(v, &u)| u && v.is_shared())
        {
            limits.check(v.len())?;
        }
        let mut rows: Vec<Option<LazyRows<'_>>> = values
            .iter()
            .zip(&used)
            .map(|(&v, &u)| (u && v.is_shared()).then(|| LazyRows::of(v)))
            .collect();
        let accepting: Vec<Option<LazyAccepting<'_>>> = values
            .iter()
            .zip(&used)
            .map(|(&v, &u)| (u && v.is_shared()).then(|| LazyAccepting::of(v)))
            .collect();
        let closure = |set: &mut Vec<(u32, u32)>| {
            places.close(
                set,
                |_| true,
                |k, state| match &accepting[k] {
                    Some(a) => a.is_accepting(state),
                    None => values[k].is_accepting(state),
                },
            )
        };
        let mut start = vec![(0, START)];
        closure(&mut start);
        // The columns of the values spliced in (not of every value offered).
        let (classes, stride) =
            self.spliced_columns(values.iter().map(|v| &v.classes), &used, markers);
        let mut keys = Vec::new();
        // Most sets are one pair (inside a value, or between placeholders): kept without a
        // heap allocation.
        let mut scratch: Vec<(u32, u32)> = Vec::new();
        Self::determinize_keyed(
            classes,
            stride,
            PairSet::of(start),
            |set: &PairSet, byte| {
                if markers.contains(&byte) {
                    return None;
                }
                scratch.clear();
                for &(tag, state) in set.pairs() {
                    let t = if tag == 0 {
                        self.next(state, byte)
                    } else {
                        let k = continuations[tag as usize - 1].0;
                        match &mut rows[k] {
                            Some(rows) => rows.next(state, byte),
                            None => values[k].next(state, byte),
                        }
                    };
                    if t != DEAD {
                        scratch.push((tag, t));
                    }
                }
                if scratch.is_empty() {
                    return None;
                }
                closure(&mut scratch);
                Some(PairSet::of_slice(&scratch))
            },
            |set: &PairSet| {
                set.pairs()
                    .iter()
                    .any(|&(tag, state)| tag == 0 && self.is_accepting(state))
            },
            limits,
            &mut keys,
        )
    }

    /// [`Self::splice_many`], but each value of at least `share_from` states is read in
    /// place rather than copied: the result's states past its stored rows are *calls*
    /// (a value table shared by every place that reads it, and the state to go on from),
    /// computed on demand by [`Self::next`]. A value is shared at a continuation `q` when the
    /// value has no empty word, `q` has no placeholder of its own, and no byte `q` reads can
    /// also go on with the value from one of its accepting states (so the value's end is
    /// decided by the byte after it, as in JSON, where a value is followed by `,`, `}`, `]`
    /// or the end); and where a value starts, nothing else may read the same byte. Where
    /// these fail, the result is [`Self::splice_many`]'s (same language).
    ///
    /// Errors: [`BuildError::TooLarge`] past `limits`.
    pub(crate) fn splice_shared<F>(
        self,
        markers: &[u8],
        find: F,
        values: &[Arc<Self>],
        share_from: usize,
        limits: &Limits,
    ) -> Result<Self, BuildError>
    where
        F: Fn(&Self, u32) -> Vec<(usize, u32)>,
    {
        let sharing = SHARING.with(|s| s.get());
        let refs: Vec<&Self> = values.iter().map(|v| v.as_ref()).collect();
        match sharing
            .then(|| self.try_splice_shared(markers, &find, values, share_from, limits))
            .transpose()?
            .flatten()
        {
            // Some transitions read shared values as copies: with their calls' states the
            // table may count more states than copying every value. Past a quarter of the
            // state limit, where that count may decide a budget (an outer splice, the
            // shallower rebuild of `template::compile_schema`), the one of the two with
            // fewer budget states (`Table::budget_states`). The copy is built within the
            // shared table's count: one that passes it is not kept anyway, and stops there
            // instead of at the limit (a Store schema built a copy for 0.49 s to find it
            // past 200,000 states, against 72,680 shared). A determinization counts its
            // states before trimming, never fewer than after.
            Some((t, true)) if t.budget_states() > limits.max_states / 4 => {
                let within = Limits {
                    max_states: t.budget_states().min(limits.max_states),
                    ..*limits
                };
                match self.splice_many(markers, find, &refs, &within) {
                    Ok(copied) if copied.budget_states() <= t.budget_states() => Ok(copied),
                    _ => Ok(t),
                }
            }
            Some((t, _)) => Ok(t),
            None => self.splice_many(markers, find, &refs, limits),
        }
    }

    /// Per stored state of the first `n` rows, whether an accepting one is reachable from it,
    /// where a step to `t` counts as a step to row `edge(t)` (a call's return state for a
    /// computed state).
    fn finishing(&self, n: usize, edge: impl Fn(u32) -> usize) -> Vec<bool> {
        let stride = self.stride;
        // The edges backwards, by target (compressed rows, not a vector per state).
        let mut edges: Vec<(u32, u32)> = Vec::new();
        for s in 1..n {
            let mut last = DEAD;
            for &t in &self.trans[s * stride..(s + 1) * stride] {
                // Neighbouring columns often go to one state: one edge for them.
                if t != DEAD && t != last {
                    edges.push((edge(t) as u32, s as u32));
                }
                last = t;
            }
        }
        let (starts, sources) = by_target(n, &edges);
        drop(edges);
        let mut live = vec![false; n];
        let mut stack: Vec<u32> = (1..n as u32).filter(|&s| self.accept[s as usize]).collect();
        for &s in &stack {
            live[s as usize] = true;
        }
        while let Some(s) = stack.pop() {
            let s = s as usize;
            for &p in &sources[starts[s] as usize..starts[s + 1] as usize] {
                if !live[p as usize] {
                    live[p as usize] = true;
                    stack.push(p);
                }
            }
        }
        live
    }

    /// The columns of `self` spliced with the values of these columns that are `used`
    /// (`classes`, how many): each marker in a column of its own, so that it is the
    /// column's representative.
    fn spliced_columns<'a>(
        &'a self,
        values: impl Iterator<Item = &'a [u8; 256]>,
        used: &[bool],
        markers: &[u8],
    ) -> ([u8; 256], usize) {
        let mut maps: Vec<&[u8; 256]> = vec![&self.classes];
        maps.extend(values.zip(used).filter(|(_, &u)| u).map(|(c, _)| c));
        let (classes, _) = merge_classes(&maps);
        Self::merge_columns(classes, markers)
    }

    /// [`Self::splice_shared`]; `None` where a value cannot be shared after all, and with
    /// the table whether some transition reads a shared value as a copy.
    fn try_splice_shared<F>(
        &self,
        markers: &[u8],
        find: &F,
        values: &[Arc<Self>],
        share_from: usize,
        limits: &Limits,
    ) -> Result<Option<(Self, bool)>, BuildError>
    where
        F: Fn(&Self, u32) -> Vec<(usize, u32)>,
    {
        if self.calls.is_some() || self.len() < 2 {
            return Ok(None);
        }
        let places = Places::of(self, find);
        let continuations = &places.continuations;
        // Per value: the bytes it may still read from an accepting state.
        let mut after: Vec<Option<[bool; 256]>> = vec![None; values.len()];
        let mut shared = vec![false; continuations.len()];
        for (i, &(k, q)) in continuations.iter().enumerate() {
            let v = &values[k];
            if v.len() < share_from.max(2)
                || v.is_empty()
                || !v.trimmed
                || v.is_accepting(START)
                || !places.tags[q as usize].is_empty()
            {
                continue;
            }
            let bytes =
                after[k].get_or_insert_with(|| v.live_after_accepting().unwrap_or([false; 256]));
            shared[i] = (0..=255u8)
                .all(|b| markers.contains(&b) || !bytes[b as usize] || self.next(q, b) == DEAD);
        }
        // Per state: its continuations (indices into `continuations`).
        let exit_ids: Vec<Vec<usize>> = places
            .tags
            .iter()
            .map(|e| e.iter().map(|&tag| tag as usize - 1).collect())
            .collect();
        // A shared value that starts on a byte its own place also reads otherwise (the
        // place's next byte, another value there) is copied from the start: the first
        // determinization would find it anyway. The same value at several continuations of
        // one place (or of one determinized set) is one call returning to all of them.
        for (s, ids) in exit_ids.iter().enumerate().skip(1) {
            for (x, &i) in ids.iter().enumerate() {
                if !shared[i] {
                    continue;
                }
                let v = &values[continuations[i].0];
                let clash = (0..=255u8).any(|b| {
                    !markers.contains(&b)
                        && v.next(START, b) != DEAD
                        && (self.next(s as u32, b) != DEAD
                            || ids.iter().enumerate().any(|(y, &j)| {
                                // The same value there is read once (a call returning to
                                // both continuations).
                                let other = continuations[j].0;
                                y != x
                                    && other != continuations[i].0
                                    && values[other].next(START, b) != DEAD
                            }))
                });
                if clash {
                    shared[i] = false;
                }
            }
        }
        if !shared.contains(&true) {
            return Ok(None);
        }
        // Where a shared value starts on a byte something else of the same set reads too,
        // that transition reads the value as a copy (its states join the set, as for values
        // not shared); the value's other places still call it.
        const HIGH: u32 = 1 << 31;
        let closure = |set: &mut Vec<(u32, u32)>| {
            places.close(
                set,
                |tag| !shared[tag as usize - 1],
                |k, state| values[k].is_accepting(state),
            )
        };
        let mut used_value = vec![false; values.len()];
        for &(k, _) in continuations {
            used_value[k] = true;
        }
        let (classes, stride) =
            self.spliced_columns(values.iter().map(|v| &v.classes), &used_value, markers);
        let reps = representatives(&classes, stride);
        let marker_column: Vec<bool> = reps.iter().map(|b| markers.contains(b)).collect();
        // Per column: this table's class of its bytes.
        let own_class: Vec<usize> = reps
            .iter()
            .map(|&b| self.classes[b as usize] as usize)
            .collect();
        let mut by_class: Vec<u32> = Vec::new();
        // Per value spliced in (and read somewhere): per column, the value's class of its
        // bytes.
        let value_class: Vec<Vec<usize>> = values
            .iter()
            .zip(&used_value)
            .map(|(v, &u)| {
                if u {
                    reps.iter()
                        .map(|&b| v.classes[b as usize] as usize)
                        .collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        // Per value spliced in: its state after each column's first byte.
        let first: Vec<Vec<u32>> = values
            .iter()
            .zip(&used_value)
            .map(|(v, &u)| {
                if u {
                    reps.iter().map(|&b| v.next(START, b)).collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let mut table = Self::with_classes(classes, stride);
        let mut grow: Grow<PairSet> = Grow::new();
        let mut start = vec![(0, START)];
        closure(&mut start);
        grow.id(PairSet::of(start));
        // The calls of this pass: a value and the continuations it returns to (one, or
        // several where places of one set start the same value on the same byte: it is
        // read once and goes on with all of them). Per call: its value, the stored state
        // it returns to, and the first of its computed states (before renumbering).
        let mut call_ids: HashMap<(usize, PairSet), usize> = HashMap::default();
        let mut calls: Vec<(usize, u32, u64)> = Vec::new();
        let mut computed: u64 = 0;
        let mut scratch: Vec<(u32, u32)> = Vec::new();
        let mut returns: Vec<(u32, u32)> = Vec::new();
        let mut involved: Vec<usize> = Vec::new();
        let mut row_steps = RowSteps::default();
        // Steps to one pair (most are: a byte of the schema's own table, or of one copied
        // value), for every row: the pair (`tag << 32 | state`) to its set's id.
        let mut single: HashMap<u64, u32> = HashMap::default();
        // The set of a step to the one pair in `scratch`: closed and found once per table.
        fn single_step(
            single: &mut HashMap<u64, u32>,
            grow: &mut Grow<PairSet>,
            scratch: &mut Vec<(u32, u32)>,
            closure: &impl Fn(&mut Vec<(u32, u32)>),
        ) -> u32 {
            let pair = (scratch[0].0 as u64) << 32 | scratch[0].1 as u64;
            *single.entry(pair).or_insert_with(|| {
                closure(scratch);
                grow.id(PairSet::of_slice(scratch))
            })
        }
        // Per set of values read as copies side by side (sorted value indices): per
        // column, its joint class (the same where every value has one class), and how many.
        let mut joint: HashMap<Vec<usize>, (Vec<u32>, usize)> = HashMap::default();
        let mut row_values: Vec<usize> = Vec::new();
        let mut clashed = false;
        while let Some(key) = grow.queue.pop_front() {
            row_steps.clear();
            let accepting = key
                .pairs()
                .iter()
                .any(|&(tag, state)| tag == 0 && self.is_accepting(state));
            table.push_state(accepting);
            table.check_size(limits)?;
            let row = table.len() - 1;
            // A state of this table alone, where no shared value starts (most rows): each
            // step is to one pair, and the columns of one of this table's classes step alike.
            if let [(0, state)] = *key.pairs() {
                if exit_ids[state as usize].iter().all(|&i| !shared[i]) {
                    by_class.clear();
                    by_class.resize(self.stride, u32::MAX);
                    let from = state as usize * self.stride;
                    for c in 0..stride {
                        if marker_column[c] {
                            continue;
                        }
                        let class = own_class[c];
                        if by_class[class] == u32::MAX {
                            let t = self.trans[from + class];
                            by_class[class] = if t == DEAD {
                                DEAD
                            } else {
                                scratch.clear();
                                scratch.push((0, t));
                                single_step(&mut single, &mut grow, &mut scratch, &closure)
                            };
                        }
                        table.trans[row * stride + c] = by_class[class];
                    }
                    continue;
                }
            }
            // States of copied values alone (values read as copies where another starts on
            // the same byte, past the bytes they share; the alternatives of a `oneOf` of
            // open objects read untyped values side by side, each returning to its own
            // place): no shared value starts here, and the columns where every value of the
            // row has one class step alike, so each such joint class is stepped once.
            let pairs = key.pairs();
            if !pairs.is_empty() && pairs.iter().all(|&(tag, _)| tag != 0) {
                row_values.clear();
                row_values.extend(
                    pairs
                        .iter()
                        .map(|&(tag, _)| continuations[tag as usize - 1].0),
                );
                row_values.sort_unstable();
                row_values.dedup();
                if !joint.contains_key(row_values.as_slice()) {
                    let classes = joint_classes(&row_values, &value_class, stride);
                    joint.insert(row_values.clone(), classes);
                }
                let (column_class, count) = &joint[row_values.as_slice()];
                // Per pair: its tag, its value, and its state located there.
                let located: Vec<(u32, &Table, Located<'_>)> = pairs
                    .iter()
                    .map(|&(tag, state)| {
                        let value = values[continuations[tag as usize - 1].0].as_ref();
                        (tag, value, value.locate(state))
                    })
                    .collect();
                by_class.clear();
                by_class.resize(*count, u32::MAX);
                for c in 0..stride {
                    if marker_column[c] {
                        continue;
                    }
                    let class = column_class[c] as usize;
                    if by_class[class] == u32::MAX {
                        scratch.clear();
                        for &(tag, value, from) in &located {
                            let t = value.next_located(from, reps[c]).state();
                            if t != DEAD {
                                scratch.push((tag, t));
                            }
                        }
                        by_class[class] = match scratch.len() {
                            0 => DEAD,
                            1 => single_step(&mut single, &mut grow, &mut scratch, &closure),
                            _ => row_steps.id(&mut scratch, &mut grow, &closure),
                        };
                    }
                    table.trans[row * stride + c] = by_class[class];
                }
                continue;
            }
            // The copied values' states located once per row, not once per column (a
            // value reading values of its own would search its calls each time).
            let located: Vec<Option<Located<'_>>> = key
                .pairs()
                .iter()
                .map(|&(tag, state)| {
                    (tag != 0).then(|| values[continuations[tag as usize - 1].0].locate(state))
                })
                .collect();
            // The previous column's single pair and its set (neighbouring columns often step
            // to one state); `u64::MAX` is no pair.
            let mut last_single: (u64, u32) = (u64::MAX, DEAD);
            for (c, &byte) in reps.iter().enumerate() {
                if marker_column[c] {
                    continue;
                }
                scratch.clear();
                returns.clear();
                involved.clear();
                let mut call: Option<usize> = None;
                let mut clash = false;
                for (&(tag, state), located) in key.pairs().iter().zip(&located) {
                    let t = if tag == 0 {
                        for &i in &exit_ids[state as usize] {
                            if !shared[i] {
                                continue;
                            }
                            let (k, q) = continuations[i];
                            if first[k][c] != DEAD {
                                // Two different values starting on one byte: both are
                                // copied (the determinization decides between them).
                                clash |= call.is_some_and(|k0| k0 != k);
                                call = Some(k);
                                returns.push((0, q));
                                involved.push(i);
                            }
                        }
                        self.next(state, byte)
                    } else {
                        let value = &values[continuations[tag as usize - 1].0];
                        match located {
                            Some(l) => value.next_located(*l, byte).state(),
                            None => value.next(state, byte),
                        }
                    };
                    if t != DEAD {
                        scratch.push((tag, t));
                    }
                }
                table.trans[row * stride + c] = match call {
                    Some(_) if clash || !scratch.is_empty() => {
                        clashed = true;
                        // Read here as copies: each continuation's value after this byte.
                        for &i in &involved {
                            let k = continuations[i].0;
                            scratch.push((i as u32 + 1, first[k][c]));
                        }
                        closure(&mut scratch);
                        grow.id(PairSet::of_slice(&scratch))
                    }
                    Some(k) => {
                        returns.sort_unstable();
                        returns.dedup();
                        let id = match call_ids.entry((k, PairSet::of_slice(&returns))) {
                            std::collections::hash_map::Entry::Occupied(e) => *e.get(),
                            std::collections::hash_map::Entry::Vacant(e) => {
                                let ret = grow.id(e.key().1.clone());
                                calls.push((k, ret, computed));
                                computed += values[k].len() as u64 - 1;
                                if computed >= HIGH as u64 {
                                    return Ok(None);
                                }
                                *e.insert(calls.len() - 1)
                            }
                        };
                        HIGH | (calls[id].2 + first[k][c] as u64 - 1) as u32
                    }
                    None if scratch.is_empty() => DEAD,
                    None if scratch.len() == 1 => {
                        let pair = (scratch[0].0 as u64) << 32 | scratch[0].1 as u64;
                        if last_single.0 != pair {
                            let id = single_step(&mut single, &mut grow, &mut scratch, &closure);
                            last_single = (pair, id);
                        }
                        last_single.1
                    }
                    None => row_steps.id(&mut scratch, &mut grow, &closure),
                };
            }
        }
        // Number the calls after the stored states.
        let stored = table.accept.len() as u32;
        let next_id = stored as u64 + computed;
        if next_id >= HIGH as u64
            || limits
                .check(budget_states(stored as usize, computed as usize))
                .is_err()
        {
            // Its calls' states count too: copying every value may still fit.
            return Ok(None);
        }
        let starts: Vec<u32> = calls.iter().map(|c| stored + c.2 as u32).collect();
        for t in table.trans.iter_mut() {
            if *t & HIGH != 0 {
                *t = stored + (*t & !HIGH);
            }
        }
        let mut value_index: Vec<Option<u32>> = vec![None; values.len()];
        let mut kept_values = Vec::new();
        let value_of: Vec<u32> = calls
            .iter()
            .map(|&(k, _, _)| {
                *value_index[k].get_or_insert_with(|| {
                    kept_values.push(values[k].clone());
                    kept_values.len() as u32 - 1
                })
            })
            .collect();
        let rets: Vec<u32> = calls.iter().map(|c| c.1).collect();
        // Every stored state must be able to finish (a call finishes where its return state
        // does): otherwise the table needs trimming, which copies the values.
        let n = stored as usize;
        let call_of = |t: u32| -> usize {
            if t < stored {
                t as usize
            } else {
                let c = starts.partition_point(|&s| s <= t) - 1;
                rets[c] as usize
            }
        };
        let live = table.finishing(n, call_of);
        if !live[1..].iter().all(|&l| l) {
            return Ok(None);
        }
        table.trimmed = true;
        table.calls = Some(Arc::new(Calls::new(
            starts,
            value_of,
            rets,
            kept_values,
            next_id as u32,
        )));
        Ok(Some((table, clashed)))
    }

    /// The words of `self` whose first byte `keep` accepts (the empty word too, if `self`
    /// has it).
    ///
    /// Errors: [`BuildError::TooLarge`] past `limits`.
    pub(crate) fn restrict_first(
        &self,
        keep: impl Fn(u8) -> bool,
        limits: &Limits,
    ) -> Result<Self, BuildError> {
        let mut split = [0u8; 256];
        for (b, c) in split.iter_mut().enumerate() {
            *c = keep(b as u8) as u8;
        }
        let (classes, stride) = merge_classes(&[&self.classes, &split]);
        let mut keys = Vec::new();
        Self::determinize_keyed(
            classes,
            stride,
            START,
            |&s: &u32, b| {
                let t = self.next(s, b);
                (t != DEAD && (s != START || keep(b))).then_some(t)
            },
            |&s: &u32| self.is_accepting(s),
            limits,
            &mut keys,
        )
    }

    /// The words of `self` that are not words of `other` (both complete tables: [`DEAD`] in
    /// `other` means no word of `other` goes on from there).
    ///
    /// Errors: [`BuildError::TooLarge`] past `limits`.
    pub fn difference(&self, other: &Self, limits: &Limits) -> Result<Self, BuildError> {
        if self.calls.is_some() {
            return self.product_shared(other, true, limits);
        }
        if other.calls.is_none() && self.is_acyclic() {
            if let Some(t) = self.product_acyclic(other, true, limits)? {
                return Ok(t);
            }
        }
        self.difference_breadth_first(other, limits)
    }

    /// [`Self::difference`] with `self` of stored states, breadth first and then trimmed.
    fn difference_breadth_first(&self, other: &Self, limits: &Limits) -> Result<Self, BuildError> {
        self.pairs_breadth_first(other, |na, _| na != DEAD, |a, b| a && !b, limits)
    }

    /// The product of two tables of stored states, breadth first: a pair of states steps to
    /// the pair of their steps where `live(step, other's step)`, and accepts where
    /// `accepting(accepts, other accepts)`.
    ///
    /// Errors: past `limits`.
    fn pairs_breadth_first(
        &self,
        other: &Self,
        live: impl Fn(u32, u32) -> bool,
        accepting: impl Fn(bool, bool) -> bool,
        limits: &Limits,
    ) -> Result<Self, BuildError> {
        let (classes, stride) = merge_classes(&[&self.classes, &other.classes]);
        let mut keys = Vec::new();
        Self::determinize_keyed(
            classes,
            stride,
            (START, START),
            |&(a, b): &(u32, u32), byte| {
                let (na, nb) = (self.next(a, byte), other.next(b, byte));
                live(na, nb).then_some((na, nb))
            },
            |&(a, b): &(u32, u32)| accepting(self.is_accepting(a), other.is_accepting(b)),
            limits,
            &mut keys,
        )
    }

    /// The texts either table accepts (both of stored states only, trimmed: every pair
    /// met can still reach an accepting one), breadth first.
    ///
    /// Errors: past `limits`.
    pub(crate) fn union(&self, other: &Self, limits: &Limits) -> Result<Self, BuildError> {
        self.pairs_breadth_first(
            other,
            |na, nb| na != DEAD || nb != DEAD,
            |a, b| a || b,
            limits,
        )
    }

    /// The byte-class maps of several tables merged (the coarsest partition finer than each).
    pub(crate) fn merged_classes(tables: &[&Self]) -> ([u8; 256], usize) {
        let maps: Vec<&[u8; 256]> = tables.iter().map(|t| &t.classes).collect();
        merge_classes(&maps)
    }

    /// The byte classes of the table with each of `bytes` in a column of its own.
    pub(crate) fn classes_with(&self, bytes: &[u8]) -> ([u8; 256], usize) {
        Self::merge_columns(self.classes, bytes)
    }

    /// A byte-class map refined so that each of `bytes` has a column of its own.
    pub(crate) fn merge_columns(classes: [u8; 256], bytes: &[u8]) -> ([u8; 256], usize) {
        let mut own = [0u8; 256];
        for (i, &b) in bytes.iter().enumerate() {
            own[b as usize] = i as u8 + 1;
        }
        merge_classes(&[&classes, &own])
    }

    /// The minimal table of the same language (Hopcroft's partition refinement; states
    /// renumbered breadth first). Equivalent states merge: copies of a spliced value
    /// followed by equivalent text, the states of a number automaton that remember more
    /// than its language needs.
    ///
    /// Only the *useful* states (reachable from the start and able to finish) are refined,
    /// over their transitions to useful states: every other transition goes to [`DEAD`],
    /// and most of a table's columns do. So the work is `O(m log n)` for `m` useful
    /// transitions, not `O(columns * states * log states)`, after one `O(columns * states)`
    /// pass. The result is the same table the refinement over every column gives.
    pub fn minimize(self) -> Self {
        if self.calls.is_some() {
            // Shared values stay shared: the table is returned as it is (its stored states
            // come from determinizations of minimized parts).
            return self;
        }
        let n = self.len();
        let k = self.stride;
        if n <= 2 || self.minimal {
            return self;
        }
        let Some(useful) = Useful::of(&self) else {
            // The empty language: the start state alone, looping on every byte.
            let mut out = Self::with_classes(self.classes, k);
            out.push_state(false);
            out.trans[k..].fill(START);
            out.trimmed = self.trimmed;
            return out;
        };
        let Useful {
            useful,
            pred_start,
            preds,
        } = useful;
        // The partition of the useful states: blocks are ranges of `elems`; marked elements
        // sit at a block's front. Useless states belong to no block.
        let mut elems: Vec<u32> = Vec::with_capacity(n);
        elems.extend((0..n as u32).filter(|&s| useful[s as usize] && !self.accept[s as usize]));
        let split = elems.len();
        elems.extend((0..n as u32).filter(|&s| useful[s as usize] && self.accept[s as usize]));
        let total = elems.len() as u32;
        let mut loc = vec![0u32; n];
        for (i, &s) in elems.iter().enumerate() {
            loc[s as usize] = i as u32;
        }
        let mut block = vec![u32::MAX; n];
        let (mut start, mut end) = (Vec::new(), Vec::new());
        for (lo, hi) in [(0, split as u32), (split as u32, total)] {
            if lo < hi {
                for &s in &elems[lo as usize..hi as usize] {
                    block[s as usize] = start.len() as u32;
                }
                start.push(lo);
                end.push(hi);
            }
        }
        let mut marked = vec![0u32; start.len()];
        // Every first block splits on every column (a state without a useful transition
        // on a column is told apart from one with one only that way); after that, a split
        // block's smaller half is enough, one queue entry standing for all columns.
        let mut pending: Vec<u32> = (0..start.len() as u32).collect();
        let mut queued: Vec<bool> = vec![true; start.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut incoming: Vec<u64> = Vec::new();
        let mut by_column: Vec<u64> = Vec::new();
        let mut counts: Vec<u32> = vec![0; k + 1];
        while let Some(b) = pending.pop() {
            queued[b as usize] = false;
            // The useful transitions into the splitter (as it is now), by column.
            incoming.clear();
            for &t in &elems[start[b as usize] as usize..end[b as usize] as usize] {
                let t = t as usize;
                incoming
                    .extend_from_slice(&preds[pred_start[t] as usize..pred_start[t + 1] as usize]);
            }
            group_by_column(&mut incoming, &mut by_column, &mut counts);
            let mut i = 0;
            while i < incoming.len() {
                let column = incoming[i] >> 32;
                // Mark every state whose transition on this column enters the splitter.
                while i < incoming.len() && incoming[i] >> 32 == column {
                    let s = incoming[i] as u32 as usize;
                    i += 1;
                    let d = block[s] as usize;
                    let pos = loc[s];
                    let front = start[d] + marked[d];
                    if pos < front {
                        continue;
                    }
                    // Swap s to the front of its block's unmarked part.
                    let other = elems[front as usize];
                    elems.swap(pos as usize, front as usize);
                    loc[other as usize] = pos;
                    loc[s] = front;
                    if marked[d] == 0 {
                        touched.push(d as u32);
                    }
                    marked[d] += 1;
                }
                for d in touched.drain(..) {
                    let d = d as usize;
                    let m = marked[d];
                    marked[d] = 0;
                    let size = end[d] - start[d];
                    if m == size {
                        continue;
                    }
                    // The marked front becomes a new block.
                    let new = start.len() as u32;
                    start.push(start[d]);
                    end.push(start[d] + m);
                    marked.push(0);
                    start[d] += m;
                    for i in start[new as usize]..end[new as usize] {
                        block[elems[i as usize] as usize] = new;
                    }
                    if queued[d] {
                        pending.push(new);
                        queued.push(true);
                    } else {
                        let smaller = if m <= size - m { new } else { d as u32 };
                        queued.push(false);
                        pending.push(smaller);
                        queued[smaller as usize] = true;
                    }
                }
            }
        }
        // Renumber the blocks breadth first from the start's; useless states are DEAD.
        let mut ids = vec![u32::MAX; start.len()];
        let id = |ids: &[u32], t: u32| {
            let b = block[t as usize];
            if b == u32::MAX {
                (DEAD, b)
            } else {
                (ids[b as usize], b)
            }
        };
        let mut order: Vec<usize> = vec![block[START as usize] as usize];
        ids[order[0]] = START;
        let mut i = 0;
        while i < order.len() {
            let rep = elems[start[order[i]] as usize] as usize;
            i += 1;
            for c in 0..k {
                let (t, b) = id(&ids, self.trans[rep * k + c]);
                if t == u32::MAX {
                    ids[b as usize] = order.len() as u32 + 1;
                    order.push(b as usize);
                }
            }
        }
        let mut out = Self::with_classes(self.classes, k);
        for &b in &order {
            let rep = elems[start[b] as usize] as usize;
            out.push_state(self.accept[rep]);
            let row = out.len() - 1;
            for c in 0..k {
                out.trans[row * k + c] = id(&ids, self.trans[rep * k + c]).0;
            }
        }
        out.trimmed = self.trimmed;
        out.minimal = true;
        out
    }

    /// Merges byte columns that every state treats alike (fewer columns, same language).
    pub fn compact(self) -> Self {
        if self.calls.is_some() {
            return self.stored().compact();
        }
        let n = self.len();
        let mut columns: HashMap<Vec<u32>, u8> = HashMap::default();
        let mut classes = [0u8; 256];
        let mut firsts: Vec<usize> = Vec::new();
        for (b, class) in classes.iter_mut().enumerate() {
            let old = self.classes[b] as usize;
            let column: Vec<u32> = (0..n).map(|s| self.trans[s * self.stride + old]).collect();
            let next = columns.len() as u8;
            *class = *columns.entry(column).or_insert_with(|| {
                firsts.push(old);
                next
            });
        }
        let stride = firsts.len();
        let mut trans = Vec::with_capacity(n * stride);
        for s in 0..n {
            for &old in &firsts {
                trans.push(self.trans[s * self.stride + old]);
            }
        }
        Self {
            classes,
            stride,
            trans,
            accept: self.accept,
            trimmed: self.trimmed,
            // The same states with fewer columns: as minimal as before.
            minimal: self.minimal,
            calls: None,
        }
    }

    /// Every state that cannot reach an accepting state becomes [`DEAD`], and states that
    /// are no longer reachable are dropped (ids renumbered breadth first).
    pub fn trim(self) -> Self {
        if self.trimmed {
            return self;
        }
        self.trim_map().0
    }

    /// [`Self::trim`], also giving the old id of each new state from 1 on (`order[i]` is the
    /// old id of new state `i + 1`).
    pub(crate) fn trim_map(self) -> (Self, Vec<u32>) {
        if self.calls.is_some() {
            return self.stored().trim_map();
        }
        let n = self.len();
        // Reverse edges (compressed rows: `sources[start[t]..start[t + 1]]` lead to `t`;
        // none into DEAD, where most transitions go), from one read of the rows, then a
        // backward search from the accepting states.
        let mut edges: Vec<(u32, u32)> = Vec::new();
        for s in 1..n {
            let mut last = DEAD;
            for &t in &self.trans[s * self.stride..(s + 1) * self.stride] {
                // Neighbouring columns often go to one state: one edge for them.
                if t != DEAD && t != last {
                    edges.push((t, s as u32));
                }
                last = t;
            }
        }
        let (start, sources) = by_target(n, &edges);
        drop(edges);
        let mut live = vec![false; n];
        let mut stack: Vec<u32> = (1..n as u32).filter(|&s| self.accept[s as usize]).collect();
        for &s in &stack {
            live[s as usize] = true;
        }
        while let Some(s) = stack.pop() {
            for &p in &sources[start[s as usize] as usize..start[s as usize + 1] as usize] {
                if !live[p as usize] {
                    live[p as usize] = true;
                    stack.push(p);
                }
            }
        }
        let mut out = Self::with_classes(self.classes, self.stride);
        if n <= 1 || !live[START as usize] {
            out.push_state(false);
            return (out, vec![START.min(n as u32 - 1).max(1)]);
        }
        let mut ids = vec![DEAD; n];
        let mut order = vec![START];
        ids[START as usize] = 1;
        let mut i = 0;
        while i < order.len() {
            let s = order[i] as usize;
            i += 1;
            for c in 0..self.stride {
                let t = self.trans[s * self.stride + c];
                if t != DEAD && live[t as usize] && ids[t as usize] == DEAD {
                    ids[t as usize] = order.len() as u32 + 1;
                    order.push(t);
                }
            }
        }
        for &s in &order {
            let s = s as usize;
            out.push_state(self.accept[s]);
            let row = out.len() - 1;
            for c in 0..self.stride {
                let t = self.trans[s * self.stride + c];
                out.trans[row * self.stride + c] = if live[t as usize] {
                    ids[t as usize]
                } else {
                    DEAD
                };
            }
        }
        out.trimmed = true;
        (out, order)
    }
}

/// The useful states of a table (reachable from [`START`] and able to reach an accepting
/// state) and the transitions between them, for [`Table::minimize`].
struct Useful {
    /// Per state: useful.
    useful: Vec<bool>,
    /// The transitions into state `t` are `preds[pred_start[t]..pred_start[t + 1]]`.
    pred_start: Vec<u32>,
    /// Per transition between useful states: `column << 32 | source`.
    preds: Vec<u64>,
}

/// Orders `incoming` (`column << 32 | state` words) by column; the order within a column
/// is left as it comes (the splitting loop of [`Table::minimize`] reads each column's states
/// as a set). A long list is placed by counting its columns (`counts` has one more entry
/// than there are columns) rather than sorted: the first splitters of a table hold most of
/// its transitions.
fn group_by_column(incoming: &mut Vec<u64>, scratch: &mut Vec<u64>, counts: &mut [u32]) {
    if incoming.len() <= 4 * counts.len() {
        incoming.sort_unstable();
        return;
    }
    counts.fill(0);
    for &e in incoming.iter() {
        counts[(e >> 32) as usize + 1] += 1;
    }
    for c in 1..counts.len() {
        counts[c] += counts[c - 1];
    }
    scratch.clear();
    scratch.resize(incoming.len(), 0);
    for &e in incoming.iter() {
        let at = &mut counts[(e >> 32) as usize];
        scratch[*at as usize] = e;
        *at += 1;
    }
    std::mem::swap(incoming, scratch);
}

impl Useful {
    /// `None` when the start state is not useful (the language is empty).
    fn of(t: &Table) -> Option<Self> {
        let (n, k) = (t.len(), t.stride);
        let row = |s: usize| &t.trans[s * k..(s + 1) * k];
        // Reachable from the start, each reached row read once: its transitions that are
        // not DEAD (most are) kept as `(target, column << 32 | source)`.
        let mut reached = vec![false; n];
        reached[START as usize] = true;
        let mut stack = vec![START];
        let mut edges: Vec<(u32, u64)> = Vec::new();
        while let Some(s) = stack.pop() {
            for (c, &q) in row(s as usize).iter().enumerate() {
                if q != DEAD {
                    edges.push((q, (c as u64) << 32 | s as u64));
                    if !reached[q as usize] {
                        reached[q as usize] = true;
                        stack.push(q);
                    }
                }
            }
        }
        // The transitions between reached states, by target (compressed rows).
        let (pred_start, preds) = by_target(n, &edges);
        drop(edges);
        // Able to finish: backwards from the reached accepting states.
        let mut useful = vec![false; n];
        let mut stack: Vec<u32> = (1..n as u32)
            .filter(|&s| reached[s as usize] && t.accept[s as usize])
            .collect();
        for &s in &stack {
            useful[s as usize] = true;
        }
        while let Some(q) = stack.pop() {
            let q = q as usize;
            for &p in &preds[pred_start[q] as usize..pred_start[q + 1] as usize] {
                let p = p as u32;
                if !useful[p as usize] {
                    useful[p as usize] = true;
                    stack.push(p);
                }
            }
        }
        if !useful[START as usize] {
            return None;
        }
        // Keep the transitions between useful states only.
        let mut kept = Vec::with_capacity(preds.len());
        let mut starts = vec![0u32; n + 1];
        for q in 0..n {
            if useful[q] {
                kept.extend(
                    preds[pred_start[q] as usize..pred_start[q + 1] as usize]
                        .iter()
                        .filter(|&&p| useful[p as u32 as usize]),
                );
            }
            starts[q + 1] = kept.len() as u32;
        }
        Some(Self {
            useful,
            pred_start: starts,
            preds: kept,
        })
    }
}

/// Edges `(target, item)` of a table of `n` states grouped by target as compressed rows:
/// target `t`'s items are `items[start[t]..start[t + 1]]`, in the order given. Returns
/// `(start, items)`.
fn by_target<T: Copy + Default>(n: usize, edges: &[(u32, T)]) -> (Vec<u32>, Vec<T>) {
    let mut start = vec![0u32; n + 1];
    for &(t, _) in edges {
        start[t as usize + 1] += 1;
    }
    for k in 1..=n {
        start[k] += start[k - 1];
    }
    let mut fill = start.clone();
    let mut items = vec![T::default(); edges.len()];
    for &(t, x) in edges {
        items[fill[t as usize] as usize] = x;
        fill[t as usize] += 1;
    }
    (start, items)
}

/// A regex-automata error as a [`BuildError`] (a size limit is [`BuildError::TooLarge`]).
fn too_large(e: &dyn std::fmt::Display) -> BuildError {
    let text = e.to_string();
    if text.contains("limit") {
        BuildError::TooLarge {
            budget: Budget::AutomatonBytes,
            what: text,
        }
    } else {
        BuildError::Regex(text)
    }
}

fn dense_dfa(
    hir: &Hir,
    limits: &Limits,
    start_kind: StartKind,
) -> Result<dense::DFA<Vec<u32>>, BuildError> {
    dense_from_nfa(&thompson_nfa(hir, limits)?, limits, start_kind)
}

fn thompson_nfa(hir: &Hir, limits: &Limits) -> Result<thompson::NFA, BuildError> {
    thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .nfa_size_limit(Some(limits.max_automaton_bytes))
                .shrink(false),
        )
        .build_from_hir(hir)
        .map_err(|e| too_large(&e))
}

fn dense_from_nfa(
    nfa: &thompson::NFA,
    limits: &Limits,
    start_kind: StartKind,
) -> Result<dense::DFA<Vec<u32>>, BuildError> {
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .start_kind(start_kind)
                // Every match, not leftmost-first: the table is a language, not a search.
                .match_kind(MatchKind::All)
                .minimize(false)
                .byte_classes(true)
                .dfa_size_limit(Some(limits.max_automaton_bytes))
                .determinize_size_limit(Some(limits.max_automaton_bytes)),
        )
        .build_from_nfa(nfa)
        .map_err(|e| too_large(&e))
}

/// The rows of a shared table's computed states ([`Table::stored`], one row at a time), for
/// [`Table::splice_many`]: a computed state's row is computed when a step first leaves the
/// state (located once, stepped on every column), so a splice that ends at its state budget
/// has computed only the rows it reached. The rows are zeroed memory, so the pages of rows
/// never computed are never touched.
struct LazyRows<'a> {
    table: &'a Table,
    /// One byte per column ([`representatives`]).
    reps: Vec<u8>,
    /// `stride` next states per computed state (numbered from the first past the stored
    /// rows), each plus one: 0 where the row is not computed yet.
    rows: Vec<u32>,
}

impl<'a> LazyRows<'a> {
    fn of(table: &'a Table) -> Self {
        Self {
            table,
            reps: representatives(&table.classes, table.stride),
            rows: vec![0; (table.len() - table.stored_states()) * table.stride],
        }
    }

    /// [`Table::next`].
    #[inline]
    fn next(&mut self, state: u32, byte: u8) -> u32 {
        let t = self.table;
        let column = t.classes[byte as usize] as usize;
        let Some(i) = (state as usize).checked_sub(t.stored_states()) else {
            return t.trans[state as usize * t.stride + column];
        };
        let at = i * t.stride;
        match self.rows.get(at + column) {
            None => DEAD,
            Some(&0) => {
                let from = t.locate(state);
                for (c, &b) in self.reps.iter().enumerate() {
                    self.rows[at + c] = t.next_located(from, b).state() + 1;
                }
                self.rows[at + column] - 1
            }
            Some(&next) => next - 1,
        }
    }
}

/// Whether a shared table's computed states accept ([`Table::is_accepting`]), each found
/// once (a computed state's is a search of the table's calls), for [`Table::splice_many`],
/// whose closures ask it of every pair of every set they build.
struct LazyAccepting<'a> {
    table: &'a Table,
    /// Per computed state: 0 not asked yet, else 1 + whether it accepts.
    known: Vec<std::cell::Cell<u8>>,
}

impl<'a> LazyAccepting<'a> {
    fn of(table: &'a Table) -> Self {
        let computed = table.len() - table.stored_states();
        Self {
            table,
            known: (0..computed).map(|_| std::cell::Cell::new(0)).collect(),
        }
    }

    /// [`Table::is_accepting`].
    #[inline]
    fn is_accepting(&self, state: u32) -> bool {
        let t = self.table;
        let Some(known) = (state as usize)
            .checked_sub(t.stored_states())
            .and_then(|i| self.known.get(i))
        else {
            return t.is_accepting(state);
        };
        if known.get() == 0 {
            known.set(1 + t.is_accepting(state) as u8);
        }
        known.get() == 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deadline that has passed ends a determinization at its first row and at every
    /// `DEADLINE_EVERY` rows after it; the rows between read no clock (the state limit is
    /// still checked at each).
    #[test]
    fn deadlines_are_read_once_per_rows() {
        let past = Limits {
            deadline: Some(std::time::Instant::now()),
            ..Limits::default()
        };
        std::thread::sleep(std::time::Duration::from_millis(2));
        fn time<T>(r: Result<T, BuildError>) -> bool {
            matches!(
                r,
                Err(BuildError::TooLarge {
                    budget: Budget::Time,
                    ..
                })
            )
        }
        assert!(time(past.check_row(1, 1)));
        assert!(past.check_row(2, 2).is_ok());
        assert!(past.check_row(DEADLINE_EVERY, 9).is_ok());
        assert!(time(past.check_row(DEADLINE_EVERY + 1, 9)));
        let small = Limits {
            max_states: 5,
            ..past
        };
        assert!(matches!(
            small.check_row(2, 6),
            Err(BuildError::TooLarge {
                budget: Budget::States,
                ..
            })
        ));
        // A pattern no other test builds (the table cache serves a table found even past
        // the deadline): its determinization stops at its first row, by the position
        // construction and by regex-automata's (a table that grows row by row,
        // `Table::check_size`: rows counted past the dead state).
        let hir = regex_syntax::parse("(deadline-[a-z]{3}[0-9]{2}|x{4,9})").unwrap();
        assert!(time(Table::from_hir(&hir, &past)));
        let hir = regex_syntax::parse("(zzq-[a-z]{3}[0-9]{2}|y{4,9})").unwrap();
        assert!(time(Table::from_hir_by_regex_automata(&hir, &past)));
        // A product of fewer than 64 rows (cold review: it was built past the deadline).
        let a = Table::from_hir(
            &regex_syntax::parse("[a-c]*x[a-c]*").unwrap(),
            &Limits::default(),
        );
        let b = Table::from_hir(
            &regex_syntax::parse("[b-d]*x[a-d]{0,40}").unwrap(),
            &Limits::default(),
        );
        assert!(time(a.unwrap().intersect(&b.unwrap(), &past)));
    }

    /// Digests of long texts: equal texts alike, a text differing in its last byte or one
    /// byte longer not.
    #[test]
    fn digests_tell_long_texts_apart() {
        let text = "x".repeat(1 << 20);
        assert_eq!(digest(&text), digest(&text.clone()));
        let mut other = text.clone();
        other.pop();
        other.push('y');
        assert_ne!(digest(&text), digest(&other));
        assert_ne!(digest(&text), digest(&(text.clone() + "x")));
    }

    /// Digests of HIRs follow their structure: a HIR parsed twice digests alike, and HIRs
    /// that differ in one field each (a literal's bytes against its neighbour's tag, the
    /// nesting of an alternation, greediness, bounds, class ranges, capture names, anchors,
    /// byte classes) digest apart.
    #[test]
    fn digests_tell_hirs_apart() {
        let patterns = [
            r"a\x01b|c",
            r"a|b\x01c",
            r"ab|c",
            r"a(?:b|c)",
            r"a(?:b*|c*)d*",
            r"a(?:b*|c*|d*)",
            r"ab*",
            r"a|b*",
            r"a*",
            r"a*?",
            r"a{2,}",
            r"a{2,5}",
            r"a{3,5}",
            r"[a-c]x",
            r"[a-b]x",
            r"(a)b",
            r"(?P<n>a)b",
            r"(?P<m>a)b",
            r"(?:a)b",
            r"^ab",
            r"ab$",
            r"(?m)^ab",
            r"(?-u:[\x80-\xff])",
            r"(?-u:[\x80-\xfe])",
            r"",
        ];
        let parse = |p: &str| {
            regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(p)
                .unwrap()
        };
        let mut seen = HashMap::default();
        for p in patterns {
            let (a, b) = (parse(p), parse(p));
            assert_eq!(digest(&a), digest(&b), "{p}");
            if let Some(q) = seen.insert(digest(&a), p) {
                panic!("{p} and {q} digest alike");
            }
        }
        // A pair is its parts in order.
        let (x, y) = (parse("x"), parse("y"));
        assert_ne!(digest(&(&x, &y)), digest(&(&y, &x)));
        assert_ne!(
            digest(&(vec![x.clone()], vec![y.clone()])),
            digest(&(vec![x, y], Vec::<Hir>::new()))
        );
    }

    /// Options of general schema mode, the rest default.
    fn general_mode() -> crate::template::Options {
        crate::template::Options {
            json: crate::json::JsonOptions {
                mode: crate::json::SchemaMode::general(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// `n` members `leaf_0`... in turn a string of at most `max_length` characters, an
    /// integer from -5 to 900 and a string of `format`: an object large enough to be a
    /// shared value.
    fn leaf_members(
        n: usize,
        max_length: u64,
        format: &str,
    ) -> serde_json::Map<String, serde_json::Value> {
        (0..n)
            .map(|i| {
                let value = match i % 3 {
                    0 => serde_json::json!({"type": "string", "maxLength": max_length}),
                    1 => serde_json::json!({"type": "integer", "minimum": -5, "maximum": 900}),
                    _ => serde_json::json!({"type": "string", "format": format}),
                };
                (format!("leaf_{i}"), value)
            })
            .collect()
    }

    /// [`Table::next_located`] from [`Table::locate`] is [`Table::next`], state for state and
    /// byte for byte, in a schema whose shared values read values of their own (objects
    /// of slotted members inside arrays inside objects): entering a value, stepping in it,
    /// and leaving it for the return state of one call or of several at once.
    #[test]
    fn located_steps_are_the_tables() {
        let options = general_mode();
        let leaf = leaf_members(14, 40, "date-time");
        let middle: serde_json::Map<String, serde_json::Value> = (0..10)
            .map(|i| {
                let value = if i % 2 == 0 {
                    serde_json::json!({"type": "array", "items": {"type": "object", "properties": leaf}})
                } else {
                    serde_json::json!({"type": "object", "properties": leaf, "additionalProperties": false})
                };
                (format!("middle_{i}"), value)
            })
            .collect();
        let schema = serde_json::json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": middle},
            "b": {"type": "array", "items": {"type": "object", "properties": middle}},
            "c": {"type": "string", "maxLength": 12}
        }});
        let c = crate::template::compile_schema(Some(&schema), &options).unwrap();
        let table = &c.machine.table;
        let stored = table.stored_states() as u32;
        let n = table.len() as u32;
        assert!(n > stored, "no shared values: {n} states, all stored");
        let nested = (stored..n).any(|s| {
            let l = table.locate(s);
            !std::ptr::eq(l.within, &**table) && l.within.calls.is_some()
        });
        assert!(nested, "no value reads a value of its own");
        let mut checked = 0u64;
        for s in (0..n).step_by(((n / 4000) as usize).max(1)) {
            let from = table.locate(s);
            assert_eq!(from.state(), s);
            for b in 0..=255u8 {
                let located = table.next_located(from, b);
                assert_eq!(
                    located.state(),
                    table.next(s, b),
                    "state {s}, byte {b:#04x}"
                );
                assert_eq!(located.is_dead(), located.state() == DEAD);
                checked += 1;
            }
        }
        assert!(checked > 100_000, "{checked} steps checked");
        // Every state stored as a row (`Table::stored`, which steps located states): the
        // same steps and the same accepting states.
        let rows = (**table).clone().stored();
        assert_eq!(rows.stored_states() as u32, n);
        for s in (0..n).step_by(((n / 4000) as usize).max(1)) {
            assert_eq!(rows.is_accepting(s), table.is_accepting(s), "state {s}");
            for b in 0..=255u8 {
                assert_eq!(
                    rows.next(s, b),
                    table.next(s, b),
                    "state {s}, byte {b:#04x}"
                );
            }
        }
    }

    /// [`Table::live_after_accepting`], which reads calls as wholes, is what stepping every
    /// accepting state on every byte gives, on every table of a schema (the machine's and,
    /// recursively, its shared values'), among them values that read a shared value at
    /// their end (an `anyOf` of an object and an array of objects: the calls return to an
    /// accepting state) and values that read none there.
    #[test]
    fn live_after_accepting_is_every_accepting_states_steps() {
        let options = general_mode();
        let leaf = leaf_members(12, 30, "date");
        let either = serde_json::json!({"anyOf": [
            {"type": "object", "properties": leaf, "additionalProperties": false},
            {"type": "array", "items": {"type": "object", "properties": leaf}},
            {"type": "integer", "minimum": 10, "maximum": 5000}
        ]});
        // At the root, the integer is a call returning to the end (accepting).
        let schema = serde_json::json!({"anyOf": [{"type": "object", "properties": {
            "a": either,
            "b": {"type": "array", "items": either},
            "c": {"type": "object", "properties": {"d": either, "e": {"type": "boolean"}}}
        }}, {"type": "integer", "minimum": 10, "maximum": 5000}]});
        let c = crate::template::compile_schema(Some(&schema), &options).unwrap();
        let mut tables: Vec<Arc<Table>> = vec![c.machine.table.clone()];
        let (mut seen, mut accepting_returns) = (0, 0);
        while let Some(t) = tables.pop() {
            seen += 1;
            let mut expected = [false; 256];
            let mut any = false;
            for s in 1..t.len() as u32 {
                if t.is_accepting(s) {
                    any = true;
                    for b in 0..=255u8 {
                        expected[b as usize] |= t.next(s, b) != DEAD;
                    }
                }
            }
            assert_eq!(t.live_after_accepting(), any.then_some(expected), "{t:?}");
            if let Some(calls) = &t.calls {
                // Calls returning to an accepting state into a value whose accepting states
                // read on (digits after digits).
                accepting_returns += (0..calls.ret.len())
                    .filter(|&k| {
                        t.accept[calls.ret[k] as usize]
                            && calls.values[calls.value[k] as usize]
                                .live_after_accepting()
                                .is_some_and(|b| b.iter().any(|&x| x))
                    })
                    .count();
                tables.extend(calls.values.iter().cloned());
            }
        }
        assert!(seen >= 3, "{seen} tables");
        assert!(
            accepting_returns > 0,
            "no call returns to an accepting state after a value that reads on there"
        );
    }

    /// A pattern that may match bytes outside UTF-8 (`(?-u:\xF8)`).
    fn raw(pattern: &str) -> Hir {
        regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(pattern)
            .unwrap()
    }

    /// [`Table::from_hir`]'s process-wide tables are keyed by the budgets too: a pattern
    /// built under the default budgets is refused under a smaller `max_states` (not served
    /// from the cache), and served again under the default ones, equal to a fresh build.
    #[test]
    fn kept_tables_meet_the_budgets_of_each_build() {
        let hir = raw("q[a-z]{40,60}z");
        let first = Table::from_hir(&hir, &Limits::default()).unwrap();
        assert!(first.len() > 40);
        let small = Limits {
            max_states: 20,
            ..Limits::default()
        };
        assert!(matches!(
            Table::from_hir(&hir, &small),
            Err(BuildError::TooLarge {
                budget: Budget::States,
                ..
            })
        ));
        let again = Table::from_hir(&hir, &Limits::default()).unwrap();
        let fresh = Table::from_hir_uncached(&hir, &Limits::default()).unwrap();
        assert_eq!((&again.trans, &again.accept), (&fresh.trans, &fresh.accept));
        assert_eq!((&first.trans, &first.accept), (&fresh.trans, &fresh.accept));
    }

    #[test]
    fn position_tables_flagged_trimmed_are_trimmed() {
        let parser = raw;
        let mut flagged = 0;
        for p in [
            "a|b(?:cd)*e?",
            r#""(?:[^"\\]|\\.)*""#,
            r"-?(?:0|[1-9][0-9]{0,17})",
            r"(?:\p{L}+ ?){1,3}x",
            "(?:a?){4}b|c",
            r"(?-u:[\x80-\xff])+\w",
            "[a&&b]x|y",
            "a(?:[a&&b]|c)d",
        ] {
            let Ok(t) = crate::positions::table(&parser(p), &Limits::default()) else {
                panic!("{p}");
            };
            let forced = t.clone().trim_map().0;
            if t.is_trimmed() {
                flagged += 1;
                assert_eq!(
                    (&t.trans, &t.accept),
                    (&forced.trans, &forced.accept),
                    "{p}"
                );
            }
            assert!(t.clone().trim().same_language(&forced), "{p}");
        }
        assert_eq!(flagged, 6);
        // Schema languages (the benchmark's tool schemas).
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../bench-constrain/schemas/tools.json"
        );
        let tools: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for tool in tools.iter().take(60) {
            let Ok(hir) = crate::json::SchemaLanguage::new(
                &tool["parameters"],
                crate::json::JsonOptions::default(),
            )
            .compile() else {
                continue;
            };
            let Ok(t) = crate::positions::table(&hir, &Limits::default()) else {
                panic!("{}", tool["name"]);
            };
            assert!(t.is_trimmed());
            let forced = t.clone().trim_map().0;
            assert_eq!((&t.trans, &t.accept), (&forced.trans, &forced.accept));
        }
    }

    fn hir(pattern: &str) -> Hir {
        regex_syntax::Parser::new().parse(pattern).unwrap()
    }

    /// Moore's refinement (states told apart by acceptance, then by the classes of their
    /// successors, until no class splits), numbered as [`Table::minimize`] numbers: its
    /// oracle.
    fn minimize_moore(t: &Table) -> Table {
        let (n, k) = (t.len(), t.stride);
        let mut class: Vec<usize> = t.accept.iter().map(|&a| usize::from(a)).collect();
        let mut count = 0;
        loop {
            let mut ids: HashMap<Vec<usize>, usize> = HashMap::default();
            let next: Vec<usize> = (0..n)
                .map(|s| {
                    let successors = t.trans[s * k..(s + 1) * k].iter();
                    let signature = std::iter::once(class[s])
                        .chain(successors.map(|&q| class[q as usize]))
                        .collect();
                    let fresh = ids.len();
                    *ids.entry(signature).or_insert(fresh)
                })
                .collect();
            class = next;
            if ids.len() == count {
                break;
            }
            count = ids.len();
        }
        let mut rep = vec![usize::MAX; count];
        for s in (0..n).rev() {
            rep[class[s]] = s;
        }
        // Breadth first from the start's class; the dead state's class is DEAD.
        let mut id = vec![u32::MAX; count];
        id[class[DEAD as usize]] = DEAD;
        let mut queue = VecDeque::from([class[START as usize]]);
        id[class[START as usize]] = START;
        let mut order = Vec::new();
        while let Some(c) = queue.pop_front() {
            order.push(c);
            for &q in &t.trans[rep[c] * k..(rep[c] + 1) * k] {
                if id[class[q as usize]] == u32::MAX {
                    id[class[q as usize]] = (order.len() + queue.len()) as u32 + 1;
                    queue.push_back(class[q as usize]);
                }
            }
        }
        let mut out = Table::with_classes(t.classes, k);
        for c in order {
            out.accept.push(t.accept[rep[c]]);
            out.trans.extend(
                t.trans[rep[c] * k..(rep[c] + 1) * k]
                    .iter()
                    .map(|&q| id[class[q as usize]]),
            );
        }
        out.trimmed = t.trimmed;
        out
    }

    #[test]
    fn regex_languages_are_whole_matches() {
        let t = Table::from_hir(&hir("ab+c|x"), &Limits::default()).unwrap();
        assert!(t.matches(b"abc") && t.matches(b"abbbc") && t.matches(b"x"));
        assert!(!t.matches(b"ab") && !t.matches(b"abcx") && !t.matches(b""));
        // Trimmed: a live state can always finish.
        assert_eq!(t.walk(START, b"abz"), DEAD);
        assert_ne!(t.walk(START, b"ab"), DEAD);
    }

    #[test]
    fn avoiding_rejects_every_occurrence() {
        let t = Table::avoiding(&hir("</tool_call>|<\\|im_end\\|>"), &Limits::default()).unwrap();
        assert!(t.matches(b"plain text </tool_cal> <|im_end|"));
        assert!(t.matches(b""));
        assert!(!t.matches(b"a</tool_call>"));
        assert!(!t.matches(b"<|im_end|>b"));
        // Overlapping starts are found too.
        let t = Table::avoiding(&hir("abab"), &Limits::default()).unwrap();
        assert!(!t.matches(b"aababab") && t.matches(b"abaab"));
    }

    /// Where one determinized set holds two places that start the same shared value (here
    /// after "b", read both by a copied value and by the skeleton itself), the value is one
    /// call returning to both continuations; before, both were copied.
    /// The places of value 0 (placeholder 0xF8) and value 1 (0xF9) in `t` at state `s`.
    fn two_placeholders(t: &Table, s: u32) -> Vec<(usize, u32)> {
        [(0xF8u8, 0usize), (0xF9, 1)]
            .into_iter()
            .filter_map(|(m, k)| Some((k, t.next(s, m))).filter(|&(_, q)| q != DEAD))
            .collect()
    }

    /// The place of value 0 (placeholder 0xF8) in `t` at state `s`.
    fn one_placeholder(t: &Table, s: u32) -> Vec<(usize, u32)> {
        Some((0usize, t.next(s, 0xF8)))
            .filter(|&(_, q)| q != DEAD)
            .into_iter()
            .collect()
    }

    /// `value` (a table that reads a value in place) copied by an outer splice
    /// (`<value>` or `q value !`), which computes each of its computed states' rows once,
    /// when a set first holds the state (`LazyRows`), and whether it accepts
    /// (`LazyAccepting`); checked to be the table of its stored copy (`Table::stored`),
    /// state for state, and to match each of `cases` (text, whether it matches) or not.
    fn copied_in_place_and_as_rows(value: &Table, cases: &[(&str, bool)]) {
        let limits = Limits::default();
        let outer = Table::from_hir(&raw(r"<(?-u:\xF8)>|q(?-u:\xF8)!"), &limits).unwrap();
        let in_place = outer
            .clone()
            .splice_many(&[0xF8], one_placeholder, &[value], &limits)
            .unwrap();
        let rows = value.clone().stored();
        let by_rows = outer
            .splice_many(&[0xF8], one_placeholder, &[&rows], &limits)
            .unwrap();
        assert!(in_place.same_language(&by_rows));
        assert_eq!(in_place.len(), by_rows.len());
        assert!(in_place.same_rows(&by_rows));
        for &(text, ok) in cases {
            assert_eq!(in_place.matches(text.as_bytes()), ok, "{text}");
        }
    }

    #[test]
    fn a_shared_value_clashing_in_one_set_is_copied_there_alone() {
        let limits = Limits::default();
        // 0xF9: a copied value (`a+`) before the place of the shared one (0xF8, `[a-z]{1,8}`),
        // which `b` reaches too. After the copy's `a` both may read another `a`: that set
        // reads the shared value as a copy, the place after `b` still calls it (a pass that
        // gave up sharing the place everywhere built no call at all).
        let skeleton = Table::from_hir(&raw(r"((?-u:\xF9)|b)(?-u:\xF8)1"), &limits).unwrap();
        let shared = Table::from_hir(&hir("[a-z]{1,8}"), &limits).unwrap();
        let copied = Table::from_hir(&hir("a+"), &limits).unwrap();
        assert!(shared.len() >= 5 && copied.len() < 5);
        let find = two_placeholders;
        let values = [Arc::new(shared), Arc::new(copied)];
        let (spliced, clashed) = skeleton
            .try_splice_shared(&[0xF8, 0xF9], &find, &values, 5, &limits)
            .unwrap()
            .unwrap();
        assert!(spliced.is_shared() && clashed);
        let copies = skeleton
            .clone()
            .splice_many(&[0xF8, 0xF9], find, &[&values[0], &values[1]], &limits)
            .unwrap();
        assert!(spliced.same_language(&copies));
        // `splice_shared` keeps it while it stays within a quarter of the state limit, and
        // past that the one of it and the copies with fewer budget states (its calls'
        // states count a sixteenth).
        let kept = skeleton
            .clone()
            .splice_shared(&[0xF8, 0xF9], find, &values, 5, &limits)
            .unwrap();
        assert!(kept.is_shared() && kept.len() == spliced.len());
        let tight = Limits {
            max_states: spliced.budget_states() * 3,
            ..limits
        };
        let kept = skeleton
            .clone()
            .splice_shared(&[0xF8, 0xF9], find, &values, 5, &tight)
            .unwrap();
        assert!(spliced.budget_states() < spliced.len());
        assert_eq!(
            kept.budget_states(),
            spliced.budget_states().min(copies.budget_states())
        );
        assert!(kept.same_language(&copies));
        for (text, ok) in [
            ("bxyz1", true),
            ("aa1", true),
            ("aaab1", true),
            ("a1", false),
            ("b1", false),
            ("aabcdefghij1", false),
        ] {
            assert_eq!(spliced.matches(text.as_bytes()), ok, "{text}");
        }
    }

    #[test]
    fn one_value_started_from_several_places_of_a_set_is_one_call() {
        let limits = Limits::default();
        // 0xF8: the shared value (words of 1 to 8 letters, 9 states); 0xF9: a copied one.
        let skeleton =
            Table::from_hir(&raw(r"(?-u:\xF9)x(?-u:\xF8)1|bx(?-u:\xF8)2"), &limits).unwrap();
        let shared = Table::from_hir(&hir("[a-z]{1,8}"), &limits).unwrap();
        let copied = Table::literal(b"b");
        assert!(shared.len() >= 5 && copied.len() < 5);
        let find = two_placeholders;
        let values = [Arc::new(shared), Arc::new(copied)];
        let spliced = skeleton
            .clone()
            .splice_shared(&[0xF8, 0xF9], find, &values, 5, &limits)
            .unwrap();
        assert!(spliced.is_shared());
        let copies = skeleton
            .splice_many(&[0xF8, 0xF9], find, &[&values[0], &values[1]], &limits)
            .unwrap();
        assert!(spliced.same_language(&copies));
        for (text, ok) in [
            ("bxabc1", true),
            ("bxabc2", true),
            ("bxa1", true),
            ("bx1", false),
            ("bxabc3", false),
            ("bxabcdefghi1", false),
        ] {
            assert_eq!(spliced.matches(text.as_bytes()), ok, "{text}");
        }
        // A value that reads a value in place, copied by an outer splice: the table of its
        // stored copy.
        copied_in_place_and_as_rows(
            &spliced,
            &[
                ("<bxabc1>", true),
                ("qbxa2!", true),
                ("<bx1>", false),
                ("qbxabc1>", false),
            ],
        );
    }

    /// A copied value that ends in a call of its own (its computed states accept where the
    /// called value does): an outer splice goes on after it from those states
    /// (`LazyAccepting`), as from the stored copy's.
    #[test]
    fn a_copied_value_ending_in_a_call_goes_on_from_its_computed_states() {
        let limits = Limits::default();
        let inner = Table::from_hir(&raw(r"bx(?-u:\xF8)|c(?-u:\xF8)"), &limits).unwrap();
        let shared = Arc::new(Table::from_hir(&hir("[a-z]{1,8}"), &limits).unwrap());
        let inner = inner
            .splice_shared(&[0xF8], one_placeholder, &[shared], 5, &limits)
            .unwrap();
        assert!(inner.is_shared());
        let accepting = (inner.stored_states() as u32..inner.len() as u32)
            .filter(|&s| inner.is_accepting(s))
            .count();
        assert!(accepting > 0);
        copied_in_place_and_as_rows(
            &inner,
            &[
                ("<bxab>", true),
                ("qcabcdefgh!", true),
                ("<bx>", false),
                ("<cabcdefghi>", false),
                ("qbxa", false),
            ],
        );
    }

    #[test]
    fn literals_and_intersections() {
        let l = Table::literal(b"<think>");
        assert!(l.matches(b"<think>") && !l.matches(b"<think") && !l.matches(b"<think>>"));
        let a = Table::from_hir(&hir("[a-z]*"), &Limits::default()).unwrap();
        let b = Table::avoiding(&hir("bad"), &Limits::default()).unwrap();
        let both = a.intersect(&b, &Limits::default()).unwrap();
        assert!(both.matches(b"good") && !both.matches(b"notbad") && !both.matches(b"A"));
        // An empty intersection trims to a dead start.
        let never = Table::literal(b"bad")
            .intersect(&b, &Limits::default())
            .unwrap();
        assert!(never.is_empty());
    }

    #[test]
    fn minimizing_keeps_the_language() {
        for p in [
            "a|b(?:cd)*e?",
            "(?:ab|ac|ad)x|(?:ab|ac)y",
            r"-?(?:0|[1-9][0-9]{0,17})",
            "(?:a{1,3}|b{2,4}){1,3}c",
            "[a-c]*abc[a-c]*",
        ] {
            let t = Table::from_hir(&hir(p), &Limits::default()).unwrap();
            let m = t.clone().minimize();
            assert!(m.same_language(&t), "{p}");
            assert!(m.len() <= t.len(), "{p}");
            // Minimal: minimizing again changes nothing.
            assert_eq!(m.clone().minimize().len(), m.len(), "{p}");
        }
        // Equivalent branches merge: `(ab|ac)x` and `(ad)x` end alike.
        let t = Table::from_hir(&hir("abx|acx|adx"), &Limits::default()).unwrap();
        assert_eq!(t.minimize().len(), 5);
    }

    #[test]
    fn minimizing_matches_moores_refinement() {
        use rand::{Rng, SeedableRng};
        let same = |a: &Table, b: &Table| {
            a.classes == b.classes
                && a.stride == b.stride
                && a.trans == b.trans
                && a.accept == b.accept
                && a.trimmed == b.trimmed
        };
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        for round in 0..3000 {
            // Random tables: some states unreachable, some unable to finish, some columns
            // mostly dead.
            let n = rng.random_range(2..40usize);
            let k = rng.random_range(1..6usize);
            let dead_share = rng.random_range(0..10u32);
            let mut t = Table::with_classes([0; 256], k);
            for _ in 0..n {
                t.push_state(rng.random_range(0..4u32) == 0);
            }
            for s in 1..=n {
                for c in 0..k {
                    t.trans[s * k + c] = if rng.random_range(0..10u32) < dead_share {
                        DEAD
                    } else {
                        rng.random_range(0..=n as u32)
                    };
                }
            }
            let m = t.clone().minimize();
            assert!(same(&m, &minimize_moore(&t)), "round {round}");
        }
        for p in [
            "a|b(?:cd)*e?",
            "(?:a{1,3}|b{2,4}){1,3}c",
            "[a-c]*abc[a-c]*",
            "[^a]",
        ] {
            let t = Table::from_hir(&hir(p), &Limits::default()).unwrap();
            assert!(same(&t.clone().minimize(), &minimize_moore(&t)), "{p}");
        }
    }

    /// A random table of `n` states over `k` columns (byte `b` in column `b % k`, or
    /// `(b / 3) % k` with `spread`): with `acyclic`, every transition leads to a later state.
    fn random_table(rng: &mut rand::rngs::SmallRng, acyclic: bool, spread: bool) -> Table {
        use rand::Rng;
        let n = rng.random_range(1..30usize);
        let k = rng.random_range(1..5usize);
        let mut classes = [0u8; 256];
        for (b, c) in classes.iter_mut().enumerate() {
            *c = (if spread { b / 3 } else { b } % k) as u8;
        }
        let dead_share = rng.random_range(0..8u32);
        let mut t = Table::with_classes(classes, k);
        for _ in 0..n {
            t.push_state(rng.random_range(0..3u32) == 0);
        }
        for s in 1..=n {
            for c in 0..k {
                let lo = if acyclic { s as u32 + 1 } else { 1 };
                t.trans[s * k + c] = if lo > n as u32 || rng.random_range(0..10u32) < dead_share {
                    DEAD
                } else {
                    rng.random_range(lo..=n as u32)
                };
            }
        }
        t
    }

    /// The bottom-up product of an acyclic table is exactly the minimized breadth-first one
    /// (state for state: both are numbered breadth first), for intersections with the
    /// acyclic table on either side and for differences; and `minimize` leaves it as it is.
    #[test]
    fn acyclic_products_are_the_minimal_breadth_first_products() {
        use rand::SeedableRng;
        let same = |a: &Table, b: &Table| {
            (a.is_empty() && b.is_empty())
                || (a.classes == b.classes
                    && a.stride == b.stride
                    && a.trans == b.trans
                    && a.accept == b.accept)
        };
        let limits = Limits::default();
        let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
        let mut nonempty = 0;
        for round in 0..3000 {
            let a = random_table(&mut rng, true, false);
            let b = random_table(&mut rng, round % 2 == 0, true);
            assert!(a.is_acyclic(), "round {round}");
            let fast = a.product_acyclic(&b, false, &limits).unwrap().unwrap();
            let slow = a.intersect_breadth_first(&b, &limits).unwrap().minimize();
            assert!(same(&fast, &slow), "round {round}: intersection");
            assert!(fast.is_empty() || (fast.minimal && fast.clone().minimize().same_rows(&fast)));
            let fast = b.product_acyclic(&a, false, &limits).unwrap().unwrap();
            let slow = b.intersect_breadth_first(&a, &limits).unwrap().minimize();
            assert!(
                same(&fast, &slow),
                "round {round}: intersection, acyclic second"
            );
            let fast = a.product_acyclic(&b, true, &limits).unwrap().unwrap();
            let slow = a.difference_breadth_first(&b, &limits).unwrap().minimize();
            assert!(same(&fast, &slow), "round {round}: difference");
            nonempty += usize::from(!fast.is_empty());
        }
        assert!(nonempty > 500, "{nonempty}");
        // A cycle met in the product: no bottom-up product.
        let cyclic = Table::from_hir(&hir("a(?:bc)*"), &limits).unwrap();
        assert!(!cyclic.is_acyclic());
        assert!(cyclic
            .product_acyclic(&cyclic, false, &limits)
            .unwrap()
            .is_none());
        // The state budget counts the pairs met.
        let long = Table::from_hir(&hir("[a-z]{0,50}"), &limits).unwrap();
        let letters = Table::from_hir(&hir("(?:ab|ba)*"), &limits).unwrap();
        let small = Limits {
            max_states: 40,
            ..limits
        };
        assert!(long.intersect(&letters, &small).is_err());
        let both = long.intersect(&letters, &limits).unwrap();
        assert!(both.matches(b"abba") && !both.matches(b"aa"));
        assert!(both.matches(&b"ab".repeat(25)) && !both.matches(&b"ab".repeat(26)));
    }

    #[test]
    fn limits_are_typed_errors() {
        let small = Limits {
            max_states: 10,
            ..Limits::default()
        };
        let e = Table::from_hir(&hir("[a-z]{30}"), &small).unwrap_err();
        assert!(matches!(e, BuildError::TooLarge { .. }), "{e}");
    }
}

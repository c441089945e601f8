//! Token masks: which vocabulary tokens may come next in a constrained generation.
//!
//! A [`TokenIndex`] pairs a compiled [`Constraint`] with a [`Vocabulary`]. The ordinary tokens
//! are laid out as a byte trie in pre-order; the mask of a machine state is computed by
//! walking the trie through the machine's table, skipping a whole subtree as soon as its
//! prefix is dead, so the cost is the number of live trie nodes. In states where plain text
//! can never die (free text, JSON string bodies, strings still matching a `pattern`: every
//! state that plain characters reach from there is live), the tokens made only of plain
//! characters are taken wholesale from a bitset prepared once per vocabulary (a plain-text
//! tier), with those that end inside a character after plain text (`CutTokens`), and only
//! the other tokens are walked; so are the names of an open object's
//! properties (a declared name's prefix, then any name: up to [`PLAIN_CLOSURE_MAX`] states,
//! and states found to take plain text are remembered per index). Where a plain text may
//! hold at most `n` more characters and every longer one dies (a string with a
//! `maxLength`; `n = 0` where no plain character may come), the plain tokens of at most `n`
//! characters are taken from a per-length set and the other tokens walked; what one plain
//! character does from a state is remembered (per state of a shared value, for values read in
//! place), so the masks along a long string cost one more character each. Special tokens
//! are allowed only where a delimiter (or ignored glue) is written
//! ([`Machine::special_allowed`]), EOS only in accepting states or where its text is the
//! delimiter that completes the response. A root of a trie (its first byte) leads many
//! states to one (in an object's keys, every byte that starts no declared name leads to the
//! state of any other name): the tokens of a large root's subtree allowed from the state
//! after its byte are kept per index from the second mask meeting that state on, so the
//! masks along a name walk only the roots where the name goes on. Masks are computed on
//! first use per state and cached; the index is `Send + Sync` and can serve concurrent
//! requests.

use std::sync::{Arc, OnceLock, RwLock};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::dfa::{Located, Returns, Table, DEAD, START};
use crate::graph::Machine;
use crate::template::Constraint;
use crate::vocab::Vocabulary;

/// At most this many states reached by plain characters are checked before a mask falls back
/// to walking the whole trie ([`TokenIndex::allowed`]).
const PLAIN_CLOSURE_MAX: usize = 4096;

/// At most this many states after one length of plain text for
/// [`TokenIndex::plain_length`].
const LENGTH_STATES_MAX: usize = 4;

/// What [`TokenIndex::plain_step`] keeps between calls: buffers for the states after each
/// byte of a multi-byte character, and per table and state after a lead byte (and the kind
/// of sequence) the live states after the whole character, whether some character dies, and
/// (in a value's table) whether one passes an accepting state mid-way.
#[derive(Debug, Default)]
struct Scratch {
    frontier: Vec<u32>,
    next: Vec<u32>,
    /// Per (tag, state after a lead byte, sequence): its entry in `leads`.
    after_lead: FxHashMap<(usize, u32, usize), usize>,
    leads: Vec<AfterLead>,
    /// Per sequence, the (tag, state after its lead byte, entry) looked up last: most
    /// states step to the same state after a lead byte (any name that is no declared one),
    /// found without hashing.
    recent: Vec<(usize, u32, usize)>,
    /// The plain bytes of the shared value stepped in last (by its id): looked up once per
    /// search, not once per state.
    value_bytes: Option<(usize, Arc<PlainBytes>)>,
}

/// A kept [`Scratch`] is dropped past this many walks after a lead byte (each a few states),
/// so that an index's scratches stay small however many states its masks meet.
const SCRATCH_LEADS_MAX: usize = 1 << 16;

/// [`Scratch::after_lead`]'s entries: the live states after the whole character, whether
/// some character dies, whether one passes an accepting state of a value mid-way.
type AfterLead = (Vec<u32>, bool, bool);

/// The rest of a character after its lead byte, from `start` (the state after the lead) in
/// `table` over `columns` (one byte per column each continuation byte may be):
/// [`AfterLead`]. `frontier` and `next`: buffers.
fn walk_lead(
    table: &Table,
    tag: usize,
    start: u32,
    columns: &[Vec<u8>],
    frontier: &mut Vec<u32>,
    next: &mut Vec<u32>,
) -> AfterLead {
    let mut exits = false;
    frontier.clear();
    frontier.push(start);
    let mut dead = false;
    for column in columns {
        next.clear();
        for &s in frontier.iter() {
            if s == DEAD {
                dead = true;
                continue;
            }
            exits |= tag != OWN_TABLE && table.is_accepting(s);
            for &b in column {
                let t = table.next(s, b);
                if !next.contains(&t) {
                    next.push(t);
                }
            }
        }
        std::mem::swap(frontier, next);
    }
    let ends: Vec<u32> = frontier.iter().copied().filter(|&s| s != DEAD).collect();
    dead |= ends.len() < frontier.len();
    (ends, dead, exits)
}

/// The table [`TokenIndex::plain_step_in`] steps in: the machine's own (tag [`OWN_TABLE`]) or
/// a shared value's, whose states its calls read in place (tag: the value's id,
/// [`Table::value_of`]). [`TokenIndex::plain_next`]'s cache is keyed by tag and state, so
/// that every call reading a value shares its entries.
const OWN_TABLE: usize = 0;

/// [`TokenIndex::plain_next`]'s cache of one tier: by table tag ([`OWN_TABLE`] or a value's
/// id) and state in that table.
type PlainSteps = FxHashMap<(usize, u32), Arc<PlainNext>>;

/// One plain character from a state ([`TokenIndex::plain_next`]): the live states after it
/// (sorted, distinct; in the value's numbering for a value's entry), or `None` when
/// more than [`LENGTH_STATES_MAX`] follow; and whether some plain character dies.
#[derive(Debug)]
struct PlainNext {
    states: Option<Vec<u32>>,
    dies: bool,
}

impl PlainNext {
    /// The one state after a plain character, in the caller's numbering (`offset` added),
    /// when every plain character leads there and none dies.
    fn single(&self, offset: u32) -> Option<u32> {
        match self.states.as_deref() {
            Some(&[next]) if !self.dies => Some(next + offset),
            _ => None,
        }
    }
}

/// What [`TokenIndex::plain_length`] found from a state where each plain character leads
/// to one state (a string counting its characters), remembered so that the next states'
/// masks need not count again (a string with `maxLength: 120` counted up to 120 characters
/// at each of its first fills). Whatever the budget: the answer from a state `k` single
/// steps before is this one shifted by `k`, cut at the tier's longest plain token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PlainLength {
    /// Every text of this many plain characters stays live, every longer one dies.
    Exact(u32),
    /// The levels repeat without a death: no plain text ever dies.
    Never,
    /// After this many characters, some texts of one length die and others do not, or
    /// too many states follow (`plain_length` says `None` there).
    Mixed(u32),
}

impl PlainLength {
    /// What holds from a state `k` single steps before this one (`k` may be negative: a
    /// state after it); `None` where the answer is about characters before that state.
    fn moved(self, k: i64) -> Option<Self> {
        let at = |n: u32| u32::try_from(n as i64 + k).ok();
        match self {
            PlainLength::Exact(n) => at(n).map(PlainLength::Exact),
            PlainLength::Mixed(n) => at(n).map(PlainLength::Mixed),
            PlainLength::Never => Some(PlainLength::Never),
        }
    }

    /// The answer of [`TokenIndex::plain_length`] from a state `k` single steps before this
    /// one, within `longest` characters.
    fn shifted(self, k: usize, longest: usize) -> Option<usize> {
        match self {
            PlainLength::Exact(n) => Some((k + n as usize).min(longest)),
            PlainLength::Never => Some(longest),
            PlainLength::Mixed(n) if k + (n as usize) < longest => None,
            PlainLength::Mixed(_) => Some(longest),
        }
    }
}

/// [`TokenIndex`]'s clean chains of one tier: by machine state, a chain of single steps
/// through it and the state's place in that chain.
type CleanChains = FxHashMap<u32, (Arc<[u32]>, u32)>;

/// Sums `size` over per-tier maps (each read in turn).
fn per_tier<M>(maps: &[RwLock<M>], size: impl Fn(&M) -> usize) -> usize {
    maps.iter()
        .filter_map(|m| m.read().ok())
        .map(|m| size(&m))
        .sum()
}

/// A set of token ids (a bitset over the vocabulary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    words: Vec<u64>,
}

impl Mask {
    fn new(len: usize) -> Self {
        Self {
            words: vec![0; len.div_ceil(64)],
        }
    }

    fn insert(&mut self, id: u32) {
        self.words[id as usize / 64] |= 1 << (id % 64);
    }

    fn union_with(&mut self, other: &Mask) {
        for (w, o) in self.words.iter_mut().zip(&other.words) {
            *w |= o;
        }
    }

    /// Whether `id` is in the set.
    pub fn contains(&self, id: u32) -> bool {
        self.words
            .get(id as usize / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    /// How many ids are in the set.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The ids in the set, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros();
                w &= w - 1;
                Some(i as u32 * 64 + bit)
            })
        })
    }

    /// The `n`-th id of the set (ascending), if any.
    pub fn nth(&self, mut n: usize) -> Option<u32> {
        for (i, &w) in self.words.iter().enumerate() {
            let ones = w.count_ones() as usize;
            if n < ones {
                let mut w = w;
                for _ in 0..n {
                    w &= w - 1;
                }
                return Some(i as u32 * 64 + w.trailing_zeros());
            }
            n -= ones;
        }
        None
    }

    /// The 64-bit words, bit `id % 64` of word `id / 64` (the layout samplers apply to logits).
    pub fn words(&self) -> &[u64] {
        &self.words
    }
}

/// What a token does to a generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The generation goes on in this state.
    Next(u32),
    /// An EOS token in an accepting state: the generation is complete.
    End,
}

/// The vocabulary trie in pre-order, one [`Node`] per distinct token prefix: a walk reads
/// each node it visits from one cache line.
#[derive(Debug)]
struct Trie {
    nodes: Vec<Node>,
    /// The tokens of each node where several end (ids with the same bytes, or a tail trie's
    /// tokens with the same tail): (node, id), one run per node, in node order.
    more: Vec<(u32, u32)>,
    max_depth: usize,
    /// The first-level nodes (byte, index, index past its subtree), side by side: a walk
    /// steps every first byte from these few cache lines and reads a subtree's nodes only
    /// when its first byte is live (the first-level nodes themselves lie a subtree apart,
    /// one cache line each, cold after a compile).
    roots: Vec<(u8, u32, u32)>,
}

/// A trie node: the index just past its subtree, the token whose bytes end here
/// ([`NO_TOKEN`] for none), its byte, its depth (1-based) and whether several tokens end
/// here ([`MORE_TOKENS`]: then `token` is where their run starts in [`Trie::more`]).
#[derive(Debug, Clone, Copy)]
struct Node {
    end: u32,
    /// The token ending here, or with [`MORE_TOKENS`] the start of the node's run in
    /// [`Trie::more`] (a tail trie's node may end thousands of tokens, `"` after any plain
    /// prefix: found without a search).
    token: u32,
    byte: u8,
    flags: u8,
    depth: u16,
}

/// [`Node::token`] of a node no token ends at.
const NO_TOKEN: u32 = u32::MAX;

/// [`Node::flags`]: several tokens end at the node, listed in [`Trie::more`] from
/// [`Node::token`].
const MORE_TOKENS: u8 = 1;

/// [`Node::flags`] of the vocabulary's full trie: `TAIL_NOT_PLAIN << t` marks a node whose
/// subtree holds a token whose bytes after the first are not plain text of tier `t` (or
/// whose first byte is not ASCII). A walk that has the tokens of plain tails from a list
/// ([`Tier::plain_tails`]) skips the other subtrees.
const TAIL_NOT_PLAIN: u8 = 2;

impl Trie {
    /// No token (for a walk that only adds the specials and EOS).
    const EMPTY: Trie = Trie {
        nodes: Vec::new(),
        more: Vec::new(),
        max_depth: 0,
        roots: Vec::new(),
    };

    /// The trie of the ordinary tokens `keep` selects. Tokens longer than `u16::MAX` bytes
    /// (no real vocabulary has one) are left out: never allowed.
    fn new(vocab: &Vocabulary, keep: impl Fn(u32) -> bool) -> Self {
        Self::of_suffixes(vocab, |id| keep(id).then_some(0))
    }

    /// The trie of the ordinary tokens `from` selects, each by its bytes from the offset
    /// `from` gives (a token's tail past a prefix; non-empty tails only).
    fn of_suffixes(vocab: &Vocabulary, from: impl Fn(u32) -> Option<usize>) -> Self {
        Self::of_grouped_suffixes(vocab, |id| from(id).map(|at| (0, at))).0
    }

    /// [`Self::of_suffixes`] with the tails in groups: `from` gives a token's group (from 0)
    /// and the offset of its tail. Each group's tokens are whole subtrees of their own,
    /// `groups[g]` the range of nodes holding group `g` (empty for a group without tokens).
    fn of_grouped_suffixes(
        vocab: &Vocabulary,
        from: impl Fn(u32) -> Option<(usize, usize)>,
    ) -> (Self, Vec<std::ops::Range<usize>>) {
        let mut entries: Vec<(usize, &[u8], u32)> = (0..vocab.len() as u32)
            .filter_map(|id| {
                let bytes = vocab.token(id);
                if vocab.is_special(id) || bytes.is_empty() || bytes.len() > u16::MAX as usize {
                    return None;
                }
                let (group, at) = from(id)?;
                let tail = bytes.get(at..)?;
                (!tail.is_empty()).then_some((group, tail, id))
            })
            .collect();
        entries.sort_unstable();
        let mut trie = Self {
            nodes: Vec::new(),
            more: Vec::new(),
            max_depth: 0,
            roots: Vec::new(),
        };
        let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
        let mut path: Vec<u32> = Vec::new(); // node index per depth
        let mut prev: &[u8] = &[];
        for (group, bytes, id) in entries {
            let mut common = prev.iter().zip(bytes).take_while(|(a, b)| a == b).count();
            if groups.len() <= group {
                // A new group: nothing shared with the last one's subtrees.
                common = 0;
                let from = trie.nodes.len();
                groups.resize(group + 1, from..from);
            }
            while path.len() > common {
                let node = path.pop().unwrap_or(0);
                trie.nodes[node as usize].end = trie.nodes.len() as u32;
            }
            for (d, &b) in bytes.iter().enumerate().skip(common) {
                path.push(trie.nodes.len() as u32);
                trie.nodes.push(Node {
                    end: 0,
                    token: NO_TOKEN,
                    byte: b,
                    flags: 0,
                    depth: d as u16 + 1,
                });
            }
            trie.max_depth = trie.max_depth.max(bytes.len());
            if let Some(last) = groups.last_mut() {
                last.end = trie.nodes.len();
            }
            if let Some(&k) = path.last() {
                let node = &mut trie.nodes[k as usize];
                if node.token == NO_TOKEN {
                    node.token = id;
                } else {
                    // Tokens with the same bytes come one after another (sorted): the
                    // node's run in `more` is contiguous, its first token moved there.
                    if node.flags & MORE_TOKENS == 0 {
                        node.flags |= MORE_TOKENS;
                        trie.more.push((k, node.token));
                        node.token = trie.more.len() as u32 - 1;
                    }
                    trie.more.push((k, id));
                }
            }
            prev = bytes;
        }
        while let Some(node) = path.pop() {
            trie.nodes[node as usize].end = trie.nodes.len() as u32;
        }
        let mut k = 0;
        while let Some(node) = trie.nodes.get(k) {
            trie.roots.push((node.byte, k as u32, node.end));
            k = node.end as usize;
        }
        (trie, groups)
    }

    /// Sets `flag` on every node whose subtree (the node included) holds a token `has`
    /// selects.
    fn mark(&mut self, flag: u8, has: impl Fn(u32) -> bool) {
        for k in (0..self.nodes.len()).rev() {
            let node = self.nodes[k];
            let mut on = self.tokens_at(k).any(&has);
            // The children: the next node, then each one's end.
            let mut c = k + 1;
            while !on && c < node.end as usize {
                on = self.nodes[c].flags & flag != 0;
                c = self.nodes[c].end as usize;
            }
            if on {
                self.nodes[k].flags |= flag;
            }
        }
    }

    /// The tokens ending at node `k`.
    fn tokens_at(&self, k: usize) -> impl Iterator<Item = u32> + '_ {
        let node = self.nodes[k];
        let (single, run): (Option<u32>, &[(u32, u32)]) = if node.flags & MORE_TOKENS != 0 {
            (None, &self.more[node.token as usize..])
        } else {
            ((node.token != NO_TOKEN).then_some(node.token), &[])
        };
        single.into_iter().chain(
            run.iter()
                .take_while(move |&&(n, _)| n as usize == k)
                .map(|&(_, id)| id),
        )
    }

    /// Heap bytes.
    fn memory(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>() + self.more.len() * 8
    }
}

/// A vocabulary prepared for masks: its trie of ordinary tokens and its special tokens.
/// Built once per vocabulary (o200k_base: 0.4-0.6 s and 38 MiB of tries and token sets,
/// five tiers, the tiers built on threads of their own, on a 2-core machine) and shared by
/// every [`TokenIndex`] over it.
#[derive(Debug)]
pub struct VocabIndex {
    vocab: Vocabulary,
    trie: Trie,
    /// Plain-text tiers, widest first: the ordinary tokens made only of the tier's ASCII
    /// bytes and non-ASCII characters (valid UTF-8), and a trie of the other ordinary tokens.
    tiers: Vec<Tier>,
    /// Special tokens that are not EOS.
    specials: Vec<u32>,
}

/// A plain-text tier: which ASCII bytes count as plain, the tokens made only of them and of
/// non-ASCII characters, and a trie of the other ordinary tokens.
#[derive(Debug)]
struct Tier {
    ascii: Vec<u8>,
    /// Whether non-ASCII characters are plain too.
    utf8: bool,
    plain: Mask,
    /// The other ordinary tokens; `None` for a narrow tier, where they are nearly all of
    /// them (the full trie is walked instead).
    rest: Option<Trie>,
    /// The tokens of [`Tier::rest`] by what follows their longest plain prefix (which
    /// starts with a character that is not plain): from a state that every plain
    /// character leads back to (a string body), a token is allowed when that tail is.
    /// Many tokens share a tail (`",`, `"}`), so this trie is walked instead of `rest`.
    /// `None` for a narrow tier ([`Tier::tails_by_prefix`] serves it).
    tails_past_plain: Option<Trie>,
    /// The same tails grouped by how many plain characters come before them: group `p`
    /// (nodes `prefix_groups[p]`) holds the tails of the tokens of [`Tier::rest`] whose
    /// longest plain prefix has `p` characters. From a state where every plain character
    /// leads to one next state (a string body counting its characters for a `maxLength`),
    /// group `p` is walked from the state `p` characters on.
    tails_by_prefix: Trie,
    prefix_groups: Vec<std::ops::Range<usize>>,
    /// `up_to[n]`: the plain tokens of at most `n` characters, for `n` up to
    /// [`SHORT_CHARS`].
    up_to: Vec<Mask>,
    /// The plain tokens of more than [`SHORT_CHARS`] characters: (characters, id).
    long: Vec<(usize, u32)>,
    /// The most characters a plain token has.
    max_chars: usize,
    /// The ordinary tokens whose first byte is ASCII and whose other bytes are plain text
    /// (the first byte alone too), as (characters after the first byte, id), grouped by
    /// first byte and by characters within a group: those of byte `b` are
    /// `plain_tails[tails_at[b]..tails_at[b + 1]]`. From a state where byte `b` leads to a
    /// state that takes `n` plain characters, those with at most `n` are allowed.
    plain_tails: Vec<(u32, u32)>,
    tails_at: Vec<u32>,
    /// Which of [`PROBES`] the tier's bytes hold (bit `i` for `PROBES[i]`).
    probes: u16,
    /// The tokens that end inside a character, taken with the plain ones where plain text
    /// never dies; `None` for a tier without [`Tier::rest`] or without non-ASCII text, and
    /// from [`CUT_TIERS`] on.
    cut: Option<CutTokens>,
}

/// The ordinary tokens of a tier with non-ASCII plain text that are plain characters and
/// then the first bytes of one more character (a valid UTF-8 sequence cut short: o200k_base
/// has about 1,200, such as `" \xe6\x97"`), which [`Tier::rest`] holds. Every such start of a
/// character is the start of a plain one too (U+2028 and U+2029 share their first bytes
/// with plain characters), so where every text of `chars` more plain characters stays
/// live, each of these tokens is live: it is a prefix of such a text. Their walks were over
/// a third of the walk of the tier's other tokens in a string body or an open object's
/// names ([`CUT_TIERS`]), and they are taken as a set there instead.
#[derive(Debug)]
struct CutTokens {
    /// The tokens.
    ids: Mask,
    /// The most characters one of them starts: its plain characters and the one cut short.
    chars: usize,
    /// [`Tier::rest`] without them.
    rest: Trie,
    /// [`CutTokens::rest`] without the tokens whose first character that is not plain is a
    /// control character ([`STOPS`]): walked where those die after any plain text
    /// ([`TokenIndex::stops_die`]), as in every JSON string. o200k_base has about 3,000 such
    /// tokens (`".\n"`, `" {\n\n"`), whose plain prefixes were most of what was left of
    /// the walk.
    quiet: Trie,
}

/// The control characters, which no JSON string takes unescaped: the tokens of
/// [`CutTokens::quiet`]'s tier whose first character that is not plain is one of these are
/// dead where every state plain text reaches kills them.
const STOPS: std::ops::Range<u8> = 0..0x20;

/// The letters and digits [`TokenIndex::letters_and_digits_split`] tries: where some go on
/// and others die, only a tier holding none of the dead ones may hold ([`Tier::probes`]).
const PROBES: &[u8] = b"09afgzAFGZ";

/// Every one of [`PROBES`] (bit `i` for `PROBES[i]`).
const ALL_PROBES: u16 = (1 << PROBES.len()) - 1;

/// Whether a tier holding `probes` of [`PROBES`] is tried where `split` of them go on
/// (`None`: all or none): where some die, only a tier holding none of the dead ones (it
/// could not hold otherwise); elsewhere only the tiers holding them all (a narrower one,
/// tried where the wider ones failed, would walk nearly every token from its `rest`: the
/// lower-case tier is for strings where upper-case letters die).
fn tier_tried(probes: u16, split: Option<u16>) -> bool {
    match split {
        Some(live) => probes & !live == 0,
        None => probes == ALL_PROBES,
    }
}

/// The tiers from this one on ([`tier_bytes`]) are narrow: most tokens are not plain for
/// them, so they keep no [`Tier::rest`] and no [`Tier::tails_past_plain`] (nearly the whole
/// vocabulary twice more: 10 MiB and 170 ms for o200k_base's lower-case tier).
const NARROW_TIERS_FROM: usize = 4;

/// The tiers before this one ([`tier_bytes`]) keep their tokens cut short inside a
/// character apart ([`Tier::cut`]): the widest, whose other tokens are few (about 6,000 of
/// o200k_base's), so that its cut tokens were over a third of a walk (the names of
/// `vs-nesting.json`'s open object: 36 -> 28 us a mask; the Store corpus's mask p99: 48-55
/// -> 43-45 us). For the next tier as well, the masks measured the same and its second trie
/// of other tokens cost 1 MiB.
const CUT_TIERS: usize = 1;

/// Plain tokens of up to this many characters have a mask per length
/// ([`Tier::up_to`]); longer ones are listed.
const SHORT_CHARS: usize = 32;

/// The ASCII bytes of each tier, and whether its plain text takes non-ASCII characters:
/// printable ASCII but for JSON's `"` and `\` (JSON string bodies), then letters, digits
/// and space (free text, and strings that must avoid a delimiter), both with non-ASCII
/// characters; then RFC 3986's unreserved characters, sub-delims and `/` (a URI's host,
/// path, query and fragment, where a walk of the next tier's tails past letters and digits
/// met `.com`, `/feed` and `-api` in nearly every token); then ASCII letters and digits
/// alone (`email`, `hostname`, a URI's scheme and patterns of ASCII classes, where neither
/// spaces nor non-ASCII characters are taken); then lower-case ASCII letters and digits
/// (identifiers, host labels, MIME types and package names, `^[a-z0-9_.-]+$`, where
/// upper-case letters die: without it every token was walked, up to 1 ms a mask). A tier
/// holds only where each of its characters keeps the text live (checked per state), so its
/// bytes decide speed, never a mask.
fn tier_bytes() -> [(Vec<u8>, bool); 5] {
    let wide = (b' '..=b'~')
        .filter(|b| !matches!(b, b'"' | b'\\'))
        .collect();
    let alnum: Vec<u8> = (b'a'..=b'z')
        .chain(b'A'..=b'Z')
        .chain(b'0'..=b'9')
        .collect();
    let mut narrow = alnum.clone();
    narrow.push(b' ');
    let mut uri = alnum.clone();
    uri.extend_from_slice(b"-._~!$&'()*+,;=/");
    let lower: Vec<u8> = (b'a'..=b'z').chain(b'0'..=b'9').collect();
    [
        (wide, true),
        (narrow, true),
        (uri, false),
        (alnum, false),
        (lower, false),
    ]
}

/// U+2028 and U+2029: not plain text, since ECMA-262's `.` does not match them (a
/// `pattern` with `.*` would otherwise make every token be walked; their tokens are walked).
const LINE_SEPARATORS: [char; 2] = ['\u{2028}', '\u{2029}'];

/// Whether ordinary token `id` starts with an ASCII byte and its other bytes are plain text
/// for a tier with these ASCII bytes, at most `max_chars` characters of it (the tier's
/// longest plain token: "any length" is decided up to that length, so a longer tail, as
/// cl100k_base's `.translatesAutoresizingMaskIntoConstraints` past a letters-and-digits
/// tier of 36, is walked) ([`Tier::plain_tails`]; `utf8`: whether it takes non-ASCII
/// characters).
fn plain_tail(vocab: &Vocabulary, id: u32, ascii: &[u8], utf8: bool, max_chars: usize) -> bool {
    let bytes = vocab.token(id);
    !vocab.is_special(id)
        && bytes.first().is_some_and(u8::is_ascii)
        && bytes.len() <= u16::MAX as usize
        && is_plain(&bytes[1..], ascii, utf8)
        && chars(&bytes[1..]) <= max_chars
}

/// The characters of UTF-8 `bytes` (the bytes that are not continuation bytes).
fn chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b & 0xc0 != 0x80).count()
}

/// The length in bytes of the longest prefix of `bytes` made of plain characters for a
/// tier with these ASCII bytes (whole characters; a byte that starts no valid character
/// ends it).
fn plain_prefix(bytes: &[u8], ascii: &[u8], utf8: bool) -> usize {
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        let len = match b {
            0x00..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => break,
        };
        match bytes.get(at..at + len) {
            Some(c) if is_plain(c, ascii, utf8) => at += len,
            _ => break,
        }
    }
    at
}

/// Whether `bytes` is plain text for a tier with these ASCII bytes (`utf8`: and
/// non-ASCII characters).
fn is_plain(bytes: &[u8], ascii: &[u8], utf8: bool) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|s| {
        s.chars().all(|c| {
            if c.is_ascii() {
                ascii.contains(&(c as u8))
            } else {
                utf8 && !c.is_control() && !LINE_SEPARATORS.contains(&c)
            }
        })
    })
}

impl Tier {
    /// The tier of the ASCII bytes `ascii` (and non-ASCII characters when `utf8`) over
    /// `vocab`.
    fn build(vocab: &Vocabulary, ascii: Vec<u8>, utf8: bool, narrow: bool, cut: bool) -> Self {
        let mut plain = Mask::new(vocab.len());
        let mut up_to = vec![Mask::new(vocab.len()); SHORT_CHARS + 1];
        let mut long = Vec::new();
        let mut max_chars = 0;
        for id in 0..vocab.len() as u32 {
            let bytes = vocab.token(id);
            // Ids without bytes (holes in a vocabulary) are never allowed.
            if !vocab.is_special(id) && !bytes.is_empty() && is_plain(bytes, &ascii, utf8) {
                plain.insert(id);
                let chars = chars(bytes);
                max_chars = max_chars.max(chars);
                match up_to.get_mut(chars) {
                    Some(m) => m.insert(id),
                    None => long.push((chars, id)),
                }
            }
        }
        for n in 1..up_to.len() {
            let (shorter, this) = up_to.split_at_mut(n);
            this[0].union_with(&shorter[n - 1]);
        }
        let rest = (!narrow).then(|| Trie::new(vocab, |id| !plain.contains(id)));
        let tails_past_plain = (!narrow).then(|| {
            Trie::of_suffixes(vocab, |id| {
                (!plain.contains(id)).then(|| plain_prefix(vocab.token(id), &ascii, utf8))
            })
        });
        let (tails_by_prefix, prefix_groups) = Trie::of_grouped_suffixes(vocab, |id| {
            (!plain.contains(id)).then(|| {
                let bytes = vocab.token(id);
                let at = plain_prefix(bytes, &ascii, utf8);
                let chars = chars(&bytes[..at]);
                (chars, at)
            })
        });
        let mut tails: Vec<(u8, u32, u32)> = (0..vocab.len() as u32)
            .filter(|&id| plain_tail(vocab, id, &ascii, utf8, max_chars))
            .map(|id| {
                let bytes = vocab.token(id);
                let chars = chars(&bytes[1..]);
                (bytes[0], chars as u32, id)
            })
            .collect();
        tails.sort_unstable();
        let mut tails_at = vec![0u32; 257];
        for &(b, _, _) in &tails {
            tails_at[b as usize + 1] += 1;
        }
        for b in 0..256 {
            tails_at[b + 1] += tails_at[b];
        }
        let probes = PROBES
            .iter()
            .enumerate()
            .filter(|(_, b)| ascii.contains(b))
            .fold(0, |m, (i, _)| m | 1 << i);
        let cut = (cut && utf8 && !narrow)
            .then(|| CutTokens::of(vocab, &plain, &ascii, max_chars))
            .flatten();
        Tier {
            ascii,
            utf8,
            plain,
            rest,
            tails_past_plain,
            tails_by_prefix,
            prefix_groups,
            up_to,
            long,
            max_chars,
            plain_tails: tails.into_iter().map(|(_, n, id)| (n, id)).collect(),
            tails_at,
            probes,
            cut,
        }
    }
}

impl CutTokens {
    /// The tokens of `vocab` outside `plain` that are plain characters of a tier with
    /// these ASCII bytes and non-ASCII text, then a valid UTF-8 sequence cut short, and
    /// start at most `max_chars` characters (the tier's longest plain token, where
    /// [`TokenIndex::plain_length`] stops counting); `None` when there are none.
    fn of(vocab: &Vocabulary, plain: &Mask, ascii: &[u8], max_chars: usize) -> Option<Self> {
        let mut ids = Mask::new(vocab.len());
        let mut chars_max = 0;
        for id in 0..vocab.len() as u32 {
            let bytes = vocab.token(id);
            if vocab.is_special(id) || plain.contains(id) {
                continue;
            }
            let at = plain_prefix(bytes, ascii, true);
            let chars = chars(&bytes[..at]) + 1;
            if cut_short(&bytes[at..]) && chars <= max_chars {
                ids.insert(id);
                chars_max = chars_max.max(chars);
            }
        }
        let stopped = |id: u32| {
            let bytes = vocab.token(id);
            bytes
                .get(plain_prefix(bytes, ascii, true))
                .is_some_and(|b| STOPS.contains(b))
        };
        (chars_max > 0).then(|| Self {
            rest: Trie::new(vocab, |id| !plain.contains(id) && !ids.contains(id)),
            quiet: Trie::new(vocab, |id| {
                !plain.contains(id) && !ids.contains(id) && !stopped(id)
            }),
            ids,
            chars: chars_max,
        })
    }
}

/// Whether every control character ([`STOPS`]) dies from `state` of `table` (a byte per
/// column: the control characters share one or a few).
fn kills_stops(table: &Table, state: u32) -> bool {
    let mut seen = [false; 256];
    STOPS.into_iter().all(|b| {
        let c = table.class_of(b);
        std::mem::replace(&mut seen[c], true) || table.next(state, b) == DEAD
    })
}

/// Whether `bytes` is the first bytes of one UTF-8 character and not all of them (a lead
/// byte and fewer continuation bytes than it needs, each in its valid range).
fn cut_short(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && matches!(std::str::from_utf8(bytes), Err(e) if e.valid_up_to() == 0 && e.error_len().is_none())
}

impl VocabIndex {
    /// Prepares `vocab`: the full trie and each plain-text tier built side by side (one
    /// thread each; the tiers are independent).
    pub fn new(vocab: Vocabulary) -> Self {
        let (trie, tiers) = std::thread::scope(|scope| {
            let tiers: Vec<_> = tier_bytes()
                .into_iter()
                .enumerate()
                .map(|(t, (ascii, utf8))| {
                    let vocab = &vocab;
                    let narrow = t >= NARROW_TIERS_FROM;
                    let cut = t < CUT_TIERS;
                    scope.spawn(move || Tier::build(vocab, ascii, utf8, narrow, cut))
                })
                .collect();
            let trie = Trie::new(&vocab, |_| true);
            let tiers: Vec<Tier> = tiers
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect();
            (trie, tiers)
        });
        let mut trie = trie;
        for (t, tier) in tiers.iter().enumerate() {
            trie.mark(TAIL_NOT_PLAIN << t, |id| {
                !plain_tail(&vocab, id, &tier.ascii, tier.utf8, tier.max_chars)
            });
        }
        let specials = (0..vocab.len() as u32)
            .filter(|&id| vocab.is_special(id) && !vocab.eos().contains(&id))
            .collect();
        Self {
            vocab,
            trie,
            tiers,
            specials,
        }
    }

    /// The vocabulary.
    pub fn vocab(&self) -> &Vocabulary {
        &self.vocab
    }

    /// Heap bytes of the tries and the plain-token sets.
    pub fn trie_memory(&self) -> usize {
        self.trie.memory()
            + self
                .tiers
                .iter()
                .map(|t| {
                    t.rest.as_ref().map_or(0, Trie::memory)
                        + t.tails_past_plain.as_ref().map_or(0, Trie::memory)
                        + t.tails_by_prefix.memory()
                        + (t.up_to.len() + 1) * t.plain.words.len() * 8
                        + t.long.len() * 16
                        + t.cut.as_ref().map_or(0, |c| {
                            c.rest.memory() + c.quiet.memory() + c.ids.words.len() * 8
                        })
                })
                .sum::<usize>()
    }
}

/// Masks over a vocabulary for one compiled constraint. See the module documentation.
#[derive(Debug)]
pub struct TokenIndex {
    constraint: Arc<Constraint>,
    vocab: Arc<VocabIndex>,
    /// Per stored state of the machine's table.
    masks: Vec<OnceLock<Arc<Mask>>>,
    /// States computed from shared values ([`Table::is_shared`]): cached by id.
    computed: RwLock<FxHashMap<u32, Arc<Mask>>>,
    /// The bytes plain characters start with ([`TokenIndex::plain_bytes`]).
    plain_bytes: OnceLock<PlainBytes>,
    /// The same per shared value table (by its id, [`Table::value_of`]), whose columns are
    /// fewer.
    value_plain_bytes: RwLock<FxHashMap<usize, Arc<PlainBytes>>>,
    /// Per plain-text tier: states known to take its plain text
    /// ([`TokenIndex::takes_plain_text`]), by table tag ([`OWN_TABLE`] or a shared value's
    /// id) and state in that table.
    plain_states: Vec<RwLock<FxHashSet<(usize, u32)>>>,
    /// Per plain-text tier: states from which every state that its plain text reaches
    /// kills each control character ([`TokenIndex::stops_die`]).
    stops_dead: Vec<RwLock<FxHashSet<u32>>>,
    /// Per plain-text tier: one plain character from a state ([`TokenIndex::plain_next`]),
    /// remembered so that the masks of the next states of a long string cost one more
    /// character each, not its whole length again.
    plain_next: Vec<RwLock<PlainSteps>>,
    /// Per plain-text tier: what [`TokenIndex::plain_length`] found from the states of a
    /// chain of single steps (by machine state).
    plain_lengths: Vec<RwLock<FxHashMap<u32, PlainLength>>>,
    /// Per plain-text tier: chains of single steps that a count followed to the tier's
    /// longest plain token with no death and no repeat (a string with more characters left
    /// than that), by machine state: the chain and the state's place in it. A later count
    /// from a state of the chain goes on from its end instead of stepping it again.
    clean_chains: Vec<RwLock<CleanChains>>,
    /// Walks of large root subtrees, kept per state after the root's byte.
    root_walks: RootWalks,
    /// [`Scratch`]es kept between masks, one per thread computing at once.
    scratches: std::sync::Mutex<Vec<Scratch>>,
}

/// One byte per column of a table for the plain characters of each tier: the ASCII bytes
/// per tier, the UTF-8 sequences (lead byte, first continuation bytes, how many continuation
/// bytes follow) and the other continuation bytes.
#[derive(Debug)]
struct PlainBytes {
    ascii: Vec<Vec<u8>>,
    /// The columns of `ascii`'s bytes, in the same order: a stored row is read by column.
    ascii_columns: Vec<Vec<u8>>,
    /// Lead byte, then the bytes of each continuation position (one per column, each in
    /// the exact byte range of its position).
    sequences: Vec<(u8, Vec<Vec<u8>>)>,
}

impl TokenIndex {
    /// An index of `constraint` over a prepared vocabulary (cheap: one empty cache slot per
    /// machine state).
    pub fn new(constraint: Arc<Constraint>, vocab: Arc<VocabIndex>) -> Self {
        let states = constraint.machine.table.stored_states();
        let tiers = vocab.tiers.len();
        Self {
            constraint,
            vocab,
            masks: (0..states).map(|_| OnceLock::new()).collect(),
            computed: RwLock::default(),
            plain_bytes: OnceLock::new(),
            value_plain_bytes: RwLock::default(),
            plain_states: (0..tiers).map(|_| RwLock::default()).collect(),
            stops_dead: (0..tiers).map(|_| RwLock::default()).collect(),
            plain_next: (0..tiers).map(|_| RwLock::default()).collect(),
            plain_lengths: (0..tiers).map(|_| RwLock::default()).collect(),
            clean_chains: (0..tiers).map(|_| RwLock::default()).collect(),
            root_walks: RootWalks::default(),
            scratches: std::sync::Mutex::default(),
        }
    }

    /// Heap bytes of the masks computed so far (and of what they remember about plain text:
    /// one plain character from a state, the states known to take plain text, and what
    /// counts of plain characters found along chains; and the kept walks of root subtrees
    /// and after lead bytes). Entries of the maps are counted, not their spare capacity.
    pub fn mask_memory(&self) -> usize {
        let steps = per_tier(&self.plain_next, |m| {
            m.values()
                .map(|p| 48 + p.states.as_ref().map_or(0, |s| s.len() * 4))
                .sum()
        });
        let computed: usize = self
            .computed
            .read()
            .map_or(0, |c| c.values().map(|m| m.words.len() * 8).sum());
        // The states known to take plain text: a tag and a state per entry.
        let known = per_tier(&self.plain_states, |m| {
            m.len() * std::mem::size_of::<(usize, u32)>()
        }) + per_tier(&self.stops_dead, |m| m.len() * 4);
        // What counting plain characters found: a state and an answer per entry.
        let lengths = per_tier(&self.plain_lengths, |m| m.len() * 16);
        // Clean chains: an entry per state, and each chain once, at the state it starts
        // from (a chain whose first state kept an earlier entry is left out).
        let chains = per_tier(&self.clean_chains, |m| {
            m.values()
                .map(|(c, at)| 24 + if *at == 0 { c.len() * 4 } else { 0 })
                .sum()
        });
        // The kept root walks ([`KeptWalks::words`]).
        let walks = self.root_walks.kept.read().map_or(0, |k| k.words() * 4);
        // The kept scratches: each walk after a lead byte and its entry.
        let scratches = self.scratches.lock().map_or(0, |kept| {
            kept.iter()
                .map(|s| {
                    s.leads.iter().map(|l| 32 + l.0.len() * 4).sum::<usize>()
                        + s.after_lead.len() * 32
                })
                .sum()
        });
        self.masks
            .iter()
            .filter_map(OnceLock::get)
            .map(|m| m.words.len() * 8)
            .sum::<usize>()
            + computed
            + steps
            + known
            + lengths
            + chains
            + walks
            + scratches
    }

    /// The machine.
    pub fn machine(&self) -> &Machine {
        &self.constraint.machine
    }

    fn table(&self) -> &Table {
        &self.constraint.machine.table
    }

    /// The vocabulary.
    pub fn vocab(&self) -> &Vocabulary {
        &self.vocab.vocab
    }

    /// The state before any token.
    pub fn start(&self) -> u32 {
        START
    }

    /// Whether the output so far is a whole valid response (EOS is allowed).
    pub fn is_accepting(&self, state: u32) -> bool {
        self.table().is_accepting(state)
    }

    /// The tokens allowed in `state`, computed on first use and cached. An invalid or dead
    /// state has an empty mask.
    pub fn allowed(&self, state: u32) -> Arc<Mask> {
        match self.masks.get(state as usize) {
            Some(cell) if state != DEAD => {
                cell.get_or_init(|| Arc::new(self.compute(state))).clone()
            }
            None if (state as usize) < self.table().len() => {
                if let Some(m) = self
                    .computed
                    .read()
                    .ok()
                    .and_then(|c| c.get(&state).cloned())
                {
                    return m;
                }
                let mask = Arc::new(self.compute(state));
                match self.computed.write() {
                    Ok(mut c) => c.entry(state).or_insert(mask).clone(),
                    Err(_) => mask,
                }
            }
            _ => Arc::new(Mask::new(self.vocab().len())),
        }
    }

    /// Whether masks for `state` are already cached.
    pub fn is_cached(&self, state: u32) -> bool {
        match self.masks.get(state as usize) {
            Some(c) => c.get().is_some(),
            None => self.computed.read().is_ok_and(|c| c.contains_key(&state)),
        }
    }

    /// The bytes plain characters start with, one per column of the machine's table (bytes
    /// of one column act alike in every state, computed ones too: a table's columns refine
    /// those of the values it reads in place).
    fn plain_bytes(&self) -> &PlainBytes {
        self.plain_bytes
            .get_or_init(|| self.plain_bytes_of(self.table()))
    }

    /// [`Self::plain_bytes`] of shared value `v` (`table`), built once per index.
    fn value_plain_bytes(&self, v: usize, table: &Table) -> Arc<PlainBytes> {
        if let Some(b) = self
            .value_plain_bytes
            .read()
            .ok()
            .and_then(|m| m.get(&v).cloned())
        {
            return b;
        }
        let b = Arc::new(self.plain_bytes_of(table));
        if let Ok(mut m) = self.value_plain_bytes.write() {
            m.insert(v, b.clone());
        }
        b
    }

    /// One byte per column of `table` for the plain characters of each tier.
    fn plain_bytes_of(&self, table: &Table) -> PlainBytes {
        let ascii = self
            .vocab
            .tiers
            .iter()
            .map(|tier| {
                let mut seen = vec![false; table.classes()];
                let mut reps = Vec::new();
                for &b in &tier.ascii {
                    let c = table.class_of(b);
                    if !seen[c] {
                        seen[c] = true;
                        reps.push(b);
                    }
                }
                reps
            })
            .collect::<Vec<Vec<u8>>>();
        // Columns fit a byte: a table has at most 256.
        let ascii_columns = ascii
            .iter()
            .map(|reps| reps.iter().map(|&b| table.class_of(b) as u8).collect())
            .collect();
        // UTF-8 sequences: lead byte ranges, the range of their first continuation byte,
        // and how many continuation bytes follow. `e2` alone: U+2028 and U+2029
        // (`e2 80 a8`, `e2 80 a9`) are not plain.
        const SEQUENCES: [(u8, u8, u8, u8, usize); 8] = [
            (0xc2, 0xdf, 0x80, 0xbf, 1),
            (0xe0, 0xe0, 0xa0, 0xbf, 2),
            (0xe1, 0xe1, 0x80, 0xbf, 2),
            (0xe3, 0xec, 0x80, 0xbf, 2),
            (0xed, 0xed, 0x80, 0x9f, 2),
            (0xee, 0xef, 0x80, 0xbf, 2),
            (0xf0, 0xf0, 0x90, 0xbf, 3),
            (0xf1, 0xf4, 0x80, 0xbf, 3),
        ];
        let any = table.columns_in(0x80, 0xbf);
        let mut sequences = Vec::new();
        for (lead_lo, lead_hi, first_lo, first_hi, continuations) in SEQUENCES {
            for lead in table.columns_in(lead_lo, lead_hi) {
                let first_hi = if lead == 0xf4 { 0x8f } else { first_hi };
                let mut columns = vec![table.columns_in(first_lo, first_hi)];
                columns.resize(continuations, any.clone());
                sequences.push((lead, columns));
            }
        }
        // `e2`: after `80`, all but `a8` and `a9`; after `81..=bf`, any.
        sequences.push((0xe2, vec![table.columns_in(0x81, 0xbf), any.clone()]));
        let mut separators_out = table.columns_in(0x80, 0xa7);
        separators_out.extend(table.columns_in(0xaa, 0xbf));
        sequences.push((0xe2, vec![vec![0x80], separators_out]));
        PlainBytes {
            ascii,
            ascii_columns,
            sequences,
        }
    }

    /// Whether every plain token of tier `t` is allowed from `state` without walking it: the
    /// states reached from `state` by plain characters (at most [`PLAIN_CLOSURE_MAX`] of
    /// them) are all live, and every plain character keeps them live. Holds in free text and
    /// JSON string bodies, right after an opening quote too, in string bodies still matching
    /// a `pattern` (whose states plain characters move between) and in the names of an open
    /// object's properties (a declared name's prefix, then any name). States found to hold
    /// it are remembered: a later search stops at them.
    fn takes_plain_text(&self, t: usize, state: u32, scratch: &mut Scratch) -> bool {
        // A plain character that dies right away (remembered per state, as
        // `Self::plain_length` found it): no closure to search.
        if self.plain_next(t, state, scratch).0.dies {
            return false;
        }
        // A state read in place from a shared value is searched in the value's own rows,
        // so that every place reading the value (an object's keys after `{"` and after
        // `,"`) shares what was found; the machine's numbering where a plain character
        // leaves the value.
        let table = self.table();
        if let Some((tag, value, r, _)) = table.value_of(state) {
            if let Some(takes) = self.plain_closure(t, value, tag, r, scratch) {
                return takes;
            }
        }
        self.plain_closure(t, table, OWN_TABLE, state, scratch)
            .unwrap_or(false)
    }

    /// [`Self::takes_plain_text`] from `from` in `table` (tag: [`OWN_TABLE`] or a shared
    /// value's id): the states plain characters reach from it, each step in `table`'s rows,
    /// with those known to hold remembered per tag and state. In a value's table, `None`
    /// where a plain text reaches an accepting state (or passes one mid-character): past
    /// it the call's return state takes the characters the value does not, so a death
    /// there is not the machine's, and the machine's numbering decides. (Where no plain
    /// character dies in the value, none leaves it either: a value's own step comes first.)
    fn plain_closure(
        &self,
        t: usize,
        table: &Table,
        tag: usize,
        from: u32,
        scratch: &mut Scratch,
    ) -> Option<bool> {
        let in_value = tag != OWN_TABLE;
        let known = self.plain_states[t].read().ok()?;
        if known.contains(&(tag, from)) {
            return Some(true);
        }
        let mut seen: FxHashSet<u32> = FxHashSet::default();
        seen.insert(from);
        let mut queue = vec![from];
        let mut next = Vec::new();
        while let Some(s) = queue.pop() {
            if in_value && table.is_accepting(s) {
                return None;
            }
            next.clear();
            let dies = if in_value {
                self.plain_step_in(table, tag, t, s, &mut next, scratch)?
            } else {
                self.plain_step_located(t, s, &mut next, scratch)
            };
            if dies {
                return Some(false);
            }
            // Most characters lead to a few states (every letter of a name that is no
            // declared one): each looked up once.
            next.dedup();
            next.sort_unstable();
            next.dedup();
            for &n in &next {
                if !known.contains(&(tag, n)) && seen.insert(n) {
                    if seen.len() > PLAIN_CLOSURE_MAX {
                        return Some(false);
                    }
                    queue.push(n);
                }
            }
        }
        drop(known);
        if let Ok(mut known) = self.plain_states[t].write() {
            known.extend(seen.into_iter().map(|s| (tag, s)));
        }
        Some(true)
    }

    /// Whether every state that plain text of tier `t` reaches from `state` (itself
    /// included) kills each control character ([`STOPS`]), where that text never dies (a
    /// JSON string's body, an open object's names): then a token whose first character
    /// that is not plain is a control character is dead there. Found by following
    /// [`Self::plain_next`] (remembered per state, by the count of [`Self::plain_length`]
    /// too), the states found remembered; `false` where more than [`LENGTH_STATES_MAX`]
    /// states follow one of them or more than [`PLAIN_CLOSURE_MAX`] are met.
    fn stops_die(&self, t: usize, state: u32, scratch: &mut Scratch) -> bool {
        let table = self.table();
        if self.stops_dead[t]
            .read()
            .is_ok_and(|stopped| stopped.contains(&state))
        {
            return true;
        }
        let mut seen: FxHashSet<u32> = FxHashSet::default();
        seen.insert(state);
        let mut queue = vec![state];
        while let Some(s) = queue.pop() {
            let stops_live = match table.value_of(s) {
                Some((_, value, r, _)) if !value.is_accepting(r) => !kills_stops(value, r),
                _ => !kills_stops(table, s),
            };
            if stops_live {
                return false;
            }
            let (step, offset) = self.plain_next(t, s, scratch);
            let Some(states) = step.states.as_ref() else {
                return false;
            };
            for &r in states {
                if seen.insert(r + offset) {
                    if seen.len() > PLAIN_CLOSURE_MAX {
                        return false;
                    }
                    queue.push(r + offset);
                }
            }
        }
        if let Ok(mut stopped) = self.stops_dead[t].write() {
            stopped.extend(seen);
        }
        true
    }

    /// [`Self::plain_step`], but a state read in place from a shared value (past the
    /// table's stored states) steps in the value's own rows when no plain character leaves
    /// the value from there (its call found once, not once per byte), the states found
    /// shifted back into the machine's numbering.
    fn plain_step_located(
        &self,
        t: usize,
        from: u32,
        out: &mut Vec<u32>,
        scratch: &mut Scratch,
    ) -> bool {
        let table = self.table();
        if from as usize >= table.stored_states() {
            if let Some((tag, value, r, offset)) = table.value_of(from) {
                if !value.is_accepting(r) {
                    let at = out.len();
                    if let Some(dies) = self.plain_step_in(value, tag, t, r, out, scratch) {
                        for s in &mut out[at..] {
                            *s += offset;
                        }
                        return dies;
                    }
                    out.truncate(at);
                }
            }
        }
        self.plain_step(t, from, out, scratch)
    }

    /// The states the plain characters of tier `t` lead to from `from` that are live, added
    /// to `out` (unsorted, possibly repeated), and whether some plain character dies (in
    /// any of its bytes), stepping in the machine's table. `scratch`: buffers kept between
    /// calls.
    fn plain_step(&self, t: usize, from: u32, out: &mut Vec<u32>, scratch: &mut Scratch) -> bool {
        self.plain_step_in(self.table(), OWN_TABLE, t, from, out, scratch)
            .unwrap_or(true)
    }

    /// [`Self::plain_step`] in `table` (tag: [`OWN_TABLE`] or a shared value's index). In a
    /// value's table, `None` where a character passes an accepting state mid-way (its
    /// call's return state would go on: the answer is not the value's alone).
    fn plain_step_in(
        &self,
        table: &Table,
        tag: usize,
        t: usize,
        from: u32,
        out: &mut Vec<u32>,
        scratch: &mut Scratch,
    ) -> Option<bool> {
        let Scratch {
            frontier,
            next,
            after_lead,
            leads,
            recent,
            value_bytes,
        } = scratch;
        let bytes = if tag == OWN_TABLE {
            self.plain_bytes()
        } else {
            let kept = match value_bytes.take() {
                Some((v, b)) if v == tag => b,
                _ => self.value_plain_bytes(tag, table),
            };
            &value_bytes.insert((tag, kept)).1
        };
        // A computed state of the machine (past its stored rows) located once, not once
        // per byte (each `next` would search the calls, and the calls of the values
        // inside them: a number ending inside a value took 80 us over the four tiers).
        let located = (tag == OWN_TABLE && from as usize >= table.stored_states())
            .then(|| table.locate(from));
        let step = |b: u8| match located {
            Some(l) => table.next_located(l, b).state(),
            None => table.next(from, b),
        };
        let mut dies = false;
        let mut last = DEAD;
        let mut visit = |s: u32| match s {
            DEAD => dies = true,
            // Runs of bytes to one state (a name's other letters) pushed once.
            s if s == last => {}
            s => {
                out.push(s);
                last = s;
            }
        };
        // A stored row is read by column (the closure of a names' trie steps thousands of
        // states over every plain column); a computed state has none.
        match table.row(from) {
            Some(row) => {
                for &c in &bytes.ascii_columns[t] {
                    visit(row[c as usize]);
                }
            }
            None => {
                for &b in &bytes.ascii[t] {
                    visit(step(b));
                }
            }
        }
        if !self.vocab.tiers[t].utf8 {
            return Some(dies);
        }
        recent.resize(bytes.sequences.len(), (usize::MAX, DEAD, 0));
        for (i, (lead, columns)) in bytes.sequences.iter().enumerate() {
            let start = step(*lead);
            if start == DEAD {
                dies = true;
                continue;
            }

            // Many states lead to the same state after the lead byte (every name that is no
            // declared one, say): the rest of the character is walked once per such state.
            let entry = match recent[i] {
                (r_tag, r_start, entry) if r_tag == tag && r_start == start => entry,
                _ => {
                    let entry = *after_lead.entry((tag, start, i)).or_insert_with(|| {
                        leads.push(walk_lead(table, tag, start, columns, frontier, next));
                        leads.len() - 1
                    });
                    recent[i] = (tag, start, entry);
                    entry
                }
            };
            let (ends, dead, exits) = &leads[entry];
            if *exits {
                return None;
            }
            dies |= *dead;
            out.extend_from_slice(ends);
        }
        Some(dies)
    }

    /// One plain character of tier `t` from `state` ([`PlainNext`], states in the machine's
    /// numbering), remembered per state; a state of a shared value that is not accepting
    /// (so no character leaves the value) is remembered per value state, for every call
    /// that reads the value.
    fn plain_next(&self, t: usize, state: u32, scratch: &mut Scratch) -> (Arc<PlainNext>, u32) {
        let table = self.table();
        let (sub, tag, from, offset) = match table.value_of(state) {
            Some((v, value, r, offset)) if !value.is_accepting(r) => (value, v, r, offset),
            _ => (table, OWN_TABLE, state, 0),
        };
        let key = (tag, from);
        let cached = self.plain_next[t]
            .read()
            .ok()
            .and_then(|m| m.get(&key).cloned());
        if let Some(p) = cached {
            return (p, offset);
        }
        let mut out = Vec::new();
        let (dies, key) = match self.plain_step_in(sub, tag, t, from, &mut out, scratch) {
            Some(dies) => (dies, key),
            None => {
                out.clear();
                (
                    self.plain_step(t, state, &mut out, scratch),
                    (OWN_TABLE, state),
                )
            }
        };
        let offset = if key.0 == OWN_TABLE { 0 } else { offset };
        out.sort_unstable();
        out.dedup();
        let found = Arc::new(PlainNext {
            states: (out.len() <= LENGTH_STATES_MAX).then_some(out),
            dies,
        });
        if let Ok(mut m) = self.plain_next[t].write() {
            m.insert(key, found.clone());
        }
        (found, offset)
    }

    /// How many plain characters of tier `t` a text from `state` may hold: `Some(n)` when
    /// every plain text of at most `n` characters stays live and every one of `n + 1` dies
    /// (a string with a `maxLength`; `n = 0` where no plain character may come), with `n`
    /// the tier's longest plain token when no plain text of up to that length dies (the
    /// states after `k` characters repeat those after fewer: free text, a string body).
    /// `None` when some texts of one length die and others do not, or when more than
    /// [`LENGTH_STATES_MAX`] states follow one length (then [`Self::takes_plain_text`]
    /// decides). `chain` gets `state`, then the states after 1, 2, ... characters as long
    /// as each length leads to one state, up to where an earlier count's answer was read
    /// back ([`PlainLength`]): a prefix of the chain, which [`Self::plain_chain`] extends.
    fn plain_length(
        &self,
        t: usize,
        state: u32,
        chain: &mut Vec<u32>,
        scratch: &mut Scratch,
    ) -> Option<usize> {
        let longest = self.vocab.tiers[t].max_chars;
        chain.clear();
        chain.push(state);
        if let Some(found) = self.kept_length(t, state) {
            return found.shifted(0, longest);
        }
        let (answer, found) = self.count_plain(t, state, longest, chain, scratch);
        // The states of the chain (each after one more single step) get the answer
        // shifted: a later mask inside the string reads it instead of counting again.
        match found {
            Some(found) => {
                if let Ok(mut m) = self.plain_lengths[t].write() {
                    for (k, &s) in chain.iter().enumerate() {
                        let Some(entry) = found.moved(-(k as i64)) else {
                            break;
                        };
                        m.entry(s).or_insert(entry);
                    }
                }
            }
            // No death and no repeat within the longest token, each level one state: the
            // chain is kept, so that the next state's count steps only past its end.
            None if chain.len() == longest + 1 => {
                let kept: Arc<[u32]> = chain.as_slice().into();
                if let Ok(mut m) = self.clean_chains[t].write() {
                    for (k, &s) in chain[..longest].iter().enumerate() {
                        m.entry(s).or_insert_with(|| (kept.clone(), k as u32));
                    }
                }
            }
            None => {}
        }
        answer
    }

    /// What an earlier count found from `state` in tier `t` ([`Self::plain_length`]).
    fn kept_length(&self, t: usize, state: u32) -> Option<PlainLength> {
        let kept = self.plain_lengths[t].read().ok()?;
        kept.get(&state).copied()
    }

    /// A clean chain through `state` in tier `t`, and its place there.
    fn kept_chain(&self, t: usize, state: u32) -> Option<(Arc<[u32]>, u32)> {
        let kept = self.clean_chains[t].read().ok()?;
        kept.get(&state).cloned()
    }

    /// [`Self::plain_length`]'s count from `state` (`chain` begun with it), with what it
    /// found as a [`PlainLength`] when that holds whatever the budget (`None` when the
    /// count stopped at `longest` characters with no death and no repeat). Where a level
    /// is one state, what an earlier count found from it is read ([`Self::kept_length`]),
    /// and a clean chain through it is taken as it is ([`Self::kept_chain`], where the
    /// chain so far is whole: its states are the next levels, each one state, none dying;
    /// a repeat among them goes unseen, which changes no answer, as the levels then cycle
    /// without a death up to `longest`).
    fn count_plain(
        &self,
        t: usize,
        state: u32,
        longest: usize,
        chain: &mut Vec<u32>,
        scratch: &mut Scratch,
    ) -> (Option<usize>, Option<PlainLength>) {
        let mut level = vec![state];
        // The levels met (each once; a level met again repeats what follows it). One
        // state levels (a string counting its characters: most of them) apart, without a
        // vector each.
        let mut seen_one: FxHashSet<u32> = FxHashSet::default();
        let mut seen: FxHashSet<Vec<u32>> = FxHashSet::default();
        seen_one.insert(state);
        let mut next = Vec::new();
        let mut n = 0;
        while n < longest {
            // A clean chain through the level's one state: its next states are the next
            // levels (as many as the count has room for).
            if let (&[one], true) = (level.as_slice(), chain.len() == n + 1) {
                if let Some((kept, at)) = self.kept_chain(t, one) {
                    let after = &kept[at as usize + 1..];
                    let take = after.len().min(longest - n);
                    if take > 0 {
                        chain.extend_from_slice(&after[..take]);
                        n += take;
                        level.clear();
                        level.push(after[take - 1]);
                        continue;
                    }
                }
            }
            next.clear();
            let mut dies = false;
            for &s in &level {
                let (step, offset) = self.plain_next(t, s, scratch);
                let Some(states) = step.states.as_ref() else {
                    return (None, Some(PlainLength::Mixed(n as u32)));
                };
                next.extend(states.iter().map(|&r| r + offset));
                dies |= step.dies;
            }
            match (dies, next.is_empty()) {
                (true, true) => return (Some(n), Some(PlainLength::Exact(n as u32))),
                (true, false) => return (None, Some(PlainLength::Mixed(n as u32))),
                _ => {}
            }
            next.sort_unstable();
            next.dedup();
            if next.len() > LENGTH_STATES_MAX {
                return (None, Some(PlainLength::Mixed(n as u32)));
            }
            let repeat = match next.as_slice() {
                &[one] => !seen_one.insert(one),
                _ => !seen.insert(next.clone()),
            };
            if repeat {
                return (Some(longest), Some(PlainLength::Never));
            }
            if let &[one] = next.as_slice() {
                if chain.len() == n + 1 {
                    chain.push(one);
                }
                // Counted from `one` before: its answer, `n + 1` characters on.
                if let Some(found) = self.kept_length(t, one) {
                    return (found.shifted(n + 1, longest), found.moved(n as i64 + 1));
                }
            }
            std::mem::swap(&mut level, &mut next);
            n += 1;
        }
        (Some(longest), None)
    }

    /// The mask of `state`, with a [`Scratch`] kept between masks (one per thread computing
    /// at once): what a character does after a lead byte is walked once per index, not once
    /// per search (a first mask met thirteen lead bytes in each of four or five searches).
    fn compute(&self, state: u32) -> Mask {
        let mut scratch = self
            .scratches
            .lock()
            .ok()
            .and_then(|mut kept| kept.pop())
            .unwrap_or_default();
        let mask = self.compute_with(state, &mut scratch);
        if scratch.leads.len() > SCRATCH_LEADS_MAX {
            scratch = Scratch::default();
        }
        if let Ok(mut kept) = self.scratches.lock() {
            kept.push(scratch);
        }
        mask
    }

    fn compute_with(&self, state: u32, scratch: &mut Scratch) -> Mask {
        let tiers = &self.vocab.tiers;
        // Where some letters or digits go on and others die (after a number's digit, in a
        // hex escape, in a string of lower-case letters), only a tier holding none of the
        // dead ones may hold: the others are not tried (each would search and fail).
        let split = self.letters_and_digits_split(state);
        // A bounded number of plain characters (a string with a `maxLength`, or none at
        // all), or any number: the plain tokens that short whole, the other tokens walked.
        let mut chain = Vec::new();
        for (t, tier) in tiers.iter().enumerate() {
            if !tier_tried(tier.probes, split) {
                continue;
            }
            if let Some(n) = self.plain_length(t, state, &mut chain, scratch) {
                let mut mask = if n >= tier.max_chars {
                    tier.plain.clone()
                } else {
                    tier.up_to[n.min(SHORT_CHARS)].clone()
                };
                if n < tier.max_chars && n > SHORT_CHARS {
                    for &(chars, id) in &tier.long {
                        if chars <= n {
                            mask.insert(id);
                        }
                    }
                }
                if let Some(tails) = &tier.tails_past_plain {
                    if n >= tier.max_chars && self.plain_returns(t, state, scratch) {
                        return self.walk(state, mask, tails);
                    }
                }
                if n >= tier.max_chars
                    && self.plain_chain(t, &mut chain, tier.prefix_groups.len(), scratch)
                {
                    return self.walk_by_prefix(&chain, mask, tier);
                }
                return self.walk_rest(t, state, mask, n, scratch);
            }
            // The widest tier that holds, so the fewest tokens are walked.
            if self.takes_plain_text(t, state, scratch) {
                return self.walk_rest(t, state, tier.plain.clone(), usize::MAX, scratch);
            }
        }
        self.walk_after_first(state, scratch)
    }

    /// Where some ASCII letters or digits go on from `state` and others die (after a
    /// number's digit, in a hex escape, in a string of lower-case letters), which of
    /// [`PROBES`] go on (bit `i` for `PROBES[i]`); `None` where all or none do. A tier whose
    /// plain characters hold a dead one cannot hold there (its text would be both live and
    /// dead at the first character), and is not tried ([`tier_tried`]: four steps over
    /// every plain character, each leaving a value and locating its return: 80 us after a
    /// number read in place).
    fn letters_and_digits_split(&self, state: u32) -> Option<u16> {
        let table = self.table();
        let from = table.locate(state);
        let live = PROBES
            .iter()
            .enumerate()
            .filter(|&(_, &b)| !table.next_located(from, b).is_dead())
            .fold(0, |live, (i, _)| live | 1 << i);
        (live != 0 && live != ALL_PROBES).then_some(live)
    }

    /// The tokens of `tier` that are not plain, as a trie: its [`Tier::rest`], or the full
    /// trie for a narrow tier (its plain tokens walked again, already in the mask).
    fn rest_of<'t>(&'t self, tier: &'t Tier) -> &'t Trie {
        tier.rest.as_ref().unwrap_or(&self.vocab.trie)
    }

    /// [`Self::walk`] of the tokens outside tier `t`'s plain ones, `mask` holding those
    /// allowed, from a state where every text of `n` plain characters stays live: the
    /// tokens cut short inside a character ([`CutTokens`]) are taken as a set where `n`
    /// covers each of them, and walked otherwise; there, the tokens stopped by a control
    /// character are not walked where those die ([`Self::stops_die`]).
    fn walk_rest(
        &self,
        t: usize,
        state: u32,
        mut mask: Mask,
        n: usize,
        scratch: &mut Scratch,
    ) -> Mask {
        let tier = &self.vocab.tiers[t];
        match &tier.cut {
            Some(cut) if n >= cut.chars => {
                mask.union_with(&cut.ids);
                if self.stops_die(t, state, scratch) {
                    self.walk(state, mask, &cut.quiet)
                } else {
                    self.walk(state, mask, &cut.rest)
                }
            }
            _ => self.walk(state, mask, self.rest_of(tier)),
        }
    }

    /// Whether every plain character of tier `t` leads from `state` back to `state` (a
    /// string body with no length left to count): then a token's plain prefix leaves it
    /// there, and only its tail past that prefix decides ([`Tier::tails_past_plain`]).
    fn plain_returns(&self, t: usize, state: u32, scratch: &mut Scratch) -> bool {
        let (step, offset) = self.plain_next(t, state, scratch);
        step.single(offset) == Some(state)
    }

    /// The mask of `state` by walking every ordinary token, except where the first byte
    /// leads to a state that takes plain text ([`Self::plain_after`]: the last character
    /// of an escape in a string, `"` opening one): the tokens whose other bytes are plain
    /// come from [`Tier::plain_tails`] (those that fit the length left, in a string with a
    /// `maxLength`), and only the subtrees holding other tokens are walked. A state inside
    /// `\u00` had 10,000 tokens walked one by one (89 us; now 14 us).
    fn walk_after_first(&self, state: u32, scratch: &mut Scratch) -> Mask {
        let table = self.table();
        let trie = &self.vocab.trie;
        let tiers = &self.vocab.tiers;
        let mut mask = Mask::new(self.vocab().len());
        let mut states = vec![table.locate(DEAD); trie.max_depth + 1];
        states[0] = table.locate(state);
        // Per state after a first byte (many bytes lead to one): its plain text, if any.
        let mut decided: Vec<(u32, Option<(usize, usize)>)> = Vec::new();
        let mut returns = Returns::default();
        let mut walker = RootWalker::new(&self.root_walks, trie);
        for (r, &(byte, k, end)) in trie.roots.iter().enumerate() {
            let (k, end) = (k as usize, end as usize);
            let first = table.next_located_with(states[0], byte, &mut returns);
            if first.is_dead() {
                continue;
            }
            let plain = if byte.is_ascii() {
                let at = first.state();
                match decided.iter().find(|d| d.0 == at) {
                    Some(&(_, plain)) => plain,
                    None => {
                        // A search of up to `PLAIN_CLOSURE_MAX` states: the kept walks are
                        // not held meanwhile (a thread keeping its walks would wait, and
                        // every thread reading them behind it).
                        walker.release();
                        let plain = self.plain_after(first, scratch);
                        walker.reacquire();
                        decided.push((at, plain));
                        plain
                    }
                }
            } else {
                None
            };
            let prune = match plain {
                Some((t, n)) => {
                    let tier = &tiers[t];
                    let b = byte as usize;
                    let (lo, hi) = (tier.tails_at[b] as usize, tier.tails_at[b + 1] as usize);
                    for &(chars, id) in &tier.plain_tails[lo..hi] {
                        if chars as usize > n {
                            break;
                        }
                        mask.insert(id);
                    }
                    TAIL_NOT_PLAIN << t
                }
                None => 0,
            };
            // The root's subtree, skipping the nodes `prune` does not mark.
            states[1] = first;
            walker.walk(
                table,
                &mut states,
                &mut mask,
                trie,
                (r, k, end),
                prune,
                &mut returns,
            );
        }
        walker.keep();
        self.walk(state, mask, &Trie::EMPTY)
    }

    /// The tier and the number of its plain characters that every text from `first` may
    /// hold ([`Self::plain_length`], or any number by [`Self::takes_plain_text`]), for
    /// [`Self::walk_after_first`]; `None` when neither holds (or no plain character may
    /// come). A quick test first: such a state reads the tier's first and last ASCII bytes.
    fn plain_after(&self, first: Located<'_>, scratch: &mut Scratch) -> Option<(usize, usize)> {
        let table = self.table();
        let state = first.state();
        self.vocab.tiers.iter().enumerate().find_map(|(t, tier)| {
            let (lo, hi) = (tier.ascii[0], tier.ascii[tier.ascii.len() - 1]);
            if table.next_located(first, lo).is_dead() || table.next_located(first, hi).is_dead() {
                return None;
            }
            // A tier holding every probe fails by itself where some die (its first plain
            // step dies); a narrower one is only tried where it may hold.
            if tier.probes != ALL_PROBES {
                let split = self.letters_and_digits_split(state);
                if !tier_tried(tier.probes, split) {
                    return None;
                }
            }
            match self.plain_length(t, state, &mut Vec::new(), scratch) {
                Some(0) => None,
                Some(n) => Some((t, n)),
                None => self
                    .takes_plain_text(t, state, scratch)
                    .then_some((t, tier.max_chars)),
            }
        })
    }

    /// The mask of `state` as [`Self::allowed`] computes it on first use, computed again
    /// and not cached (what was remembered about plain text on the way is kept): for
    /// measurements of a state's mask with warm caches. An invalid or dead state has an
    /// empty mask.
    pub fn allowed_uncached(&self, state: u32) -> Mask {
        if state == DEAD || state as usize >= self.table().len() {
            return Mask::new(self.vocab().len());
        }
        self.compute(state)
    }

    /// The mask of `state` by walking every ordinary token (no plain-text shortcut, no
    /// cache): what [`Self::allowed`] must equal. For tests and measurements.
    pub fn allowed_by_full_walk(&self, state: u32) -> Mask {
        if state == DEAD || state as usize >= self.table().len() {
            return Mask::new(self.vocab().len());
        }
        let table = self.table();
        let trie = &self.vocab.trie;
        let mut mask = Mask::new(self.vocab().len());
        let mut states = vec![table.locate(DEAD); trie.max_depth + 1];
        states[0] = table.locate(state);
        let mut returns = Returns::default();
        for &(byte, k, end) in &trie.roots {
            states[1] = table.next_located_with(states[0], byte, &mut returns);
            if states[1].is_dead() {
                continue;
            }
            take_node::<false>(&mut mask, trie, k as usize, &mut Vec::new());
            let range = k as usize + 1..end as usize;
            walk_range::<false>(
                table,
                &mut states,
                &mut mask,
                trie,
                range,
                0,
                &mut returns,
                &mut Vec::new(),
            );
        }
        self.with_specials(state, mask)
    }

    /// Whether `len` plain characters of tier `t` lead through one state each from
    /// `chain[0]` (a string body that counts its characters), none dying; `chain` (begun by
    /// [`Self::plain_length`]) gets those states, `chain[p]` the one after `p` characters.
    fn plain_chain(
        &self,
        t: usize,
        chain: &mut Vec<u32>,
        len: usize,
        scratch: &mut Scratch,
    ) -> bool {
        while chain.len() < len {
            let (step, offset) = self.plain_next(t, chain[chain.len() - 1], scratch);
            match step.single(offset) {
                Some(next) => chain.push(next),
                None => return false,
            }
        }
        true
    }

    /// `mask` plus the tokens of [`Tier::rest`] allowed from `chain[0]` (see
    /// [`Self::plain_chain`]), each token's tail past its `p` plain characters walked from
    /// `chain[p]`, plus specials and EOS.
    fn walk_by_prefix(&self, chain: &[u32], mut mask: Mask, tier: &Tier) -> Mask {
        let table = self.table();
        let trie = &tier.tails_by_prefix;
        let mut states = vec![table.locate(DEAD); trie.max_depth + 1];
        let mut returns = Returns::default();
        for (range, &from) in tier.prefix_groups.iter().zip(chain) {
            if range.is_empty() {
                continue;
            }
            states[0] = table.locate(from);
            walk_range::<false>(
                table,
                &mut states,
                &mut mask,
                trie,
                range.clone(),
                0,
                &mut returns,
                &mut Vec::new(),
            );
        }
        self.with_specials(chain[0], mask)
    }

    /// `mask` plus the tokens of `trie` allowed from `state`, plus specials and EOS.
    fn walk(&self, state: u32, mut mask: Mask, trie: &Trie) -> Mask {
        self.walk_roots(state, &mut mask, trie);
        self.with_specials(state, mask)
    }

    /// The tokens of `trie` allowed from `state`, into `mask`: the trie in pre-order, a
    /// subtree skipped where its first byte dies, a large root's subtree walked once per
    /// state after its byte ([`RootWalks`]).
    fn walk_roots(&self, state: u32, mask: &mut Mask, trie: &Trie) {
        let table = self.table();
        let mut states = vec![table.locate(DEAD); trie.max_depth + 1];
        states[0] = table.locate(state);
        let mut returns = Returns::default();
        let mut walker = RootWalker::new(&self.root_walks, trie);
        for (r, &(byte, k, end)) in trie.roots.iter().enumerate() {
            let first = table.next_located_with(states[0], byte, &mut returns);
            if first.is_dead() {
                continue;
            }
            states[1] = first;
            walker.walk(
                table,
                &mut states,
                mask,
                trie,
                (r, k as usize, end as usize),
                0,
                &mut returns,
            );
        }
        walker.keep();
    }

    /// `mask` plus the special tokens and EOS allowed from `state`.
    fn with_specials(&self, state: u32, mut mask: Mask) -> Mask {
        for &id in &self.vocab.specials {
            if self
                .machine()
                .special_allowed(state, self.vocab().token(id))
            {
                mask.insert(id);
            }
        }
        for &id in self.vocab().eos() {
            if self.ends(state, id) {
                mask.insert(id);
            }
        }
        mask
    }

    /// Whether EOS token `id` may end the generation in `state`: the state accepts, or the
    /// token's text is a delimiter that completes the response from here (gpt-oss's
    /// `<|call|>` and `<|return|>` both close a region and stop).
    fn ends(&self, state: u32, id: u32) -> bool {
        if self.is_accepting(state) {
            return true;
        }
        let text = self.vocab().token(id);
        !text.is_empty()
            && self.machine().special_allowed(state, text)
            && self.is_accepting(self.table().walk(state, text))
    }

    /// The state after `token` from `state`: [`Step::End`] for an EOS that may end the
    /// generation here, `None` for a token the mask does not allow.
    pub fn advance(&self, state: u32, token: u32) -> Option<Step> {
        let vocab = self.vocab();
        if state == DEAD || token as usize >= vocab.len() {
            return None;
        }
        if vocab.eos().contains(&token) {
            return self.ends(state, token).then_some(Step::End);
        }
        let bytes = vocab.token(token);
        if bytes.is_empty() {
            return None;
        }
        if vocab.is_special(token) && !self.machine().special_allowed(state, bytes) {
            return None;
        }
        match self.table().walk(state, bytes) {
            DEAD => None,
            next => Some(Step::Next(next)),
        }
    }
}

/// The tokens ending at node `k` of `trie`, into `mask` (and with `RECORD` into `out`).
#[inline(always)]
fn take_node<const RECORD: bool>(mask: &mut Mask, trie: &Trie, k: usize, out: &mut Vec<u32>) {
    let node = &trie.nodes[k];
    if node.flags & MORE_TOKENS != 0 {
        for &(n, id) in &trie.more[node.token as usize..] {
            if n as usize != k {
                break;
            }
            mask.insert(id);
            if RECORD {
                out.push(id);
            }
        }
    } else if node.token != NO_TOKEN {
        mask.insert(node.token);
        if RECORD {
            out.push(node.token);
        }
    }
}

/// [`TokenIndex::root_walks`]: per trie, prune bit, state after a root's byte and root,
/// the tokens of the root's subtree allowed from there. A root's byte leads many states to
/// one: in an object's keys, every byte that starts no declared name leads to the state of
/// any other name, so the masks of the states along a name differ in a few roots and
/// share the walks of the others (an environment map of 340 names took 37 us per state
/// walking every root again).
#[derive(Debug)]
struct RootWalks {
    kept: RwLock<KeptWalks>,
    /// The most words kept ([`ROOT_WALK_WORDS`]; less in tests).
    limit: usize,
}

impl Default for RootWalks {
    fn default() -> Self {
        Self {
            kept: RwLock::default(),
            limit: ROOT_WALK_WORDS,
        }
    }
}

/// The kept walks: per (trie, prune bit, state after the root's byte), a row of runs of
/// `ids` by root (one lookup per state, most roots leading to a few states).
#[derive(Debug, Default)]
struct KeptWalks {
    /// Per row key, its index in `runs` ([`SEEN`]: met once, no row yet).
    rows: FxHashMap<RowKey, usize>,
    /// Per row, per root: the run's start in `ids` and length ([`NO_RUN`]: none).
    runs: Vec<Box<[(u32, u32)]>>,
    ids: Vec<u32>,
    /// The roots of every row in `runs`, together.
    slots: usize,
}

impl KeptWalks {
    /// The 4-byte words held ([`ROOT_WALK_WORDS`] bounds them): the ids' capacity, two per
    /// row slot, six per row key with its index.
    fn words(&self) -> usize {
        self.ids.capacity() + self.slots * 2 + self.rows.len() * 6
    }
}

/// [`KeptWalks`]' row key: the trie (its address: the tries live as long as the
/// [`VocabIndex`]), the prune bit, the state after the root's byte.
type RowKey = (usize, u8, u32);

/// A root not walked from a row's state yet.
const NO_RUN: (u32, u32) = (u32::MAX, 0);

/// [`KeptWalks::rows`]' entry for a state met once: its walks are kept from the next
/// time on.
const SEEN: usize = usize::MAX;

/// Roots whose subtree has fewer nodes are walked every time (a lookup costs about as
/// much).
const ROOT_WALK_FROM: usize = 24;

/// At most this many 4-byte words (4 MiB) are kept in an index's [`RootWalks`] (token ids,
/// rows of runs by root, the states met: [`KeptWalks::words`]); past it, roots are walked
/// every time. A row costs two words per root of its trie (up to 256) however few of its
/// roots are walked: a closed object of 2,000 names kept 21 MiB of rows against 3.4 MiB of
/// ids before rows counted.
const ROOT_WALK_WORDS: usize = 1 << 20;

/// One mask's walks of a trie's root subtrees through [`RootWalks`]: the kept walks read
/// under one lock, the new ones kept when the mask is done ([`RootWalker::keep`]).
struct RootWalker<'w> {
    walks: &'w RootWalks,
    kept: Option<std::sync::RwLockReadGuard<'w, KeptWalks>>,
    /// The row looked up last: its state and prune bit, and its index in
    /// [`KeptWalks::runs`] if any.
    last: Option<(u32, u8, Option<usize>)>,
    /// The states (and prune bits) met for the first time.
    seen: Vec<(u32, u8)>,
    /// The walks this mask made: state, prune bit, root, and the end of its run in
    /// `fresh_ids`.
    fresh: Vec<(u32, u8, u32, usize)>,
    fresh_ids: Vec<u32>,
    /// Words that may still be kept (an estimate of ids alone: [`RootWalker::keep`] counts
    /// rows too).
    room: usize,
    trie: usize,
    roots: usize,
}

impl<'w> RootWalker<'w> {
    /// A walker of `trie`'s roots.
    fn new(walks: &'w RootWalks, trie: &Trie) -> Self {
        let kept = walks.kept.read().ok();
        let used = kept.as_ref().map_or(walks.limit, |k| k.words());
        Self {
            walks,
            kept,
            last: None,
            seen: Vec::new(),
            fresh: Vec::new(),
            fresh_ids: Vec::new(),
            room: walks.limit.saturating_sub(used),
            trie: trie as *const Trie as usize,
            roots: trie.roots.len(),
        }
    }

    /// The tokens of root `r`'s subtree (its node `k`, its end `end`) allowed from
    /// `states[1]` (the state after the root's byte), into `mask`; with `prune` (a
    /// [`Node::flags`] bit, or 0), as [`walk_range`].
    #[allow(clippy::too_many_arguments)]
    fn walk<'a>(
        &mut self,
        table: &'a Table,
        states: &mut [Located<'a>],
        mask: &mut Mask,
        trie: &Trie,
        (r, k, end): (usize, usize, usize),
        prune: u8,
        returns: &mut Returns<'a>,
    ) {
        if end - k < ROOT_WALK_FROM || self.room == 0 {
            let none = &mut Vec::new();
            take_node::<false>(mask, trie, k, none);
            walk_range::<false>(table, states, mask, trie, k + 1..end, prune, returns, none);
            return;
        }
        let state = states[1].state();
        let row = match self.last {
            Some((s, p, row)) if s == state && p == prune => row,
            _ => {
                let row = self
                    .kept
                    .as_ref()
                    .and_then(|k| k.rows.get(&(self.trie, prune, state)).copied());
                self.last = Some((state, prune, row));
                row
            }
        };
        match (row, self.kept.as_ref()) {
            // A state not met before: walked alone, and met from now on (most states
            // after a root's byte are met once, the first mask's above all: recording
            // those walks cost more than they saved).
            (None, _) | (_, None) => {
                if self.seen.last() != Some(&(state, prune)) {
                    self.seen.push((state, prune));
                }
                let none = &mut Vec::new();
                take_node::<false>(mask, trie, k, none);
                walk_range::<false>(table, states, mask, trie, k + 1..end, prune, returns, none);
                return;
            }
            (Some(SEEN), _) => {}
            (Some(row), Some(kept)) => {
                let (from, len) = kept.runs[row][r];
                if (from, len) != NO_RUN {
                    for &id in &kept.ids[from as usize..(from + len) as usize] {
                        mask.insert(id);
                    }
                    return;
                }
            }
        }
        let at = self.fresh_ids.len();
        let out = &mut self.fresh_ids;
        take_node::<true>(mask, trie, k, out);
        walk_range::<true>(table, states, mask, trie, k + 1..end, prune, returns, out);
        let n = out.len() - at;
        if n <= self.room {
            self.room -= n;
            self.fresh.push((state, prune, r as u32, out.len()));
        } else {
            out.truncate(at);
        }
    }

    /// Lets go of the kept walks until [`Self::reacquire`] (rows keep their indexes: runs
    /// are only added).
    fn release(&mut self) {
        self.kept = None;
    }

    /// Reads the kept walks again after [`Self::release`].
    fn reacquire(&mut self) {
        self.kept = self.walks.kept.read().ok();
    }

    /// Keeps the walks this mask made.
    fn keep(mut self) {
        drop(self.kept.take());
        if self.fresh.is_empty() && self.seen.is_empty() {
            return;
        }
        if let Ok(mut kept) = self.walks.kept.write() {
            for (state, prune) in self.seen {
                if kept.words() + 6 <= self.walks.limit {
                    kept.rows.entry((self.trie, prune, state)).or_insert(SEEN);
                }
            }
            let mut from = 0;
            for (state, prune, r, to) in self.fresh {
                let run = &self.fresh_ids[from..to];
                from = to;
                let key = (self.trie, prune, state);
                let new_row = kept.rows.get(&key).is_none_or(|&row| row == SEEN);
                let need = run.len() + if new_row { 2 * self.roots + 6 } else { 0 };
                if kept.words() + need > self.walks.limit {
                    continue;
                }
                let KeptWalks {
                    rows,
                    runs,
                    ids,
                    slots,
                } = &mut *kept;
                let row = rows.entry(key).or_insert(SEEN);
                if *row == SEEN {
                    runs.push(vec![NO_RUN; self.roots].into_boxed_slice());
                    *slots += self.roots;
                    *row = runs.len() - 1;
                }
                let row = *row;
                let slot = &mut runs[row][r as usize];
                if *slot == NO_RUN {
                    *slot = (ids.len() as u32, run.len() as u32);
                    ids.extend_from_slice(run);
                }
            }
        }
    }
}

/// The tokens of the trie's nodes `range` (whole subtrees) allowed from the states their
/// parents reached (`states`, by depth), into `mask` (and with `RECORD` into `out`). With
/// `prune` (a [`Node::flags`] bit), a subtree whose root lacks it is skipped unwalked. Kept
/// out of its callers so that the loop's few values stay in registers.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn walk_range<'a, const RECORD: bool>(
    table: &'a Table,
    states: &mut [Located<'a>],
    mask: &mut Mask,
    trie: &Trie,
    range: std::ops::Range<usize>,
    prune: u8,
    returns: &mut Returns<'a>,
    out: &mut Vec<u32>,
) {
    let nodes = &trie.nodes[..range.end.min(trie.nodes.len())];
    let mut k = range.start;
    while let Some(node) = nodes.get(k) {
        if prune != 0 && node.flags & prune == 0 {
            k = node.end as usize;
            continue;
        }
        let d = node.depth as usize;
        let s = table.next_located_with(states[d - 1], node.byte, returns);
        if s.is_dead() {
            k = node.end as usize;
            continue;
        }
        states[d] = s;
        take_node::<RECORD>(mask, trie, k, out);
        k += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token's plain prefix ends before its first character that is not plain: `"`,
    /// `\`, a control character, U+2028, a byte that starts no whole character (a token
    /// may end inside one), and for the letters-and-digits tier a space or any non-ASCII
    /// character.
    #[test]
    fn plain_prefixes_end_at_the_first_character_not_plain() {
        let [(wide, _), (narrow, _), _, (alnum, utf8), (lower, lower_utf8)] = tier_bytes();
        assert!(!utf8 && !lower_utf8);
        for (bytes, in_wide, in_narrow, in_alnum, in_lower) in [
            (&b"abc"[..], 3, 3, 3, 3),
            (b"ab\"c", 2, 2, 2, 2),
            (b"a-b\\n", 3, 1, 1, 1),
            ("caf\u{e9}\"".as_bytes(), 5, 5, 3, 3),
            ("x\u{2028}y".as_bytes(), 1, 1, 1, 1),
            (b"ok\xe2\x80", 2, 2, 2, 2),
            (b"\x80abc", 0, 0, 0, 0),
            (b"\ttab", 0, 0, 0, 0),
            ("\u{1f600} ok".as_bytes(), 7, 7, 0, 0),
            (b"ab cd", 5, 5, 2, 2),
            (b"web9Kit", 7, 7, 7, 4),
        ] {
            assert_eq!(plain_prefix(bytes, &wide, true), in_wide, "{bytes:?}");
            assert_eq!(plain_prefix(bytes, &narrow, true), in_narrow, "{bytes:?}");
            assert_eq!(plain_prefix(bytes, &alnum, false), in_alnum, "{bytes:?}");
            assert_eq!(plain_prefix(bytes, &lower, false), in_lower, "{bytes:?}");
        }
    }

    /// A token cut short inside a character: a lead byte and fewer continuation bytes
    /// than it needs, each in its range (`e0` then `a0`-`bf`, `ed` then `80`-`9f`, `f4` then
    /// `80`-`8f`); not a whole character, a lone continuation byte, an invalid lead or an
    /// invalid second byte. The first bytes of U+2028 count: they start plain characters
    /// too. In o200k_base's wide tier, the set holds such tokens after plain text and no
    /// token with a `"` or a lone continuation byte, and every other token outside the
    /// plain ones stays in its trie; the quiet trie leaves out those whose first
    /// character that is not plain is a control character (over 2,000).
    #[test]
    fn cut_tokens_are_plain_text_then_a_character_cut_short() {
        for (bytes, cut) in [
            (&b"\xe6"[..], true),
            (b"\xe6\x97", true),
            (b"\xe2\x80", true),
            (b"\xf0\x9f\x98", true),
            (b"\xe0\xa0", true),
            (b"\xed\x9f", true),
            (b"\xf4\x8f\xbf", true),
            (b"", false),
            (b"a", false),
            (b"\xe6\x97\xa5", false),
            (b"\x97", false),
            (b"\xe0\x80", false),
            (b"\xed\xa0", false),
            (b"\xf4\x90", false),
            (b"\xf5", false),
            (b"\xc0", false),
            (b"\xe6\x97a", false),
        ] {
            assert_eq!(cut_short(bytes), cut, "{bytes:?}");
        }
        let vocab = VocabIndex::new(Vocabulary::builtin("o200k_base").unwrap());
        let tier = &vocab.tiers[0];
        let cut = tier.cut.as_ref().expect("o200k_base has tokens cut short");
        let v = &vocab.vocab;
        let ids: Vec<u32> = (0..v.len() as u32)
            .filter(|&id| cut.ids.contains(id))
            .collect();
        assert!(ids.len() > 1000, "{}", ids.len());
        for &id in &ids {
            let bytes = v.token(id);
            assert!(
                !tier.plain.contains(id) && !bytes.contains(&b'"'),
                "{bytes:?}"
            );
            let at = plain_prefix(bytes, &tier.ascii, true);
            assert!(
                cut_short(&bytes[at..]) && chars(&bytes[..at]) < cut.chars,
                "{bytes:?}"
            );
        }
        let with_plain_text = ids.iter().filter(|&&id| v.token(id).len() > 4).count();
        assert!(with_plain_text > 100, "{with_plain_text}");
        let tokens = |trie: &Trie| {
            let mut mask = Mask::new(v.len());
            for k in 0..trie.nodes.len() {
                take_node::<false>(&mut mask, trie, k, &mut Vec::new());
            }
            mask
        };
        let (all, left) = (tokens(tier.rest.as_ref().unwrap()), tokens(&cut.rest));
        let quiet = tokens(&cut.quiet);
        let mut stopped = 0;
        for id in 0..v.len() as u32 {
            let bytes = v.token(id);
            let kept = left.contains(id) || cut.ids.contains(id);
            assert_eq!(all.contains(id), kept, "{bytes:?}");
            assert!(!(left.contains(id) && cut.ids.contains(id)), "{bytes:?}");
            // The quiet trie: the rest but the tokens stopped by a control character.
            let stop = bytes
                .get(plain_prefix(bytes, &tier.ascii, true))
                .is_some_and(|b| *b < 0x20);
            assert_eq!(quiet.contains(id), left.contains(id) && !stop, "{bytes:?}");
            stopped += usize::from(left.contains(id) && stop);
        }
        assert!(stopped > 2000, "{stopped}");
    }

    /// An index over o200k_base for `schema` compiled in general mode.
    fn general_index(schema: &serde_json::Value) -> TokenIndex {
        let vocab = Arc::new(VocabIndex::new(Vocabulary::builtin("o200k_base").unwrap()));
        let options = crate::template::Options {
            json: crate::json::JsonOptions {
                mode: crate::json::SchemaMode::general(),
                ..Default::default()
            },
            ..Default::default()
        };
        let c = crate::template::compile_schema(Some(schema), &options).unwrap();
        TokenIndex::new(Arc::new(c), vocab)
    }

    /// The state after `text` from the start.
    fn state_after(index: &TokenIndex, text: &str) -> u32 {
        let mut state = index.start();
        for &b in text.as_bytes() {
            state = index.table().next(state, b);
        }
        assert_ne!(state, DEAD, "{text}");
        state
    }

    /// The states from which every state that plain text reaches kills the control
    /// characters: none in free text; each of an object's names and of a string's body;
    /// and a state that kills them itself but reaches free text by plain text is not one
    /// (a textual delimiter opening free text, part of it written). Every state found is
    /// checked against the states plain ASCII and a few non-ASCII characters reach.
    #[test]
    fn control_characters_die_after_plain_text_in_names_and_strings_not_in_free_text() {
        let json = general_index(&serde_json::json!({"type": "object", "properties": {
            "name": {"type": "string"}, "nick": {"type": "string", "maxLength": 8}}}));
        for text in [
            "{\"",
            "{\"na",
            "{\"other",
            "{\"name\":\"ab",
            "{\"nick\":\"x",
        ] {
            let s = state_after(&json, text);
            assert!(json.stops_die(0, s, &mut Scratch::default()), "{text}");
        }
        let model = template_build::model::load(
            &serde_json::from_str(templates::source("gpt-oss").unwrap()).unwrap(),
        )
        .unwrap();
        let c = crate::template::compile(
            &model,
            &crate::template::Request::default(),
            &crate::template::Options::default(),
        )
        .unwrap();
        let text = TokenIndex::new(Arc::new(c), json.vocab.clone());
        let content = state_after(&text, "<|channel|>final<|message|>Hello");
        assert!(!text.stops_die(0, content, &mut Scratch::default()));
        let (wide, _) = &tier_bytes()[0];
        // The states plain text reaches from `s` (ASCII and a few other characters).
        let reached = |index: &TokenIndex, s: u32| {
            let table = index.table();
            let mut seen = FxHashSet::from_iter([s]);
            let mut queue = vec![s];
            while let Some(s) = queue.pop() {
                let words = wide.iter().map(|&b| vec![b]);
                for word in words.chain(["é", "日", "😀"].map(|c| c.as_bytes().to_vec())) {
                    let n = word.iter().fold(s, |q, &b| table.next(q, b));
                    if n != DEAD && seen.insert(n) {
                        queue.push(n);
                    }
                }
            }
            seen
        };
        // With whitespace, a number's digits reach states that take a newline: after a
        // minus sign, where none is taken, plain text reaches them.
        let options = crate::template::Options {
            json: crate::json::JsonOptions {
                mode: crate::json::SchemaMode::general(),
                whitespace: 2,
                ..Default::default()
            },
            ..Default::default()
        };
        let schema = serde_json::json!({"type": "object", "properties": {"n": {"type": "number"}}});
        let c = crate::template::compile_schema(Some(&schema), &options).unwrap();
        let spaced = TokenIndex::new(Arc::new(c), json.vocab.clone());
        let minus = state_after(&spaced, "{\"n\":-");
        assert!(kills_stops(spaced.table(), minus));
        assert!(!spaced.stops_die(0, minus, &mut Scratch::default()));
        let mut found = 0;
        for index in [&json, &text, &spaced] {
            for s in 1..index.table().len() as u32 {
                let dies = index.stops_die(0, s, &mut Scratch::default());
                let live = |q: &u32| !kills_stops(index.table(), *q);
                if dies {
                    assert!(!reached(index, s).iter().any(live), "state {s}");
                } else if kills_stops(index.table(), s) && reached(index, s).iter().any(live) {
                    found += 1;
                }
            }
        }
        assert!(found > 0);
    }

    /// The URI tier's characters go on everywhere in a URI's host, path, query and
    /// fragment: there its plain tokens are taken at once (a full walk of the other tier's
    /// tails cost 140-160 us per mask in the Store's `feed-1.json`), and neither the
    /// letters-and-digits tier nor a walk decides.
    #[test]
    fn uri_text_takes_the_uri_tier() {
        let uri_tier = tier_bytes()
            .iter()
            .position(|(ascii, _)| ascii.contains(&b'~') && !ascii.contains(&b' '))
            .unwrap();
        let index = general_index(&serde_json::json!({"type": "string", "format": "uri"}));
        for text in [
            "\"https://ex",
            "\"https://example.org/feed",
            "\"http://a.b/c?q=1&r=(2)",
            "\"urn:x:y#frag",
        ] {
            let state = state_after(&index, text);
            let mut chain = Vec::new();
            let takes = index.plain_length(uri_tier, state, &mut chain, &mut Scratch::default())
                == Some(index.vocab.tiers[uri_tier].max_chars)
                || index.takes_plain_text(uri_tier, state, &mut Scratch::default());
            assert!(takes, "{text}");
        }
    }

    /// After a digit of a number read in place and inside a hex escape, letters and digits
    /// split (no tier is tried); in a string body, a name and before a value they do not.
    #[test]
    fn letters_and_digits_split_after_digits_and_in_escapes() {
        let index = general_index(&serde_json::json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "s": {"type": "string"}}}));
        for (text, split) in [
            ("{\"n\":4", true),
            ("{\"s\":\"ab\\u00", true),
            ("{\"s\":\"ab", false),
            ("{\"", false),
            ("{\"n\":", true),
        ] {
            let state = state_after(&index, text);
            assert_eq!(
                index.letters_and_digits_split(state).is_some(),
                split,
                "{text}"
            );
        }
    }

    /// Plain steps with one `Scratch` kept across states (its remembered lead-byte walks)
    /// are the steps with a fresh one, in every state of a schema whose names and strings
    /// hold non-ASCII characters (states after a lead byte differ by state).
    #[test]
    fn plain_steps_with_a_kept_scratch_are_fresh_ones() {
        let index = general_index(&serde_json::json!({"type": "object", "properties": {
            "café": {"type": "string", "pattern": "^[éa-z]*$"}, "日本": {"enum": ["ü", "ñx"]},
            "naïve": {"type": "string", "maxLength": 3}}}));
        let n = index.table().len() as u32;
        for t in 0..index.vocab.tiers.len() {
            let mut kept = Scratch::default();
            for s in 1..n {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let da = index.plain_step(t, s, &mut a, &mut kept);
                let db = index.plain_step(t, s, &mut b, &mut Scratch::default());
                for v in [&mut a, &mut b] {
                    v.sort_unstable();
                    v.dedup();
                }
                assert_eq!((da, a), (db, b), "state {s}, tier {t}");
            }
        }
    }

    /// Counts of plain characters read back from what an earlier count found along a
    /// chain of single steps (`PlainLength`, shifted by the steps between) equal counts on
    /// a fresh index, whatever order the states are asked in: strings counting up to fewer
    /// and more characters than the longest plain token (128), with a `minLength`, read in
    /// place, patterns where some texts die before others (`None`, within the count and
    /// past it), and bodies whose levels repeat. The chains `walk_by_prefix` walks from
    /// are compared too: a count that met nothing within the longest token keeps its chain
    /// (`clean_chains`), and a later count from a state of it goes on from its end. A shift
    /// off by one, an answer kept for a state it does not hold from, or a chain read from
    /// the wrong place gives another count or chain.
    #[test]
    fn counts_read_back_along_a_chain_are_fresh_counts() {
        use rand::seq::SliceRandom;
        use rand::SeedableRng;
        let schema = serde_json::json!({"type": "array", "items": [
            {"type": "string", "maxLength": 120},
            {"type": "string", "minLength": 5, "maxLength": 127},
            {"type": "string", "maxLength": 129},
            {"type": "string", "minLength": 140, "maxLength": 300},
            {"type": "string", "pattern": "^(a{3}|[b-z]{1,40})$"},
            {"type": "string", "pattern": "^[a-z]{2,6}-[0-9]{1,3}$"},
            // Lower-case letters and digits (the narrow tiers' 26 characters): single steps,
            // then texts of one length both dying and going on, 30 characters on (past
            // the tiers' longest token from the first states, not from the later ones).
            {"type": "string", "pattern": "^[a-z0-9]{20}(a[a-z0-9]{30}|[b-z0-9][a-z0-9]{9})$"},
            {"type": "string"},
            {"type": "object", "properties": {"k": {"type": "string", "maxLength": 60}}}]});
        let index = general_index(&schema);
        let n = index.table().len() as u32;
        let states: Vec<u32> = (1..n).collect();
        let mut shuffled = states.clone();
        shuffled.shuffle(&mut rand::rngs::SmallRng::seed_from_u64(7));
        let orders = [
            states.clone(),
            states.iter().rev().copied().collect(),
            shuffled,
        ];
        let mut read_back = 0;
        // The count from `s` and its chain as `walk_by_prefix` gets it (extended by
        // `plain_chain` to the tier's prefix groups).
        let count = |index: &TokenIndex, t: usize, s: u32| {
            let mut chain = Vec::new();
            let mut scratch = Scratch::default();
            let n = index.plain_length(t, s, &mut chain, &mut scratch);
            assert_eq!(chain[0], s);
            let len = index.vocab.tiers[t].prefix_groups.len();
            let whole = index.plain_chain(t, &mut chain, len, &mut scratch);
            chain.truncate(len);
            (n, whole.then_some(chain))
        };
        let mut chains_read = 0;
        for t in 0..index.vocab.tiers.len() {
            // The count from each state alone: a fresh index remembers nothing.
            let fresh: Vec<_> = states
                .iter()
                .map(|&s| {
                    let alone = TokenIndex::new(index.constraint.clone(), index.vocab.clone());
                    count(&alone, t, s)
                })
                .collect();
            for order in &orders {
                let kept = TokenIndex::new(index.constraint.clone(), index.vocab.clone());
                for &s in order {
                    let before = kept.plain_lengths[t].read().unwrap().contains_key(&s);
                    let through = kept.clean_chains[t].read().unwrap().contains_key(&s);
                    assert_eq!(
                        count(&kept, t, s),
                        fresh[s as usize - 1],
                        "state {s}, tier {t}"
                    );
                    read_back += usize::from(before);
                    chains_read += usize::from(through);
                }
            }
        }
        assert!(read_back > 1000, "{read_back} counts read back");
        assert!(chains_read > 500, "{chains_read} clean chains read");
    }

    /// Plain steps with one `Scratch` kept across every state and tier, the machine's own
    /// and those read in place from shared values (as a kept scratch serves one mask after
    /// another: its lead-byte walks are keyed by table), are the steps with a fresh one.
    /// The names read in place take any character; the machine's own strings only some
    /// (`é`, `日`), so a walk after a lead byte taken from the wrong table differs.
    #[test]
    fn plain_steps_with_a_scratch_kept_across_tables_are_fresh_ones() {
        let members: serde_json::Map<String, serde_json::Value> = (0..30)
            .map(|i| {
                (
                    format!("name_{i}"),
                    serde_json::json!({"type": "string", "pattern": "^[éa日]*$"}),
                )
            })
            .collect();
        let schema = serde_json::json!({"type": "array", "items": [
            {"properties": members, "propertyNames": {"maxLength": 12}},
            {"type": "string", "pattern": "^[é日x]*$"},
            {"type": "string", "pattern": "^[ü本]{0,3}$"}]});
        let index = general_index(&schema);
        let table = index.table();
        assert!(
            table.stored_states() < table.len(),
            "values are read in place"
        );
        let mut kept = Scratch::default();
        for t in 0..index.vocab.tiers.len() {
            for s in 1..table.len() as u32 {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let da = index.plain_step_located(t, s, &mut a, &mut kept);
                let db = index.plain_step_located(t, s, &mut b, &mut Scratch::default());
                for v in [&mut a, &mut b] {
                    v.sort_unstable();
                    v.dedup();
                }
                assert_eq!((da, a), (db, b), "state {s}, tier {t}");
            }
        }
    }

    /// The kept root walks stay within their bound, rows and states met included, and the
    /// masks past it (roots walked every time) are still the full walks: an object of 300
    /// names under a bound of 20,000 words, every state asked twice.
    #[test]
    fn kept_root_walks_stay_within_their_bound() {
        let members: serde_json::Map<String, serde_json::Value> = (0..300)
            .map(|i| (format!("n{i}_{}", i * 7919 % 1000), serde_json::json!({})))
            .collect();
        let mut index = general_index(&serde_json::json!({"properties": members}));
        index.root_walks.limit = 20_000;
        let n = index.table().len() as u32;
        for _ in 0..2 {
            for s in (1..n).step_by((n as usize / 600).max(1)) {
                assert_eq!(
                    index.allowed_uncached(s),
                    index.allowed_by_full_walk(s),
                    "{s}"
                );
            }
        }
        // Counted here, not by `KeptWalks::words`: the ids' capacity, two words per row
        // slot, six per state met.
        let kept = index.root_walks.kept.read().unwrap();
        let rows: usize = kept.runs.iter().map(|r| r.len() * 2).sum();
        let words = kept.ids.capacity() + rows + kept.rows.len() * 6;
        assert!(words <= 20_000, "{words} words kept");
        assert!(words > 10_000, "the bound was met: {words} words");
    }

    /// A state read in place from a shared value, stepped in the value's own rows
    /// ([`TokenIndex::plain_step_located`]), reaches the states the machine's own steps
    /// reach, and dies where they die: in every computed state of an open object whose
    /// names (at most 12 characters) are read in place.
    #[test]
    fn located_plain_steps_are_the_machines() {
        let members: serde_json::Map<String, serde_json::Value> = (0..30)
            .map(|i| {
                (
                    format!("name_{i}"),
                    serde_json::json!({"type": "string", "maxLength": 30}),
                )
            })
            .collect();
        let schema = serde_json::json!({"properties": members, "propertyNames": {"maxLength": 12}});
        let index = general_index(&schema);
        let table = index.table();
        let stored = table.stored_states() as u32;
        let mut checked = 0;
        for s in (stored..table.len() as u32).step_by(3) {
            for t in 0..index.vocab.tiers.len() {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                let da = index.plain_step_located(t, s, &mut a, &mut Scratch::default());
                let db = index.plain_step(t, s, &mut b, &mut Scratch::default());
                for v in [&mut a, &mut b] {
                    v.sort_unstable();
                    v.dedup();
                }
                assert_eq!((da, a), (db, b), "state {s}, tier {t}");
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked} steps checked");
    }
}

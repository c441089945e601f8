//! The outcome memo of the scan (alloc API): what a walk in a given DFA state at a given
//! position ends with, recorded once, so that a scan restarted after a commit does not walk
//! the same stretch again.
//!
//! A walk's future depends only on its delimiter branch, its phase, its DFA state and the text
//! from its position on: two walks that agree on these at one position report the same later
//! matches and end the same way (that is why walks in the same state are merged, see
//! `keep_dedup`). Every few bytes (a *checkpoint*, `MEMO_SHIFT` in `walk.rs`) each live walk either finds
//! a settled *cell* for its key, and ends at once with that outcome, or registers a pending
//! cell that its *group* settles when the walk ends (a walk merged into another hands its
//! cells over with what its own past adds).
//!
//! Without the memo a commit made after a long-pending walk resolved rescans every byte up
//! to where that walk resolved, once per commit (the README's former "cascade" limit:
//! DeepSeek-R1's `(?=[\s\S]*?</think>)` open over a run of `<｜end▁of▁sentence｜>` closes
//! took time quadratic in the output). With it, a rescanned walk reaches a settled cell
//! within one spacing of its start, or converges with a trajectory that is being walked for
//! the first time: each (branch, state, checkpoint) is walked a bounded number of times.
//!
//! What a cell holds, its [`Future`], is for a walk in the main part the last match it
//! reports from the checkpoint on (and whether that match makes a candidate, after the
//! branch's look-ahead), or that it reports none (the walk then ends with the match it had
//! before, which differs between walks); for a walk in the look-ahead, whether the look-ahead
//! lets its candidate through. A cell is settled only from text already seen (a walk that
//! ends at the buffer's edge does so because its outcome no longer depends on what follows),
//! so using it never changes when or what the router commits, only the work.
//!
//! The no-heap router has no memo: its hold buffer bounds what a commit can rescan.

#[cfg(feature = "alloc")]
pub(in crate::router) use imp::Memo;

#[cfg(not(feature = "alloc"))]
pub(in crate::router) use stub::Memo;

use regex_automata::util::primitives::StateID;

/// No group: the walk has registered no cell.
pub(in crate::router) const NO_GROUP: u32 = u32::MAX;

/// What a cell's walk does from its checkpoint on.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::router) enum Future {
    /// Main part: no further match is reported (the walk ends with the match it had).
    NoMatch,
    /// Main part: the last match reported ends at `end`; `produced`: it makes a candidate
    /// (always without a look-ahead; with one, when the look-ahead lets it through).
    Match { end: usize, produced: bool },
    /// Look-ahead: whether the candidate is produced.
    Verdict(bool),
}

/// Which walks a cell is about: delimiter, branch, phase and DFA state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::router) struct Key {
    pub(in crate::router) field: u32,
    pub(in crate::router) close: bool,
    pub(in crate::router) branch: u16,
    pub(in crate::router) look: bool,
    pub(in crate::router) state: StateID,
}

/// Without a heap there is no memo: the router's `Option<Memo>` is always `None`, and these
/// are never called.
#[cfg(not(feature = "alloc"))]
mod stub {
    use super::{Future, Key};

    #[derive(Debug)]
    pub(in crate::router) enum Memo {}

    impl Memo {
        pub(in crate::router) fn at_checkpoint(&self, _: usize) -> bool {
            match *self {}
        }
        pub(in crate::router) fn lookup(&self, _: Key, _: usize) -> Option<Future> {
            match *self {}
        }
        pub(in crate::router) fn register(&mut self, _: &mut u32, _: Key, _: usize) {
            match *self {}
        }
        pub(in crate::router) fn reported(&mut self, _: u32) {
            match *self {}
        }
        pub(in crate::router) fn entered_look(&mut self, _: u32, _: usize) {
            match *self {}
        }
        pub(in crate::router) fn finish(&mut self, _: u32, _: bool, _: Option<usize>) {
            match *self {}
        }
        pub(in crate::router) fn abandon(&mut self, _: u32) {
            match *self {}
        }
        pub(in crate::router) fn merge(
            &mut self,
            _: &mut u32,
            _: u32,
            _: bool,
            _: Option<usize>,
            _: Option<usize>,
            _: bool,
        ) {
            match *self {}
        }
        pub(in crate::router) fn trim(&mut self, _: usize) {
            match *self {}
        }
    }
}

#[cfg(feature = "alloc")]
mod imp {
    use alloc::collections::VecDeque;
    use alloc::vec::Vec;

    use super::{Future, Key, NO_GROUP};
    #[cfg(test)]
    use regex_automata::util::primitives::StateID;

    /// No cell.
    const NONE: u32 = u32::MAX;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Value {
        /// The walk that registered it is live (or the cell waits for a look-ahead).
        Pending,
        /// Its walk was dropped or cleared before it ended: never used.
        Dead,
        Settled(Future),
    }

    #[derive(Debug, Clone, Copy)]
    struct Cell {
        key: Key,
        value: Value,
        /// For a main cell in a group's `B` list, its fallback: 0 for none (`NoMatch`), else
        /// the end of the match it falls back on, plus one. For a cell in a `MAINS` list, the
        /// end of the main match the look-ahead decides.
        aux: usize,
        /// Checkpoint number.
        ck: u32,
        /// Whether the cell is still listed under its checkpoint (else it is freed when it
        /// settles).
        listed: bool,
        /// The next cell of the same checkpoint.
        next: u32,
        /// The next cell of the same group list (while pending).
        gnext: u32,
    }

    /// A list of cells linked through `Cell::gnext`.
    #[derive(Debug, Clone, Copy)]
    struct List {
        head: u32,
        tail: u32,
    }

    impl List {
        const EMPTY: List = List {
            head: NONE,
            tail: NONE,
        };
    }

    /// The lists of a group: which cells take what when its walk goes on or ends.
    const A: usize = 0;
    const B: usize = 1;
    const MAINS: usize = 2;
    const LOOK: usize = 3;

    /// The cells of one live walk, by what settles them:
    /// - `A`: main cells with a match reported since they were registered: they take the
    ///   walk's last match;
    /// - `B`: main cells without one: they take the walk's next match if it reports one,
    ///   else their fallback;
    /// - `MAINS`: main cells whose match (their `end`) waits for this walk's look-ahead;
    /// - `LOOK`: look-ahead cells.
    #[derive(Debug, Clone, Copy)]
    struct Group {
        lists: [List; 4],
    }

    /// The memo, boxed: a router with growable storage carries one pointer for it.
    #[derive(Debug)]
    pub(in crate::router) struct Memo(alloc::boxed::Box<State>);

    impl Memo {
        /// A memo with a checkpoint every `1 << shift` bytes.
        pub(in crate::router) fn new(shift: u32) -> Self {
            Self(alloc::boxed::Box::new(State::new(shift)))
        }
    }

    impl core::ops::Deref for Memo {
        type Target = State;
        fn deref(&self) -> &State {
            &self.0
        }
    }

    impl core::ops::DerefMut for Memo {
        fn deref_mut(&mut self) -> &mut State {
            &mut self.0
        }
    }

    /// The memo: cells by checkpoint, and the groups of live walks. After the first feeds
    /// nothing here allocates (slots are reused through free lists).
    #[derive(Debug)]
    pub(in crate::router) struct State {
        shift: u32,
        /// Checkpoint number of `buckets[0]`.
        first: usize,
        /// The first cell of each checkpoint from `first` on (the others linked through
        /// `Cell::next`).
        buckets: VecDeque<u32>,
        /// The listed cells by checkpoint and key (open addressing, linear probing; entries of
        /// cells since unlisted stay until the next rebuild and never match): a lookup costs
        /// the same however many walks registered a cell at one checkpoint.
        index: Vec<u32>,
        /// Entries in `index`, stale ones included.
        occupied: usize,
        /// Listed cells.
        listed: usize,
        cells: Vec<Cell>,
        free_cells: Vec<u32>,
        groups: Vec<Group>,
        free_groups: Vec<u32>,
    }

    impl State {
        fn new(shift: u32) -> Self {
            Self {
                shift,
                first: 0,
                buckets: VecDeque::with_capacity(64),
                index: alloc::vec![NONE; 512],
                occupied: 0,
                listed: 0,
                cells: Vec::with_capacity(256),
                free_cells: Vec::with_capacity(256),
                groups: Vec::with_capacity(16),
                free_groups: Vec::with_capacity(16),
            }
        }

        /// Whether `p` is a checkpoint.
        #[inline]
        pub(in crate::router) fn at_checkpoint(&self, p: usize) -> bool {
            p & ((1 << self.shift) - 1) == 0
        }

        /// Where `(ck, key)` starts its probe in `index`.
        fn home(&self, ck: usize, key: &Key) -> usize {
            let k = (ck as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ (u64::from(key.state.as_u32()) << 20)
                ^ (u64::from(key.field) << 4)
                ^ (u64::from(key.branch) << 40)
                ^ (u64::from(key.close) << 1)
                ^ u64::from(key.look);
            let h = k.wrapping_mul(0xD6E8_FEB8_6659_FD93);
            (h >> 32) as usize & (self.index.len() - 1)
        }

        /// The settled outcome for `key` at checkpoint `p`, if a walk recorded one.
        pub(in crate::router) fn lookup(&self, key: Key, p: usize) -> Option<Future> {
            let ck = p >> self.shift;
            if ck < self.first || self.listed == 0 {
                return None;
            }
            let mask = self.index.len() - 1;
            let mut i = self.home(ck, &key);
            loop {
                let id = self.index[i];
                if id == NONE {
                    return None;
                }
                let cell = &self.cells[id as usize];
                if cell.listed && cell.ck as usize == ck && cell.key == key {
                    if let Value::Settled(f) = cell.value {
                        return Some(f);
                    }
                }
                i = (i + 1) & mask;
            }
        }

        fn index_insert(&mut self, id: u32) {
            if (self.occupied + 1) * 2 > self.index.len() {
                self.rebuild();
            }
            let cell = &self.cells[id as usize];
            let mask = self.index.len() - 1;
            let mut i = self.home(cell.ck as usize, &cell.key);
            while self.index[i] != NONE {
                i = (i + 1) & mask;
            }
            self.index[i] = id;
            self.occupied += 1;
        }

        /// Rebuilds `index` from the listed cells, without the stale entries, at a size for
        /// four times as many (it allocates only to grow).
        fn rebuild(&mut self) {
            let size = (self.listed * 4).next_power_of_two().max(512);
            if self.index.len() == size {
                self.index.fill(NONE);
            } else {
                self.index = alloc::vec![NONE; size];
            }
            self.occupied = 0;
            let mask = size - 1;
            for b in 0..self.buckets.len() {
                let mut id = self.buckets[b];
                while id != NONE {
                    let cell = &self.cells[id as usize];
                    let mut i = self.home(cell.ck as usize, &cell.key);
                    while self.index[i] != NONE {
                        i = (i + 1) & mask;
                    }
                    self.index[i] = id;
                    self.occupied += 1;
                    id = cell.next;
                }
            }
        }

        /// Registers a pending cell for the walk whose group is `*group` (made if it has none)
        /// in state `key` at checkpoint `p`.
        pub(in crate::router) fn register(&mut self, group: &mut u32, key: Key, p: usize) {
            let ck = p >> self.shift;
            if self.buckets.is_empty() {
                self.first = ck;
            }
            let Some(n) = ck.checked_sub(self.first) else {
                return;
            };
            while self.buckets.len() <= n {
                self.buckets.push_back(NONE);
            }
            let Ok(ck32) = u32::try_from(ck) else {
                return;
            };
            let cell = Cell {
                ck: ck32,
                key,
                value: Value::Pending,
                aux: 0,
                listed: true,
                next: self.buckets[n],
                gnext: NONE,
            };
            let id = match self.free_cells.pop() {
                Some(id) => {
                    self.cells[id as usize] = cell;
                    id
                }
                None => {
                    self.cells.push(cell);
                    (self.cells.len() - 1) as u32
                }
            };
            self.buckets[n] = id;
            self.listed += 1;
            self.index_insert(id);
            if *group == NO_GROUP {
                let g = Group {
                    lists: [List::EMPTY; 4],
                };
                *group = match self.free_groups.pop() {
                    Some(i) => {
                        self.groups[i as usize] = g;
                        i
                    }
                    None => {
                        self.groups.push(g);
                        (self.groups.len() - 1) as u32
                    }
                };
            }
            self.push(*group, if key.look { LOOK } else { B }, id);
        }

        fn push(&mut self, group: u32, list: usize, id: u32) {
            let l = &mut self.groups[group as usize].lists[list];
            if l.tail == NONE {
                l.head = id;
            } else {
                self.cells[l.tail as usize].gnext = id;
            }
            l.tail = id;
        }

        /// Appends list `from` to list `into` (of any groups) in constant time.
        fn append(&mut self, into: (u32, usize), from: (u32, usize)) {
            let f =
                core::mem::replace(&mut self.groups[from.0 as usize].lists[from.1], List::EMPTY);
            if f.head == NONE {
                return;
            }
            let l = &mut self.groups[into.0 as usize].lists[into.1];
            if l.tail == NONE {
                *l = f;
            } else {
                let tail = l.tail;
                l.tail = f.tail;
                self.cells[tail as usize].gnext = f.head;
            }
        }

        /// Calls `f` on every cell of a list, which is emptied.
        fn drain(&mut self, group: u32, list: usize, mut f: impl FnMut(&mut Self, u32)) {
            let l = core::mem::replace(&mut self.groups[group as usize].lists[list], List::EMPTY);
            let mut id = l.head;
            while id != NONE {
                let next = self.cells[id as usize].gnext;
                f(self, id);
                id = next;
            }
        }

        /// Calls `f` on every cell of a list, which stays as it is.
        fn each(&mut self, group: u32, list: usize, mut f: impl FnMut(&mut Cell)) {
            let mut id = self.groups[group as usize].lists[list].head;
            while id != NONE {
                let cell = &mut self.cells[id as usize];
                f(cell);
                id = cell.gnext;
            }
        }

        /// The group's walk reported a match: every main cell now takes its last match.
        pub(in crate::router) fn reported(&mut self, group: u32) {
            self.append((group, A), (group, B));
        }

        /// The group's walk left its main part with the match ending at `main_end` and walks
        /// the look-ahead from there: cells with a match wait for the look-ahead; the others
        /// take their fallback.
        pub(in crate::router) fn entered_look(&mut self, group: u32, main_end: usize) {
            self.each(group, A, |c| c.aux = main_end);
            self.append((group, MAINS), (group, A));
            self.drain(group, B, Self::fall_back);
        }

        /// The group's walk ended: `produced` whether it made a candidate, `end` its main
        /// match (`None`: none).
        pub(in crate::router) fn finish(&mut self, group: u32, produced: bool, end: Option<usize>) {
            let with_match = match end {
                Some(end) => Future::Match { end, produced },
                None => Future::NoMatch,
            };
            self.drain(group, A, |m, id| m.settle(id, with_match));
            self.drain(group, B, Self::fall_back);
            self.drain(group, MAINS, |m, id| {
                let end = m.cells[id as usize].aux;
                m.settle(id, Future::Match { end, produced });
            });
            self.drain(group, LOOK, |m, id| m.settle(id, Future::Verdict(produced)));
            self.free_groups.push(group);
        }

        /// The group's walk was dropped before it ended: its cells are never used.
        pub(in crate::router) fn abandon(&mut self, group: u32) {
            for list in [A, B, MAINS, LOOK] {
                self.drain(group, list, Self::kill);
            }
            self.free_groups.push(group);
        }

        /// The walk of group `loser` merged into the walk of `*survivor` (same branch, phase
        /// and state: the same future). `look`: the walks are in the look-ahead. For walks in
        /// the main part, `loser_match` and `survivor_match` are their last matches so far
        /// and `lookahead` whether the branch has a look-ahead.
        pub(in crate::router) fn merge(
            &mut self,
            survivor: &mut u32,
            loser: u32,
            look: bool,
            loser_match: Option<usize>,
            survivor_match: Option<usize>,
            lookahead: bool,
        ) {
            if loser == NO_GROUP {
                return;
            }
            let differ = !look && loser_match != survivor_match;
            if differ && lookahead {
                // Merged past the per-state cap with another match end: the survivor's
                // outcome is not the loser's, so its cells are not settled at all.
                self.abandon(loser);
                return;
            }
            if differ {
                // The loser's cells with a match fall back on it if the survivor reports none.
                let fallback = loser_match.map_or(0, |m| m + 1);
                self.each(loser, A, |c| c.aux = fallback);
                self.append((loser, B), (loser, A));
            }
            if *survivor == NO_GROUP {
                *survivor = loser;
                return;
            }
            for list in [A, B, MAINS, LOOK] {
                self.append((*survivor, list), (loser, list));
            }
            self.free_groups.push(loser);
        }

        /// Settles a `B` cell with its fallback.
        fn fall_back(&mut self, id: u32) {
            let f = match self.cells[id as usize].aux {
                0 => Future::NoMatch,
                end => Future::Match {
                    end: end - 1,
                    produced: true,
                },
            };
            self.settle(id, f);
        }

        fn settle(&mut self, id: u32, f: Future) {
            let cell = &mut self.cells[id as usize];
            if cell.listed {
                cell.value = Value::Settled(f);
            } else {
                self.free_cells.push(id);
            }
        }

        fn kill(&mut self, id: u32) {
            let cell = &mut self.cells[id as usize];
            if cell.listed {
                cell.value = Value::Dead;
            } else {
                self.free_cells.push(id);
            }
        }

        /// Forgets the checkpoints before `pos`: no walk can be there any more. A pending cell
        /// there is freed when its walk ends.
        pub(in crate::router) fn trim(&mut self, pos: usize) {
            let ck = pos >> self.shift;
            while self.first < ck {
                let Some(mut id) = self.buckets.pop_front() else {
                    self.first = ck;
                    break;
                };
                self.first += 1;
                while id != NONE {
                    let cell = &mut self.cells[id as usize];
                    cell.listed = false;
                    self.listed -= 1;
                    let next = cell.next;
                    if cell.value != Value::Pending {
                        self.free_cells.push(id);
                    }
                    id = next;
                }
            }
        }

        /// Cells in use (settled, pending or dead but still listed), for tests of its bounds.
        #[cfg(test)]
        pub(in crate::router) fn cells_in_use(&self) -> usize {
            self.cells.len() - self.free_cells.len()
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn key(state: u32, look: bool) -> Key {
            Key {
                field: 0,
                close: false,
                branch: 0,
                look,
                state: StateID::new(state as usize).unwrap(),
            }
        }

        fn matched(end: usize, produced: bool) -> Option<Future> {
            Some(Future::Match { end, produced })
        }

        #[test]
        fn cells_are_small() {
            // README, "Time and memory bounds": 4 cells per 128 bytes held, at most.
            assert!(
                core::mem::size_of::<Cell>() <= 56,
                "{}",
                core::mem::size_of::<Cell>()
            );
        }

        /// A main cell takes the walk's last match when one was reported after it, else its
        /// fallback (none); look-ahead cells take the verdict; main cells that went into the
        /// look-ahead take its verdict with their match end.
        #[test]
        fn cells_settle_by_what_the_walk_did() {
            let mut m = State::new(7);
            let mut g = NO_GROUP;
            m.register(&mut g, key(1, false), 0);
            m.reported(g);
            m.register(&mut g, key(2, false), 128);
            m.finish(g, true, Some(100));
            assert_eq!(m.lookup(key(1, false), 0), matched(100, true));
            assert_eq!(m.lookup(key(2, false), 128), Some(Future::NoMatch));
            // Same checkpoint, other state: nothing.
            assert_eq!(m.lookup(key(3, false), 128), None);

            let mut g = NO_GROUP;
            m.register(&mut g, key(4, false), 256);
            m.reported(g);
            m.entered_look(g, 300);
            m.register(&mut g, key(5, true), 384);
            m.finish(g, false, Some(300));
            assert_eq!(m.lookup(key(4, false), 256), matched(300, false));
            assert_eq!(m.lookup(key(5, true), 384), Some(Future::Verdict(false)));
        }

        /// A loser's cells with a match of its own fall back on it when the survivor reports
        /// none, and take the survivor's when it does; an abandoned walk's cells are never used.
        #[test]
        fn merged_cells_fall_back_on_their_own_match() {
            let mut m = State::new(7);
            let (mut loser, mut survivor) = (NO_GROUP, NO_GROUP);
            m.register(&mut loser, key(1, false), 0);
            m.reported(loser);
            m.register(&mut survivor, key(2, false), 0);
            m.merge(&mut survivor, loser, false, Some(50), Some(40), false);
            m.finish(survivor, true, Some(40));
            assert_eq!(m.lookup(key(1, false), 0), matched(50, true));
            assert_eq!(m.lookup(key(2, false), 0), Some(Future::NoMatch));

            let (mut loser, mut survivor) = (NO_GROUP, NO_GROUP);
            m.register(&mut loser, key(3, false), 128);
            m.reported(loser);
            m.merge(&mut survivor, loser, false, Some(150), Some(140), false);
            m.reported(survivor);
            m.finish(survivor, true, Some(200));
            assert_eq!(m.lookup(key(3, false), 128), matched(200, true));

            let mut g = NO_GROUP;
            m.register(&mut g, key(4, false), 256);
            m.abandon(g);
            assert_eq!(m.lookup(key(4, false), 256), None);
        }

        /// Checkpoints before the routed position are dropped and their cells reused; the
        /// index stays usable through rebuilds.
        #[test]
        fn trimmed_cells_are_reused() {
            let mut m = State::new(7);
            for round in 0..50usize {
                for i in 0..40u32 {
                    let mut g = NO_GROUP;
                    let p = round * 128;
                    m.register(&mut g, key(i, false), p);
                    m.finish(g, false, None);
                    assert_eq!(m.lookup(key(i, false), p), Some(Future::NoMatch));
                }
                m.trim(round * 128);
            }
            assert!(m.cells_in_use() <= 80, "{}", m.cells_in_use());
            assert_eq!(m.lookup(key(0, false), 0), None);
        }
    }
}

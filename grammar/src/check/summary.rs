//! What a memo record reads, in brief, and whether an edit can have
//! changed any of its answers: the replay trusts a record the edit cannot
//! reach, without checking its reads one by one.
//!
//! Why: checking every replayed record's reads against the tables (a
//! hash lookup per name, on records cold by the next keystroke) was about
//! a tenth of a keystroke's check on a 5,000-line file
//! (`bench/lsp_bench/RESULTS.md`, "How the check's time divides"), though
//! an edit changes what a handful of statements define.
//!
//! A statement outside the re-parsed window is its old tree, moved, and
//! replays its own record (`memo::OldRecords::own`). Which of its answers
//! the edit can have changed, by kind of read (`memo::Read`):
//! - the globals and return types so far, a function's first definition
//!   and header, whether a name is assigned, what a body sees of a later
//!   global: only for a name that a statement the check
//!   did not replay from its own record defines or writes, in the old
//!   text or the new ([`EditScope::changed`]). Those of the window are known
//!   before the replay (its old statements' records, its new statements'
//!   names); those of a statement checked again are added as the replay
//!   goes, and only later statements read them (the tables fill in order;
//!   what is known of a name in the whole file comes from its
//!   definitions, which are the window's);
//! - positions relative to the statement (a function's place and body,
//!   the lines around a span, a local's definition): only if the bytes the
//!   edit changed lie between the statement and what it read
//!   ([`Summary::reach`]);
//! - absolute line numbers: only after the edit, and only if it changed
//!   the number of lines;
//! - the nearest function name: only if the file's function names changed;
//! - symbol numbers: these move whenever a symbol is added or removed
//!   before them, and a record keeps the numbers of the check that made
//!   it, so a trusted record's reads of them are made all the same (its
//!   writes need the numbers they moved to: `Checker::replay`).
//!
//! The bits of names are a filter: two names on one bit only cost a
//! record its trust. Tests run unoptimised, where every trusted record's
//! reads are checked all the same and must hold (`Checker::replay`);
//! `tests/incremental_equivalence.rs` compares the result with a full
//! check after random edits.

use std::cell::Cell;
use std::hash::Hasher;

use crate::fast_hash::FastHasher;

use super::memo::{Event, Read, Write};

/// A record's reads in brief, made with the record.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Summary {
    /// The names its reads ask about ([`name_bit`]).
    reads: u64,
    /// The statement's own name (a definition's) and the names of the
    /// return types it writes or forgets: what other statements can read
    /// of it.
    pub(super) writes: u64,
    /// Which kinds of reads it makes that a name does not key
    /// (`READS_*`).
    kinds: u8,
    /// The range of every position it read or was answered, relative to
    /// the statement's start, its own text included.
    reach: (isize, isize),
}

/// Positions relative to the statement.
const READS_POSITIONS: u8 = 1;
/// Absolute line numbers.
const READS_LINES: u8 = 2;
/// The nearest function name.
const READS_NEAREST: u8 = 4;

/// One bit of 64 for `name`: the top six bits of its hash (the checker's
/// tables' hasher, whose final mix spreads every byte over them).
pub(super) fn name_bit(name: &str) -> u64 {
    let mut hasher = FastHasher::default();
    hasher.write(name.as_bytes());
    1 << (hasher.finish() >> 58)
}

impl Summary {
    /// The summary of a statement `len` bytes long that defines `own`
    /// (if it is an assignment or a function) and made `events`.
    pub(super) fn of(events: &[Event], own: Option<&str>, len: usize) -> Summary {
        let mut s = Summary {
            writes: own.map_or(0, name_bit),
            reach: (0, len as isize),
            ..Summary::default()
        };
        for event in events {
            match event {
                Event::Read(read) => s.add_read(read),
                Event::Write(Write::Return { name, .. }) => s.writes |= name_bit(name),
                Event::Write(Write::ForgetReturn { name }) => s.writes |= name_bit(name),
                Event::Write(Write::Global { .. } | Write::SymbolType { .. }) => {}
            }
        }
        s
    }

    fn add_read(&mut self, read: &Read) {
        match read {
            Read::Global { name, .. }
            | Read::LateGlobal { name, .. }
            | Read::Return { name, .. }
            | Read::Function { name, .. }
            | Read::Assigned { name, .. } => self.reads |= name_bit(name),
            Read::FunctionAt { name, at } | Read::FunctionBody { name, at } => {
                self.reads |= name_bit(name);
                self.kinds |= READS_POSITIONS;
                if let Some((rel, len)) = *at {
                    self.reaches(rel, rel + len as isize);
                }
            }
            Read::ClosestFunction { .. } => self.kinds |= READS_NEAREST,
            Read::GlobalId { name, .. } => self.reads |= name_bit(name),
            Read::DefinedAt { at, .. } => {
                self.kinds |= READS_POSITIONS;
                self.reaches(at.0, at.1);
            }
            Read::Line { at, .. } => {
                self.kinds |= READS_LINES | READS_POSITIONS;
                self.reaches(*at, *at);
            }
            Read::LineExtent { at, extent } => {
                self.kinds |= READS_POSITIONS;
                self.reaches(at.0, at.1);
                self.reaches(extent.0, extent.1);
            }
        }
    }

    fn reaches(&mut self, from: isize, to: isize) {
        self.reach = (self.reach.0.min(from), self.reach.1.max(to));
    }
}

/// What an edit can have changed, for the records of the check before it.
#[derive(Debug)]
pub(super) struct EditScope {
    /// The bytes the edit changed, in the old text: `start..old_end`.
    start: usize,
    old_end: usize,
    /// The names whose answers may have changed ([`name_bit`]), growing as
    /// the replay goes; all bits once a statement outside the window was
    /// checked without its own record being known (its old writes are not).
    changed: Cell<u64>,
}

/// The facts about the new check a trusted record also needs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Unchanged {
    /// The file has as many lines as before the edit.
    pub(super) lines: bool,
    /// The function names are those of the previous check, in order.
    pub(super) function_names: bool,
}

impl EditScope {
    /// The scope of an edit that changed the old text's bytes
    /// `start..old_end`.
    pub(super) fn new(start: usize, old_end: usize) -> EditScope {
        EditScope {
            start,
            old_end,
            changed: Cell::new(0),
        }
    }

    /// Adds names (bits) whose answers may have changed.
    pub(super) fn changes(&self, bits: u64) {
        self.changed.set(self.changed.get() | bits);
    }

    /// Whether the record summarised by `s`, of a statement that began at
    /// `old_start` in the old text and is outside the window, has every
    /// answer it had.
    pub(super) fn cannot_reach(&self, s: &Summary, old_start: usize, now: Unchanged) -> bool {
        if s.reads & self.changed.get() != 0
            || (s.kinds & READS_NEAREST != 0 && !now.function_names)
        {
            return false;
        }
        if s.kinds & READS_POSITIONS == 0 {
            return true;
        }
        let at = old_start as isize;
        let before = at + s.reach.1 < self.start as isize;
        let after = at + s.reach.0 > self.old_end as isize;
        before || (after && (s.kinds & READS_LINES == 0 || now.lines))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(name: &str) -> Event {
        Event::Read(Read::Global {
            name: name.into(),
            ty: None,
        })
    }

    fn all_same() -> Unchanged {
        Unchanged {
            lines: true,
            function_names: true,
        }
    }

    #[test]
    fn a_changed_name_reaches_its_readers_only() {
        let scope = EditScope::new(100, 105);
        let reads_x = Summary::of(&[global("x")], None, 10);
        let reads_y = Summary::of(&[global("y")], None, 10);
        // (Two names on one bit would only cost a record its trust; these
        // two are on two.)
        assert_ne!(name_bit("x"), name_bit("y"));
        scope.changes(name_bit("x"));
        assert!(!scope.cannot_reach(&reads_x, 200, all_same()));
        assert!(scope.cannot_reach(&reads_y, 200, all_same()));
    }

    #[test]
    fn positions_are_trusted_on_one_side_of_the_edit_only() {
        let scope = EditScope::new(100, 105);
        let at = |rel: isize| {
            Event::Read(Read::FunctionAt {
                name: "f".into(),
                at: Some((rel, 20)),
            })
        };
        // A statement at 200 reading a function 30 bytes on: both after.
        let after = Summary::of(&[at(30)], None, 10);
        assert!(scope.cannot_reach(&after, 200, all_same()));
        // The same statement reading a function 150 bytes back, at 50:
        // the edit lies between them.
        let across = Summary::of(&[at(-150)], None, 10);
        assert!(!scope.cannot_reach(&across, 200, all_same()));
        // A statement at 10 reading a function at 40: both before.
        assert!(scope.cannot_reach(&after, 10, all_same()));
    }

    #[test]
    fn line_numbers_after_the_edit_need_the_same_lines() {
        let scope = EditScope::new(100, 105);
        let line = Summary::of(&[Event::Read(Read::Line { at: 2, line: 9 })], None, 10);
        let fewer = Unchanged {
            lines: false,
            ..all_same()
        };
        assert!(scope.cannot_reach(&line, 200, all_same()));
        assert!(!scope.cannot_reach(&line, 200, fewer));
        assert!(scope.cannot_reach(&line, 10, fewer));
    }

    #[test]
    fn the_nearest_function_needs_the_same_function_names() {
        let scope = EditScope::new(100, 105);
        let near = Summary::of(
            &[Event::Read(Read::ClosestFunction {
                name: "h".into(),
                best: None,
            })],
            None,
            10,
        );
        let renamed = Unchanged {
            function_names: false,
            ..all_same()
        };
        assert!(scope.cannot_reach(&near, 200, all_same()));
        assert!(!scope.cannot_reach(&near, 200, renamed));
    }

    #[test]
    fn a_definition_writes_its_own_name() {
        let s = Summary::of(&[], Some("f"), 10);
        assert_eq!(s.writes, name_bit("f"));
        let forget = Summary::of(
            &[Event::Write(Write::ForgetReturn { name: "g".into() })],
            None,
            10,
        );
        assert_eq!(forget.writes, name_bit("g"));
    }
}

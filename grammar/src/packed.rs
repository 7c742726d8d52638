//! Diagnostics packed into bytes, for a caller that only reports them
//! (`mapwright check`): a [`Diagnostic`] is 152 bytes plus its message,
//! label, notes and fixes (300-450 bytes in all), and 1 KB of bad lines
//! carries about 190 of them, so holding them as values costs 40-90 times
//! the input. Packed, a diagnostic is a few bytes of varints, and its texts
//! are stored once per distinct text (a file full of the same mistake
//! repeats the same message, label, note and fix title). A record whose
//! body (all but its code, severity and span) equals an earlier one's
//! refers to that body: the same mistake made again costs its span and a
//! reference, 6-8 bytes (1 KB of bad lines: 3.0 KB of records before,
//! see `PackedDiagnostics::push_in` and `earlier_body`).
//!
//! [`PackedDiagnostics::get`] builds the diagnostic back, equal to the one
//! pushed; a reporter reads them one at a time ([`merged`]), so the whole
//! list never exists as values.
//!
//! A diagnostic that is a function of its span and the source alone (a run
//! of unrecognized characters, whose message quotes them) is kept as its
//! span and the function that builds it ([`PackedDiagnostics::push_rebuilt`]),
//! and built again from the source when read: such messages are each one
//! of a kind, and 1 KB of random bytes holds about 120 of them (5 KB of
//! text, stored once each, was half of what checking it held).

use crate::diagnostic::{Applicability, Diagnostic, Fix, Related, Severity, TextEdit};
use crate::Span;

/// Diagnostics as bytes, in the order pushed (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct PackedDiagnostics {
    /// The records, one after another (see [`PackedDiagnostics::push`]).
    bytes: Vec<u8>,
    /// Where each record starts in `bytes`, in the list's order.
    starts: Vec<u32>,
    /// The distinct codes (a handful per file), by index.
    codes: Vec<&'static str>,
    /// The distinct functions that build a rebuilt record's diagnostic
    /// (see [`PackedDiagnostics::push_rebuilt`]), by index.
    builders: Vec<Rebuild>,
    /// The distinct texts, one after another, and where each ends.
    texts: String,
    text_ends: Vec<u32>,
    /// Recently stored texts by their hash ([`TEXT_CACHE`] slots, each
    /// text in one of [`WAYS`]; text number + 1, 0 when empty, marked once
    /// found again), so that a repeated text is stored once. Bounded, not
    /// a map of every text:
    /// most texts are either shared by many diagnostics (a label, a note, a
    /// fix title) or by none (a message naming its variable), and a map
    /// would hold an entry for each of the latter too. A text whose slot
    /// was taken by another is stored again: correct, only not shared.
    text_cache: Vec<u16>,
    /// Where recently written bodies start in `bytes` ([`BODY_CACHE`]
    /// slots, each body in one of [`WAYS`], marked once found again), so that a
    /// record whose body (all but its code, severity and span) equals one
    /// written before refers to it instead of repeating it (see
    /// [`PackedDiagnostics::push`]).
    body_cache: Vec<u32>,
}

/// Slots of [`PackedDiagnostics::text_cache`]: at first, and at most (it
/// grows with the diagnostics, see [`PackedDiagnostics::grow_text_cache`]).
const TEXT_CACHE: usize = 128;
const TEXT_CACHE_MAX: usize = 8192;

/// The first of the cache slots of a text of hash `hash`, among `len`
/// (a power of two).
fn cache_slot(hash: u64, len: usize) -> usize {
    (hash >> 40) as usize & (len - 1)
}

/// The [`WAYS`] slots an entry of hash `hash` may sit in, among `len`: an
/// aligned group, so that a few texts many diagnostics share (a label, a
/// note, the templates) cannot fill every slot a text may take (with two,
/// one file's `never used` was stored fifty times).
fn cache_slots(hash: u64, len: usize) -> [usize; WAYS] {
    let first = cache_slot(hash, len);
    std::array::from_fn(|k| first ^ k)
}

/// How many slots of a cache an entry may sit in.
const WAYS: usize = 4;

/// The mark of a cached text found again (see [`PackedDiagnostics::text`]).
const SHARED: u16 = 0x8000;

/// Slots of [`PackedDiagnostics::body_cache`]: a file's diagnostics share
/// a few bodies (one per kind of mistake and name), so the slots do not
/// grow.
const BODY_CACHE: usize = 64;

/// The mark of a cached body found again.
const BODY_SHARED: u32 = 0x8000_0000;

/// The bit of a stored record's severity byte that says its body is
/// elsewhere: the record ends with where that body starts.
const BODY_ELSEWHERE: u8 = 0x80;

/// Builds a diagnostic from its span and the source it was found in: the
/// whole diagnostic (code, severity, message, notes, fixes) must follow
/// from those two, for [`PackedDiagnostics::push_rebuilt`].
pub type Rebuild = fn(Span, &str) -> Diagnostic;

/// The byte that takes a severity's place in a rebuilt record.
const REBUILT: u8 = 0xff;

impl PackedDiagnostics {
    /// How many diagnostics are held.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True when none are held.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Adds `d` at the end of the list.
    pub fn push(&mut self, d: &Diagnostic) {
        self.push_in(d, "");
    }

    /// Begins a record at the end of the bytes.
    fn start_record(&mut self) {
        gently(&mut self.starts, 1);
        gently(&mut self.bytes, 48);
        self.starts.push(self.bytes.len() as u32);
    }

    /// Adds `d`, found in `source`, at the end of the list: its texts
    /// that quote the text at its span (a name, a token) are stored with a
    /// placeholder there, shared by every diagnostic of that kind, and
    /// [`PackedDiagnostics::get`] puts the span's text back from the
    /// source it is given (which must be this `source`).
    pub fn push_in(&mut self, d: &Diagnostic, source: &str) {
        // The lists grow by a quarter, not double: on a small file the
        // diagnostics are much of what `mapwright check` holds, and a
        // doubling leaves up to half of each empty (and holds the old and
        // the new block while it moves).
        self.start_record();
        let code = index_in(&mut self.codes, d.code, |a, b| a == b);
        self.varint(code as u64);
        let severity_at = self.bytes.len();
        self.bytes.push(severity_byte(d.severity));
        self.span(d.span);
        // The body, written here, then replaced by where an equal body
        // starts if one was written before: a file full of the same mistake
        // has records that differ only in their span (a fix's edits are
        // written relative to the diagnostic's span, so that they match).
        let body = self.bytes.len();
        let subject = source.get(d.span.start()..d.span.end()).unwrap_or("");
        self.body(d, subject);
        if let Some(earlier) = self.earlier_body(body) {
            self.bytes.truncate(body);
            self.bytes[severity_at] |= BODY_ELSEWHERE;
            self.varint(u64::from(earlier));
        }
    }

    /// Writes all of `d` but its code, severity and span; its texts as
    /// templates of `subject`, the text at its span (see
    /// [`PackedDiagnostics::push_in`]).
    fn body(&mut self, d: &Diagnostic, subject: &str) {
        let quoting = Subjects {
            span: subject,
            edit: "",
        };
        self.text_of(&d.message, quoting);
        match &d.label {
            None => self.varint(0),
            Some(label) => {
                self.varint(1);
                self.text_of(label, quoting);
            }
        }
        self.varint(d.related.len() as u64);
        for r in &d.related {
            self.span(r.span);
            self.text_of(&r.message, quoting);
        }
        self.varint(d.notes.len() as u64);
        for note in &d.notes {
            self.text_of(note, quoting);
        }
        self.varint(d.fixes.len() as u64);
        for fix in &d.fixes {
            // A fix's title names what its first edit writes ("use `y0`").
            let edit = fix.edits.first().map_or("", |e| e.text.as_str());
            self.text_of(
                &fix.title,
                Subjects {
                    span: subject,
                    edit,
                },
            );
            self.bytes.push(match fix.applicability {
                Applicability::Safe => 0,
                Applicability::Unsafe => 1,
                Applicability::Likely => 2,
            });
            self.varint(fix.edits.len() as u64);
            for edit in &fix.edits {
                self.span_from(edit.span, d.span);
                self.text_of(&edit.text, quoting);
            }
        }
    }

    /// Where a body equal to the one just written at `body` (to the end of
    /// the bytes) starts, if one was written before and is still cached;
    /// if not, the new body is cached.
    fn earlier_body(&mut self, body: usize) -> Option<u32> {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let Ok(at) = u32::try_from(body) else {
            return None;
        };
        if at & BODY_SHARED != 0 {
            return None;
        }
        let new = &self.bytes[body..];
        let hash = BuildHasherDefault::<crate::fast_hash::FastHasher>::default().hash_one(new);
        if self.body_cache.is_empty() {
            self.body_cache = vec![0; BODY_CACHE];
        }
        let slots = cache_slots(hash, BODY_CACHE);
        for slot in slots {
            let cached = self.body_cache[slot];
            let start = (cached & !BODY_SHARED) as usize;
            // 0 is an empty slot: no body starts at byte 0 (a record
            // starts with its code and severity).
            if start != 0 && self.bytes.get(start..start + new.len()) == Some(new) {
                // Equal bytes, and the same length: the body there ends
                // where this one does, as a body's fields say where it ends.
                self.body_cache[slot] = cached | BODY_SHARED;
                return Some(start as u32);
            }
        }
        if let Some(slot) = slot_to_fill(&self.body_cache, slots, |c| c & BODY_SHARED != 0) {
            self.body_cache[slot] = at;
        }
        None
    }

    /// Adds the diagnostic `build(span, source)` at the end of the list,
    /// as `span` and `build` alone: [`PackedDiagnostics::get`] builds it
    /// from the source it is given. For diagnostics that are each one of a
    /// kind and follow from the source (see the module doc).
    pub fn push_rebuilt(&mut self, build: Rebuild, span: Span) {
        self.start_record();
        // Compared by address: a function seen under two addresses (one
        // per codegen unit) takes two entries, which is only a few bytes.
        let builder = index_in(&mut self.builders, build, |a, b| std::ptr::fn_addr_eq(a, b));
        // The layout of a stored record's first fields (see `span_at`).
        self.varint(builder as u64);
        self.bytes.push(REBUILT);
        self.span(span);
    }

    /// The `i`th diagnostic, built back as it was pushed. `source` is the
    /// text the diagnostics were found in: a rebuilt record
    /// ([`PackedDiagnostics::push_rebuilt`]) is built from it, and
    /// templates ([`PackedDiagnostics::push_in`]) are filled in from it.
    ///
    /// # Panics
    ///
    /// If `i` is out of range (callers index below [`PackedDiagnostics::len`]).
    pub fn get(&self, i: usize, source: &str) -> Diagnostic {
        let mut r = Reader {
            packed: self,
            at: self.starts[i] as usize,
        };
        let code_or_builder = r.varint();
        if r.peek() == REBUILT {
            r.byte();
            let span = r.span();
            return match self.builders.get(code_or_builder) {
                Some(build) => build(span, source),
                None => Diagnostic::error("", span, String::new()),
            };
        }
        let code = self.codes.get(code_or_builder).copied().unwrap_or("");
        let severity_byte = r.byte();
        let span = r.span();
        if severity_byte & BODY_ELSEWHERE != 0 {
            r.at = r.varint();
        }
        let severity = severity_of(severity_byte & !BODY_ELSEWHERE);
        let quoting = Subjects {
            span: source.get(span.start()..span.end()).unwrap_or(""),
            edit: "",
        };
        let mut d = Diagnostic::new(code, severity, span, r.text(quoting));
        if r.varint() == 1 {
            d.label = Some(r.text(quoting).into());
        }
        d.related = (0..r.varint())
            .map(|_| Related {
                span: r.span(),
                message: r.text(quoting).into(),
            })
            .collect();
        d.notes = (0..r.varint()).map(|_| r.text(quoting).into()).collect();
        d.fixes = (0..r.varint())
            .map(|_| {
                // The title is filled in from the first edit, read after it.
                let title = r.varint();
                let applicability = match r.byte() {
                    0 => Applicability::Safe,
                    2 => Applicability::Likely,
                    _ => Applicability::Unsafe,
                };
                let edits: Vec<TextEdit> = (0..r.varint())
                    .map(|_| TextEdit {
                        span: r.span_from(span),
                        text: r.text(quoting),
                    })
                    .collect();
                let edit = edits.first().map_or("", |e| e.text.as_str());
                let title = self.text_filled(title, Subjects { edit, ..quoting });
                Fix {
                    title: title.into(),
                    edits,
                    applicability,
                }
            })
            .collect();
        d
    }

    /// The `i`th diagnostic's span, without building it.
    pub(crate) fn span_of(&self, i: usize) -> Span {
        self.span_at(self.starts[i])
    }

    /// The span of the record that starts at byte `start`.
    fn span_at(&self, start: u32) -> Span {
        let mut r = Reader {
            packed: self,
            at: start as usize,
        };
        r.varint();
        r.byte();
        r.span()
    }

    /// The `i`th diagnostic's sort key: its span's start, then its end.
    fn key(&self, i: usize) -> (usize, usize) {
        let s = self.span_of(i);
        (s.start(), s.end())
    }

    /// Sorts the list by span (start, then end), keeping the order of those
    /// at the same span, as [`crate::diagnostic::sort_by_span`] does: only
    /// the record starts move.
    pub fn sort_by_span(&mut self) {
        let n = self.starts.len();
        if (1..n).all(|i| self.key(i - 1) <= self.key(i)) {
            return;
        }
        // In place (no list of keys or of positions): records are written
        // one after another, so a record's start orders those at the same
        // span as they were pushed, and an unstable sort is stable here.
        let mut starts = std::mem::take(&mut self.starts);
        starts.sort_unstable_by_key(|&start| {
            let span = self.span_at(start);
            (span.start(), span.end(), start)
        });
        self.starts = starts;
    }

    /// Adds `d` to a list sorted by span ([`PackedDiagnostics::sort_by_span`]),
    /// after those at or before its span: where a stable sort puts a
    /// diagnostic pushed last.
    pub(crate) fn insert_by_span(&mut self, d: &Diagnostic) {
        self.push(d);
        let Some(last) = self.starts.pop() else {
            return;
        };
        let key = |start: u32| {
            let span = self.span_at(start);
            (span.start(), span.end())
        };
        let at = self
            .starts
            .partition_point(|&start| key(start) <= key(last));
        self.starts.insert(at, last);
    }

    /// Keeps the first `len` diagnostics.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.starts.truncate(len);
    }

    /// Keeps only the diagnostics numbered `records`, in that order (their
    /// bytes stay until the list is dropped).
    pub(crate) fn select(&mut self, records: &[u32]) {
        let starts: Vec<u32> = records
            .iter()
            .filter_map(|&r| self.starts.get(r as usize).copied())
            .collect();
        self.starts = starts;
    }

    /// Frees what only adding diagnostics needs, once the list is
    /// finished. The spare capacity stays: the lists grow a quarter at a
    /// time, and moving each into a block of its exact size would hold it
    /// twice for a moment, which was the peak of `mapwright check` on
    /// small files.
    pub fn finished(&mut self) {
        self.text_cache = Vec::new();
        self.body_cache = Vec::new();
    }

    /// LEB128: seven bits a byte, low first.
    fn varint(&mut self, mut v: u64) {
        loop {
            let low = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.bytes.push(low);
                return;
            }
            self.bytes.push(low | 0x80);
        }
    }

    fn span(&mut self, span: Span) {
        self.varint(span.start() as u64);
        // The end as a length (small), or past the start by wrapping when
        // a stale span ends before it starts.
        self.varint(u64::from(
            (span.end() as u32).wrapping_sub(span.start() as u32),
        ));
    }

    /// `span` relative to the diagnostic's span `of` (read back by
    /// `Reader::span_from`): its start from `of`'s, zigzag-coded, as an edit
    /// is usually at or near the diagnostic.
    fn span_from(&mut self, span: Span, of: Span) {
        let from = i64::from(span.start() as u32) - i64::from(of.start() as u32);
        self.varint(((from << 1) ^ (from >> 63)) as u64);
        self.varint(u64::from(
            (span.end() as u32).wrapping_sub(span.start() as u32),
        ));
    }

    /// Stores `text`, or its template when it quotes `subjects`
    /// ([`template`]), and writes its number and which of the two it is.
    fn text_of(&mut self, text: &str, subjects: Subjects<'_>) {
        match template(text, subjects) {
            Some(template) => self.text(&template, true),
            None => self.text(text, false),
        }
    }

    /// Stores `text` (once per distinct text) and writes its number, and
    /// in the low bit whether it is a template.
    fn text(&mut self, text: &str, template: bool) {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let hash = BuildHasherDefault::<crate::fast_hash::FastHasher>::default().hash_one(text);
        if self.text_cache.is_empty() {
            self.text_cache = vec![0; TEXT_CACHE];
        } else if self.starts.len() >= 2 * self.text_cache.len()
            && self.text_cache.len() < TEXT_CACHE_MAX
        {
            self.grow_text_cache();
        }
        // The slots a text may sit in; a text found again is marked
        // (`SHARED`) and keeps its slot, so the few texts many diagnostics
        // share (labels, notes, fix titles) are not pushed out by the many
        // each diagnostic has alone (a message naming its variable).
        let slots = cache_slots(hash, self.text_cache.len());
        for slot in slots {
            let cached = self.text_cache[slot];
            if let Some(id) = (cached & !SHARED).checked_sub(1) {
                if self.text_at(usize::from(id)) == text {
                    self.text_cache[slot] = cached | SHARED;
                    self.varint(u64::from(id) << 1 | u64::from(template));
                    return;
                }
            }
        }
        if self.texts.capacity() - self.texts.len() < text.len() {
            let more = (self.texts.len() / 4).max(text.len()).max(64);
            self.texts.reserve_exact(more);
        }
        gently(&mut self.text_ends, 1);
        self.texts.push_str(text);
        self.text_ends.push(self.texts.len() as u32);
        let id = self.text_ends.len() as u32 - 1;
        // Past 32,767 texts the later ones are not cached.
        let free = slot_to_fill(&self.text_cache, slots, |c| c & SHARED != 0);
        if let (Ok(cached), Some(slot)) = (u16::try_from(id + 1), free) {
            if cached & SHARED == 0 {
                self.text_cache[slot] = cached;
            }
        }
        self.varint(u64::from(id) << 1 | u64::from(template));
    }

    /// Four times the slots (up to [`TEXT_CACHE_MAX`]), holding the texts
    /// found again so far and then every text stored, the latest first: a
    /// list of many diagnostics has many texts that recur (a note naming a
    /// function, say), more than the first slots keep, and left out they
    /// were stored again each time (the corpus's diagnostics held 20 %
    /// more bytes).
    fn grow_text_cache(&mut self) {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let len = (self.text_cache.len() * 4).min(TEXT_CACHE_MAX);
        let old = std::mem::replace(&mut self.text_cache, vec![0; len]);
        let shared = old.iter().filter(|&&c| c & SHARED != 0).copied();
        let stored = (1..=self.text_ends.len().min(usize::from(!SHARED)))
            .rev()
            .map(|id| id as u16);
        for cached in shared.chain(stored) {
            let text = self.text_at(usize::from((cached & !SHARED) - 1));
            let hash = BuildHasherDefault::<crate::fast_hash::FastHasher>::default().hash_one(text);
            let slots = cache_slots(hash, len);
            if slots
                .iter()
                .any(|&slot| self.text_cache[slot] & !SHARED == cached & !SHARED)
            {
                continue;
            }
            if let Some(slot) = slots.into_iter().find(|&slot| self.text_cache[slot] == 0) {
                self.text_cache[slot] = cached;
            }
        }
    }

    /// Text `id` as [`PackedDiagnostics::text`] wrote it (number and
    /// template bit), a template filled in with `subjects`.
    fn text_filled(&self, id: usize, subjects: Subjects<'_>) -> String {
        let text = self.text_at(id >> 1);
        if id & 1 == 0 {
            text.to_string()
        } else {
            fill(text, subjects)
        }
    }

    fn text_at(&self, id: usize) -> &str {
        let start = match id {
            0 => 0,
            _ => self.text_ends.get(id - 1).copied().unwrap_or(0) as usize,
        };
        let end = self.text_ends.get(id).copied().unwrap_or(0) as usize;
        self.texts.get(start..end).unwrap_or("")
    }
}

/// Which of its `slots` in `cache` a new entry takes: an empty one first
/// (two entries of one slot that take turns would each push the other out
/// and be stored again every time), else one not marked shared; none when
/// all are.
fn slot_to_fill<T: Copy + Default + PartialEq>(
    cache: &[T],
    slots: [usize; WAYS],
    is_shared: impl Fn(T) -> bool,
) -> Option<usize> {
    let empty = slots.into_iter().find(|&slot| cache[slot] == T::default());
    empty.or_else(|| slots.into_iter().find(|&slot| !is_shared(cache[slot])))
}

/// What a template's texts quote: the text at the diagnostic's span, and
/// (in a fix's title) what the fix's first edit writes.
#[derive(Debug, Clone, Copy)]
struct Subjects<'s> {
    span: &'s str,
    edit: &'s str,
}

/// What stand for [`Subjects::span`] and [`Subjects::edit`] in a
/// template: control characters that diagnostics do not contain (a text
/// or a subject that does is not made a template).
const SPAN_PLACEHOLDER: char = '\u{1}';
const EDIT_PLACEHOLDER: char = '\u{2}';

fn is_placeholder(c: char) -> bool {
    c == SPAN_PLACEHOLDER || c == EDIT_PLACEHOLDER
}

/// `text` with each whole-word occurrence of the subjects replaced by
/// their placeholders, if there is one: "`q7` not found" at a span holding
/// `q7` is "`\u{1}` not found", the same for every undefined name, and
/// the title "use `y7`" of a fix writing `y7` is "use `\u{2}`". Whole
/// words only, so that a short subject (`e`) is not found inside words.
/// [`fill`] with the same subjects gives `text` back.
fn template(text: &str, subjects: Subjects<'_>) -> Option<String> {
    if [text, subjects.span, subjects.edit]
        .iter()
        .any(|t| t.contains(is_placeholder))
    {
        return None;
    }
    let once = replace_words(text, subjects.span, SPAN_PLACEHOLDER);
    let twice = replace_words(
        once.as_deref().unwrap_or(text),
        subjects.edit,
        EDIT_PLACEHOLDER,
    );
    twice.or(once)
}

/// `text` with each whole-word occurrence of `subject` replaced by
/// `placeholder`, if there is one.
fn replace_words(text: &str, subject: &str, placeholder: char) -> Option<String> {
    if subject.is_empty() || text.len() < subject.len() {
        return None;
    }
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::new();
    let mut copied = 0;
    for (at, _) in text.match_indices(subject) {
        let before = text[..at].chars().next_back();
        let after = text[at + subject.len()..].chars().next();
        if is_word(before) || is_word(after) {
            continue;
        }
        out.push_str(&text[copied..at]);
        out.push(placeholder);
        copied = at + subject.len();
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// A [`template`] filled in with its subjects, in one pass (a subject's
/// own text is never read as a placeholder).
fn fill(template: &str, subjects: Subjects<'_>) -> String {
    let mut out = String::with_capacity(template.len() + subjects.span.len());
    for c in template.chars() {
        match c {
            SPAN_PLACEHOLDER => out.push_str(subjects.span),
            EDIT_PLACEHOLDER => out.push_str(subjects.edit),
            c => out.push(c),
        }
    }
    out
}

/// Where `item` is in `list` (equal by `eq`), added at the end if it is
/// not there: the few codes and builders of a list, by number.
fn index_in<T: Copy>(list: &mut Vec<T>, item: T, eq: impl Fn(T, T) -> bool) -> usize {
    match list.iter().position(|&t| eq(t, item)) {
        Some(i) => i,
        None => {
            list.push(item);
            list.len() - 1
        }
    }
}

/// Makes room in `list` for `at_least` more elements, a quarter of its
/// length at a time (see [`PackedDiagnostics::push`]).
fn gently<T>(list: &mut Vec<T>, at_least: usize) {
    if list.capacity() - list.len() < at_least {
        list.reserve_exact((list.len() / 4).max(at_least).max(16));
    }
}

fn severity_of(byte: u8) -> Severity {
    match byte {
        0 => Severity::Error,
        1 => Severity::Warning,
        2 => Severity::Info,
        _ => Severity::Hint,
    }
}

fn severity_byte(s: Severity) -> u8 {
    match s {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
        Severity::Hint => 3,
    }
}

/// Reads one record back (see [`PackedDiagnostics::get`]).
struct Reader<'a> {
    packed: &'a PackedDiagnostics,
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> u8 {
        self.packed.bytes.get(self.at).copied().unwrap_or(0)
    }

    fn byte(&mut self) -> u8 {
        let b = self.packed.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn varint(&mut self) -> usize {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte();
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 || shift >= 64 {
                return v as usize;
            }
        }
    }

    fn span(&mut self) -> Span {
        let start = self.varint() as u32;
        let len = self.varint() as u32;
        Span::new(start as usize, start.wrapping_add(len) as usize)
    }

    /// A span written relative to the diagnostic's span `of` (see
    /// [`PackedDiagnostics::body`]).
    fn span_from(&mut self, of: Span) -> Span {
        let zigzag = self.varint() as u64;
        let from = (zigzag >> 1) as i64 ^ -((zigzag & 1) as i64);
        let start = (i64::from(of.start() as u32) + from) as u32;
        let len = self.varint() as u32;
        Span::new(start as usize, start.wrapping_add(len) as usize)
    }

    /// A text, a template filled in with `subjects` (see
    /// [`PackedDiagnostics::push_in`]).
    fn text(&mut self, subjects: Subjects<'_>) -> String {
        let id = self.varint();
        self.packed.text_filled(id, subjects)
    }
}

/// The diagnostics of lists each sorted by span, one at a time, in the
/// order a stable sort of the lists one after another would give (at
/// equal spans the earlier list's come first): what
/// [`crate::Analysis::into_diagnostics`] returns, without building the list.
/// `source` is the text the diagnostics were found in (see
/// [`PackedDiagnostics::get`]).
pub fn merged<'a, const N: usize>(
    lists: [&'a PackedDiagnostics; N],
    source: &'a str,
) -> impl Iterator<Item = Diagnostic> + 'a {
    let mut next = [0usize; N];
    std::iter::from_fn(move || {
        let mut best: Option<(usize, (usize, usize))> = None;
        for (l, list) in lists.iter().enumerate() {
            if next[l] < list.len() {
                let key = list.key(next[l]);
                if best.is_none_or(|(_, k)| key < k) {
                    best = Some((l, key));
                }
            }
        }
        let (l, _) = best?;
        next[l] += 1;
        Some(lists[l].get(next[l] - 1, source))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: usize) -> Diagnostic {
        let span = Span::new(300 - i * 7 % 300, 300 - i * 7 % 300 + i % 5);
        let d = Diagnostic::error("E0100", span, format!("message {}", i % 3));
        match i % 4 {
            0 => d.with_label("here").with_note("a note"),
            1 => d
                .with_related(Span::at(i), "first defined here")
                .with_fix(Fix::unsafe_(
                    "remove",
                    vec![(Span::new(1, 9), String::new())],
                )),
            2 => Diagnostic::warning("W0214", span, "unused").with_fix(Fix::safe(
                "use `z`",
                vec![
                    (Span::at(70_000), "z".into()),
                    (Span::new(5, 6), "é".into()),
                ],
            )),
            _ => d.with_fix(Fix::likely("replace", vec![(span, "y".into())])),
        }
    }

    #[test]
    fn every_diagnostic_comes_back_equal() {
        let mut packed = PackedDiagnostics::default();
        let all: Vec<Diagnostic> = (0..200).map(sample).collect();
        for d in &all {
            packed.push(d);
        }
        packed.finished();
        assert_eq!(packed.len(), all.len());
        for (i, d) in all.iter().enumerate() {
            assert_eq!(&packed.get(i, ""), d, "{i}");
        }
        // A stale span that ends before it starts survives too.
        let mut odd = PackedDiagnostics::default();
        let d = Diagnostic::error("E0001", Span::new(10, 3), "");
        odd.push(&d);
        assert_eq!(odd.get(0, ""), d);
    }

    #[test]
    fn sorting_and_merging_equal_a_stable_sort_of_the_values() {
        let first: Vec<Diagnostic> = (0..120).map(sample).collect();
        let second: Vec<Diagnostic> = (50..190).map(sample).collect();
        let pack = |list: &[Diagnostic]| {
            let mut p = PackedDiagnostics::default();
            list.iter().for_each(|d| p.push(d));
            p.sort_by_span();
            p
        };
        let (a, b) = (pack(&first), pack(&second));
        let mut expected: Vec<Diagnostic> = first.into_iter().chain(second).collect();
        expected.sort_by_key(|d| (d.span.start(), d.span.end()));
        let got: Vec<Diagnostic> = merged([&a, &b], "").collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn texts_found_again_keep_their_place_in_the_cache() {
        let mut packed = PackedDiagnostics::default();
        let all: Vec<Diagnostic> = (0..600)
            .map(|i| {
                Diagnostic::warning("W0214", Span::at(i), format!("unused variable `x{i}`"))
                    .with_label("never used")
                    .with_note("prefix the name with `_` to silence this")
            })
            .collect();
        for d in &all {
            packed.push(d);
        }
        // 600 messages, the label and the note once each.
        assert_eq!(packed.text_ends.len(), 602);
        for (i, d) in all.iter().enumerate() {
            assert_eq!(&packed.get(i, ""), d, "{i}");
        }
    }

    #[test]
    fn the_cache_grows_with_the_diagnostics_and_keeps_recurring_texts() {
        // 400 notes that each recur twelve times, far more than the first
        // slots hold: stored at most a few times each, not twelve (4,801
        // texts without the cache, 2,026 when it grew keeping only what
        // it held).
        let mut packed = PackedDiagnostics::default();
        let all: Vec<Diagnostic> = (0..4_800)
            .map(|i| {
                Diagnostic::error("E0215", Span::at(i), "again")
                    .with_note(format!("the note of function f{}", i % 400))
            })
            .collect();
        for d in &all {
            packed.push(d);
        }
        assert!(
            packed.text_cache.len() > TEXT_CACHE,
            "{}",
            packed.text_cache.len()
        );
        assert!(
            packed.text_ends.len() < 1_000,
            "{} texts",
            packed.text_ends.len()
        );
        for (i, d) in all.iter().enumerate() {
            assert_eq!(&packed.get(i, ""), d, "{i}");
        }
    }

    /// A diagnostic built from its span and the source alone.
    fn quoting(span: Span, source: &str) -> Diagnostic {
        Diagnostic::warning("W0001", span, format!("`{}`", span.text(source)))
            .with_note("built from the source")
    }

    #[test]
    fn rebuilt_records_come_back_built_from_the_source_in_their_place() {
        let source = "abcdefghijklmnopqrstuvwxyz";
        let mut packed = PackedDiagnostics::default();
        let mut expected = Vec::new();
        for i in 0..20 {
            let span = Span::new(20 - i, 20 - i + i % 3);
            if i % 2 == 0 {
                packed.push_rebuilt(quoting, span);
                expected.push(quoting(span, source));
            } else {
                let d = sample(i);
                packed.push(&d);
                expected.push(d);
            }
        }
        // Nothing of a rebuilt record is stored as text.
        assert!(!packed.texts.contains('`'), "{}", packed.texts);
        assert_eq!(packed.builders.len(), 1);
        for (i, d) in expected.iter().enumerate() {
            assert_eq!(&packed.get(i, source), d, "{i}");
        }
        packed.sort_by_span();
        expected.sort_by_key(|d| (d.span.start(), d.span.end()));
        let got: Vec<Diagnostic> = merged([&packed], source).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn the_same_mistake_again_refers_to_the_first_body() {
        let mistake = |at: usize| {
            Diagnostic::error("E0201", Span::new(at, at + 1), "`q` not found")
                .with_label("undefined name")
                .with_related(Span::new(3, 4), "first defined here")
                .with_fix(Fix::safe(
                    "use `z`",
                    vec![
                        (Span::new(at, at + 1), "z".into()),
                        // Before the diagnostic, and a stale edit.
                        (Span::new(at - 2, at - 1), String::new()),
                        (Span::new(at + 9, at + 4), ";".into()),
                    ],
                ))
        };
        let mut packed = PackedDiagnostics::default();
        let all: Vec<Diagnostic> = (0..300).map(|i| mistake(1_000 + 37 * i)).collect();
        for d in &all {
            packed.push(d);
        }
        // Code, severity, a two-byte start, length, a one- or two-byte
        // reference: at most 7 bytes a record once the first is written
        // (the body alone is 21).
        assert!(packed.bytes.len() < 40 + 7 * 300, "{}", packed.bytes.len());
        for (i, d) in all.iter().enumerate() {
            assert_eq!(&packed.get(i, ""), d, "{i}");
        }
        // Different bodies are not shared.
        let mut other = mistake(50);
        other.fixes[0].edits[1].text = "x".into();
        packed.push(&other);
        assert_eq!(packed.get(300, ""), other);
    }

    #[test]
    fn two_texts_of_one_slot_taking_turns_are_each_stored_once() {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let slot = |text: &str| {
            let hash = BuildHasherDefault::<crate::fast_hash::FastHasher>::default().hash_one(text);
            cache_slot(hash, TEXT_CACHE)
        };
        let first = "text 0".to_string();
        let second = (1..)
            .map(|i| format!("text {i}"))
            .find(|t| slot(t) == slot(&first))
            .unwrap();
        let mut packed = PackedDiagnostics::default();
        for i in 0..20 {
            let text = if i % 2 == 0 { &first } else { &second };
            packed.push(&Diagnostic::error("E0100", Span::at(i), text.clone()));
        }
        assert_eq!(packed.text_ends.len(), 2, "{}", packed.texts);
    }

    #[test]
    fn texts_that_quote_the_span_are_shared_templates() {
        let source = "y0 = q0 + w0; e = q0e; q\u{1} = 1;";
        let undefined = |name: &str| {
            let at = source.find(name).unwrap();
            let span = Span::new(at, at + name.len());
            Diagnostic::error("E0201", span, format!("`{name}` not found"))
                .with_note(format!("the reference aborts with \"{name} not found\""))
                .with_fix(Fix::safe("use `y0`", vec![(span, "y0".into())]))
        };
        let mut packed = PackedDiagnostics::default();
        let all = [
            undefined("q0"),
            undefined("w0"),
            undefined("q0e"),
            // Not a whole word of the message: stored as it is.
            undefined("e"),
            Diagnostic::error("E0100", Span::new(0, 1), "expected `y`, found `yy`"),
            // A text holding the placeholder is stored as it is.
            undefined("q\u{1}"),
        ];
        for d in &all {
            packed.push_in(d, source);
        }
        for (i, d) in all.iter().enumerate() {
            assert_eq!(&packed.get(i, source), d, "{i}");
        }
        // One message and one note for the first three, and the fix's
        // title and text.
        assert!(!packed.texts.contains("q0"), "{}", packed.texts);
        let span = |t| Subjects { span: t, edit: "" };
        assert_eq!(
            template("`e` not found in e", span("e")).as_deref(),
            Some("`\u{1}` not found in \u{1}")
        );
        assert_eq!(template("the reference", span("e")), None);
        assert_eq!(template("`q\u{1}`", span("q\u{1}")), None);
        // A fix's title names what its first edit writes.
        // (Stored as it is only for the subject holding a placeholder.)
        assert_eq!(
            packed.texts.matches("use `y0`").count(),
            1,
            "{}",
            packed.texts
        );
        assert!(packed.texts.contains("use `\u{2}`"), "{}", packed.texts);
        let both = |span, edit| Subjects { span, edit };
        assert_eq!(
            template("use `y0` for `q0`", both("q0", "y0")).as_deref(),
            Some("use `\u{2}` for `\u{1}`")
        );
        assert_eq!(template("use `y0`", both("q0", "y\u{2}")), None);
        for (text, subjects) in [
            ("use `q0`", both("q0", "q0")),
            ("`a` a_a a `b`", both("a", "b")),
            ("x", both("", "")),
        ] {
            let got = template(text, subjects).map_or(text.to_string(), |t| fill(&t, subjects));
            assert_eq!(got, text);
        }
    }

    #[test]
    fn repeated_texts_are_stored_once() {
        let mut packed = PackedDiagnostics::default();
        for i in 0..100 {
            packed.push(&sample(4 * i));
        }
        assert_eq!(packed.text_ends.len(), 5, "{:?}", packed.texts);
    }
}

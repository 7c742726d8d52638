//! "Did you mean" suggestions: the closest candidate by edit distance.

use std::sync::{Arc, OnceLock};

use crate::fast_hash::FastMap;

/// Levenshtein distance between two short strings (ASCII-case-sensitive).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The edit distance between `a` and `b` if it is at most `limit`: the
/// dynamic programme stops as soon as a whole row exceeds the limit, and
/// the rows live in `rows` (reused across calls).
fn bounded_distance(a: &[u8], b: &[u8], limit: usize, rows: &mut Vec<usize>) -> Option<usize> {
    let n = b.len() + 1;
    rows.clear();
    rows.extend(0..n);
    rows.extend(std::iter::repeat_n(0, n));
    let (prev, cur) = rows.split_at_mut(n);
    let (mut prev, mut cur) = (prev, cur);
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        let mut row_min = cur[0];
        for j in 1..n {
            let cost = usize::from(ca != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            row_min = row_min.min(cur[j]);
        }
        if row_min > limit {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    Some(prev[n - 1]).filter(|d| *d <= limit)
}

/// The edit distance between two lower-cased words if it is at most
/// `bound`: the bounded byte-wise programme for ASCII, the full one
/// otherwise.
fn distance_within(a: &str, b: &str, bound: usize, rows: &mut Vec<usize>) -> Option<usize> {
    if a.is_ascii() && b.is_ascii() {
        bounded_distance(a.as_bytes(), b.as_bytes(), bound, rows)
    } else {
        Some(edit_distance(a, b)).filter(|d| *d <= bound)
    }
}

/// The candidate closest to `word`: an exact case-insensitive match first,
/// otherwise the smallest edit distance within a third of the word's length.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.len() / 3).max(1);
    let lower = word.to_ascii_lowercase();
    let mut rows = Vec::new();
    let mut candidate_lower = String::new();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c.eq_ignore_ascii_case(word) {
            return Some(c);
        }
        // Lengths differing by more than the limit cannot be within it.
        if c.len().abs_diff(word.len()) > limit {
            continue;
        }
        candidate_lower.clear();
        candidate_lower.extend(c.chars().map(|ch| ch.to_ascii_lowercase()));
        let bound = best.map_or(limit, |(d, _)| d.saturating_sub(1));
        let d = distance_within(&lower, &candidate_lower, bound, &mut rows);
        if let Some(d) = d {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Whether `best` ([`closest`]'s answer for `word`) is the only candidate
/// that near: it differs from `word` in case alone, or every other
/// candidate is farther. (`TPU` is one edit from both `CPU` and `GPU`:
/// `closest` answers the first, which is a coin toss, not a correction.)
pub fn sole_nearest<'a>(
    word: &str,
    best: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> bool {
    if word.eq_ignore_ascii_case(best) {
        return true;
    }
    let lower = word.to_ascii_lowercase();
    let mut rows = Vec::new();
    let Some(nearest) = distance_within(&lower, &best.to_ascii_lowercase(), usize::MAX, &mut rows)
    else {
        return false;
    };
    candidates.into_iter().all(|c| {
        c == best || distance_within(&lower, &c.to_ascii_lowercase(), nearest, &mut rows).is_none()
    })
}

/// [`closest`] over one fixed candidate list, asked many times: the checker
/// asks it once per undefined name, and a big file has thousands of names
/// and hundreds of undefined ones, so lower-casing every candidate and
/// scanning all of them for every question dominated a keystroke's check.
/// The candidates are lower-cased once and sorted by length, so a question
/// only looks at the lengths within its limit. Answers are exactly those of
/// [`closest`] over the same list (ties go to the earlier candidate).
pub struct Suggester<'a> {
    names: Vec<&'a str>,
    index: ByLength,
}

impl<'a> Suggester<'a> {
    /// Index `candidates`, keeping their order for ties.
    pub fn new(candidates: impl IntoIterator<Item = &'a str>) -> Self {
        let names: Vec<&'a str> = candidates.into_iter().collect();
        let index = ByLength::new(&names);
        Suggester { names, index }
    }

    /// The candidate [`closest`] would pick for `word`.
    pub fn closest(&self, word: &str) -> Option<&'a str> {
        self.index.closest(word).map(|i| self.names[i])
    }
}

/// `candidates` (each a name, through `name`) sorted by length, then by
/// name, without duplicate names: the list [`closest_in_sorted`] asks.
pub(crate) fn sort_by_length_then_name<'c, T>(
    candidates: &mut Vec<T>,
    name: impl Fn(&T) -> &'c str,
) {
    candidates.sort_unstable_by(|a, b| {
        let (a, b) = (name(a), name(b));
        a.len().cmp(&b.len()).then(a.cmp(b))
    });
    candidates.dedup_by(|a, b| name(a) == name(b));
}

/// Where in `candidates` the name is that [`Suggestions`] over them
/// answers for `word`, asked over the candidates as they are, with no
/// index: `candidates` (each a name, through `name`) must be sorted by
/// [`sort_by_length_then_name`]. For a caller that asks once per word and
/// holds the names only as places in the text (the streaming check: an
/// index holds a lower-cased copy of every name, and the answers a map of
/// them, several times a small file).
pub(crate) fn closest_in_sorted<'c, T>(
    word: &str,
    candidates: &[T],
    name: impl Fn(&T) -> &'c str,
) -> Option<usize> {
    let limit = (word.len() / 3).max(1);
    // The lengths within the limit, as `ByLength::closest` looks at; ties
    // go to the name that sorts first, its earlier candidate.
    let from = candidates.partition_point(|c| name(c).len() + limit < word.len());
    let to = candidates.partition_point(|c| name(c).len() <= word.len() + limit);
    let window = candidates[from..to].iter().map(&name).enumerate();
    if let Some((i, _)) = window
        .clone()
        .filter(|(_, c)| c.eq_ignore_ascii_case(word))
        .min_by(|(_, a), (_, b)| a.cmp(b))
    {
        return Some(from + i);
    }
    let lower = word.to_ascii_lowercase();
    let mut candidate_lower = String::new();
    let mut rows = Vec::new();
    let mut best: Option<(usize, &str, usize)> = None;
    for (i, candidate) in window {
        candidate_lower.clear();
        candidate_lower.push_str(candidate);
        candidate_lower.make_ascii_lowercase();
        let bound = best.map_or(limit, |(d, ..)| d);
        if let Some(d) = distance_within(&lower, &candidate_lower, bound, &mut rows) {
            if best.is_none_or(|(bd, bc, _)| (d, candidate) < (bd, bc)) {
                best = Some((d, candidate, from + i));
            }
        }
    }
    best.map(|(.., i)| i)
}

/// A [`Suggester`]'s index, without the candidates: each one's byte
/// length, position in the caller's order and lower-cased text, sorted by
/// length then position. [`Suggestions`] keeps one for its candidates.
/// The lower-cased texts are kept one after another in one string (a
/// `Box<str>` each was thousands of allocations whenever a keystroke made
/// the index again: a definition's name edited, then a new undefined word).
#[derive(Debug)]
struct ByLength {
    /// (length, position, where its lower-cased text starts in `lower`).
    by_len: Vec<(u32, u32, u32)>,
    lower: String,
}

impl ByLength {
    fn new(candidates: &[&str]) -> ByLength {
        let mut lower = String::with_capacity(candidates.iter().map(|c| c.len()).sum());
        let mut by_len: Vec<(u32, u32, u32)> = Vec::with_capacity(candidates.len());
        for (i, c) in candidates.iter().enumerate() {
            let start = lower.len();
            lower.push_str(c);
            lower[start..].make_ascii_lowercase();
            by_len.push((c.len() as u32, i as u32, start as u32));
        }
        by_len.sort_unstable_by_key(|&(len, i, _)| (len, i));
        ByLength { by_len, lower }
    }

    /// The lower-cased text of an entry (its length is the candidate's:
    /// ASCII lower-casing keeps every byte's length).
    fn lower(&self, (len, _, start): (u32, u32, u32)) -> &str {
        let start = start as usize;
        self.lower.get(start..start + len as usize).unwrap_or("")
    }

    /// The position of the candidate [`closest`] would pick for `word`.
    fn closest(&self, word: &str) -> Option<usize> {
        let limit = (word.len() / 3).max(1);
        let lower = word.to_ascii_lowercase();
        let from = self
            .by_len
            .partition_point(|&(len, ..)| len as usize + limit < word.len());
        let to = self
            .by_len
            .partition_point(|&(len, ..)| len as usize <= word.len() + limit);
        let window = &self.by_len[from..to];
        // An exact case-insensitive match wins outright, the earliest first
        // (it has the word's length, so it is in the window).
        if let Some(&(_, i, _)) = window
            .iter()
            .filter(|&&e| self.lower(e) == lower)
            .min_by_key(|&&(_, i, _)| i)
        {
            return Some(i as usize);
        }
        let mut rows = Vec::new();
        let mut best: Option<(usize, usize)> = None;
        for &e in window {
            let i = e.1 as usize;
            let bound = best.map_or(limit, |(d, _)| d);
            let d = distance_within(&lower, self.lower(e), bound, &mut rows);
            if let Some(d) = d {
                if best.is_none_or(|(bd, bi)| (d, i) < (bd, bi)) {
                    best = Some((d, i));
                }
            }
        }
        best.map(|(_, i)| i)
    }
}

/// The answers of a [`Suggester`] for many words, kept for the next call
/// with a slightly different candidate list: a keystroke usually changes no
/// name, or one, so the undefined names' suggestions are updated from the
/// names added and removed instead of asked again over thousands of names.
/// When no name changed, the candidates are not even sorted again, and
/// when no undefined name changed either, the answers are shared as they
/// are (sorting the names and copying them and the answers was 6 % of a
/// keystroke's analysis on a 5,000-line file). When a few names changed in
/// one place, the previous order is updated rather than all sorted again
/// (`Suggestions::sorted_after_small_change`), and the names are kept in
/// one allocation (`NameList`): together 8 % of the check before.
#[derive(Debug, Clone, Default)]
pub struct Suggestions {
    /// The candidates as last given (in the caller's order, duplicates
    /// included).
    given: Arc<NameList>,
    /// Where the second part of `given` begins (see
    /// [`Suggestions::new_in_parts`]).
    split: usize,
    /// Indices into `given`, sorted by name, without duplicates.
    sorted: Arc<[u32]>,
    /// The index of the `sorted` candidates for asking a new word, made on
    /// first use and kept while the candidates stay the same: a keystroke
    /// in a name makes a new undefined word, and lower-casing and sorting
    /// thousands of names again for it was 5 % of the keystroke's check.
    everyone: Arc<OnceLock<ByLength>>,
    answers: Arc<FastMap<Box<str>, Option<Box<str>>>>,
}

/// Names in one allocation: their texts one after another, and where each
/// ends. (A `Box<str>` each was thousands of allocations per keystroke.)
#[derive(Debug, Default)]
struct NameList {
    text: String,
    ends: Vec<u32>,
}

impl NameList {
    fn new(names: &[&str]) -> NameList {
        let mut list = NameList {
            text: String::with_capacity(names.iter().map(|n| n.len()).sum()),
            ends: Vec::with_capacity(names.len()),
        };
        for name in names {
            list.text.push_str(name);
            list.ends.push(list.text.len() as u32);
        }
        list
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Name `i` (the empty name past the end).
    fn name(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 {
            0
        } else {
            self.ends.get(i - 1).copied().unwrap_or(0) as usize
        };
        let end = self.ends.get(i).copied().map_or(start, |e| e as usize);
        self.text.get(start..end).unwrap_or("")
    }
}

/// Past this many added or removed candidates, every word is asked again.
const MAX_CHANGED: usize = 64;

/// How one part of a candidate list (its globals, or the rest) changed:
/// the same names before and after one run, which was `old_run` in the
/// old list and is `new_run` in the new one.
struct PartChange {
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
    old_run: std::ops::Range<usize>,
    new_run: std::ops::Range<usize>,
}

impl PartChange {
    /// The change from `old[old_part]` to `new[new_part]`.
    fn new(
        old: &NameList,
        new: &NameList,
        old_part: std::ops::Range<usize>,
        new_part: std::ops::Range<usize>,
    ) -> PartChange {
        let (m, n) = (old_part.len(), new_part.len());
        let same = |i: usize, j: usize| old.name(i as u32) == new.name(j as u32);
        let prefix = (0..m.min(n))
            .take_while(|&k| same(old_part.start + k, new_part.start + k))
            .count();
        let suffix = (0..m.min(n) - prefix)
            .take_while(|&k| same(old_part.end - 1 - k, new_part.end - 1 - k))
            .count();
        PartChange {
            old_run: old_part.start + prefix..old_part.end - suffix,
            new_run: new_part.start + prefix..new_part.end - suffix,
            old: old_part,
            new: new_part,
        }
    }

    /// Where old index `i` (of this part) is in the new list, if outside
    /// the run.
    fn moved(&self, i: usize) -> Option<u32> {
        let j = if i < self.old_run.start {
            self.new.start + (i - self.old.start)
        } else if i >= self.old_run.end {
            self.new.end - (self.old.end - i)
        } else {
            return None;
        };
        u32::try_from(j).ok()
    }
}

impl Suggestions {
    /// What [`Suggester::closest`] over `candidates` (in any order, with
    /// duplicates: they are sorted and deduplicated first) answers for
    /// each of `words`, reusing `previous`'s answers where the change of
    /// candidates cannot have changed them.
    pub fn new<'w>(
        previous: Option<&Suggestions>,
        candidates: &[&str],
        words: impl Iterator<Item = &'w str> + Clone,
    ) -> Suggestions {
        Suggestions::new_in_parts(previous, candidates, candidates.len(), words)
    }

    /// [`Suggestions::new`] for candidates in two parts, `candidates[..split]`
    /// and the rest (a file's globals and its other names), each of which
    /// a keystroke may change in one place.
    pub fn new_in_parts<'w>(
        previous: Option<&Suggestions>,
        candidates: &[&str],
        split: usize,
        words: impl Iterator<Item = &'w str> + Clone,
    ) -> Suggestions {
        let same_candidates = previous.filter(|p| {
            p.given.len() == candidates.len()
                && (0..candidates.len()).all(|i| p.given.name(i as u32) == candidates[i])
        });
        if let Some(p) = same_candidates {
            return p.same_candidates(words);
        }
        let given = Arc::new(NameList::new(candidates));
        // After a small change the previous order is updated; otherwise
        // (or with no previous) the candidates are sorted.
        let (sorted, changed) =
            match previous.and_then(|p| p.sorted_after_small_change(&given, split)) {
                Some((sorted, added, removed)) => (sorted, Some((added, removed))),
                None => {
                    let mut sorted: Vec<u32> = (0..given.len() as u32).collect();
                    sorted.sort_unstable_by(|&a, &b| given.name(a).cmp(given.name(b)));
                    sorted.dedup_by(|a, b| given.name(*a) == given.name(*b));
                    (sorted, None)
                }
            };
        let names: Vec<&str> = sorted.iter().map(|&i| given.name(i)).collect();
        let (added, removed) = changed.unwrap_or_else(|| match previous {
            Some(p) => sorted_difference(&p.sorted_names(), &names),
            // (With no previous answers, every word is asked over all
            // names: none is a newcomer.)
            None => (Vec::new(), Vec::new()),
        });
        let previous = previous.filter(|_| added.len() + removed.len() <= MAX_CHANGED);
        let newcomers = Suggester::new(added.iter().copied());
        let everyone: Arc<OnceLock<ByLength>> = Arc::default();
        let mut answers = FastMap::default();
        for word in words {
            if answers.contains_key(word) {
                continue;
            }
            let old = previous.and_then(|p| p.answers.get(word));
            let answer = match old {
                // The old answer still stands unless it was removed; only
                // a new candidate can beat it.
                Some(old)
                    if old
                        .as_ref()
                        .is_none_or(|b| removed.binary_search(&&**b).is_err()) =>
                {
                    better(word, old.as_deref(), newcomers.closest(word))
                }
                _ => everyone
                    .get_or_init(|| ByLength::new(&names))
                    .closest(word)
                    .map(|i| names[i]),
            };
            answers.insert(word.into(), answer.map(Into::into));
        }
        let sorted = sorted.into();
        Suggestions {
            given,
            split,
            sorted,
            answers: Arc::new(answers),
            everyone,
        }
    }

    /// The candidates, sorted, without duplicates.
    fn sorted_names(&self) -> Vec<&str> {
        self.sorted.iter().map(|&i| self.given.name(i)).collect()
    }

    /// The sorted candidates of `given` (whose first part, its globals,
    /// ends at `split`), and the names added and removed (sorted), from
    /// this list's, when each part of the two lists differs in one short
    /// run (a keystroke renames or adds a definition or two): the names
    /// before and after the runs keep their places, so only the runs' names
    /// are placed, not thousands sorted again. `None` for a bigger change.
    /// Why by part: a function's definition broken or mended changes the
    /// globals (its name) and the locals (its parameters), two runs far
    /// apart in the one list; seen as one change, it sorted every name
    /// again, a fifth of such a keystroke's check on a 5,000-line file.
    #[allow(clippy::type_complexity)]
    fn sorted_after_small_change<'g>(
        &self,
        given: &'g NameList,
        split: usize,
    ) -> Option<(Vec<u32>, Vec<&'g str>, Vec<&str>)> {
        let old = &*self.given;
        let (m, n) = (old.len(), given.len());
        let parts = [
            PartChange::new(old, given, 0..self.split.min(m), 0..split.min(n)),
            PartChange::new(old, given, self.split.min(m)..m, split.min(n)..n),
        ];
        let old_run: usize = parts.iter().map(|p| p.old_run.len()).sum();
        let new_run: usize = parts.iter().map(|p| p.new_run.len()).sum();
        // (Each name of the old runs is looked for in the whole new list.)
        if old_run > 16 || old_run + new_run > MAX_CHANGED {
            return None;
        }
        // Where an index of `given` has a name: the first one, if any.
        let find = |name: &str| (0..n as u32).find(|&i| given.name(i) == name);
        let mut sorted = Vec::with_capacity(self.sorted.len() + new_run);
        let mut removed = Vec::new();
        for &i in self.sorted.iter() {
            let part = &parts[usize::from(i as usize >= self.split)];
            // Outside the runs, where it is now; in one, kept if the name
            // is still given.
            match part.moved(i as usize).or_else(|| find(old.name(i))) {
                Some(j) => sorted.push(j),
                None => removed.push(old.name(i)),
            }
        }
        let mut added = Vec::new();
        for j in parts.iter().flat_map(|p| p.new_run.clone()) {
            let name = given.name(j as u32);
            if let Err(at) = sorted.binary_search_by(|&k| given.name(k).cmp(name)) {
                sorted.insert(at, j as u32);
                added.push(name);
            }
        }
        added.sort_unstable();
        removed.sort_unstable();
        Some((sorted, added, removed))
    }

    /// How many candidates were given (duplicates counted).
    pub fn candidate_count(&self) -> usize {
        self.given.len()
    }

    /// [`Suggestions::new`] for the same candidates as `self`'s (which
    /// `new` finds by comparing them, and a caller that knows they are the
    /// same, every name in the same place, asks for directly): the same
    /// answers for the words asked before, and new words asked over all
    /// candidates.
    pub fn same_candidates<'w>(&self, words: impl Iterator<Item = &'w str> + Clone) -> Suggestions {
        // Every word answered before, and as many distinct words as answers:
        // the same words.
        let mut seen: crate::fast_hash::FastSet<&str> = Default::default();
        let all_known = words.clone().all(|w| {
            seen.insert(w);
            self.answers.contains_key(w)
        });
        let answers = if all_known && seen.len() == self.answers.len() {
            self.answers.clone()
        } else {
            let mut answers = FastMap::default();
            for w in words {
                if answers.contains_key(w) {
                    continue;
                }
                let answer = match self.answers.get(w) {
                    Some(old) => old.clone(),
                    None => self
                        .everyone
                        .get_or_init(|| ByLength::new(&self.sorted_names()))
                        .closest(w)
                        .map(|i| Box::from(self.given.name(self.sorted[i]))),
                };
                answers.insert(w.into(), answer);
            }
            Arc::new(answers)
        };
        Suggestions {
            given: self.given.clone(),
            split: self.split,
            sorted: self.sorted.clone(),
            answers,
            everyone: self.everyone.clone(),
        }
    }

    /// The suggestion for `word` (one of the words it was made for).
    pub fn get(&self, word: &str) -> Option<&str> {
        self.answers.get(word).and_then(|a| a.as_deref())
    }
}

/// The one of two answers [`Suggester::closest`] prefers: an exact
/// case-insensitive match, then the smaller distance, then the earlier
/// candidate (candidates are in sorted order).
fn better<'x>(word: &str, a: Option<&'x str>, b: Option<&'x str>) -> Option<&'x str> {
    let rank = |c: &str| {
        if c.eq_ignore_ascii_case(word) {
            (0, 0)
        } else {
            (
                1,
                edit_distance(&word.to_ascii_lowercase(), &c.to_ascii_lowercase()),
            )
        }
    };
    match (a, b) {
        (Some(a), Some(b)) => Some(if (rank(b), b) < (rank(a), a) { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// The names in `new` and not in `old`, and those in `old` and not in
/// `new` (both sorted, without duplicates).
fn sorted_difference<'n, 'o>(old: &[&'o str], new: &[&'n str]) -> (Vec<&'n str>, Vec<&'o str>) {
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        match (old.get(i), new.get(j)) {
            (Some(o), Some(n)) if &**o == *n => {
                i += 1;
                j += 1;
            }
            (Some(o), Some(n)) if &**o < *n => {
                removed.push(&**o);
                i += 1;
            }
            (_, Some(n)) => {
                added.push(*n);
                j += 1;
            }
            (Some(o), None) => {
                removed.push(&**o);
                i += 1;
            }
            (None, None) => break,
        }
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nearest_spelling_is_sole_only_without_a_tie() {
        let procs = ["CPU", "GPU", "IO", "PY", "PROC", "OMP"];
        // Case alone: always the one meant.
        assert!(sole_nearest("gpu", "GPU", procs));
        // One edit from both CPU and GPU: a coin toss.
        assert_eq!(closest("TPU", procs), Some("CPU"));
        assert!(!sole_nearest("TPU", "CPU", procs));
        // One edit from GPU only.
        assert!(sole_nearest("GPX", "GPU", procs));
        let constraints = [
            "SOA", "AOS", "C_order", "F_order", "Compact", "Exact", "Align",
        ];
        assert!(sole_nearest("Corder", "C_order", constraints));
        // Farther than the answer given: not sole (a caller's mistake).
        assert!(!sole_nearest("SOA", "AOS", constraints));
    }

    #[test]
    fn updated_suggestions_answer_as_the_suggester_does() {
        let base = ["mgpu", "mcpu", "block1d", "block2d", "cyclic", "gpu", "ab"];
        let words = [
            "mgpx", "blok1d", "cyclc", "ab", "gp", "zzz", "mcpx", "block3d",
        ];
        let mut previous: Option<Suggestions> = None;
        // Unsorted, with duplicates; some steps repeat the candidates of
        // the step before, with the same or other words.
        let steps: [(&[&str], usize); 8] = [
            (&base, 8),
            (&base, 8),
            (&base, 5),
            (
                &["mgpu", "mcpu", "block1d", "block3d", "cyclic", "gpu", "ab"],
                8,
            ),
            (
                &[
                    "mgpx", "mcpu", "block1d", "block3d", "cyclic", "gpu", "ab", "gpu",
                ],
                8,
            ),
            (
                &[
                    "mgpx", "mcpu", "block1d", "block3d", "cyclic", "gpu", "ab", "gpu",
                ],
                3,
            ),
            (&["mcpu", "block1d", "cyclic", "gpu"], 8),
            (&base, 8),
        ];
        for (step, n) in steps {
            let words = &words[..n];
            let got = Suggestions::new(previous.as_ref(), step, words.iter().copied());
            let mut candidates = step.to_vec();
            candidates.sort();
            candidates.dedup();
            let suggester = Suggester::new(candidates.iter().copied());
            for w in words {
                assert_eq!(got.get(w), suggester.closest(w), "{w} over {candidates:?}");
            }
            previous = Some(got);
        }
    }

    /// Whether `got` answers each of `words` as a suggester over
    /// `candidates` (sorted, without duplicates) does.
    fn answers_as_the_suggester<'c>(
        got: &Suggestions,
        candidates: impl Iterator<Item = &'c String>,
        words: &[String],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut all: Vec<&str> = candidates.map(String::as_str).collect();
        all.sort();
        all.dedup();
        let suggester = Suggester::new(all.iter().copied());
        for w in words {
            proptest::prop_assert_eq!(got.get(w), suggester.closest(w), "{} over {:?}", w, all);
        }
        Ok(())
    }

    proptest::proptest! {
        /// Candidate lists that change by a run (renamed, inserted or
        /// removed names, duplicates included), one after another: the
        /// updated suggestions answer as a suggester over all of them does.
        #[test]
        fn suggestions_after_small_changes_answer_as_the_suggester_does(
            start in proptest::collection::vec("[abm][a-c]{0,3}", 0..30),
            changes in proptest::collection::vec(
                (0usize..40, 0usize..4, proptest::collection::vec("[abm][a-c]{0,3}", 0..4)),
                1..8,
            ),
            words in proptest::collection::vec("[abmx][a-c]{0,3}", 1..6),
        ) {
            let mut candidates = start;
            let ask = |c: &[String], previous: Option<&Suggestions>| {
                let c: Vec<&str> = c.iter().map(String::as_str).collect();
                Suggestions::new(previous, &c, words.iter().map(String::as_str))
            };
            let mut previous = ask(&candidates, None);
            for (at, delete, insert) in changes {
                let at = at.min(candidates.len());
                let end = (at + delete).min(candidates.len());
                candidates.splice(at..end, insert);
                let got = ask(&candidates, Some(&previous));
                answers_as_the_suggester(&got, candidates.iter(), &words)?;
                previous = got;
            }
        }

        /// Candidate lists in two parts (a file's globals and its other
        /// names), each changed by a run at once, one after another: the
        /// updated suggestions answer as a suggester over all of them does.
        #[test]
        fn suggestions_after_changes_in_both_parts_answer_as_the_suggester_does(
            start in (
                proptest::collection::vec("[abm][a-c]{0,3}", 0..20),
                proptest::collection::vec("[abm][a-c]{0,3}", 0..20),
            ),
            changes in proptest::collection::vec(
                (
                    (0usize..25, 0usize..4, proptest::collection::vec("[abm][a-c]{0,3}", 0..4)),
                    (0usize..25, 0usize..4, proptest::collection::vec("[abm][a-c]{0,3}", 0..4)),
                ),
                1..8,
            ),
            words in proptest::collection::vec("[abmx][a-c]{0,3}", 1..6),
        ) {
            let (mut first, mut rest) = start;
            let ask = |first: &[String], rest: &[String], previous: Option<&Suggestions>| {
                let c: Vec<&str> = first.iter().chain(rest).map(String::as_str).collect();
                Suggestions::new_in_parts(previous, &c, first.len(), words.iter().map(String::as_str))
            };
            let mut previous = ask(&first, &rest, None);
            for (a, b) in changes {
                for (part, (at, delete, insert)) in [(&mut first, a), (&mut rest, b)] {
                    let at = at.min(part.len());
                    let end = (at + delete).min(part.len());
                    part.splice(at..end, insert);
                }
                let got = ask(&first, &rest, Some(&previous));
                answers_as_the_suggester(&got, first.iter().chain(&rest), &words)?;
                previous = got;
            }
        }

        /// The streaming check's way of asking (no index, the names sorted
        /// by length) answers as the suggestions do, ties and case
        /// included.
        #[test]
        fn asking_the_sorted_names_answers_as_the_suggestions_do(
            // Up to 12 characters: limits of 1 to 4 edits.
            names in proptest::collection::vec("[abAB][a-cA-C]{0,11}", 0..40),
            words in proptest::collection::vec("[abmAB][a-cA-C]{0,11}", 1..8),
        ) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let suggestions = Suggestions::new(None, &names, words.iter().map(String::as_str));
            let mut sorted = names.clone();
            sort_by_length_then_name(&mut sorted, |n| *n);
            for w in &words {
                let got = closest_in_sorted(w, &sorted, |n| *n).map(|i| sorted[i]);
                proptest::prop_assert_eq!(got, suggestions.get(w), "{} over {:?}", w, names);
            }
        }
    }

    /// A change in each part (a function's name among the globals, its
    /// parameters among the rest) is placed in the previous order, not
    /// sorted again.
    #[test]
    fn a_change_in_each_part_updates_the_order() {
        // (Names between the two changes, as a file has thousands.)
        let between: Vec<String> = (0..20).map(|i| format!("n{i:02}")).collect();
        let between: Vec<&str> = between.iter().map(String::as_str).collect();
        let before: Vec<&str> = [&["f", "g", "h"][..], &between, &["x", "y", "z"]].concat();
        let previous = Suggestions::new_in_parts(None, &before, 23, std::iter::once("q"));
        let after_names: Vec<&str> = [&["f", "h"][..], &between, &["x", "z", "w"]].concat();
        let after = NameList::new(&after_names);
        let (sorted, added, removed) = previous
            .sorted_after_small_change(&after, 22)
            .expect("a run in each part");
        let names: Vec<&str> = sorted.iter().map(|&i| after.name(i)).collect();
        let mut expected = after_names.clone();
        expected.sort_unstable();
        assert_eq!(names, expected);
        assert_eq!(added, ["w"]);
        assert_eq!(removed, ["g", "y"]);
        // As one part, the same change is one run over every name between:
        // sorted again.
        let one_part = Suggestions::new(None, &before, std::iter::once("q"));
        assert!(one_part
            .sorted_after_small_change(&after, after_names.len())
            .is_none());
    }

    #[test]
    fn finds_close_names() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(closest("soa", ["SOA", "AOS"]), Some("SOA"));
        assert_eq!(closest("C_Order", ["C_order", "F_order"]), Some("C_order"));
        assert_eq!(closest("mgpu2", ["mgpu", "mcpu"]), Some("mgpu"));
        assert_eq!(closest("zzz", ["mgpu"]), None);
        // The first of equally close candidates wins, as before.
        assert_eq!(closest("mgpx", ["mgpu", "mgpa"]), Some("mgpu"));
        assert_eq!(closest("ab", ["xy", "ax"]), Some("ax"));
    }

    #[test]
    fn bounded_distance_agrees_with_the_full_one() {
        let words = [
            "", "a", "ab", "kitten", "sitting", "mgpu", "mcpu", "Machine", "machnie",
        ];
        let mut rows = Vec::new();
        for a in words {
            for b in words {
                let d = edit_distance(a, b);
                for limit in 0..8 {
                    assert_eq!(
                        bounded_distance(a.as_bytes(), b.as_bytes(), limit, &mut rows),
                        (d <= limit).then_some(d),
                        "{a} {b} {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_suggester_answers_as_closest_does() {
        let candidates = [
            "mgpu",
            "mcpu",
            "MGPU",
            "m_gpu",
            "machine",
            "Machine",
            "mem",
            "fbmem",
            "zcmem",
            "sysmem",
            "block1d",
            "block2d",
            "cyclic",
            "linearize",
            "é_name",
            "gpu",
            "a",
            "ab",
        ];
        let words = [
            "mgpx",
            "MGPU",
            "mgpu2",
            "machnie",
            "mme",
            "fbmme",
            "blok1d",
            "cyclc",
            "é_nam",
            "zzz",
            "a",
            "b",
            "ab",
            "ba",
            "gp",
            "",
            "linearise",
            "sysme",
        ];
        let suggester = Suggester::new(candidates);
        for w in words {
            assert_eq!(suggester.closest(w), closest(w, candidates), "{w}");
        }
    }
}

//! The shadowed-rule pass's findings in a language server's check: made
//! over the whole file, or, after an edit of a rule statement, found again
//! only for the keys the edit touched.
//!
//! A rule is shadowed when an earlier rule has one of its keys, so the
//! findings of a key depend only on the rules that have it. The last
//! check kept each rule's keys as hashes, by statement
//! ([`ShadowFindings::keys`]); after an edit, the keys of the rules the
//! window replaced and of those it holds now are the touched ones. Only
//! the rules with a touched key's hash are read again (their keys made
//! from the tree and compared, so a hash shared by two keys only adds a
//! statement to read); every other finding is the last check's, moved.
//! Why: finding them again over the 1,100 rules of a 5,000-line file took
//! 233 µs of each keystroke that edited one of them, cold, in a check of
//! about 1.4 ms; found for the touched keys, 64 µs (in process,
//! `keystroke_phases --cold`, a scratch build with timings; one edit in
//! five edits a rule there, see `bench/lsp_bench/RESULTS.md`).

use std::hash::BuildHasher;
use std::sync::Arc;

use super::memo::{moved_index, ShadowFindings, Shadowed};
use super::names::{is_rule, mapping_keys, RuleKey};
use super::Checker;
use crate::fast_hash::{FastHasher, FastMap, FastSet};
use crate::incremental::Window;

/// The hash a key is kept under.
fn key_hash(key: &RuleKey<'_>) -> u64 {
    std::hash::BuildHasherDefault::<FastHasher>::default().hash_one(key)
}

/// Each key's text as messages show it, made once per check: a big file
/// repeats the same rules (757 shadowed in a generated 5,000-line file of
/// the LSP benchmark), and a text made for each was a fifth of a
/// keystroke's allocations.
#[derive(Default)]
struct Shown<'a>(FastMap<RuleKey<'a>, Arc<str>>);

impl<'a> Shown<'a> {
    fn of(&mut self, key: &RuleKey<'a>) -> Arc<str> {
        self.0
            .entry(*key)
            .or_insert_with(|| Arc::from(key.shown()))
            .clone()
    }
}

impl<'a> Checker<'a> {
    /// Every rule's keys and the shadowed rules of the whole file.
    pub(super) fn shadowed_in_whole_file(&mut self) -> ShadowFindings {
        let program = self.program;
        let mut out = ShadowFindings {
            rule_at: super::names::rule_indices(program),
            ..ShadowFindings::default()
        };
        let mut shown = Shown::default();
        let stmts = program.stmts.iter().enumerate().map(|(i, s)| (i, &**s));
        // (The table is sized by the rules: it grew and rehashed ten
        // times on a big file.)
        let rules = out.rule_at.len();
        self.find_shadowed(stmts, rules, |_, i, stmt, place, key, wins| {
            let hash = key_hash(key);
            out.keys.push((i as u32, hash));
            if let Some(wins) = wins {
                out.found.push(Shadowed {
                    at: stmt.span,
                    wins,
                    shown: shown.of(key),
                    key: hash,
                    place,
                });
            }
        });
        out
    }

    /// `old`'s findings after an edit that re-parsed `window` and touched a
    /// rule statement: found again for the keys of the rules the window
    /// replaced and of those it holds now, the others moved.
    pub(super) fn shadowed_after_edit(
        &mut self,
        old: &ShadowFindings,
        window: &Window,
    ) -> ShadowFindings {
        let program = self.program;
        let (first, old_end) = (window.first as u32, window.old_end_stmt as u32);
        let before = old.keys.partition_point(|&(i, _)| i < first);
        let after = old.keys.partition_point(|&(i, _)| i < old_end);
        // The window's rules now, and every key touched.
        let mut touched: FastSet<u64> = old.keys[before..after].iter().map(|&(_, k)| k).collect();
        let mut window_keys = Vec::new();
        let mut window_rules = Vec::new();
        let mut keys = Vec::new();
        for i in window.first..window.new_end_stmt {
            let Some(stmt) = program.stmts.get(i) else {
                break;
            };
            keys.clear();
            mapping_keys(stmt, self.source, &mut keys);
            if is_rule(stmt) {
                window_rules.push(i as u32);
            }
            for key in &keys {
                let hash = key_hash(key);
                touched.insert(hash);
                window_keys.push((i as u32, hash));
            }
        }
        let mut out = ShadowFindings {
            rule_at: spliced(&old.rule_at, window, window_rules, |i| i, |i, _| i),
            keys: spliced(
                &old.keys,
                window,
                window_keys,
                |(i, _)| i,
                |i, (_, k)| (i, k),
            ),
            found: Vec::new(),
        };
        // The rules with a touched key, in order, read again.
        let mut read: Vec<u32> = out
            .keys
            .iter()
            .filter(|(_, k)| touched.contains(k))
            .map(|&(i, _)| i)
            .collect();
        read.dedup();
        let stmts = read
            .iter()
            .filter_map(|&i| Some((i as usize, &**program.stmts.get(i as usize)?)));
        let mut found = Vec::new();
        let mut shown = Shown::default();
        self.find_shadowed(stmts, read.len(), |_, _, stmt, place, key, wins| {
            let hash = key_hash(key);
            if let (Some(wins), true) = (wins, touched.contains(&hash)) {
                found.push(Shadowed {
                    at: stmt.span,
                    wins,
                    shown: shown.of(key),
                    key: hash,
                    place,
                });
            }
        });
        // The others, moved; both lists are in the order of their rules.
        out.found = merge_in_order(
            old.moved_found(window)
                .filter(|f| !touched.contains(&f.key)),
            found,
        );
        out
    }
}

/// `old` (entries by top-level statement, ascending: `index` reads an
/// entry's, `at` makes it another) after an edit that re-parsed
/// `window`: those before it, `in_window` in its place, and those after
/// it moved by as many statements as the window gained.
fn spliced<T: Copy>(
    old: &[T],
    window: &Window,
    in_window: Vec<T>,
    index: impl Fn(T) -> u32,
    at: impl Fn(u32, T) -> T,
) -> Vec<T> {
    let before = old.partition_point(|&e| (index(e) as usize) < window.first);
    let after = old.partition_point(|&e| (index(e) as usize) < window.old_end_stmt);
    let mut out = Vec::with_capacity(old.len() + in_window.len());
    out.extend_from_slice(&old[..before]);
    out.extend(in_window);
    out.extend(
        old[after..]
            .iter()
            .map(|&e| at(moved_index(index(e), window), e)),
    );
    out
}

/// Two lists of findings, each in the order they are reported (by their
/// statement, then by the key's place in it), merged in that order.
fn merge_in_order(a: impl Iterator<Item = Shadowed>, b: Vec<Shadowed>) -> Vec<Shadowed> {
    let order = |f: &Shadowed| (f.at.start(), f.place);
    let mut out: Vec<Shadowed> = Vec::with_capacity(b.len());
    let mut b = b.into_iter().peekable();
    for f in a {
        while let Some(next) = b.next_if(|n| order(n) < order(&f)) {
            out.push(next);
        }
        out.push(f);
    }
    out.extend(b);
    out
}

#[cfg(test)]
mod tests {
    use super::super::memo::Previous;
    use super::super::{check_incremental, Checked};

    fn findings(checked: &Checked) -> Vec<(usize, usize, String, u32)> {
        let shadowed = checked.memo.shadowed.as_ref().expect("kept by the check");
        shadowed
            .found
            .iter()
            .map(|f| (f.at.start(), f.wins.start(), f.shown.to_string(), f.place))
            .collect()
    }

    /// After an edit of a rule, the findings found again for the touched
    /// keys and those moved are the whole file's, in the same order (the
    /// order decides which are kept past the cap on diagnostics).
    #[test]
    fn findings_after_an_edit_of_a_rule_are_the_whole_files_in_order() {
        let before = "Task a,b GPU;\nRegion * r GPU FBMEM;\nTask b GPU;\nTask c CPU;\n\
            Task a,c GPU;\nRegion * r GPU ZCMEM;\nTask b,c GPU;\nx = 1;\nTask a GPU;\n";
        let edits = [
            // A key of a rule changed (b -> d), between untouched findings.
            ("Task b GPU;\nTask c", "Task d GPU;\nTask c"),
            // A rule added, with a key that shadows later ones.
            ("x = 1;\n", "x = 1;\nTask c GPU;\n"),
            // A rule removed.
            ("Task a,c GPU;\n", ""),
            // Not a rule any more.
            ("Region * r GPU FBMEM;\n", "Region * r GPU FBMEM\n"),
        ];
        for (from, to) in edits {
            let after = before.replacen(from, to, 1);
            let old = crate::parse(before);
            let (old_check, _) = check_incremental(&old, before, None);
            let (new, how) = crate::incremental::reparse(&old, before, &after);
            let previous = Previous {
                memo: &old_check.memo,
                source: before,
                window: how.window(),
            };
            assert!(previous.window.is_some(), "{after:?}");
            let (incremental, reuse) = check_incremental(&new, &after, Some(previous));
            assert!(!reuse.shadowed_reused, "{after:?}");
            let (whole, _) = check_incremental(&crate::parse(&after), &after, None);
            assert_eq!(findings(&incremental), findings(&whole), "{after:?}");
            assert!(!findings(&whole).is_empty());
        }
    }
}

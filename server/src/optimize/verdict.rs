//! Whether the best candidate is worth applying: the optimizer replaces the
//! user's mapper only with a gain it can defend.
//!
//! - A mapper as written that fails is improved by any candidate that runs.
//! - On a deterministic model (the simulator without noise) the gain must
//!   exceed a relative minimum (default 2 %): the model's own error is larger
//!   than that, so a smaller predicted gain says nothing about a real run.
//! - On a backend that measures (a real program, a runtime service, the
//!   simulator with noise) the mapper as written and the best candidate are
//!   run again, and the slowest run of the candidate must beat the fastest
//!   run of the start: the gain must be larger than the spread of repeated
//!   runs of both. When every repeated run measured the same, the backend is
//!   a model after all and the relative minimum applies too.

use serde::{Deserialize, Serialize};

use super::history::Record;
use super::runner::Runner;

/// The default relative minimum gain on a deterministic model.
pub const DEFAULT_MIN_GAIN: f64 = 0.02;

/// How many times each of the two mappers runs on a measuring backend (the
/// run made during the search included).
pub const DEFAULT_REPEATS: usize = 3;

/// The judgement on a run's best candidate, as saved in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The best candidate replaces the user's mapper.
    pub apply: bool,
    /// Best score over the start's (`None` when the start does not run).
    pub gain: Option<f64>,
    /// The relative minimum gain in force.
    pub min_gain: f64,
    /// Scores of the repeated runs of the start and of the best candidate
    /// (empty on a deterministic model).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub start_runs: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub best_runs: Vec<f64>,
    /// One sentence for the user.
    pub reason: String,
}

/// `1.0003x` as a percentage gain, `+0.030 %` (three decimals below 1 %,
/// so that a gain the minimum rejects never reads as zero).
pub fn percent(gain: f64) -> String {
    let p = (gain - 1.0) * 100.0;
    if p.abs() < 1.0 {
        format!("{p:+.3} %")
    } else {
        format!("{p:+.2} %")
    }
}

/// Judges `best` against `start` (the user's mapper as written). `rerun`
/// runs a mapper text once more with the given repetition number and
/// returns its score (0 for a failure); it is called only when `measures`.
pub fn judge(
    start: &Record,
    best: &Record,
    best_is_start: bool,
    min_gain: f64,
    measures: bool,
    repeats: usize,
    rerun: &mut dyn FnMut(&str, usize) -> f64,
) -> Verdict {
    let mut v = Verdict {
        apply: false,
        gain: None,
        min_gain,
        start_runs: Vec::new(),
        best_runs: Vec::new(),
        reason: String::new(),
    };
    if best_is_start || best.score <= 0.0 {
        v.reason = "no candidate beat the mapper as written".into();
        if start.score > 0.0 {
            v.gain = Some(1.0);
        }
        return v;
    }
    if start.score <= 0.0 {
        v.apply = true;
        v.reason = format!(
            "the mapper as written does not run ({}); the best candidate does",
            start.evaluation.status
        );
        return v;
    }
    let gain = best.score / start.score;
    v.gain = Some(gain);
    let relative_ok = gain > 1.0 + min_gain;
    if !measures {
        v.apply = relative_ok;
        v.reason = if relative_ok {
            format!(
                "the best candidate is {} over the mapper as written, above the minimum gain of {}",
                percent(gain),
                min_percent(min_gain)
            )
        } else {
            format!(
                "the best candidate is only {} over the mapper as written, within the minimum gain of {} (the model's own error is larger)",
                percent(gain),
                min_percent(min_gain)
            )
        };
        return v;
    }
    v.start_runs.push(start.score);
    v.best_runs.push(best.score);
    for i in 1..repeats.max(1) {
        v.start_runs.push(rerun(&start.source, i));
        v.best_runs.push(rerun(&best.source, i));
    }
    let (start_lo, start_hi) = range(&v.start_runs);
    let (best_lo, best_hi) = range(&v.best_runs);
    let deterministic = start_lo == start_hi && best_lo == best_hi;
    let beats_spread = best_lo > start_hi;
    v.apply = beats_spread && (!deterministic || relative_ok);
    let spread = |lo: f64, hi: f64| {
        if lo > 0.0 {
            hi / lo - 1.0
        } else {
            f64::INFINITY
        }
    };
    v.reason = if v.apply {
        format!(
            "the best candidate is {} over the mapper as written, and its slowest of {} runs beats the fastest of the start's",
            percent(gain),
            v.best_runs.len()
        )
    } else if !beats_spread {
        format!(
            "the best candidate is {} over the mapper as written, within the spread of {} repeated runs (start {:.1} %, candidate {:.1} %)",
            percent(gain),
            v.best_runs.len(),
            spread(start_lo, start_hi) * 100.0,
            spread(best_lo, best_hi) * 100.0
        )
    } else {
        format!(
            "the best candidate is only {} over the mapper as written; repeated runs measure alike, so the minimum gain of {} applies",
            percent(gain),
            min_percent(min_gain)
        )
    };
    v
}

/// What the run measured for the best candidate against the mapper as
/// written, in the user's units: `1.82x faster than yours (1.53 s → 0.84 s,
/// medians of 3 runs)`, or for a program that reports a throughput `1.82x
/// the throughput of yours (12.1 → 22.0, ...)`. From the verdict's repeated
/// runs where there are some, else from the one run of each. None where
/// the best is the start or nothing ran.
pub fn measured_gain(start: &Record, best: &Record, verdict: Option<&Verdict>) -> Option<String> {
    if best.score <= 0.0 || std::ptr::eq(start, best) {
        return None;
    }
    let runs = verdict.filter(|v| !v.start_runs.is_empty() && !v.best_runs.is_empty());
    let (start_score, best_score, how) = match runs {
        Some(v) => (
            median(&v.start_runs),
            median(&v.best_runs),
            format!("medians of {} runs", v.best_runs.len()),
        ),
        None => (start.score, best.score, "one run each".to_string()),
    };
    let by_time = best.evaluation.throughput.is_none_or(|t| t <= 0.0);
    if start_score <= 0.0 {
        let figure = if by_time {
            format!("{:.3} s", 1.0 / best_score)
        } else {
            format!("throughput {best_score:.4}")
        };
        return Some(format!(
            "runs in {figure} where yours fails ({})",
            start.evaluation.status
        ));
    }
    let gain = best_score / start_score;
    Some(if by_time {
        format!(
            "{gain:.2}x faster than yours ({:.3} s → {:.3} s, {how})",
            1.0 / start_score,
            1.0 / best_score
        )
    } else {
        // The score is the program's throughput; its times, where it
        // printed them, are told beside it.
        let times = match (start.evaluation.elapsed_s, best.evaluation.elapsed_s) {
            (Some(a), Some(b)) => format!("; {a:.3} s → {b:.3} s in the first run of each"),
            _ => String::new(),
        };
        format!(
            "{gain:.2}x faster than yours (throughput {start_score:.4} → {best_score:.4}, {how}{times})"
        )
    })
}

/// The median of `xs` (the upper one of an even count), failures as 0.
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn min_percent(min_gain: f64) -> String {
    format!("{:.2} %", min_gain * 100.0).replace(".00 %", " %")
}

/// The lowest and highest of `xs` (failures count as 0).
fn range(xs: &[f64]) -> (f64, f64) {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// A `rerun` for [`judge`] from a runner: repetition `i` runs with a seed of
/// its own, so a noisy backend draws new noise.
pub fn rerun_with<'a>(runner: &'a Runner<'a>, seed: u64) -> impl FnMut(&str, usize) -> f64 + 'a {
    move |text: &str, i: usize| {
        runner
            .evaluate(text, seed.wrapping_add(1_000_003u64.wrapping_mul(i as u64)))
            .score()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(score: f64, status: &str) -> Record {
        let mut r = Record::scored(0, score, &[]);
        r.evaluation.status = status.into();
        r
    }

    fn no_rerun(_: &str, _: usize) -> f64 {
        panic!("a deterministic model is not run again")
    }

    #[test]
    fn the_measured_gain_is_told_in_seconds_from_the_repeated_runs() {
        let mut start = record(1.0 / 1.53, "ok");
        start.evaluation.elapsed_s = Some(1.53);
        start.evaluation.throughput = None;
        let mut best = record(1.0 / 0.84, "ok");
        best.evaluation.elapsed_s = Some(0.84);
        best.evaluation.throughput = None;
        let v = Verdict {
            apply: true,
            gain: Some(1.82),
            min_gain: 0.02,
            start_runs: vec![1.0 / 1.53, 1.0 / 1.6, 1.0 / 1.5],
            best_runs: vec![1.0 / 0.84, 1.0 / 0.80, 1.0 / 0.9],
            reason: String::new(),
        };
        let text = measured_gain(&start, &best, Some(&v)).unwrap();
        assert_eq!(
            text,
            "1.82x faster than yours (1.530 s → 0.840 s, medians of 3 runs)"
        );
        let one = measured_gain(&start, &best, None).unwrap();
        assert!(one.ends_with("one run each)"), "{one}");
        assert!(!one.contains('-'), "{one}");
        let failed = record(0.0, "out_of_memory");
        let text = measured_gain(&failed, &best, None).unwrap();
        assert_eq!(text, "runs in 0.840 s where yours fails (out_of_memory)");
        assert_eq!(measured_gain(&start, &start, None), None);
        // A program that prints a throughput: its figures, and its times.
        let (mut a, mut b) = (record(6.0, "ok"), record(12.0, "ok"));
        a.evaluation.elapsed_s = Some(0.7);
        b.evaluation.elapsed_s = Some(0.35);
        let text = measured_gain(&a, &b, None).unwrap();
        assert_eq!(
            text,
            "2.00x faster than yours (throughput 6.0000 → 12.0000, one run each; 0.700 s → 0.350 s in the first run of each)"
        );
    }

    #[test]
    fn on_a_model_a_gain_below_the_minimum_is_not_applied() {
        let v = judge(
            &record(1.0, "ok"),
            &record(1.0003, "ok"),
            false,
            0.02,
            false,
            3,
            &mut no_rerun,
        );
        assert!(!v.apply);
        assert!(v.reason.contains("+0.030 %"), "{}", v.reason);
        assert!(v.reason.contains("2 %"), "{}", v.reason);
        let v = judge(
            &record(1.0, "ok"),
            &record(1.05, "ok"),
            false,
            0.02,
            false,
            3,
            &mut no_rerun,
        );
        assert!(v.apply, "{}", v.reason);
    }

    #[test]
    fn a_start_that_fails_is_improved_by_any_candidate_that_runs() {
        let v = judge(
            &record(0.0, "cublas_illegal_parameter"),
            &record(1e-9, "ok"),
            false,
            0.5,
            true,
            3,
            &mut no_rerun,
        );
        assert!(v.apply);
        assert!(
            v.reason.contains("cublas_illegal_parameter"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn on_a_measuring_backend_the_gain_must_beat_the_spread() {
        // The start measures 1.00, 1.10, 0.95; a candidate at 1.05 first
        // and 1.08, 1.02 after is within the spread.
        let start = record(1.0, "ok");
        let best = record(1.05, "ok");
        let mut runs = |text: &str, i: usize| match (text.contains("1.05"), i) {
            (false, 1) => 1.10,
            (false, _) => 0.95,
            (true, 1) => 1.08,
            (true, _) => 1.02,
        };
        let v = judge(&start, &best, false, 0.02, true, 3, &mut runs);
        assert!(!v.apply, "{v:?}");
        assert_eq!(v.start_runs, vec![1.0, 1.10, 0.95]);
        assert!(v.reason.contains("spread"), "{}", v.reason);
        // Well separated runs: applied, even below the relative minimum.
        let mut runs = |text: &str, _: usize| if text.contains("1.05") { 1.011 } else { 1.0 };
        let best = record(1.011, "ok");
        let mut best = best;
        best.source = "# 1.05\n".into();
        let mut runs_sep = |text: &str, i: usize| {
            if text.contains("1.05") {
                1.011 + i as f64 * 0.001
            } else {
                1.0 - i as f64 * 0.001
            }
        };
        let v = judge(&start, &best, false, 0.02, true, 3, &mut runs_sep);
        assert!(v.apply, "{v:?}");
        // Runs that all measure alike: a model; the relative minimum holds.
        let v = judge(&start, &best, false, 0.02, true, 3, &mut runs);
        assert!(!v.apply, "{v:?}");
    }
}

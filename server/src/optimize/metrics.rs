//! Diagnostics of a search: how varied the proposals are (parameter entropy)
//! and how much they change after feedback (feedback sensitivity). LLMs tend
//! to repeat their priors; these numbers make that visible.

use std::collections::{BTreeMap, BTreeSet};

use super::history::Record;

/// Mean Shannon entropy (bits) over parameters of the values the proposals
/// chose (the user's mapper, iteration 0, excluded). 0 means every proposal
/// made the same choice everywhere.
pub fn parameter_entropy(records: &[Record]) -> f64 {
    let proposals: Vec<&Record> = records
        .iter()
        .filter(|r| r.iteration > 0 && !r.parameters.is_empty())
        .collect();
    if proposals.is_empty() {
        return 0.0;
    }
    let keys: BTreeSet<&String> = proposals.iter().flat_map(|r| r.parameters.keys()).collect();
    let mut total = 0.0;
    for key in &keys {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &proposals {
            let v = r.parameters.get(*key).map(String::as_str).unwrap_or("");
            *counts.entry(v).or_default() += 1;
        }
        let n = proposals.len() as f64;
        total += counts
            .values()
            .map(|&c| {
                let p = c as f64 / n;
                -p * p.log2()
            })
            .sum::<f64>();
    }
    total / keys.len() as f64
}

/// Mean fraction of parameters that changed from one proposal to the next
/// (the change made in response to the previous outcome's feedback).
pub fn feedback_sensitivity(records: &[Record]) -> f64 {
    let with_params: Vec<&Record> = records
        .iter()
        .filter(|r| !r.parameters.is_empty())
        .collect();
    if with_params.len() < 2 {
        return 0.0;
    }
    let mut sum = 0.0;
    for pair in with_params.windows(2) {
        let (a, b) = (&pair[0].parameters, &pair[1].parameters);
        let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        let changed = keys.iter().filter(|k| a.get(**k) != b.get(**k)).count();
        sum += changed as f64 / keys.len().max(1) as f64;
    }
    sum / (with_params.len() - 1) as f64
}

/// Fraction of proposals (iteration > 0) that ran successfully.
pub fn success_rate(records: &[Record]) -> f64 {
    let proposals: Vec<&Record> = records.iter().filter(|r| r.iteration > 0).collect();
    if proposals.is_empty() {
        return 0.0;
    }
    proposals.iter().filter(|r| r.evaluation.ok()).count() as f64 / proposals.len() as f64
}

/// What a trajectory is relative to.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TrajectoryBasis {
    /// `expert`: the expert mapper's score on the same machine (1.0 = the
    /// expert; `best_normalized` is on the same scale). `start`: no expert
    /// figure exists here (no expert mapper runs on this host), so 1.0 is
    /// the mapper as written, or, where that failed, the first candidate
    /// that ran (`iteration`). `none`: nothing ran.
    pub relative_to: String,
    /// The record whose score is 1.0 (`start` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<usize>,
    /// The score that is 1.0 (higher is better: a throughput, or one over
    /// the elapsed seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

impl Default for TrajectoryBasis {
    fn default() -> Self {
        TrajectoryBasis {
            relative_to: "expert".into(),
            iteration: None,
            score: None,
        }
    }
}

/// The basis of a run's trajectory: the expert where its score is known,
/// else the first record that ran (the user's mapper where it runs).
pub fn trajectory_basis(records: &[Record], expert_score: Option<f64>) -> TrajectoryBasis {
    if let Some(e) = expert_score.filter(|e| *e > 0.0) {
        return TrajectoryBasis {
            relative_to: "expert".into(),
            iteration: None,
            score: Some(e),
        };
    }
    match records.iter().find(|r| r.evaluation.ok() && r.score > 0.0) {
        Some(r) => TrajectoryBasis {
            relative_to: "start".into(),
            iteration: Some(r.iteration),
            score: Some(r.score),
        },
        None => TrajectoryBasis {
            relative_to: "none".into(),
            iteration: None,
            score: None,
        },
    }
}

/// Best score after each iteration relative to `basis` (0 before any
/// success): the normalized score where the basis is the expert, the
/// start-relative one otherwise, never a line of zeros because no expert
/// figure exists.
pub fn trajectory(records: &[Record], basis: &TrajectoryBasis) -> Vec<f64> {
    let reference = basis.score.filter(|s| *s > 0.0);
    let mut best = 0.0f64;
    records
        .iter()
        .map(|r| {
            let value = match (basis.relative_to.as_str(), reference) {
                ("expert", _) => r.normalized.unwrap_or(0.0),
                (_, Some(s)) if r.evaluation.ok() => r.score / s,
                _ => 0.0,
            };
            best = best.max(value);
            best
        })
        .collect()
}

/// Progress relative to the first mapper that ran (the user's, where it
/// runs), record by record: what the optimizer's progress shows where no
/// expert figure exists.
#[derive(Debug, Default)]
pub struct StartRelative {
    start: Option<f64>,
    best: Option<f64>,
}

impl StartRelative {
    /// Takes `r` in; returns its speed relative to the start, if it ran.
    pub fn record(&mut self, r: &Record) -> Option<f64> {
        if !(r.evaluation.ok() && r.score > 0.0) {
            return None;
        }
        let x = r.score / *self.start.get_or_insert(r.score);
        self.best = Some(self.best.map_or(x, |b| b.max(x)));
        Some(x)
    }

    /// The best relative speed so far.
    pub fn best(&self) -> Option<f64> {
        self.best
    }
}

/// Fraction of proposals (iteration > 0) that are valid mappers: the
/// proposer gave one (an LLM's answer could be used) and it compiles and
/// resolves, whether or not it then runs.
pub fn valid_share(records: &[Record]) -> f64 {
    let proposals: Vec<&Record> = records.iter().filter(|r| r.iteration > 0).collect();
    if proposals.is_empty() {
        return 0.0;
    }
    let valid = proposals.iter().filter(|r| compiles(r)).count();
    valid as f64 / proposals.len() as f64
}

/// Whether a proposal is a mapper that compiles and resolves.
fn compiles(r: &Record) -> bool {
    !matches!(
        r.evaluation.status.as_str(),
        "proposer_error" | "compile_error"
    )
}

/// The LLM's turns of an `llm` or `hybrid` run: (answers that became a
/// mapper that compiles, turns). For `hybrid` only the turns the LLM was
/// asked (a strategy, or an unusable answer search stood in for); `None`
/// for the other proposers.
pub fn llm_turns(proposer: &str, records: &[Record]) -> Option<(usize, usize)> {
    use crate::optimize::proposers::hybrid::{LLM_TURN, LLM_UNUSABLE};
    let proposals = records.iter().filter(|r| r.iteration > 0);
    let (valid, turns) = match proposer {
        "llm" => proposals.fold((0, 0), |(v, n), r| (v + compiles(r) as usize, n + 1)),
        "hybrid" => proposals.fold((0, 0), |(v, n), r| {
            if r.rationale.starts_with(LLM_TURN) {
                (v + compiles(r) as usize, n + 1)
            } else if r.rationale.contains(LLM_UNUSABLE) {
                (v, n + 1)
            } else {
                (v, n)
            }
        }),
        _ => return None,
    };
    Some((valid, turns))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: usize, params: &[(&str, &str)]) -> Record {
        Record {
            proposer: "t".into(),
            normalized: Some(i as f64),
            ..Record::scored(i, 1.0, params)
        }
    }

    #[test]
    fn identical_proposals_have_zero_entropy_and_sensitivity() {
        let rs = vec![
            rec(0, &[("a", "x")]),
            rec(1, &[("a", "x")]),
            rec(2, &[("a", "x")]),
        ];
        assert_eq!(parameter_entropy(&rs), 0.0);
        assert_eq!(feedback_sensitivity(&rs), 0.0);
    }

    #[test]
    fn varied_proposals_score_higher() {
        let rs = vec![
            rec(0, &[("a", "x")]),
            rec(1, &[("a", "x")]),
            rec(2, &[("a", "y")]),
        ];
        assert!((parameter_entropy(&rs) - 1.0).abs() < 1e-9);
        assert!((feedback_sensitivity(&rs) - 0.5).abs() < 1e-9);
        assert_eq!(
            trajectory(&rs, &TrajectoryBasis::default()),
            vec![0.0, 1.0, 2.0]
        );
    }

    #[test]
    fn without_an_expert_the_trajectory_is_relative_to_the_start() {
        // The user's mapper fails; the first run (iteration 1) is 1.0.
        let rs = vec![
            Record::scored(0, 0.0, &[]),
            Record::scored(1, 2.0, &[]),
            Record::scored(2, 1.0, &[]),
            Record::scored(3, 3.0, &[]),
        ];
        let basis = trajectory_basis(&rs, None);
        assert_eq!(basis.relative_to, "start");
        assert_eq!(basis.iteration, Some(1));
        assert_eq!(trajectory(&rs, &basis), vec![0.0, 1.0, 1.0, 1.5]);
        // With an expert figure nothing changes.
        let expert = trajectory_basis(&rs, Some(4.0));
        assert_eq!(expert.relative_to, "expert");
        // Nothing ran: an honest none, all zeros.
        let failed = vec![Record::scored(0, 0.0, &[])];
        assert_eq!(trajectory_basis(&failed, None).relative_to, "none");
    }

    #[test]
    fn progress_is_relative_to_the_first_run() {
        let mut p = StartRelative::default();
        assert_eq!(p.record(&Record::scored(0, 0.0, &[])), None);
        assert_eq!(p.record(&Record::scored(1, 2.0, &[])), Some(1.0));
        assert_eq!(p.record(&Record::scored(2, 1.0, &[])), Some(0.5));
        assert_eq!(p.record(&Record::scored(3, 3.0, &[])), Some(1.5));
        assert_eq!(p.best(), Some(1.5));
    }

    #[test]
    fn valid_share_counts_proposals_that_compile() {
        let mut rs = vec![
            rec(0, &[]),
            rec(1, &[]),
            rec(2, &[]),
            rec(3, &[]),
            rec(4, &[]),
        ];
        rs[0].evaluation.status = "compile_error".into();
        rs[1].evaluation.status = "proposer_error".into();
        rs[2].evaluation.status = "compile_error".into();
        rs[3].evaluation.status = "out_of_memory".into();
        assert_eq!(valid_share(&rs), 0.5);
        assert_eq!(valid_share(&rs[..1]), 0.0);
    }

    #[test]
    fn a_hybrid_run_counts_only_the_turns_the_llm_was_asked() {
        use crate::optimize::proposers::hybrid::{LLM_TURN, LLM_UNUSABLE};
        let mut rs: Vec<Record> = (0..5).map(|i| rec(i, &[])).collect();
        rs[1].rationale = format!("{LLM_TURN}[1.0 s] gpu");
        rs[2].rationale = "search: move".into();
        rs[3].rationale = format!("search: move ({LLM_UNUSABLE}: repeated text)");
        rs[4].rationale = format!("{LLM_TURN}[1.0 s] cpu");
        rs[4].evaluation.status = "compile_error".into();
        assert_eq!(llm_turns("hybrid", &rs), Some((1, 3)));
        assert_eq!(llm_turns("llm", &rs), Some((3, 4)));
        assert_eq!(llm_turns("search", &rs), None);
    }
}

//! The scalar-feedback baseline: an OpenTuner-like tuner that sees only the
//! score of each candidate (failures score 0, a penalty) — no raw output, no
//! AutoGuide. Like OpenTuner it runs an ensemble of mutation operators and
//! gives more trials to the operators that recently produced improvements
//! (a UCB1 bandit over the operators).

use super::random::random_spec;
use super::{Proposal, ProposalContext, ProposeError, Proposer};
use crate::optimize::rng::Rng;
use crate::optimize::space::{memories_for, render, IndexFn, LayoutChoice, Spec};

const OPERATORS: [&str; 6] = ["proc", "memory", "layout", "index", "three", "restart"];

pub struct ScalarProposer {
    rng: Rng,
    best: Spec,
    best_score: f64,
    pending: Option<(usize, Spec)>,
    /// Per operator: (trials, improvements).
    credit: [(f64, f64); 6],
}

impl ScalarProposer {
    pub fn new(seed: u64) -> ScalarProposer {
        ScalarProposer {
            rng: Rng::new(seed),
            best: Spec::default(),
            best_score: f64::NAN,
            pending: None,
            credit: [(0.0, 0.0); 6],
        }
    }

    fn choose_operator(&mut self) -> usize {
        let total: f64 = self.credit.iter().map(|c| c.0).sum::<f64>().max(1.0);
        let mut best = (0, f64::MIN);
        for (i, (n, wins)) in self.credit.iter().enumerate() {
            let ucb = if *n == 0.0 {
                f64::MAX / 2.0 + self.rng.unit()
            } else {
                wins / n + (2.0 * total.ln() / n).sqrt()
            };
            if ucb > best.1 {
                best = (i, ucb);
            }
        }
        best.0
    }

    fn mutate_one(&mut self, spec: &mut Spec, ctx: &ProposalContext<'_>, what: usize) {
        match what {
            0 => {
                if let Some((task, kinds)) = self.rng.pick(&ctx.space.procs).cloned() {
                    if let Some(k) = self.rng.pick(&kinds) {
                        spec.procs.insert(task, *k);
                    }
                }
            }
            1 => {
                if let Some((task, region)) = self.rng.pick(&ctx.space.regions).cloned() {
                    let kind = spec.procs.get(&task).copied().or_else(|| {
                        ctx.base_decisions
                            .tasks
                            .iter()
                            .find(|t| t.task == task)
                            .map(|t| t.proc_kind)
                    });
                    if let Some(kind) = kind {
                        if let Some(m) = self.rng.pick(&memories_for(kind, ctx.machine)) {
                            spec.memories.insert((task, region), *m);
                        }
                    }
                }
            }
            2 => {
                if let Some(task) = self.rng.pick(&ctx.space.layout_tasks).cloned() {
                    spec.layouts.insert(
                        task,
                        LayoutChoice {
                            soa: self.rng.below(2) == 0,
                            c_order: self.rng.below(2) == 0,
                        },
                    );
                }
            }
            4 => {
                if let Some(task) = self.rng.pick(&ctx.space.child_tasks).cloned() {
                    let on = self.rng.below(2) == 0;
                    spec.same_point.insert(task, on);
                }
            }
            5 => {
                if let Some(task) = self.rng.pick(&ctx.space.collect_tasks).cloned() {
                    let on = self.rng.below(2) == 0;
                    spec.collect.insert(task, on);
                }
            }
            _ => {
                if let Some(task) = self.rng.pick(&ctx.space.index_tasks).cloned() {
                    if let Some(f) = self.rng.pick(&IndexFn::ALL) {
                        spec.index_fns.insert(task, *f);
                    }
                }
            }
        }
    }
}

impl Proposer for ScalarProposer {
    fn name(&self) -> &str {
        "scalar"
    }

    fn propose(&mut self, ctx: &ProposalContext<'_>) -> Result<Proposal, ProposeError> {
        // Only the score of the last candidate is read: the scalar feedback.
        let last_score = ctx.history.last().map(|r| r.score).unwrap_or(0.0);
        if self.best_score.is_nan() {
            self.best_score = ctx.history.first().map(|r| r.score).unwrap_or(0.0);
        }
        if let Some((op, spec)) = self.pending.take() {
            self.credit[op].0 += 1.0;
            if last_score > self.best_score {
                self.credit[op].1 += 1.0;
                self.best_score = last_score;
                self.best = spec;
            }
        }
        let op = self.choose_operator();
        let mut spec = self.best.clone();
        match op {
            // Operator 3 ("index") also covers the other placement knobs.
            0..=2 => self.mutate_one(&mut spec, ctx, op),
            3 => {
                let what = 3 + self.rng.below(3);
                self.mutate_one(&mut spec, ctx, what);
            }
            4 => {
                for _ in 0..3 {
                    let what = self.rng.below(6);
                    self.mutate_one(&mut spec, ctx, what);
                }
            }
            _ => spec = random_spec(ctx, &mut self.rng),
        }
        let source = render(ctx.base, ctx.base_decisions, &spec, ctx.app);
        self.pending = Some((op, spec.clone()));
        Ok(Proposal {
            source,
            spec: Some(spec),
            rationale: format!("operator `{}` on the best so far", OPERATORS[op]),
        })
    }
}

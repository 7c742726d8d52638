//! The scalar-feedback baseline: OpenTuner's default search, re-implemented
//! on this space. It sees only each candidate's score (a failure scores 0,
//! the paper's "high penalty") — no raw output, no AutoGuide.
//!
//! Like OpenTuner, a configuration is one enumerated value per parameter
//! (processor kind per task, memory per region argument — every memory of
//! the machine, since a score-only tuner does not know which ones a
//! processor reaches —, layout per task, placement function per index
//! launch, same-point and collect switches), value 0 keeping the base
//! mapper's decision; and like OpenTuner's `AUCBanditMetaTechniqueA` it runs
//! an ensemble of techniques under a bandit that gives more trials to the
//! techniques that recently found new bests:
//! - differential evolution over a population of 30, initialised with
//!   random configurations (OpenTuner's `DifferentialEvolutionAlt`);
//! - uniform greedy mutation of the best: each parameter redrawn with
//!   probability 0.1 (`UniformGreedyMutation`);
//! - single-parameter mutation of the best (the local move `NormalGreedyMutation`
//!   makes on a numeric parameter);
//! - uniform random configurations.
//!
//! `bench/opentuner/driver.py` runs the real OpenTuner on the same
//! parameters for comparison (docs/optimizer.md, "From the starts users
//! bring", and bench/optimize/RESULTS.md).

use std::collections::HashSet;

use mapwright_runtime::machine::{MemKind, ProcKind};

use super::{Proposal, ProposalContext, ProposeError, Proposer};
use crate::optimize::rng::Rng;
use crate::optimize::space::{machine_memories, render, IndexFn, LayoutChoice, Space, Spec};

const TECHNIQUES: [&str; 4] = [
    "differential evolution",
    "uniform greedy mutation",
    "one-parameter mutation",
    "random",
];
const POPULATION: usize = 30;
/// DE crossover rate (OpenTuner's default `cr`).
const CROSSOVER: f64 = 0.9;
/// Per-parameter redraw probability of the greedy mutation (OpenTuner's default).
const MUTATION_RATE: f64 = 0.1;
/// The bandit's exploration constant (OpenTuner's AUC bandit uses 0.05 on
/// its area-under-curve credit; UCB1's classic value suits hit rates).
const EXPLORATION: f64 = 0.5;

/// One parameter: its name and how many values it takes (value 0: as the
/// base mapper decides).
#[derive(Debug, Clone)]
enum Param {
    Proc(String, Vec<ProcKind>),
    Memory(String, String, Vec<MemKind>),
    Layout(String),
    Index(String),
    SamePoint(String),
    Collect(String),
}

const LAYOUTS: [LayoutChoice; 4] = [
    LayoutChoice {
        soa: true,
        c_order: true,
    },
    LayoutChoice {
        soa: true,
        c_order: false,
    },
    LayoutChoice {
        soa: false,
        c_order: true,
    },
    LayoutChoice {
        soa: false,
        c_order: false,
    },
];

impl Param {
    fn values(&self) -> usize {
        1 + match self {
            Param::Proc(_, kinds) => kinds.len(),
            Param::Memory(_, _, mems) => mems.len(),
            Param::Layout(_) => LAYOUTS.len(),
            Param::Index(_) => IndexFn::ALL.len(),
            Param::SamePoint(_) | Param::Collect(_) => 2,
        }
    }

    /// Writes value `v` (> 0) into `spec`.
    fn apply(&self, v: usize, spec: &mut Spec) {
        let i = v - 1;
        match self {
            Param::Proc(task, kinds) => {
                spec.procs.insert(task.clone(), kinds[i]);
            }
            Param::Memory(task, region, mems) => {
                spec.memories
                    .insert((task.clone(), region.clone()), mems[i]);
            }
            Param::Layout(task) => {
                spec.layouts.insert(task.clone(), LAYOUTS[i]);
            }
            Param::Index(task) => {
                spec.index_fns.insert(task.clone(), IndexFn::ALL[i]);
            }
            Param::SamePoint(task) => {
                spec.same_point.insert(task.clone(), i == 0);
            }
            Param::Collect(task) => {
                spec.collect.insert(task.clone(), i == 0);
            }
        }
    }
}

fn params(space: &Space, memories: &[MemKind]) -> Vec<Param> {
    let mut out: Vec<Param> = Vec::new();
    out.extend(
        space
            .procs
            .iter()
            .map(|(t, kinds)| Param::Proc(t.clone(), kinds.clone())),
    );
    out.extend(
        space
            .regions
            .iter()
            .map(|(t, r)| Param::Memory(t.clone(), r.clone(), memories.to_vec())),
    );
    out.extend(space.layout_tasks.iter().cloned().map(Param::Layout));
    out.extend(space.index_tasks.iter().cloned().map(Param::Index));
    out.extend(space.child_tasks.iter().cloned().map(Param::SamePoint));
    out.extend(space.collect_tasks.iter().cloned().map(Param::Collect));
    out
}

/// A configuration: one value index per parameter.
type Config = Vec<usize>;

pub struct ScalarProposer {
    rng: Rng,
    params: Vec<Param>,
    best: Config,
    best_score: f64,
    population: Vec<(Config, f64)>,
    /// The candidate awaiting its score: (technique, configuration, DE slot).
    pending: Option<(usize, Config, Option<usize>)>,
    /// Per technique: (trials, new bests).
    credit: [(f64, f64); 4],
    /// Mapper texts already measured (distinct configurations can render
    /// the same text when a value repeats the base mapper's decision).
    seen: HashSet<String>,
    /// How many history records `seen` holds (each is added once).
    seen_records: usize,
}

impl ScalarProposer {
    pub fn new(seed: u64) -> ScalarProposer {
        ScalarProposer {
            rng: Rng::new(seed),
            params: Vec::new(),
            best: Vec::new(),
            best_score: f64::NAN,
            population: Vec::new(),
            pending: None,
            credit: [(0.0, 0.0); 4],
            seen: HashSet::new(),
            seen_records: 0,
        }
    }

    fn random_config(&mut self) -> Config {
        let sizes: Vec<usize> = self.params.iter().map(Param::values).collect();
        sizes.into_iter().map(|n| self.rng.below(n)).collect()
    }

    fn choose_technique(&mut self) -> usize {
        let total: f64 = self.credit.iter().map(|c| c.0).sum::<f64>().max(1.0);
        let mut best = (0, f64::MIN);
        for (i, (n, wins)) in self.credit.iter().enumerate() {
            let ucb = if *n == 0.0 {
                f64::MAX / 2.0 + self.rng.unit()
            } else {
                wins / n + EXPLORATION * (2.0 * total.ln() / n).sqrt()
            };
            if ucb > best.1 {
                best = (i, ucb);
            }
        }
        best.0
    }

    /// A DE trial for population member `slot` (or a random member while
    /// the population fills).
    fn differential_evolution(&mut self) -> (Config, Option<usize>) {
        if self.population.len() < POPULATION {
            return (self.random_config(), None);
        }
        let slot = self.rng.below(POPULATION);
        let mut others: Vec<usize> = (0..POPULATION).filter(|i| *i != slot).collect();
        let mut pick = || {
            let i = self.rng.below(others.len());
            others.swap_remove(i)
        };
        let (a, b, c) = (pick(), pick(), pick());
        let target = self.population[slot].0.clone();
        let forced = self.rng.below(target.len().max(1));
        let mut trial = target.clone();
        for (i, value) in trial.iter_mut().enumerate() {
            // Categorical "a + F (b - c)": take a's value where b and c
            // disagree (a direction the population explores), else keep.
            if (i == forced || self.rng.unit() < CROSSOVER)
                && self.population[b].0[i] != self.population[c].0[i]
            {
                *value = self.population[a].0[i];
            }
        }
        (trial, Some(slot))
    }

    fn mutate(&mut self, rate: Option<f64>) -> Config {
        let mut c = self.best.clone();
        let n = c.len();
        if n == 0 {
            return c;
        }
        let redraw = |rng: &mut Rng, c: &mut Config, i: usize, params: &[Param]| {
            let values = params[i].values();
            let current = c[i];
            if values > 1 {
                c[i] = (current + 1 + rng.below(values - 1)) % values;
            }
        };
        match rate {
            Some(p) => {
                let mut changed = false;
                for i in 0..n {
                    if self.rng.unit() < p {
                        redraw(&mut self.rng, &mut c, i, &self.params);
                        changed = true;
                    }
                }
                if !changed {
                    let i = self.rng.below(n);
                    redraw(&mut self.rng, &mut c, i, &self.params);
                }
            }
            None => {
                let i = self.rng.below(n);
                redraw(&mut self.rng, &mut c, i, &self.params);
            }
        }
        c
    }

    fn spec(&self, config: &Config) -> Spec {
        let mut spec = Spec::default();
        for (p, &v) in self.params.iter().zip(config) {
            if v > 0 {
                p.apply(v, &mut spec);
            }
        }
        spec
    }

    /// Reads the pending candidate's score (the only feedback used).
    fn record(&mut self, score: f64) {
        let Some((technique, config, slot)) = self.pending.take() else {
            return;
        };
        self.credit[technique].0 += 1.0;
        if score > self.best_score {
            self.credit[technique].1 += 1.0;
            self.best_score = score;
            self.best = config.clone();
        }
        match slot {
            Some(s) if score >= self.population[s].1 => self.population[s] = (config, score),
            Some(_) => {}
            None if technique == 0 && self.population.len() < POPULATION => {
                self.population.push((config, score));
            }
            None => {}
        }
    }
}

impl Proposer for ScalarProposer {
    fn name(&self) -> &str {
        "scalar"
    }

    fn propose(&mut self, ctx: &ProposalContext<'_>) -> Result<Proposal, ProposeError> {
        if self.best_score.is_nan() {
            self.params = params(ctx.space, &machine_memories(ctx.machine));
            self.best = vec![0; self.params.len()];
            self.best_score = ctx.history.first().map(|r| r.score).unwrap_or(0.0);
        }
        for r in ctx.history.iter().skip(self.seen_records) {
            self.seen.insert(r.source.clone());
        }
        self.seen_records = ctx.history.len();
        // Only the score of the last candidate is read: the scalar feedback.
        let last_score = ctx.history.last().map(|r| r.score).unwrap_or(0.0);
        self.record(last_score);
        // Like OpenTuner's --no-dups, but on the text: a mapper is measured
        // once while new ones can be found; in a space this small that
        // runs out (circuit: ~600 texts), and then, as OpenTuner would, a
        // configuration whose text was measured is measured again.
        let mut last = None;
        for _ in 0..1000 {
            let technique = self.choose_technique();
            let (config, slot) = match technique {
                0 => self.differential_evolution(),
                1 => (self.mutate(Some(MUTATION_RATE)), None),
                2 => (self.mutate(None), None),
                _ => (self.random_config(), None),
            };
            let spec = self.spec(&config);
            // The stacked form while tuning (one resolve per candidate);
            // the loop writes the best one in place at the end.
            let source = render(ctx.base, ctx.base_decisions, &spec, ctx.app);
            let new = self.seen.insert(source.clone());
            last = Some((technique, config, slot, spec, source));
            if new {
                break;
            }
        }
        if let Some((technique, config, slot, spec, source)) = last {
            self.pending = Some((technique, config, slot));
            return Ok(Proposal {
                source,
                spec: Some(spec),
                rationale: format!("{} (scalar feedback only)", TECHNIQUES[technique]),
            });
        }
        Err(ProposeError::Exhausted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::autoguide::{Category, Feedback, FeedbackMode};
    use crate::optimize::history::Record;
    use crate::optimize::runner::Evaluation;
    use mapwright_runtime::app::App;
    use mapwright_runtime::decisions::Decisions;
    use mapwright_runtime::machine::Machine;

    /// A deterministic stand-in score for a candidate text.
    fn score_of(text: &str) -> f64 {
        let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        if h % 3 == 0 {
            0.0
        } else {
            (h % 1000) as f64
        }
    }

    /// Proposals made when each candidate gets `score_of` and, when
    /// `chatty`, raw output and AutoGuide feedback the scalar tuner must
    /// not read.
    fn run(seed: u64, chatty: bool, n: usize) -> Vec<String> {
        let app = App::builtin("cannon").unwrap();
        let machine = Machine::preset("p100x4").unwrap();
        let space = Space::new(&app, &machine);
        let decisions = Decisions::default();
        let resolve = |_: &str| None;
        let mut history: Vec<Record> = Vec::new();
        let mut proposer = ScalarProposer::new(seed);
        let mut out = Vec::new();
        for i in 0..=n {
            let source = if i == 0 {
                "Task * GPU,CPU;\n".to_string()
            } else {
                let ctx = ProposalContext {
                    base: "Task * GPU,CPU;\n",
                    base_decisions: &decisions,
                    app: &app,
                    machine: &machine,
                    space: &space,
                    history: &history,
                    feedback_mode: FeedbackMode::Suggest,
                    resolve: &resolve,
                    as_block: false,
                };
                proposer.propose(&ctx).expect("a proposal").source
            };
            let score = score_of(&source);
            let feedback = if chatty {
                vec![Feedback {
                    rule: "load-imbalance".into(),
                    category: Category::Performance,
                    explain: "imbalanced".into(),
                    suggest: "spread".into(),
                    edit: None,
                }]
            } else {
                vec![]
            };
            history.push(Record {
                iteration: i,
                proposer: "scalar".into(),
                rationale: String::new(),
                source: source.clone(),
                evaluation: Evaluation {
                    status: if score > 0.0 { "ok" } else { "out_of_memory" }.into(),
                    elapsed_s: None,
                    throughput: None,
                    raw_output: if chatty {
                        format!("run {i}: lots of text")
                    } else {
                        String::new()
                    },
                    decisions: None,
                    feedback,
                    metrics: Default::default(),
                },
                score,
                normalized: None,
                parameters: Default::default(),
                spec: None,
                seconds: 0.0,
            });
            out.push(source);
        }
        out
    }

    #[test]
    fn reads_nothing_but_the_scores() {
        assert_eq!(run(3, false, 60), run(3, true, 60));
        assert_ne!(run(3, false, 60), run(4, false, 60), "the seed matters");
    }

    #[test]
    fn never_measures_a_configuration_twice() {
        let proposals = run(1, false, 300);
        let distinct: HashSet<&String> = proposals.iter().collect();
        assert_eq!(distinct.len(), proposals.len());
    }

    #[test]
    fn offers_every_memory_of_the_machine_for_every_region() {
        let app = App::builtin("cannon").unwrap();
        let machine = Machine::preset("p100x4").unwrap();
        let ps = params(&Space::new(&app, &machine), &machine_memories(&machine));
        let mem = ps
            .iter()
            .find_map(|p| match p {
                Param::Memory(t, r, m) if t == "task_4" && r == "A" => Some(m.clone()),
                _ => None,
            })
            .expect("task_4's A is a parameter");
        for m in [MemKind::Fbmem, MemKind::Zcmem, MemKind::Sysmem] {
            assert!(mem.contains(&m), "{m:?} missing from {mem:?}");
        }
    }
}

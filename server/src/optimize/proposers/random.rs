//! The random baseline: every proposal is an independent uniform sample of
//! the search space.

use super::{Proposal, ProposalContext, ProposeError, Proposer};
use crate::optimize::rng::Rng;
use crate::optimize::space::{memories_for, render, IndexFn, LayoutChoice, Spec};

pub struct RandomProposer {
    rng: Rng,
}

impl RandomProposer {
    pub fn new(seed: u64) -> RandomProposer {
        RandomProposer {
            rng: Rng::new(seed),
        }
    }
}

/// A uniform sample of the space.
pub fn random_spec(ctx: &ProposalContext<'_>, rng: &mut Rng) -> Spec {
    let mut spec = Spec::default();
    for (task, kinds) in &ctx.space.procs {
        if let Some(k) = rng.pick(kinds) {
            spec.procs.insert(task.clone(), *k);
        }
    }
    for (task, region) in &ctx.space.regions {
        let Some(kind) = spec.procs.get(task) else {
            continue;
        };
        if let Some(m) = rng.pick(&memories_for(*kind, ctx.machine)) {
            spec.memories.insert((task.clone(), region.clone()), *m);
        }
    }
    for task in &ctx.space.layout_tasks {
        spec.layouts.insert(
            task.clone(),
            LayoutChoice {
                soa: rng.below(2) == 0,
                c_order: rng.below(2) == 0,
            },
        );
    }
    for task in &ctx.space.child_tasks {
        spec.same_point.insert(task.clone(), rng.below(2) == 0);
    }
    for task in &ctx.space.collect_tasks {
        spec.collect.insert(task.clone(), rng.below(2) == 0);
    }
    for task in &ctx.space.index_tasks {
        if let Some(f) = rng.pick(&IndexFn::ALL) {
            spec.index_fns.insert(task.clone(), *f);
        }
    }
    spec
}

impl Proposer for RandomProposer {
    fn name(&self) -> &str {
        "random"
    }

    fn propose(&mut self, ctx: &ProposalContext<'_>) -> Result<Proposal, ProposeError> {
        let spec = random_spec(ctx, &mut self.rng);
        // The stacked form while sampling (one resolve per candidate); the
        // loop writes the best one in place at the end.
        let source = render(ctx.base, ctx.base_decisions, &spec, ctx.app);
        Ok(Proposal {
            source,
            spec: Some(spec),
            rationale: "uniform random sample".into(),
        })
    }
}

use std::collections::HashSet;

use mapwright_grammar::ast::{self, StmtKind};

use crate::decisions::Order;

use super::codes::{code_summary, CODES};
use super::layout::{fold_constraints, layout_text};
use super::placement::{default_num_blocks, default_slicing, domain_points, MAX_PLACED_POINTS};
use super::placer::{check_bounds, MachinePoint, PlacementError};

#[test]
fn default_blocks_follow_legion() {
    // 4 processors over a (2, 2) domain: one block per point.
    assert_eq!(default_num_blocks(4, &[2, 2]), vec![2, 2]);
    // Primes go, largest first, to the dimension with most points per block.
    assert_eq!(default_num_blocks(6, &[4, 9]), vec![2, 3]);
    assert_eq!(default_num_blocks(8, &[2, 2, 2]), vec![2, 2, 2]);
    assert_eq!(default_num_blocks(1, &[5, 5]), vec![1, 1]);
    assert_eq!(default_num_blocks(7, &[1, 100]), vec![1, 7]);
}

#[test]
fn default_slicing_deals_blocks_in_column_major_order() {
    let s = default_slicing(&[2, 2], 4);
    assert_eq!(s[&vec![0, 0]], 0);
    assert_eq!(s[&vec![1, 0]], 1);
    assert_eq!(s[&vec![0, 1]], 2);
    assert_eq!(s[&vec![1, 1]], 3);
    // 1-D: contiguous blocks, sizes differing by at most one.
    let s = default_slicing(&[10], 4);
    let counts = (0..4u64)
        .map(|p| s.values().filter(|&&x| x == p).count())
        .collect::<Vec<_>>();
    assert_eq!(counts, vec![2, 3, 2, 3]);
    assert_eq!(s[&vec![0]], 0);
    assert_eq!(s[&vec![9]], 3);
    // Fewer points than processors: empty blocks are skipped and do not
    // consume a processor.
    let s = default_slicing(&[2], 4);
    assert_eq!(s.values().copied().collect::<Vec<_>>(), vec![0, 1]);
    assert!(default_slicing(&[0], 4).is_empty());
    assert!(default_slicing(&[4], 0).is_empty());
}

#[test]
fn domain_points_are_row_major_and_bounded() {
    assert_eq!(
        domain_points(&[2, 2]),
        vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]
    );
    assert!(domain_points(&[]).is_empty());
    assert_eq!(
        domain_points(&[1 << 20, 1 << 20]).len() as u64,
        MAX_PLACED_POINTS
    );
}

#[test]
fn later_constraints_of_a_family_win() {
    let src = "Layout * * * AOS SOA F_order C_order Compact Exact Align<=64 Align==128;";
    let parsed = mapwright_grammar::parse(src);
    let StmtKind::Layout { constraints, .. } = &parsed.program.stmts[0].kind else {
        panic!("not a layout");
    };
    let l = fold_constraints(constraints);
    assert!(l.soa && l.compact && l.exact);
    assert_eq!(l.order, Order::C);
    assert_eq!(l.align, Some((ast::AlignOp::Eq, 128)));
    assert_eq!(layout_text(&l), "SOA C_order Compact Exact Align==128");
    assert_eq!(layout_text(&fold_constraints(&[])), "SOA F_order");
}

#[test]
fn codes_are_unique_and_in_the_resolution_range() {
    let mut seen = HashSet::new();
    for c in CODES {
        assert!(seen.insert(c.code), "duplicate {}", c.code);
        assert!(c.code[1..].starts_with("03"), "{}", c.code);
        assert!(
            mapwright_grammar::codes::summary(c.code).is_none(),
            "{} clashes with grammar",
            c.code
        );
    }
    assert!(code_summary("E0305").is_some());
}

#[test]
fn reference_bound_checks() {
    let ok = MachinePoint { node: 1, proc: 3 };
    assert_eq!(check_bounds(ok, 2, 4), Ok(ok));
    let Err(PlacementError::OutsideMachine { raw, .. }) =
        check_bounds(MachinePoint { node: 0, proc: 4 }, 1, 4)
    else {
        panic!("expected an error");
    };
    assert_eq!(raw, "Slice processor index out of bound!\n4 >= 4\n");
    assert!(check_bounds(MachinePoint { node: 2, proc: 0 }, 2, 4).is_err());
    assert!(check_bounds(MachinePoint { node: 0, proc: -1 }, 2, 4).is_err());
}

/// E0302 says what the reference does: its own check where the machine
/// has processors of the model's kind, and, on a machine without any (the
/// GPU experts on a CPU-only host), that it dies before that check.
#[test]
fn the_wrong_kind_note_says_what_the_reference_does_without_such_processors() {
    use crate::machine::{Machine, ProcKind};
    let app = crate::app::App::builtin("circuit").unwrap();
    let source = crate::app::expert_mapper_text("circuit").unwrap();
    let analysis = mapwright_grammar::analyze(source);
    let note_on = |machine: &Machine| -> String {
        let d = super::resolve_mapping(&analysis, source, &app, machine);
        d.diagnostics
            .iter()
            .filter(|x| x.code == "E0302")
            .flat_map(|x| x.notes.iter().cloned())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut cpus = Machine::preset("p100x4").unwrap();
    cpus.node.processors.retain(|p| p.kind != ProcKind::Gpu);
    let without = note_on(&cpus);
    assert!(without.contains("this machine has no GPU"), "{without}");
    assert!(without.contains("SIGFPE"), "{without}");
    assert!(
        without.contains("Slice processor index out of bound! 0 >= 0"),
        "{without}"
    );
    assert!(
        without.contains("is actually mapped to CPU, but machine model is for GPU"),
        "{without}"
    );
}

/// The language server hands its top-level evaluator to the placer: only
/// where the placer's own run of the top level would be the same one.
#[test]
fn a_top_level_is_handed_to_the_placer_only_where_its_own_run_would_match() {
    use super::placer::EvalPlacer;
    use crate::eval::{Evaluator, Limits};
    use crate::machine::Machine;
    use std::sync::Arc;

    let machine = Machine::preset("p100x4").unwrap();
    let program = |src: &str| Arc::new(mapwright_grammar::parse(src).program);
    let limits = Limits {
        max_steps: 200_000,
        ..Limits::default()
    };
    // (As the language server sees the machine.)
    let shape = EvalPlacer::shape(&machine, 1);
    let small =
        program("m = Machine(GPU);\ndef f(Task t) { return m[0, 0]; }\nIndexTaskMap t f;\n");
    let (ev, err) = Evaluator::new_partial_shared(small.clone(), &shape, limits);
    assert!(err.is_none(), "{err:?}");
    assert!(EvalPlacer::from_top_level(ev, &machine).is_some());
    // Another machine shape: the placer must run its own top level.
    let other = crate::eval::MachineShape::new(2).with(crate::mspace::ProcKind::Gpu, 4);
    let (ev, _) = Evaluator::new_partial_shared(small, &other, limits);
    assert!(EvalPlacer::from_top_level(ev, &machine).is_none());
    // A top level over the placer's step limit: its own run would fail.
    let long: String = (0..4_000)
        .map(|i| {
            format!(
                "x{i} = 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12 + 13 + 14 + 15 + 16;\n"
            )
        })
        .collect();
    let long = program(&long);
    let (ev, err) = Evaluator::new_partial_shared(long, &shape, limits);
    assert!(err.is_none(), "{err:?}");
    assert!(
        ev.top_level_steps() > super::placement::STEPS_PER_CALL,
        "{}",
        ev.top_level_steps()
    );
    assert!(EvalPlacer::from_top_level(ev, &machine).is_none());
}

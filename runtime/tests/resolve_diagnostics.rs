//! Snapshot tests for every mapping-resolution diagnostic (E03xx, W03xx,
//! I03xx): the source, the diagnostics with their fixes and the fatal
//! message a real run prints, the source after applying every fix, and the
//! re-check.

mod resolve;

use mapwright_runtime::app::expert_mapper_text;
use mapwright_runtime::machine::{Machine, ProcKind};

const STENCIL: &str = "Task * GPU,CPU;\nRegion * * GPU FBMEM;\nRegion * * CPU SYSMEM;\nLayout * * * SOA F_order;\nmgpu = Machine(GPU);\n";

fn stencil(rest: &str) -> String {
    format!("{STENCIL}{rest}")
}

fn cannon_expert() -> &'static str {
    expert_mapper_text("cannon").expect("cannon expert")
}

fn circuit_expert() -> &'static str {
    expert_mapper_text("circuit").expect("circuit expert")
}

// ----- launch points --------------------------------------------------------

case!(
    launch_point_outside_the_machine,
    "stencil",
    "p100x4",
    &stencil(
        "def f(Task t) { return mgpu[0, t.ipoint[0] * 2]; }\nIndexTaskMap stencil,increment f;\n"
    )
);
case!(
    launch_point_outside_the_machine_node_index,
    "stencil",
    "2x4gpu",
    &stencil("def f(Task t) { return mgpu[t.ipoint[0], 0]; }\nIndexTaskMap stencil f;\n")
);
case!(
    machine_model_of_the_wrong_kind,
    "cannon",
    "p100x4",
    &cannon_expert().replace(
        "IndexTaskMap task_7 auto2d_omp;",
        "IndexTaskMap task_7 auto2d;"
    )
);
case!(
    ipoint_beyond_the_launch_dimensionality,
    "stencil",
    "p100x4",
    &stencil(
        "def f(Task t) { return mgpu[0, t.ipoint[1] % mgpu.size[1]]; }\nIndexTaskMap stencil f;\n"
    )
);
case!(
    ipoint_through_a_local_and_a_helper,
    "stencil",
    "p100x4",
    &stencil("def g(IPoint p) { return p[2]; }\ndef f(Task t) { ip = t.ipoint; return mgpu[0, (ip[0] + g(ip)) % mgpu.size[1]]; }\nIndexTaskMap stencil f;\n")
);
case!(
    ipoint_beyond_the_launch_dimensionality_in_a_branch_that_runs,
    "stencil",
    "p100x4",
    &stencil("def lin(IPoint ip, ISpace sp) { return sp.len == 1 ? ip[1] : ip[0]; }\ndef f(Task t) { return mgpu[0, lin(t.ipoint, t.ispace) % mgpu.size[1]]; }\nIndexTaskMap stencil f;\n")
);

/// The reference's `?:` is lazy: `ip[1]` in the branch a 1-D launch never
/// takes is no error, neither statically nor when the points are placed.
#[test]
fn ipoint_beyond_the_launch_dimensionality_in_a_branch_that_never_runs() {
    let guarded = [
        // the brief's form: a helper returning a linearised point
        "def lin(IPoint ip, ISpace sp) { return sp.len == 1 ? ip[0] : ip[0] * sp[1] + ip[1]; }\ndef f(Task t) { return mgpu[0, lin(t.ipoint, t.ispace) % mgpu.size[1]]; }\nIndexTaskMap stencil,increment f;\n",
        // the same through locals in the entry function
        "def f(Task t) { ip = t.ipoint; sp = t.ispace; i = sp.len == 1 ? ip[0] : ip[0] * sp[1] + ip[1]; return mgpu[0, i % mgpu.size[1]]; }\nIndexTaskMap stencil f;\n",
        // reading the task directly, nested ternaries
        "def f(Task t) { return mgpu[0, (t.ispace.len > 2 ? t.ipoint[2] : t.ispace.len > 1 ? t.ipoint[1] : t.ipoint[0]) % mgpu.size[1]]; }\nIndexTaskMap stencil f;\n",
        // `t.parent` (single launches only) in the branch an index launch
        // never takes
        "def f(Task t) { return t.ispace.len > 0 ? mgpu[0, t.ipoint[0] % mgpu.size[1]] : mgpu[*t.parent.processor(mgpu)]; }\nIndexTaskMap stencil f;\n",
        // a helper called only from the branch that does not run
        "def g(IPoint p) { return p[1]; }\ndef f(Task t) { return mgpu[0, (t.ispace.len == 1 ? t.ipoint[0] : g(t.ipoint)) % mgpu.size[1]]; }\nIndexTaskMap stencil f;\n",
    ];
    for rest in guarded {
        let src = stencil(rest);
        let d = resolve::resolve(&src, "stencil", "p100x4");
        let diags = resolve::describe_diagnostics(&src, &resolve::resolution_diagnostics(&d));
        assert!(
            !diags.contains("E0311") && !diags.contains("E0312"),
            "{rest}\n{diags}"
        );
        assert!(d.fatal.is_none(), "{rest}: {:?}", d.fatal);
        let stencil_task = d
            .tasks
            .iter()
            .find(|t| t.task == "stencil")
            .expect("stencil");
        assert_eq!(stencil_task.placement.len(), 4, "{rest}");
    }
}

/// An unconditional read past the launch's dimensionality is still
/// reported statically, and the run's failure is the evaluator's.
#[test]
fn unconditional_ipoint_read_is_reported_once_and_fails_when_placed() {
    let src = stencil(
        "def f(Task t) { return mgpu[0, t.ipoint[1] % mgpu.size[1]]; }\nIndexTaskMap stencil f;\n",
    );
    let d = resolve::resolve(&src, "stencil", "p100x4");
    let e0311 = d.diagnostics.iter().filter(|x| x.code == "E0311").count();
    assert_eq!(e0311, 1);
    let fatal = d.fatal.expect("fatal");
    assert_eq!(fatal.kind, "index_out_of_bound");
    assert_eq!(fatal.raw_output, "Index out of bound for TupleIntNode\n");
}

case!(
    task_property_the_launch_does_not_have,
    "stencil",
    "p100x4",
    &stencil(
        "def f(Task t) { return mgpu[*t.parent.processor(mgpu)]; }\nIndexTaskMap stencil f;\n"
    )
);
case!(
    mapping_function_fails,
    "stencil",
    "p100x4",
    &stencil("def f(Task t) { return mgpu[0, t.ipoint[0] / 0]; }\nIndexTaskMap stencil f;\n")
);
case!(
    load_imbalance,
    "cannon",
    "p100x4",
    &cannon_expert().replace(
        "IndexTaskMap task_1,task_2,task_3,taco_fill,taco_validate auto2d;",
        "def first(Task task) { return m_2d[0, 0]; }\nIndexTaskMap task_1,task_2,task_3,taco_fill,taco_validate first;"
    )
);
case!(
    index_task_map_star_is_never_consulted,
    "stencil",
    "p100x4",
    &stencil("def f(Task t) { return mgpu[0, t.ipoint[0] % mgpu.size[1]]; }\nIndexTaskMap * f;\n")
);
case!(
    map_statement_of_the_wrong_launch_kind,
    "stencil",
    "p100x4",
    &stencil(
        "def f(Task t) { return mgpu[0, t.ipoint[0] % mgpu.size[1]]; }\nSingleTaskMap stencil f;\n"
    )
);

// ----- processor kinds --------------------------------------------------------

case!(
    task_kind_without_a_variant,
    "cannon",
    "p100x4",
    &format!("Task task_7 GPU;\n{}", cannon_expert())
);
case!(
    task_kind_the_machine_lacks,
    "stencil",
    "p100x4",
    "Task stencil IO,GPU;\nLayout * * * SOA F_order;\n"
);

#[test]
fn task_without_a_runnable_variant() {
    // A machine without OMP processors: DISTAL's task_6/task_7 only have
    // OMP variants.
    let mut m = Machine::preset("p100x4").expect("preset");
    m.node.processors.retain(|p| p.kind != ProcKind::Omp);
    m.node.affinities.retain(|a| a.proc != ProcKind::Omp);
    m.name = "p100x4-no-omp".into();
    insta::assert_snapshot!(resolve::describe_on(cannon_expert(), "cannon", &m));
}

// ----- memories ---------------------------------------------------------------

case!(
    region_in_a_memory_the_processor_cannot_reach,
    "circuit",
    "p100x4",
    &circuit_expert().replace("Region * * GPU FBMEM;", "Region * * GPU SYSMEM;")
);
case!(
    unreachable_memory_in_a_list,
    "circuit",
    "p100x4",
    "Task * GPU,CPU;\nRegion * * GPU SYSMEM,FBMEM;\nLayout * * * SOA C_order;\n"
);
case!(
    memory_the_machine_lacks,
    "stencil",
    "h200",
    "Task * GPU,CPU;\nRegion * * CPU SOCKMEM;\nLayout * * * SOA F_order;\n"
);
case!(
    region_rule_for_a_kind_the_task_never_runs_on,
    "cannon",
    "p100x4",
    &format!("Region task_7 * GPU FBMEM;\n{}", cannon_expert())
);

// ----- layouts -----------------------------------------------------------------

case!(
    cublas_needs_c_order,
    "cannon",
    "p100x4",
    &cannon_expert().replace("Layout * * * SOA C_order;", "Layout * * * SOA F_order;")
);
case!(
    cublas_needs_c_order_without_any_layout_statement,
    "cannon",
    "p100x4",
    &cannon_expert().replace("Layout * * * SOA C_order;", "")
);
case!(
    cublas_needs_c_order_on_a_task_rule,
    "summa",
    "p100x4",
    &expert_mapper_text("summa").expect("summa").replace(
        "Layout * * * SOA C_order;",
        "Layout * * * SOA C_order;\nLayout task_4 * FBMEM F_order;"
    )
);
case!(
    regent_needs_f_order,
    "stencil",
    "p100x4",
    "Task * GPU,CPU;\nRegion * * GPU FBMEM;\nLayout * * * SOA C_order;\n"
);
case!(
    contradictory_layouts_for_one_instance,
    "cannon",
    "p100x4",
    &cannon_expert().replace(
        "Layout * * * SOA C_order;",
        "Layout * * * SOA F_order;\nLayout task_4 * * SOA C_order;"
    )
);
case!(
    layout_silently_shadowed,
    "circuit",
    "p100x4",
    "Task * GPU,CPU;\nLayout * rp_wires * AOS;\nLayout calculate_new_currents * FBMEM SOA;\n"
);
case!(
    exact_without_compact,
    "circuit",
    "p100x4",
    "Task * GPU,CPU;\nLayout * * * SOA C_order Exact;\n"
);
case!(
    layout_for_a_memory_the_task_never_uses,
    "cannon",
    "p100x4",
    &cannon_expert().replace(
        "Layout * * * SOA C_order;",
        "Layout * * * SOA C_order;\nLayout task_4 * SYSMEM AOS;"
    )
);

// ----- names ---------------------------------------------------------------------

case!(
    unknown_task_and_region_names,
    "circuit",
    "p100x4",
    "Task calculate_new_current GPU;\nRegion * rp_share GPU ZCMEM;\nRegion calculate_new_currents rp_ghosts GPU ZCMEM;\nLayout update_voltages rp_wires * AOS;\n"
);
/// The parent-region names real circuit mappers use (the ASI paper's
/// figure A4 mapper, `shared/corpus/public/paper-figA4-circuit-iter2.mapper`)
/// match requirements the way the DSL mapper's `get_handle_names` does:
/// region, parent partition, privilege-parent (root) region. `all_private`
/// is never a task argument, nor any argument's partition or root, so its
/// statement never applies.
#[test]
fn circuit_parent_region_names_match() {
    let src = "Task * GPU,OMP,CPU;\nRegion * * GPU FBMEM;\nRegion * * * SOCKMEM,SYSMEM;\n\
        Region * all_times GPU FBMEM;\nRegion * all_nodes GPU FBMEM;\nRegion * all_wires GPU FBMEM;\n\
        Region * ghost_ranges GPU FBMEM;\nRegion * rp_all_nodes GPU FBMEM;\nRegion * all_private GPU FBMEM;\n\
        Region * all_shared GPU FBMEM;\nRegion * rp_shared GPU FBMEM;\nRegion * rp_wires GPU FBMEM;\n\
        Region * rp_ghost_ranges GPU FBMEM;\nLayout * * * C_order AOS;\n";
    let d = resolve::resolve(src, "circuit", "p100x4");
    let w0310: Vec<String> = d
        .diagnostics
        .iter()
        .filter(|x| x.code == "W0310")
        .map(|x| x.message.clone())
        .collect();
    assert_eq!(w0310.len(), 1, "{w0310:#?}");
    assert!(w0310[0].contains("`all_private`"), "{w0310:#?}");
    assert!(d.fatal.is_none(), "{:?}", d.fatal);
    // `Region * all_nodes GPU FBMEM` decides the ghost nodes of
    // calculate_new_currents (before it, `Region * * GPU FBMEM` would).
    let app = mapwright_runtime::app::App::builtin("circuit").expect("circuit");
    let rp_ghost = app
        .tasks
        .iter()
        .find(|t| t.name == "calculate_new_currents")
        .and_then(|t| t.regions.iter().find(|r| r.name == "rp_ghost"))
        .expect("rp_ghost");
    assert!(rp_ghost.answers_to("all_nodes"));
    let ghost_rule = d
        .tasks
        .iter()
        .find(|t| t.task == "calculate_new_currents")
        .and_then(|t| t.regions.iter().find(|r| r.region == "rp_ghost"))
        .and_then(|r| r.memory_rule)
        .expect("decided by a rule");
    assert!(
        ghost_rule.text(src).contains("all_nodes"),
        "{}",
        ghost_rule.text(src)
    );
}

case!(
    region_name_in_a_run_that_matches_by_index,
    "cannon",
    "p100x4",
    &format!(
        "Region task_4 A GPU ZCMEM;\nLayout task_4 B * C_order;\n{}",
        cannon_expert()
    )
);
case!(
    region_index_in_a_run_that_matches_by_name,
    "circuit",
    "p100x4",
    "Task * GPU,CPU;\nRegion calculate_new_currents 1 GPU ZCMEM;\nRegion init_pointers 9 CPU SYSMEM;\n"
);

// ----- backpressure ----------------------------------------------------------------

case!(
    instance_limit_on_an_index_launch,
    "cannon",
    "p100x4",
    &format!("InstanceLimit task_1 2;\n{}", cannon_expert())
);

// ----- what a real run prints first ----------------------------------------------------

#[test]
fn fatal_messages_are_the_reference_texts() {
    let cases: [(&str, &str); 6] = [
        ("IndexTaskMap stencil f;\ndef f(Task t) { return mgpu[0, 0]; }\nmgpu = Machine(GPU);\n", "IndexTaskMap's function undefined\n"),
        ("x = 1;\nIndexTaskMap stencil x;\n", "IndexTaskMap's mapping function is undefined\n"),
        ("mgpu = Machine(GPU);\ndef f(IPoint p) { return mgpu[0, 0]; }\nSingleTaskMap stencil f;\n", "Entry mapping function's must be like func(Task t)\n"),
        ("m = Machine(GPU);\nm = Machine(CPU);\n", "AssignNode multiple m cause conflicts in global_symbol!\n"),
        ("x = mgpu.size;\n", "mgpu not found\n"),
        ("Task * GPU\nRegion * * GPU FBMEM;\n", "Error at line 2:\n\tsyntax error\n"),
    ];
    for (source, raw) in cases {
        let d = resolve::resolve(source, "stencil", "p100x4");
        let fatal = d.fatal.unwrap_or_else(|| panic!("no fatal for {source:?}"));
        assert_eq!(fatal.raw_output, raw, "{source:?}");
    }
    let d = resolve::resolve("Task * GPU @ CPU;\n", "stencil", "p100x4");
    assert_eq!(
        d.fatal.map(|f| f.raw_output),
        Some("Error at line 1:\n\tUnrecognized character: @\n".to_string())
    );
}

case!(
    mapping_function_that_never_stops,
    "stencil",
    "p100x4",
    &stencil("def g(int x) { return g(x + 1); }\ndef f(Task t) { return mgpu[0, g(t.ipoint[0]) % mgpu.size[1]]; }\nIndexTaskMap stencil f;\n")
);

/// Pennant launches some tasks twice per cycle, over `rp_all_private_p[i]`
/// and over `rp_all_shared_p[i]`: a statement naming one launch's region
/// decides that launch only (the DSL mapper matches each requirement by its
/// own names), and the simulator runs each launch where it was put.
#[test]
fn pennant_launches_are_decided_by_their_own_region_names() {
    let decide = |src: &str| {
        let d = resolve::resolve(src, "pennant", "p100x4");
        assert!(d.fatal.is_none(), "{:?}", d.fatal);
        let arg = d
            .tasks
            .iter()
            .find(|t| t.task == "adv_pos_full")
            .and_then(|t| t.regions.iter().find(|r| r.index == 0))
            .expect("adv_pos_full argument 0")
            .clone();
        (arg, d)
    };
    let shared = "Task * GPU,CPU;\nRegion * rp_all_shared_p GPU ZCMEM;\n";
    let (arg, _) = decide(shared);
    assert_eq!(arg.region, "rp_all_private_p");
    assert_eq!(arg.memory, mapwright_runtime::machine::MemKind::Fbmem);
    assert!(
        arg.memory_rule.is_none(),
        "the private launch keeps the default"
    );
    assert_eq!(arg.launches.len(), 1);
    assert_eq!(arg.launches[0].region, "rp_all_shared_p");
    assert_eq!(
        arg.launches[0].memory,
        mapwright_runtime::machine::MemKind::Zcmem
    );
    assert!(arg.launches[0]
        .memory_rule
        .expect("decided by line 2")
        .text(shared)
        .contains("rp_all_shared_p"));

    // The parent region's name reaches its own launch only, too.
    let private = "Task * GPU,CPU;\nRegion adv_pos_full rp_all_private GPU ZCMEM;\n";
    let (arg, _) = decide(private);
    assert_eq!(arg.memory, mapwright_runtime::machine::MemKind::Zcmem);
    assert_eq!(
        arg.launches[0].memory,
        mapwright_runtime::machine::MemKind::Fbmem
    );

    // The simulator follows: 321 shared points per piece fit in zero-copy
    // memory; 7.4 M private points per piece, four pieces, do not.
    let app = mapwright_runtime::app::App::builtin("pennant").unwrap();
    let machine = Machine::preset("p100x4").unwrap();
    let run = |src: &str| {
        let (_, d) = decide(src);
        mapwright_runtime::sim::simulate(&d, &app, &machine, 0, 0.0)
    };
    let base = run("Task * GPU,CPU;\n").elapsed_s.unwrap();
    let with_shared = run(shared);
    assert!(with_shared.status.is_ok(), "{}", with_shared.raw_output);
    assert!((with_shared.elapsed_s.unwrap() - base).abs() / base < 0.01);
    let with_private = run(private);
    assert!(!with_private.status.is_ok());
    assert!(
        with_private
            .raw_output
            .contains("requirement 0 of task adv_pos_full")
            && with_private.raw_output.contains("Z_COPY_MEM"),
        "{}",
        with_private.raw_output
    );
}

/// An unknown task name repeated (a mapper written for another
/// application) gets the nearest task name each time it appears, asked
/// once per name.
#[test]
fn a_repeated_unknown_task_gets_the_same_suggestion_each_time() {
    let src = "Task calculate_new_current GPU;\nTask distribute_charg GPU;\n\
        Task calculate_new_current CPU;\nTask zzzzzzzzzzzzzzzz GPU;\nTask distribute_charg CPU;\n";
    let fixes = first_fix_titles(src, "W0309");
    let use_ = |name: &str| Some(format!("use `{name}`"));
    assert_eq!(
        fixes,
        vec![
            use_("calculate_new_currents"),
            use_("distribute_charge"),
            use_("calculate_new_currents"),
            None,
            use_("distribute_charge"),
        ]
    );
}

/// A repeated unknown region name gets the nearest argument name among
/// the arguments of the tasks its statement names (of every task when it
/// names none it knows) each time: the same name under other tasks gets
/// their nearest.
#[test]
fn a_repeated_unknown_region_gets_the_nearest_argument_of_its_tasks() {
    let src = "Region * rp_privat GPU ZCMEM;\nRegion update_voltages rp_privat GPU ZCMEM;\n\
        Region * rp_privat GPU FBMEM;\nRegion calculate_new_currents rp_wire GPU ZCMEM;\n\
        Region * rp_wire GPU ZCMEM;\nRegion update_voltages rp_wire GPU ZCMEM;\n";
    let fixes = first_fix_titles(src, "W0310");
    let use_ = |name: &str| Some(format!("use `{name}`"));
    // (update_voltages has no `rp_wires` argument, nor one near `rp_wire`.)
    assert_eq!(
        fixes,
        vec![
            use_("rp_private"),
            use_("rp_private"),
            use_("rp_private"),
            use_("rp_wires"),
            use_("rp_wires"),
            None,
        ]
    );
}

/// The title of the first fix of each `code` diagnostic of `src` resolved
/// for circuit on p100x4, in order (`None` for one without a fix).
fn first_fix_titles(src: &str, code: &str) -> Vec<Option<String>> {
    resolve::resolve(src, "circuit", "p100x4")
        .diagnostics
        .iter()
        .filter(|x| x.code == code)
        .map(|x| x.fixes.first().map(|f| f.title.to_string()))
        .collect()
}

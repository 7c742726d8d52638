use mapwright_grammar::ast::{self, Expr, ExprKind, Program, Stmt, StmtKind};
use mapwright_grammar::Span;

use crate::mspace::{MSpaceError, MachineModel, PhysicalProc, ProcKind};

use super::error::{EvalError, EvalErrorKind};
use super::evaluator::{Evaluator, MappingKind, Placement};
use super::machine_ops::{binomial, split_candidates};
use super::shape::{Limits, MachineShape, SingleTask};
use super::value::Value;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `nodes` nodes with `gpus` GPUs, 4 CPUs and 1 OpenMP processor each.
fn machine(nodes: i64, gpus: i64) -> MachineShape {
    MachineShape::new(nodes)
        .with(ProcKind::Gpu, gpus)
        .with(ProcKind::Cpu, 4)
        .with(ProcKind::Omp, 1)
}

const SIZES: [(i64, i64); 3] = [(1, 4), (2, 4), (4, 4)];

fn run(src: &str, m: &MachineShape) -> Evaluator {
    match Evaluator::from_source(src, m) {
        Ok(ev) => ev,
        Err(e) => panic!("top level failed: {e:?}\n{src}"),
    }
}

fn top_error(src: &str) -> EvalError {
    match Evaluator::from_source(src, &machine(2, 4)) {
        Ok(_) => panic!("expected an error from\n{src}"),
        Err(e) => e,
    }
}

fn ints(items: &[i64]) -> Value {
    Value::IntTuple {
        items: items.to_vec(),
        proc: None,
    }
}

fn global_ints(ev: &Evaluator, name: &str) -> Vec<i64> {
    match ev.global(name) {
        Some(Value::IntTuple { items, .. }) => items.clone(),
        other => panic!("{name} is {other:?}"),
    }
}

fn call_err(ev: &mut Evaluator, f: &str, args: &[Value]) -> EvalError {
    match ev.call(f, args) {
        Ok(v) => panic!("{f} returned {v:?}, expected an error"),
        Err(e) => e,
    }
}

/// Every point of a model, the last coordinate fastest.
fn points(size: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new()];
    for &e in size {
        out = out
            .iter()
            .flat_map(|p| {
                (0..e).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

fn the_span(src: &str, needle: &str) -> Span {
    let start = src.find(needle).expect("needle in source");
    Span::new(start, start + needle.len())
}

// ----- machine-model transformations through DSL text -------------------

type Build = fn(&MachineModel) -> Result<MachineModel, MSpaceError>;

const TRANSFORMS: &[(&str, Build)] = &[
    ("m", |m| Ok(m.clone())),
    ("m.merge(0, 1)", |m| m.merge(0, 1)),
    ("m.merge(1, 0)", |m| m.merge(1, 0)),
    ("m.split(1, 2)", |m| m.split(1, 2)),
    ("m.split(0, 1)", |m| m.split(0, 1)),
    ("m.swap(0, 1)", |m| m.swap(0, 1)),
    ("m.slice(1, 1, 2)", |m| m.slice(1, 1, 2)),
    ("m.slice(0, 0, 0)", |m| m.slice(0, 0, 0)),
    ("m.reverse(0)", |m| m.reverse(0)),
    ("m.reverse(1)", |m| m.reverse(1)),
    ("m.balance_split(1, 2)", |m| m.balance_split(1, 2)),
    ("m.merge(0, 1).balance_split(0, 3)", |m| {
        m.merge(0, 1)?.balance_split(0, 3)
    }),
    ("m.auto_split(0, (2, 2))", |m| m.auto_split(0, &[2, 2])),
    ("m.auto_split(1, (4, 2, 1))", |m| {
        m.auto_split(1, &[4, 2, 1])
    }),
    ("m.merge(0, 1).auto_split(0, (4, 4))", |m| {
        m.merge(0, 1)?.auto_split(0, &[4, 4])
    }),
    ("m.greedy_split(1, (2, 2))", |m| m.greedy_split(1, &[2, 2])),
    (
        "m.auto_split(0, (2, 2)).auto_split(2, (2, 2)).swap(0, 3).reverse(1)",
        |m| {
            m.auto_split(0, &[2, 2])?
                .auto_split(2, &[2, 2])?
                .swap(0, 3)?
                .reverse(1)
        },
    ),
];

/// Each transformation, written in the DSL, names exactly the processors
/// the machine-model semantics say, for every point, on several machines;
/// `task.processor(t)` inverts it.
#[test]
fn every_transformation_through_dsl_text() {
    for (nodes, gpus) in SIZES {
        let shape = machine(nodes, gpus);
        let base = MachineModel::new(ProcKind::Gpu, nodes, gpus).expect("machine");
        for (text, build) in TRANSFORMS {
            let model = build(&base).expect("valid transformation");
            let src = format!(
                "m = Machine(GPU);\nt = {text};\ns = t.size;\nn = t.len;\nv = t.volume;\n\
                 def at(IPoint p) {{ return t[*p]; }}\n\
                 def back(Task task) {{ return t[*task.processor(t)]; }}\n\
                 def coords(Task task) {{ return task.processor(t); }}\n"
            );
            let mut ev = run(&src, &shape);
            let ctx = format!("{text} on {nodes}x{gpus}");
            assert_eq!(global_ints(&ev, "s"), model.size(), "{ctx}");
            assert_eq!(
                ev.global("n"),
                Some(&Value::Int(model.len() as i64)),
                "{ctx}"
            );
            assert_eq!(ev.global("v"), Some(&Value::Int(model.volume())), "{ctx}");
            for p in points(model.size()) {
                let expected = model.to_physical(&p).expect("in range");
                let got = ev.call("at", &[ints(&p)]);
                assert_eq!(
                    got,
                    Ok(Value::IntTuple {
                        items: vec![expected.0, expected.1],
                        proc: Some(ProcKind::Gpu)
                    }),
                    "{ctx} at {p:?}"
                );
            }
            if text.contains("slice") {
                continue;
            }
            for node in 0..nodes {
                for proc in 0..gpus {
                    let task = SingleTask {
                        name: "t".into(),
                        processor: Some((node, proc)),
                        parent: None,
                    };
                    let got = ev.map_single_task("back", &task, Some(ProcKind::Gpu));
                    assert_eq!(
                        got.map(|p| p.procs),
                        Ok(vec![(node, proc)]),
                        "{ctx}: round trip of ({node}, {proc})"
                    );
                }
            }
        }
    }
}

/// The README's guarantees, checked by hand on 2 nodes x 4 GPUs.
#[test]
fn transformations_match_the_readme_on_two_nodes() {
    let src = "m = Machine(GPU);\n\
               a = m.merge(0, 1)[5];\n\
               b = m.split(1, 2)[1, 1, 1];\n\
               c = m.swap(0, 1)[3, 1];\n\
               d = m.slice(1, 1, 2)[0, 1];\n\
               e = m.reverse(1)[0, 0];\n\
               f = m.balance_split(1, 2)[0, 0, 1];\n\
               g = m.split(1, 2).size;\n\
               h = m.slice(1, 1, 2).size;\n\
               i = m.merge(0, 1).balance_split(0, 2).size;\n";
    let ev = run(src, &machine(2, 4));
    assert_eq!(global_ints(&ev, "a"), [1, 1]);
    assert_eq!(global_ints(&ev, "b"), [1, 3]);
    assert_eq!(global_ints(&ev, "c"), [1, 3]);
    assert_eq!(global_ints(&ev, "d"), [0, 2]);
    assert_eq!(global_ints(&ev, "e"), [0, 3]);
    assert_eq!(global_ints(&ev, "f"), [0, 2]);
    assert_eq!(global_ints(&ev, "g"), [2, 2, 2]);
    assert_eq!(global_ints(&ev, "h"), [2, 2]);
    // 8 = 4 x 2, decreasing.
    assert_eq!(global_ints(&ev, "i"), [4, 2]);
    // A machine point remembers its model's kind.
    assert_eq!(
        ev.global("a"),
        Some(&Value::IntTuple {
            items: vec![1, 1],
            proc: Some(ProcKind::Gpu)
        })
    );
}

#[test]
fn machine_point_errors_carry_the_reference_messages() {
    let mut ev = run(
        "m = Machine(GPU);\ndef at(int i, int j) { return m[i, j]; }\n\
         def wrong_arity(int i) { return m[i, i, i]; }\n\
         def split3(int i) { return m.split(1, 3).size; }",
        &machine(4, 4),
    );
    let e = call_err(&mut ev, "at", &[Value::Int(4), Value::Int(0)]);
    assert_eq!(e.kind, EvalErrorKind::MachineModel);
    assert_eq!(e.message, "Sharding node index out of bound! 4 >= 4");
    assert!(matches!(
        e.mspace.as_deref(),
        Some(MSpaceError::NodeOutOfBound { .. })
    ));
    let e = call_err(&mut ev, "at", &[Value::Int(0), Value::Int(4)]);
    assert_eq!(e.message, "Slice processor index out of bound! 4 >= 4");
    assert_eq!(
        call_err(&mut ev, "wrong_arity", &[Value::Int(0)]).kind,
        EvalErrorKind::MachineModel
    );
    // `split` with a factor that does not divide: built, with the
    // reference's message as a warning.
    assert_eq!(ev.call("split3", &[Value::Int(0)]), Ok(ints(&[4, 3, 1])));
    assert_eq!(ev.warnings().len(), 1);
    assert_eq!(ev.warnings()[0].message, "4 must be divisible by 3");
}

// ----- the README's mapping functions -----------------------------------

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/public")
}

/// A corpus file a test needs (the test is ignored without the corpus).
fn corpus_text(name: &str) -> String {
    let path = corpus_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn corpus_file(name: &str) -> Option<String> {
    let path = corpus_dir().join(name);
    match std::fs::read_to_string(&path) {
        Ok(s) => Some(s),
        Err(_) => {
            eprintln!(
                "corpus file {} not found; checking the built-in copy of its functions",
                path.display()
            );
            None
        }
    }
}

/// Built-in copies of the README's functions, in case the corpus is not
/// next to the repository.
const COMMON_PATTERN: &str = "\
def block1d(Task task) {
ip = task.ipoint;
return mgpu[ip[0] / mgpu.size[1], ip[0] % mgpu.size[1]];
}
def hierarchicalblock1d(Task task) {
ip = task.ipoint;
is = task.ispace;
node_idx = ip[0] * mgpu.size[0] / is[0];
blk_size = is[0] / mgpu.size[0];
gpu_ip = ip[0] % blk_size;
gpu_idx = gpu_ip * mgpu.size[1] / blk_size;
return mgpu[node_idx, gpu_idx];
}
def cyclic1d(Task task) {
ip = task.ipoint;
return mgpu[ip[0] % mgpu.size[0], ip[0] / mgpu.size[0] % mgpu.size[1]];
}
";

const AUTO3D: &str = "\
def block_primitive(IPoint x, ISpace y, MSpace z, int dim1, int dim2) {
return x[dim1] * z.size[dim2] / y.size[dim1];
}
def cyclic_primitive(IPoint x, ISpace y, MSpace z, int dim1, int dim2) {
return x[dim1] % z.size[dim2];
}
m_2d = Machine(GPU);
def auto3d(Task task) {
m_4d = m_2d.auto_split(0, task.ispace);
m_6d = m_4d.auto_split(3, task.ispace / m_4d[:-1]);
upper = tuple(block_primitive(task.ipoint, task.ispace, m_6d, i, i) for i in (0,1,2));
lower = tuple(cyclic_primitive(task.ipoint, task.ispace, m_6d, i, i + 3) for i in (0,1,2));
return m_6d[*upper, *lower];
}
IndexTaskMap task_5 auto3d;
";

fn gpu_point(ev: &mut Evaluator, f: &str, ip: &[i64], is: &[i64]) -> PhysicalProc {
    match ev.map_index_point(f, "t", ip, is, Some(ProcKind::Gpu)) {
        Ok(p) => p,
        Err(e) => panic!("{f}{ip:?} in {is:?}: {e:?}"),
    }
}

#[test]
fn readme_common_patterns() {
    let body = corpus_file("dslmapper-readme-common-pattern.mapper")
        .unwrap_or_else(|| COMMON_PATTERN.to_string());
    // The README defines `mgpu` in an earlier block.
    let src = format!("mgpu = Machine(GPU);\n{body}");
    let mut ev = run(&src, &machine(2, 4));
    assert_eq!(gpu_point(&mut ev, "block1d", &[5], &[8]), (1, 1));
    assert_eq!(gpu_point(&mut ev, "block1d", &[2], &[8]), (0, 2));
    assert_eq!(
        gpu_point(&mut ev, "hierarchicalblock1d", &[5], &[8]),
        (1, 1)
    );
    assert_eq!(
        gpu_point(&mut ev, "hierarchicalblock1d", &[2], &[8]),
        (0, 2)
    );
    assert_eq!(
        gpu_point(&mut ev, "hierarchicalblock1d", &[13], &[16]),
        (1, 2)
    );
    assert_eq!(gpu_point(&mut ev, "cyclic1d", &[5], &[8]), (1, 2));
    assert_eq!(gpu_point(&mut ev, "cyclic1d", &[6], &[8]), (0, 3));
    let mut ev = run(&src, &machine(4, 4));
    assert_eq!(gpu_point(&mut ev, "block1d", &[13], &[16]), (3, 1));
    assert_eq!(gpu_point(&mut ev, "cyclic1d", &[13], &[16]), (1, 3));
    assert_eq!(
        gpu_point(&mut ev, "hierarchicalblock1d", &[13], &[16]),
        (3, 1)
    );
}

/// The README's logging example: on 2 nodes x 4 GPUs, points 0..3 go to
/// node 0 and 4..7 to node 1, each on GPU `i % 4`.
#[test]
#[cfg_attr(
    not(shared_corpus),
    ignore = "needs the shared corpus at ../shared/corpus beside the checkout"
)]
fn readme_index_launch_circuit() {
    let src = corpus_text("dslmapper-readme-indextaskmap-circuit.mapper");
    let mut ev = run(&src, &machine(2, 4));
    for i in 0..8 {
        let task = "calculate_new_currents";
        let f = ev
            .index_task_function(task, Some(ProcKind::Gpu))
            .expect("mapped");
        assert_eq!(f, "linearblock");
        let p = ev.map_index_task(task, &[i], &[8], Some(ProcKind::Gpu));
        assert_eq!(p.map(|p| p.procs), Ok(vec![(i / 4, i % 4)]));
        let p = ev.map_index_task("init_piece", &[i], &[8], Some(ProcKind::Cpu));
        assert_eq!(p.map(|p| p.procs), Ok(vec![(i / 4, 0)]));
    }
}

#[test]
#[cfg_attr(
    not(shared_corpus),
    ignore = "needs the shared corpus at ../shared/corpus beside the checkout"
)]
fn readme_merge_block1d() {
    let src = corpus_text("dslmapper-readme-merge-example.mapper");
    let mut ev = run(&src, &machine(2, 4));
    assert_eq!(gpu_point(&mut ev, "block1d", &[5], &[8]), (1, 1));
    assert_eq!(gpu_point(&mut ev, "block1d", &[5], &[16]), (0, 2));
    assert_eq!(gpu_point(&mut ev, "block1d", &[15], &[16]), (1, 3));
}

#[test]
fn readme_auto3d_solomonik() {
    let src = corpus_file("dslmapper-readme-auto3d.mapper").unwrap_or_else(|| AUTO3D.to_string());
    let mut ev = run(&src, &machine(4, 4));
    // 4 nodes split (2, 2, 1) over (4, 4, 1), then 4 GPUs (2, 2, 1) over
    // the per-node block (2, 2, 1): block over nodes, cyclic over GPUs.
    for (ip, expected) in [
        ([3, 1, 0], (1, 3)),
        ([0, 0, 0], (0, 0)),
        ([2, 2, 0], (3, 0)),
        ([1, 3, 0], (2, 3)),
    ] {
        assert_eq!(
            gpu_point(&mut ev, "auto3d", &ip, &[4, 4, 1]),
            expected,
            "{ip:?}"
        );
    }
    // Every point of the launch lands on a distinct GPU.
    let mut seen = std::collections::BTreeSet::new();
    for p in points(&[4, 4, 1]) {
        seen.insert(gpu_point(&mut ev, "auto3d", &p, &[4, 4, 1]));
    }
    assert_eq!(seen.len(), 16);
    // On other machines too.
    for (nodes, gpus) in SIZES {
        let mut ev = run(&src, &machine(nodes, gpus));
        for p in points(&[2, 2, 2]) {
            gpu_point(&mut ev, "auto3d", &p, &[2, 2, 2]);
        }
    }
}

#[test]
fn readme_single_task_same_point_and_same_node() {
    let same_point = corpus_file("dslmapper-readme-single-task-same-point.mapper")
        .unwrap_or_else(|| {
            "m_2d = Machine(GPU);\ndef same_point(Task task) { return m_2d[*task.parent.processor(m_2d)]; }\nSingleTaskMap task_4 same_point;".into()
        });
    let same_node =
        "\ndef same_node(Task task) {\n    return m_2d[task.parent.processor(m_2d)[0], *];\n}\n";
    let src = format!("{same_point}{same_node}");
    let mut ev = run(&src, &machine(2, 4));
    assert_eq!(ev.single_task_function("task_4", None), Some("same_point"));
    let p = ev.map_single("same_point", "task_4", Some((1, 3)), Some(ProcKind::Gpu));
    assert_eq!(
        p,
        Ok(Placement {
            kind: Some(ProcKind::Gpu),
            procs: vec![(1, 3)]
        })
    );
    let p = ev.map_single("same_node", "task_4", Some((1, 2)), Some(ProcKind::Gpu));
    assert_eq!(p.map(|p| p.procs), Ok(vec![(1, 0), (1, 1), (1, 2), (1, 3)]));
    assert_eq!(
        ev.map_single("same_node", "t", Some((1, 2)), None)
            .ok()
            .and_then(|p| p.first()),
        Some((1, 0))
    );
    // Without a parent the reference hands back NULL and crashes.
    let e = ev
        .map_single("same_point", "task_4", None, Some(ProcKind::Gpu))
        .expect_err("no parent");
    assert_eq!(e.kind, EvalErrorKind::TaskProperty);
    assert!(e
        .message
        .starts_with("Warning: IndexTask or current task does not support get_parent()"));
    assert_eq!(e.call_stack.len(), 1);
    assert_eq!(e.call_stack[0].0, "same_point");
}

// ----- quirks of the reference ------------------------------------------

#[test]
fn reassigning_a_global_is_an_error_and_a_second_def_is_ignored() {
    let src = "x = 1;\nx = 2;";
    let e = top_error(src);
    assert_eq!(e.kind, EvalErrorKind::GlobalConflict);
    assert_eq!(
        e.message,
        "AssignNode multiple x cause conflicts in global_symbol!"
    );
    assert_eq!(e.span, Span::new(7, 8));

    let mut ev = run(
        "def f(int x) { return 1; }\ndef f(int x) { return 2; }\ny = f(0);",
        &machine(1, 4),
    );
    assert_eq!(ev.global("y"), Some(&Value::Int(1)));
    assert_eq!(ev.call("f", &[Value::Int(0)]), Ok(Value::Int(1)));
    // A def after a global of the same name is ignored too.
    let ev = run("g = 3;\ndef g(int x) { return x; }", &machine(1, 4));
    assert_eq!(ev.global("g"), Some(&Value::Int(3)));
    // But assigning over a function is a conflict.
    let e = top_error("def f(int x) { return x; }\nf = 1;");
    assert_eq!(e.kind, EvalErrorKind::GlobalConflict);
    let ev = run(
        "a = 1;\ndef b(int x) { return x; }\nc = (1, 2);",
        &machine(1, 4),
    );
    let names: Vec<&str> = ev.globals().map(|(n, _)| n).collect();
    assert_eq!(names, ["a", "b", "c"]);
}

#[test]
fn reassigning_a_local_keeps_the_first_value() {
    let mut ev = run(
        "def f(int x) { y = 1; y = 2; x = 5; return y * 10 + x; }",
        &machine(1, 4),
    );
    assert_eq!(ev.call("f", &[Value::Int(3)]), Ok(Value::Int(13)));
    // A local shadows a global; the global is untouched.
    let mut ev = run(
        "g = 7;\ndef f(int x) { g = x; return g; }\ndef h(int x) { return g; }",
        &machine(1, 4),
    );
    assert_eq!(ev.call("f", &[Value::Int(3)]), Ok(Value::Int(3)));
    assert_eq!(ev.call("h", &[Value::Int(3)]), Ok(Value::Int(7)));
}

#[test]
fn functions_see_only_their_frame_and_globals_defined_by_call_time() {
    let mut ev = run(
        "def f(int x) { return later + x; }\nlater = 10;\ndef g(int y) { return f(1) + y; }",
        &machine(1, 4),
    );
    assert_eq!(ev.call("g", &[Value::Int(2)]), Ok(Value::Int(13)));
    // The caller's locals are invisible to the callee.
    let mut ev = run(
        "def inner(int x) { return secret; }\ndef outer(int x) { secret = 1; return inner(x); }",
        &machine(1, 4),
    );
    let e = call_err(&mut ev, "outer", &[Value::Int(0)]);
    assert_eq!(e.kind, EvalErrorKind::UndefinedName);
    assert_eq!(e.message, "secret not found");
    assert_eq!(
        e.call_stack
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>(),
        ["outer", "inner"]
    );
    // At the top level, a global must come first.
    let e = top_error("y = x + 1;\nx = 1;");
    assert_eq!(e.message, "x not found");
    assert_eq!(e.span, Span::new(4, 5));
}

#[test]
fn print_output_is_captured_with_the_reference_format() {
    let src = "m = Machine(GPU);\n\
               print(\"a {} b {} c\", 1, (2, 3));\n\
               print(\"{}|{}\", True, m);\n\
               print(\"no placeholders\", undefined_name);\n\
               print(\"{}\", m.size);\n\
               def f(int x) { print(\"x={}\", x); return x; }\n\
               y = f(4);";
    let ev = run(src, &machine(2, 4));
    assert_eq!(
        ev.printed(),
        "a 1 b 2,3 c\nBoolValNode: true\n|Processor GPU: 2 4 \n\nno placeholders\n2,4\nx=4\n"
    );
    // Not enough arguments: the text before the placeholder is out.
    let src = "print(\"a {} b {}\", 1);";
    let (ev, err) = Evaluator::new_partial(
        &mapwright_grammar::parse(src).program,
        &machine(1, 4),
        Limits::default(),
    );
    let err = err.expect("error");
    assert_eq!(err.kind, EvalErrorKind::PrintArguments);
    assert!(err.message.starts_with("Not enough arguments for print()"));
    assert_eq!(ev.printed(), "a 1 b ");
}

#[test]
fn mapping_statements_are_collected_and_first_function_wins() {
    let src = "Task * GPU,CPU;\nRegion * * GPU FBMEM;\nLayout * * * SOA;\n\
               m = Machine(GPU);\n\
               def f(Task t) { return m[0, 0]; }\ndef g(Task t) { return m[1, 1]; }\n\
               IndexTaskMap foo f;\nIndexTaskMap foo,bar g;\nIndexTaskMap GPU g;\nIndexTaskMap * f;\n\
               SingleTaskMap CPU f;\nInstanceLimit foo 2;\nCollectMemory * *;\nControlReplicate foo;";
    let mut ev = run(src, &machine(2, 4));
    let kinds: Vec<MappingKind> = ev.mapping_statements().iter().map(|s| s.kind).collect();
    use MappingKind::*;
    assert_eq!(
        kinds,
        [
            Task,
            Region,
            Layout,
            IndexTaskMap,
            IndexTaskMap,
            IndexTaskMap,
            IndexTaskMap,
            SingleTaskMap,
            InstanceLimit,
            CollectMemory,
            ControlReplicate
        ]
    );
    assert_eq!(ev.mapping_statements()[3].stmt, 6);
    assert_eq!(
        ev.index_task_function("foo", Some(ProcKind::Gpu)),
        Some("f")
    );
    assert_eq!(ev.index_task_function("bar", None), Some("g"));
    assert_eq!(
        ev.index_task_function("baz", Some(ProcKind::Gpu)),
        Some("g")
    );
    // `*` is registered as a task named "*", which nothing looks up.
    assert_eq!(ev.index_task_function("baz", Some(ProcKind::Cpu)), None);
    assert_eq!(
        ev.single_task_function("baz", Some(ProcKind::Cpu)),
        Some("f")
    );
    assert_eq!(ev.single_task_function("baz", Some(ProcKind::Gpu)), None);
    let p = ev.map_index_task("baz", &[0], &[1], Some(ProcKind::Gpu));
    assert_eq!(p.map(|p| p.procs), Ok(vec![(1, 1)]));
    let e = ev
        .map_index_task("baz", &[0], &[1], Some(ProcKind::Cpu))
        .expect_err("unmapped");
    assert_eq!(e.kind, EvalErrorKind::NoMappingFunction);
}

#[test]
fn entry_functions_are_checked_like_the_reference() {
    let e = top_error("IndexTaskMap foo f;\ndef f(Task t) { return (0, 0); }");
    assert_eq!(e.kind, EvalErrorKind::UndefinedFunction);
    assert!(e.message.starts_with("IndexTaskMap's function undefined"));
    assert_eq!(e.span, Span::new(17, 18));
    let e = top_error("f = 1;\nSingleTaskMap foo f;");
    assert!(e
        .message
        .starts_with("SingleTaskMap's mapping function is undefined"));
    let e = top_error("def f(int x) { return x; }\nIndexTaskMap foo f;");
    assert_eq!(e.kind, EvalErrorKind::EntrySignature);
    assert_eq!(
        e.message,
        "Entry mapping function's definition must be like func(Task t)"
    );
    let e = top_error("def f(Task t, int x) { return x; }\nSingleTaskMap foo f;");
    assert_eq!(
        e.message,
        "Entry mapping function's must be like func(Task t)"
    );

    let mut ev = run(
        "m = Machine(GPU);\ndef plain(Task t) { return (0, 1); }\n\
         def expr(Task t) { return (t.ipoint[0], 0); }\n\
         def model(Task t) { return m; }\ndef cpu(Task t) { return Machine(CPU)[0, 0]; }\n\
         def triple(Task t) { return (1, 2, 3); }\ndef two(int a, int b) { return a; }",
        &machine(2, 4),
    );
    // A plain tuple names no processor kind: refused when the task's kind
    // is known, accepted by the sharding functor (no kind).
    let e = ev
        .map_index_point("plain", "foo", &[0], &[1], Some(ProcKind::Gpu))
        .expect_err("kind");
    assert_eq!(e.kind, EvalErrorKind::WrongProcessorKind);
    assert_eq!(
        e.message,
        "foo is actually mapped to GPU, but machine model is for ALLPROC"
    );
    assert_eq!(
        ev.map_index_point("plain", "foo", &[0], &[1], None),
        Ok((0, 1))
    );
    let e = ev
        .map_index_point("cpu", "foo", &[0], &[1], Some(ProcKind::Gpu))
        .expect_err("kind");
    assert_eq!(
        e.message,
        "foo is actually mapped to GPU, but machine model is for CPU"
    );
    // A tuple expression is not a TupleInt, even if all its elements are ints.
    let e = ev
        .map_index_point("expr", "foo", &[0], &[1], None)
        .expect_err("TupleExpr");
    assert_eq!(e.kind, EvalErrorKind::BadMappingResult);
    assert!(e
        .message
        .starts_with("Must return TupleIntType or SetTupleIntType"));
    let e = ev
        .map_index_point("model", "foo", &[0], &[1], None)
        .expect_err("MSpace");
    assert_eq!(e.kind, EvalErrorKind::BadReturn);
    let e = ev
        .map_index_point("triple", "foo", &[0], &[1], None)
        .expect_err("3 ints");
    assert_eq!(e.kind, EvalErrorKind::BadMappingResult);
    let e = ev
        .map_index_point("two", "foo", &[0], &[1], None)
        .expect_err("signature");
    assert_eq!(e.kind, EvalErrorKind::EntrySignature);
    let e = ev
        .map_index_point("nope", "foo", &[0], &[1], None)
        .expect_err("undefined");
    assert_eq!(e.kind, EvalErrorKind::UndefinedFunction);
    assert!(e.message.starts_with("IndexTaskMap's function undefined"));
    let e = ev
        .map_single("m", "foo", None, None)
        .expect_err("not a function");
    assert!(e
        .message
        .starts_with("SingleTaskMap's mapping function is undefined"));
}

#[test]
fn function_without_return_and_bad_returns() {
    let src = "def f(int x) { y = x; }";
    let mut ev = run(src, &machine(1, 4));
    let e = call_err(&mut ev, "f", &[Value::Int(1)]);
    assert_eq!(e.kind, EvalErrorKind::NoReturn);
    assert_eq!(e.message, "Error: function without return");
    assert_eq!(e.span, Span::new(4, 5));
    let mut ev = run(
        "def f(int x) { return Machine(GPU); }\ndef g(int x) { return GPU; }",
        &machine(1, 4),
    );
    assert_eq!(
        call_err(&mut ev, "f", &[Value::Int(1)]).kind,
        EvalErrorKind::BadReturn
    );
    assert_eq!(
        call_err(&mut ev, "g", &[Value::Int(1)]).kind,
        EvalErrorKind::BadReturn
    );
    // Statements after `return` never run.
    let mut ev = run(
        "def f(int x) { return x; print(\"never\"); }",
        &machine(1, 4),
    );
    assert_eq!(ev.call("f", &[Value::Int(1)]), Ok(Value::Int(1)));
    assert_eq!(ev.printed(), "");
}

#[test]
fn calls_check_argument_count_and_types() {
    let mut ev = run(
        "def p(IPoint x) { return x[0]; }\n\
         def via_expr(int a) { return p((a, a)); }\n\
         def via_arith(int a) { return p((a, a) + (0, 0)); }\n\
         def via_literal(int a) { return p((a + 0, 1)); }\n\
         def via_comprehension(int a) { return p(tuple(i for i in (1, 2))); }\n\
         def two(int a, bool b) { return b ? a : 0; }\n\
         def count(int a) { return two(a); }\n\
         def spread(int a) { return two(*(a, True)); }\n\
         def helper(Task t) { return 1; }\n\
         def entry(Task t) { return (helper(t), 0); }\n\
         def not_fn(int a) { return a(1); }",
        &machine(1, 4),
    );
    let e = call_err(&mut ev, "via_expr", &[Value::Int(3)]);
    assert_eq!(e.kind, EvalErrorKind::ArgumentType);
    assert!(e.message.contains("TupleExpr"), "{}", e.message);
    assert_eq!(ev.call("via_arith", &[Value::Int(3)]), Ok(Value::Int(3)));
    assert_eq!(
        call_err(&mut ev, "via_literal", &[Value::Int(3)]).kind,
        EvalErrorKind::ArgumentType
    );
    assert_eq!(
        call_err(&mut ev, "via_comprehension", &[Value::Int(3)]).kind,
        EvalErrorKind::ArgumentType
    );
    let e = call_err(&mut ev, "count", &[Value::Int(3)]);
    assert_eq!(e.kind, EvalErrorKind::ArgumentCount);
    assert!(e.message.starts_with("argument number mismatch!"));
    assert_eq!(ev.call("spread", &[Value::Int(3)]), Ok(Value::Int(3)));
    let e = ev
        .map_index_point("entry", "t", &[0], &[1], None)
        .expect_err("Task argument");
    assert_eq!(e.kind, EvalErrorKind::ArgumentType);
    assert!(e.message.contains("Task"));
    assert_eq!(
        call_err(&mut ev, "not_fn", &[Value::Int(3)]).kind,
        EvalErrorKind::NotAFunction
    );
    assert_eq!(
        call_err(&mut ev, "two", &[Value::Int(3), Value::Int(1)]).kind,
        EvalErrorKind::ArgumentType
    );
}

#[test]
fn operators_follow_the_reference() {
    let src = "a = 7 / 2;\nb = -7 / 2;\nc = -7 % 3;\nd = (4, 6) / (2, 3);\ne = (1, 2) * (3, 4) - (1, 1);\n\
               f = 1 < 2;\ng = 2 >= 3;\nh = True == False;\ni = True || False;\nj = 3 != 3;\n\
               k = 1 > 0 ? 10 : 20;\nl = -3;\nn = -(1, 2);\no = 2 + 3 * 4 - 1;\n";
    let ev = run(src, &machine(1, 4));
    assert_eq!(ev.global("a"), Some(&Value::Int(3)));
    assert_eq!(ev.global("b"), Some(&Value::Int(-3)));
    assert_eq!(ev.global("c"), Some(&Value::Int(-1)));
    assert_eq!(global_ints(&ev, "d"), [2, 2]);
    assert_eq!(global_ints(&ev, "e"), [2, 7]);
    assert_eq!(ev.global("f"), Some(&Value::Bool(true)));
    assert_eq!(ev.global("g"), Some(&Value::Bool(false)));
    assert_eq!(ev.global("h"), Some(&Value::Bool(false)));
    assert_eq!(ev.global("i"), Some(&Value::Bool(true)));
    assert_eq!(ev.global("j"), Some(&Value::Bool(false)));
    assert_eq!(ev.global("k"), Some(&Value::Int(10)));
    assert_eq!(ev.global("l"), Some(&Value::Int(-3)));
    assert_eq!(global_ints(&ev, "n"), [-1, -2]);
    assert_eq!(ev.global("o"), Some(&Value::Int(13)));

    for (src, kind, prefix) in [
        (
            "x = 1 + (1, 2);",
            EvalErrorKind::TypeMismatch,
            "type mismatch!!",
        ),
        (
            "x = 1 + True;",
            EvalErrorKind::TypeMismatch,
            "type mismatch!!",
        ),
        (
            "x = (1, 2) + (1, 2, 3);",
            EvalErrorKind::DimensionMismatch,
            "Dimension mismatch in TupleIntNode",
        ),
        (
            "x = (1, 2) == (1, 2);",
            EvalErrorKind::Unsupported,
            "Unsupported binary operator for TupleIntNode",
        ),
        (
            "x = 1 && 2;",
            EvalErrorKind::Unsupported,
            "Unsupported binary operator for Integer",
        ),
        (
            "x = True < False;",
            EvalErrorKind::Unsupported,
            "Unsupported binary operator for Boolean",
        ),
        (
            "x = GPU == GPU;",
            EvalErrorKind::Unsupported,
            "Unsupported operator type in BinaryExprNode",
        ),
        (
            "x = (1, True) + (1, True);",
            EvalErrorKind::Unsupported,
            "Only IntValType inside TupleExprNode",
        ),
        (
            "x = 1 / 0;",
            EvalErrorKind::DivisionByZero,
            "integer division by zero",
        ),
        (
            "x = 1 % 0;",
            EvalErrorKind::DivisionByZero,
            "integer modulo by zero",
        ),
        (
            "x = (1, 2) / (1, 0);",
            EvalErrorKind::DivisionByZero,
            "integer division by zero",
        ),
        (
            "x = 2147483647 + 1;",
            EvalErrorKind::Overflow,
            "integer overflow",
        ),
        (
            "x = 3000000000;",
            EvalErrorKind::Overflow,
            "integer overflow",
        ),
        (
            "x = 1 ? 2 : 3;",
            EvalErrorKind::WrongType,
            "the condition of `?:`",
        ),
        (
            "x = -(1, True);",
            EvalErrorKind::Unsupported,
            "We can only negate IntValType",
        ),
        (
            "y = 1;\nx = -y;",
            EvalErrorKind::Unsupported,
            "Negating node must be applied",
        ),
        (
            "x = -(1 + 1);",
            EvalErrorKind::Unsupported,
            "Negating node must be applied",
        ),
        (
            "x = GPU;",
            EvalErrorKind::CannotAssign,
            "Cannot Assign ProcType",
        ),
        (
            "def f(int x) { return x; }\nx = f;",
            EvalErrorKind::CannotAssign,
            "Cannot Assign FuncDefType",
        ),
        ("x = Machine;", EvalErrorKind::WrongType, "`Machine` builds"),
        (
            "x = Machine(FBMEM);",
            EvalErrorKind::WrongType,
            "Machine takes one processor kind",
        ),
        (
            "x = (1, 2).split(0, 1);",
            EvalErrorKind::WrongType,
            "`split` is a method of machine models",
        ),
        (
            "x = Machine(GPU).size(1);",
            EvalErrorKind::Unsupported,
            "unsupported func_c->api",
        ),
        (
            "x = Machine(GPU).split;",
            EvalErrorKind::Unsupported,
            "MSpace only support Volume/Size/LEN",
        ),
        (
            "x = 1.size;",
            EvalErrorKind::Unsupported,
            "IntValType is not supported ObjectInvokeNode",
        ),
        (
            "x = Machine(GPU)[0].has(FBMEM);",
            EvalErrorKind::Unsupported,
            "`m[i].has(MEM)` always fails",
        ),
    ] {
        let e = top_error(src);
        assert_eq!(e.kind, kind, "{src}: {e:?}");
        assert!(e.message.starts_with(prefix), "{src}: {}", e.message);
    }
    // The span is the whole binary expression.
    let src = "x = 1 + (1, 2);";
    assert_eq!(top_error(src).span, the_span(src, "1 + (1, 2)"));
}

#[test]
fn logical_operators_do_not_short_circuit_but_the_ternary_does() {
    let mut ev = run(
        "def f(int x) { return x != 0 && 10 / x > 1; }\n\
         def g(int x) { return x == 0 ? 0 : 10 / x; }",
        &machine(1, 4),
    );
    assert_eq!(
        call_err(&mut ev, "f", &[Value::Int(0)]).kind,
        EvalErrorKind::DivisionByZero
    );
    assert_eq!(ev.call("f", &[Value::Int(2)]), Ok(Value::Bool(true)));
    assert_eq!(ev.call("g", &[Value::Int(0)]), Ok(Value::Int(0)));
    assert_eq!(ev.call("g", &[Value::Int(5)]), Ok(Value::Int(2)));
}

#[test]
fn indexing_and_slicing_follow_the_reference() {
    let src = "t = (1, 2, 3);\nm = Machine(GPU);\n\
               a = t[0];\nb = t[-1];\nc = t[:-1];\nd = t[1:];\ne = t[:0];\nf = t[-2:];\n\
               g = m[:-1];\nh = m[1:];\ni = t[2:1];\nj = m.size[1];\nk = (t, (4, 5))[1][0];\n\
               l = t.len;\nn = t.volume;\no = t.size;\n";
    let ev = run(src, &machine(2, 4));
    assert_eq!(ev.global("a"), Some(&Value::Int(1)));
    assert_eq!(ev.global("b"), Some(&Value::Int(3)));
    assert_eq!(global_ints(&ev, "c"), [1, 2]);
    assert_eq!(global_ints(&ev, "d"), [2, 3]);
    // A right bound of 0 means "to the end".
    assert_eq!(global_ints(&ev, "e"), [1, 2, 3]);
    assert_eq!(global_ints(&ev, "f"), [2, 3]);
    assert_eq!(global_ints(&ev, "g"), [2]);
    assert_eq!(global_ints(&ev, "h"), [4]);
    assert_eq!(global_ints(&ev, "i"), Vec::<i64>::new());
    assert_eq!(ev.global("j"), Some(&Value::Int(4)));
    assert_eq!(ev.global("k"), Some(&Value::Int(4)));
    assert_eq!(ev.global("l"), Some(&Value::Int(3)));
    assert_eq!(ev.global("n"), Some(&Value::Int(6)));
    assert_eq!(global_ints(&ev, "o"), [1, 2, 3]);

    for (src, kind, prefix) in [
        (
            "t = (1, 2, 3);\nx = t[3];",
            EvalErrorKind::IndexOutOfBound,
            "Index out of bound",
        ),
        (
            "t = (1, 2, 3);\nx = t[-4];",
            EvalErrorKind::IndexOutOfBound,
            "Index out of bound",
        ),
        // Unlike Python, a right bound equal to the length is an error.
        (
            "t = (1, 2, 3);\nx = t[0:3];",
            EvalErrorKind::IndexOutOfBound,
            "slice's right index is out of bound!",
        ),
        (
            "t = (1, 2, 3);\nx = t[-5:2];",
            EvalErrorKind::IndexOutOfBound,
            "slice's left index is out of bound!",
        ),
        (
            "t = (1, 2, 3);\nx = t[True:];",
            EvalErrorKind::WrongType,
            "Left/Right side of SliceExprNode",
        ),
        (
            "t = (1, 2, 3);\nx = t[0, 1];",
            EvalErrorKind::Unsupported,
            "Please use tuple-indexing only",
        ),
        (
            "x = 5[0];",
            EvalErrorKind::Unsupported,
            "Unsupported IndexExprNode tuple's type: IntValType",
        ),
        (
            "x = Machine(GPU)[True, 0];",
            EvalErrorKind::WrongType,
            "Must only use tuple of integers",
        ),
        (
            "x = Machine(GPU)[*, *];",
            EvalErrorKind::MachineModel,
            "a machine index may contain at most one `*`",
        ),
        (
            "x = 5[1:];",
            EvalErrorKind::Unsupported,
            "unsupported IndexExprNode's type for slicing",
        ),
    ] {
        let e = top_error(src);
        assert_eq!(e.kind, kind, "{src}: {e:?}");
        assert!(e.message.starts_with(prefix), "{src}: {}", e.message);
    }
}

#[test]
fn unpacking_and_stars() {
    let src = "m = Machine(GPU);\nt = (1, 2);\nu = (0, *t, 3);\n\
               def f(int x) { return m[*(x, 3)]; }\n\
               def g(int x) { return m[x, *]; }\n\
               def h(int x) { s = m[x, -1]; return 0; }\n\
               def k(int x) { return m[*m[x, *]]; }";
    let mut ev = run(src, &machine(2, 4));
    assert_eq!(
        ev.global("u"),
        Some(&Value::Tuple(vec![
            Value::Int(0),
            Value::Int(1),
            Value::Int(2),
            Value::Int(3)
        ]))
    );
    assert_eq!(
        ev.call("f", &[Value::Int(1)]),
        Ok(Value::IntTuple {
            items: vec![1, 3],
            proc: Some(ProcKind::Gpu)
        })
    );
    assert_eq!(
        ev.call("g", &[Value::Int(1)]),
        Ok(Value::PointSet {
            points: vec![(1, 0), (1, 1), (1, 2), (1, 3)],
            proc: ProcKind::Gpu
        })
    );
    // A computed -1 is a `*` too; a set cannot be stored.
    let e = call_err(&mut ev, "h", &[Value::Int(0)]);
    assert_eq!(e.kind, EvalErrorKind::CannotAssign);
    assert!(e.message.starts_with("Cannot Assign SetTupleIntType"));
    // A set cannot be spread.
    let e = call_err(&mut ev, "k", &[Value::Int(0)]);
    assert!(e
        .message
        .starts_with("Unsupported node type after UnpackingNode*"));
    let e = top_error("x = *5;");
    assert_eq!(e.kind, EvalErrorKind::WrongType);
    let e = top_error("t = (1, 2);\nx = *t;");
    assert!(e.message.starts_with("Cannot Assign UnpackExprType"));
}

#[test]
fn comprehensions_follow_the_reference() {
    let mut ev = run(
        "def f(int a) { return tuple(i * 2 for i in (a, a + 1, 7)); }\n\
         def lazy(int a) { t = tuple(0 for i in (a / 0, 1)); return t[0]; }\n\
         def shadow(int i) { return tuple(i for i in (5, 6)); }\n\
         def nested(int a) { return tuple(tuple(i * 10 + j for j in (0, 1)) for i in (1, 2)); }\n\
         def spread(int a) { t = tuple(*x for x in ((1, 2), (3, 4))); return t; }\n\
         def self_ref(int x) { return tuple(x for x in (x, 1)); }",
        &machine(1, 4),
    );
    assert_eq!(
        ev.call("f", &[Value::Int(3)]),
        Ok(Value::Tuple(vec![
            Value::Int(6),
            Value::Int(8),
            Value::Int(14)
        ]))
    );
    // The element is evaluated only where the variable is used.
    assert_eq!(ev.call("lazy", &[Value::Int(3)]), Ok(Value::Int(0)));
    assert_eq!(
        ev.call("shadow", &[Value::Int(1)]),
        Ok(Value::Tuple(vec![Value::Int(5), Value::Int(6)]))
    );
    let row = |a: i64, b: i64| Value::Tuple(vec![Value::Int(a), Value::Int(b)]);
    assert_eq!(
        ev.call("nested", &[Value::Int(0)]),
        Ok(Value::Tuple(vec![row(10, 11), row(20, 21)]))
    );
    // A stored tuple expression re-spreads its unpacked elements when read.
    assert_eq!(
        ev.call("spread", &[Value::Int(0)]),
        Ok(Value::Tuple(vec![
            Value::Int(1),
            Value::Int(2),
            Value::Int(3),
            Value::Int(4)
        ]))
    );
    // `x` bound to the expression `x` refers to itself: stopped, not a
    // stack overflow.
    assert_eq!(
        call_err(&mut ev, "self_ref", &[Value::Int(1)]).kind,
        EvalErrorKind::Nesting
    );

    let e = top_error("x = tuple(i for i in (1, 2));");
    assert_eq!(e.kind, EvalErrorKind::Comprehension);
    assert!(e
        .message
        .starts_with("For expr should only happen during function invocation!"));
    // Iterating over anything but a tuple written in the source is
    // refused before anything runs.
    let src = "print(\"before\");\ndef f(IPoint p) { return tuple(i for i in p); }";
    let (ev, err) = Evaluator::new_partial(
        &mapwright_grammar::parse(src).program,
        &machine(1, 4),
        Limits::default(),
    );
    let err = err.expect("range error");
    assert_eq!(err.kind, EvalErrorKind::Comprehension);
    assert!(err
        .message
        .starts_with("For-comprehension must itererate over TupleExpr or TupleInt"));
    assert_eq!(err.span, Span::new(src.len() - 5, src.len() - 4));
    assert_eq!(ev.printed(), "");
}

#[test]
fn task_properties_follow_the_reference() {
    let mut ev = run(
        "m = Machine(GPU);\n\
         def ip(Task t) { return m[t.ipoint[0], t.ispace[1] - 1]; }\n\
         def par(Task t) { return m[*t.parent.processor(m)]; }\n\
         def proc_of_index(Task t) { return m[*t.processor(m)]; }\n\
         def single_ip(Task t) { return m[t.ipoint[0], 0]; }\n\
         def grand(Task t) { return m[*t.parent.parent.processor(m)]; }\n\
         def parent_ip(Task t) { return m[t.parent.ipoint[0], 0]; }\n\
         def kept(Task t) { u = t; return m[u.ipoint[0], 0]; }",
        &machine(2, 4),
    );
    assert_eq!(
        ev.map_index_point("ip", "t", &[1, 7], &[2, 4], Some(ProcKind::Gpu)),
        Ok((1, 3))
    );
    assert_eq!(
        ev.map_index_point("kept", "t", &[1], &[2], Some(ProcKind::Gpu)),
        Ok((1, 0))
    );
    let e = ev
        .map_index_point("par", "t", &[0], &[1], None)
        .expect_err("index parent");
    assert_eq!(e.kind, EvalErrorKind::TaskProperty);
    // The processor of an index task is (0, 0), with the reference's warning.
    assert_eq!(
        ev.map_index_point("proc_of_index", "t", &[1], &[2], None),
        Ok((0, 0))
    );
    assert!(ev.warnings().iter().any(|w| w
        .message
        .starts_with("Warning: index launch task does not support")));
    let e = ev
        .map_single("single_ip", "t", Some((0, 0)), None)
        .expect_err("single ipoint");
    assert_eq!(
        e.message,
        "Warning: currently SingleTask does not support get_point(), failure"
    );
    let task = SingleTask {
        name: "child".into(),
        processor: Some((0, 1)),
        parent: Some(Box::new(SingleTask {
            name: "parent".into(),
            processor: Some((1, 0)),
            parent: Some(Box::new(SingleTask {
                name: "top".into(),
                processor: Some((1, 2)),
                parent: None,
            })),
        })),
    };
    assert_eq!(
        ev.map_single_task("grand", &task, Some(ProcKind::Gpu))
            .map(|p| p.procs),
        Ok(vec![(1, 2)])
    );
    // The parent is a single task even if it was an index point.
    let e = ev
        .map_single_task("parent_ip", &task, None)
        .expect_err("parent ipoint");
    assert_eq!(e.kind, EvalErrorKind::TaskProperty);
    let e = ev
        .map_single("proc_of_index", "t", None, None)
        .expect_err("unknown processor");
    assert_eq!(e.kind, EvalErrorKind::TaskProperty);
}

#[test]
fn machine_kinds_come_from_the_shape() {
    let ev = run(
        "a = Machine(CPU).size;\nb = Machine(OMP).size;\nc = Machine(IO).size;\nd = (Machine)(GPU).volume;",
        &machine(3, 2),
    );
    assert_eq!(global_ints(&ev, "a"), [3, 4]);
    assert_eq!(global_ints(&ev, "b"), [3, 1]);
    assert_eq!(global_ints(&ev, "c"), [3, 0]);
    assert_eq!(ev.global("d"), Some(&Value::Int(6)));
}

// ----- limits -----------------------------------------------------------

fn quick<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let r = f();
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{what} took {:?}",
        start.elapsed()
    );
    r
}

#[test]
fn infinite_recursion_stops_at_the_call_depth() {
    let src = "def f(int x) { return f(x); }\ny = f(1);";
    let e = quick("recursion", || top_error(src));
    assert_eq!(e.kind, EvalErrorKind::CallDepth);
    assert_eq!(e.call_stack.len(), Limits::default().max_call_depth);
    // Through an entry function, and with arithmetic around the call.
    let mut ev = run(
        "m = Machine(GPU);\ndef f(int x) { return x == 0 - 1 ? 0 : 1 + f(x + 1); }\n\
         def e(Task t) { return m[f(0), 0]; }",
        &machine(1, 4),
    );
    let e = quick("entry recursion", || {
        ev.map_index_point("e", "t", &[0], &[1], None)
    })
    .expect_err("recursion");
    assert_eq!(e.kind, EvalErrorKind::CallDepth);
    // Recursion that terminates within the limit works.
    let mut ev = run(
        "def f(int n) { return n == 0 ? 0 : 1 + f(n - 1); }",
        &machine(1, 4),
    );
    assert_eq!(ev.call("f", &[Value::Int(50)]), Ok(Value::Int(50)));
}

#[test]
fn huge_computations_stop_at_the_step_budget() {
    let range = format!(
        "({})",
        (0..20)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let src = format!(
        "def f(int x) {{ return tuple(tuple(tuple(tuple(tuple(a + b + c + d + e for e in {range}) for d in {range}) for c in {range}) for b in {range}) for a in {range}); }}\ny = f(1);"
    );
    let e = quick("comprehension", || top_error(&src));
    assert_eq!(e.kind, EvalErrorKind::StepLimit);
    // Exponential recursion within the depth limit.
    let src = "def f(int n) { return n == 0 ? 1 : f(n - 1) + f(n - 1); }\ny = f(40);";
    let e = quick("exponential", || top_error(src));
    assert_eq!(e.kind, EvalErrorKind::StepLimit);
    // Tuples doubling at each call.
    let src = "def d(IPoint t, int n) { return n == 0 ? t.len : d((*t, *t) + (*t, *t), n - 1); }\ny = d((1, 2), 60);";
    let e = quick("doubling", || top_error(src));
    assert_eq!(e.kind, EvalErrorKind::StepLimit);
    // The budget is per entry call: a later call starts afresh.
    let mut ev = run(
        "def f(int n) { return n == 0 ? 1 : f(n - 1) + f(n - 1); }",
        &machine(1, 4),
    );
    assert_eq!(
        call_err(&mut ev, "f", &[Value::Int(30)]).kind,
        EvalErrorKind::StepLimit
    );
    assert_eq!(ev.call("f", &[Value::Int(3)]), Ok(Value::Int(8)));
}

#[test]
fn a_star_over_a_huge_dimension_is_charged_first() {
    let src = "m = Machine(GPU);\ndef f(int x) { return m.split(1, 1000000000)[0, *, 0]; }";
    let mut ev = run(src, &machine(1, 4));
    let e = quick("huge star", || call_err(&mut ev, "f", &[Value::Int(0)]));
    assert_eq!(e.kind, EvalErrorKind::StepLimit);
    assert_eq!(split_candidates(1 << 40, 3), 1);
}

#[test]
fn deep_expressions_stop_at_the_nesting_limit() {
    // Built directly: the parser is not what is tested here.
    let mut e = Expr {
        kind: ExprKind::Int(1),
        span: Span::new(0, 1),
    };
    for _ in 0..2000 {
        e = Expr {
            kind: ExprKind::Paren(Box::new(e)),
            span: Span::new(0, 1),
        };
    }
    let program = Program {
        stmts: vec![std::sync::Arc::new(Stmt {
            kind: StmtKind::Assign {
                name: ast::Ident {
                    name: "x".into(),
                    span: Span::new(0, 1),
                },
                value: e,
            },
            span: Span::new(0, 1),
        })],
    };
    let err = Evaluator::new(&program, &machine(1, 4)).expect_err("too deep");
    assert_eq!(err.kind, EvalErrorKind::Nesting);
    // Dropping the 2000-deep tree is recursive too; keep it well below
    // the stack.
    drop(program);
}

#[test]
fn output_is_bounded() {
    let limits = Limits {
        max_output: 100,
        ..Limits::default()
    };
    let src = "def f(int n) { print(\"0123456789\"); return n == 0 ? 0 : f(n - 1); }\ny = f(40);";
    let program = mapwright_grammar::parse(src).program;
    let ev = Evaluator::with_limits(&program, &machine(1, 4), limits).expect("runs");
    assert!(ev.printed().len() < 150);
    assert!(ev.printed().ends_with("[output truncated]\n"));
}

#[test]
fn evaluators_can_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Evaluator>();
    send_sync::<EvalError>();
    send_sync::<Value>();
}

#[test]
fn split_candidate_estimate() {
    assert_eq!(split_candidates(4, 3), 6); // 2^2 over 3 places: C(4, 2)
    assert_eq!(split_candidates(12, 2), 3 * 2);
    assert_eq!(split_candidates(1, 5), 1);
    assert_eq!(split_candidates(17, 4), 4);
    assert_eq!(binomial(10, 3), 120);
}

#[test]
fn auto_split_into_too_many_dimensions_is_refused() {
    let tuple = format!("({})", vec!["1"; 40].join(", "));
    let e = top_error(&format!("x = Machine(GPU).auto_split(0, {tuple});"));
    assert_eq!(e.kind, EvalErrorKind::Unsupported);
    let e = top_error("x = Machine(GPU).auto_split(0, 5);");
    assert!(e
        .message
        .starts_with("Autosplit's second argument must be tuple of integers"));
}

#[test]
fn syntax_errors_are_reported_not_run() {
    let e = top_error("x = ;");
    assert_eq!(e.kind, EvalErrorKind::Syntax);
    let program = mapwright_grammar::parse("x = 1;\ny = ;\nz = 2;").program;
    let (ev, err) = Evaluator::new_partial(&program, &machine(1, 4), Limits::default());
    assert_eq!(err.map(|e| e.kind), Some(EvalErrorKind::Syntax));
    assert_eq!(ev.global("x"), Some(&Value::Int(1)));
    assert_eq!(ev.global("z"), None);
}

// ----- the corpus -------------------------------------------------------

fn accepted_corpus_files() -> Vec<String> {
    let expect = corpus_text("EXPECT");
    expect
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            match (parts.next(), parts.next()) {
                (Some(name), Some("accept")) => Some(name.to_string()),
                _ => None,
            }
        })
        .collect()
}

fn entry_functions(program: &Program) -> (Vec<String>, Vec<String>) {
    let mut index = Vec::new();
    let mut single = Vec::new();
    for s in &program.stmts {
        match &s.kind {
            StmtKind::IndexTaskMap { func, .. } if !index.contains(&func.name) => {
                index.push(func.name.clone())
            }
            StmtKind::SingleTaskMap { func, .. } if !single.contains(&func.name) => {
                single.push(func.name.clone())
            }
            _ => {}
        }
    }
    (index, single)
}

/// Every accepted corpus file runs (or fails with an error, never a
/// panic) on 4 nodes x 4 GPUs, and so do its mapping functions on sample
/// launches of 1 to 3 dimensions.
#[test]
#[cfg_attr(
    not(shared_corpus),
    ignore = "needs the shared corpus at ../shared/corpus beside the checkout"
)]
fn every_accepted_corpus_file_evaluates_without_panicking() {
    let files = accepted_corpus_files();
    let shape = machine(4, 4);
    let mut clean = 0;
    for name in &files {
        let src = corpus_text(name);
        let parsed = mapwright_grammar::parse(&src);
        assert!(
            !parsed.has_errors(),
            "{name} is accepted but does not parse"
        );
        let (mut ev, err) = Evaluator::new_partial(&parsed.program, &shape, Limits::default());
        if err.is_none() {
            clean += 1;
        }
        let (index, single) = entry_functions(&parsed.program);
        for f in &index {
            for (ip, is) in [
                (vec![1], vec![4]),
                (vec![1, 2], vec![4, 4]),
                (vec![1, 0, 1], vec![2, 2, 2]),
            ] {
                let _ = ev.map_index(f, "t", &ip, &is, Some(ProcKind::Gpu));
                let _ = ev.map_index(f, "t", &ip, &is, None);
            }
        }
        for f in &single {
            let _ = ev.map_single(f, "t", Some((1, 1)), Some(ProcKind::Gpu));
            let _ = ev.map_single(f, "t", None, None);
        }
    }
    if !files.is_empty() {
        assert!(
            clean * 2 > files.len(),
            "only {clean} of {} files ran cleanly",
            files.len()
        );
    }
}

/// Launch domains per expert mapping function, from the files' comments
/// (4 nodes x 4 GPUs: rpoc = 4, c = 1 for solomonik; grids of 4).
/// A mapping function, the kind of processor its task runs on, and a
/// launch domain.
type Launch = (&'static str, ProcKind, &'static [i64]);

const EXPERT: &[(&str, &[Launch])] = &[
    (
        "legion-circuit.mapper",
        &[
            ("linearblock", ProcKind::Gpu, &[16]),
            ("block_shard_cpu", ProcKind::Cpu, &[16]),
        ],
    ),
    (
        "legion-stencil.mapper",
        &[
            ("linearblock", ProcKind::Gpu, &[16]),
            ("block_shard_cpu", ProcKind::Cpu, &[16]),
        ],
    ),
    (
        "legion-pennant.mapper",
        &[
            ("linearcyclic", ProcKind::Gpu, &[16]),
            ("cyclic_shard_cpu", ProcKind::Cpu, &[16]),
        ],
    ),
    (
        "taco-cannonMM-cuda.mapper",
        &[
            ("auto2d", ProcKind::Gpu, &[8, 8]),
            ("auto2d", ProcKind::Gpu, &[4, 4]),
            ("linear_distribute", ProcKind::Gpu, &[16]),
            ("auto2d_omp", ProcKind::Omp, &[4, 4]),
        ],
    ),
    (
        "taco-summaMM-cuda.mapper",
        &[
            ("auto2d", ProcKind::Gpu, &[8, 8]),
            ("linear_distribute", ProcKind::Gpu, &[16]),
            ("auto2d_omp", ProcKind::Omp, &[4, 4]),
        ],
    ),
    (
        "taco-pummaMM-cuda.mapper",
        &[
            ("auto2d", ProcKind::Gpu, &[8, 8]),
            ("linear_distribute", ProcKind::Gpu, &[16]),
            ("auto2d_omp", ProcKind::Omp, &[4, 4]),
        ],
    ),
    (
        "taco-johnsonMM-cuda.mapper",
        &[
            ("placement_shard", ProcKind::Gpu, &[4, 4, 1]),
            ("placement_shard", ProcKind::Gpu, &[4, 1, 4]),
            ("placement_shard", ProcKind::Gpu, &[1, 4, 4]),
            ("autoblock", ProcKind::Gpu, &[4, 4, 4]),
            ("init_all_gpus", ProcKind::Gpu, &[4]),
        ],
    ),
    (
        "taco-solomonikMM-cuda.mapper",
        &[
            ("auto3d", ProcKind::Gpu, &[4, 4, 1]),
            ("auto_cyclic_3d", ProcKind::Gpu, &[4, 4, 1]),
            ("block1d", ProcKind::Gpu, &[16]),
        ],
    ),
    (
        "taco-cosma-cuda.mapper",
        &[
            ("placement_shard", ProcKind::Gpu, &[2, 2, 1]),
            ("placement_shard", ProcKind::Gpu, &[2, 1, 2]),
            ("autoblock", ProcKind::Gpu, &[2, 2, 2]),
            ("init_all_gpus", ProcKind::Gpu, &[4]),
        ],
    ),
];

#[test]
#[cfg_attr(
    not(shared_corpus),
    ignore = "needs the shared corpus at ../shared/corpus beside the checkout"
)]
fn expert_mappers_run_and_map_their_launches() {
    let shape = machine(4, 4);
    for (file, launches) in EXPERT {
        let src = corpus_text(file);
        let mut ev = run(&src, &shape);
        let (index, single) = entry_functions(ev.program());
        for f in &index {
            assert!(
                launches.iter().any(|(g, _, _)| g == f),
                "{file}: no sample launch for {f}"
            );
        }
        for (f, kind, ispace) in launches.iter() {
            for p in points(ispace) {
                if let Err(e) = ev.map_index_point(f, "t", &p, ispace, Some(*kind)) {
                    panic!("{file}: {f}{p:?} in {ispace:?}: {e:?}");
                }
            }
        }
        for f in &single {
            let p = ev.map_single(f, "t", Some((2, 3)), Some(ProcKind::Gpu));
            assert_eq!(p.map(|p| p.procs), Ok(vec![(2, 3)]), "{file}: {f}");
        }
    }
}

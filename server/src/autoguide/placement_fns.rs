//! The DSL text of generated placement functions, shared by AutoGuide's
//! edits and the optimizer's search space: machine-model variables
//! (`mw_cpu = Machine(CPU);`) and the linear-cyclic function that deals a
//! launch's points over every processor of a kind.

use mapwright_runtime::machine::ProcKind;

/// The DSL's name of a processor kind a mapper places tasks on.
pub fn dsl_proc(k: ProcKind) -> &'static str {
    match k {
        ProcKind::Gpu => "GPU",
        ProcKind::Omp => "OMP",
        _ => "CPU",
    }
}

/// The variable generated code binds the machine model of `k` to (`mw_cpu`).
pub fn machine_var(k: ProcKind) -> String {
    format!("mw_{}", dsl_proc(k).to_ascii_lowercase())
}

/// Row-major linearization of `ip` in `sp` for a `dims`-D launch, e.g.
/// `(ip[0] * sp[1] + ip[1]) * sp[2] + ip[2]`. Written out per dimensionality
/// because the DSL has no loops.
pub fn linearize(dims: usize) -> String {
    let mut e = "ip[0]".to_string();
    for i in 1..dims {
        let lhs = if i == 1 { e.clone() } else { format!("({e})") };
        e = format!("{lhs} * sp[{i}] + ip[{i}]");
    }
    e
}

/// The name of the linear-cyclic function for `dims`-D launches on `k`
/// (`mw_linear_cyclic_cpu_1d`).
pub fn cyclic_name(k: ProcKind, dims: usize) -> String {
    format!(
        "mw_linear_cyclic_{}_{dims}d",
        dsl_proc(k).to_ascii_lowercase()
    )
}

/// The definition of [`cyclic_name`]'s function over the machine model
/// bound to `m`: point `i` in row-major order runs on processor `i mod P`
/// of all P processors of the kind, nodes first. It uses only the launch's
/// own point and extents, so it fits any problem size.
pub fn cyclic_def(k: ProcKind, dims: usize, m: &str) -> String {
    format!(
        "def {}(Task task) {{\n    ip = task.ipoint;\n    sp = task.ispace;\n    flat = {m}.merge(0, 1);\n    return flat[({}) % flat.size[0]];\n}}\n",
        cyclic_name(k, dims),
        linearize(dims)
    )
}

//! The C ABI of mapwright's Legion mapper: `runtime/legion/mapper/
//! mapwright_abi.h` declares these functions, `mapwright_mapper.cc` calls
//! them. Every decision is made by [`mapwright_runtime::legion`]; this file
//! only converts C data to Rust and back.
//!
//! Safety: pointers come from the C++ shell, which passes valid, NUL-
//! terminated strings and arrays of the stated lengths (or NULL where the
//! header allows it). No panic crosses the boundary: each entry point runs
//! under `catch_unwind` and reports a panic as an error value.

use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use mapwright_grammar::ast::AlignOp;
use mapwright_runtime::app::{Launch, Privilege};
use mapwright_runtime::decisions::{InstanceKind, Order};
use mapwright_runtime::legion::host::HostAffinity;
use mapwright_runtime::legion::log::{
    CopiedData, MappedRegionLine, MappedTaskLine, MemoryLabel, RanTask,
};
use mapwright_runtime::legion::recorder::{FieldShape, RegionShape};
use mapwright_runtime::legion::{
    HostFacts, HostMemory, HostProcessors, LaunchInfo, MapperSession, RegionInfo, SessionOptions,
};
use mapwright_runtime::machine::{MemKind, ProcKind, Scope};

/// Processor kinds in the header's order (`enum mw_proc_kind`), which is
/// [`ProcKind::ALL`]'s.
const PROC_KINDS: [ProcKind; 7] = ProcKind::ALL;

/// Memory kinds in the header's order (`enum mw_mem_kind`).
const MEM_KINDS: [MemKind; 5] = [
    MemKind::Sysmem,
    MemKind::Fbmem,
    MemKind::Zcmem,
    MemKind::Sockmem,
    MemKind::Rdmem,
];
const MEM_OTHER: u32 = 99;

#[repr(C)]
pub struct MwProcCount {
    pub kind: u32,
    pub count: u32,
}

#[repr(C)]
pub struct MwMemCount {
    pub kind: u32,
    pub count: u32,
    pub capacity_bytes: u64,
}

#[repr(C)]
pub struct MwAffinity {
    pub proc: u32,
    pub mem: u32,
    pub scope: u32,
    pub bandwidth: u32,
}

#[repr(C)]
pub struct MwHost {
    pub nodes: u32,
    pub procs: *const MwProcCount,
    pub nprocs: usize,
    pub mems: *const MwMemCount,
    pub nmems: usize,
    pub affinities: *const MwAffinity,
    pub naffinities: usize,
}

#[repr(C)]
pub struct MwRegion {
    pub names: *const *const c_char,
    pub nnames: usize,
    pub privilege: u32,
    pub fields: u32,
}

#[repr(C)]
pub struct MwLaunch {
    pub task: *const c_char,
    pub parent: *const c_char,
    pub index_launch: c_int,
    pub dims: u32,
    pub lo: *const i64,
    pub hi: *const i64,
    pub variant_kinds: u32,
    pub inner: c_int,
    pub regions: *const MwRegion,
    pub nregions: usize,
}

#[repr(C)]
pub struct MwRegionDecision {
    pub instance: u32,
    pub memory: u32,
    pub soa: c_int,
    pub c_order: c_int,
    pub compact: c_int,
    pub exact: c_int,
    pub align_op: u32,
    pub align: i64,
    pub collect: c_int,
}

#[repr(C)]
pub struct MwTaskDecision {
    pub proc_kind: u32,
    pub has_map_rule: c_int,
    pub control_replicate: c_int,
    pub instance_limit: i64,
    pub launch_id: u32,
}

#[repr(C)]
pub struct MwRegionMapped {
    pub index: u32,
    pub instance: u32,
    pub memory: u32,
    pub layout_holds: c_int,
    pub reused: c_int,
    pub bytes: u64,
    pub instance_id: u64,
    pub mem_node: u32,
    pub mem_index: u32,
}

#[repr(C)]
pub struct MwField {
    pub name: *const c_char,
    pub id: u32,
    pub size: u64,
}

#[repr(C)]
pub struct MwRegionShape {
    pub index: u32,
    pub dims: u32,
    pub lo: *const i64,
    pub hi: *const i64,
    pub volume: u64,
    pub fields: *const MwField,
    pub nfields: usize,
}

#[repr(C)]
pub struct MwMemoryRef {
    pub kind: u32,
    pub node: u32,
    pub index: u32,
}

/// `node0 SYSMEM0`: a memory as the metrics and the simulator name it.
fn memory_label(kind: u32, node: u32, index: u32) -> String {
    format!("node{node} {}{index}", mem_dsl_name(kind))
}

/// The DSL's name of a memory kind code (`OTHER` for one it has none for).
fn mem_dsl_name(code: u32) -> &'static str {
    mem_of(code).and_then(|k| k.dsl_name()).unwrap_or("OTHER")
}

/// A session behind an opaque pointer, with the buffer each decision-log
/// line is written into (kept, so a line allocates nothing).
pub struct MwSession(MapperSession, Vec<u8>);

fn proc_code(kind: ProcKind) -> u32 {
    PROC_KINDS.iter().position(|k| *k == kind).unwrap_or(0) as u32
}

fn mem_code(kind: MemKind) -> u32 {
    MEM_KINDS
        .iter()
        .position(|k| *k == kind)
        .map_or(MEM_OTHER, |i| i as u32)
}

fn mem_of(code: u32) -> Option<MemKind> {
    MEM_KINDS.get(code as usize).copied()
}

fn align_code(op: AlignOp) -> u32 {
    match op {
        AlignOp::Eq => 1,
        AlignOp::Lt => 2,
        AlignOp::Le => 3,
        AlignOp::Gt => 4,
        AlignOp::Ge => 5,
        AlignOp::Ne => 6,
    }
}

/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn text(p: *const c_char) -> Option<String> {
    (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
}

/// # Safety
/// `p` points to `n` values (or `n` is 0).
unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

fn give(out: *mut *mut c_char, message: String) {
    if out.is_null() {
        return;
    }
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: `out` is a valid pointer to a `char *` (checked above).
    unsafe { *out = c.into_raw() };
}

/// # Safety
/// `host` is valid per the header.
unsafe fn host_facts(host: &MwHost) -> HostFacts {
    HostFacts {
        nodes: host.nodes,
        processors: slice(host.procs, host.nprocs)
            .iter()
            .filter_map(|p| {
                Some(HostProcessors {
                    kind: *PROC_KINDS.get(p.kind as usize)?,
                    count: p.count,
                })
            })
            .collect(),
        memories: slice(host.mems, host.nmems)
            .iter()
            .filter_map(|m| {
                Some(HostMemory {
                    kind: mem_of(m.kind)?,
                    count: m.count,
                    capacity_bytes: m.capacity_bytes,
                })
            })
            .collect(),
        affinities: slice(host.affinities, host.naffinities)
            .iter()
            .filter_map(|a| {
                Some(HostAffinity {
                    proc: *PROC_KINDS.get(a.proc as usize)?,
                    mem: mem_of(a.mem)?,
                    scope: match a.scope {
                        0 => Scope::Own,
                        1 => Scope::Peer,
                        _ => Scope::Shared,
                    },
                    legion_bandwidth: a.bandwidth,
                })
            })
            .collect(),
    }
}

/// # Safety
/// `launch` is valid per the header.
unsafe fn launch_info(launch: &MwLaunch) -> LaunchInfo {
    let dims = launch.dims as usize;
    let privilege = |p: u32| match p {
        1 => Privilege::Read,
        2 => Privilege::Write,
        3 => Privilege::ReadWrite,
        4 => Privilege::Reduce,
        _ => Privilege::None,
    };
    LaunchInfo {
        task: text(launch.task).unwrap_or_default(),
        parent: text(launch.parent),
        launch: if launch.index_launch != 0 {
            Launch::Index
        } else {
            Launch::Single
        },
        lo: slice(launch.lo, dims).to_vec(),
        hi: slice(launch.hi, dims).to_vec(),
        variants: PROC_KINDS
            .iter()
            .enumerate()
            .filter(|(i, _)| launch.variant_kinds & (1 << i) != 0)
            .map(|(_, k)| *k)
            .collect(),
        inner: launch.inner != 0,
        regions: slice(launch.regions, launch.nregions)
            .iter()
            .map(|r| RegionInfo {
                names: slice(r.names, r.nnames)
                    .iter()
                    .filter_map(|n| text(*n))
                    .collect(),
                privilege: privilege(r.privilege),
                fields: r.fields,
            })
            .collect(),
    }
}

fn guarded<T>(error: *mut *mut c_char, failed: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => {
            give(
                error,
                "error: mapwright's mapper failed internally (a bug: please report it with \
                 the mapper file)"
                    .into(),
            );
            failed
        }
    }
}

/// See `mw_session_open` in the header.
///
/// # Safety
/// Arguments as the header describes them.
#[no_mangle]
pub unsafe extern "C" fn mw_session_open(
    mapper_path: *const c_char,
    host: *const MwHost,
    semantic_names: c_int,
    decision_log: *const c_char,
    machine_out: *const c_char,
    app_out: *const c_char,
    error: *mut *mut c_char,
    warnings: *mut *mut c_char,
) -> *mut MwSession {
    guarded(error, std::ptr::null_mut(), || {
        let Some(path) = text(mapper_path) else {
            give(
                error,
                "error: mapwright's mapper needs `-mapping FILE`".into(),
            );
            return std::ptr::null_mut();
        };
        let facts = if host.is_null() {
            HostFacts::default()
        } else {
            host_facts(&*host)
        };
        let options = SessionOptions {
            semantic_names: semantic_names != 0,
            decision_log: text(decision_log).map(PathBuf::from),
            machine_out: text(machine_out).map(PathBuf::from),
            app_out: text(app_out).map(PathBuf::from),
        };
        match MapperSession::open(path.as_ref(), &facts, options) {
            Ok(session) => {
                if !session.warnings.is_empty() {
                    give(warnings, session.warnings.clone());
                }
                Box::into_raw(Box::new(MwSession(session, Vec::new())))
            }
            Err(message) => {
                give(error, message);
                std::ptr::null_mut()
            }
        }
    })
}

/// # Safety
/// `session` comes from `mw_session_open` (or is NULL).
#[no_mangle]
pub unsafe extern "C" fn mw_session_close(session: *mut MwSession) {
    if !session.is_null() {
        drop(Box::from_raw(session));
    }
}

/// # Safety
/// `s` comes from this library (or is NULL).
#[no_mangle]
pub unsafe extern "C" fn mw_string_free(s: *mut c_char) {
    if !s.is_null() {
        drop(CString::from_raw(s));
    }
}

/// See `mw_decide` in the header.
///
/// # Safety
/// Arguments as the header describes them; `regions` has room for
/// `launch.nregions` entries.
#[no_mangle]
pub unsafe extern "C" fn mw_decide(
    session: *mut MwSession,
    launch: *const MwLaunch,
    task: *mut MwTaskDecision,
    regions: *mut MwRegionDecision,
    error: *mut *mut c_char,
) -> c_int {
    guarded(error, 1, || {
        let (Some(session), Some(launch), Some(task)) =
            (session.as_mut(), launch.as_ref(), task.as_mut())
        else {
            give(error, "error: mw_decide called without a session".into());
            return 1;
        };
        let info = launch_info(launch);
        let Some(decision) = session.0.decide(&info) else {
            give(
                error,
                format!("error: no decision for task `{}`", info.task),
            );
            return 1;
        };
        task.launch_id = session.0.remember_launch(&info, &decision);
        let t = &decision.task;
        task.proc_kind = proc_code(t.proc_kind);
        task.has_map_rule = c_int::from(t.map_rule.is_some());
        task.control_replicate = c_int::from(t.control_replicated);
        task.instance_limit = t.instance_limit.map_or(-1, |l| l as i64);
        if !regions.is_null() {
            let out = std::slice::from_raw_parts_mut(regions, launch.nregions);
            for (i, slot) in out.iter_mut().enumerate() {
                let Some(r) = t.regions.iter().find(|r| r.index as usize == i) else {
                    continue;
                };
                let (op, align) = r.layout.align.map_or((0, 0), |(op, n)| (align_code(op), n));
                *slot = MwRegionDecision {
                    instance: match r.instance {
                        InstanceKind::Physical => 0,
                        InstanceKind::NoAccess => 2,
                        _ => 1,
                    },
                    memory: mem_code(r.memory),
                    soa: c_int::from(r.layout.soa),
                    c_order: c_int::from(r.layout.order == Order::C),
                    compact: c_int::from(r.layout.compact),
                    exact: c_int::from(r.layout.exact),
                    align_op: op,
                    align,
                    collect: c_int::from(r.collect),
                };
            }
        }
        match &decision.fatal {
            Some(f) => {
                give(error, f.raw_output.clone());
                1
            }
            None => 0,
        }
    })
}

/// See `mw_place` in the header.
///
/// # Safety
/// Arguments as the header describes them.
#[no_mangle]
pub unsafe extern "C" fn mw_place(
    session: *mut MwSession,
    launch: *const MwLaunch,
    point: *const i64,
    dims: u32,
    node: *mut u32,
    proc: *mut u32,
    error: *mut *mut c_char,
) -> c_int {
    guarded(error, 1, || {
        let (Some(session), Some(launch), Some(node), Some(proc)) = (
            session.as_mut(),
            launch.as_ref(),
            node.as_mut(),
            proc.as_mut(),
        ) else {
            give(error, "error: mw_place called without a session".into());
            return 1;
        };
        let info = launch_info(launch);
        let point = slice(point, dims as usize);
        let Some(decision) = session.0.decide(&info) else {
            give(
                error,
                format!("error: no decision for task `{}`", info.task),
            );
            return 1;
        };
        match decision.place(point) {
            Some((n, p)) => {
                *node = n;
                *proc = p;
                0
            }
            None => {
                let why = decision.fatal.as_ref().map_or_else(
                    || {
                        format!(
                            "error: mapwright placed no processor for {} point {point:?}",
                            info.task
                        )
                    },
                    |f| f.raw_output.clone(),
                );
                give(error, why);
                1
            }
        }
    })
}

/// See `mw_log_mapped` in the header.
///
/// # Safety
/// Arguments as the header describes them.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mw_log_mapped(
    session: *mut MwSession,
    launch_id: u32,
    uid: u64,
    point: *const i64,
    dims: u32,
    proc_kind: u32,
    node: u32,
    proc: u32,
    targets: u32,
    regions: *const MwRegionMapped,
    nregions: usize,
) {
    guarded(std::ptr::null_mut(), (), || {
        let Some(session) = session.as_mut() else {
            return;
        };
        // Every map_task calls this: the application description counts
        // the point; only a log needs the line built.
        session.0.mapped(launch_id);
        if !session.0.logging() {
            return;
        }
        let MwSession(session, line_buffer) = session;
        let Some(launch) = session.launch(launch_id) else {
            return;
        };
        let regions: Vec<MappedRegionLine> = slice(regions, nregions)
            .iter()
            .map(|r| {
                let physical = r.instance == 0;
                let placed = physical && r.bytes > 0;
                // (MemKind's Display, without the String.)
                let memory =
                    mem_of(r.memory).map_or("OTHER", |m| m.dsl_name().unwrap_or(m.legion_name()));
                MappedRegionLine {
                    index: r.index,
                    instance: match r.instance {
                        0 => "physical",
                        2 => "none",
                        _ => "virtual",
                    },
                    memory: physical.then_some(memory),
                    layout: physical
                        .then(|| {
                            launch
                                .layouts
                                .iter()
                                .find(|(i, _)| *i == r.index)
                                .map(|(_, l)| l.as_str())
                        })
                        .flatten(),
                    layout_holds: physical.then_some(r.layout_holds != 0),
                    reused: physical.then_some(r.reused != 0),
                    bytes: placed.then_some(r.bytes),
                    instance_id: placed.then_some(r.instance_id),
                    at: placed.then(|| MemoryLabel {
                        node: r.mem_node,
                        memory: mem_dsl_name(r.memory),
                        index: r.mem_index,
                    }),
                }
            })
            .collect();
        let line = MappedTaskLine {
            task: &launch.task,
            parent: launch.parent.as_deref(),
            inner: launch.inner,
            uid,
            point: slice(point, dims as usize),
            proc_kind: proc_kind_name(proc_kind),
            node,
            proc,
            targets: targets.max(1),
            regions: &regions,
        };
        if line.write_into(line_buffer) {
            session.log_mapped(launch_id, line_buffer);
        }
    })
}

/// The DSL's name of a processor kind code (`?` for one it has none for).
fn proc_kind_name(code: u32) -> &'static str {
    PROC_KINDS.get(code as usize).map_or("?", |k| k.dsl_name())
}

/// See `mw_log_ran` in the header.
///
/// # Safety
/// Arguments as the header describes them.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mw_log_ran(
    session: *mut MwSession,
    task: *const c_char,
    uid: u64,
    point: *const i64,
    dims: u32,
    proc_kind: u32,
    node: u32,
    proc: u32,
    ready_ns: i64,
    start_ns: i64,
    end_ns: i64,
) {
    guarded(std::ptr::null_mut(), (), || {
        let Some(session) = session.as_mut() else {
            return;
        };
        if !session.0.logging() && !session.0.recording() {
            return;
        }
        let ran = RanTask {
            ran: text(task).unwrap_or_default(),
            uid,
            point: slice(point, dims as usize).to_vec(),
            proc_kind: proc_kind_name(proc_kind).to_string(),
            node,
            proc,
            ready_ns,
            start_ns,
            end_ns,
        };
        session.0.log_ran(&ran);
    })
}

/// See `mw_app_launched` in the header.
///
/// # Safety
/// `session` as the header describes it.
#[no_mangle]
pub unsafe extern "C" fn mw_app_launched(session: *mut MwSession, launch_id: u32) {
    guarded(std::ptr::null_mut(), (), || {
        if let Some(session) = session.as_mut() {
            session.0.launched(launch_id);
        }
    })
}

/// See `mw_app_regions` in the header.
///
/// # Safety
/// Arguments as the header describes them.
#[no_mangle]
pub unsafe extern "C" fn mw_app_regions(
    session: *mut MwSession,
    launch_id: u32,
    shapes: *const MwRegionShape,
    nshapes: usize,
) {
    guarded(std::ptr::null_mut(), (), || {
        let Some(session) = session.as_mut() else {
            return;
        };
        let shapes = slice(shapes, nshapes)
            .iter()
            .map(|s| RegionShape {
                index: s.index,
                lo: slice(s.lo, s.dims as usize).to_vec(),
                hi: slice(s.hi, s.dims as usize).to_vec(),
                volume: s.volume,
                fields: slice(s.fields, s.nfields)
                    .iter()
                    .map(|f| FieldShape {
                        // A field the program never named: by its id.
                        name: text(f.name)
                            .filter(|n| !n.is_empty())
                            .unwrap_or_else(|| format!("field{}", f.id)),
                        bytes: f.size,
                    })
                    .collect(),
            })
            .collect();
        session.0.region_shapes(launch_id, shapes);
    })
}

/// See `mw_log_flush` in the header.
///
/// # Safety
/// `session` as the header describes it.
#[no_mangle]
pub unsafe extern "C" fn mw_log_flush(session: *mut MwSession) {
    guarded(std::ptr::null_mut(), (), || {
        if let Some(session) = session.as_mut() {
            session.0.flush_log();
        }
    })
}

/// See `mw_log_copy` in the header.
///
/// # Safety
/// Arguments as the header describes them.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mw_log_copy(
    session: *mut MwSession,
    task: *const c_char,
    uid: u64,
    index: u32,
    fill: c_int,
    src: *const MwMemoryRef,
    dst: *const MwMemoryRef,
    bytes: u64,
    start_ns: i64,
    end_ns: i64,
) {
    guarded(std::ptr::null_mut(), (), || {
        let Some(session) = session.as_mut() else {
            return;
        };
        if !session.0.logging() {
            return;
        }
        let label =
            |m: *const MwMemoryRef| m.as_ref().map(|m| memory_label(m.kind, m.node, m.index));
        let copy = CopiedData {
            copy: text(task).unwrap_or_default(),
            uid,
            index,
            fill: fill != 0,
            src: label(src),
            dst: label(dst).unwrap_or_default(),
            bytes,
            start_ns,
            end_ns,
        };
        session.0.log_copy(&copy);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> (Vec<MwProcCount>, Vec<MwMemCount>, Vec<MwAffinity>) {
        (
            vec![MwProcCount { kind: 0, count: 4 }],
            vec![MwMemCount {
                kind: 0,
                count: 1,
                capacity_bytes: 1 << 30,
            }],
            vec![MwAffinity {
                proc: 0,
                mem: 0,
                scope: 2,
                bandwidth: 100,
            }],
        )
    }

    fn open(text: &str) -> (*mut MwSession, Option<String>) {
        let dir =
            std::env::temp_dir().join(format!("mw-abi-{}-{}", std::process::id(), text.len()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.mapper");
        std::fs::write(&path, text).unwrap();
        let (procs, mems, affs) = host();
        let h = MwHost {
            nodes: 1,
            procs: procs.as_ptr(),
            nprocs: procs.len(),
            mems: mems.as_ptr(),
            nmems: mems.len(),
            affinities: affs.as_ptr(),
            naffinities: affs.len(),
        };
        let path = CString::new(path.to_string_lossy().as_bytes()).unwrap();
        let mut error: *mut c_char = std::ptr::null_mut();
        let mut warnings: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid pointers, as the C++ shell passes them.
        let s = unsafe {
            mw_session_open(
                path.as_ptr(),
                &h,
                1,
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null(),
                &mut error,
                &mut warnings,
            )
        };
        // The session has read the file.
        let _ = std::fs::remove_dir_all(&dir);
        let message = (!error.is_null()).then(|| {
            // SAFETY: a string this library made.
            let m = unsafe { CStr::from_ptr(error) }
                .to_string_lossy()
                .into_owned();
            unsafe { mw_string_free(error) };
            m
        });
        unsafe { mw_string_free(warnings) };
        (s, message)
    }

    #[test]
    fn a_mapper_with_an_error_gives_no_session_and_the_rendered_diagnostic() {
        let (s, error) = open("Task * CPU\n");
        assert!(s.is_null());
        let error = error.unwrap();
        assert!(error.contains("error[E0101]"), "{error}");
        assert!(error.contains("no task was run"), "{error}");
    }

    #[test]
    fn a_launch_is_decided_and_its_points_placed_through_the_abi() {
        let (s, error) = open(
            "Task * CPU;\nRegion * rp CPU SYSMEM;\nLayout * * * AOS C_order;\nm = Machine(CPU);\n\
             def last(Task t) { return m[0, 3 - t.ipoint[0]]; }\nIndexTaskMap work last;\n",
        );
        assert!(error.is_none(), "{error:?}");
        let task = CString::new("work").unwrap();
        let rp = CString::new("rp").unwrap();
        let names = [rp.as_ptr()];
        let regions = [MwRegion {
            names: names.as_ptr(),
            nnames: 1,
            privilege: 3,
            fields: 2,
        }];
        let (lo, hi) = ([0i64], [3i64]);
        let launch = MwLaunch {
            task: task.as_ptr(),
            parent: std::ptr::null(),
            index_launch: 1,
            dims: 1,
            lo: lo.as_ptr(),
            hi: hi.as_ptr(),
            variant_kinds: 1,
            inner: 0,
            regions: regions.as_ptr(),
            nregions: 1,
        };
        let mut decision = MwTaskDecision {
            proc_kind: 99,
            has_map_rule: 0,
            control_replicate: 0,
            instance_limit: 0,
            launch_id: 7,
        };
        let mut out = [MwRegionDecision {
            instance: 9,
            memory: 9,
            soa: 1,
            c_order: 0,
            compact: 0,
            exact: 0,
            align_op: 0,
            align: 0,
            collect: 0,
        }];
        let mut error: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid pointers of the stated lengths.
        let rc = unsafe { mw_decide(s, &launch, &mut decision, out.as_mut_ptr(), &mut error) };
        assert_eq!(rc, 0);
        assert_eq!(
            (
                decision.proc_kind,
                decision.has_map_rule,
                decision.instance_limit
            ),
            (0, 1, -1)
        );
        assert_eq!(
            (out[0].instance, out[0].memory, out[0].soa, out[0].c_order),
            (0, 0, 0, 1)
        );
        for p in 0..4i64 {
            let (mut node, mut proc) = (9u32, 9u32);
            // SAFETY: as above.
            let rc = unsafe { mw_place(s, &launch, &p, 1, &mut node, &mut proc, &mut error) };
            assert_eq!((rc, node, proc), (0, 0, (3 - p) as u32));
        }
        // SAFETY: a session this library made.
        unsafe { mw_session_close(s) };
    }
}

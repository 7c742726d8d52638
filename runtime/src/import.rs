//! `mapwright app import`: Legion mapper-logging-wrapper logs to
//! application and machine descriptions.
//!
//! A wrapper log (Legion's `LoggingWrapper` around a mapper, run with
//! `-wrapper -level mapper=debug`) starts with the machine as Legion sees it
//! (`Memories on rank N:` with kinds and, in most versions, capacities;
//! `Processors on rank N:` with the memories each processor can see and
//! Legion's bandwidth class for each), followed by one record per mapper
//! call: `MAP_TASK for NAME(index_point=(..))<uid>` with the target
//! processors and each region requirement (privilege, region tree, domain,
//! fields) and the instance chosen for it; `SLICE_TASK` (launch points to
//! processors), `SELECT_SHARDING_FUNCTOR` (launch points to shards),
//! `MAP_REPLICATE_TASK` (one replicant per node), and others we skip.
//!
//! Several mapper threads write at once, so records interleave line by line;
//! every line carries its thread in the `[node - thread]` prefix, and records
//! are reassembled per thread before they are read. Two generations of the
//! format exist (`Requirement[i](privilege=..,region=(tree,..),..)` +
//! `Instance[..]` lines, and the newer `INPUT:`/`OUTPUT INSTANCES:` sections
//! with `RegionRequirement[i](privilege=..,tree=N,..)` +
//! `PhysicalInstance[..]`); both are read.
//!
//! What the log cannot tell — semantic region names (requirements are named
//! `tree<N>` after their region tree), field sizes (8 bytes assumed), work
//! per task, hardware speeds (taken from the `2x4gpu` preset, the cluster
//! the bundled logs come from) — is filled in and marked as a guess.
//! Nothing in here panics on malformed input; unreadable lines are skipped.

use crate::app::{App, AppError, Launch, Privilege, RegionArg, Task, Work};
use crate::machine::{
    Affinity, Link, Machine, MachineError, MemGroup, MemKind, Node, ProcGroup, ProcKind, Scope,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Why a log could not be turned into descriptions.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// No machine header: probably not a mapper-logging-wrapper log.
    #[error(
        "not a Legion mapper-logging-wrapper log: no `Memories on rank N:` / \
         `Processors on rank N:` machine description found"
    )]
    NoMachine,
    /// The machine header lists no processor of a kind mapwright knows.
    #[error("the log's machine description lists no processors of a known kind")]
    NoProcessors,
    /// No record says anything about a task.
    #[error(
        "the log records no task mapping (no MAP_TASK, SLICE_TASK, \
         SELECT_SHARDING_FUNCTOR or MAP_REPLICATE_TASK record)"
    )]
    NoTasks,
    /// The application built from the log is inconsistent (a bug here).
    #[error("the application imported from the log is inconsistent: {0}")]
    App(#[from] AppError),
    /// The machine built from the log is inconsistent (a bug here).
    #[error("the machine imported from the log is inconsistent: {0}")]
    Machine(#[from] MachineError),
}

/// Turns a mapper-logging-wrapper log into an application and a machine
/// description. The application is named after the first source file the
/// log mentions (`circuit_sparse.rg` gives `circuit_sparse`), or `imported`.
pub fn import_wrapper_log(text: &str) -> Result<(App, Machine), ImportError> {
    import_wrapper_log_named(text, None)
}

/// Like [`import_wrapper_log`], with the application's name given (the CLI
/// passes the log's file stem).
pub fn import_wrapper_log_named(
    text: &str,
    name: Option<&str>,
) -> Result<(App, Machine), ImportError> {
    let records = split_records(text);
    let obs = observe(&records);
    let machine = build_machine(&obs)?;
    let app = build_app(&obs, &machine, name)?;
    Ok((app, machine))
}

// ---------------------------------------------------------------------------
// Lines and records
// ---------------------------------------------------------------------------

/// Splits a log line into (stream, message). The stream is the
/// `[node - thread]` prefix; lines of other logger categories are dropped.
/// A line without the prefix is taken whole, on the unnamed stream, so that
/// hand-trimmed logs still import.
fn split_line(line: &str) -> Option<(&str, &str)> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let Some(rest) = line.strip_prefix('[') else {
        return Some(("", line));
    };
    let close = rest.find(']')?;
    let stream = &rest[..close];
    let mut rest = rest[close + 1..].trim_start();
    // Timestamp.
    let ts_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    rest = rest[ts_end..].trim_start();
    // `{level}{category}:`
    if let Some(after) = rest.strip_prefix('{') {
        let lvl_end = after.find('}')?;
        let after = &after[lvl_end + 1..];
        let after = after.strip_prefix('{')?;
        let cat_end = after.find('}')?;
        let category = &after[..cat_end];
        if category != "mapper" {
            return None;
        }
        let after = after[cat_end + 1..].strip_prefix(':')?;
        let msg = after.strip_prefix(' ').unwrap_or(after);
        return Some((stream, msg));
    }
    Some((stream, rest))
}

/// The mapper calls and headers the importer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecordKind {
    Memories,
    Processors,
    MapTask,
    MapReplicate,
    Slice,
    Sharding,
    Other,
}

/// One header line and the indented lines that follow it on its stream.
#[derive(Debug)]
struct Record {
    kind: RecordKind,
    /// Text after `KIND for ` (task name, point, uid, source).
    subject: String,
    /// Body lines, trimmed.
    body: Vec<String>,
    /// Line number of the header, to keep records in log order.
    line_no: usize,
}

fn classify(header: &str) -> (RecordKind, String) {
    const FOR: [(&str, RecordKind); 5] = [
        ("MAP_TASK for ", RecordKind::MapTask),
        ("MAP_REPLICATE_TASK for ", RecordKind::MapReplicate),
        ("SLICE_TASK for ", RecordKind::Slice),
        ("SELECT_SHARDING_FUNCTOR for ", RecordKind::Sharding),
        // Listed so that its subject is kept; it is otherwise skipped.
        ("SELECT_TASK_SOURCES for ", RecordKind::Other),
    ];
    if header.starts_with("Memories on rank") {
        return (RecordKind::Memories, String::new());
    }
    if header.starts_with("Processors on rank") {
        return (RecordKind::Processors, String::new());
    }
    for (prefix, kind) in FOR {
        if let Some(rest) = header.strip_prefix(prefix) {
            return (kind, rest.trim().to_string());
        }
    }
    (RecordKind::Other, String::new())
}

/// Reassembles records per stream and returns them in header order.
fn split_records(text: &str) -> Vec<Record> {
    let mut open: HashMap<&str, Record> = HashMap::new();
    let mut done: Vec<Record> = Vec::new();
    for (line_no, line) in text.lines().enumerate() {
        let Some((stream, msg)) = split_line(line) else {
            continue;
        };
        if msg.trim().is_empty() {
            continue;
        }
        let is_header = !msg.starts_with([' ', '\t']);
        if is_header {
            let (kind, subject) = classify(msg.trim_end());
            let rec = Record {
                kind,
                subject,
                body: Vec::new(),
                line_no,
            };
            if let Some(prev) = open.insert(stream, rec) {
                done.push(prev);
            }
        } else if let Some(rec) = open.get_mut(stream) {
            rec.body.push(msg.trim().to_string());
        }
    }
    done.extend(open.into_values());
    done.retain(|r| r.kind != RecordKind::Other);
    done.sort_by_key(|r| r.line_no);
    done
}

// ---------------------------------------------------------------------------
// Small parsers
// ---------------------------------------------------------------------------

fn parse_hex(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s.strip_prefix("0x").unwrap_or(s);
    if s.is_empty() {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// Realm ids carry the owner node in bits 40..56.
fn node_of(id: u64) -> u32 {
    ((id >> 40) & 0xFFFF) as u32
}

/// The same id on node 0 (to find a remote processor's kind from rank 0's
/// table, nodes being identical).
fn on_node_zero(id: u64) -> u64 {
    id & !(0xFFFF_u64 << 40)
}

/// Parses `(1,2,3)` or `<1,2,3>` (or a bare `1,2`) into coordinates.
fn parse_point(s: &str) -> Option<Vec<i64>> {
    let s = s.trim();
    let s = s
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .or_else(|| s.strip_prefix('<').and_then(|x| x.strip_suffix('>')))
        .unwrap_or(s);
    if s.trim().is_empty() {
        return None;
    }
    s.split(',').map(|c| c.trim().parse::<i64>().ok()).collect()
}

/// A rectangle `<lo>..<hi>`, inclusive.
#[derive(Debug, Clone, PartialEq)]
struct Rect {
    lo: Vec<i64>,
    hi: Vec<i64>,
}

impl Rect {
    fn volume(&self) -> u64 {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(l, h)| {
                let e = i128::from(*h) - i128::from(*l) + 1;
                u64::try_from(e.max(0)).unwrap_or(u64::MAX)
            })
            .fold(1u64, |a, e| a.saturating_mul(e))
    }

    fn extents(&self) -> Vec<u64> {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(l, h)| {
                let e = i128::from(*h) - i128::from(*l) + 1;
                u64::try_from(e.max(0)).unwrap_or(u64::MAX)
            })
            .collect()
    }
}

fn parse_rect(s: &str) -> Option<Rect> {
    let (lo, hi) = s.trim().split_once("..")?;
    let lo = parse_point(lo)?;
    let hi = parse_point(hi)?;
    (lo.len() == hi.len()).then_some(Rect { lo, hi })
}

/// A domain: a union of rectangles (`<a>..<b>+<c>..<d>`), possibly empty.
#[derive(Debug, Clone, Default)]
struct Domain {
    dims: usize,
    rects: Vec<Rect>,
}

impl Domain {
    fn volume(&self) -> u64 {
        self.rects
            .iter()
            .fold(0u64, |a, r| a.saturating_add(r.volume()))
    }
}

fn parse_domain(s: &str) -> Domain {
    let rects: Vec<Rect> = s
        .split('+')
        .filter(|p| !p.trim().is_empty())
        .filter_map(parse_rect)
        .collect();
    let dims = rects.first().map_or(0, |r| r.lo.len());
    Domain { dims, rects }
}

/// Splits `key=value,key=value` where values may contain commas (points,
/// region triples): a comma starts a new pair only when an identifier and
/// `=` follow it. Items without `=` (`EXTERNAL`, `VIRTUAL`) are kept with an
/// empty key.
fn key_values(s: &str) -> Vec<(&str, &str)> {
    let bytes = s.as_bytes();
    let mut starts = vec![0usize];
    for (i, &b) in bytes.iter().enumerate() {
        if b != b',' {
            continue;
        }
        let rest = &s[i + 1..];
        let ident_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let starts_ident = rest
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        let followed_by_eq = rest[ident_len..].starts_with('=');
        // `EXTERNAL,memory=` style flags: a bare identifier followed by a
        // comma also starts an item.
        let bare_flag = ident_len > 0 && rest[ident_len..].starts_with(',');
        if starts_ident && (followed_by_eq || bare_flag) {
            starts.push(i + 1);
        }
    }
    let mut out = Vec::new();
    for (n, &st) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(s.len(), |&e| e - 1);
        let item = &s[st..end.max(st)];
        match item.split_once('=') {
            Some((k, v)) => out.push((k.trim(), v)),
            None => out.push(("", item)),
        }
    }
    out
}

/// `NAME[...](args)` -> (`...`, `args`): the bracketed index and the text
/// inside the outermost parentheses.
fn bracket_and_args(s: &str) -> Option<(&str, &str)> {
    let open_paren = s.find('(')?;
    let close_paren = s.rfind(')')?;
    if close_paren <= open_paren {
        return None;
    }
    let head = &s[..open_paren];
    let idx = match (head.find('['), head.rfind(']')) {
        (Some(a), Some(b)) if b > a => &head[a + 1..b],
        _ => "",
    };
    Some((idx, &s[open_paren + 1..close_paren]))
}

/// Subject of a task record: `NAME(index_point=(..))<uid> @ file:line`.
#[derive(Debug)]
struct Subject {
    name: String,
    point: Option<Vec<i64>>,
    source: Option<String>,
}

fn parse_subject(s: &str) -> Option<Subject> {
    let (head, source) = match s.find(" @ ") {
        Some(i) => (&s[..i], Some(s[i + 3..].trim().to_string())),
        None => (s, None),
    };
    let mut head = head.trim();
    // Trailing `<uid>`.
    if head.ends_with('>') {
        if let Some(lt) = head.rfind('<') {
            if head[lt + 1..head.len() - 1]
                .chars()
                .all(|c| c.is_ascii_digit())
            {
                head = &head[..lt];
            }
        }
    }
    let (name, point) = match head.rfind("(index_point=") {
        Some(i) if head.ends_with(')') => {
            let inner = &head[i + "(index_point=".len()..head.len() - 1];
            (&head[..i], parse_point(inner))
        }
        _ => (head, None),
    };
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    Some(Subject {
        name: name.to_string(),
        point,
        source,
    })
}

/// All `(..)` groups in a sharding line `N <- (0,0) (1,0)`.
fn paren_groups(s: &str) -> Vec<Vec<i64>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(a) = rest.find('(') {
        let Some(b) = rest[a..].find(')') else { break };
        if let Some(p) = parse_point(&rest[a..a + b + 1]) {
            out.push(p);
        }
        rest = &rest[a + b + 1..];
    }
    out
}

// ---------------------------------------------------------------------------
// Observations
// ---------------------------------------------------------------------------

/// A memory as the machine header lists it.
#[derive(Debug, Clone)]
struct MemObs {
    kind: String,
    capacity: Option<u64>,
}

/// A processor as the machine header lists it.
#[derive(Debug, Clone)]
struct ProcObs {
    kind: String,
    sees: Vec<(u64, u32)>,
}

/// What the log says about one region argument of a task.
#[derive(Debug, Default)]
struct ReqObs {
    privileges: Vec<Privilege>,
    unknown_privilege: Option<String>,
    trees: Vec<u64>,
    fields: Vec<String>,
    dims: usize,
    max_elements: u64,
    shape: Vec<u64>,
    instances: BTreeMap<String, u32>,
}

/// What the log says about one task.
#[derive(Debug, Default)]
struct TaskObs {
    first_line: usize,
    index_evidence: bool,
    points: Vec<Vec<i64>>,
    rects: Vec<Rect>,
    map_count: u32,
    slice_count: u32,
    shard_count: u32,
    replicate_count: u32,
    procs: BTreeSet<u64>,
    variants: BTreeSet<String>,
    reqs: BTreeMap<u32, ReqObs>,
}

#[derive(Debug, Default)]
struct Observations {
    mems: BTreeMap<u64, MemObs>,
    procs: BTreeMap<u64, ProcObs>,
    saw_machine_header: bool,
    tasks: BTreeMap<String, TaskObs>,
    max_node: u32,
    max_shard: Option<u32>,
    max_replicants: u32,
    source: Option<String>,
    records: usize,
    skipped_lines: usize,
}

impl Observations {
    fn task(&mut self, name: &str, line_no: usize) -> &mut TaskObs {
        self.tasks
            .entry(name.to_string())
            .or_insert_with(|| TaskObs {
                first_line: line_no,
                ..TaskObs::default()
            })
    }

    fn note_id(&mut self, id: u64) {
        self.max_node = self.max_node.max(node_of(id));
    }

    fn mem_kind_name(&self, id: u64) -> String {
        self.mems
            .get(&id)
            .or_else(|| self.mems.get(&on_node_zero(id)))
            .map_or_else(|| "unknown".to_string(), |m| m.kind.clone())
    }
}

fn observe(records: &[Record]) -> Observations {
    let mut o = Observations {
        records: records.len(),
        ..Observations::default()
    };
    for rec in records {
        match rec.kind {
            RecordKind::Memories => {
                o.saw_machine_header = true;
                for line in &rec.body {
                    observe_memory_line(&mut o, line);
                }
            }
            RecordKind::Processors => {
                o.saw_machine_header = true;
                for line in &rec.body {
                    observe_processor_line(&mut o, line);
                }
            }
            RecordKind::MapTask | RecordKind::MapReplicate => observe_map(&mut o, rec),
            RecordKind::Slice => observe_slice(&mut o, rec),
            RecordKind::Sharding => observe_sharding(&mut o, rec),
            RecordKind::Other => {}
        }
    }
    o
}

fn observe_memory_line(o: &mut Observations, line: &str) {
    // `1e00000000000000 (SYSTEM_MEM): 157286400000 bytes` or without size.
    let mut words = line.split_whitespace();
    let (Some(id), Some(kind)) = (words.next().and_then(parse_hex), words.next()) else {
        o.skipped_lines += 1;
        return;
    };
    let kind = kind
        .trim_end_matches(':')
        .trim_start_matches('(')
        .trim_end_matches(')')
        .to_string();
    let capacity = words.next().and_then(|n| n.parse::<u64>().ok());
    o.note_id(id);
    o.mems.insert(id, MemObs { kind, capacity });
}

fn observe_processor_line(o: &mut Observations, line: &str) {
    // `1d00000000000003 (TOC_PROC) can see 1e..02(bw=200) 1e..03(bw=10)`
    let mut words = line.split_whitespace();
    let (Some(id), Some(kind)) = (words.next().and_then(parse_hex), words.next()) else {
        o.skipped_lines += 1;
        return;
    };
    let kind = kind
        .trim_start_matches('(')
        .trim_end_matches(')')
        .to_string();
    let mut sees = Vec::new();
    for w in words {
        let Some((mem, bw)) = w.split_once("(bw=") else {
            continue;
        };
        let (Some(mem), Ok(bw)) = (parse_hex(mem), bw.trim_end_matches(')').parse::<u32>()) else {
            continue;
        };
        sees.push((mem, bw));
    }
    o.note_id(id);
    o.procs.insert(id, ProcObs { kind, sees });
}

fn observe_map(o: &mut Observations, rec: &Record) {
    let Some(subj) = parse_subject(&rec.subject) else {
        return;
    };
    if o.source.is_none() {
        o.source.clone_from(&subj.source);
    }
    let mut target_ids = Vec::new();
    let mut replicants = 0u32;
    // Requirements, then the instance lines that follow each.
    let mut reqs: BTreeMap<u32, (String, Vec<String>)> = BTreeMap::new();
    let mut last_req: Option<u32> = None;
    let mut variant = None;
    for line in &rec.body {
        if let Some(rest) = line.strip_prefix("TARGET PROCS:") {
            target_ids.extend(rest.split_whitespace().filter_map(parse_hex));
        } else if let Some(rest) = line.strip_prefix("REPLICANT") {
            replicants += 1;
            if let Some((_, id)) = rest.split_once("->") {
                target_ids.extend(parse_hex(id));
            }
        } else if let Some(rest) = line.strip_prefix("CHOSEN VARIANT:") {
            variant = Some(rest.trim().to_string());
        } else if line.starts_with("Requirement[") || line.starts_with("RegionRequirement[") {
            if let Some((idx, args)) = bracket_and_args(line) {
                if let Ok(i) = idx.trim().parse::<u32>() {
                    // First occurrence wins: the newer format repeats each
                    // requirement under OUTPUT INSTANCES.
                    reqs.entry(i)
                        .or_insert_with(|| (args.to_string(), Vec::new()));
                    last_req = Some(i);
                }
            }
        } else if line.starts_with("Instance") || line.starts_with("PhysicalInstance") {
            let Some(i) = last_req else { continue };
            let Some((_, args)) = bracket_and_args(line) else {
                continue;
            };
            let where_ = if args.trim() == "VIRTUAL" {
                "VIRTUAL".to_string()
            } else {
                key_values(args)
                    .into_iter()
                    .find(|(k, _)| *k == "memory")
                    .and_then(|(_, v)| parse_hex(v))
                    .map_or_else(|| "unknown".to_string(), |id| o.mem_kind_name(id))
            };
            if let Some(entry) = reqs.get_mut(&i) {
                entry.1.push(where_);
            }
        }
    }
    for id in &target_ids {
        o.note_id(*id);
    }
    o.max_replicants = o.max_replicants.max(replicants);
    let t = o.task(&subj.name, rec.line_no);
    if rec.kind == RecordKind::MapReplicate {
        t.replicate_count += 1;
    } else {
        t.map_count += 1;
    }
    if let Some(p) = subj.point {
        t.index_evidence = true;
        t.points.push(p);
    }
    t.procs.extend(target_ids);
    if let Some(v) = variant {
        t.variants.insert(v);
    }
    for (i, (args, instances)) in reqs {
        let r = t.reqs.entry(i).or_default();
        observe_requirement(r, &args);
        for inst in instances {
            *r.instances.entry(inst).or_insert(0) += 1;
        }
    }
}

fn observe_requirement(r: &mut ReqObs, args: &str) {
    for (k, v) in key_values(args) {
        match k {
            "privilege" => match Privilege::parse(v) {
                Some(p) => {
                    if !r.privileges.contains(&p) {
                        r.privileges.push(p);
                    }
                }
                None => r.unknown_privilege = Some(v.to_string()),
            },
            "tree" => {
                if let Ok(t) = v.trim().parse::<u64>() {
                    if !r.trees.contains(&t) {
                        r.trees.push(t);
                    }
                }
            }
            "region" => {
                // `(tree,(index_space,type),field_space)`
                let tree = v
                    .trim()
                    .trim_start_matches('(')
                    .split(',')
                    .next()
                    .and_then(|t| t.trim().parse::<u64>().ok());
                if let Some(t) = tree {
                    if !r.trees.contains(&t) {
                        r.trees.push(t);
                    }
                }
            }
            "domain" => {
                let d = parse_domain(v);
                let vol = d.volume();
                if d.dims > 0 && r.dims == 0 {
                    r.dims = d.dims;
                }
                if vol > r.max_elements || (r.max_elements == 0 && d.dims > 0) {
                    r.max_elements = vol;
                    r.shape = match d.rects.as_slice() {
                        [one] => one.extents(),
                        _ => Vec::new(),
                    };
                }
            }
            "fields" => {
                for f in v.split('+').map(str::trim).filter(|f| !f.is_empty()) {
                    if !r.fields.iter().any(|x| x == f) {
                        r.fields.push(f.to_string());
                    }
                }
            }
            _ => {}
        }
    }
}

fn observe_slice(o: &mut Observations, rec: &Record) {
    let Some(subj) = parse_subject(&rec.subject) else {
        return;
    };
    let mut rects = Vec::new();
    let mut procs = Vec::new();
    for line in &rec.body {
        if let Some(rest) = line.strip_prefix("INPUT:") {
            rects.extend(parse_domain(rest).rects);
        } else if let Some((dom, proc_)) = line.split_once("->") {
            rects.extend(parse_domain(dom).rects);
            procs.extend(parse_hex(proc_));
        }
    }
    for id in &procs {
        o.note_id(*id);
    }
    let t = o.task(&subj.name, rec.line_no);
    t.index_evidence = true;
    t.slice_count += 1;
    t.rects.extend(rects);
    t.procs.extend(procs);
}

fn observe_sharding(o: &mut Observations, rec: &Record) {
    let Some(subj) = parse_subject(&rec.subject) else {
        return;
    };
    if o.source.is_none() {
        o.source.clone_from(&subj.source);
    }
    let mut points = Vec::new();
    let mut max_shard = None;
    for line in &rec.body {
        let Some((shard, pts)) = line.split_once("<-") else {
            continue;
        };
        if let Ok(s) = shard.trim().parse::<u32>() {
            max_shard = Some(max_shard.map_or(s, |m: u32| m.max(s)));
        }
        points.extend(paren_groups(pts));
    }
    if let Some(s) = max_shard {
        o.max_shard = Some(o.max_shard.map_or(s, |m| m.max(s)));
    }
    let t = o.task(&subj.name, rec.line_no);
    t.shard_count += 1;
    // A single task is sharded as the one point `(0)`; only several points
    // prove an index launch.
    if points.len() > 1 {
        t.index_evidence = true;
    }
    t.points.extend(points);
}

// ---------------------------------------------------------------------------
// Building the machine
// ---------------------------------------------------------------------------

/// Hardware figures for kinds the log names (the log has only Legion's
/// bandwidth classes): those of the `2x4gpu` preset, the V100/POWER9 cluster
/// the bundled logs were recorded on.
fn reference_machine() -> Option<Machine> {
    Machine::preset("2x4gpu")
}

const FIGURES_GUESS: &str = "hardware figures are the 2x4gpu preset's (V100/POWER9 cluster); \
                             the log gives only counts, capacities and Legion bandwidth classes";

fn build_machine(o: &Observations) -> Result<Machine, ImportError> {
    if !o.saw_machine_header || o.procs.is_empty() {
        return Err(ImportError::NoMachine);
    }
    let reference = reference_machine();
    let mut notes = Vec::new();
    // Rank 0's own processors and memories (ids on the lowest node listed).
    let home = o.procs.keys().map(|&id| node_of(id)).min().unwrap_or(0);

    // Processors by kind, with each processor's index within its kind.
    let mut proc_kinds: Vec<(ProcKind, Vec<u64>)> = Vec::new();
    let mut unknown_procs = BTreeSet::new();
    for (&id, p) in o.procs.iter().filter(|(&id, _)| node_of(id) == home) {
        match p.kind.parse::<ProcKind>() {
            Ok(k) => match proc_kinds.iter_mut().find(|(kk, _)| *kk == k) {
                Some((_, ids)) => ids.push(id),
                None => proc_kinds.push((k, vec![id])),
            },
            Err(_) => {
                unknown_procs.insert(p.kind.clone());
            }
        }
    }
    if proc_kinds.is_empty() {
        return Err(ImportError::NoProcessors);
    }
    if !unknown_procs.is_empty() {
        notes.push(format!(
            "processor kinds left out (unknown to mapwright): {}",
            unknown_procs.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }

    // Memories: those some processor can see and that have room. Legion
    // also lists DMA intermediate buffers no processor sees and 0-byte
    // placeholders; a mapper can use neither.
    let visible: BTreeSet<u64> = o
        .procs
        .values()
        .flat_map(|p| p.sees.iter().map(|(m, _)| *m))
        .collect();
    let mut mem_kinds: Vec<(MemKind, Vec<u64>)> = Vec::new();
    let mut unknown_mems = BTreeSet::new();
    let mut hidden = 0usize;
    for (&id, m) in o.mems.iter().filter(|(&id, _)| node_of(id) == home) {
        if !visible.contains(&id) || m.capacity == Some(0) {
            hidden += 1;
            continue;
        }
        match m.kind.parse::<MemKind>() {
            Ok(k) => match mem_kinds.iter_mut().find(|(kk, _)| *kk == k) {
                Some((_, ids)) => ids.push(id),
                None => mem_kinds.push((k, vec![id])),
            },
            Err(_) => {
                unknown_mems.insert(m.kind.clone());
            }
        }
    }
    if hidden > 0 {
        notes.push(format!(
            "{hidden} listed memories left out: no processor can see them, or they have 0 bytes"
        ));
    }
    if !unknown_mems.is_empty() {
        notes.push(format!(
            "memory kinds left out (unknown to mapwright): {}",
            unknown_mems.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }

    let processors: Vec<ProcGroup> = proc_kinds
        .iter()
        .map(|(k, ids)| proc_group_for(*k, ids.len(), reference.as_ref()))
        .collect();
    let mut memories = Vec::new();
    for (k, ids) in &mem_kinds {
        let caps: Vec<u64> = ids
            .iter()
            .filter_map(|id| o.mems.get(id).and_then(|m| m.capacity))
            .collect();
        memories.push(mem_group_for(
            *k,
            ids.len(),
            caps.iter().min().copied(),
            reference.as_ref(),
        ));
        if caps.iter().min() != caps.iter().max() {
            notes.push(format!(
                "{k} memories differ in size; the smallest is used for all"
            ));
        }
    }

    let affinities = affinities_for(o, &proc_kinds, &mem_kinds, reference.as_ref());

    let nodes = [
        o.max_node.saturating_sub(home) + 1,
        o.max_shard.map_or(1, |s| s.saturating_add(1)),
        o.max_replicants.max(1),
    ]
    .into_iter()
    .max()
    .unwrap_or(1);
    notes.push(format!(
        "{nodes} node(s): the most of the node ids, shards and control-replicated copies the \
         log mentions; nodes are assumed identical to rank 0"
    ));
    notes.push(FIGURES_GUESS.to_string());

    let kinds: BTreeSet<MemKind> = mem_kinds.iter().map(|(k, _)| *k).collect();
    let links: Vec<Link> = reference
        .as_ref()
        .map(|r| {
            r.links
                .iter()
                .filter(|l| kinds.contains(&l.from) && kinds.contains(&l.to))
                .filter(|l| !l.inter_node || nodes > 1)
                .cloned()
                .collect()
        })
        .unwrap_or_default();

    let machine = Machine {
        name: "imported".into(),
        description: "machine as a Legion mapper-logging-wrapper log shows it".into(),
        nodes,
        notes,
        node: Node {
            processors,
            memories,
            affinities,
        },
        links,
    };
    machine.validate()?;
    Ok(machine)
}

fn proc_group_for(kind: ProcKind, count: usize, reference: Option<&Machine>) -> ProcGroup {
    let count = u32::try_from(count).unwrap_or(u32::MAX);
    // Kinds the preset lacks (IO, PY) run on host cores like CPUs.
    let template = reference.and_then(|r| {
        r.processor(kind).or_else(|| {
            (kind != ProcKind::Gpu)
                .then(|| r.processor(ProcKind::Cpu))
                .flatten()
        })
    });
    match template {
        Some(t) => ProcGroup {
            kind,
            count,
            cores: t.cores,
            gflops_fp64: t.gflops_fp64,
            gflops_fp32: t.gflops_fp32,
            launch_overhead_us: t.launch_overhead_us,
            model: t.model.clone(),
            notes: format!("{count} {} per node in the log", kind.legion_name()),
            guess: Some(FIGURES_GUESS.into()),
        },
        None => ProcGroup {
            kind,
            count,
            cores: 1,
            gflops_fp64: 10.0,
            gflops_fp32: 20.0,
            launch_overhead_us: 5.0,
            model: String::new(),
            notes: format!("{count} {} per node in the log", kind.legion_name()),
            guess: Some("no reference figures; placeholders".into()),
        },
    }
}

fn mem_group_for(
    kind: MemKind,
    count: usize,
    capacity: Option<u64>,
    reference: Option<&Machine>,
) -> MemGroup {
    let count = u32::try_from(count).unwrap_or(u32::MAX);
    let template = reference.and_then(|r| {
        r.memory(kind).or_else(|| match kind {
            MemKind::GpuDynamic | MemKind::GpuManaged => r.memory(MemKind::Fbmem),
            MemKind::Sockmem | MemKind::Global => r.memory(MemKind::Sysmem),
            _ => None,
        })
    });
    let (bandwidth, ref_capacity) =
        template.map_or((1.0, 0), |t| (t.bandwidth_gbps, t.capacity_bytes));
    let mut guess = vec![FIGURES_GUESS.to_string()];
    let capacity_bytes = match capacity {
        Some(c) => c,
        None => {
            guess.push(format!(
                "the log prints no capacity; {ref_capacity} bytes assumed"
            ));
            ref_capacity
        }
    };
    MemGroup {
        kind,
        count,
        capacity_bytes,
        bandwidth_gbps: bandwidth,
        model: String::new(),
        notes: format!("{count} {} per node in the log", kind.legion_name()),
        guess: Some(guess.join("; ")),
    }
}

/// Most frequent value (smallest on ties, for determinism).
fn mode(values: &[u32]) -> Option<u32> {
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(*v).or_insert(0) += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(v, _)| v)
}

fn affinities_for(
    o: &Observations,
    proc_kinds: &[(ProcKind, Vec<u64>)],
    mem_kinds: &[(MemKind, Vec<u64>)],
    reference: Option<&Machine>,
) -> Vec<Affinity> {
    let mut out = Vec::new();
    for (pk, pids) in proc_kinds {
        for (mk, mids) in mem_kinds {
            let mut own = Vec::new();
            let mut peer = Vec::new();
            let mut shared = Vec::new();
            for pid in pids {
                let Some(p) = o.procs.get(pid) else { continue };
                let seen: Vec<u32> = p
                    .sees
                    .iter()
                    .filter(|(m, _)| mids.contains(m))
                    .map(|(_, bw)| *bw)
                    .collect();
                if seen.is_empty() {
                    continue;
                }
                let best = seen.iter().copied().max().unwrap_or(0);
                let n_best = seen.iter().filter(|&&b| b == best).count();
                if mids.len() > 1 && n_best == 1 && seen.len() > 1 {
                    // One memory stands out: the processor's own (a GPU's
                    // framebuffer); the rest are its peers'.
                    own.push(best);
                    peer.extend(seen.iter().copied().filter(|&b| b != best));
                } else {
                    shared.extend(seen);
                }
            }
            for (scope, vals) in [
                (Scope::Own, own),
                (Scope::Peer, peer),
                (Scope::Shared, shared),
            ] {
                let Some(bw) = mode(&vals) else { continue };
                out.push(affinity_for(*pk, *mk, scope, bw, reference));
            }
        }
    }
    out
}

fn affinity_for(
    proc: ProcKind,
    mem: MemKind,
    scope: Scope,
    legion_bandwidth: u32,
    reference: Option<&Machine>,
) -> Affinity {
    let template = reference.and_then(|r| {
        r.affinity(proc, mem, scope)
            .or_else(|| r.best_affinity(proc, mem))
    });
    let (gbps, lat) = template.map_or_else(
        // Scale a placeholder with Legion's class so that rankings survive.
        || (f64::from(legion_bandwidth.max(1)) / 10.0, 1.0),
        |t| (t.bandwidth_gbps, t.latency_us),
    );
    Affinity {
        proc,
        mem,
        scope,
        legion_bandwidth,
        bandwidth_gbps: gbps,
        latency_us: lat,
        notes: format!("Legion class {legion_bandwidth} from the log"),
        guess: Some(FIGURES_GUESS.into()),
    }
}

// ---------------------------------------------------------------------------
// Building the application
// ---------------------------------------------------------------------------

/// Bytes per field assumed when sizing region arguments (the log has no
/// field sizes; most fields of the bundled apps are doubles).
const FIELD_BYTES: u64 = 8;

fn app_name_from(source: Option<&str>) -> String {
    let Some(src) = source else {
        return "imported".into();
    };
    // `/path/to/circuit_sparse.rg:722` -> `circuit_sparse`
    let file = src.rsplit('/').next().unwrap_or(src);
    let file = file.split(':').next().unwrap_or(file);
    let stem = file.split('.').next().unwrap_or(file);
    if stem.is_empty() {
        "imported".into()
    } else {
        stem.to_string()
    }
}

fn proc_kind_of(o: &Observations, id: u64) -> Option<ProcKind> {
    o.procs
        .get(&id)
        .or_else(|| o.procs.get(&on_node_zero(id)))
        .and_then(|p| p.kind.parse::<ProcKind>().ok())
}

fn launch_domain(t: &TaskObs) -> Vec<u64> {
    // The most common dimensionality wins (a stray point cannot reshape it).
    let mut dims_count: BTreeMap<usize, usize> = BTreeMap::new();
    for p in &t.points {
        *dims_count.entry(p.len()).or_insert(0) += 1;
    }
    for r in &t.rects {
        *dims_count.entry(r.lo.len()).or_insert(0) += 1;
    }
    let Some(dims) = dims_count
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(d, _)| d)
        .filter(|&d| d > 0)
    else {
        return vec![1];
    };
    let mut lo = vec![i64::MAX; dims];
    let mut hi = vec![i64::MIN; dims];
    let corners = t
        .points
        .iter()
        .map(|p| (p, p))
        .chain(t.rects.iter().map(|r| (&r.lo, &r.hi)));
    for (a, b) in corners {
        if a.len() != dims || b.len() != dims {
            continue;
        }
        for d in 0..dims {
            lo[d] = lo[d].min(a[d]);
            hi[d] = hi[d].max(b[d]);
        }
    }
    lo.iter()
        .zip(&hi)
        .map(|(l, h)| {
            let e = i128::from(*h) - i128::from(*l) + 1;
            u64::try_from(e.max(1)).unwrap_or(u64::MAX)
        })
        .collect()
}

fn region_arg(index: u32, r: &ReqObs, dims: usize) -> RegionArg {
    let privilege = r
        .privileges
        .first()
        .copied()
        .unwrap_or(Privilege::ReadWrite);
    let names: Vec<String> = if r.trees.is_empty() {
        vec![format!("arg{index}")]
    } else {
        r.trees.iter().map(|t| format!("tree{t}")).collect()
    };
    let fields = if privilege.accesses() {
        r.fields.clone()
    } else {
        Vec::new()
    };
    let bytes = if privilege.accesses() {
        r.max_elements
            .saturating_mul(fields.len() as u64)
            .saturating_mul(FIELD_BYTES)
    } else {
        0
    };
    let mut notes = Vec::new();
    if r.privileges.len() > 1 {
        let all: Vec<String> = r
            .privileges
            .iter()
            .map(|p| format!("{p:?}").to_lowercase())
            .collect();
        notes.push(format!(
            "launched with several privileges: {}",
            all.join(", ")
        ));
    }
    if let Some(u) = &r.unknown_privilege {
        notes.push(format!(
            "privilege `{u}` not understood; read_write assumed"
        ));
    }
    if !r.instances.is_empty() {
        let chosen: Vec<String> = r
            .instances
            .iter()
            .map(|(k, n)| format!("{k} x{n}"))
            .collect();
        notes.push(format!(
            "instances the logged mapper chose: {}",
            chosen.join(", ")
        ));
    }
    let shape = if r.shape.len() == dims && r.shape.iter().product::<u64>() == r.max_elements {
        r.shape.clone()
    } else {
        Vec::new()
    };
    RegionArg {
        name: names[0].clone(),
        aliases: names[1..].to_vec(),
        launches: Vec::new(),
        index,
        privilege,
        fields,
        dims: u32::try_from(dims.max(1)).unwrap_or(1),
        shape,
        elements: r.max_elements,
        bytes,
        virtual_by_app: false,
        notes: notes.join("; "),
        guess: Some(format!(
            "the log names no regions (named after their region tree) and gives no field \
             sizes ({FIELD_BYTES} bytes per field assumed); elements are the largest piece \
             one point accessed"
        )),
    }
}

fn build_app(o: &Observations, machine: &Machine, name: Option<&str>) -> Result<App, ImportError> {
    if o.tasks.is_empty() {
        return Err(ImportError::NoTasks);
    }
    // An empty piece prints no domain (`domain=,`); its dimensionality is
    // that of other pieces of the same region tree.
    let mut tree_dims: BTreeMap<u64, usize> = BTreeMap::new();
    for r in o.tasks.values().flat_map(|t| t.reqs.values()) {
        if r.dims > 0 {
            for t in &r.trees {
                tree_dims.entry(*t).or_insert(r.dims);
            }
        }
    }
    let mut order: Vec<(&String, &TaskObs)> = o.tasks.iter().collect();
    order.sort_by_key(|(_, t)| t.first_line);
    let mut tasks = Vec::new();
    for (tname, t) in order {
        let launch = if t.index_evidence {
            Launch::Index
        } else {
            Launch::Single
        };
        let domain = match launch {
            Launch::Index => launch_domain(t),
            Launch::Single => Vec::new(),
        };
        let mut variants: Vec<ProcKind> = t
            .procs
            .iter()
            .filter_map(|&id| proc_kind_of(o, id))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut guesses = vec![
            "variants are the processor kinds the logged mapper chose, which may be fewer than \
             the task has"
                .to_string(),
        ];
        if variants.is_empty() {
            variants.push(ProcKind::Cpu);
            guesses.push("no target processor in the log; CPU assumed".into());
        }
        let regions: Vec<RegionArg> = t
            .reqs
            .iter()
            .map(|(&i, r)| {
                let dims = if r.dims > 0 {
                    r.dims
                } else {
                    r.trees
                        .iter()
                        .find_map(|t| tree_dims.get(t).copied())
                        .unwrap_or(1)
                };
                region_arg(i, r, dims)
            })
            .collect();
        // Inner tasks (DISTAL's task_5..7, circuit's init_piece) get virtual
        // instances for the data they pass down; requirements without
        // privileges are virtual in every task, so they prove nothing.
        let with_instances: Vec<&ReqObs> = t
            .reqs
            .values()
            .filter(|r| !r.instances.is_empty())
            .filter(|r| r.privileges.first().is_some_and(|p| p.accesses()))
            .collect();
        let inner = t.replicate_count > 0
            || (!with_instances.is_empty()
                && with_instances
                    .iter()
                    .all(|r| r.instances.keys().all(|k| k == "VIRTUAL")));
        let launches = match launch {
            Launch::Index => t
                .slice_count
                .max(t.shard_count)
                .max(u32::from(t.map_count > 0)),
            Launch::Single => t.map_count.max(t.shard_count).max(t.replicate_count),
        };
        let work = if inner {
            Work {
                notes: "inner task: every instance the log shows is virtual".into(),
                ..Work::default()
            }
        } else {
            let accessed: Vec<&RegionArg> =
                regions.iter().filter(|r| r.privilege.accesses()).collect();
            let flops: u64 = accessed
                .iter()
                .fold(0u64, |a, r| a.saturating_add(r.elements));
            let bytes: u64 = accessed.iter().fold(0u64, |a, r| {
                let twice = matches!(r.privilege, Privilege::ReadWrite | Privilege::Reduce);
                a.saturating_add(r.bytes.saturating_mul(if twice { 2 } else { 1 }))
            });
            Work {
                flops: flops as f64,
                bytes: bytes as f64,
                fixed_us: if accessed.is_empty() { 10.0 } else { 0.0 },
                notes: "bytes: accessed region bytes, read_write and reduce twice".into(),
                guess: Some(
                    "placeholder: the log has no work figures (one flop per accessed element, \
                     10 us for tasks without data); edit before trusting simulated times"
                        .into(),
                ),
                ..Work::default()
            }
        };
        let mut notes = Vec::new();
        if !t.variants.is_empty() {
            notes.push(format!(
                "chosen variants: {}",
                t.variants.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        notes.push(format!(
            "log records: {} MAP_TASK, {} SLICE_TASK, {} SELECT_SHARDING_FUNCTOR, {} \
             MAP_REPLICATE_TASK",
            t.map_count, t.slice_count, t.shard_count, t.replicate_count
        ));
        tasks.push(Task {
            name: tname.clone(),
            launch,
            domain,
            variants,
            regions,
            work,
            per_iteration: launches,
            setup_launches: 0,
            timed: true,
            parent: None,
            inner,
            node_local: Vec::new(),
            notes: notes.join("; "),
            guess: Some(guesses.join("; ")),
        });
    }
    let app_name = name
        .map(str::to_string)
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| app_name_from(o.source.as_deref()));
    let mut app = App::observed(
        app_name,
        format!(
            "imported from a Legion mapper-logging-wrapper log ({} mapper records, {} node(s))",
            o.records,
            machine.nodes()
        ),
        tasks,
        "a wrapper log does not show data movement between tasks",
        format!(
            "Launch domains and region sizes are those of the logged run; launch counts are \
             what rank 0 mapped (traced iterations replay without calling the mapper, so \
             loops look shorter than they are). {} unreadable machine lines skipped.",
            o.skipped_lines
        ),
        "the whole logged run is one iteration; per_iteration holds the launch counts the log \
         shows"
            .into(),
    );
    app.sources = o.source.iter().cloned().collect();
    app.validate()?;
    Ok(app)
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn logs_dir() -> PathBuf {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/apps/wrapper-logs"
        ))
    }

    /// A real wrapper log (the tests that read them are ignored without
    /// the shared logs, see build.rs).
    fn read_log(name: &str) -> String {
        let p = logs_dir().join(format!("{name}.log"));
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    const SMALL: &str = "\
[0 - 7f01]    0.1 {2}{mapper}: Memories on rank 0:
[0 - 7f01]    0.1 {2}{mapper}:   1e00000000000000 (SYSTEM_MEM): 1000 bytes
[0 - 7f01]    0.1 {2}{mapper}:   1e00000000000001 (GPU_FB_MEM): 500 bytes
[0 - 7f01]    0.1 {2}{mapper}:   1e00000000000002 (GPU_FB_MEM): 500 bytes
[0 - 7f01]    0.1 {2}{mapper}:   1e00000000000003 (Z_COPY_MEM): 100 bytes
[0 - 7f01]    0.1 {2}{mapper}:   1a00000000000000 (GPU_FB_MEM): 64 bytes
[0 - 7f01]    0.1 {2}{mapper}: Processors on rank 0:
[0 - 7f01]    0.1 {2}{mapper}:   1d00000000000000 (LOC_PROC) can see 1e00000000000000(bw=100) 1e00000000000003(bw=40)
[0 - 7f01]    0.1 {2}{mapper}:   1d00000000000001 (TOC_PROC) can see 1e00000000000001(bw=200) 1e00000000000002(bw=10) 1e00000000000003(bw=20)
[0 - 7f01]    0.1 {2}{mapper}:   1d00000000000002 (TOC_PROC) can see 1e00000000000001(bw=10) 1e00000000000002(bw=200) 1e00000000000003(bw=20)
[0 - 7f02]    0.2 {2}{mapper}: MAP_TASK for work(index_point=(0,1))<10> @ /x/y/demo.rg:5
[0 - 7f03]    0.2 {2}{mapper}: MAP_TASK for setup<11> @ /x/y/demo.rg:3
[0 - 7f02]    0.2 {2}{mapper}:   TARGET PROCS: 1d00000000000002
[0 - 7f03]    0.2 {2}{mapper}:   TARGET PROCS: 1d00000000000000
[0 - 7f02]    0.2 {2}{mapper}:   CHOSEN INSTANCES:
[0 - 7f02]    0.2 {2}{mapper}:     Requirement[0](privilege=READ_WRITE,region=(2,(8,1),2),domain=<0,0>..<9,4>,fields=a+b)
[0 - 7f03]    0.2 {2}{mapper}:   CHOSEN INSTANCES:
[0 - 7f02]    0.2 {2}{mapper}:       Instance[4000000000000001](region=(2,*,2),memory=1e00000000000002,domain=<0,0>..<9,4>,fields=a+b,layout=SoA:XY)
[0 - 7f02]    0.2 {2}{mapper}:     Requirement[1](privilege=REDUCE,region=(3,(9,1),3),domain=<0>..<3>+<8>..<9>,fields=c)
[0 - 7f02]    0.2 {2}{mapper}:       Instance[4000000000000002](region=(3,*,3),memory=1e00000000000003,domain=<0>..<9>,fields=c,layout=SoA:X)
[0 - 7f04]    0.3 {4}{runtime}: [warning 1234] something unrelated
[0 - 7f02]    0.3 {2}{mapper}: SELECT_SHARDING_FUNCTOR for work<12> @ /x/y/demo.rg:5
[0 - 7f02]    0.3 {2}{mapper}:   0 <- (0,0) (1,0)
[0 - 7f02]    0.3 {2}{mapper}:   1 <- (0,1) (1,1)
";

    #[test]
    fn small_log_imports_with_interleaved_threads() {
        let (app, m) = import_wrapper_log(SMALL).unwrap();
        assert_eq!(app.name, "demo");
        assert_eq!(app.task_names(), vec!["work", "setup"]);
        let work = app.task("work").unwrap();
        assert_eq!(work.launch, Launch::Index);
        assert_eq!(work.domain, vec![2, 2]);
        assert_eq!(work.variants, vec![ProcKind::Gpu]);
        assert_eq!(work.regions.len(), 2);
        let r0 = &work.regions[0];
        assert_eq!(
            (r0.name.as_str(), r0.privilege),
            ("tree2", Privilege::ReadWrite)
        );
        assert_eq!(r0.fields, vec!["a", "b"]);
        assert_eq!((r0.dims, r0.elements, r0.bytes), (2, 50, 50 * 2 * 8));
        assert_eq!(r0.shape, vec![10, 5]);
        assert!(r0.notes.contains("GPU_FB_MEM x1"), "{}", r0.notes);
        let r1 = &work.regions[1];
        assert_eq!(r1.privilege, Privilege::Reduce);
        assert_eq!(r1.elements, 6, "union of two rectangles");
        assert!(r1.shape.is_empty());
        assert!(r1.notes.contains("Z_COPY_MEM x1"));
        let setup = app.task("setup").unwrap();
        assert_eq!(setup.launch, Launch::Single);
        assert!(setup.domain.is_empty());
        assert_eq!(setup.variants, vec![ProcKind::Cpu]);

        assert_eq!(m.nodes(), 2, "two shards");
        assert_eq!(m.procs_per_node(ProcKind::Gpu), 2);
        assert_eq!(m.procs_per_node(ProcKind::Cpu), 1);
        assert_eq!(
            m.mems_per_node(MemKind::Fbmem),
            2,
            "the 1a.. buffer is hidden"
        );
        assert_eq!(m.capacity(MemKind::Fbmem), Some(500));
        let own = m
            .affinity(ProcKind::Gpu, MemKind::Fbmem, Scope::Own)
            .unwrap();
        assert_eq!(own.legion_bandwidth, 200);
        let peer = m
            .affinity(ProcKind::Gpu, MemKind::Fbmem, Scope::Peer)
            .unwrap();
        assert_eq!(peer.legion_bandwidth, 10);
        let zc = m
            .affinity(ProcKind::Gpu, MemKind::Zcmem, Scope::Shared)
            .unwrap();
        assert_eq!(zc.legion_bandwidth, 20);
        assert!(m.can_reach(ProcKind::Cpu, MemKind::Zcmem));
        assert!(!m.can_reach(ProcKind::Cpu, MemKind::Fbmem));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(
            import_wrapper_log(""),
            Err(ImportError::NoMachine)
        ));
        assert!(matches!(
            import_wrapper_log("hello\nworld\n[[[\n]]]\n\u{1F600}"),
            Err(ImportError::NoMachine)
        ));
        // A machine but no tasks.
        let machine_only: String = SMALL.lines().take(10).collect::<Vec<_>>().join("\n");
        assert!(matches!(
            import_wrapper_log(&machine_only),
            Err(ImportError::NoTasks)
        ));
        // Every prefix and a few mutilations of a real-looking log: errors
        // are fine, panics are not.
        for cut in (0..SMALL.len()).step_by(7) {
            if SMALL.is_char_boundary(cut) {
                let _ = import_wrapper_log(&SMALL[..cut]);
            }
        }
        let mangled = SMALL
            .replace("..", ".")
            .replace('(', "")
            .replace("bw=", "bw=x");
        let _ = import_wrapper_log(&mangled);
        let odd = "Memories on rank 0:\n  zz (GPU_FB_MEM): -5 bytes\nProcessors on rank 0:\n  \
                   1d00 (WEIRD_PROC) can see 1e(bw=)\nMAP_TASK for (index_point=)<>\n  \
                   Requirement[x](privilege=,domain=<1,2>..<3>,fields=)\n";
        assert!(import_wrapper_log(odd).is_err());
    }

    #[test]
    fn subjects_parse() {
        let s = parse_subject("__binary_int32_int32_>=<502>").unwrap();
        assert_eq!(s.name, "__binary_int32_int32_>=");
        let s = parse_subject("calc(index_point=(3))<292> @ /a/pennant.rg:1351").unwrap();
        assert_eq!((s.name.as_str(), s.point), ("calc", Some(vec![3])));
        assert_eq!(s.source.as_deref(), Some("/a/pennant.rg:1351"));
        let s = parse_subject("Exports.AddBodyForces(index_point=(1,0,0))<7>").unwrap();
        assert_eq!(s.name, "Exports.AddBodyForces");
        assert_eq!(s.point, Some(vec![1, 0, 0]));
        assert!(parse_subject("<12>").is_none());
        assert_eq!(
            app_name_from(Some("/g/x/circuit_sparse.rg:722")),
            "circuit_sparse"
        );
        assert_eq!(app_name_from(None), "imported");
    }

    #[test]
    fn key_values_keep_commas_inside_values() {
        let kv =
            key_values("privilege=READ_ONLY,region=(2,(18,1),2),domain=<0,0>..<7,9>,fields=a+b");
        assert_eq!(
            kv,
            vec![
                ("privilege", "READ_ONLY"),
                ("region", "(2,(18,1),2)"),
                ("domain", "<0,0>..<7,9>"),
                ("fields", "a+b"),
            ]
        );
        let kv = key_values("EXTERNAL,memory=1e0b,domain=<0>..<256>");
        assert_eq!(kv[0], ("", "EXTERNAL"));
        assert_eq!(kv[1], ("memory", "1e0b"));
        assert_eq!(parse_domain("").volume(), 0);
        assert_eq!(
            parse_domain("<0,0,0>..<255,256,287>").volume(),
            256 * 257 * 288
        );
    }

    #[test]
    #[cfg_attr(
        not(shared_logs),
        ignore = "needs the shared wrapper logs (../shared/apps/wrapper-logs beside the checkout)"
    )]
    fn every_bundled_log_imports() {
        let dir = std::fs::read_dir(logs_dir())
            .unwrap_or_else(|e| panic!("{}: {e}", logs_dir().display()));
        let mut seen = 0;
        for entry in dir.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("log") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let (app, m) =
                import_wrapper_log(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            app.validate().unwrap();
            m.validate().unwrap();
            assert!(
                m.nodes() >= 2,
                "{}: the bundled logs are 2-node runs",
                path.display()
            );
            assert_eq!(m.procs_per_node(ProcKind::Gpu), 4, "{}", path.display());
            assert!(m.can_reach(ProcKind::Gpu, MemKind::Zcmem));
            let own = m
                .affinity(ProcKind::Gpu, MemKind::Fbmem, Scope::Own)
                .unwrap();
            assert_eq!(own.legion_bandwidth, 200);
            assert!(app.tasks.iter().any(|t| t.launch == Launch::Index));
            // Round trip through JSON as `mapwright app import` writes it.
            let json = app.to_json_pretty().unwrap();
            assert_eq!(App::from_json_str(&json).unwrap(), app);
            let mj = m.to_json_pretty().unwrap();
            assert_eq!(Machine::from_json_str(&mj).unwrap(), m);
            seen += 1;
        }
        assert!(seen >= 5, "expected the five bundled logs, saw {seen}");
    }

    #[test]
    #[cfg_attr(
        not(shared_logs),
        ignore = "needs the shared wrapper logs (../shared/apps/wrapper-logs beside the checkout)"
    )]
    fn htr_log_details() {
        let text = read_log("htr");
        let (app, m) = import_wrapper_log(&text).unwrap();
        // HTR prints no memory capacities; the preset's are assumed.
        assert!(m.capacity(MemKind::Fbmem).is_some_and(|c| c > 0));
        assert_eq!(m.procs_per_node(ProcKind::Io), 4);
        assert_eq!(m.procs_per_node(ProcKind::Omp), 4);
        let t = app.task("UpdateUsingHybridEulerFluxX").unwrap();
        assert_eq!(t.launch, Launch::Index);
        assert_eq!(t.domain.len(), 3);
        assert!(t.variants.contains(&ProcKind::Gpu));
        assert!(app.task("__binary_int32_int32_>=").is_some());
        assert_eq!(app.task("main").unwrap().launch, Launch::Single);
    }

    /// The built-in description agrees with what the log of the same
    /// program shows: every task the log maps exists, with the same launch
    /// kind and launch-domain rank, the same number of region arguments, and
    /// the same privilege per argument.
    fn check_agreement(name: &str) {
        let text = read_log(name);
        let (imported, machine) = import_wrapper_log(&text).unwrap();
        let builtin = App::builtin(name).unwrap();
        assert!(machine.nodes() >= 2);
        for t in &imported.tasks {
            let b = builtin
                .task(&t.name)
                .unwrap_or_else(|| panic!("{name}: log task `{}` missing", t.name));
            assert_eq!(b.launch, t.launch, "{name}/{}: launch", t.name);
            assert_eq!(
                b.domain.len(),
                t.domain.len(),
                "{name}/{}: launch-domain rank",
                t.name
            );
            if t.regions.is_empty() {
                continue;
            }
            assert_eq!(
                b.regions.len(),
                t.regions.len(),
                "{name}/{}: region argument count",
                t.name
            );
            for r in &t.regions {
                let br = b
                    .region_at(r.index)
                    .unwrap_or_else(|| panic!("{name}/{}: arg {}", t.name, r.index));
                assert_eq!(
                    br.privilege, r.privilege,
                    "{name}/{} arg {}",
                    t.name, r.index
                );
                assert_eq!(br.dims, r.dims, "{name}/{} arg {} dims", t.name, r.index);
                if r.privilege.accesses() {
                    assert_eq!(
                        br.fields, r.fields,
                        "{name}/{} arg {} fields",
                        t.name, r.index
                    );
                }
            }
            // Tasks the log runs on GPUs have GPU variants in the built-in.
            for v in &t.variants {
                assert!(b.has_variant(*v), "{name}/{}: variant {v}", t.name);
            }
        }
    }

    #[test]
    #[cfg_attr(
        not(shared_logs),
        ignore = "needs the shared wrapper logs (../shared/apps/wrapper-logs beside the checkout)"
    )]
    fn builtin_circuit_agrees_with_its_log() {
        check_agreement("circuit");
    }

    #[test]
    #[cfg_attr(
        not(shared_logs),
        ignore = "needs the shared wrapper logs (../shared/apps/wrapper-logs beside the checkout)"
    )]
    fn builtin_stencil_agrees_with_its_log() {
        check_agreement("stencil");
    }

    #[test]
    #[cfg_attr(
        not(shared_logs),
        ignore = "needs the shared wrapper logs (../shared/apps/wrapper-logs beside the checkout)"
    )]
    fn builtin_pennant_agrees_with_its_log() {
        check_agreement("pennant");
    }

    #[test]
    #[cfg_attr(
        not(shared_logs),
        ignore = "needs the shared wrapper logs (../shared/apps/wrapper-logs beside the checkout)"
    )]
    fn builtin_cannon_agrees_with_its_log() {
        check_agreement("cannon");
    }
}

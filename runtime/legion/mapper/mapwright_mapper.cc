// mapwright's Legion mapper: the C++ that Legion's mapper interface forces,
// and nothing else. Every decision (processor kind, memory, layout, launch
// point placement, replication, instance limits) is asked of mapwright's
// Rust code through mapwright_abi.h; this file reports what Legion knows
// (the machine, each launch), realises the answers with Legion's mapper
// runtime, and logs what it realised. How each DSL statement is realised
// is in docs/legion.md.
#include "mapwright_mapper.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "call_stats.h"
#include "legion.h"
#include "mappers/default_mapper.h"
#include "mappers/logging_wrapper.h"
#include "mapwright_abi.h"

namespace mapwright {

using namespace Legion;
using namespace Legion::Mapping;

namespace {

// Command-line flags, read once at registration.
struct Flags {
  std::string mapping;
  std::string decision_log;
  std::string machine_out;
  // -mapwright:app FILE: the program's application description as it ran.
  std::string app_out;
  std::string stats;
  bool default_mapper = false;
  bool wrapper = false;
  bool machine_only = false;
  bool semantic_names = false;
  bool backpressure = true;
  bool untrack_valid_regions = true;
  // Legion 25.12's DefaultMapper memoizes, and traces replay, unless
  // -mapwright:no-memoize says otherwise (see memoize_operation).
  bool memoize = true;
  // With a decision log, Realm's measurements of every mapped task and of
  // the copies made for it go into the log too; -mapwright:no-measure
  // leaves only the decisions.
  bool measure = true;
};

Flags read_flags() {
  Flags f;
  const InputArgs &args = Runtime::get_input_args();
  for (int i = 0; i < args.argc; i++) {
    std::string a = args.argv[i];
    bool has_value = i + 1 < args.argc;
    if (a == "-mapping" && has_value)
      f.mapping = args.argv[++i];
    else if (a == "-mapwright:log" && has_value)
      f.decision_log = args.argv[++i];
    else if (a == "-mapwright:machine" && has_value)
      f.machine_out = args.argv[++i];
    else if (a == "-mapwright:app" && has_value)
      f.app_out = args.argv[++i];
    else if (a == "-mapwright:machine-only")
      f.machine_only = true;
    else if (a == "-mapwright:stats" && has_value)
      f.stats = args.argv[++i];
    else if (a == "-mapwright:default-mapper")
      f.default_mapper = true;
    else if (a == "-wrapper")
      f.wrapper = true;
    else if (a == "-tm:use_semantic_name")
      f.semantic_names = true;
    else if (a == "-tm:disable_backpressure")
      f.backpressure = false;
    else if (a == "-tm:disable_untrack_valid_regions")
      f.untrack_valid_regions = false;
    else if (a == "-mapwright:no-memoize")
      f.memoize = false;
    else if (a == "-mapwright:no-measure")
      f.measure = false;
  }
  // A program run by mapwright's `command` backend gets its log path in
  // the environment, so that a user's own command line needs no flag.
  const char *from_env = std::getenv("MAPWRIGHT_LOG");
  if (f.decision_log.empty() && from_env != nullptr && *from_env != '\0') f.decision_log = from_env;
  return f;
}

// The session, for stop() and the exit hook to write out the log.
mw_session *g_session = nullptr;

void flush_log() {
  if (g_session != nullptr) mw_log_flush(g_session);
}

// Stops the program the way the reference's failed asserts do, but with
// mapwright's message: before any further task runs, with a nonzero exit.
[[noreturn]] void stop(const char *message) {
  flush_log();
  std::fprintf(stderr, "%s\n", message != nullptr ? message : "error: mapwright's mapper stops");
  std::fflush(stderr);
  std::fflush(stdout);
  _exit(1);
}

const Processor::Kind kProcKinds[] = {
    Processor::LOC_PROC, Processor::TOC_PROC,  Processor::OMP_PROC, Processor::IO_PROC,
    Processor::PY_PROC,  Processor::UTIL_PROC, Processor::PROC_SET};

int proc_code(Processor::Kind k) {
  for (int i = 0; i < 7; i++)
    if (kProcKinds[i] == k) return i;
  return -1;
}

int mem_code(Memory::Kind k) {
  switch (k) {
    case Memory::SYSTEM_MEM:
      return MW_MEM_SYSMEM;
    case Memory::GPU_FB_MEM:
      return MW_MEM_FBMEM;
    case Memory::Z_COPY_MEM:
      return MW_MEM_ZCMEM;
    case Memory::SOCKET_MEM:
      return MW_MEM_SOCKMEM;
    case Memory::REGDMA_MEM:
      return MW_MEM_RDMEM;
    default:
      return MW_MEM_OTHER;
  }
}

Memory::Kind mem_kind(uint32_t code) {
  switch (code) {
    case MW_MEM_FBMEM:
      return Memory::GPU_FB_MEM;
    case MW_MEM_ZCMEM:
      return Memory::Z_COPY_MEM;
    case MW_MEM_SOCKMEM:
      return Memory::SOCKET_MEM;
    case MW_MEM_RDMEM:
      return Memory::REGDMA_MEM;
    default:
      return Memory::SYSTEM_MEM;
  }
}

// The machine as Legion reports it, for mw_session_open.
struct HostFacts {
  std::vector<mw_proc_count> procs;
  std::vector<mw_mem_count> mems;
  std::vector<mw_affinity> affinities;
  mw_host host{};
};

void describe_host(Machine machine, AddressSpace here, HostFacts &out) {
  std::map<int, std::vector<Processor>> procs;
  Machine::ProcessorQuery pq(machine);
  for (Processor p : pq)
    if (p.address_space() == here && proc_code(p.kind()) >= 0)
      procs[proc_code(p.kind())].push_back(p);
  for (auto &kv : procs) out.procs.push_back({uint32_t(kv.first), uint32_t(kv.second.size())});
  std::map<int, std::vector<Memory>> mems;
  Machine::MemoryQuery mq(machine);
  for (Memory m : mq)
    if (m.address_space() == here && mem_code(m.kind()) != MW_MEM_OTHER && m.capacity() > 0)
      mems[mem_code(m.kind())].push_back(m);
  for (auto &kv : mems)
    out.mems.push_back(
        {uint32_t(kv.first), uint32_t(kv.second.size()), uint64_t(kv.second.front().capacity())});
  // Per (processor kind, memory kind): the first processor's view decides
  // the scope, as the DSL assumes every processor of a kind is alike.
  for (auto &pk : procs) {
    Processor first = pk.second.front();
    std::vector<Machine::ProcessorMemoryAffinity> affs;
    machine.get_proc_mem_affinity(affs, first);
    std::map<int, std::vector<unsigned>> seen;
    for (auto &a : affs) {
      int mk = mem_code(a.m.kind());
      if (mk == MW_MEM_OTHER || !mems.count(mk)) continue;
      seen[mk].push_back(a.bandwidth);
    }
    for (auto &mk : seen) {
      unsigned best = 0;
      for (unsigned b : mk.second) best = b > best ? b : best;
      bool shared = mems[mk.first].size() == 1;
      out.affinities.push_back({uint32_t(pk.first), uint32_t(mk.first),
                                uint32_t(shared ? MW_SCOPE_SHARED : MW_SCOPE_OWN), best});
      if (!shared && mk.second.size() > 1) {
        unsigned peer = 0;
        for (unsigned b : mk.second) peer = (b < best && b > peer) ? b : peer;
        out.affinities.push_back(
            {uint32_t(pk.first), uint32_t(mk.first), uint32_t(MW_SCOPE_PEER), peer});
      }
    }
  }
  out.host.nodes = uint32_t(machine.get_address_space_count());
  out.host.procs = out.procs.data();
  out.host.nprocs = out.procs.size();
  out.host.mems = out.mems.data();
  out.host.nmems = out.mems.size();
  out.host.affinities = out.affinities.data();
  out.host.naffinities = out.affinities.size();
}

// What identifies a launch (launch_key), hashed for the per-launch caches:
// every mapper call looks one up, so a lookup must not allocate or compare
// whole keys along a tree's path.
using LaunchKey = std::vector<int64_t>;

struct LaunchKeyHash {
  size_t operator()(const LaunchKey &k) const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t v : k) h = (h ^ uint64_t(v)) * 0x100000001b3ull;
    return size_t(h ^ (h >> 29));
  }
};

template <typename T>
using LaunchMap = std::unordered_map<LaunchKey, T, LaunchKeyHash>;

// One launch, described for mw_decide / mw_place (owns its strings).
struct LaunchDesc {
  bool described = false;
  std::string task, parent;
  std::vector<int64_t> lo, hi;
  std::vector<std::vector<std::string>> names;
  std::vector<std::vector<const char *>> name_ptrs;
  std::vector<mw_region> regions;
  mw_launch c{};
};

}  // namespace

class MapwrightMapper : public DefaultMapper {
 public:
  MapwrightMapper(MapperRuntime *rt, Machine machine, Processor local, mw_session *session,
                  const Flags &flags)
      : DefaultMapper(rt, machine, local, "mapwright_mapper"), session_(session), flags_(flags) {
    Machine::ProcessorQuery pq(machine);
    for (Processor p : pq) {
      int k = proc_code(p.kind());
      if (k < 0) continue;
      auto &by_node = procs_[k];
      if (by_node.size() <= p.address_space()) by_node.resize(p.address_space() + 1);
      by_node[p.address_space()].push_back(p);
    }
  }

  MapperSyncModel get_mapper_sync_model() const override {
    // The backpressure counters and the Rust session are shared by every
    // call: one call at a time, as the reference does.
    return SERIALIZED_NON_REENTRANT_MAPPER_MODEL;
  }

  void select_task_options(const MapperContext ctx, const Task &task,
                           TaskOptions &output) override {
    CallTimer timer(Call::SelectTaskOptions);
    LaunchDesc d;
    mw_task_decision decision;
    decide(ctx, task, d, decision, nullptr);
    if (!flags_.app_out.empty()) mw_app_launched(session_, decision.launch_id);
    output.inline_task = false;
    output.stealable = false;
    output.map_locally = false;
    output.replicate = decision.control_replicate != 0;
    Processor::Kind kind = kProcKinds[decision.proc_kind];
    if (task.is_index_space) {
      // Slicing places the points; the launch starts on the first
      // processor of the kind on this node.
      output.initial_proc = processor(kind, local_proc.address_space(), 0);
    } else {
      output.initial_proc = place(ctx, task, d, kind);
    }
  }

  void slice_task(const MapperContext ctx, const Task &task, const SliceTaskInput &input,
                  SliceTaskOutput &output) override {
    CallTimer timer(Call::SliceTask);
    LaunchDesc d;
    mw_task_decision decision;
    decide(ctx, task, d, decision, nullptr);
    Processor::Kind kind = kProcKinds[decision.proc_kind];
    // The same launch over the same points is sliced as before: placing
    // each point again would ask Rust the same question (a loop's launches
    // are sliced once per iteration, pennant's 387 times a run).
    launch_key(task);
    key_.push_back(input.domain.get_dim());
    for (int i = 0; i < input.domain.get_dim(); i++) {
      key_.push_back(input.domain.lo()[i]);
      key_.push_back(input.domain.hi()[i]);
    }
    key_.push_back(int64_t(kind));
    auto hit = sliced_.find(key_);
    if (hit != sliced_.end()) {
      output.slices = hit->second;
      return;
    }
    LaunchKey key = key_;
    // One slice per point, first dimension fastest, as the reference.
    for (Domain::DomainPointIterator it(input.domain); it; it++) {
      DomainPoint p = it.p;
      std::vector<int64_t> point(p.get_dim());
      for (int i = 0; i < p.get_dim(); i++) point[i] = p[i];
      uint32_t node = 0, proc = 0;
      char *error = nullptr;
      describe(ctx, task, d);
      if (mw_place(session_, &d.c, point.data(), uint32_t(point.size()), &node, &proc, &error) != 0)
        stop(error);
      output.slices.push_back(TaskSlice(Domain(p, p), processor(kind, node, proc),
                                        false /*recurse*/, false /*stealable*/));
    }
    sliced_.emplace(std::move(key), output.slices);
  }

  void map_task(const MapperContext ctx, const Task &task, const MapTaskInput &input,
                MapTaskOutput &output) override {
    CallTimer timer(Call::MapTask);
    LaunchDesc d;
    mw_task_decision decision;
    std::vector<mw_region_decision> regions(task.regions.size());
    {
      CallTimer part(Call::MapTaskDecide);
      decide(ctx, task, d, decision, regions.data());
    }
    Processor::Kind kind = kProcKinds[decision.proc_kind];
    Processor target = task.target_proc;
    if (!task.is_index_space && target.kind() != kind) target = place(ctx, task, d, kind);
    if (task.is_index_space && target.kind() != kind) {
      std::string m = "error: mapwright placed " + std::string(task.get_task_name()) +
                      " on a processor of another kind than it decided";
      stop(m.c_str());
    }
    VariantInfo variant = default_find_preferred_variant(task, ctx, true, true, kind);
    output.chosen_variant = variant.variant;
    output.target_procs.push_back(target);
    if (!decision.has_map_rule) add_free_targets(task, target, output.target_procs);
    output.task_priority = 0;
    output.postmap_task = false;

    std::vector<mw_region_mapped> mapped(task.regions.size());
    // The same task on the same processor with the same variant and
    // arguments: its last mapping again where that still holds.
    // (The launch key counts each argument's fields; a mapping also
    // depends on which they are.)
    launch_key(task);
    for (const RegionRequirement &req : task.regions)
      for (FieldID f : req.privilege_fields) key_.push_back(int64_t(f));
    key_.push_back(int64_t(target.id));
    key_.push_back(int64_t(output.chosen_variant));
    // (Neither touches key_ before it is done with it: no copy a call.)
    if (!map_as_before(ctx, task, input, output, regions, target, key_, mapped))
      map_each_argument(ctx, task, input, output, regions, target, key_, mapped);

    if ((decision.instance_limit >= 0 && flags_.backpressure) ||
        busy_reductions_.count(task.get_unique_id()) > 0) {
      // Counted, or its reduction instances held, until the task finishes
      // (report_profiling).
      output.task_prof_requests.add_measurement<ProfilingMeasurements::OperationStatus>();
    }

    if (!recording()) return;
    for (unsigned i = 0; i < task.regions.size(); i++) {
      mw_region_mapped &m = mapped[i];
      if (m.instance != MW_INSTANCE_PHYSICAL || output.chosen_instances[i].empty()) continue;
      Memory memory = output.chosen_instances[i][0].get_location();
      m.mem_node = memory.address_space();
      m.mem_index = mem_index(memory);
      for (const PhysicalInstance &inst : output.chosen_instances[i])
        m.bytes += inst.get_instance_size();
      m.instance_id = output.chosen_instances[i][0].get_instance_id();
    }
    describe_regions(ctx, task, decision.launch_id);
    if (flags_.measure) {
      // Realm reports where and when the task ran (with several targets
      // Legion picks one), and what each copy or fill made for its
      // arguments moved, between which memories, and when
      // (report_profiling).
      output.task_prof_requests.add_measurement<ProfilingMeasurements::OperationProcessorUsage>();
      output.task_prof_requests.add_measurement<ProfilingMeasurements::OperationTimeline>();
      output.copy_prof_requests.add_measurement<ProfilingMeasurements::OperationMemoryUsage>();
      output.copy_prof_requests.add_measurement<ProfilingMeasurements::OperationTimeline>();
    }
    std::vector<int64_t> point = log_point(task);
    uint32_t node = target.address_space();
    mw_log_mapped(session_, decision.launch_id, uint64_t(task.get_unique_id()), point.data(),
                  uint32_t(point.size()), uint32_t(proc_code(target.kind())), node,
                  index_of(target), uint32_t(output.target_procs.size()), mapped.data(),
                  mapped.size());
  }

  // The task's last mapping (same task, processor, variant and arguments:
  // `key`) where each of its instances still holds its argument's current
  // data (is among Legion's valid instances) and can be acquired: what
  // map_each_argument would choose, with one runtime call instead of two
  // an argument. The reference (DefaultMapper's map_task) keeps such a
  // mapping too, and takes it again whatever the instances hold.
  // Reductions get their instance as map_each_argument gives it. False,
  // with nothing chosen, where the mapping does not hold.
  bool map_as_before(MapperContext ctx, const Task &task, const MapTaskInput &input,
                     MapTaskOutput &output, const std::vector<mw_region_decision> &regions,
                     Processor target, const LaunchKey &key,
                     std::vector<mw_region_mapped> &mapped) {
    auto hit = mappings_.find(key);
    if (hit == mappings_.end()) return false;
    CallTimer part(Call::MapTaskAsBefore);
    const CachedMapping &before = hit->second;
    for (unsigned i = 0; i < task.regions.size(); i++)
      for (const PhysicalInstance &inst : before.chosen[i])
        if (std::find(input.valid_instances[i].begin(), input.valid_instances[i].end(), inst) ==
            input.valid_instances[i].end())
          return false;
    std::vector<std::vector<PhysicalInstance>> held = before.chosen;
    if (!runtime->acquire_and_filter_instances(ctx, held)) {
      mappings_.erase(hit);
      return false;
    }
    mapped = before.mapped;
    for (unsigned i = 0; i < task.regions.size(); i++) {
      const RegionRequirement &req = task.regions[i];
      mw_region_mapped &m = mapped[i];
      if (m.instance == MW_INSTANCE_VIRTUAL) {
        output.chosen_instances[i].push_back(PhysicalInstance::get_virtual_instance());
      } else if (m.instance == MW_INSTANCE_PHYSICAL && req.privilege == LEGION_REDUCE) {
        Memory memory = memory_for(target, mem_kind(regions[i].memory));
        LayoutConstraintSet constraints = layout(ctx, req, regions[i], memory);
        PhysicalInstance instance = reduction_instance(ctx, task, i, target, memory, constraints);
        output.chosen_instances[i].push_back(instance);
        m.layout_holds = instance.entails(constraints) ? 1 : 0;
      } else if (m.instance == MW_INSTANCE_PHYSICAL) {
        output.chosen_instances[i] = std::move(held[i]);
        m.reused = 1;
        if (regions[i].collect && flags_.untrack_valid_regions && req.privilege == LEGION_READ_ONLY)
          output.untracked_valid_regions.insert(i);
      }
    }
    return true;
  }

  // Maps each argument: virtual where decided so; else in the decided
  // memory the instances valid there that hold the decided layout, or an
  // instance found or made; a reduction instance for a reduction. Keeps
  // the mapping for map_as_before under `key` (copied only here, on a
  // task's first mapping or when the last one no longer holds).
  void map_each_argument(MapperContext ctx, const Task &task, const MapTaskInput &input,
                         MapTaskOutput &output, const std::vector<mw_region_decision> &regions,
                         Processor target, const LaunchKey &key,
                         std::vector<mw_region_mapped> &mapped) {
    for (unsigned i = 0; i < task.regions.size(); i++) {
      const RegionRequirement &req = task.regions[i];
      mw_region_mapped &m = mapped[i];
      m.index = i;
      m.instance = MW_INSTANCE_NONE;
      m.memory = MW_MEM_OTHER;
      m.layout_holds = 0;
      m.reused = 0;
      m.bytes = 0;
      m.instance_id = 0;
      m.mem_node = 0;
      m.mem_index = 0;
      if (req.privilege == LEGION_NO_ACCESS || req.privilege_fields.empty()) continue;
      const mw_region_decision &r = regions[i];
      // Virtual where mapwright decided so: VIRTUAL in the mapper file, or
      // an inner task's argument, reductions included (Legion 25.12's
      // DefaultMapper maps those virtually too; see docs/legion.md).
      if (r.instance == MW_INSTANCE_VIRTUAL) {
        output.chosen_instances[i].push_back(PhysicalInstance::get_virtual_instance());
        m.instance = MW_INSTANCE_VIRTUAL;
        continue;
      }
      Memory memory = memory_for(target, mem_kind(r.memory));
      if (!memory.exists()) {
        std::string msg = "error: mapwright: no " + std::to_string(r.memory) +
                          " memory visible from the processor of " + task.get_task_name();
        stop(msg.c_str());
      }
      LayoutConstraintSet constraints;
      {
        CallTimer part(Call::MapTaskLayout);
        constraints = layout(ctx, req, r, memory);
      }
      bool reused;
      {
        CallTimer part(Call::MapTaskReuse);
        reused = req.privilege != LEGION_REDUCE &&
                 reuse_valid(ctx, task, i, output.chosen_variant, input.valid_instances[i], memory,
                             constraints, output.chosen_instances[i]);
      }
      if (reused) {
        m.layout_holds = 1;
      } else {
        PhysicalInstance instance =
            req.privilege == LEGION_REDUCE
                ? reduction_instance(ctx, task, i, target, memory, constraints)
                : make_instance(ctx, task, i, target, memory, constraints);
        output.chosen_instances[i].push_back(instance);
        m.layout_holds = instance.entails(constraints) ? 1 : 0;
      }
      // CollectMemory: reused instances too (reads are what gets reused).
      if (r.collect && flags_.untrack_valid_regions && req.privilege == LEGION_READ_ONLY)
        output.untracked_valid_regions.insert(i);
      m.instance = MW_INSTANCE_PHYSICAL;
      m.memory = uint32_t(mem_code(memory.kind()));
      m.reused = reused ? 1 : 0;
    }
    // Kept without the reduction instances, which are never taken again
    // as they are (see reduction_instance).
    CachedMapping kept;
    kept.chosen.resize(task.regions.size());
    for (unsigned i = 0; i < task.regions.size(); i++)
      if (mapped[i].instance == MW_INSTANCE_PHYSICAL && task.regions[i].privilege != LEGION_REDUCE)
        kept.chosen[i] = output.chosen_instances[i];
    kept.mapped = mapped;
    mappings_[key] = std::move(kept);
  }

  void replicate_task(MapperContext ctx, const Task &task, const ReplicateTaskInput &input,
                      ReplicateTaskOutput &output) override {
    // ControlReplicate: one shard per node, on the node's first processor
    // of the decided kind (Legion 25.12's replicate_task; the reference's
    // map_replicate_task is gone).
    LaunchDesc d;
    mw_task_decision decision;
    decide(ctx, task, d, decision, nullptr);
    Processor::Kind kind = kProcKinds[decision.proc_kind];
    std::vector<VariantID> variants;
    runtime->find_valid_variants(ctx, task.task_id, variants, kind);
    for (VariantID v : variants)
      if (runtime->is_replicable_variant(ctx, task.task_id, v)) {
        output.chosen_variant = v;
        break;
      }
    const auto &by_node = procs_[decision.proc_kind];
    for (size_t n = 0; n < by_node.size(); n++)
      if (!by_node[n].empty()) output.target_processors.push_back(by_node[n][0]);
  }

  void select_tasks_to_map(const MapperContext ctx, const SelectMappingInput &input,
                           SelectMappingOutput &output) override {
    CallTimer timer(Call::SelectTasksToMap);
    // InstanceLimit: at most N of the task in flight (selected to map, not
    // done) per launching processor, as the reference keys its queues by
    // the launching processor (task_4 under each task_5 point: one each),
    // but per task name (the reference shares one queue among all names).
    // Counted here, not in map_task: a second call could otherwise select
    // more before the first ones were mapped.
    bool held_back = false;
    for (const Task *task : input.ready_tasks) {
      std::string name = task->get_task_name();
      auto limit = limits_.find(name);
      if (flags_.backpressure && limit != limits_.end() && limit->second >= 0) {
        long &count = in_flight_[{name, task->orig_proc}];
        if (count >= limit->second) {
          held_back = true;
          continue;
        }
        count++;
      }
      output.map_tasks.insert(task);
    }
    if (output.map_tasks.empty() && held_back) {
      if (!deferral_.exists()) deferral_ = runtime->create_mapper_event(ctx);
      output.deferral_event = deferral_;
    }
  }

  void report_profiling(const MapperContext ctx, const Task &task,
                        const TaskProfilingInfo &input) override {
    // What measuring costs in the mapper (bench mapper --measure-cost).
    CallTimer timer(Call::ReportProfiling);
    if (!input.task_response) {
      log_copy(task, input);
      return;
    }
    auto it = in_flight_.find({task.get_task_name(), task.orig_proc});
    if (it != in_flight_.end() && it->second > 0) it->second--;
    release_reductions(task.get_unique_id());
    if (deferral_.exists()) {
      MapperEvent e = deferral_;
      deferral_ = MapperEvent();
      runtime->trigger_mapper_event(ctx, e);
    }
    ProfilingMeasurements::OperationProcessorUsage usage;
    ProfilingMeasurements::OperationTimeline timeline;
    if (!recording() || !input.profiling_responses.get_measurement(usage) ||
        !input.profiling_responses.get_measurement(timeline) || proc_code(usage.proc.kind()) < 0)
      return;
    std::vector<int64_t> point = log_point(task);
    mw_log_ran(session_, task.get_task_name(), uint64_t(task.get_unique_id()), point.data(),
               uint32_t(point.size()), uint32_t(proc_code(usage.proc.kind())),
               usage.proc.address_space(), index_of(usage.proc), timeline.ready_time,
               timeline.start_time, timeline.end_time);
  }

  // A copy or fill Legion made for argument `input.region_requirement_index`
  // of `task`, as Realm measured it, into the log.
  void log_copy(const Task &task, const TaskProfilingInfo &input) {
    ProfilingMeasurements::OperationMemoryUsage usage;
    ProfilingMeasurements::OperationTimeline timeline;
    if (flags_.decision_log.empty() || !input.profiling_responses.get_measurement(usage) ||
        !input.profiling_responses.get_measurement(timeline))
      return;
    mw_memory_ref src{MW_MEM_OTHER, 0, 0}, dst{MW_MEM_OTHER, 0, 0};
    bool has_src = !input.fill_response && usage.source.exists();
    if (has_src) src = memory_ref(usage.source);
    if (usage.target.exists()) dst = memory_ref(usage.target);
    mw_log_copy(session_, task.get_task_name(), uint64_t(task.get_unique_id()),
                input.region_requirement_index, input.fill_response ? 1 : 0,
                has_src ? &src : nullptr, &dst, uint64_t(usage.size), timeline.start_time,
                timeline.end_time);
  }

  mw_memory_ref memory_ref(Memory m) {
    return mw_memory_ref{uint32_t(mem_code(m.kind())), m.address_space(), mem_index(m)};
  }

  // The index of `m` among its node's memories of its kind, in Legion's
  // memory-query order (as the machine description numbers them).
  uint32_t mem_index(Memory m) {
    auto hit = mem_indices_.find(m);
    if (hit != mem_indices_.end()) return hit->second;
    uint32_t index = 0;
    Machine::MemoryQuery mq(machine);
    mq.only_kind(m.kind());
    for (Memory other : mq) {
      if (other == m) break;
      if (other.address_space() == m.address_space()) index++;
    }
    return mem_indices_[m] = index;
  }

  // The point a task is logged under: its own (index launches), its
  // parent's (single tasks launched from an index point), or none.
  static std::vector<int64_t> log_point(const Task &task) {
    std::vector<int64_t> point;
    const DomainPoint *p = nullptr;
    if (task.is_index_space)
      p = &task.index_point;
    else if (task.parent_task != nullptr && task.parent_task->is_index_space)
      p = &task.parent_task->index_point;
    if (p != nullptr)
      for (int k = 0; k < p->get_dim(); k++) point.push_back((*p)[k]);
    return point;
  }

  void memoize_operation(const MapperContext ctx, const Mappable &mappable,
                         const MemoizeInput &input, MemoizeOutput &output) override {
    // The reference inherits DefaultMapper's answer, which Legion 25.12
    // turned to yes (-dm:memoize is its default there): traced loops
    // replay their mapping instead of asking the mapper again.
    if (flags_.memoize)
      DefaultMapper::memoize_operation(ctx, mappable, input, output);
    else
      output.memoize = false;
  }

  void configure_context(const MapperContext ctx, const Task &task,
                         ContextConfigOutput &output) override {
    DefaultMapper::configure_context(ctx, task, output);
    // Automatic tracing (on since Legion 25.03) records traces it can
    // replay only with memoization: recording them anyway made pennant's
    // loop 3x slower, so -mapwright:no-memoize turns both off.
    if (!flags_.memoize) output.auto_tracing_enabled = false;
  }

 private:
  // Whether the run is written down: a decision log, or the application
  // description (both measure what they map unless -mapwright:no-measure).
  bool recording() const { return !flags_.decision_log.empty() || !flags_.app_out.empty(); }

  // The regions behind `task`'s arguments, for the application
  // description: once per launch shape, as Legion knows them (the index
  // space's bounds and points, each field's name and size).
  void describe_regions(MapperContext ctx, const Task &task, uint32_t launch_id) {
    if (flags_.app_out.empty() || !described_regions_.insert(launch_id).second) return;
    size_t n = task.regions.size();
    std::vector<std::vector<int64_t>> lo(n), hi(n);
    std::vector<std::vector<mw_field>> fields(n);
    std::vector<mw_region_shape> shapes;
    for (unsigned i = 0; i < n; i++) {
      const RegionRequirement &req = task.regions[i];
      if (!req.region.exists()) continue;
      Domain dom = runtime->get_index_space_domain(ctx, req.region.get_index_space());
      for (int k = 0; k < dom.get_dim(); k++) {
        lo[i].push_back(dom.lo()[k]);
        hi[i].push_back(dom.hi()[k]);
      }
      FieldSpace fs = req.region.get_field_space();
      // The program's order where it gave one, else by field id.
      std::vector<FieldID> ids = req.instance_fields;
      if (ids.empty()) ids.assign(req.privilege_fields.begin(), req.privilege_fields.end());
      for (FieldID fid : ids) {
        const void *name = nullptr;
        size_t size = 0;
        if (!runtime->retrieve_semantic_information(ctx, fs, fid, LEGION_NAME_SEMANTIC_TAG, name,
                                                    size, true, false))
          name = nullptr;
        fields[i].push_back(mw_field{static_cast<const char *>(name), uint32_t(fid),
                                     uint64_t(runtime->get_field_size(ctx, fs, fid))});
      }
      mw_region_shape shape{};
      shape.index = i;
      shape.dims = uint32_t(lo[i].size());
      shape.lo = lo[i].data();
      shape.hi = hi[i].data();
      shape.volume = uint64_t(dom.get_volume());
      shape.fields = fields[i].data();
      shape.nfields = fields[i].size();
      shapes.push_back(shape);
    }
    mw_app_regions(session_, launch_id, shapes.data(), shapes.size());
  }

  // Describes `task` and asks Rust for its decisions.
  // A launch that was decided before (same task, parent, domain and
  // requirements on the same regions) is answered from decided_ without
  // describing it again: `d` is then filled only where a caller needs it
  // (describe). Rust caches per launch description too; this saves the
  // semantic-name lookups and the crossing, which were most of a call.
  void decide(MapperContext ctx, const Task &task, LaunchDesc &d, mw_task_decision &decision,
              mw_region_decision *regions) {
    auto hit = decided_.find(launch_key(task));
    if (hit != decided_.end()) {
      decision = hit->second.task;
      if (regions != nullptr)
        std::copy(hit->second.regions.begin(), hit->second.regions.end(), regions);
      return;
    }
    describe(ctx, task, d);
    std::vector<mw_region_decision> decided(task.regions.size());
    char *error = nullptr;
    if (mw_decide(session_, &d.c, &decision, decided.data(), &error) != 0) stop(error);
    limits_[task.get_task_name()] = decision.instance_limit;
    if (regions != nullptr) std::copy(decided.begin(), decided.end(), regions);
    // (describe and mw_decide leave key_ alone.)
    decided_.emplace(key_, Decided{decision, std::move(decided)});
  }

  // What identifies a launch for decide: the task, its parent task, the
  // launch domain and, per requirement, its region (or partition), its
  // privilege parent, privilege and field count: everything the launch
  // description is made of (names are those of the handles). Written into
  // key_, reused from call to call (calls never overlap: see
  // get_mapper_sync_model).
  const LaunchKey &launch_key(const Task &task) {
    LaunchKey &k = key_;
    k.clear();
    k.push_back(task.task_id);
    k.push_back(task.parent_task != nullptr ? int64_t(task.parent_task->task_id) : -1);
    k.push_back(task.is_index_space ? 1 : 0);
    if (task.is_index_space) {
      const Domain &dom = task.index_domain;
      k.push_back(dom.get_dim());
      for (int i = 0; i < dom.get_dim(); i++) {
        k.push_back(dom.lo()[i]);
        k.push_back(dom.hi()[i]);
      }
    }
    for (const RegionRequirement &req : task.regions) {
      if (req.region.exists()) {
        k.push_back(req.region.get_tree_id());
        k.push_back(req.region.get_index_space().get_id());
      } else {
        k.push_back(-int64_t(req.partition.get_tree_id()) - 1);
        k.push_back(req.partition.get_index_partition().get_id());
      }
      k.push_back(req.parent.get_index_space().get_id());
      k.push_back(req.parent.get_field_space().get_id());
      k.push_back(req.privilege);
      k.push_back(int64_t(req.privilege_fields.size()));
    }
    return k;
  }

  // Fills `d` (once) for the calls that hand the launch to Rust.
  void describe(MapperContext ctx, const Task &task, LaunchDesc &d) {
    if (d.described) return;
    CallTimer part(Call::Describe);
    d.described = true;
    d.task = task.get_task_name();
    bool has_parent = task.parent_task != nullptr;
    if (has_parent) d.parent = task.parent_task->get_task_name();
    if (task.is_index_space) {
      Domain dom = task.index_domain;
      for (int i = 0; i < dom.get_dim(); i++) {
        d.lo.push_back(dom.lo()[i]);
        d.hi.push_back(dom.hi()[i]);
      }
    }
    const Variants &variants = variants_of(ctx, task.task_id);
    d.names.resize(task.regions.size());
    d.name_ptrs.resize(task.regions.size());
    for (unsigned i = 0; i < task.regions.size(); i++) {
      const RegionRequirement &req = task.regions[i];
      names_of(ctx, req, d.names[i]);
      for (auto &n : d.names[i]) d.name_ptrs[i].push_back(n.c_str());
      mw_region r{};
      r.names = d.name_ptrs[i].data();
      r.nnames = d.name_ptrs[i].size();
      r.privilege = req.privilege == LEGION_REDUCE       ? MW_PRIV_REDUCE
                    : req.privilege == LEGION_READ_ONLY  ? MW_PRIV_READ
                    : req.privilege == LEGION_READ_WRITE ? MW_PRIV_READ_WRITE
                    : req.privilege == LEGION_NO_ACCESS  ? MW_PRIV_NONE
                                                         : MW_PRIV_WRITE;
      r.fields = uint32_t(req.privilege_fields.size());
      d.regions.push_back(r);
    }
    d.c.task = d.task.c_str();
    d.c.parent = has_parent ? d.parent.c_str() : nullptr;
    d.c.index_launch = task.is_index_space ? 1 : 0;
    d.c.dims = uint32_t(d.lo.size());
    d.c.lo = d.lo.data();
    d.c.hi = d.hi.data();
    d.c.variant_kinds = variants.kinds;
    d.c.inner = variants.inner ? 1 : 0;
    d.c.regions = d.regions.data();
    d.c.nregions = d.regions.size();
  }

  // What a task's variants are: the kinds it has one for, and whether all
  // are inner. Variants are registered before the run, so this is asked of
  // the runtime once per task, not at every mapper call.
  struct Variants {
    uint32_t kinds = 0;
    bool inner = false;
  };

  const Variants &variants_of(MapperContext ctx, TaskID id) {
    auto found = variants_.find(id);
    if (found != variants_.end()) return found->second;
    Variants v;
    bool any = false, all_inner = true;
    for (int k = 0; k < 7; k++) {
      std::vector<VariantID> vs;
      runtime->find_valid_variants(ctx, id, vs, kProcKinds[k]);
      if (vs.empty()) continue;
      v.kinds |= 1u << k;
      for (VariantID variant : vs) {
        any = true;
        all_inner = all_inner && runtime->is_inner_variant(ctx, id, variant);
      }
    }
    v.inner = any && all_inner;
    return variants_.emplace(id, v).first->second;
  }

  // The names a requirement answers to: its region's, its parent
  // partition's and its privilege parent's (the reference's
  // get_handle_names).
  void names_of(MapperContext ctx, const RegionRequirement &req, std::vector<std::string> &out) {
    auto add = [&out](const char *name) {
      if (name != nullptr && name[0] != '\0') out.push_back(name);
    };
    const void *value = nullptr;
    size_t size = 0;
    if (req.region.exists()) {
      if (runtime->retrieve_semantic_information(ctx, req.region, LEGION_NAME_SEMANTIC_TAG, value,
                                                 size, true, false))
        add(static_cast<const char *>(value));
      if (runtime->has_parent_logical_partition(ctx, req.region)) {
        LogicalPartition part = runtime->get_parent_logical_partition(ctx, req.region);
        if (runtime->retrieve_semantic_information(ctx, part, LEGION_NAME_SEMANTIC_TAG, value, size,
                                                   true, false))
          add(static_cast<const char *>(value));
      }
    } else if (req.partition.exists()) {
      // An index launch's requirement on a partition (before slicing): the
      // points' subregions answer to the partition's name, so does this.
      if (runtime->retrieve_semantic_information(ctx, req.partition, LEGION_NAME_SEMANTIC_TAG,
                                                 value, size, true, false))
        add(static_cast<const char *>(value));
    }
    if (req.parent.exists() &&
        runtime->retrieve_semantic_information(ctx, req.parent, LEGION_NAME_SEMANTIC_TAG, value,
                                               size, true, false))
      add(static_cast<const char *>(value));
  }

  Processor place(MapperContext ctx, const Task &task, LaunchDesc &d, Processor::Kind kind) {
    std::vector<int64_t> point;
    if (task.parent_task != nullptr && task.parent_task->is_index_space) {
      const DomainPoint &p = task.parent_task->index_point;
      for (int k = 0; k < p.get_dim(); k++) point.push_back(p[k]);
    }
    // The same launch from the same parent point is placed as before.
    launch_key(task);
    key_.insert(key_.end(), point.begin(), point.end());
    key_.push_back(int64_t(point.size()));
    key_.push_back(int64_t(kind));
    auto hit = placed_.find(key_);
    if (hit != placed_.end()) return hit->second;
    LaunchKey key = key_;
    uint32_t node = 0, proc = 0;
    char *error = nullptr;
    describe(ctx, task, d);
    if (mw_place(session_, &d.c, point.data(), uint32_t(point.size()), &node, &proc, &error) != 0)
      stop(error);
    return placed_[key] = processor(kind, node, proc);
  }

  // A task no IndexTaskMap/SingleTaskMap places may run on any processor
  // of its kind on the node, whichever is free first: the reference falls
  // back to DefaultMapper's target processors there, which are every local
  // CPU (OpenMP, I/O, Python) processor, and only the chosen GPU.
  void add_free_targets(const Task &task, Processor first, std::vector<Processor> &targets) {
    Processor::Kind kind = first.kind();
    if (kind == Processor::TOC_PROC || kind == Processor::UTIL_PROC ||
        kind == Processor::PROC_SET || task.must_epoch_task ||
        first.address_space() != local_proc.address_space())
      return;
    for (Processor p : procs_[proc_code(kind)][first.address_space()])
      if (p != first) targets.push_back(p);
  }

  Processor processor(Processor::Kind kind, uint32_t node, uint32_t proc) {
    const auto &by_node = procs_[proc_code(kind)];
    if (node >= by_node.size() || proc >= by_node[node].size()) {
      char msg[256];
      std::snprintf(msg, sizeof(msg),
                    "Slice processor index out of bound!\n%u >= %zu (node %u, %s)", proc,
                    node < by_node.size() ? by_node[node].size() : size_t(0), node,
                    kind == Processor::TOC_PROC ? "GPU" : "CPU");
      stop(msg);
    }
    return by_node[node][proc];
  }

  uint32_t index_of(Processor p) {
    const auto &list = procs_[proc_code(p.kind())][p.address_space()];
    for (size_t i = 0; i < list.size(); i++)
      if (list[i] == p) return uint32_t(i);
    return 0;
  }

  // Finds or makes an instance for requirement `index` in `memory`; stops
  // the program with the reference's out-of-memory message if Legion
  // cannot allocate it.
  PhysicalInstance make_instance(MapperContext ctx, const Task &task, unsigned index,
                                 Processor target, Memory memory,
                                 const LayoutConstraintSet &constraints) {
    PhysicalInstance instance;
    bool created = false;
    std::vector<LogicalRegion> lrs(1,
                                   instance_region(ctx, task.regions[index], memory, constraints));
    size_t footprint = 0;
    // A reduction gets an instance no running task holds (see
    // reduction_instance).
    CallTimer part(task.regions[index].privilege == LEGION_REDUCE ? Call::MapTaskCreateReduction
                                                                  : Call::MapTaskFindOrCreate);
    bool made =
        task.regions[index].privilege == LEGION_REDUCE
            ? runtime->create_physical_instance(ctx, memory, constraints, lrs, instance, true, 0,
                                                false, &footprint)
            : runtime->find_or_create_physical_instance(ctx, memory, constraints, lrs, instance,
                                                        created, true, 0, false, &footprint);
    if (!made) {
      char msg[512];
      std::snprintf(msg, sizeof(msg),
                    "Default mapper failed allocation of size %zd bytes for region  "
                    "requirement %u of task %s (UID %lld) in memory %llx (%s) for "
                    "processor %llx. instance allocation failed - out of memory",
                    footprint, index, task.get_task_name(), (long long)task.get_unique_id(),
                    (long long)memory.id, memory_name(memory.kind()), (long long)target.id);
      stop(msg);
    }
    return instance;
  }

  // An instance for reduction requirement `index`: one of this mapper's
  // earlier reduction instances for the same region, memory, operator and
  // fields that no task holds now, else a new one. A found instance may be
  // another task's that reduces into the same region at the same time
  // (johnson's and cosma's task_4 points under default slicing), and both
  // would accumulate into the same memory; a new one each time, as before,
  // made pennant's 112 reducing tasks a run each create an instance (48 µs
  // a call) where DefaultMapper takes its cached mapping's again. The task
  // holds it until it has run (report_profiling).
  PhysicalInstance reduction_instance(MapperContext ctx, const Task &task, unsigned index,
                                      Processor target, Memory memory,
                                      const LayoutConstraintSet &constraints) {
    const RegionRequirement &req = task.regions[index];
    LaunchKey key{int64_t(req.region.get_tree_id()), int64_t(req.region.get_index_space().get_id()),
                  int64_t(req.region.get_field_space().get_id()), int64_t(memory.id),
                  int64_t(req.redop)};
    for (FieldID f : req.privilege_fields) key.push_back(int64_t(f));
    PhysicalInstance instance;
    auto &idle = idle_reductions_[key];
    while (!idle.empty() && !instance.exists()) {
      PhysicalInstance candidate = idle.back();
      idle.pop_back();
      // (Legion may have collected it since: then it cannot be acquired.)
      if (candidate.entails(constraints) && runtime->acquire_instance(ctx, candidate))
        instance = candidate;
    }
    if (!instance.exists()) instance = make_instance(ctx, task, index, target, memory, constraints);
    busy_reductions_[task.get_unique_id()].emplace_back(std::move(key), instance);
    return instance;
  }

  // Task `id` has run: its reduction instances are free for the next.
  void release_reductions(UniqueID id) {
    auto held = busy_reductions_.find(id);
    if (held == busy_reductions_.end()) return;
    for (auto &entry : held->second) idle_reductions_[entry.first].push_back(entry.second);
    busy_reductions_.erase(held);
  }

  // The region an instance for `req` covers: the reference leaves this to
  // DefaultMapper (default_policy_select_instance_region), which widens it
  // to an ancestor so that the pieces of one region share an instance and
  // a task reading a neighbour's piece needs no copy: on one node up to the
  // root; on several, to the first ancestor that is about one node's share
  // of the root. Exactly the requirement's region for reductions, GPU
  // framebuffer and zero-copy memory, `Compact` with `Exact`, and under
  // -dm:exact_region.
  LogicalRegion instance_region(MapperContext ctx, const RegionRequirement &req, Memory memory,
                                const LayoutConstraintSet &constraints) {
    LogicalRegion region = req.region;
    if (req.privilege == LEGION_REDUCE || exact_region ||
        constraints.specialized_constraint.is_exact() || (req.tag & DefaultMapper::EXACT_REGION) ||
        memory.kind() == Memory::GPU_FB_MEM || memory.kind() == Memory::Z_COPY_MEM)
      return region;
    auto hit = widened_.find(region);
    if (hit != widened_.end()) return hit->second;
    return widened_[region] = widen(ctx, region);
  }

  LogicalRegion widen(MapperContext ctx, LogicalRegion region) {
    std::vector<LogicalRegion> path(1, region);
    while (runtime->has_parent_logical_partition(ctx, path.back())) {
      LogicalPartition part = runtime->get_parent_logical_partition(ctx, path.back());
      path.push_back(runtime->get_parent_logical_region(ctx, part));
    }
    if (total_nodes == 1 || path.size() == 1) return path.back();
    // Several nodes: walk down from the root to the first region whose
    // share of the root's volume reaches one node's.
    size_t root_volume =
        runtime->get_index_space_domain(ctx, path.back().get_index_space()).get_volume();
    for (size_t i = path.size() - 1; i-- > 0;) {
      size_t volume = runtime->get_index_space_domain(ctx, path[i].get_index_space()).get_volume();
      if (volume > 0 && root_volume / volume >= total_nodes) return path[i];
    }
    return region;
  }

  // Maps requirement `index` onto the instances already valid for it in
  // `memory`, as the reference does (it takes any valid instance there that
  // the variant accepts), where they also hold the decided layout: then a
  // task reading what an earlier one wrote uses the same instance, with no
  // copy. False, and `chosen` untouched, where they do not cover every
  // field.
  bool reuse_valid(MapperContext ctx, const Task &task, unsigned index, VariantID variant,
                   const std::vector<PhysicalInstance> &valid, Memory memory,
                   const LayoutConstraintSet &constraints, std::vector<PhysicalInstance> &chosen) {
    // The decided layout without the field list: a valid instance may hold
    // more fields, or only some of them.
    LayoutConstraintSet shape = constraints;
    shape.field_constraint = FieldConstraint();
    std::vector<PhysicalInstance> found;
    for (const PhysicalInstance &v : valid)
      if (v.get_location() == memory && v.entails(shape)) found.push_back(v);
    if (found.empty()) return false;
    std::set<FieldID> missing;
    runtime->filter_instances(ctx, task, index, variant, found, missing);
    if (!missing.empty() || !runtime->acquire_and_filter_instances(ctx, found)) return false;
    chosen = found;
    return true;
  }

  // The first memory of `kind` with affinity to `proc` (the reference's
  // query_best_memory_for_proc takes the first, not the best).
  Memory memory_for(Processor proc, Memory::Kind kind) {
    auto key = std::make_pair(proc, kind);
    auto hit = memories_.find(key);
    if (hit != memories_.end()) return hit->second;
    Machine::MemoryQuery mq(machine);
    mq.has_affinity_to(proc).only_kind(kind);
    return memories_[key] = mq.first();
  }

  static const char *memory_name(Memory::Kind k) {
    switch (k) {
      case Memory::SYSTEM_MEM:
        return "SYSTEM_MEM";
      case Memory::GPU_FB_MEM:
        return "GPU_FB_MEM";
      case Memory::Z_COPY_MEM:
        return "Z_COPY_MEM";
      case Memory::SOCKET_MEM:
        return "SOCKET_MEM";
      case Memory::REGDMA_MEM:
        return "REGDMA_MEM";
      default:
        return "memory";
    }
  }

  // Legion layout constraints for a decision: SOA/AOS and C/F order as an
  // ordering of the dimensions and the field dimension, Compact (with
  // Exact) as a specialisation, Align per field.
  LayoutConstraintSet layout(MapperContext ctx, const RegionRequirement &req,
                             const mw_region_decision &r, Memory memory) {
    LayoutConstraintSet cs;
    bool reduction = req.privilege == LEGION_REDUCE;
    SpecializedKind kind = reduction   ? LEGION_AFFINE_REDUCTION_SPECIALIZE
                           : r.compact ? LEGION_COMPACT_SPECIALIZE
                                       : LEGION_AFFINE_SPECIALIZE;
    cs.add_constraint(
        SpecializedConstraint(kind, reduction ? req.redop : 0, false, r.compact && r.exact));
    cs.add_constraint(MemoryConstraint(memory.kind()));
    std::vector<FieldID> fields(req.privilege_fields.begin(), req.privilege_fields.end());
    cs.add_constraint(FieldConstraint(fields, false, false));
    int dims = req.region.get_index_space().get_dim();
    std::vector<DimensionKind> order;
    if (!r.soa) order.push_back(LEGION_DIM_F);
    for (int i = 0; i < dims; i++)
      order.push_back(DimensionKind(r.c_order ? LEGION_DIM_X + dims - 1 - i : LEGION_DIM_X + i));
    if (r.soa) order.push_back(LEGION_DIM_F);
    cs.add_constraint(OrderingConstraint(order, false));
    if (r.align_op != MW_ALIGN_NONE) {
      EqualityKind ek = r.align_op == MW_ALIGN_EQ   ? LEGION_EQ_EK
                        : r.align_op == MW_ALIGN_LT ? LEGION_LT_EK
                        : r.align_op == MW_ALIGN_LE ? LEGION_LE_EK
                        : r.align_op == MW_ALIGN_GT ? LEGION_GT_EK
                        : r.align_op == MW_ALIGN_GE ? LEGION_GE_EK
                                                    : LEGION_NE_EK;
      for (FieldID f : fields) cs.add_constraint(AlignmentConstraint(f, ek, size_t(r.align)));
    }
    (void)ctx;
    return cs;
  }

  struct Decided {
    mw_task_decision task;
    std::vector<mw_region_decision> regions;
  };

  mw_session *session_;
  Flags flags_;
  LaunchKey key_;
  LaunchMap<Decided> decided_;
  LaunchMap<Processor> placed_;
  LaunchMap<std::vector<TaskSlice>> sliced_;
  // Each task's last mapping by task, processor, variant and arguments
  // (map_as_before).
  struct CachedMapping {
    std::vector<std::vector<PhysicalInstance>> chosen;
    std::vector<mw_region_mapped> mapped;
  };
  LaunchMap<CachedMapping> mappings_;
  // Reduction instances: idle ones by region, memory, operator and fields,
  // and those tasks hold until they have run (reduction_instance).
  LaunchMap<std::vector<PhysicalInstance>> idle_reductions_;
  std::map<UniqueID, std::vector<std::pair<LaunchKey, PhysicalInstance>>> busy_reductions_;
  // Launches whose regions the application description has (describe_regions).
  std::set<uint32_t> described_regions_;
  std::map<std::pair<Processor, Memory::Kind>, Memory> memories_;
  std::map<LogicalRegion, LogicalRegion> widened_;
  std::map<int, std::vector<std::vector<Processor>>> procs_;
  std::map<std::pair<std::string, Processor>, long> in_flight_;
  std::map<std::string, int64_t> limits_;
  MapperEvent deferral_;
  std::map<TaskID, Variants> variants_;
  std::map<Memory, uint32_t> mem_indices_;
};

// Legion's DefaultMapper as it is, with its calls timed
// (-mapwright:default-mapper with -mapwright:stats): what `mapwright bench
// mapper` holds mapwright's mapping cost against. One call at a time, as
// mapwright's mapper, so that no call's time includes another's.
class TimedDefaultMapper : public DefaultMapper {
 public:
  TimedDefaultMapper(MapperRuntime *rt, Machine machine, Processor local)
      : DefaultMapper(rt, machine, local, "timed_default_mapper") {}

  MapperSyncModel get_mapper_sync_model() const override {
    return SERIALIZED_NON_REENTRANT_MAPPER_MODEL;
  }
  void select_task_options(const MapperContext ctx, const Task &task,
                           TaskOptions &output) override {
    CallTimer timer(Call::SelectTaskOptions);
    DefaultMapper::select_task_options(ctx, task, output);
  }
  void slice_task(const MapperContext ctx, const Task &task, const SliceTaskInput &input,
                  SliceTaskOutput &output) override {
    CallTimer timer(Call::SliceTask);
    DefaultMapper::slice_task(ctx, task, input, output);
  }
  void map_task(const MapperContext ctx, const Task &task, const MapTaskInput &input,
                MapTaskOutput &output) override {
    CallTimer timer(Call::MapTask);
    DefaultMapper::map_task(ctx, task, input, output);
  }
  void select_tasks_to_map(const MapperContext ctx, const SelectMappingInput &input,
                           SelectMappingOutput &output) override {
    CallTimer timer(Call::SelectTasksToMap);
    DefaultMapper::select_tasks_to_map(ctx, input, output);
  }
};

namespace {

void create_mappers(Machine machine, Runtime *runtime, const std::set<Processor> &local_procs) {
  Flags flags = read_flags();
  Processor local = *local_procs.begin();
  if (flags.default_mapper) {
    if (!flags.stats.empty()) enable_call_stats(flags.stats, "default");
    runtime->replace_default_mapper(
        new TimedDefaultMapper(runtime->get_mapper_runtime(), machine, local), Processor::NO_PROC);
    return;
  }
  if (flags.mapping.empty())
    stop("error: mapwright's mapper needs `-mapping FILE` (the mapper file to use)");
  // Each process of a multi-node run writes its own log and description.
  if (local.address_space() > 0)
    for (std::string *file : {&flags.decision_log, &flags.app_out})
      if (!file->empty()) *file += ".node" + std::to_string(local.address_space());
  HostFacts facts;
  describe_host(machine, local.address_space(), facts);
  char *error = nullptr;
  char *warnings = nullptr;
  mw_session *session =
      mw_session_open(flags.mapping.c_str(), &facts.host, flags.semantic_names ? 1 : 0,
                      flags.decision_log.empty() ? nullptr : flags.decision_log.c_str(),
                      flags.machine_out.empty() ? nullptr : flags.machine_out.c_str(),
                      flags.app_out.empty() ? nullptr : flags.app_out.c_str(), &error, &warnings);
  if (session == nullptr) stop(error);
  // The log is written in batches: what is left goes out at exit.
  g_session = session;
  std::atexit(flush_log);
  if (flags.machine_only) {
    // Asked only to describe this host (the `legion` backend's probe):
    // the description is written, no task runs.
    std::fflush(stdout);
    _exit(0);
  }
  if (warnings != nullptr) {
    std::fprintf(stderr, "%s\n", warnings);
    mw_string_free(warnings);
  }
  if (!flags.stats.empty()) enable_call_stats(flags.stats, "mapwright");
  // One mapper for every local processor, as the reference.
  Mapper *mapper =
      new MapwrightMapper(runtime->get_mapper_runtime(), machine, local, session, flags);
  if (flags.wrapper) mapper = new LoggingWrapper(mapper);
  runtime->replace_default_mapper(mapper, Processor::NO_PROC);
}

}  // namespace

}  // namespace mapwright

extern "C" void register_mappers(void) {
  Legion::Runtime::add_registration_callback(mapwright::create_mappers);
}

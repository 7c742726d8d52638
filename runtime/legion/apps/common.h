// What every mapwright benchmark program shares: command-line flags, the
// clock, registration of mapwright's mapper, region and field naming, and
// typed accessors. Written once; each program keeps only its own tasks.
#ifndef MAPWRIGHT_APPS_COMMON_H
#define MAPWRIGHT_APPS_COMMON_H

#include <cstdint>
#include <string>
#include <vector>

#include "legion.h"

namespace mapwright_apps {

// Integer flags `-name value` from Legion's input arguments, with defaults;
// unknown flags are Legion's and left alone.
class Flags {
 public:
  Flags();
  long get(const char *name, long fallback) const;
  bool has(const char *name) const;

 private:
  std::vector<std::string> args_;
};

// Seconds since an arbitrary start (Realm's clock, as the Regent programs).
double now_seconds();

// Deterministic pseudo-random numbers from (seed, stream, index), so a task
// and the program's own reference computation draw the same values.
uint64_t mix(uint64_t seed, uint64_t stream, uint64_t index);
double uniform(uint64_t seed, uint64_t stream, uint64_t index);  // [0, 1)

// Registers mapwright's mapper when the program runs with `-mapping FILE`
// (as Regent programs register the DSL mapper with -dslmapper), and sets
// the top-level task. Reads argv: Legion's input arguments exist only once
// the runtime has started.
void register_mapper_if_asked(Legion::TaskID top_level, int argc, char **argv);

// Names a field space's fields, a region, a partition (semantic names the
// mapper's Region and Layout statements match with -tm:use_semantic_name).
void name_fields(Legion::Runtime *rt, Legion::FieldSpace fs,
                 const std::vector<std::pair<Legion::FieldID, std::string>> &fields);

// Region requirement helpers: privilege + fields in one call.
Legion::RegionRequirement requirement(Legion::LogicalRegion region, Legion::PrivilegeMode privilege,
                                      Legion::LogicalRegion parent,
                                      const std::vector<Legion::FieldID> &fields);
Legion::RegionRequirement requirement(Legion::LogicalPartition partition,
                                      Legion::PrivilegeMode privilege, Legion::LogicalRegion parent,
                                      const std::vector<Legion::FieldID> &fields);
Legion::RegionRequirement reduction(Legion::LogicalPartition partition, Legion::ReductionOpID redop,
                                    Legion::LogicalRegion parent,
                                    const std::vector<Legion::FieldID> &fields);
Legion::RegionRequirement reduction(Legion::LogicalRegion region, Legion::ReductionOpID redop,
                                    Legion::LogicalRegion parent,
                                    const std::vector<Legion::FieldID> &fields);

// The registrar of a CPU task variant (leaf unless `inner`; an inner task
// is also replicable, as Regent's top-level tasks are).
Legion::TaskVariantRegistrar cpu_variant(Legion::TaskID id, const char *name, bool inner);

// Registers a CPU task variant returning T.
template <typename T, T (*TASK)(const Legion::Task *, const std::vector<Legion::PhysicalRegion> &,
                                Legion::Context, Legion::Runtime *)>
void cpu_task(Legion::TaskID id, const char *name, bool inner = false) {
  Legion::Runtime::preregister_task_variant<T, TASK>(cpu_variant(id, name, inner), name);
}

// Registers a CPU task variant returning nothing.
template <void (*TASK)(const Legion::Task *, const std::vector<Legion::PhysicalRegion> &,
                       Legion::Context, Legion::Runtime *)>
void cpu_task(Legion::TaskID id, const char *name, bool inner = false) {
  Legion::Runtime::preregister_task_variant<TASK>(cpu_variant(id, name, inner), name);
}

// Registers a CPU task variant that launches subtasks and also maps regions
// itself (neither leaf nor inner): a top-level task that reads its results
// back with an inline mapping for its result check.
template <void (*TASK)(const Legion::Task *, const std::vector<Legion::PhysicalRegion> &,
                       Legion::Context, Legion::Runtime *)>
void cpu_control_task(Legion::TaskID id, const char *name) {
  Legion::TaskVariantRegistrar r = cpu_variant(id, name, false);
  r.set_leaf(false);
  Legion::Runtime::preregister_task_variant<TASK>(r, name);
}

// Read and read-write accessors over 1-D fields.
template <typename T>
using Reader = Legion::FieldAccessor<LEGION_READ_ONLY, T, 1, Legion::coord_t,
                                     Realm::AffineAccessor<T, 1, Legion::coord_t>>;
template <typename T>
using Writer = Legion::FieldAccessor<LEGION_READ_WRITE, T, 1, Legion::coord_t,
                                     Realm::AffineAccessor<T, 1, Legion::coord_t>>;

// A sum-reduction accessor over a 1-D field (exclusive, as Regent's
// `reduces +` on a region argument).
template <typename T>
using Reducer = Legion::ReductionAccessor<Legion::SumReduction<T>, true, 1, Legion::coord_t,
                                          Realm::AffineAccessor<T, 1, Legion::coord_t>>;

// The domain of region requirement `i` of `task` as an N-D rectangle.
template <int N = 1>
Legion::Rect<N> rect_of(Legion::Runtime *rt, const Legion::Task *task, unsigned i) {
  return rt->get_index_space_domain(task->regions[i].region.get_index_space());
}

// A region over `bounds` with field space `fs`, named `name`.
template <int N>
Legion::LogicalRegion named_region(Legion::Runtime *rt, Legion::Context ctx, Legion::Rect<N> bounds,
                                   Legion::FieldSpace fs, const char *name) {
  Legion::IndexSpace is = rt->create_index_space(ctx, bounds);
  Legion::LogicalRegion r = rt->create_logical_region(ctx, is, fs);
  rt->attach_name(r, name);
  return r;
}

// The timestamps a Regent benchmark keeps to time its loop: a 1-D region
// with one (start, stop) pair per launch point, written by the first and
// the last timed launch; get_elapsed reads the span.
enum TimeFields : Legion::FieldID { TIME_START = 300, TIME_STOP };
// The field space of the timestamps (fields named "start" and "stop").
Legion::FieldSpace time_field_space(Legion::Runtime *rt, Legion::Context ctx);
// Writes the current time into field `f` of `times` at `point`.
void stamp(const Legion::PhysicalRegion &times, Legion::FieldID f, Legion::coord_t point);
// The latest stop minus the earliest start over region requirement `i`.
double time_span(Legion::Runtime *rt, const Legion::Task *task,
                 const std::vector<Legion::PhysicalRegion> &regions, unsigned i);

}  // namespace mapwright_apps

#endif

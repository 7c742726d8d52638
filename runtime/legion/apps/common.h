// What every mapwright benchmark program shares: command-line flags, the
// clock, registration of mapwright's mapper, region and field naming, and
// typed accessors, strided field views and tables binding fields to them.
#ifndef MAPWRIGHT_APPS_COMMON_H
#define MAPWRIGHT_APPS_COMMON_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>
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

// With `-window` on the command line, prints the timed part of the run as
// "TIMED WINDOW = START END s" in now_seconds()'s clock, the clock of
// Realm's task timelines, so a test can hold what each processor measured
// inside it against its length. Nothing without the flag.
void print_timed_window(double start_s, double end_s);

// Deterministic pseudo-random numbers from (seed, stream, index), so a task
// and the program's own reference computation draw the same values.
uint64_t mix(uint64_t seed, uint64_t stream, uint64_t index);
double uniform(uint64_t seed, uint64_t stream, uint64_t index);  // [0, 1)

// Registers mapwright's mapper when the program runs with `-mapping FILE`
// (as Regent programs register the DSL mapper with -dslmapper), or Legion's
// DefaultMapper with its calls timed (`-mapwright:default-mapper`), and sets
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

// A strided view of one 1-D field, indexed by global element id: an
// instance of a task's region (whatever its layout) and a plain array look
// the same through it, so a task and a program's sequential reference run
// can share their kernels.
template <typename T>
struct Column {
  char *base = nullptr;
  std::ptrdiff_t stride = sizeof(T);
  T &operator[](int64_t i) const { return *reinterpret_cast<T *>(base + i * stride); }
};

// The Column of field `f` of `region` over `bounds`, through a read-write
// accessor when `write`, a read-only one otherwise (so Legion's privilege
// checks see what the task does with it). Empty bounds give an empty view.
template <typename T>
Column<T> column(const Legion::PhysicalRegion &region, Legion::FieldID f, Legion::Rect<1> bounds,
                 bool write) {
  auto view = [&](const auto &accessor) {
    Column<T> col;
    if (bounds.empty()) return col;
    char *lo = reinterpret_cast<char *>(const_cast<T *>(accessor.ptr(bounds.lo)));
    if (bounds.volume() > 1)
      col.stride =
          reinterpret_cast<char *>(const_cast<T *>(accessor.ptr(bounds.lo + Legion::Point<1>(1)))) -
          lo;
    col.base = lo - bounds.lo[0] * col.stride;
    return col;
  };
  return write ? view(Writer<T>(region, f)) : view(Reader<T>(region, f));
}

// Whether a task's region requirement is read-write (true) or read-only
// (false), so that a task binds views as its launch grants them; any other
// privilege (none, a reduction) has no view and stops the program.
bool read_write(const Legion::RegionRequirement &req);

// Binds a Column member to its field (FieldTable's default; a program adds
// overloads for its own views over several fields, found by argument-
// dependent lookup).
template <typename T>
void bind_field(Column<T> &col, const Legion::PhysicalRegion &region, Legion::FieldID f,
                Legion::Rect<1> bounds, bool write) {
  col = column<T>(region, f, bounds, write);
}

// Which member of a view struct `View` each field fills, written once per
// program: a task then states only the ids of the fields it binds, per
// region requirement, and the table puts each into its member. Without it
// every task repeats `view.member = accessor(requirement, FIELD)` for every
// field it touches. `Members` are the member types (Column<T>, or a
// program's own views with a bind_field overload).
template <typename View, typename... Members>
class FieldTable {
 public:
  using Member = std::variant<Members View::*...>;

  FieldTable(std::initializer_list<std::pair<Legion::FieldID, Member>> entries)
      : entries_(entries) {}

  // Binds `fields` of `region` over `bounds` to their members of `view`.
  void bind(View &view, const Legion::PhysicalRegion &region, Legion::Rect<1> bounds,
            const std::vector<Legion::FieldID> &fields, bool write) const {
    for (Legion::FieldID f : fields)
      std::visit([&](auto member) { bind_field(view.*member, region, f, bounds, write); }, find(f));
  }

  // The member field `f` fills (of type M).
  template <typename M>
  M View::*member(Legion::FieldID f) const {
    return std::get<M View::*>(find(f));
  }

 private:
  const Member &find(Legion::FieldID f) const {
    for (const auto &e : entries_)
      if (e.first == f) return e.second;
    std::fprintf(stderr, "FieldTable: no member for field %u\n", unsigned(f));
    std::abort();
  }

  std::vector<std::pair<Legion::FieldID, Member>> entries_;
};

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

// Fills every field of `region` with zero bytes: Regent zero-initialises
// what a program reads before writing, so no task of ours reads
// uninitialised data (which Legion warns about).
void fill_zero(Legion::Runtime *rt, Legion::Context ctx, Legion::LogicalRegion region);

// The timestamps a Regent benchmark keeps to time its loop: a 1-D region
// with one (start, stop) pair per launch point, written by the first and
// the last timed launch; get_elapsed reads the span.
enum TimeFields : Legion::FieldID { TIME_START = 300, TIME_STOP };
// The field space of the timestamps (fields named "start" and "stop").
Legion::FieldSpace time_field_space(Legion::Runtime *rt, Legion::Context ctx);
// Writes the current time into field `f` of `times` at `point`.
void stamp(const Legion::PhysicalRegion &times, Legion::FieldID f, Legion::coord_t point);
// The latest stop minus the earliest start over region requirement `i` (the
// window printed with `-window`, see print_timed_window).
double time_span(Legion::Runtime *rt, const Legion::Task *task,
                 const std::vector<Legion::PhysicalRegion> &regions, unsigned i);

}  // namespace mapwright_apps

#endif

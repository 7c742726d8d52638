#include "common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "mapwright_mapper.h"

using namespace Legion;

namespace mapwright_apps {

Flags::Flags() {
  const InputArgs &a = Runtime::get_input_args();
  for (int i = 0; i < a.argc; i++) args_.push_back(a.argv[i]);
}

long Flags::get(const char *name, long fallback) const {
  for (size_t i = 0; i + 1 < args_.size(); i++)
    if (args_[i] == name) return std::strtol(args_[i + 1].c_str(), nullptr, 10);
  return fallback;
}

bool Flags::has(const char *name) const {
  for (const std::string &a : args_)
    if (a == name) return true;
  return false;
}

double now_seconds() { return double(Realm::Clock::current_time_in_nanoseconds()) * 1e-9; }

void print_timed_window(double start_s, double end_s) {
  if (!Flags().has("-window")) return;
  std::printf("TIMED WINDOW = %.9f %.9f s\n", start_s, end_s);
  std::fflush(stdout);
}

uint64_t mix(uint64_t seed, uint64_t stream, uint64_t index) {
  // splitmix64 over the three inputs.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull ^
               (stream + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull ^
               index * 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return double(mix(seed, stream, index) >> 11) * (1.0 / 9007199254740992.0);
}

void register_mapper_if_asked(TaskID top_level, int argc, char **argv) {
  Runtime::set_top_level_task_id(top_level);
  for (int i = 0; i < argc; i++)
    if (std::strcmp(argv[i], "-mapping") == 0 ||
        std::strcmp(argv[i], "-mapwright:default-mapper") == 0) {
      register_mappers();
      return;
    }
}

void name_fields(Runtime *rt, FieldSpace fs,
                 const std::vector<std::pair<FieldID, std::string>> &fields) {
  for (const auto &f : fields) rt->attach_name(fs, f.first, f.second.c_str());
}

RegionRequirement requirement(LogicalRegion region, PrivilegeMode privilege, LogicalRegion parent,
                              const std::vector<FieldID> &fields) {
  RegionRequirement r(region, privilege, LEGION_EXCLUSIVE, parent);
  for (FieldID f : fields) r.add_field(f);
  return r;
}

RegionRequirement requirement(LogicalPartition partition, PrivilegeMode privilege,
                              LogicalRegion parent, const std::vector<FieldID> &fields) {
  RegionRequirement r(partition, 0 /*identity projection*/, privilege, LEGION_EXCLUSIVE, parent);
  for (FieldID f : fields) r.add_field(f);
  return r;
}

RegionRequirement reduction(LogicalPartition partition, ReductionOpID redop, LogicalRegion parent,
                            const std::vector<FieldID> &fields) {
  RegionRequirement r(partition, 0 /*identity projection*/, redop, LEGION_EXCLUSIVE, parent);
  for (FieldID f : fields) r.add_field(f);
  return r;
}

RegionRequirement reduction(LogicalRegion region, ReductionOpID redop, LogicalRegion parent,
                            const std::vector<FieldID> &fields) {
  RegionRequirement r(region, redop, LEGION_EXCLUSIVE, parent);
  for (FieldID f : fields) r.add_field(f);
  return r;
}

bool read_write(const RegionRequirement &req) {
  if (req.privilege == LEGION_READ_ONLY) return false;
  if (req.privilege == LEGION_READ_WRITE) return true;
  std::fprintf(stderr, "no field view for privilege %d (read-only or read-write only)\n",
               int(req.privilege));
  std::abort();
}

TaskVariantRegistrar cpu_variant(TaskID id, const char *name, bool inner) {
  TaskVariantRegistrar r(id, name);
  r.add_constraint(ProcessorConstraint(Processor::LOC_PROC));
  r.set_leaf(!inner);
  r.set_inner(inner);
  r.set_replicable(inner);
  return r;
}

void fill_zero(Runtime *rt, Context ctx, LogicalRegion region) {
  FieldSpace fs = region.get_field_space();
  std::vector<FieldID> fields;
  rt->get_field_space_fields(ctx, fs, fields);
  std::map<size_t, std::set<FieldID>> by_size;
  for (FieldID f : fields) by_size[rt->get_field_size(ctx, fs, f)].insert(f);
  for (const auto &group : by_size) {
    std::vector<char> zeros(group.first, 0);
    rt->fill_fields(ctx, region, region, group.second, zeros.data(), zeros.size());
  }
}

FieldSpace time_field_space(Runtime *rt, Context ctx) {
  FieldSpace fs = rt->create_field_space(ctx);
  FieldAllocator a = rt->create_field_allocator(ctx, fs);
  a.allocate_field(sizeof(double), TIME_START);
  a.allocate_field(sizeof(double), TIME_STOP);
  name_fields(rt, fs, {{TIME_START, "start"}, {TIME_STOP, "stop"}});
  return fs;
}

void stamp(const PhysicalRegion &times, FieldID f, coord_t point) {
  Writer<double> w(times, f);
  w[Point<1>(point)] = now_seconds();
}

double time_span(Runtime *rt, const Task *task, const std::vector<PhysicalRegion> &regions,
                 unsigned i) {
  Reader<double> start(regions[i], TIME_START), stop(regions[i], TIME_STOP);
  double lo = 1e300, hi = -1e300;
  for (PointInRectIterator<1> p(rect_of(rt, task, i)); p(); p++) {
    lo = std::min(lo, start[*p]);
    hi = std::max(hi, stop[*p]);
  }
  print_timed_window(lo, hi);
  return hi - lo;
}

}  // namespace mapwright_apps

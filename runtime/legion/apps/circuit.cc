// circuit as a real Legion program: the Regent circuit benchmark
// (circuit_sparse.rg) with its task names, region names, argument order,
// privileges and launch kinds (runtime/apps/circuit.json), CPU variants
// doing the real computation, a check against a sequential computation of
// the same circuit, and its output ("ELAPSED TIME = ... s", "GFLOPS = ...").
//
// Nodes are numbered private nodes first (piece by piece), then shared
// nodes: all_nodes is split into all_private and all_shared (partition
// rp_all_nodes), each cut into one subregion per superpiece (rp_private,
// rp_shared); rp_ghost is the image of each superpiece's ghost range, the
// shared nodes of other superpieces its wires reach.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common.h"
#include "legion.h"

using namespace Legion;
using namespace mapwright_apps;

namespace {

enum TaskIDs {
  TOPLEVEL = 1,
  PARSE_INPUT,
  INIT_PIECE,
  INIT_NODES,
  INIT_WIRES,
  CREATE_GHOST_PARTITION,
  INIT_POINTERS,
  CALCULATE_NEW_CURRENTS,
  DISTRIBUTE_CHARGE,
  UPDATE_VOLTAGES,
  GET_ELAPSED,
  PRINT_SUMMARY,
};

enum NodeFields { NODE_CAP = 100, LEAKAGE, CHARGE, NODE_VOLTAGE };
enum WireFields {
  IN_PTR = 200,
  IN_INDEX,
  OUT_PTR,
  OUT_INDEX,
  INDUCTANCE,
  RESISTANCE,
  WIRE_CAP,
  CURRENT_0,                   // current._0 .. current._9
  VOLTAGE_0 = CURRENT_0 + 10,  // voltage._0 .. voltage._8
};
enum RangeFields { RECT = 400 };

const int kSegments = 10;
const float kDt = 1e-6f;

// Where a wire's end lies (the multi-region pointer's __index).
enum Where : int8_t { PRIVATE = 0, SHARED = 1, GHOST = 2 };

struct Config {
  long pieces, pieces_per_superpiece, nodes_per_piece, wires_per_piece;
  long loops, prune, steps, pct_wire_in_piece, shared_per_piece, seed;
  int loop;  // the current loop (calculate_new_currents, update_voltages)

  long superpieces() const { return pieces / pieces_per_superpiece; }
  long private_per_piece() const { return nodes_per_piece - shared_per_piece; }
  long total_private() const { return pieces * private_per_piece(); }
  long total_nodes() const { return pieces * nodes_per_piece; }
  long total_wires() const { return pieces * wires_per_piece; }
  // Global ids of piece g's j-th node (private nodes first).
  long node_id(long g, long j) const {
    return j < private_per_piece()
               ? g * private_per_piece() + j
               : total_private() + g * shared_per_piece + (j - private_per_piece());
  }
  long shared_id(long g, long j) const { return total_private() + g * shared_per_piece + j; }
};

Config read_config() {
  Flags f;
  Config c{};
  c.pieces = f.get("-p", 40);
  c.pieces_per_superpiece = f.get("-pps", 10);
  c.nodes_per_piece = f.get("-npp", 500);
  c.wires_per_piece = f.get("-wpp", 2000);
  c.loops = f.get("-l", 10);
  c.prune = f.get("-prune", 2);
  c.steps = f.get("-steps", 100);
  c.pct_wire_in_piece = f.get("-pct_wire_in_piece", 80);
  c.shared_per_piece = std::max(1L, c.nodes_per_piece * f.get("-pct_shared", 1) / 100);
  c.seed = f.get("-seed", 12345);
  if (c.pieces_per_superpiece <= 0 || c.pieces % c.pieces_per_superpiece != 0 ||
      c.nodes_per_piece <= c.shared_per_piece || c.wires_per_piece <= 0 || c.loops <= 0) {
    std::fprintf(stderr, "circuit: -p must be a multiple of -pps, -npp above the shared nodes\n");
    std::exit(2);
  }
  return c;
}

// The random draws, shared by the tasks and the sequential check.
struct Draws {
  const Config &c;
  double at(uint64_t stream, uint64_t i) const { return uniform(uint64_t(c.seed), stream, i); }
  float node_cap(long n) const { return float(at(1, n) + 1.0); }
  float leakage(long n) const { return float(at(2, n) * 0.1); }
  float voltage(long n) const { return float(2.0 * at(3, n) - 1.0); }
  // As Legion's circuit example: inductance on the order of 1e-3 * dt
  // (larger values make the explicit update resonate).
  float inductance(long w) const { return float((at(4, w) + 0.1) * double(kDt) * 1e-3); }
  float resistance(long w) const { return float(at(5, w) * 10.0 + 1.0); }
  float wire_cap(long w) const { return float(at(6, w) * 0.1 + 1e-3); }
  long in_node(long g, long w) const { return c.node_id(g, long(at(7, w) * c.nodes_per_piece)); }
  // A wire ends in its own piece, or on a shared node of one of the pieces
  // within 3 on either side (num_neighbors 5, window 3 in the Regent code).
  long out_node(long g, long w) const {
    if (at(8, w) * 100.0 < double(c.pct_wire_in_piece))
      return c.node_id(g, long(at(9, w) * c.nodes_per_piece));
    long offsets[] = {-3, -2, -1, 1, 2, 3};
    long other = (g + offsets[long(at(10, w) * 6)] + c.pieces) % c.pieces;
    return c.shared_id(other, long(at(11, w) * c.shared_per_piece));
  }
};

Config config_of(const Task *task) { return *static_cast<const Config *>(task->args); }

// ---------------------------------------------------------------- tasks

void parse_input_task(const Task *task, const std::vector<PhysicalRegion> &, Context, Runtime *) {
  Config c = config_of(task);
  std::printf(
      "circuit settings: loops=%ld prune=%ld pieces=%ld (pieces/superpiece=%ld) "
      "nodes/piece=%ld (nodes/piece shared=%ld) wires/piece=%ld pct_in_piece=%ld "
      "steps=%ld seed=%ld\n",
      c.loops, c.prune, c.pieces, c.pieces_per_superpiece, c.nodes_per_piece, c.shared_per_piece,
      c.wires_per_piece, c.pct_wire_in_piece, c.steps, c.seed);
  std::printf(
      "Circuit memory usage:\n  Nodes : %10ld * %4zu bytes = %12ld bytes\n"
      "  Wires : %10ld * %4zu bytes = %12ld bytes\n",
      c.total_nodes(), 4 * sizeof(float), c.total_nodes() * long(4 * sizeof(float)),
      c.total_wires(), size_t(106), c.total_wires() * 106L);
}

void init_nodes_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                     Runtime *rt) {
  Config c = config_of(task);
  Draws d{c};
  Writer<float> cap(regions[0], NODE_CAP), leak(regions[0], LEAKAGE), charge(regions[0], CHARGE),
      volt(regions[0], NODE_VOLTAGE);
  Rect<1> r = rect_of(rt, task, 0);
  for (PointInRectIterator<1> p(r); p(); p++) {
    cap[*p] = d.node_cap(p[0]);
    leak[*p] = d.leakage(p[0]);
    charge[*p] = 0.0f;
    volt[*p] = d.voltage(p[0]);
  }
}

void init_wires_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                     Runtime *rt) {
  Config c = config_of(task);
  Draws d{c};
  Rect<1> wires = rect_of(rt, task, 4);
  Rect<1> shared = rect_of(rt, task, 2);
  long s = wires.lo[0] / (c.pieces_per_superpiece * c.wires_per_piece);
  Writer<int64_t> in_ptr(regions[4], IN_PTR), out_ptr(regions[4], OUT_PTR);
  Writer<float> ind(regions[4], INDUCTANCE), res(regions[4], RESISTANCE), cap(regions[4], WIRE_CAP);
  long lo = c.total_nodes(), hi = -1;
  for (PointInRectIterator<1> p(wires); p(); p++) {
    long w = p[0];
    long g = w / c.wires_per_piece;
    in_ptr[*p] = d.in_node(g, w);
    long out = d.out_node(g, w);
    out_ptr[*p] = out;
    if (out >= c.total_private() && !shared.contains(Point<1>(out))) {
      lo = std::min(lo, out);
      hi = std::max(hi, out);
    }
    ind[*p] = d.inductance(w);
    res[*p] = d.resistance(w);
    cap[*p] = d.wire_cap(w);
    for (int i = 0; i < kSegments; i++) {
      Writer<float> cur(regions[4], CURRENT_0 + i);
      cur[*p] = 0.0f;
    }
    for (int i = 0; i < kSegments - 1; i++) {
      Writer<float> v(regions[4], VOLTAGE_0 + i);
      v[*p] = 0.0f;
    }
  }
  Writer<Rect<1>> range(regions[0], RECT);
  range[Point<1>(s)] = hi >= lo ? Rect<1>(lo, hi) : Rect<1>(1, 0);
}

void init_piece_task(const Task *task, const std::vector<PhysicalRegion> &, Context ctx,
                     Runtime *rt) {
  // Inner: launches init_nodes on the private and the shared nodes, and
  // init_wires, with this task's regions as their parents.
  TaskArgument args(task->args, task->arglen);
  for (unsigned i : {1u, 2u}) {
    LogicalRegion nodes = task->regions[i].region;
    TaskLauncher l(INIT_NODES, args);
    l.add_region_requirement(
        requirement(nodes, LEGION_READ_WRITE, nodes, {NODE_CAP, LEAKAGE, CHARGE, NODE_VOLTAGE}));
    rt->execute_task(ctx, l);
  }
  TaskLauncher l(INIT_WIRES, args);
  LogicalRegion ranges = task->regions[0].region, wires = task->regions[4].region;
  l.add_region_requirement(requirement(ranges, LEGION_READ_WRITE, ranges, {RECT}));
  for (unsigned i : {1u, 2u, 3u}) {
    LogicalRegion r = task->regions[i].region;
    l.add_region_requirement(requirement(r, LEGION_NO_ACCESS, r, {}));
  }
  std::vector<FieldID> wire_fields = {IN_PTR,     IN_INDEX,   OUT_PTR, OUT_INDEX,
                                      INDUCTANCE, RESISTANCE, WIRE_CAP};
  for (int i = 0; i < kSegments; i++) wire_fields.push_back(CURRENT_0 + i);
  for (int i = 0; i < kSegments - 1; i++) wire_fields.push_back(VOLTAGE_0 + i);
  l.add_region_requirement(requirement(wires, LEGION_READ_WRITE, wires, wire_fields));
  rt->execute_task(ctx, l);
}

long create_ghost_partition_task(const Task *task, const std::vector<PhysicalRegion> &regions,
                                 Context, Runtime *rt) {
  // Checks the ghost ranges against all_shared; the image partition itself
  // is issued by the parent (a task cannot hand back a partition it made).
  Rect<1> shared = rect_of(rt, task, 0);
  Reader<Rect<1>> range(regions[1], RECT);
  long ghosts = 0;
  for (PointInRectIterator<1> p(rect_of(rt, task, 1)); p(); p++) {
    Rect<1> r = range[*p];
    if (r.empty()) continue;
    if (!shared.contains(r)) {
      std::fprintf(stderr, "circuit: ghost range of superpiece %lld leaves all_shared\n",
                   (long long)p[0]);
      std::exit(1);
    }
    ghosts += long(r.volume());
  }
  return ghosts;
}

void init_pointers_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                        Runtime *rt) {
  Rect<1> priv = rect_of(rt, task, 0), shared = rect_of(rt, task, 1);
  Writer<int64_t> in_ptr(regions[3], IN_PTR), out_ptr(regions[3], OUT_PTR);
  Writer<int8_t> in_index(regions[3], IN_INDEX), out_index(regions[3], OUT_INDEX);
  auto where = [&](int64_t n) {
    return priv.contains(Point<1>(n)) ? PRIVATE : shared.contains(Point<1>(n)) ? SHARED : GHOST;
  };
  for (PointInRectIterator<1> p(rect_of(rt, task, 3)); p(); p++) {
    in_index[*p] = where(in_ptr[*p]);
    out_index[*p] = where(out_ptr[*p]);
  }
}

// The circuit's three kernels, on plain arrays: the tasks and the
// sequential check call the same code.
struct Wire {
  float ind, res, cap, current[kSegments], voltage[kSegments - 1];
};

void advance_wire(Wire &w, float in_v, float out_v, long steps) {
  float temp_v[kSegments + 1], temp_i[kSegments], old_i[kSegments], old_v[kSegments - 1];
  temp_v[0] = in_v;
  temp_v[kSegments] = out_v;
  for (int i = 0; i < kSegments; i++) temp_i[i] = old_i[i] = w.current[i];
  for (int i = 0; i < kSegments - 1; i++) temp_v[i + 1] = old_v[i] = w.voltage[i];
  float recip_dt = 1.0f / kDt, recip_r = 1.0f / w.res, recip_c = 1.0f / w.cap;
  for (long j = 0; j < steps; j++) {
    for (int i = 0; i < kSegments; i++)
      temp_i[i] =
          ((temp_v[i + 1] - temp_v[i]) - w.ind * (temp_i[i] - old_i[i]) * recip_dt) * recip_r;
    for (int i = 0; i < kSegments - 1; i++)
      temp_v[i + 1] = old_v[i] + kDt * (temp_i[i] - temp_i[i + 1]) * recip_c;
  }
  for (int i = 0; i < kSegments; i++) w.current[i] = temp_i[i];
  for (int i = 0; i < kSegments - 1; i++) w.voltage[i] = temp_v[i + 1];
}

float update_node(float &charge, float &voltage, float cap, float leakage) {
  voltage = (voltage + charge / cap) * (1.0f - leakage);
  charge = 0.0f;
  return voltage;
}

void calculate_new_currents_task(const Task *task, const std::vector<PhysicalRegion> &regions,
                                 Context, Runtime *rt) {
  Config c = config_of(task);
  if (c.loop == c.prune) {
    stamp(regions[5], TIME_START, task->index_point[0]);
  }
  Reader<float> pv(regions[0], NODE_VOLTAGE), sv(regions[1], NODE_VOLTAGE),
      gv(regions[2], NODE_VOLTAGE);
  Reader<int64_t> in_ptr(regions[3], IN_PTR), out_ptr(regions[3], OUT_PTR);
  Reader<int8_t> in_index(regions[3], IN_INDEX), out_index(regions[3], OUT_INDEX);
  Reader<float> ind(regions[3], INDUCTANCE), res(regions[3], RESISTANCE), cap(regions[3], WIRE_CAP);
  std::vector<Writer<float>> cur, volt;
  for (int i = 0; i < kSegments; i++) cur.emplace_back(regions[4], CURRENT_0 + i);
  for (int i = 0; i < kSegments - 1; i++) volt.emplace_back(regions[4], VOLTAGE_0 + i);
  auto voltage = [&](int8_t where, int64_t n) {
    Point<1> p(n);
    return where == PRIVATE ? pv[p] : where == SHARED ? sv[p] : gv[p];
  };
  for (PointInRectIterator<1> p(rect_of(rt, task, 3)); p(); p++) {
    Wire w;
    w.ind = ind[*p];
    w.res = res[*p];
    w.cap = cap[*p];
    for (int i = 0; i < kSegments; i++) w.current[i] = cur[i][*p];
    for (int i = 0; i < kSegments - 1; i++) w.voltage[i] = volt[i][*p];
    advance_wire(w, voltage(in_index[*p], in_ptr[*p]), voltage(out_index[*p], out_ptr[*p]),
                 c.steps);
    for (int i = 0; i < kSegments; i++) cur[i][*p] = w.current[i];
    for (int i = 0; i < kSegments - 1; i++) volt[i][*p] = w.voltage[i];
  }
}

using SumFloat = SumReduction<float>;

void distribute_charge_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                            Runtime *rt) {
  Writer<float> pc(regions[0], CHARGE);
  Reducer<float> sc(regions[1], CHARGE, SumFloat::REDOP_ID),
      gc(regions[2], CHARGE, SumFloat::REDOP_ID);
  Reader<int64_t> in_ptr(regions[3], IN_PTR), out_ptr(regions[3], OUT_PTR);
  Reader<int8_t> in_index(regions[3], IN_INDEX), out_index(regions[3], OUT_INDEX);
  Reader<float> first(regions[3], CURRENT_0), last(regions[3], CURRENT_0 + kSegments - 1);
  auto add = [&](int8_t where, int64_t n, float q) {
    Point<1> p(n);
    if (where == PRIVATE)
      pc[p] = pc[p] + q;
    else if (where == SHARED)
      sc[p] <<= q;
    else
      gc[p] <<= q;
  };
  for (PointInRectIterator<1> p(rect_of(rt, task, 3)); p(); p++) {
    add(in_index[*p], in_ptr[*p], -kDt * first[*p]);
    add(out_index[*p], out_ptr[*p], kDt * last[*p]);
  }
}

double update_voltages_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                            Runtime *rt) {
  Config c = config_of(task);
  double sum = 0.0;
  for (unsigned ro : {0u, 2u}) {
    Reader<float> cap(regions[ro], NODE_CAP), leak(regions[ro], LEAKAGE);
    Writer<float> charge(regions[ro + 1], CHARGE), volt(regions[ro + 1], NODE_VOLTAGE);
    for (PointInRectIterator<1> p(rect_of(rt, task, ro)); p(); p++) {
      float q = charge[*p], v = volt[*p];
      sum += update_node(q, v, cap[*p], leak[*p]);
      charge[*p] = q;
      volt[*p] = v;
    }
  }
  if (c.loop == c.loops + c.prune - 1) {
    stamp(regions[4], TIME_STOP, task->index_point[0]);
  }
  return sum;
}

double get_elapsed_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                        Runtime *rt) {
  return time_span(rt, task, regions, 0);
}

struct Summary {
  double elapsed, gflops;
};

void print_summary_task(const Task *task, const std::vector<PhysicalRegion> &, Context, Runtime *) {
  if (task->index_point[0] != 0) return;
  const Summary *s = static_cast<const Summary *>(task->args);
  std::printf("ELAPSED TIME = %7.3f s\n", s->elapsed);
  std::printf("GFLOPS = %7.3f GFLOPS\n", s->gflops);
  std::fflush(stdout);
}

// The same circuit computed sequentially on plain arrays: the sum of the
// node voltages after the last loop, which the run must reproduce.
double sequential_voltage_sum(const Config &c) {
  Draws d{c};
  long nodes = c.total_nodes(), wires = c.total_wires();
  std::vector<float> cap(nodes), leak(nodes), charge(nodes, 0.0f), volt(nodes);
  for (long n = 0; n < nodes; n++) {
    cap[n] = d.node_cap(n);
    leak[n] = d.leakage(n);
    volt[n] = d.voltage(n);
  }
  std::vector<Wire> ws(wires);
  std::vector<long> in(wires), out(wires);
  for (long w = 0; w < wires; w++) {
    long g = w / c.wires_per_piece;
    in[w] = d.in_node(g, w);
    out[w] = d.out_node(g, w);
    ws[w] = Wire{d.inductance(w), d.resistance(w), d.wire_cap(w), {}, {}};
  }
  double sum = 0.0;
  for (long loop = 0; loop < c.loops + 2 * c.prune; loop++) {
    for (long w = 0; w < wires; w++) advance_wire(ws[w], volt[in[w]], volt[out[w]], c.steps);
    for (long w = 0; w < wires; w++) {
      charge[in[w]] += -kDt * ws[w].current[0];
      charge[out[w]] += kDt * ws[w].current[kSegments - 1];
    }
    sum = 0.0;
    for (long n = 0; n < nodes; n++) sum += update_node(charge[n], volt[n], cap[n], leak[n]);
  }
  return sum;
}

// ---------------------------------------------------------------- top level

LogicalRegion make_region(Runtime *rt, Context ctx, long size, FieldSpace fs, const char *name) {
  return named_region(rt, ctx, Rect<1>(0, size - 1), fs, name);
}

void toplevel_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Config c = read_config();
  long sp = c.superpieces();
  Flags flags;

  FieldSpace node_fs = rt->create_field_space(ctx);
  {
    FieldAllocator a = rt->create_field_allocator(ctx, node_fs);
    for (FieldID f : {NODE_CAP, LEAKAGE, CHARGE, NODE_VOLTAGE}) a.allocate_field(sizeof(float), f);
    name_fields(rt, node_fs,
                {{NODE_CAP, "node_cap"},
                 {LEAKAGE, "leakage"},
                 {CHARGE, "charge"},
                 {NODE_VOLTAGE, "node_voltage"}});
  }
  FieldSpace wire_fs = rt->create_field_space(ctx);
  {
    FieldAllocator a = rt->create_field_allocator(ctx, wire_fs);
    a.allocate_field(sizeof(int64_t), IN_PTR);
    a.allocate_field(sizeof(int8_t), IN_INDEX);
    a.allocate_field(sizeof(int64_t), OUT_PTR);
    a.allocate_field(sizeof(int8_t), OUT_INDEX);
    std::vector<std::pair<FieldID, std::string>> names = {
        {IN_PTR, "in_ptr.__ptr"},       {IN_INDEX, "in_ptr.__index"}, {OUT_PTR, "out_ptr.__ptr"},
        {OUT_INDEX, "out_ptr.__index"}, {INDUCTANCE, "inductance"},   {RESISTANCE, "resistance"},
        {WIRE_CAP, "wire_cap"}};
    for (FieldID f : {INDUCTANCE, RESISTANCE, WIRE_CAP}) a.allocate_field(sizeof(float), f);
    for (int i = 0; i < kSegments; i++) {
      a.allocate_field(sizeof(float), CURRENT_0 + i);
      names.push_back({FieldID(CURRENT_0 + i), "current._" + std::to_string(i)});
    }
    for (int i = 0; i < kSegments - 1; i++) {
      a.allocate_field(sizeof(float), VOLTAGE_0 + i);
      names.push_back({FieldID(VOLTAGE_0 + i), "voltage._" + std::to_string(i)});
    }
    name_fields(rt, wire_fs, names);
  }
  FieldSpace time_fs = time_field_space(rt, ctx);
  FieldSpace range_fs = rt->create_field_space(ctx);
  {
    FieldAllocator a = rt->create_field_allocator(ctx, range_fs);
    a.allocate_field(sizeof(Rect<1>), RECT);
    name_fields(rt, range_fs, {{RECT, "rect"}});
  }

  LogicalRegion all_nodes = make_region(rt, ctx, c.total_nodes(), node_fs, "all_nodes");
  LogicalRegion all_wires = make_region(rt, ctx, c.total_wires(), wire_fs, "all_wires");
  LogicalRegion all_times = make_region(rt, ctx, sp, time_fs, "all_times");
  LogicalRegion ghost_ranges = make_region(rt, ctx, sp, range_fs, "ghost_ranges");
  for (LogicalRegion r : {all_nodes, all_wires, all_times, ghost_ranges}) fill_zero(rt, ctx, r);

  // all_nodes = all_private | all_shared (partition rp_all_nodes).
  IndexSpace halves = rt->create_index_space(ctx, Rect<1>(0, 1));
  std::map<DomainPoint, Domain> split;
  split[DomainPoint(Point<1>(0))] = Domain(Rect<1>(0, c.total_private() - 1));
  split[DomainPoint(Point<1>(1))] = Domain(Rect<1>(c.total_private(), c.total_nodes() - 1));
  IndexPartition ip_all = rt->create_partition_by_domain(
      ctx, all_nodes.get_index_space(), split, halves, true, LEGION_DISJOINT_COMPLETE_KIND);
  LogicalPartition rp_all_nodes = rt->get_logical_partition(all_nodes, ip_all);
  rt->attach_name(rp_all_nodes, "rp_all_nodes");
  LogicalRegion all_private = rt->get_logical_subregion_by_color(rp_all_nodes, 0);
  LogicalRegion all_shared = rt->get_logical_subregion_by_color(rp_all_nodes, 1);
  rt->attach_name(all_private, "all_private");
  rt->attach_name(all_shared, "all_shared");

  IndexSpace colors = rt->create_index_space(ctx, Rect<1>(0, sp - 1));
  auto equal = [&](LogicalRegion parent, const char *name) {
    IndexPartition ip = rt->create_equal_partition(ctx, parent.get_index_space(), colors);
    LogicalPartition lp = rt->get_logical_partition(parent, ip);
    rt->attach_name(lp, name);
    return lp;
  };
  LogicalPartition rp_private = equal(all_private, "rp_private");
  LogicalPartition rp_shared = equal(all_shared, "rp_shared");
  LogicalPartition rp_wires = equal(all_wires, "rp_wires");
  LogicalPartition rp_times = equal(all_times, "rp_times");
  LogicalPartition rp_ghost_ranges = equal(ghost_ranges, "rp_ghost_ranges");

  TaskArgument conf(&c, sizeof(c));
  rt->execute_task(ctx, TaskLauncher(PARSE_INPUT, conf));

  std::vector<FieldID> wire_fields = {IN_PTR,     IN_INDEX,   OUT_PTR, OUT_INDEX,
                                      INDUCTANCE, RESISTANCE, WIRE_CAP};
  for (int i = 0; i < kSegments; i++) wire_fields.push_back(CURRENT_0 + i);
  for (int i = 0; i < kSegments - 1; i++) wire_fields.push_back(VOLTAGE_0 + i);
  std::vector<FieldID> node_fields = {NODE_CAP, LEAKAGE, CHARGE, NODE_VOLTAGE};
  Domain launch = Domain(Rect<1>(0, sp - 1));
  {
    IndexLauncher l(INIT_PIECE, launch, conf, ArgumentMap());
    l.add_region_requirement(requirement(rp_ghost_ranges, LEGION_READ_WRITE, ghost_ranges, {RECT}));
    l.add_region_requirement(requirement(rp_private, LEGION_READ_WRITE, all_nodes, node_fields));
    l.add_region_requirement(requirement(rp_shared, LEGION_READ_WRITE, all_nodes, node_fields));
    RegionRequirement none(all_shared, 0, LEGION_NO_ACCESS, LEGION_EXCLUSIVE, all_nodes);
    l.add_region_requirement(none);
    l.add_region_requirement(requirement(rp_wires, LEGION_READ_WRITE, all_wires, wire_fields));
    rt->execute_index_space(ctx, l);
  }
  {
    TaskLauncher l(CREATE_GHOST_PARTITION, conf);
    l.add_region_requirement(requirement(all_shared, LEGION_NO_ACCESS, all_nodes, {}));
    l.add_region_requirement(requirement(ghost_ranges, LEGION_READ_ONLY, ghost_ranges, {RECT}));
    rt->execute_task(ctx, l).get_void_result();
  }
  IndexPartition ip_ghost = rt->create_partition_by_image_range(
      ctx, all_shared.get_index_space(), rp_ghost_ranges, ghost_ranges, RECT, colors,
      LEGION_ALIASED_INCOMPLETE_KIND);
  LogicalPartition rp_ghost = rt->get_logical_partition(all_shared, ip_ghost);
  rt->attach_name(rp_ghost, "rp_ghost");
  {
    IndexLauncher l(INIT_POINTERS, launch, conf, ArgumentMap());
    l.add_region_requirement(requirement(rp_private, LEGION_NO_ACCESS, all_nodes, {}));
    l.add_region_requirement(requirement(rp_shared, LEGION_NO_ACCESS, all_nodes, {}));
    l.add_region_requirement(requirement(rp_ghost, LEGION_NO_ACCESS, all_nodes, {}));
    l.add_region_requirement(requirement(rp_wires, LEGION_READ_WRITE, all_wires,
                                         {IN_PTR, IN_INDEX, OUT_PTR, OUT_INDEX}));
    rt->execute_index_space(ctx, l);
  }

  std::vector<FieldID> currents_and_voltages(wire_fields.begin() + 7, wire_fields.end());
  FutureMap last;
  for (long loop = 0; loop < c.loops + 2 * c.prune; loop++) {
    Config at = c;
    at.loop = int(loop);
    TaskArgument arg(&at, sizeof(at));
    {
      IndexLauncher l(CALCULATE_NEW_CURRENTS, launch, arg, ArgumentMap());
      l.add_region_requirement(
          requirement(rp_private, LEGION_READ_ONLY, all_nodes, {NODE_VOLTAGE}));
      l.add_region_requirement(requirement(rp_shared, LEGION_READ_ONLY, all_nodes, {NODE_VOLTAGE}));
      l.add_region_requirement(requirement(rp_ghost, LEGION_READ_ONLY, all_nodes, {NODE_VOLTAGE}));
      l.add_region_requirement(
          requirement(rp_wires, LEGION_READ_ONLY, all_wires,
                      {IN_PTR, IN_INDEX, OUT_PTR, OUT_INDEX, INDUCTANCE, RESISTANCE, WIRE_CAP}));
      l.add_region_requirement(
          requirement(rp_wires, LEGION_READ_WRITE, all_wires, currents_and_voltages));
      l.add_region_requirement(
          requirement(rp_times, LEGION_READ_WRITE, all_times, {TIME_START, TIME_STOP}));
      rt->execute_index_space(ctx, l);
    }
    {
      IndexLauncher l(DISTRIBUTE_CHARGE, launch, arg, ArgumentMap());
      l.add_region_requirement(requirement(rp_private, LEGION_READ_WRITE, all_nodes, {CHARGE}));
      l.add_region_requirement(reduction(rp_shared, SumFloat::REDOP_ID, all_nodes, {CHARGE}));
      l.add_region_requirement(reduction(rp_ghost, SumFloat::REDOP_ID, all_nodes, {CHARGE}));
      l.add_region_requirement(requirement(
          rp_wires, LEGION_READ_ONLY, all_wires,
          {IN_PTR, IN_INDEX, OUT_PTR, OUT_INDEX, CURRENT_0, FieldID(CURRENT_0 + kSegments - 1)}));
      rt->execute_index_space(ctx, l);
    }
    {
      IndexLauncher l(UPDATE_VOLTAGES, launch, arg, ArgumentMap());
      l.add_region_requirement(
          requirement(rp_private, LEGION_READ_ONLY, all_nodes, {NODE_CAP, LEAKAGE}));
      l.add_region_requirement(
          requirement(rp_private, LEGION_READ_WRITE, all_nodes, {CHARGE, NODE_VOLTAGE}));
      l.add_region_requirement(
          requirement(rp_shared, LEGION_READ_ONLY, all_nodes, {NODE_CAP, LEAKAGE}));
      l.add_region_requirement(
          requirement(rp_shared, LEGION_READ_WRITE, all_nodes, {CHARGE, NODE_VOLTAGE}));
      l.add_region_requirement(
          requirement(rp_times, LEGION_READ_WRITE, all_times, {TIME_START, TIME_STOP}));
      last = rt->execute_index_space(ctx, l);
    }
  }

  TaskLauncher elapsed_launcher(GET_ELAPSED, conf);
  elapsed_launcher.add_region_requirement(
      requirement(all_times, LEGION_READ_ONLY, all_times, {TIME_START, TIME_STOP}));
  double elapsed = rt->execute_task(ctx, elapsed_launcher).get_result<double>();
  double flops = (double(c.total_wires()) * (10 * 6 + 9 * 4) * double(c.steps) +
                  double(c.total_wires()) * 4 + double(c.total_nodes()) * 4) *
                 double(c.loops);
  Summary s{elapsed, elapsed > 0 ? flops * 1e-9 / elapsed : 0.0};
  rt->execute_index_space(
        ctx, IndexLauncher(PRINT_SUMMARY, launch, TaskArgument(&s, sizeof(s)), ArgumentMap()))
      .wait_all_results();

  if (flags.get("-check", 1) != 0) {
    double got = 0.0;
    for (long p = 0; p < sp; p++) got += last.get_result<double>(DomainPoint(Point<1>(p)));
    double want = sequential_voltage_sum(c);
    double err = std::fabs(got - want) / std::max(1.0, std::fabs(want));
    if (!(err <= 1e-3)) {  // NaN fails too
      std::fprintf(stderr, "circuit: CHECK FAILED: sum of node voltages %.6f, expected %.6f\n", got,
                   want);
      std::exit(1);
    }
    std::printf("CHECK PASSED: sum of node voltages %.6f (sequential %.6f)\n", got, want);
  }
}

}  // namespace

int main(int argc, char **argv) {
  cpu_task<toplevel_task>(TOPLEVEL, "toplevel", true);
  cpu_task<parse_input_task>(PARSE_INPUT, "parse_input");
  cpu_task<init_piece_task>(INIT_PIECE, "init_piece", true);
  cpu_task<init_nodes_task>(INIT_NODES, "init_nodes");
  cpu_task<init_wires_task>(INIT_WIRES, "init_wires");
  cpu_task<long, create_ghost_partition_task>(CREATE_GHOST_PARTITION, "create_ghost_partition");
  cpu_task<init_pointers_task>(INIT_POINTERS, "init_pointers");
  cpu_task<calculate_new_currents_task>(CALCULATE_NEW_CURRENTS, "calculate_new_currents");
  cpu_task<distribute_charge_task>(DISTRIBUTE_CHARGE, "distribute_charge");
  cpu_task<double, update_voltages_task>(UPDATE_VOLTAGES, "update_voltages");
  cpu_task<double, get_elapsed_task>(GET_ELAPSED, "get_elapsed");
  cpu_task<print_summary_task>(PRINT_SUMMARY, "print_summary");
  register_mapper_if_asked(TOPLEVEL, argc, argv);
  return Runtime::start(argc, argv);
}

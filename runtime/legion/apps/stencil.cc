// stencil as a real Legion program: the Regent radius-2 star stencil
// (stencil_fast.rg) with its task names, region names, argument order,
// privileges and launch kinds (runtime/apps/stencil.json), CPU variants
// doing the real computation, a result check, and its output
// ("ELAPSED TIME = %7.3f s" from print_time point 0).
//
// The grid of points is bloated by a radius-wide border around each of the
// ntx x nty tiles (private); interior is a tile without its border, exterior
// the tile without the borders it shares with other tiles. Each step,
// increment adds 1 to the exterior and to the tile's four outgoing ghost
// strips (pxm_out ... in the separate regions xm, xp, ym, yp), and stencil
// copies the strips its neighbours wrote (pxm_in ...) into its border, then
// adds the star stencil of the input to the output over the interior.
//
// Like Regent's generated code, every task reaches a 2-D field through its
// base pointer and strides, and stops with Regent's message when x is not
// the fastest dimension with a stride of one field ("assertion failed:
// stride does not match expected value"): a C_order layout fails.
//
// Deviation, for a check that sees the stencil: Regent fills every point
// with -init; here the input starts as a field with a step every 4 columns
// and between tiles (`initial`; the strips hold what the neighbour's points
// hold), and the output over the interior must equal init + steps * (star
// stencil of the initial field) at every point, which a missing or stale
// ghost strip or a skipped point breaks.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "common.h"
#include "legion.h"

using namespace Legion;
using namespace mapwright_apps;

namespace {

enum TaskIDs {
  MAIN = 1,
  READ_CONFIG,
  MAKE_PRIVATE_PARTITION,
  MAKE_INTERIOR_PARTITION,
  MAKE_EXTERIOR_PARTITION,
  GHOST_X_PARTITION,
  GHOST_Y_PARTITION,
  STENCIL,
  INCREMENT,
  CHECK,
  GET_ELAPSED,
  PRINT_TIME,
};

enum PointFields { INPUT = 100, OUTPUT };

const coord_t kRadius = 2;

struct Config {
  long nx, ny, ntx, nty, tsteps, tprune, init;
  long t;   // the current step (stencil, increment)
  int dir;  // ghost partitions: -1, 0 or +1

  long tiles() const { return ntx * nty; }
  long steps() const { return tsteps + 2 * tprune; }
  // The grid without its outer border, and with a border around each tile.
  coord_t n(int d) const { return (d == 0 ? nx : ny) - 2 * kRadius; }
  coord_t nt(int d) const { return d == 0 ? ntx : nty; }
  coord_t npoints(int d) const { return n(d) + nt(d) * 2 * kRadius; }
};

Config read_flags() {
  Flags f;
  Config c{};
  c.nx = f.get("-nx", 2000);
  c.ny = f.get("-ny", 2000);
  c.ntx = f.get("-ntx", 2);
  c.nty = f.get("-nty", 2);
  c.tsteps = f.get("-tsteps", 20);
  c.tprune = f.get("-tprune", 5);
  c.init = f.get("-init", 1000);
  if (c.ntx <= 0 || c.nty <= 0 || c.n(0) < c.ntx * kRadius || c.n(1) < c.nty * kRadius ||
      c.tsteps <= 0 || c.tprune < 0) {
    std::fprintf(stderr, "stencil: grid too small for the tiles, or no steps\n");
    std::exit(2);
  }
  return c;
}

Config config_of(const Task *task) { return *static_cast<const Config *>(task->args); }

// ---------------------------------------------------------------- geometry

// Tile i's coordinates in the ntx x nty grid of tiles.
long tile_x(const Config &c, long i) { return i % c.ntx; }
long tile_y(const Config &c, long i) { return i / c.ntx; }

// The partitions of stencil_fast.rg, one rectangle per tile.
enum class Part { PRIVATE, INTERIOR, EXTERIOR, GHOST_X, GHOST_Y };

Rect<2> tile_rect(const Config &c, Part part, long i) {
  coord_t ix = tile_x(c, i), iy = tile_y(c, i), r = kRadius;
  coord_t px = c.npoints(0), py = c.npoints(1), nx = c.n(0), ny = c.n(1);
  auto clamp = [](coord_t v, coord_t lo, coord_t hi) { return std::min(std::max(v, lo), hi); };
  switch (part) {
    case Part::PRIVATE:
      return Rect<2>(Point<2>(ix * px / c.ntx, iy * py / c.nty),
                     Point<2>((ix + 1) * px / c.ntx - 1, (iy + 1) * py / c.nty - 1));
    case Part::INTERIOR:
      return Rect<2>(Point<2>(ix * px / c.ntx + r, iy * py / c.nty + r),
                     Point<2>((ix + 1) * px / c.ntx - 1 - r, (iy + 1) * py / c.nty - 1 - r));
    case Part::EXTERIOR: {
      coord_t lx = ix == 0 ? 0 : r, ly = iy == 0 ? 0 : r;
      coord_t hx = ix == c.ntx - 1 ? 0 : r, hy = iy == c.nty - 1 ? 0 : r;
      return Rect<2>(Point<2>(ix * px / c.ntx + lx, iy * py / c.nty + ly),
                     Point<2>((ix + 1) * px / c.ntx - 1 - hx, (iy + 1) * py / c.nty - 1 - hy));
    }
    case Part::GHOST_X:
      return Rect<2>(
          Point<2>(clamp((ix + c.dir) * r, 0, c.ntx * r), iy * ny / c.nty),
          Point<2>(clamp((ix + 1 + c.dir) * r - 1, -1, c.ntx * r - 1), (iy + 1) * ny / c.nty - 1));
    case Part::GHOST_Y:
      return Rect<2>(
          Point<2>(ix * nx / c.ntx, clamp((iy + c.dir) * r, 0, c.nty * r)),
          Point<2>((ix + 1) * nx / c.ntx - 1, clamp((iy + 1 + c.dir) * r - 1, -1, c.nty * r - 1)));
  }
  return Rect<2>();
}

std::map<DomainPoint, Domain> coloring(const Config &c, Part part) {
  std::map<DomainPoint, Domain> m;
  for (long i = 0; i < c.tiles(); i++) m[DomainPoint(Point<1>(i))] = Domain(tile_rect(c, part, i));
  return m;
}

// The partition-building tasks compute their coloring (the parent makes the
// partition from the same coloring) and return its volume.
long coloring_volume(const Config &c, Part part) {
  long v = 0;
  for (const auto &e : coloring(c, part)) v += long(e.second.get_volume());
  return v;
}

// ---------------------------------------------------------------- the field

// Tile index of physical coordinate x along dimension d (the outer border
// belongs to the edge tiles).
long tile_along(const Config &c, int d, coord_t x) {
  for (long t = 0; t < c.nt(d); t++)
    if (x < (t + 1) * c.n(d) / c.nt(d)) return t;
  return c.nt(d) - 1;
}

// The initial input at physical point (x, y) (interior points are 0 ..
// n-1 along each dimension): init, plus the index of the tile the point
// lies in, plus x's stripe of kStripe columns, so that every point's star
// (radius 2) crosses a step and the stencil changes every output.
const coord_t kStripe = 4;

coord_t floor_div(coord_t a, coord_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

double initial(const Config &c, coord_t x, coord_t y) {
  return double(c.init + tile_along(c, 1, y) * c.ntx + tile_along(c, 0, x) + floor_div(x, kStripe));
}

// Physical x minus grid x in what tile i owns of region o (0 points, 1 xm,
// 2 xp, 3 ym, 4 yp): the tile's own columns, its last radius columns (xm:
// what tile i+1 reads), its first radius columns (xp), or the same x (ym,
// yp span the tiles' widths).
coord_t physical_x_offset(const Config &c, int o, long i) {
  coord_t ix = tile_x(c, i), r = kRadius, w0 = ix * c.n(0) / c.ntx, w1 = (ix + 1) * c.n(0) / c.ntx;
  switch (o) {
    case 0:
      return -r - 2 * r * ix;
    case 1:
      return w1 - r - ix * r;
    case 2:
      return w0 - ix * r;
    default:
      return 0;
  }
}

// The star stencil's weights: +1/(2 i r) at +i, -1/(2 i r) at -i.
double weight(coord_t i) { return 1.0 / double(2 * i * kRadius); }

// The output a correct run leaves at physical interior point (x, y).
double expected_output(const Config &c, coord_t x, coord_t y) {
  double s = 0.0;
  for (coord_t i = 1; i <= kRadius; i++)
    s += weight(i) * (initial(c, x + i, y) - initial(c, x - i, y) + initial(c, x, y + i) -
                      initial(c, x, y - i));
  return double(c.init) + double(c.steps()) * s;
}

// ---------------------------------------------------------------- fields as Regent reaches them

[[noreturn]] void regent_assertion_failed(const char *message) {
  std::fprintf(stderr, "assertion failed: %s\n", message);
  std::fflush(stderr);
  std::abort();
}

void regent_assert(bool holds, const char *message) {
  if (!holds) regent_assertion_failed(message);
}

// A 2-D double field over `rect` through its base pointer and strides, as
// Regent's generated code reaches it: the instance must cover the rectangle
// and have x fastest with a stride of one field.
template <PrivilegeMode PM>
struct Field2 {
  using Elem = std::conditional_t<PM == LEGION_READ_ONLY, const double, double>;
  Elem *base = nullptr;
  size_t y_stride = 0;  // in elements
  Point<2> lo;

  Field2(const PhysicalRegion &region, FieldID fid, Rect<2> rect) : lo(rect.lo) {
    FieldAccessor<PM, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>> acc(region,
                                                                                         fid);
    size_t strides[2];
    base = acc.ptr(rect, strides, 1);  // byte strides
    regent_assert(base != nullptr, "base pointer is nil");
    regent_assert(strides[0] == sizeof(double), "stride does not match expected value");
    y_stride = strides[1] / sizeof(double);
  }
  Elem &operator[](Point<2> p) const {
    return base[(p[0] - lo[0]) + (p[1] - lo[1]) * coord_t(y_stride)];
  }
};

// ---------------------------------------------------------------- tasks

void read_config_task(const Task *task, const std::vector<PhysicalRegion> &, Context, Runtime *) {
  Config c = config_of(task);
  std::printf("stencil settings: nx=%ld ny=%ld ntx=%ld nty=%ld tsteps=%ld tprune=%ld init=%ld\n",
              c.nx, c.ny, c.ntx, c.nty, c.tsteps, c.tprune, c.init);
}

template <Part PART>
long partition_task(const Task *task, const std::vector<PhysicalRegion> &, Context, Runtime *) {
  return coloring_volume(config_of(task), PART);
}

void stencil_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                  Runtime *rt) {
  Config c = config_of(task);
  coord_t i = task->index_point[0];
  if (c.t == c.tprune) stamp(regions[6], TIME_START, i);
  Rect<2> rect = rect_of<2>(rt, task, 0), interior = rect_of<2>(rt, task, 1);
  Field2<LEGION_READ_WRITE> in(regions[0], INPUT, rect), out(regions[0], OUTPUT, rect);
  regent_assert(in.y_stride == out.y_stride, "strides do not match");
  // The neighbours' strips into this tile's border: x- and y- below the
  // interior, x+ and y+ above it.
  const Point<2> to[4] = {
      interior.lo + Point<2>(-kRadius, 0), Point<2>(interior.hi[0] + 1, interior.lo[1]),
      interior.lo + Point<2>(0, -kRadius), Point<2>(interior.lo[0], interior.hi[1] + 1)};
  const unsigned strip[4] = {2, 3, 4, 5};  // pxm_in, pxp_in, pym_in, pyp_in
  for (int s = 0; s < 4; s++) {
    Rect<2> g = rect_of<2>(rt, task, strip[s]);
    if (g.empty()) continue;
    Field2<LEGION_READ_ONLY> ghost(regions[strip[s]], INPUT, g);
    for (PointInRectIterator<2> p(g); p(); p++) in[*p - g.lo + to[s]] = ghost[*p];
  }
  for (coord_t y = interior.lo[1]; y <= interior.hi[1]; y++)
    for (coord_t x = interior.lo[0]; x <= interior.hi[0]; x++) {
      double s = 0.0;
      for (coord_t k = 1; k <= kRadius; k++)
        s += weight(k) * (in[Point<2>(x + k, y)] - in[Point<2>(x - k, y)] + in[Point<2>(x, y + k)] -
                          in[Point<2>(x, y - k)]);
      out[Point<2>(x, y)] += s;
    }
}

void increment_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                    Runtime *rt) {
  Config c = config_of(task);
  coord_t i = task->index_point[0];
  Rect<2> exterior = rect_of<2>(rt, task, 1);
  Field2<LEGION_READ_WRITE> in(regions[0], INPUT, rect_of<2>(rt, task, 0));
  for (PointInRectIterator<2> p(exterior); p(); p++) in[*p] += 1.0;
  for (unsigned s = 2; s <= 5; s++) {  // pxm_out, pxp_out, pym_out, pyp_out
    Rect<2> g = rect_of<2>(rt, task, s);
    if (g.empty()) continue;
    Field2<LEGION_READ_WRITE> ghost(regions[s], INPUT, g);
    for (PointInRectIterator<2> p(g); p(); p++) ghost[*p] += 1.0;
  }
  if (c.t == c.steps() - c.tprune - 1) stamp(regions[6], TIME_STOP, i);
}

// The interior points whose input or output differ from a correct run's.
long check_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                Runtime *rt) {
  Config c = config_of(task);
  long i = long(task->index_point[0]);
  Rect<2> rect = rect_of<2>(rt, task, 0), interior = rect_of<2>(rt, task, 1);
  Field2<LEGION_READ_ONLY> in(regions[0], INPUT, rect), out(regions[0], OUTPUT, rect);
  // Physical coordinates: the interior of tile (ix, iy) starts at
  // (ix * n.x / nt.x, iy * n.y / nt.y).
  coord_t ox = tile_x(c, i) * c.n(0) / c.ntx - interior.lo[0];
  coord_t oy = tile_y(c, i) * c.n(1) / c.nty - interior.lo[1];
  long wrong = 0;
  for (PointInRectIterator<2> p(interior); p(); p++) {
    coord_t x = p[0] + ox, y = p[1] + oy;
    double want_in = initial(c, x, y) + double(c.steps());
    double want_out = expected_output(c, x, y);
    if (in[*p] != want_in || !(std::fabs(out[*p] - want_out) <= 1e-9 * std::fabs(want_out))) {
      if (wrong < 3)
        std::fprintf(stderr, "stencil: point (%lld,%lld): input %.6f output %.6f, want %.6f %.6f\n",
                     (long long)p[0], (long long)p[1], in[*p], out[*p], want_in, want_out);
      wrong++;
    }
  }
  return wrong;
}

double get_elapsed_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                        Runtime *rt) {
  return time_span(rt, task, regions, 0);
}

void print_time_task(const Task *task, const std::vector<PhysicalRegion> &, Context, Runtime *) {
  if (task->index_point[0] != 0) return;
  std::printf("ELAPSED TIME = %7.3f s\n", *static_cast<const double *>(task->args));
  std::fflush(stdout);
}

// ---------------------------------------------------------------- main

void main_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Config c = read_flags();
  Flags flags;
  rt->execute_task(ctx, TaskLauncher(READ_CONFIG, TaskArgument(&c, sizeof(c))));

  FieldSpace point_fs = rt->create_field_space(ctx);
  {
    FieldAllocator a = rt->create_field_allocator(ctx, point_fs);
    a.allocate_field(sizeof(double), INPUT);
    a.allocate_field(sizeof(double), OUTPUT);
    name_fields(rt, point_fs, {{INPUT, "input"}, {OUTPUT, "output"}});
  }
  coord_t r = kRadius;
  LogicalRegion points =
      named_region(rt, ctx, Rect<2>(Point<2>(0, 0), Point<2>(c.npoints(0) - 1, c.npoints(1) - 1)),
                   point_fs, "points");
  Rect<2> x_strips(Point<2>(0, 0), Point<2>(c.ntx * r - 1, c.n(1) - 1));
  Rect<2> y_strips(Point<2>(0, 0), Point<2>(c.n(0) - 1, c.nty * r - 1));
  LogicalRegion xm = named_region(rt, ctx, x_strips, point_fs, "xm");
  LogicalRegion xp = named_region(rt, ctx, x_strips, point_fs, "xp");
  LogicalRegion ym = named_region(rt, ctx, y_strips, point_fs, "ym");
  LogicalRegion yp = named_region(rt, ctx, y_strips, point_fs, "yp");
  LogicalRegion times =
      named_region(rt, ctx, Rect<1>(0, c.tiles() - 1), time_field_space(rt, ctx), "times");
  IndexSpace tiles = rt->create_index_space(ctx, Rect<1>(0, c.tiles() - 1));

  // A partition-building task (NO_ACCESS on the region it colors), then the
  // partition made from the same coloring.
  auto partition = [&](TaskID task, Part part, int dir, LogicalRegion parent, const char *name,
                       PartitionKind kind) {
    Config at = c;
    at.dir = dir;
    TaskLauncher l(task, TaskArgument(&at, sizeof(at)));
    l.add_region_requirement(requirement(parent, LEGION_NO_ACCESS, parent, {}));
    long volume = rt->execute_task(ctx, l).get_result<long>();
    IndexPartition ip = rt->create_partition_by_domain(ctx, parent.get_index_space(),
                                                       coloring(at, part), tiles, true, kind);
    long made = 0;
    for (long i = 0; i < c.tiles(); i++)
      made +=
          long(rt->get_index_space_domain(rt->get_index_subspace(ctx, ip, DomainPoint(Point<1>(i))))
                   .get_volume());
    if (made != volume) {
      std::fprintf(stderr, "stencil: partition %s has %ld points, its task colored %ld\n", name,
                   made, volume);
      std::exit(1);
    }
    LogicalPartition lp = rt->get_logical_partition(parent, ip);
    rt->attach_name(lp, name);
    return lp;
  };
  LogicalPartition private_p = partition(MAKE_PRIVATE_PARTITION, Part::PRIVATE, 0, points,
                                         "private", LEGION_DISJOINT_COMPLETE_KIND);
  LogicalPartition interior_p = partition(MAKE_INTERIOR_PARTITION, Part::INTERIOR, 0, points,
                                          "interior", LEGION_DISJOINT_INCOMPLETE_KIND);
  LogicalPartition exterior_p = partition(MAKE_EXTERIOR_PARTITION, Part::EXTERIOR, 0, points,
                                          "exterior", LEGION_DISJOINT_INCOMPLETE_KIND);
  auto aliased = LEGION_ALIASED_INCOMPLETE_KIND;
  LogicalPartition pxm_in = partition(GHOST_X_PARTITION, Part::GHOST_X, -1, xm, "pxm_in", aliased);
  LogicalPartition pxp_in = partition(GHOST_X_PARTITION, Part::GHOST_X, 1, xp, "pxp_in", aliased);
  LogicalPartition pym_in = partition(GHOST_Y_PARTITION, Part::GHOST_Y, -1, ym, "pym_in", aliased);
  LogicalPartition pyp_in = partition(GHOST_Y_PARTITION, Part::GHOST_Y, 1, yp, "pyp_in", aliased);
  auto disjoint = LEGION_DISJOINT_COMPLETE_KIND;
  LogicalPartition pxm_out =
      partition(GHOST_X_PARTITION, Part::GHOST_X, 0, xm, "pxm_out", disjoint);
  LogicalPartition pxp_out =
      partition(GHOST_X_PARTITION, Part::GHOST_X, 0, xp, "pxp_out", disjoint);
  LogicalPartition pym_out =
      partition(GHOST_Y_PARTITION, Part::GHOST_Y, 0, ym, "pym_out", disjoint);
  LogicalPartition pyp_out =
      partition(GHOST_Y_PARTITION, Part::GHOST_Y, 0, yp, "pyp_out", disjoint);
  LogicalPartition p_times = rt->get_logical_partition(
      times, rt->create_equal_partition(ctx, times.get_index_space(), tiles));
  rt->attach_name(p_times, "p_times");

  // Fills (operations, not tasks): output init everywhere; the input of
  // the points and strips tile i owns from the initial field, one fill per
  // run of columns on which it is constant.
  const std::pair<LogicalRegion, LogicalPartition> owned[5] = {
      {points, private_p}, {xm, pxm_out}, {xp, pxp_out}, {ym, pym_out}, {yp, pyp_out}};
  for (int o = 0; o < 5; o++) {
    LogicalRegion region = owned[o].first;
    double init = double(c.init);
    FillLauncher out(region, region, TaskArgument(&init, sizeof(init)));
    out.add_field(OUTPUT);
    rt->fill_fields(ctx, out);
    std::map<DomainPoint, Domain> runs;
    std::vector<double> values;
    for (long i = 0; i < c.tiles(); i++) {
      Rect<2> q = rt->get_index_space_domain(
          rt->get_logical_subregion_by_color(owned[o].second, DomainPoint(Point<1>(i)))
              .get_index_space());
      coord_t off = physical_x_offset(c, o, i);
      for (coord_t g = q.lo[0]; g <= q.hi[0];) {
        coord_t stripe = floor_div(g + off, kStripe), end = g;
        while (end < q.hi[0] && floor_div(end + 1 + off, kStripe) == stripe) end++;
        runs[DomainPoint(Point<1>(coord_t(values.size())))] =
            Domain(Rect<2>(Point<2>(g, q.lo[1]), Point<2>(end, q.hi[1])));
        values.push_back(double(c.init + i + stripe));
        g = end + 1;
      }
    }
    IndexSpace colors = rt->create_index_space(ctx, Rect<1>(0, coord_t(values.size()) - 1));
    LogicalPartition lp = rt->get_logical_partition(
        region, rt->create_partition_by_domain(ctx, region.get_index_space(), runs, colors, false,
                                               LEGION_DISJOINT_INCOMPLETE_KIND));
    for (size_t k = 0; k < values.size(); k++) {
      LogicalRegion run = rt->get_logical_subregion_by_color(lp, DomainPoint(Point<1>(coord_t(k))));
      FillLauncher in(run, region, TaskArgument(&values[k], sizeof(double)));
      in.add_field(INPUT);
      rt->fill_fields(ctx, in);
    }
  }

  {
    double zero = 0.0;
    FillLauncher f(times, times, TaskArgument(&zero, sizeof(zero)));
    f.add_field(TIME_START);
    f.add_field(TIME_STOP);
    rt->fill_fields(ctx, f);
  }

  Domain launch(Rect<1>(0, c.tiles() - 1));
  for (long t = 0; t < c.steps(); t++) {
    Config at = c;
    at.t = t;
    TaskArgument arg(&at, sizeof(at));
    {
      IndexLauncher l(STENCIL, launch, arg, ArgumentMap());
      l.add_region_requirement(requirement(private_p, LEGION_READ_WRITE, points, {INPUT, OUTPUT}));
      l.add_region_requirement(requirement(interior_p, LEGION_NO_ACCESS, points, {}));
      l.add_region_requirement(requirement(pxm_in, LEGION_READ_ONLY, xm, {INPUT}));
      l.add_region_requirement(requirement(pxp_in, LEGION_READ_ONLY, xp, {INPUT}));
      l.add_region_requirement(requirement(pym_in, LEGION_READ_ONLY, ym, {INPUT}));
      l.add_region_requirement(requirement(pyp_in, LEGION_READ_ONLY, yp, {INPUT}));
      l.add_region_requirement(
          requirement(p_times, LEGION_READ_WRITE, times, {TIME_START, TIME_STOP}));
      rt->execute_index_space(ctx, l);
    }
    {
      IndexLauncher l(INCREMENT, launch, arg, ArgumentMap());
      l.add_region_requirement(requirement(private_p, LEGION_READ_WRITE, points, {INPUT}));
      l.add_region_requirement(requirement(exterior_p, LEGION_NO_ACCESS, points, {}));
      l.add_region_requirement(requirement(pxm_out, LEGION_READ_WRITE, xm, {INPUT}));
      l.add_region_requirement(requirement(pxp_out, LEGION_READ_WRITE, xp, {INPUT}));
      l.add_region_requirement(requirement(pym_out, LEGION_READ_WRITE, ym, {INPUT}));
      l.add_region_requirement(requirement(pyp_out, LEGION_READ_WRITE, yp, {INPUT}));
      l.add_region_requirement(
          requirement(p_times, LEGION_READ_WRITE, times, {TIME_START, TIME_STOP}));
      rt->execute_index_space(ctx, l);
    }
  }

  TaskArgument conf(&c, sizeof(c));
  FutureMap checked;
  {
    IndexLauncher l(CHECK, launch, conf, ArgumentMap());
    l.add_region_requirement(requirement(private_p, LEGION_READ_ONLY, points, {INPUT, OUTPUT}));
    l.add_region_requirement(requirement(interior_p, LEGION_NO_ACCESS, points, {}));
    checked = rt->execute_index_space(ctx, l);
  }
  TaskLauncher elapsed_launcher(GET_ELAPSED, conf);
  elapsed_launcher.add_region_requirement(
      requirement(times, LEGION_READ_ONLY, times, {TIME_START, TIME_STOP}));
  double elapsed = rt->execute_task(ctx, elapsed_launcher).get_result<double>();
  rt->execute_index_space(
        ctx,
        IndexLauncher(PRINT_TIME, launch, TaskArgument(&elapsed, sizeof(elapsed)), ArgumentMap()))
      .wait_all_results();

  long wrong = 0;
  for (long i = 0; i < c.tiles(); i++) wrong += checked.get_result<long>(DomainPoint(Point<1>(i)));
  if (wrong != 0) {
    std::fprintf(stderr, "stencil: CHECK FAILED: %ld interior points differ from a correct run\n",
                 wrong);
    std::exit(1);
  }
  std::printf("CHECK PASSED: %lld interior points after %ld steps\n", (long long)(c.n(0) * c.n(1)),
              c.steps());
}

}  // namespace

int main(int argc, char **argv) {
  cpu_task<main_task>(MAIN, "main", true);
  cpu_task<read_config_task>(READ_CONFIG, "read_config");
  cpu_task<long, partition_task<Part::PRIVATE>>(MAKE_PRIVATE_PARTITION, "make_private_partition");
  cpu_task<long, partition_task<Part::INTERIOR>>(MAKE_INTERIOR_PARTITION,
                                                 "make_interior_partition");
  cpu_task<long, partition_task<Part::EXTERIOR>>(MAKE_EXTERIOR_PARTITION,
                                                 "make_exterior_partition");
  cpu_task<long, partition_task<Part::GHOST_X>>(GHOST_X_PARTITION, "ghost_x_partition");
  cpu_task<long, partition_task<Part::GHOST_Y>>(GHOST_Y_PARTITION, "ghost_y_partition");
  cpu_task<stencil_task>(STENCIL, "stencil");
  cpu_task<increment_task>(INCREMENT, "increment");
  cpu_task<long, check_task>(CHECK, "check");
  cpu_task<double, get_elapsed_task>(GET_ELAPSED, "get_elapsed");
  cpu_task<print_time_task>(PRINT_TIME, "print_time");
  register_mapper_if_asked(MAIN, argc, argv);
  return Runtime::start(argc, argv);
}

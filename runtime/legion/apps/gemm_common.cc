#include "gemm_common.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common.h"
#include "legion.h"

// The Fortran BLAS routine (any CPU BLAS: Debian's OpenBLAS by default).
extern "C" void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
                       const int *k, const double *alpha, const double *a, const int *lda,
                       const double *b, const int *ldb, const double *beta, double *c,
                       const int *ldc);

using namespace Legion;

namespace mapwright_apps {
namespace gemm {
namespace {

enum TaskIDs {
  TOP_LEVEL = 1,
  TACO_FILL,
  TASK_1,
  TASK_2,
  TASK_3,
  TASK_4,
  TASK_5,
  TASK_6,
  TASK_7,
  TACO_VALIDATE,
};

enum Fields { FID_VAL = 100 };

// The colors of the partitions each level hands to the next (made once by
// top_level, found by color in the tasks).
enum PartitionColors : Color { PANELS = 10, QUARTERS, HALVES };

Schedule schedule;

long panel(Skew skew, long i, long j, long step, long panels) {
  long s = skew == Skew::NONE ? 0 : skew == Skew::ROW ? i : i + j;
  return (s + step) % panels;
}

enum Matrix { A, B, C };

struct Config {
  long n, gx, gy, iterations, warmup;
  int matrix;   // taco_fill, placement
  long in, jn;  // the block task_6 and task_5 work on
};

Config config_of(const Task *task) { return *static_cast<const Config *>(task->args); }

Config read_flags() {
  Flags f;
  Config c{};
  c.n = f.get("-n", 1024);
  c.gx = f.get("-gx", 1);
  c.gy = f.get("-gy", 1);
  c.iterations = f.get("-i", 10);
  c.warmup = f.get("-warmup", 1);
  if (c.n <= 0 || c.gx <= 0 || c.gy <= 0 || c.n % (2 * c.gx) != 0 || c.n % (2 * c.gy) != 0 ||
      c.iterations <= 0 || c.warmup < 0) {
    std::fprintf(stderr, "gemm: -n must be a positive multiple of 2*gx and 2*gy\n");
    std::exit(2);
  }
  return c;
}

// The values: B(i,k) = u(i) v(k), C(k,j) = w(k) z(j), small integers, so
// A = B C is exact in doubles: A(i,j) = u(i) z(j) sum_k v(k) w(k). A wrong
// pairing of B and C panels, a missing or repeated panel breaks it.
double u(coord_t i) { return double(1 + i % 7); }
double v(coord_t k) { return double(1 + k % 5); }
double w(coord_t k) { return double(1 + k % 3); }
double z(coord_t j) { return double(1 + j % 4); }

double filled(int matrix, Point<2> p) {
  switch (matrix) {
    case B:
      return u(p[0]) * v(p[1]);
    case C:
      return w(p[0]) * z(p[1]);
    default:
      return 0.0;
  }
}

// sum_k v(k) w(k): A(i,j) = u(i) z(j) times this.
double inner_sum(const Config &c) {
  double s = 0.0;
  for (coord_t k = 0; k < c.n; k++) s += v(k) * w(k);
  return s;
}

using Val2Reader =
    FieldAccessor<LEGION_READ_ONLY, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>>;
using Val2Writer = FieldAccessor<LEGION_WRITE_DISCARD, double, 2, coord_t,
                                 Realm::AffineAccessor<double, 2, coord_t>>;
using Val2ReadWrite =
    FieldAccessor<LEGION_READ_WRITE, double, 2, coord_t, Realm::AffineAccessor<double, 2, coord_t>>;

// ---------------------------------------------------------------- partitions

Transform<2, 2> transform(coord_t a, coord_t b, coord_t c, coord_t d) {
  Transform<2, 2> t;
  t[0][0] = a;
  t[0][1] = b;
  t[1][0] = c;
  t[1][1] = d;
  return t;
}

// `region` cut into pieces of `size`: the piece of color p starts at the
// region's origin plus `t` p.
LogicalPartition restricted(Runtime *rt, Context ctx, LogicalRegion region, Point<2> colors,
                            Transform<2, 2> t, Point<2> size, PartitionKind kind,
                            Color color = LEGION_AUTO_GENERATE_ID) {
  Rect<2> bounds = rt->get_index_space_domain(region.get_index_space());
  IndexSpaceT<2> color_space =
      rt->create_index_space(ctx, Rect<2>(Point<2>(0, 0), colors - Point<2>(1, 1)));
  Rect<2> extent(bounds.lo, bounds.lo + size - Point<2>(1, 1));
  IndexPartition ip = rt->create_partition_by_restriction(
      ctx, IndexSpaceT<2>(region.get_index_space()), color_space, t, extent, kind, color);
  return rt->get_logical_partition(region, ip);
}

LogicalRegion piece(Runtime *rt, LogicalRegion region, Color partition, Point<2> color) {
  return rt->get_logical_subregion_by_color(rt->get_logical_partition_by_color(region, partition),
                                            DomainPoint(color));
}

// Every partition task_7's points and their children use, made up front
// as DISTAL's partitionFor... functions do.
void make_compute_partitions(Runtime *rt, Context ctx, const Config &c, LogicalPartition a_blocks,
                             LogicalPartition b_rows, LogicalPartition c_cols) {
  coord_t bi = c.n / c.gx, bj = c.n / c.gy, hi = bi / 2, hj = bj / 2;
  auto aliased = LEGION_ALIASED_COMPLETE_KIND;
  auto disjoint = LEGION_DISJOINT_COMPLETE_KIND;
  for (coord_t in = 0; in < c.gx; in++)
    for (coord_t jn = 0; jn < c.gy; jn++) {
      Point<2> block(in, jn);
      LogicalRegion a = rt->get_logical_subregion_by_color(a_blocks, DomainPoint(block));
      restricted(rt, ctx, a, Point<2>(2, 2), transform(hi, 0, 0, hj), Point<2>(hi, hj), disjoint,
                 QUARTERS);
      LogicalRegion brow = rt->get_logical_subregion_by_color(b_rows, DomainPoint(block));
      LogicalRegion ccol = rt->get_logical_subregion_by_color(c_cols, DomainPoint(block));
      restricted(rt, ctx, brow, Point<2>(1, c.gx), transform(0, 0, 0, bi), Point<2>(bi, bi),
                 disjoint, PANELS);
      restricted(rt, ctx, ccol, Point<2>(c.gx, 1), transform(bi, 0, 0, 0), Point<2>(bi, bj),
                 disjoint, PANELS);
      for (coord_t k = 0; k < c.gx; k++) {
        LogicalRegion bp = piece(rt, brow, PANELS, Point<2>(0, k));
        LogicalRegion cp = piece(rt, ccol, PANELS, Point<2>(k, 0));
        restricted(rt, ctx, bp, Point<2>(2, 2), transform(hi, 0, 0, 0), Point<2>(hi, bi), aliased,
                   QUARTERS);
        restricted(rt, ctx, cp, Point<2>(2, 2), transform(0, 0, 0, hj), Point<2>(bi, hj), aliased,
                   QUARTERS);
        for (coord_t a2 = 0; a2 < 2; a2++)
          for (coord_t b2 = 0; b2 < 2; b2++) {
            Point<2> q(a2, b2);
            restricted(rt, ctx, piece(rt, bp, QUARTERS, q), Point<2>(1, 2), transform(0, 0, 0, hi),
                       Point<2>(hi, hi), disjoint, HALVES);
            restricted(rt, ctx, piece(rt, cp, QUARTERS, q), Point<2>(2, 1), transform(hi, 0, 0, 0),
                       Point<2>(hi, hj), disjoint, HALVES);
          }
      }
    }
}

// ---------------------------------------------------------------- tasks

void taco_fill_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                    Runtime *rt) {
  int matrix = config_of(task).matrix;
  Val2Writer out(regions[0], FID_VAL);
  for (PointInRectIterator<2> p(rect_of<2>(rt, task, 0)); p(); p++) out[*p] = filled(matrix, *p);
}

// Placement: reads its tile where the mapper put it; returns the entries
// that are not what taco_fill wrote.
long placement_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                    Runtime *rt) {
  int matrix = config_of(task).matrix;
  Val2Reader in(regions[0], FID_VAL);
  long wrong = 0;
  for (PointInRectIterator<2> p(rect_of<2>(rt, task, 0)); p(); p++)
    if (in[*p] != filled(matrix, *p)) wrong++;
  return wrong;
}

// An index launch of `task` over `colors`, one requirement per partition.
void launch_over(Runtime *rt, Context ctx, TaskID task, Rect<2> colors, const Config &args,
                 const std::vector<RegionRequirement> &reqs) {
  IndexLauncher l(task, Domain(colors), TaskArgument(&args, sizeof(args)), ArgumentMap());
  for (const RegionRequirement &r : reqs) l.add_region_requirement(r);
  rt->execute_index_space(ctx, l);
}

RegionRequirement read_write(LogicalRegion r, LogicalRegion parent) {
  return requirement(r, LEGION_READ_WRITE, parent, {FID_VAL});
}
RegionRequirement read_only(LogicalRegion r, LogicalRegion parent) {
  return requirement(r, LEGION_READ_ONLY, parent, {FID_VAL});
}

void task_7(const Task *task, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Config c = config_of(task);
  c.in = task->index_point[0];
  c.jn = task->index_point[1];
  LogicalRegion a = task->regions[0].region, b = task->regions[1].region,
                cc = task->regions[2].region;
  for (long kos = 0; kos < c.gx; kos++) {
    long k = panel(schedule.outer, c.in, c.jn, kos, c.gx);
    TaskLauncher l(TASK_6, TaskArgument(&c, sizeof(c)));
    l.add_region_requirement(read_write(a, a));
    l.add_region_requirement(read_only(piece(rt, b, PANELS, Point<2>(0, k)), b));
    l.add_region_requirement(read_only(piece(rt, cc, PANELS, Point<2>(k, 0)), cc));
    rt->execute_task(ctx, l);
  }
}

void task_6(const Task *task, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Config c = config_of(task);
  std::vector<RegionRequirement> reqs;
  for (unsigned i = 0; i < 3; i++) {
    LogicalRegion r = task->regions[i].region;
    reqs.push_back(requirement(rt->get_logical_partition_by_color(r, QUARTERS),
                               i == 0 ? LEGION_READ_WRITE : LEGION_READ_ONLY, r, {FID_VAL}));
  }
  launch_over(rt, ctx, TASK_5, Rect<2>(Point<2>(0, 0), Point<2>(1, 1)), c, reqs);
}

void task_5(const Task *task, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Config c = config_of(task);
  long iln = task->index_point[0], jln = task->index_point[1];
  LogicalRegion a = task->regions[0].region, b = task->regions[1].region,
                cc = task->regions[2].region;
  for (long kio = 0; kio < 2; kio++) {
    long k = panel(schedule.inner, iln, jln, kio, 2);
    TaskLauncher l(TASK_4, TaskArgument(&c, sizeof(c)));
    l.add_region_requirement(read_write(a, a));
    l.add_region_requirement(read_only(piece(rt, b, HALVES, Point<2>(0, k)), b));
    l.add_region_requirement(read_only(piece(rt, cc, HALVES, Point<2>(k, 0)), cc));
    rt->execute_task(ctx, l);
  }
}

// One dgemm on row-major pieces, called as DISTAL calls cuBLAS: the
// column-major product A^T += C^T B^T, each leading dimension the piece's
// stride[0] in doubles.
void task_4(const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *rt) {
  Rect<2> ra = rect_of<2>(rt, task, 0), rb = rect_of<2>(rt, task, 1), rc = rect_of<2>(rt, task, 2);
  Val2ReadWrite a(regions[0], FID_VAL);
  Val2Reader b(regions[1], FID_VAL), c(regions[2], FID_VAL);
  size_t sa[2], sb[2], sc[2];
  double *pa = a.ptr(ra, sa, 1);
  const double *pb = b.ptr(rb, sb, 1), *pc = c.ptr(rc, sc, 1);
  int m = int(rc.hi[1] - rc.lo[1] + 1), n = int(rb.hi[0] - rb.lo[0] + 1),
      k = int(rc.hi[0] - rc.lo[0] + 1);
  int lda = int(sa[0] / sizeof(double)), ldb = int(sb[0] / sizeof(double)),
      ldc = int(sc[0] / sizeof(double));
  const double one = 1.0;
  dgemm_("N", "N", &m, &n, &k, &one, pc, &ldc, pb, &ldb, &one, pa, &lda);
}

// The entries of A's tile that differ from the exact product.
long taco_validate_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                        Runtime *rt) {
  Config c = config_of(task);
  Val2Reader a(regions[0], FID_VAL);
  Rect<2> r = rect_of<2>(rt, task, 0);
  double s = inner_sum(c);
  long wrong = 0;
  for (PointInRectIterator<2> p(r); p(); p++) {
    double want = u(p[0]) * z(p[1]) * s;
    if (a[*p] != want) {
      if (wrong < 3)
        std::fprintf(stderr, "taco_validate: A(%lld,%lld) = %.1f, want %.1f\n", (long long)p[0],
                     (long long)p[1], a[*p], want);
      wrong++;
    }
  }
  return wrong;
}

// ---------------------------------------------------------------- top level

void top_level(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Config c = read_flags();
  FieldSpace fs = rt->create_field_space(ctx);
  {
    FieldAllocator al = rt->create_field_allocator(ctx, fs);
    al.allocate_field(sizeof(double), FID_VAL);
    name_fields(rt, fs, {{FID_VAL, "vals"}});
  }
  Rect<2> whole(Point<2>(0, 0), Point<2>(c.n - 1, c.n - 1));
  LogicalRegion mats[3] = {named_region(rt, ctx, whole, fs, "A"),
                           named_region(rt, ctx, whole, fs, "B"),
                           named_region(rt, ctx, whole, fs, "C")};
  coord_t ti = c.n / (2 * c.gx), tj = c.n / (2 * c.gy), bi = c.n / c.gx, bj = c.n / c.gy;
  Point<2> grid(2 * c.gx, 2 * c.gy), blocks(c.gx, c.gy);
  Rect<2> tiles(Point<2>(0, 0), grid - Point<2>(1, 1));
  Rect<2> nodes(Point<2>(0, 0), blocks - Point<2>(1, 1));
  LogicalPartition placed[3];
  for (int m = 0; m < 3; m++)
    placed[m] = restricted(rt, ctx, mats[m], grid, transform(ti, 0, 0, tj), Point<2>(ti, tj),
                           LEGION_DISJOINT_COMPLETE_KIND);
  LogicalPartition a_blocks = restricted(rt, ctx, mats[A], blocks, transform(bi, 0, 0, bj),
                                         Point<2>(bi, bj), LEGION_DISJOINT_COMPLETE_KIND);
  LogicalPartition b_rows = restricted(rt, ctx, mats[B], blocks, transform(bi, 0, 0, 0),
                                       Point<2>(bi, c.n), LEGION_ALIASED_COMPLETE_KIND);
  LogicalPartition c_cols = restricted(rt, ctx, mats[C], blocks, transform(0, 0, 0, bj),
                                       Point<2>(c.n, bj), LEGION_ALIASED_COMPLETE_KIND);
  make_compute_partitions(rt, ctx, c, a_blocks, b_rows, c_cols);

  std::vector<FutureMap> placements;
  double total_ms = 0.0;
  for (long it = 0; it < c.warmup + c.iterations; it++) {
    for (int m = 0; m < 3; m++) {
      Config at = c;
      at.matrix = m;
      launch_over(rt, ctx, TACO_FILL, tiles, at,
                  {requirement(placed[m], LEGION_WRITE_DISCARD, mats[m], {FID_VAL})});
    }
    for (int m = 0; m < 3; m++) {
      Config at = c;
      at.matrix = m;
      IndexLauncher l(TASK_1 + m, Domain(tiles), TaskArgument(&at, sizeof(at)), ArgumentMap());
      l.add_region_requirement(requirement(placed[m], LEGION_READ_ONLY, mats[m], {FID_VAL}));
      placements.push_back(rt->execute_index_space(ctx, l));
    }
    rt->issue_execution_fence(ctx).get_void_result();
    double start = now_seconds();
    launch_over(rt, ctx, TASK_7, nodes, c,
                {requirement(a_blocks, LEGION_READ_WRITE, mats[A], {FID_VAL}),
                 requirement(b_rows, LEGION_READ_ONLY, mats[B], {FID_VAL}),
                 requirement(c_cols, LEGION_READ_ONLY, mats[C], {FID_VAL})});
    rt->issue_execution_fence(ctx).get_void_result();
    double ms = (now_seconds() - start) * 1e3;
    if (it >= c.warmup) {
      total_ms += ms;
      std::printf("Execution time: %lld ms.\n", (long long)ms);
      std::fflush(stdout);
    }
  }
  long nodes_count = long(Machine::get_machine().get_address_space_count());
  double flops = double(c.n) * double(c.n) * double(2 * c.n - 1);
  std::printf("On %ld nodes achieved GFLOPS per node: %lf.\n", nodes_count,
              flops / (total_ms / double(c.iterations) * 1e-3) / 1e9 / double(nodes_count));
  std::fflush(stdout);

  IndexLauncher v(TACO_VALIDATE, Domain(tiles), TaskArgument(&c, sizeof(c)), ArgumentMap());
  v.add_region_requirement(requirement(placed[A], LEGION_READ_ONLY, mats[A], {FID_VAL}));
  FutureMap validated = rt->execute_index_space(ctx, v);
  long wrong = 0, misplaced = 0;
  for (PointInRectIterator<2> p(tiles); p(); p++) {
    wrong += validated.get_result<long>(DomainPoint(*p));
    for (FutureMap &f : placements) misplaced += f.get_result<long>(DomainPoint(*p));
  }
  if (wrong != 0 || misplaced != 0) {
    std::fprintf(stderr,
                 "gemm: CHECK FAILED: %ld entries of A differ from the exact product, %ld filled "
                 "entries were wrong where placed\n",
                 wrong, misplaced);
    std::exit(1);
  }
  std::printf("CHECK PASSED: all %lld entries of A = B C are exact\n", (long long)(c.n * c.n));
}

}  // namespace

int run(int argc, char **argv, Schedule s) {
  schedule = s;
  cpu_task<top_level>(TOP_LEVEL, "top_level", true);
  cpu_task<taco_fill_task>(TACO_FILL, "taco_fill");
  cpu_task<long, placement_task>(TASK_1, "task_1");
  cpu_task<long, placement_task>(TASK_2, "task_2");
  cpu_task<long, placement_task>(TASK_3, "task_3");
  cpu_task<task_4>(TASK_4, "task_4");
  cpu_task<task_5>(TASK_5, "task_5", true);
  cpu_task<task_6>(TASK_6, "task_6", true);
  cpu_task<task_7>(TASK_7, "task_7", true);
  cpu_task<long, taco_validate_task>(TACO_VALIDATE, "taco_validate");
  register_mapper_if_asked(TOP_LEVEL, argc, argv);
  return Runtime::start(argc, argv);
}

}  // namespace gemm
}  // namespace mapwright_apps

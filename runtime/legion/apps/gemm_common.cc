#include "gemm_common.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "common.h"
#include "legion.h"

// The Fortran BLAS routine (any CPU BLAS: Debian's OpenBLAS by default).
extern "C" void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
                       const int *k, const double *alpha, const double *a, const int *lda,
                       const double *b, const int *ldb, const double *beta, double *c,
                       const int *ldc);

// OpenBLAS's own controls, present only where the BLAS is OpenBLAS (weak:
// with another BLAS they are null). openblas_get_parallel: 0 for the
// sequential build, 1 pthreads, 2 OpenMP.
extern "C" int openblas_get_parallel(void) __attribute__((weak));
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

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
  long n, gx, gy, gz, iterations, warmup;
  long k_panels;  // the 2.5-D family: the k panels the replicas share (-rpoc3)
  int matrix;     // taco_fill, placement
  int product;    // placement of A after the compute: compare with the product
  long in, jn;    // the block task_6 and task_5 work on
};

// The family the program belongs to (set by run / run_3d).
enum class Family { PANELS_2D, REDUCE_3D, REDUCE_25D };
Family family;
bool cube;  // johnson: one -gdim for the three grid sizes

// Several Legion processors call dgemm at once. Debian's sequential
// OpenBLAS (libopenblas0-serial, 0.3.21) is built without USE_LOCKING and
// then shares its work buffers between concurrent callers: about one run
// in 30-60 of cannon or solomonik got a wrong product. So where the BLAS
// is a sequential OpenBLAS the calls are made one at a time (and said
// once); any OpenBLAS runs one BLAS thread per Legion processor.
std::mutex blas_lock;
bool blas_one_at_a_time = false;

void prepare_blas() {
  if (openblas_set_num_threads != nullptr) openblas_set_num_threads(1);
  if (openblas_get_parallel != nullptr && openblas_get_parallel() == 0) {
    blas_one_at_a_time = true;
    std::fprintf(stderr,
                 "gemm: the sequential OpenBLAS is not safe to call from several processors at "
                 "once, so dgemm runs one call at a time (build with OpenBLAS's pthread "
                 "library: docs/legion.md)\n");
  }
}

void blas_dgemm(const int *m, const int *n, const int *k, const double *a, const int *lda,
                const double *b, const int *ldb, double *c, const int *ldc) {
  const double one = 1.0;
  std::unique_lock<std::mutex> held(blas_lock, std::defer_lock);
  if (blas_one_at_a_time) held.lock();
  dgemm_("N", "N", m, n, k, &one, a, lda, b, ldb, &one, c, ldc);
}

Config config_of(const Task *task) { return *static_cast<const Config *>(task->args); }

Config read_flags() {
  Flags f;
  Config c{};
  c.n = f.get("-n", 1024);
  c.iterations = f.get("-i", 10);
  c.warmup = f.get("-warmup", 1);
  if (family == Family::PANELS_2D) {
    c.gx = f.get("-gx", 1);
    c.gy = f.get("-gy", 1);
    c.gz = c.gx;
  } else if (family == Family::REDUCE_25D) {
    // Solomonik's flags: an rpoc x rpoc grid, c replicas, rpoc3 k panels
    // shared out among the replicas.
    c.gx = c.gy = f.get("-rpoc", 2);
    c.gz = f.get("-c", 1);
    c.k_panels = f.get("-rpoc3", 2);
    if (c.gx <= 0 || c.gz <= 0 || c.k_panels <= 0 || c.k_panels % c.gz != 0 || c.n <= 0 ||
        c.n % c.gx != 0 || c.n % c.k_panels != 0 || (c.n / c.gx) % c.gz != 0) {
      std::fprintf(
          stderr,
          "solomonik: -n must be a multiple of -rpoc and -rpoc3, n / rpoc a multiple of -c, "
          "and -rpoc3 a multiple of -c\n");
      std::exit(2);
    }
    c.gy = c.gx;
  } else if (cube) {
    c.gx = c.gy = c.gz = f.get("-gdim", 2);
  } else {
    c.gx = f.get("-gx", 1);
    c.gy = f.get("-gy", 2);
    c.gz = f.get("-gz", 2);
  }
  // The 2-D family splits each block into 2 x 2 tiles.
  long split = family == Family::PANELS_2D ? 2 : 1;
  if (c.n <= 0 || c.gx <= 0 || c.gy <= 0 || c.gz <= 0 || c.n % (split * c.gx) != 0 ||
      c.n % (split * c.gy) != 0 || c.n % (split * c.gz) != 0 || c.iterations <= 0 || c.warmup < 0) {
    std::fprintf(stderr, "gemm: -n must be a positive multiple of every tile count\n");
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

// The offset of a 3-D color's piece: rows r0 and r1 of the transform.
Transform<2, 3> transform(const coord_t (&r0)[3], const coord_t (&r1)[3]) {
  Transform<2, 3> t;
  for (int i = 0; i < 3; i++) {
    t[0][i] = r0[i];
    t[1][i] = r1[i];
  }
  return t;
}

// `region` cut into pieces of `size`: the piece of color p starts at the
// region's origin plus `t` p.
template <int CD>
LogicalPartition restricted(Runtime *rt, Context ctx, LogicalRegion region, Point<CD> colors,
                            Transform<2, CD> t, Point<2> size, PartitionKind kind,
                            Color color = LEGION_AUTO_GENERATE_ID) {
  Rect<2> bounds = rt->get_index_space_domain(region.get_index_space());
  IndexSpaceT<CD> color_space =
      rt->create_index_space(ctx, Rect<CD>(Point<CD>::ZEROES(), colors - Point<CD>::ONES()));
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

// The entries of a tile that differ from what it should hold: what was
// filled, or (A after the compute) the exact product.
long wrong_entries(const Task *task, const PhysicalRegion &region, Runtime *rt, bool product) {
  Config c = config_of(task);
  Val2Reader in(region, FID_VAL);
  double s = inner_sum(c);
  long wrong = 0;
  for (PointInRectIterator<2> p(rect_of<2>(rt, task, 0)); p(); p++) {
    double want = product ? u(p[0]) * z(p[1]) * s : filled(c.matrix, *p);
    if (in[*p] != want) {
      if (wrong < 3)
        std::fprintf(stderr, "%s: entry (%lld,%lld) is %.1f, want %.1f\n", task->get_task_name(),
                     (long long)p[0], (long long)p[1], in[*p], want);
      wrong++;
    }
  }
  return wrong;
}

// Placement: a tile where the mapper put it. Launched to write (the 3-D
// family's placements act as the fill) it fills the tile; to read, it
// returns the entries that are not what they should be.
long placement_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                    Runtime *rt) {
  if (task->regions[0].privilege == LEGION_WRITE_DISCARD) {
    taco_fill_task(task, regions, nullptr, rt);
    return 0;
  }
  return wrong_entries(task, regions[0], rt, config_of(task).product != 0);
}

// An index launch of `task` over `colors`, one requirement per partition.
void launch_over(Runtime *rt, Context ctx, TaskID task, Domain colors, const Config &args,
                 const std::vector<RegionRequirement> &reqs) {
  IndexLauncher l(task, colors, TaskArgument(&args, sizeof(args)), ArgumentMap());
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
  size_t sa[2], sb[2], sc[2];
  double *pa;
  if (task->regions[0].privilege == LEGION_REDUCE) {
    // A reduction instance (SUM, initialised to 0): the product is added
    // into it and Legion folds it into A.
    ReductionAccessor<SumReduction<double>, true, 2, coord_t,
                      Realm::AffineAccessor<double, 2, coord_t>>
        a(regions[0], FID_VAL, LEGION_REDOP_SUM_FLOAT64);
    pa = a.ptr(ra, sa, 1);
  } else {
    Val2ReadWrite a(regions[0], FID_VAL);
    pa = a.ptr(ra, sa, 1);
  }
  Val2Reader b(regions[1], FID_VAL), c(regions[2], FID_VAL);
  const double *pb = b.ptr(rb, sb, 1), *pc = c.ptr(rc, sc, 1);
  int m = int(rc.hi[1] - rc.lo[1] + 1), n = int(rb.hi[0] - rb.lo[0] + 1),
      k = int(rc.hi[0] - rc.lo[0] + 1);
  int lda = int(sa[0] / sizeof(double)), ldb = int(sb[0] / sizeof(double)),
      ldc = int(sc[0] / sizeof(double));
  blas_dgemm(&m, &n, &k, pc, &ldc, pb, &ldb, pa, &lda);
}

// The entries of A's tile that differ from the exact product.
long taco_validate_task(const Task *task, const std::vector<PhysicalRegion> &regions, Context,
                        Runtime *rt) {
  return wrong_entries(task, regions[0], rt, true);
}

// ---------------------------------------------------------------- top level

// A, B and C: n x n doubles, field "vals".
struct Matrices {
  LogicalRegion m[3];
};

Matrices make_matrices(Runtime *rt, Context ctx, const Config &c) {
  FieldSpace fs = rt->create_field_space(ctx);
  {
    FieldAllocator al = rt->create_field_allocator(ctx, fs);
    al.allocate_field(sizeof(double), FID_VAL);
    name_fields(rt, fs, {{FID_VAL, "vals"}});
  }
  Rect<2> whole(Point<2>(0, 0), Point<2>(c.n - 1, c.n - 1));
  return {{named_region(rt, ctx, whole, fs, "A"), named_region(rt, ctx, whole, fs, "B"),
           named_region(rt, ctx, whole, fs, "C")}};
}

// DISTAL's benchmark loop: `prepare` (not timed), then `compute` between
// two execution fences, timed; "Execution time: %lld ms." for each timed
// iteration, then the GFLOPS line.
template <typename Prepare, typename Compute>
void benchmark(Runtime *rt, Context ctx, const Config &c, Prepare prepare, Compute compute) {
  double total_ms = 0.0;
  for (long it = 0; it < c.warmup + c.iterations; it++) {
    prepare();
    rt->issue_execution_fence(ctx).get_void_result();
    double start = now_seconds();
    compute();
    rt->issue_execution_fence(ctx).get_void_result();
    double end = now_seconds();
    double ms = (end - start) * 1e3;
    if (it >= c.warmup) {
      print_timed_window(start, end);
      total_ms += ms;
      std::printf("Execution time: %lld ms.\n", (long long)ms);
      std::fflush(stdout);
    }
  }
  long nodes = long(Machine::get_machine().get_address_space_count());
  double flops = double(c.n) * double(c.n) * double(2 * c.n - 1);
  std::printf("On %ld nodes achieved GFLOPS per node: %lf.\n", nodes,
              flops / (total_ms / double(c.iterations) * 1e-3) / 1e9 / double(nodes));
  std::fflush(stdout);
}

// The sum of the counts the tasks of `maps` returned.
long total(const std::vector<FutureMap> &maps, Domain domain) {
  long sum = 0;
  for (const FutureMap &f : maps)
    for (Domain::DomainPointIterator p(domain); p; p++) sum += f.get_result<long>(*p);
  return sum;
}

void conclude(const Config &c, long wrong) {
  if (wrong != 0) {
    std::fprintf(stderr,
                 "gemm: CHECK FAILED: %ld entries were not what they should be (A = B C exactly, "
                 "B and C as filled)\n",
                 wrong);
    std::exit(1);
  }
  std::printf("CHECK PASSED: all %lld entries of A = B C are exact\n", (long long)(c.n * c.n));
}

// solomonik: task_5 at the point (i, j, l) of the rpoc x rpoc x c grid
// (inner) adds, for its replica l's share of the rpoc3 k panels, B(i,k)
// C(k,j) into a SUM reduction of A(i,j), one task_4 per panel, the panels
// walked Cannon-style from (i + j) mod rpoc3.
void task_5_25d(const Task *task, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Config c = config_of(task);
  long i = task->index_point[0], j = task->index_point[1], l = task->index_point[2];
  long share = c.k_panels / c.gz;
  LogicalRegion a = task->regions[0].region, b = task->regions[1].region,
                cc = task->regions[2].region;
  for (long step = l * share; step < (l + 1) * share; step++) {
    long k = (i + j + step) % c.k_panels;
    TaskLauncher launcher(TASK_4, TaskArgument(&c, sizeof(c)));
    launcher.add_region_requirement(reduction(a, LEGION_REDOP_SUM_FLOAT64, a, {FID_VAL}));
    launcher.add_region_requirement(read_only(piece(rt, b, PANELS, Point<2>(0, k)), b));
    launcher.add_region_requirement(read_only(piece(rt, cc, PANELS, Point<2>(k, 0)), cc));
    rt->execute_task(ctx, launcher);
  }
}

// cannon, summa, pumma.
void top_level(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Config c = read_flags();
  Matrices made = make_matrices(rt, ctx, c);
  LogicalRegion *mats = made.m;
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

  std::vector<FutureMap> counts;
  auto prepare = [&] {
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
      counts.push_back(rt->execute_index_space(ctx, l));
    }
  };
  auto compute = [&] {
    launch_over(rt, ctx, TASK_7, nodes, c,
                {requirement(a_blocks, LEGION_READ_WRITE, mats[A], {FID_VAL}),
                 requirement(b_rows, LEGION_READ_ONLY, mats[B], {FID_VAL}),
                 requirement(c_cols, LEGION_READ_ONLY, mats[C], {FID_VAL})});
  };
  benchmark(rt, ctx, c, prepare, compute);

  IndexLauncher v(TACO_VALIDATE, Domain(tiles), TaskArgument(&c, sizeof(c)), ArgumentMap());
  v.add_region_requirement(requirement(placed[A], LEGION_READ_ONLY, mats[A], {FID_VAL}));
  counts.push_back(rt->execute_index_space(ctx, v));
  conclude(c, total(counts, Domain(tiles)));
}

// The placement task of `matrix` (task_1, task_2 or task_3) over `colors`:
// written, it fills its tile (A with zeros); read, A after the compute, it
// returns the entries that differ from the exact product.
FutureMap place_matrix(Runtime *rt, Context ctx, const Config &c, int matrix, Domain colors,
                       LogicalPartition placed, LogicalRegion parent, PrivilegeMode privilege) {
  Config at = c;
  at.matrix = matrix;
  at.product = matrix == A && privilege == LEGION_READ_ONLY;
  IndexLauncher l(TASK_1 + matrix, colors, TaskArgument(&at, sizeof(at)), ArgumentMap());
  l.add_region_requirement(requirement(placed, privilege, parent, {FID_VAL}));
  return rt->execute_index_space(ctx, l);
}

// johnson, cosma: every point (i, j, k) of the gx x gy x gz grid adds
// B(i,k) C(k,j) into a SUM reduction of A(i,j). The placements task_1,
// task_2, task_3 write A (zeros), B and C where the mapper puts them (the
// fill), and task_1 reads A after the compute (timed: it folds the
// reductions into A's placement) and checks every entry.
void top_level_3d(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Config c = read_flags();
  Matrices made = make_matrices(rt, ctx, c);
  LogicalRegion *mats = made.m;
  coord_t ti = c.n / c.gx, tj = c.n / c.gy, tk = c.n / c.gz;
  auto disjoint = LEGION_DISJOINT_COMPLETE_KIND;
  auto aliased = LEGION_ALIASED_COMPLETE_KIND;
  Point<3> on_a(c.gx, c.gy, 1), on_b(c.gx, 1, c.gz), on_c(1, c.gy, c.gz), grid(c.gx, c.gy, c.gz);
  // A(i,j), B(i,k), C(k,j) of the 3-D color (i, j, k).
  Transform<2, 3> ta = transform({ti, 0, 0}, {0, tj, 0}), tb = transform({ti, 0, 0}, {0, 0, tk}),
                  tc = transform({0, 0, tk}, {0, tj, 0});
  LogicalPartition placed[3] = {restricted(rt, ctx, mats[A], on_a, ta, Point<2>(ti, tj), disjoint),
                                restricted(rt, ctx, mats[B], on_b, tb, Point<2>(ti, tk), disjoint),
                                restricted(rt, ctx, mats[C], on_c, tc, Point<2>(tk, tj), disjoint)};
  const Point<3> placed_on[3] = {on_a, on_b, on_c};
  LogicalPartition a_parts = restricted(rt, ctx, mats[A], grid, ta, Point<2>(ti, tj), aliased),
                   b_parts = restricted(rt, ctx, mats[B], grid, tb, Point<2>(ti, tk), aliased),
                   c_parts = restricted(rt, ctx, mats[C], grid, tc, Point<2>(tk, tj), aliased);
  auto domain = [](Point<3> extent) {
    return Domain(Rect<3>(Point<3>::ZEROES(), extent - Point<3>::ONES()));
  };

  std::vector<FutureMap> counts;
  auto place = [&](int m, PrivilegeMode privilege) {
    return place_matrix(rt, ctx, c, m, domain(placed_on[m]), placed[m], mats[m], privilege);
  };
  auto prepare = [&] {
    for (int m = 0; m < 3; m++) place(m, LEGION_WRITE_DISCARD);
  };
  auto compute = [&] {
    launch_over(rt, ctx, TASK_4, domain(grid), c,
                {reduction(a_parts, LEGION_REDOP_SUM_FLOAT64, mats[A], {FID_VAL}),
                 requirement(b_parts, LEGION_READ_ONLY, mats[B], {FID_VAL}),
                 requirement(c_parts, LEGION_READ_ONLY, mats[C], {FID_VAL})});
    counts.push_back(place(A, LEGION_READ_ONLY));
  };
  benchmark(rt, ctx, c, prepare, compute);
  conclude(c, total(counts, domain(on_a)));
}

// solomonik: the placements task_1, task_2, task_3 write A (zeros), B
// and C in blocks of the rpoc x rpoc grid, each cut in c column strips,
// one per point of the rpoc x rpoc x c grid; then, timed, task_5 over
// the grid (A(i,j) reduced, B's rows i and C's columns j read, their k
// panels made up front) and task_1 reading A back, which folds the
// reductions into A's placement and checks every entry.
void top_level_25d(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Config c = read_flags();
  Matrices made = make_matrices(rt, ctx, c);
  LogicalRegion *mats = made.m;
  coord_t bi = c.n / c.gx, bj = c.n / c.gy, strip = bj / c.gz, panel = c.n / c.k_panels;
  auto aliased = LEGION_ALIASED_COMPLETE_KIND;
  Point<3> grid(c.gx, c.gy, c.gz);
  Domain points(Rect<3>(Point<3>::ZEROES(), grid - Point<3>::ONES()));
  LogicalPartition placed[3];
  for (int m = 0; m < 3; m++)
    placed[m] = restricted(rt, ctx, mats[m], grid, transform({bi, 0, 0}, {0, bj, strip}),
                           Point<2>(bi, strip), LEGION_DISJOINT_COMPLETE_KIND);
  LogicalPartition a_blocks = restricted(rt, ctx, mats[A], grid, transform({bi, 0, 0}, {0, bj, 0}),
                                         Point<2>(bi, bj), aliased),
                   b_rows = restricted(rt, ctx, mats[B], grid, transform({bi, 0, 0}, {0, 0, 0}),
                                       Point<2>(bi, c.n), aliased),
                   c_cols = restricted(rt, ctx, mats[C], grid, transform({0, 0, 0}, {0, bj, 0}),
                                       Point<2>(c.n, bj), aliased);
  for (Domain::DomainPointIterator p(points); p; p++) {
    LogicalRegion brow = rt->get_logical_subregion_by_color(b_rows, *p);
    LogicalRegion ccol = rt->get_logical_subregion_by_color(c_cols, *p);
    restricted(rt, ctx, brow, Point<2>(1, c.k_panels), transform(0, 0, 0, panel),
               Point<2>(bi, panel), LEGION_DISJOINT_COMPLETE_KIND, PANELS);
    restricted(rt, ctx, ccol, Point<2>(c.k_panels, 1), transform(panel, 0, 0, 0),
               Point<2>(panel, bj), LEGION_DISJOINT_COMPLETE_KIND, PANELS);
  }

  std::vector<FutureMap> counts;
  auto place = [&](int m, PrivilegeMode privilege) {
    return place_matrix(rt, ctx, c, m, points, placed[m], mats[m], privilege);
  };
  auto prepare = [&] {
    for (int m = 0; m < 3; m++) place(m, LEGION_WRITE_DISCARD);
  };
  auto compute = [&] {
    launch_over(rt, ctx, TASK_5, points, c,
                {reduction(a_blocks, LEGION_REDOP_SUM_FLOAT64, mats[A], {FID_VAL}),
                 requirement(b_rows, LEGION_READ_ONLY, mats[B], {FID_VAL}),
                 requirement(c_cols, LEGION_READ_ONLY, mats[C], {FID_VAL})});
    counts.push_back(place(A, LEGION_READ_ONLY));
  };
  benchmark(rt, ctx, c, prepare, compute);
  conclude(c, total(counts, points));
}

void register_common(int argc, char **argv) {
  prepare_blas();
  cpu_task<long, placement_task>(TASK_1, "task_1");
  cpu_task<long, placement_task>(TASK_2, "task_2");
  cpu_task<long, placement_task>(TASK_3, "task_3");
  cpu_task<task_4>(TASK_4, "task_4");
  register_mapper_if_asked(TOP_LEVEL, argc, argv);
}

}  // namespace

int run_25d(int argc, char **argv) {
  family = Family::REDUCE_25D;
  cpu_task<top_level_25d>(TOP_LEVEL, "top_level", true);
  cpu_task<task_5_25d>(TASK_5, "task_5", true);
  register_common(argc, argv);
  return Runtime::start(argc, argv);
}

int run(int argc, char **argv, Schedule s) {
  family = Family::PANELS_2D;
  schedule = s;
  cpu_task<top_level>(TOP_LEVEL, "top_level", true);
  cpu_task<taco_fill_task>(TACO_FILL, "taco_fill");
  cpu_task<task_5>(TASK_5, "task_5", true);
  cpu_task<task_6>(TASK_6, "task_6", true);
  cpu_task<task_7>(TASK_7, "task_7", true);
  cpu_task<long, taco_validate_task>(TACO_VALIDATE, "taco_validate");
  register_common(argc, argv);
  return Runtime::start(argc, argv);
}

int run_3d(int argc, char **argv, bool one_gdim) {
  family = Family::REDUCE_3D;
  cube = one_gdim;
  cpu_task<top_level_3d>(TOP_LEVEL, "top_level", true);
  register_common(argc, argv);
  return Runtime::start(argc, argv);
}

}  // namespace gemm
}  // namespace mapwright_apps

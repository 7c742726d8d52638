// pennant as a real Legion program: Regent's PENNANT (pennant.rg,
// Lagrangian staggered-grid hydrodynamics) on the leblanc problem, with the
// task names, region names, argument order, privileges and launch kinds of
// runtime/apps/pennant.json; CPU variants doing the hydro steps; a check
// against a sequential run of the same kernels in the program; and the real
// program's output ("ELAPSED TIME = %7.3f s", "Elapsed time = %.6e (total)").
//
// The mesh is leblanc's rectangle (lenx 1, leny 9) of nzx x nzy zones, cut
// into -npieces bands of zone rows (Regent's -numpcx 1 -numpcy npieces).
// Points are numbered private points first (piece by piece), then the rows
// two neighbouring pieces share, the row between pieces i and i + 1 owned by
// piece i: rp_all is split into rp_all_private and rp_all_ghost (partition
// rp_all_p); rp_all_private_p cuts the private points by piece,
// rp_all_shared_p the shared rows by owner and rp_all_ghost_p (aliased) gives
// each piece the rows its zones touch. Forces and masses reach the shared
// rows through `reduces +` on rp_all_ghost_p, as in Regent.
//
// The fields, the mesh views and the kernels are pennant_hydro.h; this file
// holds the tasks that run them on Legion's instances, the sequential check
// and the top-level task.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"
#include "legion.h"
#include "pennant_hydro.h"

using namespace Legion;
using namespace mapwright_apps;
using namespace pennant_hydro;

namespace {

enum TaskIDs {
  TOPLEVEL = 1,
  INITIALIZE_TOPOLOGY,
  INIT_POINTERS,
  INIT_MESH_ZONES,
  CALC_CENTERS_FULL,
  CALC_VOLUMES_FULL,
  VERIFY_CALC_VOLUMES_FULL,
  INIT_SIDE_FRACS,
  INIT_HYDRO,
  INIT_RADIAL_VELOCITY,
  CONTINUE_SIMULATION,
  INIT_STEP_POINTS,
  INIT_STEP_ZONES,
  CALC_GLOBAL_DT,
  ADV_POS_HALF,
  CALC_CENTERS,
  CALC_VOLUMES,
  CALC_CHAR_LEN,
  CALC_RHO_HALF,
  SUM_POINT_MASS,
  CALC_STATE_AT_HALF,
  CALC_FORCE_PGAS_TTS,
  QCS_ZONE_CENTER_VELOCITY,
  QCS_CORNER_DIVERGENCE,
  QCS_QCN_FORCE,
  QCS_FORCE,
  QCS_VEL_DIFF,
  SUM_POINT_FORCE,
  APPLY_BOUNDARY_CONDITIONS,
  ADV_POS_FULL,
  CALC_WORK,
  CALC_WORK_RATE_ENERGY_RHO_FULL,
  CALC_DT_HYDRO,
  OUTPUT0,
  OUTPUT1,
  ADD_DOUBLE,    // __binary_double_double_+
  MIN_DOUBLE,    // __binary_double_double_min
  SCALE_UINT64,  // __binary_double_uint64_*
  ADD_INT32,     // __binary_int32_int32_+
  ADD_INT64,     // __binary_int64_int64_+
  EQUAL_INT64,   // __binary_int64_int64_==
  SUB_UINT64,    // __binary_uint64_uint64_-
  NOT_BOOL,      // __unary_bool_not
};

// ------------------------------------------------------------ the tasks

// The fields a task uses of one region requirement: zone or side fields
// (of the Mesh), or point fields (of a Points; in a Mesh, the private or
// the ghost points that `points` names).
struct Use {
  unsigned req;
  std::vector<FieldID> fields;
  Points Mesh::*points = nullptr;
};

// A task's view of its arguments: requirement i's elements, and `v`, a
// Mesh or a Points with the fields the task uses bound to the members that
// fields_of says they fill, read-only or read-write as the requirement's
// privilege (the launch states the privileges; the task does not restate
// them). Each task so states once, in its Args, which fields it uses.
template <typename View>
struct Args {
  const Task *task;
  const std::vector<PhysicalRegion> &regions;
  Runtime *rt;
  View v;

  Args(const Task *task, const std::vector<PhysicalRegion> &regions, Runtime *rt,
       std::initializer_list<Use> uses)
      : task(task), regions(regions), rt(rt) {
    for (const Use &u : uses) bind(v, u);
  }
  Range range(unsigned i) const {
    Rect<1> r = rect_of(rt, task, i);
    return {r.lo[0], r.hi[0] + 1};
  }

 private:
  template <typename V>
  void bind_to(V &view, const Use &u) {
    fields_of(view).bind(view, regions[u.req], rect_of(rt, task, u.req), u.fields,
                         read_write(task->regions[u.req]));
  }
  void bind(Points &p, const Use &u) { bind_to(p, u); }
  void bind(Mesh &m, const Use &u) {
    if (u.points != nullptr)
      bind_to(m.*u.points, u);
    else
      bind_to(m, u);
  }
};

double future(const Task *task, unsigned i) { return task->futures[i].get_result<double>(); }

#define TASK_ARGS const Task *task, const std::vector<PhysicalRegion> &regions, Context, Runtime *rt

void initialize_topology_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt,
               {{0, {ZNUMP}},
                {1, {PX, HAS_BCX, HAS_BCY}, &Mesh::pp},
                {2, {PX, HAS_BCX, HAS_BCY}, &Mesh::pg},
                {4, {MAPSZ, MAPSP1, MAPSP1_INDEX, MAPSP2, MAPSP2_INDEX, MAPSS3, MAPSS4}}});
  topology(config_of(task), task->index_point[0], a.v, true);
}

void init_pointers_task(TASK_ARGS) {
  // Regent's dynamic_cast: which of the piece's point regions (private or
  // ghost) each side's points lie in.
  Args<Mesh> a(task, regions, rt, {{3, {MAPSP1, MAPSP1_INDEX, MAPSP2, MAPSP2_INDEX}}});
  Rect<1> priv = rect_of(rt, task, 1), ghost = rect_of(rt, task, 2);
  Range sr = a.range(3);
  for (bool second : {false, true}) {
    const Col<int64_t> &ptr = second ? a.v.mapsp2 : a.v.mapsp1;
    const Col<int8_t> &index = second ? a.v.mapsp2_index : a.v.mapsp1_index;
    for (int64_t s = sr.lo; s < sr.hi; s++) {
      Point<1> p(ptr[s]);
      index[s] = priv.contains(p) ? 0 : ghost.contains(p) ? 1 : -1;
      if (index[s] < 0) {
        std::fprintf(stderr, "pennant: dynamic_cast failed on %s\n", second ? "mapsp2" : "mapsp1");
        std::exit(1);
      }
    }
  }
}

void init_mesh_zones_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{0, {ZX, ZAREA, ZVOL}}});
  init_mesh_zones(a.v, a.range(0));
}

// calc_centers and calc_centers_full: (znump, zone center, points, maps,
// edge center).
template <FieldID POS, FieldID ZC, FieldID EC>
void centers_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt,
               {{0, {ZNUMP}},
                {1, {ZC}},
                {2, {POS}, &Mesh::pp},
                {3, {POS}, &Mesh::pg},
                {4, maps2},
                {5, {EC}}});
  const Mesh &m = a.v;
  const MeshTable &f = fields_of(m);
  centers(m, a.range(0), a.range(4), fields_of(m.pp).member<Col2>(POS), m.*f.member<Col2>(ZC),
          m.*f.member<Col2>(EC));
}

// calc_volumes and calc_volumes_full; calc_volumes also measures the edges.
template <FieldID POS, FieldID ZC, FieldID ZAREA_F, FieldID ZVOL_F, FieldID SAREA_F>
int volumes_task(TASK_ARGS) {
  constexpr bool half = POS == PXP;
  Args<Mesh> a(task, regions, rt,
               {{0, {ZNUMP, ZC}},
                {1, {ZAREA_F, ZVOL_F}},
                {2, {POS}, &Mesh::pp},
                {3, {POS}, &Mesh::pg},
                {4, maps2},
                {5, half ? std::vector<FieldID>{SAREA_F, ELEN} : std::vector<FieldID>{SAREA_F}}});
  const Mesh &m = a.v;
  const MeshTable &f = fields_of(m);
  int negatives =
      volumes(m, a.range(0), a.range(4), fields_of(m.pp).member<Col2>(POS), m.*f.member<Col2>(ZC),
              m.*f.member<Col<double>>(SAREA_F), m.*f.member<Col<double>>(ZAREA_F),
              m.*f.member<Col<double>>(ZVOL_F), half ? &m.elen : nullptr);
  if (negatives != 0 && half) {
    // As Regent's assertion in calc_volumes.
    std::fprintf(stderr, "pennant: CHECK FAILED: sv negative in calc_volumes\n");
    std::exit(1);
  }
  return negatives;
}

void verify_calc_volumes_full_task(TASK_ARGS) {
  if (task->futures[0].get_result<int>() != 0) {
    std::fprintf(stderr, "pennant: CHECK FAILED: sv negative in calc_volumes_full\n");
    std::exit(1);
  }
}

void init_side_fracs_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{0, {ZAREA}}, {3, {MAPSZ, SAREA}}, {4, {SMF}}});
  init_side_fracs(a.v, a.range(3));
}

void init_hydro_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{0, {ZX, ZVOL}}, {1, {ZM, ZR, ZE, ZETOT, ZWRATE}}});
  init_hydro(a.v, a.range(0), config_of(task));
}

void init_radial_velocity_task(TASK_ARGS) {
  Args<Points> a(task, regions, rt, {{0, {PX}}, {1, {PU}}});
  init_radial_velocity(a.v, a.range(0), config_of(task).uinitradial);
}

void init_step_points_task(TASK_ARGS) {
  Args<Points> a(task, regions, rt, {{0, {PF, PMASWT}}});
  init_step_points(a.v, a.range(0));
}

void init_step_zones_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{0, {ZVOL}}, {1, {ZVOL0}}});
  init_step_zones(a.v, a.range(0));
}

void adv_pos_half_task(TASK_ARGS) {
  Args<Points> a(task, regions, rt, {{0, {PX, PU}}, {1, {PX0, PXP, PU0}}});
  adv_pos_half(a.v, a.range(0), future(task, 0));
}

void calc_char_len_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{0, {ZNUMP}}, {1, {ZDL}}, {4, {MAPSZ, SAREAP, ELEN}}});
  calc_char_len(a.v, a.range(0), a.range(4));
}

void calc_rho_half_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{0, {ZVOLP, ZM}}, {1, {ZRP}}});
  calc_rho_half(a.v, a.range(0));
}

// Requirement 2 (the ghost points) is a reduction: the task reduces into
// it through a Reducer rather than a view.
void sum_point_mass_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt,
               {{0, {ZAREAP, ZRP}}, {1, {PMASWT}, &Mesh::pp}, {3, maps1}, {3, {MAPSS3, SMF}}});
  Reducer<double> ghost(regions[2], PMASWT, SumReduction<double>::REDOP_ID);
  sum_point_mass(a.v, a.range(3), [&](int8_t index, int64_t p, double v) {
    if (index == 0)
      a.v.pp.pmaswt[p] += v;
    else
      ghost[Point<1>(p)] <<= v;
  });
}

void calc_state_at_half_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{0, {ZVOL0, ZVOLP, ZM, ZR, ZE, ZWRATE}}, {1, {ZP, ZSS}}});
  calc_state_at_half(a.v, a.range(0), config_of(task), future(task, 0));
}

void calc_force_pgas_tts_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt,
               {{0, {ZXP, ZAREAP, ZRP, ZP, ZSS}}, {3, {MAPSZ, SAREAP, SMF, EXP}}, {4, {SFP, SFT}}});
  calc_force_pgas_tts(a.v, a.range(3), config_of(task));
}

void qcs_zone_center_velocity_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt,
               {{0, {ZNUMP}}, {1, {ZUC}}, {2, {PU}, &Mesh::pp}, {3, {PU}, &Mesh::pg}, {4, maps1}});
  qcs_zone_center_velocity(a.v, a.range(0), a.range(4));
}

void qcs_corner_divergence_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt,
               {{0, {ZXP, ZUC}},
                {1, {PXP, PU}, &Mesh::pp},
                {2, {PXP, PU}, &Mesh::pg},
                {3, maps2},
                {3, {MAPSS3, EXP, ELEN}},
                {4, {CAREA, CEVOL, CDU, CDIV, CCOS}}});
  qcs_corner_divergence(a.v, a.range(3));
}

void qcs_qcn_force_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt,
               {{0, {ZRP, ZSS}},
                {1, {PU}, &Mesh::pp},
                {2, {PU}, &Mesh::pg},
                {3, maps2},
                {3, {MAPSS3, ELEN, CEVOL, CDU, CDIV}},
                {4, {CQE1, CQE2}}});
  qcs_qcn_force(a.v, a.range(3), config_of(task));
}

void qcs_force_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{3, {MAPSS4, ELEN, CAREA, CCOS, CQE1, CQE2}}, {4, {SFQ}}});
  qcs_force(a.v, a.range(3));
}

void qcs_vel_diff_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt,
               {{0, {ZSS}},
                {1, {ZDU, Z0TMP}},
                {2, {PXP, PU}, &Mesh::pp},
                {3, {PXP, PU}, &Mesh::pg},
                {4, maps2},
                {4, {ELEN}}});
  qcs_vel_diff(a.v, a.range(0), a.range(4), config_of(task));
}

// Requirement 2 (the ghost points) is a reduction, as in sum_point_mass.
void sum_point_force_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{1, {PF}, &Mesh::pp}, {3, maps1}, {3, {MAPSS3, SFT, SFQ}}});
  Reducer<double> gx(regions[2], PF, SumReduction<double>::REDOP_ID);
  Reducer<double> gy(regions[2], PF + 1, SumReduction<double>::REDOP_ID);
  const Col2 &force = a.v.pp.pf;
  sum_point_force(a.v, a.range(3), [&](int8_t index, int64_t p, Vec f) {
    if (index == 0) {
      force.set(p, force.get(p) + f);
    } else {
      gx[Point<1>(p)] <<= f.x;
      gy[Point<1>(p)] <<= f.y;
    }
  });
}

void apply_boundary_conditions_task(TASK_ARGS) {
  Args<Points> a(task, regions, rt, {{0, {HAS_BCX, HAS_BCY}}, {1, {PU0, PF}}});
  apply_boundary_conditions(a.v, a.range(0));
}

void adv_pos_full_task(TASK_ARGS) {
  Args<Points> a(task, regions, rt, {{0, {PX0, PU0, PF, PMASWT}}, {1, {PX, PU}}});
  adv_pos_full(a.v, a.range(0), future(task, 0));
}

void calc_work_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt,
               {{1, {ZETOT, ZW}},
                {2, {PXP, PU0, PU}, &Mesh::pp},
                {3, {PXP, PU0, PU}, &Mesh::pg},
                {4, maps2},
                {4, {SFP, SFQ}}});
  calc_work(a.v, a.range(0), a.range(4), future(task, 0));
}

void calc_work_rate_energy_rho_full_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{0, {ZVOL0, ZVOL, ZM, ZETOT, ZW, ZP}}, {1, {ZR, ZE, ZWRATE}}});
  calc_work_rate_energy_rho_full(a.v, a.range(0), future(task, 0));
}

double calc_dt_hydro_task(TASK_ARGS) {
  Args<Mesh> a(task, regions, rt, {{0, {ZVOL0, ZVOL, ZDL, ZSS, ZDU}}});
  return calc_dt_hydro(a.v, a.range(0), future(task, 0), config_of(task));
}

// The scalar tasks: their operands are futures (the loop's state), the
// rest of the configuration comes with the task.
struct Step {
  Config c;
  long cycle;
};

double calc_global_dt_task(TASK_ARGS) {
  const Step &s = *static_cast<const Step *>(task->args);
  return calc_global_dt(s.c, future(task, 0), future(task, 1), future(task, 2), s.cycle);
}

bool continue_simulation_task(TASK_ARGS) {
  const Step &s = *static_cast<const Step *>(task->args);
  return continue_simulation(s.cycle, task->futures[0].get_result<long>(),
                             task->futures[1].get_result<double>(), s.c.tstop);
}

// output0 prints a string, output1 a format with one double (from the
// task's future when it has one, as the elapsed time).
struct Message {
  double value;
  char text[200];
};

void output0_task(TASK_ARGS) {
  std::fputs(static_cast<const Message *>(task->args)->text, stdout);
  std::fflush(stdout);
}

void output1_task(TASK_ARGS) {
  const Message &m = *static_cast<const Message *>(task->args);
  double value = task->futures.empty() ? m.value : task->futures[0].get_result<double>();
  std::printf(m.text, value);
  std::fflush(stdout);
}

// Regent's future arithmetic (the names of its generated tasks).
template <typename A, typename B, typename R, R (*OP)(A, B)>
R binary_task(TASK_ARGS) {
  return OP(task->futures[0].get_result<A>(), task->futures[1].get_result<B>());
}
double add_double(double a, double b) { return a + b; }
double min_double(double a, double b) { return std::min(a, b); }
double scale_uint64(double a, uint64_t b) { return a * double(b); }
int add_int32(int a, int b) { return a + b; }
long add_int64(long a, long b) { return a + b; }
bool equal_int64(long a, long b) { return a == b; }
uint64_t sub_uint64(uint64_t a, uint64_t b) { return a - b; }

bool not_bool_task(TASK_ARGS) { return !task->futures[0].get_result<bool>(); }

#undef TASK_ARGS

// ------------------------------------------------------------ the check

// The same simulation run sequentially on plain arrays with the same
// kernels: one piece, every point in one array (the ghost view is the
// private one), reductions as plain sums.
struct Sequential {
  std::vector<std::vector<char>> store;
  Mesh m;

  template <typename T>
  Col<T> column(long n) {
    store.emplace_back(size_t(n) * sizeof(T), 0);
    return Col<T>{store.back().data(), sizeof(T)};
  }
  Col2 column2(long n) { return {column<double>(n), column<double>(n)}; }

  explicit Sequential(const Config &c) {
    long nz = c.nz(), np = c.np(), ns = c.ns();
    for (Col2 *f : {&m.zxp, &m.zx, &m.zuc}) *f = column2(nz);
    for (Col<double> *f :
         {&m.zareap, &m.zarea, &m.zvol0, &m.zvolp, &m.zvol, &m.zdl, &m.zm, &m.zrp, &m.zr, &m.ze,
          &m.zetot, &m.zw, &m.zwrate, &m.zp, &m.zss, &m.zdu, &m.z0tmp})
      *f = column<double>(nz);
    m.znump = column<uint8_t>(nz);
    for (Col2 *f : {&m.pp.px0, &m.pp.pxp, &m.pp.px, &m.pp.pu0, &m.pp.pu, &m.pp.pf})
      *f = column2(np);
    m.pp.pmaswt = column<double>(np);
    m.pp.has_bcx = column<bool>(np);
    m.pp.has_bcy = column<bool>(np);
    m.pg = m.pp;
    for (Col<int64_t> *f : {&m.mapsz, &m.mapsp1, &m.mapsp2, &m.mapss3, &m.mapss4})
      *f = column<int64_t>(ns);
    m.mapsp1_index = column<int8_t>(ns);
    m.mapsp2_index = column<int8_t>(ns);
    for (Col<double> *f :
         {&m.sareap, &m.sarea, &m.smf, &m.elen, &m.carea, &m.cevol, &m.cdu, &m.cdiv, &m.ccos})
      *f = column<double>(ns);
    for (Col2 *f : {&m.sfp, &m.sft, &m.sfq, &m.exp, &m.ex, &m.cqe1, &m.cqe2}) *f = column2(ns);
  }

  // Runs the whole simulation; returns the cycles run.
  long run(const Config &c) {
    Range zr{0, c.nz()}, sr{0, c.ns()}, pr{0, c.np()};
    for (long i = 0; i < c.npieces; i++) topology(c, i, m, true);
    for (int64_t s = 0; s < c.ns(); s++) m.mapsp1_index[s] = m.mapsp2_index[s] = 0;
    init_mesh_zones(m, zr);
    centers(m, zr, sr, &Points::px, m.zx, m.ex);
    volumes(m, zr, sr, &Points::px, m.zx, m.sarea, m.zarea, m.zvol, nullptr);
    init_side_fracs(m, sr);
    init_hydro(m, zr, c);
    init_radial_velocity(m.pp, pr, c.uinitradial);
    double dt = c.dtmax, dthydro = c.dtmax, time = 0.0;
    long cycle = 0, cstop = c.cstop + 2 * c.prune;
    auto add1 = [&](int8_t, int64_t p, double v) { m.pp.pmaswt[p] += v; };
    auto add2 = [&](int8_t, int64_t p, Vec f) { m.pp.pf.set(p, m.pp.pf.get(p) + f); };
    while (continue_simulation(cycle, cstop, time, c.tstop)) {
      init_step_points(m.pp, pr);
      init_step_zones(m, zr);
      dt = calc_global_dt(c, dt, dthydro, time, cycle);
      adv_pos_half(m.pp, pr, dt);
      centers(m, zr, sr, &Points::pxp, m.zxp, m.exp);
      if (volumes(m, zr, sr, &Points::pxp, m.zxp, m.sareap, m.zareap, m.zvolp, &m.elen) != 0)
        return -1;
      calc_char_len(m, zr, sr);
      calc_rho_half(m, zr);
      sum_point_mass(m, sr, add1);
      calc_state_at_half(m, zr, c, dt);
      calc_force_pgas_tts(m, sr, c);
      qcs_zone_center_velocity(m, zr, sr);
      qcs_corner_divergence(m, sr);
      qcs_qcn_force(m, sr, c);
      qcs_force(m, sr);
      qcs_vel_diff(m, zr, sr, c);
      sum_point_force(m, sr, add2);
      apply_boundary_conditions(m.pp, pr);
      adv_pos_full(m.pp, pr, dt);
      centers(m, zr, sr, &Points::px, m.zx, m.ex);
      volumes(m, zr, sr, &Points::px, m.zx, m.sarea, m.zarea, m.zvol, nullptr);
      calc_work(m, zr, sr, dt);
      calc_work_rate_energy_rho_full(m, zr, dt);
      dthydro = std::min(c.dtmax, calc_dt_hydro(m, zr, dt, c));
      cycle++;
      time += dt;
    }
    return cycle;
  }
};

// ------------------------------------------------------------ top level

struct Pennant {
  Runtime *rt;
  Context ctx;
  Config c;
  LogicalRegion rz_all, rp_all, rp_all_private, rp_all_ghost, rs_all;
  LogicalPartition rz_all_p, rp_all_private_p, rp_all_ghost_p, rp_all_shared_p, rs_all_p;
  Domain pieces;

  FieldSpace field_space(const std::vector<std::pair<FieldID, std::string>> &doubles,
                         const std::vector<std::pair<FieldID, std::string>> &others,
                         const std::vector<size_t> &sizes) {
    FieldSpace fs = rt->create_field_space(ctx);
    FieldAllocator a = rt->create_field_allocator(ctx, fs);
    for (const auto &f : doubles) a.allocate_field(sizeof(double), f.first);
    for (size_t i = 0; i < others.size(); i++) a.allocate_field(sizes[i], others[i].first);
    name_fields(rt, fs, doubles);
    name_fields(rt, fs, others);
    return fs;
  }

  // Fields of a field space, vec2 fields expanded to .x and .y.
  static std::vector<std::pair<FieldID, std::string>> expand(
      const std::vector<std::pair<FieldID, std::string>> &vecs,
      const std::vector<std::pair<FieldID, std::string>> &scalars) {
    std::vector<std::pair<FieldID, std::string>> out;
    for (const auto &v : vecs) {
      out.push_back({v.first, v.second + ".x"});
      out.push_back({FieldID(v.first + 1), v.second + ".y"});
    }
    out.insert(out.end(), scalars.begin(), scalars.end());
    return out;
  }

  LogicalPartition partition(LogicalRegion parent, const std::vector<Rect<1>> &parts,
                             PartitionKind kind, const char *name) {
    IndexSpace colors = rt->create_index_space(ctx, Rect<1>(0, long(parts.size()) - 1));
    std::map<DomainPoint, Domain> domains;
    for (size_t i = 0; i < parts.size(); i++)
      domains[DomainPoint(Point<1>(long(i)))] = Domain(parts[i]);
    IndexPartition ip =
        rt->create_partition_by_domain(ctx, parent.get_index_space(), domains, colors, true, kind);
    LogicalPartition lp = rt->get_logical_partition(parent, ip);
    rt->attach_name(lp, name);
    return lp;
  }

  void make_regions() {
    FieldSpace zone_fs =
        field_space(expand({{ZXP, "zxp"}, {ZX, "zx"}, {ZUC, "zuc"}}, {{ZAREAP, "zareap"},
                                                                      {ZAREA, "zarea"},
                                                                      {ZVOL0, "zvol0"},
                                                                      {ZVOLP, "zvolp"},
                                                                      {ZVOL, "zvol"},
                                                                      {ZDL, "zdl"},
                                                                      {ZM, "zm"},
                                                                      {ZRP, "zrp"},
                                                                      {ZR, "zr"},
                                                                      {ZE, "ze"},
                                                                      {ZETOT, "zetot"},
                                                                      {ZW, "zw"},
                                                                      {ZWRATE, "zwrate"},
                                                                      {ZP, "zp"},
                                                                      {ZSS, "zss"},
                                                                      {ZDU, "zdu"},
                                                                      {Z0TMP, "z0tmp"}}),
                    {{ZNUMP, "znump"}}, {sizeof(uint8_t)});
    FieldSpace point_fs = field_space(
        expand({{PX0, "px0"}, {PXP, "pxp"}, {PX, "px"}, {PU0, "pu0"}, {PU, "pu"}, {PF, "pf"}},
               {{PMASWT, "pmaswt"}}),
        {{HAS_BCX, "has_bcx"}, {HAS_BCY, "has_bcy"}}, {sizeof(bool), sizeof(bool)});
    FieldSpace side_fs = field_space(expand({{SFP, "sfp"},
                                             {SFT, "sft"},
                                             {SFQ, "sfq"},
                                             {EXP, "exp"},
                                             {EX, "ex"},
                                             {CQE1, "cqe1"},
                                             {CQE2, "cqe2"}},
                                            {{SAREAP, "sareap"},
                                             {SAREA, "sarea"},
                                             {SMF, "smf"},
                                             {ELEN, "elen"},
                                             {CAREA, "carea"},
                                             {CEVOL, "cevol"},
                                             {CDU, "cdu"},
                                             {CDIV, "cdiv"},
                                             {CCOS, "ccos"}}),
                                     {{MAPSZ, "mapsz.__ptr"},
                                      {MAPSP1, "mapsp1.__ptr"},
                                      {MAPSP1_INDEX, "mapsp1.__index"},
                                      {MAPSP2, "mapsp2.__ptr"},
                                      {MAPSP2_INDEX, "mapsp2.__index"},
                                      {MAPSS3, "mapss3.__ptr"},
                                      {MAPSS4, "mapss4.__ptr"}},
                                     {8, 8, 1, 8, 1, 8, 8});

    rz_all = named_region(rt, ctx, Rect<1>(0, c.nz() - 1), zone_fs, "rz_all");
    rp_all = named_region(rt, ctx, Rect<1>(0, c.np() - 1), point_fs, "rp_all");
    rs_all = named_region(rt, ctx, Rect<1>(0, c.ns() - 1), side_fs, "rs_all");
    // Every field starts at zero (fills, operations rather than tasks).
    for (auto r : {std::make_pair(rz_all, zone_fs), std::make_pair(rp_all, point_fs),
                   std::make_pair(rs_all, side_fs)}) {
      std::vector<FieldID> fields;
      rt->get_field_space_fields(r.second, fields);
      const char zero[8] = {};
      for (FieldID f : fields) {
        FillLauncher l(r.first, r.first, TaskArgument(zero, rt->get_field_size(r.second, f)));
        l.add_field(f);
        rt->fill_fields(ctx, l);
      }
    }

    std::vector<Rect<1>> zones, sides, priv, shared, ghost;
    for (long i = 0; i < c.npieces; i++) {
      zones.push_back(Rect<1>(c.row0(i) * c.nzx, c.row0(i + 1) * c.nzx - 1));
      sides.push_back(Rect<1>(4 * c.row0(i) * c.nzx, 4 * c.row0(i + 1) * c.nzx - 1));
      priv.push_back(Rect<1>(c.private_start(i), c.private_start(i + 1) - 1));
      shared.push_back(c.shared_of(i));
      ghost.push_back(c.ghost_of(i));
    }
    rz_all_p = partition(rz_all, zones, LEGION_DISJOINT_COMPLETE_KIND, "rz_all_p");
    rs_all_p = partition(rs_all, sides, LEGION_DISJOINT_COMPLETE_KIND, "rs_all_p");
    LogicalPartition rp_all_p =
        partition(rp_all, {Rect<1>(0, c.nprivate() - 1), Rect<1>(c.nprivate(), c.np() - 1)},
                  LEGION_DISJOINT_COMPLETE_KIND, "rp_all_p");
    rp_all_private = rt->get_logical_subregion_by_color(rp_all_p, 0);
    rp_all_ghost = rt->get_logical_subregion_by_color(rp_all_p, 1);
    rt->attach_name(rp_all_private, "rp_all_private");
    rt->attach_name(rp_all_ghost, "rp_all_ghost");
    rp_all_private_p =
        partition(rp_all_private, priv, LEGION_DISJOINT_COMPLETE_KIND, "rp_all_private_p");
    rp_all_ghost_p = partition(rp_all_ghost, ghost, LEGION_ALIASED_KIND, "rp_all_ghost_p");
    rp_all_shared_p = partition(rp_all_ghost, shared, LEGION_DISJOINT_KIND, "rp_all_shared_p");
    pieces = Domain(Rect<1>(0, c.npieces - 1));
  }

  // Requirements on the zones, private, ghost, shared points and sides.
  RegionRequirement z(PrivilegeMode p, const std::vector<FieldID> &f) {
    return requirement(rz_all_p, p, rz_all, f);
  }
  RegionRequirement pp(PrivilegeMode p, const std::vector<FieldID> &f) {
    return requirement(rp_all_private_p, p, rp_all, f);
  }
  RegionRequirement pg(PrivilegeMode p, const std::vector<FieldID> &f) {
    return requirement(rp_all_ghost_p, p, rp_all, f);
  }
  RegionRequirement ps(PrivilegeMode p, const std::vector<FieldID> &f) {
    return requirement(rp_all_shared_p, p, rp_all, f);
  }
  RegionRequirement s(PrivilegeMode p, const std::vector<FieldID> &f) {
    return requirement(rs_all_p, p, rs_all, f);
  }

  FutureMap launch(TaskID id, const std::vector<RegionRequirement> &reqs,
                   const std::vector<Future> &futures = {}) {
    IndexLauncher l(id, pieces, TaskArgument(&c, sizeof(c)), ArgumentMap());
    for (const RegionRequirement &r : reqs) l.add_region_requirement(r);
    for (const Future &f : futures) l.add_future(f);
    return rt->execute_index_space(ctx, l);
  }
  Future reduce(TaskID id, const std::vector<RegionRequirement> &reqs,
                const std::vector<Future> &futures, ReductionOpID redop) {
    IndexLauncher l(id, pieces, TaskArgument(&c, sizeof(c)), ArgumentMap());
    for (const RegionRequirement &r : reqs) l.add_region_requirement(r);
    for (const Future &f : futures) l.add_future(f);
    return rt->execute_index_space(ctx, l, redop);
  }
  // A point-only task over the private points, then over the shared ones.
  void launch_points(TaskID id,
                     const std::vector<std::pair<PrivilegeMode, std::vector<FieldID>>> &a,
                     const std::vector<Future> &futures = {}) {
    std::vector<RegionRequirement> on_private, on_shared;
    for (const auto &r : a) {
      on_private.push_back(pp(r.first, r.second));
      on_shared.push_back(ps(r.first, r.second));
    }
    launch(id, on_private, futures);
    launch(id, on_shared, futures);
  }
  Future single(TaskID id, const void *args, size_t size, const std::vector<Future> &futures) {
    TaskLauncher l(id, TaskArgument(args, size));
    for (const Future &f : futures) l.add_future(f);
    return rt->execute_task(ctx, l);
  }
  template <typename T>
  Future value(const T &v) {
    return Future::from_value<T>(v);
  }
  Future binary(TaskID id, const Future &a, const Future &b) {
    return single(id, nullptr, 0, {a, b});
  }
  void output(TaskID id, const char *text, double v, const std::vector<Future> &futures = {}) {
    Message m{v, {}};
    std::snprintf(m.text, sizeof(m.text), "%s", text);
    single(id, &m, sizeof(m), futures);
  }

  static constexpr PrivilegeMode R = LEGION_READ_ONLY, RW = LEGION_READ_WRITE,
                                 NONE = LEGION_NO_ACCESS;

  FutureMap centers(TaskID id, FieldID pos, FieldID zc, FieldID ec) {
    return launch(id, {z(R, {ZNUMP}), z(RW, {zc, FieldID(zc + 1)}), pp(R, {pos, FieldID(pos + 1)}),
                       pg(R, {pos, FieldID(pos + 1)}), s(R, maps2), s(RW, {ec, FieldID(ec + 1)})});
  }
  FutureMap volumes(TaskID id, FieldID pos, FieldID zc, std::vector<FieldID> zout,
                    std::vector<FieldID> sout) {
    return launch(id,
                  {z(R, {zc, FieldID(zc + 1), ZNUMP}), z(RW, zout), pp(R, {pos, FieldID(pos + 1)}),
                   pg(R, {pos, FieldID(pos + 1)}), s(R, maps2), s(RW, sout)});
  }

  void initialize() {
    launch(INITIALIZE_TOPOLOGY,
           {z(RW, {ZNUMP}), pp(RW, {PX, PX + 1, HAS_BCX, HAS_BCY}),
            ps(RW, {PX, PX + 1, HAS_BCX, HAS_BCY}), pg(NONE, {}),
            s(RW, {MAPSZ, MAPSP1, MAPSP1_INDEX, MAPSP2, MAPSP2_INDEX, MAPSS3, MAPSS4})});
    output(OUTPUT1, "Initializing (t=%.1f)...\n", now_seconds());
    launch(INIT_POINTERS, {z(NONE, {}), pp(NONE, {}), pg(NONE, {}),
                           s(RW, {MAPSP1, MAPSP1_INDEX, MAPSP2, MAPSP2_INDEX})});
    launch(INIT_MESH_ZONES, {z(RW, {ZX, ZX + 1, ZAREA, ZVOL})});
    centers(CALC_CENTERS_FULL, PX, ZX, EX);
    FutureMap negatives = volumes(CALC_VOLUMES_FULL, PX, ZX, {ZAREA, ZVOL}, {SAREA});
    Future sum = negatives.get_future(DomainPoint(Point<1>(0)));
    for (long i = 1; i < c.npieces; i++)
      sum = binary(ADD_INT32, sum, negatives.get_future(DomainPoint(Point<1>(i))));
    single(VERIFY_CALC_VOLUMES_FULL, nullptr, 0, {sum});
    launch(INIT_SIDE_FRACS,
           {z(R, {ZAREA}), pp(NONE, {}), pg(NONE, {}), s(R, {MAPSZ, SAREA}), s(RW, {SMF})});
    launch(INIT_HYDRO, {z(R, {ZX, ZX + 1, ZVOL}), z(RW, {ZM, ZR, ZE, ZETOT, ZWRATE})});
    launch_points(INIT_RADIAL_VELOCITY, {{R, {PX, PX + 1}}, {RW, {PU, PU + 1}}});
  }

  // One cycle of the hydro (pennant.rg's simulate loop body); the new dt,
  // dthydro and time.
  void cycle(long n, Future &dt, Future &dthydro, Future &time) {
    launch_points(INIT_STEP_POINTS, {{RW, {PF, PF + 1, PMASWT}}});
    launch(INIT_STEP_ZONES, {z(R, {ZVOL}), z(RW, {ZVOL0})});
    Step st{c, n};
    dt = single(CALC_GLOBAL_DT, &st, sizeof(st), {dt, dthydro, time});
    launch_points(ADV_POS_HALF,
                  {{R, {PX, PX + 1, PU, PU + 1}}, {RW, {PX0, PX0 + 1, PXP, PXP + 1, PU0, PU0 + 1}}},
                  {dt});
    centers(CALC_CENTERS, PXP, ZXP, EXP);
    volumes(CALC_VOLUMES, PXP, ZXP, {ZAREAP, ZVOLP}, {SAREAP, ELEN});
    launch(CALC_CHAR_LEN,
           {z(R, {ZNUMP}), z(RW, {ZDL}), pp(NONE, {}), pg(NONE, {}), s(R, {MAPSZ, SAREAP, ELEN})});
    launch(CALC_RHO_HALF, {z(R, {ZVOLP, ZM}), z(RW, {ZRP})});
    launch(SUM_POINT_MASS,
           {z(R, {ZAREAP, ZRP}), pp(RW, {PMASWT}),
            reduction(rp_all_ghost_p, SumReduction<double>::REDOP_ID, rp_all, {PMASWT}),
            s(R, {MAPSZ, MAPSP1, MAPSP1_INDEX, MAPSS3, SMF})});
    launch(CALC_STATE_AT_HALF, {z(R, {ZVOL0, ZVOLP, ZM, ZR, ZE, ZWRATE}), z(RW, {ZP, ZSS})}, {dt});
    launch(CALC_FORCE_PGAS_TTS,
           {z(R, {ZXP, ZXP + 1, ZAREAP, ZRP, ZP, ZSS}), pp(NONE, {}), pg(NONE, {}),
            s(R, {MAPSZ, SAREAP, SMF, EXP, EXP + 1}), s(RW, {SFP, SFP + 1, SFT, SFT + 1})});
    launch(QCS_ZONE_CENTER_VELOCITY, {z(R, {ZNUMP}), z(RW, {ZUC, ZUC + 1}), pp(R, {PU, PU + 1}),
                                      pg(R, {PU, PU + 1}), s(R, maps1)});
    std::vector<FieldID> divergence = maps2;
    divergence.insert(divergence.end(), {MAPSS3, EXP, EXP + 1, ELEN});
    launch(QCS_CORNER_DIVERGENCE,
           {z(R, {ZXP, ZXP + 1, ZUC, ZUC + 1}), pp(R, {PXP, PXP + 1, PU, PU + 1}),
            pg(R, {PXP, PXP + 1, PU, PU + 1}), s(R, divergence),
            s(RW, {CAREA, CEVOL, CDU, CDIV, CCOS})});
    std::vector<FieldID> qcn = maps2;
    qcn.insert(qcn.end(), {MAPSS3, ELEN, CEVOL, CDU, CDIV});
    launch(QCS_QCN_FORCE, {z(R, {ZRP, ZSS}), pp(R, {PU, PU + 1}), pg(R, {PU, PU + 1}), s(R, qcn),
                           s(RW, {CQE1, CQE1 + 1, CQE2, CQE2 + 1})});
    launch(QCS_FORCE, {z(NONE, {}), pp(NONE, {}), pg(NONE, {}),
                       s(R, {MAPSS4, ELEN, CAREA, CCOS, CQE1, CQE1 + 1, CQE2, CQE2 + 1}),
                       s(RW, {SFQ, SFQ + 1})});
    std::vector<FieldID> vel = maps2;
    vel.push_back(ELEN);
    launch(QCS_VEL_DIFF, {z(R, {ZSS}), z(RW, {ZDU, Z0TMP}), pp(R, {PXP, PXP + 1, PU, PU + 1}),
                          pg(R, {PXP, PXP + 1, PU, PU + 1}), s(R, vel)});
    launch(SUM_POINT_FORCE,
           {z(R, {ZNUMP}), pp(RW, {PF, PF + 1}),
            reduction(rp_all_ghost_p, SumReduction<double>::REDOP_ID, rp_all, {PF, PF + 1}),
            s(R, {MAPSZ, MAPSP1, MAPSP1_INDEX, MAPSS3, SFT, SFT + 1, SFQ, SFQ + 1})});
    launch_points(APPLY_BOUNDARY_CONDITIONS,
                  {{R, {HAS_BCX, HAS_BCY}}, {RW, {PU0, PU0 + 1, PF, PF + 1}}});
    launch_points(
        ADV_POS_FULL,
        {{R, {PX0, PX0 + 1, PU0, PU0 + 1, PF, PF + 1, PMASWT}}, {RW, {PX, PX + 1, PU, PU + 1}}},
        {dt});
    centers(CALC_CENTERS_FULL, PX, ZX, EX);
    volumes(CALC_VOLUMES_FULL, PX, ZX, {ZAREA, ZVOL}, {SAREA});
    std::vector<FieldID> work = maps2;
    work.insert(work.end(), {SFP, SFP + 1, SFQ, SFQ + 1});
    launch(CALC_WORK,
           {z(R, {ZNUMP}), z(RW, {ZETOT, ZW}), pp(R, {PXP, PXP + 1, PU0, PU0 + 1, PU, PU + 1}),
            pg(R, {PXP, PXP + 1, PU0, PU0 + 1, PU, PU + 1}), s(R, work)},
           {dt});
    launch(CALC_WORK_RATE_ENERGY_RHO_FULL,
           {z(R, {ZVOL0, ZVOL, ZM, ZETOT, ZW, ZP}), z(RW, {ZR, ZE, ZWRATE})}, {dt});
    Future hydro = reduce(CALC_DT_HYDRO, {z(R, {ZVOL0, ZVOL, ZDL, ZSS, ZDU})}, {dt},
                          MinReduction<double>::REDOP_ID);
    dthydro = binary(MIN_DOUBLE, value(c.dtmax), hydro);
    time = binary(ADD_DOUBLE, time, dt);
  }

  Future continues(long n, const Future &cstop, const Future &time) {
    Step st{c, n};
    return single(CONTINUE_SIMULATION, &st, sizeof(st), {cstop, time});
  }
  bool equal(long a, const Future &b) {
    return binary(EQUAL_INT64, value(a), b).get_result<bool>();
  }
  uint64_t micros() {
    rt->issue_execution_fence(ctx).wait();
    return uint64_t(Realm::Clock::current_time_in_nanoseconds() / 1000);
  }

  // pennant.rg's simulate: the cycles, timed from cycle prune to cycle
  // cstop + prune behind execution fences. Returns the cycles run.
  long simulate() {
    Future dt = value(c.dtmax), dthydro = value(c.dtmax), time = value(0.0);
    Future cstop = binary(ADD_INT64, value(c.cstop), value(2 * c.prune));
    Future end = binary(ADD_INT64, value(c.cstop), value(c.prune));
    Future prune = value(c.prune);
    Future ts_start = value(uint64_t(0)), ts_end = ts_start;
    long n = 0;
    bool cont = true;
    while (cont) {
      if (equal(n, prune))
        ts_start = value(micros());
      else if (equal(n, end))
        ts_end = value(micros());
      if (not_bool(continues(n, cstop, time))) break;
      cycle(n, dt, dthydro, time);
      n++;
      cont = continues(n, cstop, time).get_result<bool>();
    }
    if (c.prune == 0) ts_end = value(micros());
    Future span = binary(SUB_UINT64, ts_end, ts_start);
    Future seconds = binary(SCALE_UINT64, value(1e-6), span);
    output(OUTPUT1, "ELAPSED TIME = %7.3f s\n", 0.0, {seconds});
    if (Flags().has("-window"))
      print_timed_window(double(ts_start.get_result<uint64_t>()) * 1e-6,
                         double(ts_end.get_result<uint64_t>()) * 1e-6);
    return n;
  }
  bool not_bool(const Future &f) { return single(NOT_BOOL, nullptr, 0, {f}).get_result<bool>(); }

  // Reads fields of a whole region back (an inline mapping).
  PhysicalRegion read(LogicalRegion r, const std::vector<FieldID> &fields) {
    InlineLauncher l(requirement(r, R, r, fields));
    PhysicalRegion p = rt->map_region(ctx, l);
    p.wait_until_valid();
    return p;
  }
};

void toplevel_task(const Task *, const std::vector<PhysicalRegion> &, Context ctx, Runtime *rt) {
  Flags flags;
  Pennant app{rt, ctx, read_config()};
  const Config &c = app.c;
  app.output(OUTPUT1, "Running test (t=%.1f)...\n", now_seconds());
  std::printf("pennant leblanc: %ld x %ld zones, %ld pieces, %ld + 2 x %ld cycles\n", c.nzx, c.nzy,
              c.npieces, c.cstop, c.prune);
  std::printf("Zones : %ld, Points : %ld, Sides : %ld\n", c.nz(), c.np(), c.ns());
  app.make_regions();
  app.initialize();
  rt->issue_execution_fence(ctx).wait();
  app.output(OUTPUT1, "Starting simulation (t=%.1f)...\n", now_seconds());
  double start = now_seconds();
  long cycles = app.simulate();
  rt->issue_execution_fence(ctx).wait();
  double total = now_seconds() - start;
  app.output(OUTPUT1, "Elapsed time = %.6e (total)\n", total);
  if (flags.get("-check", 1) == 0) return;

  // The check: the sequential run of the same cycles gives the same state.
  Sequential seq(c);
  long want_cycles = seq.run(c);
  PhysicalRegion zones = app.read(app.rz_all, {ZE, ZR, ZETOT});
  PhysicalRegion points = app.read(app.rp_all, {PX, PX + 1, PU, PU + 1});
  Reader<double> ze(zones, ZE), zr(zones, ZR), zetot(zones, ZETOT);
  Reader<double> px(points, PX), py(points, PX + 1), ux(points, PU), uy(points, PU + 1);
  // The largest difference of each field relative to the largest value of
  // the quantity (a vector's both components: the flow is along y, and
  // velocities along x are roundoff).
  const Mesh &m = seq.m;
  double worst = 0.0, e_got = 0.0, e_want = 0.0, speed = 1e-300;
  auto compare = [&](long n, auto got, auto want, double scale) {
    for (int64_t i = 0; i < n; i++) {
      double d = std::fabs(got(i) - want(i)) / scale;
      worst = std::max(worst, std::isnan(d) ? 1e300 : d);
    }
  };
  auto largest = [](long n, auto f) {
    double v = 1e-300;
    for (int64_t i = 0; i < n; i++) v = std::max(v, std::fabs(f(i)));
    return v;
  };
  auto seq_ze = [&](int64_t i) { return m.ze[i]; };
  auto seq_zr = [&](int64_t i) { return m.zr[i]; };
  auto seq_ux = [&](int64_t i) { return m.pp.pu.x[i]; };
  auto seq_uy = [&](int64_t i) { return m.pp.pu.y[i]; };
  speed = std::max(largest(c.np(), seq_ux), largest(c.np(), seq_uy));
  compare(
      c.nz(), [&](int64_t i) { return ze[Point<1>(i)]; }, seq_ze, largest(c.nz(), seq_ze));
  compare(
      c.nz(), [&](int64_t i) { return zr[Point<1>(i)]; }, seq_zr, largest(c.nz(), seq_zr));
  double size = std::max(c.lenx, c.leny);
  compare(
      c.np(), [&](int64_t i) { return px[Point<1>(i)]; }, [&](int64_t i) { return m.pp.px.x[i]; },
      size);
  compare(
      c.np(), [&](int64_t i) { return py[Point<1>(i)]; }, [&](int64_t i) { return m.pp.px.y[i]; },
      size);
  compare(
      c.np(), [&](int64_t i) { return ux[Point<1>(i)]; }, seq_ux, speed);
  compare(
      c.np(), [&](int64_t i) { return uy[Point<1>(i)]; }, seq_uy, speed);
  // How much of the flow reached the shared points (relative to the largest
  // speed): the check covers the halo exchange only where it did.
  double reach = 0.0;
  for (int64_t i = c.nprivate(); i < c.np(); i++)
    reach = std::max(reach, std::hypot(seq_ux(i), seq_uy(i)) / speed);
  for (int64_t i = 0; i < c.nz(); i++) {
    e_got += zetot[Point<1>(i)];
    e_want += m.zetot[i];
  }
  rt->unmap_region(ctx, zones);
  rt->unmap_region(ctx, points);
  if (cycles != want_cycles || !(worst <= 1e-9)) {
    std::fprintf(stderr,
                 "pennant: CHECK FAILED: %ld cycles (sequential %ld), largest relative "
                 "difference %.3e from the sequential run\n",
                 cycles, want_cycles, worst);
    std::exit(1);
  }
  char text[200];
  std::snprintf(text, sizeof(text),
                "CHECK PASSED: %ld cycles, zone energy %.12e (sequential %.12e), largest "
                "difference %.3e, speed at the shared points %.3e of the largest\n",
                cycles, e_got, e_want, worst, reach);
  app.output(OUTPUT0, text, 0.0);
}

}  // namespace

int main(int argc, char **argv) {
  cpu_control_task<toplevel_task>(TOPLEVEL, "toplevel");
  cpu_task<initialize_topology_task>(INITIALIZE_TOPOLOGY, "initialize_topology");
  cpu_task<init_pointers_task>(INIT_POINTERS, "init_pointers");
  cpu_task<init_mesh_zones_task>(INIT_MESH_ZONES, "init_mesh_zones");
  cpu_task<centers_task<PX, ZX, EX>>(CALC_CENTERS_FULL, "calc_centers_full");
  cpu_task<int, volumes_task<PX, ZX, ZAREA, ZVOL, SAREA>>(CALC_VOLUMES_FULL, "calc_volumes_full");
  cpu_task<verify_calc_volumes_full_task>(VERIFY_CALC_VOLUMES_FULL, "verify_calc_volumes_full");
  cpu_task<init_side_fracs_task>(INIT_SIDE_FRACS, "init_side_fracs");
  cpu_task<init_hydro_task>(INIT_HYDRO, "init_hydro");
  cpu_task<init_radial_velocity_task>(INIT_RADIAL_VELOCITY, "init_radial_velocity");
  cpu_task<bool, continue_simulation_task>(CONTINUE_SIMULATION, "continue_simulation");
  cpu_task<init_step_points_task>(INIT_STEP_POINTS, "init_step_points");
  cpu_task<init_step_zones_task>(INIT_STEP_ZONES, "init_step_zones");
  cpu_task<double, calc_global_dt_task>(CALC_GLOBAL_DT, "calc_global_dt");
  cpu_task<adv_pos_half_task>(ADV_POS_HALF, "adv_pos_half");
  cpu_task<centers_task<PXP, ZXP, EXP>>(CALC_CENTERS, "calc_centers");
  cpu_task<int, volumes_task<PXP, ZXP, ZAREAP, ZVOLP, SAREAP>>(CALC_VOLUMES, "calc_volumes");
  cpu_task<calc_char_len_task>(CALC_CHAR_LEN, "calc_char_len");
  cpu_task<calc_rho_half_task>(CALC_RHO_HALF, "calc_rho_half");
  cpu_task<sum_point_mass_task>(SUM_POINT_MASS, "sum_point_mass");
  cpu_task<calc_state_at_half_task>(CALC_STATE_AT_HALF, "calc_state_at_half");
  cpu_task<calc_force_pgas_tts_task>(CALC_FORCE_PGAS_TTS, "calc_force_pgas_tts");
  cpu_task<qcs_zone_center_velocity_task>(QCS_ZONE_CENTER_VELOCITY, "qcs_zone_center_velocity");
  cpu_task<qcs_corner_divergence_task>(QCS_CORNER_DIVERGENCE, "qcs_corner_divergence");
  cpu_task<qcs_qcn_force_task>(QCS_QCN_FORCE, "qcs_qcn_force");
  cpu_task<qcs_force_task>(QCS_FORCE, "qcs_force");
  cpu_task<qcs_vel_diff_task>(QCS_VEL_DIFF, "qcs_vel_diff");
  cpu_task<sum_point_force_task>(SUM_POINT_FORCE, "sum_point_force");
  cpu_task<apply_boundary_conditions_task>(APPLY_BOUNDARY_CONDITIONS, "apply_boundary_conditions");
  cpu_task<adv_pos_full_task>(ADV_POS_FULL, "adv_pos_full");
  cpu_task<calc_work_task>(CALC_WORK, "calc_work");
  cpu_task<calc_work_rate_energy_rho_full_task>(CALC_WORK_RATE_ENERGY_RHO_FULL,
                                                "calc_work_rate_energy_rho_full");
  cpu_task<double, calc_dt_hydro_task>(CALC_DT_HYDRO, "calc_dt_hydro");
  cpu_task<output0_task>(OUTPUT0, "output0");
  cpu_task<output1_task>(OUTPUT1, "output1");
  cpu_task<double, binary_task<double, double, double, add_double>>(ADD_DOUBLE,
                                                                    "__binary_double_double_+");
  cpu_task<double, binary_task<double, double, double, min_double>>(MIN_DOUBLE,
                                                                    "__binary_double_double_min");
  cpu_task<double, binary_task<double, uint64_t, double, scale_uint64>>(SCALE_UINT64,
                                                                        "__binary_double_uint64_*");
  cpu_task<int, binary_task<int, int, int, add_int32>>(ADD_INT32, "__binary_int32_int32_+");
  cpu_task<long, binary_task<long, long, long, add_int64>>(ADD_INT64, "__binary_int64_int64_+");
  cpu_task<bool, binary_task<long, long, bool, equal_int64>>(EQUAL_INT64,
                                                             "__binary_int64_int64_==");
  cpu_task<uint64_t, binary_task<uint64_t, uint64_t, uint64_t, sub_uint64>>(
      SUB_UINT64, "__binary_uint64_uint64_-");
  cpu_task<bool, not_bool_task>(NOT_BOOL, "__unary_bool_not");
  register_mapper_if_asked(TOPLEVEL, argc, argv);
  return Runtime::start(argc, argv);
}

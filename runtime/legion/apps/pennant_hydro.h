// pennant's hydrodynamics, shared by the tasks and the sequential check
// (pennant.cc): the leblanc problem and the mesh cut (Config), the fields,
// strided views of them (Mesh, Points), and pennant.rg's kernels, written
// once on those views.
#ifndef MAPWRIGHT_PENNANT_HYDRO_H
#define MAPWRIGHT_PENNANT_HYDRO_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common.h"
#include "legion.h"

namespace pennant_hydro {

using namespace Legion;
using namespace mapwright_apps;

// Fields; a vec2 is two fields, x then y (F and F_Y, named "f.x", "f.y").
enum ZoneFields : FieldID {
  ZXP = 100,
  ZXP_Y,
  ZX,
  ZX_Y,
  ZAREAP,
  ZAREA,
  ZVOL0,
  ZVOLP,
  ZVOL,
  ZDL,
  ZM,
  ZRP,
  ZR,
  ZE,
  ZETOT,
  ZW,
  ZWRATE,
  ZP,
  ZSS,
  ZDU,
  ZUC,
  ZUC_Y,
  Z0TMP,
  ZNUMP,
};
enum PointFields : FieldID {
  PX0 = 200,
  PX0_Y,
  PXP,
  PXP_Y,
  PX,
  PX_Y,
  PU0,
  PU0_Y,
  PU,
  PU_Y,
  PF,
  PF_Y,
  PMASWT,
  HAS_BCX,
  HAS_BCY,
};
enum SideFields : FieldID {
  MAPSZ = 500,
  MAPSP1,
  MAPSP1_INDEX,
  MAPSP2,
  MAPSP2_INDEX,
  MAPSS3,
  MAPSS4,
  SAREAP,
  SAREA,
  SMF,
  SFP,
  SFP_Y,
  SFT,
  SFT_Y,
  SFQ,
  SFQ_Y,
  EXP,
  EXP_Y,
  EX,
  EX_Y,
  ELEN,
  CAREA,
  CEVOL,
  CDU,
  CDIV,
  CCOS,
  CQE1,
  CQE1_Y,
  CQE2,
  CQE2_Y,
};

// The leblanc problem (pennant.tests/leblanc/leblanc.pnt) and the mesh cut.
struct Config {
  long nzx, nzy, npieces, cstop, prune;
  double lenx = 1.0, leny = 9.0;
  double rinit = 1.0, einit = 0.1, rinitsub = 1.0e-3, einitsub = 1.0e-7;
  double subregion[4] = {0.0, 1.0, 3.0, 9.0};
  double bcx[2] = {0.0, 1.0}, bcy[2] = {0.0, 9.0};
  double ssmin = 0.1, q1 = 0.3, q2 = 2.0, dtinit = 1.0e-2, tstop = 6.0;
  double alfa = 0.5, cfl = 0.6, cflv = 0.1, dtfac = 1.2, dtmax = 1.0e99;
  double gamma = 5.0 / 3.0, uinitradial = 0.0;

  long nz() const { return nzx * nzy; }
  long ns() const { return 4 * nz(); }
  long nxp() const { return nzx + 1; }
  long np() const { return nxp() * (nzy + 1); }
  // Piece i has zone rows [row0(i), row0(i + 1)).
  long row0(long i) const { return i * nzy / npieces; }
  // Its private point rows, first and last (inclusive).
  long private_lo(long i) const { return row0(i) + (i > 0 ? 1 : 0); }
  long private_hi(long i) const { return row0(i + 1) - (i < npieces - 1 ? 1 : 0); }
  long private_start(long i) const {
    long n = 0;
    for (long j = 0; j < i; j++) n += (private_hi(j) - private_lo(j) + 1) * nxp();
    return n;
  }
  long nprivate() const { return private_start(npieces); }
  // The point at column x of point row y.
  long point(long x, long y) const {
    for (long i = 0; i < npieces; i++) {
      if (i < npieces - 1 && y == row0(i + 1)) return nprivate() + i * nxp() + x;
      if (y >= private_lo(i) && y <= private_hi(i))
        return private_start(i) + (y - private_lo(i)) * nxp() + x;
    }
    std::abort();
  }
  // The shared rows a piece owns ([first, first + count) of the ghost
  // points) and touches.
  Rect<1> shared_of(long i) const {
    long lo = nprivate() + i * nxp();
    return i < npieces - 1 ? Rect<1>(lo, lo + nxp() - 1) : Rect<1>(lo, lo - 1);
  }
  Rect<1> ghost_of(long i) const {
    long lo = nprivate() + std::max(0L, i - 1) * nxp();
    long hi = nprivate() + std::min(i + 1, npieces - 1) * nxp();
    return Rect<1>(lo, hi - 1);
  }
};

inline Config read_config() {
  Flags f;
  Config c;
  // Small enough that the waves from the discontinuity at y = 3 cross the
  // first piece boundary (y = 2.25) within the default cycles, so the check
  // covers the exchange through the shared points.
  c.nzx = f.get("-nzx", 16);
  c.nzy = f.get("-nzy", 144);
  c.npieces = f.get("-npieces", 4);
  c.cstop = f.get("-cstop", 60);
  c.prune = f.get("-prune", 5);
  if (c.nzx < 1 || c.npieces < 1 || c.nzy < 2 * c.npieces || c.cstop < 1 || c.prune < 0) {
    std::fprintf(stderr, "pennant: need -nzx >= 1, -nzy >= 2 * -npieces, -cstop >= 1\n");
    std::exit(2);
  }
  return c;
}

inline Config config_of(const Task *task) { return *static_cast<const Config *>(task->args); }

// ------------------------------------------------------------ mesh views

// A strided view of one field, indexed by global element id: the tasks see
// their instances through it, the sequential run its arrays.
template <typename T>
using Col = Column<T>;

struct Vec {
  double x, y;
};
inline Vec operator+(Vec a, Vec b) { return {a.x + b.x, a.y + b.y}; }
inline Vec operator-(Vec a, Vec b) { return {a.x - b.x, a.y - b.y}; }
inline Vec operator*(double a, Vec b) { return {a * b.x, a * b.y}; }
inline double dot(Vec a, Vec b) { return a.x * b.x + a.y * b.y; }
inline double cross(Vec a, Vec b) { return a.x * b.y - a.y * b.x; }
inline double length(Vec a) { return std::sqrt(dot(a, a)); }
inline Vec rotate_ccw(Vec a) { return {-a.y, a.x}; }
inline Vec project(Vec a, Vec b) { return a - dot(a, b) * b; }

struct Col2 {
  Col<double> x, y;
  Vec get(int64_t i) const { return {x[i], y[i]}; }
  void set(int64_t i, Vec v) const {
    x[i] = v.x;
    y[i] = v.y;
  }
};

// A vec2 field is two fields, x at `f` and y at `f + 1`.
inline void bind_field(Col2 &col, const PhysicalRegion &region, FieldID f, Rect<1> bounds,
                       bool write) {
  bind_field(col.x, region, f, bounds, write);
  bind_field(col.y, region, FieldID(f + 1), bounds, write);
}

struct Points {
  Col2 px0, pxp, px, pu0, pu, pf;
  Col<double> pmaswt;
  Col<bool> has_bcx, has_bcy;
};

// Every field a kernel may touch; a task fills in the ones it has. Points
// are reached through a side's pointer and its __index: private (0) or
// ghost (1).
struct Mesh {
  Col2 zxp, zx, zuc;
  Col<double> zareap, zarea, zvol0, zvolp, zvol, zdl, zm, zrp, zr, ze, zetot, zw, zwrate, zp, zss,
      zdu, z0tmp;
  Col<uint8_t> znump;
  Points pp, pg;
  Col<int64_t> mapsz, mapsp1, mapsp2, mapss3, mapss4;
  Col<int8_t> mapsp1_index, mapsp2_index;
  Col<double> sareap, sarea, smf, elen, carea, cevol, cdu, cdiv, ccos;
  Col2 sfp, sft, sfq, exp, ex, cqe1, cqe2;

  const Points &p(int8_t index) const { return index == 0 ? pp : pg; }
  const Points &p1(int64_t s) const { return p(mapsp1_index[s]); }
  const Points &p2(int64_t s) const { return p(mapsp2_index[s]); }
};

// Which view member each field fills (a vec2 field by its x field): zone
// and side fields are a Mesh's, point fields a Points' (a task's private
// or ghost points, as its requirement is). The tasks name fields only.
using MeshTable = FieldTable<Mesh, Col2, Col<double>, Col<uint8_t>, Col<int64_t>, Col<int8_t>>;
using PointTable = FieldTable<Points, Col2, Col<double>, Col<bool>>;

inline const MeshTable &fields_of(const Mesh &) {
  static const MeshTable table{
      {ZXP, &Mesh::zxp},       {ZX, &Mesh::zx},
      {ZAREAP, &Mesh::zareap}, {ZAREA, &Mesh::zarea},
      {ZVOL0, &Mesh::zvol0},   {ZVOLP, &Mesh::zvolp},
      {ZVOL, &Mesh::zvol},     {ZDL, &Mesh::zdl},
      {ZM, &Mesh::zm},         {ZRP, &Mesh::zrp},
      {ZR, &Mesh::zr},         {ZE, &Mesh::ze},
      {ZETOT, &Mesh::zetot},   {ZW, &Mesh::zw},
      {ZWRATE, &Mesh::zwrate}, {ZP, &Mesh::zp},
      {ZSS, &Mesh::zss},       {ZDU, &Mesh::zdu},
      {ZUC, &Mesh::zuc},       {Z0TMP, &Mesh::z0tmp},
      {ZNUMP, &Mesh::znump},   {MAPSZ, &Mesh::mapsz},
      {MAPSP1, &Mesh::mapsp1}, {MAPSP1_INDEX, &Mesh::mapsp1_index},
      {MAPSP2, &Mesh::mapsp2}, {MAPSP2_INDEX, &Mesh::mapsp2_index},
      {MAPSS3, &Mesh::mapss3}, {MAPSS4, &Mesh::mapss4},
      {SAREAP, &Mesh::sareap}, {SAREA, &Mesh::sarea},
      {SMF, &Mesh::smf},       {SFP, &Mesh::sfp},
      {SFT, &Mesh::sft},       {SFQ, &Mesh::sfq},
      {EXP, &Mesh::exp},       {EX, &Mesh::ex},
      {ELEN, &Mesh::elen},     {CAREA, &Mesh::carea},
      {CEVOL, &Mesh::cevol},   {CDU, &Mesh::cdu},
      {CDIV, &Mesh::cdiv},     {CCOS, &Mesh::ccos},
      {CQE1, &Mesh::cqe1},     {CQE2, &Mesh::cqe2},
  };
  return table;
}

inline const PointTable &fields_of(const Points &) {
  static const PointTable table{
      {PX0, &Points::px0},       {PXP, &Points::pxp},         {PX, &Points::px},
      {PU0, &Points::pu0},       {PU, &Points::pu},           {PF, &Points::pf},
      {PMASWT, &Points::pmaswt}, {HAS_BCX, &Points::has_bcx}, {HAS_BCY, &Points::has_bcy}};
  return table;
}

// The side-to-zone and side-to-point maps (first point only, or both).
const std::vector<FieldID> maps1 = {MAPSZ, MAPSP1, MAPSP1_INDEX};
const std::vector<FieldID> maps2 = {MAPSZ, MAPSP1, MAPSP1_INDEX, MAPSP2, MAPSP2_INDEX};

struct Range {
  int64_t lo, hi;  // [lo, hi)
};

// ------------------------------------------------------------ the kernels
// (pennant.rg's, on views: the tasks and the sequential run share them)

// initialize_topology: zones, the piece's own points and its sides.
inline void topology(const Config &c, long piece, const Mesh &m, bool with_shared) {
  long zr0 = c.row0(piece), zr1 = c.row0(piece + 1);
  for (long z = zr0 * c.nzx; z < zr1 * c.nzx; z++) m.znump[z] = 4;
  double dx = c.lenx / double(c.nzx), dy = c.leny / double(c.nzy), eps = 1e-12;
  auto init_point = [&](const Points &p, long x, long y) {
    long id = c.point(x, y);
    Vec px{dx * double(x), dy * double(y)};
    p.px.set(id, px);
    p.has_bcx[id] = std::fabs(px.x - c.bcx[0]) < eps || std::fabs(px.x - c.bcx[1]) < eps;
    p.has_bcy[id] = std::fabs(px.y - c.bcy[0]) < eps || std::fabs(px.y - c.bcy[1]) < eps;
  };
  for (long y = c.private_lo(piece); y <= c.private_hi(piece); y++)
    for (long x = 0; x <= c.nzx; x++) init_point(m.pp, x, y);
  if (with_shared && piece < c.npieces - 1)
    for (long x = 0; x <= c.nzx; x++) init_point(m.pg, x, zr1);
  // Sides of zone (x, y) go counter-clockwise around its corners (x, y),
  // (x + 1, y), (x + 1, y + 1), (x, y + 1); side k joins corners k, k + 1.
  const long cx[4] = {0, 1, 1, 0}, cy[4] = {0, 0, 1, 1};
  for (long y = zr0; y < zr1; y++)
    for (long x = 0; x < c.nzx; x++) {
      long z = y * c.nzx + x;
      for (long k = 0; k < 4; k++) {
        long s = 4 * z + k, k2 = (k + 1) % 4;
        m.mapsz[s] = z;
        m.mapsp1[s] = c.point(x + cx[k], y + cy[k]);
        m.mapsp2[s] = c.point(x + cx[k2], y + cy[k2]);
        m.mapsp1_index[s] = m.mapsp2_index[s] = -1;  // init_pointers decides
        m.mapss3[s] = 4 * z + (k + 3) % 4;
        m.mapss4[s] = 4 * z + k2;
      }
    }
}

inline void init_mesh_zones(const Mesh &m, Range zr) {
  for (int64_t z = zr.lo; z < zr.hi; z++) {
    m.zx.set(z, {0.0, 0.0});
    m.zarea[z] = 0.0;
    m.zvol[z] = 0.0;
  }
}

// calc_centers (half step: pxp, zxp, exp) and calc_centers_full (px, zx, ex).
inline void centers(const Mesh &m, Range zr, Range sr, Col2 Points::*pos, const Col2 &zc,
                    const Col2 &ec) {
  for (int64_t z = zr.lo; z < zr.hi; z++) zc.set(z, {0.0, 0.0});
  for (int64_t s = sr.lo; s < sr.hi; s++) {
    int64_t z = m.mapsz[s];
    Vec x1 = (m.p1(s).*pos).get(m.mapsp1[s]), x2 = (m.p2(s).*pos).get(m.mapsp2[s]);
    ec.set(s, 0.5 * (x1 + x2));
    zc.set(z, zc.get(z) + (1.0 / double(m.znump[z])) * x1);
  }
}

// calc_volumes (with edge lengths) and calc_volumes_full; the number of
// sides with a volume that is not positive.
inline int volumes(const Mesh &m, Range zr, Range sr, Col2 Points::*pos, const Col2 &zc,
                   const Col<double> &sarea, const Col<double> &zarea, const Col<double> &zvol,
                   const Col<double> *elen) {
  for (int64_t z = zr.lo; z < zr.hi; z++) zarea[z] = zvol[z] = 0.0;
  int negatives = 0;
  for (int64_t s = sr.lo; s < sr.hi; s++) {
    int64_t z = m.mapsz[s];
    Vec x1 = (m.p1(s).*pos).get(m.mapsp1[s]), x2 = (m.p2(s).*pos).get(m.mapsp2[s]);
    Vec zx = zc.get(z);
    double sa = 0.5 * cross(x2 - x1, zx - x1);
    double sv = sa * (x1.x + x2.x + zx.x);
    sarea[s] = sa;
    if (elen != nullptr) (*elen)[s] = length(x2 - x1);
    zarea[z] += sa;
    zvol[z] += (1.0 / 3.0) * sv;
    negatives += sv <= 0.0 ? 1 : 0;
  }
  return negatives;
}

inline void init_side_fracs(const Mesh &m, Range sr) {
  for (int64_t s = sr.lo; s < sr.hi; s++) m.smf[s] = m.sarea[s] / m.zarea[m.mapsz[s]];
}

inline void init_hydro(const Mesh &m, Range zr, const Config &c) {
  double eps = 1e-12;
  for (int64_t z = zr.lo; z < zr.hi; z++) {
    Vec x = m.zx.get(z);
    bool sub = x.x > c.subregion[0] - eps && x.x < c.subregion[1] + eps &&
               x.y > c.subregion[2] - eps && x.y < c.subregion[3] + eps;
    double r = sub ? c.rinitsub : c.rinit, e = sub ? c.einitsub : c.einit;
    m.zr[z] = r;
    m.ze[z] = e;
    m.zwrate[z] = 0.0;
    m.zm[z] = r * m.zvol[z];
    m.zetot[z] = e * m.zm[z];
  }
}

inline void init_radial_velocity(const Points &p, Range pr, double vel) {
  for (int64_t i = pr.lo; i < pr.hi; i++) {
    Vec x = p.px.get(i);
    p.pu.set(i, vel == 0.0 ? Vec{0.0, 0.0} : (vel / length(x)) * x);
  }
}

inline void init_step_points(const Points &p, Range pr) {
  for (int64_t i = pr.lo; i < pr.hi; i++) {
    p.pmaswt[i] = 0.0;
    p.pf.set(i, {0.0, 0.0});
  }
}

inline void adv_pos_half(const Points &p, Range pr, double dt) {
  for (int64_t i = pr.lo; i < pr.hi; i++) {
    Vec x0 = p.px.get(i), u0 = p.pu.get(i);
    p.px0.set(i, x0);
    p.pu0.set(i, u0);
    p.pxp.set(i, x0 + (0.5 * dt) * u0);
  }
}

inline void init_step_zones(const Mesh &m, Range zr) {
  for (int64_t z = zr.lo; z < zr.hi; z++) m.zvol0[z] = m.zvol[z];
}

inline void calc_char_len(const Mesh &m, Range zr, Range sr) {
  for (int64_t z = zr.lo; z < zr.hi; z++) m.zdl[z] = 1.0e99;
  for (int64_t s = sr.lo; s < sr.hi; s++) {
    int64_t z = m.mapsz[s];
    double fac = m.znump[z] == 3 ? 3.0 : 4.0;
    m.zdl[z] = std::min(m.zdl[z], fac * m.sareap[s] / m.elen[s]);
  }
}

inline void calc_rho_half(const Mesh &m, Range zr) {
  for (int64_t z = zr.lo; z < zr.hi; z++) m.zrp[z] = m.zm[z] / m.zvolp[z];
}

// `add(index, point, value)` adds to a point: into the private points, or
// as a reduction into the ghost points.
template <typename Add>
inline void sum_point_mass(const Mesh &m, Range sr, Add add) {
  for (int64_t s = sr.lo; s < sr.hi; s++) {
    int64_t z = m.mapsz[s];
    double mass = m.zrp[z] * m.zareap[z] * 0.5 * (m.smf[s] + m.smf[m.mapss3[s]]);
    add(m.mapsp1_index[s], m.mapsp1[s], mass);
  }
}

inline void calc_state_at_half(const Mesh &m, Range zr, const Config &c, double dt) {
  double gm1 = c.gamma - 1.0, ss2 = std::max(c.ssmin * c.ssmin, 1e-99), dth = 0.5 * dt;
  for (int64_t z = zr.lo; z < zr.hi; z++) {
    double rx = m.zr[z], ex = std::max(m.ze[z], 0.0);
    double px = gm1 * rx * ex, prex = gm1 * ex, perx = gm1 * rx;
    double csqd = std::max(ss2, prex + perx * px / (rx * rx));
    double zss = std::sqrt(csqd);
    m.zss[z] = zss;
    double zminv = 1.0 / m.zm[z];
    double dv = (m.zvolp[z] - m.zvol0[z]) * zminv;
    double bulk = m.zr[z] * zss * zss;
    double denom = 1.0 + 0.5 * perx * dv;
    double src = m.zwrate[z] * dth * zminv;
    m.zp[z] = px + (perx * src - m.zr[z] * bulk * dv) / denom;
  }
}

inline void calc_force_pgas_tts(const Mesh &m, Range sr, const Config &c) {
  for (int64_t s = sr.lo; s < sr.hi; s++) {
    int64_t z = m.mapsz[s];
    Vec ssurf = rotate_ccw(m.exp.get(s) - m.zxp.get(z));
    Vec sfx = (-m.zp[z]) * ssurf;
    m.sfp.set(s, sfx);
    double srho = m.zrp[z] * m.smf[s] * m.zareap[z] / m.sareap[s];
    double sstmp = std::max(m.zss[z], c.ssmin);
    sstmp = c.alfa * sstmp * sstmp;
    double sdp = sstmp * (srho - m.zrp[z]);
    m.sft.set(s, sfx + (-sdp) * ssurf);
  }
}

inline void qcs_zone_center_velocity(const Mesh &m, Range zr, Range sr) {
  for (int64_t z = zr.lo; z < zr.hi; z++) m.zuc.set(z, {0.0, 0.0});
  for (int64_t s = sr.lo; s < sr.hi; s++) {
    int64_t z = m.mapsz[s];
    Vec u = m.p1(s).pu.get(m.mapsp1[s]);
    m.zuc.set(z, m.zuc.get(z) + (1.0 / double(m.znump[z])) * u);
  }
}

inline void qcs_corner_divergence(const Mesh &m, Range sr) {
  for (int64_t s2 = sr.lo; s2 < sr.hi; s2++) {
    int64_t s = m.mapss3[s2], z = m.mapsz[s];
    // Corner s2 at point p, between edges s (p1 to p) and s2 (p to p2).
    const Points &pt = m.p2(s), &pt1 = m.p1(s), &pt2 = m.p2(s2);
    int64_t p = m.mapsp2[s], p1 = m.mapsp1[s], p2 = m.mapsp2[s2];
    Vec up0 = pt.pu.get(p), xp0 = pt.pxp.get(p);
    Vec up1 = 0.5 * (pt.pu.get(p) + pt2.pu.get(p2)), xp1 = m.exp.get(s2);
    Vec up2 = m.zuc.get(z), xp2 = m.zxp.get(z);
    Vec up3 = 0.5 * (pt1.pu.get(p1) + pt.pu.get(p)), xp3 = m.exp.get(s);
    double cvolume = 0.5 * cross(xp2 - xp0, xp3 - xp1);
    m.carea[s2] = cvolume;
    Vec v1 = xp3 - xp0, v2 = xp1 - xp0;
    double de1 = m.elen[s], de2 = m.elen[s2], minelen = std::min(de1, de2);
    m.ccos[s2] = minelen < 1e-12 ? 0.0 : 4.0 * dot(v1, v2) / (de1 * de2);
    double cdiv = (cross(up2 - up0, xp3 - xp1) - cross(up3 - up1, xp2 - xp0)) / (2.0 * cvolume);
    m.cdiv[s2] = cdiv;
    Vec dxx1 = 0.5 * (((xp1 + xp2) - xp0) - xp3), dxx2 = 0.5 * (((xp2 + xp3) - xp0) - xp1);
    double dx1 = length(dxx1), dx2 = length(dxx2);
    Vec duav = 0.25 * (((up0 + up1) + up2) + up3);
    double test1 = std::fabs(dot(dxx1, duav) * dx2), test2 = std::fabs(dot(dxx2, duav) * dx1);
    double r = test1 > test2 ? dx1 / dx2 : dx2 / dx1;
    double evol = std::min(std::sqrt(4.0 * cvolume * r), 2.0 * minelen);
    double dv1 = length(((up1 + up2) - up0) - up3), dv2 = length(((up2 + up3) - up0) - up1);
    double du = std::max(dv1, dv2);
    m.cevol[s2] = cdiv < 0.0 ? evol : 0.0;
    m.cdu[s2] = cdiv < 0.0 ? du : 0.0;
  }
}

inline void qcs_qcn_force(const Mesh &m, Range sr, const Config &c) {
  double gammap1 = c.gamma + 1.0;
  for (int64_t s4 = sr.lo; s4 < sr.hi; s4++) {
    int64_t z = m.mapsz[s4];
    double ztmp2 = c.q2 * 0.25 * gammap1 * m.cdu[s4], ztmp1 = c.q1 * m.zss[z];
    double zkur = ztmp2 + std::sqrt(ztmp2 * ztmp2 + ztmp1 * ztmp1);
    double rmu = m.cdiv[s4] > 0.0 ? 0.0 : zkur * m.zrp[z] * m.cevol[s4];
    int64_t s = m.mapss3[s4];
    Vec u = m.p2(s).pu.get(m.mapsp2[s]), u1 = m.p1(s).pu.get(m.mapsp1[s]);
    Vec u2 = m.p2(s4).pu.get(m.mapsp2[s4]);
    m.cqe1.set(s4, (rmu / m.elen[s]) * (u - u1));
    m.cqe2.set(s4, (rmu / m.elen[s4]) * (u2 - u));
  }
}

inline void qcs_force(const Mesh &m, Range sr) {
  auto weight = [&](int64_t corner, double &w, double &cs) {
    double sin2 = 1.0 - m.ccos[corner] * m.ccos[corner];
    w = sin2 >= 1e-4 ? m.carea[corner] / sin2 : 0.0;
    cs = sin2 >= 1e-4 ? m.ccos[corner] : 0.0;
  };
  for (int64_t s = sr.lo; s < sr.hi; s++) {
    int64_t c2 = m.mapss4[s];
    double w1, cos1, w2, cos2;
    weight(s, w1, cos1);
    weight(c2, w2, cos2);
    Vec f =
        w1 * (m.cqe2.get(s) + cos1 * m.cqe1.get(s)) + w2 * (m.cqe1.get(c2) + cos2 * m.cqe2.get(c2));
    m.sfq.set(s, (1.0 / m.elen[s]) * f);
  }
}

inline void qcs_vel_diff(const Mesh &m, Range zr, Range sr, const Config &c) {
  for (int64_t z = zr.lo; z < zr.hi; z++) m.z0tmp[z] = 0.0;
  for (int64_t s = sr.lo; s < sr.hi; s++) {
    const Points &pt1 = m.p1(s), &pt2 = m.p2(s);
    int64_t p1 = m.mapsp1[s], p2 = m.mapsp2[s], z = m.mapsz[s];
    Vec dx = pt2.pxp.get(p2) - pt1.pxp.get(p1), du = pt2.pu.get(p2) - pt1.pu.get(p1);
    double lenx = m.elen[s];
    double dux = lenx > 0.0 ? std::fabs(dot(du, dx)) / lenx : 0.0;
    m.z0tmp[z] = std::max(m.z0tmp[z], dux);
  }
  for (int64_t z = zr.lo; z < zr.hi; z++) m.zdu[z] = c.q1 * m.zss[z] + 2.0 * c.q2 * m.z0tmp[z];
}

template <typename Add>
inline void sum_point_force(const Mesh &m, Range sr, Add add) {
  for (int64_t s = sr.lo; s < sr.hi; s++) {
    int64_t s3 = m.mapss3[s];
    Vec f = (m.sfq.get(s) + m.sft.get(s)) - (m.sfq.get(s3) + m.sft.get(s3));
    add(m.mapsp1_index[s], m.mapsp1[s], f);
  }
}

inline void apply_boundary_conditions(const Points &p, Range pr) {
  for (int64_t i = pr.lo; i < pr.hi; i++) {
    for (int axis = 0; axis < 2; axis++) {
      if (!(axis == 0 ? p.has_bcx[i] : p.has_bcy[i])) continue;
      Vec fix = axis == 0 ? Vec{1.0, 0.0} : Vec{0.0, 1.0};
      p.pu0.set(i, project(p.pu0.get(i), fix));
      p.pf.set(i, project(p.pf.get(i), fix));
    }
  }
}

inline void adv_pos_full(const Points &p, Range pr, double dt) {
  for (int64_t i = pr.lo; i < pr.hi; i++) {
    double fac = 1.0 / std::max(p.pmaswt[i], 1e-99);
    Vec u0 = p.pu0.get(i);
    Vec u = u0 + dt * (fac * p.pf.get(i));
    p.pu.set(i, u);
    p.px.set(i, p.px0.get(i) + (0.5 * dt) * (u + u0));
  }
}

inline void calc_work(const Mesh &m, Range zr, Range sr, double dt) {
  for (int64_t z = zr.lo; z < zr.hi; z++) m.zw[z] = 0.0;
  for (int64_t s = sr.lo; s < sr.hi; s++) {
    const Points &pt1 = m.p1(s), &pt2 = m.p2(s);
    int64_t p1 = m.mapsp1[s], p2 = m.mapsp2[s], z = m.mapsz[s];
    Vec f = m.sfp.get(s) + m.sfq.get(s);
    double sd1 = dot(f, pt1.pu0.get(p1) + pt1.pu.get(p1));
    double sd2 = dot(-1.0 * f, pt2.pu0.get(p2) + pt2.pu.get(p2));
    double dwork = -0.5 * dt * (sd1 * pt1.pxp.x[p1] + sd2 * pt2.pxp.x[p2]);
    m.zetot[z] += dwork;
    m.zw[z] += dwork;
  }
}

inline void calc_work_rate_energy_rho_full(const Mesh &m, Range zr, double dt) {
  for (int64_t z = zr.lo; z < zr.hi; z++) {
    m.zwrate[z] = (m.zw[z] + m.zp[z] * (m.zvol[z] - m.zvol0[z])) / dt;
    m.ze[z] = m.zetot[z] / (m.zm[z] + 1e-99);
    m.zr[z] = m.zm[z] / m.zvol[z];
  }
}

inline double calc_dt_hydro(const Mesh &m, Range zr, double dtlast, const Config &c) {
  double dtnew = c.dtmax, dvovmax = 1e-99;
  for (int64_t z = zr.lo; z < zr.hi; z++) {
    double cdu = std::max(m.zdu[z], std::max(m.zss[z], 1e-99));
    dtnew = std::min(dtnew, m.zdl[z] * c.cfl / cdu);
    dvovmax = std::max(dvovmax, std::fabs((m.zvol[z] - m.zvol0[z]) / m.zvol0[z]));
  }
  return std::min(std::min(c.dtmax, dtnew), dtlast * c.cflv / dvovmax);
}

inline double calc_global_dt(const Config &c, double dtlast, double dthydro, double time,
                             long cycle) {
  double dt = c.dtmax;
  dt = std::min(dt, cycle == 0 ? c.dtinit : c.dtfac * dtlast);
  dt = std::min(dt, c.tstop - time);
  return std::min(dt, dthydro);
}

inline bool continue_simulation(long cycle, long cstop, double time, double tstop) {
  return cycle < cstop && time < tstop;
}

}  // namespace pennant_hydro

#endif

// The DISTAL matrix multiplications as real Legion programs, written once.
// The 2-D family (cannon, summa, pumma) shares task names, region names,
// argument order, privileges and launches (runtime/apps/<app>.json); only
// the order in which each point walks the k panels differs. The 3-D family
// (johnson, cosma, run_3d below) shares the values, the placements, the
// dgemm leaf, the benchmark loop and the check with it.
//
// A(i,j) += B(i,k) * C(k,j) over n x n doubles (field "vals" of regions A,
// B, C), on a gx x gy grid of blocks with 2 x 2 tiles each:
//   top_level   each iteration: taco_fill A, B, C; the placement tasks
//               task_1, task_2, task_3; then, timed, task_7
//   task_7      (gx, gy), inner: for each k panel, task_6
//   task_6      single, inner: task_5 over the block's 2 x 2 tiles
//   task_5      (2, 2), inner: for each half of the panel, task_4
//   task_4      single, leaf: dgemm on its pieces, the leading dimensions
//               taken from the instances' strides (stride[0] / 8) as
//               DISTAL's cuBLAS call does, so an instance without the last
//               index fastest (F_order) gets BLAS's own error
//               ("parameter number  8 had an illegal value")
//   taco_validate  after the loop: every entry of A against the exact
//               product
// Output as DISTAL's: "Execution time: %lld ms." per timed iteration, then
// "On %ld nodes achieved GFLOPS per node: %lf.".
#ifndef MAPWRIGHT_APPS_GEMM_COMMON_H
#define MAPWRIGHT_APPS_GEMM_COMMON_H

namespace mapwright_apps {
namespace gemm {

// How the point (i, j) of a grid skews its walk over the k panels: at
// step s of p panels it takes panel (skew + s) mod p.
enum class Skew {
  NONE,            // skew 0: every point the same panel (SUMMA)
  ROW,             // skew i (PUMMA)
  ROW_AND_COLUMN,  // skew i + j (Cannon)
};

// The skews over the blocks (task_7's k panels) and over a block's tiles
// (task_5's halves).
struct Schedule {
  Skew outer, inner;
};

// Registers the tasks and runs the program with `schedule`.
int run(int argc, char **argv, Schedule schedule);

// The 3-D family (johnson, cosma): task_1, task_2, task_3 place (write)
// A, B, C on the faces of a gx x gy x gz grid, task_4 over the grid adds
// B(i,k) C(k,j) into a SUM reduction of A(i,j), and task_1 reads A back
// (timed) and checks it. `one_gdim`: the grid is -gdim cubed (johnson),
// else -gx -gy -gz (cosma).
int run_3d(int argc, char **argv, bool one_gdim);

// The 2.5-D family (solomonik): task_1, task_2, task_3 place A, B, C on
// an rpoc x rpoc x c grid (-rpoc -c, default 2 x 2 x 1), task_5 over the
// grid (inner) reduces into A(i,j) with one task_4 per k panel of its
// replica's share of -rpoc3 (default 2), and task_1 reads A back (timed)
// and checks it.
int run_25d(int argc, char **argv);

}  // namespace gemm
}  // namespace mapwright_apps

#endif

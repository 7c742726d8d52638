// cannon as a real Legion program: the DISTAL cannon matrix multiplication
// (runtime/apps/cannon.json) on CPUs with dgemm from a CPU BLAS. The task
// graph, tiling and output are gemm_common's; Cannon's algorithm: after a skew, every point takes
// the k panel (i + j + step) mod the panel count, over the blocks and inside task_5 over the tiles.
#include "gemm_common.h"

int main(int argc, char **argv) {
  using mapwright_apps::gemm::Skew;
  return mapwright_apps::gemm::run(argc, argv, {Skew::ROW_AND_COLUMN, Skew::ROW_AND_COLUMN});
}

// pumma as a real Legion program: the DISTAL pumma matrix multiplication
// (runtime/apps/pumma.json) on CPUs with dgemm from a CPU BLAS. The task
// graph, tiling and output are gemm_common's; PUMMA: over the blocks the k panel is skewed by the
// block's row only, (i + step) mod the panel count; inside task_5 the halves in order.
#include "gemm_common.h"

int main(int argc, char **argv) {
  using mapwright_apps::gemm::Skew;
  return mapwright_apps::gemm::run(argc, argv, {Skew::ROW, Skew::NONE});
}

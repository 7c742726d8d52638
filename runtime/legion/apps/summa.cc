// summa as a real Legion program: the DISTAL summa matrix multiplication
// (runtime/apps/summa.json) on CPUs with dgemm from a CPU BLAS. The task
// graph, tiling and output are gemm_common's; SUMMA: at each step every point takes the same k
// panel (a broadcast along rows and columns), at both levels.
#include "gemm_common.h"

int main(int argc, char **argv) {
  using mapwright_apps::gemm::Skew;
  return mapwright_apps::gemm::run(argc, argv, {Skew::NONE, Skew::NONE});
}

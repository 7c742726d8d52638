// cosma as a real Legion program: the DISTAL cosma matrix multiplication
// (runtime/apps/cosma.json) on CPUs with dgemm from a CPU BLAS: COSMA's processor grid, -gx -gy -gz
// (default 1 x 2 x 2), gemm_common's 3-D family.
#include "gemm_common.h"

int main(int argc, char **argv) { return mapwright_apps::gemm::run_3d(argc, argv, false); }

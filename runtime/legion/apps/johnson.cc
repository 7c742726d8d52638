// johnson as a real Legion program: the DISTAL johnson matrix multiplication
// (runtime/apps/johnson.json) on CPUs with dgemm from a CPU BLAS: Johnson's 3-D algorithm on a
// -gdim cubed grid (default 2: 8 points), gemm_common's 3-D family.
#include "gemm_common.h"

int main(int argc, char **argv) { return mapwright_apps::gemm::run_3d(argc, argv, true); }

// solomonik as a real Legion program: the DISTAL Solomonik 2.5-D matrix
// multiplication (runtime/apps/solomonik.json) on CPUs with dgemm from a
// CPU BLAS: gemm_common's run_25d (-rpoc 2 -c 1 -rpoc3 2 by default).
#include "gemm_common.h"

int main(int argc, char **argv) { return mapwright_apps::gemm::run_25d(argc, argv); }

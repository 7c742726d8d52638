/* A stand-in for the NVIDIA driver's libcuda.so.1 on machines without one.
 * The Legion libraries from the `legate` wheel are built with CUDA and link
 * libcuda directly; with this stub Realm's cuInit reports "no device"
 * (CUDA_ERROR_NO_DEVICE, 100) and Legion runs on CPUs only. sdk.sh builds
 * it only when no driver is present, so a GPU machine uses the real one. */
#include <stddef.h>

#define CUDA_ERROR_NO_DEVICE 100

int cuInit(unsigned int flags) {
  (void)flags;
  return CUDA_ERROR_NO_DEVICE;
}

int cuGetErrorName(int error, const char **name) {
  (void)error;
  if (name != NULL) *name = "CUDA_ERROR_NO_DEVICE";
  return 0;
}

int cuGetErrorString(int error, const char **text) {
  (void)error;
  if (text != NULL) *text = "no CUDA-capable device is detected (mapwright's libcuda stub)";
  return 0;
}

int cuMemFreeHost(void *p) {
  (void)p;
  return CUDA_ERROR_NO_DEVICE;
}

int cuMemFree_v2(unsigned long long p) {
  (void)p;
  return CUDA_ERROR_NO_DEVICE;
}

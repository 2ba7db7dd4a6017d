/* device.cu — device discovery for the CUDA part; see device.h.  A missing
 * driver or device is reported as a code, never as a crash. */
#include <cuda_runtime.h>
#include <string.h>
#include "device.h"

extern "C" int ptsim_cuda_query(int *count, char *name, int name_len, int *major, int *minor,
                                double *memory_bytes, int *runtime_version, int *driver_version) {
  *count = 0;
  *runtime_version = 0;
  *driver_version = 0;
  cudaRuntimeGetVersion(runtime_version);
  cudaDriverGetVersion(driver_version);
  cudaError_t rc = cudaGetDeviceCount(count);
  if (rc != cudaSuccess) {
    *count = 0;
    return (int)rc;
  }
  if (*count == 0) return (int)cudaErrorNoDevice;
  cudaDeviceProp prop;
  rc = cudaGetDeviceProperties(&prop, 0);
  if (rc != cudaSuccess) return (int)rc;
  strncpy(name, prop.name, (size_t)name_len - 1);
  name[name_len - 1] = '\0';
  *major = prop.major;
  *minor = prop.minor;
  *memory_bytes = (double)prop.totalGlobalMem;
  return 0;
}

extern "C" const char *ptsim_cuda_error_string(int code) {
  return cudaGetErrorString((cudaError_t)code);
}

/* device.h — the C ABI of the CUDA part (the .cu files beside it).  Plain C types and
 * cudaError_t-style int return codes only, so the shell (gpu.c) can call it
 * from C and turn failures into GErrors.  No GLib here. */
#ifndef PTSIM_CUDA_DEVICE_H
#define PTSIM_CUDA_DEVICE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Device 0's properties.  Returns 0 (cudaSuccess) or the CUDA error code;
 * *count is 0 when no device or driver is present. */
int ptsim_cuda_query(int *count, char *name, int name_len, int *major,
                     int *minor, double *memory_bytes, int *runtime_version,
                     int *driver_version);

/* The CUDA error string for a code returned above.  (transfer none) */
const char *ptsim_cuda_error_string(int code);

#ifdef __cplusplus
}
#endif

#endif /* PTSIM_CUDA_DEVICE_H */

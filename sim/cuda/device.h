/* device.h — the C ABI of the CUDA part (the .cu files beside it).  Plain C types and
 * cudaError_t-style int return codes only, so the shell (gpu.c) can call it
 * from C and turn failures into GErrors.  No GLib here. */
#ifndef PTSIM_CUDA_DEVICE_H
#define PTSIM_CUDA_DEVICE_H

#include "../core/batch.h"
#include "../core/job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device 0's properties.  Returns 0 (cudaSuccess) or the CUDA error code;
 * *count is 0 when no device or driver is present. */
int ptsim_cuda_query(int *count, char *name, int name_len, int *major, int *minor,
                     double *memory_bytes, int *runtime_version, int *driver_version);

/* Evaluates jobs[0..n) on device 0, one GPU thread per job, with the same
 * ptsim_batch_evaluate_mc() the CPU runs (batch.cu), Monte-Carlo samples
 * drawn with cuRAND when mc is not NULL; first_index is jobs[0]'s index in
 * the whole sweep (its random streams); tables[0..table_count) are the
 * measured kernel tables the jobs index (batch.h; NULL: none), copied to
 * the device once per call.  out[i] gets job i's result;
 * per-job failures are in out[i].status, not in the return code.
 * Each thread works in `stride` bytes of scratch: at least the largest
 * ptsim_batch_scratch_bytes_mc of the batch, which the caller computes
 * (the host's copy of the core is the C one: nvcc compiles the core as
 * device code only).  The scratch is one device buffer of (jobs per
 * launch) x stride; when that does not fit in half the free device memory
 * the batch runs in several launches.
 * Returns 0 (cudaSuccess; also for n == 0), cudaErrorInvalidValue for NULL
 * pointers, n < 0 or stride < 1, cudaErrorNoDevice when no device is
 * present, or the first failing CUDA call's code (cudaMalloc's included);
 * device memory is freed on every path, and out is unspecified on
 * failure. */
int ptsim_cuda_evaluate_mc(const PtsimJob *jobs, int n, const PtsimMonteCarlo *mc,
                           const PtsimKernelTable *tables, int table_count,
                           unsigned long long first_index, int64_t stride, PtsimBatchResult *out);

/* The CUDA error string for a code returned above.  (transfer none) */
const char *ptsim_cuda_error_string(int code);

#ifdef __cplusplus
}
#endif

#endif /* PTSIM_CUDA_DEVICE_H */

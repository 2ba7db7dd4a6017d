/* batch.cu — the GPU batch evaluator: many jobs at once, one thread each,
 * running the core's own source (see batch.h).
 *
 * The build compiles every core .c file with nvcc as a translation unit of
 * its own (host and device code, relocatable; CMakeLists.txt), so the
 * kernel calls the very functions the CPU runs (every one PTSIM_HD) through
 * the device linker.  They are C++ there, so their names are mangled and do
 * not clash with the C objects of ptsim_lib.
 *
 * Memory: jobs, results and one scratch buffer of
 * (jobs per launch) x stride, stride = the largest ptsim_batch_scratch_bytes
 * of the batch; thread i works in scratch + i * stride.  No heap use on the
 * device, no recursion; the per-thread stack (the engine's Sim, cost
 * parameters) is sized from the kernel's own attributes.
 *
 * Every CUDA call is checked; the first failure is returned as its
 * cudaError_t code after everything allocated is freed.  No GLib here
 * (gpu.c turns codes into GErrors). */
#include <cuda_runtime.h>
#include <stdint.h>
#include "device.h"

#include "../core/batch.h"

/* Threads per block: small blocks spread a batch of a few thousand jobs
 * over every SM (one thread per job, divergent control flow anyway). */
#define BATCH_THREADS 64
/* Launches never ask for more than this much scratch at once. */
#define BATCH_MAX_SCRATCH_BYTES ((size_t)16 << 30)
/* Headroom over the per-thread frame the kernel reports: a device stack
 * overflow is an illegal-address error far from its cause, so the limit is
 * never set exactly at the edge. */
#define BATCH_STACK_MARGIN_BYTES 1024

#define CUDA_CHECK(call)              \
  do {                                \
    rc = (call);                      \
    if (rc != cudaSuccess) goto done; \
  } while (0)

__global__ void batch_kernel(const PtsimJob *jobs, int n, const PtsimKernelTable *tables,
                             int table_count, char *scratch, int64_t stride, PtsimMonteCarlo mc,
                             int has_mc, unsigned long long first_index, PtsimBatchResult *out) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  ptsim_batch_evaluate_mc(&jobs[i], has_mc ? &mc : (const PtsimMonteCarlo *)0, tables,
                          (int32_t)table_count, (uint64_t)(first_index + (unsigned long long)i),
                          scratch + (int64_t)i * stride, stride, &out[i]);
}

/* Raises the per-thread stack limit to what the kernel's frame needs. */
static cudaError_t batch_reserve_stack(void) {
  cudaFuncAttributes attr;
  size_t limit = 0;
  cudaError_t rc = cudaFuncGetAttributes(&attr, batch_kernel);
  if (rc != cudaSuccess) return rc;
  rc = cudaDeviceGetLimit(&limit, cudaLimitStackSize);
  if (rc != cudaSuccess) return rc;
  if (attr.localSizeBytes + BATCH_STACK_MARGIN_BYTES > limit)
    rc = cudaDeviceSetLimit(cudaLimitStackSize, attr.localSizeBytes + BATCH_STACK_MARGIN_BYTES);
  return rc;
}

extern "C" int ptsim_cuda_evaluate_mc(const PtsimJob *jobs, int n, const PtsimMonteCarlo *mc,
                                      const PtsimKernelTable *tables, int table_count,
                                      unsigned long long first_index, int64_t stride,
                                      PtsimBatchResult *out) {
  PtsimMonteCarlo mc_value;
  cudaError_t rc = cudaSuccess;
  PtsimJob *d_jobs = NULL;
  PtsimKernelTable *d_tables = NULL;
  PtsimBatchResult *d_out = NULL;
  char *d_scratch = NULL;
  size_t free_bytes = 0, total_bytes = 0, budget;
  int count = 0, per_launch, first, i;

  if (n < 0 || stride < 1 || (n > 0 && (jobs == NULL || out == NULL)) || table_count < 0 ||
      (table_count > 0 && tables == NULL))
    return (int)cudaErrorInvalidValue;
  if (n == 0) return 0;
  memset(&mc_value, 0, sizeof mc_value);
  if (mc) mc_value = *mc;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count == 0) return (int)cudaErrorNoDevice;
  CUDA_CHECK(batch_reserve_stack());

  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  budget = free_bytes / 2 < BATCH_MAX_SCRATCH_BYTES ? free_bytes / 2 : BATCH_MAX_SCRATCH_BYTES;
  per_launch = (size_t)stride * (size_t)n <= budget ? n : (int)(budget / (size_t)stride);
  if (per_launch < 1) per_launch = 1;

  /* the kernel tables once per batch: every job of it reads them */
  if (table_count > 0) {
    CUDA_CHECK(cudaMalloc((void **)&d_tables, sizeof(PtsimKernelTable) * (size_t)table_count));
    CUDA_CHECK(cudaMemcpy(d_tables, tables, sizeof(PtsimKernelTable) * (size_t)table_count,
                          cudaMemcpyHostToDevice));
  }
  CUDA_CHECK(cudaMalloc((void **)&d_jobs, sizeof(PtsimJob) * (size_t)per_launch));
  CUDA_CHECK(cudaMalloc((void **)&d_out, sizeof(PtsimBatchResult) * (size_t)per_launch));
  CUDA_CHECK(cudaMalloc((void **)&d_scratch, (size_t)stride * (size_t)per_launch));

  for (first = 0; first < n; first += per_launch) {
    int k = n - first < per_launch ? n - first : per_launch;
    int blocks = (k + BATCH_THREADS - 1) / BATCH_THREADS;
    CUDA_CHECK(
        cudaMemcpy(d_jobs, jobs + first, sizeof(PtsimJob) * (size_t)k, cudaMemcpyHostToDevice));
    batch_kernel<<<blocks, BATCH_THREADS>>>(d_jobs, k, d_tables, table_count, d_scratch, stride,
                                            mc_value, mc != NULL,
                                            first_index + (unsigned long long)first, d_out);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out + first, d_out, sizeof(PtsimBatchResult) * (size_t)k,
                          cudaMemcpyDeviceToHost));
  }

done:
  /* Free everything; report the first error, a free's only if none before. */
  {
    void *owned[4] = {d_scratch, d_out, d_jobs, d_tables};
    for (i = 0; i < 4; i++) {
      cudaError_t freed = owned[i] ? cudaFree(owned[i]) : cudaSuccess;
      if (rc == cudaSuccess) rc = freed;
    }
  }
  return (int)rc;
}

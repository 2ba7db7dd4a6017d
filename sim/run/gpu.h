/* gpu.h — the shell's view of the optional CUDA part: is it compiled in, is
 * a device present, and batch evaluation on it.
 *
 * Every function works in every build: without CUDA compiled in they fail
 * with PTSIM_CUDA_ERROR_UNAVAILABLE; without a device or driver, with
 * PTSIM_CUDA_ERROR_NO_DEVICE.  Never a crash.  The .cu side (sim/cuda/)
 * exports plain C functions returning cudaError_t; this file turns those
 * into GErrors, so GLib stays out of .cu.
 *
 * Not here: the CPU reference (batch.h, batch_cpu.h). */
#ifndef PTSIM_GPU_H
#define PTSIM_GPU_H

#include <glib.h>
#include <stddef.h>
#include "batch.h"
#include "job.h"

#define PTSIM_CUDA_ERROR (ptsim_cuda_error_quark())
GQuark ptsim_cuda_error_quark(void);

typedef enum {
  PTSIM_CUDA_ERROR_UNAVAILABLE, /* built without the CUDA part */
  PTSIM_CUDA_ERROR_NO_DEVICE,   /* no device, or no usable driver */
  PTSIM_CUDA_ERROR_FAILED       /* a CUDA call failed */
} PtsimCudaError;

typedef struct {
  int device_count;
  char name[256]; /* device 0 */
  int compute_major, compute_minor;
  double memory_bytes;
  int runtime_version, driver_version;
} PtsimGpuInfo;

/* TRUE when this binary carries the CUDA part. */
gboolean ptsim_gpu_compiled_in(void);

/* Describes device 0.  Fails (see above) when none is usable. */
gboolean ptsim_gpu_query(PtsimGpuInfo *info, GError **error);

/* One line for `ptsim --version`: compiled in or not, device or why not.
 * (transfer full) */
char *ptsim_gpu_describe(void);

/* Evaluates the validated jobs[0..n) on device 0 with the batch kernel
 * (the same ptsim_batch_evaluate_one() as ptsim_batch_evaluate_cpu, one GPU
 * thread per job).  Per-job failures are in out[i].status.  Fails with
 * PTSIM_CUDA_ERROR_UNAVAILABLE (built without CUDA), _NO_DEVICE (no device
 * or driver), or _FAILED naming the CUDA error (e.g. out of memory); out is
 * unspecified then. */
gboolean ptsim_gpu_evaluate_mc(const PtsimJob *jobs, gsize n, const PtsimMonteCarlo *mc,
                               guint64 first_index, PtsimBatchResult *out, GError **error);
gboolean ptsim_gpu_evaluate(const PtsimJob *jobs, gsize n, PtsimBatchResult *out, GError **error);

#endif /* PTSIM_GPU_H */

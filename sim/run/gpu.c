/* gpu.c — GError glue around the CUDA part; see gpu.h.  In a build without
 * CUDA the same functions compile to "unavailable" stubs, so callers need no
 * #ifdef (SQLite's OMIT pattern). */
#include <string.h>
#include "gpu.h"
#include "kernel_registry.h"
#include "units.h"
#ifdef PTSIM_HAVE_CUDA
#include "device.h"
#endif

/* The domain name keeps its dashes (clang-format 14 would space them). */
/* clang-format off */
G_DEFINE_QUARK(ptsim-cuda-error-quark, ptsim_cuda_error)
/* clang-format on */

gboolean ptsim_gpu_compiled_in(void) {
#ifdef PTSIM_HAVE_CUDA
  return TRUE;
#else
  return FALSE;
#endif
}

gboolean ptsim_gpu_query(PtsimGpuInfo *info, GError **error) {
  g_return_val_if_fail(info != NULL, FALSE);
  memset(info, 0, sizeof *info);
#ifdef PTSIM_HAVE_CUDA
  int rc = ptsim_cuda_query(&info->device_count, info->name, (int)sizeof info->name,
                            &info->compute_major, &info->compute_minor, &info->memory_bytes,
                            &info->runtime_version, &info->driver_version);
  if (rc != 0 || info->device_count == 0) {
    g_set_error(error, PTSIM_CUDA_ERROR, PTSIM_CUDA_ERROR_NO_DEVICE, "no CUDA device: %s",
                ptsim_cuda_error_string(rc));
    return FALSE;
  }
  return TRUE;
#else
  g_set_error(error, PTSIM_CUDA_ERROR, PTSIM_CUDA_ERROR_UNAVAILABLE,
              "this ptsim was built without the CUDA part");
  return FALSE;
#endif
}

#ifndef PTSIM_CUDA_ARCHITECTURES_BUILT
#define PTSIM_CUDA_ARCHITECTURES_BUILT ""
#endif

char *ptsim_gpu_describe(void) {
  if (!ptsim_gpu_compiled_in()) return g_strdup("GPU path: not compiled in");
  PtsimGpuInfo info;
  g_autoptr(GError) error = NULL;
  /* CMake's list with commas, e.g. "80-real,90-real,100-real,120" */
  g_auto(GStrv) built = g_strsplit(PTSIM_CUDA_ARCHITECTURES_BUILT, ",", -1);
  g_autofree char *archs = g_strjoinv(", ", built);
  if (!ptsim_gpu_query(&info, &error))
    return g_strdup_printf("GPU path: compiled in (CUDA architectures %s); device: none (%s)",
                           archs, error->message);
  return g_strdup_printf("GPU path: compiled in (CUDA architectures %s); device: %s "
                         "(sm_%d%d, %.1f GiB), %d device(s)",
                         archs, info.name, info.compute_major, info.compute_minor,
                         info.memory_bytes / PTSIM_GIB_BYTES, info.device_count);
}

gboolean ptsim_gpu_evaluate(const PtsimJob *jobs, gsize n, PtsimBatchResult *out, GError **error) {
  return ptsim_gpu_evaluate_mc(jobs, n, NULL, 0, out, error);
}

gboolean ptsim_gpu_evaluate_mc(const PtsimJob *jobs, gsize n, const PtsimMonteCarlo *mc,
                               guint64 first_index, PtsimBatchResult *out, GError **error) {
  g_return_val_if_fail(n == 0 || (jobs != NULL && out != NULL), FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
#ifdef PTSIM_HAVE_CUDA
  PtsimGpuInfo info;
  if (!ptsim_gpu_query(&info, error)) return FALSE;
  /* The C ABI counts in int; hand over at most this many jobs per call. */
  const gsize slice = (gsize)G_MAXINT / 2;
  for (gsize first = 0; first < n; first += slice) {
    gsize k = MIN(slice, n - first);
    int64_t stride = 16;
    for (gsize i = first; i < first + k; i++)
      stride = MAX(stride, ptsim_batch_scratch_bytes_mc(&jobs[i], mc));
    int32_t tables = 0;
    const PtsimKernelTable *table = ptsim_kernel_registry_tables(&tables);
    int rc = ptsim_cuda_evaluate_mc(jobs + first, (int)k, mc, table, tables,
                                    (unsigned long long)(first_index + first), stride, out + first);
    if (rc != 0) {
      g_set_error(error, PTSIM_CUDA_ERROR, PTSIM_CUDA_ERROR_FAILED,
                  "GPU batch of %" G_GSIZE_FORMAT " jobs on %s failed: %s (CUDA error %d)", n,
                  info.name, ptsim_cuda_error_string(rc), rc);
      return FALSE;
    }
  }
  return TRUE;
#else
  (void)jobs;
  (void)n;
  (void)mc;
  (void)first_index;
  (void)out;
  g_set_error(error, PTSIM_CUDA_ERROR, PTSIM_CUDA_ERROR_UNAVAILABLE,
              "this ptsim was built without the CUDA part");
  return FALSE;
#endif
}

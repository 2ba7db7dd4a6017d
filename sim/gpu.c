/* gpu.c — GError glue around the CUDA part; see gpu.h.  In a build without
 * CUDA the same functions compile to "unavailable" stubs, so callers need no
 * #ifdef (SQLite's OMIT pattern). */
#include <string.h>
#include "gpu.h"
#ifdef PTSIM_HAVE_CUDA
#include "cuda/device.h"
#endif

G_DEFINE_QUARK(ptsim-cuda-error-quark, ptsim_cuda_error)

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
  int rc = ptsim_cuda_query(&info->device_count, info->name,
                            (int)sizeof info->name, &info->compute_major,
                            &info->compute_minor, &info->memory_bytes,
                            &info->runtime_version, &info->driver_version);
  if (rc != 0 || info->device_count == 0) {
    g_set_error(error, PTSIM_CUDA_ERROR, PTSIM_CUDA_ERROR_NO_DEVICE,
                "no usable CUDA device: %s", ptsim_cuda_error_string(rc));
    return FALSE;
  }
  return TRUE;
#else
  g_set_error(error, PTSIM_CUDA_ERROR, PTSIM_CUDA_ERROR_UNAVAILABLE,
              "this ptsim was built without the CUDA part");
  return FALSE;
#endif
}

char *ptsim_gpu_describe(void) {
  if (!ptsim_gpu_compiled_in()) return g_strdup("GPU path: not compiled in");
  PtsimGpuInfo info;
  g_autoptr(GError) error = NULL;
  if (!ptsim_gpu_query(&info, &error))
    return g_strdup_printf("GPU path: compiled in (sm_80, sm_90); device: none (%s)",
                           error->message);
  return g_strdup_printf("GPU path: compiled in (sm_80, sm_90); device: %s "
                         "(sm_%d%d, %.1f GiB), %d device(s)",
                         info.name, info.compute_major, info.compute_minor,
                         info.memory_bytes / (1024.0 * 1024.0 * 1024.0),
                         info.device_count);
}

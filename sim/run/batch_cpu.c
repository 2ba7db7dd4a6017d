/* batch_cpu.c — the CPU batch; see batch_cpu.h.  One scratch buffer sized
 * for the largest job, reused for every job in turn. */
#include "batch_cpu.h"
#include "kernel_registry.h"

gboolean ptsim_batch_evaluate_cpu(const PtsimJob *jobs, gsize n, PtsimBatchResult *out,
                                  GError **error) {
  g_return_val_if_fail(n == 0 || (jobs != NULL && out != NULL), FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  int64_t bytes = 16;
  for (gsize i = 0; i < n; i++) {
    int64_t b = ptsim_batch_scratch_bytes(&jobs[i]);
    if (b > bytes) bytes = b;
  }
  /* g_malloc returns memory aligned for any basic type (16 on x86-64). */
  g_autofree void *scratch = g_malloc((gsize)bytes);
  int32_t tables = 0;
  const PtsimKernelTable *table = ptsim_kernel_registry_tables(&tables);
  for (gsize i = 0; i < n; i++)
    ptsim_batch_evaluate_one(&jobs[i], table, tables, scratch, bytes, &out[i]);
  return TRUE;
}

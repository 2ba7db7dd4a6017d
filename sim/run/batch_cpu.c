/* batch_cpu.c — the CPU batch; see batch_cpu.h.  One scratch buffer sized
 * for the largest job, reused for every job in turn; the engine's recorded
 * orders in a cache per thread. */
#include "batch_cpu.h"
#include "engine.h"
#include "kernel_registry.h"

/* 32 MiB: the end times and the arena (a table is 8-16 bytes an item, so
 * at least ~128 of the largest replayed shapes; a sweep of one model and
 * one gbs has a few hundred shapes in all); pages are touched as used. */
#define THREAD_CACHE_BYTES (32 * 1024 * 1024)

static GPrivate thread_cache = G_PRIVATE_INIT(g_free);

void *ptsim_batch_cpu_thread_cache(void) {
  void *cache = g_private_get(&thread_cache);
  if (!cache) {
    cache = g_malloc(THREAD_CACHE_BYTES);
    if (ptsim_engine_cache_init(cache, THREAD_CACHE_BYTES) != 0) g_error("engine cache too small");
    g_private_set(&thread_cache, cache);
  }
  return cache;
}

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
  void *cache = ptsim_batch_cpu_thread_cache();
  for (gsize i = 0; i < n; i++)
    ptsim_batch_evaluate_cached(&jobs[i], (const PtsimMonteCarlo *)0, table, tables, 0, scratch,
                                bytes, cache, &out[i]);
  return TRUE;
}

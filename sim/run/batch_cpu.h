/* batch_cpu.h — the CPU batch: many jobs, one after another on this thread,
 * through the same ptsim_batch_evaluate_one() the GPU kernel runs.  The
 * reference the GPU batch is checked against (tests/test_gpu.c).
 *
 * Shell module (GLib): allocates the scratch.  Not here: the GPU batch
 * (gpu.h), threading (the sweep's pool splits a batch itself). */
#ifndef PTSIM_BATCH_CPU_H
#define PTSIM_BATCH_CPU_H

#include <glib.h>
#include "batch.h"

/* Fills out[0..n) for the validated jobs[0..n).  Per-job failures (a
 * schedule that cannot be built) are in out[i].status, not an error; the
 * function itself cannot fail and always returns TRUE (the GError is there
 * to match ptsim_gpu_evaluate). */
gboolean ptsim_batch_evaluate_cpu(const PtsimJob *jobs, gsize n, PtsimBatchResult *out,
                                  GError **error);

/* This thread's cache of the engine's recorded orders (engine.h,
 * ptsim_engine_run_replayed), for ptsim_batch_evaluate_cached: made on
 * first use, kept for the thread's life (a pool's worker keeps it from one
 * chunk of a sweep to the next), freed when the thread ends. */
void *ptsim_batch_cpu_thread_cache(void);

#endif /* PTSIM_BATCH_CPU_H */

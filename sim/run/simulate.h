/* simulate.h — one layout's step simulation from the shell: allocates the
 * engine's scratch, builds the workload, runs the engine, and turns core
 * return codes into GErrors (PTSIM_CONFIG_ERROR_INVALID: the layout cannot
 * be scheduled).
 *
 * Not here: the simulation itself (workload.h, engine.h). */
#ifndef PTSIM_SIMULATE_H
#define PTSIM_SIMULATE_H

#include <glib.h>
#include "engine.h"
#include "lifetimes.h"

/* The most scratch memory one simulation allocates at once (the engine's
 * event state, or one stage's allocator emulation).  A layout that would
 * need more is refused (PTSIM_CONFIG_ERROR_INVALID naming what makes it
 * large) before anything is allocated.  Real layouts need well under 1 GiB
 * (Llama-3.1-405B on 16384 GPUs: 60 MB); one GPU running GPipe over 65536
 * microbatches of an 8B model needs 8 GB. */
#define PTSIM_SIMULATE_SCRATCH_MAX ((int64_t)16 << 30)

/* trace may be NULL; when given, its records are allocated here and must
 * be released with ptsim_simulate_trace_clear.  trace.h turns it into a
 * Perfetto trace.  Takes the engine's exact periodic shortcut where it can
 * (engine.h).  Errors: the layout cannot be scheduled, its scratch is past
 * PTSIM_SIMULATE_SCRATCH_MAX, its step past the engine's clock
 * (PTSIM_CONFIG_ERROR_INVALID). */
gboolean ptsim_simulate(const PtsimPlan *plan, PtsimTrace *trace, PtsimTimeResult *out,
                        GError **error);

/* The same; every_event TRUE simulates every event (`--no-shortcut`). */
gboolean ptsim_simulate_with(const PtsimPlan *plan, PtsimTrace *trace, gboolean every_event,
                             PtsimTimeResult *out, GError **error);
void ptsim_simulate_trace_clear(PtsimTrace *trace);

/* What an engine or schedule return code (a sweep result's status) means,
 * in words. */
const char *ptsim_simulate_error_text(int32_t rc);

/* The caching-allocator emulation of every stage. */
typedef struct {
  int64_t num_stages;
  int64_t peak_stage; /* the stage with the largest device peak */
  int32_t steps;      /* training steps replayed */
  int32_t fits;       /* no stage's allocation failed */
  int32_t runs;       /* every stage's `runs` verdict (lifetimes.h) */
  PtsimStageAlloc stages[PTSIM_MAX_STAGES];
} PtsimAllocResult;

/* Replays `steps` steps of every stage through the allocator (opts NULL:
 * PyTorch's defaults).  With timeline_path, writes allocated/reserved over
 * simulated time per stage as TSV (stage, step, time_s, allocated_bytes,
 * reserved_bytes); times come from `trace` (the engine's run of the same
 * job) and step_s.  Fails on a refused or failed output (PTSIM_OUTPUT_ERROR),
 * a stage whose scratch is past PTSIM_SIMULATE_SCRATCH_MAX or an emulation
 * that runs out of block slots (PTSIM_CONFIG_ERROR_INVALID). */
gboolean ptsim_simulate_allocator(const PtsimPlan *plan, int32_t steps,
                                  const PtsimAllocOptions *opts, const PtsimTrace *trace,
                                  double step_s, const char *timeline_path, PtsimAllocResult *out,
                                  GError **error);

/* The same; every_item TRUE replays every schedule item (`--no-shortcut`),
 * not skipping the steady state's repeats (lifetimes.h: the same result). */
gboolean ptsim_simulate_allocator_with(const PtsimPlan *plan, int32_t steps,
                                       const PtsimAllocOptions *opts, gboolean every_item,
                                       const PtsimTrace *trace, double step_s,
                                       const char *timeline_path, PtsimAllocResult *out,
                                       GError **error);

/* Stage `stage` of the above (no timeline) into *out: stages of one layout
 * may run on different threads, then ptsim_simulate_allocator_close. */
gboolean ptsim_simulate_allocator_stage(const PtsimPlan *plan, int64_t stage, int32_t steps,
                                        const PtsimAllocOptions *opts, gboolean every_item,
                                        PtsimStageAlloc *out, GError **error);

/* Fills the layout's fields of *out (stages, steps, peak stage, fits, runs)
 * from its replayed stages. */
void ptsim_simulate_allocator_close(const PtsimPlan *plan, int32_t steps, PtsimAllocResult *out);

#endif /* PTSIM_SIMULATE_H */

/* simulate.h — one layout's step simulation from the shell: allocates the
 * engine's scratch, builds the workload, runs the engine, and turns core
 * return codes into GErrors (PTSIM_CONFIG_ERROR_INVALID: the layout cannot
 * be scheduled).  Also writes Chrome/Perfetto traces.
 *
 * Not here: the simulation itself (workload.h, engine.h). */
#ifndef PTSIM_SIMULATE_H
#define PTSIM_SIMULATE_H

#include <glib.h>
#include "engine.h"

/* trace may be NULL; when given, its records are allocated here and must
 * be released with ptsim_simulate_trace_clear. */
gboolean ptsim_simulate(const PtsimJob *job, PtsimTrace *trace, PtsimTimeResult *out,
                        GError **error);
void ptsim_simulate_trace_clear(PtsimTrace *trace);

/* Writes a Chrome trace-event JSON (opens in ui.perfetto.dev): one process
 * per pipeline stage, one thread each for compute and data-parallel comm.
 * Written to FILE.tmp then renamed, so nothing half-written is left. */
gboolean ptsim_simulate_write_trace(const char *path, const PtsimJob *job,
                                    const PtsimTrace *trace, GError **error);

#endif /* PTSIM_SIMULATE_H */

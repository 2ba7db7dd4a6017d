/* bench_sweep.h — what the sweep benchmarks (bench_events.c,
 * bench_lifetimes.c) share: this thread's CPU clock and the scenario flags
 * of `ptsim sweep` (--model, --hw, --gpus, --seq, --gbs), defaulting to
 * issue 13's Llama-3-70B sweep (a100-80g,h100-80g x 64..1024 GPUs x seq
 * 4096,8192, gbs 1024).  Header-only; not part of the library. */
#ifndef PTSIM_BENCH_SWEEP_H
#define PTSIM_BENCH_SWEEP_H

#include <glib.h>
#include <string.h>
#include <time.h>
#include "sweep.h"

/* This thread's CPU time, us: other load does not count. */
static inline gint64 bench_cpu_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (gint64)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static inline void bench_parse_list(const char *text, GArray *out) {
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  g_array_set_size(out, 0);
  for (char **p = parts; *p; p++) {
    gint64 v = g_ascii_strtoll(*p, NULL, 10);
    g_array_append_val(out, v);
  }
}

typedef struct {
  const char *models, *hws;
} BenchScenario;

/* The scenarios into spec and *sc. */
static inline void bench_scenario_init(PtsimSweepSpec *spec, BenchScenario *sc) {
  sc->models = "llama3-70b";
  sc->hws = "a100-80g,h100-80g";
  bench_parse_list("64,128,256,512,1024", spec->gpus);
  bench_parse_list("4096,8192", spec->seqs);
  bench_parse_list("1024", spec->gbs);
}

/* One scenario flag; FALSE when flag is not one. */
static inline gboolean bench_scenario_flag(PtsimSweepSpec *spec, BenchScenario *sc,
                                           const char *flag, const char *value) {
  if (strcmp(flag, "--model") == 0)
    sc->models = value;
  else if (strcmp(flag, "--hw") == 0)
    sc->hws = value;
  else if (strcmp(flag, "--gpus") == 0)
    bench_parse_list(value, spec->gpus);
  else if (strcmp(flag, "--seq") == 0)
    bench_parse_list(value, spec->seqs);
  else if (strcmp(flag, "--gbs") == 0)
    bench_parse_list(value, spec->gbs);
  else
    return FALSE;
  return TRUE;
}

/* The models and profiles into spec, with the overlap default of predict
 * and sweep (job_build.h). */
static inline void bench_scenario_finish(PtsimSweepSpec *spec, const BenchScenario *sc) {
  g_auto(GStrv) model_list = g_strsplit(sc->models, ",", -1);
  g_auto(GStrv) hw_list = g_strsplit(sc->hws, ",", -1);
  for (char **p = model_list; *p; p++) g_ptr_array_add(spec->models, g_strdup(*p));
  for (char **p = hw_list; *p; p++) g_ptr_array_add(spec->hws, g_strdup(*p));
  spec->base.settings.overlap_grad_reduce = spec->base.settings.overlap_param_gather = 1;
}

#endif /* PTSIM_BENCH_SWEEP_H */

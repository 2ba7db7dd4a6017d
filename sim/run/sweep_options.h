/* sweep_options.h — the flags of a sweep as `ptsim sweep` takes them: their
 * raw values, their one table (the command adds it to its option context,
 * a library caller hands it an argv-style array), the numbers parsed
 * strictly, and the spec (sweep.h) they name: the scenarios' lists with
 * ptsim's default job where a list is not given, the job's settings on
 * every layout (job_options.h), the Monte-Carlo and allocator settings.
 *
 * The table also holds the command's outputs (--csv, --format, --figures,
 * --shard, --merge), as raw values: one table keeps `ptsim sweep --help` in
 * one order; what they do is the command's (sim/cli/sweep_cmd.c), and a
 * library caller refuses them.
 *
 * Shell module (GLib).  Errors: PTSIM_CONFIG_ERROR naming the flag and the
 * value (numbers: numbers.h), G_OPTION_ERROR. */
#ifndef PTSIM_SWEEP_OPTIONS_H
#define PTSIM_SWEEP_OPTIONS_H

#include <glib.h>
#include "job_options.h"
#include "sweep.h"

/* Raw values (NULL / FALSE: not given); the numbers below their texts are
 * filled by ptsim_sweep_options_numbers, with their defaults. */
typedef struct {
  /* the scenarios' lists, comma-separated */
  char *models, *hws, *gpus, *seqs, *gbs, *mbs, *cps, *vps, *recomputes, *schedules, *eps, *etps;
  char *tps, *pps; /* --tp, --pp lists */
  char **layouts;  /* --pipeline-layout, repeatable */
  char *shardings, *shard_sizes;
  /* numbers as text */
  char *tp_max_text, *pp_max_text, *top_text, *threads_text, *samples_text, *seed_text;
  char *in_memory_max_text, *jitter_text, *stragglers_text, *slowdown_text;
  /* the numbers: tp_max/pp_max 0 (the NVLink domain / no limit), top 10, threads 0 (all
   * cores), samples 0, seed 1, in_memory_max 250000, jitter 0, stragglers 0, slowdown 2 */
  gint64 tp_max, pp_max, top, threads, samples, seed, in_memory_max;
  double jitter, stragglers, straggler_slowdown;
  gboolean allocator, no_shortcut;
  char *device; /* auto|cpu|gpu */
  /* the command's outputs */
  char *csv, *format, *figures;
  char *shard; /* "K/N" */
  gboolean merge;
  PtsimJobOptions job; /* the job's settings (not swept) */
} PtsimSweepOptions;

void ptsim_sweep_options_init(PtsimSweepOptions *opts);
/* Frees the strings and sets every field to "not given" again. */
void ptsim_sweep_options_clear(PtsimSweepOptions *opts);

/* The sweep's own entries writing into *opts, in `ptsim sweep --help`'s
 * order; NULL-terminated.  (transfer container: g_free the array) */
GOptionEntry *ptsim_sweep_options_entries(PtsimSweepOptions *opts);

/* Makes the sweep's entries and the job's settings (job_options.h) the
 * context's main group. */
void ptsim_sweep_options_add_to_context(GOptionContext *context, PtsimSweepOptions *opts);

/* Reads FLAGS, a NULL-terminated argv-style array without a program name
 * (NULL: none), into *opts as `ptsim sweep` reads its command line, and
 * parses the numbers.  A word that is no flag's is an error. */
gboolean ptsim_sweep_options_parse(PtsimSweepOptions *opts, const char *const *flags,
                                   GError **error);

/* The numbers from their texts (strict, each with its flag's range), or
 * their defaults. */
gboolean ptsim_sweep_options_numbers(PtsimSweepOptions *opts, GError **error);

/* --device's value. */
gboolean ptsim_sweep_options_device(const PtsimSweepOptions *opts, PtsimDevice *device,
                                    GError **error);

/* The spec the options name, into SPEC (ptsim_sweep_spec_new()).  SPEC
 * refers to OPTS (its model settings): keep OPTS while SPEC is used. */
gboolean ptsim_sweep_options_spec(const PtsimSweepOptions *opts, PtsimSweepSpec *spec,
                                  GError **error);

#endif /* PTSIM_SWEEP_OPTIONS_H */

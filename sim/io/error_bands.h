/* error_bands.h — how far off a step-time prediction may be: the band that
 * `predict` prints beside its step time and that the sweep uses to call a
 * tie.
 *
 * The bands are data, not code: validate/error_bands.py derives them from
 * cross-validation on the published runs (each source held out in turn,
 * the GPU family's efficiency parameters fitted on its other sources) and
 * writes them, with their provenance, to validate/error_bands.ini under
 * the data dir (ptsim_config_data_dir()).  They are read at run time, like
 * the models and profiles, so a regenerated file needs no rebuild and a
 * user can read where each number came from.  One band per GPU family and
 * precision class: "[h100 fp8]" with the profiles and precisions it covers.
 *
 * The file is read through the capped reader (input.h) like every input.
 *
 * Not here: deriving the bands (validate/error_bands.py), printing them
 * (sim/run/report.c). */
#ifndef PTSIM_ERROR_BANDS_H
#define PTSIM_ERROR_BANDS_H

#include <glib.h>
#include "job.h"

/* Relative to the data dir. */
#define PTSIM_ERROR_BANDS_FILE "validate/error_bands.ini"

typedef struct {
  gboolean found;        /* a band covers this job's profile and precision */
  char group[64];        /* the file's section, e.g. "h100 fp8" */
  double mean_abs_error; /* the band: +/- this fraction of the step time */
  double max_abs_error;  /* the largest held-out error behind it */
  double bias;           /* their mean signed error (+: ptsim too slow) */
  gint64 runs;           /* held-out published runs behind it */
  char sources[128];     /* which published sources */
  /* When found: "" or, "; "-separated, how the job lies outside the range
   * the band's runs cover (model size, GPUs, sequence length).  When not
   * found: why there is no band. */
  char note[320];
} PtsimErrorBand;

/* The band for a validated job.  Never fails: a missing or unreadable
 * file, or no section covering the job, leaves found FALSE with the reason
 * in note. */
void ptsim_error_band_lookup(const PtsimJob *job, PtsimErrorBand *out);

/* The same on the file's text (DATA, LEN bytes), as the lookup has it once
 * read through the capped reader.  Every number of the covering section
 * goes through the strict parser with its range (an error fraction 0 to
 * 10, runs 1 to 10^6, ...); a bad one leaves found FALSE with the
 * file:line, the key, the value and the range in note. */
void ptsim_error_band_lookup_data(const PtsimJob *job, const char *data, gsize len,
                                  PtsimErrorBand *out);

#endif /* PTSIM_ERROR_BANDS_H */

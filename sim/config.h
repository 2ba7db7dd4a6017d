/* config.h — turning files and flags into a validated PtsimJob.
 *
 * Shell module (GLib): reads models/NAME.ini and hw_profiles/NAME.ini with
 * GKeyFile, fills layout defaults, derives dp and the per-stage layer split,
 * and checks every constraint a Megatron-LM run would refuse.  Every failure
 * is one GError in PTSIM_CONFIG_ERROR whose message names the file:line or
 * flag, the value, and what is allowed; callers exit 2 on it.
 *
 * Not here: Megatron-LM command lines (megatron_args.h), output (report.h). */
#ifndef PTSIM_CONFIG_H
#define PTSIM_CONFIG_H

#include <glib.h>
#include "job.h"

#define PTSIM_CONFIG_ERROR (ptsim_config_error_quark())
GQuark ptsim_config_error_quark(void);

typedef enum {
  PTSIM_CONFIG_ERROR_NOT_FOUND, /* no such model / profile / file */
  PTSIM_CONFIG_ERROR_PARSE,     /* malformed file or value */
  PTSIM_CONFIG_ERROR_INVALID    /* well-formed but impossible layout */
} PtsimConfigError;

/* Folder holding models/ and hw_profiles/: $PTSIM_DATA_DIR if set, else the
 * source tree the binary was built from.  (transfer none) */
const char *ptsim_config_data_dir(void);

/* NAME (looked up as <data dir>/models/NAME.ini) or a path to an .ini
 * (anything containing '/' or ending in ".ini").  Unknown keys, missing
 * keys, non-numbers and out-of-range values are errors. */
gboolean ptsim_model_load(const char *name_or_file, PtsimModel *out,
                          GError **error);

/* Same lookup in hw_profiles/. */
gboolean ptsim_hardware_load(const char *name_or_file, PtsimHardware *out,
                             GError **error);

/* Megatron-LM's defaults: tp = pp = cp = vp = mbs = 1, dp = 0 (derive),
 * sp = -1 (on when tp > 1), distributed optimizer on, fp32 grads, flash
 * attention, no recompute, bf16, 1F1B (interleaved when vp > 1),
 * threshold 0.8, no dropout.  gpus, gbs and seq are 0 (must be given). */
void ptsim_layout_init_defaults(PtsimLayout *layout);

/* Resolves the derived fields (dp, sp, schedule, stage_layers) and checks
 * the job against its model.  On failure the job may be partly resolved. */
gboolean ptsim_job_validate(PtsimJob *job, GError **error);

#endif /* PTSIM_CONFIG_H */

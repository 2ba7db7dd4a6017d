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

/* Strict number parsing shared by the .ini and Megatron-LM readers: the
 * whole of TEXT (surrounding blanks allowed) must be one decimal integer /
 * one finite floating-point number.  "12abc", "", "1e999" (overflow) and
 * "nan" are refused.  Return FALSE without touching *out; no GError (the
 * caller knows the file, key or flag to name). */
gboolean ptsim_config_parse_int64(const char *text, int64_t *out);
gboolean ptsim_config_parse_double(const char *text, double *out);

/* The model invariants every consumer relies on (positive sizes,
 * hidden_size % num_attention_heads == 0, num_attention_heads %
 * num_query_groups == 0, enum ranges).  ptsim_model_load() runs it for each
 * file; ptsim_job_validate() runs it again for models built elsewhere
 * (megatron_args.c).  Error: PTSIM_CONFIG_ERROR_INVALID naming the model. */
gboolean ptsim_model_check(const PtsimModel *model, GError **error);

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
 * the job against its model.  On failure the job may be partly resolved.
 *
 * Messages name the layout as ptsim's command line spells it, with
 * Megatron-LM's words: --gpus --tp --pp --cp --dp --vp --mbs --gbs --seq
 * --sp --schedule --recompute-num-layers --memory-threshold
 * --attention-dropout --hidden-dropout --decoder-first-pipeline-num-layers
 * --decoder-last-pipeline-num-layers.  e.g. "--tp 3 does not divide
 * num_attention_heads 32 of model llama3-8b".
 *
 * schedule: 1F1B (the default) becomes interleaved-1F1B when vp > 1 (the
 * enum has no "auto", so an explicit 1F1B cannot be told from the default);
 * gpipe or zb-h1 with vp > 1 is an error, and so is interleaved with
 * vp == 1.  The hardware part of the job is not checked here
 * (ptsim_hardware_load() did that). */
gboolean ptsim_job_validate(PtsimJob *job, GError **error);

#endif /* PTSIM_CONFIG_H */

/* config.h — models and hardware profiles from .ini files, and the error
 * domain every input reader shares.
 *
 * Shell module (GLib): reads models/NAME.ini and hw_profiles/NAME.ini with
 * GKeyFile and checks them (job_validate.h checks the layout).  Every failure
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

/* Upper bound on any integer in a model or layout: keeps products such as
 * h*h*L*v far from int64 overflow in the core. */
#define PTSIM_CONFIG_INT_MAX ((int64_t)1 << 30)

typedef enum {
  PTSIM_CONFIG_ERROR_NOT_FOUND, /* no such model / profile / file */
  PTSIM_CONFIG_ERROR_PARSE,     /* malformed file or value */
  PTSIM_CONFIG_ERROR_INVALID    /* well-formed but impossible layout */
} PtsimConfigError;

/* Sets ERROR to CODE with the formatted message and returns FALSE, so a
 * reader can `return ptsim_config_fail(...)` where it refuses its input. */
gboolean ptsim_config_fail(GError **error, PtsimConfigError code, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

/* Folder holding models/ and hw_profiles/: $PTSIM_DATA_DIR if set, else the
 * installed data beside the library (data_dir.h), else the source tree the
 * binary was built from.  (transfer none) */
const char *ptsim_config_data_dir(void);

/* The model invariants every consumer relies on (positive sizes,
 * hidden_size % num_attention_heads == 0, num_attention_heads %
 * num_query_groups == 0, enum ranges).  ptsim_model_load() runs it for each
 * file; ptsim_job_validate() runs it again for models built elsewhere
 * (megatron_args.c).  Error: PTSIM_CONFIG_ERROR_INVALID naming the model. */
gboolean ptsim_model_check(const PtsimModel *model, GError **error);

/* NAME (looked up as <data dir>/models/NAME.ini) or a path to an .ini
 * (anything containing '/' or ending in ".ini"), or hf:PATH, a Hugging Face
 * config.json (hf_config.h; its warnings are not kept here).  Unknown keys,
 * missing keys, non-numbers and out-of-range values are errors. */
gboolean ptsim_model_load(const char *name_or_file, PtsimModel *out, GError **error);

/* Same lookup in hw_profiles/. */
gboolean ptsim_hardware_load(const char *name_or_file, PtsimHardware *out, GError **error);

/* The same checks on .ini text that is not a file of its own (a profile
 * about to be written, a fuzzer's input): messages name LABEL instead of
 * file:line. */
gboolean ptsim_model_load_data(const char *data, gsize len, const char *label, PtsimModel *out,
                               GError **error);
gboolean ptsim_hardware_load_data(const char *data, gsize len, const char *label,
                                  PtsimHardware *out, GError **error);

#endif /* PTSIM_CONFIG_H */

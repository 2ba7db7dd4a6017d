/* config_int.h — what config.c (the .ini reader) shares with the readers of
 * a model's optional parts (moe_layers.c: the MoE, MLA and MTP keys) and
 * of the error bands (error_bands.c): the open file and the typed key
 * readers.  Private to sim/io.
 *
 * Each reader reports one PTSIM_CONFIG_ERROR_PARSE naming file:line, the
 * key, the value and what is allowed; an absent key that is not required
 * leaves *out unchanged and succeeds. */
#ifndef PTSIM_CONFIG_INT_H
#define PTSIM_CONFIG_INT_H

#include <glib.h>
#include <stdint.h>
#include "job.h"
#include "numbers.h"

/* One open file: the parsed key file plus its text, for line numbers. */
typedef struct {
  const char *path; /* as given / resolved, or the label of text */
  char *contents;   /* whole file */
  GKeyFile *kf;
  gboolean no_lines; /* text not from a file: messages name path only */
} PtsimIniFile;

/* Parses CONTENTS (taken over: NUL-terminated, LEN bytes, as
 * ptsim_input_read gives them) into INI, whose path and no_lines the
 * caller set; a syntax error names the path. */
gboolean ptsim_ini_parse(PtsimIniFile *ini, char *contents, gsize len, GError **error);
void ptsim_ini_file_clear(PtsimIniFile *ini);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PtsimIniFile, ptsim_ini_file_clear)

/* "path:line" of [group] key (the group's line when key is NULL), or
 * "path" when the line is unknown.  (transfer full) */
char *ptsim_ini_where(const PtsimIniFile *ini, const char *group, const char *key);
/* An integer in [lo, hi], through the strict parser (numbers.h). */
gboolean ptsim_ini_int(const PtsimIniFile *ini, const char *group, const char *key, int64_t lo,
                       int64_t hi, gboolean required, int64_t *out, GError **error);
/* A finite number in RANGE, through the strict parser; *present_out (may
 * be NULL) says whether the key was there. */
gboolean ptsim_ini_double(const PtsimIniFile *ini, const char *group, const char *key,
                          PtsimRange range, gboolean required, gboolean *present_out, double *out,
                          GError **error);
/* true|false (required). */
gboolean ptsim_ini_bool(const PtsimIniFile *ini, const char *group, const char *key, int *out,
                        GError **error);
/* One of CHOICES ("a|b") as its index (required). */
gboolean ptsim_ini_choice(const PtsimIniFile *ini, const char *group, const char *key,
                          const char *choices, int *out, GError **error);

/* The model's optional MoE, MLA, MTP, head-dimension and q/k-norm keys
 * (moe_layers.c), read after its required ones. */
gboolean ptsim_moe_model_load(const PtsimIniFile *ini, PtsimModel *m, GError **error);

/* A hardware profile's optional [kernels] group (hw_kernels.c): registers
 * its measured kernel table and sets hw->kernel_table (0 without it). */
gboolean ptsim_hardware_kernels_load(const PtsimIniFile *ini, PtsimHardware *hw, GError **error);

#endif /* PTSIM_CONFIG_INT_H */

/* torchtitan_schema.h — which [sections] and keys a torchtitan job config
 * may hold, and of which type: JobConfig of pytorch/torchtitan@238fa99
 * (torchtitan/config/job_config.py), as a table.  Used by torchtitan.c
 * before it reads any value, so the reader may trust types.
 *
 * Shell module (GLib).  Not here: what a key means (torchtitan.c). */
#ifndef PTSIM_TORCHTITAN_SCHEMA_H
#define PTSIM_TORCHTITAN_SCHEMA_H

#include <glib.h>
#include "toml.h"

/* The type of a JobConfig field. */
typedef enum {
  PTSIM_TORCHTITAN_UNKNOWN = -1, /* no such field */
  PTSIM_TORCHTITAN_STR,          /* str (Optional: may be absent) */
  PTSIM_TORCHTITAN_INT,          /* int */
  PTSIM_TORCHTITAN_FLOAT,        /* float (an integer is accepted) */
  PTSIM_TORCHTITAN_BOOL,         /* bool */
  PTSIM_TORCHTITAN_STRS,         /* list[str] */
  PTSIM_TORCHTITAN_STRS_STR,     /* list[str] | str */
  PTSIM_TORCHTITAN_NESTED        /* list[list[str]]: outside the TOML subset */
} PtsimTorchtitanKind;

/* Every table header and key of TOML is one JobConfig has, every value of
 * the field's type (an integer is accepted for a float field, a string or
 * a list of strings where the field takes either) and, for the Literal
 * fields, one of its choices.  Error: PTSIM_CONFIG_ERROR_PARSE naming
 * FILE:LINE, the key and what is allowed (for keys torchtitan renamed, the
 * new name). */
gboolean ptsim_torchtitan_check_schema(const PtsimToml *toml, GError **error);

/* The type of [TABLE] KEY, PTSIM_TORCHTITAN_UNKNOWN when JobConfig has no
 * such field; *choices (may be NULL): "a|b|c" for a Literal field, else
 * NULL. */
PtsimTorchtitanKind ptsim_torchtitan_field_kind(const char *table, const char *key,
                                                const char **choices);

/* TEXT, a command-line word, as a value of KIND (the Python form's
 * --section.option overrides: tyro's reading; a list is comma-separated).
 * FALSE when it is not one (*out then holds nothing to free). */
gboolean ptsim_torchtitan_value_parse(PtsimTorchtitanKind kind, const char *text,
                                      PtsimTomlValue *out);

/* Every field as "table.key", in JobConfig's order.  (transfer full) */
char **ptsim_torchtitan_field_list(void);

/* "an integer", "true or false", ... for messages. */
const char *ptsim_torchtitan_kind_name(PtsimTorchtitanKind kind);

#endif /* PTSIM_TORCHTITAN_SCHEMA_H */

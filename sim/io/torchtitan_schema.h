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

/* Every table header and key of TOML is one JobConfig has, every value of
 * the field's type (an integer is accepted for a float field, a string or
 * a list of strings where the field takes either) and, for the Literal
 * fields, one of its choices.  Error: PTSIM_CONFIG_ERROR_PARSE naming
 * FILE:LINE, the key and what is allowed (for keys torchtitan renamed, the
 * new name). */
gboolean ptsim_torchtitan_check_schema(const PtsimToml *toml, GError **error);

#endif /* PTSIM_TORCHTITAN_SCHEMA_H */

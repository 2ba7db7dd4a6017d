/* torchtitan_int.h — what torchtitan.c's steps share: the reader of one
 * parsed config and its getters and messages (torchtitan.c), and the
 * pipeline step (torchtitan_pipeline.c).  Internal to sim/io. */
#ifndef PTSIM_TORCHTITAN_INT_H
#define PTSIM_TORCHTITAN_INT_H

#include <glib.h>
#include "torchtitan.h"

typedef struct {
  const PtsimToml *toml;
  PtsimTorchtitan *out;
  GPtrArray *warnings;
  GError **error;
  int64_t layers; /* of the flavor's model */
} Reader;

/* The entry KEY of TABLE, or NULL. */
const PtsimTomlEntry *ptsim_tt_entry(const Reader *R, const char *table, const char *key);
/* "FILE:LINE" of the key, else of its section, else the file.  (transfer full) */
char *ptsim_tt_where(const Reader *R, const char *table, const char *key);
/* The value, or FALLBACK when the key is absent (types are the schema's). */
int64_t ptsim_tt_get_int(const Reader *R, const char *table, const char *key, int64_t fallback);
gboolean ptsim_tt_get_bool(const Reader *R, const char *table, const char *key, gboolean fallback);
const char *ptsim_tt_get_str(const Reader *R, const char *table, const char *key,
                             const char *fallback);
/* 1 when the array KEY holds WORD, 0 when not, FALLBACK when KEY is absent. */
gboolean ptsim_tt_list_has(const Reader *R, const char *table, const char *key, const char *word,
                           gboolean fallback);
/* A config torchtitan itself refuses ("FILE:LINE: ..."): FALSE. */
gboolean ptsim_tt_invalid(const Reader *R, const char *table, const char *key, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
/* A field that changes time or memory and that ptsim does not model. */
void ptsim_tt_warn(const Reader *R, const char *table, const char *key, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
/* The first reason ptsim cannot model the config; later ones are dropped. */
void ptsim_tt_unmodelled(const Reader *R, const char *table, const char *key, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

/* [parallelism]'s schedule and stage split into R->out->layout (vp,
 * schedule, uneven ends or runs of virtual stages). */
gboolean ptsim_tt_read_pipeline(Reader *R);

#endif /* PTSIM_TORCHTITAN_INT_H */

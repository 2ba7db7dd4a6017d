/* names.h — the words users type for ptsim's enums, both ways.
 *
 * One table per enum, shared by the CLI, the .ini readers and every report,
 * so "selective" means the same thing everywhere.  Parsing is exact and
 * case-sensitive; the error message lists the allowed words
 * (ptsim_names_allowed). */
#ifndef PTSIM_NAMES_H
#define PTSIM_NAMES_H

#include <glib.h>
#include "job.h"

typedef enum {
  PTSIM_NAMES_RECOMPUTE,
  PTSIM_NAMES_RECOMPUTE_METHOD,
  PTSIM_NAMES_PRECISION,
  PTSIM_NAMES_SCHEDULE,
  PTSIM_NAMES_ACTIVATION,
  PTSIM_NAMES_NORM,
  PTSIM_NAMES_SHARDING,        /* PtsimShardingMode (job_validate.h) */
  PTSIM_NAMES_FSDP_IMPL,       /* PtsimFsdpImpl */
  PTSIM_NAMES_RESHARD,         /* PTSIM_RESHARD_*, from AUTO ("default") */
  PTSIM_NAMES_ROUTER_SCORE,    /* PtsimRouterScore */
  PTSIM_NAMES_LOAD_BALANCING,  /* PtsimLoadBalancing */
  PTSIM_NAMES_DISPATCHER,      /* PtsimDispatcher */
  PTSIM_NAMES_RECOMPUTE_MODULE /* value v is the bit 1 << v (PTSIM_RECOMPUTE_*) */
} PtsimNamesKind;

/* The word for enum value `value` of `kind`; "?" when out of range.
 * (transfer none) */
const char *ptsim_names_get(PtsimNamesKind kind, int value);

/* Sets *value and returns TRUE when `word` is one of kind's words. */
gboolean ptsim_names_parse(PtsimNamesKind kind, const char *word, int *value);

/* "none|selective|full" and so on.  (transfer none) */
const char *ptsim_names_allowed(PtsimNamesKind kind);

#endif /* PTSIM_NAMES_H */

/* sharding_mode.h — the data-parallel modes users name (--sharding ddp,
 * zero1, zero2, fsdp, hsdp, with --hsdp-shard-size), applied to a layout's
 * distributed_optimizer, sharding and optimizer_instances before the job
 * is resolved and checked (job_validate.h), and named back from a layout.
 *
 * Shell module (GLib).  Errors are PTSIM_CONFIG_ERROR_INVALID naming the
 * flags.  Sibling: sharding_mode.c. */
#ifndef PTSIM_SHARDING_MODE_H
#define PTSIM_SHARDING_MODE_H

#include <glib.h>
#include "job.h"

/* The data-parallel modes users name (--sharding): DDP (replicated states),
 * ZeRO-1 (Megatron's distributed optimizer), ZeRO-2, FSDP (ZeRO-3) and
 * HSDP (FSDP inside a shard group, replicated across groups). */
typedef enum {
  PTSIM_SHARDING_MODE_DDP = 0,
  PTSIM_SHARDING_MODE_ZERO1 = 1,
  PTSIM_SHARDING_MODE_ZERO2 = 2,
  PTSIM_SHARDING_MODE_FSDP = 3,
  PTSIM_SHARDING_MODE_HSDP = 4
} PtsimShardingMode;

/* Sets LAYOUT's distributed_optimizer, sharding and optimizer_instances for
 * MODE (-1: leave them) with a shard group of SHARD_SIZE ranks (-1: all of
 * dp x cp; 0: the ranks of one NVLink domain of DOMAIN_SIZE GPUs, domain /
 * tp, which HSDP uses when no size is given).  The size must divide
 * dp x cp and be a multiple of cp (whole context-parallel groups); dp is
 * LAYOUT's, or gpus / (tp pp cp).  A layout whose dimensions do not
 * divide is left to ptsim_job_validate.  Errors name --sharding and
 * --hsdp-shard-size. */
gboolean ptsim_layout_set_sharding(PtsimLayout *layout, int64_t domain_size, int mode,
                                   int64_t shard_size, GError **error);

/* The --sharding word of a validated layout (hsdp: fsdp with replicas). */
const char *ptsim_layout_sharding_word(const PtsimLayout *layout);

#endif /* PTSIM_SHARDING_MODE_H */

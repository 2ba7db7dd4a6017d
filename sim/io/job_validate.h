/* job_validate.h — Megatron-LM's layout defaults and the validation that
 * makes a PtsimJob one the core may trust (plan.h then derives everything
 * the simulation needs from it).
 *
 * Shell module (GLib).  Failures are PTSIM_CONFIG_ERROR_INVALID (config.h)
 * with one line naming the flag, the value and what is allowed; callers
 * exit 2 on it.  Sibling: job_validate.c. */
#ifndef PTSIM_JOB_VALIDATE_H
#define PTSIM_JOB_VALIDATE_H

#include <glib.h>
#include "config.h"
#include "job.h"

/* Megatron-LM's defaults: tp = pp = cp = vp = mbs = 1, dp = 0 (derive),
 * sp = -1 (on when tp > 1), distributed optimizer on, fp32 grads, flash
 * attention, no recompute, bf16, 1F1B (interleaved when vp > 1),
 * threshold 0.8, no dropout.  gpus, gbs and seq are 0 (must be given). */
void ptsim_layout_init_defaults(PtsimLayout *layout);

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

/* Resolves the derived fields (dp, sp, schedule) and checks
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

/* GPUS / (tp x pp x cp) when the factors divide it in turn, else 0 (also
 * for a factor < 1).  One division at a time: no product that could
 * overflow. */
int64_t ptsim_layout_data_parallel(int64_t gpus, int64_t tp, int64_t pp, int64_t cp);

/* The most GPUs (and data-parallel ranks) a job may have: 4,194,304, twenty
 * times the largest clusters built; it bounds the work of group placement. */
#define PTSIM_JOB_GPUS_MAX ((int64_t)1 << 22)

#endif /* PTSIM_JOB_VALIDATE_H */

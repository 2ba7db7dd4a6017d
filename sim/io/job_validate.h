/* job_validate.h — the check that makes a resolved PtsimJob one the core
 * may trust (plan.h then derives everything the simulation needs from it).
 * A job is resolved first
 * (job_resolve.h: the only step that writes into it), then checked
 * (ptsim_job_check: never changes it); ptsim_job_validate does both.  The
 * data-parallel modes users name are applied before (sharding_mode.h).
 *
 * Shell module (GLib).  Failures are PTSIM_CONFIG_ERROR_INVALID (config.h)
 * with one line naming the flag, the value and what is allowed; callers
 * exit 2 on it.  Sibling: job_validate.c. */
#ifndef PTSIM_JOB_VALIDATE_H
#define PTSIM_JOB_VALIDATE_H

#include <glib.h>
#include "config.h"
#include "job.h"
#include "job_resolve.h"
#include "sharding_mode.h"

/* Checks a resolved job against its model, changing nothing.  A field
 * ptsim_job_resolve derives but that is not (dp 0, sp -1, a 1F1B schedule
 * with vp > 1, ...) is refused as "not resolved" once the checks that
 * would say why it could not be derived have passed.
 *
 * Messages name the layout as ptsim's command line spells it, with
 * Megatron-LM's words: --gpus --tp --pp --cp --dp --vp --mbs --gbs --seq
 * --sp --schedule --recompute-num-layers --memory-threshold
 * --attention-dropout --hidden-dropout --decoder-first-pipeline-num-layers
 * --decoder-last-pipeline-num-layers.  e.g. "--tp 3 does not divide
 * num_attention_heads 32 of model llama3-8b".
 *
 * schedule: gpipe or zb-h1 with vp > 1 is an error, and so is interleaved
 * with vp == 1.  The hardware part of the job is not checked here
 * (ptsim_hardware_load() did that). */
gboolean ptsim_job_check(const PtsimJob *job, GError **error);

/* ptsim_job_resolve, then ptsim_job_check: the one call most callers
 * want.  On failure the job is resolved as far as its fields allow. */
gboolean ptsim_job_validate(PtsimJob *job, GError **error);

/* The most GPUs (and data-parallel ranks) a job may have: 4,194,304, twenty
 * times the largest clusters built; it bounds the work of group placement. */
#define PTSIM_JOB_GPUS_MAX ((int64_t)1 << 22)

#endif /* PTSIM_JOB_VALIDATE_H */

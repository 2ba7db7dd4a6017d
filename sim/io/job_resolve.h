/* job_resolve.h — a job's defaults and the fields derived from them:
 * Megatron-LM's defaults of the layout and the settings, and the resolve
 * step that fills every field a job leaves to be derived.  It is the one place that writes
 * into a job on its way to the core; ptsim_job_check (job_validate.h)
 * then checks the job without changing it, and ptsim_job_validate does
 * both in that order.
 *
 * Shell module (GLib).  Sibling: job_resolve.c. */
#ifndef PTSIM_JOB_RESOLVE_H
#define PTSIM_JOB_RESOLVE_H

#include <stdint.h>
#include "job.h"

/* Megatron-LM's layout defaults: tp = pp = cp = vp = mbs = 1, dp = 0
 * (derive), ep 1, etp 0 (= tp), sp = -1 (on when tp > 1), distributed
 * optimizer on, one optimizer instance, no sharding, 1F1B (interleaved
 * when vp > 1), an even split.  gpus, gbs and seq are 0 (must be given). */
void ptsim_layout_init_defaults(PtsimLayout *layout);

/* Megatron-LM's defaults of the run's settings: bf16 (the delayed fp8
 * recipe when fp8), fp32 grads with gradient-accumulation fusion,
 * Transformer Engine layers with flash attention, no recompute (selective
 * recompute's module: core_attn), overlap switches off and the parts of
 * --tp-comm-overlap on, fp32 optimizer states, Megatron-FSDP resharding as
 * its implementation does (AUTO) with prefetch, the allgather dispatcher,
 * threshold 0.8. */
void ptsim_settings_init_defaults(PtsimSettings *settings);

/* Both of the above into JOB, and a source that says nothing (no dropout,
 * the current Megatron-LM); the model and the hardware are not touched. */
void ptsim_job_init_defaults(PtsimJob *job);

/* Fills the job's derived fields from the given ones, as Megatron-LM
 * derives them:
 *
 *   dp      0 -> gpus / (tp pp cp) when that divides (else left 0)
 *   ep      0 -> 1 (a hand-made layout without expert parallelism)
 *   etp     0 -> ptsim_layout_default_etp (tp; 1 under torch's FSDP2 with
 *           ep > 1)
 *   edp     gpus / (etp ep pp) when that divides (else left as it is)
 *   sp      -1 -> on when tp > 1
 *   schedule  1F1B -> interleaved-1F1B when vp > 1 (the enum has no
 *           "auto", so an explicit 1F1B cannot be told from the default)
 *   reshard_after_forward  AUTO -> what the FSDP implementation does when
 *           the job shards parameters or gradients (torchtitan's default:
 *           FSDP2 keeps the output unit gathered for backward, and under
 *           PP every unit between micro-batches; Megatron-FSDP reshards
 *           every unit)
 *
 * Nothing else changes, and nothing is refused here: a field that cannot
 * be derived (its factors do not divide) is left for ptsim_job_check to
 * name.  Resolving twice changes nothing more. */
void ptsim_job_resolve(PtsimJob *job);

/* The expert tensor-parallel size of a layout that gives none: tp, as
 * Megatron-LM defaults it, or 1 with ep > 1 under torch's FSDP2
 * (--sharding fsdp|hsdp --fsdp-impl torch), whose EP borrows from TP:
 * torchtitan's experts are not tensor-parallel (parallel_dims.py: efsdp =
 * dp_shard x cp x tp / ep). */
int64_t ptsim_layout_default_etp(const PtsimLayout *l, const PtsimSettings *run);

/* GPUS / (tp x pp x cp) when the factors divide it in turn, else 0 (also
 * for a factor < 1).  One division at a time: no product that could
 * overflow. */
int64_t ptsim_layout_data_parallel(int64_t gpus, int64_t tp, int64_t pp, int64_t cp);

#endif /* PTSIM_JOB_RESOLVE_H */

/* job_resolve.c — the layout's defaults and the resolve step; the contract
 * is in job_resolve.h.
 *
 * What it is: every value ptsim fills in for the user (a default, or a
 * field derived from the given ones), written once, here.
 *
 * What it is not: a check (job_validate.c refuses what cannot run, and
 * names what could not be derived), or anything the simulation derives
 * (the core's plan.h derives it from the checked job). */
#include "job_resolve.h"

#include <glib.h>
#include <string.h>

void ptsim_layout_init_defaults(PtsimLayout *layout) {
  g_return_if_fail(layout != NULL);
  memset(layout, 0, sizeof *layout);
  layout->tp = layout->pp = layout->cp = layout->vp = layout->mbs = 1;
  layout->dp = 0;
  layout->sp = -1;
  layout->distributed_optimizer = 1;
  layout->optimizer_instances = 1;
  layout->sharding = PTSIM_SHARDING_NONE;
  layout->ep = 1;
  layout->etp = 0; /* = tp */
  layout->schedule = PTSIM_SCHEDULE_1F1B;
}

void ptsim_settings_init_defaults(PtsimSettings *settings) {
  g_return_if_fail(settings != NULL);
  memset(settings, 0, sizeof *settings);
  settings->fp32_grad_accumulation = 1;
  settings->flash_attention = 1;
  settings->transformer_engine = 1;
  settings->recompute = PTSIM_RECOMPUTE_NONE;
  settings->recompute_method = PTSIM_RECOMPUTE_METHOD_UNIFORM;
  settings->recompute_modules = PTSIM_RECOMPUTE_CORE_ATTN;
  settings->tp_comm_overlap_ag = settings->tp_comm_overlap_rs = 1;
  settings->tp_comm_bulk_dgrad = 1;
  settings->grad_accumulation_fusion = 1;
  settings->fp8_recipe = PTSIM_FP8_DELAYED;
  settings->main_params_bytes = settings->exp_avg_bytes = settings->exp_avg_sq_bytes = 4;
  settings->fsdp_impl = PTSIM_FSDP_MEGATRON;
  settings->reshard_after_forward = PTSIM_RESHARD_AUTO;
  settings->fsdp_prefetch = 1;
  settings->moe_dispatcher = PTSIM_DISPATCH_ALLGATHER;
  settings->precision = PTSIM_PRECISION_BF16;
  settings->memory_threshold = 0.8;
  /* Megatron-LM's training loop drives the GPU, logging every 100 steps (its default) */
  settings->host.megatron = 1;
  settings->host.log_interval = 100;
}

void ptsim_job_init_defaults(PtsimJob *job) {
  g_return_if_fail(job != NULL);
  ptsim_layout_init_defaults(&job->layout);
  ptsim_settings_init_defaults(&job->settings);
  memset(&job->source, 0, sizeof job->source);
}

int64_t ptsim_layout_data_parallel(int64_t gpus, int64_t tp, int64_t pp, int64_t cp) {
  if (gpus < 1 || tp < 1 || pp < 1 || cp < 1 || gpus % tp != 0 || (gpus / tp) % pp != 0 ||
      (gpus / tp / pp) % cp != 0)
    return 0;
  return gpus / tp / pp / cp;
}

int64_t ptsim_layout_default_etp(const PtsimLayout *l, const PtsimSettings *run) {
  g_return_val_if_fail(l != NULL && run != NULL, 1);
  return l->sharding == PTSIM_SHARDING_PARAMS && run->fsdp_impl == PTSIM_FSDP_TORCH && l->ep > 1
             ? 1
             : l->tp;
}

void ptsim_job_resolve(PtsimJob *job) {
  g_return_if_fail(job != NULL);
  PtsimLayout *l = &job->layout;
  PtsimSettings *run = &job->settings;
  if (l->dp == 0) l->dp = ptsim_layout_data_parallel(l->gpus, l->tp, l->pp, l->cp);
  if (l->ep == 0) l->ep = 1;
  if (l->etp == 0) l->etp = ptsim_layout_default_etp(l, run);
  /* the expert layers regroup each pipeline stage's GPUs as etp x ep x edp
   * (Megatron-Core's MoE parallel folding) */
  int64_t expert_ranks = ptsim_layout_data_parallel(l->gpus, l->etp, l->ep, l->pp);
  if (expert_ranks > 0) l->edp = expert_ranks;
  if (l->sp == -1) l->sp = l->tp > 1 ? 1 : 0;
  if (l->vp > 1 && l->schedule == PTSIM_SCHEDULE_1F1B) l->schedule = PTSIM_SCHEDULE_INTERLEAVED;
  /* the V-shaped schedules always run two chunks per stage */
  if (l->vp <= 1 && (l->schedule == PTSIM_SCHEDULE_ZBV || l->schedule == PTSIM_SCHEDULE_DUALPIPEV))
    l->vp = 2;
  if (l->sharding != PTSIM_SHARDING_NONE && run->reshard_after_forward == PTSIM_RESHARD_AUTO)
    run->reshard_after_forward = run->fsdp_impl == PTSIM_FSDP_MEGATRON ? PTSIM_RESHARD_ALWAYS
                                 : l->pp > 1                           ? PTSIM_RESHARD_NEVER
                                                                       : PTSIM_RESHARD_BUT_LAST;
}

/* workload_shard.c — the workload of sharded data parallelism (ZeRO-2/3,
 * FSDP, HSDP; plan.c "Sharding"): what one unit's all-gather, reduce-
 * scatter and replica all-reduce cost, how long a chunk's items wait for
 * them (a pass over its units, sharding.h), and what is left once per step.
 *
 * A unit of a mixture-of-experts model moves its dense part over the
 * shard group and its routed experts over the expert shard group (plan.h),
 * one collective after the other on the communication stream.  A chunk's
 * dense layers are taken to run before its MoE layers (the first-k-dense
 * models run so; an interleaved pattern pairs other neighbours in a
 * pass, the same units and collectives).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Private to the
 * workload (workload_int.h); the contract is workload.h. */
#include "sharding.h"
#include "workload_int.h"

/* A collective of `bytes` over `group`, 0 for nothing to move. */
static PTSIM_HD double shard_coll_s(const PtsimWorkCtx *x, PtsimCollective kind, double bytes,
                                    const PtsimGroup *group) {
  return bytes > 0.0 ? ptsim_cost_collective_s(&x->job->hw, x->params, kind, bytes, group) : 0.0;
}

PTSIM_HD void ptsim_work_units(const PtsimWorkCtx *x, PtsimWorkload *out) {
  const PtsimPlan *plan = x->plan;
  const PtsimHardware *hw = &x->job->hw;
  int k;
  for (k = 0; k < PTSIM_UNIT_KINDS; k++) {
    double expert_reduce = plan->grad_bytes * plan->unit_expert_parameters[k];
    double reduce = plan->unit_reduce_bytes[k] - expert_reduce;
    double expert_gather = plan->unit_expert_gather_bytes[k];
    out->unit_gather_s[k] = out->unit_reduce_s[k] = out->unit_replicate_s[k] = 0.0;
    if (plan->zero_stage < 2) continue;
    if (plan->zero_stage == 3)
      out->unit_gather_s[k] =
          ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_GATHER,
                                  plan->unit_gather_bytes[k] - expert_gather, &plan->shard_group) +
          shard_coll_s(x, PTSIM_COLL_ALL_GATHER, expert_gather, &plan->expert_shard_group);
    out->unit_reduce_s[k] = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_REDUCE_SCATTER,
                                                    reduce, &plan->shard_group) +
                            shard_coll_s(x, PTSIM_COLL_REDUCE_SCATTER, expert_reduce,
                                         &plan->expert_shard_group);
    if (!plan->replicate_backward && !plan->sync_once) continue;
    if (plan->replicate_group.size > 1)
      out->unit_replicate_s[k] = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_REDUCE,
                                                         reduce / (double)plan->shard_group.size,
                                                         &plan->replicate_group);
    if (expert_reduce > 0.0 && plan->expert_replicate_group.size > 1)
      out->unit_replicate_s[k] +=
          ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_REDUCE,
                                  expert_reduce / (double)plan->expert_shard_group.size,
                                  &plan->expert_replicate_group);
  }
  out->gather_forward = plan->gather_forward;
  out->gather_backward = plan->gather_backward;
  out->gather_backward_head = plan->gather_backward_head;
  out->reduce_backward = plan->reduce_backward;
  out->replicate_backward = plan->replicate_backward;
  out->prefetch = x->job->settings.fsdp_prefetch;
}

/* A chunk's forward (backward) pass over its units: the plain compute, and
 * with `gather_all` every unit all-gathered first (the first forward of a
 * step under sync_once), else the items' collectives.  Returns the pass's
 * seconds and puts the plain compute in *plain. */
static PTSIM_HD double shard_chunk_pass(const PtsimWorkload *w, int64_t stage, int64_t chunk,
                                        int backward, int gather_all, double *plain) {
  PtsimShardPass pass;
  PtsimShardUnit *units[PTSIM_UNIT_KINDS];
  const PtsimWork *work[PTSIM_UNIT_KINDS];
  PtsimWork head = w->head;
  int64_t layers, moe;
  int first, last, k;
  ptsim_work_chunk_shape(w, stage, chunk, &layers, &moe, &first, &last);
  if (w->mtp.flops > 0.0) ptsim_work_add(&head, &w->mtp, 1.0); /* the output unit's MTP layers */
  /* forward: embedding, dense layers, MoE layers, output unit; backward the reverse */
  units[PTSIM_UNIT_LAYER] = backward ? &pass.other : &pass.middle;
  units[PTSIM_UNIT_MOE_LAYER] = backward ? &pass.middle : &pass.other;
  units[PTSIM_UNIT_EMBEDDING] = backward ? &pass.last : &pass.first;
  units[PTSIM_UNIT_HEAD] = backward ? &pass.first : &pass.last;
  work[PTSIM_UNIT_LAYER] = &w->layer;
  work[PTSIM_UNIT_MOE_LAYER] = &w->moe_layer;
  work[PTSIM_UNIT_EMBEDDING] = &w->embedding;
  work[PTSIM_UNIT_HEAD] = &head;
  pass.count = backward ? moe : layers - moe;
  pass.other_count = backward ? layers - moe : moe;
  pass.has_first = backward ? last : first;
  pass.has_last = backward ? first : last;
  for (k = 0; k < PTSIM_UNIT_KINDS; k++) {
    PtsimShardUnit *u = units[k];
    int gather = gather_all ||
                 (backward ? (k == PTSIM_UNIT_HEAD ? w->gather_backward_head : w->gather_backward)
                           : w->gather_forward);
    u->compute_s = backward ? work[k]->backward_input_s + work[k]->backward_weight_s
                            : work[k]->forward_s;
    u->gather_s = gather ? w->unit_gather_s[k] : 0.0;
    u->reduce_s = backward && w->reduce_backward ? w->unit_reduce_s[k] : 0.0;
    u->replicate_s = backward && w->replicate_backward ? w->unit_replicate_s[k] : 0.0;
  }
  *plain = (double)(layers - moe) * units[PTSIM_UNIT_LAYER]->compute_s +
           (double)moe * units[PTSIM_UNIT_MOE_LAYER]->compute_s +
           (first ? units[PTSIM_UNIT_EMBEDDING]->compute_s : 0.0) +
           (last ? units[PTSIM_UNIT_HEAD]->compute_s : 0.0);
  return ptsim_sharding_pass_s(&pass, w->prefetch, backward);
}

PTSIM_HD void ptsim_work_unit_waits(const PtsimWorkload *w, int64_t stage, int64_t chunk,
                                    PtsimWork *out) {
  double plain, pass;
  if (w->gather_forward) {
    pass = shard_chunk_pass(w, stage, chunk, 0, 0, &plain);
    if (pass > plain) {
      out->forward_s += pass - plain;
      out->forward_comm_s[PTSIM_COMM_DP] += pass - plain;
    }
  }
  if (w->gather_backward || w->reduce_backward) {
    pass = shard_chunk_pass(w, stage, chunk, 1, 0, &plain);
    if (pass > plain) {
      out->backward_input_s += pass - plain;
      out->backward_comm_s[PTSIM_COMM_DP] += pass - plain;
    }
  }
}

PTSIM_HD void ptsim_work_sharded_step_comm(const PtsimWorkCtx *x, const PtsimWorkload *w,
                                           int64_t stage, double dense, double experts,
                                           double *sync_s, double *gather_s) {
  const PtsimSettings *run = &x->job->settings;
  const PtsimPlan *plan = x->plan;
  const PtsimGroup *intra = &plan->shard_group, *inter = &plan->replicate_group;
  const PtsimGroup *expert_intra = &plan->expert_shard_group;
  const PtsimGroup *expert_inter = &plan->expert_replicate_group;
  double word = run->precision == PTSIM_PRECISION_FP8 && run->fp8_param_gather ? 1.0 : ELEM;
  int64_t c, moe = plan->stage_moe_layers[stage];
  int last = stage == plan->vstages.last_stage;
  *sync_s = *gather_s = 0.0;
  if (plan->sync_once) {
    /* every unit reduced after the last micro-batch; the first forward's gathers */
    *sync_s =
        (double)(plan->stage_layers[stage] - moe) *
            (w->unit_reduce_s[PTSIM_UNIT_LAYER] + w->unit_replicate_s[PTSIM_UNIT_LAYER]) +
        (double)moe *
            (w->unit_reduce_s[PTSIM_UNIT_MOE_LAYER] + w->unit_replicate_s[PTSIM_UNIT_MOE_LAYER]) +
        (stage == plan->vstages.first_stage
             ? w->unit_reduce_s[PTSIM_UNIT_EMBEDDING] + w->unit_replicate_s[PTSIM_UNIT_EMBEDDING]
             : 0.0) +
        (last ? w->unit_reduce_s[PTSIM_UNIT_HEAD] + w->unit_replicate_s[PTSIM_UNIT_HEAD] : 0.0);
    for (c = 0; c < plan->num_chunks; c++) {
      double plain, pass = shard_chunk_pass(w, stage, c, 0, 1, &plain);
      *gather_s += pass > plain ? pass - plain : 0.0;
    }
    return;
  }
  /* megatron's replicas all-reduce their gradient shards once per step;
   * ZeRO-2 gathers the updated weights */
  if (run->fsdp_impl == PTSIM_FSDP_MEGATRON && inter->size > 1)
    *sync_s = ptsim_cost_collective_s(&x->job->hw, x->params, PTSIM_COLL_ALL_REDUCE,
                                      dense * plan->grad_bytes / (double)intra->size, inter);
  if (plan->zero_stage == 2)
    *gather_s = ptsim_cost_collective_s(&x->job->hw, x->params, PTSIM_COLL_ALL_GATHER, dense * word,
                                        intra);
  if (experts <= 0.0) return;
  if (run->fsdp_impl == PTSIM_FSDP_MEGATRON && expert_inter->size > 1)
    *sync_s += ptsim_cost_collective_s(&x->job->hw, x->params, PTSIM_COLL_ALL_REDUCE,
                                       experts * plan->grad_bytes / (double)expert_intra->size,
                                       expert_inter);
  if (plan->zero_stage == 2)
    *gather_s += shard_coll_s(x, PTSIM_COLL_ALL_GATHER, experts * word, expert_intra);
}

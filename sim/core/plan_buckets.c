/* plan_buckets.c — Megatron DDP's gradient buckets (plan.h): what each
 * model chunk's buffer holds, in the order its backward fills it.
 *
 * Megatron-LM (megatron/core/distributed/param_and_grad_buffer.py) lays a
 * chunk's parameters into its buffer in reverse order of
 * model.parameters() and closes a bucket once it holds bucket_size
 * parameters, max(40M, 1M x dp) (distributed_data_parallel.py; one bucket
 * without --overlap-grad-reduce).  A bucket's reduce-scatter (all-reduce
 * without the distributed optimizer) is launched once every gradient in
 * it is ready, which in the chunk's last backward (the only one that
 * syncs) is from the output side: so the first buckets are the last
 * layers', and the last one, holding the first layers and the embedding,
 * is ready only as the backward ends.
 *
 * Core module: pure C, PTSIM_HD, no allocation. */
#include "plan.h"
#include "schedule.h"

PTSIM_HD int ptsim_plan_dp_buckets(const PtsimPlan *plan) {
  return plan->grad_sync_overlap && plan->zero_stage < 2 &&
         plan->job.settings.fsdp_impl != PTSIM_FSDP_TORCH;
}

PTSIM_HD double ptsim_plan_bucket_params(const PtsimJob *job) {
  double by_dp = 1e6 * (double)job->layout.dp;
  return by_dp > 40e6 ? by_dp : 40e6;
}

PTSIM_HD double ptsim_plan_chunk_grad_params(const PtsimPlan *plan, int64_t stage, int64_t chunk,
                                             double *at_end) {
  int64_t first = 0, count = 0, moe;
  int is_first = stage == plan->vstages.first_stage && chunk == 0;
  int is_last = stage == plan->vstages.last_stage && chunk == plan->num_chunks - 1;
  double n, embedding = 0.0;
  *at_end = 0.0;
  ptsim_plan_chunk_range(plan, stage, chunk, &first, &count);
  if (plan->job.settings.lora_rank > 0) /* the adapters alone train */
    return (double)count * plan->lora_layer_parameters;
  moe = plan->job.model.num_experts > 0 ? ptsim_plan_moe_layers_in(&plan->job.model, first, count)
                                        : 0;
  n = (double)(count - moe) * plan->layer_parameters + (double)moe * plan->moe_layer_parameters;
  if (is_first) ptsim_plan_add_first_extras(plan, &embedding);
  if (is_last) ptsim_plan_add_last_extras(plan, &n);
  if (plan->job.layout.mtp_apart && stage == plan->mtp_stage && chunk == plan->mtp_chunk)
    n += plan->mtp_parameters; /* the MTP stage apart: its layers and embedding copy */
  *at_end = embedding;
  return n + embedding;
}

PTSIM_HD int32_t ptsim_plan_chunk_buckets(const PtsimPlan *plan, double params, double *size) {
  double b = ptsim_plan_bucket_params(&plan->job), k;
  *size = b;
  if (!(params > 0.0)) return 0;
  k = params / b;
  if (!(k < (double)PTSIM_PLAN_MAX_BUCKETS)) {
    *size = params / (double)PTSIM_PLAN_MAX_BUCKETS;
    return PTSIM_PLAN_MAX_BUCKETS;
  }
  /* full ones, then the rest (none when it divides exactly) */
  return (int32_t)k + ((double)(int32_t)k * b < params ? 1 : 0);
}

/* lifetimes_units.c — the tensors of sharded data parallelism's units in
 * the replay (plan.c "Sharding"; the rules are in lifetimes.h): a unit is
 * all-gathered (its "gathered_unit" tensor, on the communication stream)
 * when a pass needs it and it is not gathered, and freed when FSDP
 * reshards it: after its forward unless kept for backward, after its
 * backward unless sync_once (then at the step's end).  A unit in backward
 * holds its gradient until the next unit's backward is done.
 *
 * Core module: pure C, PTSIM_HD, no allocation.  Private to the replay
 * (lifetimes_int.h). */
#include "lifetimes_int.h"

typedef PtsimLifetimesCtx Ctx;

#define STREAM_COMPUTE PTSIM_LIFETIMES_STREAM_COMPUTE
#define STREAM_COMM PTSIM_LIFETIMES_STREAM_COMM

PTSIM_HD int64_t ptsim_lifetimes_unit_slots(const PtsimPlan *plan, int64_t stage) {
  return plan->zero_stage == 3 ? plan->num_chunks * (plan->chunk_layers[stage] + 2) : 0;
}

static PTSIM_HD int unit_present(const Ctx *x, int32_t chunk, int32_t u) {
  if (u == 0) return ptsim_lifetimes_is_first(x, chunk);
  if (u == x->chunk_layers + 1) return ptsim_lifetimes_is_last(x, chunk);
  return u > 0 && u <= ptsim_lifetimes_layers_of(x, chunk);
}

static PTSIM_HD int32_t unit_kind(const Ctx *x, int32_t chunk, int32_t u) {
  int64_t first, count;
  if (u == 0) return PTSIM_UNIT_EMBEDDING;
  if (u == x->chunk_layers + 1) return PTSIM_UNIT_HEAD;
  if (x->n_saved_moe > 0) {
    ptsim_plan_chunk_range(x->plan, x->stage, chunk, &first, &count);
    if (ptsim_plan_is_moe_layer(&x->job->model, first + u - 1)) return PTSIM_UNIT_MOE_LAYER;
  }
  return PTSIM_UNIT_LAYER;
}

static PTSIM_HD void gather_unit(Ctx *x, int32_t chunk, int32_t u) {
  int32_t *h;
  if (!x->gathered || u < 0 || u > x->chunk_layers + 1 || !unit_present(x, chunk, u)) return;
  h = &x->gathered[chunk * (x->chunk_layers + 2) + u];
  if (*h < 0)
    *h = ptsim_lifetimes_take(x, "gathered_unit",
                              x->plan->unit_gather_bytes[unit_kind(x, chunk, u)], STREAM_COMM);
}

static PTSIM_HD void release_unit(Ctx *x, int32_t chunk, int32_t u) {
  int32_t *h;
  if (!x->gathered) return;
  h = &x->gathered[chunk * (x->chunk_layers + 2) + u];
  ptsim_lifetimes_give(x, *h);
  *h = -1;
}

PTSIM_HD void ptsim_lifetimes_unit_enter(Ctx *x, int32_t chunk, int32_t u, int32_t dir) {
  gather_unit(x, chunk, u);
  if (x->job->settings.fsdp_prefetch) {
    int32_t next = u + dir;
    while (next >= 0 && next <= x->chunk_layers + 1 && !unit_present(x, chunk, next)) next += dir;
    gather_unit(x, chunk, next);
  }
}

PTSIM_HD void ptsim_lifetimes_unit_forward_done(Ctx *x, int32_t chunk, int32_t u) {
  int reshard = x->job->settings.reshard_after_forward;
  if (x->plan->sync_once || reshard == PTSIM_RESHARD_NEVER) return;
  if (reshard == PTSIM_RESHARD_BUT_LAST && u == x->chunk_layers + 1) return;
  release_unit(x, chunk, u);
}

/* Unit u's backward: its gradient (megatron's main-grad buffer; torch:
 * autograd's bf16 gradient, copied into an fp32 reduce-scatter input),
 * which stays until the next unit's backward is done (*reducing). */
PTSIM_HD int32_t ptsim_lifetimes_unit_backward_begin(Ctx *x, int32_t chunk, int32_t u) {
  int torch = x->job->settings.fsdp_impl == PTSIM_FSDP_TORCH;
  if (x->plan->zero_stage < 2 || !unit_present(x, chunk, u)) return -1;
  ptsim_lifetimes_unit_enter(x, chunk, u, -1);
  if (x->plan->sync_once) return -1; /* accumulated into the stage's unsharded gradients */
  return ptsim_lifetimes_take(x, "unit_grad",
                              x->plan->unit_parameters[unit_kind(x, chunk, u)] *
                                  (torch ? 2.0 : x->plan->grad_bytes),
                              STREAM_COMPUTE);
}

PTSIM_HD void ptsim_lifetimes_unit_backward_end(Ctx *x, int32_t chunk, int32_t u, int32_t grad,
                                                int32_t *reducing) {
  int32_t input = grad;
  if (x->plan->zero_stage < 2 || !unit_present(x, chunk, u) || x->plan->sync_once) return;
  if (x->job->settings.fsdp_impl == PTSIM_FSDP_TORCH) {
    input =
        ptsim_lifetimes_take(x, "reduce_scatter_input",
                             x->plan->unit_parameters[unit_kind(x, chunk, u)] * x->plan->grad_bytes,
                             STREAM_COMM);
    ptsim_lifetimes_give(x, grad);
  }
  ptsim_lifetimes_give(x, *reducing);
  *reducing = input;
  release_unit(x, chunk, u);
}

PTSIM_HD void ptsim_lifetimes_units_reshard(Ctx *x) {
  int32_t i;
  for (i = 0; i < (int32_t)ptsim_lifetimes_unit_slots(x->plan, x->stage); i++) {
    ptsim_lifetimes_give(x, x->gathered[i]);
    x->gathered[i] = -1;
  }
}

/* An MoE layer's routed experts split over the expert shard group. */
PTSIM_HD void ptsim_lifetimes_sharded_units(Ctx *x) {
  const PtsimPlan *plan = x->plan;
  int64_t i, n = plan->stage_layers[x->stage], moe = plan->stage_moe_layers[x->stage];
  int32_t k;
  for (i = -1; i <= n; i++) {
    double expert_weights, expert_params, weights, grads;
    if (i == -1 && x->stage != x->plan->vstages.first_stage) continue;
    if (i == n && x->stage != x->plan->vstages.last_stage) continue;
    k = i == -1       ? PTSIM_UNIT_EMBEDDING
        : i == n      ? PTSIM_UNIT_HEAD
        : i < n - moe ? PTSIM_UNIT_LAYER
                      : PTSIM_UNIT_MOE_LAYER;
    expert_weights = plan->unit_expert_gather_bytes[k];
    expert_params = plan->unit_expert_parameters[k];
    weights = (plan->unit_gather_bytes[k] - expert_weights) / plan->weight_shards;
    grads = (plan->unit_parameters[k] - expert_params) * plan->grad_bytes / plan->grad_shards;
    if (expert_params > 0.0) {
      weights += expert_weights / plan->expert_weight_shards;
      grads += expert_params * plan->grad_bytes / plan->expert_grad_shards;
    }
    if (plan->zero_stage == 3 && plan->stage_weight_bytes[x->stage] > 0.0)
      ptsim_lifetimes_take(x, "weight_shard", weights, STREAM_COMPUTE);
    ptsim_lifetimes_take(x, plan->sync_once ? "unsharded_grad" : "grad_shard", grads,
                         STREAM_COMPUTE);
  }
}

/* memory_fujii2024.c — the seed's closed form, per stage; the contract is
 * in memory_fujii2024.h, the formulas in shared/reference/
 * memory_estimate_fujii2024.md ("the reference").
 *
 * The closed form prints the first stage.  Each term is the reference's
 * item (its sections 1.3-1.6) put on the stage that holds it, so stage 0
 * is term1 + term2 exactly:
 *   parameters   (L/p) layers of 2h^2((1 + k/a + 1.5 f/h)/t + 1/h) each
 *                (the bracket's second part: Q, O, K, V, gate, up, down
 *                split over t, two norm vectors replicated), the
 *                embedding h v/t on the first stage, the LM head and the
 *                final norm h v/t + h on the last (1.3: with p = 1 the
 *                same GPU)
 *   states       2 B weights, 4 B main grads (2 B without fp32
 *                accumulation, as the author's Megatron patch), 12 B
 *                optimizer over d c (over 1 without the distributed
 *                optimizer: the reference's 18 B, 1.4)
 *   activations  s b h/(t c) (12 + 4k/a + 8 f/h) a layer and microbatch,
 *                (L/p) layers, p - i microbatches in flight on stage i
 *                (1F1B; p on the first stage gives the closed form's L)
 *   input ids    8 s b h p/(t c) on the first stage (the 8p term)
 *   logits       4 s b h (1 + v/h)/(t c), one microbatch, where `ce` says
 * The closed form's d and c are the layout's, s its sequence, v the
 * model's vocabulary as given.  Nothing else: no workspaces, no sharded
 * gradients or weights, no recompute, schedule or dropout (the reference's
 * assumptions, 1.1). */
#include "memory_fujii2024.h"

PTSIM_HD int32_t ptsim_memory_fujii2024_check(const PtsimPlan *plan) {
  const PtsimModel *m = &plan->job.model;
  if (m->num_experts > 0) return PTSIM_FUJII2024_ERR_MOE;
  if (m->multi_latent_attention) return PTSIM_FUJII2024_ERR_MLA;
  if (m->activation != PTSIM_ACTIVATION_SWIGLU) return PTSIM_FUJII2024_ERR_MLP;
  return 0;
}

PTSIM_HD int32_t ptsim_memory_fujii2024(const PtsimPlan *plan, PtsimCrossEntropyConvention ce,
                                        PtsimMemoryEstimate *out) {
  const PtsimJob *job = &plan->job;
  const PtsimModel *m = &job->model;
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  double s = (double)l->seq, b = (double)l->mbs, h = (double)m->hidden_size;
  double f = (double)m->ffn_hidden_size, L = (double)m->num_layers;
  double a = (double)m->num_attention_heads, k = (double)m->num_query_groups;
  double v = (double)m->vocab_size, t = (double)l->tp, p = (double)l->pp;
  double dc = (double)l->dp * (double)l->cp, c = (double)l->cp;
  double sbh = s * b * h / (t * c);
  double layer_params = 2.0 * h * h * ((1.0 + k / a + 1.5 * f / h) / t + 1.0 / h);
  double layer_activations = sbh * (12.0 + 4.0 * k / a + 8.0 * f / h);
  double grad_bytes = run->fp32_grad_accumulation ? 4.0 : 2.0;
  double optimizer_bytes = 12.0 / (l->distributed_optimizer ? dc : 1.0);
  int32_t rc = ptsim_memory_fujii2024_check(plan);
  int64_t i;
  if (rc != 0) return rc;

  out->num_stages = l->pp;
  out->peak_stage = 0;
  for (i = 0; i < l->pp; i++) {
    PtsimStageMemory *st = &out->stages[i];
    int first = i == 0, last = i == l->pp - 1;
    double inflight = p - (double)i;
    st->first_layer = plan->stage_first_layer[i];
    st->num_layers = plan->stage_layers[i];
    st->has_embedding = first;
    st->has_lm_head = last;
    st->parameters = (L / p) * layer_params + (first ? h * v / t : 0.0) +
                     (last ? h * v / t + h : 0.0);
    st->expert_parameters = 0.0;
    st->parameters_bytes = 2.0 * st->parameters;
    st->gradients_bytes = grad_bytes * st->parameters;
    st->optimizer_bytes = optimizer_bytes * st->parameters;
    st->activation_bytes_per_layer = layer_activations;
    st->inflight_microbatches = inflight;
    st->embedding_dropout_bytes = 0.0;
    st->activations_bytes = layer_activations * (L / p) * inflight;
    st->input_ids_bytes = first ? 8.0 * sbh * p : 0.0;
    st->logits_bytes = ce == PTSIM_CE_EVERY_STAGE || last ? 4.0 * sbh * (1.0 + v / h) : 0.0;
    st->workspace_bytes = 0.0;
    st->other_bytes = st->input_ids_bytes + st->logits_bytes;
    st->unsharded_bytes = 0.0;
    st->steady_bytes = st->parameters_bytes + st->gradients_bytes + st->optimizer_bytes;
    st->total_bytes = st->parameters_bytes + st->gradients_bytes + st->optimizer_bytes +
                      st->activations_bytes + st->other_bytes;
    if (st->total_bytes > out->stages[out->peak_stage].total_bytes) out->peak_stage = i;
  }
  ptsim_memory_take_peak_stage(out); /* its stages hold nothing unsharded */
  out->closed_form = 1;
  out->capacity_bytes = job->hw.memory_bytes;
  out->usage_fraction = out->capacity_bytes > 0.0 ? out->total_bytes / out->capacity_bytes : 0.0;
  out->fits = out->capacity_bytes > 0.0 && out->usage_fraction <= run->memory_threshold;
  return 0;
}

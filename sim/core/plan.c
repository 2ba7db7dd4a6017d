/* plan.c — a validated job's derived quantities, computed once; see plan.h.
 *
 * Conventions decided here (each module downstream inherits them):
 *  - Learned absolute position embeddings: the model's position_embedding,
 *    by family when AUTO (ptsim_plan_position_embedding()).
 *  - FP8 weights (Transformer Engine, Hopper): every transformer-layer
 *    weight matrix keeps an fp8 copy and its fp8 transpose (wgrad and dgrad
 *    read it column-wise), +2 B per parameter next to the bf16 weight,
 *    cached for the whole step; with --fp8-param-gather the fp8 weight and
 *    its transpose are the only copy (2 B).  MXFP8 keeps a row-wise and a
 *    column-wise copy, each with one E8M0 scale per 32 values; NVFP4
 *    (--fp4-format) the same in 4 bits with an E4M3 scale per 16 (1.125 B).  (TE docs,
 *    features/low_precision_training/performance_considerations.rst,
 *    "Memory usage"; norms, biases, embedding and LM head stay bf16.)
 *    PyTorch layers (torchao's float8 linears) cache no fp8 copy.
 *  - Master weights under --use-precision-aware-optimizer: TE's FusedAdam
 *    stores fp32 masters of bf16 weights as 16-bit remainders
 *    (store_param_remainders, Megatron optimizer_config.py; it owns the
 *    masters unless fp8 runs a recipe other than delayed).
 *  - Tied embeddings with pp > 1: the last stage keeps its own copy of the
 *    word embedding (Megatron does, and all-reduces their gradients); with
 *    pp = 1 the shared matrix is counted once.
 *  - An unknown batch (gbs 0, so m = 0) is taken as "enough microbatches"
 *    for the in-flight counts, as Megatron's estimate does without
 *    num_microbatches (GPipe's, which has no such bound, then holds p).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include <string.h>
#include "mamba.h"
#include "plan.h"
#include "schedule.h"

/* Parameters of one norm: RMSNorm weight h; LayerNorm weight + bias 2h. */
static PTSIM_HD double plan_norm_parameters(const PtsimModel *m) {
  double h = (double)m->hidden_size;
  return m->norm == PTSIM_NORM_LAYERNORM ? 2.0 * h : h;
}

/* ---- the stage split ---- */

/* The split rule (plan.h): the layers of each stage without an uneven end
 * (all of them when first = last = 0), 0 when every stage is an end, or -1
 * when the split is not possible.  Any pp >= 1. */
static PTSIM_HD int64_t plan_split_middle(int64_t pp, int64_t layers, int64_t first, int64_t last) {
  int64_t middle, rest;
  if (pp < 1 || layers < 1 || first < 0 || last < 0) return -1;
  if (first == 0 && last == 0) return layers % pp == 0 ? layers / pp : -1;
  if (pp < 2) return -1;
  middle = pp - (first ? 1 : 0) - (last ? 1 : 0);
  rest = layers - first - last;
  if (rest < 0 || (middle == 0 && rest != 0) ||
      (middle > 0 && (rest < middle || rest % middle != 0)))
    return -1;
  return middle > 0 ? rest / middle : 0;
}

PTSIM_HD int32_t ptsim_plan_split_stages(int64_t pp, int64_t layers, int64_t first, int64_t last,
                                         int64_t *out) {
  int64_t s, per = pp > PTSIM_MAX_STAGES ? -1 : plan_split_middle(pp, layers, first, last);
  if (per < 0) return -1;
  for (s = 0; s < pp; s++) out[s] = per;
  if (first) out[0] = first;
  if (last) out[pp - 1] = last;
  return 0;
}

PTSIM_HD int ptsim_plan_split_fits(int64_t pp, int64_t vp, int64_t layers, int64_t first,
                                   int64_t last) {
  int64_t per = plan_split_middle(pp, layers, first, last);
  return per >= 0 && vp >= 1 && per % vp == 0 && first % vp == 0 && last % vp == 0;
}

/* ---- parameters ---- */

PTSIM_HD int32_t ptsim_plan_split_accounted(int64_t pp, int64_t vp, int64_t layers, int embedding,
                                            int loss, int64_t *out, int64_t *chunk) {
  int64_t units = layers + embedding + loss, per, s;
  if (pp < 1 || pp > PTSIM_MAX_STAGES || vp < 1 || layers < 1 || embedding < 0 || loss < 0 ||
      units % (pp * vp) != 0)
    return -1;
  per = units / (pp * vp);
  if (per < embedding || per < loss || (pp * vp == 1 && per < embedding + loss)) return -1;
  for (s = 0; s < pp; s++) out[s] = per * vp;
  out[0] -= embedding;
  out[pp - 1] -= loss;
  *chunk = per;
  return 0;
}

PTSIM_HD int32_t ptsim_plan_split_vstages(const PtsimLayout *l, int64_t layers, int32_t *out) {
  int64_t stages[PTSIM_MAX_STAGES];
  int64_t v = l->vp > 0 ? l->vp : 1, n = l->pp * v, at = 0, sum = 0, chunk, s, c, r, k;
  if (l->pp < 1 || l->pp > PTSIM_MAX_STAGES || v > PTSIM_MAX_VSTAGES || n > PTSIM_MAX_VSTAGES ||
      layers < 1)
    return -1;
  if (l->vstage_runs > 0) { /* a pipeline layout's, run by run */
    if (l->vstage_runs > PTSIM_LAYOUT_RUNS) return -1;
    for (r = 0; r < l->vstage_runs; r++) {
      int64_t count = l->vstage_run_count[r], each = l->vstage_run_layers[r];
      if (count < 1 || each < 0 || count > n - at) return -1;
      for (k = 0; k < count; k++) out[at++] = (int32_t)each;
      sum += count * each;
    }
    return at == n && sum == layers ? 0 : -1;
  }
  if (l->account_embedding || l->account_loss) {
    if (ptsim_plan_split_accounted(l->pp, v, layers, l->account_embedding, l->account_loss, stages,
                                   &chunk) != 0)
      return -1;
    for (k = 0; k < n; k++) out[k] = (int32_t)chunk;
    out[0] -= l->account_embedding;
    out[n - 1] -= l->account_loss;
    return 0;
  }
  if (ptsim_plan_split_stages(l->pp, layers, l->first_stage_layers, l->last_stage_layers, stages) !=
      0)
    return -1;
  /* looped: virtual stage c*pp + s is chunk c of stage s; a V (two
   * chunks): chunk 1 of stage s is virtual stage 2pp-1-s (schedule.h) */
  for (s = 0; s < l->pp; s++) {
    if (stages[s] % v != 0) return -1;
    for (c = 0; c < v; c++)
      out[ptsim_schedule_is_vshape((int32_t)l->schedule) && v == 2 && c == 1 ? 2 * l->pp - 1 - s
                                                                             : c * l->pp + s] =
          (int32_t)(stages[s] / v);
  }
  return 0;
}

PTSIM_HD PtsimPositionEmbedding ptsim_plan_position_embedding(const PtsimModel *model) {
  if (model->position_embedding != PTSIM_POSITION_AUTO) return model->position_embedding;
  return model->activation == PTSIM_ACTIVATION_GELU && model->norm == PTSIM_NORM_LAYERNORM
             ? PTSIM_POSITION_LEARNED
             : PTSIM_POSITION_ROPE;
}

PTSIM_HD double ptsim_plan_activation_elements(const PtsimModel *model) {
  if (model->activation == PTSIM_ACTIVATION_SWIGLU) return 3.0;
  if (model->activation == PTSIM_ACTIVATION_RELU2 && model->bias) return 4.0;
  return 2.0;
}

PTSIM_HD int ptsim_plan_has_learned_positions(const PtsimModel *model) {
  return ptsim_plan_position_embedding(model) == PTSIM_POSITION_LEARNED;
}

PTSIM_HD int64_t ptsim_plan_head_dim(const PtsimModel *model) {
  if (model->kv_channels > 0) return model->kv_channels;
  return model->num_attention_heads > 0 ? model->hidden_size / model->num_attention_heads : 0;
}

PTSIM_HD int ptsim_plan_torch_gemm_saved(const PtsimModel *model, int32_t gemm) {
  int swiglu = model->activation == PTSIM_ACTIVATION_SWIGLU;
  int32_t call; /* 1-based position among the block's matmuls */
  if (model->bias || gemm < 0 || gemm >= PTSIM_TORCH_GEMMS || (gemm == PTSIM_TORCH_W3 && !swiglu))
    return 0;
  call = gemm + 1 - (gemm == PTSIM_TORCH_W2 && !swiglu ? 1 : 0);
  return call % 2 == 1;
}

/* Weight-matrix parameters of one transformer layer on one TP rank: QKV
 * (a*d + 2*k*d wide), O (a*d -> h), fc1 (gate+up for SwiGLU), fc2. */
static PTSIM_HD double plan_layer_matrices(const PtsimModel *model, int64_t tp) {
  double h = (double)model->hidden_size;
  double hf = (double)model->ffn_hidden_size;
  double d = (double)ptsim_plan_head_dim(model);
  double q = (double)model->num_attention_heads * d, kv = (double)model->num_query_groups * d;
  int swiglu = model->activation == PTSIM_ACTIVATION_SWIGLU;
  return (h * (q + 2.0 * kv) + q * h + (swiglu ? 3.0 : 2.0) * h * hf) / (double)tp;
}

/* Multi-head latent attention on one TP rank: the down projections (and
 * the latent norms, with qk_layernorm) are replicated over TP, as
 * Megatron-Core's Transformer Engine spec builds them ("duplicated"
 * linear layers); the up projections and the output projection are split
 * by heads.  Column-parallel biases split, the others not. */
static PTSIM_HD double plan_mla_parameters(const PtsimModel *m, int64_t tp) {
  double h = (double)m->hidden_size, t = (double)tp, nh = (double)m->num_attention_heads;
  double dn = (double)m->qk_head_dim, dr = (double)m->qk_pos_emb_head_dim;
  double dv = (double)m->v_head_dim, ql = (double)m->q_lora_rank, kl = (double)m->kv_lora_rank;
  double norm = m->qk_layernorm ? (m->norm == PTSIM_NORM_LAYERNORM ? 2.0 : 1.0) : 0.0;
  double b = m->bias ? 1.0 : 0.0;
  double q = ql > 0.0 ? h * ql + b * ql + norm * ql + (ql + b) * nh * (dn + dr) / t
                      : (h + b) * nh * (dn + dr) / t;
  double kv = (h + b) * (kl + dr) + norm * kl + (kl + b) * nh * (dn + dv) / t;
  return q + kv + nh * dv * h / t + b * h;
}

/* An MLP of width `width` on `split` ranks (fc1 column-, fc2 row-parallel;
 * the row-parallel bias is not split). */
static PTSIM_HD double plan_mlp_parameters(const PtsimModel *m, int64_t width, int64_t split) {
  double h = (double)m->hidden_size, w = (double)width, t = (double)split;
  int swiglu = m->activation == PTSIM_ACTIVATION_SWIGLU;
  double n = (swiglu ? 3.0 : 2.0) * h * w / t;
  if (m->bias) n += (swiglu ? 2.0 : 1.0) * w / t + h;
  return n;
}

/* Learnable attention sinks (--softmax-type learnable; GPT-OSS): Transformer
 * Engine's DotProductAttention holds softmax_offset, one fp32 logit per
 * head, as a parameter of num_attention_heads / tp on each TP
 * rank (transformer_engine/pytorch/attention/dot_product_attention/
 * dot_product_attention.py at d0067d0d); Megatron-LM shards it by heads
 * (extensions/transformer_engine.py sharded_state_dict, {'softmax_offset':
 * 0}).  off-by-one's sink is the constant 0: no parameter. */
static PTSIM_HD double plan_sink_parameters(const PtsimModel *m, int64_t tp) {
  if (m->softmax_type != PTSIM_SOFTMAX_LEARNABLE) return 0.0;
  return (double)m->num_attention_heads / (double)tp;
}

PTSIM_HD double ptsim_plan_layer_parameters(const PtsimModel *model, int64_t tp) {
  if (model->multi_latent_attention)
    return plan_mla_parameters(model, tp) + plan_sink_parameters(model, tp) +
           plan_mlp_parameters(model, model->ffn_hidden_size, tp) +
           2.0 * plan_norm_parameters(model);
  double h = (double)model->hidden_size;
  double hf = (double)model->ffn_hidden_size;
  double d = (double)ptsim_plan_head_dim(model);
  double q = (double)model->num_attention_heads * d, kv = (double)model->num_query_groups * d;
  double t = (double)tp;
  int swiglu = model->activation == PTSIM_ACTIVATION_SWIGLU;
  double bias = 0.0, qk_norm = 0.0;
  if (model->bias) {
    /* Column-parallel biases are split, row-parallel ones are not. */
    bias += (q + 2.0 * kv) / t;            /* QKV */
    bias += h;                             /* O (row-parallel) */
    bias += (swiglu ? 2.0 : 1.0) * hf / t; /* fc1 (gate+up for SwiGLU) */
    bias += h;                             /* fc2 (row-parallel) */
  }
  /* --qk-layernorm: one norm over the head dimension for q, one for k
   * (shared by all heads, replicated over TP). */
  if (model->qk_layernorm) qk_norm = 2.0 * (model->norm == PTSIM_NORM_LAYERNORM ? 2.0 * d : d);
  /* Matrices are TP-sharded (column-parallel QKV and fc1, row-parallel O
   * and fc2); two norms per layer, replicated over TP (SP splits the
   * sequence, not the weights). */
  return plan_layer_matrices(model, tp) + bias + qk_norm + plan_sink_parameters(model, tp) +
         2.0 * plan_norm_parameters(model);
}

/* ---- LoRA ----
 * Megatron-Bridge's LoRA (megatron/bridge/peft/lora.py, LoRALinear around
 * each targeted linear; ParallelLinearAdapter) adds to a linear of
 * in x out an adapter A (in -> r) and B (r -> out), both split over TP:
 * a column-parallel base (linear_qkv, linear_fc1) splits A's r outputs and
 * B's out, a row-parallel one (linear_proj, linear_fc2) A's in and B's out,
 * so one TP rank holds r (in + out) / tp of each.  The base weights are
 * frozen (requires_grad False): Megatron's DDP builds gradient buffers and
 * the optimizer its states for the adapters alone. */
PTSIM_HD double ptsim_plan_lora_layer_parameters(const PtsimModel *model, int64_t tp, int64_t rank,
                                                 int targets) {
  double h = (double)model->hidden_size, f = (double)model->ffn_hidden_size;
  double d = (double)ptsim_plan_head_dim(model);
  double q = (double)model->num_attention_heads * d, kv = (double)model->num_query_groups * d;
  double fc1_out = (model->activation == PTSIM_ACTIVATION_SWIGLU ? 2.0 : 1.0) * f;
  double n = 0.0;
  if (rank <= 0) return 0.0;
  if (targets & PTSIM_LORA_QKV) n += h + q + 2.0 * kv;
  if (targets & PTSIM_LORA_PROJ) n += q + h;
  if (targets & PTSIM_LORA_FC1) n += h + fc1_out;
  if (targets & PTSIM_LORA_FC2) n += f + h;
  return (double)rank * n / (double)tp;
}

PTSIM_HD void ptsim_plan_trainable(const PtsimPlan *plan, int64_t stage, double *dense,
                                   double *experts) {
  double e = plan->job.settings.lora_rank > 0 ? 0.0 : plan->stage_expert_parameters[stage];
  *experts = e;
  *dense = plan->stage_trainable_parameters[stage] - e;
}

PTSIM_HD int ptsim_plan_is_moe_layer(const PtsimModel *model, int64_t layer) {
  if (model->num_experts <= 0 || layer < 0 || layer >= PTSIM_MAX_LAYERS) return 0;
  return (int)((model->moe_layers[layer / 64] >> (layer % 64)) & 1u);
}

PTSIM_HD int64_t ptsim_plan_moe_layers_in(const PtsimModel *model, int64_t first, int64_t count) {
  int64_t n = 0, i;
  for (i = first; i < first + count; i++) n += ptsim_plan_is_moe_layer(model, i);
  return n;
}

/* The attention of one layer on one TP rank, with its norms (q/k norms or
 * MLA's latent norms) and biases: the dense layer without its MLP and its
 * two layer norms. */
static PTSIM_HD double plan_attention_parameters(const PtsimModel *m, int64_t tp) {
  double h = (double)m->hidden_size, t = (double)tp, d = (double)ptsim_plan_head_dim(m);
  double q = (double)m->num_attention_heads * d, kv = (double)m->num_query_groups * d;
  double n = (h * (q + 2.0 * kv) + q * h) / t + plan_sink_parameters(m, tp);
  if (m->multi_latent_attention) return plan_mla_parameters(m, tp) + plan_sink_parameters(m, tp);
  if (m->bias) n += (q + 2.0 * kv) / t + h;
  if (m->qk_layernorm) n += 2.0 * (m->norm == PTSIM_NORM_LAYERNORM ? 2.0 * d : d);
  return n;
}

/* Parameters of one MoE layer held by one GPU: attention and norms over
 * tp, router replicated, shared experts over tp, E/ep routed experts over
 * etp; *experts (may be NULL) receives the routed experts' part. */
PTSIM_HD static double moe_layer_parameters(const PtsimModel *model, int64_t tp, int64_t ep,
                                            int64_t etp, double *experts) {
  double h = (double)model->hidden_size, e = (double)model->num_experts;
  /* Megatron's grouped experts carry no biases unless asked; the routed
   * experts are E/ep MLPs split over etp; router (E x h) replicated. */
  double routed = e / (double)ep * plan_mlp_parameters(model, model->moe_ffn_hidden_size, etp);
  double shared = model->moe_shared_expert_size > 0
                      ? plan_mlp_parameters(model, model->moe_shared_expert_size, tp) +
                            (model->moe_shared_expert_gate ? h : 0.0)
                      : 0.0;
  if (experts) *experts = routed;
  return plan_attention_parameters(model, tp) + 2.0 * plan_norm_parameters(model) + e * h + shared +
         routed;
}

/* The MTP block beside one layer of `layer` parameters: two norms of the
 * inputs, the 2h -> h projection (column-parallel) and a final norm, per
 * MTP layer. */
static PTSIM_HD double plan_mtp_parameters(const PtsimModel *m, int64_t tp, double layer) {
  double h = (double)m->hidden_size;
  return (double)m->mtp_num_layers *
         (layer + 3.0 * plan_norm_parameters(m) + 2.0 * h * h / (double)tp);
}

/* One layer of a hybrid pattern (mamba.h) on one GPU: Megatron's
 * HybridModel builds each symbol as one sub-layer with one pre-norm --
 * attention alone, the MLP alone, the MoE block alone (router, routed and
 * shared experts), or a Mamba mixer; *experts (may be NULL) receives the
 * routed experts' part. */
PTSIM_HD double ptsim_plan_hybrid_layer_parameters(const PtsimModel *model, char kind, int64_t tp,
                                                   int64_t ep, int64_t etp, double *experts) {
  double norm = plan_norm_parameters(model);
  if (experts) *experts = 0.0;
  if (kind == PTSIM_HYBRID_MAMBA) return ptsim_mamba_layer_parameters(model, tp);
  if (kind == PTSIM_HYBRID_ATTENTION) return plan_attention_parameters(model, tp) + norm;
  if (kind == PTSIM_HYBRID_MLP)
    return plan_mlp_parameters(model, model->ffn_hidden_size, tp) + norm;
  if (kind == PTSIM_HYBRID_MOE && model->num_experts > 0)
    return moe_layer_parameters(model, tp, ep, etp, experts) -
           plan_attention_parameters(model, tp) - norm;
  return 0.0;
}

/* ptsim_plan_model_parameters of a hybrid model: the pattern's layers by
 * kind, the embedding, the LM head when untied and the final norm. */
static PTSIM_HD void hybrid_model_parameters(const PtsimModel *model, double *total,
                                             double *active) {
  const char kinds[4] = {PTSIM_HYBRID_MAMBA, PTSIM_HYBRID_ATTENTION, PTSIM_HYBRID_MLP,
                         PTSIM_HYBRID_MOE};
  double h = (double)model->hidden_size, v = (double)model->vocab_size;
  double all = h * v * (model->tied_embeddings ? 1.0 : 2.0) + plan_norm_parameters(model);
  double act = all;
  int k;
  for (k = 0; k < 4; k++) {
    double routed = 0.0;
    double n = (double)ptsim_hybrid_count(model, 0, model->num_layers, kinds[k]);
    double one = ptsim_plan_hybrid_layer_parameters(model, kinds[k], 1, 1, 1, &routed);
    double used = model->num_experts > 0
                      ? routed * (double)model->moe_router_topk / (double)model->num_experts
                      : 0.0;
    all += n * one;
    act += n * (one - routed + used);
  }
  if (total) *total = all;
  if (active) *active = act;
}

PTSIM_HD void ptsim_plan_model_parameters(const PtsimModel *model, int64_t seq, double *total,
                                          double *active) {
  if (ptsim_model_is_hybrid(model)) {
    hybrid_model_parameters(model, total, active);
    return;
  }
  double h = (double)model->hidden_size, v = (double)model->vocab_size;
  double dense = ptsim_plan_layer_parameters(model, 1), moe = 0.0, routed = 0.0, used = 0.0;
  double n_moe = (double)ptsim_plan_moe_layers_in(model, 0, model->num_layers);
  double n_dense = (double)model->num_layers - n_moe;
  double base = h * v * (model->tied_embeddings ? 1.0 : 2.0) + plan_norm_parameters(model);
  double all, act;
  int last_moe = ptsim_plan_is_moe_layer(model, model->num_layers - 1);
  if (model->num_experts > 0) {
    moe = moe_layer_parameters(model, 1, 1, 1, &routed);
    used = routed * (double)model->moe_router_topk / (double)model->num_experts;
  }
  /* in this order a dense model's sum is the one before MoE, to the bit */
  all = n_dense * dense + n_moe * moe + base;
  act = n_dense * dense + n_moe * (moe - routed + used) + base;
  if (ptsim_plan_has_learned_positions(model)) {
    double rows = (double)(model->max_position_embeddings > 0 ? model->max_position_embeddings
                                                              : seq);
    all += rows * h;
    act += rows * h;
  }
  if (model->mtp_num_layers > 0) {
    all += plan_mtp_parameters(model, 1, last_moe ? moe : dense);
    act += plan_mtp_parameters(model, 1, last_moe ? moe - routed + used : dense);
  }
  if (total) *total = all;
  if (active) *active = act;
}

PTSIM_HD void ptsim_plan_add_first_extras(const PtsimPlan *plan, double *n) {
  const PtsimModel *m = &plan->job.model;
  double h = (double)m->hidden_size;
  *n += h * (double)m->vocab_size / (double)plan->job.layout.tp; /* vocabulary-parallel */
  /* Megatron's learned position embedding is a plain (not parallel)
   * embedding: replicated over TP.  max_position_embeddings = seq. */
  if (ptsim_plan_has_learned_positions(m))
    *n += (double)(m->max_position_embeddings > 0 ? m->max_position_embeddings
                                                  : plan->job.layout.seq) *
          h;
}

PTSIM_HD void ptsim_plan_add_last_extras(const PtsimPlan *plan, double *n) {
  const PtsimModel *m = &plan->job.model;
  *n += plan_norm_parameters(m); /* final norm */
  /* Untied: the LM head.  Tied with pp > 1: the last stage's copy of the
   * word embedding.  Tied with pp = 1: already counted with the first. */
  if (!m->tied_embeddings || plan->job.layout.pp > 1)
    *n += (double)m->hidden_size * (double)m->vocab_size / (double)plan->job.layout.tp;
  if (!plan->job.layout.mtp_apart) *n += plan->mtp_parameters;
}

/* The layers of stage `stage` of a hybrid model on one GPU: each of its
 * chunks' layers by kind (Megatron splits the pattern's layers over the
 * stages as it splits a transformer's, --decoder-first/last-pipeline-
 * num-layers included: hybrid_layer_allocation.py select_pipeline_segment). */
static PTSIM_HD double plan_hybrid_stage_layers(const PtsimPlan *plan, int64_t stage) {
  const PtsimModel *m = &plan->job.model;
  const PtsimLayout *l = &plan->job.layout;
  const char kinds[4] = {PTSIM_HYBRID_MAMBA, PTSIM_HYBRID_ATTENTION, PTSIM_HYBRID_MLP,
                         PTSIM_HYBRID_MOE};
  int64_t ep = l->ep > 0 ? l->ep : 1, etp = l->etp > 0 ? l->etp : l->tp, c, first, count;
  double n = 0.0;
  int k;
  for (c = 0; c < plan->num_chunks; c++) {
    ptsim_plan_chunk_range(plan, stage, c, &first, &count);
    for (k = 0; k < 4; k++)
      n += (double)ptsim_hybrid_count(m, first, count, kinds[k]) *
           ptsim_plan_hybrid_layer_parameters(m, kinds[k], l->tp, ep, etp, NULL);
  }
  return n;
}

/* Parameters held by one GPU of pipeline stage `stage`. */
static PTSIM_HD double plan_stage_parameters(const PtsimPlan *plan, int64_t stage) {
  int64_t moe = plan->stage_moe_layers[stage];
  double n = ptsim_model_is_hybrid(&plan->job.model)
                 ? plan_hybrid_stage_layers(plan, stage)
                 : (double)(plan->stage_layers[stage] - moe) * plan->layer_parameters +
                       (double)moe * plan->moe_layer_parameters;
  if (stage == plan->vstages.first_stage) ptsim_plan_add_first_extras(plan, &n);
  if (stage == plan->vstages.last_stage) ptsim_plan_add_last_extras(plan, &n);
  if (plan->job.layout.mtp_apart && stage == plan->mtp_stage) n += plan->mtp_parameters;
  /* LoRA's adapters beside the frozen base (see "LoRA" above) */
  return n + (double)plan->stage_layers[stage] * plan->lora_layer_parameters;
}

/* Routed-expert parameters one GPU of stage `stage` holds (MTP's included). */
static PTSIM_HD double plan_stage_expert_parameters(const PtsimPlan *plan, int64_t stage) {
  double n = (double)plan->stage_moe_layers[stage] * plan->moe_expert_parameters;
  if (stage == plan->mtp_stage && plan->mtp_layer_is_moe)
    n += (double)plan->job.model.mtp_num_layers * plan->moe_expert_parameters;
  return n;
}

/* Weight bytes of one GPU of stage `stage` (see the conventions above). */
static PTSIM_HD double plan_stage_weight_bytes(const PtsimPlan *plan, int64_t stage) {
  const PtsimLayout *l = &plan->job.layout;
  const PtsimSettings *run = &plan->job.settings;
  double bytes = 2.0 * plan->stage_parameters[stage];
  int64_t moe = plan->stage_moe_layers[stage];
  /* an MoE layer's matrices: all but its norms and the router */
  double moe_matrices = plan->moe_layer_parameters - 2.0 * plan_norm_parameters(&plan->job.model) -
                        (double)(plan->job.model.num_experts * plan->job.model.hidden_size);
  double matrices = (double)(plan->stage_layers[stage] - moe) *
                        plan_layer_matrices(&plan->job.model, l->tp) +
                    (double)moe * moe_matrices;
  double fp8_copies = 2.0 * ptsim_fp8_element_bytes(run->fp8_recipe);
  if (run->precision != PTSIM_PRECISION_FP8 || plan->job.hw.peak_fp8_flops <= 0.0 ||
      run->torch_layers != PTSIM_TORCH_LAYERS_NONE) /* torchao casts each use: no cached copies */
    return bytes;
  /* --fp8-param-gather: the bf16 copy of these matrices is gone. */
  return bytes + matrices * (fp8_copies - (run->fp8_param_gather ? 2.0 : 0.0));
}

/* Bytes per parameter of gradients and optimizer states (plan.h). */
static PTSIM_HD void plan_state_bytes(PtsimPlan *plan) {
  const PtsimLayout *l = &plan->job.layout;
  const PtsimSettings *run = &plan->job.settings;
  int bf16_weights = run->precision == PTSIM_PRECISION_BF16 ||
                     (run->precision == PTSIM_PRECISION_FP8 && !run->fp8_param_gather);
  int te_masters = run->precision != PTSIM_PRECISION_FP8 || run->fp8_recipe == PTSIM_FP8_DELAYED ||
                   run->main_params_bytes != 4;
  plan->grad_bytes = run->fp32_grad_accumulation ? 4.0 : 2.0;
  plan->master_bytes = (double)run->main_params_bytes;
  plan->lazy_masters = run->precision_aware_optimizer && te_masters;
  if (plan->lazy_masters && bf16_weights && run->main_params_bytes == 4) plan->master_bytes = 2.0;
  plan->exp_avg_bytes = (double)run->exp_avg_bytes;
  plan->exp_avg_sq_bytes = (double)run->exp_avg_sq_bytes;
  plan->optimizer_shards = l->distributed_optimizer
                               ? (double)(l->dp * l->cp) / (double)(l->optimizer_instances > 0
                                                                        ? l->optimizer_instances
                                                                        : 1)
                               : 1.0;
  plan->expert_optimizer_shards =
      l->distributed_optimizer
          ? (double)(l->edp > 0 ? l->edp : 1) /
                (double)(l->optimizer_instances > 0 ? l->optimizer_instances : 1)
          : 1.0;
}

/* ---- model chunks ---- */

PTSIM_HD void ptsim_plan_chunk_range(const PtsimPlan *plan, int64_t stage, int64_t chunk,
                                     int64_t *first, int64_t *count) {
  int32_t vs;
  if (plan->num_chunks <= 1) {
    *first = plan->stage_first_layer[stage];
    *count = plan->stage_layers[stage];
    return;
  }
  vs = ptsim_schedule_vstage_of(&plan->vstages, (int32_t)stage, (int32_t)chunk);
  *first = plan->vstage_first_layer[vs];
  *count = plan->vstage_layers[vs];
}

/* Where the MTP layers run (plan.h mtp_stage): the last virtual stage,
 * or apart the one before it, as the placement table says. */
static PTSIM_HD void plan_mtp_place(PtsimPlan *out) {
  int32_t v = (int32_t)out->num_chunks, last = out->vstages.last_stage;
  uint32_t word;
  out->mtp_stage = last;
  out->mtp_chunk = v - 1;
  if (!out->job.layout.mtp_apart || out->vstages.count == 0) return;
  word = out->vstages.prev[last * v + v - 1];
  if (word == PTSIM_VSTAGE_NONE) return;
  out->mtp_stage = ptsim_schedule_word_stage(word);
  out->mtp_chunk = ptsim_schedule_word_chunk(word);
}

/* The MoE quantities of the plan (all 0 for a dense model). */
static PTSIM_HD void plan_moe(PtsimPlan *out) {
  const PtsimModel *m = &out->job.model;
  const PtsimLayout *l = &out->job.layout;
  const PtsimSettings *run = &out->job.settings;
  int64_t s, c, first, count, ep = l->ep > 0 ? l->ep : 1;
  int64_t etp = l->etp > 0 ? l->etp : l->tp;
  int copy;
  out->local_experts = m->num_experts > 0 ? m->num_experts / ep : 0;
  out->moe_layer_parameters = out->moe_expert_parameters = 0.0;
  if (m->num_experts > 0)
    out->moe_layer_parameters = moe_layer_parameters(m, l->tp, ep, etp,
                                                     &out->moe_expert_parameters);
  out->expert_load = run->moe_capacity_factor > 0.0 ? run->moe_capacity_factor : 1.0;
  plan_mtp_place(out);
  out->mtp_layer_is_moe = ptsim_plan_is_moe_layer(m, m->num_layers - 1);
  out->mtp_parameters = m->mtp_num_layers > 0
                            ? plan_mtp_parameters(m, l->tp,
                                                  out->mtp_layer_is_moe ? out->moe_layer_parameters
                                                                        : out->layer_parameters)
                            : 0.0;
  /* the MTP layers embed the shifted tokens: their virtual stage builds an
   * embedding of its own unless it is the first (gpt_model.py builds it
   * where pre_process or mtp_process): the word embedding's copy (on the
   * last stage a tied model's is the output layer's already:
   * language_module.py shared_embedding_or_output_weight) and a learned
   * position table when the model has one */
  copy = m->mtp_num_layers > 0 &&
         (l->mtp_apart ? out->mtp_stage != out->vstages.first_stage || out->mtp_chunk != 0
                       : l->pp > 1);
  if (copy && (l->mtp_apart || !m->tied_embeddings))
    out->mtp_parameters += (double)m->hidden_size * (double)m->vocab_size / (double)l->tp;
  if (copy && ptsim_plan_has_learned_positions(m))
    out->mtp_parameters += (double)(m->max_position_embeddings > 0 ? m->max_position_embeddings
                                                                   : l->seq) *
                           (double)m->hidden_size;
  for (s = 0; s < PTSIM_MAX_STAGES; s++) out->stage_moe_layers[s] = 0;
  for (s = 0; s < l->pp * out->num_chunks && s < PTSIM_MAX_VSTAGES; s++)
    out->vstage_moe_layers[s] = 0;
  /* an MoE model's virtual stages always fit the table (schedule.h) */
  if (m->num_experts <= 0 || l->pp * out->num_chunks > PTSIM_MAX_VSTAGES) return;
  for (s = 0; s < l->pp; s++)
    for (c = 0; c < out->num_chunks; c++) {
      int64_t n;
      ptsim_plan_chunk_range(out, s, c, &first, &count);
      n = ptsim_plan_moe_layers_in(m, first, count);
      out->stage_moe_layers[s] += n;
      out->vstage_moe_layers[ptsim_schedule_vstage_of(&out->vstages, (int32_t)s, (int32_t)c)] =
          (int16_t)n;
    }
}

/* ---- sharding ---- */

/* The shard and replica groups of the dense parameters and (MoE) of the
 * routed experts, for n instances (plan.h). */
static PTSIM_HD void plan_shard_groups(PtsimPlan *plan, int64_t n) {
  const PtsimLayout *l = &plan->job.layout;
  int64_t domain = ptsim_topology_domain_size(&plan->job.hw);
  memset(&plan->expert_shard_group, 0, sizeof plan->expert_shard_group);
  memset(&plan->expert_replicate_group, 0, sizeof plan->expert_replicate_group);
  if (n == 1) {
    plan->shard_group = plan->groups[PTSIM_GROUP_DP_CP];
    ptsim_topology_group_uniform(1, 1, &plan->replicate_group);
    if (plan->job.model.num_experts <= 0) return;
    plan->expert_shard_group = plan->groups[PTSIM_GROUP_EDP];
    ptsim_topology_group_uniform(1, 1, &plan->expert_replicate_group);
    return;
  }
  /* Instance i holds dp*cp/n consecutive ranks of the (cp, dp) order: as a
   * layout of dp/n data-parallel ranks whose pp*n "stages" are the stages
   * and instances; the replicas are then its "pipeline" group.  The
   * experts' instances split the (ep, edp) order the same way. */
  ptsim_topology_group_of(l->tp, l->cp, l->dp / n, l->pp * n, domain, PTSIM_GROUP_DP_CP, 0,
                          &plan->shard_group);
  ptsim_topology_group_of(l->tp, l->cp, l->dp / n, n, domain, PTSIM_GROUP_PP, 0,
                          &plan->replicate_group);
  if (plan->job.model.num_experts <= 0) return;
  ptsim_topology_group_of(l->etp, l->ep, l->edp / n, l->pp * n, domain, PTSIM_GROUP_EDP, 0,
                          &plan->expert_shard_group);
  ptsim_topology_group_of(l->etp, l->ep, l->edp / n, n, domain, PTSIM_GROUP_PP, 0,
                          &plan->expert_replicate_group);
}

/*
 * Sharding.  What each zero stage keeps and moves, per GPU, with F the
 * shard group (plan.h) and P a stage's parameters:
 *   1  optimizer states / F (Megatron's distributed optimizer)
 *   2  + gradients / F: every backward reduce-scatters each unit's
 *      gradient (Megatron-FSDP "optim_grads", DeepSpeed stage 2); the
 *      updated weights are all-gathered after the step as with 1
 *   3  + weights / F: each unit is all-gathered before its forward and,
 *      resharded after forward, again before its backward (FSDP, "optim_
 *      grads_params", DeepSpeed stage 3); megatron keeps the bf16 (or fp8)
 *      shard next to the fp32 main one, torch keeps only the fp32 shard,
 *      which is the optimizer's master weight
 * HSDP: F = dp*cp / optimizer_instances consecutive ranks, the replicas
 * all-reduce the reduced shard: torch every backward (FSDP2 with gradient
 * sync on, which torchtitan never turns off), megatron once per step
 * (Megatron-FSDP's outer reduce runs on the last micro-batch only).
 * torch under PP: torch.distributed.pipelining turns FSDP2's gradient sync
 * and its reshard after backward off for every micro-batch, then reduces
 * once after the last: units stay gathered from their first forward to the
 * end of the step and gradients accumulate unsharded in the fp32 reduce
 * dtype (sync_once).  The all-gather moves the weights in the compute
 * dtype (bf16; fp8 matrices with --fp8-param-gather / torchtitan's
 * enable_fsdp_float8_all_gather), the reduce-scatter the gradient in its
 * reduce dtype (grad_bytes: fp32 by default in both).
 * Mixture of experts: the routed experts are sharded over the expert
 * data-parallel group instead (E = edp, or edp / instances consecutive
 * ranks of it, replicated over the instances), everything else as above,
 * in both implementations: Megatron-FSDP's adapter (mcore_fsdp_adapter.py)
 * builds its expert device mesh over expt_dp; torchtitan's FSDP2
 * (distributed/fsdp.py apply_fsdp_to_decoder) gives the experts the
 * "efsdp" mesh of its sparse mesh (pp, dp_replicate, efsdp, ep), ep
 * fastest: efsdp = dp_shard x cp x tp / ep ranks at stride ep, ptsim's
 * edp with etp 1 (dp_shard x cp / ep with an older torchtitan's etp = tp),
 * dp_replicate the replicas, as plan_shard_groups places them.  An MoE
 * layer is one unit whose two parts move over their own groups, one after
 * the other on the communication stream (torchtitan: one fully_shard of
 * the block with a per-parameter mesh, prefetched explicitly one block
 * ahead when EP is on: fsdp_prefetch); the gathered unit holds the local
 * experts' full weights.  The MTP block goes with the output unit (its
 * parameters sit on the last stage beside the head). */
static PTSIM_HD void plan_sharding(PtsimPlan *plan) {
  const PtsimLayout *l = &plan->job.layout;
  const PtsimSettings *run = &plan->job.settings;
  const PtsimModel *m = &plan->job.model;
  int64_t n = l->optimizer_instances > 1 ? l->optimizer_instances : 1, s;
  int params = l->sharding == PTSIM_SHARDING_PARAMS;
  int torch = run->fsdp_impl == PTSIM_FSDP_TORCH;
  int fp8_gather = run->precision == PTSIM_PRECISION_FP8 && run->fp8_param_gather &&
                   plan->job.hw.peak_fp8_flops > 0.0;
  double word_embedding = (double)m->hidden_size * (double)m->vocab_size / (double)l->tp;
  double matrices = plan_layer_matrices(m, l->tp);
  double matrix_bytes = fp8_gather ? ptsim_fp8_element_bytes(run->fp8_recipe) : 2.0;
  int experts = m->num_experts > 0;
  /* an MoE layer's matrices: all but its norms and the router */
  double moe_matrices = experts ? plan->moe_layer_parameters - 2.0 * plan_norm_parameters(m) -
                                      (double)(m->num_experts * m->hidden_size)
                                : 0.0;
  int k;
  plan->zero_stage = params                                ? 3
                     : l->sharding == PTSIM_SHARDING_GRADS ? 2
                     : l->distributed_optimizer            ? 1
                                                           : 0;
  plan->sync_once = params && torch && l->pp > 1;
  plan->weight_shards = params ? plan->optimizer_shards : 1.0;
  plan->grad_shards = plan->zero_stage >= 2 && !plan->sync_once ? plan->optimizer_shards : 1.0;
  plan->grad_sync_overlap = plan->zero_stage < 2 ? run->overlap_grad_reduce : !plan->sync_once;
  plan->param_gather_hidden = plan->zero_stage < 3 ? run->overlap_param_gather : 0;
  plan->gather_forward = params && !plan->sync_once;
  plan->gather_backward = params && run->reshard_after_forward != PTSIM_RESHARD_NEVER;
  plan->gather_backward_head = plan->gather_backward &&
                               run->reshard_after_forward == PTSIM_RESHARD_ALWAYS;
  plan->reduce_backward = plan->zero_stage >= 2 && !plan->sync_once;
  plan->replicate_backward = plan->reduce_backward && torch && n > 1;
  plan->unit_parameters[PTSIM_UNIT_LAYER] = plan->layer_parameters;
  plan->unit_parameters[PTSIM_UNIT_EMBEDDING] =
      word_embedding +
      (ptsim_plan_has_learned_positions(m)
           ? (double)(m->max_position_embeddings > 0 ? m->max_position_embeddings : l->seq) *
                 (double)m->hidden_size
           : 0.0);
  plan->unit_parameters[PTSIM_UNIT_HEAD] =
      plan_norm_parameters(m) + (!m->tied_embeddings || l->pp > 1 ? word_embedding : 0.0) +
      plan->mtp_parameters;
  plan->unit_parameters[PTSIM_UNIT_MOE_LAYER] = plan->moe_layer_parameters;
  for (k = 0; k < PTSIM_UNIT_KINDS; k++) plan->unit_expert_parameters[k] = 0.0;
  plan->unit_expert_parameters[PTSIM_UNIT_MOE_LAYER] = plan->moe_expert_parameters;
  if (plan->mtp_layer_is_moe)
    plan->unit_expert_parameters[PTSIM_UNIT_HEAD] = (double)m->mtp_num_layers *
                                                    plan->moe_expert_parameters;
  for (k = 0; k < PTSIM_UNIT_KINDS; k++) {
    plan->unit_gather_bytes[k] = 2.0 * plan->unit_parameters[k];
    plan->unit_reduce_bytes[k] = plan->grad_bytes * plan->unit_parameters[k];
    plan->unit_expert_gather_bytes[k] = matrix_bytes * plan->unit_expert_parameters[k];
  }
  plan->unit_gather_bytes[PTSIM_UNIT_LAYER] += matrices * (matrix_bytes - 2.0);
  plan->unit_gather_bytes[PTSIM_UNIT_MOE_LAYER] += moe_matrices * (matrix_bytes - 2.0);
  plan->unit_gather_bytes[PTSIM_UNIT_HEAD] += plan->unit_expert_parameters[PTSIM_UNIT_HEAD] *
                                              (matrix_bytes - 2.0);
  plan->unit_grad_buffer_bytes = plan->grad_bytes + (torch ? 2.0 : 0.0);
  plan->expert_weight_shards = params ? plan->expert_optimizer_shards : 1.0;
  plan->expert_grad_shards =
      plan->zero_stage >= 2 && !plan->sync_once ? plan->expert_optimizer_shards : 1.0;
  for (s = 0; s < PTSIM_MAX_STAGES; s++) {
    double b = 0.0, e = 0.0;
    if (s < l->pp) {
      int64_t moe = plan->stage_moe_layers[s];
      b = (double)(plan->stage_layers[s] - moe) * plan->unit_gather_bytes[PTSIM_UNIT_LAYER] +
          (double)moe * plan->unit_gather_bytes[PTSIM_UNIT_MOE_LAYER];
      e = (double)moe * plan->unit_expert_gather_bytes[PTSIM_UNIT_MOE_LAYER];
      if (s == plan->vstages.first_stage) b += plan->unit_gather_bytes[PTSIM_UNIT_EMBEDDING];
      if (s == plan->vstages.last_stage) {
        b += plan->unit_gather_bytes[PTSIM_UNIT_HEAD];
        e += plan->unit_expert_gather_bytes[PTSIM_UNIT_HEAD];
      }
    }
    plan->stage_gather_bytes[s] = b;
    if (params && s < l->pp)
      plan->stage_weight_bytes[s] =
          torch ? 0.0 : (b - e) / plan->weight_shards + e / plan->expert_weight_shards;
  }
  plan_shard_groups(plan, n);
}

/* ---- in-flight microbatches ---- */

PTSIM_HD int64_t ptsim_plan_inflight_chunks(PtsimSchedule schedule, int64_t p, int64_t m, int64_t v,
                                            int64_t group, int64_t stage) {
  int64_t held;
  switch (schedule) {
  case PTSIM_SCHEDULE_GPIPE:
    /* All forwards before any backward. */
    return m > 0 ? m : p;
  case PTSIM_SCHEDULE_INTERLEAVED:
    if (v > 1) {
      /* Interleaved 1F1B with v chunks per rank in groups of g: rank i
       * runs 2(p-1-i) + (v-1)g warm-up chunk-forwards and holds one more
       * in the steady state, capped at all m*v chunk-forwards. */
      held = 2 * (p - 1 - stage) + (v - 1) * (group > 0 ? group : p) + 1;
      return m > 0 && held > m * v ? m * v : held;
    }
    held = p - stage; /* one chunk: 1F1B */
    break;
  case PTSIM_SCHEDULE_ZBV:
    /* ZB-V (schedule_vshape.c): forwards minus W's peak at 2p chunks of
     * the V's two on every stage (the paper's 1F1B peak, p whole-stage
     * microbatches); m >= 2p-1 always */
    return m > 0 && 2 * p > 2 * m ? 2 * m : 2 * p;
  case PTSIM_SCHEDULE_DUALPIPEV:
    /* DualPipeV: the steady state's forward runs before its overlapped
     * backward frees one: 2p + 1 chunks (DeepSeek-V3's PP + 1) */
    return m > 0 && 2 * p + 1 > 2 * m ? 2 * m : 2 * p + 1;
  case PTSIM_SCHEDULE_ZB_H1:
    /* ZB-H1 keeps 1F1B's warm-up depth, but stage i defers each weight-
     * gradient pass (W) by i microbatches (schedule.h), and W needs the
     * inputs of the layer's linear layers, most of what the layer saved.
     * So every stage holds min(p, m) microbatches until their W: stage 0's
     * 1F1B peak on every stage (the paper's "same peak memory as 1F1B";
     * counted in full, a slight over-estimate, as the allocator replay
     * does). */
    held = p;
    break;
  case PTSIM_SCHEDULE_1F1B:
  default:
    /* Stage i runs p-1-i warm-up forwards plus one: min(p - i, m).  For
     * stage 0 with m < p this is Megatron's min(1, m/p) discount. */
    held = p - stage;
    break;
  }
  return m > 0 && held > m ? m : held;
}

/* The layers of the chunk of `stage` that item `index` of its order runs. */
static PTSIM_HD int64_t plan_item_layers(const PtsimPlan *plan, const PtsimScheduleShape *sh,
                                         int32_t index) {
  PtsimScheduleItem it;
  ptsim_schedule_item_at(sh, index, &it);
  return plan->vstage_layers[ptsim_schedule_vstage_of(&plan->vstages, sh->stage, it.chunk)];
}

/* The interleaved order of `stage` whose chunks hold unequal layers: the
 * most layers its held (microbatch, chunk) pairs have at once.  The peak
 * follows a forward of the steady pairs (schedule.h): after F(w+k), P(k) =
 * the layers of forwards 0..w+k less those of backwards 0..k-1.  Forwards
 * and backwards run g*v virtual microbatches per period with g of each
 * chunk, so P(k) = P(k - g*v) while forward w+k lies in whole groups
 * (before virtual microbatch E): P is walked over its first period, then
 * from k = E-w-1 (its value that of (E-w-1) mod g*v) to the end.  O(g*v). */
static PTSIM_HD int64_t plan_peak_layers(const PtsimPlan *plan, int64_t stage) {
  PtsimScheduleShape sh;
  int64_t held = 0, best, at = -1, kept = 0, k, i;
  int32_t w, steady, period, tail;
  if (ptsim_schedule_shape(PTSIM_SCHEDULE_INTERLEAVED, (int32_t)plan->num_stages,
                           (int32_t)plan->num_microbatches, (int32_t)plan->num_chunks,
                           plan->microbatch_group, (int32_t)stage, &sh) != 0)
    return plan->stage_layers[stage] * plan->num_microbatches;
  w = sh.warmup;
  steady = sh.m * sh.v - w;                                 /* steady pairs */
  if (steady <= 0) return plan->stage_layers[stage] * sh.m; /* every forward before a backward */
  period = sh.group * sh.v;
  tail = (sh.last_group_size == sh.group ? sh.m * sh.v : sh.last_group_at) - w - 1;
  for (i = 0; i <= w; i++) held += plan_item_layers(plan, &sh, (int32_t)i); /* to F(w) */
  best = held;
  if (tail >= 0) at = tail % period;
  for (k = 0; k + 1 < steady;) {
    if (k == at) kept = held;
    if (k + 1 == period && tail > k + 1) { /* P(tail) = P(at), at < period: kept */
      k = tail;
      held = kept;
    } else { /* B(k), then F(w+k+1) */
      held += plan_item_layers(plan, &sh, w + 2 * (int32_t)k + 2) -
              plan_item_layers(plan, &sh, w + 2 * (int32_t)k + 1);
      k++;
    }
    if (held > best) best = held;
  }
  return best;
}

/* The same in whole-stage microbatches: a chunk is 1/v of the stage's
 * layers under the interleaved schedule, so stage 0 holds p + (p-1)/v =
 * p * (1 + (p-1)/(p v)): exactly Megatron's interleaved memory penalty
 * times p (Megatron prints ceil() of it as a count but scales activations
 * by the unrounded factor; so does ptsim).  The last stage holds
 * p - (p-1)/v.  Chunks of unequal layers (an accounted split, a pipeline
 * layout's) weigh each held chunk by its layers. */
static PTSIM_HD double plan_inflight(const PtsimPlan *plan, int64_t stage, int64_t chunks) {
  const PtsimLayout *l = &plan->job.layout;
  int64_t c, layers = plan->stage_layers[stage];
  int unequal = 0;
  /* the V: each held chunk weighed by its layers (an uneven split's two
   * chunks differ), from the order phase by phase; equal ones: chunks / 2 */
  if (ptsim_schedule_is_vshape((int32_t)l->schedule) && l->vp == 2) {
    int64_t w0, w1;
    if (plan->vstages.count == 0 || layers <= 0) return (double)chunks / 2.0;
    w0 = plan->vstage_layers[ptsim_schedule_vstage_of(&plan->vstages, (int32_t)stage, 0)];
    w1 = plan->vstage_layers[ptsim_schedule_vstage_of(&plan->vstages, (int32_t)stage, 1)];
    if (w0 == w1 || ptsim_schedule_check(l->schedule, (int32_t)l->pp,
                                         (int32_t)plan->num_microbatches, 2, 0) != 0)
      return (double)chunks / 2.0;
    return (double)ptsim_schedule_vshape_peak(l->schedule, (int32_t)l->pp,
                                              (int32_t)plan->num_microbatches, (int32_t)stage, w0,
                                              w1) /
           (double)layers;
  }
  if (l->schedule != PTSIM_SCHEDULE_INTERLEAVED || l->vp <= 1) return (double)chunks;
  if (plan->vstages.count != 0 && layers > 0)
    for (c = 1; c < plan->num_chunks; c++)
      unequal |= plan->vstage_layers[ptsim_schedule_vstage_of(&plan->vstages, (int32_t)stage,
                                                              (int32_t)c)] !=
                 plan->vstage_layers[ptsim_schedule_vstage_of(&plan->vstages, (int32_t)stage, 0)];
  if (unequal) return (double)plan_peak_layers(plan, stage) / (double)layers;
  return (double)chunks / (double)l->vp;
}

/* ---- the plan ---- */

PTSIM_HD void ptsim_plan_counts(const PtsimJob *job, PtsimPlan *out) {
  const PtsimLayout *l = &job->layout;
  int64_t per = l->mbs * l->dp;
  out->num_stages = l->pp;
  out->num_chunks = l->vp > 0 ? l->vp : 1;
  out->num_microbatches = per > 0 ? l->gbs / per : 0;
  out->microbatch_group = (int32_t)(l->microbatch_group > 0 ? l->microbatch_group : l->pp);
  out->schedule_items = ptsim_schedule_num_items(l->schedule, (int32_t)l->pp,
                                                 (int32_t)out->num_microbatches,
                                                 (int32_t)out->num_chunks, out->microbatch_group);
}

/* The layers of every virtual stage and stage (plan.h); all 0 when the
 * layout does not split the model (validation refuses it). */
static PTSIM_HD void plan_split(PtsimPlan *out) {
  const PtsimLayout *l = &out->job.layout;
  int64_t s, c, first = 0, n = l->pp * out->num_chunks;
  int ok = out->vstages.count != 0 &&
           ptsim_plan_split_vstages(l, out->job.model.num_layers, out->vstage_layers) == 0;
  for (s = 0; s < PTSIM_MAX_VSTAGES; s++) {
    if (!ok || s >= n) out->vstage_layers[s] = 0;
    out->vstage_first_layer[s] = (int32_t)first;
    first += out->vstage_layers[s];
  }
  first = 0;
  for (s = 0; s < PTSIM_MAX_STAGES; s++) {
    out->stage_layers[s] = out->chunk_layers[s] = 0;
    for (c = 0; s < l->pp && c < out->num_chunks && out->vstages.count != 0; c++) {
      int64_t k =
          out->vstage_layers[ptsim_schedule_vstage_of(&out->vstages, (int32_t)s, (int32_t)c)];
      out->stage_layers[s] += k;
      if (k > out->chunk_layers[s]) out->chunk_layers[s] = k;
    }
    out->stage_first_layer[s] = s < l->pp ? first : 0;
    first += out->stage_layers[s];
  }
}

PTSIM_HD void ptsim_plan_build(const PtsimJob *job, PtsimPlan *out) {
  const PtsimLayout *l = &job->layout;
  int64_t s;
  int k;
  out->job = *job;
  ptsim_plan_counts(job, out);
  /* too many virtual stages: schedule_items holds the same error */
  ptsim_schedule_vstages(l->schedule, (int32_t)l->pp, (int32_t)out->num_chunks, &out->vstages);
  out->tokens = l->mbs * l->seq / l->cp;
  out->local_seq = l->seq / l->cp;
  out->tokens_sp = l->sp ? (double)out->tokens / (double)l->tp : (double)out->tokens;
  out->layer_parameters = ptsim_plan_layer_parameters(&job->model, l->tp);
  out->lora_layer_parameters = ptsim_plan_lora_layer_parameters(&job->model, l->tp,
                                                                job->settings.lora_rank,
                                                                job->settings.lora_targets);
  out->head_dim = ptsim_plan_head_dim(&job->model);
  plan_state_bytes(out);
  for (k = 0; k < PTSIM_GROUP_KIND_COUNT; k++)
    if (k < PTSIM_GROUP_ETP || job->model.num_experts > 0 || job->model.multi_latent_attention)
      ptsim_topology_group(l, &job->hw, (PtsimGroupKind)k, &out->groups[k]);
    else
      memset(&out->groups[k], 0, sizeof out->groups[k]);
  plan_split(out);
  plan_moe(out);
  for (s = 0; s < PTSIM_MAX_STAGES; s++) {
    out->stage_expert_parameters[s] = s < l->pp ? plan_stage_expert_parameters(out, s) : 0.0;
    out->stage_parameters[s] = s < l->pp ? plan_stage_parameters(out, s) : 0.0;
    out->stage_trainable_parameters[s] =
        job->settings.lora_rank > 0
            ? (double)out->stage_layers[s] * out->lora_layer_parameters /* the adapters alone */
            : out->stage_parameters[s];
    out->stage_weight_bytes[s] = s < l->pp ? plan_stage_weight_bytes(out, s) : 0.0;
    out->inflight_microbatches[s] =
        s < l->pp
            ? plan_inflight(out, s,
                            ptsim_plan_inflight_chunks(l->schedule, l->pp, out->num_microbatches,
                                                       l->vp, out->microbatch_group, s))
            : 0.0;
    /* combined 1F1B (--overlap-moe-expert-parallel-comm): a paired forward
     * stores its layers one by one while the paired backward frees its own
     * (model_chunk_schedule_plan.py), so its first layer is held beside
     * the backward's last one: a layer more than the order's peak */
    if (s < l->pp && job->settings.moe_ep_comm_overlap && out->num_microbatches > 1 &&
        out->stage_layers[s] > 0)
      out->inflight_microbatches[s] += 1.0 / (double)out->stage_layers[s];
  }
  plan_sharding(out);
}

/* lifetimes_sets.c — the tensors a layer keeps for its backward, in the
 * order forward allocates them: a dense layer's and, for a
 * mixture-of-experts model, an MoE layer's; and what a recomputed layer's
 * checkpoint keeps under torch's per-op policy; see lifetimes_int.h.
 *
 * Each set is the analytical estimate's items (the reference's table: norm
 * inputs, QKV input, Q, K, V, attention output, MLP input, the MLP
 * intermediates, dropout masks, s x s scores without flash attention; the
 * router's scores and the rows the local experts see), scaled so that
 * their sum is exactly ptsim_memory_layer_activation_bytes() (or its MoE
 * counterpart), plus what a release keeps beyond it (lifetimes.h,
 * "Releases": unfused attention's K and V copied to every head).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Siblings:
 * lifetimes.c, lifetimes_period.c. */
#include "lifetimes_int.h"
#include "mamba.h"
#include "memory.h"

#define ELEM PTSIM_LIFETIMES_ELEM
/* Megatron-LM commit dates (YYYYMMDD, merges into main) between which
 * unfused attention copied K and V to every head (lifetimes.h, "Releases"). */
#define MEGATRON_KV_COPIES_FROM 20230721
#define MEGATRON_KV_COPIES_UNTIL 20231102

#define ROLE_CORE PTSIM_LIFETIMES_ROLE_CORE
#define ROLE_CORE_END PTSIM_LIFETIMES_ROLE_CORE_END
#define ROLE_LAYER_TRANSIENTS PTSIM_LIFETIMES_ROLE_LAYER_TRANSIENTS
#define ROLE_MOE_TRANSIENTS PTSIM_LIFETIMES_ROLE_MOE_TRANSIENTS
#define ROLE_EXACT PTSIM_LIFETIMES_ROLE_EXACT
#define ROLE_OFFLOAD PTSIM_LIFETIMES_ROLE_OFFLOAD

typedef PtsimLifetimesTensor Tensor;
typedef PtsimLifetimesCtx Ctx;

/* ROLE_OFFLOAD when --offload-modules names the module MODULE (a
 * PTSIM_OFFLOAD_* bit) whose input the tensor is; never in a layer that
 * offloads nothing (full recompute, memory.c). */
static PTSIM_HD int32_t off(const Ctx *x, int module, int moe) {
  if (!(x->job->settings.offload_modules & module)) return 0;
  return ptsim_memory_offload_layer_bytes(x->plan, moe) > 0.0 ? ROLE_OFFLOAD : 0;
}

/* Appends a tensor to a set. */
static PTSIM_HD void add(Tensor *s, int32_t *n, const char *name, double bytes, int32_t role) {
  s[*n].name = name;
  s[*n].bytes = bytes;
  s[*n].role = role;
  (*n)++;
}

/* Unfused attention's kept s x s tensors (memory.h PtsimAttentionCore):
 * the softmax output, then dropout's mask and output (p > 0) or the fp32
 * fallback's 16-bit cast; their bytes in *exact (0 with flash attention or
 * when selective recompute drops them).  `offload`: core_attn's offload
 * takes them with q, k and v (memory.c, "Activation offloading"). */
static PTSIM_HD void add_core(Ctx *x, Tensor *s, int32_t *n, double *exact, int32_t offload) {
  PtsimAttentionCore core;
  ptsim_memory_attention_core(x->plan, &core);
  *exact = 0.0;
  if (!core.kept) return;
  add(s, n, "attention_probs", core.probs * core.elements, ROLE_CORE | ROLE_EXACT | offload);
  if (core.mask + core.applied > 0.0)
    add(s, n, "attention_probs_out", (core.mask + core.applied) * core.elements,
        ROLE_CORE | ROLE_EXACT | offload);
  *exact = (core.probs + core.mask + core.applied) * core.elements;
}

/* Scales the set's tensors but the exact ones so that the estimate's
 * items sum to target, of which `exact` (the attention core's) is exact. */
static PTSIM_HD void scale_to(Tensor *s, int32_t n, double target, double exact) {
  double sum = 0.0, scale;
  int32_t i;
  for (i = 0; i < n; i++)
    if (!(s[i].role & ROLE_EXACT)) sum += s[i].bytes;
  scale = sum > 0.0 ? (target - exact) / sum : 1.0;
  if (scale < 0.0) scale = 0.0;
  for (i = 0; i < n; i++)
    if (!(s[i].role & ROLE_EXACT)) s[i].bytes *= scale;
}

/* The layer's saved tensors, in the order forward allocates them. */
static PTSIM_HD void build_saved_dense(Ctx *x) {
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  const PtsimProvenance *src = &x->job->source;
  double t = (double)l->tp, T = x->tokens, Tsp = x->tokens_sp, h = (double)m->hidden_size;
  double kv = h * (double)m->num_query_groups / (double)m->num_attention_heads;
  double ffn = (double)m->ffn_hidden_size / t;
  double exact, lora;
  int32_t n = 0;
  Tensor *s = x->saved;
  int32_t core = off(x, PTSIM_OFFLOAD_CORE_ATTN, 0);
  add(s, &n, "norm1_input", ELEM * Tsp * h, off(x, PTSIM_OFFLOAD_ATTN_NORM, 0));
  add(s, &n, "qkv_input", ELEM * Tsp * h, off(x, PTSIM_OFFLOAD_QKV_LINEAR, 0));
  add(s, &n, "q", ELEM * T * h / t, core);
  add(s, &n, "k", ELEM * T * kv / t, core);
  add(s, &n, "v", ELEM * T * kv / t, ROLE_LAYER_TRANSIENTS | core);
  /* Unfused attention's K and V copied to every head (lifetimes.h), made
   * after V and kept with the scores: beyond the estimate's set. */
  if (!run->flash_attention && run->recompute != PTSIM_RECOMPUTE_SELECTIVE &&
      (m->num_query_groups < m->num_attention_heads ||
       ptsim_lifetimes_megatron_between(x->job, MEGATRON_KV_COPIES_FROM,
                                        MEGATRON_KV_COPIES_UNTIL))) {
    double heads = ELEM * T * (double)(m->num_attention_heads * x->plan->head_dim) / t;
    add(s, &n, "k_repeated", heads, ROLE_EXACT);
    add(s, &n, "v_repeated", heads, ROLE_EXACT);
  }
  add_core(x, s, &n, &exact, core);
  add(s, &n, "attention_output", ELEM * T * h / t,
      ROLE_CORE_END | off(x, PTSIM_OFFLOAD_ATTN_PROJ, 0));
  add(s, &n, "norm2_input", ELEM * Tsp * h, off(x, PTSIM_OFFLOAD_MLP_NORM, 0));
  add(s, &n, "mlp_input", ELEM * Tsp * h, 0);
  /* GELU: fc1's output, GELU's = fc2's input; SwiGLU: fc1's output (gate
   * and up), unfused the SiLU output, fc2's input (memory.c, "SwiGLU") */
  if (m->activation == PTSIM_ACTIVATION_SWIGLU) {
    add(s, &n, "fc1_output", ELEM * T * ffn * 2.0, 0);
    if (ptsim_memory_swiglu_unfused(x->job)) add(s, &n, "silu_output", ELEM * T * ffn, 0);
    add(s, &n, "fc2_input", ELEM * T * ffn, 0);
  } else {
    add(s, &n, "fc1_output", ELEM * T * ffn, 0);
    add(s, &n, "activation_output", ELEM * T * ffn, 0);
  }
  /* LoRA's adapters' r-wide intermediates (memory.c), exact */
  lora = ptsim_memory_lora_activation_bytes(x->plan, run->recompute != PTSIM_RECOMPUTE_SELECTIVE);
  if (lora > 0.0) {
    add(s, &n, "lora_intermediates", lora, ROLE_EXACT);
    exact += lora;
  }
  if (src->hidden_dropout > 0.0) add(s, &n, "dropout_masks", 2.0 * Tsp * h, 0);
  scale_to(s, n,
           ptsim_memory_layer_activation_bytes(x->plan,
                                               run->recompute != PTSIM_RECOMPUTE_SELECTIVE),
           exact);
  x->n_saved = n;
}

/* An MoE layer's saved tensors (mixture-of-experts models), in forward
 * order: the attention part as a dense layer's, then the block input, the
 * router's scores, the rows the local experts see and their intermediates,
 * the shared experts' MLP; scaled to ptsim_memory_moe_layer_activation_bytes
 * like the dense set. */
static PTSIM_HD void build_saved_moe(Ctx *x) {
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  const PtsimProvenance *src = &x->job->source;
  double t = (double)l->tp, T = x->tokens, Tsp = x->tokens_sp, h = (double)m->hidden_size;
  double rows = x->plan->expert_load * Tsp * (double)m->moe_router_topk * (double)l->etp;
  double f = (double)m->moe_ffn_hidden_size / (double)l->etp;
  double exact;
  int32_t n = 0;
  Tensor *s = x->saved_moe;
  add(s, &n, "norm1_input", ELEM * Tsp * h, off(x, PTSIM_OFFLOAD_ATTN_NORM, 1));
  add(s, &n, "qkv_input", ELEM * Tsp * h, off(x, PTSIM_OFFLOAD_QKV_LINEAR, 1));
  add(s, &n, "qkv", 3.0 * ELEM * T * h / t, off(x, PTSIM_OFFLOAD_CORE_ATTN, 1));
  add_core(x, s, &n, &exact, off(x, PTSIM_OFFLOAD_CORE_ATTN, 1));
  add(s, &n, "attention_output", ELEM * T * h / t,
      ROLE_CORE_END | off(x, PTSIM_OFFLOAD_ATTN_PROJ, 1));
  add(s, &n, "norm2_input", ELEM * Tsp * h,
      ROLE_LAYER_TRANSIENTS | off(x, PTSIM_OFFLOAD_MLP_NORM, 1));
  add(s, &n, "moe_input", ELEM * Tsp * h, 0);
  add(s, &n, "router_scores", 5.0 * Tsp * (double)m->num_experts, 0);
  add(s, &n, "expert_input", ELEM * rows * h,
      ROLE_MOE_TRANSIENTS | off(x, PTSIM_OFFLOAD_EXPERT_FC1, 1));
  add(s, &n, "expert_fc1_output", ELEM * rows * f * 2.0, off(x, PTSIM_OFFLOAD_MOE_ACT, 1));
  add(s, &n, "expert_fc2_input", ELEM * rows * f, 0);
  if (m->moe_shared_expert_size > 0)
    add(s, &n, "shared_mlp", 4.0 * ELEM * T * (double)m->moe_shared_expert_size / t, 0);
  if (src->hidden_dropout > 0.0) add(s, &n, "dropout_masks", 2.0 * Tsp * h, 0);
  scale_to(s, n,
           ptsim_memory_moe_layer_activation_bytes(x->plan,
                                                   run->recompute != PTSIM_RECOMPUTE_SELECTIVE),
           exact);
  x->n_saved_moe = n;
}

/* The saved set of layer `layer` of model chunk `chunk`. */
PTSIM_HD const Tensor *ptsim_lifetimes_saved_of(const Ctx *x, int32_t chunk, int32_t layer,
                                                int32_t *n) {
  int64_t first, count;
  if (ptsim_model_is_hybrid(&x->job->model)) {
    ptsim_plan_chunk_range(x->plan, x->stage, chunk, &first, &count);
    return ptsim_lifetimes_hybrid_saved_of(x, first + layer, n);
  }
  if (x->n_saved_moe > 0) {
    ptsim_plan_chunk_range(x->plan, x->stage, chunk, &first, &count);
    if (ptsim_plan_is_moe_layer(&x->job->model, first + layer)) {
      *n = x->n_saved_moe;
      return x->saved_moe;
    }
  }
  *n = x->n_saved;
  return x->saved;
}

/* What torch's per-op checkpointing keeps of a layer (memory.c's
 * op_saved_bytes, in forward order: the block input, the kept matmul
 * outputs, SDPA's output and logsumexp, TP's reduce-scatter outputs),
 * scaled to ptsim_memory_layer_op_saved_bytes; the rest of the layer's
 * saved set comes and goes (rest_scale).  Nothing without per-op. */
static PTSIM_HD void build_kept(Ctx *x) {
  static const char *const names[PTSIM_TORCH_GEMMS] = {"wq_output", "wk_output", "wv_output",
                                                       "wo_output", "w1_output", "w3_output",
                                                       "w2_output"};
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  double t = (double)l->tp, T = x->tokens, h = (double)m->hidden_size;
  double q = (double)(m->num_attention_heads * x->plan->head_dim);
  double kv = (double)(m->num_query_groups * x->plan->head_dim), f = (double)m->ffn_hidden_size;
  double out[PTSIM_TORCH_GEMMS], sum = 0.0, full = 0.0, target;
  int32_t i, n = 0;
  Tensor *s = x->kept;
  x->n_kept = 0;
  x->rest_scale = 1.0;
  if (run->recompute != PTSIM_RECOMPUTE_SELECTIVE_OP) return;
  out[PTSIM_TORCH_WQ] = T * q / t;
  out[PTSIM_TORCH_WK] = out[PTSIM_TORCH_WV] = T * kv / t;
  out[PTSIM_TORCH_WO] = out[PTSIM_TORCH_W2] = T * h;
  out[PTSIM_TORCH_W1] = out[PTSIM_TORCH_W3] = T * f / t;
  add(s, &n, "layer_input", x->layer_input_bytes, 0);
  for (i = 0; i < PTSIM_TORCH_GEMMS; i++) {
    if (!ptsim_plan_torch_gemm_saved(m, i)) continue;
    add(s, &n, names[i], ELEM * out[i], 0);
    if (i == PTSIM_TORCH_WV) {
      add(s, &n, "attention_output", ELEM * T * q / t, 0);
      add(s, &n, "attention_logsumexp",
          4.0 * (double)l->mbs * (double)(m->num_attention_heads / l->tp) *
              (double)x->plan->local_seq,
          0);
    }
  }
  if (l->tp > 1 && l->sp) {
    add(s, &n, "reduce_scatter_outputs", 2.0 * ELEM * T * h / t, 0);
  }
  for (i = 0; i < n; i++) sum += s[i].bytes;
  target = ptsim_memory_layer_op_saved_bytes(x->plan);
  for (i = 0; i < n; i++) s[i].bytes *= sum > 0.0 ? target / sum : 1.0;
  for (i = 0; i < x->n_saved; i++) full += x->saved[i].bytes;
  x->rest_scale = full > target ? (full - target) / full : 0.0;
  x->n_kept = n;
}

/* Megatron's full recompute of a chunk's layer: uniform recomputes every
 * layer and checkpoints the input of each group of n (recompute_num_layers)
 * layers; block recomputes (checkpointing each input of) the first n
 * layers and stores the rest in full.  n = 0: every layer, one each.
 * torch's per-op checkpointing recomputes every layer, keeping x->kept. */
PTSIM_HD int ptsim_lifetimes_recomputed(const Ctx *x, int32_t layer) {
  const PtsimSettings *run = &x->job->settings;
  if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE_OP) return 1; /* every layer, per op */
  if (run->recompute != PTSIM_RECOMPUTE_FULL) return 0;
  if (run->recompute_method == PTSIM_RECOMPUTE_METHOD_BLOCK && run->recompute_num_layers > 0)
    return layer < run->recompute_num_layers;
  return 1;
}

PTSIM_HD int ptsim_lifetimes_keeps_input(const Ctx *x, int32_t layer) {
  const PtsimSettings *run = &x->job->settings;
  if (run->recompute_method == PTSIM_RECOMPUTE_METHOD_UNIFORM && run->recompute_num_layers > 1)
    return layer % run->recompute_num_layers == 0;
  return 1;
}

PTSIM_HD void ptsim_lifetimes_build_saved(Ctx *x) {
  build_saved_dense(x);
  x->n_saved_moe = 0;
  if (x->job->model.num_experts > 0) build_saved_moe(x);
  ptsim_lifetimes_build_hybrid(x); /* a hybrid model's MoE-only set replaces the MoE layer's */
  build_kept(x);
}

/* ---- unfused attention's transients ---- */

/* Unfused attention's scores in forward (memory.c, "Unfused attention"):
 * Megatron's DotProductAttention multiplies into its global buffer (got
 * once and kept; baddbmm's `input` with beta 0, so the scores are a new
 * tensor), Transformer Engine's UnfusedDotProductAttention into a fresh
 * torch.empty, freed when baddbmm has returned.  The scores live until the
 * attention returns; the fp32 fallback's float() copy of them until the
 * softmax has run (*copy); when selective recompute drops the kept
 * tensors they come and go here.  Returns the scores' handle. */
static PTSIM_HD int32_t scores_take(Ctx *x, int32_t *copy) {
  PtsimAttentionCore core;
  int32_t empty = -1, scores;
  *copy = -1;
  if (x->job->settings.flash_attention) return -1;
  ptsim_memory_attention_core(x->plan, &core);
  if (!core.te && x->attention_buffer < 0)
    x->attention_buffer = ptsim_lifetimes_take(x, "attention_buffer", ELEM * core.elements,
                                               PTSIM_LIFETIMES_STREAM_COMPUTE);
  if (core.te)
    empty = ptsim_lifetimes_take(x, "attention_scores_empty", ELEM * core.elements,
                                 PTSIM_LIFETIMES_STREAM_COMPUTE);
  scores = ptsim_lifetimes_take(x, "attention_scores", ELEM * core.elements,
                                PTSIM_LIFETIMES_STREAM_COMPUTE);
  ptsim_lifetimes_give(x, empty);
  if (core.probs > ELEM)
    *copy = ptsim_lifetimes_take(x, "attention_scores_fp32", 4.0 * core.elements,
                                 PTSIM_LIFETIMES_STREAM_COMPUTE);
  if (!core.kept) {
    ptsim_lifetimes_take_give(x, "attention_probs",
                              (core.probs + core.mask + core.applied) * core.elements,
                              PTSIM_LIFETIMES_STREAM_COMPUTE);
    ptsim_lifetimes_give(x, *copy);
    *copy = -1;
  }
  return scores;
}

PTSIM_HD void ptsim_lifetimes_take_set(Ctx *x, const Tensor *set, int32_t n, double scale,
                                       int inline_transients, int32_t *hs) {
  int32_t i, scores = -1, copy = -1, started = 0;
  for (i = 0; i < n; i++) {
    if ((set[i].role & (ROLE_CORE | ROLE_CORE_END)) && !started) {
      started = 1;
      scores = scores_take(x, &copy);
    }
    hs[i] = ptsim_lifetimes_take(x, set[i].name, set[i].bytes * scale,
                                 PTSIM_LIFETIMES_STREAM_COMPUTE);
    if (set[i].role & (ROLE_CORE | ROLE_CORE_END)) { /* the softmax has run */
      ptsim_lifetimes_give(x, copy);
      copy = -1;
    }
    if (set[i].role & ROLE_CORE_END) { /* the attention returns */
      ptsim_lifetimes_give(x, scores);
      scores = -1;
    }
    if (inline_transients && (set[i].role & ROLE_LAYER_TRANSIENTS))
      ptsim_lifetimes_layer_transients(x);
    if (inline_transients && (set[i].role & ROLE_MOE_TRANSIENTS)) ptsim_lifetimes_moe_transients(x);
    if (inline_transients && (set[i].role & PTSIM_LIFETIMES_ROLE_MAMBA_TRANSIENTS))
      ptsim_lifetimes_mamba_transients(x);
  }
  ptsim_lifetimes_give(x, copy);
  ptsim_lifetimes_give(x, scores);
}

/* Backward of unfused attention's core: bmm's gradient of probs' (16-bit);
 * through dropout (p > 0) a new one; the softmax's backward: Transformer
 * Engine's kernel writes a fresh tensor (extensions/softmax.cpp, "Allocate
 * a fresh output buffer"), Apex's kernels that Megatron's local layers call
 * work in place (apex csrc/megatron/scaled_*softmax_cuda.cu, "backward pass is completely
 * in-place"), PyTorch's fp32 fallback goes through fp32 (the cast's
 * gradient and the softmax's, 4 bytes each).  Selective recompute
 * (core_attn) first re-runs the forward: the scores, then the kept set. */
PTSIM_HD void ptsim_lifetimes_attention_backward(Ctx *x) {
  PtsimAttentionCore core;
  double el;
  int32_t again = -1, grad, next;
  if (x->job->settings.flash_attention) return;
  ptsim_memory_attention_core(x->plan, &core);
  el = core.elements;
  if (!core.kept) {
    int32_t scores = ptsim_lifetimes_take(x, "attention_scores", ELEM * el,
                                          PTSIM_LIFETIMES_STREAM_COMPUTE);
    again = ptsim_lifetimes_take(x, "attention_probs", (core.probs + core.mask + core.applied) * el,
                                 PTSIM_LIFETIMES_STREAM_COMPUTE);
    ptsim_lifetimes_give(x, scores);
  }
  grad = ptsim_lifetimes_take(x, "attention_probs_grad", ELEM * el, PTSIM_LIFETIMES_STREAM_COMPUTE);
  if (core.mask > 0.0) {
    next = ptsim_lifetimes_take(x, "attention_dropout_grad", ELEM * el,
                                PTSIM_LIFETIMES_STREAM_COMPUTE);
    ptsim_lifetimes_give(x, grad);
    grad = next;
  }
  if (core.probs > ELEM)
    ptsim_lifetimes_take_give(x, "attention_softmax_grad_fp32", 2.0 * 4.0 * el,
                              PTSIM_LIFETIMES_STREAM_COMPUTE);
  if (core.te || core.probs > ELEM)
    ptsim_lifetimes_take_give(x, "attention_scores_grad", ELEM * el,
                              PTSIM_LIFETIMES_STREAM_COMPUTE);
  ptsim_lifetimes_give(x, grad);
  ptsim_lifetimes_give(x, again);
}

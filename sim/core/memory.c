/* memory.c — the analytical per-GPU memory estimate, per pipeline stage; the
 * contract is in memory.h, the seed formulas in
 * shared/reference/memory_estimate_fujii2024.md ("the reference" below).
 *
 * What it counts, per GPU of each pipeline stage (stages are identical across
 * tp/cp/dp ranks):
 *
 *   model states   parameters x (2 B weights + 4|2 B grads + 12 B optimizer,
 *                  the optimizer sharded over dp*cp with the distributed
 *                  optimizer; under ZeRO-2/3 the gradients and weights too,
 *                  plan.c "Sharding")
 *   unsharded      ZeRO-2/3: the units gathered at once and the unsharded
 *                  gradients of the units in backward
 *   activations    per-layer saved bytes x layers x in-flight microbatches,
 *                  with recomputation applied
 *   other          input ids on stage 0, fp32 logits / cross-entropy on the
 *                  stage with the LM head (or every stage, by convention),
 *                  the GEMM workspaces PyTorch and Transformer Engine keep
 *                  (ptsim_memory_workspace_bytes)
 *
 * Mixture-of-experts models extend each term (README's "Memory of MoE
 * models" writes the formula out):
 *   model states   a GPU's parameters split in dense ones (tp-sharded,
 *                  optimizer over dp x cp) and its local routed experts
 *                  (E/ep experts over etp, optimizer over edp): optimizer
 *                  = 12 B x (dense / (dp cp) + experts / edp); ZeRO-2/3
 *                  split the experts' gradients and weights over edp too
 *   activations    an MoE layer keeps the attention part of a dense layer,
 *                  its block input (norm output) and, instead of the MLP's
 *                  intermediates, the router's fp32 scores and map
 *                  (5-9 B x Tm E), the N = load Tm k etp rows its experts
 *                  see (input h, fc1 output 2f/etp, activation f/etp, fc2
 *                  input f/etp, fp32 probabilities) and the shared experts'
 *                  MLP (width fs, TP-split); recompute modules moe,
 *                  moe_act, shared_experts drop their parts; MLA keeps
 *                  latents instead of GQA's q/k/v (mla_up_proj drops the
 *                  projected q, k, v); a stage sums its dense and MoE
 *                  layers
 *   other          the MTP layers' activations and logits on the last stage
 *
 * What it is not: the caching allocator (alloc.c), NCCL buffers, the CUDA
 * context; those are left to settings.memory_threshold (the 80% rule of the
 * reference, section 1.7).
 *
 * With a Llama model (SwiGLU, RMSNorm, GQA, untied, no dropout, flash
 * attention, SP, distributed optimizer, fp32 grads, 1F1B, m >= p, even
 * split) on a profile without workspaces, stage 0 equals the reference's
 * closed form term1 + term2 (without its 4(1+v/h) term under
 * PTSIM_CE_LAST_STAGE and pp > 1) to rounding; the tests check this.  On
 * the stage with the loss, PTSIM_CE_LAST_STAGE (ptsim's own estimate) adds
 * what the reference leaves to its 20% margin and a run holds there: the
 * 16-bit logits beside their fp32 copy (2 s b v / t), and what the fused
 * cross entropy and deferred embedding wgrads keep; PTSIM_CE_EVERY_STAGE
 * stays the reference's.
 *
 * Conventions chosen here (each also noted where it is used):
 *  - Model states per parameter come from the plan: weights (2 B, plus
 *    Transformer Engine's cached fp8 copies under fp8: plan.c), the
 *    main-grad buffer, and the optimizer's master weights and moments
 *    sharded over the plan's optimizer_shards.
 *  - Learned absolute position embeddings (replicated over TP): see
 *    ptsim_plan_position_embedding().
 *  - Tied embeddings with pp > 1: the last stage keeps its own copy of the
 *    word embedding (Megatron does, and all-reduces their gradients), so it
 *    is counted there with its gradient and optimizer state; with pp = 1 the
 *    shared matrix is counted once.
 *  - Context parallelism replaces s by s/c everywhere, the s x s attention
 *    terms included ((s/c)^2, the reference's convention; ring attention
 *    works on (s/c) x (s/c) blocks, and without flash attention Megatron's
 *    CP is not used in practice).
 *  - The input-ids term is 8*s*b*h/(t*c) bytes per in-flight microbatch, the
 *    reference's "8p" term.  Real int64 ids take 8*s*b/c bytes (no h, no t),
 *    so this over-counts; it is kept so stage 0 reproduces the seed.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "mamba.h"
#include "memory.h"

/* ---- small helpers ---- */

static PTSIM_HD int64_t imin(int64_t x, int64_t y) { return x < y ? x : y; }

/* ---- activations ---- */

/* Unfused attention (memory.h PtsimAttentionCore).  What each step keeps:
 *  - torch.baddbmm keeps its two matrix operands (Q, K), not its output,
 *    so the scores are kept by nobody: they live until the attention
 *    returns (Transformer Engine's UnfusedDotProductAttention holds them in
 *    a local, transformer_engine/pytorch/attention/dot_product_attention/
 *    backends.py at d0067d0; Megatron's DotProductAttention,
 *    megatron/core/transformer/dot_product_attention.py at d98e8a64).
 *  - The fused softmax kernels save their output alone
 *    (ctx.save_for_backward(output) in TE's softmax.py, save_for_backward(
 *    softmax_results, scale_t) in megatron/core/fusions/fused_softmax.py);
 *    they run where is_kernel_available says: TE 16 < sk < 16384 and
 *    sk % 8 == 0, Megatron 16 < sk <= 4096 and sk % 4 == 0 and no sink
 *    (softmax_offset None: --softmax-type vanilla) (both with
 *    b*np % 4 == 0 and a block condition ptsim takes as met).  Elsewhere
 *    forward_torch_softmax: with softmax_in_fp32 (TE's default; Megatron's
 *    --attention-softmax-in-fp32, set by --apply-query-key-layer-scaling in
 *    TransformerConfig) input.float(), softmax (keeps its fp32 output),
 *    then a 16-bit cast of it.
 *  - torch.nn.Dropout(p): at::dropout returns its input when p == 0
 *    (aten/src/ATen/native/Dropout.cpp: _dropout_impl "if (p == 0 ||
 *    !train ...) return input"), else native_dropout keeps a bool mask and
 *    returns a new tensor.
 *  - torch.bmm(probs', V) keeps probs'.
 * So the s x s bytes kept: 2 (fused or 16-bit softmax, p = 0), 2 + 1 + 2
 * (p > 0, the reference's 5), 4 + 2 (fp32 fallback, p = 0: the cast kept
 * by bmm), 4 + 1 + 2 (fp32 fallback, p > 0: the cast is dropout's input,
 * freed). */
PTSIM_HD void ptsim_memory_attention_core(const PtsimPlan *plan, PtsimAttentionCore *out) {
  const PtsimJob *job = &plan->job;
  const PtsimSettings *run = &job->settings;
  int64_t s = plan->local_seq;
  int dropout = job->source.attention_dropout > 0.0;
  int fp32;
  out->te = run->transformer_engine;
  out->fused = out->te ? (s > 16 && s < 16384 && s % 8 == 0)
                       : (!run->masked_softmax_unfused &&
                          job->model.softmax_type == PTSIM_SOFTMAX_VANILLA && s > 16 && s <= 4096 &&
                          s % 4 == 0);
  fp32 = !out->fused && (out->te || run->attention_softmax_fp32);
  out->probs = fp32 ? 4.0 : 2.0;
  out->mask = dropout ? 1.0 : 0.0;
  out->applied = dropout || fp32 ? 2.0 : 0.0;
  out->kept = !run->flash_attention && !(run->recompute == PTSIM_RECOMPUTE_SELECTIVE &&
                                         (run->recompute_modules & PTSIM_RECOMPUTE_CORE_ATTN));
  out->elements = (double)job->layout.mbs * (double)job->model.num_attention_heads /
                  (double)job->layout.tp * (double)s * (double)s;
}

/* Multi-latent attention's saved tensors in place of a GQA layer's q, k,
 * v and attention output: the q latent (its norm's input and the up
 * projection's input, in the sequence-parallel region), the kv latent with
 * the rope key and its normed part, then per head q and k (qk_head_dim +
 * qk_pos_emb_head_dim wide), v and the output (v_head_dim); the
 * mla_up_proj module drops q, k and v (re-projected in backward). */
static PTSIM_HD void mla_activations(const PtsimPlan *plan, int modules, double in_bytes,
                                     double *replicated, double *split) {
  const PtsimModel *m = &plan->job.model;
  double sb = (double)plan->tokens;
  double nh = (double)m->num_attention_heads, dv = (double)m->v_head_dim;
  double dq = (double)(m->qk_head_dim + m->qk_pos_emb_head_dim);
  double ql = (double)m->q_lora_rank, kl = (double)m->kv_lora_rank;
  if (ql > 0.0) *replicated += 2.0 * sb * ql + in_bytes * sb * ql;
  *replicated += 2.0 * sb * (kl + (double)m->qk_pos_emb_head_dim) + in_bytes * sb * kl;
  if (!(modules & PTSIM_RECOMPUTE_MLA_UP_PROJ)) *split += 2.0 * sb * nh * (2.0 * dq + dv);
  *split += 2.0 * sb * nh * dv + (in_bytes < 2.0 ? sb * nh * dv : 0.0);
}

/* SwiGLU keeps fc1's output (gate and up, 2 x 2 B per element of the
 * width f) and fc2 keeps its input (in_bytes); what else depends on how the
 * activation runs.  Megatron's fused bias_swiglu_impl (its default, also
 * the MoE experts' weighted_bias_swiglu_impl) saves its input alone and
 * returns a new tensor, fc2's input (megatron/core/fusions/
 * fused_bias_swiglu.py, SwiGLUFunction: ctx.save_for_backward(input)):
 * 4 f + in_bytes f.  Unfused (--no-bias-swiglu-fusion, PyTorch's modules as
 * torchtitan builds them, a Megatron-LM older than the fused kernel:
 * memory.h): silu(x1) keeps x1, the product keeps silu(x1) and x2: the SiLU
 * output's 2 f more (the reference's 8 f with bf16).  swiglu_rest_bytes
 * returns the bytes per element of f beyond fc1's output. */
PTSIM_HD int ptsim_memory_swiglu_unfused(const PtsimJob *job) {
  int32_t d = job->source.megatron_date;
  return job->settings.swiglu_unfused || job->settings.torch_layers != PTSIM_TORCH_LAYERS_NONE ||
         (d > 0 && d < PTSIM_MEGATRON_SWIGLU_FUSED_FROM);
}

static PTSIM_HD double swiglu_rest_bytes(const PtsimJob *job, double in_bytes) {
  return (ptsim_memory_swiglu_unfused(job) ? 2.0 : 0.0) + in_bytes;
}

/* What an MoE block keeps beyond its input (memory.h): the router's fp32
 * scores and routing map (Tm x E; 4 + 1 B a score fused, + 4 unfused for
 * the balancing loss), the N = load Tm k etp rows the local experts see --
 * their input, fc1's output (gate and up), fc2's input (and, unfused, the
 * SiLU output: swiglu_rest_bytes), the probabilities (fp32) -- and the shared experts' MLP
 * intermediates (TP-split), less what the moe, moe_act and shared_experts
 * recompute modules drop. */
static PTSIM_HD double moe_block_activations(const PtsimPlan *plan, int modules, double in_bytes,
                                             double load) {
  const PtsimModel *m = &plan->job.model;
  const PtsimLayout *l = &plan->job.layout;
  const PtsimSettings *run = &plan->job.settings;
  double sb = (double)plan->tokens, t = (double)l->tp;
  double tm = plan->tokens_sp, h = (double)m->hidden_size;
  double rows = load * tm * (double)m->moe_router_topk * (double)l->etp;
  double f = (double)m->moe_ffn_hidden_size / (double)l->etp,
         fs = (double)m->moe_shared_expert_size;
  int swiglu = m->activation == PTSIM_ACTIVATION_SWIGLU,
      drop_act = (modules & PTSIM_RECOMPUTE_MOE_ACT) != 0;
  double bytes;
  if (modules & PTSIM_RECOMPUTE_MOE) return 0.0;
  bytes = tm * (double)m->num_experts * (run->moe_router_fusion ? 5.0 : 9.0);
  bytes += rows * (in_bytes * h + 4.0);           /* expert input, probs */
  bytes += rows * f * (swiglu ? 2.0 * 2.0 : 2.0); /* fc1 output */
  if (!drop_act)                                  /* (SiLU output,) fc2 input */
    bytes += rows * f * (swiglu ? swiglu_rest_bytes(&plan->job, in_bytes) : in_bytes);
  if (fs > 0.0 && !(modules & PTSIM_RECOMPUTE_SHARED_EXPERTS))
    bytes += (swiglu ? (4.0 + swiglu_rest_bytes(&plan->job, in_bytes)) * sb * fs
                     : 2.0 * sb * fs + in_bytes * sb * fs) /
             t;
  return bytes;
}

/* LoRA (plan.c "LoRA"): each targeted linear's B keeps its input, A's
 * r-wide output, for every token (A's output is gathered over TP before
 * B, Megatron-Bridge's ParallelLinearAdapter): in_bytes T r per target on
 * each TP rank.  A's own input is the tensor the base linear keeps
 * already.  The MLP's adapters go with the MLP under its recompute
 * (drop_mlp). */
static PTSIM_HD double lora_activation_bytes(const PtsimPlan *plan, int drop_mlp, double in_bytes) {
  const PtsimSettings *run = &plan->job.settings;
  int targets = run->lora_targets & (drop_mlp ? PTSIM_LORA_QKV | PTSIM_LORA_PROJ : PTSIM_LORA_ALL);
  if (run->lora_rank <= 0) return 0.0;
  return (double)ptsim_lora_target_count(targets) * in_bytes * (double)plan->tokens *
         (double)run->lora_rank;
}

PTSIM_HD double ptsim_memory_lora_activation_bytes(const PtsimPlan *plan, int keep_scores) {
  const PtsimSettings *run = &plan->job.settings;
  int modules = keep_scores ? 0 : run->recompute_modules;
  double in_bytes = run->precision == PTSIM_PRECISION_FP8 && plan->job.hw.peak_fp8_flops > 0.0 &&
                            run->torch_layers == PTSIM_TORCH_LAYERS_NONE
                        ? 1.0
                        : 2.0;
  return lora_activation_bytes(plan, (modules & PTSIM_RECOMPUTE_MLP) != 0, in_bytes);
}

static PTSIM_HD double layer_activation_bytes(const PtsimPlan *plan, int keep_scores, int moe,
                                              double load) {
  const PtsimModel *m = &plan->job.model;
  const PtsimLayout *l = &plan->job.layout;
  const PtsimSettings *run = &plan->job.settings;
  const PtsimProvenance *src = &plan->job.source;
  double s = (double)plan->local_seq; /* CP: s -> s/c */
  double b = (double)l->mbs;
  double sb = (double)plan->tokens;
  double h = (double)m->hidden_size;
  double hf = (double)m->ffn_hidden_size;
  double a = (double)m->num_attention_heads;
  double d = (double)plan->head_dim;
  double q = sb * a * d;                            /* query elements */
  double kv = sb * (double)m->num_query_groups * d; /* key (= value) elements */
  double t = (double)l->tp;
  double sbh = sb * h;
  int dropout = src->hidden_dropout > 0.0;
  int modules = keep_scores ? 0 : run->recompute_modules;
  int drop_scores = (modules & PTSIM_RECOMPUTE_CORE_ATTN) != 0;
  int drop_mlp = (modules & PTSIM_RECOMPUTE_MLP) != 0;
  /* Megatron recomputes a norm only where it is its own module (local
   * layers); Transformer Engine fuses it into the next linear layer. */
  int drop_norms = (modules & PTSIM_RECOMPUTE_LAYERNORM) != 0 && !run->transformer_engine;
  /* FP8 (Transformer Engine): a linear layer saves its input quantized,
   * 1 B per element, for its weight gradient (TE docs, features/
   * low_precision_training/performance_considerations.rst, "Memory usage");
   * torchao's float8 linears (PyTorch layers) save the bf16 input and cast
   * it again in backward. */
  double in_bytes = run->precision == PTSIM_PRECISION_FP8 && plan->job.hw.peak_fp8_flops > 0.0 &&
                            run->torch_layers == PTSIM_TORCH_LAYERS_NONE
                        ? 1.0
                        : 2.0;
  int fp8 = in_bytes < 2.0;

  /* An MoE layer's pre-MLP norm is a module of its own (not fused into a
   * linear layer): its output, the MoE block's input, goes with layernorm
   * recompute; the dense MLP's rules do not apply to it. */
  int drop_mlp_norm = moe ? (modules & PTSIM_RECOMPUTE_LAYERNORM) != 0 : drop_norms;
  if (moe) drop_mlp = 1;

  /* Tensors that live in the sequence-parallel region: split over t with
   * SP, replicated over the TP group without it (Korthikanti et al. 2022:
   * the "10sbh" part).  Norm inputs count 2sbh each for RMSNorm and
   * LayerNorm alike, as the reference's table does. */
  double replicated =
      2.0 * sbh                             /* input norm input */
      + (drop_norms ? 0.0 : in_bytes * sbh) /* QKV input (norm output) */
      + 2.0 * sbh                           /* post-attention norm input */
      /* MLP input (norm output): gone when the norm is
       * recomputed, or with the whole MLP under TE, whose
       * checkpoint starts before the fused norm */
      + (drop_mlp_norm || (drop_mlp && run->transformer_engine && !moe) ? 0.0 : in_bytes * sbh) +
      (dropout ? 2.0 * sbh : 0.0); /* 1-byte masks, x2 */

  /* Tensors inside the tensor-parallel region: always split over t.  The
   * attention output is kept in bf16 by the attention kernel for its own
   * backward; under fp8 the O projection keeps an fp8 copy as well. */
  double split = 0.0;
  if (m->multi_latent_attention) {
    mla_activations(plan, modules, in_bytes, &replicated, &split);
  } else {
    split = 2.0 * q          /* Q */
            + 2.0 * 2.0 * kv /* K and V (GQA) */
            + 2.0 * q        /* attention output -> O proj */
            + (fp8 ? q : 0.0);
    if (m->qk_layernorm) split += 2.0 * (q + kv); /* the q, k norm inputs */
  }
  if (!drop_mlp) {
    if (m->activation == PTSIM_ACTIVATION_SWIGLU) /* gate and up; (SiLU;) fc2 input */
      split += 2.0 * 2.0 * sb * hf + swiglu_rest_bytes(&plan->job, in_bytes) * sb * hf;
    else /* fc1 output; GELU output = fc2 input.  Squared ReLU the same:
          * torch.compile's one kernel keeps its input x (2 B; relu(x)
          * re-made in backward), eager its relu(x) (the pow's and the
          * relu's saved tensor, one), 2 B either way */
      split += 2.0 * sb * hf + in_bytes * sb * hf;
  }

  /* Without flash attention (unless selective recompute re-runs the
   * attention core): the s x s tensors (ptsim_memory_attention_core; the
   * reference's section 1.5 counts 5 bytes, its dropout p > 0 case).
   * With flash attention none is kept (its dropout RNG is in-kernel). */
  if (!drop_scores && !run->flash_attention) {
    PtsimAttentionCore core;
    ptsim_memory_attention_core(plan, &core);
    split += (core.probs + core.mask + core.applied) * b * s * s * a;
  }

  /* LoRA's adapters' intermediates (lora_activation_bytes); and a frozen
   * linear no adapter targets saves no input: Transformer Engine keeps a
   * linear's input only for its weight gradient (backward_needs_input =
   * weight.requires_grad), so QKV's (the norm output), fc1's (the MLP
   * norm output), fc2's (the activation output) and proj's fp8 copy go;
   * the attention output stays, the attention kernel's own.  A targeted
   * linear's input is its adapter A's.  Only the adapters' intermediates
   * with Megatron's local layers. */
  if (!moe && run->lora_rank > 0) {
    int k = run->transformer_engine ? run->lora_targets : PTSIM_LORA_ALL; /* Megatron's local
                                                      linears save their input regardless */
    split += t * lora_activation_bytes(plan, drop_mlp, in_bytes);         /* whole per rank */
    if (!(k & PTSIM_LORA_QKV) && !drop_norms) replicated -= in_bytes * sbh;
    if (!(k & PTSIM_LORA_FC1) && !(drop_mlp_norm || (drop_mlp && run->transformer_engine)))
      replicated -= in_bytes * sbh;
    if (!(k & PTSIM_LORA_FC2) && !drop_mlp) split -= in_bytes * sb * hf;
    if (!(k & PTSIM_LORA_PROJ) && fp8) split -= q;
  }

  double replicated_div = l->sp ? t : 1.0;
  if (moe)
    return replicated / replicated_div + split / t +
           moe_block_activations(plan, modules, in_bytes, load);
  return replicated / replicated_div + split / t;
}

/* What torch's per-op checkpointing keeps of one layer (README, "Per-op
 * selective checkpointing"); T = b s / c tokens:
 *   the block's input, the checkpoint's own     2 T h   (/ t with SP)
 *   the matmul outputs its policy keeps
 *   (ptsim_plan_torch_gemm_saved), bf16: wq 2 T q / t, wv 2 T kv / t,
 *   w1 2 T f / t, and the row-parallel w2's partial sum 2 T h, whole
 *   SDPA's output and fp32 logsumexp           2 T q / t + 4 b (a / t) s
 *   with TP and SP, the outputs of the two
 *   reduce-scatters (on the policy's list)     2 x 2 T h / t
 * A float8 linear's matmul output is bf16 too; its scales are scalars. */
static PTSIM_HD double op_saved_bytes(const PtsimPlan *plan) {
  const PtsimModel *m = &plan->job.model;
  const PtsimLayout *l = &plan->job.layout;
  double s = (double)plan->local_seq, b = (double)l->mbs, T = (double)plan->tokens;
  double h = (double)m->hidden_size, t = (double)l->tp, d = (double)plan->head_dim;
  double a = (double)m->num_attention_heads, q = a * d, kv = (double)m->num_query_groups * d;
  double f = (double)m->ffn_hidden_size;
  /* output elements of each matmul (PtsimTorchGemm order) */
  double out[PTSIM_TORCH_GEMMS];
  double bytes = 2.0 * T * h / (l->sp ? t : 1.0) + 2.0 * T * q / t + 4.0 * b * (a / t) * s;
  int32_t g;
  out[PTSIM_TORCH_WQ] = T * q / t;
  out[PTSIM_TORCH_WK] = out[PTSIM_TORCH_WV] = T * kv / t;
  out[PTSIM_TORCH_WO] = out[PTSIM_TORCH_W2] = T * h;
  out[PTSIM_TORCH_W1] = out[PTSIM_TORCH_W3] = T * f / t;
  for (g = 0; g < PTSIM_TORCH_GEMMS; g++)
    if (ptsim_plan_torch_gemm_saved(m, g)) bytes += 2.0 * out[g];
  if (l->tp > 1 && l->sp) bytes += 2.0 * 2.0 * T * h / t;
  return bytes;
}

PTSIM_HD double ptsim_memory_layer_op_saved_bytes(const PtsimPlan *plan) {
  return op_saved_bytes(plan);
}

PTSIM_HD double ptsim_memory_layer_activation_bytes(const PtsimPlan *plan, int keep_scores) {
  return layer_activation_bytes(plan, keep_scores, 0, 1.0);
}

PTSIM_HD double ptsim_memory_moe_layer_activation_bytes(const PtsimPlan *plan, int keep_scores) {
  return layer_activation_bytes(plan, keep_scores, 1, plan->expert_load);
}

/* Saved activations of one stage, all in-flight microbatches, recompute
 * applied (embedding dropout excluded). */
/* ---- Activation offloading ----
 * Megatron-LM's fine-grained activation offloading (--fine-grained-
 * activation-offloading, --offload-modules; megatron/core/pipeline_parallel/
 * fine_grained_activation_offload.py): the saved input of each named module
 * is copied to pinned host memory on a side stream once the layer's forward
 * has it, and copied back, one layer ahead, before the layer's backward.
 * A (layer, microbatch) stored in full keeps on the GPU its saved set less
 * those inputs; at a time one layer's are on the device (the one being
 * offloaded or reloaded).  The bytes per layer and microbatch are the
 * estimate's own items (layer_activation_bytes): attn_norm the layer input
 * 2 T_sp h, qkv_linear the norm output in_bytes T_sp h (none where the norm
 * is recomputed), core_attn q, k and v 2 T (q + 2 kv) / t (multi-latent
 * attention: 2 T nh (2 dq + dv) / t, none when mla_up_proj is recomputed),
 * attn_proj the attention output 2 T q / t (MLA: nh dv wide; and its fp8
 * copy), mlp_norm the residual
 * 2 T_sp h; an MoE layer's expert_fc1 the experts' rows in_bytes N h and
 * moe_act their fc1 output 2 N 2f (SwiGLU; N f for GELU).  Recomputed
 * layers keep only their input: nothing is offloaded there.
 *
 * core_attn's context offloads every tensor the attention core saves
 * (the manager's saved-tensor hooks take each one of at least 2^20
 * elements): without flash attention that includes the s x s tensors
 * (ptsim_memory_attention_core), which then leave the GPU too.  What is
 * copied exceeds what is freed in two ways (`copied`): multi-latent
 * attention's up-projection recompute (mla_up_proj) does not switch
 * core_attn's offload off (multi_latent_attention.py enters it
 * regardless), so q, k and v are copied although the estimate keeps none
 * of them; and a softmax output that reaches the probs-times-v bmm
 * unchanged (fused softmax, no dropout, bf16) is saved twice, by the
 * softmax and by the bmm, and the manager copies each saved tensor
 * (bulk_offload_group: contiguous aliases are not deduplicated), so it
 * crosses the link twice. */
static PTSIM_HD double offload_bytes(const PtsimPlan *plan, int moe, int copied) {
  const PtsimModel *m = &plan->job.model;
  const PtsimLayout *l = &plan->job.layout;
  const PtsimSettings *run = &plan->job.settings;
  int k = run->offload_modules;
  double t = (double)l->tp, T = (double)plan->tokens, h = (double)m->hidden_size;
  double tsp = plan->tokens_sp, d = (double)plan->head_dim;
  double q = (double)m->num_attention_heads * d, kv = (double)m->num_query_groups * d;
  double in_bytes, bytes = 0.0;
  int fp8 = run->precision == PTSIM_PRECISION_FP8 && plan->job.hw.peak_fp8_flops > 0.0 &&
            run->torch_layers == PTSIM_TORCH_LAYERS_NONE;
  int drop_norms = run->recompute == PTSIM_RECOMPUTE_SELECTIVE &&
                   (run->recompute_modules & PTSIM_RECOMPUTE_LAYERNORM) && !run->transformer_engine;
  in_bytes = fp8 ? 1.0 : 2.0;
  if (k == 0 || run->recompute == PTSIM_RECOMPUTE_FULL ||
      run->recompute == PTSIM_RECOMPUTE_SELECTIVE_OP)
    return 0.0;
  if (k & PTSIM_OFFLOAD_ATTN_NORM) bytes += 2.0 * tsp * h;
  if ((k & PTSIM_OFFLOAD_QKV_LINEAR) && !drop_norms) bytes += in_bytes * tsp * h;
  if (m->multi_latent_attention) { /* mla_activations: q, k (dq wide), v; the output dv */
    double dq = (double)(m->qk_head_dim + m->qk_pos_emb_head_dim),
           nh = (double)m->num_attention_heads;
    int up_redone = run->recompute == PTSIM_RECOMPUTE_SELECTIVE &&
                    (run->recompute_modules & PTSIM_RECOMPUTE_MLA_UP_PROJ);
    if ((k & PTSIM_OFFLOAD_CORE_ATTN) && (copied || !up_redone))
      bytes += 2.0 * T * nh * (2.0 * dq + (double)m->v_head_dim) / t;
    if (k & PTSIM_OFFLOAD_ATTN_PROJ)
      bytes += (fp8 ? 3.0 : 2.0) * T * nh * (double)m->v_head_dim / t;
  } else {
    if (k & PTSIM_OFFLOAD_CORE_ATTN) bytes += 2.0 * T * (q + 2.0 * kv) / t;
    if (k & PTSIM_OFFLOAD_ATTN_PROJ) bytes += (fp8 ? 3.0 : 2.0) * T * q / t;
  }
  if ((k & PTSIM_OFFLOAD_CORE_ATTN) && !run->flash_attention) {
    PtsimAttentionCore core;
    ptsim_memory_attention_core(plan, &core);
    if (core.kept)
      bytes += (core.probs + core.mask + core.applied +
                (copied && core.applied == 0.0 ? core.probs : 0.0)) *
               core.elements;
  }
  if (k & PTSIM_OFFLOAD_MLP_NORM) bytes += 2.0 * tsp * h;
  if (moe && !(run->recompute == PTSIM_RECOMPUTE_SELECTIVE &&
               (run->recompute_modules & PTSIM_RECOMPUTE_MOE))) {
    double rows = plan->expert_load * tsp * (double)m->moe_router_topk * (double)l->etp;
    double f = (double)m->moe_ffn_hidden_size / (double)l->etp;
    if (k & PTSIM_OFFLOAD_EXPERT_FC1) bytes += in_bytes * rows * h;
    if (k & PTSIM_OFFLOAD_MOE_ACT)
      bytes += rows * f * (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2.0 * 2.0 : 2.0);
  }
  return bytes;
}

PTSIM_HD double ptsim_memory_offload_layer_bytes(const PtsimPlan *plan, int moe) {
  return offload_bytes(plan, moe, 0);
}

PTSIM_HD double ptsim_memory_offload_copy_bytes(const PtsimPlan *plan, int moe) {
  return offload_bytes(plan, moe, 1);
}

/* Stage `stage`'s in-flight microbatches' offloaded bytes: freed from the
 * GPU (copied 0) or held in pinned host memory (copied 1). */
static PTSIM_HD double offload_stage_bytes(const PtsimPlan *plan, int64_t stage, int copied) {
  int64_t ls = plan->stage_layers[stage], moe = plan->stage_moe_layers[stage];
  return plan->inflight_microbatches[stage] * ((double)(ls - moe) * offload_bytes(plan, 0, copied) +
                                               (double)moe * offload_bytes(plan, 1, copied));
}

PTSIM_HD double ptsim_memory_offload_host_bytes(const PtsimPlan *plan, int64_t stage) {
  return offload_stage_bytes(plan, stage, 1);
}

/* ---- Hybrid models ----
 * One layer of a hybrid pattern (mamba.h) per microbatch, bf16, each
 * sub-layer with its own pre-norm, fused into its first linear layer
 * (Transformer Engine): a Mamba mixer keeps what mamba.c says; attention
 * alone its input and norm output (SP region), Q, K and V and the
 * attention output (the TP region), and unfused attention's s x s
 * tensors; the MLP alone its
 * input and norm output, fc1's output and the activation's (fc2's input);
 * the MoE block alone its input and norm output and the experts' tensors
 * (moe_block_activations).  A 1-byte dropout mask of the residual each. */
PTSIM_HD double ptsim_memory_hybrid_layer_bytes(const PtsimPlan *plan, char kind) {
  const PtsimModel *m = &plan->job.model;
  const PtsimLayout *l = &plan->job.layout;
  double sb = (double)plan->tokens, t = (double)l->tp, h = (double)m->hidden_size;
  double sp = l->sp ? t : 1.0, d = (double)plan->head_dim;
  double q = sb * (double)m->num_attention_heads * d, kv = sb * (double)m->num_query_groups * d;
  double hf = (double)m->ffn_hidden_size;
  int dropout = plan->job.source.hidden_dropout > 0.0;
  double norm_and_input = (2.0 * sb * h + 2.0 * sb * h + (dropout ? sb * h : 0.0)) / sp;
  if (kind == PTSIM_HYBRID_MAMBA) return ptsim_mamba_saved_bytes(m, l->tp, l->sp, sb, dropout);
  if (kind == PTSIM_HYBRID_ATTENTION) {
    /* unfused attention (--attention-backend unfused) keeps its s x s
     * tensors as a transformer layer's does (ptsim_memory_attention_core) */
    PtsimAttentionCore core;
    ptsim_memory_attention_core(plan, &core);
    return norm_and_input +
           (2.0 * q + 4.0 * kv + 2.0 * q + (m->qk_layernorm ? 2.0 * (q + kv) : 0.0)) / t +
           (core.kept ? (core.probs + core.mask + core.applied) * core.elements : 0.0);
  }
  if (kind == PTSIM_HYBRID_MLP)
    return norm_and_input +
           (m->activation == PTSIM_ACTIVATION_SWIGLU
                ? 2.0 * 2.0 * sb * hf + swiglu_rest_bytes(&plan->job, 2.0) * sb * hf
                : 2.0 * sb * hf + 2.0 * sb * hf) /
               t;
  if (kind == PTSIM_HYBRID_MOE)
    return norm_and_input + moe_block_activations(plan, 0, 2.0, plan->expert_load);
  return 0.0;
}

/* A hybrid stage's saved activations: its chunks' layers by kind, each
 * microbatch in flight; under full recompute a checkpoint (the layer
 * input) per layer and one layer's working set, the largest (recompute
 * modules and offloading are not applied to hybrid layers). */
static PTSIM_HD double hybrid_stage_activations(const PtsimPlan *plan, int64_t stage,
                                                double inflight) {
  const PtsimJob *job = &plan->job;
  const char kinds[4] = {PTSIM_HYBRID_MAMBA, PTSIM_HYBRID_ATTENTION, PTSIM_HYBRID_MLP,
                         PTSIM_HYBRID_MOE};
  double stored = 0.0, largest = 0.0, layers = 0.0;
  int64_t c, first, count;
  int k;
  for (c = 0; c < plan->num_chunks; c++) {
    ptsim_plan_chunk_range(plan, stage, c, &first, &count);
    for (k = 0; k < 4; k++) {
      double n = (double)ptsim_hybrid_count(&job->model, first, count, kinds[k]);
      double one = ptsim_memory_hybrid_layer_bytes(plan, kinds[k]);
      stored += n * one;
      layers += n;
      if (n > 0.0 && one > largest) largest = one;
    }
  }
  if (job->settings.recompute != PTSIM_RECOMPUTE_FULL) return stored * inflight;
  return inflight * layers * 2.0 * (double)plan->tokens * (double)job->model.hidden_size /
             (job->layout.sp ? (double)job->layout.tp : 1.0) +
         largest;
}

/* A hybrid stage's saved bytes per layer and microbatch, the mean of its
 * layers by their kinds (0 for a stage without layers). */
static PTSIM_HD double hybrid_layer_mean(const PtsimPlan *plan, int64_t stage) {
  const char kinds[4] = {PTSIM_HYBRID_MAMBA, PTSIM_HYBRID_ATTENTION, PTSIM_HYBRID_MLP,
                         PTSIM_HYBRID_MOE};
  double stored = 0.0, layers = 0.0;
  int64_t c, first, count;
  int k;
  for (c = 0; c < plan->num_chunks; c++) {
    ptsim_plan_chunk_range(plan, stage, c, &first, &count);
    for (k = 0; k < 4; k++) {
      double n = (double)ptsim_hybrid_count(&plan->job.model, first, count, kinds[k]);
      if (n > 0.0) stored += n * ptsim_memory_hybrid_layer_bytes(plan, kinds[k]);
      layers += n;
    }
  }
  return layers > 0.0 ? stored / layers : 0.0;
}

static PTSIM_HD double stage_layer_activations(const PtsimPlan *plan, int64_t stage,
                                               double inflight, double dense_layer,
                                               double moe_layer) {
  const PtsimJob *job = &plan->job;
  if (ptsim_model_is_hybrid(&job->model)) return hybrid_stage_activations(plan, stage, inflight);
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  int64_t ls = plan->stage_layers[stage], moe = plan->stage_moe_layers[stage];
  /* An MoE model's layers differ: the mean layer stands for a stored one,
   * the larger for the one being recomputed. */
  double full_layer = dense_layer, working = dense_layer;
  if (ls <= 0) return 0.0;
  if (moe > 0) {
    full_layer = ((double)(ls - moe) * dense_layer + (double)moe * moe_layer) / (double)ls;
    working = moe < ls && dense_layer > moe_layer ? dense_layer : moe_layer;
  }
  if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE_OP) {
    /* torch's per-op checkpointing (dense layers only): every layer keeps
     * its kept set; the one being recomputed in backward its whole working
     * set again. */
    double kept = op_saved_bytes(plan);
    return (double)ls * kept * inflight + (dense_layer - kept);
  }
  if (run->recompute != PTSIM_RECOMPUTE_FULL) {
    /* none / selective: every layer saves its working set; offloading
     * keeps one layer's offloaded inputs on the device (see above) */
    double offloaded = offload_stage_bytes(plan, stage, 0), window = 0.0;
    if (offloaded > 0.0) {
      window = ptsim_memory_offload_layer_bytes(plan, 0);
      if (moe > 0 && ptsim_memory_offload_layer_bytes(plan, 1) > window)
        window = ptsim_memory_offload_layer_bytes(plan, 1);
      offloaded -= window;
    }
    if (moe > 0)
      return ((double)(ls - moe) * dense_layer + (double)moe * moe_layer) * inflight - offloaded;
    return (double)ls * full_layer * inflight - offloaded;
  }
  /* Full recompute: a checkpoint is the layer (or chunk) input, 2sbh, split
   * over t only with SP; plus the working set of what is being recomputed
   * in backward (one microbatch). */
  double checkpoint = 2.0 * (double)plan->tokens * (double)job->model.hidden_size /
                      (l->sp ? (double)l->tp : 1.0);
  /* Megatron applies recompute_num_layers per model chunk; with an uneven
   * chunk split treat the stage as one chunk. */
  int64_t v = plan->num_chunks;
  if (ls % v != 0) v = 1;
  int64_t lc = ls / v; /* layers per model chunk */
  int64_t n = run->recompute_num_layers;
  if (run->recompute_method == PTSIM_RECOMPUTE_METHOD_BLOCK) {
    /* The first n layers of each chunk are recomputed one by one (inputs
     * only); the rest store everything.  n = 0: all layers. */
    int64_t nn = (n <= 0) ? lc : imin(n, lc);
    double recomputed = (double)(v * nn);
    double stored = (double)ls - recomputed;
    double act = inflight * (recomputed * checkpoint + stored * full_layer);
    if (nn > 0) act += working; /* one layer being recomputed */
    return act;
  }
  /* Uniform: chunks of n layers, one checkpoint each, and one chunk's full
   * working set while it is recomputed.  n = 0: n = 1. */
  {
    int64_t nn = (n <= 0) ? 1 : imin(n, lc);
    int64_t checkpoints = v * ((lc + nn - 1) / nn);
    return inflight * (double)checkpoints * checkpoint + (double)nn * working;
  }
}

/* ---- sharded data parallelism ---- */

/* Unit kinds of a stage in backward order: the output unit (last stage),
 * its MoE layers, its dense layers (four of each stand for any number:
 * every window of three looks the same), the embedding (stage 0).  A
 * model's dense layers are taken to come before its MoE layers, as in
 * the first-k-dense models; an interleaved pattern has windows of mixed
 * kinds that this order does not hold, none larger than three MoE
 * layers'.  Returns the count. */
static PTSIM_HD int32_t backward_units(const PtsimPlan *plan, int64_t stage, int32_t *kinds) {
  int32_t n = 0;
  int64_t k, moe = plan->stage_moe_layers[stage];
  if (stage == plan->vstages.last_stage) kinds[n++] = PTSIM_UNIT_HEAD;
  for (k = 0; k < moe && k < 4; k++) kinds[n++] = PTSIM_UNIT_MOE_LAYER;
  for (k = 0; k < plan->stage_layers[stage] - moe && k < 4; k++) kinds[n++] = PTSIM_UNIT_LAYER;
  if (stage == plan->vstages.first_stage) kinds[n++] = PTSIM_UNIT_EMBEDDING;
  return n;
}

/* Bytes a stage's sharded data parallelism holds besides its persistent
 * shards (PtsimStageMemory.unsharded_bytes), at its peak in backward: the
 * unit being computed with its gradient (megatron's main-grad buffer in
 * the reduce dtype; autograd's bf16 gradient under torch), the unit before
 * it in backward order as its reduce-scatter input (reduce dtype) and,
 * under ZeRO-3, the gathered units: the current and (prefetch) the next,
 * or all of the stage's when they are kept from forward to backward
 * (RESHARD_NEVER).  Under sync_once every unit is gathered all step and
 * its unsharded gradients are the stage's gradients (gradients_bytes). */
PTSIM_HD static double unsharded_bytes(const PtsimPlan *plan, int64_t stage) {
  const PtsimSettings *run = &plan->job.settings;
  int32_t kinds[10], n, i;
  double peak = 0.0;
  int keep_all = run->reshard_after_forward == PTSIM_RESHARD_NEVER;
  /* the gradient of the unit in backward (autograd's bf16 one under
   * torch, megatron's main-grad buffer), the reduce-scatter input of the
   * one before it */
  double computed = run->fsdp_impl == PTSIM_FSDP_TORCH
                        ? plan->unit_grad_buffer_bytes - plan->grad_bytes
                        : plan->grad_bytes;
  if (plan->zero_stage < 2) return 0.0;
  if (plan->sync_once) return plan->stage_gather_bytes[stage];
  n = backward_units(plan, stage, kinds);
  /* unit i in backward: gathered with the next one (prefetch), unit i-1's
   * gradient being reduced */
  for (i = 0; i < n; i++) {
    double at = plan->unit_parameters[kinds[i]] * computed;
    if (i > 0) at += plan->unit_parameters[kinds[i - 1]] * plan->grad_bytes;
    if (plan->zero_stage == 3 && !keep_all) {
      at += plan->unit_gather_bytes[kinds[i]];
      if (run->fsdp_prefetch && i + 1 < n) at += plan->unit_gather_bytes[kinds[i + 1]];
    }
    if (at > peak) peak = at;
  }
  return peak + (plan->zero_stage == 3 && keep_all ? plan->stage_gather_bytes[stage] : 0.0);
}

/* ---- workspaces ---- */

/* PyTorch allocates a cuBLAS workspace through its caching allocator for
 * every (handle, stream) that runs a cuBLAS call, and a handle is per
 * thread (CublasHandlePool.cpp, setWorkspaceForHandle); Megatron's forward
 * runs on the main thread, autograd's backward on its device thread, so a
 * stage that calls cuBLAS from PyTorch in both holds two.  Such a stage:
 * the one with the output layer (Megatron's ColumnParallelLinear,
 * torch.matmul), one with Megatron's local or PyTorch's own layers, unfused
 * attention (torch.baddbmm, torch.bmm) or MoE layers (the router's
 * linear); Transformer Engine's GEMMs use its own workspace instead.
 * Transformer Engine keeps one (get_cublas_workspace, functools.lru_cache,
 * cpp_extensions/gemm.py), one of three times the size for userbuffers'
 * overlapped GEMMs (--tp-comm-overlap; memory.h), and one per compute
 * stream (nvte_get_num_compute_streams: 4, common/util/multi_stream.cpp) for
 * grouped GEMMs (MoE layers with --moe-grouped-gemm).  The sizes are the
 * job's (hw_profiles/software/workspaces.ini). */
#define TORCH_CUBLAS_THREADS 2
#define TE_GROUPED_GEMM_STREAMS 4

PTSIM_HD void ptsim_memory_workspaces(const PtsimPlan *plan, int64_t stage, PtsimWorkspaces *out) {
  const PtsimJob *job = &plan->job;
  const PtsimSettings *run = &job->settings;
  int moe = plan->stage_moe_layers[stage] > 0;
  int torch_gemms = stage == plan->vstages.last_stage || !run->transformer_engine ||
                    !run->flash_attention || moe;
  out->torch = torch_gemms && run->cublas_workspace_bytes > 0.0 ? TORCH_CUBLAS_THREADS : 0;
  out->te = out->te_userbuffers = 0;
  if (!run->transformer_engine || run->te_workspace_bytes <= 0.0) return;
  out->te = 1;
  if (run->tp_comm_overlap && job->layout.tp > 1) out->te_userbuffers = 1;
  if (moe && run->moe_grouped_gemm) out->te += TE_GROUPED_GEMM_STREAMS;
}

PTSIM_HD double ptsim_memory_workspace_bytes(const PtsimPlan *plan, int64_t stage) {
  const PtsimSettings *run = &plan->job.settings;
  PtsimWorkspaces w;
  ptsim_memory_workspaces(plan, stage, &w);
  return (double)w.torch * run->cublas_workspace_bytes +
         ((double)w.te + PTSIM_MEMORY_TE_USERBUFFERS_SIZES * (double)w.te_userbuffers) *
             run->te_workspace_bytes;
}

/* ---- the estimate ---- */

PTSIM_HD void ptsim_memory_estimate(const PtsimPlan *plan, PtsimCrossEntropyConvention ce,
                                    PtsimMemoryEstimate *out) {
  const PtsimJob *job = &plan->job;
  const PtsimModel *m = &job->model;
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  const PtsimProvenance *src = &job->source;
  int64_t p = l->pp, first = plan->vstages.first_stage, last = plan->vstages.last_stage;
  double h = (double)m->hidden_size;
  double v = (double)m->vocab_size;
  double t = (double)l->tp;
  double sb = (double)plan->tokens;
  double grad_bytes = plan->grad_bytes;
  double optimizer_bytes = (plan->master_bytes + plan->exp_avg_bytes + plan->exp_avg_sq_bytes) /
                           plan->optimizer_shards;
  /* the routed experts' states are sharded over the expert data-parallel group */
  double expert_optimizer_bytes =
      (plan->master_bytes + plan->exp_avg_bytes + plan->exp_avg_sq_bytes) /
      plan->expert_optimizer_shards;
  /* Working set of one layer: with full recompute it is rebuilt in full
   * (scores included); selective recompute drops its modules' tensors. */
  int keep_scores = run->recompute != PTSIM_RECOMPUTE_SELECTIVE;
  double full_layer = ptsim_memory_layer_activation_bytes(plan, keep_scores);
  double moe_layer = m->num_experts > 0 ? ptsim_memory_moe_layer_activation_bytes(plan, keep_scores)
                                        : 0.0;
  int64_t i;

  out->num_stages = p;
  out->peak_stage = 0;
  for (i = 0; i < p; i++) {
    PtsimStageMemory *st = &out->stages[i];
    double inflight = plan->inflight_microbatches[i];
    double trainable, trainable_experts;
    st->first_layer = plan->stage_first_layer[i];
    st->num_layers = plan->stage_layers[i];
    st->has_embedding = i == first;
    st->has_lm_head = i == last; /* shared with the embedding when tied, pp 1 */
    st->parameters = plan->stage_parameters[i];
    st->expert_parameters = plan->stage_expert_parameters[i];
    st->parameters_bytes = plan->stage_weight_bytes[i];
    /* gradients and optimizer states: the trainable parameters' (all, or
     * LoRA's adapters alone); ZeRO-2/3 shard the experts' over the expert
     * group */
    ptsim_plan_trainable(plan, i, &trainable, &trainable_experts);
    st->gradients_bytes = grad_bytes * trainable / plan->grad_shards;
    if (trainable_experts > 0.0)
      st->gradients_bytes = grad_bytes * (trainable / plan->grad_shards +
                                          trainable_experts / plan->expert_grad_shards);
    st->optimizer_bytes = optimizer_bytes * trainable;
    if (trainable_experts > 0.0)
      st->optimizer_bytes = optimizer_bytes * trainable +
                            expert_optimizer_bytes * trainable_experts;
    st->activation_bytes_per_layer =
        run->recompute == PTSIM_RECOMPUTE_SELECTIVE_OP ? op_saved_bytes(plan) : full_layer;
    if (ptsim_model_is_hybrid(&job->model))
      st->activation_bytes_per_layer = hybrid_layer_mean(plan, i);
    st->inflight_microbatches = inflight;
    st->embedding_dropout_bytes = 0.0;
    st->input_ids_bytes = 0.0;
    if (i == first) {
      /* The reference's 8p term (over-counts real int64 ids; see top). */
      st->input_ids_bytes = 8.0 * sb * h / t * inflight;
      /* Embedding dropout: 1-byte mask of the (SP-scattered) output. */
      if (src->hidden_dropout > 0.0)
        st->embedding_dropout_bytes = sb * h / (l->sp ? t : 1.0) * inflight;
    }
    st->activations_bytes = stage_layer_activations(plan, i, inflight, full_layer, moe_layer) +
                            st->embedding_dropout_bytes;
    /* the MTP layers, with their inputs, where they run (plan.h mtp_stage) */
    if (i == plan->mtp_stage && m->mtp_num_layers > 0)
      st->activations_bytes +=
          inflight * (double)m->mtp_num_layers *
          ((plan->mtp_layer_is_moe ? moe_layer : full_layer) + 8.0 * sb * h / (l->sp ? t : 1.0));
    /* Final-norm output and fp32 logits, 4sbh(1 + v/h)/t, one microbatch
     * (the reference's term, on every stage by its convention). */
    st->logits_bytes = 0.0;
    if (ce == PTSIM_CE_EVERY_STAGE || i == last) st->logits_bytes = 4.0 * sb * (h + v) / t;
    /* ptsim's own: the 16-bit logits live beside their fp32 copy while the
     * cross entropy runs (the output layer's output, held by the caller;
     * in backward the 16-bit gradient beside the kept fp32 softmax) */
    if (ce == PTSIM_CE_LAST_STAGE && i == last) st->logits_bytes += 2.0 * sb * v / t;
    /* Megatron's native fused cross entropy, compiled: a second fp32 copy
     * of the logits while it runs (lifetimes_int.h ptsim_lifetimes_ce_compiled) */
    if (ce == PTSIM_CE_LAST_STAGE && i == last && run->cross_entropy_fusion &&
        !run->cross_entropy_te)
      st->logits_bytes += 4.0 * sb * v / t;
    /* --defer-embedding-wgrad-compute: at the last microbatch's backward the
     * earlier ones' 16-bit logits gradients and every deferred microbatch's
     * output-layer input are kept; the flush's two all-gather buffers with
     * SP (lifetimes_kept.c) */
    if (ce == PTSIM_CE_LAST_STAGE && i == last && run->defer_embedding_wgrad) {
      double n = (double)plan->num_microbatches;
      if (run->wgrad_deferral_limit > 0 && (double)run->wgrad_deferral_limit < n)
        n = (double)run->wgrad_deferral_limit;
      st->logits_bytes += (n - 1.0) * 2.0 * sb * v / t + n * 2.0 * plan->tokens_sp * h;
      if (l->tp > 1 && l->sp) st->logits_bytes += 2.0 * 2.0 * sb * h;
    }
    /* each MTP layer's own logits and loss, on the loss's stage (apart too) */
    if (i == last && m->mtp_num_layers > 0) st->logits_bytes *= 1.0 + (double)m->mtp_num_layers;
    st->workspace_bytes = ptsim_memory_workspace_bytes(plan, i);
    st->graph_bytes = ptsim_memory_graph_bytes(plan, i);
    st->host_bytes = ptsim_memory_offload_host_bytes(plan, i);
    st->other_bytes = st->input_ids_bytes + st->logits_bytes + st->workspace_bytes +
                      st->graph_bytes;
    st->unsharded_bytes = unsharded_bytes(plan, i);
    st->total_bytes = st->parameters_bytes + st->gradients_bytes + st->optimizer_bytes +
                      st->activations_bytes + st->other_bytes + st->unsharded_bytes;
    st->steady_bytes = st->parameters_bytes + st->gradients_bytes + st->optimizer_bytes +
                       st->workspace_bytes + st->graph_bytes;
    if (grad_bytes < 4.0 && !plan->lazy_masters) /* lifetimes.c optimizer_step's copies */
      st->steady_bytes += 4.0 * (trainable / plan->optimizer_shards +
                                 trainable_experts / plan->expert_optimizer_shards);
    if (st->total_bytes > out->stages[out->peak_stage].total_bytes) out->peak_stage = i;
  }

  ptsim_memory_take_peak_stage(out);
  out->closed_form = 0;
  out->capacity_bytes = job->hw.memory_bytes;
  /* A profile without a capacity never fits (usage reported as 0). */
  if (out->capacity_bytes > 0.0) {
    out->usage_fraction = out->total_bytes / out->capacity_bytes;
    out->fits = out->usage_fraction <= run->memory_threshold;
  } else {
    out->usage_fraction = 0.0;
    out->fits = 0;
  }
}

/* ---- CUDA graphs ----
 * A captured graph replays at fixed addresses: its static inputs (the
 * replay copies the real input into them), its outputs and, for the
 * backward graph, its output-gradient input and input-gradient output stay
 * allocated as long as the graph does, beside what the eager run keeps.
 * Each is one microbatch's hidden states, E = T_sp h 2 B (the attention
 * part's, with --cuda-graph-scope attn, is the same shape).  How many:
 *  - local (Megatron-Core's CudaGraphManager, megatron/core/transformer/
 *    cuda_graphs.py): one runner per layer, reused over the microbatches
 *    without pipeline parallelism; with it a runner per layer and
 *    microbatch, each keeping its four buffers: L m 4 E (L 4 E with pp 1).
 *  - transformer_engine (TECudaGraphHelper, Transformer Engine's
 *    make_graphed_callables with its pipeline order): a graph per layer and
 *    microbatch with pp > 1 (one microbatch without), whose static inputs
 *    Megatron reuses once a backward has finished (_get_sample_arguments),
 *    and TE >= 2.7 its outputs and gradient buffers likewise
 *    (_reuse_graph_input_output_buffers): 4 E per layer and in-flight
 *    microbatch, L n 4 E with n the stage's in-flight microbatches (1 with
 *    pp 1).
 *  - full_iteration: one graph of the whole step, whose static input is the
 *    batch's token ids: nothing counted.
 * Not counted: the graphs' private pool keeping the transients of the
 * captured layers apart from the rest (the capture reuses the pool in
 * schedule order, so it holds what the eager layers would). */
PTSIM_HD double ptsim_memory_graph_bytes(const PtsimPlan *plan, int64_t stage) {
  const PtsimHost *host = &plan->job.settings.host;
  double e = plan->tokens_sp * (double)plan->job.model.hidden_size * 2.0;
  double layers = (double)plan->stage_layers[stage], per_layer;
  int pp = plan->job.layout.pp > 1;
  if (host->graphs == PTSIM_GRAPH_NONE || host->graphs == PTSIM_GRAPH_ITERATION) return 0.0;
  if (host->graph_impl == PTSIM_GRAPH_IMPL_LOCAL)
    per_layer = pp ? (double)plan->num_microbatches : 1.0;
  else
    per_layer = pp ? plan->inflight_microbatches[stage] : 1.0;
  return layers * per_layer * 4.0 * e;
}

/* The job-wide figures are the peak stage's: the one home of that rule for
 * ptsim's estimate and the closed form. */
PTSIM_HD void ptsim_memory_take_peak_stage(PtsimMemoryEstimate *out) {
  const PtsimStageMemory *pk = &out->stages[out->peak_stage];
  out->parameters_bytes = pk->parameters_bytes;
  out->gradients_bytes = pk->gradients_bytes;
  out->optimizer_bytes = pk->optimizer_bytes;
  out->activations_bytes = pk->activations_bytes;
  out->other_bytes = pk->other_bytes;
  out->unsharded_bytes = pk->unsharded_bytes;
  out->total_bytes = pk->total_bytes;
}

PTSIM_HD double ptsim_memory_held_floor_bytes(const PtsimMemoryEstimate *m) {
  double most = 0.0;
  int64_t i;
  for (i = 0; i < m->num_stages; i++) {
    const PtsimStageMemory *s = &m->stages[i];
    double held = s->parameters_bytes + s->gradients_bytes + s->optimizer_bytes +
                  s->activations_bytes - s->embedding_dropout_bytes;
    if (held > most) most = held;
  }
  return most;
}

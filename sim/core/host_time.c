/* host_time.c — the host's share of the step time; see host_time.h.
 *
 * Launch counts, per microbatch, of Megatron-Core's transformer layer as
 * Transformer Engine (TE) or Megatron's local modules run it (the module
 * code of megatron/core/transformer and transformer_engine/pytorch at the
 * Megatron-LM commit the test cases name).  One count is one eager op that
 * launches a kernel (or an NCCL collective); ops that launch nothing
 * (views, allocations, autograd bookkeeping) are not counted, so the host
 * time is a lower bound of what a layer's Python costs.
 *
 * Forward, attention part: the input norm (TE fuses it into the QKV
 * LayerNormLinear, still a kernel of its own), the sequence-parallel
 * all-gather (tp > 1 with SP), the QKV GEMM (bias in its epilogue), the
 * q/k norms (--qk-layernorm, 2), RoPE on q and k (2), the attention core
 * (flash: 3 input transposes, the kernel, the output transpose: 5;
 * unfused: baddbmm, fused scale-mask-softmax, bmm and 2 permutes: 5; with
 * cp > 1 Transformer Engine's p2p ring runs per step a send/recv pair, the
 * kernel and 3 softmax-correction ops: 4 + 6 cp), the output projection,
 * its tensor-parallel reduce(-scatter) and the bias-dropout-add (1).
 * Forward, MLP: norm, all-gather, fc1, the activation (bias-GELU or
 * SwiGLU fused: 1), fc2, reduce(-scatter), bias-dropout-add.
 * Backward: each GEMM's dgrad and wgrad, a bias-gradient reduction per
 * bias, the norms' backward (2 each), the activation's, the attention
 * core's (flash: 3 kernels and 4 transposes; ring: 4 + 8 cp), the residual
 * gradient sums, the tensor-parallel collectives mirrored (and, under SP,
 * the all-gather of each column-parallel input again for its wgrad), and
 * Megatron DDP's per-parameter hook adding param.grad into main_grad
 * (every parameter without gradient-accumulation fusion; with it the
 * norms' and biases').
 * An MoE layer's MLP part instead: the router, the token dispatch and
 * combine, the experts, each counted from Megatron-LM's code for the
 * configuration (router_launches, dispatch_launches, expert_launches say
 * which function each count is from), its backward counted on its own
 * (autograd's ops of what the forward recorded: neither the no_grad
 * routing nor the counts and copies have one), and the forward's
 * host-device synchronisations (Sinkhorn's `while error > tol`, the
 * dispatchers' copies of the token counts, masked_select's output size)
 * as their own term: each costs the host a round trip (sync_us), and the
 * all-gather dispatcher's .cpu() also waits for the dispatch's gathers.
 * Not counted: Python beyond the ops (the router, dispatcher and
 * SequentialMLP modules), so an MoE layer's host time is a lower bound. */
#include "host_time.h"

static PTSIM_HD double host_max(double a, double b) { return a > b ? a : b; }

/* The run's host costs on its own host: host_overhead.ini's are an x86
 * host's, and a slower CPU (Grace: the profile's host_cpu_scale) spends
 * that much longer on each op, Transformer Engine module and graph launch
 * it issues: what the scale's source measured on both hosts.  The fitted
 * residuals (Megatron-Core's layer Python, the logged step's work) are
 * kept as fitted on x86 runs: what share of them is CPU work is not known.
 * A replayed graph's per-node cost is the GPU's, and the multi_tensor_apply
 * sizes are counts: neither scales. */
static PTSIM_HD PtsimHost host_of(const PtsimJob *job) {
  PtsimHost h = job->settings.host;
  double k = job->hw.host_cpu_scale > 0.0 ? job->hw.host_cpu_scale : 1.0;
  double f = job->hw.host_framework_scale > 0.0 ? job->hw.host_framework_scale : 1.0;
  h.costs.op_s *= k;
  h.costs.te_module_s *= k;
  h.costs.graph_launch_s *= k;
  h.costs.layer_module_s *= f;
  h.costs.step_log_s *= f;
  return h;
}

static PTSIM_HD double ceil_div(double a, double b) {
  double q = b > 0.0 ? a / b : 0.0;
  double f = (double)(int64_t)q;
  return f < q ? f + 1.0 : f;
}

/* The parameter tensors of one layer on one GPU: the four (five: SwiGLU's
 * gate is fused into fc1, still one) linear weights, their biases, the
 * two norms' weights (and biases: LayerNorm), the q/k norms. */
static PTSIM_HD double layer_tensors(const PtsimModel *m, int moe, double local_experts,
                                     double *weights) {
  double norms = m->norm == PTSIM_NORM_LAYERNORM ? 2.0 : 1.0;
  double linear = 4.0, biases = m->bias ? 4.0 : 0.0;
  if (moe) {
    /* the router, each local expert's fc1 and fc2, the shared experts' */
    linear = 2.0 + 1.0 + 2.0 * local_experts + (m->moe_shared_expert_size > 0 ? 2.0 : 0.0);
    biases = m->bias ? 2.0 + 2.0 * local_experts : 0.0;
  }
  *weights = linear;
  return linear + biases + 2.0 * norms + (m->qk_layernorm ? 2.0 * norms : 0.0);
}

static PTSIM_HD void attention_launches(const PtsimPlan *plan, double tpc, double sp,
                                        PtsimHostLaunches *out) {
  const PtsimJob *job = &plan->job;
  const PtsimModel *m = &job->model;
  double bias = m->bias ? 1.0 : 0.0, cp = (double)job->layout.cp;
  double qk = m->qk_layernorm ? 2.0 : 0.0;
  double rope = m->position_embedding == PTSIM_POSITION_ROPE ? 2.0 : 0.0;
  double core_f = cp > 1.0 ? 4.0 + 6.0 * cp : 5.0;
  double core_b = cp > 1.0 ? 4.0 + 8.0 * cp : 7.0;
  out->forward_attention = 1.0 + tpc + 1.0 + qk + rope + core_f + 1.0 + tpc + 1.0;
  out->backward_attention = (1.0 + bias) + tpc + (2.0 + bias) + core_b + rope + 2.0 * qk +
                            (2.0 + bias + sp) + tpc + 2.0 + 1.0;
}

/* The router of one MoE layer (Megatron-LM megatron/core/transformer/moe/
 * router.py TopKRouter.forward / routing, moe_utils.py), per microbatch:
 * forward launches, backward launches, host-device synchronisations.
 * `cast` is 1 where the logits are bf16 and the code casts them to fp32
 * (0 with --moe-router-dtype fp32: the GEMM writes fp32). */
static PTSIM_HD void router_launches(const PtsimJob *job, double sinkhorn_iterations, double *f,
                                     double *b, double *syncs) {
  const PtsimModel *m = &job->model;
  const PtsimSettings *run = &job->settings;
  double k = (double)m->moe_router_topk, cast = run->moe_router_fp32 ? 0.0 : 1.0;
  double tcp = job->layout.tp * job->layout.cp > 1 ? 1.0 : 0.0;
  int fused = run->moe_router_fusion, sigmoid = m->moe_router_score == PTSIM_ROUTER_SIGMOID;
  /* gating (RouterGatingLinearFunction): one GEMM; backward dgrad and
   * wgrad, with an fp32 router the weight and input cast up and both
   * gradients cast back (4) */
  *f = 1.0;
  *b = 2.0 + (run->moe_router_fp32 ? 4.0 : 0.0);
  *syncs = 0.0;
  if (m->moe_load_balancing == PTSIM_BALANCE_SINKHORN) {
    /* sinkhorn_load_balancing: logits.to(fp32) (cast), sinkhorn(): exp,
     * two ones, per trip of `while error > tol` 12 ops (d1 * cost, sum,
     * + eps, the reciprocal; the same for d0; d1_old - d1, abs, mean; the
     * comparison) and the comparison's bool(), a synchronisation; then
     * d1 * cost * d0 (2) and topk; the activation (sigmoid at k 1, else
     * softmax and type_as); the map (zeros_like, int, scatter, bool) and
     * scores = logits * map.  All under no_grad but the last three. */
    *f += cast + 1.0 + 2.0 + 12.0 * sinkhorn_iterations + 2.0 + 1.0 + (k > 1.0 ? 1.0 + cast : 1.0) +
          4.0 + 1.0;
    *syncs += sinkhorn_iterations;
    *b += 2.0 + (k > 1.0 ? cast : 0.0); /* the product's, the activation's (its cast) */
    return;
  }
  if (fused) {
    *f += 1.0; /* TE fused_topk_with_score_function */
    *b += 1.0;
  } else if (sigmoid) {
    /* topk_routing_with_score_function: sigmoid(logits.float()), topk (with
     * the expert bias: float, add, topk, gather), the k > 1 normalisation
     * (sum, + 1e-20, div), type_as; the sparse probs and map (zeros_like,
     * scatter, zeros_like, int, scatter, bool) */
    double pick = m->moe_router_expert_bias ? 4.0 : 1.0, norm = k > 1.0 ? 3.0 : 0.0;
    *f += cast + 1.0 + pick + norm + cast + 6.0;
    *b += 1.0 + cast + norm + 1.0 + 2.0 + cast; /* gather, casts, norm, sigmoid, topk's scatter */
  } else {
    /* softmax after top-k: topk, softmax (fp32), type_as, the sparse
     * probs and map (6) */
    *f += 1.0 + 1.0 + cast + 6.0;
    *b += 1.0 + cast + 1.0 + 2.0; /* gather, cast, softmax, topk's scatter (zeros, scatter) */
  }
  /* not fused, group-limited routing's top-k (group_limited_topk: the
   * groups' topk and sum, their topk, zeros_like, scatter_, the expanded
   * mask's copy, bool, ~, masked_fill, then topk: 9 more than one topk;
   * backward: masked_fill's) */
  if (!fused && m->moe_router_groups > 0 && m->moe_router_group_topk > 0) {
    *f += 9.0;
    *b += 1.0;
  }
  /* _apply_expert_bias: routing_map.sum and the in-place add */
  if (m->moe_router_expert_bias) *f += 2.0;
  if (m->moe_aux_loss_coeff > 0.0 && m->moe_load_balancing <= PTSIM_BALANCE_GLOBAL_AUX_LOSS) {
    /* compute_routing_scores_for_aux_loss: softmax (sigmoid: cast, sigmoid,
     * sum, add, div), topk, map (4); fused: 1 */
    double scores = fused ? 1.0 : (sigmoid ? cast + 4.0 : 1.0) + 1.0 + 4.0;
    /* get_tokens_per_expert_and_token_count: sum and the all-reduce over
     * tp x cp (over tp x dp x cp for the global loss); switch_load_
     * balancing_loss_func: sum, mul, sum, scale (fused: 1); the seq loss
     * divides by the batch, the global one accumulates (+=, ga_steps += 1,
     * /); attach_and_log_load_balancing_loss: the tracker's record
     * (moe_logging.py MoEMetricsTracker.record: the division by the
     * coefficient, values[layer] += loss) */
    double loss = fused ? 1.0 : 4.0;
    double extra = m->moe_load_balancing == PTSIM_BALANCE_SEQ_AUX_LOSS      ? 1.0
                   : m->moe_load_balancing == PTSIM_BALANCE_GLOBAL_AUX_LOSS ? 3.0
                                                                            : 0.0;
    double reduce = m->moe_load_balancing == PTSIM_BALANCE_GLOBAL_AUX_LOSS ? 1.0 : tcp;
    *f += scores + 1.0 + reduce + loss + extra + 2.0;
    /* MoEAuxLossAutoScaler.backward: ones_like x scale (2); the loss's
     * (mul, the tokens-per-expert product, the scale: 3; fused 1), the
     * scores' softmax (1), the seq loss's division, and the sum of the
     * logits' two gradients */
    *b += 2.0 + (fused ? 1.0 : 3.0) + 1.0 + (extra == 1.0 ? 1.0 : 0.0) + 1.0;
  }
}

/* The token dispatch and combine of one MoE layer (token_dispatcher.py,
 * moe_utils.py permute / unpermute / sort_chunks_by_idxs). */
static PTSIM_HD void dispatch_launches(const PtsimPlan *plan, double *f, double *b, double *syncs,
                                       double *waits) {
  const PtsimJob *job = &plan->job;
  const PtsimSettings *run = &job->settings;
  double g = job->layout.ep * job->layout.etp > 1 ? 1.0 : 0.0,
         fp32 = run->moe_router_fp32 ? 1.0 : 0.0;
  double ep = job->layout.ep > 1 ? 1.0 : 0.0, etp = job->layout.etp > 1 ? 1.0 : 0.0;
  double local = plan->local_experts > 1 ? 1.0 : 0.0;
  int fused = run->moe_permute_fusion;
  *syncs = 0.0;
  *waits = 0.0;
  if (run->moe_dispatcher == PTSIM_DISPATCH_ALLGATHER) {
    /* MoEAllGatherTokenDispatcher: token_dispatch all-gathers the routing
     * map, the probs and the tokens over etp x ep (3); dispatch_postprocess
     * slices the local map and probs (2 contiguous), counts the tokens per
     * expert (sum, long) and copies them to the host (.cpu(): a
     * synchronisation that waits for the gathers), permutes (permute:
     * T.contiguous, argsort, %, index_select; fused: 1), and selects the
     * local probs (2 transposes, masked_select: its output size is read
     * back, a synchronisation) */
    *f = 3.0 * g + 5.0 + (fused ? 1.0 : 4.0) + 3.0;
    *syncs = 2.0;
    *waits = g;
    /* combine: unpermute (zeros, scatter_add_; fused 1), the reduce-scatter
     * in the probs' dtype (casts there and back with an fp32 router) */
    *f += (fused ? 1.0 : 2.0) + g * (1.0 + 2.0 * fp32);
    /* backward: the probs' and tokens' gathers reduce-scatter, the local
     * slices' (zeros, copy), masked_select's (zeros, masked_scatter), the
     * permutation's (zeros, index_add; fused 1), unpermute's (gather;
     * fused 1), the combine's all-gather and casts */
    *b = 2.0 * g + 2.0 + 2.0 + (fused ? 1.0 : 2.0) + 1.0 + g * (1.0 + 2.0 * fp32);
    return;
  }
  /* MoEAlltoAllTokenDispatcher (and, counted alike, the flex one):
   * preprocess counts the tokens (sum, long) and, across ranks, the splits
   * (sum, all-gather over etp x ep, contiguous, 3 sums: 6);
   * _maybe_dtoh_and_synchronize copies the splits and counts to the host on
   * its side stream (4 copies, an event) and waits for them (1) */
  *f = 2.0 + 6.0 * g + 5.0;
  *syncs = 1.0;
  /* permute with probs (the map's and probs' transposes, argsort, %,
   * indexing, index_select: 6; fused 1); the all-to-all of tokens and
   * probs (ep); their all-gather over etp; sort_chunks_by_idxs for several
   * local experts (split and cat of tokens and probs: 2; fused 1) */
  *f += (fused ? 1.0 : 6.0) + 2.0 * ep + 2.0 * etp + local * (fused ? 1.0 : 2.0);
  /* combine: the chunks back (1), reduce-scatter over etp, all-to-all,
   * unpermute (zeros, scatter_add_; fused 1) */
  *f += local + etp + ep + (fused ? 1.0 : 2.0);
  /* backward: each collective mirrored (2 ep + 2 etp + etp + ep), the
   * chunk sorts' (split/cat: 2 + 1; fused 2), permute's (tokens' and
   * probs' index backward: 4; fused 1), unpermute's (1) */
  *b = 3.0 * ep + 3.0 * etp + local * (fused ? 2.0 : 3.0) + (fused ? 1.0 : 4.0) + 1.0;
}

/* The routed experts (experts.py SequentialMLP / TEGroupedMLP, mlp.py
 * MLP.forward with the probs as per_token_scale). */
static PTSIM_HD void expert_launches(const PtsimPlan *plan, double *f, double *b) {
  const PtsimJob *job = &plan->job;
  const PtsimSettings *run = &job->settings;
  double fp32 = run->moe_router_fp32 ? 1.0 : 0.0;
  int swiglu = job->model.activation == PTSIM_ACTIVATION_SWIGLU;
  /* the activation weighted by the probs: SwiGLU's fused weighted kernel
   * (1), else the activation (GELU 1; SwiGLU unfused: act, add, mul 3),
   * the product by the probs and its cast back from fp32 probs */
  double act_f = swiglu && !run->swiglu_unfused ? 1.0 : (swiglu ? 3.0 : 1.0) + 1.0 + fp32;
  double act_b = swiglu && !run->swiglu_unfused ? 1.0 : (swiglu ? 3.0 : 1.0) + 3.0 + fp32;
  double n = (double)plan->local_experts;
  if (run->moe_grouped_gemm) {
    /* TEGroupedMLP: fc1 and fc2 GroupedLinear (1 each; dgrad and wgrad
     * in backward), the activation between */
    *f = 2.0 + act_f;
    *b = 4.0 + act_b;
    return;
  }
  /* SequentialMLP: torch.split of tokens and probs (views; the counts'
   * .tolist() is of the host copy), each local expert's MLP, torch.cat;
   * backward: each expert's, the cat's slices (views) and the splits'
   * gradients concatenated (2) */
  *f = n * (2.0 + act_f) + (n > 1.0 ? 1.0 : 0.0);
  *b = n * (4.0 + act_b) + (n > 1.0 ? 2.0 : 0.0);
}

static PTSIM_HD void mlp_launches(const PtsimPlan *plan, int moe, double tpc, double sp,
                                  PtsimHostLaunches *out) {
  const PtsimJob *job = &plan->job;
  const PtsimModel *m = &job->model;
  double bias = m->bias ? 1.0 : 0.0;
  double f = 1.0 + tpc + 1.0 + 1.0 + 1.0 + tpc + 1.0;
  out->forward_syncs = 0.0;
  out->dispatch_waits = 0.0;
  if (moe) {
    double rf, rb, rs, df, db, ds, dw, ef, eb;
    double shared = m->moe_shared_expert_size > 0 ? 4.0 : 0.0;
    router_launches(job, job->settings.host.costs.sinkhorn_iterations, &rf, &rb, &rs);
    dispatch_launches(plan, &df, &db, &ds, &dw);
    expert_launches(plan, &ef, &eb);
    /* the pre-MLP norm and the bias-dropout-add around them (1 each; 2 in
     * backward: the norm's and the residual sum), shared experts (fc1,
     * activation, fc2, the sum: 4, twice that in backward) */
    out->forward_mlp = 1.0 + rf + df + ef + shared + 1.0;
    out->backward_mlp = 2.0 + rb + db + eb + 2.0 * shared + 1.0;
    out->forward_syncs = rs + ds;
    out->dispatch_waits = dw;
    return;
  }
  /* squared ReLU with biases: Megatron adds fc1's bias in a kernel of its
   * own before the activation (ptsim_plan_activation_elements); its
   * gradient is the bias reduction already counted */
  out->forward_mlp = f + (m->activation == PTSIM_ACTIVATION_RELU2 ? bias : 0.0);
  out->backward_mlp = (1.0 + bias) + tpc + (2.0 + bias) + 1.0 + (2.0 + bias + sp) + tpc + 2.0 + 1.0;
}

/* --test-mode with --qk-layernorm: every attention forward runs
 * Attention.run_realtime_tests (megatron/core/transformer/attention.py at
 * d98e8a64dd): the four q/k norm parameters stacked (1), all-gathered over
 * the data-parallel group into a list (the collective and a copy out per
 * rank) and over the tensor-parallel group alike, and each gathered copy
 * compared with the local one, per parameter `torch.all(src == tgt)` (2)
 * under an assert, whose bool() reads the result back: a synchronisation
 * each. */
static PTSIM_HD void test_mode_checks(const PtsimJob *job, PtsimHostLaunches *out) {
  double ranks = (double)job->layout.dp + (double)job->layout.tp;
  if (!job->settings.host.test_mode || !job->model.qk_layernorm) return;
  out->forward_attention += 1.0 + 2.0 + ranks + 4.0 * 2.0 * ranks;
  out->forward_syncs += 4.0 * ranks;
}

PTSIM_HD void ptsim_host_layer_launches(const PtsimPlan *plan, int moe, PtsimHostLaunches *out) {
  const PtsimJob *job = &plan->job;
  const PtsimSettings *run = &job->settings;
  double tpc = job->layout.tp > 1 ? 1.0 : 0.0;
  double sp = job->layout.tp > 1 && job->layout.sp > 0 ? 1.0 : 0.0;
  double weights = 0.0;
  double tensors = layer_tensors(&job->model, moe, (double)plan->local_experts, &weights);
  double hooks = run->grad_accumulation_fusion ? tensors - weights : tensors;
  attention_launches(plan, tpc, sp, out);
  mlp_launches(plan, moe, tpc, sp, out);
  test_mode_checks(job, out);
  /* LoRA (workload_lora.c): the frozen base's four wgrad GEMMs are not
   * launched and its weights have no hooks; each targeted linear adds its
   * adapter's A and B (two TE modules): forward A, B and the add, backward
   * the dgrad and wgrad of each, and A's and B's hooks */
  if (!moe && run->lora_rank > 0) {
    int k = run->lora_targets;
    double attn = (double)ptsim_lora_target_count(k & (PTSIM_LORA_QKV | PTSIM_LORA_PROJ));
    double mlp = (double)ptsim_lora_target_count(k & (PTSIM_LORA_FC1 | PTSIM_LORA_FC2));
    hooks = run->grad_accumulation_fusion ? 0.0 : 2.0 * (attn + mlp);
    out->forward_attention += 3.0 * attn;
    out->forward_mlp += 3.0 * mlp;
    out->backward_attention += 4.0 * attn - 2.0;
    out->backward_mlp += 4.0 * mlp - 2.0;
  }
  /* DDP's main_grad hooks, split as the parameters are (half each side) */
  out->backward_attention += 0.5 * hooks;
  out->backward_mlp += 0.5 * hooks;
  /* LayerNormLinear (QKV), DotProductAttention, Linear (proj),
   * LayerNormLinear (fc1), Linear (fc2); an MoE layer's experts one
   * GroupedLinear pair or two per local expert */
  out->te_modules = 0.0;
  if (run->transformer_engine) {
    out->te_modules = 3.0;
    if (!moe)
      out->te_modules += 2.0 + (run->lora_rank > 0
                                    ? 2.0 * (double)ptsim_lora_target_count(run->lora_targets)
                                    : 0.0);
    else
      out->te_modules += run->moe_grouped_gemm ? 2.0 : 2.0 * (double)plan->local_experts;
  }
}

PTSIM_HD double ptsim_host_layer_pass_s(const PtsimHost *host, const PtsimHostLaunches *n,
                                        int backward, int moe) {
  const PtsimHostCosts *c = &host->costs;
  double attn = backward ? n->backward_attention : n->forward_attention;
  double mlp = backward ? n->backward_mlp : n->forward_mlp;
  /* the TE modules: QKV, attention core and proj on the attention side, the
   * rest (fc1 and fc2, or the experts') on the MLP side */
  double attn_modules = n->te_modules > 0.0 ? 3.0 : 0.0;
  /* Megatron-Core's own Python of the pass, half on each side */
  double layer_py = host->megatron ? 0.5 * c->layer_module_s : 0.0;
  double eager_attn = attn * c->op_s + attn_modules * c->te_module_s + layer_py;
  double eager_mlp = mlp * c->op_s + (n->te_modules - attn_modules) * c->te_module_s + layer_py;
  int attn_graphed = host->graphs != PTSIM_GRAPH_NONE;
  int mlp_graphed = host->graphs == PTSIM_GRAPH_ITERATION ||
                    (attn_graphed && (moe ? host->graph_moe : host->graphs == PTSIM_GRAPH_LAYER));
  double launch = host->graphs == PTSIM_GRAPH_ITERATION ? 0.0 : c->graph_launch_s;
  double t = 0.0;
  if (attn_graphed && mlp_graphed) return launch + (attn + mlp) * c->graph_node_s;
  /* each synchronisation of an eager forward: the host waits for what it
   * issued last, the GPU then for the host's next launch */
  if (!backward) eager_mlp += n->forward_syncs * c->sync_s;
  t += attn_graphed ? launch + attn * c->graph_node_s : eager_attn;
  t += mlp_graphed ? launch + mlp * c->graph_node_s : eager_mlp;
  return t;
}

/* multi_tensor_apply launches over `tensors` tensors of `elements` in all,
 * `per_launch` tensors at most: a launch ends when its tensor list or its
 * chunk list is full (apex csrc/multi_tensor_apply.cuh). */
static PTSIM_HD double mta_launches(const PtsimHostCosts *c, double tensors, double elements,
                                    double per_launch) {
  double chunks = ceil_div(elements, c->mta_chunk_elements) + tensors;
  if (tensors <= 0.0) return 0.0;
  return host_max(ceil_div(tensors, per_launch), ceil_div(chunks, c->mta_blocks));
}

PTSIM_HD double ptsim_host_optimizer_s(const PtsimPlan *plan, int64_t stage) {
  const PtsimJob *job = &plan->job;
  PtsimHost own = host_of(job);
  const PtsimHost *host = &own;
  const PtsimHostCosts *c = &host->costs;
  const PtsimModel *m = &job->model;
  double weights = 0.0, tensors, local, shards, elements, ops;
  int64_t moe = plan->stage_moe_layers[stage];
  int64_t dense = plan->stage_layers[stage] - moe;
  if (c->op_s <= 0.0) return 0.0;
  tensors = (double)dense * layer_tensors(m, 0, (double)plan->local_experts, &weights) +
            (double)moe * layer_tensors(m, 1, (double)plan->local_experts, &weights);
  if (stage == plan->vstages.first_stage)
    tensors += m->position_embedding == PTSIM_POSITION_LEARNED ? 2.0 : 1.0;
  if (stage == plan->vstages.last_stage)
    tensors += (m->norm == PTSIM_NORM_LAYERNORM ? 2.0 : 1.0) + (m->tied_embeddings ? 0.0 : 1.0);
  /* LoRA: the optimizer's tensors are the adapters' A and B of each
   * targeted linear (plan.c "LoRA") */
  if (job->settings.lora_rank > 0) {
    int k = job->settings.lora_targets;
    tensors = 2.0 * (double)plan->stage_layers[stage] * (double)ptsim_lora_target_count(k);
  }
  /* the distributed optimizer's rank loops over the tensors its shard
   * touches: about its share, plus the one cut at each end */
  shards = plan->optimizer_shards > 1.0 ? plan->optimizer_shards : 1.0;
  local = shards > 1.0 ? ceil_div(tensors, shards) + 1.0 : tensors;
  elements = plan->stage_trainable_parameters[stage] / shards;
  /* the gradient into the optimizer's fp32 one: a cast per tensor unless
   * the main gradients are fp32 already (.float() then launches nothing);
   * the parameters back: the distributed optimizer copies each shard
   * (copy_), the other one copies through multi_tensor_scale */
  ops = job->settings.fp32_grad_accumulation ? 0.0 : local;
  ops += job->layout.distributed_optimizer ? local
                                           : mta_launches(c, local, elements, c->mta_tensors_copy);
  /* the gradient norm (l2norm launches, all-reduce, .item()) and the
   * clip's scale */
  ops += 2.0 * mta_launches(c, local, elements, c->mta_tensors_norm) + 2.0;
  /* Adam */
  ops += mta_launches(c, local, elements, c->mta_tensors_adam);
  /* --log-num-zeros-in-grad: count_nonzero and a subtraction per gradient,
   * an all-reduce and .item() */
  if (host->log_num_zeros) ops += 2.0 * local + 2.0;
  /* --log-params-norm: l2norm over the parameters, all-reduce, .item() */
  if (host->log_params_norm) ops += mta_launches(c, local, elements, c->mta_tensors_norm) + 2.0;
  return ops * c->op_s;
}

/* The pass of `work` takes at least what its host issues. */
static PTSIM_HD void raise_pass(PtsimWork *work, double host_forward, double host_backward) {
  double gpu_backward = work->backward_input_s + work->backward_weight_s;
  /* recomputation re-issues the forward inside the backward */
  if (work->recompute_s > 0.0 && work->forward_s > 0.0)
    host_backward += host_forward * host_max(0.0, work->recompute_s / work->forward_s);
  if (host_forward > work->forward_s) work->forward_s = host_forward;
  if (host_backward > gpu_backward) work->backward_input_s += host_backward - gpu_backward;
}

/* A hybrid model's Mamba layer (workload_mamba.c; megatron/core/ssm/
 * mamba_mixer.py _ssm_training, and mamba_ssm's ops/triton/ssd_combined.py
 * MambaSplitConv1dScanCombinedFn that it calls), per microbatch.
 * Forward: the pre-norm (TE's LayerNormColumnParallelLinear: a kernel of
 * its own), the SP all-gather, in_proj, [z x B C dt] made contiguous in
 * (b, l) order, A = -exp(A_log.float()) and dt_bias.float() (4), with
 * cp > 1 MambaContextParallel's head split (mamba_context_parallel.py, and
 * tensor_parallel/mappings.py all_to_all_sp2hp / hp2sp): z, x and dt each
 * made contiguous, concatenated per rank and sent (3 each), B and C
 * repeated per group, concatenated and sent (3 each), the five joined and
 * the load balancing undone (2), and after the scan the balancing redone,
 * y sent back and joined (3): 20, the combined function's causal conv and the SSD's chunk cumsum,
 * chunk state, state passing, C B^T bmm and chunk scan (6), y made
 * contiguous in (l, b) order, the RMSNorm, out_proj, its TP
 * reduce(-scatter), the bias-dropout-add.  Backward: each GEMM's dgrad
 * and wgrad, the pre-norm's and the RMSNorm's backward (2 each), the two
 * copies' and the four casts' backward, the combined function's: the conv
 * recomputed, _mamba_chunk_scan_combined_bwd (the chunk cumsum, states,
 * passing and C B^T recomputed: 4; dz, dstates, the state passing's
 * gradient, dx, dB, the states cast, dC, dCB and its cast, two bmm
 * gradients, ddA's update, reverse cumsum (3), stable ddA and its two sums,
 * the cumsum's gradient: 21) and the conv's backward: 27, the TP
 * collectives mirrored (under SP in_proj's input gathered again for
 * its wgrad; with cp > 1 the six all-to-alls' gradients, each made
 * contiguous first, and the two repeats' sums: 14), the residual gradient
 * sum, and DDP's main_grad hooks: the
 * pre-norm, conv weight and bias, A_log, D, dt_bias and the norm (7), and
 * the two GEMM weights without gradient-accumulation fusion.  Two TE
 * modules (in_proj, out_proj). */
static PTSIM_HD void mamba_launches(const PtsimPlan *plan, double *forward, double *backward) {
  const PtsimJob *job = &plan->job;
  double tpc = job->layout.tp > 1 ? 1.0 : 0.0;
  double sp = job->layout.tp > 1 && job->layout.sp > 0 ? 1.0 : 0.0;
  double cp = job->layout.cp > 1 ? 1.0 : 0.0;
  double hooks = 7.0 + (job->settings.grad_accumulation_fusion ? 0.0 : 2.0);
  *forward = 1.0 + sp + 1.0 + 1.0 + 4.0 + 20.0 * cp + 6.0 + 1.0 + 1.0 + 1.0 + tpc + 1.0;
  *backward = 2.0 + 2.0 + sp + tpc + 14.0 * cp + 2.0 + 4.0 + 27.0 + 2.0 + 2.0 + tpc + 1.0 + hooks;
}

/* Host seconds of one pass of a hybrid sub-layer of `launches` kernels and
 * `te` TE modules: eager, half a transformer layer's Megatron-Core Python
 * (one block of the two), the forward's synchronisations; or replayed from
 * a CUDA graph (a layer or the whole iteration captured). */
static PTSIM_HD double sublayer_pass_s(const PtsimHost *host, double launches, double te,
                                       double syncs) {
  const PtsimHostCosts *c = &host->costs;
  if (host->graphs == PTSIM_GRAPH_ITERATION) return launches * c->graph_node_s;
  if (host->graphs == PTSIM_GRAPH_LAYER) return c->graph_launch_s + launches * c->graph_node_s;
  return launches * c->op_s + te * c->te_module_s +
         (host->megatron ? 0.5 * c->layer_module_s : 0.0) + syncs * c->sync_s;
}

/* A hybrid model's sub-layers: the Mamba mixer's launches; attention alone
 * the attention side of a transformer layer's, the MLP and the MoE block
 * alone its MLP side (ptsim_host_layer_launches). */
static PTSIM_HD void raise_hybrid(const PtsimPlan *plan, const PtsimHost *host, PtsimWorkload *w) {
  PtsimHostLaunches n;
  double f, b, te = plan->job.settings.transformer_engine ? 1.0 : 0.0;
  mamba_launches(plan, &f, &b);
  raise_pass(&w->mamba_layer, sublayer_pass_s(host, f, 2.0 * te, 0.0),
             sublayer_pass_s(host, b, 2.0 * te, 0.0));
  ptsim_host_layer_launches(plan, 0, &n);
  raise_pass(&w->attention_layer, sublayer_pass_s(host, n.forward_attention, 3.0 * te, 0.0),
             sublayer_pass_s(host, n.backward_attention, 3.0 * te, 0.0));
  raise_pass(&w->mlp_layer, sublayer_pass_s(host, n.forward_mlp, n.te_modules - 3.0 * te, 0.0),
             sublayer_pass_s(host, n.backward_mlp, n.te_modules - 3.0 * te, 0.0));
  if (plan->job.model.num_experts <= 0) return;
  ptsim_host_layer_launches(plan, 1, &n);
  raise_pass(&w->moe_block_layer,
             sublayer_pass_s(host, n.forward_mlp, n.te_modules - 3.0 * te, n.forward_syncs),
             sublayer_pass_s(host, n.backward_mlp, n.te_modules - 3.0 * te, 0.0));
}

PTSIM_HD void ptsim_host_time_apply(const PtsimPlan *plan, PtsimWorkload *w) {
  const PtsimJob *job = &plan->job;
  PtsimHost own = host_of(job);
  const PtsimHost *host = &own;
  const PtsimHostCosts *c = &host->costs;
  PtsimHostLaunches n;
  double tpc = job->layout.tp > 1 ? 1.0 : 0.0;
  int64_t s;
  if (c->op_s <= 0.0) return;
  /* PyTorch's own modules (torchtitan's loop) run neither Megatron-Core's
   * layers nor its training_log */
  if (job->settings.torch_layers != PTSIM_TORCH_LAYERS_NONE) own.megatron = 0;
  ptsim_host_layer_launches(plan, 0, &n);
  raise_pass(&w->layer, ptsim_host_layer_pass_s(host, &n, 0, 0),
             ptsim_host_layer_pass_s(host, &n, 1, 0));
  if (job->model.num_experts > 0) {
    double forward, wait = 0.0;
    ptsim_host_layer_launches(plan, 1, &n);
    forward = ptsim_host_layer_pass_s(host, &n, 0, 1);
    /* the all-gather dispatcher's .cpu() waits for the dispatch's gathers:
     * half the layer's forward expert-parallel traffic (the gather and the
     * combine's reduce-scatter move the same tokens), less what the host
     * spends on the 5 ops it issues between them and the copy */
    if (n.dispatch_waits > 0.0 && !(host->graphs == PTSIM_GRAPH_ITERATION || host->graph_moe))
      wait = host_max(0.0, 0.5 * w->moe_layer.forward_comm_s[PTSIM_COMM_EP] - 5.0 * c->op_s);
    raise_pass(&w->moe_layer, forward + n.dispatch_waits * wait,
               ptsim_host_layer_pass_s(host, &n, 1, 1));
  }
  if (w->hybrid) raise_hybrid(plan, host, w);
  /* Once per microbatch on the first stage: the batch's five tensors copied
   * in (and broadcast over TP), the word and position lookups, their sum;
   * backward: the embedding gradient (sort-based: 3) and its hook.  On the
   * last: the final norm, the output GEMM, the vocabulary-parallel cross
   * entropy (max, all-reduce, subtract, exp, sum, all-reduce, log, gather:
   * 8) and the loss function's masking, sum and data-parallel report (4);
   * backward: cross entropy's (4), the GEMM's dgrad and wgrad, the norm's,
   * their hooks (3).  Not under a layer's CUDA graph. */
  raise_pass(&w->embedding, (5.0 + 5.0 * tpc + 3.0) * c->op_s, 4.0 * c->op_s);
  raise_pass(&w->head, (1.0 + 1.0 + 8.0 + 4.0) * c->op_s, (4.0 + 2.0 + 2.0 + 3.0) * c->op_s);
  for (s = 0; s < plan->num_stages && s < PTSIM_MAX_STAGES; s++)
    w->optimizer_s[s] += ptsim_host_optimizer_s(plan, s) + ptsim_host_step_log_s(host);
}

PTSIM_HD double ptsim_host_step_log_s(const PtsimHost *host) {
  /* training_log runs on every rank every step; its costly part (the
   * timers' gather, the log line, the memory report) only when the step
   * is logged, and the next step's collectives make every stage wait for
   * the slowest rank: each step carries 1 / log_interval of it */
  if (!host->megatron || host->log_interval <= 0) return 0.0;
  return host->costs.step_log_s / (double)host->log_interval;
}

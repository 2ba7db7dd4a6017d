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
 * An MoE layer's MLP part instead: the router GEMM, score and top-k (3),
 * the load-balancing loss (6 when its coefficient is set), the token
 * permutation (4; fused: 1), the all-to-all of counts and of tokens (2)
 * with the sort of the received chunks (2), the experts (one grouped
 * GEMM pair and the activation: 3; else 3 per local expert), the way back
 * (all-to-all, sort, unpermute: 5; fused: 3), shared experts (4); its
 * backward launches twice as many. */
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

static PTSIM_HD void mlp_launches(const PtsimPlan *plan, int moe, double tpc, double sp,
                                  PtsimHostLaunches *out) {
  const PtsimJob *job = &plan->job;
  const PtsimModel *m = &job->model;
  const PtsimSettings *run = &job->settings;
  double bias = m->bias ? 1.0 : 0.0;
  double f = 1.0 + tpc + 1.0 + 1.0 + 1.0 + tpc + 1.0;
  if (moe) {
    double experts = run->moe_grouped_gemm ? 3.0 : 3.0 * (double)plan->local_experts;
    double aux = m->moe_aux_loss_coeff > 0.0 ? 6.0 : 0.0;
    double permute = run->moe_permute_fusion ? 1.0 : 4.0;
    double back = run->moe_permute_fusion ? 3.0 : 5.0;
    double shared = m->moe_shared_expert_size > 0 ? 4.0 : 0.0;
    f = 1.0 + 3.0 + aux + permute + 2.0 + 2.0 + experts + back + shared + 1.0;
    out->forward_mlp = f;
    out->backward_mlp = 2.0 * f;
    return;
  }
  out->forward_mlp = f;
  out->backward_mlp = (1.0 + bias) + tpc + (2.0 + bias) + 1.0 + (2.0 + bias + sp) + tpc + 2.0 + 1.0;
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
    ptsim_host_layer_launches(plan, 1, &n);
    raise_pass(&w->moe_layer, ptsim_host_layer_pass_s(host, &n, 0, 1),
               ptsim_host_layer_pass_s(host, &n, 1, 1));
  }
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

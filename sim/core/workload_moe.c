/* workload_moe.c — the parts of a layer that mixture-of-experts and
 * DeepSeek-family models add to workload.c's: the MoE block (router,
 * token dispatch, the local experts' grouped GEMMs, combine, shared
 * experts), multi-latent attention, multi-token prediction, and
 * Megatron-LM's current FLOP formula that counts them.  The contract is
 * workload.h; the shared builders are workload_int.h.
 *
 * Shapes of an MoE block, per GPU and microbatch (k top-k, E experts, f
 * expert width, fs shared width, h hidden; etp, ep; E_loc = E/ep):
 *   Tm = T / tp   tokens entering the router (an MoE layer needs SP with tp > 1)
 *   N  = lambda Tm k etp   rows at this GPU's expert GEMMs, lambda the busiest
 *                          EP rank's load over the balanced share (plan.h)
 * Token dispatch, by Megatron-LM's dispatcher (notes: moe.md section 5,
 * megatron/core/transformer/moe/token_dispatcher.py):
 *   alltoall   permute Tm k rows by destination; all-to-all over ep of
 *              lambda Tm k h bytes (each rank's send buffer; the busiest
 *              receiver decides) and of the k fp32 probabilities; with
 *              etp > 1 an all-gather over etp (N rows); sort by local expert.
 *              Combine mirrors it (the etp reduce-scatter in the
 *              probabilities' dtype), then unpermute sums k rows per token.
 *   allgather  all-gather over etp x ep of every token's hidden state,
 *              probabilities and routing map; the local experts' rows are
 *              picked out; combine is a reduce-scatter over etp x ep.
 *   flex       DeepEP/HybridEP: one copy per distinct destination rank of
 *              the etp x ep domain (uniform routing: etp ep (1 - C(E-E_loc,
 *              k)/C(E,k)) of them), permute fused into the kernel; inside
 *              one node an all-to-all over etp x ep; across nodes a token
 *              crosses the fabric once per remote destination node (uniform
 *              routing, or node-limited by the router's groups) and is
 *              forwarded over NVLink (ptsim_cost_forwarded_all_to_all_s).
 *              The SMs the kernels take from overlapped compute are not
 *              modelled.
 * Backward mirrors every collective (the combine's gradient is dispatched,
 * the dispatch's combined).  All of it is the `ep` communication kind,
 * blocking the compute stream, except what Megatron hides:
 *   --moe-shared-expert-overlap   the shared experts' fc1 (with its TP
 *              all-gather) runs on a side stream beside the dispatch, fc2
 *              beside the combine: only the all-to-all's excess is exposed;
 *   --overlap-moe-expert-parallel-comm   combined 1F1B: the steady
 *              state's forward of one microbatch and backward of another
 *              run layer by layer on two streams (ptsim_work_moe_pair_s
 *              below); the engine takes what a pair hides from the pair's
 *              backward (engine.c), the warm-up and cool-down run alone.
 * Permute and unpermute are memory-bound copies; unfused (without
 * --moe-permute-fusion) they take twice the traffic (index computation and
 * scatter as separate passes: guess).  The router GEMM runs in bf16 (under
 * FP8 too: a plain linear outside Transformer Engine, as the shared
 * experts' gate), or in fp32 on the CUDA cores with --moe-router-dtype
 * fp32; its softmax/top-k and the auxiliary loss are memory-bound passes
 * over the Tm x E scores (8 bytes per score fused, 20 unfused: guess).
 * The experts (TE GroupedLinear), the shared experts, MLA's projections
 * and MTP's run at the job's precision, with workload.c's FP8 casts
 * (every input cast, but MLA's up projections' after their fused latent
 * norms).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "plan.h"
#include "workload.h"
#include "workload_int.h"

static PTSIM_HD double moe_max(double a, double b) { return a > b ? a : b; }

static PTSIM_HD int64_t moe_ceil(double x) {
  int64_t i = (int64_t)x;
  return (double)i < x ? i + 1 : i;
}

/* ---- the local experts ---- */

/* A GEMM in fp32 on the CUDA cores (the router under --moe-router-dtype
 * fp32: Megatron casts its input to fp32), at the profile's best GEMM
 * efficiency. */
static PTSIM_HD void moe_fp32_gemm(const PtsimWorkCtx *x, PtsimWork *w, int64_t m, int64_t n,
                                   int64_t k) {
  const PtsimHardware *hw = &x->job->hw;
  double f = 2.0 * (double)m * (double)n * (double)k;
  double rate = hw->peak_fp32_flops * hw->gemm_efficiency_max;
  double t = (rate > 0.0 ? f / rate : 0.0) + hw->kernel_launch_s;
  w->forward_s += t;
  w->backward_input_s += t;
  w->backward_weight_s += t;
  w->flops += 3.0 * f;
}

/* ---- the MoE block ---- */

/* The dispatcher's communication of one MoE block, forward; backward
 * mirrors it (dispatch_s + combine_s again). */
typedef struct {
  double dispatch_s, combine_s;
} Exchange;

/* The probability that none of a token's k experts, drawn uniformly
 * without replacement from E, lies in a given set of `part` of them:
 * C(E - part, k) / C(E, k). */
static PTSIM_HD double moe_miss(double e, double part, int64_t k) {
  double miss = 1.0;
  int64_t i;
  for (i = 0; i < k; i++) miss *= (e - part - (double)i) / (e - (double)i);
  return miss < 0.0 ? 0.0 : miss;
}

/* Remote nodes one token goes to in flex's etp x ep domain over N nodes
 * (the experts spread evenly over them): N (1 - C(E - E/N, k) / C(E, k))
 * distinct nodes under uniform routing, at most those of its groups when
 * group-limited routing's groups fall whole on nodes (node-limited
 * routing, DeepSeek-V3: groups = nodes); the own node is one of them with
 * probability 1/N of the count, by symmetry. */
static PTSIM_HD double moe_flex_remote_nodes(const PtsimWorkCtx *x, int64_t nodes) {
  const PtsimModel *m = &x->job->model;
  double n = (double)nodes, e = (double)m->num_experts;
  double hit = n * (1.0 - moe_miss(e, e / n, m->moe_router_topk));
  int64_t groups = m->moe_router_groups, pick = m->moe_router_group_topk;
  if (groups > 0 && pick > 0 && groups % nodes == 0) {
    double per_node = (double)(groups / nodes);
    double by_groups = n * (1.0 - moe_miss((double)groups, per_node, pick));
    if (by_groups < hit) hit = by_groups;
  }
  return hit * (n - 1.0) / n;
}

/* Distinct destination ranks of one token in flex's etp x ep domain under
 * uniform routing: etp ep (1 - C(E - E_loc, k) / C(E, k)). */
static PTSIM_HD double moe_flex_destinations(const PtsimWorkCtx *x) {
  const PtsimModel *m = &x->job->model;
  double miss = moe_miss((double)m->num_experts, (double)x->plan->local_experts,
                         m->moe_router_topk);
  return (double)x->job->layout.etp * (double)x->job->layout.ep * (1.0 - miss);
}

static PTSIM_HD Exchange moe_exchange(const PtsimWorkCtx *x, double tm, double rows) {
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  const PtsimModel *m = &x->job->model;
  const PtsimHardware *hw = &x->job->hw;
  const PtsimGroup *ep = &x->plan->groups[PTSIM_GROUP_EP];
  const PtsimGroup *etp = &x->plan->groups[PTSIM_GROUP_ETP];
  const PtsimGroup *etp_ep = &x->plan->groups[PTSIM_GROUP_ETP_EP];
  double h = (double)m->hidden_size, k = (double)m->moe_router_topk, e = (double)m->num_experts;
  double probs = run->moe_router_fp32 ? 4.0 : ELEM; /* the dtype the etp/etp-ep reduction runs in */
  double span = (double)(l->etp * l->ep), tokens;
  Exchange out;
  switch (run->moe_dispatcher) {
  case PTSIM_DISPATCH_ALLGATHER:
    tokens = tm * span;
    out.dispatch_s = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_GATHER,
                                             tokens * (h * ELEM + e * 5.0), etp_ep);
    out.combine_s = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_REDUCE_SCATTER,
                                            tokens * h * probs, etp_ep);
    break;
  case PTSIM_DISPATCH_FLEX:
    tokens = x->expert_load * tm * h * ELEM; /* one copy of this GPU's tokens */
    out.dispatch_s = ptsim_cost_forwarded_all_to_all_s(
        hw, x->params, etp_ep, tokens * moe_flex_destinations(x),
        etp_ep->nodes > 1 ? tokens * moe_flex_remote_nodes(x, etp_ep->nodes) : 0.0);
    out.combine_s = out.dispatch_s;
    break;
  case PTSIM_DISPATCH_ALLTOALL:
  default:
    out.dispatch_s =
        ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_TO_ALL,
                                x->expert_load * tm * k * h * ELEM, ep) +
        ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_TO_ALL, tm * k * 4.0, ep) +
        ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_GATHER, rows * h * ELEM, etp);
    out.combine_s = ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_ALL_TO_ALL,
                                            x->expert_load * tm * k * h * ELEM, ep) +
                    ptsim_cost_collective_s(hw, x->params, PTSIM_COLL_REDUCE_SCATTER,
                                            rows * h * probs, etp);
    break;
  }
  return out;
}

/* The permute before the dispatch and the unpermute after the combine
 * (memory-bound copies), into w. */
static PTSIM_HD void moe_permutes(const PtsimWorkCtx *x, PtsimWork *w, double tm, double rows) {
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  double h = (double)x->job->model.hidden_size, k = (double)x->job->model.moe_router_topk;
  double passes = run->moe_permute_fusion ? 1.0 : 2.0;
  double probs = run->moe_router_fp32 ? 4.0 : ELEM;
  double sort = x->plan->local_experts > 1 ? 2.0 * 2.0 * rows * h * ELEM : 0.0;
  switch (run->moe_dispatcher) {
  case PTSIM_DISPATCH_ALLGATHER: /* pick the local rows, scatter them back */
    ptsim_work_elementwise(x, w, passes * 2.0 * rows * h * ELEM);
    ptsim_work_elementwise(x, w,
                           passes * (rows * h * ELEM + tm * (double)(l->etp * l->ep) * h * probs));
    break;
  case PTSIM_DISPATCH_FLEX: /* fused into the dispatch: the writes of the rows */
    ptsim_work_elementwise(x, w, 2.0 * rows * h * ELEM);
    break;
  case PTSIM_DISPATCH_ALLTOALL:
  default:
    ptsim_work_elementwise(x, w, passes * 2.0 * tm * k * h * ELEM);             /* permute */
    ptsim_work_elementwise(x, w, passes * sort);                                /* sort + unsort */
    ptsim_work_elementwise(x, w, passes * (tm * k * h * ELEM + tm * h * ELEM)); /* unpermute */
    break;
  }
}

/* The local experts (TE GroupedLinear): fc1, the activation (the
 * probabilities applied in it; also into *act), fc2, into *w. */
static PTSIM_HD void moe_experts(const PtsimWorkCtx *x, PtsimWork *w, PtsimWork *act) {
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  int64_t h = m->hidden_size, f = m->moe_ffn_hidden_size;
  int64_t local = x->plan->local_experts > 0 ? x->plan->local_experts : 1;
  int64_t fc1 = (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2 : 1) * f / l->etp;
  double rows = x->expert_load * x->tokens_sp * (double)m->moe_router_topk * (double)l->etp;
  int64_t per_expert = moe_ceil(rows / (double)local);
  ptsim_work_zero(w);
  ptsim_work_zero(act);
  ptsim_work_grouped_gemm(x, w, local, per_expert, fc1, h);
  ptsim_work_elementwise(x, act,
                         (m->activation == PTSIM_ACTIVATION_SWIGLU ? 3.0 : 2.0) * rows *
                             (double)(f / l->etp) * ELEM);
  ptsim_work_add(w, act, 1.0);
  ptsim_work_grouped_gemm(x, w, local, per_expert, h, f / l->etp);
}

/* The shared experts, a TP MLP of width fs over all T tokens: part 1 (the
 * all-gather, fc1 and the activation) and part 2 (fc2 and its reduce-
 * scatter), the two halves --moe-shared-expert-overlap puts beside the
 * dispatch and the combine. */
static PTSIM_HD void moe_shared(const PtsimWorkCtx *x, PtsimWork *first, PtsimWork *second) {
  const PtsimModel *m = &x->job->model;
  int64_t T = x->tokens, t = x->t, h = m->hidden_size, fs = m->moe_shared_expert_size;
  int64_t fc1 = (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2 : 1) * fs;
  double act = (m->activation == PTSIM_ACTIVATION_SWIGLU ? 3.0 : 2.0) * (double)T * (double)fs /
               (double)t * ELEM;
  ptsim_work_zero(first);
  ptsim_work_zero(second);
  if (fs <= 0) return;
  ptsim_work_tp_enter(x, first, ptsim_work_gemm_fwd_s(x, T, fc1 / t, h), 1,
                      (double)T * (double)h * ELEM);
  ptsim_work_gemm(x, first, T, fc1 / t, h, INPUT_CAST);
  ptsim_work_elementwise(x, first, act);
  ptsim_work_gemm(x, second, T, h, fs / t, INPUT_CAST);
  ptsim_work_tp_leave(x, second, ptsim_work_gemm_fwd_s(x, T, h, fs / t));
  if (m->moe_shared_expert_gate) { /* sigmoid(x w) scaling the shared output */
    ptsim_work_gemm_at(x, second, ptsim_work_outside_fp8(x), (int64_t)x->tokens_sp, 1, h,
                       INPUT_CAST);
    ptsim_work_elementwise(x, second, 3.0 * x->tokens_sp * (double)h * ELEM);
  }
}

/* The expert-parallel communication a block exposes when `shared` (its
 * shared experts' half) runs beside it on a side stream: the excess. */
static PTSIM_HD void moe_comm_beside(PtsimWork *w, double fwd, double bwd, const PtsimWork *shared,
                                     int overlap) {
  if (overlap) {
    fwd = moe_max(0.0, fwd - shared->forward_s);
    bwd = moe_max(0.0, bwd - (shared->backward_input_s + shared->backward_weight_s));
  }
  ptsim_work_comm(w, PTSIM_COMM_EP, fwd, bwd);
}

PTSIM_HD void ptsim_work_moe_block(const PtsimWorkCtx *x, PtsimWork *w, PtsimWork *redo) {
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  const PtsimSettings *run = &x->job->settings;
  int64_t h = m->hidden_size, e = m->num_experts;
  double tm = x->tokens_sp;
  double rows = x->expert_load * tm * (double)m->moe_router_topk * (double)l->etp;
  int selective = run->recompute == PTSIM_RECOMPUTE_SELECTIVE;
  int redo_block = selective && (run->recompute_modules & PTSIM_RECOMPUTE_MOE);
  int overlap = run->moe_shared_expert_overlap && m->moe_shared_expert_size > 0;
  Exchange ex = moe_exchange(x, tm, rows);
  PtsimWork norm, router, experts, act, shared1, shared2, block;
  ptsim_work_zero(&norm);
  ptsim_work_zero(&router);
  ptsim_work_zero(&experts);
  ptsim_work_zero(&act);
  ptsim_work_zero(&block);
  moe_shared(x, &shared1, &shared2);

  /* the pre-MLP norm: its own module in an MoE layer */
  ptsim_work_elementwise(x, &norm, 2.0 * tm * (double)h * ELEM);
  if (selective && (run->recompute_modules & PTSIM_RECOMPUTE_LAYERNORM))
    ptsim_work_add(redo, &norm, 1.0);
  /* router: logits, scores and top-k, the balancing loss */
  if (run->moe_router_fp32)
    moe_fp32_gemm(x, &router, (int64_t)tm, e, h);
  else
    ptsim_work_gemm_at(x, &router, ptsim_work_outside_fp8(x), (int64_t)tm, e, h, INPUT_CAST);
  ptsim_work_elementwise(x, &router, tm * (double)e * (run->moe_router_fusion ? 8.0 : 20.0));
  moe_experts(x, &experts, &act);
  if (selective && (run->recompute_modules & PTSIM_RECOMPUTE_MOE_ACT) && !redo_block)
    ptsim_work_add(redo, &act, 1.0);

  /* in order: norm, [shared experts before the router unless overlapped],
   * router, permute, dispatch (beside shared fc1), experts, combine
   * (beside shared fc2), unpermute */
  ptsim_work_add(&block, &norm, 1.0);
  ptsim_work_add(&block, &router, 1.0);
  moe_permutes(x, &block, tm, rows);
  ptsim_work_add(&block, &shared1, 1.0);
  moe_comm_beside(&block, ex.dispatch_s, ex.combine_s, &shared1, overlap);
  ptsim_work_add(&block, &experts, 1.0);
  ptsim_work_add(&block, &shared2, 1.0);
  moe_comm_beside(&block, ex.combine_s, ex.dispatch_s, &shared2, overlap);
  if (selective && (run->recompute_modules & PTSIM_RECOMPUTE_SHARED_EXPERTS) && !redo_block) {
    PtsimWork shared;
    ptsim_work_zero(&shared);
    ptsim_work_add(&shared, &shared1, 1.0);
    ptsim_work_add(&shared, &shared2, 1.0);
    shared.flops /= 3.0;
    ptsim_work_add(redo, &shared, 1.0);
  }

  ptsim_work_add(w, &block, 1.0);
  if (redo_block) { /* the whole block re-runs, its all-to-alls included */
    block.flops /= 3.0;
    ptsim_work_add(redo, &block, 1.0);
  }
}

/* ---- combined 1F1B (--overlap-moe-expert-parallel-comm) ---- */

PTSIM_HD void ptsim_work_moe_a2a_parts(const PtsimWorkCtx *x, PtsimWork *mlp) {
  double rows = x->expert_load * x->tokens_sp * (double)x->job->model.moe_router_topk *
                (double)x->job->layout.etp;
  Exchange ex = moe_exchange(x, x->tokens_sp, rows);
  PtsimWork act;
  moe_experts(x, mlp, &act);
  /* the dispatch, and its gradient (combine-shaped) in backward */
  mlp->forward_comm_s[PTSIM_COMM_EP] = ex.dispatch_s;
  mlp->backward_comm_s[PTSIM_COMM_EP] = ex.combine_s;
}

/* Megatron-LM's TransformerLayerSchedulePlan.run (models/common/
 * model_chunk_schedule_plan.py) issues, for the forward layer i of one
 * microbatch and the backward layer L-1-i of the other,
 *   comm stream:  combine_b | dispatch_f  dispatch_b | combine_f
 *   comp stream:  attn_f    | mlp_b mlp_w mlp_f      | attn_b attn_w
 * each waiting for its input: mlp_b for combine_b, dispatch_f for attn_f,
 * dispatch_b for mlp_b (the data gradient), mlp_f for dispatch_f,
 * combine_f for mlp_f, attn_b for dispatch_b; the next layer's attn_f for
 * combine_f, its combine_b for attn_b.  Without --delay-wgrad-compute the
 * weight gradients run inside mlp_b and attn_b; with it they run after
 * them (backward_dw), so dispatch_b starts after the data gradient alone
 * and the next layer's combine_b beside attn_w.  Four identical layers are
 * chained; the steady period is that of the last two. */
PTSIM_HD double ptsim_work_moe_pair_s(const PtsimMoePairParts *p, int delay_wgrad) {
  double comp = 0.0, comm = 0.0, f_in = 0.0, b_in = 0.0, end[4];
  double mlp_b = p->mlp_b + (delay_wgrad ? 0.0 : p->mlp_w), mlp_w = delay_wgrad ? p->mlp_w : 0.0;
  double attn_b = p->attn_b + (delay_wgrad ? 0.0 : p->attn_w);
  double attn_w = delay_wgrad ? p->attn_w : 0.0;
  double cb, af, mb, df, db, mf;
  int i;
  for (i = 0; i < 4; i++) {
    cb = moe_max(comm, b_in) + p->combine_b;
    af = moe_max(comp, f_in) + p->attn_f;
    mb = moe_max(af, cb) + mlp_b;
    df = moe_max(cb, af) + p->dispatch_f;
    db = moe_max(df, mb) + p->dispatch_b;
    mf = moe_max(mb + mlp_w, df) + p->mlp_f;
    f_in = moe_max(db, mf) + p->combine_f; /* combine_f after dispatch_b on comm */
    b_in = moe_max(mf, db) + attn_b;       /* attn_b after mlp_f on comp */
    comp = b_in + attn_w;
    comm = f_in;
    end[i] = moe_max(comp, comm);
  }
  return 0.5 * (end[3] - end[1]);
}

/* ---- multi-latent attention ---- */

PTSIM_HD void ptsim_work_mla(const PtsimWorkCtx *x, PtsimWork *w, PtsimWork *redo) {
  const PtsimModel *m = &x->job->model;
  const PtsimSettings *run = &x->job->settings;
  int64_t T = x->tokens, t = x->t, h = m->hidden_size, heads = m->num_attention_heads / t;
  int64_t tsp = (int64_t)x->tokens_sp, dn = m->qk_head_dim, dr = m->qk_pos_emb_head_dim;
  int64_t dv = m->v_head_dim, ql = m->q_lora_rank, kl = m->kv_lora_rank;
  int selective = run->recompute == PTSIM_RECOMPUTE_SELECTIVE;
  int redo_attention = selective && (run->recompute_modules & PTSIM_RECOMPUTE_CORE_ATTN);
  int redo_up = selective && (run->recompute_modules & PTSIM_RECOMPUTE_MLA_UP_PROJ);
  /* the up projections' inputs come from the latent norms fused into TE's
   * LayerNormColumnParallelLinear when there are any */
  int up_cast = m->qk_layernorm && run->transformer_engine ? INPUT_QUANTIZED_BY_NORM : INPUT_CAST;
  PtsimWork up;
  ptsim_work_zero(&up);
  /* q: a latent from the local tokens (TP ranks replicate the down
   * projection), its norm, gathered over TP, up-projected by heads; or
   * straight from h */
  if (ql > 0) {
    ptsim_work_gemm(x, w, tsp, ql, h, INPUT_CAST);
    if (m->qk_layernorm) ptsim_work_elementwise(x, &up, 2.0 * (double)tsp * (double)ql * ELEM);
    ptsim_work_tp_enter(x, &up, ptsim_work_gemm_fwd_s(x, T, heads * (dn + dr), ql), 1,
                        (double)T * (double)ql * ELEM);
    ptsim_work_gemm(x, &up, T, heads * (dn + dr), ql, up_cast);
  } else {
    ptsim_work_tp_enter(x, w, ptsim_work_gemm_fwd_s(x, T, heads * (dn + dr), h), 1,
                        (double)T * (double)h * ELEM);
    ptsim_work_gemm(x, w, T, heads * (dn + dr), h, INPUT_CAST);
  }
  /* k and v: one latent plus the shared rope key */
  ptsim_work_gemm(x, w, tsp, kl + dr, h, INPUT_CAST);
  if (m->qk_layernorm) ptsim_work_elementwise(x, &up, 2.0 * (double)tsp * (double)kl * ELEM);
  ptsim_work_tp_enter(x, &up, ptsim_work_gemm_fwd_s(x, T, heads * (dn + dv), kl), 1,
                      (double)T * (double)(kl + dr) * ELEM);
  ptsim_work_gemm(x, &up, T, heads * (dn + dv), kl, up_cast);
  ptsim_work_add(w, &up, 1.0);
  if (redo_up) {
    up.flops /= 3.0;
    ptsim_work_add(redo, &up, 1.0);
  }
  /* RoPE on the decoupled parts of q and k */
  ptsim_work_elementwise(x, w, 2.0 * (double)T * (double)((heads + 1) * dr) * ELEM);
  /* the core: q.k over dn + dr, p.v over dv (the kernel's FLOPs at the
   * mean head dimension); the CP ring moves k and v of every head */
  ptsim_work_attention(x, w, redo_attention ? redo : (PtsimWork *)0, heads, (dn + dr + dv) / 2,
                       (double)(heads * (dn + dr + dv)) / 2.0);
  ptsim_work_gemm(x, w, T, h, heads * dv, INPUT_CAST);
  ptsim_work_tp_leave(x, w, ptsim_work_gemm_fwd_s(x, T, h, heads * dv));
}

/* ---- multi-token prediction ---- */

PTSIM_HD void ptsim_work_mtp(const PtsimWorkCtx *x, const PtsimWork *layer,
                             const PtsimWork *embedding, const PtsimWork *head, PtsimWork *w,
                             PtsimWork *body, PtsimWork *heads) {
  int64_t T = x->tokens, t = x->t, h = x->job->model.hidden_size;
  double hidden = x->tokens_sp * (double)h * ELEM, d = (double)x->job->model.mtp_num_layers;
  PtsimWork one;
  ptsim_work_zero(w);
  ptsim_work_zero(body);
  ptsim_work_zero(heads);
  ptsim_work_zero(&one);
  ptsim_work_add(&one, embedding, 1.0);                /* the shifted tokens */
  ptsim_work_elementwise(x, &one, 2.0 * 2.0 * hidden); /* enorm, hnorm */
  ptsim_work_elementwise(x, &one, 2.0 * 2.0 * hidden); /* concatenation */
  ptsim_work_tp_enter(x, &one, ptsim_work_gemm_fwd_s(x, T, h / t, 2 * h), 1,
                      2.0 * (double)T * (double)h * ELEM);
  ptsim_work_gemm(x, &one, T, h / t, 2 * h, INPUT_CAST); /* eh_proj */
  ptsim_work_tp_leave(x, &one, ptsim_work_gemm_fwd_s(x, T, h / t, 2 * h));
  ptsim_work_add(&one, layer, 1.0);
  ptsim_work_add(body, &one, d);   /* apart: on the MTP's virtual stage */
  ptsim_work_add(heads, head, d);  /* apart: on the loss's (process_mtp_loss) */
  ptsim_work_add(&one, head, 1.0); /* final norm, output head, its loss */
  ptsim_work_add(w, &one, d);
}

/* ---- Monte-Carlo expert load ---- */

#define LOAD_DRAWS 16 /* MoE layers (x microbatches) averaged per sample */

PTSIM_HD double ptsim_workload_sample_expert_load(const PtsimPlan *plan, PtsimRng *rng) {
  const PtsimLayout *l = &plan->job.layout;
  const PtsimSettings *run = &plan->job.settings;
  const PtsimModel *m = &plan->job.model;
  double mean, sd, sum = 0.0, load;
  int64_t d, r;
  if (m->num_experts <= 0 || l->ep <= 1 || run->moe_pad_to_capacity) return plan->expert_load;
  /* copies the ep ranks receive: Tm k etp each when balanced */
  mean = plan->tokens_sp * (double)m->moe_router_topk * (double)l->etp;
  sd = sqrt(mean * (1.0 - 1.0 / (double)l->ep));
  for (d = 0; d < LOAD_DRAWS; d++) {
    double most = ptsim_rng_normal(rng);
    for (r = 1; r < l->ep; r++) most = moe_max(most, ptsim_rng_normal(rng));
    sum += 1.0 + most * sd / mean;
  }
  load = sum / (double)LOAD_DRAWS;
  if (run->moe_capacity_factor > 0.0 && load > run->moe_capacity_factor)
    load = run->moe_capacity_factor;
  return load;
}

/* ---- FLOPs ---- */

PTSIM_HD double ptsim_workload_moe_flops(const PtsimJob *job) {
  const PtsimModel *m = &job->model;
  double h = (double)m->hidden_size, s = (double)job->layout.seq;
  double tokens = (double)job->layout.gbs * s, squares = (double)job->layout.gbs * s * s;
  double e = m->activation == PTSIM_ACTIVATION_SWIGLU ? 3.0 : 2.0;
  double mtp = (double)m->mtp_num_layers, nh = (double)m->num_attention_heads;
  double moe = (double)ptsim_plan_moe_layers_in(m, 0, m->num_layers);
  double dense = (double)m->num_layers - moe;
  double layers = (double)m->num_layers + mtp;
  double mlp, attention, core, f = (double)m->moe_ffn_hidden_size;
  /* the MTP layers count as layers of the last layer's kind */
  if (ptsim_plan_is_moe_layer(m, m->num_layers - 1))
    moe += mtp;
  else
    dense += mtp;
  mlp = (double)m->ffn_hidden_size * e * dense;
  if (m->num_experts > 0)
    mlp += (f * (double)m->moe_router_topk * e + (double)m->moe_shared_expert_size * e) * moe;
  if (m->multi_latent_attention) {
    double dn = (double)m->qk_head_dim, dr = (double)m->qk_pos_emb_head_dim;
    double dv = (double)m->v_head_dim, ql = (double)m->q_lora_rank, kl = (double)m->kv_lora_rank;
    double q = ql > 0.0 ? ql * (h + nh * (dn + dr) + 1.0) : h * nh * (dn + dr);
    attention = 6.0 * (q + kl * (h + nh * (dn + dv) + 1.0) + h * dr + nh * dv * h);
    core = 6.0 * (nh * (dn + dr) / 2.0 + nh * dv / 2.0);
  } else {
    double d = (double)ptsim_plan_head_dim(m), q = d * nh, kv = d * (double)m->num_query_groups;
    attention = 6.0 * (h * (q + 2.0 * kv) + q * h);
    core = 6.0 * q / 2.0 * 2.0;
  }
  return tokens * (6.0 * h * mlp + attention * layers + 6.0 * mtp * (3.0 * h + 2.0 * h * h) +
                   6.0 * h * (double)m->vocab_size * (mtp + 1.0)) +
         squares * core * layers;
}

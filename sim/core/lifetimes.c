/* lifetimes.c — tensor lifetimes of one stage through the allocator; see
 * lifetimes.h.
 *
 * Shapes (bytes, one GPU): T = mbs*seq/cp tokens, T_sp = T/tp with SP.
 * The saved tensors of a layer are the analytical estimate's items
 * (lifetimes_sets.c), so the allocator adds only what the estimate leaves
 * to its 20% margin — caching, rounding, fragmentation, transients — and
 * what unfused attention keeps beyond it (lifetimes.h, "Releases").
 * Siblings: lifetimes_sets.c (the saved sets), lifetimes_period.c (the
 * periodic shortcut), lifetimes_units.c (FSDP units), lifetimes_mtp.c (the
 * multi-token prediction layers), lifetimes_int.h (what they share). */
#include "lifetimes.h"
#include "scratch.h"
#include "lifetimes_int.h"
#include "mamba.h"
#include "memory.h"

#define ELEM PTSIM_LIFETIMES_ELEM
#define MAX_LAYER_TENSORS PTSIM_LIFETIMES_LAYER_TENSORS
#define EXTRA_TENSORS PTSIM_LIFETIMES_EXTRA_TENSORS
#define MTP_TENSORS PTSIM_LIFETIMES_MTP_TENSORS
#define STREAM_COMPUTE PTSIM_LIFETIMES_STREAM_COMPUTE
#define STREAM_COMM PTSIM_LIFETIMES_STREAM_COMM
/* Outside the allocator (reference, memory_estimate section 1.7, taken
 * from the seed author's later tool): CUDA context ~300-500 MB, NCCL ~0.5 GB
 * per communicator. */
#define CUDA_CONTEXT_BYTES (500.0 * 1024.0 * 1024.0)
#define NCCL_COMMUNICATOR_BYTES (0.5e9)
/* Megatron-LM commit dates (YYYYMMDD, merges into main) where memory changed;
 * see lifetimes.h, "Releases" (and lifetimes_sets.c). */
#define MEGATRON_CE_IN_PLACE_FROM 20200310
#define MEGATRON_CE_COPY_FROM 20221102
#define MEGATRON_CE_COPY_UNTIL 20240613

typedef PtsimLifetimesTensor Tensor;
typedef PtsimLifetimesCtx Ctx;

static PTSIM_HD double dmax(double a, double b) { return a > b ? a : b; }

PTSIM_HD double ptsim_lifetimes_outside_bytes(const PtsimJob *job) {
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  int communicators = 0;
  if (l->tp > 1) communicators++;
  if (l->cp > 1) communicators++;
  if (l->pp > 1) communicators++;
  if (l->dp * l->cp > 1) communicators++;      /* the gradient group (dp x cp) */
  if (l->dp > 1 && l->cp > 1) communicators++; /* plus dp alone */
  if (job->model.num_experts > 0) {            /* the expert layers' groups (plan.h) */
    int all_to_all = run->moe_dispatcher == PTSIM_DISPATCH_ALLTOALL;
    if (all_to_all ? l->ep > 1 : l->etp * l->ep > 1) communicators++; /* the dispatch */
    if (all_to_all && l->etp > 1) communicators++; /* its etp gather and scatter */
    if (l->edp > 1) communicators++;               /* the experts' gradients */
  }
  return CUDA_CONTEXT_BYTES + NCCL_COMMUNICATOR_BYTES * (double)communicators;
}

/* Megatron's DDP bucket (the plan's rule). */
static PTSIM_HD double bucket_params(const PtsimJob *job) { return ptsim_plan_bucket_params(job); }

/* The stage's model states in the parts Megatron's DDP and distributed
 * optimizer keep apart: the dense parameters (optimizer states sharded
 * over dp x cp) and, for a mixture-of-experts model, the local routed
 * experts (over edp).  Returns the number of parts (1 or 2). */
static PTSIM_HD int32_t state_parts(const PtsimPlan *plan, int64_t stage, double *params,
                                    double *shards) {
  double experts; /* the trainable ones (LoRA: the adapters alone, plan.h) */
  ptsim_plan_trainable(plan, stage, &params[0], &experts);
  shards[0] = plan->optimizer_shards;
  params[1] = experts;
  shards[1] = plan->expert_optimizer_shards;
  return experts > 0.0 ? 2 : 1;
}

/* A bucket count saturates here, as if infinite: 2^40 is past any scratch
 * (PARTS_BLOCKS_MAX below is 2^30, so such a layout is refused) and exact
 * in double, and a sum of a few stays far inside int64. */
#define BUCKETS_UNBOUNDED ((int64_t)1 << 40)

static PTSIM_HD int64_t bucket_count(const PtsimPlan *plan, int64_t stage) {
  double params[2], shards[2];
  int32_t parts = state_parts(plan, stage, params, shards), p;
  int64_t n = 0;
  /* Each part's count is clamped before the cast (a 2^60-parameter stage
   * has 2^35 buckets, past int32): a count that large makes the scratch
   * refuse the layout. */
  for (p = 0; p < parts; p++) {
    double k = params[p] / bucket_params(&plan->job);
    n += (k < (double)BUCKETS_UNBOUNDED ? (int64_t)k : BUCKETS_UNBOUNDED) + 1;
  }
  return n;
}

/* Handles of one (microbatch, chunk) slot of stage `stage`. */
static PTSIM_HD int32_t slot_handles(const PtsimPlan *plan, int64_t stage, int64_t chunk_layers) {
  int64_t mtp = stage == plan->vstages.last_stage || stage == plan->mtp_stage
                    ? plan->job.model.mtp_num_layers
                    : 0;
  return (int32_t)(chunk_layers * MAX_LAYER_TENSORS + EXTRA_TENSORS + mtp * MTP_TENSORS);
}

/* How the scratch of a stage's replay divides: allocator storage, the
 * handle tables (per (microbatch, chunk) slots, then one main-grad handle
 * per bucket, then ZeRO-3's gathered units), the live list and its index,
 * the shortcut's copies. */
/* Parts past these are not laid out: the scratch is PARTS_TOO_LARGE bytes
 * (past any limit, like a tensor that is out of memory; int32 block counts
 * and handles stay in range). */
#define PARTS_BLOCKS_MAX ((int64_t)1 << 30)
#define PARTS_TOO_LARGE ((int64_t)PTSIM_ALLOC_OOM_BYTES)

typedef struct {
  int64_t blocks, per_slot, slots, buckets, units, deferred, live_cap;
  int64_t storage; /* allocator storage slots: the blocks plus the free set's order */
  int64_t handles_at, live_at, live_pos_at, period_at, period_bytes, total;
} Parts;

static PTSIM_HD void parts_of(const PtsimPlan *plan, int64_t stage, Parts *q) {
  const PtsimJob *job = &plan->job;
  int64_t v = plan->num_chunks;
  int64_t m = plan->num_microbatches;
  int64_t layers = plan->stage_layers[stage];
  /* (microbatch, chunk) pairs the live list holds: the stage's pairs alive
   * at once (the plan's rule) and, for the shortcut, at least 2pv + 2 of
   * them (at most all m*v): period_kmax looks back that many periods */
  int64_t alive = ptsim_plan_inflight_chunks(job->layout.schedule, job->layout.pp, m,
                                             job->layout.vp, plan->microbatch_group, stage);
  int64_t horizon = m * v < 2 * job->layout.pp * v + 2 ? m * v : 2 * job->layout.pp * v + 2;
  int64_t inflight = alive > horizon ? alive : horizon;
  int64_t even_slot = slot_handles(plan, stage, layers / v);
  double live;
  q->units = ptsim_lifetimes_unit_slots(plan, stage);
  /* the slots follow the plan's chunk (chunk_layers), the block count the
   * even split */
  q->per_slot = slot_handles(plan, stage, plan->chunk_layers[stage]);
  if (q->per_slot < even_slot) q->per_slot = even_slot;
  q->buckets = bucket_count(plan, stage);
  q->deferred = ptsim_lifetimes_deferred_cap(plan, stage);
  q->live_cap = inflight;
  /* In double, saturated: an absurd layout (2^30 layers, 2^35 buckets) gets
   * a size past any limit instead of an int64 overflow (every size a
   * replay can have is far below 2^53, where double is exact), and the
   * parts past it are not laid out. */
  live = (double)layers * 6.0 + 5.0 * (double)q->buckets + 16.0 +
         (double)inflight * (double)even_slot + (double)q->deferred;
  /* ZeRO-2/3: shards, gathered units, buffers */
  if (plan->zero_stage >= 2) live += 6.0 * ((double)layers + 2.0) + 8.0;
  /* the CUDA graphs' static buffers, one per layer (capture_graphs) */
  if (ptsim_memory_graph_bytes(plan, stage) > 0.0) live += (double)layers;
  if (3.0 * live + 4096.0 > (double)PARTS_BLOCKS_MAX ||
      (double)m * (double)v * (double)q->per_slot > (double)PARTS_BLOCKS_MAX) {
    q->total = PARTS_TOO_LARGE;
    return;
  }
  q->blocks = 3 * (int64_t)live + 4096;
  q->slots = m * v * q->per_slot;
  /* the allocator keeps its free set's order in its storage (alloc.h) */
  q->storage = ptsim_alloc_storage_slots(q->blocks);
  q->handles_at = q->storage * (int64_t)sizeof(PtsimAllocBlock);
  q->live_at = q->handles_at +
               (q->slots + q->buckets + q->units + q->deferred) * (int64_t)sizeof(int32_t);
  q->live_pos_at = q->live_at + 2 * q->live_cap * (int64_t)sizeof(int32_t);
  q->period_at = ptsim_scratch_align(q->live_pos_at + m * v * (int64_t)sizeof(int32_t), 8);
  /* GPipe's stretches never repeat: no shortcut, no room for it */
  q->period_bytes = job->layout.schedule == PTSIM_SCHEDULE_GPIPE
                        ? 0
                        : ptsim_lifetimes_period_bytes((int32_t)q->blocks, (int32_t)q->live_cap,
                                                       (int32_t)q->per_slot, (int32_t)q->units);
  q->total = q->period_at + q->period_bytes;
}

PTSIM_HD int64_t ptsim_lifetimes_scratch_bytes(const PtsimPlan *plan, int64_t stage) {
  Parts q;
  parts_of(plan, stage, &q);
  return q.total;
}

/* One allocation; on the first failure the OOM is recorded and the replay
 * stops allocating (later frees of never-allocated tensors are skipped). */
static PTSIM_HD void failed(Ctx *x, int32_t h, const char *name, double bytes) {
  int i;
  x->failed = h == PTSIM_ALLOC_ERR_OOM ? 1 : 2;
  if (h == PTSIM_ALLOC_ERR_OOM && x->out->fits) {
    PtsimStageAlloc *o = x->out;
    o->fits = 0;
    o->oom_step = x->step;
    o->oom_item = x->item;
    o->oom_microbatch = x->microbatch;
    o->oom_chunk = x->chunk;
    o->oom_kind = x->kind;
    o->oom_request_bytes = bytes;
    for (i = 0; i < PTSIM_LIFETIMES_NAME_MAX - 1 && name[i]; i++) o->oom_tensor[i] = name[i];
    o->oom_tensor[i] = '\0';
  }
}

/* The shortcut's hint: the addresses handed out (lifetimes_period.c). */
static PTSIM_HD void handed(Ctx *x, int64_t addr) {
  x->trace_hash = (x->trace_hash ^ (uint64_t)addr) * PTSIM_LIFETIMES_HASH_PRIME;
}

static PTSIM_HD int32_t tensor_take(Ctx *x, const char *name, double bytes, int32_t stream) {
  int32_t h;
  if (x->failed || bytes <= 0.0) return -1;
  /* past any GPU (and past int64: the cast would be undefined) it is out
   * of memory, as the allocator would say */
  h = bytes < PTSIM_ALLOC_OOM_BYTES ? ptsim_alloc_malloc(&x->alloc, (int64_t)bytes, stream)
                                    : PTSIM_ALLOC_ERR_OOM;
  if (h >= 0) {
    handed(x, x->alloc.blocks[h].addr);
    return h;
  }
  failed(x, h, name, bytes);
  return -1;
}

/* A tensor freed as soon as it is made (take then give, in one call). */
static PTSIM_HD void tensor_take_give(Ctx *x, const char *name, double bytes, int32_t stream) {
  int64_t addr = 0;
  int32_t rc;
  if (x->failed || bytes <= 0.0) return;
  rc = bytes < PTSIM_ALLOC_OOM_BYTES
           ? ptsim_alloc_malloc_free(&x->alloc, (int64_t)bytes, stream, &addr)
           : PTSIM_ALLOC_ERR_OOM;
  if (rc == 0)
    handed(x, addr);
  else
    failed(x, rc, name, bytes);
}

static PTSIM_HD void tensor_give(Ctx *x, int32_t handle) {
  if (handle >= 0) ptsim_alloc_free(&x->alloc, handle);
}

PTSIM_HD void ptsim_lifetimes_take_give(Ctx *x, const char *name, double bytes, int32_t stream) {
  tensor_take_give(x, name, bytes, stream);
}

PTSIM_HD int32_t ptsim_lifetimes_take(Ctx *x, const char *name, double bytes, int32_t stream) {
  return tensor_take(x, name, bytes, stream);
}

PTSIM_HD void ptsim_lifetimes_give(Ctx *x, int32_t handle) { tensor_give(x, handle); }

static PTSIM_HD int32_t *slot(Ctx *x, int32_t mb, int32_t chunk) {
  return ptsim_lifetimes_slot(x, mb, chunk);
}

static PTSIM_HD int is_first(const Ctx *x, int32_t chunk) {
  return ptsim_lifetimes_is_first(x, chunk);
}
static PTSIM_HD int is_last(const Ctx *x, int32_t chunk) {
  return ptsim_lifetimes_is_last(x, chunk);
}

/* The transients of one layer's forward: allocated and freed around the ops. */
PTSIM_HD void ptsim_lifetimes_layer_transients(Ctx *x) {
  const PtsimLayout *l = &x->job->layout;
  double h = (double)x->job->model.hidden_size, full = ELEM * x->tokens * h;
  int32_t a, b;
  if (l->tp > 1 && l->sp) /* all-gather output feeding QKV, then fc1 */
    tensor_take_give(x, "sp_allgather", full, STREAM_COMPUTE);
  if (l->cp > 1) { /* ring: the K/V block in flight and the one received */
    double kv = ELEM * 2.0 * x->tokens * h * (double)x->job->model.num_query_groups /
                (double)x->job->model.num_attention_heads / (double)l->tp;
    a = tensor_take(x, "cp_ring_send", kv, STREAM_COMM);
    b = tensor_take(x, "cp_ring_recv", kv, STREAM_COMM);
    tensor_give(x, a);
    tensor_give(x, b);
  }
  if (l->tp > 1) /* the row-parallel GEMM output before its reduction */
    tensor_take_give(x, "rowparallel_output", full, STREAM_COMPUTE);
}

/* An MoE layer's transients beyond a dense layer's: the permuted tokens
 * sent and the rows received by the dispatch, the experts' output sent
 * back by the combine. */
PTSIM_HD void ptsim_lifetimes_moe_transients(Ctx *x) {
  const PtsimModel *m = &x->job->model;
  double h = (double)m->hidden_size, k = (double)m->moe_router_topk;
  double rows = x->plan->expert_load * x->tokens_sp * k * (double)x->job->layout.etp;
  int32_t sent = tensor_take(x, "dispatch_send", ELEM * x->plan->expert_load * x->tokens_sp * k * h,
                             STREAM_COMM);
  int32_t received = tensor_take(x, "dispatch_recv", ELEM * rows * h, STREAM_COMM);
  int32_t out = tensor_take(x, "expert_output", ELEM * rows * h, STREAM_COMPUTE);
  tensor_give(x, sent);
  tensor_give(x, received);
  tensor_give(x, out);
}

/* The transients of a layer with saved set `set`: a Mamba layer's own,
 * else a transformer layer's and an MoE layer's beyond them. */
static PTSIM_HD void set_transients(Ctx *x, const Tensor *set) {
  if (set == x->saved_hybrid[0]) {
    ptsim_lifetimes_mamba_transients(x);
    return;
  }
  ptsim_lifetimes_layer_transients(x);
  if (set == x->saved_moe) ptsim_lifetimes_moe_transients(x);
}

static PTSIM_HD void forward(Ctx *x, int32_t mb, int32_t chunk) {
  int32_t *hs = slot(x, mb, chunk);
  int32_t k = 0, layer, i, layers = ptsim_lifetimes_layers_of(x, chunk);
  for (i = 0; i < x->per_slot; i++) hs[i] = -1;
  ptsim_lifetimes_live_add(x, mb, chunk);
  if (!is_first(x, chunk)) hs[k] = tensor_take(x, "pp_recv", x->layer_input_bytes, STREAM_COMM);
  k++;
  if (x->gathered && is_first(x, chunk)) {
    ptsim_lifetimes_unit_enter(x, chunk, 0, 1);
    ptsim_lifetimes_unit_forward_done(x, chunk, 0);
  }
  for (layer = 0; layer < layers; layer++) {
    int32_t n;
    const Tensor *set = ptsim_lifetimes_saved_of(x, chunk, layer, &n);
    if (x->gathered) ptsim_lifetimes_unit_enter(x, chunk, layer + 1, 1);
    if (ptsim_lifetimes_recomputed(x, layer)) {
      /* Only what the checkpoint keeps stays (its input; per op x->kept);
       * the rest of the working set comes and goes. */
      int32_t tmp[MAX_LAYER_TENSORS];
      if (x->n_kept > 0)
        for (i = 0; i < x->n_kept; i++)
          hs[k + i] = tensor_take(x, x->kept[i].name, x->kept[i].bytes, STREAM_COMPUTE);
      else if (ptsim_lifetimes_keeps_input(x, layer))
        hs[k] = tensor_take(x, "layer_input", x->layer_input_bytes, STREAM_COMPUTE);
      ptsim_lifetimes_take_set(x, set, n, x->rest_scale, 0, tmp);
      set_transients(x, set);
      for (i = n - 1; i >= 0; i--) tensor_give(x, tmp[i]);
      k += MAX_LAYER_TENSORS;
    } else {
      /* after q, k, v: the projections' transients; after the router, the
       * dispatch and combine */
      ptsim_lifetimes_take_set(x, set, n, 1.0, 1, hs + k);
      for (i = 0; i < n; i++) /* offloaded: copied to the host, freed here */
        if (set[i].role & PTSIM_LIFETIMES_ROLE_OFFLOAD) {
          tensor_give(x, hs[k + i]);
          hs[k + i] = -1;
        }
      k += MAX_LAYER_TENSORS;
    }
    if (x->gathered) ptsim_lifetimes_unit_forward_done(x, chunk, layer + 1);
  }
  k = 1 + x->chunk_layers * MAX_LAYER_TENSORS; /* the head's handles follow the slot's layers */
  if (x->gathered && is_last(x, chunk))
    ptsim_lifetimes_unit_enter(x, chunk, x->chunk_layers + 1, 1);
  if (!is_last(x, chunk) && ptsim_lifetimes_is_mtp(x, chunk)) /* apart: no head */
    ptsim_lifetimes_mtp_forward(x, hs + k + 2);
  if (is_last(x, chunk)) { /* logits (16-bit), fp32, kept as the softmax; loss */
    int32_t logits;
    if (ptsim_lifetimes_is_mtp(x, chunk)) ptsim_lifetimes_mtp_forward(x, hs + k + 2);
    logits = tensor_take(x, "logits", ELEM * x->logits_elems, STREAM_COMPUTE);
    hs[k] = tensor_take(x, "logits_fp32", 4.0 * x->logits_elems, STREAM_COMPUTE);
    if (ptsim_lifetimes_ce_compiled(x)) /* the compiled exp(logits - max) */
      tensor_take_give(x, "logits_exp_compiled", 4.0 * x->logits_elems, STREAM_COMPUTE);
    if (ptsim_lifetimes_megatron_between(x->job, 0, MEGATRON_CE_IN_PLACE_FROM) ||
        ptsim_lifetimes_megatron_between(x->job, MEGATRON_CE_COPY_FROM, MEGATRON_CE_COPY_UNTIL)) {
      /* logits - max, out of place */
      int32_t shifted = tensor_take(x, "logits_minus_max", 4.0 * x->logits_elems, STREAM_COMPUTE);
      tensor_give(x, hs[k]);
      hs[k] = shifted;
    }
    k++;
    tensor_give(x, logits);
    hs[k++] = tensor_take(x, "loss", 4.0 * x->tokens, STREAM_COMPUTE);
    ptsim_lifetimes_mtp_heads(x, hs + k);
  }
  if (x->gathered && is_last(x, chunk))
    ptsim_lifetimes_unit_forward_done(x, chunk, x->chunk_layers + 1);
}

/* The saved tensors of a (microbatch, chunk), freed in reverse. */
static PTSIM_HD void release_saved(Ctx *x, int32_t mb, int32_t chunk) {
  int32_t *hs = slot(x, mb, chunk);
  int32_t layer, i;
  ptsim_lifetimes_live_use(x, mb, chunk, 1);
  for (layer = ptsim_lifetimes_layers_of(x, chunk) - 1; layer >= 0; layer--) {
    int32_t *lh = hs + 1 + layer * MAX_LAYER_TENSORS;
    for (i = MAX_LAYER_TENSORS - 1; i >= 0; i--) {
      tensor_give(x, lh[i]);
      lh[i] = -1;
    }
  }
  if (is_last(x, chunk) || ptsim_lifetimes_is_mtp(x, chunk))
    ptsim_lifetimes_mtp_give(x, hs + 3 + x->chunk_layers * MAX_LAYER_TENSORS, 0, MTP_TENSORS);
  tensor_give(x, hs[0]); /* the receive buffer */
  hs[0] = -1;
}

/* Backward of a (microbatch, chunk).  keep_saved: the zero-bubble B, whose
 * W still needs the layer inputs; the saved tensors go with the W. */
static PTSIM_HD void backward(Ctx *x, int32_t mb, int32_t chunk, int keep_saved) {
  int32_t *hs = slot(x, mb, chunk);
  int32_t layer, i, grad_in, grad_out, reducing = -1, unit_grad;
  int32_t base = 1 + x->chunk_layers * MAX_LAYER_TENSORS;
  ptsim_lifetimes_live_use(x, mb, chunk, !keep_saved);
  unit_grad = ptsim_lifetimes_unit_backward_begin(x, chunk, x->chunk_layers + 1);
  ptsim_lifetimes_unit_backward_end(x, chunk, x->chunk_layers + 1, unit_grad, &reducing);
  if (is_last(x, chunk)) { /* the kept softmax becomes the gradient in place; to 16 bits */
    int32_t compiled = -1, grad_logits;
    if (ptsim_lifetimes_ce_compiled(x)) /* ... computed into a buffer of its own */
      compiled = tensor_take(x, "logits_grad_compiled", 4.0 * x->logits_elems, STREAM_COMPUTE);
    grad_logits = tensor_take(x, "logits_grad", ELEM * x->logits_elems, STREAM_COMPUTE);
    tensor_give(x, compiled);
    tensor_give(x, hs[base + 1]);
    tensor_give(x, hs[base]);
    hs[base + 1] = hs[base] = -1;
    if (x->n_deferred + 2 <= x->deferred_cap) { /* kept for the flush */
      x->deferred[x->n_deferred++] = grad_logits;
      x->deferred[x->n_deferred++] = tensor_take(x, "deferred_output_input", x->layer_input_bytes,
                                                 STREAM_COMPUTE);
    } else
      tensor_give(x, grad_logits);
    ptsim_lifetimes_mtp_backward(x, hs + base + 2, keep_saved, 1, ptsim_lifetimes_is_mtp(x, chunk));
  } else if (ptsim_lifetimes_is_mtp(x, chunk)) { /* apart: the layers' gradients alone */
    ptsim_lifetimes_mtp_backward(x, hs + base + 2, keep_saved, 0, 1);
  }
  grad_in = tensor_take(x, "activation_grad", x->layer_input_bytes, STREAM_COMM);
  for (layer = ptsim_lifetimes_layers_of(x, chunk) - 1; layer >= 0; layer--) {
    int32_t *lh = hs + 1 + layer * MAX_LAYER_TENSORS;
    int32_t tmp[MAX_LAYER_TENSORS], n;
    const Tensor *set = ptsim_lifetimes_saved_of(x, chunk, layer, &n);
    /* re-materialise the layer (beyond what per op kept) */
    if (ptsim_lifetimes_recomputed(x, layer))
      ptsim_lifetimes_take_set(x, set, n, x->rest_scale, 0, tmp);
    else /* the offloaded inputs come back from the host */
      for (i = 0; i < n; i++)
        if (set[i].role & PTSIM_LIFETIMES_ROLE_OFFLOAD)
          lh[i] = tensor_take(x, set[i].name, set[i].bytes, STREAM_COMM);
    grad_out = tensor_take(x, "activation_grad", x->layer_input_bytes, STREAM_COMPUTE);
    unit_grad = ptsim_lifetimes_unit_backward_begin(x, chunk, layer + 1);
    set_transients(x, set);
    /* a hybrid model's attention runs in its attention sub-layers alone */
    if (!ptsim_model_is_hybrid(&x->job->model) || set == x->saved_hybrid[1])
      ptsim_lifetimes_attention_backward(x);
    ptsim_lifetimes_unit_backward_end(x, chunk, layer + 1, unit_grad, &reducing);
    if (ptsim_lifetimes_recomputed(x, layer))
      for (i = n - 1; i >= 0; i--) tensor_give(x, tmp[i]);
    if (!keep_saved)
      for (i = MAX_LAYER_TENSORS - 1; i >= 0; i--) {
        tensor_give(x, lh[i]);
        lh[i] = -1;
      }
    tensor_give(x, grad_in);
    grad_in = grad_out;
  }
  tensor_give(x, grad_in);
  unit_grad = ptsim_lifetimes_unit_backward_begin(x, chunk, 0);
  ptsim_lifetimes_unit_backward_end(x, chunk, 0, unit_grad, &reducing);
  tensor_give(x, reducing);
  if (!keep_saved) {
    tensor_give(x, hs[0]); /* the receive buffer */
    hs[0] = -1;
  }
}

/* A full backward (1F1B, interleaved).  Under Megatron-LM's combined 1F1B
 * (--overlap-moe-expert-parallel-comm) the backward a forward follows runs
 * paired with it layer by layer (engine_int.h), and the forward's first
 * layer is stored before the backward's last layer is freed: that
 * layer's saved set is held while the backward runs (plan.c counts the
 * same layer); the forward then stores its chunk as any. */
static PTSIM_HD void paired_backward(Ctx *x, const PtsimScheduleItem *items, int32_t n_items,
                                     int32_t i) {
  int32_t pair[MAX_LAYER_TENSORS], n = 0, j;
  const PtsimScheduleItem *it = &items[i];
  if (x->job->settings.moe_ep_comm_overlap && i + 1 < n_items &&
      items[i + 1].kind == PTSIM_SCHEDULE_ITEM_FORWARD &&
      ptsim_lifetimes_layers_of(x, items[i + 1].chunk) > 0) {
    const Tensor *set = ptsim_lifetimes_saved_of(x, items[i + 1].chunk, 0, &n);
    ptsim_lifetimes_take_set(x, set, n, 1.0, 0, pair);
  }
  backward(x, it->microbatch, it->chunk, 0);
  for (j = n - 1; j >= 0; j--) tensor_give(x, pair[j]);
}

/* The weights of a dense model's stage: one tensor per parameter matrix
 * (and Transformer Engine's fp8 copies under fp8, plan.h). */
static PTSIM_HD void dense_weights(Ctx *x) {
  const PtsimJob *job = x->job;
  const PtsimLayout *l = &job->layout;
  double params = x->plan->stage_parameters[x->stage];
  double layer = x->plan->layer_parameters, lora = x->plan->lora_layer_parameters;
  double rest = params - (layer + lora) * (double)x->plan->stage_layers[x->stage];
  int64_t i;
  const PtsimModel *m = &job->model;
  double h = (double)m->hidden_size, t = (double)l->tp;
  double q = (double)(m->num_attention_heads * x->plan->head_dim);
  double kv = (double)(m->num_query_groups * x->plan->head_dim);
  double ffn1 = (double)m->ffn_hidden_size * (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2.0 : 1.0);
  double mats = h * (q + 2.0 * kv) / t + q * h / t + h * ffn1 / t +
                (double)m->ffn_hidden_size * h / t;
  /* fp8 weight copies beyond the bf16 weights (plan.h) */
  double fp8_cache = x->plan->stage_weight_bytes[x->stage] - ELEM * params;
  for (i = 0; i < x->plan->stage_layers[x->stage]; i++) {
    tensor_take(x, "w_qkv", ELEM * h * (q + 2.0 * kv) / t, STREAM_COMPUTE);
    tensor_take(x, "w_proj", ELEM * q * h / t, STREAM_COMPUTE);
    tensor_take(x, "w_fc1", ELEM * h * ffn1 / t, STREAM_COMPUTE);
    tensor_take(x, "w_fc2", ELEM * (double)m->ffn_hidden_size * h / t, STREAM_COMPUTE);
    tensor_take(x, "w_small", ELEM * dmax(layer - mats, 0.0), STREAM_COMPUTE); /* norms, biases */
    if (lora > 0.0) tensor_take(x, "w_lora_adapters", ELEM * lora, STREAM_COMPUTE);
  }
  if (rest > 0.0) tensor_take(x, "w_embedding_head", ELEM * rest, STREAM_COMPUTE);
  if (fp8_cache > 0.0) tensor_take(x, "fp8_weights", fp8_cache, STREAM_COMPUTE);
}

/* The weights of a mixture-of-experts model's stage: a tensor per dense
 * layer, per MoE layer its attention/router/shared part and its local
 * experts' fc1 and fc2 (grouped), then the embedding and head (and the
 * MTP block). */
static PTSIM_HD void moe_weights(Ctx *x) {
  const PtsimPlan *plan = x->plan;
  double params = plan->stage_parameters[x->stage];
  int64_t layers = plan->stage_layers[x->stage], moe = plan->stage_moe_layers[x->stage], i;
  double rest = params - (double)(layers - moe) * plan->layer_parameters -
                (double)moe * plan->moe_layer_parameters;
  double fc1 = x->job->model.activation == PTSIM_ACTIVATION_SWIGLU ? 2.0 / 3.0 : 0.5;
  double fp8_cache = plan->stage_weight_bytes[x->stage] - ELEM * params;
  for (i = 0; i < layers - moe; i++)
    tensor_take(x, "w_layer", ELEM * plan->layer_parameters, STREAM_COMPUTE);
  for (i = 0; i < moe; i++) {
    tensor_take(x, "w_attention_router",
                ELEM * (plan->moe_layer_parameters - plan->moe_expert_parameters), STREAM_COMPUTE);
    tensor_take(x, "w_experts_fc1", ELEM * fc1 * plan->moe_expert_parameters, STREAM_COMPUTE);
    tensor_take(x, "w_experts_fc2", ELEM * (1.0 - fc1) * plan->moe_expert_parameters,
                STREAM_COMPUTE);
  }
  if (rest > 0.0) tensor_take(x, "w_embedding_head", ELEM * rest, STREAM_COMPUTE);
  if (fp8_cache > 0.0) tensor_take(x, "fp8_weights", fp8_cache, STREAM_COMPUTE);
}

/* Before step 0: the weights (ZeRO-3: their shards), the gradient buffer
 * (ZeRO-2/3: each unit's gradient shard) and the main parameters, per
 * bucket of each part (state_parts: Megatron's DDP builds the buffers,
 * then the optimizer clones its main parameters; Adam's states come
 * later).  With the precision-aware optimizer holding the masters (plan.h
 * lazy_masters), FusedAdam creates them at its first step, not here. */
static PTSIM_HD void at_start(Ctx *x) {
  double params[2], shards[2], left;
  double bucket = bucket_params(x->job);
  int32_t parts = state_parts(x->plan, x->stage, params, shards), p;
  if (x->plan->zero_stage < 3) { /* ZeRO-3's weight shards come with the units */
    if (ptsim_model_is_hybrid(&x->job->model))
      ptsim_lifetimes_hybrid_weights(x);
    else if (x->job->model.num_experts > 0)
      moe_weights(x);
    else
      dense_weights(x);
  }
  if (x->plan->zero_stage >= 2)
    ptsim_lifetimes_sharded_units(x);
  else
    for (p = 0; p < parts; p++)
      for (left = params[p]; left > 0.0; left -= bucket)
        tensor_take(x, "grad_bucket", x->plan->grad_bytes * (left < bucket ? left : bucket),
                    STREAM_COMPUTE);
  if (!x->plan->lazy_masters)
    for (p = 0; p < parts; p++)
      for (left = params[p]; left > 0.0; left -= bucket)
        tensor_take(x, "main_param_shard",
                    x->plan->master_bytes * (left < bucket ? left : bucket) / shards[p],
                    STREAM_COMPUTE);
  ptsim_lifetimes_workspaces(x);
}

/* The optimizer step closing step x->step: the first creates Adam's two
 * states per bucket of each part (and, with lazy_masters, the masters
 * after them, as FusedAdam.initialize_state does), kept for good; with
 * 2-byte gradients every step makes fp32 copies of its gradient shards
 * (shard.float()), freed by the next step's zero_grad (free_main_grads),
 * unless the optimizer reads the gradients in place (lazy_masters:
 * decoupled_grad).  A mixture-of-experts model's experts are one more
 * part, sharded over edp. */
static PTSIM_HD void optimizer_step(Ctx *x) {
  const PtsimPlan *pl = x->plan;
  double params[2], shards[2], left;
  double bucket = bucket_params(x->job);
  int32_t parts = state_parts(pl, x->stage, params, shards), p, b = 0;
  x->kind = PTSIM_LIFETIMES_AT_OPTIMIZER;
  x->microbatch = x->chunk = -1;
  for (p = 0; p < parts; p++)
    for (left = params[p]; left > 0.0 && b < x->buckets; left -= bucket, b++) {
      double n = left < bucket ? left : bucket;
      if (pl->grad_bytes < 4.0 && !pl->lazy_masters)
        x->main_grads[b] = tensor_take(x, "main_grad_fp32", 4.0 * n / shards[p], STREAM_COMPUTE);
      if (x->step == 0) {
        tensor_take(x, "adam_exp_avg", pl->exp_avg_bytes * n / shards[p], STREAM_COMPUTE);
        tensor_take(x, "adam_exp_avg_sq", pl->exp_avg_sq_bytes * n / shards[p], STREAM_COMPUTE);
        if (pl->lazy_masters)
          tensor_take(x, "main_param_shard", pl->master_bytes * n / shards[p], STREAM_COMPUTE);
      }
    }
}

/* At the start of step 1 (Megatron-LM captures its CUDA graphs at the
 * start of the step after the eager warm-up ones, --cuda-graph-warmup-
 * steps): the graphs' static buffers (memory.c, "CUDA graphs"), a layer's
 * at a time, kept for good. */
static PTSIM_HD void capture_graphs(Ctx *x) {
  double bytes = ptsim_memory_graph_bytes(x->plan, x->stage);
  int64_t layers = x->plan->stage_layers[x->stage], i;
  if (x->step != 1 || bytes <= 0.0 || layers <= 0) return;
  for (i = 0; i < layers; i++)
    tensor_take(x, "cuda_graph_static_buffers", bytes / (double)layers, STREAM_COMPUTE);
}

static PTSIM_HD void free_main_grads(Ctx *x) {
  int32_t b;
  for (b = 0; b < x->buckets; b++) {
    tensor_give(x, x->main_grads[b]);
    x->main_grads[b] = -1;
  }
}

PTSIM_HD int64_t ptsim_lifetimes_timeline_samples(int32_t n_items, int32_t steps) {
  return 1 + (int64_t)steps * ((int64_t)n_items + 1); /* as ptsim_lifetimes_replay samples */
}

static PTSIM_HD void sample(Ctx *x, PtsimAllocTimeline *tl) {
  PtsimAllocStats st;
  if (!tl) return;
  if (tl->count < tl->capacity) {
    PtsimAllocSample *s = &tl->samples[tl->count];
    ptsim_alloc_stats(&x->alloc, &st);
    s->step = x->step;
    s->item = x->item;
    s->allocated_bytes = (double)st.allocated_bytes;
    s->reserved_bytes = (double)st.reserved_bytes;
  }
  tl->count++;
}

/* After each item: when the reserved peak has grown, remember where. */
static PTSIM_HD void note_peak(Ctx *x) {
  const PtsimAllocStats *st = &x->alloc.stats;
  PtsimStageAlloc *o = x->out;
  if ((double)st->reserved_bytes_peak <= x->reserved_best) return;
  x->reserved_best = (double)st->reserved_bytes_peak;
  o->peak_step = x->step;
  o->peak_item = x->item;
  o->peak_kind = x->kind;
  o->peak_microbatch = x->microbatch;
  o->peak_chunk = x->chunk;
}

/* Folds the peaks since the last reset into phase *ph (the larger of each). */
static PTSIM_HD void close_phase(Ctx *x, PtsimAllocPhase *ph) {
  const PtsimAllocStats *st = &x->alloc.stats;
  ph->allocated_peak_bytes = dmax(ph->allocated_peak_bytes, (double)st->allocated_bytes_peak);
  ph->requested_peak_bytes = dmax(ph->requested_peak_bytes, (double)st->requested_bytes_peak);
  ph->reserved_peak_bytes = dmax(ph->reserved_peak_bytes, (double)st->reserved_bytes_peak);
  ph->device_peak_bytes = ph->reserved_peak_bytes + x->out->outside_bytes;
  if ((double)st->inactive_split_bytes_peak > x->out->inactive_split_peak_bytes)
    x->out->inactive_split_peak_bytes = (double)st->inactive_split_bytes_peak;
  ptsim_alloc_reset_peaks(&x->alloc);
}

static PTSIM_HD void phase_zero(PtsimAllocPhase *ph) {
  ph->allocated_peak_bytes = ph->requested_peak_bytes = 0.0;
  ph->reserved_peak_bytes = ph->device_peak_bytes = 0.0;
}

static PTSIM_HD void result_init(PtsimStageAlloc *out, const PtsimJob *job) {
  out->fits = 1;
  out->runs = 0;
  out->runs_margin_bytes = 0.0;
  out->runs_fail_step = -1;
  out->oom_step = out->oom_item = out->oom_microbatch = out->oom_chunk = -1;
  out->oom_kind = PTSIM_LIFETIMES_AT_SETUP;
  out->oom_request_bytes = 0.0;
  out->oom_tensor[0] = '\0';
  out->peak_step = out->peak_item = out->peak_microbatch = out->peak_chunk = -1;
  out->peak_kind = PTSIM_LIFETIMES_AT_SETUP;
  out->inactive_split_peak_bytes = 0.0;
  out->items_replayed = 0;
  out->outside_bytes = ptsim_lifetimes_outside_bytes(job);
  phase_zero(&out->first_step);
  phase_zero(&out->steady_state);
}

/* The `runs` margin of a reserved peak (lifetimes.h), and a phase that breaks it. */
static PTSIM_HD double runs_margin(double reserved_bytes) {
  return PTSIM_LIFETIMES_OUTSIDE_ERROR_BYTES + PTSIM_LIFETIMES_RESERVED_ERROR * reserved_bytes;
}
static PTSIM_HD int phase_breaks(const PtsimAllocPhase *p, double capacity) {
  return p->reserved_peak_bytes > 0.0 &&
         p->device_peak_bytes + runs_margin(p->reserved_peak_bytes) > capacity;
}

/* The worse phase becomes the stage's peaks; then the verdict, and the
 * first step that breaks it. */
static PTSIM_HD void result_close(PtsimStageAlloc *out, const PtsimJob *job) {
  const PtsimAllocPhase *a = &out->first_step, *b = &out->steady_state;
  out->allocated_peak_bytes = dmax(a->allocated_peak_bytes, b->allocated_peak_bytes);
  out->reserved_peak_bytes = dmax(a->reserved_peak_bytes, b->reserved_peak_bytes);
  out->fragmentation = out->reserved_peak_bytes > 0.0
                           ? 1.0 - out->allocated_peak_bytes / out->reserved_peak_bytes
                           : 0.0;
  out->device_peak_bytes = out->reserved_peak_bytes + out->outside_bytes;
  out->runs_margin_bytes = runs_margin(out->reserved_peak_bytes);
  out->runs = out->fits && out->device_peak_bytes + out->runs_margin_bytes <= job->hw.memory_bytes;
  out->runs_fail_step = phase_breaks(a, job->hw.memory_bytes)   ? 0
                        : !out->fits                            ? out->oom_step
                        : phase_breaks(b, job->hw.memory_bytes) ? 1
                        : !out->runs                            ? 0
                                                                : -1;
}

PTSIM_HD int32_t ptsim_lifetimes_replay(const PtsimPlan *plan, int64_t stage,
                                        const PtsimScheduleItem *items, int32_t n_items,
                                        int32_t steps, const PtsimAllocOptions *opts,
                                        int32_t every_item, void *scratch, int64_t scratch_bytes,
                                        PtsimAllocTimeline *timeline, PtsimStageAlloc *out) {
  Ctx x;
  Parts q;
  const PtsimJob *job = &plan->job;
  const PtsimLayout *l = &job->layout;
  int32_t rc, i;
  double capacity;
  parts_of(plan, stage, &q);
  if (scratch_bytes < q.total) return PTSIM_ALLOC_ERR_NO_BLOCKS;
  x.plan = plan;
  x.job = job;
  x.stage = stage;
  x.v = (int32_t)plan->num_chunks;
  x.m = (int32_t)plan->num_microbatches;
  x.chunk_layers = (int32_t)plan->chunk_layers[stage];
  x.per_slot = (int32_t)q.per_slot;
  x.tokens = (double)plan->tokens;
  x.tokens_sp = plan->tokens_sp;
  x.layer_input_bytes = ELEM * x.tokens_sp * (double)job->model.hidden_size;
  x.logits_elems = x.tokens * (double)(job->model.vocab_size / l->tp);
  x.out = out;
  x.failed = 0;
  x.step = 0;
  x.item = -1;
  x.kind = PTSIM_LIFETIMES_AT_SETUP;
  x.microbatch = -1;
  x.chunk = -1;
  x.buckets = (int32_t)bucket_count(plan, stage); /* small: the scratch is `need` */
  x.reserved_best = 0.0;
  x.attention_buffer = -1;
  result_init(out, job);
  x.handles = (int32_t *)((char *)scratch + q.handles_at);
  x.main_grads = x.handles + q.slots;
  for (i = 0; i < x.buckets; i++) x.main_grads[i] = -1;
  x.n_gathered = (int32_t)q.units;
  x.gathered = q.units > 0 ? x.main_grads + x.buckets : NULL;
  for (i = 0; i < x.n_gathered; i++) x.gathered[i] = -1;
  x.deferred = x.main_grads + x.buckets + x.n_gathered;
  x.deferred_cap = (int32_t)q.deferred;
  x.n_deferred = 0;
  x.drain_buffers[0] = x.drain_buffers[1] = -1;
  x.live = (int32_t *)((char *)scratch + q.live_at);
  x.live_pos = (int32_t *)((char *)scratch + q.live_pos_at);
  for (i = 0; i < x.m * x.v; i++) x.live_pos[i] = -1;
  x.n_live = 0;
  x.live_cap = (int32_t)q.live_cap;
  x.irregular = 0;
  x.trace_hash = 0;
  x.period = NULL;
  x.period_next = -1;
  capacity = job->hw.memory_bytes - out->outside_bytes;
  rc = ptsim_alloc_init(&x.alloc, opts, capacity > 0.0 ? capacity : 0.0, (PtsimAllocBlock *)scratch,
                        (int32_t)q.storage);
  if (rc != 0) return rc;
  /* The shortcut leaves the result as it is; a timeline wants every item;
   * deferred tensors pile up over a step, which the shortcut does not move. */
  if (!every_item && !timeline && q.deferred == 0)
    ptsim_lifetimes_period_init(&x, (char *)scratch + q.period_at, q.period_bytes, n_items);
  ptsim_lifetimes_build_saved(&x);
  at_start(&x);
  note_peak(&x);
  sample(&x, timeline);
  for (x.step = 0; x.step < steps && !x.failed; x.step++) {
    free_main_grads(&x); /* zero_grad: the last step's fp32 copies go */
    capture_graphs(&x);
    if (x.period) ptsim_lifetimes_period_step(&x);
    for (i = 0; i < n_items && !x.failed; i++) {
      const PtsimScheduleItem *it;
      if (i == x.period_next) {
        i = ptsim_lifetimes_period_at(&x, items, n_items, i);
        if (i >= n_items) break;
      }
      it = &items[i];
      out->items_replayed += 1;
      x.item = i;
      x.kind = it->kind;
      x.microbatch = it->microbatch;
      x.chunk = it->chunk;
      if (it->kind == PTSIM_SCHEDULE_ITEM_FORWARD)
        forward(&x, it->microbatch, it->chunk);
      else if (it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD)
        paired_backward(&x, items, n_items, i);
      else if (it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT)
        backward(&x, it->microbatch, it->chunk, 1);
      else
        release_saved(&x, it->microbatch, it->chunk);
      note_peak(&x);
      sample(&x, timeline);
    }
    if (plan->sync_once)
      ptsim_lifetimes_units_reshard(&x); /* the reduction after the last micro-batch */
    if (!x.failed) {
      x.item = n_items - 1;
      ptsim_lifetimes_drain_deferred(&x);
      optimizer_step(&x);
      note_peak(&x);
      sample(&x, timeline);
    }
    /* Step 0's peaks include what was allocated before it (still held). */
    close_phase(&x, x.step == 0 ? &out->first_step : &out->steady_state);
  }
  result_close(out, job);
  return x.failed == 2 ? PTSIM_ALLOC_ERR_NO_BLOCKS : 0;
}

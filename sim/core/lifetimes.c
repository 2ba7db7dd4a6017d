/* lifetimes.c — tensor lifetimes of one stage through the allocator; see
 * lifetimes.h.
 *
 * Shapes (bytes, one GPU): T = mbs*seq/cp tokens, T_sp = T/tp with SP.
 * The saved tensors of a layer are the analytical estimate's items (the
 * reference's table: norm inputs, QKV input, Q, K, V, attention output,
 * MLP input, the MLP intermediates, dropout masks, s x s scores without
 * flash attention), scaled so that their sum is exactly
 * ptsim_memory_layer_activation_bytes(): the allocator then adds only what
 * the estimate leaves to its 20% margin — caching, rounding, fragmentation,
 * transients. */
#include "lifetimes.h"
#include "memory.h"

#define ELEM 2.0
#define MAX_LAYER_TENSORS 16
#define EXTRA_TENSORS 4 /* per (microbatch, chunk): receive buffer, logits, fp32 logits, loss */
#define STREAM_COMPUTE 0
#define STREAM_COMM 1
/* Megatron's DDP bucket: max(40M, 1M x dp) parameters. */
#define BUCKET_PARAMS 40000000.0
/* Outside the allocator (reference, memory_estimate section 1.7, taken
 * from the seed author's later tool): CUDA context ~300-500 MB, NCCL ~0.5 GB
 * per communicator. */
#define CUDA_CONTEXT_BYTES (500.0 * 1024.0 * 1024.0)
#define NCCL_COMMUNICATOR_BYTES (0.5e9)

typedef struct {
  const char *name;
  double bytes;
} Tensor;

typedef struct {
  const PtsimPlan *plan;
  const PtsimJob *job;       /* &plan->job */
  int64_t stage;
  int32_t v, m, chunk_layers;
  PtsimAllocator alloc;
  int32_t *handles;          /* (m*v) slots of per_slot handles */
  int32_t per_slot;
  Tensor saved[MAX_LAYER_TENSORS];
  int32_t n_saved;
  double layer_input_bytes, tokens, tokens_sp, logits_elems;
  PtsimStageAlloc *out;
  int32_t step, item, kind, microbatch, chunk;
  int failed;
} Ctx;

static PTSIM_HD double dmax(double a, double b) { return a > b ? a : b; }

PTSIM_HD double ptsim_lifetimes_outside_bytes(const PtsimJob *job) {
  const PtsimLayout *l = &job->layout;
  int communicators = 0;
  if (l->tp > 1) communicators++;
  if (l->cp > 1) communicators++;
  if (l->pp > 1) communicators++;
  if (l->dp * l->cp > 1) communicators++; /* the gradient group (dp x cp) */
  if (l->dp > 1 && l->cp > 1) communicators++; /* plus dp alone */
  return CUDA_CONTEXT_BYTES + NCCL_COMMUNICATOR_BYTES * (double)communicators;
}

/* The layer's saved tensors, in the order forward allocates them. */
static PTSIM_HD void build_saved(Ctx *x) {
  const PtsimModel *m = &x->job->model;
  const PtsimLayout *l = &x->job->layout;
  double t = (double)l->tp, T = x->tokens, Tsp = x->tokens_sp, h = (double)m->hidden_size;
  double kv = h * (double)m->num_query_groups / (double)m->num_attention_heads;
  double ffn = (double)m->ffn_hidden_size / t;
  double sum = 0.0, target, scale;
  int32_t i, n = 0;
  Tensor *s = x->saved;
  s[n].name = "norm1_input"; s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "qkv_input"; s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "q"; s[n++].bytes = ELEM * T * h / t;
  s[n].name = "k"; s[n++].bytes = ELEM * T * kv / t;
  s[n].name = "v"; s[n++].bytes = ELEM * T * kv / t;
  if (!l->flash_attention && l->recompute != PTSIM_RECOMPUTE_SELECTIVE) {
    double scores = (double)l->mbs * (double)m->num_attention_heads / t *
                    ((double)l->seq / (double)l->cp) * ((double)l->seq / (double)l->cp);
    s[n].name = "attention_scores"; s[n++].bytes = ELEM * scores;
    s[n].name = "attention_probs"; s[n++].bytes = ELEM * scores;
  }
  s[n].name = "attention_output"; s[n++].bytes = ELEM * T * h / t;
  s[n].name = "norm2_input"; s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "mlp_input"; s[n++].bytes = ELEM * Tsp * h;
  s[n].name = "fc1_output"; s[n++].bytes = ELEM * T * ffn * (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2.0 : 1.0);
  s[n].name = "activation_output"; s[n++].bytes = ELEM * T * ffn;
  if (m->activation == PTSIM_ACTIVATION_SWIGLU) {
    s[n].name = "fc2_input"; s[n++].bytes = ELEM * T * ffn;
  }
  if (l->hidden_dropout > 0.0) {
    s[n].name = "dropout_masks"; s[n++].bytes = 2.0 * Tsp * h;
  }
  for (i = 0; i < n; i++) sum += s[i].bytes;
  target = ptsim_memory_layer_activation_bytes(x->plan, l->recompute != PTSIM_RECOMPUTE_SELECTIVE);
  scale = sum > 0.0 ? target / sum : 1.0;
  for (i = 0; i < n; i++) s[i].bytes *= scale;
  x->n_saved = n;
}

PTSIM_HD int64_t ptsim_lifetimes_scratch_bytes(const PtsimPlan *plan, int64_t stage) {
  const PtsimJob *job = &plan->job;
  int64_t v = plan->num_chunks;
  int64_t m = plan->num_microbatches;
  int64_t layers = plan->stage_layers[stage];
  int64_t per_slot = (layers / v) * MAX_LAYER_TENSORS + EXTRA_TENSORS;
  double bucket = dmax(BUCKET_PARAMS, 1e6 * (double)job->layout.dp);
  int64_t buckets = (int64_t)(plan->stage_parameters[stage] / bucket) + 1;
  int64_t inflight = job->layout.schedule == PTSIM_SCHEDULE_GPIPE
                         ? m * v
                         : (m * v < 2 * job->layout.pp * v + 2 ? m * v : 2 * job->layout.pp * v + 2);
  int64_t live = layers * 6 + 4 * buckets + 16 + inflight * per_slot;
  int64_t blocks = 3 * live + 4096;
  return blocks * (int64_t)sizeof(PtsimAllocBlock) + m * v * per_slot * (int64_t)sizeof(int32_t);
}

/* One allocation; on the first failure the OOM is recorded and the replay
 * stops allocating (later frees of never-allocated tensors are skipped). */
static PTSIM_HD int32_t take(Ctx *x, const char *name, double bytes, int32_t stream) {
  int32_t h;
  int i;
  if (x->failed || bytes <= 0.0) return -1;
  h = ptsim_alloc_malloc(&x->alloc, (int64_t)bytes, stream);
  if (h >= 0) return h;
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
  return -1;
}

static PTSIM_HD void give(Ctx *x, int32_t handle) {
  if (handle >= 0) ptsim_alloc_free(&x->alloc, handle);
}

static PTSIM_HD int32_t *slot(Ctx *x, int32_t mb, int32_t chunk) {
  return x->handles + ((int64_t)mb * x->v + chunk) * x->per_slot;
}

static PTSIM_HD int is_first(const Ctx *x, int32_t chunk) { return x->stage == 0 && chunk == 0; }
static PTSIM_HD int is_last(const Ctx *x, int32_t chunk) {
  return x->stage == x->job->layout.pp - 1 && chunk == x->v - 1;
}

/* The transients of one layer's forward: allocated and freed around the ops. */
static PTSIM_HD void layer_transients(Ctx *x) {
  const PtsimLayout *l = &x->job->layout;
  double h = (double)x->job->model.hidden_size, full = ELEM * x->tokens * h;
  int32_t a, b;
  if (l->tp > 1 && l->sp) { /* all-gather output feeding QKV, then fc1 */
    a = take(x, "sp_allgather", full, STREAM_COMPUTE);
    give(x, a);
  }
  if (l->cp > 1) { /* ring: the K/V block in flight and the one received */
    double kv = ELEM * 2.0 * x->tokens * h * (double)x->job->model.num_query_groups /
                (double)x->job->model.num_attention_heads / (double)l->tp;
    a = take(x, "cp_ring_send", kv, STREAM_COMM);
    b = take(x, "cp_ring_recv", kv, STREAM_COMM);
    give(x, a);
    give(x, b);
  }
  if (l->tp > 1) { /* the row-parallel GEMM output before its reduction */
    a = take(x, "rowparallel_output", full, STREAM_COMPUTE);
    give(x, a);
  }
}

/* Megatron's full recompute of a chunk's layer: uniform recomputes every
 * layer and checkpoints the input of each group of n (recompute_num_layers)
 * layers; block recomputes (checkpointing each input of) the first n
 * layers and stores the rest in full.  n = 0: every layer, one each. */
static PTSIM_HD int recomputed(const Ctx *x, int32_t layer) {
  const PtsimLayout *l = &x->job->layout;
  if (l->recompute != PTSIM_RECOMPUTE_FULL) return 0;
  if (l->recompute_method == PTSIM_RECOMPUTE_METHOD_BLOCK && l->recompute_num_layers > 0)
    return layer < l->recompute_num_layers;
  return 1;
}

static PTSIM_HD int keeps_input(const Ctx *x, int32_t layer) {
  const PtsimLayout *l = &x->job->layout;
  if (l->recompute_method == PTSIM_RECOMPUTE_METHOD_UNIFORM && l->recompute_num_layers > 1)
    return layer % l->recompute_num_layers == 0;
  return 1;
}

static PTSIM_HD void forward(Ctx *x, int32_t mb, int32_t chunk) {
  int32_t *hs = slot(x, mb, chunk);
  int32_t k = 0, layer, i;
  for (i = 0; i < x->per_slot; i++) hs[i] = -1;
  if (!is_first(x, chunk)) hs[k] = take(x, "pp_recv", x->layer_input_bytes, STREAM_COMM);
  k++;
  for (layer = 0; layer < x->chunk_layers; layer++) {
    if (recomputed(x, layer)) {
      /* Only the checkpointed input stays; the working set comes and goes. */
      int32_t tmp[MAX_LAYER_TENSORS];
      hs[k++] = keeps_input(x, layer) ? take(x, "layer_input", x->layer_input_bytes, STREAM_COMPUTE)
                                      : -1;
      for (i = 0; i < x->n_saved; i++) tmp[i] = take(x, x->saved[i].name, x->saved[i].bytes, STREAM_COMPUTE);
      layer_transients(x);
      for (i = x->n_saved - 1; i >= 0; i--) give(x, tmp[i]);
      k += MAX_LAYER_TENSORS - 1;
    } else {
      for (i = 0; i < x->n_saved; i++) {
        hs[k + i] = take(x, x->saved[i].name, x->saved[i].bytes, STREAM_COMPUTE);
        if (i == 4) layer_transients(x); /* after q, k, v: attention and the projections */
      }
      k += MAX_LAYER_TENSORS;
    }
  }
  if (is_last(x, chunk)) { /* logits (bf16), their fp32 copy kept for backward, loss */
    int32_t logits = take(x, "logits", ELEM * x->logits_elems, STREAM_COMPUTE);
    hs[k++] = take(x, "logits_fp32", 4.0 * x->logits_elems, STREAM_COMPUTE);
    give(x, logits);
    hs[k++] = take(x, "loss", 4.0 * x->tokens, STREAM_COMPUTE);
  }
}

/* The saved tensors of a (microbatch, chunk), freed in reverse. */
static PTSIM_HD void release_saved(Ctx *x, int32_t mb, int32_t chunk) {
  int32_t *hs = slot(x, mb, chunk);
  int32_t layer, i;
  for (layer = x->chunk_layers - 1; layer >= 0; layer--) {
    int32_t *lh = hs + 1 + layer * MAX_LAYER_TENSORS;
    for (i = MAX_LAYER_TENSORS - 1; i >= 0; i--) {
      give(x, lh[i]);
      lh[i] = -1;
    }
  }
  give(x, hs[0]); /* the receive buffer */
  hs[0] = -1;
}

/* Backward of a (microbatch, chunk).  keep_saved: the zero-bubble B, whose
 * W still needs the layer inputs; the saved tensors go with the W. */
static PTSIM_HD void backward(Ctx *x, int32_t mb, int32_t chunk, int keep_saved) {
  int32_t *hs = slot(x, mb, chunk);
  int32_t layer, i, grad_in, grad_out;
  int32_t base = 1 + x->chunk_layers * MAX_LAYER_TENSORS;
  if (is_last(x, chunk)) {
    int32_t grad_logits = take(x, "logits_grad", 4.0 * x->logits_elems, STREAM_COMPUTE);
    give(x, hs[base + 1]);
    give(x, hs[base]);
    give(x, grad_logits);
  }
  grad_in = take(x, "activation_grad", x->layer_input_bytes, STREAM_COMM);
  for (layer = x->chunk_layers - 1; layer >= 0; layer--) {
    int32_t *lh = hs + 1 + layer * MAX_LAYER_TENSORS;
    int32_t tmp[MAX_LAYER_TENSORS];
    if (recomputed(x, layer)) /* re-materialise the layer */
      for (i = 0; i < x->n_saved; i++) tmp[i] = take(x, x->saved[i].name, x->saved[i].bytes, STREAM_COMPUTE);
    grad_out = take(x, "activation_grad", x->layer_input_bytes, STREAM_COMPUTE);
    layer_transients(x);
    if (recomputed(x, layer))
      for (i = x->n_saved - 1; i >= 0; i--) give(x, tmp[i]);
    if (!keep_saved)
      for (i = MAX_LAYER_TENSORS - 1; i >= 0; i--) {
        give(x, lh[i]);
        lh[i] = -1;
      }
    give(x, grad_in);
    grad_in = grad_out;
  }
  give(x, grad_in);
  if (!keep_saved) {
    give(x, hs[0]); /* the receive buffer */
    hs[0] = -1;
  }
}

/* Weights per matrix, the gradient buffer and the optimizer shard, per bucket. */
static PTSIM_HD void persistent(Ctx *x) {
  const PtsimJob *job = x->job;
  const PtsimLayout *l = &job->layout;
  double params = x->plan->stage_parameters[x->stage];
  double layer = x->plan->layer_parameters;
  double rest = params - layer * (double)x->plan->stage_layers[x->stage];
  double bucket = dmax(BUCKET_PARAMS, 1e6 * (double)l->dp);
  double grad_bytes = x->plan->grad_bytes;
  double shards = x->plan->optimizer_shards;
  double left;
  int64_t i;
  const PtsimModel *m = &job->model;
  double h = (double)m->hidden_size, t = (double)l->tp;
  double q = (double)(m->num_attention_heads * x->plan->head_dim);
  double kv = (double)(m->num_query_groups * x->plan->head_dim);
  double ffn1 = (double)m->ffn_hidden_size * (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2.0 : 1.0);
  double mats = h * (q + 2.0 * kv) / t + q * h / t + h * ffn1 / t + (double)m->ffn_hidden_size * h / t;
  /* fp8 weight copies beyond the bf16 weights (plan.h) */
  double fp8_cache = x->plan->stage_weight_bytes[x->stage] - ELEM * params;
  for (i = 0; i < x->plan->stage_layers[x->stage]; i++) {
    take(x, "w_qkv", ELEM * h * (q + 2.0 * kv) / t, STREAM_COMPUTE);
    take(x, "w_proj", ELEM * q * h / t, STREAM_COMPUTE);
    take(x, "w_fc1", ELEM * h * ffn1 / t, STREAM_COMPUTE);
    take(x, "w_fc2", ELEM * (double)m->ffn_hidden_size * h / t, STREAM_COMPUTE);
    take(x, "w_small", ELEM * dmax(layer - mats, 0.0), STREAM_COMPUTE); /* norms, biases */
  }
  if (rest > 0.0) take(x, "w_embedding_head", ELEM * rest, STREAM_COMPUTE);
  if (fp8_cache > 0.0) take(x, "fp8_weights", fp8_cache, STREAM_COMPUTE);
  for (left = params; left > 0.0; left -= bucket) {
    double n = left < bucket ? left : bucket;
    take(x, "grad_bucket", grad_bytes * n, STREAM_COMPUTE);
    take(x, "main_param_shard", x->plan->master_bytes * n / shards, STREAM_COMPUTE);
    take(x, "adam_m_shard", x->plan->exp_avg_bytes * n / shards, STREAM_COMPUTE);
    take(x, "adam_v_shard", x->plan->exp_avg_sq_bytes * n / shards, STREAM_COMPUTE);
  }
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

PTSIM_HD int32_t ptsim_lifetimes_replay(const PtsimPlan *plan, int64_t stage,
                                        const PtsimScheduleItem *items, int32_t n_items,
                                        int32_t steps, const PtsimAllocOptions *opts,
                                        void *scratch, int64_t scratch_bytes,
                                        PtsimAllocTimeline *timeline, PtsimStageAlloc *out) {
  Ctx x;
  PtsimAllocStats st;
  const PtsimJob *job = &plan->job;
  const PtsimLayout *l = &job->layout;
  int64_t need = ptsim_lifetimes_scratch_bytes(plan, stage);
  int32_t n_blocks, rc, i;
  double capacity;
  if (scratch_bytes < need) return PTSIM_ALLOC_ERR_NO_BLOCKS;
  x.plan = plan;
  x.job = job;
  x.stage = stage;
  x.v = (int32_t)plan->num_chunks;
  x.m = (int32_t)plan->num_microbatches;
  x.chunk_layers = (int32_t)plan->chunk_layers[stage];
  x.per_slot = x.chunk_layers * MAX_LAYER_TENSORS + EXTRA_TENSORS;
  x.tokens = (double)plan->tokens;
  x.tokens_sp = plan->tokens_sp;
  x.layer_input_bytes = ELEM * x.tokens_sp * (double)job->model.hidden_size;
  x.logits_elems = x.tokens * (double)(job->model.vocab_size / l->tp);
  x.out = out;
  x.failed = 0;
  x.step = 0;
  x.item = -1;
  x.kind = -1;
  x.microbatch = -1;
  x.chunk = -1;
  out->fits = 1;
  out->oom_step = out->oom_item = out->oom_microbatch = out->oom_chunk = out->oom_kind = -1;
  out->oom_request_bytes = 0.0;
  out->oom_tensor[0] = '\0';
  out->outside_bytes = ptsim_lifetimes_outside_bytes(job);
  n_blocks = (int32_t)((need - (int64_t)x.m * x.v * x.per_slot * (int64_t)sizeof(int32_t)) /
                       (int64_t)sizeof(PtsimAllocBlock));
  x.handles = (int32_t *)((char *)scratch + (int64_t)n_blocks * (int64_t)sizeof(PtsimAllocBlock));
  capacity = job->hw.memory_bytes - out->outside_bytes;
  rc = ptsim_alloc_init(&x.alloc, opts, capacity > 0.0 ? capacity : 0.0,
                        (PtsimAllocBlock *)scratch, n_blocks);
  if (rc != 0) return rc;
  build_saved(&x);
  persistent(&x);
  sample(&x, timeline);
  for (x.step = 0; x.step < steps && !x.failed; x.step++) {
    for (i = 0; i < n_items && !x.failed; i++) {
      const PtsimScheduleItem *it = &items[i];
      x.item = i;
      x.kind = it->kind;
      x.microbatch = it->microbatch;
      x.chunk = it->chunk;
      if (it->kind == PTSIM_SCHEDULE_ITEM_FORWARD)
        forward(&x, it->microbatch, it->chunk);
      else if (it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD)
        backward(&x, it->microbatch, it->chunk, 0);
      else if (it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT)
        backward(&x, it->microbatch, it->chunk, 1);
      else
        release_saved(&x, it->microbatch, it->chunk);
      sample(&x, timeline);
    }
  }
  ptsim_alloc_stats(&x.alloc, &st);
  out->allocated_peak_bytes = (double)st.allocated_bytes_peak;
  out->reserved_peak_bytes = (double)st.reserved_bytes_peak;
  out->inactive_split_peak_bytes = (double)st.inactive_split_bytes_peak;
  out->fragmentation = st.reserved_bytes_peak > 0
                           ? 1.0 - (double)st.allocated_bytes_peak / (double)st.reserved_bytes_peak
                           : 0.0;
  out->device_peak_bytes = out->reserved_peak_bytes + out->outside_bytes;
  return x.failed == 2 ? PTSIM_ALLOC_ERR_NO_BLOCKS : 0;
}

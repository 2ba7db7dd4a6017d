/* engine.c — the step simulation; see engine.h, and engine_int.h for the
 * state of a run.
 *
 * Events:
 *   ITEM_DONE(stage, index)   the item at `index` of stage's order ended
 *   WAKE(stage)               an input the stage is waiting for has landed
 * When an item ends, its output's arrival time (end + transfer) is written
 * straight into the consumer's ready table; a WAKE is queued only when the
 * consumer is idle, or when it becomes free before the input lands, so a
 * transfer costs an event only when someone waits for it.  A stage tries to
 * start its next item whenever it becomes free or is woken.
 *
 * Deterministic runs without a trace take the periodic shortcut of
 * engine_period.c, which skips whole periods of the steady state and gives
 * the same result to the nanosecond (and the same event count). */
#include "engine_int.h"
#include "units.h"
#include "scratch.h"

#define EV_ITEM_DONE PTSIM_ENGINE_EV_ITEM_DONE
#define EV_WAKE PTSIM_ENGINE_EV_WAKE
#define NOT_YET PTSIM_ENGINE_NOT_YET

typedef PtsimEngineSim Sim;
typedef PtsimEngineStage StageState;

static PTSIM_HD PtsimTime to_ns(double seconds) {
  return (PtsimTime)(seconds * PTSIM_NS_PER_S + 0.5);
}

/* The event queue's slots: a WAKE for the output of each of the 2 m v
 * forwards and backwards of every stage, and per stage its running item's
 * ITEM_DONE and a WAKE of its own; plus EVENT_SPARE slots of margin over
 * that count, kept from the engine's first version (the tests run without
 * them; a slot never used costs only its bytes: the queue hands slots out
 * lazily). */
#define EVENT_SPARE 8

static PTSIM_HD int32_t event_capacity(int32_t p, int32_t m, int32_t v) {
  return 2 * p * m * v + 2 * p + EVENT_SPARE;
}

/* The shortcut's scratch: the event loop's snapshots or the recurrence's
 * cut records, whichever is larger (a run uses one). */
static PTSIM_HD int64_t aux_bytes(int32_t p, int32_t v) {
  int64_t a = ptsim_engine_period_bytes(p, v), b = ptsim_engine_recur_bytes(p, v);
  return a > b ? a : b;
}

/* `events`: with the event queue's slots (the event loop); without them,
 * what the recurrence needs — a fifth as much for long pipelines. */
static PTSIM_HD int64_t scratch_bytes(const PtsimPlan *plan, int32_t events) {
  int32_t p = (int32_t)plan->num_stages, v = (int32_t)plan->num_chunks;
  int32_t m = (int32_t)plan->num_microbatches;
  int32_t items = plan->schedule_items;
  if (items < 0) return items;
  return 2 * ptsim_scratch_align((int64_t)p * m * v * (int64_t)sizeof(PtsimTime), 8) +
         ptsim_scratch_align((int64_t)p * v * PTSIM_ENGINE_DURATION_SLOTS *
                                 (int64_t)sizeof(PtsimTime),
                             8) +
         ptsim_scratch_align((int64_t)p * (int64_t)sizeof(StageState), 8) +
         ptsim_scratch_align((int64_t)p * v * (int64_t)sizeof(PtsimTime),
                             8) + /* latest backward starts */
         ptsim_scratch_align(aux_bytes(p, v), 8) +
         (events
              ? ptsim_scratch_align((int64_t)event_capacity(p, m, v) * (int64_t)sizeof(PtsimEvent),
                                    8)
              : 0);
}

PTSIM_HD int64_t ptsim_engine_scratch_bytes(const PtsimPlan *plan) {
  return scratch_bytes(plan, 1);
}

PTSIM_HD int64_t ptsim_engine_recurrence_bytes(const PtsimPlan *plan) {
  return scratch_bytes(plan, 0);
}

PTSIM_HD int64_t ptsim_engine_trace_capacity(const PtsimPlan *plan) {
  int64_t p = plan->job.layout.pp, v = plan->job.layout.vp, n = p * (plan->schedule_items + 4 + v);
  int64_t s, c;
  double size, at_end;
  if (!ptsim_plan_dp_buckets(plan)) return n;
  for (s = 0; s < p && s < PTSIM_MAX_STAGES; s++)
    for (c = 0; c < plan->num_chunks; c++) /* a record per bucket's reduction */
      n += ptsim_plan_chunk_buckets(plan, ptsim_plan_chunk_grad_params(plan, s, c, &at_end), &size);
  return n;
}

static PTSIM_HD void trace_add(Sim *sim, int32_t stage, int32_t kind, int32_t mb, int32_t chunk,
                               PtsimTime start, PtsimTime end) {
  PtsimTrace *t = sim->trace;
  if (!t) return;
  if (t->count < t->capacity) {
    PtsimTraceRecord *r = &t->records[t->count];
    r->stage = stage;
    r->kind = kind;
    r->microbatch = mb;
    r->chunk = chunk;
    r->start_ns = start;
    r->end_ns = end;
  }
  t->count++;
}

/* DualPipeV runs the forward of one chunk and the full backward of the
 * other as one overlapped pair, and torchtitan's overlap callback lets each
 * half's expert-parallel all-to-all (dispatch and combine) run under the
 * other half's compute: of the pair whose backward is chunk c's, the
 * forward's all-to-all hides behind the backward's compute (B and W less
 * their all-to-all) and the backward's behind the forward's, each up to
 * that compute.  Capped at the B's duration, from which the engine takes
 * it.  0 for every other schedule, and without experts. */
static PTSIM_HD PtsimTime combined_hidden_ns(const Sim *sim, int32_t s, int32_t c);

static PTSIM_HD PtsimTime overlap_hidden_ns(const Sim *sim, int32_t s, int32_t c) {
  PtsimWork fwd, bwd;
  double a2a_f, a2a_b, hidden;
  if (ptsim_engine_combined(sim)) return combined_hidden_ns(sim, s, c);
  if (sim->job->layout.schedule != PTSIM_SCHEDULE_DUALPIPEV || sim->v != 2) return 0;
  ptsim_workload_chunk(sim->w, s, 1 - c, &fwd);
  ptsim_workload_chunk(sim->w, s, c, &bwd);
  a2a_f = fwd.forward_comm_s[PTSIM_COMM_EP];
  a2a_b = bwd.backward_comm_s[PTSIM_COMM_EP];
  hidden = fmin(a2a_f, bwd.backward_input_s - a2a_b + bwd.backward_weight_s) +
           fmin(a2a_b, fwd.forward_s - a2a_f);
  hidden = fmin(hidden, bwd.backward_input_s);
  return hidden > 0.0 ? to_ns(hidden) : 0;
}

/* Megatron-LM's combined 1F1B (--overlap-moe-expert-parallel-comm): each
 * backward of the steady state runs with the next forward of the stage
 * layer by layer (engine_int.h pairs them), and the pair takes, per MoE
 * layer, ptsim_work_moe_pair_s instead of the two passes' sum.  The
 * layer's parts are the chunk's over its MoE layers: the experts and the
 * dispatch from the workload's moe_mlp, the combine the rest of the
 * all-to-all, and the rest of the compute (attention, dense layers, the
 * embedding and the head) where Megatron runs attention.  The partner
 * forward is taken as this chunk's (interleaved chunks are equal).  A
 * pair of host-bound MoE layers takes at least their issue time.
 * Capped at the backward's duration, from which the engine takes it. */
static PTSIM_HD PtsimTime combined_hidden_ns(const Sim *sim, int32_t s, int32_t c) {
  PtsimWork w;
  const PtsimWork *e = &sim->w->moe_mlp, *m = &sim->w->moe_layer;
  PtsimMoePairParts p;
  int64_t slot = (int64_t)s * sim->w->num_chunks + c;
  int64_t moe = slot < PTSIM_MAX_VSTAGES ? sim->w->chunk_moe_layers[slot] : 0;
  double n, a2a_f, a2a_b, serial, pair, issue, hidden;
  if (moe <= 0) return 0;
  ptsim_workload_chunk(sim->w, s, c, &w);
  n = (double)moe;
  a2a_f = w.forward_comm_s[PTSIM_COMM_EP] / n;
  a2a_b = w.backward_comm_s[PTSIM_COMM_EP] / n;
  p.dispatch_f = fmin(e->forward_comm_s[PTSIM_COMM_EP], a2a_f);
  p.combine_f = a2a_f - p.dispatch_f;
  p.dispatch_b = fmin(e->backward_comm_s[PTSIM_COMM_EP], a2a_b);
  p.combine_b = a2a_b - p.dispatch_b;
  p.mlp_f = e->forward_s;
  p.mlp_b = e->backward_input_s;
  p.mlp_w = e->backward_weight_s;
  p.attn_f = fmax(0.0, (w.forward_s - w.forward_comm_s[PTSIM_COMM_EP]) / n - p.mlp_f);
  p.attn_b = fmax(0.0, (w.backward_input_s - w.backward_comm_s[PTSIM_COMM_EP]) / n - p.mlp_b);
  p.attn_w = fmax(0.0, w.backward_weight_s / n - p.mlp_w);
  serial = p.attn_f + p.dispatch_f + p.mlp_f + p.combine_f + p.combine_b + p.mlp_b + p.mlp_w +
           p.dispatch_b + p.attn_b + p.attn_w;
  pair = ptsim_work_moe_pair_s(&p, sim->job->settings.delay_wgrad_compute);
  /* the CPU issues both passes: a host-bound pass's issue time stays */
  issue = (m->forward_s > sim->w->moe_layer_gpu_s[0] ? m->forward_s : 0.0) +
          (m->backward_input_s + m->backward_weight_s > sim->w->moe_layer_gpu_s[1]
               ? m->backward_input_s + m->backward_weight_s
               : 0.0);
  hidden = n * (serial - fmax(pair, issue));
  hidden = fmin(hidden, w.backward_input_s + w.backward_weight_s);
  return hidden > 0.0 ? to_ns(hidden) : 0;
}

/* Combined 1F1B's hidden all-to-all leaves the stage's exposed
 * communication: the stage's busy time less its items' full durations (m
 * forwards and m backwards a chunk), which counts the pairs the periodic
 * shortcut jumps over too.  Under jitter (every event simulated) the
 * items take it off one by one (engine_int.h). */
static PTSIM_HD void combined_exposed(Sim *sim, int32_t s) {
  PtsimTime full = 0;
  int32_t c;
  if (sim->jitter || !ptsim_engine_combined(sim)) return;
  for (c = 0; c < sim->v; c++) {
    const PtsimTime *d = sim->durations + ((int64_t)s * sim->v + c) * PTSIM_ENGINE_DURATION_SLOTS;
    full += (PtsimTime)sim->m * (d[PTSIM_SCHEDULE_ITEM_FORWARD] + d[PTSIM_SCHEDULE_ITEM_BACKWARD]);
  }
  sim->comm_s[s][PTSIM_COMM_EP] -= (double)(full - sim->stages[s].busy_ns) * PTSIM_S_PER_NS;
}

/* Fills the duration table (stage, chunk, item kind) and the PP transfer
 * in ns, and the blocking communication per stage: every chunk runs m forwards and m backwards,
 * whatever the schedule, so its communication is m x (forward + backward).
 *
 * Before a duration becomes ns, the serial bound of the step (each item
 * once, each after a transfer, then every stage's tail: the most any
 * schedule can take) must fit the clock, scaled by the largest jitter
 * factor; else PTSIM_ENGINE_ERR_TOO_LONG.  The bound only grows, so a
 * duration converted below it is in range too.  NaN fails the test. */
static PTSIM_HD int32_t tabulate(Sim *sim) {
  int32_t s, c, k;
  double scale = sim->jitter ? PTSIM_ENGINE_MAX_JITTER : 1.0;
  double bound = (double)sim->p * (double)sim->items * sim->w->pp_transfer_s +
                 sim->w->embedding_grad_sync_s;
  for (s = 0; s < sim->p; s++)
    bound += sim->w->grad_sync_s[s] + sim->w->optimizer_s[s] + sim->w->param_gather_s[s];
  if (!(bound * scale <= PTSIM_ENGINE_MAX_STEP_S)) return PTSIM_ENGINE_ERR_TOO_LONG;
  for (s = 0; s < sim->p; s++) {
    for (k = 0; k < PTSIM_COMM_KINDS; k++) sim->comm_s[s][k] = 0.0;
    for (c = 0; c < sim->v; c++) {
      PtsimWork work;
      PtsimTime *d = sim->durations + ((int64_t)s * sim->v + c) * PTSIM_ENGINE_DURATION_SLOTS;
      ptsim_workload_chunk(sim->w, s, c, &work);
      /* 1F1B's backward and ZB-H1's split one both counted: a bound */
      bound += (double)sim->m *
               (work.forward_s + 2.0 * (work.backward_input_s + work.backward_weight_s));
      if (!(bound * scale <= PTSIM_ENGINE_MAX_STEP_S)) return PTSIM_ENGINE_ERR_TOO_LONG;
      d[PTSIM_SCHEDULE_ITEM_FORWARD] = to_ns(work.forward_s);
      d[PTSIM_SCHEDULE_ITEM_BACKWARD] = to_ns(work.backward_input_s + work.backward_weight_s);
      d[PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT] = to_ns(work.backward_input_s);
      d[PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT] = to_ns(work.backward_weight_s);
      d[PTSIM_ENGINE_HIDDEN_SLOT] = overlap_hidden_ns(sim, s, c);
      for (k = 0; k < PTSIM_COMM_KINDS; k++)
        sim->comm_s[s][k] += (double)sim->m * (work.forward_comm_s[k] + work.backward_comm_s[k]);
    }
  }
  sim->pp_ns = to_ns(sim->w->pp_transfer_s); /* inside the bound checked above */
  return 0;
}

static PTSIM_HD int32_t try_start(Sim *sim, int32_t stage, PtsimTime now) {
  StageState *st = &sim->stages[stage];
  const PtsimScheduleItem *it = &st->item;
  PtsimTime ready, dur;
  if (st->busy || st->next >= sim->items) return 0;
  ready = ptsim_engine_input_ready(sim, stage);
  if (ready == NOT_YET) return 0; /* its producer has not finished: it will wake us */
  if (ready > now)                /* in flight: wake when it lands */
    return ptsim_event_queue_push(&sim->queue, ready, EV_WAKE, stage, 0) < 0
               ? PTSIM_ENGINE_ERR_QUEUE
               : 0;
  /* Idle time spent on a transfer that was in flight counts as PP wait. */
  if (ready > st->free_at && sim->pp_ns > 0) {
    PtsimTime sent = ready - sim->pp_ns;
    PtsimTime from = sent > st->free_at ? sent : st->free_at;
    if (ready > from) st->pp_wait_ns += ready - from;
  }
  dur = ptsim_engine_item_ns(sim, stage, st->next, it);
  if (sim->jitter) {
    const PtsimJitter *j = sim->jitter;
    double factor = exp(j->sigma * ptsim_rng_normal(&sim->rng) - 0.5 * j->sigma * j->sigma);
    if (j->straggler_rate > 0.0 && ptsim_rng_uniform(&sim->rng) <= j->straggler_rate)
      factor *= j->straggler_slowdown;
    if (!(factor <= PTSIM_ENGINE_MAX_JITTER)) factor = PTSIM_ENGINE_MAX_JITTER; /* NaN too */
    dur = (PtsimTime)((double)dur * factor + 0.5);
  }
  if (it->kind != PTSIM_SCHEDULE_ITEM_FORWARD && it->kind != PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT) {
    st->last_backward_start[it->chunk] = now;
  }
  st->busy = 1;
  st->busy_ns += dur;
  trace_add(sim, stage, it->kind, it->microbatch, it->chunk, now, now + dur);
  if (ptsim_event_queue_push(&sim->queue, now + dur, EV_ITEM_DONE, stage, st->next) < 0)
    return PTSIM_ENGINE_ERR_QUEUE;
  return 0;
}

/* The item just ended: its output lands after the transfer on the next
 * virtual stage (a forward's) or the previous one (a backward's); the loss
 * needs no landing (engine_int.h). */
static PTSIM_HD int32_t item_done(Sim *sim, int32_t stage, int32_t index, PtsimTime now) {
  StageState *st = &sim->stages[stage];
  PtsimScheduleItem it = st->item; /* the running item is `next` */
  int32_t to_stage, to_chunk;
  PtsimTime *ready = it.kind == PTSIM_SCHEDULE_ITEM_FORWARD ? sim->fwd_ready : sim->bwd_ready;
  st->busy = 0;
  st->next = index + 1;
  st->free_at = now;
  ptsim_engine_stage_load(sim, stage);
  if (ptsim_engine_output_to(sim, stage, &it, &to_stage, &to_chunk)) {
    ready[ptsim_engine_slot(sim, to_stage, it.microbatch, to_chunk)] = now + sim->pp_ns;
    if (!sim->stages[to_stage].busy &&
        ptsim_event_queue_push(&sim->queue, now + sim->pp_ns, EV_WAKE, to_stage, 0) < 0)
      return PTSIM_ENGINE_ERR_QUEUE;
  }
  return try_start(sim, stage, now);
}

/* A bucket's reduction (or gather) time: the stage's over its trainable
 * parameters, in proportion to the bucket's. */
static PTSIM_HD PtsimTime bucket_ns(double stage_s, double params, double stage_params) {
  return stage_params > 0.0 ? to_ns(stage_s * params / stage_params) : 0;
}

static PTSIM_HD double stage_grad_params(const Sim *sim, int32_t stage) {
  double total = 0.0, at_end;
  int32_t c;
  for (c = 0; c < sim->v; c++) total += ptsim_plan_chunk_grad_params(sim->plan, stage, c, &at_end);
  return total;
}

/* Megatron DDP's buckets of chunk c (plan_buckets.c) on the stage's data-
 * parallel stream, from `stream` (when the stream is free): bucket k's
 * gradients are ready once the chunk's last backward has computed them —
 * the head and the layers in proportion to their parameters (their
 * GEMMs' share of the compute) from the backward's start, the embedding
 * as it ends — and the stream serves the buckets in order.  Returns when
 * the stream is free again. */
static PTSIM_HD PtsimTime chunk_buckets(Sim *sim, int32_t stage, int32_t c, PtsimTime stream,
                                        double stage_params) {
  const StageState *st = &sim->stages[stage];
  const PtsimTime *d = sim->durations + ((int64_t)stage * sim->v + c) * PTSIM_ENGINE_DURATION_SLOTS;
  double at_end, size, done = 0.0;
  double params = ptsim_plan_chunk_grad_params(sim->plan, stage, c, &at_end);
  double flowing = params - at_end;
  int32_t n = ptsim_plan_chunk_buckets(sim->plan, params, &size), k;
  PtsimTime from = st->last_backward_start[c];
  /* the backward's end: as tabulated (an item's own, jittered or
   * shortened by an overlapped pair, is not kept), within the stage's */
  PtsimTime to = from + d[PTSIM_SCHEDULE_ITEM_BACKWARD];
  if (to > st->free_at) to = st->free_at;
  if (to < from) to = from;
  for (k = 0; k < n; k++) {
    double bucket = params - done < size ? params - done : size;
    PtsimTime ready = to, start, dur = bucket_ns(sim->w->grad_sync_s[stage], bucket, stage_params);
    done += bucket;
    if (done < flowing) ready = from + (PtsimTime)((double)(to - from) * (done / flowing) + 0.5);
    start = ready > stream ? ready : stream;
    trace_add(sim, stage, PTSIM_TRACE_GRAD_SYNC, k, c, start, start + dur);
    stream = start + dur;
  }
  return stream;
}

/* The data-parallel stream of one stage: the gradient reduction in
 * Megatron DDP's buckets as the last backward of each chunk fills them
 * (ptsim_plan_dp_buckets), else each chunk's share of it queued when the
 * chunk's last backward starts (overlap: PyTorch's FSDP/DDP) or the whole
 * when the stage's compute ends; they run back to back. */
static PTSIM_HD PtsimTime grad_sync_end(Sim *sim, int32_t stage) {
  const StageState *st = &sim->stages[stage];
  PtsimTime stream = 0, share = to_ns(sim->w->grad_sync_s[stage] / (double)sim->v);
  int32_t c;
  if (share <= 0) return st->free_at;
  if (!sim->plan->grad_sync_overlap) {
    trace_add(sim, stage, PTSIM_TRACE_GRAD_SYNC, -1, -1, st->free_at, st->free_at + share * sim->v);
    return st->free_at + share * sim->v;
  }
  /* Chunks finish in reverse order (chunk v-1's backwards come first). */
  if (ptsim_plan_dp_buckets(sim->plan)) {
    double total = stage_grad_params(sim, stage);
    for (c = sim->v - 1; c >= 0; c--) stream = chunk_buckets(sim, stage, c, stream, total);
  } else {
    for (c = sim->v - 1; c >= 0; c--) {
      PtsimTime start = st->last_backward_start[c] > stream ? st->last_backward_start[c] : stream;
      trace_add(sim, stage, PTSIM_TRACE_GRAD_SYNC, -1, c, start, start + share);
      stream = start + share;
    }
  }
  return stream > st->free_at ? stream : st->free_at;
}

/* Lays a run out in scratch; `events`: the event loop's queue too (the
 * recurrence has none). */
static PTSIM_HD int32_t carve(Sim *sim, void *scratch, int64_t bytes, int32_t shortcut,
                              int32_t events) {
  char *base = (char *)scratch;
  int64_t off = 0, n = (int64_t)sim->p * sim->m * sim->v;
  int32_t s, cap = event_capacity(sim->p, sim->m, sim->v);
  PtsimEvent *slots;
  PtsimTime *last;
  if (bytes < scratch_bytes(sim->plan, events)) return PTSIM_ENGINE_ERR_SCRATCH;
  /* What every run touches first, so that one layout after another finds
   * it in cache; the ready tables, of which a run touches a few entries,
   * last. */
  sim->durations = (PtsimTime *)(base + off);
  off += ptsim_scratch_align((int64_t)sim->p * sim->v * PTSIM_ENGINE_DURATION_SLOTS *
                                 (int64_t)sizeof(PtsimTime),
                             8);
  sim->stages = (StageState *)(base + off);
  off += ptsim_scratch_align((int64_t)sim->p * (int64_t)sizeof(StageState), 8);
  last = (PtsimTime *)(base + off);
  off += ptsim_scratch_align((int64_t)sim->p * sim->v * (int64_t)sizeof(PtsimTime), 8);
  sim->period = (struct PtsimEnginePeriod *)0;
  sim->aux = base + off;
  if (shortcut) ptsim_engine_period_init(sim, base + off);
  sim->track = shortcut;
  off += ptsim_scratch_align(aux_bytes(sim->p, sim->v), 8);
  slots = (PtsimEvent *)(base + off);
  if (events) off += ptsim_scratch_align((int64_t)cap * (int64_t)sizeof(PtsimEvent), 8);
  sim->fwd_ready = (PtsimTime *)(base + off);
  off += ptsim_scratch_align(n * (int64_t)sizeof(PtsimTime), 8);
  sim->bwd_ready = (PtsimTime *)(base + off);
  for (s = 0; s < sim->p; s++) {
    StageState *st = &sim->stages[s];
    int32_t c, rc;
    st->next = 0;
    st->busy = 0;
    st->free_at = 0;
    st->busy_ns = st->pp_wait_ns = 0;
    st->last_backward_start = last + (int64_t)s * sim->v;
    for (c = 0; c < sim->v; c++) st->last_backward_start[c] = 0;
    rc = ptsim_schedule_shape(sim->job->layout.schedule, sim->p, sim->m, sim->v,
                              sim->plan->microbatch_group, s, &st->shape);
    if (rc < 0) return rc;
    st->last_forward = ptsim_schedule_last_index(&st->shape, PTSIM_SCHEDULE_ITEM_FORWARD);
    st->last_backward = ptsim_schedule_last_index(&st->shape, PTSIM_SCHEDULE_ITEM_BACKWARD);
    st->touched_lo = sim->items;
    st->touched_hi = -1;
  }
  for (s = 0; s < sim->p; s++) ptsim_engine_stage_load(sim, s);
  if (events && ptsim_event_queue_init(&sim->queue, slots, cap) != 0)
    return PTSIM_ENGINE_ERR_SCRATCH;
  return 0;
}

static PTSIM_HD void summarise(Sim *sim, PtsimTimeResult *out) {
  const PtsimJob *job = sim->job;
  const PtsimWorkload *w = sim->w;
  PtsimTime pipeline_end = 0, sync_end = 0, tail = 0, embedding = to_ns(w->embedding_grad_sync_s);
  double busy_sum = 0.0, peak_flops = job->hw.peak_bf16_flops;
  double executed = 0.0;
  int32_t s, k;
  int64_t busiest = 0;
  for (s = 0; s < sim->p; s++) {
    if (sim->stages[s].free_at > pipeline_end) pipeline_end = sim->stages[s].free_at;
  }
  for (s = 0; s < sim->p; s++) {
    const StageState *st = &sim->stages[s];
    PtsimStageTime *o = &out->stages[s];
    PtsimTime g = grad_sync_end(sim, s);
    PtsimTime after;
    PtsimWork chunk;
    int32_t c;
    if (g > sync_end) sync_end = g;
    /* Global gradient-norm sync, then optimizer + parameter gather. */
    after = to_ns(w->optimizer_s[s]) +
            (sim->plan->param_gather_hidden ? 0 : to_ns(w->param_gather_s[s]));
    if (after > tail) tail = after;
    o->busy_s = (double)st->busy_ns * PTSIM_S_PER_NS;
    o->end_s = (double)st->free_at * PTSIM_S_PER_NS;
    o->idle_s = (double)(pipeline_end - st->busy_ns) * PTSIM_S_PER_NS;
    o->pp_wait_s = (double)st->pp_wait_ns * PTSIM_S_PER_NS;
    o->grad_sync_end_s = (double)g * PTSIM_S_PER_NS;
    o->compute_s = o->busy_s;
    combined_exposed(sim, s);
    for (k = 0; k < PTSIM_COMM_KINDS; k++) {
      o->exposed_comm_s[k] = sim->comm_s[s][k];
      o->compute_s -= sim->comm_s[s][k];
    }
    o->exposed_comm_s[PTSIM_COMM_PP] = o->pp_wait_s;
    busy_sum += o->busy_s;
    if (st->busy_ns > sim->stages[busiest].busy_ns) busiest = s;
    for (c = 0; c < sim->v; c++) {
      ptsim_workload_chunk(w, s, c, &chunk);
      executed += chunk.flops * (double)sim->m;
    }
  }
  /* The tied embedding's all-reduce (workload.h) runs once the last
   * stage's gradients are reduced; the optimizer waits for it everywhere. */
  sync_end += embedding;
  for (s = 0; s < sim->p; s++) {
    trace_add(sim, s, PTSIM_TRACE_OPTIMIZER, -1, -1, sync_end, sync_end + to_ns(w->optimizer_s[s]));
    if (!sim->plan->param_gather_hidden && w->param_gather_s[s] > 0.0)
      trace_add(sim, s, PTSIM_TRACE_PARAM_GATHER, -1, -1, sync_end + to_ns(w->optimizer_s[s]),
                sync_end + to_ns(w->optimizer_s[s]) + to_ns(w->param_gather_s[s]));
  }
  out->num_stages = sim->p;
  out->events = sim->events;
  out->events_simulated = sim->simulated;
  out->pipeline_s = (double)pipeline_end * PTSIM_S_PER_NS;
  out->step_s = (double)(sync_end + tail) * PTSIM_S_PER_NS;
  out->optimizer_s = (double)tail * PTSIM_S_PER_NS;
  out->busiest_stage = busiest;
  out->bubble_fraction = pipeline_end > 0 ? 1.0 - busy_sum / (double)sim->p / out->pipeline_s : 0.0;
  out->compute_s = out->stages[busiest].compute_s;
  for (k = 0; k < PTSIM_COMM_KINDS; k++)
    out->exposed_comm_s[k] = out->stages[busiest].exposed_comm_s[k];
  /* dp: the gradient tail plus the parameter gather, after what the busiest
   * stage's items waited for (FSDP units); the optimizer is not comm. */
  {
    double gather = 0.0;
    if (!sim->plan->param_gather_hidden)
      for (s = 0; s < sim->p; s++)
        if (w->param_gather_s[s] > gather) gather = w->param_gather_s[s];
    out->exposed_comm_s[PTSIM_COMM_DP] +=
        (double)(sync_end - embedding - pipeline_end) * PTSIM_S_PER_NS + gather;
  }
  /* pp: the embedding group is the pipeline group's two ends, and the
   * all-reduce exists because pp > 1 split the tied weight (dp = 1 has it) */
  out->exposed_comm_s[PTSIM_COMM_PP] += (double)embedding * PTSIM_S_PER_NS;
  /* executed FLOPs are per GPU of each stage; all tp x cp x dp peers alike */
  executed *= (double)(job->layout.tp * job->layout.cp * job->layout.dp);
  out->tokens_per_s = out->step_s > 0.0 ? (double)(job->layout.gbs * job->layout.seq) / out->step_s
                                        : 0.0;
  out->tflops_per_gpu = out->step_s > 0.0 ? w->model_flops / out->step_s /
                                                (double)job->layout.gpus / PTSIM_FLOPS_PER_TFLOPS
                                          : 0.0;
  out->mfu = peak_flops > 0.0 ? out->tflops_per_gpu * PTSIM_FLOPS_PER_TFLOPS / peak_flops : 0.0;
  out->hfu = peak_flops > 0.0 && out->step_s > 0.0
                 ? executed / out->step_s / (double)job->layout.gpus / peak_flops
                 : 0.0;
}

PTSIM_HD int32_t ptsim_engine_scan_pending(PtsimEngineSim *sim, int32_t s, int32_t from,
                                           const int32_t *done_below, PtsimTime ref, int64_t *w,
                                           int32_t *len, int32_t cap, int32_t *pending,
                                           int32_t pending_cap, int32_t scan_cap) {
  StageState *st = &sim->stages[s];
  int32_t v = sim->v, i, reads = 0, count_at = *len;
  /* the streams this stage has: forwards from the previous virtual stage,
   * backwards from the next one (the loss is never pending); a stage of
   * two chunks or more runs a virtual stage with each */
  int32_t open = ((s != sim->vstages->first_stage || v > 1) << PTSIM_SCHEDULE_INPUT_FORWARD) |
                 ((s != sim->vstages->last_stage || v > 1) << PTSIM_SCHEDULE_INPUT_BACKWARD);
  if (*len >= cap) return -1;
  w[(*len)++] = 0;
  for (i = from; open && i < sim->items; i++) {
    PtsimScheduleItem it, src;
    int32_t from_stage = 0, input, j;
    if (i > st->last_forward) open &= ~(1 << PTSIM_SCHEDULE_INPUT_FORWARD);
    if (i > st->last_backward) open &= ~(1 << PTSIM_SCHEDULE_INPUT_BACKWARD);
    if (!open) break;
    if (++reads > scan_cap) return -1;
    ptsim_schedule_item_at(&st->shape, i, &it);
    ptsim_engine_touch(st, i);
    input = ptsim_schedule_input(sim->vstages, s, &it, &from_stage, &src);
    if ((input != PTSIM_SCHEDULE_INPUT_FORWARD && input != PTSIM_SCHEDULE_INPUT_BACKWARD) ||
        !(open & (1 << input)))
      continue;
    j = ptsim_schedule_index_of(&sim->stages[from_stage].shape, src.kind, src.microbatch,
                                src.chunk);
    ptsim_engine_touch(&sim->stages[from_stage], j);
    if (j >= done_below[from_stage]) { /* the first missing one: the rest are too */
      open &= ~(1 << input);
      continue;
    }
    if (*pending >= pending_cap || *len + 2 > cap) return -1;
    w[(*len)++] = i - from;
    w[(*len)++] = (input == PTSIM_SCHEDULE_INPUT_FORWARD
                       ? sim->fwd_ready
                       : sim->bwd_ready)[ptsim_engine_slot(sim, s, it.microbatch, it.chunk)] -
                  ref;
    w[count_at] += 1;
    *pending += 1;
  }
  return 0;
}

/* What every run starts from; a negative code when the schedule cannot
 * be built. */
static PTSIM_HD int32_t setup(Sim *sim, const PtsimPlan *plan, const PtsimWorkload *workload,
                              const PtsimJitter *jitter, PtsimTrace *trace) {
  sim->plan = plan;
  sim->job = &plan->job;
  sim->vstages = &plan->vstages;
  sim->w = workload;
  sim->p = (int32_t)plan->num_stages;
  sim->v = (int32_t)plan->num_chunks;
  sim->m = (int32_t)plan->num_microbatches;
  sim->items = plan->schedule_items;
  sim->trace = trace;
  if (trace) trace->count = 0;
  sim->jitter = jitter;
  if (jitter) ptsim_rng_init(&sim->rng, jitter->seed, jitter->subsequence);
  sim->pp_ns = 0; /* tabulate converts it once the clock's range is checked */
  sim->events = sim->simulated = 0;
  return sim->items < 0 ? sim->items : 0;
}

static PTSIM_HD int32_t engine_simulate(const PtsimPlan *plan, const PtsimWorkload *workload,
                                        const PtsimJitter *jitter, int32_t shortcut, void *scratch,
                                        int64_t scratch_bytes, PtsimTrace *trace,
                                        PtsimTimeResult *out) {
  Sim sim;
  PtsimEvent ev;
  int32_t rc, s;
  int64_t total_items;
  rc = setup(&sim, plan, workload, jitter, trace);
  if (rc != 0) return rc;
  /* A trace lists every item and a jittered run has no period: both need
   * every event. */
  rc = carve(&sim, scratch, scratch_bytes, shortcut && !trace && !jitter, 1);
  if (rc != 0) return rc;
  rc = tabulate(&sim);
  if (rc != 0) return rc;
  for (s = 0; s < sim.p; s++) {
    rc = try_start(&sim, s, 0);
    if (rc != 0) return rc;
  }
  while (ptsim_event_queue_pop(&sim.queue, &ev) == 0) {
    sim.events++;
    sim.simulated++;
    if (ev.kind == EV_ITEM_DONE)
      rc = item_done(&sim, ev.a, ev.b, ev.time);
    else
      rc = try_start(&sim, ev.a, ev.time);
    if (rc != 0) return rc;
    if (sim.period && ev.kind == EV_ITEM_DONE && ev.a == 0) {
      rc = ptsim_engine_period_check(&sim, ev.b, ev.time);
      if (rc != 0) return rc;
    }
  }
  total_items = 0;
  for (s = 0; s < sim.p; s++) total_items += sim.stages[s].next;
  if (total_items != (int64_t)sim.p * sim.items) return PTSIM_ENGINE_ERR_STALL;
  summarise(&sim, out);
  return 0;
}

PTSIM_HD int32_t ptsim_engine_run(const PtsimPlan *plan, const PtsimWorkload *workload,
                                  void *scratch, int64_t scratch_bytes, PtsimTrace *trace,
                                  PtsimTimeResult *out) {
  return engine_simulate(plan, workload, (const PtsimJitter *)0, 1, scratch, scratch_bytes, trace,
                         out);
}

PTSIM_HD int32_t ptsim_engine_run_full(const PtsimPlan *plan, const PtsimWorkload *workload,
                                       void *scratch, int64_t scratch_bytes, PtsimTrace *trace,
                                       PtsimTimeResult *out) {
  return engine_simulate(plan, workload, (const PtsimJitter *)0, 0, scratch, scratch_bytes, trace,
                         out);
}

PTSIM_HD int32_t ptsim_engine_run_jittered(const PtsimPlan *plan, const PtsimWorkload *workload,
                                           const PtsimJitter *jitter, void *scratch,
                                           int64_t scratch_bytes, PtsimTrace *trace,
                                           PtsimTimeResult *out) {
  return engine_simulate(plan, workload, jitter, 1, scratch, scratch_bytes, trace, out);
}

PTSIM_HD int32_t ptsim_engine_run_replayed(const PtsimPlan *plan, const PtsimWorkload *workload,
                                           void *cache, void *scratch, int64_t scratch_bytes,
                                           PtsimTimeResult *out) {
  Sim sim;
  int32_t rc = setup(&sim, plan, workload, (const PtsimJitter *)0, (PtsimTrace *)0);
  if (rc != 0) return rc;
  rc = carve(&sim, scratch, scratch_bytes, 0, 0);
  if (rc != 0) return rc;
  rc = tabulate(&sim);
  if (rc != 0) return rc;
  if (!cache || ptsim_engine_replay(&sim, cache) != 0) {
    rc = ptsim_engine_recur(&sim, sim.aux);
    if (rc != 0) return rc;
    if (cache) ptsim_engine_replay_learn(&sim, cache);
  }
  summarise(&sim, out);
  return 0;
}

PTSIM_HD int32_t ptsim_engine_run_recurrence(const PtsimPlan *plan, const PtsimWorkload *workload,
                                             void *scratch, int64_t scratch_bytes,
                                             PtsimTimeResult *out) {
  return ptsim_engine_run_replayed(plan, workload, (void *)0, scratch, scratch_bytes, out);
}

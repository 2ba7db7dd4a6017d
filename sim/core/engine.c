/* engine.c — the step simulation; see engine.h.
 *
 * Events:
 *   ITEM_DONE(stage, index)   the item at `index` of stage's order ended
 *   WAKE(stage)               an input the stage is waiting for has landed
 * When an item ends, its output's arrival time (end + transfer) is written
 * straight into the consumer's ready table; a WAKE is queued only when the
 * consumer is idle, or when it becomes free before the input lands, so a
 * transfer costs an event only when someone waits for it.  A stage tries to
 * start its next item whenever it becomes free or is woken. */
#include "engine.h"
#include "rng.h"

#define EV_ITEM_DONE 0
#define EV_WAKE 1
#define NOT_YET (-1)
#define MAX_CHUNKS 16 /* virtual stages per rank the engine supports */

typedef struct {
  int32_t next;          /* index of the next item of the order */
  int32_t busy;          /* an item is running */
  PtsimTime free_at;     /* when the stream became free */
  PtsimTime busy_ns;
  PtsimTime end_ns;
  PtsimTime pp_wait_ns;
  PtsimTime last_backward_start[MAX_CHUNKS]; /* per chunk: its latest B began */
} StageState;

typedef struct {
  const PtsimPlan *plan;
  const PtsimJob *job;         /* &plan->job */
  const PtsimWorkload *w;
  int32_t p, m, v, items;
  PtsimScheduleItem *orders;   /* p * items */
  PtsimTime *fwd_ready;        /* p * m * v: arrival time or NOT_YET */
  PtsimTime *bwd_ready;
  PtsimTime *durations;        /* p * v * 4: ns per (stage, chunk, item kind) */
  StageState *stages;          /* p */
  PtsimEventQueue queue;
  PtsimTrace *trace;
  const PtsimJitter *jitter;   /* NULL: deterministic */
  PtsimRng rng;
  PtsimTime pp_ns;
  int64_t events;
  double comm_s[PTSIM_MAX_STAGES][PTSIM_COMM_KINDS];
} Sim;

static PTSIM_HD PtsimTime to_ns(double seconds) {
  return (PtsimTime)(seconds * 1e9 + 0.5);
}

static PTSIM_HD int64_t align8(int64_t n) { return (n + 7) & ~(int64_t)7; }

static PTSIM_HD int32_t event_capacity(int32_t p, int32_t m, int32_t v) {
  return 2 * p * m * v + 2 * p + 8;
}

PTSIM_HD int64_t ptsim_engine_scratch_bytes(const PtsimPlan *plan) {
  int32_t p = (int32_t)plan->num_stages, v = (int32_t)plan->num_chunks;
  int32_t m = (int32_t)plan->num_microbatches;
  int32_t items = plan->schedule_items;
  if (items < 0) return items;
  if (v > MAX_CHUNKS) return PTSIM_SCHEDULE_ERR_TOO_LARGE;
  return align8((int64_t)p * items * (int64_t)sizeof(PtsimScheduleItem)) +
         2 * align8((int64_t)p * m * v * (int64_t)sizeof(PtsimTime)) +
         align8((int64_t)p * v * 4 * (int64_t)sizeof(PtsimTime)) +
         align8((int64_t)p * (int64_t)sizeof(StageState)) +
         align8((int64_t)event_capacity(p, m, v) * (int64_t)sizeof(PtsimEvent));
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

/* Fills the duration table (stage, chunk, item kind) in ns and the blocking
 * communication per stage: every chunk runs m forwards and m backwards,
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
  double bound = (double)sim->p * (double)sim->items * sim->w->pp_transfer_s;
  for (s = 0; s < sim->p; s++)
    bound += sim->w->grad_sync_s[s] + sim->w->optimizer_s[s] + sim->w->param_gather_s[s];
  if (!(bound * scale <= PTSIM_ENGINE_MAX_STEP_S)) return PTSIM_ENGINE_ERR_TOO_LONG;
  for (s = 0; s < sim->p; s++) {
    for (k = 0; k < PTSIM_COMM_KINDS; k++) sim->comm_s[s][k] = 0.0;
    for (c = 0; c < sim->v; c++) {
      PtsimWork work;
      PtsimTime *d = sim->durations + ((int64_t)s * sim->v + c) * 4;
      ptsim_workload_chunk(sim->w, s, c, &work);
      /* 1F1B's backward and ZB-H1's split one both counted: a bound */
      bound += (double)sim->m *
               (work.forward_s + 2.0 * (work.backward_input_s + work.backward_weight_s));
      if (!(bound * scale <= PTSIM_ENGINE_MAX_STEP_S)) return PTSIM_ENGINE_ERR_TOO_LONG;
      d[PTSIM_SCHEDULE_ITEM_FORWARD] = to_ns(work.forward_s);
      d[PTSIM_SCHEDULE_ITEM_BACKWARD] = to_ns(work.backward_input_s + work.backward_weight_s);
      d[PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT] = to_ns(work.backward_input_s);
      d[PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT] = to_ns(work.backward_weight_s);
      for (k = 0; k < PTSIM_COMM_KINDS; k++)
        sim->comm_s[s][k] += (double)sim->m * (work.forward_comm_s[k] + work.backward_comm_s[k]);
    }
  }
  return 0;
}

/* When the item's input is available, or NOT_YET. */
static PTSIM_HD PtsimTime input_ready(const Sim *sim, int32_t stage, const PtsimScheduleItem *it) {
  int64_t idx = ((int64_t)stage * sim->m + it->microbatch) * sim->v + it->chunk;
  if (it->kind == PTSIM_SCHEDULE_ITEM_FORWARD) {
    if (stage == 0 && it->chunk == 0) return 0;
    return sim->fwd_ready[idx];
  }
  if (it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT) return 0; /* its B ran earlier in order */
  return sim->bwd_ready[idx];
}

static PTSIM_HD int32_t try_start(Sim *sim, int32_t stage, PtsimTime now) {
  StageState *st = &sim->stages[stage];
  const PtsimScheduleItem *it;
  PtsimTime ready, dur;
  if (st->busy || st->next >= sim->items) return 0;
  it = &sim->orders[(int64_t)stage * sim->items + st->next];
  ready = input_ready(sim, stage, it);
  if (ready == NOT_YET) return 0; /* its producer has not finished: it will wake us */
  if (ready > now) /* in flight: wake when it lands */
    return ptsim_event_queue_push(&sim->queue, ready, EV_WAKE, stage, 0) < 0
               ? PTSIM_ENGINE_ERR_QUEUE
               : 0;
  /* Idle time spent on a transfer that was in flight counts as PP wait. */
  if (ready > st->free_at && sim->pp_ns > 0) {
    PtsimTime sent = ready - sim->pp_ns;
    PtsimTime from = sent > st->free_at ? sent : st->free_at;
    if (ready > from) st->pp_wait_ns += ready - from;
  }
  dur = sim->durations[((int64_t)stage * sim->v + it->chunk) * 4 + it->kind];
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

/* The item just ended: its output lands on the next virtual stage after
 * the transfer. */
static PTSIM_HD int32_t item_done(Sim *sim, int32_t stage, int32_t index, PtsimTime now) {
  const PtsimScheduleItem *it = &sim->orders[(int64_t)stage * sim->items + index];
  StageState *st = &sim->stages[stage];
  int32_t p = sim->p, v = sim->v, mb = it->microbatch, c = it->chunk;
  int32_t to_stage = -1, to_chunk = -1;
  PtsimTime *ready = sim->fwd_ready;
  st->busy = 0;
  st->next = index + 1;
  st->free_at = now;
  st->end_ns = now;
  if (it->kind == PTSIM_SCHEDULE_ITEM_FORWARD) {
    ready = sim->fwd_ready;
    if (stage < p - 1) {
      to_stage = stage + 1; to_chunk = c;
    } else if (c < v - 1) {
      to_stage = 0; to_chunk = c + 1;
    } else { /* the loss: this stage's own backward may start */
      sim->bwd_ready[((int64_t)stage * sim->m + mb) * v + c] = now;
    }
  } else if (it->kind != PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT) {
    ready = sim->bwd_ready;
    if (stage > 0) {
      to_stage = stage - 1; to_chunk = c;
    } else if (c > 0) {
      to_stage = p - 1; to_chunk = c - 1;
    }
  }
  if (to_stage >= 0) {
    ready[((int64_t)to_stage * sim->m + mb) * v + to_chunk] = now + sim->pp_ns;
    if (!sim->stages[to_stage].busy &&
        ptsim_event_queue_push(&sim->queue, now + sim->pp_ns, EV_WAKE, to_stage, 0) < 0)
      return PTSIM_ENGINE_ERR_QUEUE;
  }
  return try_start(sim, stage, now);
}

/* The data-parallel stream of one stage: each chunk's share of the
 * gradient reduction is queued when the chunk's last backward starts
 * (overlap) or when the stage's compute ends; they run back to back. */
static PTSIM_HD PtsimTime grad_sync_end(Sim *sim, int32_t stage) {
  const StageState *st = &sim->stages[stage];
  PtsimTime stream = 0, share = to_ns(sim->w->grad_sync_s[stage] / (double)sim->v);
  int32_t c;
  if (share <= 0) return st->end_ns;
  if (!sim->job->layout.overlap_grad_reduce) {
    trace_add(sim, stage, PTSIM_TRACE_GRAD_SYNC, -1, -1, st->end_ns, st->end_ns + share * sim->v);
    return st->end_ns + share * sim->v;
  }
  /* Chunks finish in reverse order (chunk v-1's backwards come first). */
  for (c = sim->v - 1; c >= 0; c--) {
    PtsimTime start = st->last_backward_start[c] > stream ? st->last_backward_start[c] : stream;
    trace_add(sim, stage, PTSIM_TRACE_GRAD_SYNC, -1, c, start, start + share);
    stream = start + share;
  }
  return stream > st->end_ns ? stream : st->end_ns;
}

static PTSIM_HD int32_t carve(Sim *sim, void *scratch, int64_t bytes) {
  char *base = (char *)scratch;
  int64_t off = 0, n = (int64_t)sim->p * sim->m * sim->v, i;
  int32_t s, cap = event_capacity(sim->p, sim->m, sim->v);
  if (bytes < ptsim_engine_scratch_bytes(sim->plan)) return PTSIM_ENGINE_ERR_SCRATCH;
  sim->orders = (PtsimScheduleItem *)(base + off);
  off += align8((int64_t)sim->p * sim->items * (int64_t)sizeof(PtsimScheduleItem));
  sim->fwd_ready = (PtsimTime *)(base + off);
  off += align8(n * (int64_t)sizeof(PtsimTime));
  sim->bwd_ready = (PtsimTime *)(base + off);
  off += align8(n * (int64_t)sizeof(PtsimTime));
  sim->durations = (PtsimTime *)(base + off);
  off += align8((int64_t)sim->p * sim->v * 4 * (int64_t)sizeof(PtsimTime));
  sim->stages = (StageState *)(base + off);
  off += align8((int64_t)sim->p * (int64_t)sizeof(StageState));
  for (i = 0; i < n; i++) sim->fwd_ready[i] = sim->bwd_ready[i] = NOT_YET;
  for (s = 0; s < sim->p; s++) {
    StageState *st = &sim->stages[s];
    int32_t c, built;
    st->next = 0;
    st->busy = 0;
    st->free_at = 0;
    st->busy_ns = st->end_ns = st->pp_wait_ns = 0;
    for (c = 0; c < MAX_CHUNKS; c++) st->last_backward_start[c] = 0;
    built = ptsim_schedule_build(sim->job->layout.schedule, sim->p, sim->m, sim->v, s,
                                 sim->orders + (int64_t)s * sim->items, sim->items);
    if (built < 0) return built;
  }
  if (ptsim_event_queue_init(&sim->queue, (PtsimEvent *)(base + off), cap) != 0)
    return PTSIM_ENGINE_ERR_SCRATCH;
  return 0;
}

static PTSIM_HD void summarise(Sim *sim, PtsimTimeResult *out) {
  const PtsimJob *job = sim->job;
  const PtsimWorkload *w = sim->w;
  PtsimTime pipeline_end = 0, sync_end = 0, tail = 0;
  double busy_sum = 0.0, peak_flops = job->hw.peak_bf16_flops;
  double executed = 0.0;
  int32_t s, k;
  int64_t busiest = 0;
  for (s = 0; s < sim->p; s++) {
    if (sim->stages[s].end_ns > pipeline_end) pipeline_end = sim->stages[s].end_ns;
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
            (job->layout.overlap_param_gather ? 0 : to_ns(w->param_gather_s[s]));
    if (after > tail) tail = after;
    o->busy_s = (double)st->busy_ns * 1e-9;
    o->end_s = (double)st->end_ns * 1e-9;
    o->idle_s = (double)(pipeline_end - st->busy_ns) * 1e-9;
    o->pp_wait_s = (double)st->pp_wait_ns * 1e-9;
    o->grad_sync_end_s = (double)g * 1e-9;
    o->compute_s = o->busy_s;
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
  for (s = 0; s < sim->p; s++) {
    trace_add(sim, s, PTSIM_TRACE_OPTIMIZER, -1, -1, sync_end, sync_end + to_ns(w->optimizer_s[s]));
    if (!job->layout.overlap_param_gather && w->param_gather_s[s] > 0.0)
      trace_add(sim, s, PTSIM_TRACE_PARAM_GATHER, -1, -1, sync_end + to_ns(w->optimizer_s[s]),
                sync_end + to_ns(w->optimizer_s[s]) + to_ns(w->param_gather_s[s]));
  }
  out->num_stages = sim->p;
  out->events = sim->events;
  out->pipeline_s = (double)pipeline_end * 1e-9;
  out->step_s = (double)(sync_end + tail) * 1e-9;
  out->optimizer_s = (double)tail * 1e-9;
  out->busiest_stage = busiest;
  out->bubble_fraction = pipeline_end > 0 ? 1.0 - busy_sum / (double)sim->p / out->pipeline_s : 0.0;
  out->compute_s = out->stages[busiest].compute_s;
  for (k = 0; k < PTSIM_COMM_KINDS; k++) out->exposed_comm_s[k] = out->stages[busiest].exposed_comm_s[k];
  /* dp: the gradient tail plus the parameter gather; the optimizer is not comm. */
  {
    double gather = 0.0;
    if (!job->layout.overlap_param_gather)
      for (s = 0; s < sim->p; s++)
        if (w->param_gather_s[s] > gather) gather = w->param_gather_s[s];
    out->exposed_comm_s[PTSIM_COMM_DP] = (double)(sync_end - pipeline_end) * 1e-9 + gather;
  }
  /* executed FLOPs are per GPU of each stage; all tp x cp x dp peers alike */
  executed *= (double)(job->layout.tp * job->layout.cp * job->layout.dp);
  out->tokens_per_s = out->step_s > 0.0 ? (double)(job->layout.gbs * job->layout.seq) / out->step_s : 0.0;
  out->tflops_per_gpu = out->step_s > 0.0 ? w->model_flops / out->step_s / (double)job->layout.gpus / 1e12 : 0.0;
  out->mfu = peak_flops > 0.0 ? out->tflops_per_gpu * 1e12 / peak_flops : 0.0;
  out->hfu = peak_flops > 0.0 && out->step_s > 0.0
                 ? executed / out->step_s / (double)job->layout.gpus / peak_flops
                 : 0.0;
}

PTSIM_HD int32_t ptsim_engine_run(const PtsimPlan *plan, const PtsimWorkload *workload, void *scratch,
                                  int64_t scratch_bytes, PtsimTrace *trace, PtsimTimeResult *out) {
  return ptsim_engine_run_jittered(plan, workload, (const PtsimJitter *)0, scratch, scratch_bytes,
                                   trace, out);
}

PTSIM_HD int32_t ptsim_engine_run_jittered(const PtsimPlan *plan, const PtsimWorkload *workload,
                                           const PtsimJitter *jitter, void *scratch,
                                           int64_t scratch_bytes, PtsimTrace *trace,
                                           PtsimTimeResult *out) {
  Sim sim;
  PtsimEvent ev;
  int32_t rc, s;
  int64_t total_items;
  sim.plan = plan;
  sim.job = &plan->job;
  sim.w = workload;
  sim.p = (int32_t)plan->num_stages;
  sim.v = (int32_t)plan->num_chunks;
  sim.m = (int32_t)plan->num_microbatches;
  sim.items = plan->schedule_items;
  if (sim.items < 0) return sim.items;
  sim.trace = trace;
  if (trace) trace->count = 0;
  sim.jitter = jitter;
  if (jitter) ptsim_rng_init(&sim.rng, jitter->seed, jitter->subsequence);
  sim.events = 0;
  rc = carve(&sim, scratch, scratch_bytes);
  if (rc != 0) return rc;
  rc = tabulate(&sim); /* checks the clock's range: pp_ns below is in it */
  if (rc != 0) return rc;
  sim.pp_ns = to_ns(workload->pp_transfer_s);
  for (s = 0; s < sim.p; s++) {
    rc = try_start(&sim, s, 0);
    if (rc != 0) return rc;
  }
  while (ptsim_event_queue_pop(&sim.queue, &ev) == 0) {
    sim.events++;
    if (ev.kind == EV_ITEM_DONE)
      rc = item_done(&sim, ev.a, ev.b, ev.time);
    else
      rc = try_start(&sim, ev.a, ev.time);
    if (rc != 0) return rc;
  }
  total_items = 0;
  for (s = 0; s < sim.p; s++) total_items += sim.stages[s].next;
  if (total_items != (int64_t)sim.p * sim.items) return PTSIM_ENGINE_ERR_STALL;
  summarise(&sim, out);
  return 0;
}

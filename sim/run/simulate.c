/* simulate.c — see simulate.h. */
#include "config.h"
#include "json_writer.h"
#include "names.h"
#include "output.h"
#include "schedule.h"
#include "simulate.h"

static const char *engine_error(int32_t rc) {
  switch (rc) {
    case PTSIM_ENGINE_ERR_SCRATCH: return "engine scratch too small";
    case PTSIM_ENGINE_ERR_QUEUE: return "engine event queue overflow";
    case PTSIM_ENGINE_ERR_STALL: return "a pipeline stage waits forever";
    case PTSIM_ENGINE_ERR_TOO_LONG:
      return "the step would last more than 1e9 s (31 years), past the simulation's clock; "
             "fewer tokens per step (--gbs, --seq) or more GPUs bring it down";
    default: return ptsim_schedule_strerror(rc);
  }
}

#define GIB (1024.0 * 1024.0 * 1024.0)

static gboolean engine_scratch_ok(const PtsimPlan *plan, int64_t bytes, GError **error) {
  if (bytes <= PTSIM_SIMULATE_SCRATCH_MAX) return TRUE;
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
              "the step simulation of this layout needs %.1f GiB of scratch memory (%"
              G_GINT64_FORMAT " stages x %" G_GINT64_FORMAT " microbatches x %" G_GINT64_FORMAT
              " virtual stages), more than ptsim's limit of %.0f GiB; fewer microbatches "
              "(--gbs, --mbs) bring it down",
              (double)bytes / GIB, plan->num_stages, plan->num_microbatches, plan->num_chunks,
              (double)PTSIM_SIMULATE_SCRATCH_MAX / GIB);
  return FALSE;
}

static gboolean allocator_scratch_ok(const PtsimPlan *plan, int64_t stage, int64_t bytes,
                                     GError **error) {
  if (bytes <= PTSIM_SIMULATE_SCRATCH_MAX) return TRUE;
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
              "the allocator emulation of pipeline stage %" G_GINT64_FORMAT " needs %.1f GiB of "
              "scratch memory (%" G_GINT64_FORMAT " layers on the stage, %" G_GINT64_FORMAT
              " microbatches), more than ptsim's limit of %.0f GiB; fewer layers per stage "
              "(num_layers / --pp) or fewer microbatches (--gbs) bring it down",
              stage, (double)bytes / GIB, plan->stage_layers[stage], plan->num_microbatches,
              (double)PTSIM_SIMULATE_SCRATCH_MAX / GIB);
  return FALSE;
}

gboolean ptsim_simulate(const PtsimPlan *plan, PtsimTrace *trace, PtsimTimeResult *out,
                        GError **error) {
  const PtsimJob *job = &plan->job;
  int64_t bytes = ptsim_engine_scratch_bytes(plan);
  if (bytes < 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--schedule %s with --pp %" G_GINT64_FORMAT ", --vp %" G_GINT64_FORMAT
                " and %" G_GINT64_FORMAT " microbatches: %s",
                ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)job->layout.schedule), job->layout.pp,
                job->layout.vp, plan->num_microbatches,
                engine_error((int32_t)bytes));
    return FALSE;
  }
  if (!engine_scratch_ok(plan, bytes, error)) return FALSE;
  g_autofree void *scratch = g_malloc(bytes);
  g_autofree PtsimWorkload *workload = g_new0(PtsimWorkload, 1);
  ptsim_workload_build(plan, NULL, workload);
  if (trace) {
    trace->capacity = job->layout.pp * (plan->schedule_items + 4 + job->layout.vp);
    trace->records = g_new0(PtsimTraceRecord, trace->capacity);
    trace->count = 0;
  }
  int32_t rc = ptsim_engine_run(plan, workload, scratch, bytes, trace, out);
  if (rc != 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "simulation failed: %s", engine_error(rc));
    return FALSE;
  }
  return TRUE;
}

void ptsim_simulate_trace_clear(PtsimTrace *trace) {
  g_clear_pointer(&trace->records, g_free);
  trace->capacity = trace->count = 0;
}

static const char *trace_name(int32_t kind) {
  static const char *const names[] = {"forward", "backward", "backward-input", "backward-weight",
                                      "grad-sync", "optimizer", "param-gather"};
  return kind >= 0 && kind < (int32_t)G_N_ELEMENTS(names) ? names[kind] : "?";
}

gboolean ptsim_simulate_write_trace(const char *path, const PtsimJob *job,
                                    const PtsimTrace *trace, GError **error) {
  g_autoptr(GString) out = g_string_new(NULL);
  PtsimJson json;
  ptsim_json_init(&json, out);
  ptsim_json_begin_object(&json, NULL);
  ptsim_json_string(&json, "displayTimeUnit", "ms");
  ptsim_json_begin_array(&json, "traceEvents");
  for (int64_t s = 0; s < job->layout.pp; s++) {
    g_autofree char *name = g_strdup_printf("stage %" G_GINT64_FORMAT, s);
    ptsim_json_begin_object(&json, NULL);
    ptsim_json_string(&json, "ph", "M");
    ptsim_json_string(&json, "name", "process_name");
    ptsim_json_int(&json, "pid", s);
    ptsim_json_begin_object(&json, "args");
    ptsim_json_string(&json, "name", name);
    ptsim_json_end_object(&json);
    ptsim_json_end_object(&json);
    for (int tid = 0; tid < 2; tid++) {
      ptsim_json_begin_object(&json, NULL);
      ptsim_json_string(&json, "ph", "M");
      ptsim_json_string(&json, "name", "thread_name");
      ptsim_json_int(&json, "pid", s);
      ptsim_json_int(&json, "tid", tid);
      ptsim_json_begin_object(&json, "args");
      ptsim_json_string(&json, "name", tid == 0 ? "compute" : "dp comm");
      ptsim_json_end_object(&json);
      ptsim_json_end_object(&json);
    }
  }
  int64_t n = trace->count < trace->capacity ? trace->count : trace->capacity;
  for (int64_t i = 0; i < n; i++) {
    const PtsimTraceRecord *r = &trace->records[i];
    ptsim_json_begin_object(&json, NULL);
    ptsim_json_string(&json, "ph", "X");
    ptsim_json_string(&json, "name", trace_name(r->kind));
    ptsim_json_int(&json, "pid", r->stage);
    ptsim_json_int(&json, "tid", r->kind == PTSIM_TRACE_GRAD_SYNC || r->kind == PTSIM_TRACE_PARAM_GATHER);
    ptsim_json_double(&json, "ts", (double)r->start_ns / 1e3);
    ptsim_json_double(&json, "dur", (double)(r->end_ns - r->start_ns) / 1e3);
    ptsim_json_begin_object(&json, "args");
    ptsim_json_int(&json, "microbatch", r->microbatch);
    ptsim_json_int(&json, "chunk", r->chunk);
    ptsim_json_end_object(&json);
    ptsim_json_end_object(&json);
  }
  ptsim_json_end_array(&json);
  ptsim_json_end_object(&json);
  return ptsim_output_write(path, out->str, out->len, error);
}

/* ---- allocator ---- */

/* End time (ns) of stage `stage`'s item `index` in the engine's trace, or
 * -1 when the trace does not have it. */
static PtsimTime item_end(const PtsimTrace *trace, int64_t stage, int32_t index) {
  int32_t seen = 0;
  if (!trace) return -1;
  int64_t n = trace->count < trace->capacity ? trace->count : trace->capacity;
  for (int64_t i = 0; i < n; i++) {
    const PtsimTraceRecord *r = &trace->records[i];
    if (r->stage != stage || r->kind > PTSIM_TRACE_BACKWARD_WEIGHT) continue;
    if (seen++ == index) return r->end_ns;
  }
  return -1;
}

static void append_timeline(GString *tsv, const PtsimTrace *trace, int64_t stage, double step_s,
                            const PtsimAllocTimeline *tl) {
  int64_t n = tl->count < tl->capacity ? tl->count : tl->capacity;
  for (int64_t i = 0; i < n; i++) {
    const PtsimAllocSample *smp = &tl->samples[i];
    PtsimTime end = smp->item < 0 ? 0 : item_end(trace, stage, smp->item);
    double t = (end < 0 ? 0.0 : (double)end * 1e-9) + step_s * smp->step;
    g_string_append_printf(tsv, "%" G_GINT64_FORMAT "\t%d\t%.9f\t%.0f\t%.0f\n", stage, smp->step,
                           t, smp->allocated_bytes, smp->reserved_bytes);
  }
}

gboolean ptsim_simulate_allocator(const PtsimPlan *plan, int32_t steps,
                                  const PtsimAllocOptions *opts, const PtsimTrace *trace,
                                  double step_s, const char *timeline_path,
                                  PtsimAllocResult *out, GError **error) {
  const PtsimJob *job = &plan->job;
  const PtsimLayout *l = &job->layout;
  int32_t p = (int32_t)plan->num_stages, v = (int32_t)plan->num_chunks;
  int32_t m = (int32_t)plan->num_microbatches;
  int32_t items = plan->schedule_items;
  if (items < 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, "allocator: %s",
                ptsim_schedule_strerror(items));
    return FALSE;
  }
  g_autoptr(GString) tsv = g_string_new(
      "# ptsim allocator timeline: bytes the caching allocator has handed out (allocated)\n"
      "# and holds from CUDA (reserved), after each schedule item; time_s from the first\n"
      "# step's start (step k starts at k x step_s)\n");
  /* The figure (ptsim plot allocator --from) reads these three. */
  g_string_append_printf(tsv, "# step_s %.9f\n# capacity_bytes %.0f\n# outside_bytes %.0f\n",
                         step_s, job->hw.memory_bytes, ptsim_lifetimes_outside_bytes(job));
  g_string_append(tsv, "stage\tstep\ttime_s\tallocated_bytes\treserved_bytes\n");
  /* Every stage's scratch is checked before the first is allocated. */
  for (int32_t s = 0; s < p; s++)
    if (!allocator_scratch_ok(plan, s, ptsim_lifetimes_scratch_bytes(plan, s), error))
      return FALSE;
  if (timeline_path && !ptsim_output_check(timeline_path, error)) return FALSE;
  g_autofree PtsimScheduleItem *order = g_new(PtsimScheduleItem, items);
  out->num_stages = p;
  out->peak_stage = 0;
  out->steps = steps;
  for (int32_t s = 0; s < p; s++) {
    ptsim_schedule_build(l->schedule, p, m, v, s, order, items);
    int64_t bytes = ptsim_lifetimes_scratch_bytes(plan, s);
    g_autofree void *scratch = g_malloc(bytes);
    PtsimAllocTimeline tl = {NULL, 0, 0};
    if (timeline_path) {
      tl.capacity = (int64_t)items * steps + 1;
      tl.samples = g_new(PtsimAllocSample, tl.capacity);
    }
    int32_t rc = ptsim_lifetimes_replay(plan, s, order, items, steps, opts, scratch, bytes,
                                        timeline_path ? &tl : NULL, &out->stages[s]);
    if (timeline_path) append_timeline(tsv, trace, s, step_s, &tl);
    g_free(tl.samples);
    if (rc != 0) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                  "allocator emulation of stage %d failed (code %d)", s, rc);
      return FALSE;
    }
    if (out->stages[s].device_peak_bytes > out->stages[out->peak_stage].device_peak_bytes)
      out->peak_stage = s;
  }
  if (!timeline_path) return TRUE;
  return ptsim_output_write(timeline_path, tsv->str, tsv->len, error);
}

/* simulate.c — see simulate.h. */
#include "config.h"
#include "hybrid_pattern.h"
#include "kernel_registry.h"
#include "units.h"
#include "names.h"
#include "output.h"
#include "schedule.h"
#include "simulate.h"

const char *ptsim_simulate_error_text(int32_t rc) {
  switch (rc) {
  case PTSIM_ENGINE_ERR_SCRATCH:
    return "engine scratch too small";
  case PTSIM_ENGINE_ERR_QUEUE:
    return "engine event queue overflow";
  case PTSIM_ENGINE_ERR_STALL:
    return "a pipeline stage waits forever";
  case PTSIM_ENGINE_ERR_TOO_LONG:
    return "the step would last more than 1e9 s (31 years), past the simulation's clock; "
           "fewer tokens per step (--gbs, --seq) or more GPUs bring it down";
  default:
    return ptsim_schedule_strerror(rc);
  }
}

#define GIB PTSIM_GIB_BYTES

static gboolean engine_scratch_ok(const PtsimPlan *plan, int64_t bytes, GError **error) {
  if (bytes <= PTSIM_SIMULATE_SCRATCH_MAX) return TRUE;
  g_set_error(
      error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
      "the step simulation of this layout needs %.1f GiB of scratch memory (%" G_GINT64_FORMAT
      " stages x %" G_GINT64_FORMAT " microbatches x %" G_GINT64_FORMAT
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
  return ptsim_simulate_with(plan, trace, FALSE, out, error);
}

gboolean ptsim_simulate_with(const PtsimPlan *plan, PtsimTrace *trace, gboolean every_event,
                             PtsimTimeResult *out, GError **error) {
  const PtsimJob *job = &plan->job;
  if (!ptsim_hybrid_simulation_check(job, error)) return FALSE;
  int64_t bytes = ptsim_engine_scratch_bytes(plan);
  if (bytes == PTSIM_SCHEDULE_ERR_TOO_LARGE && job->layout.pp <= PTSIM_MAX_STAGES) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--schedule %s with %" G_GINT64_FORMAT " microbatches and --vp %" G_GINT64_FORMAT
                ": a stage would run %" G_GINT64_FORMAT " microbatch-chunks (microbatches x vp), "
                "more than ptsim's limit of %d; raise --mbs or dp, or lower --gbs or --vp",
                ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)job->layout.schedule),
                plan->num_microbatches, plan->num_chunks, plan->num_microbatches * plan->num_chunks,
                PTSIM_SCHEDULE_MAX_VIRTUAL_MB);
    return FALSE;
  }
  if (bytes < 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--schedule %s with --pp %" G_GINT64_FORMAT ", --vp %" G_GINT64_FORMAT
                " and %" G_GINT64_FORMAT " microbatches: %s",
                ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)job->layout.schedule), job->layout.pp,
                job->layout.vp, plan->num_microbatches, ptsim_simulate_error_text((int32_t)bytes));
    return FALSE;
  }
  if (!engine_scratch_ok(plan, bytes, error)) return FALSE;
  g_autofree void *scratch = g_malloc(bytes);
  g_autofree PtsimWorkload *workload = g_new0(PtsimWorkload, 1);
  PtsimCostParams params;
  ptsim_kernel_registry_params(&plan->job.hw, &params);
  ptsim_workload_build(plan, &params, workload);
  if (trace) {
    trace->capacity = ptsim_engine_trace_capacity(plan);
    trace->records = g_new0(PtsimTraceRecord, trace->capacity);
    trace->count = 0;
  }
  int32_t rc = every_event ? ptsim_engine_run_full(plan, workload, scratch, bytes, trace, out)
                           : ptsim_engine_run(plan, workload, scratch, bytes, trace, out);
  if (rc != 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, "simulation failed: %s",
                ptsim_simulate_error_text(rc));
    return FALSE;
  }
  return TRUE;
}

void ptsim_simulate_trace_clear(PtsimTrace *trace) {
  g_clear_pointer(&trace->records, g_free);
  trace->capacity = trace->count = 0;
}

/* ---- allocator ---- */

/* The end times (ns) of each stage's schedule items, in order, from the
 * engine's trace (items are recorded as they start, and a stage starts
 * them in its order): ends[stage] is an array of PtsimTime.  One pass, so
 * a timeline of millions of samples costs no more than the trace.
 * (transfer full) */
static GPtrArray *item_ends(const PtsimTrace *trace, int64_t stages) {
  GPtrArray *ends = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  for (int64_t s = 0; s < stages; s++)
    g_ptr_array_add(ends, g_array_new(FALSE, FALSE, sizeof(PtsimTime)));
  int64_t n = !trace ? 0 : trace->count < trace->capacity ? trace->count : trace->capacity;
  for (int64_t i = 0; i < n; i++) {
    const PtsimTraceRecord *r = &trace->records[i];
    if (r->stage < 0 || r->stage >= stages || r->kind > PTSIM_TRACE_BACKWARD_WEIGHT) continue;
    g_array_append_val((GArray *)g_ptr_array_index(ends, r->stage), r->end_ns);
  }
  return ends;
}

static void append_timeline(GString *tsv, const GArray *ends, int64_t stage, double step_s,
                            const PtsimAllocTimeline *tl) {
  int64_t n = tl->count < tl->capacity ? tl->count : tl->capacity;
  for (int64_t i = 0; i < n; i++) {
    const PtsimAllocSample *smp = &tl->samples[i];
    /* a sample after item k: that item's end (0 before the first, or when
     * the trace does not have it) */
    PtsimTime end = smp->item >= 0 && (guint)smp->item < ends->len
                        ? g_array_index(ends, PtsimTime, smp->item)
                        : 0;
    double t = (double)end * PTSIM_S_PER_NS + step_s * smp->step;
    g_string_append_printf(tsv, "%" G_GINT64_FORMAT "\t%d\t%.9f\t%.0f\t%.0f\n", stage, smp->step, t,
                           smp->allocated_bytes, smp->reserved_bytes);
  }
}

gboolean ptsim_simulate_allocator(const PtsimPlan *plan, int32_t steps,
                                  const PtsimAllocOptions *opts, const PtsimTrace *trace,
                                  double step_s, const char *timeline_path, PtsimAllocResult *out,
                                  GError **error) {
  return ptsim_simulate_allocator_with(plan, steps, opts, FALSE, trace, step_s, timeline_path, out,
                                       error);
}

/* Replays stage s (its order built into `order`) into *out. */
static gboolean replay_stage(const PtsimPlan *plan, int32_t s, PtsimScheduleItem *order,
                             int32_t steps, const PtsimAllocOptions *opts, gboolean every_item,
                             PtsimAllocTimeline *tl, PtsimStageAlloc *out, GError **error) {
  const PtsimLayout *l = &plan->job.layout;
  int32_t items = plan->schedule_items;
  ptsim_schedule_build(l->schedule, (int32_t)plan->num_stages, (int32_t)plan->num_microbatches,
                       (int32_t)plan->num_chunks, plan->microbatch_group, s, order, items);
  int64_t bytes = ptsim_lifetimes_scratch_bytes(plan, s);
  if (!allocator_scratch_ok(plan, s, bytes, error)) return FALSE;
  g_autofree void *scratch = g_malloc(bytes);
  int32_t rc = ptsim_lifetimes_replay(plan, s, order, items, steps, opts, every_item, scratch,
                                      bytes, tl, out);
  if (rc != 0) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "allocator emulation of stage %d failed (code %d)", s, rc);
    return FALSE;
  }
  return TRUE;
}

static gboolean check_items(const PtsimPlan *plan, GError **error) {
  if (plan->schedule_items >= 0) return TRUE;
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, "allocator: %s",
              ptsim_schedule_strerror(plan->schedule_items));
  return FALSE;
}

gboolean ptsim_simulate_allocator_stage(const PtsimPlan *plan, int64_t stage, int32_t steps,
                                        const PtsimAllocOptions *opts, gboolean every_item,
                                        PtsimStageAlloc *out, GError **error) {
  if (!check_items(plan, error)) return FALSE;
  g_autofree PtsimScheduleItem *order = g_new(PtsimScheduleItem, plan->schedule_items);
  return replay_stage(plan, (int32_t)stage, order, steps, opts, every_item, NULL, out, error);
}

void ptsim_simulate_allocator_close(const PtsimPlan *plan, int32_t steps, PtsimAllocResult *out) {
  out->num_stages = plan->num_stages;
  out->peak_stage = 0;
  out->steps = steps;
  out->fits = out->runs = 1;
  for (int64_t s = 0; s < plan->num_stages; s++) {
    if (out->stages[s].device_peak_bytes > out->stages[out->peak_stage].device_peak_bytes)
      out->peak_stage = s;
    out->fits &= out->stages[s].fits;
    out->runs &= out->stages[s].runs;
  }
}

gboolean ptsim_simulate_allocator_with(const PtsimPlan *plan, int32_t steps,
                                       const PtsimAllocOptions *opts, gboolean every_item,
                                       const PtsimTrace *trace, double step_s,
                                       const char *timeline_path, PtsimAllocResult *out,
                                       GError **error) {
  const PtsimJob *job = &plan->job;
  if (!ptsim_hybrid_simulation_check(job, error)) return FALSE;
  int32_t p = (int32_t)plan->num_stages;
  int32_t items = plan->schedule_items;
  if (!check_items(plan, error)) return FALSE;
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
    if (!allocator_scratch_ok(plan, s, ptsim_lifetimes_scratch_bytes(plan, s), error)) return FALSE;
  if (timeline_path && !ptsim_output_check(timeline_path, error)) return FALSE;
  g_autofree PtsimScheduleItem *order = g_new(PtsimScheduleItem, items);
  g_autoptr(GPtrArray) ends = item_ends(timeline_path ? trace : NULL, p);
  for (int32_t s = 0; s < p; s++) {
    PtsimAllocTimeline tl = {NULL, 0, 0};
    if (timeline_path) {
      tl.capacity = ptsim_lifetimes_timeline_samples(items, steps);
      tl.samples = g_new(PtsimAllocSample, tl.capacity);
    }
    gboolean ok = replay_stage(plan, s, order, steps, opts, every_item, timeline_path ? &tl : NULL,
                               &out->stages[s], error);
    if (ok && timeline_path) append_timeline(tsv, g_ptr_array_index(ends, s), s, step_s, &tl);
    g_free(tl.samples);
    if (!ok) return FALSE;
  }
  ptsim_simulate_allocator_close(plan, steps, out);
  if (!timeline_path) return TRUE;
  return ptsim_output_write(timeline_path, tsv->str, tsv->len, error);
}

/* test_trace.c — the Perfetto trace's slices (sim/run/trace.c), checked
 * against what the engine and the workload say independently:
 *   - the exposed TP collectives of a stage add up to the engine's
 *     exposed_comm_s[TP] of that stage, its PP waits to pp_wait_s, its
 *     compute children to compute_s;
 *   - an item's children tile it exactly;
 *   - every PP send has one receive on the consuming stage, same times;
 *   - the compute track has no hole and no overlap from 0 to the stage's
 *     last item: items, bubbles and PP waits tile it;
 *   - step k repeats step 0 shifted by k x step_s.
 * The JSON file itself is checked against Perfetto's importer rules by
 * tests/cli/trace.sh (tests/cli/check_trace.py). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "job_build.h"
#include "kernel_registry.h"
#include "plan_of.h"
#include "trace.h"

/* A job from the shipped models and profiles, as the command resolves it. */
static void resolve(PtsimJob *job, const char *model, gint64 gpus, gint64 tp, gint64 pp, gint64 vp,
                    gint64 gbs, const char *recompute) {
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.model = g_strdup(model);
  o.gpus = (PtsimOptionInt){TRUE, gpus};
  o.tp = (PtsimOptionInt){TRUE, tp};
  o.pp = (PtsimOptionInt){TRUE, pp};
  o.vp = (PtsimOptionInt){TRUE, vp};
  o.gbs = (PtsimOptionInt){TRUE, gbs};
  o.seq = (PtsimOptionInt){TRUE, 4096};
  if (recompute) o.recompute = g_strdup(recompute);
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_job_build(&o, job, NULL, &error);
  ptsim_job_options_clear(&o);
  g_assert_no_error(error);
  g_assert_true(ok);
}

typedef struct {
  PtsimPlan *plan;
  PtsimWorkload *w;
  PtsimTimeResult *time;
  PtsimTrace trace;
  GArray *slices;
} Run;

static void run_job(const PtsimJob *job, int32_t steps, Run *r) {
  r->plan = plan_of(job);
  r->w = g_new0(PtsimWorkload, 1);
  PtsimCostParams params; /* the profile's kernel table, as ptsim_simulate prices */
  ptsim_kernel_registry_params(&r->plan->job.hw, &params);
  ptsim_workload_build(r->plan, &params, r->w);
  r->time = g_new0(PtsimTimeResult, 1);
  memset(&r->trace, 0, sizeof r->trace);
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_simulate(r->plan, &r->trace, r->time, &error));
  g_assert_no_error(error);
  r->slices = ptsim_trace_slices(r->plan, r->w, &r->trace, r->time, steps);
  g_assert_nonnull(r->slices);
}

static void run_clear(Run *r) {
  g_array_unref(r->slices);
  ptsim_simulate_trace_clear(&r->trace);
  g_free(r->time);
  g_free(r->w);
  g_free(r->plan);
}

/* Seconds of slices of `kind` on `stage` in step 0. */
static double total_s(const Run *r, int32_t stage, int32_t slice) {
  double s = 0;
  for (guint i = 0; i < r->slices->len; i++) {
    const PtsimTraceSlice *x = &g_array_index(r->slices, PtsimTraceSlice, i);
    if (x->stage == stage && x->slice == slice && x->step == 0)
      s += (double)(x->end_ns - x->start_ns) * 1e-9;
  }
  return s;
}

/* The engine's sums, to the slices' ns rounding (one ns per item). */
static void check_sums(const Run *r) {
  const PtsimJob *job = &r->plan->job;
  double tol = 1e-9 * (double)(r->plan->schedule_items + 2) + 1e-12;
  for (int64_t s = 0; s < job->layout.pp; s++) {
    const PtsimStageTime *st = &r->time->stages[s];
    g_assert_cmpfloat_with_epsilon(total_s(r, (int32_t)s, PTSIM_SLICE_TP_EXPOSED),
                                   st->exposed_comm_s[PTSIM_COMM_TP], tol);
    g_assert_cmpfloat_with_epsilon(total_s(r, (int32_t)s, PTSIM_SLICE_CP_EXPOSED),
                                   st->exposed_comm_s[PTSIM_COMM_CP], tol);
    g_assert_cmpfloat_with_epsilon(total_s(r, (int32_t)s, PTSIM_SLICE_PP_WAIT), st->pp_wait_s, tol);
    /* compute_s is busy minus blocking communication: the compute and
     * recompute children together */
    g_assert_cmpfloat_with_epsilon(total_s(r, (int32_t)s, PTSIM_SLICE_COMPUTE) +
                                       total_s(r, (int32_t)s, PTSIM_SLICE_RECOMPUTE),
                                   st->compute_s, 3 * tol);
  }
}

static int cmp_slice(gconstpointer a, gconstpointer b) {
  const PtsimTraceSlice *x = a, *y = b;
  if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
  return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns); /* parents first */
}

/* Items' children tile them; items and waits tile the compute track. */
static void check_compute_track(const Run *r, int32_t stage) {
  g_autoptr(GArray) top = g_array_new(FALSE, FALSE, sizeof(PtsimTraceSlice));
  g_autoptr(GArray) kids = g_array_new(FALSE, FALSE, sizeof(PtsimTraceSlice));
  for (guint i = 0; i < r->slices->len; i++) {
    const PtsimTraceSlice *x = &g_array_index(r->slices, PtsimTraceSlice, i);
    if (x->stage != stage || x->track != PTSIM_TRACK_COMPUTE || x->step != 0) continue;
    gboolean child = x->slice == PTSIM_SLICE_COMPUTE || x->slice == PTSIM_SLICE_RECOMPUTE ||
                     x->slice == PTSIM_SLICE_TP_EXPOSED || x->slice == PTSIM_SLICE_CP_EXPOSED ||
                     x->slice == PTSIM_SLICE_EP_EXPOSED;
    g_array_append_val(child ? kids : top, *x);
  }
  g_array_sort(top, cmp_slice);
  g_array_sort(kids, cmp_slice);
  int64_t at = 0;
  guint k = 0;
  for (guint i = 0; i < top->len; i++) {
    const PtsimTraceSlice *x = &g_array_index(top, PtsimTraceSlice, i);
    /* the step's tail: the wait for the DP stream starts where the items end */
    if (x->kind == PTSIM_TRACE_OPTIMIZER) continue;
    if (x->slice == PTSIM_SLICE_DP_WAIT) {
      g_assert_cmpfloat_with_epsilon((double)x->start_ns * 1e-9, r->time->stages[stage].end_s,
                                     1e-9);
      continue;
    }
    g_assert_cmpint(x->start_ns, ==, at); /* no hole, no overlap */
    at = x->end_ns;
    if (x->slice != PTSIM_SLICE_ITEM) continue;
    int64_t inner = x->start_ns;
    for (; k < kids->len; k++) {
      const PtsimTraceSlice *c = &g_array_index(kids, PtsimTraceSlice, k);
      if (c->start_ns >= x->end_ns) break;
      g_assert_cmpint(c->start_ns, ==, inner);
      g_assert_cmpint(c->microbatch, ==, x->microbatch);
      inner = c->end_ns;
    }
    g_assert_cmpint(inner, ==, x->end_ns);
  }
  g_assert_cmpint(k, ==, kids->len);
  g_assert_cmpfloat_with_epsilon((double)at * 1e-9, r->time->stages[stage].end_s, 1e-9);
}

/* Each send has one receive with the same times on the consumer. */
static void check_flows(const Run *r) {
  const PtsimPlan *p = r->plan;
  g_autoptr(GHashTable) sends = g_hash_table_new(g_int64_hash, g_int64_equal);
  guint nsend = 0, nrecv = 0;
  for (guint i = 0; i < r->slices->len; i++) {
    PtsimTraceSlice *x = &g_array_index(r->slices, PtsimTraceSlice, i);
    if (x->slice != PTSIM_SLICE_PP_SEND) continue;
    g_assert_cmpint(x->flow, >, 0);
    g_assert_cmpint(x->end_ns - x->start_ns, ==, (int64_t)llround(r->w->pp_transfer_s * 1e9));
    g_assert_false(g_hash_table_contains(sends, &x->flow));
    g_hash_table_insert(sends, &x->flow, x);
    nsend++;
  }
  for (guint i = 0; i < r->slices->len; i++) {
    const PtsimTraceSlice *x = &g_array_index(r->slices, PtsimTraceSlice, i);
    if (x->slice != PTSIM_SLICE_PP_RECV) continue;
    const PtsimTraceSlice *s = g_hash_table_lookup(sends, &x->flow);
    g_assert_nonnull(s);
    g_assert_cmpint(s->start_ns, ==, x->start_ns);
    g_assert_cmpint(s->end_ns, ==, x->end_ns);
    /* forwards go down the pipeline (the last stage wraps to the next
     * chunk on stage 0), backwards go up */
    int64_t pp = p->num_stages;
    if (s->kind == PTSIM_TRACE_FORWARD)
      g_assert_cmpint(x->stage, ==, s->stage < pp - 1 ? s->stage + 1 : 0);
    else
      g_assert_cmpint(x->stage, ==, s->stage > 0 ? s->stage - 1 : pp - 1);
    nrecv++;
  }
  g_assert_cmpuint(nsend, ==, nrecv);
  /* m x v forwards and backwards per stage, less the ones that leave the
   * pipeline: the last chunk's forward on the last stage, the first
   * chunk's backward on stage 0 */
  guint64 per_step = 2 * (guint64)p->num_stages * p->num_microbatches * p->num_chunks -
                     2 * (guint64)p->num_microbatches;
  g_assert_cmpuint(nsend % per_step, ==, 0);
}

static void test_interleaved(void) {
  g_test_summary("llama3-70b tp 8 pp 4 vp 5 on 64 GPUs: sums match the engine, tracks tile, "
                 "flows pair up");
  PtsimJob job;
  resolve(&job, "llama3-70b", 64, 8, 4, 5, 64, NULL);
  Run r;
  run_job(&job, 1, &r);
  g_assert_cmpfloat(r.time->stages[0].exposed_comm_s[PTSIM_COMM_TP], >, 0.0);
  check_sums(&r);
  for (int32_t s = 0; s < 4; s++) check_compute_track(&r, s);
  check_flows(&r);
  run_clear(&r);
}

static void test_recompute_cp(void) {
  g_test_summary("full recompute, tp 2 and cp 8 (a ring too long to hide): recompute, TP and "
                 "CP slices appear and still tile");
  PtsimJob job;
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  o.model = g_strdup("llama3-8b");
  o.gpus = (PtsimOptionInt){TRUE, 32};
  o.tp = (PtsimOptionInt){TRUE, 2};
  o.pp = (PtsimOptionInt){TRUE, 2};
  o.cp = (PtsimOptionInt){TRUE, 8};
  o.gbs = (PtsimOptionInt){TRUE, 16};
  o.seq = (PtsimOptionInt){TRUE, 4096};
  o.recompute = g_strdup("full");
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_job_build(&o, &job, NULL, &error));
  ptsim_job_options_clear(&o);
  Run r;
  run_job(&job, 1, &r);
  g_assert_cmpfloat(total_s(&r, 0, PTSIM_SLICE_RECOMPUTE), >, 0.0);
  g_assert_cmpfloat(total_s(&r, 0, PTSIM_SLICE_CP_EXPOSED), >, 0.0);
  g_assert_cmpfloat(total_s(&r, 0, PTSIM_SLICE_TP_EXPOSED), >, 0.0);
  check_sums(&r);
  for (int32_t s = 0; s < 2; s++) check_compute_track(&r, s);
  check_flows(&r);
  run_clear(&r);
}

static void test_steps(void) {
  g_test_summary("three steps: step k is step 0 shifted by k x step_s, flows stay unique");
  PtsimJob job;
  resolve(&job, "llama3-8b", 8, 1, 4, 1, 16, NULL);
  Run one, three;
  run_job(&job, 1, &one);
  run_job(&job, 3, &three);
  g_assert_cmpuint(three.slices->len, ==, 3 * one.slices->len);
  int64_t step_ns = (int64_t)llround(one.time->step_s * 1e9);
  for (guint i = 0; i < three.slices->len; i++) {
    const PtsimTraceSlice *x = &g_array_index(three.slices, PtsimTraceSlice, i);
    g_assert_cmpint(x->step, >=, 0);
    g_assert_cmpint(x->step, <, 3);
  }
  /* the same slices in the same order within each step */
  guint n = one.slices->len, k = 0;
  for (int32_t step = 0; step < 3; step++)
    for (guint i = 0; i < three.slices->len; i++) {
      const PtsimTraceSlice *x = &g_array_index(three.slices, PtsimTraceSlice, i);
      if (x->step != step) continue;
      const PtsimTraceSlice *y = &g_array_index(one.slices, PtsimTraceSlice, k % n);
      g_assert_cmpint(x->slice, ==, y->slice);
      g_assert_cmpint(x->start_ns, ==, y->start_ns + step * step_ns);
      g_assert_cmpint(x->end_ns - x->start_ns, ==, y->end_ns - y->start_ns);
      k++;
    }
  check_flows(&three);
  run_clear(&one);
  run_clear(&three);
}

static void test_one_gpu(void) {
  g_test_summary("one GPU: a compute track only, no PP or TP slices, no waits between items");
  PtsimJob job;
  resolve(&job, "llama3-8b", 1, 1, 1, 1, 4, NULL);
  Run r;
  run_job(&job, 1, &r);
  for (guint i = 0; i < r.slices->len; i++) {
    const PtsimTraceSlice *x = &g_array_index(r.slices, PtsimTraceSlice, i);
    g_assert_cmpint(x->track, ==, PTSIM_TRACK_COMPUTE);
    g_assert_cmpint(x->slice, !=, PTSIM_SLICE_PP_WAIT);
    g_assert_cmpint(x->slice, !=, PTSIM_SLICE_BUBBLE);
  }
  check_compute_track(&r, 0);
  run_clear(&r);
}

static void test_write_errors(void) {
  g_test_summary("write: steps out of range and a truncated engine trace are refused, nothing "
                 "is written");
  PtsimJob job;
  resolve(&job, "llama3-8b", 8, 1, 2, 1, 8, NULL);
  Run r;
  run_job(&job, 1, &r);
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp("ptsim-trace-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "t.json", NULL);
  g_assert_false(ptsim_trace_write(path, r.plan, &r.trace, r.time, 0, &error));
  g_assert_nonnull(error);
  g_clear_error(&error);
  int64_t count = r.trace.count;
  r.trace.count = r.trace.capacity + 1; /* as the engine leaves an overflow */
  g_assert_false(ptsim_trace_write(path, r.plan, &r.trace, r.time, 1, &error));
  g_assert_nonnull(strstr(error->message, "truncated"));
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  r.trace.count = count;
  g_clear_error(&error);
  g_assert_true(ptsim_trace_write(path, r.plan, &r.trace, r.time, 2, &error));
  g_assert_no_error(error);
  g_unlink(path);
  g_rmdir(dir);
  run_clear(&r);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/trace/interleaved-70b", test_interleaved);
  g_test_add_func("/trace/recompute-cp", test_recompute_cp);
  g_test_add_func("/trace/steps", test_steps);
  g_test_add_func("/trace/one-gpu", test_one_gpu);
  g_test_add_func("/trace/write-errors", test_write_errors);
  return g_test_run();
}

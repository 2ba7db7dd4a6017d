/* test_dp_buckets.c — Megatron DDP's gradient buckets (core/plan_buckets.c)
 * on the data-parallel stream (core/engine.c): each bucket's reduction
 * starts when the last backward has made its gradients (the head and the
 * layers in proportion to their parameters, the embedding at the end), the
 * stream serves them in order, and what runs past the backward is exposed.
 * Every expected time is derived here from the plan's parameter counts and
 * the workload's durations, with the rule written out in each comment. */
#include <glib.h>
#include <math.h>
#include "job_fixture.h"
#include "engine.h"
#include "plan_of.h"

static PtsimTime ns(double s) { return (PtsimTime)(s * 1e9 + 0.5); }

/* llama2-7b on tp 8: with pp 2 its last stage holds 16 layers and the
 * head, no embedding; `dp` sets the bucket, max(40M, dp x 1M). */
static void job_of(PtsimJob *job, gint64 pp, gint64 dp, gint64 gbs) {
  FixtureLayout l = {8 * pp * dp, 8, pp, 1, 1, gbs, 4096, PTSIM_RECOMPUTE_NONE};
  fixture_job(job, "llama2-7b", "h100-80g", l);
  job->settings.overlap_grad_reduce = 1;
  job->settings.overlap_param_gather = 0;
}

static void run(const PtsimJob *job, const PtsimWorkload *w, PtsimTrace *trace,
                PtsimTimeResult *out, gboolean full) {
  g_autofree PtsimPlan *plan = plan_of(job);
  int64_t bytes = ptsim_engine_scratch_bytes(plan);
  g_autofree void *scratch = g_malloc(bytes);
  g_assert_cmpint(full ? ptsim_engine_run_full(plan, w, scratch, bytes, trace, out)
                       : ptsim_engine_run(plan, w, scratch, bytes, trace, out),
                  ==, 0);
}

/* The last stage's parameters (no embedding: none arrive at the end). */
static double last_stage_params(const PtsimJob *job) {
  g_autofree PtsimPlan *plan = plan_of(job);
  double at_end;
  double p = ptsim_plan_chunk_grad_params(plan, 1, 0, &at_end);
  g_assert_cmpfloat(at_end, ==, 0.0);
  g_assert_cmpfloat(p, ==, plan->stage_trainable_parameters[1]);
  return p;
}

/* Two buckets, one microbatch: with a bucket of B = dp x 1M parameters and
 * P the stage's (P/2 < B < P), bucket 0 holds the last B parameters in
 * the buffer's reverse order (the head, the last layers) and is ready
 * B / P of the way through the backward; bucket 1, the rest, when it
 * ends.  With the reduction R = half the backward, bucket 0 takes
 * R B / P < backward (1 - B/P) (as B/P < 2/3) and is done before the
 * backward ends, so the stage's stream ends at the backward's end plus
 * bucket 1's transfer, R (P - B) / P. */
static void test_two_buckets(void) {
  g_test_summary("2 buckets, 1 microbatch: the exposed time is the last bucket's transfer");
  PtsimJob job;
  job_of(&job, 2, 1, 1);
  double p = last_stage_params(&job);
  gint64 dp = (gint64)(0.6 * p / 1e6);
  job_of(&job, 2, dp, dp);
  double b = (double)dp * 1e6;
  g_assert_cmpfloat(b, >, p / 2.0);
  g_assert_cmpfloat(b, <, 2.0 * p / 3.0);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  workload_of(&job, NULL, w);
  PtsimWork chunk;
  ptsim_workload_chunk(w, 1, 0, &chunk);
  w->grad_sync_s[1] = 0.5 * (chunk.backward_input_s + chunk.backward_weight_s);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  run(&job, w, NULL, t, FALSE);
  PtsimTime end = ns(t->stages[1].end_s);
  PtsimTime last = ns(w->grad_sync_s[1] * (p - b) / p);
  g_assert_cmpint(ns(t->stages[1].grad_sync_end_s), ==, end + last);
}

/* Reduction longer than the backward: with R = 3 x backward (D), every
 * bucket takes longer than the backward takes to fill the next (R B / P >
 * D B / P), so the stream runs back to back from bucket 0's ready time,
 * S + D B / P, for all of R: it ends at S + D B / P + R, and exposes
 * 2 D + D B / P past the backward's end S + D. */
static void test_reduction_longer_than_backward(void) {
  g_test_summary("a reduction longer than the backward: the stream runs on from the first "
                 "bucket's ready time");
  PtsimJob job;
  job_of(&job, 2, 64, 64); /* B = 64M parameters */
  double p = last_stage_params(&job), b = 64e6;
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  workload_of(&job, NULL, w);
  PtsimWork chunk;
  ptsim_workload_chunk(w, 1, 0, &chunk);
  double d = chunk.backward_input_s + chunk.backward_weight_s;
  w->grad_sync_s[1] = 3.0 * d;
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  run(&job, w, NULL, t, FALSE);
  double end = t->stages[1].end_s, start = end - d;
  g_assert_cmpfloat(fabs(t->stages[1].grad_sync_end_s - (start + d * b / p + 3.0 * d)), <,
                    1e-9 * ceil(p / b) + 1e-9); /* a ns of rounding per bucket */
}

/* The trace: a record per bucket (its index in `microbatch`), in order on
 * the stream, none before the last backward starts; with two chunks per
 * stage (interleaved), chunk 1's buckets before chunk 0's.  The event loop
 * and the shortcut give the same step. */
static void test_trace_order(void) {
  g_test_summary("the trace shows each bucket, in order on the DP stream");
  PtsimJob job;
  FixtureLayout l = {8 * 4 * 2, 8, 4, 2, 1, 16, 4096, PTSIM_RECOMPUTE_NONE};
  fixture_job(&job, "llama2-7b", "h100-80g", l);
  job.settings.overlap_grad_reduce = 1;
  g_autofree PtsimPlan *plan = plan_of(&job);
  g_autofree PtsimWorkload *w = g_new0(PtsimWorkload, 1);
  workload_of(&job, NULL, w);
  g_autofree PtsimTimeResult *t = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimTimeResult *full = g_new0(PtsimTimeResult, 1);
  int64_t cap = ptsim_engine_trace_capacity(plan);
  PtsimTrace trace = {g_new0(PtsimTraceRecord, cap), cap, 0};
  run(&job, w, &trace, t, FALSE);
  run(&job, w, NULL, full, TRUE);
  g_assert_cmpfloat(t->step_s, ==, full->step_s);
  g_assert_cmpint(trace.count, <=, cap);
  for (int32_t s = 0; s < 4; s++) {
    int32_t want_chunk = 1, want_bucket = 0, seen = 0;
    PtsimTime stream = 0;
    for (int64_t i = 0; i < trace.count; i++) {
      const PtsimTraceRecord *r = &trace.records[i];
      if (r->stage != s || r->kind != PTSIM_TRACE_GRAD_SYNC) continue;
      if (r->chunk != want_chunk) { /* chunk 1's are all done */
        double size, at_end;
        int32_t n = ptsim_plan_chunk_buckets(
            plan, ptsim_plan_chunk_grad_params(plan, s, want_chunk, &at_end), &size);
        g_assert_cmpint(want_bucket, ==, n);
        want_chunk--, want_bucket = 0;
      }
      g_assert_cmpint(r->chunk, ==, want_chunk);
      g_assert_cmpint(r->microbatch, ==, want_bucket);
      g_assert_cmpint(r->start_ns, >=, stream);
      stream = r->end_ns;
      want_bucket++, seen++;
    }
    g_assert_cmpint(want_chunk, ==, 0);
    g_assert_cmpint(seen, >, 2);
    g_assert_cmpint(ns(t->stages[s].grad_sync_end_s), ==,
                    stream > ns(t->stages[s].end_s) ? stream : ns(t->stages[s].end_s));
  }
  g_free(trace.records);
}

/* Megatron's one rule for the bucket: max(40M, 1M x dp). */
static void test_bucket_rule(void) {
  g_test_summary("a bucket holds max(40M, dp x 1M) parameters; the last one the rest");
  PtsimJob job;
  job_of(&job, 2, 8, 8);
  g_autofree PtsimPlan *plan = plan_of(&job);
  double size;
  g_assert_cmpfloat(ptsim_plan_bucket_params(&job), ==, 40e6);
  g_assert_cmpint(ptsim_plan_chunk_buckets(plan, 100e6, &size), ==, 3); /* 40 + 40 + 20 */
  g_assert_cmpint(ptsim_plan_chunk_buckets(plan, 80e6, &size), ==, 2);
  g_assert_cmpint(ptsim_plan_chunk_buckets(plan, 0.0, &size), ==, 0);
  job_of(&job, 2, 128, 128);
  g_assert_cmpfloat(ptsim_plan_bucket_params(&job), ==, 128e6);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/dp-buckets/bucket-rule", test_bucket_rule);
  g_test_add_func("/dp-buckets/two-buckets", test_two_buckets);
  g_test_add_func("/dp-buckets/reduction-longer-than-backward",
                  test_reduction_longer_than_backward);
  g_test_add_func("/dp-buckets/trace-order", test_trace_order);
  return g_test_run();
}

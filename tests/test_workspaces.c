/* test_workspaces.c — the GEMM workspaces PyTorch and Transformer Engine
 * keep in the caching allocator (sim/io/workspaces.c reading
 * hw_profiles/software/workspaces.ini, sim/core/memory.c counting them per
 * stage, sim/core/lifetimes.c allocating them).
 *
 * Expected values from the sources the data file names:
 *   PyTorch's CUBLAS_WORKSPACE_CONFIG ":SIZE:COUNT" is SIZE KiB x COUNT:
 *     ":4096:8"       = 4096 x 1024 x 8             = 33554432 B
 *     ":4096:2:16:8"  = 4096 x 1024 x 2 + 16 x 1024 x 8 = 8519680 B
 *   Transformer Engine: 32 MiB + 1024 B = 33555456 B from compute capability
 *   9 on, 4194304 B before. */
#include <glib.h>
#include <string.h>
#include "job_fixture.h"
#include "job_build.h"
#include "lifetimes.h"
#include "memory.h"
#include "plan_of.h"
#include "workspaces.h"

static void test_parse_config(void) {
  g_test_summary("CUBLAS_WORKSPACE_CONFIG as PyTorch reads it: sum of SIZE KiB x COUNT");
  g_autoptr(GError) error = NULL;
  double bytes = 0.0;
  g_assert_true(ptsim_workspaces_parse_config(":4096:8", "x", &bytes, &error));
  g_assert_cmpfloat(bytes, ==, 33554432.0);
  g_assert_true(ptsim_workspaces_parse_config(":4096:2:16:8", "x", &bytes, &error));
  g_assert_cmpfloat(bytes, ==, 8519680.0);
  g_assert_no_error(error);
  g_assert_false(
      ptsim_workspaces_parse_config("4096", "--cublas-workspace-config", &bytes, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "--cublas-workspace-config"));
  g_clear_error(&error);
  g_assert_false(ptsim_workspaces_parse_config(":0:8", "x", &bytes, &error));
  g_clear_error(&error);
}

static void test_resolve(void) {
  g_test_summary("each GPU's defaults from the data file; the flag replaces PyTorch's");
  g_autoptr(GError) error = NULL;
  PtsimSettings run;
  memset(&run, 0, sizeof run);
  g_assert_true(ptsim_workspaces_resolve("a100-80g", NULL, &run, &error));
  g_assert_cmpfloat(run.cublas_workspace_bytes, ==, 8519680.0);
  g_assert_cmpfloat(run.te_workspace_bytes, ==, 4194304.0);
  g_assert_true(ptsim_workspaces_resolve("h100-80g", NULL, &run, &error));
  g_assert_cmpfloat(run.cublas_workspace_bytes, ==, 33554432.0);
  g_assert_cmpfloat(run.te_workspace_bytes, ==, 33555456.0);
  g_assert_true(ptsim_workspaces_resolve("a100-80g", ":4096:8", &run, &error));
  g_assert_cmpfloat(run.cublas_workspace_bytes, ==, 33554432.0);
  g_assert_cmpfloat(run.te_workspace_bytes, ==, 4194304.0);
  /* a profile the file does not list: none counted */
  g_assert_true(ptsim_workspaces_resolve("my-own-gpu", NULL, &run, &error));
  g_assert_cmpfloat(run.cublas_workspace_bytes, ==, 0.0);
  g_assert_cmpfloat(run.te_workspace_bytes, ==, 0.0);
  g_assert_no_error(error);
}

/* A job through the commands' path (flags). */
static void build(PtsimJob *job, const char *const *flags) {
  g_autoptr(GError) error = NULL;
  gboolean ok = ptsim_job_build_from_flags(flags, job, NULL, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
}

static void test_counts(void) {
  g_test_summary("which stage holds which: PyTorch's two on the output layer's stage, TE's one, "
                 "four more for grouped GEMMs, userbuffers' three-in-one");
  PtsimJob job;
  const char *dense[] = {"--model", "llama3-8b", "--hw",  "h100-80g", "--gpus", "8",    "--tp", "2",
                         "--pp",    "2",         "--gbs", "16",       "--seq",  "4096", NULL};
  build(&job, dense);
  g_autofree PtsimPlan *plan = plan_of(&job);
  PtsimWorkspaces w;
  /* stage 0: TE layers, flash attention, no output layer: no PyTorch GEMM */
  ptsim_memory_workspaces(plan, 0, &w);
  g_assert_cmpint(w.torch, ==, 0);
  g_assert_cmpint(w.te, ==, 1);
  g_assert_cmpint(w.te_userbuffers, ==, 0);
  g_assert_cmpfloat(ptsim_memory_workspace_bytes(plan, 0), ==, 33555456.0);
  /* stage 1: the output layer's forward (main thread) and backward
   * (autograd's thread): 2 x 32 MiB + TE's */
  ptsim_memory_workspaces(plan, 1, &w);
  g_assert_cmpint(w.torch, ==, 2);
  g_assert_cmpfloat(ptsim_memory_workspace_bytes(plan, 1), ==, 2.0 * 33554432.0 + 33555456.0);

  const char *ub[] = {
      "--model", "llama3-8b", "--hw", "a100-80g",          "--gpus", "8", "--tp", "8", "--gbs",
      "16",      "--seq",     "4096", "--tp-comm-overlap", NULL};
  build(&job, ub);
  g_autofree PtsimPlan *plan_ub = plan_of(&job);
  ptsim_memory_workspaces(plan_ub, 0, &w);
  g_assert_cmpint(w.te_userbuffers, ==, 1);
  /* 2 x 8519680 + 4194304 + 3 x 4194304 */
  g_assert_cmpfloat(ptsim_memory_workspace_bytes(plan_ub, 0), ==,
                    2.0 * 8519680.0 + 4.0 * 4194304.0);

  const char *moe[] = {"--model", "mixtral-8x7b", "--hw",  "a100-80g", "--gpus",
                       "8",       "--ep",         "8",     "--tp",     "1",
                       "--gbs",   "16",           "--seq", "4096",     "--moe-grouped-gemm",
                       NULL};
  build(&job, moe);
  g_autofree PtsimPlan *plan_moe = plan_of(&job);
  ptsim_memory_workspaces(plan_moe, 0, &w);
  g_assert_cmpint(w.torch, ==, 2); /* the router's linear, and the output layer */
  g_assert_cmpint(w.te, ==, 5);    /* one, and one per grouped-GEMM stream */
}

static void test_in_estimate_and_emulation(void) {
  g_test_summary("the estimate's other bytes and the emulation's allocated bytes after the "
                 "optimizer step both hold the workspaces");
  PtsimJob job;
  const char *flags[] = {"--model", "llama3-8b", "--hw",  "h100-80g", "--gpus", "8",    "--tp", "2",
                         "--pp",    "2",         "--gbs", "16",       "--seq",  "4096", NULL};
  build(&job, flags);
  PtsimJob none = job;
  none.settings.cublas_workspace_bytes = none.settings.te_workspace_bytes = 0.0;
  g_autofree PtsimMemoryEstimate *with = g_new0(PtsimMemoryEstimate, 1);
  g_autofree PtsimMemoryEstimate *without = g_new0(PtsimMemoryEstimate, 1);
  estimate_of(&job, PTSIM_CE_LAST_STAGE, with);
  estimate_of(&none, PTSIM_CE_LAST_STAGE, without);
  double ws = 2.0 * 33554432.0 + 33555456.0;
  g_assert_cmpfloat(with->stages[1].workspace_bytes, ==, ws);
  g_assert_cmpfloat(with->stages[1].total_bytes - without->stages[1].total_bytes, ==, ws);

  /* the emulation: a replay's last sample (after the optimizer step) */
  double steady[2];
  for (int k = 0; k < 2; k++) {
    const PtsimJob *j = k == 0 ? &job : &none;
    g_autofree PtsimPlan *plan = plan_of(j);
    int32_t n = plan->schedule_items;
    g_autofree PtsimScheduleItem *items = g_new(PtsimScheduleItem, n);
    ptsim_schedule_build(j->layout.schedule, (int32_t)plan->num_stages,
                         (int32_t)plan->num_microbatches, (int32_t)plan->num_chunks,
                         (int32_t)plan->microbatch_group, 1, items, n);
    int64_t bytes = ptsim_lifetimes_scratch_bytes(plan, 1);
    g_autofree void *scratch = g_malloc(bytes);
    PtsimAllocTimeline tl = {NULL, ptsim_lifetimes_timeline_samples(n, 2), 0};
    g_autofree PtsimAllocSample *samples = g_new(PtsimAllocSample, tl.capacity);
    tl.samples = samples;
    g_autofree PtsimStageAlloc *out = g_new0(PtsimStageAlloc, 1);
    g_assert_cmpint(ptsim_lifetimes_replay(plan, 1, items, n, 2, NULL, 1, scratch, bytes, &tl, out),
                    ==, 0);
    g_assert_cmpint(tl.count, ==, tl.capacity);
    steady[k] = samples[tl.count - 1].allocated_bytes;
  }
  /* sizes that are multiples of 512 B are allocated as they are */
  g_assert_cmpfloat(steady[0] - steady[1], ==, ws);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/workspaces/parse-config", test_parse_config);
  g_test_add_func("/workspaces/resolve", test_resolve);
  g_test_add_func("/workspaces/counts", test_counts);
  g_test_add_func("/workspaces/in-estimate-and-emulation", test_in_estimate_and_emulation);
  return g_test_run();
}

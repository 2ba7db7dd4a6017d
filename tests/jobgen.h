/* jobgen.h — random valid jobs for the batch oracle tests (test_batch.c,
 * test_gpu.c), the engine's shortcut test (test_engine_period.c) and the
 * batch benchmark (bench/bench_batch.c).  Not a test and not part of the
 * library: a header-only helper for those.
 *
 * Draws model x hardware x layout (tp, pp, dp, cp, vp, mbs, microbatches,
 * seq, schedule, recompute, overlap switches, distributed optimizer, ZeRO-2/3
 * with its settings) from a GRand and keeps what ptsim_job_validate()
 * accepts, so the same seed gives the same jobs.  Microbatch counts are multiples of pp under the
 * interleaved schedule (its rule); other draws that do not validate (e.g.
 * tp not dividing the heads) are redrawn.  jobgen_try_moe draws
 * mixture-of-experts jobs the same way, with ep, etp, the dispatcher and
 * the MoE overlap switches (jobgen_fill keeps to dense models, so the
 * benchmark's jobs stay what they were).  jobgen_try_pipeline draws the
 * interleaved schedule's other shapes: microbatch groups other than pp
 * (microbatches no multiple of pp) and virtual stages of unequal layers. */
#ifndef PTSIM_TESTS_JOBGEN_H
#define PTSIM_TESTS_JOBGEN_H

#include <glib.h>
#include <math.h>
#include <string.h>
#include <stddef.h>
#include "batch.h"
#include "config.h"
#include "job_validate.h"
#include "plan.h"

static const char *const jobgen_models[] = {"llama3-8b", "llama3-70b", "gpt3-175b"};
static const char *const jobgen_hardware[] = {"a100-80g", "h100-80g"};
/* Mixtral (every layer MoE), Qwen3 (128 experts, QK-norm), DeepSeek-V2-Lite
 * (MLA, shared experts, a dense first layer), DeepSeek-V3 (61 layers, MTP). */
static const char *const jobgen_moe_models[] = {"mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v2-lite",
                                                "deepseek-v3"};
#define JOBGEN_N_MODELS G_N_ELEMENTS(jobgen_models)
#define JOBGEN_N_HARDWARE G_N_ELEMENTS(jobgen_hardware)
#define JOBGEN_N_MOE_MODELS G_N_ELEMENTS(jobgen_moe_models)

typedef struct {
  PtsimModel models[JOBGEN_N_MODELS];
  PtsimHardware hardware[JOBGEN_N_HARDWARE];
  PtsimModel moe_models[JOBGEN_N_MOE_MODELS];
} JobgenPool;

/* Loads the models and profiles (PTSIM_DATA_DIR or the source tree). */
static inline gboolean jobgen_pool_load(JobgenPool *pool, GError **error) {
  for (gsize i = 0; i < JOBGEN_N_MODELS; i++)
    if (!ptsim_model_load(jobgen_models[i], &pool->models[i], error)) return FALSE;
  for (gsize i = 0; i < JOBGEN_N_MOE_MODELS; i++)
    if (!ptsim_model_load(jobgen_moe_models[i], &pool->moe_models[i], error)) return FALSE;
  for (gsize i = 0; i < JOBGEN_N_HARDWARE; i++)
    if (!ptsim_hardware_load(jobgen_hardware[i], &pool->hardware[i], error)) return FALSE;
  return TRUE;
}

static inline int64_t jobgen_pick(GRand *rand, const int64_t *values, gsize n) {
  return values[g_rand_int_range(rand, 0, (gint32)n)];
}

/* The rest of a draw, for m microbatches: batch, GPUs, recompute, the
 * optimizer, its sharding and the overlaps. */
static inline void jobgen_draw_rest(GRand *rand, PtsimJob *job, int64_t m) {
  PtsimLayout *l = &job->layout;
  PtsimSettings *run = &job->settings;
  l->gbs = m * l->mbs * l->dp;
  l->gpus = l->tp * l->pp * l->cp * l->dp;
  run->recompute = (PtsimRecompute)g_rand_int_range(rand, 0, 3);
  l->distributed_optimizer = g_rand_int_range(rand, 0, 4) != 0;
  run->overlap_grad_reduce = g_rand_boolean(rand);
  run->overlap_param_gather = l->distributed_optimizer && g_rand_boolean(rand);
  /* a third of the sharded draws go further: ZeRO-2 or FSDP (either
   * implementation, HSDP replicas, each reshard policy, prefetch or not;
   * what validation refuses, e.g. torch's FSDP2 with experts, is redrawn) */
  if (l->distributed_optimizer && g_rand_int_range(rand, 0, 3) == 0) {
    l->sharding = g_rand_boolean(rand) ? PTSIM_SHARDING_PARAMS : PTSIM_SHARDING_GRADS;
    run->fsdp_impl = l->sharding == PTSIM_SHARDING_PARAMS && g_rand_boolean(rand)
                         ? PTSIM_FSDP_TORCH
                         : PTSIM_FSDP_MEGATRON;
    l->optimizer_instances = l->dp % 2 == 0 && g_rand_boolean(rand) ? 2 : 1;
    run->reshard_after_forward = g_rand_int_range(rand, PTSIM_RESHARD_AUTO,
                                                  PTSIM_RESHARD_ALWAYS + 1);
    run->fsdp_prefetch = g_rand_int_range(rand, 0, 4) != 0;
  }
}

/* One draw; FALSE when ptsim_job_validate refuses it. */
static inline gboolean jobgen_try(const JobgenPool *pool, GRand *rand, PtsimJob *job) {
  static const int64_t pow2_8[] = {1, 2, 4, 8};
  static const int64_t mbs[] = {1, 1, 2, 4};
  static const int64_t per_stage[] = {1, 2, 4};
  static const int64_t seqs[] = {2048, 4096, 8192};
  g_autoptr(GError) error = NULL;
  PtsimLayout *l = &job->layout;
  memset(job, 0, sizeof *job);
  job->model = pool->models[g_rand_int_range(rand, 0, JOBGEN_N_MODELS)];
  job->hw = pool->hardware[g_rand_int_range(rand, 0, JOBGEN_N_HARDWARE)];
  ptsim_job_init_defaults(job);
  l->tp = jobgen_pick(rand, pow2_8, 4);
  l->pp = jobgen_pick(rand, pow2_8, 4);
  l->dp = jobgen_pick(rand, pow2_8, 4);
  l->cp = g_rand_int_range(rand, 0, 8) == 0 ? 2 : 1;
  l->mbs = jobgen_pick(rand, mbs, 4);
  l->seq = jobgen_pick(rand, seqs, 3);
  l->schedule = (PtsimSchedule)g_rand_int_range(rand, 0, 4);
  if (l->schedule == PTSIM_SCHEDULE_INTERLEAVED) l->vp = g_rand_boolean(rand) ? 2 : 4;
  /* microbatches: a multiple of pp (interleaved needs it; fine for all) */
  int64_t m = l->pp * jobgen_pick(rand, per_stage, 3);
  if (l->pp == 1) m = jobgen_pick(rand, pow2_8, 4);
  jobgen_draw_rest(rand, job, m);
  return ptsim_job_validate(job, &error);
}

/* One draw with its microbatch count redrawn from 1..max_m (a multiple of
 * pp under the interleaved schedule), so that long steady states occur;
 * FALSE when ptsim_job_validate refuses it. */
static inline gboolean jobgen_try_long(const JobgenPool *pool, GRand *rand, PtsimJob *job,
                                       int max_m) {
  g_autoptr(GError) error = NULL;
  if (!jobgen_try(pool, rand, job)) return FALSE;
  PtsimLayout *l = &job->layout;
  int64_t m = g_rand_int_range(rand, 1, max_m + 1);
  if (l->schedule == PTSIM_SCHEDULE_INTERLEAVED) m = l->pp * MAX(1, m / l->pp);
  l->gbs = m * l->mbs * l->dp;
  return ptsim_job_validate(job, &error);
}

/* One mixture-of-experts draw (m from 1..max_m, as jobgen_try_long): the
 * dense layout as jobgen_try's (uneven first stage when pp does not divide
 * the layers), ep and etp, the dispatcher, capacity factor, and the MoE
 * overlap and fusion switches; FALSE when ptsim_job_validate refuses it. */
static inline gboolean jobgen_try_moe(const JobgenPool *pool, GRand *rand, PtsimJob *job,
                                      int max_m) {
  static const int64_t pow2_4[] = {1, 2, 4};
  static const int64_t pow2_8[] = {1, 2, 4, 8};
  static const int64_t seqs[] = {1024, 2048, 4096};
  g_autoptr(GError) error = NULL;
  PtsimLayout *l = &job->layout;
  PtsimSettings *run = &job->settings;
  memset(job, 0, sizeof *job);
  job->model = pool->moe_models[g_rand_int_range(rand, 0, JOBGEN_N_MOE_MODELS)];
  job->hw = pool->hardware[g_rand_int_range(rand, 0, JOBGEN_N_HARDWARE)];
  ptsim_job_init_defaults(job);
  l->tp = jobgen_pick(rand, pow2_4, 3);
  l->pp = jobgen_pick(rand, pow2_4, 3);
  l->dp = jobgen_pick(rand, pow2_8, 4);
  l->cp = g_rand_int_range(rand, 0, 8) == 0 ? 2 : 1;
  l->ep = jobgen_pick(rand, pow2_8, 4);
  l->etp = g_rand_boolean(rand) ? l->tp : 1;
  l->mbs = jobgen_pick(rand, pow2_4, 2);
  l->seq = jobgen_pick(rand, seqs, 3);
  l->schedule = (PtsimSchedule)g_rand_int_range(rand, 0, 4);
  if (l->schedule == PTSIM_SCHEDULE_INTERLEAVED) l->vp = g_rand_boolean(rand) ? 2 : 3;
  if (job->model.num_layers % l->pp != 0) /* the rest split evenly after the first */
    l->first_stage_layers = job->model.num_layers - (l->pp - 1) * (job->model.num_layers / l->pp);
  int64_t m = g_rand_int_range(rand, 1, max_m + 1);
  if (l->schedule == PTSIM_SCHEDULE_INTERLEAVED) m = l->pp * MAX(1, m / l->pp);
  jobgen_draw_rest(rand, job, m);
  run->moe_dispatcher = (PtsimDispatcher)g_rand_int_range(rand, 0, 3);
  run->moe_capacity_factor = g_rand_boolean(rand) ? 0.0 : 1.25;
  run->moe_pad_to_capacity = run->moe_capacity_factor > 0.0 && g_rand_boolean(rand);
  run->moe_grouped_gemm = g_rand_boolean(rand);
  run->moe_permute_fusion = g_rand_boolean(rand);
  run->moe_shared_expert_overlap = job->model.moe_shared_expert_size > 0 && g_rand_boolean(rand);
  run->moe_ep_comm_overlap = g_rand_int_range(rand, 0, 4) == 0;
  return ptsim_job_validate(job, &error);
}

/* Virtual stages of unequal layers, as a pipeline layout gives them
 * (job.h vstage_runs): the layers split evenly over the pp x vp virtual
 * stages, the rest on the first, then a few moved between the first and
 * the last, the last sometimes left with none (only the loss, as in
 * "Et*3|(tt|)*6L"); FALSE when the model has too few layers. */
static inline gboolean jobgen_draw_runs(GRand *rand, PtsimJob *job) {
  PtsimLayout *l = &job->layout;
  int64_t n = l->pp * l->vp, layers = job->model.num_layers, u = layers / n;
  int64_t first = u + layers % n, last = u, d;
  if (u < 1 || n < 3) return FALSE;
  d = g_rand_int_range(rand, 0, (gint32)MIN(u, 3) + 1);
  if (g_rand_boolean(rand)) { /* the last leaves d to the first */
    first += d;
    last -= d;
  } else if (first > d) { /* or the first to the last */
    first -= d;
    last += d;
  }
  if (g_rand_int_range(rand, 0, 3) == 0) { /* the loss alone */
    first += last;
    last = 0;
  }
  l->first_stage_layers = l->last_stage_layers = 0;
  l->account_embedding = l->account_loss = 0;
  l->vstage_runs = 3;
  l->vstage_run_count[0] = 1;
  l->vstage_run_layers[0] = (int32_t)first;
  l->vstage_run_count[1] = (int32_t)(n - 2);
  l->vstage_run_layers[1] = (int32_t)u;
  l->vstage_run_count[2] = 1;
  l->vstage_run_layers[2] = (int32_t)last;
  return TRUE;
}

/* One draw of the interleaved schedule's other shapes: jobgen_try's (or
 * jobgen_try_moe's, `moe`) interleaved layouts with m from pp..max_m in
 * microbatch groups of g from pp up to m (each Megatron-LM accepts: a last
 * group of g, or of pp at least; g = pp, the default, half the time when m
 * allows it) and, half the time, virtual stages of unequal layers
 * (jobgen_draw_runs); FALSE when a draw fails or ptsim_job_validate
 * refuses it. */
static inline gboolean jobgen_try_pipeline(const JobgenPool *pool, GRand *rand, PtsimJob *job,
                                           gboolean moe, int max_m) {
  g_autoptr(GError) error = NULL;
  PtsimLayout *l = &job->layout;
  if (!(moe ? jobgen_try_moe(pool, rand, job, max_m) : jobgen_try(pool, rand, job)) ||
      l->schedule != PTSIM_SCHEDULE_INTERLEAVED || max_m < l->pp)
    return FALSE;
  int64_t m = g_rand_int_range(rand, (gint32)l->pp, max_m + 1);
  int64_t g = l->pp + g_rand_int_range(rand, 0, (gint32)MIN(m - l->pp, 2 * l->pp) + 1);
  if (m % l->pp == 0 && g_rand_boolean(rand)) g = l->pp;
  if (m % g != 0 && m % g < l->pp) return FALSE;
  l->microbatch_group = g == l->pp && g_rand_boolean(rand) ? 0 : g;
  l->gbs = m * l->mbs * l->dp;
  if (g_rand_boolean(rand) && !jobgen_draw_runs(rand, job)) return FALSE;
  return ptsim_job_validate(job, &error);
}

/* What a property test draws with: the models and profiles, a random
 * stream seeded for it, a plan to build into. */
typedef struct {
  JobgenPool pool;
  GRand *rand;
  PtsimPlan *plan;
} JobgenDraws;

static inline void jobgen_draws_open(JobgenDraws *d, guint32 seed) {
  g_autoptr(GError) error = NULL;
  g_assert_true(jobgen_pool_load(&d->pool, &error));
  d->rand = g_rand_new_with_seed(seed);
  d->plan = g_new0(PtsimPlan, 1);
}

static inline void jobgen_draws_close(JobgenDraws *d) {
  g_rand_free(d->rand);
  g_free(d->plan);
}

/* Fills jobs[0..n) with valid jobs.  FALSE (with a message in *error) only
 * when loading failed or draws keep failing (a bug in the generator). */
static inline gboolean jobgen_fill(GRand *rand, PtsimJob *jobs, gsize n, GError **error) {
  JobgenPool pool;
  if (!jobgen_pool_load(&pool, error)) return FALSE;
  for (gsize i = 0; i < n; i++) {
    int tries = 0;
    while (!jobgen_try(&pool, rand, &jobs[i])) {
      if (++tries > 1000) {
        g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                    "jobgen: 1000 draws in a row failed to validate");
        return FALSE;
      }
    }
  }
  return TRUE;
}

/* ---- comparing batch results, field by field ---- */

/* The floating-point fields of PtsimBatchResult, for per-field reports. */
typedef struct {
  const char *name;
  size_t offset;
} JobgenField;

static const JobgenField jobgen_fields[] = {
    {"total_bytes", offsetof(PtsimBatchResult, total_bytes)},
    {"usage_fraction", offsetof(PtsimBatchResult, usage_fraction)},
    {"step_s", offsetof(PtsimBatchResult, step_s)},
    {"tokens_per_s", offsetof(PtsimBatchResult, tokens_per_s)},
    {"tflops_per_gpu", offsetof(PtsimBatchResult, tflops_per_gpu)},
    {"mfu", offsetof(PtsimBatchResult, mfu)},
    {"bubble_fraction", offsetof(PtsimBatchResult, bubble_fraction)},
    {"exposed_tp_s", offsetof(PtsimBatchResult, exposed_comm_s)},
    {"exposed_cp_s", offsetof(PtsimBatchResult, exposed_comm_s) + sizeof(double)},
    {"exposed_pp_s", offsetof(PtsimBatchResult, exposed_comm_s) + 2 * sizeof(double)},
    {"exposed_dp_s", offsetof(PtsimBatchResult, exposed_comm_s) + 3 * sizeof(double)},
    {"exposed_ep_s", offsetof(PtsimBatchResult, exposed_comm_s) + 4 * sizeof(double)},
};
#define JOBGEN_N_FIELDS G_N_ELEMENTS(jobgen_fields)

static inline double jobgen_field(const PtsimBatchResult *r, gsize f) {
  return *(const double *)((const char *)r + jobgen_fields[f].offset);
}

/* llm.c-style tolerance: |got - ref| <= abs + rel * |ref|. */
#define JOBGEN_ABS_TOL 1e-12
#define JOBGEN_REL_TOL 1e-9

static inline gboolean jobgen_close(double got, double ref) {
  return fabs(got - ref) <= JOBGEN_ABS_TOL + JOBGEN_REL_TOL * fabs(ref);
}

/* |got - ref| / |ref| (0 when both are 0). */
static inline double jobgen_rel_diff(double got, double ref) {
  double d = fabs(got - ref);
  if (d == 0.0) return 0.0;
  return ref != 0.0 ? d / fabs(ref) : d;
}

#endif /* PTSIM_TESTS_JOBGEN_H */

/* megatron_cases.c — Megatron-LM's functional test cases read, sorted in
 * or out of scope, predicted and compared; see megatron_cases.h.  The
 * report is megatron_cases_report.c. */
#include "megatron_cases.h"

#include <math.h>
#include <string.h>
#include "alloc_conf.h"
#include "job_build.h"
#include "lifetimes.h"
#include "megatron_recipes.h"
#include "memory.h"
#include "schedule.h"
#include "simulate.h"

/* ---- rows ---- */

static const char *const quantity_keys[PTSIM_CASE_QUANTITIES] = {"peak_emulation", "peak_estimate",
                                                                 "steady_emulation",
                                                                 "steady_estimate",
                                                                 "iteration_time"};

const char *ptsim_case_quantity_key(PtsimCaseQuantity q) {
  return q < PTSIM_CASE_QUANTITIES ? quantity_keys[q] : "?";
}

int ptsim_case_quantity_of(const char *key) {
  for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++)
    if (strcmp(quantity_keys[q], key) == 0) return q;
  return -1;
}

void ptsim_case_row_free(PtsimCaseRow *r) {
  if (!r) return;
  char *strings[] = {r->family, r->name,   r->platform, r->environment, r->source,
                     r->commit, r->reason, r->command,  r->hw,          r->assumed};
  for (size_t i = 0; i < G_N_ELEMENTS(strings); i++) g_free(strings[i]);
  g_ptr_array_unref(r->unmodelled);
  g_ptr_array_unref(r->env_applied);
  g_ptr_array_unref(r->env_ignored);
  g_free(r);
}

static PtsimCaseRow *row_new(const PtsimMegatronCase *c, const PtsimMegatronMeasured *m) {
  PtsimCaseRow *r = g_new0(PtsimCaseRow, 1);
  r->family = g_strdup(c->family);
  r->name = g_strdup(c->name);
  r->platform = g_strdup(m ? m->platform : "");
  r->environment = g_strdup(m ? m->environment : "");
  r->source = g_strdup(m ? m->source : c->config);
  r->commit = g_strdup(c->commit ? c->commit : "");
  r->command = ptsim_megatron_case_command(c);
  r->hw = g_strdup("");
  r->assumed = g_strdup("");
  r->gpus = c->gpus;
  r->unmodelled = g_ptr_array_new_with_free_func(g_free);
  r->env_applied = g_ptr_array_new_with_free_func(g_free);
  r->env_ignored = g_ptr_array_new_with_free_func(g_free);
  for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++) r->measured[q] = r->predicted[q] = NAN;
  if (m) {
    r->measured[PTSIM_CASE_PEAK_EMULATION] = r->measured[PTSIM_CASE_PEAK_ESTIMATE] =
        m->peak_allocated_bytes;
    r->measured[PTSIM_CASE_STEADY_EMULATION] = r->measured[PTSIM_CASE_STEADY_ESTIMATE] =
        m->steady_allocated_bytes;
    r->measured[PTSIM_CASE_TIME] = m->iteration_time_s;
  }
  r->stage = -1;
  r->runs = -1;
  r->kase = c;
  r->run = m;
  return r;
}

static void row_set_reason(PtsimCaseRow *r, PtsimCaseStatus status, char *why /* transfer full */) {
  r->status = status;
  g_free(r->reason);
  r->reason = why;
}

static void row_assume(PtsimCaseRow *r, const char *what) {
  char *s = *r->assumed ? g_strdup_printf("%s; %s", r->assumed, what) : g_strdup(what);
  g_free(r->assumed);
  r->assumed = s;
}

double ptsim_case_row_error(const PtsimCaseRow *r, PtsimCaseQuantity q) {
  if (r->status != PTSIM_CASE_COMPARED) return NAN;
  double p = r->predicted[q], m = r->measured[q];
  if (isnan(p) || isnan(m) || !(m > 0.0)) return NAN;
  return (p - m) / m;
}

/* ---- reading ---- */

static gboolean read_tree(const char *path, GPtrArray *cases, GError **error);

static gboolean read_one(const char *path, GPtrArray *cases, GError **error) {
  if (ptsim_megatron_case_held_out(path)) return TRUE; /* never opened */
  if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
    g_autofree char *config = g_build_filename(path, "model_config.yaml", NULL);
    if (!g_file_test(config, G_FILE_TEST_EXISTS)) return read_tree(path, cases, error);
    PtsimMegatronCase *c = ptsim_megatron_case_read_dir(path, error);
    if (!c) return FALSE;
    g_ptr_array_add(cases, c);
    return TRUE;
  }
  if (!g_str_has_suffix(path, ".ini")) return TRUE;
  PtsimMegatronCase *c = ptsim_megatron_case_read_record(path, error);
  if (!c) return FALSE;
  g_ptr_array_add(cases, c);
  return TRUE;
}

/* Every case folder and record below PATH, in name order. */
static gboolean read_tree(const char *path, GPtrArray *cases, GError **error) {
  g_autoptr(GPtrArray) names = ptsim_megatron_case_list_dir(path, error);
  if (!names) return FALSE;
  for (guint i = 0; i < names->len; i++) {
    g_autofree char *child = g_build_filename(path, names->pdata[i], NULL);
    if (!read_one(child, cases, error)) return FALSE;
  }
  return TRUE;
}

/* The recipes folder of the checkout PATH lies in, or NULL. */
static char *find_recipes(const char *path) {
  g_autofree char *dir = g_canonicalize_filename(path, NULL);
  while (TRUE) {
    const char *below[] = {"tests/test_utils/recipes", "test_utils/recipes"};
    for (size_t i = 0; i < G_N_ELEMENTS(below); i++) {
      g_autofree char *r = g_build_filename(dir, below[i], NULL);
      if (g_file_test(r, G_FILE_TEST_IS_DIR)) return g_steal_pointer(&r);
    }
    g_autofree char *up = g_path_get_dirname(dir);
    if (strcmp(up, dir) == 0) return NULL;
    g_free(dir);
    dir = g_steal_pointer(&up);
  }
}

gboolean ptsim_megatron_cases_read(const char *path, const char *recipes_dir, GPtrArray *cases,
                                   char **recipes_used, GError **error) {
  if (recipes_used) *recipes_used = NULL;
  if (ptsim_megatron_case_held_out(path)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ACCES,
                "%s: held out (GB200 / GB300 golden values are never read)", path);
    return FALSE;
  }
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s: no such file or folder", path);
    return FALSE;
  }
  guint first = cases->len;
  if (!read_one(path, cases, error)) return FALSE;
  g_autofree char *dir = recipes_dir ? g_strdup(recipes_dir) : find_recipes(path);
  g_autoptr(PtsimMegatronRecipes) recipes = NULL;
  if (dir && !(recipes = ptsim_megatron_recipes_read_dir(dir, error))) return FALSE;
  for (guint i = first; i < cases->len && recipes; i++) {
    PtsimMegatronCase *c = cases->pdata[i];
    const char *from = NULL;
    int64_t gpus = ptsim_megatron_recipes_gpus(recipes, c->family, c->name, &from);
    if (gpus > 0 && c->gpus <= 0) { /* a record's own count stays */
      c->gpus = gpus;
      g_free(c->gpus_from);
      c->gpus_from = g_strdup(from);
    }
  }
  if (recipes_used) *recipes_used = g_steal_pointer(&dir);
  return TRUE;
}

/* ---- scope ---- */

/* Why case C is not GPT / MoE pretraining from scratch, or NULL. */
static const char *out_of_scope(const PtsimMegatronCase *c) {
  static const char *const families[][2] = {
      {"bert", "encoder model (BERT): not modelled"},
      {"t5", "encoder-decoder model (T5): not modelled"},
      {"multimodal-llava", "multimodal model: not modelled"},
      {"mimo", "multimodal model: not modelled"},
      {"gpt-nemo", "NeMo run (NeMo's own flags, not Megatron-LM's)"},
      {"common", "tooling (checkpoint conversion), not a training run"}};
  static const char *const test_types[][2] = {
      {"frozen-start", "starts from a checkpoint (frozen-start)"},
      {"frozen-resume", "resumes from a checkpoint (frozen-resume): the optimizer states exist "
                        "before step 1"},
      {"release", "release run: multi-node, from a checkpoint; no recipe here gives its nodes"},
      {"checkpoint-consistency", "checkpoint-consistency test (several runs of one step)"}};
  /* Flextron trains nested sub-models at several budgets per step */
  for (guint k = 0; c->flags && k < c->flags->len; k++)
    if (strcmp(c->flags->pdata[k], "--flextron") == 0)
      return "Flextron (elastic nested sub-models trained at several budgets): not modelled";
  if (strcmp(c->mode, "inference") == 0) return "inference";
  if (strcmp(c->mode, "rl") == 0) return "reinforcement learning (RL)";
  if (strcmp(c->mode, "pretraining") != 0) return "not pretraining (MODE)";
  for (size_t i = 0; i < G_N_ELEMENTS(families); i++)
    if (strcmp(c->family, families[i][0]) == 0) return families[i][1];
  if (strcmp(c->family, "gpt") != 0 && strcmp(c->family, "moe") != 0 &&
      strcmp(c->family, "mixtral") != 0 && strcmp(c->family, "hybrid") != 0)
    return "family not read (ptsim reads gpt, moe, mixtral, hybrid)";
  for (size_t i = 0; i < G_N_ELEMENTS(test_types); i++)
    if (strcmp(c->test_type, test_types[i][0]) == 0) return test_types[i][1];
  if (strcmp(c->test_type, "regular") != 0 && strcmp(c->test_type, "ckpt-resume") != 0)
    return "test type not read (ptsim reads regular, ckpt-resume)";
  return NULL;
}

/* ---- the environment ---- */

typedef enum { ENV_APPLIED, ENV_NO_EFFECT, ENV_IGNORED } EnvClass;

/* What ptsim does with each variable the cases set (the rest: not
 * modelled).  "No effect" variables change how the harness runs or logs,
 * not what the step allocates or how long it takes. */
static const struct {
  const char *name;
  EnvClass kind;
} env_rules[] = {{"PYTORCH_CUDA_ALLOC_CONF", ENV_APPLIED},
                 {"NVTE_FLASH_ATTN", ENV_APPLIED},
                 {"NVTE_FUSED_ATTN", ENV_APPLIED},
                 {"CUBLAS_WORKSPACE_CONFIG", ENV_APPLIED},
                 {"NCCL_DEBUG", ENV_NO_EFFECT},
                 {"PYTHONWARNINGS", ENV_NO_EFFECT},
                 {"N_REPEAT", ENV_NO_EFFECT},
                 {"N_REPEATS", ENV_NO_EFFECT},
                 {"SKIP_PYTEST", ENV_NO_EFFECT},
                 {"ARTIFACTS_ROOT", ENV_NO_EFFECT},
                 {"NON_DETERMINSTIC_RESULTS", ENV_NO_EFFECT},
                 {"ENABLE_LIGHTWEIGHT_MODE", ENV_NO_EFFECT}};

static EnvClass env_class(const char *name, const char *value) {
  /* =1: as the emulation, which has no recordStream holds (sim/core/alloc.h) */
  if (strcmp(name, "TORCH_NCCL_AVOID_RECORD_STREAMS") == 0)
    return strcmp(value, "1") == 0 ? ENV_APPLIED : ENV_IGNORED;
  /* NCCL without NVLink SHARP (ptsim's ring otherwise); Simple is the
   * protocol whose latencies ptsim's collectives use (core/cost.c); one
   * hardware queue is the host model's in-order issue (core/host_time.h) */
  if (strcmp(name, "NCCL_NVLS_ENABLE") == 0)
    return strcmp(value, "0") == 0 ? ENV_APPLIED : ENV_IGNORED;
  if (strcmp(name, "NCCL_ALGO") == 0)
    return g_ascii_strcasecmp(value, "Ring") == 0 || g_ascii_strcasecmp(value, "^NVLS") == 0
               ? ENV_APPLIED
               : ENV_IGNORED;
  if (strcmp(name, "NCCL_PROTO") == 0)
    return g_ascii_strcasecmp(value, "simple") == 0 ? ENV_APPLIED : ENV_IGNORED;
  if (strcmp(name, "CUDA_DEVICE_MAX_CONNECTIONS") == 0)
    return strcmp(value, "1") == 0 ? ENV_APPLIED : ENV_IGNORED;
  for (size_t i = 0; i < G_N_ELEMENTS(env_rules); i++)
    if (strcmp(env_rules[i].name, name) == 0) return env_rules[i].kind;
  return ENV_IGNORED;
}

/* The names set for the run: the harness's defaults, then ENV_VARS. */
static GPtrArray *env_names(const PtsimMegatronCase *c) {
  GPtrArray *names = g_ptr_array_new();
  for (size_t i = 0; i < PTSIM_MEGATRON_HARNESS_ENV; i++)
    g_ptr_array_add(names, (gpointer)ptsim_megatron_harness_env[i][0]);
  for (guint i = 0; i < c->env_keys->len; i++) {
    gboolean seen = FALSE;
    for (guint j = 0; j < names->len; j++)
      seen |= strcmp(names->pdata[j], c->env_keys->pdata[i]) == 0;
    if (!seen) g_ptr_array_add(names, c->env_keys->pdata[i]);
  }
  return names;
}

/* Applies what ptsim models of the run's environment: *alloc from
 * PYTORCH_CUDA_ALLOC_CONF, *cublas from CUBLAS_WORKSPACE_CONFIG (NULL: not
 * set), extra Megatron-LM flags into EXTRA, *no_nvls when NCCL may not use
 * NVLink SHARP; lists the rest on the row.  FALSE (row refused) when a value
 * cannot be read. */
static gboolean apply_env(PtsimCaseRow *r, const PtsimMegatronCase *c, PtsimAllocOptions *alloc,
                          const char **cublas, GString *extra, gboolean *no_nvls) {
  ptsim_alloc_options_init(alloc);
  *cublas = NULL;
  *no_nvls = FALSE;
  g_autoptr(GPtrArray) names = env_names(c);
  const char *flash = ptsim_megatron_case_effective_env(c, "NVTE_FLASH_ATTN");
  const char *fused = ptsim_megatron_case_effective_env(c, "NVTE_FUSED_ATTN");
  gboolean unfused = flash && fused && strcmp(flash, "0") == 0 && strcmp(fused, "0") == 0;
  for (guint i = 0; i < names->len; i++) {
    const char *name = names->pdata[i];
    const char *value = ptsim_megatron_case_effective_env(c, name);
    EnvClass kind = env_class(name, value);
    if (kind == ENV_NO_EFFECT) continue;
    if (kind == ENV_IGNORED) {
      g_ptr_array_add(r->env_ignored, g_strdup_printf("%s=%s", name, value));
      continue;
    }
    const char *what = "as ptsim's allocator (no recordStream holds)";
    if (strcmp(name, "PYTORCH_CUDA_ALLOC_CONF") == 0) {
      g_autoptr(GError) error = NULL;
      if (!ptsim_alloc_conf_parse(value, alloc, &error)) {
        row_set_reason(r, PTSIM_CASE_REFUSED,
                       g_strdup_printf("PYTORCH_CUDA_ALLOC_CONF: %s", error->message));
        return FALSE;
      }
      what = "the allocator emulation's settings";
    } else if (strcmp(name, "NCCL_NVLS_ENABLE") == 0 || strcmp(name, "NCCL_ALGO") == 0) {
      *no_nvls = TRUE;
      what = "no NVLink SHARP: ring collectives (the profile's nvls off)";
    } else if (strcmp(name, "NCCL_PROTO") == 0) {
      what = "as ptsim's collectives (the Simple protocol's latencies)";
    } else if (strcmp(name, "CUDA_DEVICE_MAX_CONNECTIONS") == 0) {
      what = "as ptsim's host model (kernels run in the order the host issues them)";
    } else if (strcmp(name, "CUBLAS_WORKSPACE_CONFIG") == 0) {
      *cublas = value;
      what = "PyTorch's cuBLAS workspaces (--cublas-workspace-config)";
    } else if (strcmp(name, "NVTE_FLASH_ATTN") == 0 || strcmp(name, "NVTE_FUSED_ATTN") == 0) {
      what = unfused ? "with both off: unfused attention (--attention-backend unfused)"
                     : "no change: Transformer Engine keeps its other fused attention kernel";
    }
    g_ptr_array_add(r->env_applied, g_strdup_printf("%s=%s: %s", name, value, what));
  }
  if (unfused) g_string_append(extra, " --attention-backend unfused");
  return TRUE;
}

/* ---- prediction ---- */

static const char *profile_of(const char *platform) {
  return strcmp(platform, "dgx_a100") == 0 ? "a100-80g" : "h100-80g";
}

/* Allocated bytes after the last replayed step's optimizer step of STAGE:
 * the replay with a timeline (every item), whose last sample is taken
 * after the optimizer step.  NAN when the replay fails. */
static double steady_allocated(const PtsimPlan *plan, int64_t stage, int32_t steps,
                               const PtsimAllocOptions *opts) {
  int32_t items = plan->schedule_items;
  int64_t bytes = ptsim_lifetimes_scratch_bytes(plan, stage);
  if (items <= 0 || bytes <= 0 || bytes > PTSIM_SIMULATE_SCRATCH_MAX) return NAN;
  g_autofree PtsimScheduleItem *order = g_new(PtsimScheduleItem, items);
  ptsim_schedule_build(plan->job.layout.schedule, (int32_t)plan->num_stages,
                       (int32_t)plan->num_microbatches, (int32_t)plan->num_chunks,
                       plan->microbatch_group, (int32_t)stage, order, items);
  PtsimAllocTimeline tl = {NULL, ptsim_lifetimes_timeline_samples(items, steps), 0};
  g_autofree PtsimAllocSample *samples = g_new(PtsimAllocSample, tl.capacity);
  tl.samples = samples;
  g_autofree void *scratch = g_malloc(bytes);
  g_autofree PtsimStageAlloc *out = g_new0(PtsimStageAlloc, 1);
  if (ptsim_lifetimes_replay(plan, stage, order, items, steps, opts, 1, scratch, bytes, &tl, out) !=
          0 ||
      tl.count != tl.capacity || !out->fits)
    return NAN;
  return samples[tl.count - 1].allocated_bytes;
}

/* Predicts JOB for row R: the last pipeline stage (rank world_size - 1). */
static void predict(PtsimCaseRow *r, const PtsimJob *job, const PtsimAllocOptions *alloc_opts) {
  g_autoptr(GError) error = NULL;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimMemoryEstimate *mem = g_new0(PtsimMemoryEstimate, 1);
  ptsim_plan_build(job, plan);
  if (!ptsim_simulate(plan, NULL, time, &error) ||
      !ptsim_simulate_allocator(plan, PTSIM_LIFETIMES_STEPS, alloc_opts, NULL, time->step_s, NULL,
                                alloc, &error)) {
    row_set_reason(r, PTSIM_CASE_REFUSED, g_strdup(error->message));
    return;
  }
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, mem);
  int64_t s = plan->num_stages - 1;
  const PtsimStageMemory *est = &mem->stages[s];
  r->stage = s;
  r->runs = alloc->runs;
  r->predicted[PTSIM_CASE_PEAK_EMULATION] = alloc->stages[s].allocated_peak_bytes;
  r->predicted[PTSIM_CASE_PEAK_ESTIMATE] = est->total_bytes;
  r->predicted[PTSIM_CASE_STEADY_EMULATION] = steady_allocated(plan, s, PTSIM_LIFETIMES_STEPS,
                                                               alloc_opts);
  r->predicted[PTSIM_CASE_STEADY_ESTIMATE] = est->steady_bytes;
  r->predicted[PTSIM_CASE_TIME] = time->step_s;
}

/* The job of case C on the row's platform, with the user's options. */
static gboolean build_job(PtsimCaseRow *r, const PtsimMegatronCase *c, const PtsimJobOptions *user,
                          const char *extra, const char *cublas, PtsimJob *job) {
  PtsimJobOptions opts;
  if (user)
    opts = *user; /* shallow: only the fields below differ, and they are not freed */
  else
    ptsim_job_options_init(&opts);
  g_autofree char *args = g_strdup_printf("%s%s%s%s", r->command, extra,
                                          opts.megatron_args ? " " : "",
                                          opts.megatron_args ? opts.megatron_args : "");
  opts.megatron_args = args;
  opts.megatron_args_file = NULL;
  g_free(r->command);
  r->command = g_strdup(args); /* what was read: the case's flags and what was added */
  if (!opts.hw) opts.hw = (char *)profile_of(r->platform);
  if (cublas && !opts.cublas_workspace_config) opts.cublas_workspace_config = (char *)cublas;
  g_free(r->hw);
  r->hw = g_strdup(opts.hw);
  if (!opts.gpus.given && !opts.nodes.given) {
    opts.gpus.given = TRUE;
    opts.gpus.value = c->gpus > 0 ? c->gpus : 8;
    if (c->gpus <= 0)
      row_assume(r, "8 GPUs: no recipe names the case (the harness's GPUS_PER_NODE default)");
  }
  r->gpus = opts.gpus.given ? opts.gpus.value : -1;
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimJobDiagnostics) diag = ptsim_job_diagnostics_new();
  diag->megatron->unknown_allowed = TRUE; /* the case ran: its flags are its release's */
  gboolean ok = ptsim_job_build(&opts, job, diag, &error);
  const PtsimMegatronDiagnostics *d = diag->megatron;
  for (guint i = 0; d && i < d->unmodelled->len; i++)
    g_ptr_array_add(r->unmodelled, g_strdup(d->unmodelled->pdata[i]));
  for (guint i = 0; d && i < d->unknown->len; i++)
    g_ptr_array_add(r->unmodelled, g_strdup_printf("%s (not a Megatron-LM flag ptsim knows)",
                                                   (const char *)d->unknown->pdata[i]));
  for (guint i = 0; d && i < d->notes->len; i++) row_assume(r, d->notes->pdata[i]);
  for (guint i = 0; i < diag->warnings->len; i++) row_assume(r, diag->warnings->pdata[i]);
  if (!ok) row_set_reason(r, PTSIM_CASE_REFUSED, g_strdup(error->message));
  return ok;
}

static void predict_case(GPtrArray *rows, const PtsimMegatronCase *c, const PtsimJobOptions *user) {
  const char *scope = out_of_scope(c);
  if (scope || c->unread || c->measured->len == 0) {
    PtsimCaseRow *r = row_new(c, NULL);
    if (scope)
      row_set_reason(r, PTSIM_CASE_OUT_OF_SCOPE, g_strdup(scope));
    else if (c->unread)
      row_set_reason(r, PTSIM_CASE_REFUSED, g_strdup(c->unread));
    else
      row_set_reason(r, PTSIM_CASE_UNMEASURED,
                     g_strdup("no golden values measured on dgx_a100 or dgx_h100"));
    g_ptr_array_add(rows, r);
    return;
  }
  for (guint i = 0; i < c->measured->len; i++) {
    PtsimCaseRow *r = row_new(c, c->measured->pdata[i]);
    g_ptr_array_add(rows, r);
    PtsimAllocOptions alloc;
    g_autoptr(GString) extra = g_string_new(NULL);
    PtsimJob job;
    const char *cublas;
    gboolean no_nvls = FALSE;
    if (!apply_env(r, c, &alloc, &cublas, extra, &no_nvls) ||
        !build_job(r, c, user, extra->str, cublas, &job))
      continue;
    if (no_nvls) job.hw.nvls = 0;
    predict(r, &job, &alloc);
  }
}

GPtrArray *ptsim_megatron_cases_predict(GPtrArray *cases, const PtsimJobOptions *user) {
  GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)ptsim_case_row_free);
  for (guint i = 0; i < cases->len; i++) predict_case(rows, cases->pdata[i], user);
  return rows;
}

/* ---- statistics ---- */

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
  if (n == 0) return NAN;
  qsort(v, n, sizeof *v, compare_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void ptsim_megatron_cases_stats(GPtrArray *rows, const char *platform, const char *family,
                                PtsimCaseQuantity q, PtsimCaseStats *out) {
  g_autofree double *signed_e = g_new(double, rows->len + 1);
  g_autofree double *abs_e = g_new(double, rows->len + 1);
  memset(out, 0, sizeof *out);
  out->worst = NAN;
  for (guint i = 0; i < rows->len; i++) {
    const PtsimCaseRow *r = rows->pdata[i];
    if ((platform && strcmp(r->platform, platform) != 0) ||
        (family && strcmp(r->family, family) != 0))
      continue;
    double e = ptsim_case_row_error(r, q);
    if (isnan(e)) continue;
    signed_e[out->n] = e;
    abs_e[out->n] = fabs(e);
    if (!(fabs(e) <= fabs(out->worst))) {
      out->worst = e;
      out->worst_row = r;
    }
    out->n++;
  }
  out->median_abs = median(abs_e, out->n);
  out->median = median(signed_e, out->n);
}

/* validate_cmd.c — `ptsim validate`; see validate_cmd.h.
 *
 * One pass: every input becomes rows (a log one row, a CSV one row per
 * line), every row either a job ptsim can simulate or a reason why not;
 * each job is predicted (DES step time, analytical memory, allocator
 * emulation, as `ptsim predict` does) and compared with what was measured;
 * then the statistics (validation.h) and the report.
 *
 * Published sources.  Each source counts FLOPs its own way
 * (shared/data/README.md), so a published TFLOP/s is turned back into a
 * step time with that source's formula and step times are compared:
 *   eq3       Narayanan et al. Eq. 3, counting the recompute pass:
 *             F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))
 *   megatron  Megatron-LM's num_floating_point_operations (model FLOPs):
 *             F = 12 B s l h^2 ((1 + k/a + s/h) + (ffn/h) g + V/(2 l h)),
 *             g = 1.5 for SwiGLU, else 1
 * The predicted TFLOP/s is F / (predicted step x GPUs) with the same F.
 * The mapping of each source (model prefix, hardware by gpu column, the
 * layout facts the source does not state) is validate_sources.c's table,
 * the one place it is defined: validate/calibrate_published.py reads its
 * rows from `ptsim validate --suite published --format json`.
 *
 * Other CSV files: model column = a model name or an .ini (looked up next
 * to the CSV first), hw/gpu column = a profile name or a GPU name
 * (H100, H200, A100 40/80 GB), layout from the columns; --model, --hw and
 * layout flags override the columns.  Their TFLOP/s are taken as
 * Megatron-LM's model FLOPs.
 *
 * Logs with an arguments block: the block, turned back into a Megatron-LM
 * command line (megatron_log.c), gives model and layout; --megatron-args
 * supplements or overrides it and the job options apply on top (as for any
 * Megatron-LM command line).  Without one, --model / --megatron-args and
 * layout flags give the job.  The global batch size the log prints fills
 * --gbs when nothing else gives it.  A memory line of rank r is compared
 * with the prediction for r's pipeline stage (one row per stage printed). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "validate_cmd.h"
#include "units.h"
#include "validate_args.h"
#include "validate_moe.h"
#include "validate_sources.h"
#include "cli_job.h"
#include "cli_options.h"
#include "gemm_shapes.h"
#include "config.h"
#include "job_validate.h"
#include "megatron_cases.h"
#include "megatron_log.h"
#include "megatron_log_date.h"
#include "memory.h"
#include "names.h"
#include "numbers.h"
#include "output.h"
#include "progress.h"
#include "report.h"
#include "run_csv.h"
#include "simulate.h"
#include "validate_row.h"
#include "validation.h"
#include "topology.h"
#include "workload.h"

#define EXIT_BAD_INPUT 2
#define MIB PTSIM_MIB_BYTES

/* ---- rows (the Row struct is in validate_row.h) ---- */

static Row *row_new(const char *input, int64_t line, const char *source, const char *label) {
  Row *r = g_new0(Row, 1);
  r->input = g_strdup(input);
  r->line = line;
  r->source = g_strdup(source);
  r->label = g_strdup(label);
  r->command = g_strdup("");
  r->assumed = g_strdup("");
  r->convention = g_strdup("megatron");
  r->meas_step_s = r->meas_tflops = r->meas_alloc_bytes = r->meas_reserved_bytes = NAN;
  r->meas_oom = -1;
  r->step_flops = NAN;
  r->pred_step_s = r->pred_tflops = NAN;
  r->est_total_bytes = r->est_usage = r->capacity_bytes = NAN;
  r->alloc_allocated_bytes = r->alloc_reserved_bytes = r->outside_bytes = NAN;
  r->alloc_runs = r->alloc_oom_step = r->runs_fail_step = -1;
  r->first_step_device_bytes = NAN;
  r->pred_reserved_bytes = NAN;
  r->alloc_oom = -1;
  return r;
}

static void row_free(gpointer p) {
  Row *r = p;
  g_free(r->input);
  g_free(r->source);
  g_free(r->label);
  g_free(r->command);
  g_free(r->assumed);
  g_free(r->convention);
  g_free(r->reason);
  g_free(r);
}

static void row_skip(Row *r, const char *reason) {
  g_free(r->reason);
  r->reason = g_strdup(reason);
}

static void set_str(char **field, char *value /* transfer full */) {
  g_free(*field);
  *field = value;
}

/* ---- FLOP formulas (see the header comment) ---- */

static double eq3_flops(double B, double s, double l, double h, double V) {
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

static double megatron_flops(double B, double s, double l, double h, double a, double k, double ffn,
                             double V, int gated) {
  return 12.0 * B * s * l * h * h *
         ((1.0 + k / a + s / h) + ffn / h * (gated ? 1.5 : 1.0) + V / (2.0 * l * h));
}

/* ---- job resolution ---- */

/* Resolves ARGS (+ the user's options when USER is not NULL) into a job,
 * recording the command on the row; on failure the row is skipped. */
static gboolean resolve_row_job(Row *r, GPtrArray *args, const PtsimJobOptions *user,
                                PtsimJob *job) {
  g_autoptr(GError) error = NULL;
  PtsimJobOptions opts;
  ptsim_job_options_init(&opts);
  set_str(&r->command, ptsim_validate_args_join(args));
  gboolean ok = ptsim_validate_args_parse(args, &opts, &error);
  if (ok && user) ptsim_validate_options_overlay(&opts, user);
  if (ok) ok = ptsim_job_build(&opts, job, NULL, &error);
  ptsim_job_options_clear(&opts);
  if (!ok) row_skip(r, error->message);
  return ok;
}

/* ---- prediction ---- */

/* Predicts JOB once and fills ROWS[i] with the prediction, its memory from
 * pipeline stage STAGES[i] (-1: the peak stage).  torch's "reserved" is the
 * caching allocator's and excludes the CUDA context and NCCL's buffers, so
 * the predicted reserved is the allocator's reserved peak (the outside
 * bytes are kept apart). */
static void predict_rows(Row **rows, const int64_t *stages, guint n, PtsimJob *job) {
  g_autoptr(GError) error = NULL;
  g_autofree PtsimTimeResult *time = g_new0(PtsimTimeResult, 1);
  g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimMemoryEstimate *mem = g_new0(PtsimMemoryEstimate, 1);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(job, plan);
  if (!ptsim_simulate(plan, NULL, time, &error) ||
      !ptsim_simulate_allocator(plan, 2, NULL, NULL, time->step_s, NULL, alloc, &error)) {
    for (guint i = 0; i < n; i++) row_skip(rows[i], error->message);
    return;
  }
  ptsim_memory_estimate(plan, PTSIM_CE_LAST_STAGE, mem);
  int oom = 0;
  for (int64_t i = 0; i < alloc->num_stages; i++)
    if (!alloc->stages[i].fits) oom = 1;
  for (guint i = 0; i < n; i++) {
    Row *r = rows[i];
    int64_t st = stages[i] >= 0 && stages[i] < alloc->num_stages ? stages[i] : alloc->peak_stage;
    int64_t est = stages[i] >= 0 && stages[i] < mem->num_stages ? stages[i] : mem->peak_stage;
    r->gpus = job->layout.gpus;
    r->pred_step_s = time->step_s;
    r->pred_tflops = isnan(r->step_flops) ? time->tflops_per_gpu
                                          : r->step_flops / (time->step_s * (double)r->gpus) /
                                                PTSIM_FLOPS_PER_TFLOPS;
    r->est_total_bytes = mem->stages[est].total_bytes;
    r->est_usage = mem->stages[est].total_bytes / mem->capacity_bytes;
    r->capacity_bytes = mem->capacity_bytes;
    r->alloc_allocated_bytes = alloc->stages[st].allocated_peak_bytes;
    r->alloc_reserved_bytes = alloc->stages[st].reserved_peak_bytes;
    r->outside_bytes = alloc->stages[st].outside_bytes;
    r->pred_reserved_bytes = alloc->stages[st].reserved_peak_bytes;
    r->alloc_oom = oom;
    r->alloc_runs = alloc->runs;
    r->alloc_oom_step = alloc->stages[st].fits ? -1 : alloc->stages[st].oom_step;
    r->runs_fail_step = alloc->stages[st].runs_fail_step;
    r->first_step_device_bytes = alloc->stages[st].first_step.device_peak_bytes;
  }
}

static void predict_row(Row *r, PtsimJob *job) {
  const int64_t peak = -1;
  predict_rows(&r, &peak, 1, job);
}

/* ---- CSV rows ---- */

/* A number as calibrate_published.py's num(): '~' dropped, the first word
 * (up to ' ', '(' or '%'), through the strict parser; NAN when none. */
static double cell_number(const PtsimRunCsv *csv, const PtsimRun *run, const char *column) {
  const char *cell = ptsim_run_csv_cell(csv, run, column);
  if (!cell) return NAN;
  while (*cell == ' ' || *cell == '~') cell++;
  g_autofree char *word = g_strndup(cell, strcspn(cell, " (%"));
  double v;
  return ptsim_number_parse_double(word, &v) ? v : NAN;
}

static double dim_or(const PtsimRunCsv *csv, const PtsimRun *run, const char *column,
                     double fallback) {
  double v = cell_number(csv, run, column);
  return isnan(v) || v <= 0 ? fallback : v;
}

static const char *recompute_word(int v) {
  return v < 0 ? NULL : ptsim_names_get(PTSIM_NAMES_RECOMPUTE, v);
}

static const char *precision_word(int v) {
  return v < 0 ? NULL : ptsim_names_get(PTSIM_NAMES_PRECISION, v);
}

static void csv_measured(Row *r, const PtsimRun *run) {
  r->meas_step_s = run->step_time_s;
  r->meas_tflops = run->tflops_per_gpu;
  if (!isnan(run->max_allocated_mb)) r->meas_alloc_bytes = run->max_allocated_mb * MIB;
  if (!isnan(run->max_reserved_mb)) r->meas_reserved_bytes = run->max_reserved_mb * MIB;
  r->meas_oom = run->oom;
}

static void published_row(Row *r, const PtsimPublishedSource *src, const PtsimRunCsv *csv,
                          const PtsimRun *run) {
  const char *model = run->model ? run->model : "";
  const char *gpu = ptsim_run_csv_cell(csv, run, "gpu");
  if (!gpu) gpu = run->hw ? run->hw : "";
  switch (src->label) {
  case PTSIM_LABEL_MODEL:
    set_str(&r->label, g_strdup(model));
    break;
  case PTSIM_LABEL_MODEL_SEQ:
    set_str(&r->label, g_strdup_printf("%s seq %" G_GINT64_FORMAT, model, run->seq_len));
    break;
  case PTSIM_LABEL_MODEL_GPUS:
    set_str(&r->label, g_strdup_printf("%s x%" G_GINT64_FORMAT, model, run->num_gpus));
    break;
  }
  set_str(&r->assumed,
          g_strdup(src->assumed ? src->assumed : ptsim_run_csv_cell(csv, run, "assumed")));
  set_str(&r->convention, g_strdup(src->flops == PTSIM_FLOPS_EQ3 ? "eq3" : "megatron"));
  const char *hw = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(src->hw) && src->hw[i].gpu_prefix; i++)
    if (g_str_has_prefix(gpu, src->hw[i].gpu_prefix)) {
      hw = src->hw[i].hw;
      break;
    }
  if (!hw) {
    g_autofree char *why = g_strdup_printf("gpu '%s': %s", gpu, src->no_hw_reason);
    row_skip(r, why);
    return;
  }
  int64_t seq = src->fixed_seq ? src->fixed_seq : run->seq_len;
  int64_t gbs = src->gbs_per_gpu && run->mbs > 0 ? run->mbs * run->num_gpus : run->gbs;
  if (run->num_gpus <= 0 || run->tp <= 0 || run->pp <= 0 || gbs <= 0 || seq <= 0) {
    row_skip(r, "the row lacks num_gpus, tp, pp, gbs or seq_len");
    return;
  }
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *lower = g_ascii_strdown(model, -1);
  g_autofree char *model_name = src->model_prefix ? g_strconcat(src->model_prefix, lower, NULL)
                                                  : g_strdup(src->fixed_model);
  ptsim_validate_args_add(args, "--model", model_name);
  ptsim_validate_args_add(args, "--hw", hw);
  ptsim_validate_args_add_int(args, "--gpus", run->num_gpus);
  ptsim_validate_args_add_int(args, "--tp", run->tp);
  ptsim_validate_args_add_int(args, "--pp", run->pp);
  if (src->use_cp && run->cp > 0) ptsim_validate_args_add_int(args, "--cp", run->cp);
  if (src->use_vp) ptsim_validate_args_add_int(args, "--vp", run->vp > 0 ? run->vp : 1);
  int64_t mbs = 1;
  if (src->mbs == PTSIM_MBS_COLUMN) mbs = run->mbs;
  if (src->mbs == PTSIM_MBS_GBS_OVER_DP) mbs = run->dp > 0 ? run->gbs / run->dp : -1;
  if (mbs <= 0) {
    row_skip(r, "the row gives no micro-batch size");
    return;
  }
  ptsim_validate_args_add_int(args, "--mbs", mbs);
  ptsim_validate_args_add_int(args, "--gbs", gbs);
  ptsim_validate_args_add_int(args, "--seq", seq);
  ptsim_validate_args_add_words(args, src->flags);
  if (src->flops == PTSIM_FLOPS_MOE_ROW) ptsim_validate_moe_args(csv, run, args);
  const char *ddp = ptsim_run_csv_cell(csv, run, "ddp_impl");
  if (src->ddp_torch_overlap && ddp && strcmp(ddp, "torch") == 0)
    ptsim_validate_args_add(args, "--overlap-grad-reduce", NULL);
  PtsimJob job;
  if (!resolve_row_job(r, args, NULL, &job)) return;

  const PtsimModel *m = &job.model;
  double B = (double)gbs, s = (double)seq;
  double l = dim_or(csv, run, "layers", (double)m->num_layers);
  double h = dim_or(csv, run, "hidden", (double)m->hidden_size);
  double a = dim_or(csv, run, "heads", (double)m->num_attention_heads);
  double V = dim_or(csv, run, "vocab", (double)m->vocab_size);
  const char *convention = NULL;
  r->step_flops = src->flops == PTSIM_FLOPS_EQ3 ? eq3_flops(B, s, l, h, V)
                  : src->flops == PTSIM_FLOPS_MOE_ROW
                      ? ptsim_validate_moe_flops(csv, run, &job, &convention)
                      : megatron_flops(B, s, l, h, a, (double)m->num_query_groups,
                                       (double)m->ffn_hidden_size, V,
                                       m->activation == PTSIM_ACTIVATION_SWIGLU);
  if (convention) set_str(&r->convention, g_strdup(convention));
  csv_measured(r, run);
  r->meas_tflops = cell_number(csv, run, src->tflops_column);
  if (src->bound_column)
    r->meas_lower_bound = g_strcmp0(ptsim_run_csv_cell(csv, run, src->bound_column), "at_least") ==
                          0;
  if (!src->step_from_time)
    r->meas_step_s = r->step_flops /
                     (r->meas_tflops * PTSIM_FLOPS_PER_TFLOPS * (double)run->num_gpus);
  predict_row(r, &job);
}

/* A GPU as a source names it -> a shipped profile. */
static const char *hw_for_gpu(const char *gpu) {
  g_autofree char *up = g_ascii_strup(gpu, -1);
  if (strstr(up, "H200")) return "h200-141g";
  if (strstr(up, "H100")) return "h100-80g";
  if (strstr(up, "A100")) return strstr(up, "40") ? "a100-40g" : "a100-80g";
  return NULL;
}

static void generic_row(Row *r, const char *csv_path, const PtsimRun *run,
                        const PtsimJobOptions *user) {
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
  if (!user->model && !user->megatron_args && !user->megatron_args_file) {
    if (!run->model) {
      row_skip(r, "no model column (give --model)");
      return;
    }
    g_autofree char *dir = g_path_get_dirname(csv_path);
    g_autofree char *file = g_str_has_suffix(run->model, ".ini")
                                ? g_build_filename(dir, run->model, NULL)
                                : g_strconcat(dir, G_DIR_SEPARATOR_S, run->model, ".ini", NULL);
    g_autofree char *lower = g_ascii_strdown(run->model, -1);
    ptsim_validate_args_add(args, "--model",
                            g_file_test(file, G_FILE_TEST_IS_REGULAR) ? file : lower);
  }
  if (!user->hw) {
    const char *hw = NULL;
    PtsimHardware probe;
    g_autofree char *lower = run->hw ? g_ascii_strdown(run->hw, -1) : NULL;
    if (lower && ptsim_hardware_load(lower, &probe, NULL)) hw = lower;
    if (!hw && run->hw) hw = hw_for_gpu(run->hw);
    if (!hw) {
      g_autofree char *why = g_strdup_printf("no hardware profile for gpu '%s' (give --hw)",
                                             run->hw ? run->hw : "");
      row_skip(r, why);
      return;
    }
    ptsim_validate_args_add(args, "--hw", hw);
  }
  if (run->num_gpus > 0) ptsim_validate_args_add_int(args, "--gpus", run->num_gpus);
  if (run->tp > 0) ptsim_validate_args_add_int(args, "--tp", run->tp);
  if (run->pp > 0) ptsim_validate_args_add_int(args, "--pp", run->pp);
  if (run->cp > 0) ptsim_validate_args_add_int(args, "--cp", run->cp);
  if (run->dp > 0) ptsim_validate_args_add_int(args, "--dp", run->dp);
  if (run->vp > 0) ptsim_validate_args_add_int(args, "--vp", run->vp);
  if (run->mbs > 0) ptsim_validate_args_add_int(args, "--mbs", run->mbs);
  if (run->gbs > 0) ptsim_validate_args_add_int(args, "--gbs", run->gbs);
  if (run->seq_len > 0) ptsim_validate_args_add_int(args, "--seq", run->seq_len);
  if (recompute_word(run->recompute))
    ptsim_validate_args_add(args, "--recompute", recompute_word(run->recompute));
  if (precision_word(run->precision))
    ptsim_validate_args_add(args, "--precision", precision_word(run->precision));
  gboolean megatron = user->megatron_args || user->megatron_args_file;
  if (!megatron && (run->gbs <= 0 && !user->gbs.given)) {
    row_skip(r, "no gbs column (give --gbs)");
    return;
  }
  if (!megatron && (run->seq_len <= 0 && !user->seq.given)) {
    row_skip(r, "no seq_len column (give --seq)");
    return;
  }
  PtsimJob job;
  if (!resolve_row_job(r, args, user, &job)) return;
  if (strcmp(ptsim_job_options_overlap_source(user), "default") == 0 && !megatron)
    set_str(&r->assumed, g_strdup("overlap: ptsim's default (grad-reduce and param-gather on, "
                                  "tp-comm off)"));
  csv_measured(r, run);
  if (isnan(r->meas_step_s) && !isnan(r->meas_tflops))
    r->meas_step_s = ptsim_workload_megatron_flops(&job) /
                     (r->meas_tflops * PTSIM_FLOPS_PER_TFLOPS * (double)job.layout.gpus);
  predict_row(r, &job);
}

/* Rows predicted so far of the total the inputs hold (a CSV its runs, a
 * log one), for the progress line. */
typedef struct {
  PtsimProgress line;
  guint64 done, total;
} RowProgress;

static void row_done(RowProgress *p) { ptsim_progress_show(++p->done, p->total, &p->line); }

static gboolean add_csv(GPtrArray *rows, const char *path, const PtsimRunCsv *csv,
                        const PtsimJobOptions *user, RowProgress *progress, GError **error) {
  const PtsimPublishedSource *src = ptsim_published_source_for(path);
  if (csv->runs->len == 0) {
    g_set_error(error, PTSIM_RUN_CSV_ERROR, PTSIM_RUN_CSV_ERROR_PARSE, "%s: no runs in the file",
                path);
    return FALSE;
  }
  for (guint i = 0; i < csv->runs->len; i++) {
    const PtsimRun *run = &g_array_index(csv->runs, PtsimRun, i);
    Row *r = row_new(path, run->line, src ? src->source : "csv", run->model ? run->model : "");
    g_ptr_array_add(rows, r);
    if (src)
      published_row(r, src, csv, run);
    else
      generic_row(r, path, run, user);
    row_done(progress);
  }
  return TRUE;
}

/* ---- log rows ---- */

/* The pipeline stage of each rank the log prints memory for (rank -1, the
 * 2020 form without "[Rank N]", is rank 0): *stages receives the distinct
 * stages, and the largest max allocated / max reserved of each. */
typedef struct {
  int64_t stage, rank;
  double max_allocated_mb, max_reserved_mb;
} StageMemory;

static GArray *memory_by_stage(const PtsimMegatronLog *log, const PtsimLayout *l) {
  GArray *out = g_array_new(FALSE, TRUE, sizeof(StageMemory));
  for (guint k = 0; k < log->memory->len; k++) {
    const PtsimLogMemory *m = &g_array_index(log->memory, PtsimLogMemory, k);
    int64_t rank = m->rank >= 0 ? m->rank : 0, pp_rank = 0;
    ptsim_topology_coords(l->tp, l->cp, l->dp, rank % l->gpus, NULL, NULL, NULL, &pp_rank);
    StageMemory *hit = NULL;
    for (guint i = 0; i < out->len; i++)
      if (g_array_index(out, StageMemory, i).stage == pp_rank)
        hit = &g_array_index(out, StageMemory, i);
    if (!hit) {
      StageMemory fresh = {pp_rank, rank, NAN, NAN};
      g_array_append_val(out, fresh);
      hit = &g_array_index(out, StageMemory, out->len - 1);
    }
    if (!isnan(m->max_allocated_mb) && !(m->max_allocated_mb <= hit->max_allocated_mb))
      hit->max_allocated_mb = m->max_allocated_mb;
    if (!isnan(m->max_reserved_mb) && !(m->max_reserved_mb <= hit->max_reserved_mb))
      hit->max_reserved_mb = m->max_reserved_mb;
  }
  return out;
}

/* The job of a log: its arguments block as a Megatron-LM command line,
 * with the user's --megatron-args after it and the job options on top;
 * without a block, the job options alone. */
static gboolean log_job(Row *r, const PtsimMegatronLog *log, const PtsimMegatronLogSummary *sum,
                        const PtsimJobOptions *user, PtsimJob *job) {
  g_autoptr(GError) error = NULL;
  if (!log->args_found) {
    if (!user->model && !user->megatron_args && !user->megatron_args_file) {
      row_skip(r, "no arguments block in the log; give --model (or --megatron-args) and the "
                  "layout flags");
      return FALSE;
    }
    g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
    if (sum->gbs > 0 && !user->gbs.given && !user->megatron_args && !user->megatron_args_file)
      ptsim_validate_args_add_int(args, "--gbs", sum->gbs);
    if (!resolve_row_job(r, args, user, job)) return FALSE;
    g_autofree char *given = g_strdup_printf("%s%s(job flags of the command line)", r->command,
                                             r->command[0] ? " " : "");
    set_str(&r->command, g_steal_pointer(&given));
    return TRUE;
  }
  if (!log->args_command) {
    row_skip(r, log->args_error ? log->args_error->message
                                : "the arguments block does not describe a model");
    return FALSE;
  }
  PtsimJobOptions opts = *user; /* shallow: only gbs and the Megatron-LM date may differ */
  const char *gbs = ptsim_megatron_log_arg(log, "global_batch_size");
  if (!opts.gbs.given && sum->gbs > 0 && (!gbs || strcmp(gbs, "None") == 0))
    opts.gbs = (PtsimOptionInt){TRUE, sum->gbs};
  g_autofree char *dated = NULL; /* the release the block dates, unless given */
  if (!opts.megatron_date && (dated = ptsim_megatron_log_dated(log, &r->assumed)))
    opts.megatron_date = dated;
  set_str(&r->command,
          g_strdup_printf("(arguments block at line %" G_GINT64_FORMAT ")%s%s --hw %s",
                          log->args_line, user->megatron_args ? " --megatron-args " : "",
                          user->megatron_args ? user->megatron_args : "", user->hw));
  if (!ptsim_job_build_over(&opts, log->args_command, job, NULL, &error)) {
    g_autofree char *why =
        g_strdup_printf("%s:%" G_GINT64_FORMAT ": arguments block: %s%s", log->path, log->args_line,
                        error->message,
                        strstr(error->message, "vocab size unknown")
                            ? " (validate: --megatron-args adds Megatron-LM flags to the log's)"
                            : "");
    row_skip(r, why);
    return FALSE;
  }
  return TRUE;
}

static gboolean add_log(GPtrArray *rows, const char *path, const PtsimJobOptions *user,
                        GError **error) {
  g_autoptr(PtsimMegatronLog) log = ptsim_megatron_log_read_file(path, error);
  if (!log) return FALSE;
  if (log->iterations->len == 0 && log->memory->len == 0 && !log->args_found && !log->oom) {
    g_set_error(error, PTSIM_MEGATRON_LOG_ERROR, PTSIM_MEGATRON_LOG_ERROR_ARGS,
                "%s: neither a run CSV (*.csv) nor a Megatron-LM log (no iteration, memory, "
                "arguments or out-of-memory lines)",
                path);
    return FALSE;
  }
  if (!user->hw) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "%s: --hw is required for Megatron-LM logs (a log does not name the hardware)",
                path);
    return FALSE;
  }
  g_autofree char *base = g_path_get_basename(path);
  Row *r = row_new(path, 0, "megatron_log", base);
  g_ptr_array_add(rows, r);
  PtsimMegatronLogSummary sum;
  ptsim_megatron_log_summarize(log, &sum);
  r->meas_step_s = sum.step_time_s;
  r->meas_tflops = sum.tflops_per_gpu;
  r->meas_oom = sum.oom ? 1 : (log->iterations->len > 0 || log->memory->len > 0 ? 0 : -1);
  PtsimJob job;
  if (!log_job(r, log, &sum, user, &job)) return TRUE;
  set_str(&r->label, g_strdup_printf("%s (%s)", base, job.model.name));

  /* Memory per rank is compared with the rank's pipeline stage; the first
   * row carries the step time and the outcome, the others memory only. */
  g_autoptr(GArray) stages = memory_by_stage(log, &job.layout);
  guint n = stages->len > 0 ? stages->len : 1;
  g_autofree Row **each = g_new0(Row *, n);
  g_autofree int64_t *which = g_new0(int64_t, n);
  which[0] = -1;
  each[0] = r;
  for (guint i = 0; i < stages->len; i++) {
    const StageMemory *m = &g_array_index(stages, StageMemory, i);
    if (i > 0) {
      each[i] = row_new(path, 0, "megatron_log", "");
      set_str(&each[i]->command, g_strdup(r->command));
      g_ptr_array_add(rows, each[i]);
    }
    if (job.layout.pp > 1)
      set_str(&each[i]->label,
              g_strdup_printf("%s (%s) stage %" G_GINT64_FORMAT " (rank %" G_GINT64_FORMAT ")",
                              base, job.model.name, m->stage, m->rank));
    which[i] = job.layout.pp > 1 ? m->stage : -1;
    if (!isnan(m->max_allocated_mb)) each[i]->meas_alloc_bytes = m->max_allocated_mb * MIB;
    if (!isnan(m->max_reserved_mb)) each[i]->meas_reserved_bytes = m->max_reserved_mb * MIB;
  }
  predict_rows(each, which, n, &job);
  return TRUE;
}

/* ---- the command ---- */

static gint compare_paths(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static gboolean add_suite(GPtrArray *inputs, const char *suite, GError **error) {
  if (strcmp(suite, "published") != 0) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--suite '%s': allowed values are published", suite);
    return FALSE;
  }
  g_autofree char *dir = g_build_filename(ptsim_config_data_dir(), "validate", "data", "published",
                                          NULL);
  g_autoptr(GDir) d = g_dir_open(dir, 0, error);
  if (!d) return FALSE;
  g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d)))
    if (g_str_has_suffix(name, ".csv")) g_ptr_array_add(found, g_build_filename(dir, name, NULL));
  g_ptr_array_sort(found, compare_paths);
  for (guint i = 0; i < found->len; i++) g_ptr_array_add(inputs, g_strdup(found->pdata[i]));
  return TRUE;
}

static int fail(const GError *error) {
  fprintf(stderr, "ptsim validate: %s\n", error->message);
  if (error->domain == PTSIM_OUTPUT_ERROR) return ptsim_output_exit_code(error);
  return error->domain == PTSIM_CONFIG_ERROR || error->domain == G_OPTION_ERROR ||
                 error->domain == G_KEY_FILE_ERROR || error->domain == G_FILE_ERROR ||
                 error->domain == PTSIM_RUN_CSV_ERROR ||
                 error->domain == PTSIM_MEGATRON_LOG_ERROR || error->domain == G_SHELL_ERROR ||
                 error->domain == PTSIM_YAML_ERROR
             ? EXIT_BAD_INPUT
             : 1;
}

/* --megatron-cases PATH: Megatron-LM's functional test cases
 * (validate/megatron_cases.h); returns the exit code. */
static int run_megatron_cases(const char *path, const char *recipes, const PtsimJobOptions *user,
                              const char *format_word) {
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray)
      cases = g_ptr_array_new_with_free_func((GDestroyNotify)ptsim_megatron_case_free);
  g_autofree char *used = NULL;
  if (!ptsim_megatron_cases_read(path, recipes, cases, &used, &error)) return fail(error);
  /* case by case, for the progress line (each case's rows are its own) */
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func((GDestroyNotify)ptsim_case_row_free);
  g_autoptr(GPtrArray) one = g_ptr_array_new();
  PtsimProgress progress;
  ptsim_progress_init(&progress, "validate: ", "cases", cases->len);
  for (guint i = 0; i < cases->len; i++) {
    g_ptr_array_set_size(one, 0);
    g_ptr_array_add(one, cases->pdata[i]);
    g_autoptr(GPtrArray) some = ptsim_megatron_cases_predict(one, user);
    g_ptr_array_extend_and_steal(rows, g_steal_pointer(&some));
    ptsim_progress_show(i + 1, cases->len, &progress);
  }
  ptsim_progress_end(&progress);
  g_autoptr(GString) text = g_string_new(NULL);
  ptsim_megatron_cases_write(text, rows, format_word ? format_word : "text", used);
  if (!ptsim_output_stdout(text->str, text->len, &error)) return fail(error);
  guint compared = 0;
  for (guint i = 0; i < rows->len; i++)
    compared += ((const PtsimCaseRow *)rows->pdata[i])->status == PTSIM_CASE_COMPARED;
  if (compared > 0) return 0;
  fprintf(stderr,
          "ptsim validate: no case could be compared (%u read; the reasons are listed in "
          "the report)\n",
          cases->len);
  return EXIT_BAD_INPUT;
}

/* Everything after option parsing; returns the exit code. */
static int run(int argc, char **argv, const PtsimJobOptions *user, const char *format_word,
               const char *suite, const char *gemm_path, const char *cases, const char *recipes) {
  g_autoptr(GError) error = NULL;
  PtsimFormat format = PTSIM_FORMAT_TEXT;
  if (format_word && !ptsim_format_parse(format_word, &format)) {
    g_set_error(&error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "--format '%s': allowed values are text|json|csv", format_word);
    return fail(error);
  }
  if (recipes && !cases)
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "--recipes needs --megatron-cases");
  else if (cases && (argc > 1 || suite || gemm_path))
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "--megatron-cases: give no other inputs (logs, CSVs, --suite, --emit-gemm-shapes)");
  if (error) return fail(error);
  if (cases) return run_megatron_cases(cases, recipes, user, format_word);
  if (gemm_path) {
    PtsimJob job;
    g_autoptr(PtsimJobDiagnostics) diag = ptsim_job_diagnostics_new();
    if (!ptsim_output_check(gemm_path, &error)) return fail(error);
    gboolean built = ptsim_job_build(user, &job, diag, &error);
    ptsim_cli_job_print_warnings(diag);
    if (!built || !ptsim_gemm_shapes_write(gemm_path, &job, &error)) return fail(error);
    return 0;
  }
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func(g_free);
  for (int i = 1; i < argc; i++) g_ptr_array_add(inputs, g_strdup(argv[i]));
  if (suite && !add_suite(inputs, suite, &error)) return fail(error);
  if (inputs->len == 0) {
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                "no inputs: give Megatron-LM logs or run CSVs, or --suite published (see --help)");
    return fail(error);
  }
  /* The CSVs are read first, for the progress line's total (up to the
   * first that cannot be read: its error comes in its turn, after the
   * inputs before it). */
  g_autoptr(GPtrArray) csvs = g_ptr_array_new_with_free_func((GDestroyNotify)ptsim_run_csv_free);
  g_autoptr(GError) unread = NULL;
  RowProgress progress = {{0}, 0, 0};
  for (guint i = 0; i < inputs->len && !unread; i++) {
    const char *path = inputs->pdata[i];
    PtsimRunCsv *csv = NULL;
    if (g_str_has_suffix(path, ".csv") || g_str_has_suffix(path, ".CSV"))
      csv = ptsim_run_csv_read_file(path, &unread);
    g_ptr_array_add(csvs, csv);
    progress.total += csv ? csv->runs->len : 1;
  }
  ptsim_progress_init(&progress.line, "validate: ", "rows", progress.total);
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(row_free);
  for (guint i = 0; i < inputs->len; i++) {
    const char *path = inputs->pdata[i];
    if (i == csvs->len - 1 && unread) return fail(unread);
    const PtsimRunCsv *csv = csvs->pdata[i];
    gboolean ok = csv ? add_csv(rows, path, csv, user, &progress, &error)
                      : add_log(rows, path, user, &error);
    if (!csv) row_done(&progress);
    if (!ok) {
      ptsim_progress_end(&progress.line);
      return fail(error);
    }
  }
  ptsim_progress_end(&progress.line);
  g_autoptr(GString) text = g_string_new(NULL);
  if (format == PTSIM_FORMAT_JSON)
    ptsim_validate_write_json(text, rows);
  else if (format == PTSIM_FORMAT_CSV)
    ptsim_validate_write_csv(text, rows);
  else
    ptsim_validate_write_text(text, rows);
  if (!ptsim_output_stdout(text->str, text->len, &error)) return fail(error);
  /* Nothing compared is not a validation: the report lists the reasons,
   * the exit code says so. */
  guint compared = 0;
  for (guint i = 0; i < rows->len; i++) compared += ((const Row *)rows->pdata[i])->reason == NULL;
  if (compared == 0) {
    fprintf(stderr,
            "ptsim validate: no run could be compared: %u input row%s not expressible "
            "(the reasons are listed in the report)\n",
            rows->len, rows->len == 1 ? "" : "s");
    return EXIT_BAD_INPUT;
  }
  return 0;
}

int ptsim_validate_main(int argc, char **argv) {
  PtsimJobOptions user;
  ptsim_job_options_init(&user);
  char *format_word = NULL, *suite = NULL, *gemm_path = NULL, *cases = NULL, *recipes = NULL;
  const GOptionEntry entries[] = {
      {"suite", 0, 0, G_OPTION_ARG_STRING, &suite,
       "published: every CSV of validate/data/published/", "NAME"},
      {"megatron-cases", 0, 0, G_OPTION_ARG_FILENAME, &cases,
       "Megatron-LM's functional test cases: a case folder, the test_cases tree, or ptsim's "
       "records (tests/data/megatron_cases/cases); see validate/README.md",
       "PATH"},
      {"recipes", 0, 0, G_OPTION_ARG_FILENAME, &recipes,
       "Megatron-LM's tests/test_utils/recipes (the GPU counts; default: found above PATH)", "DIR"},
      {"format", 0, 0, G_OPTION_ARG_STRING, &format_word, "text|json|csv (default text)", "F"},
      {"emit-gemm-shapes", 0, 0, G_OPTION_ARG_FILENAME, &gemm_path,
       "Write the GEMMs of the job given by the job options (name m n k count) for "
       "validate/short_run/gemm_bench, and stop",
       "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  GOptionContext *context = g_option_context_new(
      "INPUTS... - predictions against measured runs (Megatron-LM logs, run CSVs)");
  g_option_context_set_description(
      context,
      "Logs need --hw (a log does not name the hardware); the model and layout come from "
      "the log's arguments block (--megatron-args adds to it, job options override it), else "
      "from --model/--megatron-args and layout flags.\n"
      "Rows of the published CSVs are mapped by the table in sim/cli/validate_cmd.c (which "
      "validate/calibrate_published.py reads); job options apply to logs and other CSVs only.\n"
      "--megatron-cases reads Megatron-LM's functional test cases (validate/README.md); job "
      "options apply on top of each case's flags, --megatron-args after them.\n");
  ptsim_job_options_add_to_context(context, &user, entries);
  GError *error = NULL;
  int code = ptsim_options_parse(context, &argc, &argv, &error)
                 ? run(argc, argv, &user, format_word, suite, gemm_path, cases, recipes)
                 : fail(error);
  g_clear_error(&error);
  g_option_context_free(context);
  g_free(format_word);
  g_free(suite);
  g_free(gemm_path);
  g_free(cases);
  g_free(recipes);
  ptsim_job_options_clear(&user);
  return code;
}

/* sweep_options.c — the sweep's flags: their one table, their parse and
 * the spec they name; see sweep_options.h.  (Moved from the command, so
 * that the command and a library caller sweep the same scenarios.) */
#include "sweep_options.h"

#include <string.h>
#include "config.h"
#include "job_build.h"
#include "job_validate.h"
#include "names.h"
#include "numbers.h"
#include "options.h"
#include "pipeline_layout.h"

void ptsim_sweep_options_init(PtsimSweepOptions *o) {
  memset(o, 0, sizeof *o);
  ptsim_job_options_init(&o->job);
}

void ptsim_sweep_options_clear(PtsimSweepOptions *o) {
  ptsim_job_options_clear(&o->job);
  char **texts[] = {&o->models,
                    &o->hws,
                    &o->gpus,
                    &o->seqs,
                    &o->gbs,
                    &o->mbs,
                    &o->cps,
                    &o->vps,
                    &o->recomputes,
                    &o->schedules,
                    &o->eps,
                    &o->etps,
                    &o->tps,
                    &o->pps,
                    &o->shardings,
                    &o->shard_sizes,
                    &o->tp_max_text,
                    &o->pp_max_text,
                    &o->top_text,
                    &o->threads_text,
                    &o->samples_text,
                    &o->seed_text,
                    &o->in_memory_max_text,
                    &o->jitter_text,
                    &o->stragglers_text,
                    &o->slowdown_text,
                    &o->device,
                    &o->csv,
                    &o->format,
                    &o->figures,
                    &o->shard};
  for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) g_clear_pointer(texts[i], g_free);
  g_clear_pointer(&o->layouts, g_strfreev);
  ptsim_sweep_options_init(o);
}

GOptionEntry *ptsim_sweep_options_entries(PtsimSweepOptions *o) {
  const GOptionEntry entries[] = {
      {"model", 0, 0, G_OPTION_ARG_FILENAME, &o->models,
       "Models, comma-separated (default llama3-8b)", "M[,M...]"},
      {"hw", 0, 0, G_OPTION_ARG_FILENAME, &o->hws, "Hardware profiles (default h100-80g)",
       "H[,H...]"},
      {"gpus", 0, 0, G_OPTION_ARG_STRING, &o->gpus, "GPU counts (default 8)", "N[,N...]"},
      {"seq", 0, 0, G_OPTION_ARG_STRING, &o->seqs, "Sequence lengths (default 8192)", "S[,S...]"},
      {"gbs", 0, 0, G_OPTION_ARG_STRING, &o->gbs, "Global batch sizes (default 128)", "G[,G...]"},
      {"mbs", 0, 0, G_OPTION_ARG_STRING, &o->mbs,
       "Micro-batch sizes (default: 1, 2, 4, ... while what a layout must hold fits the GPU)",
       "B[,B...]"},
      {"cp", 0, 0, G_OPTION_ARG_STRING, &o->cps,
       "Context-parallel sizes (default: every cp dividing gpus/tp whose 2 x cp chunks split the "
       "sequence)",
       "C[,C...]"},
      {"vp", 0, 0, G_OPTION_ARG_STRING, &o->vps,
       "Virtual stages for the interleaved schedule (default: every vp dividing each stage's "
       "layers, uneven first/last stages included as Megatron-LM allows)",
       "V[,V...]"},
      {"recompute", 0, 0, G_OPTION_ARG_STRING, &o->recomputes,
       "none,selective,full,selective-op (default: none, selective, full)", "R[,R...]"},
      {"schedule", 0, 0, G_OPTION_ARG_STRING, &o->schedules,
       "1f1b,gpipe,interleaved,zb-h1,zbv,dualpipev (default 1f1b,interleaved,zb-h1; zbv and "
       "dualpipev run 2 chunks per stage)",
       "S[,S...]"},
      {"ep", 0, 0, G_OPTION_ARG_STRING, &o->eps,
       "Expert-parallel sizes of MoE models (default: every ep dividing the experts and the GPUs "
       "of a stage)",
       "E[,E...]"},
      {"etp", 0, 0, G_OPTION_ARG_STRING, &o->etps,
       "Expert tensor-parallel sizes of MoE models (default: tp, or 1 with ep > 1 under torch's "
       "FSDP2, as torchtitan)",
       "T[,T...]"},
      {"sharding", 0, 0, G_OPTION_ARG_STRING, &o->shardings,
       "Data-parallel modes to sweep: ddp,zero1,zero2,fsdp,hsdp (default: the distributed "
       "optimizer, zero1, or what the settings say)",
       "M[,M...]"},
      {"hsdp-shard-size", 0, 0, G_OPTION_ARG_STRING, &o->shard_sizes,
       "HSDP shard-group sizes to sweep (default: one NVLink domain / tp); a size not dividing "
       "a layout's dp x cp rejects it",
       "N[,N...]"},
      {"tp", 0, 0, G_OPTION_ARG_STRING, &o->tps,
       "Tensor-parallel sizes to try (default: every tp dividing the GPUs, up to --tp-max)",
       "T[,T...]"},
      {"pp", 0, 0, G_OPTION_ARG_STRING, &o->pps,
       "Pipeline-parallel sizes to try (default: every pp dividing the GPUs left, up to "
       "--pp-max; uneven first/last stages where pp does not divide the layers)",
       "P[,P...]"},
      {"pipeline-layout", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->layouts,
       "Only this split, as Megatron-LM's --pipeline-model-parallel-layout writes it (e.g. "
       "'Et*3|(t*4|)*14t*3L'): pp x vp is its stage count ('|' + 1), tried for every pp that "
       "divides it (vp > 1: the interleaved schedule); repeat the flag for several",
       "LAYOUT"},
      {"tp-max", 0, 0, G_OPTION_ARG_STRING, &o->tp_max_text,
       "Largest tp (default: the NVLink domain, e.g. 8 on HGX, 72 on GB200 NVL72; at most the heads)",
       "N"},
      {"pp-max", 0, 0, G_OPTION_ARG_STRING, &o->pp_max_text, "Largest pp (default: no limit)", "N"},
      {"allocator", 0, 0, G_OPTION_ARG_NONE, &o->allocator,
       "Replay every layout through the caching-allocator emulation (CPU, slower), so every "
       "`runs` verdict is the emulation's; without it the emulation runs on the fastest layouts "
       "that may run and the rows shown, and the CSV's allocator_* columns are 0 and -1 elsewhere",
       NULL},
      {"samples", 0, 0, G_OPTION_ARG_STRING, &o->samples_text,
       "Monte-Carlo samples per layout: p50/p90/p99 step time (default 0: deterministic)", "K"},
      {"jitter", 0, 0, G_OPTION_ARG_STRING, &o->jitter_text,
       "Lognormal sigma of every op's duration in the samples, 0 to 10 (e.g. 0.05)", "SIGMA"},
      {"stragglers", 0, 0, G_OPTION_ARG_STRING, &o->stragglers_text,
       "Probability that an op is a straggler (default 0)", "P"},
      {"straggler-slowdown", 0, 0, G_OPTION_ARG_STRING, &o->slowdown_text,
       "A straggler's duration factor, 1 to 1000 (default 2)", "F"},
      {"seed", 0, 0, G_OPTION_ARG_STRING, &o->seed_text,
       "Seed of the Philox4x32-10 streams (CPU) / cuRAND Philox (GPU) (default 1)", "N"},
      {"no-shortcut", 0, 0, G_OPTION_ARG_NONE, &o->no_shortcut,
       "Simulate every event of every layout (the event loop) instead of computing the item "
       "times as a recurrence that advances each repeating steady state in one step, and "
       "replay every schedule item through the allocator emulation (the results are the same; "
       "this checks it, and is slower)",
       NULL},
      {"shard", 0, 0, G_OPTION_ARG_STRING, &o->shard,
       "Evaluate only the K-th of N equal slices of the valid layouts (enumeration order) and "
       "write them to --csv FILE as a shard file, for --merge (a Slurm job array "
       "--array=1-N: --shard $SLURM_ARRAY_TASK_ID/N)",
       "K/N"},
      {"merge", 0, 0, G_OPTION_ARG_NONE, &o->merge,
       "The files after the options are the N shard files of this very sweep (the same flags): "
       "print, rank and write it as one run would, evaluating nothing",
       NULL},
      {"in-memory-max", 0, 0, G_OPTION_ARG_STRING, &o->in_memory_max_text,
       "Largest sweep held in memory and fully ranked (default 250000); larger ones stream: "
       "bounded memory, exact top K, CSV in enumeration order",
       "N"},
      {"device", 0, 0, G_OPTION_ARG_STRING, &o->device, "auto|cpu|gpu (default auto)", "D"},
      {"threads", 0, 0, G_OPTION_ARG_STRING, &o->threads_text,
       "CPU threads, 0 to 1024 (default 0: all cores)", "N"},
      {"top", 0, 0, G_OPTION_ARG_STRING, &o->top_text, "Rows of the ranked table (default 10)",
       "K"},
      {"csv", 0, 0, G_OPTION_ARG_FILENAME, &o->csv,
       "Also write every layout to FILE.csv ('-': standard output; its last column, "
       "pipeline_layout, is a split other than the even one as a --pipeline-layout string)",
       "FILE"},
      {"format", 0, 0, G_OPTION_ARG_STRING, &o->format, "text|csv (default text)", "F"},
      {"figures", 0, 0, G_OPTION_ARG_FILENAME, &o->figures,
       "Also write figures into DIR (created if missing): memory.png and timeline.png of the "
       "best layout, heatmap.png and pareto.png of the sweep, each with .tsv + .gp; skipped "
       "with a note when gnuplot is missing",
       "DIR"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  return g_memdup2(entries, sizeof entries);
}

void ptsim_sweep_options_add_to_context(GOptionContext *context, PtsimSweepOptions *o) {
  g_autofree GOptionEntry *entries = ptsim_sweep_options_entries(o);
  /* the job's settings, shared with predict and memory (job_options.h):
   * every layout of the sweep has them */
  ptsim_job_options_add_settings_to_context(context, &o->job, entries);
}

gboolean ptsim_sweep_options_parse(PtsimSweepOptions *o, const char *const *flags, GError **error) {
  static const char *const none[] = {NULL};
  if (!flags) flags = none;
  g_autoptr(GOptionContext) context = g_option_context_new(NULL);
  g_option_context_set_help_enabled(context, FALSE);
  ptsim_sweep_options_add_to_context(context, o);
  return ptsim_options_parse_flags(context, flags, error) && ptsim_sweep_options_numbers(o, error);
}

/* A numeric flag given as TEXT (NULL: not given, *out keeps its default). */
static gboolean int64_flag(const char *flag, const char *text, int64_t lo, int64_t hi, int64_t *out,
                           GError **error) {
  return text == NULL || ptsim_number_int64(flag, text, lo, hi, out, error);
}

static gboolean double_flag(const char *flag, const char *text, PtsimRange range, double *out,
                            GError **error) {
  return text == NULL || ptsim_number_double(flag, text, range, out, error);
}

/* Largest useful values: a CPU pool past this many threads only costs
 * memory; a table or a held sweep past these is not something to read. */
#define THREADS_MAX 1024
#define TOP_MAX 1000000
#define IN_MEMORY_MAX 100000000

gboolean ptsim_sweep_options_numbers(PtsimSweepOptions *o, GError **error) {
  const PtsimRange probability = {0.0, 1.0, TRUE, TRUE};
  /* sigma of a lognormal factor: 10 already spreads durations over e^30 */
  const PtsimRange sigma = {0.0, 10.0, TRUE, TRUE}, slowdown = {1.0, 1000.0, TRUE, TRUE};
  o->tp_max = o->pp_max = 0; /* 0: the NVLink domain / no limit */
  o->top = 10;
  o->threads = 0; /* all cores */
  o->samples = 0;
  o->seed = 1;
  o->in_memory_max = 250000;
  o->jitter = 0.0;
  o->stragglers = 0.0;
  o->straggler_slowdown = 2.0;
  return int64_flag("--tp-max", o->tp_max_text, 1, PTSIM_CONFIG_INT_MAX, &o->tp_max, error) &&
         int64_flag("--pp-max", o->pp_max_text, 1, PTSIM_CONFIG_INT_MAX, &o->pp_max, error) &&
         int64_flag("--top", o->top_text, 1, TOP_MAX, &o->top, error) &&
         int64_flag("--threads", o->threads_text, 0, THREADS_MAX, &o->threads, error) &&
         int64_flag("--samples", o->samples_text, 0, PTSIM_BATCH_MAX_SAMPLES, &o->samples, error) &&
         int64_flag("--seed", o->seed_text, 0, G_MAXINT64, &o->seed, error) &&
         int64_flag("--in-memory-max", o->in_memory_max_text, 0, IN_MEMORY_MAX, &o->in_memory_max,
                    error) &&
         double_flag("--jitter", o->jitter_text, sigma, &o->jitter, error) &&
         double_flag("--stragglers", o->stragglers_text, probability, &o->stragglers, error) &&
         double_flag("--straggler-slowdown", o->slowdown_text, slowdown, &o->straggler_slowdown,
                     error);
}

gboolean ptsim_sweep_options_device(const PtsimSweepOptions *o, PtsimDevice *device,
                                    GError **error) {
  *device = PTSIM_DEVICE_AUTO;
  if (!o->device || strcmp(o->device, "auto") == 0) return TRUE;
  if (strcmp(o->device, "cpu") == 0)
    *device = PTSIM_DEVICE_CPU;
  else if (strcmp(o->device, "gpu") == 0)
    *device = PTSIM_DEVICE_GPU;
  else {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "--device '%s': allowed values are auto|cpu|gpu", o->device);
    return FALSE;
  }
  return TRUE;
}

static gboolean parse_int_list(const char *flag, const char *text, GArray *out, GError **error) {
  return ptsim_number_int64_list(flag, text, 1, PTSIM_CONFIG_INT_MAX, out, error);
}

static gboolean parse_enum_list(const char *flag, PtsimNamesKind kind, const char *text,
                                GArray *out, GError **error) {
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  g_array_set_size(out, 0);
  for (char **p = parts; *p; p++) {
    int v;
    if (!ptsim_names_parse(kind, g_strstrip(*p), &v)) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s '%s': each value must be one of %s", flag, *p, ptsim_names_allowed(kind));
      return FALSE;
    }
    for (guint i = 0; i < out->len; i++)
      if (g_array_index(out, int, i) == v) {
        g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                    "%s '%s': %s is given twice", flag, text, *p);
        return FALSE;
      }
    g_array_append_val(out, v);
  }
  return TRUE;
}

static gboolean parse_name_list(const char *flag, const char *text, GPtrArray *out,
                                GError **error) {
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  for (char **p = parts; *p; p++) {
    const char *name = g_strstrip(*p);
    for (guint i = 0; i < out->len; i++)
      if (strcmp(g_ptr_array_index(out, i), name) == 0) {
        g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                    "%s '%s': %s is given twice", flag, text, name);
        return FALSE;
      }
    g_ptr_array_add(out, g_strdup(name));
  }
  return TRUE;
}

/* The model-shape settings given, on each model of the sweep (a
 * PtsimSweepSpec model_settings callback; OPTS is the PtsimJobOptions). */
static gboolean model_settings(PtsimModel *model, gpointer opts, GError **error) {
  return ptsim_job_options_apply_model_settings(opts, model, error);
}

gboolean ptsim_sweep_options_spec(const PtsimSweepOptions *o, PtsimSweepSpec *spec,
                                  GError **error) {
  /* ptsim's default job (job_build.h) */
  const char *model = PTSIM_JOB_DEFAULT_MODEL, *hw = PTSIM_JOB_DEFAULT_HW;
  const char *gpus = G_STRINGIFY(PTSIM_JOB_DEFAULT_GPUS);
  const char *seq = G_STRINGIFY(PTSIM_JOB_DEFAULT_SEQ), *gbs = G_STRINGIFY(PTSIM_JOB_DEFAULT_GBS);
  if (!parse_name_list("--model", o->models ? o->models : model, spec->models, error) ||
      !parse_name_list("--hw", o->hws ? o->hws : hw, spec->hws, error) ||
      !ptsim_number_int64_list("--gpus", o->gpus ? o->gpus : gpus, 1, PTSIM_JOB_GPUS_MAX,
                               spec->gpus, error) ||
      !parse_int_list("--seq", o->seqs ? o->seqs : seq, spec->seqs, error) ||
      !parse_int_list("--gbs", o->gbs ? o->gbs : gbs, spec->gbs, error) ||
      (o->mbs && !parse_int_list("--mbs", o->mbs, spec->mbs, error)) ||
      (o->cps && !parse_int_list("--cp", o->cps, spec->cps, error)) ||
      (o->vps && !parse_int_list("--vp", o->vps, spec->vps, error)) ||
      (o->eps && !parse_int_list("--ep", o->eps, spec->eps, error)) ||
      (o->tps && !parse_int_list("--tp", o->tps, spec->tps, error)) ||
      (o->pps && !parse_int_list("--pp", o->pps, spec->pps, error)) ||
      (o->etps && !parse_int_list("--etp", o->etps, spec->etps, error)) ||
      (o->recomputes && !parse_enum_list("--recompute", PTSIM_NAMES_RECOMPUTE, o->recomputes,
                                         spec->recomputes, error)) ||
      (o->schedules && !parse_enum_list("--schedule", PTSIM_NAMES_SCHEDULE, o->schedules,
                                        spec->schedules, error)) ||
      (o->shardings && !parse_enum_list("--sharding", PTSIM_NAMES_SHARDING, o->shardings,
                                        spec->shardings, error)) ||
      (o->shard_sizes && !ptsim_number_int64_list("--hsdp-shard-size", o->shard_sizes, 1,
                                                  PTSIM_JOB_GPUS_MAX, spec->shard_sizes, error)))
    return FALSE;
  gboolean hsdp = FALSE;
  for (guint k = 0; k < spec->shardings->len; k++)
    hsdp |= g_array_index(spec->shardings, int, k) == PTSIM_SHARDING_MODE_HSDP;
  if (o->shard_sizes && !hsdp) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--hsdp-shard-size %s: the sweep has no hsdp in --sharding", o->shard_sizes);
    return FALSE;
  }
  if (o->shardings && (o->job.distributed_optimizer || o->job.no_distributed_optimizer ||
                       o->job.optimizer_instances.given)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--sharding decides the optimizer's sharding and instances: drop "
                "--(no-)distributed-optimizer and --num-distributed-optimizer-instances");
    return FALSE;
  }
  for (char **t = o->layouts; t && *t; t++) {
    if (ptsim_pipeline_layout_stages(*t, error) < 0) {
      g_prefix_error(error, "--pipeline-layout: ");
      return FALSE;
    }
    g_ptr_array_add(spec->layouts, g_strdup(*t));
  }
  if (o->layouts && o->vps) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--pipeline-layout gives vp (its stages / pp): drop --vp");
    return FALSE;
  }
  spec->tp_max = o->tp_max;
  spec->pp_max = o->pp_max;
  if (!ptsim_job_build_sweep_base(&o->job, &spec->base, error)) return FALSE;
  spec->model_settings = model_settings;
  spec->model_settings_data = (gpointer)&o->job;
  spec->allocator = o->allocator;
  spec->mc.samples = (int32_t)o->samples;
  spec->mc.sigma = o->jitter;
  spec->mc.straggler_rate = o->stragglers;
  spec->mc.straggler_slowdown = o->straggler_slowdown;
  spec->mc.seed = (uint64_t)o->seed;
  spec->mc.no_shortcut = o->no_shortcut;
  return TRUE;
}

/* cli_job.c — shared job options; see cli_job.h. */
#include <math.h>
#include <string.h>
#include "cli_job.h"
#include "config.h"
#include "job_validate.h"
#include "megatron_args.h"
#include "names.h"

#define DEFAULT_MODEL "llama3-8b"
#define DEFAULT_HW "h100-80g"
#define DEFAULT_GPUS 8
#define DEFAULT_GBS 128
#define DEFAULT_SEQ 8192

void ptsim_cli_job_init(PtsimCliJob *o) {
  memset(o, 0, sizeof *o);
  o->gpus = o->nodes = o->tp = o->pp = o->cp = o->dp = o->vp = -1;
  o->mbs = o->gbs = o->seq = o->recompute_num_layers = -1;
  o->first_stage_layers = o->last_stage_layers = -1;
  o->threshold = o->attention_dropout = o->hidden_dropout = NAN;
}

void ptsim_cli_job_clear(PtsimCliJob *o) {
  g_free(o->model);
  g_free(o->hw);
  g_free(o->recompute);
  g_free(o->recompute_method);
  g_free(o->precision);
  g_free(o->schedule);
  g_free(o->megatron_args);
  g_free(o->megatron_args_file);
  ptsim_cli_job_init(o);
}

GOptionGroup *ptsim_cli_job_option_group(PtsimCliJob *o) {
  const GOptionEntry entries[] = {
      {"model", 0, 0, G_OPTION_ARG_STRING, &o->model,
       "Model: a name in models/ or an .ini path (default " DEFAULT_MODEL ")", "NAME|FILE"},
      {"hw", 0, 0, G_OPTION_ARG_STRING, &o->hw,
       "Hardware profile: a name in hw_profiles/ or an .ini path (default " DEFAULT_HW ")",
       "NAME|FILE"},
      {"gpus", 0, 0, G_OPTION_ARG_INT64, &o->gpus, "Total GPUs (default 8)", "N"},
      {"nodes", 0, 0, G_OPTION_ARG_INT64, &o->nodes, "Nodes (gpus = nodes x GPUs per node)", "N"},
      {"tp", 0, 0, G_OPTION_ARG_INT64, &o->tp, "Tensor-parallel size (default 1)", "N"},
      {"pp", 0, 0, G_OPTION_ARG_INT64, &o->pp, "Pipeline-parallel size (default 1)", "N"},
      {"cp", 0, 0, G_OPTION_ARG_INT64, &o->cp, "Context-parallel size (default 1)", "N"},
      {"dp", 0, 0, G_OPTION_ARG_INT64, &o->dp,
       "Data-parallel size (default: gpus / (tp pp cp); checked when given)", "N"},
      {"vp", 0, 0, G_OPTION_ARG_INT64, &o->vp,
       "Virtual pipeline stages per rank (interleaved 1F1B when > 1)", "N"},
      {"mbs", 0, 0, G_OPTION_ARG_INT64, &o->mbs, "Micro-batch size (default 1)", "N"},
      {"gbs", 0, 0, G_OPTION_ARG_INT64, &o->gbs, "Global batch size in sequences (default 128)", "N"},
      {"seq", 0, 0, G_OPTION_ARG_INT64, &o->seq, "Sequence length (default 8192)", "N"},
      {"sp", 0, 0, G_OPTION_ARG_NONE, &o->sp, "Sequence parallelism on (default when tp > 1)", NULL},
      {"no-sp", 0, 0, G_OPTION_ARG_NONE, &o->no_sp, "Sequence parallelism off", NULL},
      {"recompute", 0, 0, G_OPTION_ARG_STRING, &o->recompute,
       "Activation recomputation: none|selective|full (default none)", "KIND"},
      {"recompute-method", 0, 0, G_OPTION_ARG_STRING, &o->recompute_method,
       "Full recompute method: uniform|block (default uniform)", "METHOD"},
      {"recompute-num-layers", 0, 0, G_OPTION_ARG_INT64, &o->recompute_num_layers,
       "Full recompute: layers per group (uniform) or recomputed layers (block)", "N"},
      {"distributed-optimizer", 0, 0, G_OPTION_ARG_NONE, &o->distributed_optimizer,
       "Shard optimizer states over dp x cp (default)", NULL},
      {"no-distributed-optimizer", 0, 0, G_OPTION_ARG_NONE, &o->no_distributed_optimizer,
       "Replicate optimizer states (18 bytes per parameter)", NULL},
      {"no-flash-attention", 0, 0, G_OPTION_ARG_NONE, &o->no_flash_attention,
       "Attention keeps its s x s scores (no FlashAttention)", NULL},
      {"overlap-grad-reduce", 0, 0, G_OPTION_ARG_NONE, &o->overlap_grad_reduce,
       "Reduce gradients during the backward pass (Megatron --overlap-grad-reduce)", NULL},
      {"overlap-param-gather", 0, 0, G_OPTION_ARG_NONE, &o->overlap_param_gather,
       "Gather updated parameters during the next forward (--overlap-param-gather)", NULL},
      {"tp-comm-overlap", 0, 0, G_OPTION_ARG_NONE, &o->tp_comm_overlap,
       "Overlap TP collectives with the neighbouring GEMMs (--tp-comm-overlap)", NULL},
      {"no-fp32-grad-accumulation", 0, 0, G_OPTION_ARG_NONE, &o->no_fp32_grad_accumulation,
       "Gradients kept and reduced in the parameter dtype (2 bytes), not fp32", NULL},
      {"precision", 0, 0, G_OPTION_ARG_STRING, &o->precision,
       "bf16|fp16|fp8 (default bf16)", "P"},
      {"schedule", 0, 0, G_OPTION_ARG_STRING, &o->schedule,
       "Pipeline schedule: 1f1b|gpipe|interleaved|zb-h1 (default 1f1b; interleaved when vp > 1)",
       "S"},
      {"memory-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &o->threshold,
       "Memory fraction a layout may use and still count as fitting (default 0.8)", "F"},
      {"attention-dropout", 0, 0, G_OPTION_ARG_DOUBLE, &o->attention_dropout,
       "Attention dropout probability (default 0)", "P"},
      {"hidden-dropout", 0, 0, G_OPTION_ARG_DOUBLE, &o->hidden_dropout,
       "Hidden dropout probability (default 0)", "P"},
      {"decoder-first-pipeline-num-layers", 0, 0, G_OPTION_ARG_INT64, &o->first_stage_layers,
       "Layers on the first pipeline stage (uneven split)", "N"},
      {"decoder-last-pipeline-num-layers", 0, 0, G_OPTION_ARG_INT64, &o->last_stage_layers,
       "Layers on the last pipeline stage (uneven split)", "N"},
      {"megatron-args", 0, 0, G_OPTION_ARG_STRING, &o->megatron_args,
       "A Megatron-LM command line giving the model and layout", "\"FLAGS\""},
      {"megatron-args-file", 0, 0, G_OPTION_ARG_FILENAME, &o->megatron_args_file,
       "A file holding a Megatron-LM command line", "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  GOptionGroup *group = g_option_group_new(
      "job", "Job options (model, hardware, layout):", "Show job options", NULL, NULL);
  g_option_group_add_entries(group, entries);
  return group;
}

void ptsim_cli_job_add_to_context(GOptionContext *context, PtsimCliJob *opts,
                                  const GOptionEntry *command_entries) {
  GOptionGroup *group = ptsim_cli_job_option_group(opts);
  if (command_entries) g_option_group_add_entries(group, command_entries);
  g_option_context_set_main_group(context, group);
}

static gboolean parse_enum(PtsimNamesKind kind, const char *flag, const char *word,
                           int *value, GError **error) {
  if (ptsim_names_parse(kind, word, value)) return TRUE;
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
              "%s '%s': allowed values are %s", flag, word, ptsim_names_allowed(kind));
  return FALSE;
}

/* Flags that take a count must be positive when given (0 for the two uneven
 * split flags and recompute-num-layers means "not set" in the layout). */
static gboolean check_positive(const char *flag, gint64 value, GError **error) {
  if (value == -1 || value > 0) return TRUE;
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
              "%s %" G_GINT64_FORMAT ": must be a positive integer", flag, value);
  return FALSE;
}

static gboolean check_flags(const PtsimCliJob *o, GError **error) {
  const struct {
    const char *flag;
    gint64 value;
  } counts[] = {{"--gpus", o->gpus}, {"--nodes", o->nodes}, {"--tp", o->tp},
                {"--pp", o->pp},     {"--cp", o->cp},       {"--dp", o->dp},
                {"--vp", o->vp},     {"--mbs", o->mbs},     {"--gbs", o->gbs},
                {"--seq", o->seq},   {"--recompute-num-layers", o->recompute_num_layers},
                {"--decoder-first-pipeline-num-layers", o->first_stage_layers},
                {"--decoder-last-pipeline-num-layers", o->last_stage_layers}};
  for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
    if (!check_positive(counts[i].flag, counts[i].value, error)) return FALSE;
  if (o->sp && o->no_sp) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--sp and --no-sp: give at most one");
    return FALSE;
  }
  if (o->distributed_optimizer && o->no_distributed_optimizer) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--distributed-optimizer and --no-distributed-optimizer: give at most one");
    return FALSE;
  }
  if (o->gpus != -1 && o->nodes != -1) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--gpus and --nodes: give at most one");
    return FALSE;
  }
  if (o->megatron_args && o->megatron_args_file) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--megatron-args and --megatron-args-file: give at most one");
    return FALSE;
  }
  return TRUE;
}

/* The base job: built-in defaults, or what a Megatron-LM command line says. */
static gboolean base_job(const PtsimCliJob *o, PtsimJob *job, GPtrArray *ignored,
                         GError **error) {
  ptsim_layout_init_defaults(&job->layout);
  if (o->megatron_args || o->megatron_args_file) {
    gboolean ok = o->megatron_args
                      ? ptsim_megatron_args_parse(o->megatron_args, &job->model,
                                                  &job->layout, ignored, error)
                      : ptsim_megatron_args_parse_file(o->megatron_args_file, &job->model,
                                                       &job->layout, ignored, error);
    if (!ok) return FALSE;
    if (o->model && !ptsim_model_load(o->model, &job->model, error)) return FALSE;
  } else {
    if (!ptsim_model_load(o->model ? o->model : DEFAULT_MODEL, &job->model, error))
      return FALSE;
    job->layout.gpus = DEFAULT_GPUS;
    job->layout.gbs = DEFAULT_GBS;
    job->layout.seq = DEFAULT_SEQ;
  }
  return ptsim_hardware_load(o->hw ? o->hw : DEFAULT_HW, &job->hw, error);
}

/* a*b*c*d of positive counts, or G_MAXINT64 when it overflows (job
 * validation then refuses it by range instead of a wrapped product passing). */
static gint64 checked_product(gint64 a, gint64 b, gint64 c, gint64 d) {
  guint64 p = 1;
  const gint64 f[] = {a, b, c, d};
  for (size_t i = 0; i < G_N_ELEMENTS(f); i++)
    if (f[i] < 1 || !g_uint64_checked_mul(&p, p, (guint64)f[i]) || p > G_MAXINT64)
      return G_MAXINT64;
  return (gint64)p;
}

static void apply_flags(const PtsimCliJob *o, PtsimJob *job) {
  PtsimLayout *l = &job->layout;
  if (o->tp != -1) l->tp = o->tp;
  if (o->pp != -1) l->pp = o->pp;
  if (o->cp != -1) l->cp = o->cp;
  if (o->dp != -1) l->dp = o->dp;
  if (o->vp != -1) l->vp = o->vp;
  if (o->mbs != -1) l->mbs = o->mbs;
  if (o->gbs != -1) l->gbs = o->gbs;
  if (o->seq != -1) l->seq = o->seq;
  if (o->gpus != -1) l->gpus = o->gpus;
  if (o->nodes != -1) l->gpus = checked_product(o->nodes, job->hw.gpus_per_node, 1, 1);
  if (l->gpus <= 0) /* a Megatron-LM command line does not say: assume dp 1 */
    l->gpus = checked_product(l->tp, l->pp, l->cp, l->dp > 0 ? l->dp : 1);
  if (o->sp) l->sp = 1;
  if (o->no_sp) l->sp = 0;
  if (o->recompute_num_layers != -1) l->recompute_num_layers = o->recompute_num_layers;
  if (o->distributed_optimizer) l->distributed_optimizer = 1;
  if (o->no_distributed_optimizer) l->distributed_optimizer = 0;
  if (o->no_flash_attention) l->flash_attention = 0;
  if (o->overlap_grad_reduce) l->overlap_grad_reduce = 1;
  if (o->overlap_param_gather) l->overlap_param_gather = 1;
  if (o->tp_comm_overlap) l->tp_comm_overlap = 1;
  if (o->no_fp32_grad_accumulation) l->fp32_grad_accumulation = 0;
  if (!isnan(o->threshold)) l->memory_threshold = o->threshold;
  if (!isnan(o->attention_dropout)) l->attention_dropout = o->attention_dropout;
  if (!isnan(o->hidden_dropout)) l->hidden_dropout = o->hidden_dropout;
  if (o->first_stage_layers != -1) l->first_stage_layers = o->first_stage_layers;
  if (o->last_stage_layers != -1) l->last_stage_layers = o->last_stage_layers;
}

static gboolean apply_enum_flags(const PtsimCliJob *o, PtsimLayout *l, GError **error) {
  int v;
  if (o->recompute) {
    if (!parse_enum(PTSIM_NAMES_RECOMPUTE, "--recompute", o->recompute, &v, error))
      return FALSE;
    l->recompute = (PtsimRecompute)v;
  }
  if (o->recompute_method) {
    if (!parse_enum(PTSIM_NAMES_RECOMPUTE_METHOD, "--recompute-method",
                    o->recompute_method, &v, error))
      return FALSE;
    l->recompute_method = (PtsimRecomputeMethod)v;
  }
  if (o->precision) {
    if (!parse_enum(PTSIM_NAMES_PRECISION, "--precision", o->precision, &v, error))
      return FALSE;
    l->precision = (PtsimPrecision)v;
  }
  if (o->schedule) {
    if (!parse_enum(PTSIM_NAMES_SCHEDULE, "--schedule", o->schedule, &v, error))
      return FALSE;
    l->schedule = (PtsimSchedule)v;
  }
  return TRUE;
}

gboolean ptsim_cli_job_resolve(const PtsimCliJob *o, PtsimJob *job, GPtrArray *ignored,
                               GError **error) {
  memset(job, 0, sizeof *job);
  if (!check_flags(o, error)) return FALSE;
  if (!base_job(o, job, ignored, error)) return FALSE;
  if (!isnan(o->threshold) && !(o->threshold > 0.0 && o->threshold <= 1.0)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID,
                "--memory-threshold %g: must be in (0, 1]", o->threshold);
    return FALSE;
  }
  apply_flags(o, job);
  if (!apply_enum_flags(o, &job->layout, error)) return FALSE;
  return ptsim_job_validate(job, error);
}

/* job_build.c — a job built from its options in one pass; the contract and
 * the defaults' reasons are in job_build.h.
 *
 * The pass, each step writing into the job once, in this order (an error
 * stops it where it is): the options' conflicts, the base job, the
 * dimensions, the settings, the GPU count known, Megatron-LM's default
 * batch, the pipeline layout, the sharding mode, resolve, check. */
#include "job_build.h"
#include "host_overhead.h"

#include <string.h>
#include "config.h"
#include "hf_config.h"
#include "job_validate.h"
#include "pipeline_layout.h"
#include "torchtitan.h"
#include "workspaces.h"

#define invalid(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, __VA_ARGS__), FALSE)

PtsimJobDiagnostics *ptsim_job_diagnostics_new(void) {
  PtsimJobDiagnostics *d = g_new0(PtsimJobDiagnostics, 1);
  d->megatron = ptsim_megatron_diagnostics_new();
  d->warnings = g_ptr_array_new_with_free_func(g_free);
  return d;
}

void ptsim_job_diagnostics_free(PtsimJobDiagnostics *d) {
  if (!d) return;
  ptsim_megatron_diagnostics_free(d->megatron);
  g_ptr_array_unref(d->warnings);
  g_free(d);
}

/* ---- ptsim's defaults (job_build.h) ---- */

static void default_moe(PtsimSettings *run) {
  run->moe_dispatcher = PTSIM_DISPATCH_ALLTOALL;
  run->moe_grouped_gemm = 1;
}

/* The overlap default, and the MoE one. */
static void default_overlap(PtsimSettings *run) {
  run->overlap_grad_reduce = run->overlap_param_gather = 1;
  run->tp_comm_overlap = 0;
  default_moe(run);
}

/* ---- the base job ---- */

/* A library caller's loaded model and profile (NULL: none), used instead
 * of --model and --hw. */
typedef struct {
  const PtsimModel *model;
  const PtsimHardware *hw;
} Given;

/* The model --model or --hf-config (else NAME, when not NULL) names, or
 * the one given; a Hugging Face config's warnings go to WARNINGS. */
static gboolean load_model(const PtsimJobOptions *o, const Given *given, const char *name,
                           PtsimModel *out, GPtrArray *warnings, GError **error) {
  if (given->model) {
    *out = *given->model;
    return TRUE;
  }
  const char *m = o->model ? o->model : name;
  if (o->hf_config) return ptsim_hf_config_load(o->hf_config, out, warnings, error);
  if (m && g_str_has_prefix(m, "hf:")) return ptsim_hf_config_load(m + 3, out, warnings, error);
  return ptsim_model_load(m, out, error);
}

static gboolean model_given(const PtsimJobOptions *o, const Given *given) {
  return o->model || o->hf_config || given->model;
}

/* The job a torchtitan config describes, on the profile already in JOB->hw;
 * its warnings are appended to WARNINGS, also when it fails. */
static gboolean torchtitan_job(const PtsimJobOptions *o, const Given *given, PtsimJob *job,
                               GPtrArray *warnings, GError **error) {
  int64_t world = o->gpus.given ? o->gpus.value : -1;
  if (o->nodes.given && !ptsim_job_options_nodes_gpus(o, &job->hw, &world, error)) return FALSE;
  g_auto(PtsimTorchtitan) tt = {0};
  if (!ptsim_torchtitan_load(o->torchtitan, world, &tt, warnings, error) ||
      !ptsim_torchtitan_job(&tt, job, error))
    return FALSE;
  default_moe(&job->settings);
  return !model_given(o, given) || load_model(o, given, NULL, &job->model, warnings, error);
}

/* ptsim's own options that are Megatron-LM flags too, as Megatron-LM
 * flags: read after the command's own, they override what the command said
 * and what Megatron-LM derives from it (expert tp from tp, the padded
 * vocabulary).  (transfer full) */
static GStrv megatron_overrides(const PtsimJobOptions *o) {
  const struct {
    const PtsimOptionInt *option;
    const char *flag;
  } same[] = {
      {&o->tp, "--tensor-model-parallel-size"},   {&o->pp, "--pipeline-model-parallel-size"},
      {&o->cp, "--context-parallel-size"},        {&o->ep, "--expert-model-parallel-size"},
      {&o->etp, "--expert-tensor-parallel-size"}, {&o->mbs, "--micro-batch-size"},
      {&o->gbs, "--global-batch-size"},           {&o->seq, "--seq-length"}};
  GStrvBuilder *b = g_strv_builder_new();
  for (size_t i = 0; i < G_N_ELEMENTS(same); i++)
    if (same[i].option->given) {
      g_strv_builder_add(b, same[i].flag);
      char value[24];
      g_snprintf(value, sizeof value, "%" G_GINT64_FORMAT, (gint64)same[i].option->value);
      g_strv_builder_add(b, value);
    }
  GStrv out = g_strv_builder_end(b);
  g_strv_builder_unref(b);
  return out;
}

/* A Megatron-LM command line or launch script, run with the script's
 * arguments and environment when given, ptsim's own options on top. */
static gboolean megatron_job(const PtsimJobOptions *o, PtsimJob *job, PtsimJobDiagnostics *diag,
                             GError **error) {
  g_auto(GStrv) args = NULL, env = NULL;
  if (!ptsim_job_options_shell_inputs(o, &args, &env, error)) return FALSE;
  PtsimShellInputs inputs = {(const char *const *)args, (const char *const *)env};
  g_auto(GStrv) over = megatron_overrides(o);
  const char *const *appended = (const char *const *)over;
  return o->megatron_args
             ? ptsim_megatron_args_parse_with(o->megatron_args, &inputs, appended, job,
                                              diag->megatron, error)
             : ptsim_megatron_args_parse_file_with(o->megatron_args_file, &inputs, appended, job,
                                                   diag->megatron, error);
}

/* The base job: built-in defaults (with the overlap default), or what a
 * Megatron-LM command line or a torchtitan config says. */
static gboolean base_job(const PtsimJobOptions *o, const Given *given, PtsimJob *job,
                         PtsimJobDiagnostics *diag, GError **error) {
  const char *hw = o->hw ? o->hw : PTSIM_JOB_DEFAULT_HW;
  ptsim_job_init_defaults(job);
  if (given->hw) job->hw = *given->hw;
  if (o->torchtitan)
    return (given->hw || ptsim_hardware_load(hw, &job->hw, error)) &&
           torchtitan_job(o, given, job, diag->warnings, error);
  if (o->megatron_args || o->megatron_args_file) {
    if (!megatron_job(o, job, diag, error)) return FALSE;
    if (model_given(o, given) && !load_model(o, given, NULL, &job->model, diag->warnings, error))
      return FALSE;
  } else {
    if (!load_model(o, given, PTSIM_JOB_DEFAULT_MODEL, &job->model, diag->warnings, error))
      return FALSE;
    job->layout.gpus = PTSIM_JOB_DEFAULT_GPUS;
    job->layout.gbs = PTSIM_JOB_DEFAULT_GBS;
    job->layout.seq = PTSIM_JOB_DEFAULT_SEQ;
    default_overlap(&job->settings);
  }
  return given->hw || ptsim_hardware_load(hw, &job->hw, error);
}

/* ---- the pass ---- */

/* A check refusing a GPU count that the launcher gave says so: the user
 * did not type it. */
static void name_launcher_count(const PtsimJob *job, const PtsimMegatronDiagnostics *megatron,
                                GError *error) {
  char *said = g_strdup_printf("%s (%" G_GINT64_FORMAT " GPUs from the launcher: %s; "
                               "--gpus N changes it)",
                               error->message, (gint64)job->layout.gpus, megatron->gpus_from);
  g_free(error->message);
  error->message = said;
}

gboolean ptsim_job_build(const PtsimJobOptions *o, PtsimJob *job, PtsimJobDiagnostics *diag,
                         GError **error) {
  return ptsim_job_build_given(o, NULL, NULL, job, diag, error);
}

gboolean ptsim_job_build_given(const PtsimJobOptions *o, const PtsimModel *model,
                               const PtsimHardware *hw, PtsimJob *job, PtsimJobDiagnostics *diag,
                               GError **error) {
  g_return_val_if_fail(o != NULL && job != NULL, FALSE);
  g_autoptr(PtsimJobDiagnostics) own = diag ? NULL : ptsim_job_diagnostics_new();
  if (!diag) diag = own;
  memset(job, 0, sizeof *job);
  if (model && o->model) return invalid("--model and a loaded model: give at most one");
  if (hw && o->hw) return invalid("--hw and a loaded hardware profile: give at most one");
  Given given = {model, hw};
  if (!ptsim_job_options_check(o, error) || !base_job(o, &given, job, diag, error) ||
      !ptsim_host_costs_load(&job->settings.host.costs, error) ||
      !ptsim_job_options_apply_dimensions(o, job, error) ||
      !ptsim_job_options_apply_settings(o, &job->layout, &job->settings, &job->source, &job->model,
                                        error) ||
      !ptsim_workspaces_resolve(job->hw.name, o->cublas_workspace_config, &job->settings, error))
    return FALSE;
  PtsimLayout *l = &job->layout;
  if (l->gpus <= 0) /* a Megatron-LM command line without a launcher count */
    return invalid("the GPU count is unknown: give --gpus N or --nodes N (the Megatron-LM "
                   "command line gave %s)",
                   diag->megatron->gpus_read ? diag->megatron->gpus_read : "no launcher");
  /* Megatron-LM's default batch, mbs x dp, once the GPU count is known:
   * --gpus or --nodes over the launcher's count gives another dp */
  gboolean rederived = diag->megatron->gbs_from_dp && !o->gbs.given &&
                       (o->gpus.given || o->nodes.given);
  if (rederived) l->gbs = 0;
  int64_t dp = ptsim_layout_data_parallel(l->gpus, l->tp, l->pp, l->cp);
  if (l->gbs <= 0 && (o->megatron_args || o->megatron_args_file) && dp > 0 &&
      l->mbs <= PTSIM_CONFIG_INT_MAX)
    l->gbs = l->mbs * dp; /* at most 2^30 x 2^22 */
  if (rederived && l->gbs > 0)
    g_ptr_array_add(diag->megatron->notes,
                    g_strdup_printf("the global batch is mbs*dp = %" G_GINT64_FORMAT
                                    " on the %" G_GINT64_FORMAT " GPUs ptsim's option gives",
                                    (gint64)l->gbs, (gint64)l->gpus));
  if (o->pipeline_layout && !ptsim_pipeline_layout_apply(o->pipeline_layout, job->model.num_layers,
                                                         job->model.mtp_num_layers, l, error))
    return FALSE;
  if (!ptsim_job_options_apply_sharding(o, job, error)) return FALSE;
  ptsim_job_resolve(job);
  g_autoptr(GError) refused = NULL;
  if (ptsim_job_check(job, &refused)) return TRUE;
  if (!o->gpus.given && !o->nodes.given && diag->megatron->gpus_from)
    name_launcher_count(job, diag->megatron, refused);
  g_propagate_error(error, g_steal_pointer(&refused));
  return FALSE;
}

gboolean ptsim_job_build_over(const PtsimJobOptions *o, const char *megatron_base, PtsimJob *job,
                              PtsimJobDiagnostics *diag, GError **error) {
  if (o->megatron_args_file)
    return invalid("--megatron-args-file replaces the Megatron-LM arguments; to add to the ones "
                   "given here, pass flags with --megatron-args");
  PtsimJobOptions over = *o; /* shallow: only megatron_args differs, and it is freed here */
  g_autofree char *joined = g_strconcat(megatron_base, " ",
                                        o->megatron_args ? o->megatron_args : "", NULL);
  over.megatron_args = joined;
  return ptsim_job_build(&over, job, diag, error);
}

gboolean ptsim_job_build_from_flags(const char *const *flags, PtsimJob *job,
                                    PtsimJobDiagnostics *diag, GError **error) {
  PtsimJobOptions o;
  ptsim_job_options_init(&o);
  gboolean ok = ptsim_job_options_parse(&o, flags, error) && ptsim_job_build(&o, job, diag, error);
  ptsim_job_options_clear(&o);
  return ok;
}

gboolean ptsim_job_build_sweep_base(const PtsimJobOptions *o, PtsimJob *base, GError **error) {
  memset(base, 0, sizeof *base);
  ptsim_job_init_defaults(base);
  default_overlap(&base->settings);
  if (!ptsim_job_options_check(o, error) ||
      !ptsim_host_costs_load(&base->settings.host.costs, error))
    return FALSE;
  /* the GPU's workspaces are filled per profile (sweep.c); a given
   * CUBLAS_WORKSPACE_CONFIG is kept here for all of them */
  if (o->cublas_workspace_config &&
      !ptsim_workspaces_parse_config(o->cublas_workspace_config, "--cublas-workspace-config",
                                     &base->settings.cublas_workspace_bytes, error))
    return FALSE;
  if (o->pipeline_layout)
    return invalid("--pipeline-model-parallel-layout fixes pp and vp, which the sweep enumerates; "
                   "use predict, or the sweep's --pipeline-layout");
  return ptsim_job_options_apply_settings(o, &base->layout, &base->settings, &base->source, NULL,
                                          error);
}

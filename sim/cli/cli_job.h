/* cli_job.h — the command-line options every subcommand shares for naming
 * one job (model, hardware, layout, or a Megatron-LM command line), and
 * their resolution into a validated PtsimJob.
 *
 * Shell module.  Two kinds of options: the layout's dimensions (model, hw,
 * gpus/nodes, tp, pp, cp, dp, vp, mbs, gbs, seq, recompute, schedule),
 * which `sweep` enumerates with options of its own, and the job's settings
 * (everything else: precision, grad dtype, overlap, attention, dropout,
 * optimizer, ...), which every command -- sweep included -- takes from one
 * table here.  Precedence: built-in defaults < --megatron-args(-file) <
 * explicit flags.
 *
 * The overlap default (ONE for predict, memory, sweep and validate): what a
 * user of Megatron-LM's current example launch scripts gets --
 * --overlap-grad-reduce and --overlap-param-gather on (with the distributed
 * optimizer), --tp-comm-overlap off (examples/llama/
 * train_llama3_8b_h100_fp8.sh and examples/mixtral/
 * train_mixtral_8x7b_distributed.sh set the first two; no example sets the
 * third, which also needs TE userbuffers).  A Megatron-LM command line
 * decides for itself (Megatron's default is off); every output names the
 * source (ptsim_cli_job_overlap_source).  Likewise for a mixture-of-experts
 * model: the alltoall dispatcher and grouped GEMMs, as examples/mixtral/
 * train_mixtral_8x7b_distributed.sh sets them (Megatron's own defaults are
 * the allgather dispatcher and one GEMM per expert).
 *
 * Not here: subcommand-specific options or output. */
#ifndef PTSIM_CLI_JOB_H
#define PTSIM_CLI_JOB_H

#include <glib.h>
#include "cli_options.h"
#include "job.h"
#include "megatron_args.h"

/* Raw option values: NULL / FALSE / a PtsimCliInt or PtsimCliDouble whose
 * `given` is FALSE mean "not given"; numbers were parsed strictly with
 * their flag's range as GOption read them (cli_options.h). */
typedef struct {
  /* dimensions */
  char *model, *hw;
  PtsimCliInt gpus, nodes, tp, pp, cp, dp, vp, mbs, gbs, seq, ep, etp;
  char *recompute, *schedule;
  char *sharding;             /* ddp|zero1|zero2|fsdp|hsdp */
  PtsimCliInt hsdp_shard_size;
  /* settings */
  gboolean sp, no_sp;
  char *recompute_method, *recompute_modules;
  PtsimCliInt recompute_num_layers;
  gboolean distributed_optimizer, no_distributed_optimizer;
  PtsimCliInt optimizer_instances;
  char *fsdp_impl, *reshard_after_forward;
  gboolean no_fsdp_prefetch;
  char *attention, *transformer_impl;
  gboolean no_flash_attention;
  gboolean overlap_grad_reduce, no_overlap_grad_reduce, overlap_param_gather,
      no_overlap_param_gather, tp_comm_overlap, no_tp_comm_overlap, no_overlap;
  gboolean no_tp_comm_overlap_ag, no_tp_comm_overlap_rs, no_tp_comm_bulk_dgrad,
      tp_comm_overlap_rs_dgrad;
  gboolean no_fp32_grad_accumulation, no_gradient_accumulation_fusion, cross_entropy_loss_fusion;
  gboolean precision_aware_optimizer;
  char *main_params_dtype, *exp_avg_dtype, *exp_avg_sq_dtype;
  char *precision, *fp8_recipe;
  gboolean fp8_param_gather;
  PtsimCliDouble threshold, attention_dropout, hidden_dropout;
  PtsimCliInt first_stage_layers, last_stage_layers;
  gboolean account_embedding, account_loss;
  char *pipeline_layout;
  PtsimCliInt kv_channels;
  gboolean qk_layernorm;
  char *position_embedding;
  gboolean manual_gc;
  /* mixture of experts (settings; ep and etp are dimensions) */
  char *moe_dispatcher, *moe_router_dtype;
  PtsimCliDouble moe_capacity_factor;
  gboolean moe_pad_to_capacity, moe_grouped_gemm, no_moe_grouped_gemm, moe_permute_fusion,
      moe_router_fusion, moe_shared_expert_overlap, moe_ep_comm_overlap;
  PtsimCliInt mtp_num_layers;
  char *megatron_date; /* YYYY-MM-DD of the Megatron-LM source */
  char *megatron_args, *megatron_args_file;
  char *torchtitan; /* a torchtitan job config (.toml) */
} PtsimCliJob;

/* Sets every field to "not given". */
void ptsim_cli_job_init(PtsimCliJob *opts);
void ptsim_cli_job_clear(PtsimCliJob *opts);

/* A GOptionGroup of every job option (dimensions and settings), writing
 * into *opts.  (transfer full) */
GOptionGroup *ptsim_cli_job_option_group(PtsimCliJob *opts);

/* Makes the job's settings only (for `sweep`, whose dimensions are lists)
 * the context's main group, with the command's own entries (may be NULL)
 * in it. */
void ptsim_cli_job_add_settings_to_context(GOptionContext *context, PtsimCliJob *opts,
                                           const GOptionEntry *command_entries);

/* Makes the job options the context's main group, with the command's own
 * entries (may be NULL) in it, so that COMMAND --help lists them all. */
void ptsim_cli_job_add_to_context(GOptionContext *context, PtsimCliJob *opts,
                                  const GOptionEntry *command_entries);

/* Resolves the options into a validated job.  A Megatron-LM command line's
 * diagnostics go to DIAG (may be NULL).  The GPU count comes from --gpus or
 * --nodes, else from the Megatron-LM command line's launcher; when nothing
 * gives it the error says what was read. */
gboolean ptsim_cli_job_resolve(const PtsimCliJob *opts, PtsimJob *job,
                               PtsimMegatronDiagnostics *diag, GError **error);

/* The same, where the Megatron-LM command line is MEGATRON_BASE (e.g. a
 * log's arguments block) followed by opts->megatron_args, whose flags
 * therefore supplement or override it (argparse: the last occurrence
 * wins); the other options apply on top as usual.  --megatron-args-file is
 * refused here. */
gboolean ptsim_cli_job_resolve_over(const PtsimCliJob *opts, const char *megatron_base,
                                    PtsimJob *job, PtsimMegatronDiagnostics *diag, GError **error);

/* Applies the settings (not the dimensions) to *layout, which holds
 * ptsim_layout_init_defaults() or a job's layout; model-shape settings
 * (--kv-channels, --qk-layernorm, --position-embedding-type) to *model when
 * it is not NULL.  Errors name the flag (PTSIM_CONFIG_ERROR). */
gboolean ptsim_cli_job_apply_settings(const PtsimCliJob *opts, PtsimLayout *layout,
                                      PtsimModel *model, GError **error);

/* The model-shape settings (--kv-channels, --qk-layernorm,
 * --position-embedding-type, --mtp-num-layers) applied to MODEL; OPTS is the PtsimCliJob (a
 * PtsimSweepSpec model_settings callback). */
gboolean ptsim_cli_job_model_settings(PtsimModel *model, gpointer opts, GError **error);

/* The layout every layout of a sweep starts from: Megatron-LM's defaults,
 * the overlap default, the settings given.  Dimension options are not read
 * (the sweep has its own lists). */
gboolean ptsim_cli_job_sweep_base(const PtsimCliJob *opts, PtsimLayout *base, GError **error);

/* Where the overlap switches of a resolved job came from, for outputs:
 * "default" (ptsim's: Megatron-LM's example scripts), "megatron-args",
 * "torchtitan" or "flags". */
const char *ptsim_cli_job_overlap_source(const PtsimCliJob *opts);

/* Prints the diagnostics of a Megatron-LM command line to stderr, prefixed
 * "ptsim COMMAND:": the unmodelled flags as a warning that the prediction
 * may be off (with each flag's direction), the unknown flags, the notes. */
void ptsim_cli_job_warn(const char *command, const PtsimMegatronDiagnostics *diag);

#endif /* PTSIM_CLI_JOB_H */

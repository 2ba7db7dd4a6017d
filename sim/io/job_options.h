/* job_options.h — the options that name one job (model, hardware, layout,
 * or a Megatron-LM command line / torchtitan config): their raw values as
 * given, the one table of flags that fills them (GOption entries: the ptsim
 * command's --help lists them, and ptsim_job_options_parse reads an
 * argv-style array with them), and their application to a job.  The job is
 * built from them in one pass by job_build.h.
 *
 * Two kinds of options: the layout's dimensions (model, hw, gpus/nodes,
 * tp, pp, cp, dp, vp, ep, etp, mbs, gbs, seq, recompute, schedule,
 * sharding, and the inputs --megatron-args(-file) and --torchtitan), which
 * `sweep` enumerates with options of its own, and the job's settings
 * (everything else: precision, grad dtype, overlap, attention, dropout,
 * optimizer, ...), which every command -- sweep included -- takes from one
 * table here.  The two kinds are the options', not the job's structs: a
 * dimension may set the run's settings (--recompute, PtsimSettings) and a
 * setting the layout (--sp, --distributed-optimizer) or the source (the
 * dropouts, --megatron-date: PtsimProvenance), job.h.
 *
 * Shell module (GLib).  Errors are PTSIM_CONFIG_ERROR_INVALID naming the
 * flag (numbers: their own strict parse, numbers.h).  Siblings:
 * job_options.c (the table, parsing, conflicts), job_options_apply.c (the
 * values onto a job). */
#ifndef PTSIM_JOB_OPTIONS_H
#define PTSIM_JOB_OPTIONS_H

#include <glib.h>
#include "config.h"
#include "job.h"
#include "options.h"

/* Raw option values: NULL / FALSE / a PtsimOptionInt or PtsimOptionDouble
 * whose `given` is FALSE mean "not given"; numbers were parsed strictly
 * with their flag's range as GOption read them (options.h). */
typedef struct {
  /* dimensions */
  char *model, *hw;
  PtsimOptionInt gpus, nodes, tp, pp, cp, dp, vp, mbs, gbs, seq, ep, etp;
  char *recompute, *schedule;
  char *sharding; /* ddp|zero1|zero2|fsdp|hsdp */
  PtsimOptionInt hsdp_shard_size;
  /* settings */
  gboolean sp, no_sp;
  char *recompute_method, *recompute_modules;
  PtsimOptionInt recompute_num_layers;
  gboolean distributed_optimizer, no_distributed_optimizer;
  PtsimOptionInt optimizer_instances;
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
  char *fp4_format;   /* --fp4-format e2m1: NVFP4 layers (Blackwell) */
  char *cp_comm_type; /* --cp-comm-type p2p|a2a|allgather */
  gboolean fp8_param_gather;
  PtsimOptionDouble threshold, attention_dropout, hidden_dropout;
  PtsimOptionInt first_stage_layers, last_stage_layers, microbatch_group;
  gboolean account_embedding, account_loss;
  char *pipeline_layout;
  PtsimOptionInt kv_channels;
  gboolean qk_layernorm;
  char *position_embedding;
  gboolean manual_gc;
  gboolean deterministic;
  /* mixture of experts (settings; ep and etp are dimensions) */
  char *moe_dispatcher, *moe_router_dtype;
  PtsimOptionDouble moe_capacity_factor;
  gboolean moe_pad_to_capacity, moe_grouped_gemm, no_moe_grouped_gemm, moe_permute_fusion,
      moe_router_fusion, moe_shared_expert_overlap, moe_ep_comm_overlap, delay_wgrad_compute;
  PtsimOptionInt mtp_num_layers;
  char *megatron_date; /* YYYY-MM-DD of the Megatron-LM source */
  char *megatron_args, *megatron_args_file;
  char *script_args;         /* the launch script's $1, $2, ... (shell-quoted) */
  char **env;                /* NAME=VALUE entries of the script's environment */
  gboolean env_from_process; /* the script starts in ptsim's own environment */
  char *torchtitan;          /* a torchtitan job config (.toml) */
  char *hf_config;           /* a Hugging Face config.json as the model */
  /* PyTorch's CUBLAS_WORKSPACE_CONFIG (":4096:8"; default: the GPU's,
   * hw_profiles/software/workspaces.ini) */
  char *cublas_workspace_config;
  gboolean attention_softmax_fp32; /* Megatron's --attention-softmax-in-fp32 */
  char *cross_entropy_fusion_impl; /* native|te */
  gboolean defer_embedding_wgrad;
  PtsimOptionInt wgrad_deferral_limit;
  /* LoRA (PEFT): adapters' rank, alpha and target linears */
  PtsimOptionInt lora_rank;
  PtsimOptionDouble lora_alpha;
  char *lora_target_modules;
  /* CUDA graphs (Megatron-LM's --cuda-graph-impl, --cuda-graph-scope) */
  char *cuda_graph_impl, *cuda_graph_scope;
  /* activation offloading (Megatron-LM's flags of the same names) */
  gboolean fine_grained_offloading;
  char *offload_modules;
} PtsimJobOptions;

/* Sets every field to "not given". */
void ptsim_job_options_init(PtsimJobOptions *opts);
/* Frees the strings and sets every field to "not given" again. */
void ptsim_job_options_clear(PtsimJobOptions *opts);

/* ---- the table (job_options.c) ---- */

/* A GOptionGroup of every job option (dimensions and settings), writing
 * into *opts.  (transfer full) */
GOptionGroup *ptsim_job_options_group(PtsimJobOptions *opts);

/* Makes the job options the context's main group, with a command's own
 * entries (may be NULL) in it, so that COMMAND --help lists them all. */
void ptsim_job_options_add_to_context(GOptionContext *context, PtsimJobOptions *opts,
                                      const GOptionEntry *command_entries);

/* Makes the job's settings only (for `sweep`, whose dimensions are lists)
 * the context's main group, with the command's own entries (may be NULL)
 * in it. */
void ptsim_job_options_add_settings_to_context(GOptionContext *context, PtsimJobOptions *opts,
                                               const GOptionEntry *command_entries);

/* Reads FLAGS, a NULL-terminated argv-style array of job flags without a
 * program name ({"--model", "llama3-70b", "--tp", "8", NULL}; "--tp=8"
 * too), into *opts as the ptsim command reads its own command line.  A
 * word that is no flag's is an error ("unexpected argument"), and so is a
 * flag that is not a job option. */
gboolean ptsim_job_options_parse(PtsimJobOptions *opts, const char *const *flags, GError **error);

/* The flags given together that exclude each other (--sp and --no-sp,
 * --gpus and --nodes, --torchtitan and --megatron-args, ...): "X and Y:
 * give at most one". */
gboolean ptsim_job_options_check(const PtsimJobOptions *opts, GError **error);

/* Where the overlap switches of a built job came from, for outputs:
 * "default" (ptsim's: Megatron-LM's example scripts, job_build.h),
 * "megatron-args", "torchtitan" or "flags". */
const char *ptsim_job_options_overlap_source(const PtsimJobOptions *opts);

/* ---- their application (job_options_apply.c) ---- */

/* The arguments and environment a Megatron-LM launch script runs with
 * (--script-args, --env, --env-from-process) into *args and *env
 * (NULL-terminated, transfer full; NULL when not given).  Errors name the
 * flag: --script-args that a shell could not split, an --env entry that is
 * not NAME=VALUE. */
gboolean ptsim_job_options_shell_inputs(const PtsimJobOptions *opts, char ***args, char ***env,
                                        GError **error);

/* --nodes x HW's GPUs per node, refused by name past PTSIM_JOB_GPUS_MAX. */
gboolean ptsim_job_options_nodes_gpus(const PtsimJobOptions *opts, const PtsimHardware *hw,
                                      int64_t *gpus, GError **error);

/* The dimensions given (tp ... gpus, --nodes on JOB->hw, --schedule) onto
 * JOB's layout, --recompute onto its settings. */
gboolean ptsim_job_options_apply_dimensions(const PtsimJobOptions *opts, PtsimJob *job,
                                            GError **error);

/* Applies the settings (the options that are not dimensions) to the parts
 * of a job they describe, each holding its defaults (job_resolve.h) or a
 * job's values: the layout's (--sp, the distributed optimizer and its
 * instances, the uneven split, --account-for-*) to *layout, the run's
 * (precision, recompute method and modules, overlap, attention, optimizer
 * dtypes, FSDP, MoE execution, threshold, ...) to *settings, the source's
 * (the dropouts, --megatron-date) to *source; model-shape settings to
 * *model when it is not NULL (ptsim_job_options_apply_model_settings). */
gboolean ptsim_job_options_apply_settings(const PtsimJobOptions *opts, PtsimLayout *layout,
                                          PtsimSettings *settings, PtsimProvenance *source,
                                          PtsimModel *model, GError **error);

/* The model-shape settings (--kv-channels, --qk-layernorm,
 * --position-embedding-type, --mtp-num-layers) applied to MODEL. */
gboolean ptsim_job_options_apply_model_settings(const PtsimJobOptions *opts, PtsimModel *model,
                                                GError **error);

/* --sharding and --hsdp-shard-size onto JOB's layout (sharding_mode.h; the
 * HSDP default group is one NVLink domain of JOB->hw); nothing when
 * neither is given. */
gboolean ptsim_job_options_apply_sharding(const PtsimJobOptions *opts, PtsimJob *job,
                                          GError **error);

#endif /* PTSIM_JOB_OPTIONS_H */

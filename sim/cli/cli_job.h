/* cli_job.h — the command-line options every subcommand shares for naming
 * one job (model, hardware, layout, or a Megatron-LM command line), and
 * their resolution into a validated PtsimJob.
 *
 * Shell module.  Precedence: built-in defaults < --megatron-args(-file) or
 * --torchtitan < explicit flags.  Not here: subcommand-specific options or output. */
#ifndef PTSIM_CLI_JOB_H
#define PTSIM_CLI_JOB_H

#include <glib.h>
#include "job.h"

/* Raw option values; -1 / NULL / NAN mean "not given". */
typedef struct {
  char *model, *hw;
  gint64 gpus, nodes, tp, pp, cp, dp, vp, mbs, gbs, seq;
  gboolean sp, no_sp;
  char *recompute, *recompute_method;
  gint64 recompute_num_layers;
  gboolean distributed_optimizer, no_distributed_optimizer;
  gboolean no_flash_attention;
  gboolean overlap_grad_reduce, overlap_param_gather, tp_comm_overlap;
  gboolean no_fp32_grad_accumulation;
  char *precision, *schedule;
  double threshold, attention_dropout, hidden_dropout;
  gint64 first_stage_layers, last_stage_layers;
  char *megatron_args, *megatron_args_file;
  char *torchtitan; /* a torchtitan job config (.toml) */
} PtsimCliJob;

/* Sets every field to "not given". */
void ptsim_cli_job_init(PtsimCliJob *opts);
void ptsim_cli_job_clear(PtsimCliJob *opts);

/* A GOptionGroup whose entries write into *opts.  (transfer full) */
GOptionGroup *ptsim_cli_job_option_group(PtsimCliJob *opts);

/* Makes the job options the context's main group, with the command's own
 * entries (may be NULL) in it, so that COMMAND --help lists them all. */
void ptsim_cli_job_add_to_context(GOptionContext *context, PtsimCliJob *opts,
                                  const GOptionEntry *command_entries);

/* Resolves the options into a validated job.  Flags Megatron-LM's command
 * line did not understand are appended to `ignored` (may be NULL). */
gboolean ptsim_cli_job_resolve(const PtsimCliJob *opts, PtsimJob *job,
                               GPtrArray *ignored, GError **error);

#endif /* PTSIM_CLI_JOB_H */

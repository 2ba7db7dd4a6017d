/* job_build.h — one job built from its options in one downward pass:
 * ptsim's defaults, the base job (ptsim's default job, or what a
 * Megatron-LM command line or a torchtitan config says), the dimensions,
 * the settings and model-shape settings given as flags, Megatron-LM's
 * default batch, the pipeline layout, the sharding mode, then the job
 * resolved and checked (job_validate.h).  Every front end builds a job
 * here: the ptsim command (from its command line), a library caller (from
 * an argv-style array of flags), the sweep (the job its layouts start
 * from).
 * Precedence: built-in defaults < --megatron-args(-file) | --torchtitan <
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
 * source (ptsim_job_options_overlap_source).  Likewise for a mixture-of-
 * experts model: the alltoall dispatcher and grouped GEMMs, as examples/
 * mixtral/train_mixtral_8x7b_distributed.sh sets them (Megatron's own
 * defaults are the allgather dispatcher and one GEMM per expert); a
 * torchtitan config gets them too (its MoE dispatches all-to-all into
 * grouped GEMMs).
 *
 * Shell module (GLib).  Nothing is printed: what the inputs say besides
 * the job comes back in PtsimJobDiagnostics, for the caller to show.
 * Errors are the options' and the check's (PTSIM_CONFIG_ERROR naming the
 * flag), the files' and the inputs'.  Sibling: job_build.c. */
#ifndef PTSIM_JOB_BUILD_H
#define PTSIM_JOB_BUILD_H

#include <glib.h>
#include "job.h"
#include "job_options.h"
#include "megatron_args.h"

/* ptsim's default job: Llama-3-8B on one 8 x H100 node, 128 sequences of
 * 8192 tokens, the layout Megatron-LM's defaults. */
#define PTSIM_JOB_DEFAULT_MODEL "llama3-8b"
#define PTSIM_JOB_DEFAULT_HW "h100-80g"
#define PTSIM_JOB_DEFAULT_GPUS 8
#define PTSIM_JOB_DEFAULT_GBS 128
#define PTSIM_JOB_DEFAULT_SEQ 8192

/* What building a job found besides the job, in the order found. */
typedef struct {
  PtsimMegatronDiagnostics *megatron; /* a Megatron-LM command line's: the flags not modelled,
                                         the words not Megatron-LM's, the notes, where the
                                         GPU count came from (megatron_args.h) */
  GPtrArray *warnings; /* (element-type utf8) the other inputs' warnings, one line each (a
                          torchtitan config's: "FILE:LINE: ..."); kept on failure too */
} PtsimJobDiagnostics;

PtsimJobDiagnostics *ptsim_job_diagnostics_new(void);
void ptsim_job_diagnostics_free(PtsimJobDiagnostics *diag);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimJobDiagnostics, ptsim_job_diagnostics_free)

/* Builds the job OPTS name into *job (zeroed first): resolved and checked,
 * ready for the core.  DIAG (may be NULL) receives what the inputs said.
 * The GPU count comes from --gpus or --nodes, else from the Megatron-LM
 * command line's launcher; when nothing gives it the error says what was
 * read, and a check failing on a launcher's count says so. */
gboolean ptsim_job_build(const PtsimJobOptions *opts, PtsimJob *job, PtsimJobDiagnostics *diag,
                         GError **error);

/* The same, with a model and a hardware profile already loaded (each may be
 * NULL) in place of --model and --hw, which must not be given with them
 * (PTSIM_CONFIG_ERROR_INVALID): what a library caller's loaded objects
 * give.  MODEL replaces what --model would: the default model, or the one
 * a Megatron-LM command line or torchtitan config names. */
gboolean ptsim_job_build_given(const PtsimJobOptions *opts, const PtsimModel *model,
                               const PtsimHardware *hw, PtsimJob *job, PtsimJobDiagnostics *diag,
                               GError **error);

/* The same, where the Megatron-LM command line is MEGATRON_BASE (e.g. a
 * log's arguments block) followed by opts->megatron_args, whose flags
 * therefore supplement or override it (argparse: the last occurrence
 * wins); the other options apply on top as usual.  --megatron-args-file is
 * refused here. */
gboolean ptsim_job_build_over(const PtsimJobOptions *opts, const char *megatron_base, PtsimJob *job,
                              PtsimJobDiagnostics *diag, GError **error);

/* The job the ptsim command (predict, memory) builds from the same job
 * flags: FLAGS is a NULL-terminated argv-style array without a program
 * name, e.g. {"--model", "llama3-70b", "--tp", "8", "--pp", "4", NULL}, or
 * {"--megatron-args", "torchrun ... pretrain_gpt.py ...", NULL}
 * (ptsim_job_options_parse, then ptsim_job_build). */
gboolean ptsim_job_build_from_flags(const char *const *flags, PtsimJob *job,
                                    PtsimJobDiagnostics *diag, GError **error);

/* The job every layout of a sweep starts from (PtsimSweepSpec.base):
 * Megatron-LM's defaults of the layout, the settings and the source, the
 * overlap default, the settings given.  Its model and hardware are zero
 * (each scenario's); dimension options are not read (the sweep has its own
 * lists); a pipeline layout string is refused (it fixes pp and vp). */
gboolean ptsim_job_build_sweep_base(const PtsimJobOptions *opts, PtsimJob *base, GError **error);

#endif /* PTSIM_JOB_BUILD_H */

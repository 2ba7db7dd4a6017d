/* megatron_args.h — a Megatron-LM launch (pretrain_gpt.py flags, with or
 * without its launcher and script) into a job: its model, layout, settings
 * and source.
 *
 * Shell module (GLib).  The text is run as a launch script
 * (shell_script.h: variables, arrays, if-blocks) to find the training
 * command; the words in front of the script give the GPU count
 * (launcher.h); every flag after it is looked up in Megatron-LM's own flag
 * table (megatron_flags.h) so that its values are consumed as argparse
 * would, and then:
 *   modelled    turned into the job (the list is megatron_flags.c's M rows)
 *   no effect   accepted silently
 *   unmodelled  listed in diagnostics->unmodelled with its effect and
 *               direction, for the caller to warn
 *   refused     an error (FSDP, latent MoE, other architectures: not
 *               modelled yet)
 *   unknown     (not a Megatron-LM flag) an error naming the closest known
 *               flags (megatron_flags.h), as Megatron-LM's argparse refuses
 *               it; a launcher's or wrapper's option (launcher.h) and a
 *               stray word are listed in diagnostics->unknown instead
 *
 * Megatron-LM's own defaults (megatron/training/arguments.py) fill what is
 * absent: ffn 4h, or int(8h/3/64)*64 with --swiglu; kv_channels h/heads;
 * MHA unless --group-query-attention; LayerNorm, GELU, biases, tied
 * embeddings, learned absolute positions (max_position_embeddings rows);
 * dropouts 0.1; distributed optimizer, sequence parallelism and every
 * overlap off unless asked for (SP off with tp 1, as Megatron forces it);
 * Transformer Engine layers with flash/fused attention (unfused with
 * --transformer-impl local or --attention-backend unfused|local, and with
 * --use-legacy-models unless --use-flash-attn); fp32 main grads under bf16
 * unless --grad-reduce-in-bf16 or --main-grads-dtype bf16; gradient
 * accumulation fusion on; the vocabulary of the tokenizer
 * (megatron_vocab.h; GPT2BPETokenizer when none is named) padded to a
 * multiple of --make-vocab-size-divisible-by (128) x tp.
 * Where Megatron-LM has no value ptsim can use, diagnostics->notes says
 * what ptsim assumed (no --bf16/--fp16, no --micro-batch-size, ...).
 *
 * Not here: .ini files and job validation (config.h, job_validate.h): the
 * result is not validated. */
#ifndef PTSIM_MEGATRON_ARGS_H
#define PTSIM_MEGATRON_ARGS_H

#include <glib.h>
#include "job.h"
#include "shell_script.h"

typedef struct {
  GPtrArray *unmodelled; /* (element-type utf8) "--flag (effect, direction)" */
  GPtrArray *unknown;    /* (element-type utf8) words Megatron-LM would not accept: stray
                            words, a launcher's options among the flags; with
                            unknown_allowed, unknown flags too */
  GPtrArray *notes;      /* (element-type utf8) what ptsim assumed */
  char *gpus_from;       /* what gave layout.gpus ("torchrun --nproc_per_node 8"); NULL: nothing */
  char *gpus_read;       /* when nothing did: what was read instead */
  /* Set by the caller: an unknown --flag is listed in `unknown` instead of
   * refused (a command that ran under its own release of Megatron-LM, such
   * as its test cases, whose flags ptsim's table may lag). */
  gboolean unknown_allowed;
  /* Set by the parse: no --global-batch-size, so the batch is Megatron-LM's
   * mbs x dp of the launcher's GPU count (another count changes it). */
  gboolean gbs_from_dp;
} PtsimMegatronDiagnostics;

PtsimMegatronDiagnostics *ptsim_megatron_diagnostics_new(void);
void ptsim_megatron_diagnostics_free(PtsimMegatronDiagnostics *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimMegatronDiagnostics, ptsim_megatron_diagnostics_free)

/* Parses COMMAND_LINE: Megatron-LM flags, optionally behind a launcher
 * ("torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers ...") and
 * shell variables.  Both "--flag value" and "--flag=value" are accepted.
 *
 * JOB->model is filled completely (name "megatron-args").  Its layout,
 * settings and source are reset to ptsim_job_init_defaults() with
 * Megatron-LM's differences above; layout.gpus is the launcher's count,
 * else kept as the caller set it (0: unknown).  JOB->hw is not touched.
 * DIAG (may be NULL) receives the diagnostics.
 *
 * Errors (PTSIM_CONFIG_ERROR_PARSE, one line naming the flag): a modelled
 * flag without its value or with a value outside its choices, a refused
 * flag, contradictions Megatron-LM refuses (--bf16 with --fp16,
 * --overlap-param-gather without --use-distributed-optimizer and
 * --overlap-grad-reduce, ...), a missing model size or vocabulary (the
 * message says what the command line did give).  On failure the job is
 * partly filled. */
gboolean ptsim_megatron_args_parse(const char *command_line, PtsimJob *job,
                                   PtsimMegatronDiagnostics *diag, GError **error);

/* The same for a launch script (Megatron-LM's examples/ scripts as they
 * are).  A file that cannot be read is PTSIM_CONFIG_ERROR_NOT_FOUND; other
 * errors are prefixed with the path; a file larger than a launch script
 * (PTSIM_SHELL_SCRIPT_MAX_BYTES) is refused. */
gboolean ptsim_megatron_args_parse_file(const char *path, PtsimJob *job,
                                        PtsimMegatronDiagnostics *diag, GError **error);

/* The same two, with the launch script's arguments ($1 ...) and environment
 * (PtsimShellInputs; may be NULL: none), and APPENDED (NULL-terminated; may
 * be NULL) Megatron-LM flags read after the command's own: as argparse
 * reads a flag given twice, the later wins, and what Megatron-LM derives
 * from it (expert tp from tp, the vocabulary's padding) follows it.  This
 * is how ptsim's own --tp over a script's --tensor-model-parallel-size
 * overrides everything the script's value implied; each appended flag that
 * changed a value the command gave is a note. */
gboolean ptsim_megatron_args_parse_with(const char *command_line, const PtsimShellInputs *inputs,
                                        const char *const *appended, PtsimJob *job,
                                        PtsimMegatronDiagnostics *diag, GError **error);
gboolean ptsim_megatron_args_parse_file_with(const char *path, const PtsimShellInputs *inputs,
                                             const char *const *appended, PtsimJob *job,
                                             PtsimMegatronDiagnostics *diag, GError **error);

/* TRUE when FLAG is one this module reads (megatron_flags.c's MODELLED
 * rows must be exactly these; tests check it). */
gboolean ptsim_megatron_args_reads(const char *flag);

#endif /* PTSIM_MEGATRON_ARGS_H */

/* megatron_args.h — a Megatron-LM command line (pretrain_gpt.py flags) into
 * a PtsimModel and a PtsimLayout.
 *
 * Shell module (GLib).  Reads the flags that decide memory and time; keeps
 * Megatron-LM's own defaults for what is absent (megatron/training/
 * arguments.py), and lists every flag it does not read in IGNORED rather
 * than failing, because real launch scripts carry dozens of flags (data
 * paths, learning rate, logging) that do not matter here.
 *
 * Not here: .ini files and job validation (config.h).  The result is not
 * validated: call ptsim_job_validate() on the job it goes into.
 *
 * Defaults that follow Megatron-LM (not ptsim_layout_init_defaults()):
 *   ffn_hidden_size 4h, or int(8h/3 / 64)*64 with --swiglu (arguments.py);
 *   num_query_groups = heads unless --group-query-attention (then
 *   --num-query-groups, default 1); LayerNorm, GELU, biases, tied
 *   embeddings; attention and hidden dropout 0.1; distributed optimizer and
 *   sequence parallelism off unless their flag (sequence parallelism is
 *   switched off when tp == 1, as Megatron-LM does); fp32 grad
 *   accumulation with bf16 (Megatron-LM forces it), with fp16 only with
 *   --accumulate-allreduce-grads-in-fp32; vocabulary padded to a multiple
 *   of --make-vocab-size-divisible-by (128) * tp unless
 *   --padded-vocab-size is given.
 * Where Megatron-LM has no value ptsim can use, a note is added to IGNORED
 * (strings starting "note: "): no --bf16/--fp16 (Megatron-LM trains in
 * fp32; ptsim models bf16), no --micro-batch-size (Megatron-LM requires it;
 * 1 is used), no --global-batch-size (Megatron-LM uses mbs*dp; set here only
 * when layout->gpus is already known), --num-query-groups without
 * --group-query-attention (Megatron-LM ignores it).
 * flash_attention stays on: Megatron-Core's default attention backend
 * (auto) picks flash / fused attention without --use-flash-attn. */
#ifndef PTSIM_MEGATRON_ARGS_H
#define PTSIM_MEGATRON_ARGS_H

#include <glib.h>
#include "job.h"

/* Parses COMMAND_LINE (shell syntax, split with g_shell_parse_argv; a
 * leading "torchrun ... pretrain_gpt.py" and anything before the first
 * --flag is skipped).  Both "--flag value" and "--flag=value" are accepted.
 *
 * MODEL is filled completely (name "megatron-args").  LAYOUT is reset to
 * ptsim_layout_init_defaults() with Megatron-LM's differences above, except
 * layout->gpus, which is kept: Megatron-LM takes the world size from the
 * launcher, not from a flag.
 *
 * IGNORED (element-type utf8, may be NULL) receives one string per flag not
 * read, with its values ("--lr 3e-4"), and the notes above.
 *
 * Errors (PTSIM_CONFIG_ERROR_PARSE, one line naming the flag): a read flag
 * without its value or with a non-number, a value outside the flag's
 * choices, --bf16 with --fp16, a missing model size (--num-layers,
 * --hidden-size, --num-attention-heads) or vocabulary ("vocab size unknown:
 * pass --vocab-size or --padded-vocab-size"), an impossible
 * --num-layers-per-virtual-pipeline-stage.  On failure MODEL and LAYOUT
 * are partly filled. */
gboolean ptsim_megatron_args_parse(const char *command_line, PtsimModel *model,
                                   PtsimLayout *layout, GPtrArray *ignored,
                                   GError **error);

/* The same for a file holding the command line: a launch script fragment
 * with backslash-newline continuations and # comments.  A file that cannot
 * be read is PTSIM_CONFIG_ERROR_NOT_FOUND; other errors are prefixed with
 * the path. */
gboolean ptsim_megatron_args_parse_file(const char *path, PtsimModel *model,
                                        PtsimLayout *layout, GPtrArray *ignored,
                                        GError **error);

#endif /* PTSIM_MEGATRON_ARGS_H */

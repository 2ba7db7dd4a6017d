/* torchtitan_python.h — a torchtitan launch of the Python configuration
 * form read as the job-config TOML it stands for.
 *
 * torchtitan since 2026 (torchtitan/config/README.md, config/manager.py at
 * pytorch/torchtitan@b5bcd76) states a job as a function returning
 * Trainer.Config, named on the command line:
 *     torchrun ... -m torchtitan.train --module llama3 --config llama3_8b \
 *         --parallelism.tensor_parallel_degree 2 --compile.enable
 * (or `MODULE=llama3 CONFIG=llama3_8b ./run_train.sh --...`).  ptsim runs no
 * Python: the functions are data, models/torchtitan/configs.toml, each
 * transcribed with its commit (a `base` for a function that starts from
 * another's config).  The reader
 *   1. finds the command in the launch (shell_script.h: scripts, sbatch,
 *      variables), and --module / --config in it (`--x=V` or `--x V`);
 *      --module is a short name (llama3), torchtitan.models.NAME[
 *      .config_registry] or torchtitan_recipes.NAME;
 *   2. takes the function's fields, then the `--section.option` overrides
 *      on top, in order (tyro's syntax: `--a.b V`, `--a.b=V`, booleans as
 *      `--a.b` / `--a.no-b` or `--a.b True|False`, lists comma-separated,
 *      '-' and '_' alike in names);
 *   3. writes them in the words of the job-config TOML of torchtitan
 *      238fa99 (torchtitan_schema.h), one rule each for the fields current
 *      torchtitan renamed: training.max_context_length -> seq_len;
 *      num_tokens_per_microbatch_per_dp_rank / max_context_length -> the
 *      sequences of one microbatch (local_batch_size; under PP the
 *      pipeline_parallel_microbatch_size, local_batch_size = it x
 *      num_pp_microbatches); num_tokens_per_train_step / max_context_length
 *      -> global_batch_size; compile.enable_async_tensor_parallel ->
 *      parallelism.enable_async_tensor_parallel; profiler.* -> profiling.*;
 *      SelectiveAC -> selective_ac_option 'op'; float8 filter_fqns 'lm_head'
 *      -> 'output'.  Fields with no effect on step time or memory
 *      (spmd_backend, disable_cuda_graphs, dump_folder, ...) are dropped.
 * A launch of the older form, `--job.config_file FILE.toml` (run_train.sh's
 * CONFIG_FILE up to 238fa99), is the TOML file (as given, else beside the
 * launch) with the overrides in JobConfig's own words on top.
 * The result goes through the same reader as a TOML file
 * (ptsim_torchtitan_parse), so both forms give the same job for the same
 * settings.
 *
 * Errors (exit 2), naming the launch FILE:LINE: a module, config or field
 * torchtitan does not have (with the closest known and what is allowed), a
 * value of the wrong type, a field of the TOML form that current torchtitan
 * renamed (with its new name), a token count that is not whole sequences.
 * Shell module (GLib). */
#ifndef PTSIM_TORCHTITAN_PYTHON_H
#define PTSIM_TORCHTITAN_PYTHON_H

#include <glib.h>
#include <stdint.h>

#include "toml.h"

/* Whether TEXT looks like a launch (--module and --config,
 * --job.config_file, or run_train.sh). */
gboolean ptsim_torchtitan_python_detect(const char *text, gsize len);

/* The launch in TEXT (LEN bytes, read from PATH) as a job-config TOML
 * (transfer full); *gpus: torchrun's --nproc_per_node x --nnodes when the
 * launch states both as numbers, else -1.  WARNINGS (may be NULL) gets
 * what the Python form runs that ptsim prices otherwise, one line each:
 * its language models' attention (FlexAttention or varlen with a
 * block-causal, per-document mask: models/common/config_utils.py). */
PtsimToml *ptsim_torchtitan_python_parse(const char *path, const char *text, gsize len,
                                         int64_t *gpus, GPtrArray *warnings, GError **error);

/* The same from the command's words (WORDS[0] the program), LABEL naming
 * it in messages; CONFIGS the data file's path (NULL: the installed
 * models/torchtitan/configs.toml). */
PtsimToml *ptsim_torchtitan_python_words(const char *label, const char *const *words,
                                         const char *configs, int64_t *gpus, GError **error);

#endif /* PTSIM_TORCHTITAN_PYTHON_H */

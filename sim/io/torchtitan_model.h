/* torchtitan_model.h — the model a torchtitan config's [model] name and
 * flavor stand for.
 *
 * Shell module (GLib).  torchtitan's llama3 flavors 8B (8B_flex, 8B_varlen:
 * other attention masks, a note), 70B and 405B are models/ files; qwen3's
 * dense flavors 0.6B .. 32B are built from torchtitan's flavor args
 * (torchtitan/models/qwen3/__init__.py at 238fa99: head_dim 128, vocab
 * 151936, q/k norms, the three smallest with tied embeddings) as the
 * Qwen3ForCausalLM config.json of the same shape (hf_config.h).  The
 * mixture-of-experts flavors: deepseek_v3 16B (models/deepseek-v2-lite,
 * its shape) and 671B (models/deepseek-v3 without the MTP block), qwen3
 * 30B-A3B and 235B-A22B (models/), gpt_oss 20b and 120b (the
 * GptOssForCausalLM config.json of torchtitan's args at b5bcd76), llama4
 * 17bx16e and 17bx128e (Llama4ForCausalLM of its args at 238fa99): the
 * flavor's dims in torchtitan_model.c with their source. */
#ifndef PTSIM_TORCHTITAN_MODEL_H
#define PTSIM_TORCHTITAN_MODEL_H

#include <glib.h>
#include "job.h"

/* The model of NAME and FLAVOR into *out (out->name: llama3-8b, qwen3-8b,
 * ...); *note: what the flavor runs that ptsim prices otherwise (NULL:
 * nothing).  FALSE: *key is the key at fault ("name" or "flavor") and
 * *error (PTSIM_CONFIG_ERROR_INVALID, without a file or line) says why,
 * or *key is NULL and *error is a models/ file's own. */
gboolean ptsim_torchtitan_model(const char *name, const char *flavor, PtsimModel *out,
                                const char **note, const char **key, GError **error);

#endif /* PTSIM_TORCHTITAN_MODEL_H */

/* hf_config.h — a Hugging Face model's config.json as a ptsim model.
 *
 * Shell module (GLib; the JSON through json-glib).  Users start from a
 * model card: its config.json states the shape transformers builds
 * (configuration_*.py of each family), which is what ptsim models
 * (job.h PtsimModel, models/README.md).  Read, by `architectures` (else
 * `model_type`):
 *
 *   LlamaForCausalLM, MistralForCausalLM   dense: SwiGLU, RMSNorm, GQA
 *   MixtralForCausalLM                     every layer MoE (num_local_experts, top-k
 *                                          num_experts_per_tok, intermediate_size wide)
 *   Qwen2ForCausalLM, Qwen3ForCausalLM     dense; Qwen3 with q/k norms and head_dim
 *   Qwen2MoeForCausalLM, Qwen3MoeForCausalLM  MoE where (i+1) % decoder_sparse_step == 0
 *                                          and i not in mlp_only_layers; Qwen2-MoE's
 *                                          gated shared expert
 *   DeepseekV2ForCausalLM, DeepseekV3ForCausalLM  multi-latent attention (q_lora_rank,
 *                                          kv_lora_rank, qk_nope/rope_head_dim, v_head_dim),
 *                                          MoE from first_k_dense_replace every
 *                                          moe_layer_freq, n_shared_experts x
 *                                          moe_intermediate_size shared, group-limited
 *                                          routing (n_group, topk_group), sigmoid scores and
 *                                          expert bias (V3: noaux_tc), MTP layers
 *                                          (num_nextn_predict_layers)
 *   GptOssForCausalLM                      every layer MoE, head_dim 64, attention biases
 *   Llama4ForCausalLM, Llama4ForConditionalGeneration (its text_config)
 *                                          MoE layers moe_layers (default every
 *                                          interleave_moe_layer_step-th), one shared expert,
 *                                          dense layers intermediate_size_mlp wide
 *
 * An absent key takes transformers' default for the family.  vocab_size is
 * the embedding as the checkpoint holds it (already padded).  What a field
 * changes that ptsim does not model is a warning naming the file and the
 * field (sliding windows, chunked attention, attention sinks, biases ptsim
 * does not count, quantized weights, a vision tower); keys ptsim does not
 * know are listed in one warning; keys that change neither time nor memory
 * (token ids, RoPE parameters, initialisation) are read silently.
 * Nothing is downloaded: PATH is a local file.
 *
 * Errors (PTSIM_CONFIG_ERROR): the file unreadable (_NOT_FOUND), not JSON
 * or not an object (_PARSE), an architecture ptsim does not read, a
 * missing or mistyped key, a shape the model check refuses (_INVALID),
 * each naming the file and the key. */
#ifndef PTSIM_HF_CONFIG_H
#define PTSIM_HF_CONFIG_H

#include <glib.h>
#include "job.h"

/* Reads LEN bytes of DATA (a config.json; LABEL names it in messages and,
 * as NAME/config.json or NAME.json, gives the model its name) into *out.
 * Warnings (one line each, transfer full) are appended to WARNINGS when it
 * is not NULL. */
gboolean ptsim_hf_config_parse(const char *data, gsize len, const char *label, PtsimModel *out,
                               GPtrArray *warnings, GError **error);

/* The same for the file PATH. */
gboolean ptsim_hf_config_load(const char *path, PtsimModel *out, GPtrArray *warnings,
                              GError **error);

#endif /* PTSIM_HF_CONFIG_H */

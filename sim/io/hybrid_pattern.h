/* hybrid_pattern.h — a hybrid model's layer pattern in the shell
 * (Megatron-LM's --hybrid-layer-pattern / --hybrid-override-pattern and the
 * model .ini key hybrid_override_pattern, Hugging Face's name for it) and
 * its Mamba-2 sizes (--mamba-state-dim, --mamba-head-dim,
 * --mamba-num-groups, --mamba-num-heads and the .ini keys of those names),
 * into PtsimModel (job.h, mamba.h).
 *
 * Shell module (GLib).  The pattern's symbols are Megatron-LM's
 * (hybrid_layer_allocation.py Symbols): M Mamba, * attention, - MLP, E MoE;
 * one layer each.  Its other symbols are refused by name: G (gated delta
 * net), D (DeepSeek sparse attention), + (MLA), the pipeline separator |
 * (which the Megatron-LM flag's reader, megatron_hybrid.c, takes out when
 * its segments are equal) and the MTP separator /.  Megatron derives the layer count from the
 * pattern (it ignores --num-layers); an .ini file must give both, equal.
 *
 * Not here: the layer's shape and cost (sim/core/mamba.c). */
#ifndef PTSIM_HYBRID_PATTERN_H
#define PTSIM_HYBRID_PATTERN_H

#include <glib.h>
#include "config_int.h"
#include "job.h"

/* Checks TEXT and stores it in M->hybrid_pattern, M->num_layers its
 * length; the MoE layers (M->moe_layers) are its E symbols.  Errors
 * (PTSIM_CONFIG_ERROR_PARSE) are prefixed by WHERE (a flag or file:line). */
gboolean ptsim_hybrid_pattern_parse(const char *text, const char *where, PtsimModel *m,
                                    GError **error);

/* The model .ini's optional keys hybrid_override_pattern (with
 * num_layers equal to its length) and mamba_state_dim, mamba_head_dim,
 * mamba_num_groups, mamba_num_heads (only with a pattern), read after the
 * MoE keys: the pattern's E layers replace moe_layer_freq's. */
gboolean ptsim_hybrid_model_load(const PtsimIniFile *ini, PtsimModel *m, GError **error);

/* The invariants of a hybrid model (ptsim_model_check runs them): the
 * pattern's symbols and length, E layers only with experts, Mamba sizes
 * positive, heads a multiple of the groups (Megatron asserts it).  No-op
 * for a model without a pattern but for Mamba sizes given without one.
 * PTSIM_CONFIG_ERROR_INVALID naming the model. */
gboolean ptsim_hybrid_model_check(const PtsimModel *m, GError **error);

/* What a job with a hybrid model must satisfy: tensor parallelism
 * dividing the Mamba heads and groups (Megatron-LM asserts both). */
gboolean ptsim_hybrid_job_check(const PtsimJob *job, GError **error);

/* What the event simulation and the allocator replay of hybrid layers
 * (workload_mamba.c, lifetimes_hybrid.c) do not model: FALSE for a hybrid
 * job with ZeRO-2/3 sharding, PyTorch's layers, LoRA, activation
 * offloading, per-op recomputation or combined-1F1B MoE overlap, naming
 * it and what is (the analytical memory estimate).  ptsim_job_validate
 * (the sweep's candidates) and the simulations (sim/run/simulate.c) run
 * it; `ptsim memory` does not. */
gboolean ptsim_hybrid_simulation_check(const PtsimJob *job, GError **error);

#endif /* PTSIM_HYBRID_PATTERN_H */

/* moe_layers.h — the mixture-of-experts part of a model in the shell:
 * which layers are MoE layers (Megatron-LM's --moe-layer-freq and the model
 * .ini key of the same name, into PtsimModel.moe_layers), and the
 * invariants of the MoE, MLA and MTP fields (ptsim_model_check runs them).
 *
 * Shell module (GLib).  Megatron-LM's forms (arguments.py, moe_freq_type):
 *   N                 layer i is an MoE layer when i % N == 0 (N = 1: all)
 *   a list expression Python's list arithmetic over 0/1 lists, e.g.
 *                     "([0]*3+[1]*58)", "[1,0]*24", "([1]*3+[0]*1)*3":
 *                     its length must be num_layers
 * The list is read by a small parser of exactly that grammar (lists of 0
 * and 1, '+', '*' by a count, parentheses), not by an evaluator.
 *
 * Not here: the model's other keys (config.c, megatron_resolve.c). */
#ifndef PTSIM_MOE_LAYERS_H
#define PTSIM_MOE_LAYERS_H

#include <glib.h>
#include <stdint.h>
#include "job.h"

/* Parses TEXT for a model of NUM_LAYERS layers into BITS[PTSIM_LAYER_WORDS]
 * (bit i: layer i is MoE).  Errors (PTSIM_CONFIG_ERROR_PARSE) say what is
 * wrong with TEXT, prefixed by WHERE (a flag or file:line). */
gboolean ptsim_moe_layers_parse(const char *text, int64_t num_layers, const char *where,
                                uint64_t *bits, GError **error);

/* The MoE, MLA and MTP invariants: counts in range, top-k within the
 * experts, routing groups dividing them, no MoE layer beyond num_layers,
 * MLA's dimensions.  PTSIM_CONFIG_ERROR_INVALID naming the model. */
gboolean ptsim_moe_model_check(const PtsimModel *model, GError **error);

#endif /* PTSIM_MOE_LAYERS_H */

/* pipeline_layout.h — Megatron-LM's --pipeline-model-parallel-layout string
 * as the stage split ptsim's layout can express.
 *
 * Shell module (GLib).  Megatron's grammar
 * (core/transformer/pipeline_parallel_layer_layout.py, parse_str_to_list):
 * commas are cosmetic; "(...)*n" repeats a group (no nesting) and "x*n" one
 * character; '|' separates the pp x vp virtual stages, virtual stage i
 * running on pipeline rank i % pp as its chunk i / pp; 'E' is the
 * embedding, 't' a transformer layer, 'm' a multi-token-prediction layer,
 * 'L' the loss.  E comes first and L last, each once.
 *
 * ptsim's layout expresses: with one chunk per rank, any split whose middle
 * ranks are equal (--decoder-first/last-pipeline-num-layers); with several
 * chunks, equal chunks except fewer layers in the very first and the very
 * last (--account-for-embedding/loss-in-pipeline-split, one layer each;
 * DeepSeek-V3's "Et|(tt|)*30L" leaves one and two).  Other layouts, a rank
 * without transformer layers, and MTP layers are errors. */
#ifndef PTSIM_PIPELINE_LAYOUT_H
#define PTSIM_PIPELINE_LAYOUT_H

#include <glib.h>
#include <stdint.h>

#include "job.h"

typedef struct {
  int64_t vp;                          /* virtual stages per rank */
  int64_t first_stage_layers;          /* 0: as the middle ranks */
  int64_t last_stage_layers;           /* 0: as the middle ranks */
  int account_embedding, account_loss; /* layer slots the first / last virtual stage leaves empty */
} PtsimPipelineLayout;

/* Parses TEXT for PP ranks and NUM_LAYERS transformer layers.  Errors
 * (PTSIM_CONFIG_ERROR_PARSE) name --pipeline-model-parallel-layout, the
 * text and what is wrong. */
gboolean ptsim_pipeline_layout_parse(const char *text, int64_t pp, int64_t num_layers,
                                     PtsimPipelineLayout *out, GError **error);

/* Parses TEXT for layout->pp ranks and NUM_LAYERS layers and sets the
 * layout's vp, first/last stage layers and account flags from it. */
gboolean ptsim_pipeline_layout_apply(const char *text, int64_t num_layers, PtsimLayout *layout,
                                     GError **error);

#endif /* PTSIM_PIPELINE_LAYOUT_H */

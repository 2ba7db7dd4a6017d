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
 * ptsim's layout expresses each virtual stage's transformer layers: as
 * Megatron's flags where they say the split (one chunk per rank: an even
 * split with other first and last ranks, --decoder-first/last-pipeline-
 * num-layers; several: equal chunks with fewer in the very first and last,
 * --account-for-embedding/loss-in-pipeline-split, as DeepSeek-V3's
 * "Et|(tt|)*30mL"), else as runs of equal virtual stages (job.h
 * vstage_runs: "Et*3|(tt|)*6L" is 3, six of 2, then 0).  The MTP layers
 * ('m', as many as --mtp-num-layers, after every 't', all in one virtual
 * stage, the last of its rank, as Megatron's validate_layer_layout
 * wants) share the loss's virtual stage ("...tmL", "...t|mL"), or run on
 * the one just before it, the loss's holding 'L' alone ("...tm|L",
 * "...t|m|L": Megatron's standalone MTP stage, job.h mtp_apart).  Errors:
 * 'm' elsewhere (empty virtual stages between it and the loss), a
 * virtual stage without a transformer layer other than the first, the
 * last and an MTP stage apart, and more than PTSIM_LAYOUT_RUNS runs. */
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
  /* otherwise the virtual stages' layers as runs (0: the fields above) */
  int32_t runs, run_count[PTSIM_LAYOUT_RUNS], run_layers[PTSIM_LAYOUT_RUNS];
  int mtp_apart; /* 1: "...m|L", the MTP layers before the loss's virtual stage (job.h) */
} PtsimPipelineLayout;

/* Parses TEXT for PP ranks, NUM_LAYERS transformer layers and MTP_LAYERS
 * multi-token-prediction layers.  Errors (PTSIM_CONFIG_ERROR_PARSE) name
 * --pipeline-model-parallel-layout, the text and what is wrong. */
gboolean ptsim_pipeline_layout_parse(const char *text, int64_t pp, int64_t num_layers,
                                     int64_t mtp_layers, PtsimPipelineLayout *out, GError **error);

/* Sets LAYOUT's vp and split (first/last stage layers, account flags,
 * virtual-stage runs) to P's. */
void ptsim_pipeline_layout_set(const PtsimPipelineLayout *p, PtsimLayout *layout);

/* Parses TEXT for layout->pp ranks, NUM_LAYERS layers and MTP_LAYERS MTP
 * layers and sets the layout's vp and split (first/last stage layers,
 * account flags, virtual-stage runs) from it. */
gboolean ptsim_pipeline_layout_apply(const char *text, int64_t num_layers, int64_t mtp_layers,
                                     PtsimLayout *layout, GError **error);

/* The virtual stages (pp x vp) TEXT names once unrolled: its '|' + 1;
 * -1 with the parser's error when it does not unroll. */
int64_t ptsim_pipeline_layout_stages(const char *text, GError **error);

/* The --pipeline-model-parallel-layout string of LAYOUT's split of
 * NUM_LAYERS transformer layers (and MTP_LAYERS MTP layers, with the
 * loss), in model order as the plan splits it (ptsim_plan_split_vstages):
 * 'E' opens the first virtual stage, "m*k" and 'L' close the last, equal
 * middle stages are a group: "Et*3|(t*4|)*14t*3L".  What the parser above
 * reads back as the same virtual stages.  NULL when the split is the
 * plain even one (every virtual stage the same layers) or the layout does
 * not split the layers.  (transfer full) */
char *ptsim_pipeline_layout_format(const PtsimLayout *layout, int64_t num_layers,
                                   int64_t mtp_layers);

#endif /* PTSIM_PIPELINE_LAYOUT_H */

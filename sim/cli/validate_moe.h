/* validate_moe.h — the mixture-of-experts rows of the published suite
 * (validate/data/published/moe_published.csv): the columns a dense row
 * does not have, as ptsim job flags, and each row's FLOP convention.
 *
 * Shell module (the cli layer, beside validate_sources.c's table of sources).
 * Not here: the rows' shared mapping (validate_sources.c, validate_cmd.c). */
#ifndef PTSIM_VALIDATE_MOE_H
#define PTSIM_VALIDATE_MOE_H

#include <glib.h>
#include "job.h"
#include "run_csv.h"

/* Appends the row's MoE layout and settings to ARGS (ptsim flags): ep,
 * etp, pipeline_layout, recompute and recompute_modules (space-separated
 * in the CSV), dispatcher, ptsim_settings (the source's own flags as ptsim
 * spells them; substitutions are in the row's `assumed`). */
void ptsim_validate_moe_args(const PtsimRunCsv *csv, const PtsimRun *run, GPtrArray *args);

/* The row's step FLOPs by the Megatron-LM release its measurement came
 * from (flops_formula): megatron-core-0.9 -- before core_v0.12, every
 * layer's MLP counted as ffn x top-k, the attention core without causal
 * halving --, otherwise the current formula (ptsim_workload_megatron_flops).
 * *convention receives the column's text.  (transfer none) */
double ptsim_validate_moe_flops(const PtsimRunCsv *csv, const PtsimRun *run, const PtsimJob *job,
                                const char **convention);

#endif /* PTSIM_VALIDATE_MOE_H */

/* validate_sources.h — the published sources of `ptsim validate --suite
 * published`: how each CSV of validate/data/published/ becomes ptsim jobs
 * (model, hardware by gpu column, the layout facts the source does not
 * state, its FLOP convention), the one place that mapping is defined;
 * validate/calibrate_published.py reads the rows it gives from
 * `ptsim validate --suite published --format json`.
 *
 * Shell module (the cli layer).  Not here: turning a row into a job and
 * comparing it (validate_cmd.c), the MoE rows' extra columns
 * (validate_moe.h). */
#ifndef PTSIM_VALIDATE_SOURCES_H
#define PTSIM_VALIDATE_SOURCES_H

#include <glib.h>
#include <stdint.h>

/* Where a row's micro-batch size comes from: its mbs column, 1, or gbs / dp. */
typedef enum { PTSIM_MBS_COLUMN, PTSIM_MBS_ONE, PTSIM_MBS_GBS_OVER_DP } PtsimMbsRule;
/* The FLOP count its TFLOP/s uses: Narayanan et al.'s Eq. 3, Megatron-LM's
 * formula, or each MoE row's own (validate_moe.h). */
typedef enum { PTSIM_FLOPS_EQ3, PTSIM_FLOPS_MEGATRON, PTSIM_FLOPS_MOE_ROW } PtsimFlopRule;
/* A row's label: the model, with the sequence length, or with the GPU count. */
typedef enum { PTSIM_LABEL_MODEL, PTSIM_LABEL_MODEL_SEQ, PTSIM_LABEL_MODEL_GPUS } PtsimLabelRule;

typedef struct {
  const char *gpu_prefix; /* gpu column starts with this */
  const char *hw;         /* profile */
} PtsimHwRule;

typedef struct {
  const char *file_prefix;  /* CSV basename starts with this */
  const char *source;       /* the name calibrate_published.py gives it */
  const char *model_prefix; /* model = prefix + lowercase(model column) ... */
  const char *fixed_model;  /* ... or this one model */
  PtsimHwRule hw[3];        /* first rule whose prefix matches; {NULL} ends */
  const char *no_hw_reason; /* why a row matching no rule is not expressible */
  PtsimMbsRule mbs;
  int64_t fixed_seq;          /* 0: the seq_len column */
  gboolean use_vp;            /* --vp from vp/vp_derived (1 when empty) */
  gboolean use_cp;            /* --cp from the cp column */
  gboolean ddp_torch_overlap; /* ddp_impl == torch -> --overlap-grad-reduce */
  const char *flags;          /* the era's assumptions, as ptsim flags */
  PtsimFlopRule flops;
  const char *tflops_column;
  gboolean step_from_time; /* measured step = iteration_time_ms / step_time_s */
  PtsimLabelRule label;
  const char *assumed;      /* what the source does not state */
  gboolean gbs_per_gpu;     /* gbs = mbs x GPUs: no gradient accumulation (FSDP's papers) */
  const char *bound_column; /* a column saying "at_least" where the TFLOP/s is a lower bound */
} PtsimPublishedSource;

/* The source of the published CSV at `path` (by its basename's prefix), or
 * NULL for any other CSV.  (transfer none) */
const PtsimPublishedSource *ptsim_published_source_for(const char *path);

#endif /* PTSIM_VALIDATE_SOURCES_H */

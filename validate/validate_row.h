/* validate_row.h — one compared run of `ptsim validate` (a log, or a CSV
 * line) and the writers of the comparison: text, JSON, CSV, with the error
 * statistics and confusion matrices (validation.h) over all rows and per
 * source.  Internal to the validate command (validate_cmd.c builds rows,
 * validate_report.c writes them). */
#ifndef PTSIM_VALIDATE_ROW_H
#define PTSIM_VALIDATE_ROW_H

#include <glib.h>
#include <stdint.h>

typedef struct {
  char *input;      /* file as given */
  int64_t line;     /* CSV line; 0 for a log */
  char *source;     /* published source, "megatron_log" or "csv" */
  char *label;      /* the run, as the source names it */
  char *command;    /* the job as ptsim flags (or where it came from) */
  char *assumed;    /* assumptions beyond the source ("" none) */
  char *convention; /* FLOP convention of the TFLOP/s columns */
  char *reason;     /* not NULL: not expressible, and why */
  /* measured (NAN / -1: not given) */
  double meas_step_s, meas_tflops, meas_alloc_bytes, meas_reserved_bytes;
  int meas_oom;
  /* 1: the source states "more than" meas_tflops (so at most meas_step_s):
   * compared and listed, left out of the error statistics */
  int meas_lower_bound;
  /* how to turn a step time into TFLOP/s: FLOPs of one step, all GPUs
   * (NAN: use the engine's Megatron-formula TFLOP/s) */
  double step_flops;
  int64_t gpus;
  /* predicted */
  double pred_step_s, pred_tflops;
  double est_total_bytes, est_usage, capacity_bytes;
  double alloc_allocated_bytes, alloc_reserved_bytes, outside_bytes, pred_reserved_bytes;
  int alloc_oom; /* -1: no prediction */
  /* the `runs` verdict (-1: no prediction), the step of the first failed
   * allocation and the first step that breaks the verdict (-1: none), and
   * the first step's device peak (lifetimes.h) */
  int alloc_runs, alloc_oom_step, runs_fail_step;
  double first_step_device_bytes;
} Row;

/* rows: (element-type Row) */
void ptsim_validate_write_text(GString *out, GPtrArray *rows);
void ptsim_validate_write_json(GString *out, GPtrArray *rows);
void ptsim_validate_write_csv(GString *out, GPtrArray *rows);

#endif /* PTSIM_VALIDATE_ROW_H */

/* validation.h — the statistics ptsim validate reports: relative errors of
 * a prediction against measurements, and the confusion matrix of an
 * out-of-memory verdict against what real runs did.
 *
 * Shell-side helpers, plain C (no GLib, no I/O), so tests can feed them
 * hand-computed arrays.  Not here: running predictions or reading runs
 * (validate_cmd.c).
 *
 * Conventions: the relative error of one pair is (predicted - measured) /
 * measured.  A pair is skipped when either value is NAN or the measured
 * value is not > 0; an outcome is skipped when it is unknown (-1) or its
 * score is NAN.  Positive class = "ran out of memory". */
#ifndef PTSIM_VALIDATION_H
#define PTSIM_VALIDATION_H

#include <stddef.h>

/* Thresholds of the analytical fit verdict: 0.70, 0.75, ..., 1.00. */
#define PTSIM_VALIDATION_NUM_THRESHOLDS 7

/* Threshold number i (0 .. PTSIM_VALIDATION_NUM_THRESHOLDS - 1). */
double ptsim_validation_threshold(int i);

/* Relative errors over the pairs that count. */
typedef struct {
  size_t n;         /* pairs used */
  double mape;      /* mean |error| (a fraction: 0.05 = 5%); NAN when n = 0 */
  double max_abs;   /* largest |error|; NAN when n = 0 */
  double bias;      /* mean signed error; NAN when n = 0 */
  size_t max_index; /* index (into the input arrays) of the largest |error| */
} PtsimErrorStats;

/* Relative error of one pair, or NAN when it does not count. */
double ptsim_validation_relative_error(double predicted, double measured);

/* Fills *out from n pairs predicted[i] vs measured[i].  Never fails. */
void ptsim_validation_error_stats(const double *predicted, const double *measured, size_t n,
                                  PtsimErrorStats *out);

/* Counts of one binary verdict against real outcomes. */
typedef struct {
  size_t tp; /* predicted OOM, did run out */
  size_t fp; /* predicted OOM, ran */
  size_t tn; /* predicted fit, ran */
  size_t fn; /* predicted fit, did run out */
} PtsimConfusion;

/* "Predicted OOM" = usage[i] > threshold; real = oom[i] (1 OOM, 0 ran,
 * -1 unknown: skipped, as is a NAN usage). */
void ptsim_validation_confusion_threshold(const double *usage, const int *oom, size_t n,
                                          double threshold, PtsimConfusion *out);

/* "Predicted OOM" = predicted_oom[i] != 0 (e.g. the allocator emulation's
 * verdict; -1 = no verdict: skipped). */
void ptsim_validation_confusion_verdict(const int *predicted_oom, const int *oom, size_t n,
                                        PtsimConfusion *out);

/* Outcomes counted (tp + fp + tn + fn). */
size_t ptsim_validation_confusion_total(const PtsimConfusion *c);

#endif /* PTSIM_VALIDATION_H */

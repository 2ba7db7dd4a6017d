/* validation.c — error statistics and OOM confusion matrices; see
 * validation.h. */
#include <math.h>
#include <string.h>
#include "validation.h"

double ptsim_validation_threshold(int i) {
  /* Exact decimals: 70 + 5 i hundredths, not 0.70 + i * 0.05 summed. */
  return (double)(70 + 5 * i) / 100.0;
}

double ptsim_validation_relative_error(double predicted, double measured) {
  if (isnan(predicted) || isnan(measured) || isinf(predicted) || !(measured > 0.0) ||
      isinf(measured))
    return NAN;
  return (predicted - measured) / measured;
}

void ptsim_validation_error_stats(const double *predicted, const double *measured, size_t n,
                                  PtsimErrorStats *out) {
  double sum_abs = 0.0, sum = 0.0, max_abs = -1.0;
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < n; i++) {
    double e = ptsim_validation_relative_error(predicted[i], measured[i]);
    if (isnan(e)) continue;
    out->n++;
    sum_abs += fabs(e);
    sum += e;
    if (fabs(e) > max_abs) {
      max_abs = fabs(e);
      out->max_index = i;
    }
  }
  if (out->n == 0) {
    out->mape = out->max_abs = out->bias = NAN;
    return;
  }
  out->mape = sum_abs / (double)out->n;
  out->bias = sum / (double)out->n;
  out->max_abs = max_abs;
}

static void count(PtsimConfusion *c, int predicted_oom, int oom) {
  if (predicted_oom && oom)
    c->tp++;
  else if (predicted_oom)
    c->fp++;
  else if (oom)
    c->fn++;
  else
    c->tn++;
}

void ptsim_validation_confusion_threshold(const double *usage, const int *oom, size_t n,
                                          double threshold, PtsimConfusion *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < n; i++) {
    if (oom[i] < 0 || isnan(usage[i])) continue;
    count(out, usage[i] > threshold, oom[i] != 0);
  }
}

void ptsim_validation_confusion_verdict(const int *predicted_oom, const int *oom, size_t n,
                                        PtsimConfusion *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < n; i++) {
    if (oom[i] < 0 || predicted_oom[i] < 0) continue;
    count(out, predicted_oom[i] != 0, oom[i] != 0);
  }
}

size_t ptsim_validation_confusion_total(const PtsimConfusion *c) {
  return c->tp + c->fp + c->tn + c->fn;
}

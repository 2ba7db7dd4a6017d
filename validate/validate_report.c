/* validate_report.c — the statistics and the text / JSON / CSV output of
 * `ptsim validate`; see validate_row.h.  Stable JSON keys: runs[],
 * not_expressible[], statistics, by_source, confusion. */
#include <math.h>
#include <string.h>
#include "csv_writer.h"
#include "units.h"
#include "json_writer.h"
#include "validate_row.h"
#include "validation.h"

#define GIB PTSIM_GIB_BYTES

/* ---- statistics ---- */

enum { Q_STEP, Q_TFLOPS, Q_ALLOC_EST, Q_ALLOC_ALLOC, Q_RESERVED, Q_COUNT };
static const char *const quantity_keys[Q_COUNT] = {"step_s", "tflops_per_gpu",
                                                   "max_allocated_analytical",
                                                   "max_allocated_allocator", "max_reserved"};
static const char *const quantity_names[Q_COUNT] = {"step time", "TFLOP/s per GPU",
                                                    "max allocated: analytical total",
                                                    "max allocated: allocator peak",
                                                    "max reserved: allocator reserved"};

static void quantity(const Row *r, int q, double *pred, double *meas) {
  switch (q) {
  case Q_STEP:
    *pred = r->pred_step_s, *meas = r->meas_step_s;
    break;
  case Q_TFLOPS:
    *pred = r->pred_tflops, *meas = r->meas_tflops;
    break;
  case Q_ALLOC_EST:
    *pred = r->est_total_bytes, *meas = r->meas_alloc_bytes;
    break;
  case Q_ALLOC_ALLOC:
    *pred = r->alloc_allocated_bytes, *meas = r->meas_alloc_bytes;
    break;
  default:
    *pred = r->pred_reserved_bytes, *meas = r->meas_reserved_bytes;
    break;
  }
}

typedef struct {
  PtsimErrorStats q[Q_COUNT];
  size_t compared, skipped;
  PtsimConfusion thresholds[PTSIM_VALIDATION_NUM_THRESHOLDS];
  PtsimConfusion allocator;
  size_t outcomes;
} Stats;

/* Stats over the rows for which keep(row) (NULL: all). */
static void compute_stats(GPtrArray *rows, const char *source, Stats *st) {
  memset(st, 0, sizeof *st);
  guint n = rows->len;
  g_autofree double *pred = g_new(double, n + 1);
  g_autofree double *meas = g_new(double, n + 1);
  g_autofree double *usage = g_new(double, n + 1);
  g_autofree int *oom = g_new(int, n + 1);
  g_autofree int *aoom = g_new(int, n + 1);
  for (int q = 0; q < Q_COUNT; q++) {
    for (guint i = 0; i < n; i++) {
      const Row *r = rows->pdata[i];
      pred[i] = meas[i] = NAN;
      if (r->reason || (source && strcmp(r->source, source) != 0)) continue;
      quantity(r, q, &pred[i], &meas[i]);
      if (r->meas_lower_bound && (q == Q_STEP || q == Q_TFLOPS)) /* a bound, not a value */
        pred[i] = meas[i] = NAN;
    }
    ptsim_validation_error_stats(pred, meas, n, &st->q[q]);
  }
  for (guint i = 0; i < n; i++) {
    const Row *r = rows->pdata[i];
    gboolean in = !source || strcmp(r->source, source) == 0;
    if (in && r->reason) st->skipped++;
    if (in && !r->reason) st->compared++;
    usage[i] = in && !r->reason ? r->est_usage : NAN;
    oom[i] = in && !r->reason ? r->meas_oom : -1;
    aoom[i] = in && !r->reason ? r->alloc_oom : -1;
    if (oom[i] >= 0) st->outcomes++;
  }
  for (int t = 0; t < PTSIM_VALIDATION_NUM_THRESHOLDS; t++)
    ptsim_validation_confusion_threshold(usage, oom, n, ptsim_validation_threshold(t),
                                         &st->thresholds[t]);
  ptsim_validation_confusion_verdict(aoom, oom, n, &st->allocator);
}

/* Distinct sources of the compared rows, in first-seen order. */
static GPtrArray *sources_of(GPtrArray *rows) {
  GPtrArray *out = g_ptr_array_new();
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = rows->pdata[i];
    gboolean seen = FALSE;
    for (guint j = 0; j < out->len && !seen; j++) seen = strcmp(out->pdata[j], r->source) == 0;
    if (!seen) g_ptr_array_add(out, r->source);
  }
  return out;
}

/* ---- text ---- */

static void text_num(GString *out, const char *fmt, double v, int width) {
  if (isnan(v))
    g_string_append_printf(out, "%*s", width, "-");
  else
    g_string_append_printf(out, fmt, width, v);
}

static void text_err(GString *out, double pred, double meas) {
  double e = ptsim_validation_relative_error(pred, meas);
  if (isnan(e))
    g_string_append_printf(out, "%8s", "-");
  else
    g_string_append_printf(out, "%+7.1f%%", 100.0 * e);
}

static const char *oom_word(int v) { return v < 0 ? "-" : v ? "OOM" : "ran"; }

static void text_pct(GString *out, double v) {
  if (isnan(v))
    g_string_append_printf(out, "%9s", "-");
  else
    g_string_append_printf(out, "%8.1f%%", 100.0 * v);
}

static void text_stats_line(GString *out, const char *name, const PtsimErrorStats *s) {
  g_string_append_printf(out, "  %-36s %5zu", name, s->n);
  text_pct(out, s->mape);
  text_pct(out, s->max_abs);
  if (isnan(s->bias))
    g_string_append_printf(out, "%9s\n", "-");
  else
    g_string_append_printf(out, "%+8.1f%%\n", 100.0 * s->bias);
}

void ptsim_validate_write_text(GString *out, GPtrArray *rows) {
  Stats all;
  compute_stats(rows, NULL, &all);
  g_string_append_printf(out,
                         "ptsim validate: %zu runs compared, %zu not expressible\n"
                         "error = (predicted - measured) / measured; memory in GiB; TFLOP/s in "
                         "each source's own FLOP convention (conv)\n\n",
                         all.compared, all.skipped);
  g_string_append_printf(out,
                         "%-22s %-26s %9s %9s %8s %-8s %7s %7s %8s %8s %8s %8s %8s %8s %5s %5s\n",
                         "source", "run", "step_s", "ptsim_s", "error", "conv", "TFLOP/s", "ptsim",
                         "error", "max_allo", "estimate", "allocatr", "max_resv", "ptsim", "OOM",
                         "ptsim");
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = rows->pdata[i];
    if (r->reason) continue;
    g_string_append_printf(out, "%-22.22s %-26.26s ", r->source, r->label);
    text_num(out, "%*.3f", r->meas_step_s, 9);
    text_num(out, " %*.3f", r->pred_step_s, 9);
    g_string_append_c(out, ' ');
    text_err(out, r->pred_step_s, r->meas_step_s);
    g_string_append_printf(out, " %-8.8s", r->convention);
    text_num(out, " %*.1f", r->meas_tflops, 7);
    text_num(out, " %*.1f", r->pred_tflops, 7);
    g_string_append_c(out, ' ');
    text_err(out, r->pred_tflops, r->meas_tflops);
    text_num(out, " %*.2f", r->meas_alloc_bytes / GIB, 8);
    text_num(out, " %*.2f", r->est_total_bytes / GIB, 8);
    text_num(out, " %*.2f", r->alloc_allocated_bytes / GIB, 8);
    text_num(out, " %*.2f", r->meas_reserved_bytes / GIB, 8);
    text_num(out, " %*.2f", r->pred_reserved_bytes / GIB, 8);
    g_string_append_printf(out, " %5s %5s%s\n", oom_word(r->meas_oom), oom_word(r->alloc_oom),
                           r->meas_lower_bound ? "  (measured: at least that TFLOP/s)" : "");
  }
  if (all.skipped) {
    g_string_append(out, "\nnot expressible (listed, not compared):\n");
    for (guint i = 0; i < rows->len; i++) {
      const Row *r = rows->pdata[i];
      if (!r->reason) continue;
      g_string_append_printf(out, "  %s", r->input);
      if (r->line) g_string_append_printf(out, ":%" G_GINT64_FORMAT, r->line);
      g_string_append_printf(out, " %s %s: %s\n", r->source, r->label, r->reason);
    }
  }
  g_string_append_printf(out, "\nstatistics over the compared runs\n  %-36s %5s %9s %9s %9s\n",
                         "quantity", "n", "MAPE", "max|err|", "bias");
  for (int q = 0; q < Q_COUNT; q++) text_stats_line(out, quantity_names[q], &all.q[q]);
  if (all.q[Q_STEP].n > 0)
    g_string_append_printf(out, "step-time MAPE %.2f%% over %zu runs\n", 100.0 * all.q[Q_STEP].mape,
                           all.q[Q_STEP].n);
  else
    g_string_append(out, "step-time MAPE: no run with a measured step time was compared\n");
  g_autoptr(GPtrArray) sources = sources_of(rows);
  g_string_append_printf(out, "\nstep time by source\n  %-36s %5s %9s %9s %9s\n", "source", "n",
                         "MAPE", "max|err|", "bias");
  for (guint i = 0; i < sources->len; i++) {
    Stats st;
    compute_stats(rows, sources->pdata[i], &st);
    text_stats_line(out, sources->pdata[i], &st.q[Q_STEP]);
  }
  g_string_append_printf(out,
                         "\nmemory verdict vs real outcome (positive = out of memory; %zu runs "
                         "with a known outcome)\n",
                         all.outcomes);
  if (all.outcomes == 0)
    g_string_append(out, "  no compared run says whether it ran out of memory: no matrix\n");
  g_string_append_printf(out, "  %-36s %5s %5s %5s %5s\n", "predicted OOM when", "TP", "FP", "TN",
                         "FN");
  for (int t = 0; t < PTSIM_VALIDATION_NUM_THRESHOLDS; t++) {
    const PtsimConfusion *c = &all.thresholds[t];
    g_autofree char *name = g_strdup_printf("analytical usage > %.2f",
                                            ptsim_validation_threshold(t));
    g_string_append_printf(out, "  %-36s %5zu %5zu %5zu %5zu\n", name, c->tp, c->fp, c->tn, c->fn);
  }
  const PtsimConfusion *c = &all.allocator;
  g_string_append_printf(out, "  %-36s %5zu %5zu %5zu %5zu\n", "allocator emulation OOM", c->tp,
                         c->fp, c->tn, c->fn);
}

/* ---- JSON ---- */

static void json_oom(PtsimJson *json, const char *key, int v) {
  if (v < 0)
    ptsim_json_double(json, key, NAN); /* null */
  else
    ptsim_json_bool(json, key, v != 0);
}

static void json_stats(PtsimJson *json, const char *key, const PtsimErrorStats *s) {
  ptsim_json_begin_object(json, key);
  ptsim_json_int(json, "n", (int64_t)s->n);
  ptsim_json_double(json, "mape", s->mape);
  ptsim_json_double(json, "max_abs_error", s->max_abs);
  ptsim_json_double(json, "bias", s->bias);
  ptsim_json_end_object(json);
}

static void json_confusion(PtsimJson *json, const char *key, double threshold,
                           const PtsimConfusion *c) {
  ptsim_json_begin_object(json, key);
  if (!isnan(threshold)) ptsim_json_double(json, "threshold", threshold);
  ptsim_json_int(json, "tp", (int64_t)c->tp);
  ptsim_json_int(json, "fp", (int64_t)c->fp);
  ptsim_json_int(json, "tn", (int64_t)c->tn);
  ptsim_json_int(json, "fn", (int64_t)c->fn);
  ptsim_json_end_object(json);
}

void ptsim_validate_write_json(GString *out, GPtrArray *rows) {
  Stats all;
  compute_stats(rows, NULL, &all);
  PtsimJson json;
  ptsim_json_init(&json, out);
  ptsim_json_begin_object(&json, NULL);
  ptsim_json_begin_array(&json, "runs");
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = rows->pdata[i];
    if (r->reason) continue;
    ptsim_json_begin_object(&json, NULL);
    ptsim_json_string(&json, "input", r->input);
    ptsim_json_int(&json, "line", r->line);
    ptsim_json_string(&json, "source", r->source);
    ptsim_json_string(&json, "label", r->label);
    ptsim_json_string(&json, "command", r->command);
    ptsim_json_string(&json, "assumed", r->assumed);
    ptsim_json_string(&json, "flop_convention", r->convention);
    if (r->meas_lower_bound) ptsim_json_string(&json, "measured_bound", "at_least_tflops");
    ptsim_json_begin_object(&json, "measured");
    ptsim_json_double(&json, "step_s", r->meas_step_s);
    ptsim_json_double(&json, "tflops_per_gpu", r->meas_tflops);
    ptsim_json_double(&json, "max_allocated_bytes", r->meas_alloc_bytes);
    ptsim_json_double(&json, "max_reserved_bytes", r->meas_reserved_bytes);
    json_oom(&json, "oom", r->meas_oom);
    ptsim_json_end_object(&json);
    ptsim_json_begin_object(&json, "predicted");
    ptsim_json_double(&json, "step_s", r->pred_step_s);
    ptsim_json_double(&json, "tflops_per_gpu", r->pred_tflops);
    ptsim_json_double(&json, "analytical_total_bytes", r->est_total_bytes);
    ptsim_json_double(&json, "usage_fraction", r->est_usage);
    ptsim_json_double(&json, "capacity_bytes", r->capacity_bytes);
    ptsim_json_double(&json, "allocator_allocated_peak_bytes", r->alloc_allocated_bytes);
    ptsim_json_double(&json, "allocator_reserved_peak_bytes", r->alloc_reserved_bytes);
    ptsim_json_double(&json, "outside_allocator_bytes", r->outside_bytes);
    ptsim_json_double(&json, "max_reserved_bytes", r->pred_reserved_bytes);
    json_oom(&json, "allocator_oom", r->alloc_oom);
    json_oom(&json, "allocator_runs", r->alloc_runs);
    ptsim_json_int(&json, "allocator_oom_step", r->alloc_oom_step);
    ptsim_json_int(&json, "runs_fail_step", r->runs_fail_step);
    ptsim_json_double(&json, "allocator_first_step_device_peak_bytes", r->first_step_device_bytes);
    ptsim_json_end_object(&json);
    ptsim_json_begin_object(&json, "errors");
    for (int q = 0; q < Q_COUNT; q++) {
      double p, m;
      quantity(r, q, &p, &m);
      ptsim_json_double(&json, quantity_keys[q], ptsim_validation_relative_error(p, m));
    }
    ptsim_json_end_object(&json);
    ptsim_json_end_object(&json);
  }
  ptsim_json_end_array(&json);
  ptsim_json_begin_array(&json, "not_expressible");
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = rows->pdata[i];
    if (!r->reason) continue;
    ptsim_json_begin_object(&json, NULL);
    ptsim_json_string(&json, "input", r->input);
    ptsim_json_int(&json, "line", r->line);
    ptsim_json_string(&json, "source", r->source);
    ptsim_json_string(&json, "label", r->label);
    ptsim_json_string(&json, "reason", r->reason);
    ptsim_json_end_object(&json);
  }
  ptsim_json_end_array(&json);
  ptsim_json_begin_object(&json, "statistics");
  ptsim_json_int(&json, "compared", (int64_t)all.compared);
  ptsim_json_int(&json, "not_expressible", (int64_t)all.skipped);
  for (int q = 0; q < Q_COUNT; q++) json_stats(&json, quantity_keys[q], &all.q[q]);
  ptsim_json_end_object(&json);
  ptsim_json_begin_array(&json, "by_source");
  g_autoptr(GPtrArray) sources = sources_of(rows);
  for (guint i = 0; i < sources->len; i++) {
    Stats st;
    compute_stats(rows, sources->pdata[i], &st);
    ptsim_json_begin_object(&json, NULL);
    ptsim_json_string(&json, "source", sources->pdata[i]);
    ptsim_json_int(&json, "compared", (int64_t)st.compared);
    ptsim_json_int(&json, "not_expressible", (int64_t)st.skipped);
    json_stats(&json, "step_s", &st.q[Q_STEP]);
    ptsim_json_end_object(&json);
  }
  ptsim_json_end_array(&json);
  ptsim_json_begin_object(&json, "confusion");
  ptsim_json_int(&json, "outcomes", (int64_t)all.outcomes);
  ptsim_json_begin_array(&json, "analytical");
  for (int t = 0; t < PTSIM_VALIDATION_NUM_THRESHOLDS; t++)
    json_confusion(&json, NULL, ptsim_validation_threshold(t), &all.thresholds[t]);
  ptsim_json_end_array(&json);
  json_confusion(&json, "allocator", NAN, &all.allocator);
  ptsim_json_end_object(&json);
  ptsim_json_end_object(&json);
  g_string_append_c(out, '\n');
}

/* ---- CSV ---- */

static void csv_num(GString *out, double v) {
  g_string_append_c(out, ',');
  if (isnan(v)) return;
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(out, g_ascii_formatd(buf, sizeof buf, "%.12g", v));
}

static void csv_oom(GString *out, int v) { g_string_append(out, v < 0 ? "," : v ? ",1" : ",0"); }

void ptsim_validate_write_csv(GString *out, GPtrArray *rows) {
  g_string_append(out,
                  "input,line,source,label,status,reason,flop_convention,measured_step_s,"
                  "predicted_step_s,step_error,measured_tflops_per_gpu,predicted_tflops_per_gpu,"
                  "tflops_error,measured_max_allocated_bytes,analytical_total_bytes,"
                  "allocator_allocated_peak_bytes,measured_max_reserved_bytes,"
                  "predicted_max_reserved_bytes,usage_fraction,measured_oom,allocator_oom\n");
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = rows->pdata[i];
    ptsim_csv_append_text(out, r->input);
    g_string_append_printf(out, ",%" G_GINT64_FORMAT ",", r->line);
    ptsim_csv_append_text(out, r->source);
    g_string_append_c(out, ',');
    ptsim_csv_append_text(out, r->label);
    g_string_append(out, r->reason ? ",not_expressible," : ",compared,");
    ptsim_csv_append_text(out, r->reason ? r->reason : "");
    g_string_append_c(out, ',');
    ptsim_csv_append_text(out, r->convention);
    csv_num(out, r->meas_step_s);
    csv_num(out, r->pred_step_s);
    csv_num(out, ptsim_validation_relative_error(r->pred_step_s, r->meas_step_s));
    csv_num(out, r->meas_tflops);
    csv_num(out, r->pred_tflops);
    csv_num(out, ptsim_validation_relative_error(r->pred_tflops, r->meas_tflops));
    csv_num(out, r->meas_alloc_bytes);
    csv_num(out, r->est_total_bytes);
    csv_num(out, r->alloc_allocated_bytes);
    csv_num(out, r->meas_reserved_bytes);
    csv_num(out, r->pred_reserved_bytes);
    csv_num(out, r->est_usage);
    csv_oom(out, r->meas_oom);
    csv_oom(out, r->alloc_oom);
    g_string_append_c(out, '\n');
  }
}

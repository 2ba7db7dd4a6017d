/* megatron_cases_report.c — the report of `ptsim validate --megatron-cases`
 * (megatron_cases.h): a table per case and platform, the median errors
 * overall, per platform, per family and per both, the largest misses, the
 * cases not compared with their reasons, the environment variables and the
 * flags ptsim does not model, counted.  Text, JSON (stable keys: rows[],
 * statistics, counts, environment[], unmodelled_flags[]) or CSV (one line
 * per row). */
#include <math.h>
#include <string.h>
#include "csv_writer.h"
#include "units.h"
#include "json_writer.h"
#include "megatron_cases.h"

#define GIB PTSIM_GIB_BYTES

static const char *const status_keys[] = {"compared", "refused", "out_of_scope", "unmeasured"};
static const char *const quantity_names[PTSIM_CASE_QUANTITIES] = {
    "peak: emulation", "peak: estimate", "steady: emulation", "steady: estimate", "iteration time"};

/* ---- groups ---- */

static gint compare_strings(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct values of a row field among compared rows, sorted. */
static GPtrArray *distinct(GPtrArray *rows, gboolean family) {
  GPtrArray *out = g_ptr_array_new();
  for (guint i = 0; i < rows->len; i++) {
    const PtsimCaseRow *r = rows->pdata[i];
    const char *v = family ? r->family : r->platform;
    if (r->status != PTSIM_CASE_COMPARED) continue;
    gboolean seen = FALSE;
    for (guint j = 0; j < out->len; j++) seen |= strcmp(out->pdata[j], v) == 0;
    if (!seen) g_ptr_array_add(out, (gpointer)v);
  }
  g_ptr_array_sort(out, compare_strings);
  return out;
}

/* Counts of each distinct string, as (string, count) in a hash table. */
static void count_into(GHashTable *counts, const char *key) {
  gpointer old = g_hash_table_lookup(counts, key);
  g_hash_table_replace(counts, g_strdup(key), GINT_TO_POINTER(GPOINTER_TO_INT(old) + 1));
}

static GPtrArray *sorted_keys(GHashTable *counts) {
  GPtrArray *keys = g_ptr_array_new();
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init(&it, counts);
  while (g_hash_table_iter_next(&it, &k, NULL)) g_ptr_array_add(keys, k);
  g_ptr_array_sort(keys, compare_strings);
  return keys;
}

/* Flags not modelled, environment variables applied / not modelled, over
 * the compared rows. */
typedef struct {
  GHashTable *flags, *applied, *ignored, *reasons;
  guint status[4];
  guint cases;
  guint not_run; /* compared rows predicted not to run */
} Tally;

static void tally(GPtrArray *rows, Tally *t) {
  memset(t, 0, sizeof *t);
  t->flags = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  t->applied = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  t->ignored = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  t->reasons = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  const PtsimMegatronCase *last = NULL;
  for (guint i = 0; i < rows->len; i++) {
    const PtsimCaseRow *r = rows->pdata[i];
    t->status[r->status]++;
    if (r->kase != last) t->cases++;
    last = r->kase;
    if (r->status == PTSIM_CASE_OUT_OF_SCOPE) count_into(t->reasons, r->reason);
    if (r->status != PTSIM_CASE_COMPARED) continue;
    t->not_run += r->runs == 0;
    for (guint j = 0; j < r->unmodelled->len; j++) count_into(t->flags, r->unmodelled->pdata[j]);
    for (guint j = 0; j < r->env_applied->len; j++)
      count_into(t->applied, r->env_applied->pdata[j]);
    for (guint j = 0; j < r->env_ignored->len; j++)
      count_into(t->ignored, r->env_ignored->pdata[j]);
  }
}

static void tally_clear(Tally *t) {
  g_hash_table_unref(t->flags);
  g_hash_table_unref(t->applied);
  g_hash_table_unref(t->ignored);
  g_hash_table_unref(t->reasons);
}

/* ---- text ---- */

static void text_gib(GString *out, double bytes) {
  if (isnan(bytes))
    g_string_append_printf(out, " %7s", "-");
  else
    g_string_append_printf(out, " %7.2f", bytes / GIB);
}

static void text_error(GString *out, double e) {
  if (isnan(e))
    g_string_append_printf(out, " %7s", "-");
  else
    g_string_append_printf(out, " %+6.1f%%", 100.0 * e);
}

static void text_row(GString *out, const PtsimCaseRow *r) {
  g_autofree char *name = g_strdup_printf("%s/%s", r->family, r->name);
  g_string_append_printf(out, "%-72s %-8s %4" G_GINT64_FORMAT " |", name, r->platform, r->gpus);
  text_gib(out, r->measured[PTSIM_CASE_PEAK_EMULATION]);
  for (int q = PTSIM_CASE_PEAK_EMULATION; q <= PTSIM_CASE_PEAK_ESTIMATE; q++) {
    text_gib(out, r->predicted[q]);
    text_error(out, ptsim_case_row_error(r, q));
  }
  g_string_append(out, " |");
  text_gib(out, r->measured[PTSIM_CASE_STEADY_EMULATION]);
  for (int q = PTSIM_CASE_STEADY_EMULATION; q <= PTSIM_CASE_STEADY_ESTIMATE; q++) {
    text_gib(out, r->predicted[q]);
    text_error(out, ptsim_case_row_error(r, q));
  }
  g_string_append(out, " |");
  for (int k = 0; k < 2; k++) {
    double v = k ? r->predicted[PTSIM_CASE_TIME] : r->measured[PTSIM_CASE_TIME];
    if (isnan(v))
      g_string_append_printf(out, " %7s", "-");
    else
      g_string_append_printf(out, " %7.3f", v);
  }
  text_error(out, ptsim_case_row_error(r, PTSIM_CASE_TIME));
  g_string_append_printf(out, " | %s\n", r->runs < 0 ? "-" : r->runs ? "runs" : "NO");
}

static void text_stats_line(GString *out, GPtrArray *rows, const char *label, const char *platform,
                            const char *family) {
  g_string_append_printf(out, "%-22s", label);
  for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++) {
    PtsimCaseStats st;
    ptsim_megatron_cases_stats(rows, platform, family, (PtsimCaseQuantity)q, &st);
    if (st.n == 0)
      g_string_append_printf(out, " %21s", "-");
    else
      g_string_append_printf(out, " %5.1f%% (%+6.1f%%) %4zu", 100.0 * st.median_abs,
                             100.0 * st.median, st.n);
  }
  g_string_append_c(out, '\n');
}

static void text_counts(GString *out, GHashTable *counts, const char *indent) {
  g_autoptr(GPtrArray) keys = sorted_keys(counts);
  for (guint i = 0; i < keys->len; i++)
    g_string_append_printf(out, "%s%4d  %s\n", indent,
                           GPOINTER_TO_INT(g_hash_table_lookup(counts, keys->pdata[i])),
                           (const char *)keys->pdata[i]);
}

static void write_text(GString *out, GPtrArray *rows, const char *recipes) {
  Tally t;
  tally(rows, &t);
  g_string_append_printf(out,
                         "ptsim validate --megatron-cases: %u cases (recipes: %s): %u rows "
                         "compared, %u refused, %u cases out of scope, %u unmeasured\n",
                         t.cases, recipes ? recipes : "none", t.status[PTSIM_CASE_COMPARED],
                         t.status[PTSIM_CASE_REFUSED], t.status[PTSIM_CASE_OUT_OF_SCOPE],
                         t.status[PTSIM_CASE_UNMEASURED]);
  g_string_append(out, "error = (predicted - measured) / measured; memory in GiB, time in s; the "
                       "last pipeline stage (the rank that logs, world_size - 1)\n\n");
  g_string_append_printf(out,
                         "%-72s %-8s %4s | %7s %7s %7s %7s %7s | %7s %7s %7s %7s %7s | %7s "
                         "%7s %7s | %s\n",
                         "case", "platform", "gpus", "peak", "emul", "error", "estim", "error",
                         "steady", "emul", "error", "estim", "error", "iter_s", "ptsim", "error",
                         "verdict");
  for (guint i = 0; i < rows->len; i++) {
    const PtsimCaseRow *r = rows->pdata[i];
    if (r->status == PTSIM_CASE_COMPARED) text_row(out, r);
  }
  g_string_append(out, "\nmedian |error| (median signed error) rows, over the compared rows\n");
  g_string_append_printf(out, "%-22s", "group");
  for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++)
    g_string_append_printf(out, " %21s", quantity_names[q]);
  g_string_append_c(out, '\n');
  text_stats_line(out, rows, "all", NULL, NULL);
  g_autoptr(GPtrArray) platforms = distinct(rows, FALSE);
  g_autoptr(GPtrArray) families = distinct(rows, TRUE);
  for (guint i = 0; i < platforms->len; i++)
    text_stats_line(out, rows, platforms->pdata[i], platforms->pdata[i], NULL);
  for (guint i = 0; i < families->len; i++)
    text_stats_line(out, rows, families->pdata[i], NULL, families->pdata[i]);
  for (guint i = 0; i < platforms->len; i++)
    for (guint j = 0; j < families->len; j++) {
      g_autofree char *label = g_strdup_printf("%s %s", (const char *)platforms->pdata[i],
                                               (const char *)families->pdata[j]);
      text_stats_line(out, rows, label, platforms->pdata[i], families->pdata[j]);
    }
  g_string_append(out, "\nlargest error of each quantity\n");
  for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++) {
    PtsimCaseStats st;
    ptsim_megatron_cases_stats(rows, NULL, NULL, (PtsimCaseQuantity)q, &st);
    if (st.n)
      g_string_append_printf(out, "  %-18s %+7.1f%%  %s/%s on %s\n", quantity_names[q],
                             100.0 * st.worst, st.worst_row->family, st.worst_row->name,
                             st.worst_row->platform);
  }
  g_string_append_printf(out,
                         "\npredicted not to run (every case ran: a false out-of-memory): %u\n",
                         t.not_run);
  for (guint i = 0; i < rows->len; i++) {
    const PtsimCaseRow *r = rows->pdata[i];
    if (r->status == PTSIM_CASE_COMPARED && r->runs == 0)
      g_string_append_printf(out, "  %s/%s on %s\n", r->family, r->name, r->platform);
  }
  g_string_append_printf(out, "\nrefused (in scope, not predicted): %u\n",
                         t.status[PTSIM_CASE_REFUSED]);
  for (guint i = 0; i < rows->len; i++) {
    const PtsimCaseRow *r = rows->pdata[i];
    if (r->status == PTSIM_CASE_REFUSED)
      g_string_append_printf(out, "  %s/%s%s%s: %s\n", r->family, r->name,
                             *r->platform ? " on " : "", r->platform, r->reason);
  }
  g_string_append_printf(out,
                         "\nunmeasured (in scope, no dgx_a100 or dgx_h100 golden values): %u\n",
                         t.status[PTSIM_CASE_UNMEASURED]);
  for (guint i = 0; i < rows->len; i++) {
    const PtsimCaseRow *r = rows->pdata[i];
    if (r->status == PTSIM_CASE_UNMEASURED)
      g_string_append_printf(out, "  %s/%s\n", r->family, r->name);
  }
  g_string_append_printf(out, "\nout of scope, by reason: %u cases\n",
                         t.status[PTSIM_CASE_OUT_OF_SCOPE]);
  text_counts(out, t.reasons, "  ");
  g_string_append(out, "\nenvironment of the compared rows (the harness's defaults, then the "
                       "case's ENV_VARS), rows:\n  applied:\n");
  text_counts(out, t.applied, "    ");
  g_string_append(out, "  not modelled:\n");
  text_counts(out, t.ignored, "    ");
  g_string_append(out, "\nflags ptsim does not model, rows:\n");
  text_counts(out, t.flags, "  ");
  tally_clear(&t);
}

/* ---- JSON ---- */

static void json_strings(PtsimJson *j, const char *key, GPtrArray *strings) {
  ptsim_json_begin_array(j, key);
  for (guint i = 0; i < strings->len; i++) ptsim_json_string(j, NULL, strings->pdata[i]);
  ptsim_json_end_array(j);
}

static void json_row(PtsimJson *j, const PtsimCaseRow *r) {
  const PtsimMegatronCase *c = r->kase;
  ptsim_json_begin_object(j, NULL);
  ptsim_json_string(j, "family", r->family);
  ptsim_json_string(j, "case", r->name);
  ptsim_json_string(j, "platform", r->platform);
  ptsim_json_string(j, "environment", r->environment);
  ptsim_json_string(j, "status", status_keys[r->status]);
  if (r->reason)
    ptsim_json_string(j, "reason", r->reason);
  else
    ptsim_json_null(j, "reason");
  ptsim_json_string(j, "test_type", c->test_type);
  ptsim_json_string(j, "mode", c->mode);
  ptsim_json_string(j, "config", c->config);
  ptsim_json_string(j, "golden_values", r->run ? r->run->source : "");
  ptsim_json_string(j, "megatron_commit", r->commit);
  ptsim_json_string(j, "hw", r->hw);
  ptsim_json_int(j, "gpus", r->gpus);
  if (c->gpus_from)
    ptsim_json_string(j, "gpus_from", c->gpus_from);
  else
    ptsim_json_null(j, "gpus_from");
  ptsim_json_int(j, "stage", r->stage);
  if (r->runs < 0)
    ptsim_json_null(j, "runs");
  else
    ptsim_json_bool(j, "runs", r->runs);
  ptsim_json_string(j, "assumed", r->assumed);
  ptsim_json_string(j, "command", r->command);
  ptsim_json_begin_object(j, "measured");
  ptsim_json_double(j, "peak_allocated_bytes", r->measured[PTSIM_CASE_PEAK_EMULATION]);
  ptsim_json_double(j, "steady_allocated_bytes", r->measured[PTSIM_CASE_STEADY_EMULATION]);
  ptsim_json_double(j, "iteration_time_s", r->measured[PTSIM_CASE_TIME]);
  ptsim_json_int(j, "iteration_time_steps", r->run ? r->run->time_steps : 0);
  ptsim_json_end_object(j);
  ptsim_json_begin_object(j, "predicted");
  for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++)
    ptsim_json_double(j, ptsim_case_quantity_key(q), r->predicted[q]);
  ptsim_json_end_object(j);
  ptsim_json_begin_object(j, "errors");
  for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++)
    ptsim_json_double(j, ptsim_case_quantity_key(q), ptsim_case_row_error(r, q));
  ptsim_json_end_object(j);
  json_strings(j, "unmodelled_flags", r->unmodelled);
  json_strings(j, "env_applied", r->env_applied);
  json_strings(j, "env_not_modelled", r->env_ignored);
  ptsim_json_begin_array(j, "model_args");
  for (guint i = 0; i < c->flags->len; i++) {
    ptsim_json_begin_array(j, NULL);
    ptsim_json_string(j, NULL, c->flags->pdata[i]);
    if (c->values->pdata[i])
      ptsim_json_string(j, NULL, c->values->pdata[i]);
    else
      ptsim_json_null(j, NULL);
    ptsim_json_end_array(j);
  }
  ptsim_json_end_array(j);
  ptsim_json_begin_array(j, "env_vars");
  for (guint i = 0; i < c->env_keys->len; i++) {
    ptsim_json_begin_array(j, NULL);
    ptsim_json_string(j, NULL, c->env_keys->pdata[i]);
    ptsim_json_string(j, NULL, c->env_values->pdata[i]);
    ptsim_json_end_array(j);
  }
  ptsim_json_end_array(j);
  ptsim_json_end_object(j);
}

static void json_stats(PtsimJson *j, const char *key, GPtrArray *rows, const char *platform,
                       const char *family) {
  ptsim_json_begin_object(j, key);
  for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++) {
    PtsimCaseStats st;
    ptsim_megatron_cases_stats(rows, platform, family, (PtsimCaseQuantity)q, &st);
    ptsim_json_begin_object(j, ptsim_case_quantity_key(q));
    ptsim_json_int(j, "n", (int64_t)st.n);
    ptsim_json_double(j, "median_abs_error", st.median_abs);
    ptsim_json_double(j, "median_error", st.median);
    ptsim_json_double(j, "worst_error", st.worst);
    if (st.worst_row) {
      g_autofree char *w = g_strdup_printf("%s/%s on %s", st.worst_row->family, st.worst_row->name,
                                           st.worst_row->platform);
      ptsim_json_string(j, "worst_case", w);
    } else {
      ptsim_json_null(j, "worst_case");
    }
    ptsim_json_end_object(j);
  }
  ptsim_json_end_object(j);
}

static void json_counts(PtsimJson *j, const char *key, const char *name, GHashTable *counts) {
  g_autoptr(GPtrArray) keys = sorted_keys(counts);
  ptsim_json_begin_array(j, key);
  for (guint i = 0; i < keys->len; i++) {
    ptsim_json_begin_object(j, NULL);
    ptsim_json_string(j, name, keys->pdata[i]);
    ptsim_json_int(j, "rows", GPOINTER_TO_INT(g_hash_table_lookup(counts, keys->pdata[i])));
    ptsim_json_end_object(j);
  }
  ptsim_json_end_array(j);
}

static void write_json(GString *out, GPtrArray *rows, const char *recipes) {
  Tally t;
  tally(rows, &t);
  PtsimJson j;
  ptsim_json_init(&j, out);
  ptsim_json_begin_object(&j, NULL);
  ptsim_json_int(&j, "cases", t.cases);
  if (recipes)
    ptsim_json_string(&j, "recipes", recipes);
  else
    ptsim_json_null(&j, "recipes");
  ptsim_json_begin_object(&j, "counts");
  for (int s = 0; s < 4; s++) ptsim_json_int(&j, status_keys[s], t.status[s]);
  ptsim_json_int(&j, "predicted_not_to_run", t.not_run);
  ptsim_json_end_object(&j);
  ptsim_json_begin_array(&j, "rows");
  for (guint i = 0; i < rows->len; i++) json_row(&j, rows->pdata[i]);
  ptsim_json_end_array(&j);
  ptsim_json_begin_object(&j, "statistics");
  json_stats(&j, "all", rows, NULL, NULL);
  g_autoptr(GPtrArray) platforms = distinct(rows, FALSE);
  g_autoptr(GPtrArray) families = distinct(rows, TRUE);
  ptsim_json_begin_object(&j, "by_platform");
  for (guint i = 0; i < platforms->len; i++)
    json_stats(&j, platforms->pdata[i], rows, platforms->pdata[i], NULL);
  ptsim_json_end_object(&j);
  ptsim_json_begin_object(&j, "by_family");
  for (guint i = 0; i < families->len; i++)
    json_stats(&j, families->pdata[i], rows, NULL, families->pdata[i]);
  ptsim_json_end_object(&j);
  ptsim_json_begin_object(&j, "by_platform_family");
  for (guint i = 0; i < platforms->len; i++)
    for (guint k = 0; k < families->len; k++) {
      g_autofree char *key = g_strdup_printf("%s/%s", (const char *)platforms->pdata[i],
                                             (const char *)families->pdata[k]);
      json_stats(&j, key, rows, platforms->pdata[i], families->pdata[k]);
    }
  ptsim_json_end_object(&j);
  ptsim_json_end_object(&j);
  json_counts(&j, "out_of_scope_reasons", "reason", t.reasons);
  json_counts(&j, "env_applied", "variable", t.applied);
  json_counts(&j, "env_not_modelled", "variable", t.ignored);
  json_counts(&j, "unmodelled_flags", "flag", t.flags);
  ptsim_json_end_object(&j);
  g_string_append_c(out, '\n');
  tally_clear(&t);
}

/* ---- CSV ---- */

static void csv_num(GString *out, double v, const char *fmt) {
  g_string_append_c(out, ',');
  if (!isnan(v)) g_string_append_printf(out, fmt, v);
}

static void csv_joined(GString *out, GPtrArray *strings) {
  g_autoptr(GString) s = g_string_new(NULL);
  for (guint i = 0; i < strings->len; i++)
    g_string_append_printf(s, "%s%s", i ? "; " : "", (const char *)strings->pdata[i]);
  g_string_append_c(out, ',');
  ptsim_csv_append_text(out, s->str);
}

static void write_csv(GString *out, GPtrArray *rows) {
  g_string_append(out, "family,case,platform,environment,status,hw,gpus,stage,runs,"
                       "measured_peak_bytes,measured_steady_bytes,measured_iteration_time_s");
  for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++)
    g_string_append_printf(out, ",predicted_%s", ptsim_case_quantity_key(q));
  for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++)
    g_string_append_printf(out, ",error_%s", ptsim_case_quantity_key(q));
  g_string_append(out, ",reason,assumed,unmodelled_flags,env_applied,env_not_modelled,"
                       "golden_values,megatron_commit\n");
  for (guint i = 0; i < rows->len; i++) {
    const PtsimCaseRow *r = rows->pdata[i];
    const char *cells[] = {r->family, r->name, r->platform, r->environment, status_keys[r->status],
                           r->hw};
    for (size_t k = 0; k < G_N_ELEMENTS(cells); k++) {
      if (k) g_string_append_c(out, ',');
      ptsim_csv_append_text(out, cells[k]);
    }
    g_string_append_printf(out, ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%s", r->gpus, r->stage,
                           r->runs < 0 ? ""
                           : r->runs   ? "1"
                                       : "0");
    csv_num(out, r->measured[PTSIM_CASE_PEAK_EMULATION], "%.0f");
    csv_num(out, r->measured[PTSIM_CASE_STEADY_EMULATION], "%.0f");
    csv_num(out, r->measured[PTSIM_CASE_TIME], "%.6f");
    for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++)
      csv_num(out, r->predicted[q], q == PTSIM_CASE_TIME ? "%.6f" : "%.0f");
    for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++)
      csv_num(out, ptsim_case_row_error(r, q), "%.6f");
    g_string_append_c(out, ',');
    ptsim_csv_append_text(out, r->reason ? r->reason : "");
    g_string_append_c(out, ',');
    ptsim_csv_append_text(out, r->assumed);
    csv_joined(out, r->unmodelled);
    csv_joined(out, r->env_applied);
    csv_joined(out, r->env_ignored);
    g_string_append_c(out, ',');
    ptsim_csv_append_text(out, r->run ? r->run->source : "");
    g_string_append_c(out, ',');
    ptsim_csv_append_text(out, r->commit);
    g_string_append_c(out, '\n');
  }
}

void ptsim_megatron_cases_write(GString *out, GPtrArray *rows, const char *format,
                                const char *recipes_used) {
  if (strcmp(format, "json") == 0)
    write_json(out, rows, recipes_used);
  else if (strcmp(format, "csv") == 0)
    write_csv(out, rows);
  else
    write_text(out, rows, recipes_used);
}

/* alloc_replay_cmd.c — the alloc-replay subcommand; see alloc_replay_cmd.h.
 * Parsing and replay live in alloc_trace_io.c; this file compares the
 * emulation with the observations and writes the report. */
#include "alloc_replay_cmd.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc_conf.h"
#include "alloc_trace_io.h"
#include "cli_options.h"
#include "config.h"
#include "json_writer.h"
#include "output.h"
#include "report.h"

#define MIB PTSIM_MIB_BYTES
#define GIB PTSIM_GIB_BYTES
/* No --capacity-gib: a device no trace fills (2^50 B). */
#define UNLIMITED_BYTES 1125899906842624.0

/* Emulated vs observed reserved bytes over the events that carry an
 * observation. */
typedef struct {
  int64_t events;                  /* events with an observation */
  int64_t observed_peak_bytes;     /* max observed */
  double mean_abs_diff_bytes;      /* mean |emulated - observed| */
  int64_t max_abs_diff_bytes;      /* the largest |emulated - observed| */
  int64_t max_diff_event;          /* its event index, -1 when none */
  int32_t max_diff_line;           /* its trace line */
  int64_t max_diff_emulated_bytes; /* both values there */
  int64_t max_diff_observed_bytes;
} Comparison;

static void compare(const PtsimAllocTrace *t, const int64_t *emulated, int64_t replayed,
                    Comparison *c) {
  memset(c, 0, sizeof *c);
  c->max_diff_event = -1;
  c->max_abs_diff_bytes = -1;
  if (t->observed_reserved == NULL) return;
  double sum = 0.0;
  for (int64_t e = 0; e < replayed && e < (int64_t)t->observed_reserved->len; e++) {
    int64_t obs = g_array_index(t->observed_reserved, int64_t, e);
    if (obs < 0) continue;
    int64_t d = emulated[e] - obs;
    int64_t ad = d < 0 ? -d : d;
    c->events += 1;
    sum += (double)ad;
    if (obs > c->observed_peak_bytes) c->observed_peak_bytes = obs;
    if (ad > c->max_abs_diff_bytes) {
      c->max_abs_diff_bytes = ad;
      c->max_diff_event = e;
      c->max_diff_line = g_array_index(t->events, PtsimAllocEvent, e).line;
      c->max_diff_emulated_bytes = emulated[e];
      c->max_diff_observed_bytes = obs;
    }
  }
  if (c->events > 0) c->mean_abs_diff_bytes = sum / (double)c->events;
  if (c->max_abs_diff_bytes < 0) c->max_abs_diff_bytes = 0;
}

static void text_bytes(GString *out, const char *label, double bytes) {
  g_string_append_printf(out, "%-26s %12.2f MiB  (%.0f B)\n", label, bytes / MIB, bytes);
}

static void write_text(GString *out, const PtsimAllocTrace *t, const char *conf, double capacity,
                       const PtsimAllocReplay *r, const Comparison *c) {
  g_string_append_printf(out,
                         "trace %s: %" G_GINT64_FORMAT " events (%" G_GINT64_FORMAT
                         " allocs, %" G_GINT64_FORMAT " frees, %" G_GINT64_FORMAT
                         " empty_cache), %d tensor ids, at most %d live\n",
                         t->name, r->events, r->allocs, r->frees, r->empty_caches, t->num_ids,
                         t->max_live);
  g_string_append_printf(out, "allocator: %s; capacity ", conf ? conf : "PyTorch defaults");
  if (capacity >= UNLIMITED_BYTES)
    g_string_append(out, "unlimited\n\n");
  else
    g_string_append_printf(out, "%.2f GiB\n\n", capacity / GIB);
  text_bytes(out, "peak allocated", (double)r->peak_allocated_bytes);
  text_bytes(out, "peak reserved", (double)r->peak_reserved_bytes);
  text_bytes(out, "peak requested", (double)r->peak_requested_bytes);
  g_string_append_printf(out, "%-26s %12.2f %%    (1 - peak allocated / peak reserved)\n",
                         "fragmentation", 100.0 * r->fragmentation);
  text_bytes(out, "inactive split (end)", (double)r->inactive_split_bytes);
  text_bytes(out, "inactive split (peak)", (double)r->inactive_split_bytes_peak);
  if (r->ooms == 0) {
    g_string_append_printf(out, "%-26s none\n", "first OOM");
  } else {
    g_string_append_printf(out,
                           "%-26s line %d: %" G_GINT64_FORMAT
                           " B asked, %.2f MiB allocated, %.2f MiB reserved; %" G_GINT64_FORMAT
                           " OOM%s in all (%" G_GINT64_FORMAT " later frees skipped)\n",
                           "first OOM", r->first_oom_line, r->first_oom_size_bytes,
                           r->first_oom_allocated_bytes / MIB, r->first_oom_reserved_bytes / MIB,
                           r->ooms, r->ooms == 1 ? "" : "s", r->skipped_frees);
  }
  if (c->events == 0) {
    g_string_append(out, "\nno '# reserved N' observations in the trace: nothing to compare\n");
    return;
  }
  g_string_append_printf(out,
                         "\nagainst the real allocator (%" G_GINT64_FORMAT
                         " events with '# reserved N')\n",
                         c->events);
  text_bytes(out, "observed peak reserved", (double)c->observed_peak_bytes);
  text_bytes(out, "emulated peak reserved", (double)r->peak_reserved_bytes);
  double rel = c->observed_peak_bytes > 0
                   ? (double)(r->peak_reserved_bytes - c->observed_peak_bytes) /
                         (double)c->observed_peak_bytes
                   : 0.0;
  g_string_append_printf(out, "%-26s %+12.2f MiB  (%+.1f%%)\n", "emulated - observed (peak)",
                         (double)(r->peak_reserved_bytes - c->observed_peak_bytes) / MIB,
                         100.0 * rel);
  text_bytes(out, "mean |emulated - observed|", c->mean_abs_diff_bytes);
  g_string_append_printf(out,
                         "%-26s %12.2f MiB  at line %d (emulated %.2f MiB, observed %.2f MiB)\n",
                         "max |emulated - observed|", c->max_abs_diff_bytes / MIB, c->max_diff_line,
                         c->max_diff_emulated_bytes / MIB, c->max_diff_observed_bytes / MIB);
}

static void write_json(GString *out, const PtsimAllocTrace *t, const char *conf, double capacity,
                       const PtsimAllocReplay *r, const Comparison *c) {
  PtsimJson json;
  ptsim_json_init(&json, out);
  ptsim_json_begin_object(&json, NULL);
  ptsim_json_string(&json, "trace", t->name);
  if (conf)
    ptsim_json_string(&json, "alloc_conf", conf);
  else
    ptsim_json_null(&json, "alloc_conf");
  ptsim_json_bool(&json, "capacity_unlimited", capacity >= UNLIMITED_BYTES);
  ptsim_json_double(&json, "capacity_bytes", capacity);
  ptsim_json_int(&json, "events", r->events);
  ptsim_json_int(&json, "allocs", r->allocs);
  ptsim_json_int(&json, "frees", r->frees);
  ptsim_json_int(&json, "empty_caches", r->empty_caches);
  ptsim_json_int(&json, "num_ids", t->num_ids);
  ptsim_json_int(&json, "max_live", t->max_live);
  ptsim_json_int(&json, "peak_allocated_bytes", r->peak_allocated_bytes);
  ptsim_json_int(&json, "peak_reserved_bytes", r->peak_reserved_bytes);
  ptsim_json_int(&json, "peak_requested_bytes", r->peak_requested_bytes);
  ptsim_json_double(&json, "fragmentation", r->fragmentation);
  ptsim_json_int(&json, "inactive_split_bytes", r->inactive_split_bytes);
  ptsim_json_int(&json, "inactive_split_peak_bytes", r->inactive_split_bytes_peak);
  ptsim_json_int(&json, "ooms", r->ooms);
  ptsim_json_int(&json, "skipped_frees", r->skipped_frees);
  if (r->ooms > 0) {
    ptsim_json_begin_object(&json, "first_oom");
    ptsim_json_int(&json, "line", r->first_oom_line);
    ptsim_json_int(&json, "event", r->first_oom_event);
    ptsim_json_int(&json, "size_bytes", r->first_oom_size_bytes);
    ptsim_json_int(&json, "allocated_bytes", r->first_oom_allocated_bytes);
    ptsim_json_int(&json, "reserved_bytes", r->first_oom_reserved_bytes);
    ptsim_json_end_object(&json);
  } else {
    ptsim_json_null(&json, "first_oom");
  }
  if (c->events > 0) {
    ptsim_json_begin_object(&json, "observed");
    ptsim_json_int(&json, "events", c->events);
    ptsim_json_int(&json, "peak_reserved_bytes", c->observed_peak_bytes);
    ptsim_json_int(&json, "emulated_peak_reserved_bytes", r->peak_reserved_bytes);
    ptsim_json_double(&json, "mean_abs_difference_bytes", c->mean_abs_diff_bytes);
    ptsim_json_int(&json, "max_abs_difference_bytes", c->max_abs_diff_bytes);
    ptsim_json_int(&json, "max_difference_line", c->max_diff_line);
    ptsim_json_int(&json, "max_difference_emulated_bytes", c->max_diff_emulated_bytes);
    ptsim_json_int(&json, "max_difference_observed_bytes", c->max_diff_observed_bytes);
    ptsim_json_end_object(&json);
  } else {
    ptsim_json_null(&json, "observed");
  }
  ptsim_json_end_object(&json);
}

typedef struct {
  char *alloc_conf;
  char *format;
  char *capacity_gib; /* NULL: unlimited */
} ReplayOptions;

static int fail(int code, const char *message) {
  fprintf(stderr, "ptsim alloc-replay: %s\n", message);
  return code;
}

/* Everything after option parsing; returns the exit code. */
static int replay(const char *path, const ReplayOptions *o) {
  g_autoptr(GError) error = NULL;
  PtsimFormat format = PTSIM_FORMAT_TEXT;
  if (o->format && (!ptsim_format_parse(o->format, &format) || format == PTSIM_FORMAT_CSV)) {
    g_autofree char *m = g_strdup_printf("--format '%s': allowed values are text|json", o->format);
    return fail(2, m);
  }
  double capacity = UNLIMITED_BYTES, gib = 0.0;
  const PtsimRange gib_range = {0.0, 1048576.0, FALSE, TRUE};
  if (o->capacity_gib) {
    if (!ptsim_cli_double_flag("--capacity-gib", o->capacity_gib, gib_range, &gib, &error))
      return fail(2, error->message);
    capacity = gib * GIB;
  }
  PtsimAllocOptions opts;
  ptsim_alloc_options_init(&opts);
  if (o->alloc_conf && !ptsim_alloc_conf_parse(o->alloc_conf, &opts, &error)) {
    return fail(2, error->message);
  }
  g_autoptr(PtsimAllocTrace) trace = ptsim_alloc_trace_load(path, &error);
  if (trace == NULL) return fail(2, error->message);
  if (trace->events->len == 0) {
    g_autofree char *m = g_strdup_printf("%s: no events (expected lines alloc ID SIZE STREAM, "
                                         "free ID, empty_cache)",
                                         path);
    return fail(2, m);
  }
  g_autofree int64_t *emulated = g_new0(int64_t, trace->events->len > 0 ? trace->events->len : 1);
  PtsimAllocReplay r;
  if (!ptsim_alloc_trace_replay(trace, &opts, capacity, emulated, &r, &error))
    return fail(1, error->message);
  Comparison c;
  compare(trace, emulated, r.events, &c);
  g_autoptr(GString) text = g_string_new(NULL);
  if (format == PTSIM_FORMAT_JSON)
    write_json(text, trace, o->alloc_conf, capacity, &r, &c);
  else
    write_text(text, trace, o->alloc_conf, capacity, &r, &c);
  if (!ptsim_output_stdout(text->str, text->len, &error)) return fail(1, error->message);
  return 0;
}

int ptsim_alloc_replay_main(int argc, char **argv) {
  ReplayOptions o = {NULL, NULL, NULL};
  const GOptionEntry entries[] = {
      {"alloc-conf", 0, 0, G_OPTION_ARG_STRING, &o.alloc_conf,
       "PYTORCH_CUDA_ALLOC_CONF for the emulation, e.g. expandable_segments:True", "CONF"},
      {"capacity-gib", 0, 0, G_OPTION_ARG_STRING, &o.capacity_gib,
       "Device memory the allocator may reserve, GiB, in (0, 1048576] (default: unlimited)", "N"},
      {"format", 0, 0, G_OPTION_ARG_STRING, &o.format, "text|json (default text)", "F"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) context = g_option_context_new("TRACE");
  g_option_context_set_summary(
      context, "Replays an allocator event trace (alloc ID SIZE STREAM / free ID / empty_cache;\n"
               "validate/snapshot_to_trace.py converts a PyTorch memory snapshot) through the\n"
               "caching-allocator emulation. With '# reserved N' lines (the real allocator's\n"
               "reserved bytes after an event), also compares emulated and observed reserved.");
  g_option_context_add_main_entries(context, entries, NULL);
  g_autoptr(GError) error = NULL;
  int rc;
  if (!ptsim_options_parse(context, &argc, &argv, &error))
    rc = fail(2, error->message);
  else if (argc != 2)
    rc = fail(2, argc < 2 ? "expected one TRACE file (see --help)"
                          : "expected one TRACE file, got more (see --help)");
  else
    rc = replay(argv[1], &o);
  g_free(o.alloc_conf);
  g_free(o.format);
  g_free(o.capacity_gib);
  return rc;
}

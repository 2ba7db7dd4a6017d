/* api_shard.c — one shard of a sweep split over machines, through the
 * library; see ptsim.h (ptsim_api_sweep_shard).  The file is the one
 * `ptsim sweep FLAGS --shard K/N --csv PATH` writes (sim/run/sweep_shard.h:
 * its made-by header and rows): every layout of the slice as evaluated, in
 * enumeration order, nothing ranked or settled (the merge does that, as the
 * one run would).  The sweep is streamed in chunks, so a slice of any size
 * costs bounded memory; its rows are the command's, which holds a small
 * slice in memory (the same evaluation either way). */
#include "api_int.h"

#include <string.h>
#include "input.h"
#include "output.h"
#include "sweep_options.h"
#include "sweep_rows.h"
#include "sweep_shard.h"

typedef struct {
  PtsimOutput *out;
  guint threads;
  GString *rows;
} Shard;

typedef struct {
  const PtsimJob *jobs;
  const PtsimBatchResult *results;
  guint64 first_index;
} ChunkRows;

static void shard_row(GString *out, guint k, gconstpointer data) {
  const ChunkRows *c = data;
  ptsim_shard_row(out, c->first_index + k, &c->jobs[k], &c->results[k]);
}

static gboolean shard_chunk(const PtsimJob *jobs, const PtsimBatchResult *results, guint n,
                            guint64 first_index, gpointer user_data, GError **error) {
  Shard *sh = user_data;
  ChunkRows chunk = {jobs, results, first_index};
  g_string_truncate(sh->rows, 0);
  ptsim_sweep_format_rows(sh->rows, n, sh->threads, shard_row, &chunk);
  return ptsim_output_append(sh->out, sh->rows->str, sh->rows->len, error);
}

/* The shard's flow, as the command's: the options, K/N, the path, the
 * count (which reads the inputs the header names), the slice, the rows.
 * Returns the layouts written, or -1 with the error set. */
static long long write_shard(const PtsimSweepOptions *o, const char *const *flags, unsigned k,
                             unsigned n, const char *path, GError **error) {
  PtsimDevice device;
  guint sk, sn;
  g_autofree char *kn = g_strdup_printf("%u/%u", k, n);
  g_autoptr(PtsimSweepSpec) spec = ptsim_sweep_spec_new();
  if (o->csv || o->format || o->figures || o->shard || o->merge) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "%s is an output of the ptsim command; the shard's file is the path given",
                o->csv       ? "--csv"
                : o->format  ? "--format"
                : o->figures ? "--figures"
                : o->shard   ? "--shard"
                             : "--merge");
    return -1;
  }
  if (!ptsim_shard_parse(kn, &sk, &sn, error) || !ptsim_sweep_options_device(o, &device, error))
    return -1;
  if (!path) {
    g_set_error_literal(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--shard K/N: needs --csv FILE (the shard file), and goes with neither "
                        "--format csv, --figures nor --merge");
    return -1;
  }
  /* the header names the inputs this call reads (the spec's settings, the
   * count's models and profiles), not whatever the process read before */
  ptsim_input_capture_begin();
  guint64 valid = G_MAXUINT64;
  if (ptsim_sweep_options_spec(o, spec, error) && ptsim_output_check(path, error))
    valid = ptsim_sweep_count(spec, error);
  g_auto(GStrv) inputs = ptsim_input_capture_end();
  if (valid == G_MAXUINT64) return -1;
  if (valid == 0) { /* the reasons come from an enumeration (of nothing valid: cheap) */
    g_autoptr(PtsimSweep) none = ptsim_sweep_enumerate(spec, error);
    if (none) ptsim_sweep_no_valid_error(none, error);
    return -1;
  }
  g_auto(GStrv) made_by = ptsim_shard_made_by_inputs(flags, (const char *const *)inputs);
  ptsim_shard_slice(sk, sn, valid, &spec->first, &spec->last);
  g_autoptr(GString) header = g_string_new(NULL);
  ptsim_shard_header(header, (const char *const *)made_by);
  Shard sh = {NULL, (guint)o->threads, NULL};
  if (!(sh.out = ptsim_output_open(path, error))) return -1;
  sh.rows = g_string_new(NULL);
  gboolean ok = ptsim_output_append(sh.out, header->str, header->len, error);
  g_autoptr(PtsimSweep) sweep = NULL;
  if (ok)
    ok = (sweep = ptsim_sweep_stream(spec, device, (guint)o->threads, PTSIM_SWEEP_STREAM_CHUNK,
                                     shard_chunk, &sh, NULL, NULL, error)) != NULL;
  g_string_free(sh.rows, TRUE);
  if (!ok) {
    ptsim_output_abort(sh.out);
    return -1;
  }
  if (!ptsim_output_commit(sh.out, error)) return -1;
  return (long long)(spec->last - spec->first);
}

long long ptsim_api_sweep_shard(const char *const *flags, unsigned k, unsigned n, const char *path,
                                PtsimApiError **error) {
  g_autoptr(GError) local = NULL;
  PtsimSweepOptions opts;
  ptsim_sweep_options_init(&opts);
  long long written = -1;
  if (ptsim_sweep_options_parse(&opts, flags, &local))
    written = write_shard(&opts, flags, k, n, path, &local);
  ptsim_sweep_options_clear(&opts);
  if (written >= 0) return written;
  ptsim_api_error_set(error, local, NULL);
  return -1;
}

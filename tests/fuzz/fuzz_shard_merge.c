/* fuzz_shard_merge.c — a shard file as `sweep --merge` reads it
 * (sim/run/sweep_shard.c): the header, each row's layout index, its
 * base64 result and the readable columns checked against the sweep's own
 * layout.  The input is one shard file of a small fixed sweep (llama3-8b on
 * 8 x h100-80g, mbs 1, cp 1, no recompute, as ptsim sweep enumerates it);
 * its header must say so (ptsim_shard_made_by of the same flags and the
 * model and profile read); the reader takes every layout in order, each
 * result finite, then must find nothing left.  A
 * line without end, NUL bytes, indices out of order or past int64 are
 * refusals, never a crash or unbounded memory. */
static void make_sweep(void);
#define FUZZ_TARGET_INIT make_sweep()
#include "fuzz_common.h"
#include "job_build.h"
#include "sweep.h"
#include "sweep_shard.h"

static PtsimSweep *sweep; /* its jobs, in enumeration order */
static char **made_by;    /* what made it */

/* The sweep's flags as `ptsim sweep` takes them (the seeds' command line). */
static const char *const sweep_flags[] = {"--model", "llama3-8b", "--hw", "h100-80g", "--gpus",
                                          "8",       "--seq",     "8192", "--gbs",    "128",
                                          "--mbs",   "1",         "--cp", "1",        "--recompute",
                                          "none",    NULL};

static void make_sweep(void) {
  g_autoptr(PtsimSweepSpec) spec = ptsim_sweep_spec_new();
  g_ptr_array_add(spec->models, g_strdup("llama3-8b"));
  g_ptr_array_add(spec->hws, g_strdup("h100-80g"));
  const gint64 gpus = 8, seq = 8192, gbs = 128, one = 1;
  const int none = PTSIM_RECOMPUTE_NONE;
  g_array_append_val(spec->gpus, gpus);
  g_array_append_val(spec->seqs, seq);
  g_array_append_val(spec->gbs, gbs);
  g_array_append_val(spec->mbs, one);
  g_array_append_val(spec->cps, one);
  g_array_set_size(spec->recomputes, 0); /* the default is all three */
  g_array_append_val(spec->recomputes, none);
  PtsimJobOptions opts;
  ptsim_job_options_init(&opts);
  g_assert(ptsim_job_build_sweep_base(&opts, &spec->base, NULL));
  sweep = ptsim_sweep_enumerate(spec, NULL);
  g_assert(sweep && sweep->jobs->len > 0);
  made_by = ptsim_shard_made_by(sweep_flags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  g_autofree char *path = fuzz_write_file("shard.csv", data, size);
  char *paths[] = {path};
  g_autoptr(GError) error = NULL;
  fuzz_time_start();
  g_autoptr(PtsimShardReader) reader = ptsim_shard_reader_open(paths, 1, &error);
  gboolean ok = reader && ptsim_shard_reader_check(reader, (const char *const *)made_by, &error);
  PtsimBatchResult r;
  for (guint i = 0; ok && i < sweep->jobs->len; i++) {
    ok = ptsim_shard_reader_next(reader, i, &g_array_index(sweep->jobs, PtsimJob, i), &r, &error);
    if (!ok) break;
    /* the measured numbers a merge ranks on are finite (the reader's check) */
    fuzz_check_measured("step_s", r.step_s, -G_MAXDOUBLE, G_MAXDOUBLE);
    fuzz_check_measured("total_bytes", r.total_bytes, -G_MAXDOUBLE, G_MAXDOUBLE);
    fuzz_check_measured("mfu", r.mfu, -G_MAXDOUBLE, G_MAXDOUBLE);
  }
  if (ok) ptsim_shard_reader_finish(reader, &error);
  fuzz_time_check("shard_merge");
  return 0;
}

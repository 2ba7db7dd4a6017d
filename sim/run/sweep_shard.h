/* sweep_shard.h — a sweep split over machines: one shard's file, and the
 * merge that turns the shards back into the one sweep.
 *
 * `ptsim sweep FLAGS --shard K/N --csv part-K.csv` evaluates the K-th of N
 * contiguous slices of the sweep's valid layouts in enumeration order
 * (layouts (K-1)V/N .. KV/N - 1 of V) and writes a shard file;
 * `ptsim sweep FLAGS --merge part-*.csv [--csv all.csv]` enumerates the
 * same sweep again (cheap: no evaluation), takes every layout's result from
 * the shards and goes on exactly as the one run would: the same ranking,
 * table, top K, CSV and figures, byte for byte (the table names the shards
 * instead of the device).  No scheduler of ours: a Slurm job array or
 * mpirun starts the shards, anything copies the files together.
 *
 * The shard file opens with what made it, as `# ` lines after the mark
 * `# ptsim sweep shard`: ptsim's version and the size of a result, every
 * sweep flag that changes a result (`setting --NAME VALUE`, sorted, the
 * last one given of each: the order they came in does not matter; not the
 * run's own flags: --shard, --csv, --threads, --device, --top, ...) and
 * the SHA-256 of every file the sweep read whole (`input NAME sha256:HEX`:
 * models, profiles).  `--merge` refuses a shard whose lines are not the
 * merging sweep's own, naming the file, its line and the first that
 * differs: a shard of other flags, of an edited profile or of another
 * ptsim never merges into wrong numbers.
 *
 * Then a CSV: `layout_index,result,` then the sweep CSV's columns (rank 0).  `result` is the
 * layout's PtsimBatchResult, byte for byte, in base64 — every field exact, whatever fields a result
 * has — so the merge ranks on the very numbers the one run ranks on; the readable columns after it
 * let the merge check, row by row, that the shard came from the same sweep (same flags, same ptsim
 * build).
 *
 * Shell module (GLib), shared by the command (sim/cli/sweep_cmd.c) and the
 * C API (sim/api/api_sweep.c: ptsim_api_sweep_shard, ptsim_api_sweep_merge),
 * so that a shard made by either merges in the other.  Not here:
 * enumeration and slicing (sweep.h: spec->first, last), the sweep's CSV
 * (sweep_rows.h). */
#ifndef PTSIM_SWEEP_SHARD_H
#define PTSIM_SWEEP_SHARD_H

#include <glib.h>
#include "batch.h"
#include "job.h"

/* Parses "K/N" (1 <= K <= N); PTSIM_CONFIG_ERROR naming --shard otherwise. */
gboolean ptsim_shard_parse(const char *text, guint *k, guint *n, GError **error);

/* The valid-layout indices [*first, *last) of shard k of n over `valid`. */
void ptsim_shard_slice(guint k, guint n, guint64 valid, guint64 *first, guint64 *last);

/* What made this run's sweep, one line each (without "# "): the version,
 * the settings among FLAGS (the sweep's command line as given, without
 * the command's name; NULL: none) and the digests of the files read so
 * far (input.h; call it once the sweep has loaded its models and
 * profiles).  (transfer full: g_strfreev) */
char **ptsim_shard_made_by(const char *const *flags);

/* The same with the digest lines INPUTS ("NAME sha256:HEX", sorted) instead
 * of every file the process read: a library call's own inputs
 * (ptsim_input_capture_end). */
char **ptsim_shard_made_by_inputs(const char *const *flags, const char *const *inputs);

/* The shard file's header (the mark, MADE_BY's lines, the columns), and
 * the row of valid layout `index`. */
void ptsim_shard_header(GString *out, const char *const *made_by);
void ptsim_shard_row(GString *out, guint64 index, const PtsimJob *job, const PtsimBatchResult *r);

typedef struct PtsimShardReader PtsimShardReader;

/* Opens the shard files (any order: they are put in slice order).  Fails
 * (PTSIM_CONFIG_ERROR, or G_FILE_ERROR for an unreadable file) naming the
 * file when one is not a shard file.  (transfer full) */
PtsimShardReader *ptsim_shard_reader_open(char **paths, guint n, GError **error);

/* Fails naming FILE:LINE and the first line that differs when a shard was
 * not made by the sweep MADE_BY (ptsim_shard_made_by of the merge). */
gboolean ptsim_shard_reader_check(const PtsimShardReader *reader, const char *const *made_by,
                                  GError **error);

/* The result of valid layout `index`, which must be the next one in
 * enumeration order, into *out; its row must describe `job` with that
 * result.  Fails naming FILE:LINE when the layout is missing (the shards
 * around the gap), given twice, not this sweep's, or a result that is not
 * finite. */
gboolean ptsim_shard_reader_next(PtsimShardReader *reader, guint64 index, const PtsimJob *job,
                                 PtsimBatchResult *out, GError **error);

/* Fails when rows are left over (shards of another, larger sweep). */
gboolean ptsim_shard_reader_finish(PtsimShardReader *reader, GError **error);

void ptsim_shard_reader_free(PtsimShardReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimShardReader, ptsim_shard_reader_free)

#endif /* PTSIM_SWEEP_SHARD_H */

/* megatron_log.h — a reader of Megatron-LM training logs (stdout of
 * pretrain_gpt.py): what one real run measured, for ptsim validate.
 *
 * Shell module (GLib).  One pass over the log, line by line; every line is
 * looked at for four things and otherwise ignored (unknown lines and blocks,
 * e.g. timers, "[per-layer report]" tables, tracebacks, are skipped):
 *
 *   arguments block  "------------------------ arguments ------------------------"
 *                    then "  name .......... value" lines until
 *                    "-------------------- end of arguments ---------------------";
 *                    the names that decide memory and time are turned back
 *                    into Megatron-LM flags and read by megatron_args.c, and
 *                    world_size gives layout.gpus.
 *   iteration line   " iteration N/ M | ... | elapsed time per iteration (ms): X |
 *                    ... | throughput per GPU (TFLOP/s/GPU): Y | ... |
 *                    global batch size: G | ..." (any prefix before "iteration":
 *                    timestamps "[YYYY-MM-DD HH:MM:SS]" or "[... .ffffff]",
 *                    blanks, launcher rank labels).  Megatron-LM ends every
 *                    field with " |", so a field without its closing '|' is
 *                    taken as cut off and not read (a truncated line keeps
 *                    the fields before the cut).
 *   memory line      "[Rank N] (after N iterations) memory (MB) | allocated: A |
 *                    max allocated: B | reserved: C | max reserved: D", with
 *                    or without the rank and the "(after ...)", and the 2020
 *                    form "after 5 iterations memory (MB) | ...".
 *   out of memory    "CUDA out of memory", "torch.OutOfMemoryError",
 *                    "torch.cuda.OutOfMemoryError"; the request size comes
 *                    from "Tried to allocate 2.00 GiB" (bytes, KiB, MiB, GiB,
 *                    TiB as PyTorch prints them; KB/MB/GB read as binary too).
 *
 * Robustness: the log is bytes, not text.  NUL bytes are read as '?',
 * invalid UTF-8 and binary garbage are unknown lines, lines longer than
 * PTSIM_MEGATRON_LOG_MAX_LINE are skipped (and counted), and the work per
 * line is linear in its length.  "[...truncated by store]" (how the
 * fixtures' source marks cut lines) is a cut.  Nothing in the content of a
 * log is a GError: a value that cannot be read is a warning naming
 * file:line; an arguments block that cannot be turned into a model is
 * kept as args_error.  Only an unreadable file is an error.
 *
 * Warm-up (ptsim_megatron_log_summarize): the first logged iteration is
 * always dropped, and so is any iteration numbered below 3; the step time
 * is the median "elapsed time per iteration" of the rest.  Real logs show
 * the first iteration several times slower (2020 excerpt: 16.5 s, then
 * 2.0 s).  Skipped (fp16 loss-scale search) and NaN iterations are kept:
 * their time is real.  Each logged line is already Megatron-LM's average
 * over its --log-interval.
 *
 * Not here: comparing against predictions (validate/), CSV of runs
 * (run_csv.h). */
#ifndef PTSIM_MEGATRON_LOG_H
#define PTSIM_MEGATRON_LOG_H

#include <glib.h>
#include "job.h"
#include "megatron_args.h"

#define PTSIM_MEGATRON_LOG_ERROR (ptsim_megatron_log_error_quark())
GQuark ptsim_megatron_log_error_quark(void);

typedef enum {
  PTSIM_MEGATRON_LOG_ERROR_NOT_FOUND, /* the file cannot be read */
  PTSIM_MEGATRON_LOG_ERROR_ARGS,      /* arguments block -> model failed */
  PTSIM_MEGATRON_LOG_ERROR_VALUE      /* a measured value no run can have */
} PtsimMegatronLogError;

/* Lines longer than this (bytes) are skipped: no Megatron-LM line comes
 * near it, and skipping bounds the work a garbage line can cause. */
#define PTSIM_MEGATRON_LOG_MAX_LINE (1 << 20)

/* One "iteration N/ M | ..." line. */
typedef struct {
  int64_t iteration;        /* N */
  int64_t train_iters;      /* M */
  double elapsed_ms;        /* elapsed time per iteration (ms); NAN: absent */
  double tflops_per_gpu;    /* throughput per GPU (TFLOP/s/GPU); NAN: absent */
  int64_t gbs;              /* global batch size; -1: absent */
  int64_t consumed_samples; /* -1: absent */
  int64_t skipped;          /* number of skipped iterations; -1: absent */
  int64_t nan_iterations;   /* number of nan iterations; -1: absent */
  double timestamp_s;       /* "[YYYY-MM-DD HH:MM:SS(.ffffff)]" before
                               "iteration", as seconds since 1970-01-01
                               (read as UTC: logs do not name the zone);
                               NAN: no timestamp */
  int64_t line;             /* 1-based line in the log */
} PtsimLogIteration;

/* One "memory (MB) | ..." line.  Values in MB as Megatron-LM prints them
 * (bytes / 2^20). */
typedef struct {
  int64_t rank;             /* N of "[Rank N]"; -1: not printed (rank 0) */
  int64_t after_iterations; /* N of "after N iterations"; -1: not printed */
  double allocated_mb;      /* NAN: absent */
  double max_allocated_mb;  /* NAN: absent */
  double reserved_mb;       /* NAN: absent */
  double max_reserved_mb;   /* NAN: absent */
  int64_t line;
} PtsimLogMemory;

typedef struct {
  char *path;         /* name used in messages (transfer full) */
  int64_t lines;      /* lines in the log */
  int64_t long_lines; /* lines skipped for exceeding MAX_LINE */
  GArray *iterations; /* PtsimLogIteration, in log order */
  GArray *memory;     /* PtsimLogMemory, in log order */

  gboolean oom;             /* an out-of-memory error was logged */
  int64_t oom_count;        /* lines naming one */
  int64_t oom_line;         /* line of the first; 0: none */
  double oom_request_bytes; /* "Tried to allocate" of the first that says; NAN */

  gboolean args_found;                 /* an arguments block was seen */
  int64_t args_line;                   /* line of its header */
  gboolean args_complete;              /* its "end of arguments" line was seen */
  GHashTable *args;                    /* name -> value as printed (utf8 -> utf8) */
  GHashTable *arg_lines;               /* name -> its line (GINT_TO_POINTER) */
  gboolean args_ok;                    /* the job below was reconstructed */
  GError *args_error;                  /* why not (PTSIM_MEGATRON_LOG_ERROR_ARGS,
                                          "file:line: ...", the line of the value at
                                          fault, else of the header), or NULL */
  PtsimJob job;                        /* valid when args_ok: the model, layout, settings and
                                          source (not validated: give it a hardware profile and
                                          run ptsim_job_validate); hw zero; layout.gpus =
                                          world_size, else data_parallel_size x tp x pp x cp
                                          (0: none) */
  char *args_command;                  /* the block as a Megatron-LM command line (for
                                          megatron_args.c; WORLD_SIZE=N first when the
                                          block gives it), or NULL */
  PtsimMegatronDiagnostics *args_diag; /* megatron_args.c's diagnostics */

  GPtrArray *warnings; /* "file:line: ..." for values not read (utf8) */
  /* The first measured value (iteration time, TFLOP/s, memory) that is a
   * number but not a finite one in its range ("inf", "nan", -5, 1e300):
   * PTSIM_MEGATRON_LOG_ERROR_VALUE, "file:line: ...", or NULL.  The value
   * is left absent; ptsim_megatron_log_read_file fails with it. */
  GError *value_error;
} PtsimMegatronLog;

void ptsim_megatron_log_free(PtsimMegatronLog *log);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimMegatronLog, ptsim_megatron_log_free)

/* Parses LEN bytes of DATA (need not be NUL-terminated; may hold NULs).
 * NAME is the file name used in warnings and args_error.  Never fails:
 * an empty or garbage log gives an empty result.  (transfer full) */
PtsimMegatronLog *ptsim_megatron_log_parse(const char *data, gsize len, const char *name);

/* Reads and parses PATH.  Error: PTSIM_MEGATRON_LOG_ERROR_NOT_FOUND naming
 * the path when it cannot be read, the log's value_error (VALUE, naming
 * FILE:LINE) when a measured value is out of range; NULL then.
 * (transfer full) */
PtsimMegatronLog *ptsim_megatron_log_read_file(const char *path, GError **error);

/* Value of argument NAME as printed in the arguments block, or NULL.
 * (transfer none) */
const char *ptsim_megatron_log_arg(const PtsimMegatronLog *log, const char *name);

/* What the log measured, warm-up excluded (see the header comment). */
typedef struct {
  int64_t iterations_logged; /* iteration lines */
  int64_t iterations_used;   /* of them, kept for the medians */
  int64_t first_used;        /* iteration number of the first kept; -1 */
  double step_time_ms;       /* median elapsed of the kept; NAN: none */
  double step_time_s;        /* the same in seconds */
  double tflops_per_gpu;     /* median TFLOP/s/GPU of the kept that print
                                it; NAN: none */
  int64_t gbs;               /* global batch size of the last line that
                                prints it; -1: none */
  double max_allocated_mb;   /* largest over all memory lines; NAN: none */
  double max_reserved_mb;    /* largest over all memory lines; NAN: none */
  gboolean oom;              /* as in the log */
} PtsimMegatronLogSummary;

void ptsim_megatron_log_summarize(const PtsimMegatronLog *log, PtsimMegatronLogSummary *out);

#endif /* PTSIM_MEGATRON_LOG_H */

/* fuzz_common.h — what every fuzz target shares: the libFuzzer entry points
 * (also driven by replay_main.c in the normal build, so every crash file
 * kept in tests/data/fuzz_regressions/ is a plain ctest test), the data
 * folder for model and profile names, and a scratch folder for parsers
 * that read a path.
 *
 * A target parses whatever bytes it is given and must never crash, hang,
 * leak or hit undefined behaviour; a refusal (a GError) is a fine result. */
#ifndef PTSIM_FUZZ_COMMON_H
#define PTSIM_FUZZ_COMMON_H

#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs past this are skipped: parsers are linear, and long inputs only
 * slow the search down. */
#define FUZZ_MAX_INPUT (64 * 1024)

/* A parser is linear: an input of FUZZ_MAX_INPUT bytes is read in
 * milliseconds, sanitizers included.  Past this many seconds on one input
 * a target fails (libFuzzer's -timeout is a backstop for a hang; this
 * catches the superlinear). */
#define FUZZ_SECONDS_PER_INPUT 2.0

/* When the current input started (fuzz_time_start), for fuzz_time_check. */
static gint64 fuzz_start_us = 0;
static inline void fuzz_time_start(void) { fuzz_start_us = g_get_monotonic_time(); }
static inline void fuzz_time_check(const char *what) {
  double s = (double)(g_get_monotonic_time() - fuzz_start_us) * 1e-6;
  if (s > FUZZ_SECONDS_PER_INPUT) g_error("%s took %.1f s on one input", what, s);
}

/* A measured value a reader accepted: absent (NAN) or finite in [lo, hi]. */
static inline void fuzz_check_measured(const char *what, double v, double lo, double hi) {
  if (v != v) return;
  if (!(v >= lo && v <= hi)) g_error("%s %g accepted: outside [%g, %g]", what, v, lo, hi);
}

static char *fuzz_dir_path = NULL;

/* Removes the scratch folder and what the targets left in it (one level). */
static inline void fuzz_dir_remove(void) {
  if (!fuzz_dir_path) return;
  g_autoptr(GDir) dir = g_dir_open(fuzz_dir_path, 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name(dir))) {
    g_autofree char *path = g_build_filename(fuzz_dir_path, name, NULL);
    g_remove(path);
  }
  g_rmdir(fuzz_dir_path);
  g_clear_pointer(&fuzz_dir_path, g_free);
}

/* A folder of this process for files the target writes, removed at exit
 * (transfer none). */
static inline const char *fuzz_dir(void) {
  if (!fuzz_dir_path) {
    fuzz_dir_path = g_dir_make_tmp("ptsim-fuzz-XXXXXX", NULL);
    g_assert(fuzz_dir_path != NULL);
    atexit(fuzz_dir_remove);
  }
  return fuzz_dir_path;
}

/* Writes DATA to NAME in fuzz_dir() and returns its path (transfer full). */
static inline char *fuzz_write_file(const char *name, const uint8_t *data, size_t size) {
  char *path = g_build_filename(fuzz_dir(), name, NULL);
  FILE *f = fopen(path, "wb");
  g_assert(f != NULL);
  if (size > 0) g_assert(fwrite(data, 1, size, f) == size);
  g_assert(fclose(f) == 0);
  return path;
}

/* Models and profiles by name come from the source tree; gnuplot is never
 * run (the figure code writes its .tsv and .gp and stops at the missing
 * program); GLib's warnings about refused input are not crashes. */
static inline void fuzz_setup(void) {
  if (!g_getenv("PTSIM_DATA_DIR")) g_setenv("PTSIM_DATA_DIR", PTSIM_SOURCE_DIR, TRUE);
  g_setenv("PATH", "/nonexistent-ptsim-fuzz", TRUE);
  g_log_set_always_fatal(G_LOG_FATAL_MASK | G_LOG_LEVEL_CRITICAL);
}

/* libFuzzer's (and replay_main's) set-up: fuzz_setup, then the target's
 * own when it defines FUZZ_TARGET_INIT (a statement) before including.
 * replay_main.c, which calls it, defines FUZZ_REPLAY_MAIN. */
#ifndef FUZZ_REPLAY_MAIN
#ifndef FUZZ_TARGET_INIT
#define FUZZ_TARGET_INIT
#endif
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_setup();
  FUZZ_TARGET_INIT;
  return 0;
}
#endif

#endif /* PTSIM_FUZZ_COMMON_H */

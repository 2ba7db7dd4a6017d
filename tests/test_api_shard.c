/* test_api_shard.c — a sweep split into shards and merged through the
 * public C API (ptsim_api_sweep_shard, ptsim_api_sweep_merge), as a program
 * outside the project uses it (include/ptsim.h alone, libptsim alone).
 *
 * The checks are the mechanism's: the slices of K/N cover the valid layouts
 * once (shard 1/1 holds them all; 1/2 and 2/2 hold floor and ceil of half
 * of them, ptsim_shard_slice: V/2 and V - V/2); the merged rows are the
 * one run's (ptsim_api_sweep's rows, cell for cell, in order); a shard's
 * header names the inputs of its own sweep only, not a model the process
 * loaded before; a shard of other flags is refused as bad input naming the
 * file.  (The byte-for-byte parity with the command's files is
 * python/tests/test_shard.py's.)
 *
 * Output: TAP-like lines; exit 1 when a check fails. */
#include <ptsim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;

static void check(int ok, const char *what) {
  checks++;
  if (!ok) failures++;
  printf("%s %d - %s\n", ok ? "ok" : "not ok", checks, what);
}

/* Every row as one line of its cells joined by commas. */
typedef struct {
  char *text;
  size_t len, cap, rows;
} Lines;

static int collect(void *user_data, size_t n, const char *const *names, const char *const *values) {
  Lines *l = user_data;
  (void)names;
  for (size_t i = 0; i < n; i++) {
    size_t add = strlen(values[i]) + 1;
    if (l->len + add + 1 > l->cap) {
      l->cap = (l->len + add + 1) * 2;
      l->text = realloc(l->text, l->cap);
    }
    memcpy(l->text + l->len, values[i], add - 1);
    l->len += add;
    l->text[l->len - 1] = i + 1 < n ? ',' : '\n';
    l->text[l->len] = '\0';
  }
  l->rows++;
  return 0;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = calloc((size_t)n + 1, 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) buf[0] = '\0';
  fclose(f);
  return buf;
}

int main(void) {
  const char *flags[] = {"--model", "llama3-8b", "--gpus", "8", "--gbs",
                         "64",      "--threads", "2",      NULL};
  char dir[] = "/tmp/ptsim-api-shard-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char p1[256], p2[256], all[256], csv[256], bad[256];
  snprintf(p1, sizeof p1, "%s/part-1.csv", dir);
  snprintf(p2, sizeof p2, "%s/part-2.csv", dir);
  snprintf(all, sizeof all, "%s/all.csv", dir);
  snprintf(csv, sizeof csv, "%s/merged.csv", dir);
  snprintf(bad, sizeof bad, "%s/other.csv", dir);

  /* a model read before by this process is no input of the shards */
  PtsimApiModel *other = ptsim_api_model_load("llama3-70b", NULL);
  check(other != NULL, "llama3-70b loaded before the sweep");
  ptsim_api_model_free(other);

  PtsimApiError *error = NULL;
  long long whole = ptsim_api_sweep_shard(flags, 1, 1, all, &error);
  long long first = ptsim_api_sweep_shard(flags, 1, 2, p1, &error);
  long long second = ptsim_api_sweep_shard(flags, 2, 2, p2, &error);
  check(whole > 0 && first == whole / 2 && second == whole - whole / 2,
        "shards 1/2 and 2/2 hold V/2 and V - V/2 of the V layouts of shard 1/1");
  char *header = slurp(p1);
  check(header && strncmp(header, "# ptsim sweep shard\n", 20) == 0,
        "a shard file opens with its mark");
  check(header && strstr(header, "# setting --model llama3-8b\n") &&
            strstr(header, "# input llama3-8b.ini sha256:") && !strstr(header, "llama3-70b") &&
            !strstr(header, "--threads"),
        "its header names its sweep's settings and inputs, not the run's threads or "
        "another model the process read");
  free(header);

  Lines one = {0}, merged = {0};
  int rc = ptsim_api_sweep(flags, collect, &one, &error);
  const char *parts[] = {p2, p1, NULL}; /* any order */
  int mrc = ptsim_api_sweep_merge(flags, parts, csv, collect, &merged, &error);
  check(rc == 0 && mrc == 0 && one.rows > 0 && merged.len == one.len &&
            memcmp(merged.text, one.text, one.len) == 0,
        "the merge's rows are the one run's, cell for cell, in order");
  char *text = slurp(csv);
  const char *body = text ? strchr(text, '\n') : NULL;
  check(body && strcmp(body + 1, one.text) == 0,
        "the merged CSV is its header and those rows (no quoting in this sweep)");
  free(text);

  /* a shard of other flags */
  const char *others[] = {"--model", "llama3-8b", "--gpus", "8", "--gbs", "128", NULL};
  check(ptsim_api_sweep_shard(others, 1, 1, bad, &error) > 0, "a shard of another gbs");
  const char *mixed[] = {p1, bad, NULL};
  Lines none = {0};
  mrc = ptsim_api_sweep_merge(flags, mixed, NULL, collect, &none, &error);
  check(mrc == -1 && error && ptsim_api_error_code(error) == PTSIM_API_ERROR_INPUT &&
            ptsim_api_error_exit_status(error) == 2 &&
            strstr(ptsim_api_error_message(error), "other.csv") &&
            strstr(ptsim_api_error_message(error), "--gbs 128"),
        "merging it is bad input naming the file and its setting");
  ptsim_api_error_free(error);
  error = NULL;
  check(ptsim_api_sweep_shard(flags, 3, 2, bad, &error) == -1 && error &&
            strstr(ptsim_api_error_message(error), "--shard '3/2'"),
        "shard 3/2 is refused as --shard is");
  ptsim_api_error_free(error);

  free(one.text);
  free(merged.text);
  free(none.text);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  printf("1..%d\n", checks);
  return failures ? 1 : 0;
}

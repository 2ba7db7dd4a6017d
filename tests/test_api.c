/* test_api.c — the public C API (include/ptsim.h) as a program outside the
 * project uses it: this file includes <ptsim.h> and standard headers only,
 * with include/ as its only project include path, and links libptsim alone
 * (CMakeLists.txt).  Checked against the command itself: the ptsim binary
 * ($PTSIM_BIN, set by ctest) run on the same flags must print the same
 * bytes, say the same error and exit with the code the error says.
 *
 * Output: TAP-like lines; exit 1 when a check fails. */
#include <math.h>
#include <ptsim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if !defined(__STDC_NO_THREADS__)
#include <threads.h>
#endif

static int failures, checks;

static void check(int ok, const char *what) {
  checks++;
  if (!ok) failures++;
  printf("%s %d - %s\n", ok ? "ok" : "not ok", checks, what);
}

/* ---- running the command ---- */

/* WORD in single quotes for sh. */
static void append_quoted(char *cmd, size_t size, const char *word) {
  size_t len = strlen(cmd);
  if (len + 2 < size) cmd[len++] = '\'';
  for (const char *c = word; *c && len + 5 < size; c++) {
    if (*c == '\'') {
      memcpy(cmd + len, "'\\''", 4);
      len += 4;
    } else {
      cmd[len++] = *c;
    }
  }
  if (len + 2 < size) cmd[len++] = '\'';
  cmd[len++] = ' ';
  cmd[len] = '\0';
}

/* What `ptsim COMMAND FLAGS... [FORMAT]` prints on stdout (malloc'ed, in
 * *out) and the first line of its stderr (in err, may be NULL); returns
 * its exit status, -1 when it cannot run. */
static int run_ptsim(const char *command, const char *const *flags, const char *format, char **out,
                     char *err, size_t err_size) {
  const char *bin = getenv("PTSIM_BIN");
  if (!bin) return -1;
  char cmd[8192] = "";
  append_quoted(cmd, sizeof cmd, bin);
  append_quoted(cmd, sizeof cmd, command);
  for (const char *const *f = flags; *f; f++) append_quoted(cmd, sizeof cmd, *f);
  if (format) {
    append_quoted(cmd, sizeof cmd, "--format");
    append_quoted(cmd, sizeof cmd, format);
  }
  char err_path[] = "/tmp/test_api_err_XXXXXX";
  int fd = mkstemp(err_path);
  if (fd < 0) return -1;
  strncat(cmd, " 2>", sizeof cmd - strlen(cmd) - 1);
  strncat(cmd, err_path, sizeof cmd - strlen(cmd) - 1);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
    len += n;
    if (cap - len < 4096) buf = realloc(buf, cap *= 2);
  }
  buf[len] = '\0';
  int status = pclose(p);
  *out = buf;
  if (err) {
    err[0] = '\0';
    FILE *e = fopen(err_path, "r");
    if (e && fgets(err, (int)err_size, e)) err[strcspn(err, "\n")] = '\0';
    if (e) fclose(e);
  }
  remove(err_path);
  return status >= 0 && (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1;
}

/* The number after "KEY": in JSON (the first occurrence). */
static double json_number(const char *json, const char *key) {
  char quoted[128];
  snprintf(quoted, sizeof quoted, "\"%s\": ", key);
  const char *at = strstr(json, quoted);
  return at ? strtod(at + strlen(quoted), NULL) : NAN;
}

/* ---- the checks ---- */

static void test_version(void) {
  check(ptsim_api_version() == PTSIM_VERSION_NUMBER, "runtime version == the header's number");
  check(strcmp(ptsim_api_version_string(), PTSIM_VERSION_STRING) == 0,
        "runtime version string == PTSIM_VERSION_STRING");
  check(ptsim_api_version() / 10000 == PTSIM_VERSION_MAJOR &&
            ptsim_api_version() / 100 % 100 == PTSIM_VERSION_MINOR &&
            ptsim_api_version() % 100 == PTSIM_VERSION_PATCH,
        "the number is MAJOR.MINOR.PATCH");
  char expected[64];
  snprintf(expected, sizeof expected, "%d.%d.%d", PTSIM_VERSION_MAJOR, PTSIM_VERSION_MINOR,
           PTSIM_VERSION_PATCH);
  check(strcmp(PTSIM_VERSION_STRING, expected) == 0, "PTSIM_VERSION_STRING spells the macros");
  char *out = NULL;
  static const char *const none[] = {NULL};
  if (run_ptsim("--version", none, NULL, &out, NULL, 0) == 0) {
    char line[64];
    snprintf(line, sizeof line, "ptsim %s\n", PTSIM_VERSION_STRING);
    check(strncmp(out, line, strlen(line)) == 0, "ptsim --version says the library's version");
  }
  free(out);
}

/* A job from FLAGS predicts (memory: estimates) what `ptsim COMMAND FLAGS
 * --format json` prints, byte for byte. */
static void same_as_command(const char *what, const char *command, const char *const *flags) {
  PtsimApiError *error = NULL;
  PtsimApiJob *job = ptsim_api_job_new(flags, NULL, NULL, &error);
  char name[256];
  snprintf(name, sizeof name, "%s: job built", what);
  check(job != NULL && error == NULL, name);
  if (!job) {
    printf("# %s\n", ptsim_api_error_message(error));
    ptsim_api_error_free(error);
    return;
  }
  int time = strcmp(command, "predict") == 0;
  PtsimApiResult *r = time ? ptsim_api_predict(job, NULL, &error)
                           : ptsim_api_memory(job, NULL, &error);
  snprintf(name, sizeof name, "%s: %s", what, command);
  check(r != NULL, name);
  char *out = NULL;
  int rc = run_ptsim(command, flags, "json", &out, NULL, 0);
  if (r && rc == 0) {
    size_t len;
    const char *json = ptsim_api_result_json(r, &len);
    snprintf(name, sizeof name, "%s: JSON byte-identical to ptsim %s --format json", what, command);
    check(len == strlen(out) && memcmp(json, out, len) == 0, name);
    if (time) {
      snprintf(name, sizeof name, "%s: step time == the command's", what);
      check(ptsim_api_result_step_s(r) == json_number(out, "step_s"), name);
      snprintf(name, sizeof name, "%s: tokens/s, MFU == the command's", what);
      check(ptsim_api_result_tokens_per_s(r) == json_number(out, "tokens_per_s") &&
                ptsim_api_result_mfu(r) == json_number(out, "mfu"),
            name);
      check(ptsim_api_result_runs(r) == 0 || ptsim_api_result_runs(r) == 1,
            "the emulation's verdict is given");
      check(ptsim_api_result_device_peak_bytes(r) == json_number(out, "device_peak_bytes"),
            "device peak == memory.allocator.device_peak_bytes");
    } else {
      snprintf(name, sizeof name, "%s: no time, no emulation in a memory result", what);
      check(isnan(ptsim_api_result_step_s(r)) && ptsim_api_result_runs(r) == -1, name);
    }
    snprintf(name, sizeof name, "%s: memory bytes == memory.total_bytes", what);
    check(ptsim_api_result_memory_bytes(r) == json_number(out, "total_bytes") &&
              ptsim_api_result_capacity_bytes(r) == json_number(out, "capacity_bytes"),
          name);
  } else if (rc < 0) {
    printf("# SKIP no PTSIM_BIN: not compared with the command\n");
  }
  free(out);
  ptsim_api_result_free(r);
  ptsim_api_job_free(job);
}

static void test_flags(void) {
  static const char *const flags[] = {"--model", "llama3-70b", "--gpus", "64",   "--tp",
                                      "8",       "--pp",       "4",      "--vp", "5",
                                      "--gbs",   "64",         "--seq",  "4096", NULL};
  same_as_command("llama3-70b tp8 pp4 vp5", "predict", flags);
  same_as_command("llama3-70b tp8 pp4 vp5", "memory", flags);
  static const char *const none[] = {NULL};
  same_as_command("the default job", "predict", none);
  static const char *const moe[] = {"--model", "mixtral-8x7b", "--gpus", "16",    "--pp",
                                    "2",       "--ep",         "8",      "--gbs", "64",
                                    "--seq",   "4096",         NULL};
  same_as_command("mixtral ep8", "predict", moe);
}

static void test_megatron(void) {
  static const char *const flags[] = {
      "--gpus", "16", "--megatron-args",
      "--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 "
      "--group-query-attention --num-query-groups 8 --seq-length 4096 "
      "--max-position-embeddings 8192 --micro-batch-size 2 --global-batch-size 64 "
      "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --sequence-parallel "
      "--use-distributed-optimizer --recompute-activations --swiglu "
      "--untie-embeddings-and-output-weights --padded-vocab-size 128256 --normalization RMSNorm "
      "--disable-bias-linear --bf16 --use-flash-attn --attention-dropout 0 --hidden-dropout 0 "
      "--position-embedding-type rope --empty-unused-memory-level 1",
      NULL};
  same_as_command("a Megatron-LM command line", "predict", flags);
  PtsimApiJob *job = ptsim_api_job_new(flags, NULL, NULL, NULL);
  size_t n = ptsim_api_job_diagnostic_count(job);
  PtsimApiDiagnosticKind kind = 0;
  const char *line = n > 0 ? ptsim_api_job_diagnostic(job, 0, &kind) : NULL;
  check(line && kind == PTSIM_API_DIAGNOSTIC_MEGATRON &&
            strstr(line, "warning: not modelled, so the prediction may be off: "
                         "--empty-unused-memory-level") == line,
        "the unmodelled flag is a diagnostic line");
  check(ptsim_api_job_diagnostic(job, n, NULL) == NULL, "no line past the count");
  char *out = NULL, err[4096];
  if (line && run_ptsim("predict", flags, "json", &out, err, sizeof err) == 0) {
    char expected[4096];
    snprintf(expected, sizeof expected, "ptsim predict: %s", line);
    check(strcmp(err, expected) == 0, "the command prints that line after 'ptsim predict: '");
  }
  free(out);
  ptsim_api_job_free(job);
}

/* FLAGS are bad input: no job, the INPUT code, and the command's message
 * (its stderr line after "ptsim predict: ") and exit code. */
static void bad_input(const char *what, const char *const *flags) {
  PtsimApiError *error = NULL;
  PtsimApiJob *job = ptsim_api_job_new(flags, NULL, NULL, &error);
  char name[256];
  snprintf(name, sizeof name, "%s: no job, an input error", what);
  check(job == NULL && error != NULL && ptsim_api_error_code(error) == PTSIM_API_ERROR_INPUT &&
            ptsim_api_error_exit_status(error) == 2,
        name);
  char *out = NULL, err[4096];
  int rc = run_ptsim("predict", flags, "json", &out, err, sizeof err);
  if (error && rc >= 0) {
    char expected[4096];
    snprintf(expected, sizeof expected, "ptsim predict: %s", ptsim_api_error_message(error));
    snprintf(name, sizeof name, "%s: the command's message and exit code", what);
    check(strcmp(err, expected) == 0 && rc == ptsim_api_error_exit_status(error), name);
    if (strcmp(err, expected) != 0) printf("# api: %s\n# cli: %s\n", expected, err);
  }
  free(out);
  ptsim_api_job_free(job);
  ptsim_api_error_free(error);
}

static void test_bad_input(void) {
  static const char *const tp_text[] = {"--tp", "x", NULL};
  static const char *const tp_3[] = {"--tp", "3", NULL};
  static const char *const model[] = {"--model", "no-such-model", NULL};
  static const char *const flag[] = {"--no-such-flag", NULL};
  static const char *const stray[] = {"extra", NULL};
  static const char *const both[] = {"--sp", "--no-sp", NULL};
  bad_input("--tp x", tp_text);
  bad_input("--tp 3 (does not divide the heads)", tp_3);
  bad_input("an unknown model", model);
  bad_input("an unknown flag", flag);
  /* the command adds " (see --help)" to this one */
  PtsimApiError *error = NULL;
  check(ptsim_api_job_new(stray, NULL, NULL, &error) == NULL && error &&
            ptsim_api_error_code(error) == PTSIM_API_ERROR_INPUT &&
            strcmp(ptsim_api_error_message(error), "unexpected argument 'extra'") == 0,
        "a word that is no flag: INPUT, named");
  ptsim_api_error_free(error);
  bad_input("--sp --no-sp", both);

  error = NULL;
  check(ptsim_api_model_load("no-such-model", &error) == NULL && error &&
            ptsim_api_error_code(error) == PTSIM_API_ERROR_INPUT &&
            strstr(ptsim_api_error_message(error), "unknown model 'no-such-model'"),
        "an unknown model name: INPUT, named");
  ptsim_api_error_free(error);
  error = NULL;
  check(ptsim_api_hardware_load(NULL, &error) == NULL && error &&
            strstr(ptsim_api_error_message(error), "no hardware profile given"),
        "no profile name: an error, not a crash");
  ptsim_api_error_free(error);
  check(ptsim_api_model_load("no-such-model", NULL) == NULL, "a NULL error pointer: just NULL");

  static const char *const ok[] = {"--tp", "2", NULL};
  PtsimApiJob *job = ptsim_api_job_new(ok, NULL, NULL, NULL);
  static const char *const bad_ce[] = {"--ce", "nowhere", NULL};
  static const char *const trace_steps[] = {"--trace-steps", "2", NULL};
  static const char *const for_predict[] = {"--no-allocator", NULL};
  error = NULL;
  check(ptsim_api_predict(job, bad_ce, &error) == NULL && error &&
            strcmp(ptsim_api_error_message(error),
                   "--ce 'nowhere': allowed values are last-stage|every-stage") == 0,
        "a bad predict option: the command's message");
  ptsim_api_error_free(error);
  error = NULL;
  check(ptsim_api_predict(job, trace_steps, &error) == NULL && error &&
            strcmp(ptsim_api_error_message(error), "--trace-steps needs --trace FILE.json") == 0,
        "--trace-steps without --trace");
  ptsim_api_error_free(error);
  error = NULL;
  check(ptsim_api_memory(job, for_predict, &error) == NULL && error &&
            ptsim_api_error_code(error) == PTSIM_API_ERROR_INPUT,
        "memory refuses predict's options");
  ptsim_api_error_free(error);
  error = NULL;
  check(ptsim_api_predict(NULL, NULL, &error) == NULL && error, "no job: an error");
  ptsim_api_error_free(error);
  PtsimApiResult *r = ptsim_api_predict(job, for_predict, NULL);
  check(r && ptsim_api_result_runs(r) == -1 && isnan(ptsim_api_result_device_peak_bytes(r)) &&
            ptsim_api_result_step_s(r) > 0 && ptsim_api_result_fits(r) >= 0,
        "--no-allocator: a step time, no emulation");
  ptsim_api_result_free(r);
  ptsim_api_job_free(job);
}

static void test_loaded(void) {
  PtsimApiModel *model = ptsim_api_model_load("llama3-70b", NULL);
  PtsimApiHardware *hw = ptsim_api_hardware_load("a100-80g", NULL);
  check(model && strcmp(ptsim_api_model_name(model), "llama3-70b") == 0, "a model by name");
  check(hw && strcmp(ptsim_api_hardware_name(hw), "a100-80g") == 0, "a profile by name");
  static const char *const layout[] = {"--gpus", "64", "--tp", "8", "--pp", "2", NULL};
  static const char *const named[] = {"--model", "llama3-70b", "--hw", "a100-80g", "--gpus", "64",
                                      "--tp",    "8",          "--pp", "2",        NULL};
  PtsimApiJob *a = ptsim_api_job_new(layout, model, hw, NULL);
  ptsim_api_model_free(model); /* copied into the job */
  PtsimApiJob *b = ptsim_api_job_new(named, NULL, NULL, NULL);
  PtsimApiResult *ra = ptsim_api_predict(a, NULL, NULL), *rb = ptsim_api_predict(b, NULL, NULL);
  check(ra && rb && strcmp(ptsim_api_result_json(ra, NULL), ptsim_api_result_json(rb, NULL)) == 0,
        "loaded model and profile == --model and --hw");
  PtsimApiError *error = NULL;
  check(ptsim_api_job_new(named, NULL, hw, &error) == NULL && error &&
            strcmp(ptsim_api_error_message(error),
                   "--hw and a loaded hardware profile: give at most one") == 0,
        "a loaded profile and --hw: an error");
  ptsim_api_error_free(error);
  ptsim_api_result_free(ra);
  ptsim_api_result_free(rb);
  ptsim_api_job_free(a);
  ptsim_api_job_free(b);
  ptsim_api_hardware_free(hw);
}

/* ---- sweeps ---- */

typedef struct {
  char **lines; /* each row's cells joined by commas, as the CSV writes them */
  size_t count, cap, stop_after;
  int names_ok;
} Rows;

static int collect(void *user_data, size_t n, const char *const *names, const char *const *values) {
  Rows *rows = user_data;
  rows->names_ok += n > 40 && strcmp(names[0], "rank") == 0 && strcmp(names[1], "model") == 0;
  size_t len = 0;
  for (size_t i = 0; i < n; i++) len += strlen(values[i]) + 1;
  char *line = malloc(len + 1), *at = line;
  for (size_t i = 0; i < n; i++) at += sprintf(at, "%s%s", values[i], i + 1 < n ? "," : "\n");
  if (rows->count == rows->cap) {
    rows->cap = rows->cap ? 2 * rows->cap : 1024;
    rows->lines = realloc(rows->lines, rows->cap * sizeof *rows->lines);
  }
  rows->lines[rows->count++] = line;
  return rows->stop_after && rows->count >= rows->stop_after;
}

static void rows_free(Rows *rows) {
  for (size_t i = 0; i < rows->count; i++) free(rows->lines[i]);
  free(rows->lines);
}

/* The rows of `ptsim sweep FLAGS --csv FILE`, against the callback's. */
static void same_rows_as_command(const char *what, const char *const *flags) {
  Rows rows = {0};
  PtsimApiError *error = NULL;
  char name[256];
  snprintf(name, sizeof name, "%s: the sweep runs", what);
  check(ptsim_api_sweep(flags, collect, &rows, &error) == 0 && error == NULL, name);
  if (error) printf("# %s\n", ptsim_api_error_message(error));
  snprintf(name, sizeof name, "%s: every row has the header's names", what);
  check(rows.count > 0 && rows.names_ok == (int)rows.count, name);
  char csv_path[] = "/tmp/test_api_csv_XXXXXX";
  int fd = mkstemp(csv_path);
  const char *with_csv[64];
  size_t n = 0;
  for (; flags[n] && n < 60; n++) with_csv[n] = flags[n];
  with_csv[n++] = "--csv";
  with_csv[n++] = csv_path;
  with_csv[n] = NULL;
  char *out = NULL;
  if (fd >= 0 && run_ptsim("sweep", with_csv, NULL, &out, NULL, 0) == 0) {
    FILE *csv = fopen(csv_path, "r");
    char line[4096];
    size_t k = 0, same = 0;
    int header = 1;
    while (csv && fgets(line, sizeof line, csv)) {
      if (header) {
        header = 0;
        continue;
      }
      same += k < rows.count && strcmp(rows.lines[k], line) == 0;
      k++;
    }
    if (csv) fclose(csv);
    snprintf(name, sizeof name, "%s: as many rows as ptsim sweep --csv writes (%zu)", what, k);
    check(k == rows.count, name);
    snprintf(name, sizeof name, "%s: the same rows, value for value, in its order", what);
    check(same == k && k > 0, name);
  } else {
    printf("# SKIP no PTSIM_BIN: not compared with the command\n");
  }
  if (fd >= 0) remove(csv_path);
  free(out);
  rows_free(&rows);
  ptsim_api_error_free(error);
}

static void test_sweep(void) {
  static const char *const small[] = {"--model", "llama3-8b", "--gpus", "8,16", "--device",
                                      "cpu",     "--threads", "2",      NULL};
  same_rows_as_command("llama3-8b on 8 and 16 GPUs", small);
  static const char *const moe[] = {"--model",  "mixtral-8x7b", "--gpus",    "16",
                                    "--gbs",    "64",           "--seq",     "4096",
                                    "--ep",     "2,8",          "--mbs",     "1",
                                    "--device", "cpu",          "--samples", "4",
                                    "--jitter", "0.05",         NULL};
  same_rows_as_command("mixtral, Monte-Carlo samples", moe);
  static const char *const streamed[] = {
      "--model",         "llama3-8b", "--gpus", "8", "--device", "cpu",
      "--in-memory-max", "50",        "--top",  "3", NULL};
  same_rows_as_command("streamed past --in-memory-max", streamed);
  /* several (model, hardware, GPU count) groups: the command settles each
   * one's best layout by the emulation before it writes the CSV, which
   * moves a mixtral layout in doubt on h100-80g (the 80% rule says no, the
   * emulation says it runs) up the ranking */
  static const char *const groups[] = {"--model",   "llama3-8b,mixtral-8x7b",
                                       "--hw",      "h100-80g,a100-80g",
                                       "--gpus",    "16",
                                       "--gbs",     "64",
                                       "--seq",     "4096",
                                       "--device",  "cpu",
                                       "--threads", "2",
                                       NULL};
  same_rows_as_command("several groups, each one's best settled", groups);

  Rows rows = {0};
  rows.stop_after = 3;
  PtsimApiError *error = NULL;
  check(ptsim_api_sweep(small, collect, &rows, &error) == -1 && error &&
            ptsim_api_error_code(error) == PTSIM_API_ERROR_STOPPED && rows.count == 3,
        "a callback that says stop: no more rows, STOPPED");
  ptsim_api_error_free(error);
  rows_free(&rows);

  static const char *const device[] = {"--device", "nope", NULL};
  char *out = NULL, err[4096];
  error = NULL;
  memset(&rows, 0, sizeof rows);
  check(ptsim_api_sweep(device, collect, &rows, &error) == -1 && error &&
            ptsim_api_error_code(error) == PTSIM_API_ERROR_INPUT && rows.count == 0,
        "a bad sweep flag: INPUT, no rows");
  if (error && run_ptsim("sweep", device, NULL, &out, err, sizeof err) == 2) {
    char expected[4096];
    snprintf(expected, sizeof expected, "ptsim sweep: %s", ptsim_api_error_message(error));
    check(strcmp(err, expected) == 0, "... with the command's message");
  }
  free(out);
  ptsim_api_error_free(error);
  static const char *const csv[] = {"--csv", "x.csv", NULL};
  error = NULL;
  check(ptsim_api_sweep(csv, collect, &rows, &error) == -1 && error &&
            strstr(ptsim_api_error_message(error), "--csv is an output of the ptsim command"),
        "the command's outputs are refused by name");
  ptsim_api_error_free(error);
  static const char *const none_valid[] = {"--gpus", "7",    "--tp-max", "1", "--pp-max",
                                           "1",      "--cp", "2",        NULL};
  error = NULL;
  check(ptsim_api_sweep(none_valid, collect, &rows, &error) == -1 && error &&
            strstr(ptsim_api_error_message(error), "no valid layout among") ==
                ptsim_api_error_message(error) &&
            ptsim_api_error_exit_status(error) == 2,
        "no valid layout: INPUT, with the reasons");
  ptsim_api_error_free(error);
  check(ptsim_api_sweep(small, NULL, NULL, NULL) == -1, "no callback: an error, not a crash");
}

#if !defined(__STDC_NO_THREADS__)
typedef struct {
  const PtsimApiJob *job;
  const char *expected;
  int same;
} Worker;

static int worker(void *arg) {
  Worker *w = arg;
  for (int i = 0; i < 3; i++) {
    PtsimApiResult *r = ptsim_api_predict(w->job, NULL, NULL);
    w->same += r && strcmp(ptsim_api_result_json(r, NULL), w->expected) == 0;
    ptsim_api_result_free(r);
  }
  return 0;
}

static void test_threads(void) {
  static const char *const flags[] = {"--tp", "2", "--pp", "2", NULL};
  PtsimApiJob *job = ptsim_api_job_new(flags, NULL, NULL, NULL);
  PtsimApiResult *r = ptsim_api_predict(job, NULL, NULL);
  Worker w[2] = {{job, ptsim_api_result_json(r, NULL), 0},
                 {job, ptsim_api_result_json(r, NULL), 0}};
  thrd_t t[2];
  for (int i = 0; i < 2; i++) thrd_create(&t[i], worker, &w[i]);
  for (int i = 0; i < 2; i++) thrd_join(t[i], NULL);
  check(w[0].same == 3 && w[1].same == 3, "one job predicted on two threads at once: same JSON");
  ptsim_api_result_free(r);
  ptsim_api_job_free(job);
}
#endif

static void test_free_null(void) {
  ptsim_api_error_free(NULL);
  ptsim_api_model_free(NULL);
  ptsim_api_hardware_free(NULL);
  ptsim_api_job_free(NULL);
  ptsim_api_result_free(NULL);
  check(ptsim_api_job_diagnostic_count(NULL) == 0 && ptsim_api_result_json(NULL, NULL) == NULL &&
            ptsim_api_error_message(NULL) != NULL,
        "NULL objects: freed and read without a crash");
}

int main(void) {
  test_version();
  test_flags();
  test_megatron();
  test_bad_input();
  test_loaded();
  test_sweep();
#if !defined(__STDC_NO_THREADS__)
  test_threads();
#endif
  test_free_null();
  printf("1..%d\n", checks);
  return failures ? 1 : 0;
}

/* test_run_csv.c — validate/run_csv.c: every row of the published measured-run
 * CSV files (tests/data/published/, unchanged copies of
 * shared/data/published/) is read with its documented columns, and every
 * malformed CSV is refused with one line naming file:line:column. */
#include <math.h>
#include <string.h>

#include <glib.h>

#include "run_csv.h"

/* ---- helpers ---- */

static PtsimRunCsv *read_published(const char *name, guint rows) {
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "published", name, NULL);
  g_autoptr(GError) error = NULL;
  PtsimRunCsv *csv = ptsim_run_csv_read_file(path, &error);
  g_assert_no_error(error);
  g_assert_nonnull(csv);
  g_assert_cmpuint(csv->runs->len, ==, rows);
  return csv;
}

static const PtsimRun *run(const PtsimRunCsv *csv, guint k) {
  g_assert_cmpuint(k, <, csv->runs->len);
  return &g_array_index(csv->runs, PtsimRun, k);
}

static PtsimRunCsv *parse(const char *text, GError **error) {
  return ptsim_run_csv_parse(text, strlen(text), "runs.csv", error);
}

/* TEXT is refused; the message is one line starting with WHERE
 * ("runs.csv:L:C: ") and containing NEEDLE. */
static void assert_refused(const char *text, const char *where, const char *needle) {
  g_autoptr(GError) error = NULL;
  PtsimRunCsv *csv = parse(text, &error);
  g_assert_null(csv);
  g_assert_error(error, PTSIM_RUN_CSV_ERROR, PTSIM_RUN_CSV_ERROR_PARSE);
  g_test_message("%s", error->message);
  g_assert_null(strchr(error->message, '\n'));
  if (!g_str_has_prefix(error->message, where) || strstr(error->message, needle) == NULL)
    g_assert_cmpstr(error->message, ==, needle); /* shows both */
}

/* ---- the published files ---- */

static void test_narayanan2021(void) {
  g_test_summary("Narayanan et al. SC'21 Table 1: dp_derived, vp_derived, "
                 "achieved_tflops_per_gpu, full recompute, fp16");
  g_autoptr(PtsimRunCsv) csv = read_published("narayanan2021_table1_a100.csv", 10);
  const PtsimRun *a = run(csv, 0);
  g_assert_cmpstr(a->model, ==, "GPT-1.7B");
  g_assert_cmpstr(a->hw, ==, "A100-80GB");
  g_assert_cmpint(a->num_gpus, ==, 32);
  g_assert_cmpint(a->tp, ==, 1);
  g_assert_cmpint(a->pp, ==, 1);
  g_assert_cmpint(a->dp, ==, 32);
  g_assert_cmpint(a->cp, ==, 1);
  g_assert_cmpint(a->vp, ==, 1);
  g_assert_cmpint(a->mbs, ==, 16);
  g_assert_cmpint(a->gbs, ==, 512);
  g_assert_cmpint(a->seq_len, ==, 2048);
  g_assert_cmpint(a->recompute, ==, PTSIM_RECOMPUTE_FULL);
  g_assert_cmpint(a->precision, ==, PTSIM_PRECISION_FP16);
  g_assert_cmpfloat(a->tflops_per_gpu, ==, 137.0);
  g_assert_true(isnan(a->step_time_s));
  g_assert_true(isnan(a->max_allocated_mb));
  g_assert_cmpint(a->oom, ==, -1);
  g_assert_false(a->approximate);
  g_assert_cmpint(a->line, ==, 2);
  g_assert_cmpstr(ptsim_run_csv_cell(csv, a, "params_b"), ==, "1.7");
  g_assert_cmpstr(ptsim_run_csv_cell(csv, a, "ddp_impl"), ==, "torch");
  g_assert_null(ptsim_run_csv_cell(csv, a, "no_such_column"));
  g_assert_cmpint(ptsim_run_csv_column(csv, "source"), ==, 23);

  const PtsimRun *b = run(csv, 5); /* GPT-76B: interleaved, 3 stages */
  g_assert_cmpstr(b->model, ==, "GPT-76B");
  g_assert_cmpint(b->tp, ==, 8);
  g_assert_cmpint(b->pp, ==, 4);
  g_assert_cmpint(b->vp, ==, 3);
  g_assert_cmpint(b->gbs, ==, 1792);
  g_assert_cmpfloat(b->tflops_per_gpu, ==, 140.0);
  g_assert_cmpstr(ptsim_run_csv_cell(csv, b, "layers_per_virtual_stage"), ==, "5");
  const PtsimRun *c = run(csv, 9); /* GPT-1T */
  g_assert_cmpstr(c->model, ==, "GPT-1T");
  g_assert_cmpint(c->num_gpus, ==, 3072);
  g_assert_cmpint(c->pp, ==, 64);
  g_assert_cmpint(c->dp, ==, 6);
  g_assert_cmpint(c->line, ==, 11);
  g_assert_cmpstr(ptsim_run_csv_cell(csv, c, "layers_per_virtual_stage"), ==, "");
}

static void test_gpt3_175b(void) {
  g_test_summary("GPT-3 175B README row: '~32 (approx)' step time, "
                 "not_stated words, a quoted source with commas");
  g_autoptr(PtsimRunCsv) csv = read_published("megatron_readme_gpt3_175b_a100.csv", 1);
  const PtsimRun *a = run(csv, 0);
  g_assert_cmpstr(a->model, ==, "GPT-3-175B");
  g_assert_cmpint(a->num_gpus, ==, 1024);
  g_assert_cmpint(a->tp, ==, 8);
  g_assert_cmpint(a->pp, ==, 16);
  g_assert_cmpint(a->dp, ==, 8);
  g_assert_cmpint(a->cp, ==, 1);
  g_assert_cmpint(a->vp, ==, -1);
  g_assert_cmpint(a->mbs, ==, -1);
  g_assert_cmpint(a->gbs, ==, 1536);
  g_assert_cmpint(a->seq_len, ==, 2048);
  g_assert_cmpint(a->recompute, ==, -1);
  g_assert_cmpint(a->precision, ==, -1);
  g_assert_cmpfloat(a->step_time_s, ==, 32.0);
  g_assert_true(a->approximate);
  g_assert_cmpfloat(a->tflops_per_gpu, ==, 138.0);
  const char *source = ptsim_run_csv_cell(csv, a, "source");
  g_assert_true(g_str_has_prefix(source, "Megatron-LM README.md @ parent of "
                                         "50a4b5f (line 284), examples/"));
  g_assert_true(g_str_has_suffix(source, "(not restated in that README "
                                         "sentence)"));
  g_assert_cmpstr(ptsim_run_csv_cell(csv, a, "pct_of_peak"), ==, "44%");
}

static void test_tp_scaling_2021(void) {
  g_test_summary("older README TP scaling: iteration_time_ms in seconds, "
                 "seq_len not_stated, gpu names with blanks");
  g_autoptr(PtsimRunCsv) csv = read_published("megatron_readme_2021_tp_scaling.csv", 12);
  const PtsimRun *a = run(csv, 0);
  g_assert_cmpstr(a->model, ==, "1B");
  g_assert_cmpstr(a->hw, ==, "V100 (DGX-2)");
  g_assert_cmpint(a->num_gpus, ==, 1);
  g_assert_cmpint(a->dp, ==, 1);
  g_assert_cmpint(a->gbs, ==, 8);
  g_assert_cmpint(a->seq_len, ==, -1);
  g_assert_cmpfloat(a->step_time_s, ==, 1121 * 1e-3);
  g_assert_cmpfloat(a->tflops_per_gpu, ==, 71.9);
  const PtsimRun *b = run(csv, 11);
  g_assert_cmpstr(b->hw, ==, "A100 (DGX-A100)");
  g_assert_cmpint(b->num_gpus, ==, 1024);
  g_assert_cmpint(b->tp, ==, 8);
  g_assert_cmpint(b->dp, ==, 128);
  g_assert_cmpint(b->gbs, ==, 2048);
  g_assert_cmpfloat(b->step_time_s, ==, 1380 * 1e-3);
  g_assert_cmpfloat(b->tflops_per_gpu, ==, 106.5);
}

static void test_core_r080(void) {
  g_test_summary("Megatron-Core r0.8.0 H100 weak scaling: dp column, empty "
                 "cp/vp/mbs, tflops_per_gpu");
  g_autoptr(PtsimRunCsv) csv = read_published("megatron_core_r080_h100_weak_scaling.csv", 9);
  const double tflops[] = {408.8, 465.9, 489.1, 459.6, 419.7, 420.5, 432.8, 474.4, 459.9};
  for (guint k = 0; k < 9; k++) {
    const PtsimRun *r = run(csv, k);
    g_assert_cmpstr(r->hw, ==, "H100");
    g_assert_cmpint(r->dp, ==, 48);
    g_assert_cmpint(r->cp, ==, -1);
    g_assert_cmpint(r->vp, ==, -1);
    g_assert_cmpint(r->mbs, ==, -1);
    g_assert_cmpint(r->seq_len, ==, 4096);
    g_assert_cmpint(r->num_gpus, ==, r->tp * r->pp * r->dp);
    g_assert_cmpfloat(r->tflops_per_gpu, ==, tflops[k]);
    g_assert_true(isnan(r->step_time_s));
  }
  g_assert_cmpstr(run(csv, 8)->model, ==, "GPT-462B");
  g_assert_cmpint(run(csv, 8)->pp, ==, 16);
  g_assert_cmpint(run(csv, 8)->gbs, ==, 3072);
}

static void test_nemo_cp(void) {
  g_test_summary("NeMo long-sequence CP: FP8 (upper case), no documented "
                 "TFLOP/s column, an empty cell in the last row");
  g_autoptr(PtsimRunCsv) csv = read_published("nemo_long_sequence_cp.csv", 17);
  for (guint k = 0; k < 17; k++) {
    const PtsimRun *r = run(csv, k);
    g_assert_cmpint(r->precision, ==, PTSIM_PRECISION_FP8);
    g_assert_true(isnan(r->tflops_per_gpu));
    g_assert_cmpint(r->line, ==, (int64_t)k + 2);
  }
  const PtsimRun *a = run(csv, 8);
  g_assert_cmpstr(a->model, ==, "LLAMA2-7B");
  g_assert_cmpint(a->seq_len, ==, 1048576);
  g_assert_cmpint(a->num_gpus, ==, 1024);
  g_assert_cmpint(a->tp, ==, 8);
  g_assert_cmpint(a->cp, ==, 32);
  g_assert_cmpint(a->gbs, ==, 4);
  g_assert_cmpstr(ptsim_run_csv_cell(csv, a, "tflops_per_gpu_with_cp"), ==, "536");
  const PtsimRun *b = run(csv, 16);
  g_assert_cmpstr(b->hw, ==, "B200");
  g_assert_cmpstr(ptsim_run_csv_cell(csv, b, "tflops_per_gpu_without_cp"), ==, "");
}

/* ---- format details ---- */

static void test_format_details(void) {
  g_test_summary("CRLF and BOM, blank lines, quoted cells over two lines, "
                 "\"\" quotes, column precedence, approximate numbers, oom");
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimRunCsv)
      csv = parse("\xEF\xBB\xBFmodel,gpu,hw,num_gpus,tp,step_time_s,iteration_time_ms,"
                  "tflops_per_gpu,achieved_tflops_per_gpu,max_allocated_mb,"
                  "max_reserved_mb,oom,note\r\n"
                  "\r\n"
                  "\"llama, \"\"big\"\"\",H100,H100-80GB, 8 ,~8,1.5,900,,400.5,"
                  "60000.5,62000,yes,\"two\nlines\"\r\n"
                  "tiny,A100,,1,1,,2 (est),100,90,,,0,\n"
                  "\n"
                  "x,,,,,,,,,,,false,\n",
                  &error);
  g_assert_no_error(error);
  g_assert_cmpuint(csv->runs->len, ==, 3);
  g_assert_cmpstr(csv->columns[0], ==, "model");
  const PtsimRun *a = run(csv, 0);
  g_assert_cmpstr(a->model, ==, "llama, \"big\"");
  g_assert_cmpstr(a->hw, ==, "H100-80GB"); /* hw over gpu */
  g_assert_cmpint(a->num_gpus, ==, 8);
  g_assert_cmpint(a->tp, ==, 8);
  g_assert_true(a->approximate);
  g_assert_cmpfloat(a->step_time_s, ==, 1.5); /* step_time_s wins */
  g_assert_cmpfloat(a->tflops_per_gpu, ==, 400.5);
  g_assert_cmpfloat(a->max_allocated_mb, ==, 60000.5);
  g_assert_cmpfloat(a->max_reserved_mb, ==, 62000.0);
  g_assert_cmpint(a->oom, ==, 1);
  g_assert_cmpint(a->line, ==, 3);
  g_assert_cmpstr(ptsim_run_csv_cell(csv, a, "note"), ==, "two\nlines");
  const PtsimRun *b = run(csv, 1);
  g_assert_cmpint(b->line, ==, 5);
  g_assert_cmpstr(b->hw, ==, "A100");
  g_assert_cmpfloat(b->step_time_s, ==, 2e-3);
  g_assert_true(b->approximate);
  g_assert_cmpfloat(b->tflops_per_gpu, ==, 100.0);
  g_assert_cmpint(b->oom, ==, 0);
  const PtsimRun *c = run(csv, 2);
  g_assert_cmpint(c->line, ==, 7);
  g_assert_null(c->hw);
  g_assert_cmpint(c->num_gpus, ==, -1);
  g_assert_true(isnan(c->step_time_s));
  g_assert_cmpint(c->oom, ==, 0);
  g_assert_false(c->approximate);

  g_autoptr(PtsimRunCsv) header_only = parse("model,tp", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(header_only->runs->len, ==, 0);
}

static void test_malformed(void) {
  g_test_summary("malformed CSV: one line naming file:line:column and the "
                 "column");
  assert_refused("", "runs.csv:1:1: ", "no header row");
  assert_refused("\n\r\n\n", "runs.csv:1:1: ", "no header row");
  assert_refused("foo,bar\n1,2\n", "runs.csv:1:1: ", "none of the documented columns");
  assert_refused("model,tp,tp\n", "runs.csv:1:10: ", "'tp' appears twice");
  assert_refused("model,,tp\n", "runs.csv:1:7: ", "empty column name");
  assert_refused("model,tp\nx,1,2\n", "runs.csv:2:5: ", "row has 3 cell(s), the header has 2");
  assert_refused("model,tp\nx\n", "runs.csv:2:2: ", "row has 1 cell(s)");
  assert_refused("model,tp\n\"abc,1\n", "runs.csv:2:1: ", "unterminated quoted field");
  assert_refused("model,tp\n\"x\"y,1\n", "runs.csv:2:4: ", "text after the closing quote");
  assert_refused("model,tp\nx,abc\n", "runs.csv:2:3: ", "column tp: 'abc' is not a whole number");
  assert_refused("model,tp\nx,1.5\n", "runs.csv:2:3: ", "column tp: '1.5' is not a whole number");
  assert_refused("model,tp\nx,0\n",
                 "runs.csv:2:3: ", "column tp: '0' is not allowed: expected a positive integer");
  assert_refused("model,step_time_s\nx,12abc\n",
                 "runs.csv:2:3: ", "column step_time_s: '12abc' is not a number");
  assert_refused("model,iteration_time_ms\nx,nan\n",
                 "runs.csv:2:3: ", "column iteration_time_ms: 'nan' is not a number");
  assert_refused("model,max_reserved_mb\nx,-5\n",
                 "runs.csv:2:3: ", "column max_reserved_mb: '-5' is negative");
  assert_refused("model,precision\nx,fp4\n", "runs.csv:2:3: ",
                 "column precision: 'fp4' is not allowed: expected "
                 "bf16|fp16|fp8");
  assert_refused("model,recompute\nx,some\n",
                 "runs.csv:2:3: ", "column recompute: 'some' is not allowed");
  assert_refused("model,oom\nx,maybe\n", "runs.csv:2:3: ", "column oom:");
  /* the line count follows quoted newlines and blank lines */
  assert_refused("model,tp\n\"a\nb\",2\n\nc,x\n", "runs.csv:5:3: ", "column tp: 'x'");
  assert_refused("model,tp\r\nok,1\r\nbad,~\r\n",
                 "runs.csv:3:5: ", "column tp: '~' is not a whole number");
  static const char nul[] = "model,tp\nx\0y,1\n";
  g_autoptr(GError) error = NULL;
  g_assert_null(ptsim_run_csv_parse(nul, sizeof nul - 1, "runs.csv", &error));
  g_assert_error(error, PTSIM_RUN_CSV_ERROR, PTSIM_RUN_CSV_ERROR_PARSE);
  g_assert_true(g_str_has_prefix(error->message, "runs.csv:2:2: "));
}

static void test_missing_file(void) {
  g_test_summary("a file that cannot be read is NOT_FOUND naming it");
  g_autoptr(GError) error = NULL;
  g_assert_null(ptsim_run_csv_read_file("/nonexistent/runs.csv", &error));
  g_assert_error(error, PTSIM_RUN_CSV_ERROR, PTSIM_RUN_CSV_ERROR_NOT_FOUND);
  g_assert_nonnull(strstr(error->message, "/nonexistent/runs.csv"));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/run-csv/published/narayanan2021", test_narayanan2021);
  g_test_add_func("/run-csv/published/gpt3-175b", test_gpt3_175b);
  g_test_add_func("/run-csv/published/tp-scaling-2021", test_tp_scaling_2021);
  g_test_add_func("/run-csv/published/core-r080", test_core_r080);
  g_test_add_func("/run-csv/published/nemo-cp", test_nemo_cp);
  g_test_add_func("/run-csv/format-details", test_format_details);
  g_test_add_func("/run-csv/malformed", test_malformed);
  g_test_add_func("/run-csv/missing-file", test_missing_file);
  return g_test_run();
}

/* test_kernel_tables.c — the kernel tables of hw_profiles/kernels/ and
 * their reader (sim/io/kernel_tables.c, csv_table.c): each shipped file
 * loads and every row names a source that resolves; the folder loads whole
 * (every source used); lookups on the shipped curves match the numbers
 * read in the sources; and every refusal names file, line, column and
 * what is allowed.
 *
 * Fixtures: the shipped files via PTSIM_DATA_DIR; the refusals are small
 * texts written here. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "config.h"
#include "input.h"
#include "kernel_tables.h"
#include "kernel_tables_int.h"

static char *shipped_path(const char *file) {
  return g_build_filename(ptsim_config_data_dir(), PTSIM_KERNEL_TABLES_DIR, file, NULL);
}

/* The shipped sources.csv added to T. */
static void add_shipped_sources(PtsimKernelTables *t) {
  g_autofree char *path = shipped_path(PTSIM_KERNEL_SOURCES_FILE);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_input_read(path, "kernel table", PTSIM_INPUT_MAX_TEXT, &text, &len, &error));
  g_assert_true(ptsim_kernel_tables_add_sources(t, text, len, path, &error));
  g_assert_no_error(error);
}

/* ---- the shipped files ---- */

static void test_file(gconstpointer data) {
  PtsimKernelKind kind = (PtsimKernelKind)GPOINTER_TO_INT(data);
  g_test_summary("a shipped data file loads, has rows, and every row's source and marker resolve");
  g_autoptr(PtsimKernelTables) t = ptsim_kernel_tables_new();
  add_shipped_sources(t);
  g_autofree char *path = shipped_path(ptsim_kernel_tables_file(kind));
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_input_read(path, "kernel table", PTSIM_INPUT_MAX_TEXT, &text, &len, &error));
  gboolean added = ptsim_kernel_tables_add_rows(t, kind, text, len, path, &error);
  g_assert_no_error(error);
  g_assert_true(added);
  guint n = ptsim_kernel_tables_rows(t, kind);
  g_assert_cmpuint(n, >, 0);
  for (guint i = 0; i < n; i++) {
    PtsimKernelRow row;
    g_assert_true(ptsim_kernel_tables_row(t, kind, i, &row));
    g_assert_nonnull(row.source);
    g_assert_cmpstr(row.source, !=, "");
    const char *where = ptsim_kernel_tables_source(t, row.source);
    g_assert_nonnull(where);
    g_assert_true(g_str_has_prefix(where, "https://") || strchr(where, '@') != NULL);
    g_assert_true(g_strv_contains(ptsim_kernel_markers, row.marker));
    g_assert_cmpfloat(row.x, >, 0.0);
    g_assert_true(isfinite(row.y) && row.y > 0.0);
  }
  g_test_message("%s: %u rows", ptsim_kernel_tables_file(kind), n);
}

static void test_folder(void) {
  g_test_summary("the whole folder loads, every source is used, every GPU's table selects");
  g_autoptr(PtsimKernelTables) t = ptsim_kernel_tables_new();
  g_autoptr(GError) error = NULL;
  gboolean loaded = ptsim_kernel_tables_load(t, NULL, &error);
  g_assert_no_error(error);
  g_assert_true(loaded);
  g_auto(GStrv) gpus = ptsim_kernel_tables_gpus(t);
  const char *expected[] = {"a100-sxm4", "b200", "gb200", "h100-sxm5", "h200-sxm", "h800-sxm5"};
  for (size_t i = 0; i < G_N_ELEMENTS(expected); i++)
    g_assert_true(g_strv_contains((const char *const *)gpus, expected[i]));
  g_autofree PtsimKernelTable *table = g_new(PtsimKernelTable, 1);
  for (char **g = gpus; *g; g++) {
    g_assert_true(ptsim_kernel_tables_select(t, *g, table, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(table->gpu, ==, *g);
    g_assert_cmpint(table->curve_count, >, 0);
    GString *counts = g_string_new(NULL);
    for (int k = 0; k < PTSIM_KERNEL_KIND_COUNT; k++) {
      guint rows = 0;
      for (guint i = 0; i < ptsim_kernel_tables_rows(t, k); i++) {
        PtsimKernelRow row;
        ptsim_kernel_tables_row(t, k, i, &row);
        rows += strcmp(row.gpu, *g) == 0;
      }
      g_string_append_printf(counts, " %s=%u", ptsim_kernel_tables_file(k), rows);
    }
    g_test_message("%s: %d curves, %d GEMM shapes;%s", *g, table->curve_count, table->shape_count,
                   counts->str);
    g_string_free(counts, TRUE);
  }
  g_assert_false(ptsim_kernel_tables_select(t, "v100", table, &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND);
  g_assert_nonnull(
      strstr(error->message, "no kernel measurements for gpu 'v100' (there are: a100-sxm4, "));
}

static void test_word_lists(void) {
  g_test_summary("every keyed word column has as many words as its core enum has values");
  struct {
    const char *column;
    int count;
  } enums[] = {{"precision", PTSIM_KERNEL_PRECISION_COUNT},
               {"recipe", PTSIM_KERNEL_PRECISION_COUNT},
               {"dtype", 3},
               {"input_dtype", 3},
               {"impl", PTSIM_KERNEL_IMPL_COUNT},
               {"includes_quantize", 2},
               {"layout", PTSIM_KERNEL_LAYOUT_COUNT},
               {"mask", PTSIM_KERNEL_MASK_COUNT},
               {"op", PTSIM_KERNEL_OP_COUNT},
               {"test", PTSIM_KERNEL_STREAM_COUNT},
               {"collective", PTSIM_KERNEL_COLLECTIVE_COUNT},
               {"algo", PTSIM_KERNEL_ALGO_COUNT},
               {"fabric", PTSIM_KERNEL_FABRIC_COUNT},
               {"library", PTSIM_KERNEL_LIBRARY_COUNT},
               {"kernel", PTSIM_KERNEL_DISPATCH_KERNEL_COUNT},
               {"phase", PTSIM_KERNEL_PHASE_COUNT},
               {"link", PTSIM_KERNEL_LINK_COUNT},
               {"direction", PTSIM_KERNEL_DIRECTION_COUNT}};
  for (int k = 0; k < PTSIM_KERNEL_KIND_COUNT; k++) {
    const PtsimKernelSchema *s = ptsim_kernel_schema(k);
    g_assert_cmpint(s->kind, ==, k);
    for (guint c = 0; c < s->n_columns; c++) {
      const PtsimKernelColumn *col = &s->columns[c];
      if (col->type != PTSIM_KERNEL_COL_WORD || col->slot < 0) continue;
      int want = -1;
      for (size_t e = 0; e < G_N_ELEMENTS(enums); e++)
        if (strcmp(enums[e].column, col->name) == 0) want = enums[e].count;
      if (strcmp(col->name, "pass") == 0)
        want = k == PTSIM_KERNEL_ATTENTION ? PTSIM_KERNEL_PASS_COUNT : 2;
      g_assert_cmpint(want, >, 0);
      g_assert_cmpint((int)g_strv_length((char **)col->words), ==, want);
    }
  }
  /* the plain dtypes are the first precisions, in the same order */
  g_assert_cmpint(PTSIM_KERNEL_BF16, ==, 0);
  g_assert_cmpint(PTSIM_KERNEL_FP16, ==, 1);
  g_assert_cmpint(PTSIM_KERNEL_FP32, ==, 2);
}

/* ---- lookups on the shipped numbers (hand-derived) ---- */

static PtsimKernelTable *shipped_table(const char *gpu) {
  g_autoptr(PtsimKernelTables) t = ptsim_kernel_tables_new();
  g_autoptr(GError) error = NULL;
  gboolean loaded = ptsim_kernel_tables_load(t, NULL, &error);
  g_assert_no_error(error);
  g_assert_true(loaded);
  PtsimKernelTable *table = g_new(PtsimKernelTable, 1);
  g_assert_true(ptsim_kernel_tables_select(t, gpu, table, &error));
  return table;
}

static void test_shipped_lookups(void) {
  g_test_summary(
      "H100 FA3 causal hd128 forward at seq 3000: 521 + ln(3000/2048)/ln 2 x (579 - 521) = 552.9; "
      "FBGEMM rowwise + quantize at 8192^3: 931.80; Azure FP8 at 3072^3 lies between 2048^3 and 4096^3");
  g_autofree PtsimKernelTable *h100 = shipped_table("h100-sxm5");
  int32_t key[PTSIM_KERNEL_KEYS] = {
      PTSIM_KERNEL_IMPL_FA3, PTSIM_KERNEL_FP16, PTSIM_KERNEL_FWD, PTSIM_KERNEL_MASK_CAUSAL, 0, 128};
  const PtsimKernelCurve *c = ptsim_kernel_table_find(h100, PTSIM_KERNEL_ATTENTION, key, NULL);
  g_assert_nonnull(c);
  g_assert_cmpstr(c->series, ==, "fa3-paper");
  double want = 521.0 + log(3000.0 / 2048.0) / log(2.0) * (579.0 - 521.0);
  g_assert_cmpfloat_with_epsilon(ptsim_kernel_curve_eval(c, 3000.0), want, 1e-9);
  g_assert_cmpfloat(ptsim_kernel_curve_eval(c, 65536.0), ==, 616.0); /* clamped at 16k */

  int32_t gemm[PTSIM_KERNEL_KEYS] = {
      PTSIM_KERNEL_FP8_ROWWISE, PTSIM_KERNEL_IMPL_FBGEMM, 1, PTSIM_KERNEL_LAYOUT_DENSE, 0, 0};
  const PtsimKernelGemmShape *s = ptsim_kernel_table_gemm_shape(h100, gemm, 1, 8192, 8192, 8192);
  g_assert_nonnull(s);
  g_assert_cmpfloat(s->tflops, ==, 931.80);

  int32_t fp8[PTSIM_KERNEL_KEYS] = {
      PTSIM_KERNEL_FP8_TENSORWISE, PTSIM_KERNEL_IMPL_CUBLASLT, 0, PTSIM_KERNEL_LAYOUT_DENSE, 0, 0};
  c = ptsim_kernel_table_find(h100, PTSIM_KERNEL_GEMM, fp8, "square");
  g_assert_nonnull(c);
  g_assert_cmpint(c->n, ==, 6);
  double f3072 = 2.0 * 3072.0 * 3072.0 * 3072.0;
  /* FLOPs grow 8x per doubling: 3072^3 sits at ln(27/8)/ln 8 of the way */
  want = 1011.3 + log(27.0 / 8.0) / log(8.0) * (1216.9 - 1011.3);
  g_assert_cmpfloat_with_epsilon(ptsim_kernel_curve_eval(c, f3072), want, 1e-9);
  g_assert_true(ptsim_kernel_curve_covers(c, f3072));
  g_assert_false(ptsim_kernel_curve_covers(c, 2.0 * 512.0 * 512.0 * 512.0));
}

static void test_shipped_collectives(void) {
  g_test_summary(
      "B200 1-node all-reduce at 3 GiB: between 2 GiB (734.97) and 4 GiB (740.64) in ln bytes; "
      "DeepEP V1 low-latency dispatch latency at EP 48: between 32 (155 us) and 64 (173 us)");
  g_autofree PtsimKernelTable *b200 = shipped_table("b200");
  int32_t key[PTSIM_KERNEL_KEYS] = {
      PTSIM_KERNEL_ALL_REDUCE, PTSIM_KERNEL_ALGO_DEFAULT, PTSIM_KERNEL_FABRIC_NVLINK, 8, 1, 0};
  const PtsimKernelCurve *c = ptsim_kernel_table_find(b200, PTSIM_KERNEL_COLLECTIVE, key, NULL);
  g_assert_nonnull(c);
  double want = 734.97 + log(1.5) / log(2.0) * (740.64 - 734.97);
  g_assert_cmpfloat_with_epsilon(ptsim_kernel_curve_eval(c, 3.0 * 1073741824.0), want, 1e-9);

  g_autofree PtsimKernelTable *h800 = shipped_table("h800-sxm5");
  int32_t ll[PTSIM_KERNEL_KEYS] = {PTSIM_KERNEL_DEEPEP_V1,
                                   PTSIM_KERNEL_DISPATCH_LOW_LATENCY,
                                   PTSIM_KERNEL_PHASE_DISPATCH,
                                   PTSIM_KERNEL_LINK_RDMA,
                                   0,
                                   PTSIM_KERNEL_METRIC_LATENCY};
  c = ptsim_kernel_table_find(h800, PTSIM_KERNEL_MOE_DISPATCH, ll, NULL);
  g_assert_nonnull(c);
  g_assert_cmpint(c->n, ==, 6);
  want = 155.0 + log(1.5) / log(2.0) * (173.0 - 155.0);
  g_assert_cmpfloat_with_epsilon(ptsim_kernel_curve_eval(c, 48.0), want, 1e-9);
}

/* ---- refusals ---- */

static const char sources[] =
    "# a comment line\n"
    "key,where,what\n"
    "src,https://example.org/bench,\"a bench, with a comma and \"\"quotes\"\"\"\n"
    "repo,owner/name@0123456789abcdef:path/to/file.md,a file\n";

static const char hbm_header[] = "gpu,test,impl,gbps,source,marker,note\n";

static PtsimKernelTables *with_sources(void) {
  PtsimKernelTables *t = ptsim_kernel_tables_new();
  g_autoptr(GError) error = NULL;
  g_assert_true(
      ptsim_kernel_tables_add_sources(t, sources, sizeof sources - 1, "sources.csv", &error));
  g_assert_no_error(error);
  return t;
}

/* Adds TEXT as KIND's file "f.csv" and expects the error MESSAGE. */
static void refused(PtsimKernelTables *t, PtsimKernelKind kind, const char *text,
                    const char *message) {
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_kernel_tables_add_rows(t, kind, text, strlen(text), "f.csv", &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE);
  g_assert_cmpstr(error->message, ==, message);
}

static void test_refused_cells(void) {
  g_test_summary("each bad cell is named by file:line:column, its column and what is allowed");
  g_autoptr(PtsimKernelTables) t = with_sources();
  refused(
      t, PTSIM_KERNEL_HBM, "gpu,test,impl,gbps,source,marker\nh100,copy,babelstream,1,src,read\n",
      "f.csv:1:33: the header is not gpu,test,impl,gbps,source,marker,note (column 7 is missing)");
  refused(t, PTSIM_KERNEL_HBM, "gpu,test,impl,gbps,src,marker,note\n",
          "f.csv:1:20: the header is not gpu,test,impl,gbps,source,marker,note (column 5 differs)");
  refused(t, PTSIM_KERNEL_HBM, "",
          "f.csv: no header row; expected gpu,test,impl,gbps,source,marker,note");
  g_autofree char *unknown_source = g_strconcat(hbm_header,
                                                "h100,copy,babelstream,2900,nope,read,\n", NULL);
  refused(t, PTSIM_KERNEL_HBM, unknown_source,
          "f.csv:2:28: column source: no source 'nope' in sources.csv");
  g_autofree char *bad_marker = g_strconcat(hbm_header, "h100,copy,babelstream,2900,src,guess,\n",
                                            NULL);
  refused(t, PTSIM_KERNEL_HBM, bad_marker,
          "f.csv:2:32: column marker: 'guess' is not one of read|plot|derived|3rd-party");
  g_autofree char *bad_word = g_strconcat(hbm_header, "h100,copy2,babelstream,2900,src,read,\n",
                                          NULL);
  refused(t, PTSIM_KERNEL_HBM, bad_word,
          "f.csv:2:6: column test: 'copy2' is not one of copy|mul|add|triad|dot");
  g_autofree char *bad_number = g_strconcat(hbm_header, "h100,copy,babelstream,2.9e6,src,read,\n",
                                            NULL);
  refused(t, PTSIM_KERNEL_HBM, bad_number,
          "f.csv:2:23: column gbps: '2.9e6' is not allowed: expected a number in (0, 1000000]");
  g_autofree char *not_number = g_strconcat(hbm_header, "h100,copy,babelstream,fast,src,read,\n",
                                            NULL);
  refused(t, PTSIM_KERNEL_HBM, not_number,
          "f.csv:2:23: column gbps: 'fast' is not allowed: expected a number in (0, 1000000]");
  g_autofree char *bad_gpu = g_strconcat(hbm_header, "H100,copy,babelstream,2900,src,read,\n",
                                         NULL);
  refused(
      t, PTSIM_KERNEL_HBM, bad_gpu,
      "f.csv:2:1: column gpu: 'H100' is not a name: [a-z0-9], then [a-z0-9._-], at most 31 characters");
  g_autofree char *empty = g_strconcat(hbm_header, "h100,,babelstream,2900,src,read,\n", NULL);
  refused(t, PTSIM_KERNEL_HBM, empty, "f.csv:2:6: column test: empty");
  g_autofree char *short_row = g_strconcat(hbm_header, "h100,copy,babelstream,2900,src,read\n",
                                           NULL);
  refused(t, PTSIM_KERNEL_HBM, short_row, "f.csv:2: 6 cells, the header has 7");
  refused(
      t, PTSIM_KERNEL_ATTENTION,
      "gpu,impl,precision,pass,mask,window,head_dim,series,batch,heads,seq,tflops,source,marker,note\n"
      "h100,fa3,bf16,fwd,none,0,128,s,,,4096.5,600,src,read,\n",
      "f.csv:2:34: column seq: '4096.5' is not allowed: expected an integer from 1 to 67108864");
  refused(
      t, PTSIM_KERNEL_ATTENTION,
      "gpu,impl,precision,pass,mask,window,head_dim,series,batch,heads,seq,tflops,source,marker,note\n"
      "h100,fa3,bf16,fwd,window,0,128,s,,,4096,600,src,read,\n",
      "f.csv:2:26: column window: the window width is > 0 exactly when mask is window");
  g_assert_cmpuint(ptsim_kernel_tables_rows(t, PTSIM_KERNEL_HBM), ==, 0);
}

static void test_refused_rows(void) {
  g_test_summary("numbers that restate each other must agree; a curve gets one value per x; "
                 "a failed file leaves nothing");
  g_autoptr(PtsimKernelTables) t = with_sources();
  refused(t, PTSIM_KERNEL_MEMORY,
          "gpu,op,pass,impl,dtype,series,rows,cols,bytes,time_us,gbps,source,marker,note\n"
          "h100,rmsnorm,fwd,liger,bf16,s,4096,4096,67108864,29.2,3000,src,derived,\n",
          "f.csv:2:55: column gbps: 3000 does not agree with bytes / time_us = 2298 (2% allowed)");
  refused(
      t, PTSIM_KERNEL_COLLECTIVE,
      "gpu,collective,algo,fabric,ranks,nodes,series,bytes,busbw_gbps,time_us,source,marker,note\n"
      "a100,all_reduce,default,nvlink,8,1,s,1048576,36.0,101.9,src,read,\n",
      "f.csv:2:46: column busbw_gbps: 36 does not agree with bytes / time_us x the bus factor = 18.01 (2% allowed)");
  refused(
      t, PTSIM_KERNEL_COLLECTIVE,
      "gpu,collective,algo,fabric,ranks,nodes,series,bytes,busbw_gbps,time_us,source,marker,note\n"
      "a100,all_reduce,default,nvlink,8,16,s,1048576,18.0,,src,read,\n",
      "f.csv:2:34: column nodes: more nodes than ranks");
  refused(
      t, PTSIM_KERNEL_GEMM,
      "gpu,precision,impl,includes_quantize,layout,series,groups,m,n,k,tflops,source,marker,note\n"
      "h100,bf16,torch,no,dense,s,2,1024,1024,1024,100,src,read,\n",
      "f.csv:2:28: column groups: a dense GEMM has groups 1");
  refused(
      t, PTSIM_KERNEL_MOE_DISPATCH,
      "gpu,library,kernel,phase,link,series,ep_ranks,nodes,tokens,hidden,topk,dispatch_dtype,sms,bandwidth_gbps,latency_us,source,marker,note\n"
      "h800,deepep_v1,normal,dispatch,nvlink,s,8,1,,,,,,,,src,read,\n",
      "f.csv:2: neither bandwidth_gbps nor latency_us: a row needs one");
  /* a duplicate x in the second row: the file's first row is not kept either */
  const char *dup =
      "gpu,precision,impl,includes_quantize,layout,series,groups,m,n,k,tflops,source,marker,note\n"
      "h100,bf16,torch,no,dense,s,1,8192,8192,8192,585,src,read,\n"
      "h100,bf16,torch,no,dense,s,1,8192,8192,8192,590,repo,read,\n";
  refused(
      t, PTSIM_KERNEL_GEMM, dup,
      "f.csv:3: a second value at FLOPs 1099511627776 for the same gpu, key and series 's' (first at f.csv:2)");
  g_assert_cmpuint(ptsim_kernel_tables_rows(t, PTSIM_KERNEL_GEMM), ==, 0);
  g_auto(GStrv) gpus = ptsim_kernel_tables_gpus(t);
  g_assert_cmpuint(g_strv_length(gpus), ==, 0);
  /* the same shape in another series is another curve */
  const char *ok =
      "gpu,precision,impl,includes_quantize,layout,series,groups,m,n,k,tflops,source,marker,note\n"
      "h100,bf16,torch,no,dense,s,1,8192,8192,8192,585,src,read,\n"
      "h100,bf16,torch,no,dense,t,1,8192,8192,8192,590,repo,read,\"a note, quoted\"\n";
  g_autoptr(GError) error = NULL;
  g_assert_true(
      ptsim_kernel_tables_add_rows(t, PTSIM_KERNEL_GEMM, ok, strlen(ok), "g.csv", &error));
  g_assert_no_error(error);
  g_assert_cmpuint(ptsim_kernel_tables_rows(t, PTSIM_KERNEL_GEMM), ==, 2);
  /* ... and the same rows again collide with what is committed */
  refused(
      t, PTSIM_KERNEL_GEMM, ok,
      "f.csv:2: a second value at FLOPs 1099511627776 for the same gpu, key and series 's' (first at g.csv:2)");
  g_assert_cmpuint(ptsim_kernel_tables_rows(t, PTSIM_KERNEL_GEMM), ==, 2);
}

static void test_refused_sources(void) {
  g_test_summary(
      "sources: a key twice, a location that is neither a URL nor repo@commit:path, no description");
  g_autoptr(PtsimKernelTables) t = with_sources();
  g_autoptr(GError) error = NULL;
  const char *twice = "key,where,what\nsrc,https://example.org/other,again\n";
  g_assert_false(ptsim_kernel_tables_add_sources(t, twice, strlen(twice), "s2.csv", &error));
  g_assert_cmpstr(error->message, ==,
                  "s2.csv:2:1: column key: source 'src' is given twice (first at sources.csv:3)");
  g_clear_error(&error);
  const char *bad_where = "key,where,what\nx,owner/name@main:README.md,a branch is not a commit\n";
  g_assert_false(
      ptsim_kernel_tables_add_sources(t, bad_where, strlen(bad_where), "s2.csv", &error));
  g_assert_cmpstr(
      error->message, ==,
      "s2.csv:2:3: column where: 'owner/name@main:README.md' is neither an https:// URL nor OWNER/REPO@COMMIT:PATH");
  g_clear_error(&error);
  const char *plain_http = "key,where,what\nx,http://example.org,a page\n";
  g_assert_false(
      ptsim_kernel_tables_add_sources(t, plain_http, strlen(plain_http), "s2.csv", &error));
  g_assert_cmpstr(
      error->message, ==,
      "s2.csv:2:3: column where: 'http://example.org' is neither an https:// URL nor OWNER/REPO@COMMIT:PATH");
  g_clear_error(&error);
  const char *no_what = "key,where,what\nx,https://example.org,\n";
  g_assert_false(ptsim_kernel_tables_add_sources(t, no_what, strlen(no_what), "s2.csv", &error));
  g_assert_cmpstr(error->message, ==,
                  "s2.csv:2:23: column what: empty: say what the source measured and how");
  g_clear_error(&error);
  const char *quote = "key,where,what\nx,https://example.org,\"open\n";
  g_assert_false(ptsim_kernel_tables_add_sources(t, quote, strlen(quote), "s2.csv", &error));
  g_assert_cmpstr(error->message, ==, "s2.csv:2:28: line break inside a quoted cell");
  g_clear_error(&error);
  g_assert_cmpstr(ptsim_kernel_tables_source(t, "repo"), ==,
                  "owner/name@0123456789abcdef:path/to/file.md");
  g_assert_null(ptsim_kernel_tables_source(t, "x"));
}

static void test_unused_source(void) {
  g_test_summary(
      "a folder whose sources.csv names a source no row uses is refused, naming its line");
  g_autofree char *dir = g_dir_make_tmp("ptsim-kernels-XXXXXX", NULL);
  g_assert_nonnull(dir);
  for (int k = -1; k < PTSIM_KERNEL_KIND_COUNT; k++) {
    const char *file = k < 0 ? PTSIM_KERNEL_SOURCES_FILE : ptsim_kernel_tables_file(k);
    g_autofree char *path = g_build_filename(dir, file, NULL);
    g_autoptr(GString) text = g_string_new(NULL);
    if (k < 0) {
      g_string_append(text, sources);
    } else {
      const PtsimKernelSchema *s = ptsim_kernel_schema(k);
      for (guint c = 0; c < s->n_columns; c++)
        g_string_append_printf(text, "%s%s", c ? "," : "", s->columns[c].name);
      g_string_append_c(text, '\n');
      if (k == PTSIM_KERNEL_HBM) g_string_append(text, "h100,copy,babelstream,2900,src,read,\r\n");
    }
    g_assert_true(g_file_set_contents(path, text->str, (gssize)text->len, NULL));
  }
  g_autoptr(PtsimKernelTables) t = ptsim_kernel_tables_new();
  g_autoptr(GError) error = NULL;
  g_assert_false(ptsim_kernel_tables_load(t, dir, &error));
  g_autofree char *want = g_strdup_printf("%s/sources.csv:4: source 'repo' is used by no row", dir);
  g_assert_cmpstr(error->message, ==, want);
  g_assert_cmpuint(ptsim_kernel_tables_rows(t, PTSIM_KERNEL_HBM), ==, 1);
  for (int k = -1; k < PTSIM_KERNEL_KIND_COUNT; k++) {
    g_autofree char *path =
        g_build_filename(dir, k < 0 ? PTSIM_KERNEL_SOURCES_FILE : ptsim_kernel_tables_file(k),
                         NULL);
    g_remove(path);
  }
  g_rmdir(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  for (int k = 0; k < PTSIM_KERNEL_KIND_COUNT; k++) {
    g_autofree char *path = g_strdup_printf("/kernel-tables/file/%s", ptsim_kernel_tables_file(k));
    g_test_add_data_func(path, GINT_TO_POINTER(k), test_file);
  }
  g_test_add_func("/kernel-tables/folder", test_folder);
  g_test_add_func("/kernel-tables/word-lists", test_word_lists);
  g_test_add_func("/kernel-tables/shipped-lookups", test_shipped_lookups);
  g_test_add_func("/kernel-tables/shipped-collectives", test_shipped_collectives);
  g_test_add_func("/kernel-tables/refused-cells", test_refused_cells);
  g_test_add_func("/kernel-tables/refused-rows", test_refused_rows);
  g_test_add_func("/kernel-tables/refused-sources", test_refused_sources);
  g_test_add_func("/kernel-tables/unused-source", test_unused_source);
  return g_test_run();
}

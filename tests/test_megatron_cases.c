/* test_megatron_cases.c — validate/megatron_case.c, megatron_recipes.c,
 * megatron_cases.c and yaml_doc.c on the hand-made Megatron-LM tree
 * (tests/data/megatron_fixture, its README has the hand-worked numbers),
 * and the ratchet: the real cases of tests/data/megatron_cases/cases
 * predicted, their median errors per platform held to ratchet.csv, and the
 * ratchet shown to fail when every prediction is doubled (or halved). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "megatron_case.h"
#include "megatron_cases.h"
#include "yaml_doc.h"

static char *fixture(const char *first, ...) G_GNUC_NULL_TERMINATED;
static char *fixture(const char *first, ...) {
  va_list ap;
  va_start(ap, first);
  g_autofree char *base = g_test_build_filename(G_TEST_DIST, "data", "megatron_fixture", NULL);
  g_autoptr(GString) path = g_string_new(base);
  for (const char *p = first; p; p = va_arg(ap, const char *))
    g_string_append_printf(path, "/%s", p);
  va_end(ap);
  return g_string_free(g_steal_pointer(&path), FALSE);
}

static char *test_cases(void) { return fixture("tests", "functional_tests", "test_cases", NULL); }

static GPtrArray *new_cases(void) {
  return g_ptr_array_new_with_free_func((GDestroyNotify)ptsim_megatron_case_free);
}

static const PtsimMegatronCase *find_case(GPtrArray *cases, const char *name) {
  for (guint i = 0; i < cases->len; i++)
    if (strcmp(((const PtsimMegatronCase *)cases->pdata[i])->name, name) == 0)
      return cases->pdata[i];
  g_assert_not_reached();
}

static const PtsimMegatronMeasured *find_measured(const PtsimMegatronCase *c,
                                                  const char *platform) {
  for (guint i = 0; i < c->measured->len; i++)
    if (strcmp(((const PtsimMegatronMeasured *)c->measured->pdata[i])->platform, platform) == 0)
      return c->measured->pdata[i];
  return NULL;
}

/* ---- YAML ---- */

static void test_yaml(void) {
  const char *text = "# comment\n"
                     "a: &x 1.5\n"
                     "b: *x\n"
                     "c: \"true\"\n"
                     "d: true   # the boolean\n"
                     "e: [one, two]\n"
                     "f: {g: h}\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimYamlDoc) doc = ptsim_yaml_load_data(text, strlen(text), "inline.yaml", &error);
  g_assert_no_error(error);
  int root = ptsim_yaml_root(doc);
  g_assert_cmpint(ptsim_yaml_kind(doc, root), ==, PTSIM_YAML_MAPPING);
  g_assert_cmpint(ptsim_yaml_count(doc, root), ==, 6);
  g_assert_cmpstr(ptsim_yaml_text(doc, ptsim_yaml_get(doc, root, "a")), ==, "1.5");
  g_assert_cmpstr(ptsim_yaml_text(doc, ptsim_yaml_get(doc, root, "b")), ==, "1.5"); /* alias */
  g_assert_false(ptsim_yaml_plain(doc, ptsim_yaml_get(doc, root, "c")));
  g_assert_true(ptsim_yaml_plain(doc, ptsim_yaml_get(doc, root, "d")));
  g_assert_cmpstr(ptsim_yaml_text(doc, ptsim_yaml_get(doc, root, "d")), ==, "true");
  int e = ptsim_yaml_get(doc, root, "e");
  g_assert_cmpint(ptsim_yaml_kind(doc, e), ==, PTSIM_YAML_SEQUENCE);
  g_assert_cmpstr(ptsim_yaml_text(doc, ptsim_yaml_item(doc, e, 1)), ==, "two");
  g_assert_cmpint(ptsim_yaml_item(doc, e, 2), ==, 0);
  g_assert_null(ptsim_yaml_text(doc, e));
  int f = ptsim_yaml_get(doc, root, "f");
  g_assert_cmpstr(ptsim_yaml_text(doc, ptsim_yaml_get(doc, f, "g")), ==, "h");
  g_assert_cmpint(ptsim_yaml_line(doc, f), ==, 7);
  g_assert_cmpint(ptsim_yaml_get(doc, root, "missing"), ==, 0);
  g_assert_cmpint(ptsim_yaml_get(doc, e, "one"), ==, 0); /* not a mapping */

  g_autoptr(PtsimYamlDoc) empty = ptsim_yaml_load_data("", 0, "empty.yaml", &error);
  g_assert_no_error(error);
  g_assert_cmpint(ptsim_yaml_root(empty), ==, 0);

  const char *bad = "a: 1\nb: [1, 2\n";
  g_autoptr(PtsimYamlDoc) none = ptsim_yaml_load_data(bad, strlen(bad), "bad.yaml", &error);
  g_assert_null(none);
  g_assert_error(error, PTSIM_YAML_ERROR, PTSIM_YAML_ERROR_PARSE);
  g_assert_true(g_str_has_prefix(error->message, "bad.yaml:"));
  g_clear_error(&error);
  g_autoptr(PtsimYamlDoc) missing = ptsim_yaml_load_file("/nonexistent/x.yaml", &error);
  g_assert_null(missing);
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
}

/* ---- golden values ---- */

static void test_golden(void) {
  g_autofree char *path = fixture("tests", "functional_tests", "test_cases", "gpt", "tiny_tp2_pp2",
                                  "golden_values_dev_dgx_h100.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimYamlDoc) doc = ptsim_yaml_load_file(path, &error);
  g_assert_no_error(error);
  PtsimMegatronMeasured m;
  memset(&m, 0, sizeof m);
  ptsim_megatron_golden_summarize(doc, 2, &m);
  g_assert_cmpfloat(m.peak_allocated_bytes, ==, 41000000.0);   /* the largest, "nan" skipped */
  g_assert_cmpfloat(m.steady_allocated_bytes, ==, 20000000.0); /* the median */
  /* step 2 averages steps 1-2 (warm-up); steps 4..10 count */
  g_assert_cmpint(m.time_steps, ==, 4);
  g_assert_cmpfloat_with_epsilon(m.iteration_time_s, 0.0115, 1e-12);
  ptsim_megatron_golden_summarize(doc, 1, &m); /* step 2 is below 3 */
  g_assert_cmpint(m.time_steps, ==, 4);
  ptsim_megatron_golden_summarize(doc, 5, &m); /* from step 7: 0.012 and 0.010 */
  g_assert_cmpint(m.time_steps, ==, 2);
  g_assert_cmpfloat_with_epsilon(m.iteration_time_s, 0.011, 1e-12);
  /* a document without the metrics */
  g_autoptr(PtsimYamlDoc) none = ptsim_yaml_load_data("{}", 2, "none.json", &error);
  g_assert_no_error(error);
  ptsim_megatron_golden_summarize(none, 1, &m);
  g_assert_true(isnan(m.peak_allocated_bytes) && isnan(m.steady_allocated_bytes) &&
                isnan(m.iteration_time_s));
  g_assert_cmpint(m.time_steps, ==, 0);
}

/* ---- the hand-made tree ---- */

static const char *const tiny_command =
    "--num-layers 4 --hidden-size 256 --num-attention-heads 4 --seq-length 512 "
    "--max-position-embeddings 512 --micro-batch-size 2 --global-batch-size 16 "
    "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --tokenizer-type "
    "NullTokenizer --vocab-size 1024 --data-path '${DATA_PATH}/text/my-gpt3_00_text_document' "
    "--moe-layer-freq '([1]*4)' --log-interval 2 --bf16 --use-mcore-models true "
    "--transformer-impl transformer_engine";

static void check_tiny(const PtsimMegatronCase *c) {
  g_assert_cmpstr(c->family, ==, "gpt");
  g_assert_cmpstr(c->test_type, ==, "regular");
  g_assert_cmpstr(c->mode, ==, "pretraining");
  g_assert_null(c->unread);
  g_autofree char *command = ptsim_megatron_case_command(c);
  g_assert_cmpstr(command, ==, tiny_command);
  g_assert_cmpint(c->gpus, ==, 4); /* the product's gpus: [4] */
  g_assert_cmpstr(c->gpus_from, ==, "h100/gpt.yaml: 1 node x 4 GPUs");
  g_assert_cmpstr(ptsim_megatron_case_effective_env(c, "NCCL_ALGO"), ==, "Tree");
  g_assert_cmpstr(ptsim_megatron_case_effective_env(c, "NCCL_PROTO"), ==, "simple");
  g_assert_null(ptsim_megatron_case_effective_env(c, "NVTE_FUSED_ATTN"));
  g_assert_cmpuint(c->measured->len, ==, 2);
  const PtsimMegatronMeasured *h = find_measured(c, "dgx_h100");
  const PtsimMegatronMeasured *a = find_measured(c, "dgx_a100");
  g_assert_cmpstr(h->environment, ==, "dev"); /* three quantities, lts one */
  g_assert_cmpstr(a->environment, ==, "lts"); /* dev has none */
  g_assert_cmpfloat(h->peak_allocated_bytes, ==, 41000000.0);
  g_assert_cmpfloat(a->peak_allocated_bytes, ==, 60000000.0);
  g_assert_cmpfloat(a->steady_allocated_bytes, ==, 21000000.0);
  g_assert_cmpfloat(a->iteration_time_s, ==, 0.02);
  g_assert_cmpint(a->time_steps, ==, 1);
  g_assert_true(g_str_has_suffix(h->source, "gpt/tiny_tp2_pp2/golden_values_dev_dgx_h100.json"));
}

static void test_fixture_tree(void) {
  g_autofree char *tree = test_cases();
  g_autoptr(GPtrArray) cases = new_cases();
  g_autofree char *recipes = NULL;
  g_autoptr(GError) error = NULL;
  /* the held-out files of the fixture are not YAML: this fails if one is opened */
  g_assert_true(ptsim_megatron_cases_read(tree, NULL, cases, &recipes, &error));
  g_assert_no_error(error);
  g_assert_true(g_str_has_suffix(recipes, "megatron_fixture/tests/test_utils/recipes"));
  g_assert_cmpuint(cases->len, ==, 5); /* tiny_gb200_case skipped */
  const char *order[] = {"tiny_bert", "tiny_no_recipe", "tiny_tp2_pp2", "tiny_inference",
                         "tiny_unmeasured"};
  for (guint i = 0; i < cases->len; i++)
    g_assert_cmpstr(((const PtsimMegatronCase *)cases->pdata[i])->name, ==, order[i]);
  check_tiny(find_case(cases, "tiny_tp2_pp2"));
  const PtsimMegatronCase *nr = find_case(cases, "tiny_no_recipe");
  g_assert_cmpint(nr->gpus, ==, -1);
  g_assert_null(nr->gpus_from);

  g_autoptr(GPtrArray) rows = ptsim_megatron_cases_predict(cases, NULL);
  g_assert_cmpuint(rows->len, ==, 6);
  guint status[4] = {0, 0, 0, 0};
  for (guint i = 0; i < rows->len; i++) {
    const PtsimCaseRow *r = rows->pdata[i];
    status[r->status]++;
    if (r->status != PTSIM_CASE_COMPARED) {
      g_assert_nonnull(r->reason);
      continue;
    }
    g_assert_cmpint(r->stage, ==, strcmp(r->name, "tiny_tp2_pp2") == 0 ? 1 : 0); /* the last */
    for (int q = 0; q < PTSIM_CASE_TIME; q++)
      if (!isnan(r->measured[q])) g_assert_true(isfinite(ptsim_case_row_error(r, q)));
    if (strcmp(r->name, "tiny_no_recipe") == 0) {
      g_assert_cmpint(r->gpus, ==, 8);
      g_assert_nonnull(strstr(r->assumed, "8 GPUs: no recipe names the case"));
      g_assert_true(g_str_has_suffix(r->command, " --attention-backend unfused"));
      /* both NVTE_*_ATTN, record streams, and the harness's NCCL_PROTO=simple,
       * NCCL_ALGO=Ring and NCCL_NVLS_ENABLE=0 (ring collectives, no SHARP) */
      g_assert_cmpuint(r->env_applied->len, ==, 6);
      g_assert_true(g_str_has_prefix(r->unmodelled->pdata[0], "--not-a-megatron-flag"));
    } else {
      g_assert_cmpint(r->gpus, ==, 4);
      g_assert_cmpstr(r->hw, ==, strcmp(r->platform, "dgx_a100") == 0 ? "a100-80g" : "h100-80g");
      gboolean alloc_conf = FALSE;
      for (guint k = 0; k < r->env_applied->len; k++)
        alloc_conf |= g_str_has_prefix(r->env_applied->pdata[k], "PYTORCH_CUDA_ALLOC_CONF=");
      g_assert_true(alloc_conf);
      gboolean tree_algo = FALSE;
      for (guint k = 0; k < r->env_ignored->len; k++)
        tree_algo |= strcmp(r->env_ignored->pdata[k], "NCCL_ALGO=Tree") == 0;
      g_assert_true(tree_algo);
    }
  }
  g_assert_cmpuint(status[PTSIM_CASE_COMPARED], ==, 3);
  g_assert_cmpuint(status[PTSIM_CASE_OUT_OF_SCOPE], ==, 2);
  g_assert_cmpuint(status[PTSIM_CASE_UNMEASURED], ==, 1);
  /* every writer runs over every kind of row */
  const char *formats[] = {"text", "json", "csv"};
  for (size_t k = 0; k < G_N_ELEMENTS(formats); k++) {
    g_autoptr(GString) out = g_string_new(NULL);
    ptsim_megatron_cases_write(out, rows, formats[k], recipes);
    g_assert_cmpuint(out->len, >, 100);
  }
}

/* ptsim's record of a case reads back to what the folder gives. */
static void test_record(void) {
  g_autofree char *path = fixture("records", "gpt", "tiny_tp2_pp2.ini", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimMegatronCase) rec = ptsim_megatron_case_read_record(path, &error);
  g_assert_no_error(error);
  check_tiny(rec);
  g_assert_cmpstr(rec->commit, ==, "0000000000000000000000000000000000000000");
  g_autofree char *tree = test_cases();
  g_autoptr(GPtrArray) cases = new_cases();
  g_assert_true(ptsim_megatron_cases_read(tree, NULL, cases, NULL, &error));
  const PtsimMegatronCase *dir = find_case(cases, "tiny_tp2_pp2");
  g_assert_cmpuint(rec->env_keys->len, ==, dir->env_keys->len);
  for (guint i = 0; i < dir->env_keys->len; i++) {
    g_assert_cmpstr(rec->env_keys->pdata[i], ==, dir->env_keys->pdata[i]);
    g_assert_cmpstr(rec->env_values->pdata[i], ==, dir->env_values->pdata[i]);
  }
  for (guint i = 0; i < dir->measured->len; i++) {
    const PtsimMegatronMeasured *a = dir->measured->pdata[i];
    const PtsimMegatronMeasured *b = find_measured(rec, a->platform);
    g_assert_cmpfloat(a->peak_allocated_bytes, ==, b->peak_allocated_bytes);
    g_assert_cmpfloat(a->steady_allocated_bytes, ==, b->steady_allocated_bytes);
    g_assert_cmpfloat(a->iteration_time_s, ==, b->iteration_time_s);
    g_assert_cmpint(a->time_steps, ==, b->time_steps);
  }
  /* a record without its [case] keys is an error naming the file */
  const char *broken = "[case]\nname = x\n";
  g_autofree char *tmp = NULL;
  int fd = g_file_open_tmp("record-XXXXXX.ini", &tmp, &error);
  g_assert_no_error(error);
  g_assert_true(write(fd, broken, strlen(broken)) == (ssize_t)strlen(broken));
  close(fd);
  g_autoptr(PtsimMegatronCase) none = ptsim_megatron_case_read_record(tmp, &error);
  g_assert_null(none);
  g_assert_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND);
  g_assert_true(g_str_has_prefix(error->message, tmp));
  g_unlink(tmp);
}

static void test_held_out(void) {
  g_assert_true(ptsim_megatron_case_held_out("golden_values_dev_dgx_gb200.json"));
  g_assert_true(ptsim_megatron_case_held_out("x/GB300/y"));
  g_assert_false(ptsim_megatron_case_held_out("golden_values_dev_dgx_h100.json"));
  g_autofree char *dir = fixture("tests", "functional_tests", "test_cases", "gpt",
                                 "tiny_gb200_case", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) cases = new_cases();
  g_assert_false(ptsim_megatron_cases_read(dir, NULL, cases, NULL, &error));
  g_assert_nonnull(strstr(error->message, "held out"));
  g_assert_cmpuint(cases->len, ==, 0);
  g_clear_error(&error);
  g_autoptr(PtsimMegatronCase) c = ptsim_megatron_case_read_dir(dir, &error);
  g_assert_null(c);
  g_assert_nonnull(error);
}

/* ---- the ratchet ---- */

typedef struct {
  char quantity[32], platform[32];
  int64_t rows;
  double median_abs, tolerance;
} RatchetLine;

static GArray *read_ratchet(void) {
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "megatron_cases",
                                                "ratchet.csv", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, &error));
  GArray *lines = g_array_new(FALSE, TRUE, sizeof(RatchetLine));
  g_auto(GStrv) each = g_strsplit(text, "\n", -1);
  gboolean header = TRUE;
  for (char **l = each; *l; l++) {
    if (!**l || **l == '#') continue;
    if (header) { /* quantity,platform,rows,median_abs_error,tolerance */
      g_assert_cmpstr(*l, ==, "quantity,platform,rows,median_abs_error,tolerance");
      header = FALSE;
      continue;
    }
    g_auto(GStrv) cell = g_strsplit(*l, ",", -1);
    g_assert_cmpuint(g_strv_length(cell), ==, 5);
    RatchetLine r;
    memset(&r, 0, sizeof r);
    g_strlcpy(r.quantity, cell[0], sizeof r.quantity);
    g_strlcpy(r.platform, cell[1], sizeof r.platform);
    r.rows = g_ascii_strtoll(cell[2], NULL, 10);
    r.median_abs = *cell[3] ? g_ascii_strtod(cell[3], NULL) : NAN;
    r.tolerance = *cell[4] ? g_ascii_strtod(cell[4], NULL) : NAN;
    g_assert_true(strcmp(r.quantity, "not_run") == 0 || ptsim_case_quantity_of(r.quantity) >= 0);
    g_array_append_val(lines, r);
  }
  return lines;
}

/* Ratchet lines ROWS break, each said in WHY; lines that have improved by
 * more than their tolerance are said in BETTER. */
static guint ratchet_failures(GPtrArray *rows, GArray *ratchet, GString *why, GString *better) {
  guint failures = 0;
  for (guint i = 0; i < ratchet->len; i++) {
    const RatchetLine *l = &g_array_index(ratchet, RatchetLine, i);
    if (strcmp(l->quantity, "not_run") == 0) {
      int64_t not_run = 0;
      for (guint k = 0; k < rows->len; k++) {
        const PtsimCaseRow *r = rows->pdata[k];
        not_run += r->status == PTSIM_CASE_COMPARED && r->runs == 0;
      }
      if (not_run > l->rows) {
        failures++;
        g_string_append_printf(why,
                               "  %" G_GINT64_FORMAT " rows predicted not to run (recorded "
                               "%" G_GINT64_FORMAT ")\n",
                               not_run, l->rows);
      }
      continue;
    }
    PtsimCaseStats st;
    ptsim_megatron_cases_stats(rows, l->platform, NULL,
                               (PtsimCaseQuantity)ptsim_case_quantity_of(l->quantity), &st);
    if ((int64_t)st.n < l->rows || !(st.median_abs <= l->median_abs + l->tolerance)) {
      failures++;
      g_string_append_printf(why,
                             "  %s on %s: median |error| %.4f over %zu rows (recorded %.4f "
                             "+ %.4f over %" G_GINT64_FORMAT ")\n",
                             l->quantity, l->platform, st.median_abs, st.n, l->median_abs,
                             l->tolerance, l->rows);
    } else if (st.median_abs < l->median_abs - l->tolerance) {
      g_string_append_printf(better, "  %s on %s: %.4f, recorded %.4f\n", l->quantity, l->platform,
                             st.median_abs, l->median_abs);
    }
  }
  return failures;
}

static void scale_predictions(GPtrArray *rows, double factor) {
  for (guint i = 0; i < rows->len; i++) {
    PtsimCaseRow *r = rows->pdata[i];
    for (int q = 0; q < PTSIM_CASE_QUANTITIES; q++) r->predicted[q] *= factor;
  }
}

static void test_ratchet(void) {
  g_autofree char *dir = g_test_build_filename(G_TEST_DIST, "data", "megatron_cases", "cases",
                                               NULL);
  g_autoptr(GPtrArray) cases = new_cases();
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_megatron_cases_read(dir, NULL, cases, NULL, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(cases->len, >=, 40);
  g_autoptr(GArray) ratchet = read_ratchet();
  g_assert_cmpuint(ratchet->len, >=, 3);
  g_autoptr(GPtrArray) rows = ptsim_megatron_cases_predict(cases, NULL);
  g_autoptr(GString) why = g_string_new(NULL);
  g_autoptr(GString) better = g_string_new(NULL);
  guint failures = ratchet_failures(rows, ratchet, why, better);
  if (better->len)
    g_test_message("better than recorded (tighten tests/data/megatron_cases/ratchet.csv with "
                   "validate/megatron_cases_ratchet.py):\n%s",
                   better->str);
  if (failures) g_test_message("worse than recorded:\n%s", why->str);
  g_assert_cmpuint(failures, ==, 0);
  /* the ratchet catches predictions off by a factor of two either way */
  const double factors[] = {2.0, 0.25}; /* x2, then x0.5 of the original */
  for (size_t k = 0; k < G_N_ELEMENTS(factors); k++) {
    scale_predictions(rows, factors[k]);
    g_string_truncate(why, 0);
    g_assert_cmpuint(ratchet_failures(rows, ratchet, why, better), >, 0);
  }
}

/* The dataset names no held-out file and comes from one commit. */
static void test_dataset(void) {
  g_autofree char *dir = g_test_build_filename(G_TEST_DIST, "data", "megatron_cases", "cases",
                                               NULL);
  g_autoptr(GPtrArray) cases = new_cases();
  g_autoptr(GError) error = NULL;
  g_assert_true(ptsim_megatron_cases_read(dir, NULL, cases, NULL, &error));
  const char *commit = ((const PtsimMegatronCase *)cases->pdata[0])->commit;
  g_assert_cmpuint(strlen(commit), ==, 40);
  for (guint i = 0; i < cases->len; i++) {
    const PtsimMegatronCase *c = cases->pdata[i];
    g_assert_cmpstr(c->commit, ==, commit);
    g_assert_false(ptsim_megatron_case_held_out(c->config));
    g_assert_true(g_str_has_prefix(c->config, "tests/functional_tests/test_cases/"));
    g_assert_cmpuint(c->measured->len, >=, 1);
    for (guint k = 0; k < c->measured->len; k++) {
      const PtsimMegatronMeasured *m = c->measured->pdata[k];
      g_assert_false(ptsim_megatron_case_held_out(m->source));
      g_assert_true(strcmp(m->platform, "dgx_a100") == 0 || strcmp(m->platform, "dgx_h100") == 0);
      g_autofree char *want = g_strdup_printf("golden_values_%s_%s.json", m->environment,
                                              m->platform);
      g_assert_true(g_str_has_suffix(m->source, want));
    }
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/megatron-cases/yaml", test_yaml);
  g_test_add_func("/megatron-cases/golden-values", test_golden);
  g_test_add_func("/megatron-cases/fixture-tree", test_fixture_tree);
  g_test_add_func("/megatron-cases/record", test_record);
  g_test_add_func("/megatron-cases/held-out", test_held_out);
  g_test_add_func("/megatron-cases/dataset", test_dataset);
  g_test_add_func("/megatron-cases/ratchet", test_ratchet);
  return g_test_run();
}

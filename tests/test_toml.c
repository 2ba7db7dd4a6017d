/* test_toml.c — sim/io/toml.c: the subset parsed exactly (tables, keys,
 * lines, values), every construct outside it refused at its line by name,
 * and a deterministic mutation fuzz: any byte string either parses or fails
 * with one line "PATH:LINE: ..." and a line inside the text.
 *
 * Fixtures: tests/data/torchtitan via G_TEST_SRCDIR. */
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "config.h"
#include "toml.h"

static PtsimToml *parse(const char *text, GError **error) {
  return ptsim_toml_parse("t.toml", text, strlen(text), error);
}

static const PtsimTomlEntry *must(const PtsimToml *t, const char *table, const char *key, int line,
                                  PtsimTomlType type) {
  const PtsimTomlEntry *e = ptsim_toml_lookup(t, table, key);
  g_assert_nonnull(e);
  g_assert_cmpint(e->line, ==, line);
  g_assert_cmpint(e->value.type, ==, type);
  return e;
}

static void test_subset(void) {
  g_test_summary("every construct of the subset, with its table, key, line and exact value");
  const char *text = "# a comment\n"                             /* 1 */
                     "[training]\n"                              /* 2 */
                     "seq_len = 8_192   # trailing comment\n"    /* 3 */
                     "neg=-1\n"                                  /* 4 */
                     "lr = 3e-4\n"                               /* 5 */
                     "lr2 = 1.5E-4\n"                            /* 6 */
                     "beta = +0.95\n"                            /* 7 */
                     "on = true\r\n"                             /* 8: CRLF */
                     "  off = false\n"                           /* 9: indented */
                     "[ quantize . linear.float8 ]\n"            /* 10 */
                     "name = \"a\\tb\\\"c\\u00e9\\U0001F600\"\n" /* 11 */
                     "lit = 'C:\\path\\no escapes'\n"            /* 12 */
                     "fqns = [\"output\", 'router.gate',]\n"     /* 13: trailing comma */
                     "empty = []\n"                              /* 14 */
                     "multi = [\n"                               /* 15 */
                     "  1, # one\n"                              /* 16 */
                     "  2\n"                                     /* 17 */
                     "]\n"                                       /* 18 */
                     "after = 0\n";                              /* 19 */
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimToml) t = parse(text, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(t->entries->len, ==, 13);
  g_assert_cmpuint(t->tables->len, ==, 2);
  g_assert_cmpint(ptsim_toml_table_line(t, "training"), ==, 2);
  g_assert_cmpint(ptsim_toml_table_line(t, "quantize.linear.float8"), ==, 10);
  g_assert_cmpint(ptsim_toml_table_line(t, "quantize"), ==, 0);
  g_assert_cmpint(must(t, "training", "seq_len", 3, PTSIM_TOML_INTEGER)->value.integer, ==, 8192);
  g_assert_cmpint(must(t, "training", "neg", 4, PTSIM_TOML_INTEGER)->value.integer, ==, -1);
  g_assert_cmpfloat(must(t, "training", "lr", 5, PTSIM_TOML_FLOAT)->value.number, ==, 3e-4);
  g_assert_cmpfloat(must(t, "training", "lr2", 6, PTSIM_TOML_FLOAT)->value.number, ==, 1.5e-4);
  g_assert_cmpfloat(must(t, "training", "beta", 7, PTSIM_TOML_FLOAT)->value.number, ==, 0.95);
  g_assert_true(must(t, "training", "on", 8, PTSIM_TOML_BOOL)->value.boolean);
  g_assert_false(must(t, "training", "off", 9, PTSIM_TOML_BOOL)->value.boolean);
  const char *F = "quantize.linear.float8";
  g_assert_cmpstr(must(t, F, "name", 11, PTSIM_TOML_STRING)->value.string, ==,
                  "a\tb\"c\xc3\xa9\xf0\x9f\x98\x80");
  g_assert_cmpstr(must(t, F, "lit", 12, PTSIM_TOML_STRING)->value.string, ==,
                  "C:\\path\\no escapes");
  const PtsimTomlEntry *fqns = must(t, F, "fqns", 13, PTSIM_TOML_ARRAY);
  g_assert_cmpint(fqns->value.item_type, ==, PTSIM_TOML_STRING);
  g_assert_cmpuint(fqns->value.items->len, ==, 2);
  g_assert_cmpstr(((PtsimTomlValue *)g_ptr_array_index(fqns->value.items, 1))->string, ==,
                  "router.gate");
  g_assert_cmpuint(must(t, F, "empty", 14, PTSIM_TOML_ARRAY)->value.items->len, ==, 0);
  const PtsimTomlEntry *multi = must(t, F, "multi", 15, PTSIM_TOML_ARRAY);
  g_assert_cmpint(multi->value.item_type, ==, PTSIM_TOML_INTEGER);
  g_assert_cmpint(((PtsimTomlValue *)g_ptr_array_index(multi->value.items, 1))->integer, ==, 2);
  must(t, F, "after", 19, PTSIM_TOML_INTEGER);
  g_assert_null(ptsim_toml_lookup(t, "training", "nope"));
  /* a super-table header after its sub-table is legal TOML */
  g_autoptr(PtsimToml) t2 = parse("[a.b]\nx = 1\n[a]\ny = 2\n", &error);
  g_assert_no_error(error);
  g_assert_cmpint(must(t2, "a", "y", 4, PTSIM_TOML_INTEGER)->value.integer, ==, 2);
  /* an empty file and a comment-only file are empty configs */
  g_autoptr(PtsimToml) t3 = parse("", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(t3->entries->len, ==, 0);
}

static void refused(const char *text, int line, const char *needle) {
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimToml) t = ptsim_toml_parse("t.toml", text, strlen(text), &error);
  g_assert_null(t);
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE);
  g_test_message("%s", error->message);
  g_autofree char *where = g_strdup_printf("t.toml:%d: ", line);
  g_assert_true(g_str_has_prefix(error->message, where));
  if (strstr(error->message, needle) == NULL) g_assert_cmpstr(error->message, ==, needle);
  g_assert_null(strchr(error->message, '\n'));
}

static void test_refused(void) {
  g_test_summary(
      "what TOML has beyond the subset, and malformed TOML: refused at its line, by name");
  refused("[a]\nx = \"open\n", 2, "unterminated string");
  refused("[a]\nx = \"\"\"multi\"\"\"\n", 2, "multi-line strings");
  refused("[a]\nx = '''multi'''\n", 2, "multi-line strings");
  refused("[a]\nx = {y = 1}\n", 2, "inline tables");
  refused("[[a]]\n", 1, "arrays of tables");
  refused("[a]\nb.c = 1\n", 2, "dotted keys");
  refused("[a]\n\"q\" = 1\n", 2, "quoted keys");
  refused("[a]\nd = 1979-05-27\n", 2, "dates and times");
  refused("[a]\nt = 07:32:00\n", 2, "dates and times");
  refused("[a]\nh = 0xff\n", 2, "hex, octal and binary");
  refused("[a]\nf = inf\n", 2, "inf and nan");
  refused("[a]\nf = -nan\n", 2, "inf and nan");
  refused("[a]\nx = [[[1]], [2]]\n", 2, "arrays nested more than two deep");
  refused("[a]\nx = [[1], 2]\n", 2, "mixing arrays and integers");
  refused("[a]\nx = [1, \"two\"]\n", 2, "mixing integers and strings");
  refused("[a]\nx = [1, 2.0]\n", 2, "mixing integers and floats");
  refused("[a]\nx = 1\n\nx = 2\n", 4, "defined twice (first at line 2)");
  refused("[a]\n[b]\n[a]\n", 3, "table [a] is defined twice (first at line 1)");
  refused("[a]\nb = 1\n[a.b.c]\n", 3, "reuses the key 'b' (line 2)");
  refused("[a.b]\n[a]\nb = 1\n", 3, "already the table [a.b] (line 1)");
  refused("[a]\nx = 1\ry = 2\n", 2, "carriage return");
  refused("[a]\nx = 012\n", 2, "leading zero");
  refused("[a]\nx = 1__0\n", 2, "not a number");
  refused("[a]\nx = _1\n", 2, "bare word");
  refused("[a]\nx = 1.\n", 2, "without digits after '.'");
  refused("[a]\nx = 1e\n", 2, "without exponent digits");
  refused("[a]\nx = 99999999999999999999\n", 2, "64-bit range");
  refused("[a]\nx = 1e999\n", 2, "float out of range");
  refused("[a]\nx 1\n", 2, "without '='");
  refused("[a]\nx = 1 2\n", 2, "text after the value");
  refused("[a]\nx = [\n 1,\n 2\n", 2, "never closed");
  refused("[a]\nx = [1 2]\n", 2, "not followed by ',' or ']'");
  refused("[a]\nx = \"\\q\"\n", 2, "unknown escape");
  refused("[a]\nx = \"\\u00\"\n", 2, "without its hex digits");
  refused("[a]\nx = \"\\u0000\"\n", 2, "NUL");
  refused("[a]\nx = hello\n", 2, "strings need quotes");
  refused("[a]\nx =\n", 2, "no value");
  refused("[a\n", 1, "not closed by ']'");
  refused("[]\n", 1, "no key");
  refused("= 1\n", 1, "no key");
  refused("[a]\nx = \"tab\tok but bell\a\"\n", 2, "control character");
  refused("[a]\nx = \"\xff\"\n", 2, "not UTF-8");
  /* a NUL byte, found before parsing, at its line */
  g_autoptr(GError) error = NULL;
  g_assert_null(ptsim_toml_parse("t.toml", "[a]\nx = 1\0\n", 11, &error));
  g_assert_true(g_str_has_prefix(error->message, "t.toml:2: a NUL byte"));
}

static void test_load(void) {
  g_test_summary("a file: the error names PATH:LINE; a missing file is NOT_FOUND");
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "torchtitan",
                                                "bad_syntax.toml", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_null(ptsim_toml_load(path, &error));
  g_autofree char *where = g_strdup_printf("%s:7: an unterminated string", path);
  g_assert_true(g_str_has_prefix(error->message, where));
  g_clear_error(&error);
  g_assert_null(ptsim_toml_load("/nonexistent/x.toml", &error));
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND);
  g_clear_error(&error);
  g_autofree char *good = g_test_build_filename(G_TEST_DIST, "data", "torchtitan",
                                                "llama3_8b_ddp.toml", NULL);
  g_autoptr(PtsimToml) t = ptsim_toml_load(good, &error);
  g_assert_no_error(error);
  g_assert_cmpint(must(t, "compile", "components", 44, PTSIM_TOML_ARRAY)->value.items->len, ==, 2);
}

/* Lines of TEXT (a last line without '\n' counts). */
static int count_lines(const char *text, gsize len) {
  int n = 1;
  for (gsize i = 0; i < len; i++)
    if (text[i] == '\n') n++;
  return n;
}

/* TRUE when TEXT was refused (as the contract says). */
static gboolean fuzz_one(GString *text) {
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimToml) t = ptsim_toml_parse("f.toml", text->str, text->len, &error);
  if (t != NULL) {
    g_assert_null(error);
    return FALSE;
  }
  g_assert_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE);
  g_assert_true(g_str_has_prefix(error->message, "f.toml:"));
  int line = atoi(error->message + strlen("f.toml:"));
  g_assert_cmpint(line, >=, 1);
  g_assert_cmpint(line, <=, count_lines(text->str, text->len));
  g_assert_null(strchr(error->message, '\n'));
  return TRUE;
}

static void test_fuzz(void) {
  g_test_summary(
      "deterministic mutations of the fixtures: parse, or one line PATH:LINE inside the text");
  static const char *const files[] = {"llama3_8b_ddp.toml", "llama3_70b_hsdp_tp.toml",
                                      "llama3_405b_pp.toml"};
  static const char alphabet[] = "[]=\"'#,.{}\n\r\t \\_-+e0123456789abtrufl\xc3\xff";
  GRand *rng = g_rand_new_with_seed(20260824);
  int refused_count = 0, runs = 0;
  for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
    g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "torchtitan", files[f],
                                                  NULL);
    g_autofree char *orig = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &orig, &len, NULL));
    for (int i = 0; i < 3000; i++) {
      g_autoptr(GString) text = g_string_new_len(orig, (gssize)len);
      int edits = 1 + g_rand_int_range(rng, 0, 4);
      for (int k = 0; k < edits && text->len > 0; k++) {
        gsize at = (gsize)g_rand_int_range(rng, 0, (gint32)text->len);
        switch (g_rand_int_range(rng, 0, 4)) {
        case 0:
          text->str[at] = alphabet[g_rand_int_range(rng, 0, sizeof alphabet - 1)];
          break;
        case 1: {
          gsize n = 1 + (gsize)g_rand_int_range(rng, 0, 8);
          g_string_erase(text, (gssize)at, (gssize)MIN(n, text->len - at));
          break;
        }
        case 2:
          g_string_insert_c(text, (gssize)at,
                            alphabet[g_rand_int_range(rng, 0, sizeof alphabet - 1)]);
          break;
        default:
          g_string_truncate(text, at);
          break;
        }
      }
      refused_count += fuzz_one(text) ? 1 : 0;
      runs++;
    }
  }
  g_rand_free(rng);
  g_test_message("%d mutated texts, %d refused", runs, refused_count);
  g_assert_cmpint(refused_count, >, 0);
  g_assert_cmpint(refused_count, <, runs);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/toml/subset", test_subset);
  g_test_add_func("/toml/refused", test_refused);
  g_test_add_func("/toml/load", test_load);
  g_test_add_func("/toml/fuzz", test_fuzz);
  return g_test_run();
}

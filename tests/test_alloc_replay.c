/* test_alloc_replay.c — the "# reserved N" observations of the trace format
 * (validate/alloc_trace_io.c) and the sampled replay (sim/core/alloc_trace.c) that
 * `ptsim alloc-replay` compares them with. */
#include <glib.h>
#include "alloc_trace.h"
#include "alloc_trace_io.h"

#define MIB ((int64_t)1048576)

static int64_t obs(const PtsimAllocTrace *t, guint e) {
  return g_array_index(t->observed_reserved, int64_t, e);
}

static void test_observations(void) {
  g_test_summary("'# reserved N' attaches to the latest event (same line or before); one "
                 "before any event is ignored; a later one wins; other comments stay plain");
  const char *text = "# reserved 7\n"                    /* before any event: ignored */
                     "alloc a 10 0 # reserved 2097152\n" /* event 0, same line */
                     "# reserved for later\n"            /* plain comment */
                     "alloc b 20 0\n"                    /* event 1: none */
                     "free a\n"                          /* event 2 */
                     "  #   reserved   5  \n"
                     "#reserved 6\n"        /* later one wins */
                     "# reserved 9 bytes\n" /* three words: plain */
                     "empty_cache\n";       /* event 3: none */
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimAllocTrace) t = ptsim_alloc_trace_parse(text, -1, "o.trace", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(t->events->len, ==, 4);
  g_assert_nonnull(t->observed_reserved);
  g_assert_cmpuint(t->observed_reserved->len, ==, 4);
  g_assert_cmpint(t->num_observed, ==, 2);
  g_assert_cmpint(obs(t, 0), ==, 2097152);
  g_assert_cmpint(obs(t, 1), ==, -1);
  g_assert_cmpint(obs(t, 2), ==, 6);
  g_assert_cmpint(obs(t, 3), ==, -1);

  /* one number that is not a byte count is a broken observation, at its line */
  const char *const broken[] = {"alloc a 1 0\n# reserved -5\n", "alloc a 1 0\n#reserved 1e9\n"};
  for (size_t k = 0; k < G_N_ELEMENTS(broken); k++) {
    g_autoptr(GError) bad = NULL;
    g_assert_null(ptsim_alloc_trace_parse(broken[k], -1, "b.trace", &bad));
    g_assert_error(bad, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_PARSE);
    g_assert_true(g_str_has_prefix(bad->message, "b.trace:2: "));
  }

  g_autoptr(PtsimAllocTrace)
      plain = ptsim_alloc_trace_parse("# just a comment\nalloc a 1 0\n", -1, "p.trace", &error);
  g_assert_no_error(error);
  g_assert_null(plain->observed_reserved);
  g_assert_cmpint(plain->num_observed, ==, 0);
}

static void test_sampled(void) {
  g_test_summary("reserved after each event: 102 MiB for 100 MiB + 1 B, +2 MiB for a small "
                 "alloc, unchanged by frees, 0 after empty_cache; same result as the plain replay");
  const char *text = "alloc a 104857601 0\nalloc b 1000 0\nfree a\nfree b\nempty_cache\n";
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimAllocTrace) t = ptsim_alloc_trace_parse(text, -1, "s.trace", &error);
  g_assert_no_error(error);
  int64_t after[5] = {-1, -1, -1, -1, -1};
  PtsimAllocReplay r, plain;
  g_assert_true(ptsim_alloc_trace_replay(t, NULL, 1e12, after, &r, &error));
  g_assert_true(ptsim_alloc_trace_replay(t, NULL, 1e12, NULL, &plain, &error));
  g_assert_cmpint(after[0], ==, 102 * MIB);
  g_assert_cmpint(after[1], ==, 104 * MIB);
  g_assert_cmpint(after[2], ==, 104 * MIB);
  g_assert_cmpint(after[3], ==, 104 * MIB);
  g_assert_cmpint(after[4], ==, 0);
  g_assert_cmpint(r.peak_reserved_bytes, ==, plain.peak_reserved_bytes);
  g_assert_cmpint(r.peak_allocated_bytes, ==, plain.peak_allocated_bytes);
  g_assert_cmpint(r.events, ==, 5);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/alloc-replay/observations", test_observations);
  g_test_add_func("/alloc-replay/sampled", test_sampled);
  return g_test_run();
}

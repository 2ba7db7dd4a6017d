/* test_alloc_trace.c — the allocator trace: its parser's errors and the
 * replay of a trace through the caching-allocator emulation
 * (sim/core/alloc_trace.c, validate/alloc_trace_io.c). The allocator's own
 * rules are test_alloc.c's. */
#include <glib.h>
#include <string.h>
#include "alloc.h"
#include "alloc_trace.h"
#include "alloc_trace_io.h"

#define MIB ((int64_t)1048576)
#define GIB ((int64_t)1073741824)

static void expect_parse_error(const char *text, const char *needle) {
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimAllocTrace) t = ptsim_alloc_trace_parse(text, -1, "t.trace", &error);
  g_assert_null(t);
  g_assert_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_PARSE);
  if (strstr(error->message, needle) == NULL)
    g_test_message("message '%s' lacks '%s'", error->message, needle);
  g_assert_nonnull(strstr(error->message, needle));
}

static void test_trace_parse_errors(void) {
  g_test_summary("Trace parser: each malformed line is one error naming file:line");
  expect_parse_error("# c\nalloc a 10 0\nfrob a\n", "t.trace:3: unknown event 'frob'");
  expect_parse_error("alloc a 10\n", "t.trace:1: 'alloc' takes ID SIZE STREAM, got 2 fields");
  expect_parse_error("alloc a 10 0 9\n", "t.trace:1: 'alloc' takes ID SIZE STREAM, got 4");
  expect_parse_error("\n\nalloc a ten 0\n", "t.trace:3: size 'ten'");
  expect_parse_error("alloc a -5 0\n", "t.trace:1: size '-5'");
  expect_parse_error("alloc a 5 -1\n", "t.trace:1: stream '-1'");
  expect_parse_error("alloc a 5 s\n", "t.trace:1: stream 's'");
  expect_parse_error("alloc a 5 0\nalloc a 6 0\n", "t.trace:2: alloc of 'a', which is still "
                                                   "live (allocated at line 1)");
  expect_parse_error("alloc a 5 0\nfree b\n", "t.trace:2: free of 'b', which is not live "
                                              "(never allocated)");
  expect_parse_error("alloc a 5 0\nfree a\nfree a\n", "t.trace:3: free of 'a', which is not "
                                                      "live (already freed)");
  expect_parse_error("empty_cache now\n", "t.trace:1: 'empty_cache' takes no fields");
  expect_parse_error("free\n", "t.trace:1: 'free' takes ID, got 0 fields");

  /* accepted: comments, blanks, tabs, CRLF, reuse of an id after free */
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimAllocTrace) t = ptsim_alloc_trace_parse(
      "# header\r\n\r\nalloc\tx 512 0 # trailing\r\nfree x\nalloc x 1024 1\nempty_cache\n", -1,
      "ok.trace", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(t->events->len, ==, 4);
  g_assert_cmpint(t->num_ids, ==, 1);
  g_assert_cmpint(t->max_live, ==, 1);
  PtsimAllocEvent *e = (PtsimAllocEvent *)(void *)t->events->data;
  g_assert_cmpint(e[0].kind, ==, PTSIM_ALLOC_EVENT_ALLOC);
  g_assert_cmpint(e[0].line, ==, 3);
  g_assert_cmpint(e[2].size_bytes, ==, 1024);
  g_assert_cmpint(e[2].stream, ==, 1);
  g_assert_cmpint(e[3].kind, ==, PTSIM_ALLOC_EVENT_EMPTY_CACHE);

  g_autoptr(GError) nf = NULL;
  g_autoptr(PtsimAllocTrace) none = ptsim_alloc_trace_load("/nonexistent/x.trace", &nf);
  g_assert_null(none);
  g_assert_error(nf, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_NOT_FOUND);
}

static void test_trace_replay(void) {
  g_test_summary("Replay of tests/data/alloc_small.trace: peaks, fragmentation, inactive "
                 "split bytes and the first OOM's line, worked by hand");
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "alloc_small.trace", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimAllocTrace) t = ptsim_alloc_trace_load(path, &error);
  g_assert_no_error(error);
  PtsimAllocReplay r;
  g_assert_true(ptsim_alloc_trace_replay(t, NULL, (double)(220 * MIB), NULL, &r, &error));
  g_assert_no_error(error);
  /* peak allocated: big (100 MiB + 512) + m1 + m2 (5 MiB each) + s1 (512) */
  g_assert_cmpint(r.peak_allocated_bytes, ==, 110 * MIB + 1024);
  /* peak reserved: 102 + 20 + 2 MiB */
  g_assert_cmpint(r.peak_reserved_bytes, ==, 124 * MIB);
  g_assert_cmpfloat_with_epsilon(r.fragmentation, 1.0 - (110.0 * MIB + 1024.0) / (124.0 * MIB),
                                 1e-12);
  /* the 200 MiB alloc on line 17 cannot fit: 22 MiB reserved, all pinned */
  g_assert_cmpint(r.ooms, ==, 1);
  g_assert_cmpint(r.first_oom_line, ==, 17);
  g_assert_cmpint(r.first_oom_size_bytes, ==, 200 * MIB);
  g_assert_cmpint(r.first_oom_reserved_bytes, ==, 22 * MIB);
  g_assert_cmpint(r.skipped_frees, ==, 1);
  /* end: 15 MiB free in the 20 MiB segment, 2 MiB - 512 in s1's small
   * segment, 1 MiB in the stream-1 small segment */
  g_assert_cmpint(r.inactive_split_bytes, ==, 18 * MIB - 512);
  /* peak (after "free m1"): big's tail + 15 MiB + s1's segment rest */
  g_assert_cmpint(r.inactive_split_bytes_peak, ==, 19 * MIB - 1024);
  g_assert_cmpint(r.stats.reserved_bytes, ==, 24 * MIB);
  g_assert_cmpint(r.allocs, ==, 6);
  g_assert_cmpint(r.frees, ==, 3);
  g_assert_cmpint(r.empty_caches, ==, 1);
  g_assert_cmpint(r.error_event, ==, -1);

  /* with room for it, no OOM */
  g_assert_true(ptsim_alloc_trace_replay(t, NULL, (double)(80 * GIB), NULL, &r, &error));
  g_assert_cmpint(r.ooms, ==, 0);
  g_assert_cmpint(r.first_oom_line, ==, 0);
  g_assert_cmpint(r.peak_reserved_bytes, ==, 224 * MIB);

  /* bad options are a replay error */
  PtsimAllocOptions o;
  ptsim_alloc_options_init(&o);
  o.max_split_size_bytes = MIB;
  g_assert_false(ptsim_alloc_trace_replay(t, &o, (double)(80 * GIB), NULL, &r, &error));
  g_assert_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_REPLAY);
}

static void test_replay_core(void) {
  g_test_summary("Core replay: bad ids stop it at the event; the storage-growing wrapper "
                 "retries after running out of slots");
  PtsimAllocBlock slots[16];
  PtsimAllocator a;
  g_assert_cmpint(ptsim_alloc_init(&a, NULL, 1e12, slots, 16), ==, 0);
  PtsimAllocEvent ev[3];
  memset(ev, 0, sizeof ev);
  ev[0].kind = PTSIM_ALLOC_EVENT_ALLOC;
  ev[0].id = 0;
  ev[0].size_bytes = 4096;
  ev[1].kind = PTSIM_ALLOC_EVENT_FREE;
  ev[1].id = 1; /* never allocated */
  ev[2].kind = PTSIM_ALLOC_EVENT_EMPTY_CACHE;
  int32_t handles[2];
  PtsimAllocReplay r;
  g_assert_cmpint(ptsim_alloc_replay(&a, ev, 3, handles, 2, NULL, &r), ==, PTSIM_ALLOC_ERR_HANDLE);
  g_assert_cmpint(r.error_event, ==, 1);
  g_assert_cmpint(r.events, ==, 1);
  ev[1].id = 5; /* out of range */
  g_assert_cmpint(ptsim_alloc_replay(&a, ev + 1, 1, handles, 2, NULL, &r), ==,
                  PTSIM_ALLOC_ERR_HANDLE);

  /* one live tensor at a time, ever larger: nothing is reused, 1500
   * cached segments pile up, more than the first guess of slots (2 x
   * max_live + 1024); the wrapper doubles the storage and replays */
  GString *s = g_string_new("");
  for (int i = 0; i < 1500; i++)
    g_string_append_printf(s, "alloc t %" G_GINT64_FORMAT " 0\nfree t\n",
                           (10 + 2 * (int64_t)i) * MIB);
  g_autoptr(GError) error = NULL;
  g_autoptr(PtsimAllocTrace) t = ptsim_alloc_trace_parse(s->str, -1, "gen", &error);
  g_string_free(s, TRUE);
  g_assert_no_error(error);
  g_assert_cmpint(t->max_live, ==, 1);
  g_assert_true(ptsim_alloc_trace_replay(t, NULL, 1e16, NULL, &r, &error));
  g_assert_no_error(error);
  g_assert_cmpint(r.allocs, ==, 1500);
  g_assert_cmpint(r.frees, ==, 1500);
  g_assert_cmpint(r.stats.segments, ==, 1500);
  g_assert_cmpint(r.stats.allocated_bytes, ==, 0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/alloc/trace/parse-errors", test_trace_parse_errors);
  g_test_add_func("/alloc/trace/replay", test_trace_replay);
  g_test_add_func("/alloc/trace/replay-core", test_replay_core);
  return g_test_run();
}

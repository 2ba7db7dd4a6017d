/* test_alloc.c — the caching-allocator emulation (sim/core/alloc.c) and its
 * options (the trace's parser and replay are test_alloc_trace.c's).
 *
 * Each rule of shared/reference/pytorch_caching_allocator.md is checked
 * against a sequence worked out by hand in the comments; ptsim_alloc_check()
 * runs after every step of those and of the random streams. */
#include <glib.h>
#include <string.h>
#include "alloc.h"

#define KIB ((int64_t)1024)
#define MIB ((int64_t)1048576)
#define GIB ((int64_t)1073741824)

/* ---- an allocator with its own slots ---- */

typedef struct {
  PtsimAllocator a;
  PtsimAllocBlock *blocks;
} Fx;

/* nblocks: the blocks it may hold at once. */
static void fx_init(Fx *f, const PtsimAllocOptions *opts, int64_t capacity, int32_t nblocks) {
  int32_t storage = (int32_t)ptsim_alloc_storage_slots(nblocks);
  f->blocks = g_new0(PtsimAllocBlock, storage);
  g_assert_cmpint(ptsim_alloc_init(&f->a, opts, (double)capacity, f->blocks, storage), ==, 0);
  g_assert_cmpint(f->a.capacity_blocks, ==, nblocks);
  g_assert_cmpint(ptsim_alloc_check(&f->a), ==, 0);
}

static void fx_clear(Fx *f) { g_free(f->blocks); }

/* malloc that must succeed, checked */
static int32_t m(Fx *f, int64_t size, int32_t stream) {
  int32_t h = ptsim_alloc_malloc(&f->a, size, stream);
  g_assert_cmpint(h, >=, 0);
  g_assert_cmpint(ptsim_alloc_check(&f->a), ==, 0);
  return h;
}

static void fr(Fx *f, int32_t h) {
  g_assert_cmpint(ptsim_alloc_free(&f->a, h), ==, 0);
  g_assert_cmpint(ptsim_alloc_check(&f->a), ==, 0);
}

static void empty(Fx *f) {
  ptsim_alloc_empty_cache(&f->a);
  g_assert_cmpint(ptsim_alloc_check(&f->a), ==, 0);
}

static int64_t bsize(Fx *f, int32_t h) {
  const PtsimAllocBlock *b = ptsim_alloc_block(&f->a, h);
  g_assert_nonnull(b);
  return b->size;
}

static int64_t baddr(Fx *f, int32_t h) {
  const PtsimAllocBlock *b = ptsim_alloc_block(&f->a, h);
  g_assert_nonnull(b);
  return b->addr;
}

#define ST(f) ((f)->a.stats)

/* ---- rounding and segment sizes (A3, A4) ---- */

static void test_round_size(void) {
  g_test_summary("round_size: 512 B minimum and multiple; power-2 divisions per interval "
                 "(1200 -> 1280 with 4; 512 x divisions floor); invalid divisions refused");
  PtsimAllocOptions o;
  ptsim_alloc_options_init(&o);
  g_assert_cmpint(ptsim_alloc_round_size(&o, 0), ==, 512);
  g_assert_cmpint(ptsim_alloc_round_size(&o, 1), ==, 512);
  g_assert_cmpint(ptsim_alloc_round_size(&o, 512), ==, 512);
  g_assert_cmpint(ptsim_alloc_round_size(&o, 513), ==, 1024);
  g_assert_cmpint(ptsim_alloc_round_size(&o, 1200 * MIB + 1), ==, 1200 * MIB + 512);

  /* the docs' example on the division function itself */
  g_assert_cmpint(ptsim_alloc_next_division(1200, 4), ==, 1280);
  g_assert_cmpint(ptsim_alloc_next_division(1025, 4), ==, 1280);
  g_assert_cmpint(ptsim_alloc_next_division(1537, 4), ==, 1792);
  g_assert_cmpint(ptsim_alloc_next_division(1793, 4), ==, 2048);
  g_assert_cmpint(ptsim_alloc_next_division(1024, 4), ==, 1024); /* power of 2 */
  g_assert_cmpint(ptsim_alloc_next_division(3, 8), ==, 4);       /* step 0: 2 x floor */

  ptsim_alloc_options_set_divisions(&o, 4);
  /* 1200 B is not above 512 x 4, so only the 512 B rule applies */
  g_assert_cmpint(ptsim_alloc_round_size(&o, 1200), ==, 1536);
  g_assert_cmpint(ptsim_alloc_round_size(&o, 3000), ==, 3072); /* 2048 + k x 512 */
  g_assert_cmpint(ptsim_alloc_round_size(&o, 1200 * MIB), ==, 1280 * MIB);
  g_assert_cmpint(ptsim_alloc_round_size(&o, 1024 * MIB), ==, 1024 * MIB);

  /* per interval: only [1 GiB, 2 GiB) (index 30 - 20 = 10) has 4 divisions */
  ptsim_alloc_options_init(&o);
  o.roundup_power2_divisions[10] = 4;
  g_assert_cmpint(ptsim_alloc_round_size(&o, 1200 * MIB), ==, 1280 * MIB);
  g_assert_cmpint(ptsim_alloc_round_size(&o, 600 * MIB + 1), ==, 600 * MIB + 512);
  /* index 0 covers sizes below 1 MiB too; the last covers everything above */
  ptsim_alloc_options_init(&o);
  o.roundup_power2_divisions[0] = 2;
  g_assert_cmpint(ptsim_alloc_round_size(&o, 300 * KIB), ==, 384 * KIB); /* 256 + 128 */
  o.roundup_power2_divisions[15] = 2;
  g_assert_cmpint(ptsim_alloc_round_size(&o, 100 * GIB), ==, 128 * GIB);

  PtsimAllocBlock slots[8];
  PtsimAllocator a;
  ptsim_alloc_options_init(&o);
  o.roundup_power2_divisions[3] = 3;
  g_assert_cmpint(ptsim_alloc_init(&a, &o, 1e9, slots, 8), ==, PTSIM_ALLOC_ERR_ARGS);
  ptsim_alloc_options_init(&o);
  o.max_split_size_bytes = 19 * MIB; /* minimum is 20 MiB */
  g_assert_cmpint(ptsim_alloc_init(&a, &o, 1e9, slots, 8), ==, PTSIM_ALLOC_ERR_ARGS);
  ptsim_alloc_options_init(&o);
  o.garbage_collection_threshold = 1.0;
  g_assert_cmpint(ptsim_alloc_init(&a, &o, 1e9, slots, 8), ==, PTSIM_ALLOC_ERR_ARGS);
  g_assert_cmpint(ptsim_alloc_init(&a, NULL, -1.0, slots, 8), ==, PTSIM_ALLOC_ERR_ARGS);
  g_assert_cmpint(ptsim_alloc_init(&a, NULL, 1e9, slots, 2), ==, PTSIM_ALLOC_ERR_ARGS);
}

static void test_segment_size(void) {
  g_test_summary("get_allocation_size: 2 MiB up to 1 MiB, 20 MiB below 10 MiB, else rounded "
                 "to 2 MiB");
  g_assert_cmpint(ptsim_alloc_segment_size(512), ==, 2 * MIB);
  g_assert_cmpint(ptsim_alloc_segment_size(MIB), ==, 2 * MIB);
  g_assert_cmpint(ptsim_alloc_segment_size(MIB + 512), ==, 20 * MIB);
  g_assert_cmpint(ptsim_alloc_segment_size(10 * MIB - 512), ==, 20 * MIB);
  g_assert_cmpint(ptsim_alloc_segment_size(10 * MIB), ==, 10 * MIB);
  g_assert_cmpint(ptsim_alloc_segment_size(11 * MIB), ==, 12 * MIB);
  g_assert_cmpint(ptsim_alloc_segment_size(100 * MIB + 512), ==, 102 * MIB);
}

/* ---- hand-worked sequences ---- */

static void test_large_tail(void) {
  g_test_summary("100 MiB + 1 B: a 102 MiB segment whose 2 MiB - 512 B tail is split off, "
                 "cached, counted inactive, and reused");
  Fx f;
  fx_init(&f, NULL, 80 * GIB, 64);
  int32_t big = m(&f, 100 * MIB + 1, 0);
  g_assert_cmpint(bsize(&f, big), ==, 100 * MIB + 512);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 102 * MIB);
  g_assert_cmpint(ST(&f).allocated_bytes, ==, 100 * MIB + 512);
  g_assert_cmpint(ST(&f).requested_bytes, ==, 100 * MIB + 1);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 2 * MIB - 512);
  g_assert_cmpint(ST(&f).num_device_alloc, ==, 1);
  /* 1.5 MiB (large pool) fits the tail; 0.5 MiB - 512 left is not > 1 MiB:
   * the whole tail is handed out */
  int32_t t = m(&f, 3 * MIB / 2, 0);
  g_assert_cmpint(baddr(&f, t), ==, baddr(&f, big) + 100 * MIB + 512);
  g_assert_cmpint(bsize(&f, t), ==, 2 * MIB - 512);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 0);
  g_assert_cmpint(ST(&f).num_device_alloc, ==, 1);
  /* freeing both coalesces the segment; empty_cache gives it back */
  fr(&f, big);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 100 * MIB + 512);
  fr(&f, t);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 0);
  g_assert_cmpint(f.a.free_count, ==, 1);
  empty(&f);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 0);
  g_assert_cmpint(ST(&f).reserved_bytes_peak, ==, 102 * MIB);
  g_assert_cmpint(ST(&f).num_device_free, ==, 1);
  fx_clear(&f);
}

static void test_one_mib_boundary(void) {
  g_test_summary("1 MiB goes to the small pool (2 MiB segment, two per segment); 1 MiB + 1 B "
                 "to the large pool (20 MiB segment)");
  Fx f;
  fx_init(&f, NULL, 80 * GIB, 64);
  int32_t a = m(&f, MIB, 0);
  g_assert_cmpint(ptsim_alloc_block(&f.a, a)->pool, ==, PTSIM_ALLOC_POOL_SMALL);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 2 * MIB);
  int32_t b = m(&f, MIB, 0); /* the 1 MiB remainder (>= 512 B) was split off */
  g_assert_cmpint(baddr(&f, b), ==, baddr(&f, a) + MIB);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 2 * MIB);
  int32_t c = m(&f, MIB + 1, 0);
  g_assert_cmpint(ptsim_alloc_block(&f.a, c)->pool, ==, PTSIM_ALLOC_POOL_LARGE);
  g_assert_cmpint(bsize(&f, c), ==, MIB + 512);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 22 * MIB);
  /* small requests never take large-pool blocks, even with 19 MiB cached */
  int32_t d = m(&f, 4096, 0);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 24 * MIB);
  g_assert_cmpint(ST(&f).segments, ==, 3);
  (void)d;
  fx_clear(&f);
}

static void test_medium_carves_20mib(void) {
  g_test_summary("5 MiB requests carve one 20 MiB segment (four fit, the last unsplit); a "
                 "large-pool remainder of exactly 1 MiB is not split off");
  Fx f;
  fx_init(&f, NULL, 80 * GIB, 64);
  int32_t h[5];
  h[0] = m(&f, 5 * MIB, 0);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 20 * MIB);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 15 * MIB);
  h[1] = m(&f, 5 * MIB, 0);
  g_assert_cmpint(baddr(&f, h[1]), ==, baddr(&f, h[0]) + 5 * MIB);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 20 * MIB);
  g_assert_cmpint(ST(&f).num_device_alloc, ==, 1);
  h[2] = m(&f, 5 * MIB, 0);
  h[3] = m(&f, 5 * MIB, 0); /* exactly the 5 MiB left */
  g_assert_cmpint(ST(&f).num_device_alloc, ==, 1);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 0);
  g_assert_cmpint(f.a.free_count, ==, 0);
  h[4] = m(&f, 5 * MIB, 0);
  g_assert_cmpint(ST(&f).num_device_alloc, ==, 2);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 40 * MIB);
  for (int i = 0; i < 5; i++) fr(&f, h[i]);
  empty(&f);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 0);

  /* 19 MiB: its own 20 MiB segment; 1 MiB left is not > 1 MiB */
  int32_t x = m(&f, 19 * MIB, 0);
  g_assert_cmpint(bsize(&f, x), ==, 20 * MIB);
  g_assert_cmpint(ST(&f).allocated_bytes, ==, 20 * MIB);
  g_assert_cmpint(ST(&f).requested_bytes, ==, 19 * MIB);
  /* 18 MiB + 512 B: 2 MiB - 512 B left is > 1 MiB: split */
  int32_t y = m(&f, 18 * MIB + 512, 0);
  g_assert_cmpint(bsize(&f, y), ==, 18 * MIB + 512);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 2 * MIB - 512);
  fx_clear(&f);
}

static void test_small_rounding(void) {
  g_test_summary("Small requests round to 512 B and pack 4096 to a 2 MiB segment; the 4097th "
                 "opens a second");
  Fx f;
  fx_init(&f, NULL, 80 * GIB, 4200);
  int32_t first = m(&f, 1, 0);
  g_assert_cmpint(bsize(&f, first), ==, 512);
  g_assert_cmpint(ST(&f).allocated_bytes, ==, 512);
  g_assert_cmpint(ST(&f).requested_bytes, ==, 1);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 2 * MIB);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 2 * MIB - 512);
  for (int i = 1; i < 4096; i++) {
    int32_t h = ptsim_alloc_malloc(&f.a, 100 + i % 400, 0);
    g_assert_cmpint(h, >=, 0);
  }
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, 0);
  g_assert_cmpint(ST(&f).num_device_alloc, ==, 1);
  g_assert_cmpint(ST(&f).allocated_bytes, ==, 2 * MIB);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 0);
  m(&f, 512, 0);
  g_assert_cmpint(ST(&f).num_device_alloc, ==, 2);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 4 * MIB);
  fx_clear(&f);
}

static void test_streams_not_shared(void) {
  g_test_summary("A block freed on stream 0 is never handed to stream 1; stream 0 reuses it");
  Fx f;
  fx_init(&f, NULL, 80 * GIB, 64);
  int32_t a = m(&f, 5 * MIB, 0);
  int64_t addr = baddr(&f, a);
  fr(&f, a);
  int32_t b = m(&f, 5 * MIB, 1);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 40 * MIB);
  g_assert_cmpint(ptsim_alloc_block(&f.a, b)->stream, ==, 1);
  g_assert_cmpint(baddr(&f, b), !=, addr);
  int32_t c = m(&f, 5 * MIB, 0);
  g_assert_cmpint(baddr(&f, c), ==, addr);
  g_assert_cmpint(ST(&f).num_device_alloc, ==, 2);
  /* small pool likewise */
  int32_t s0 = m(&f, 4 * KIB, 2);
  fr(&f, s0);
  m(&f, 4 * KIB, 3);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 44 * MIB);
  fx_clear(&f);
}

static void test_coalesce(void) {
  g_test_summary("Freed neighbours merge within a segment; a split segment is pinned until "
                 "it is one free block again, then empty_cache frees it");
  Fx f;
  fx_init(&f, NULL, 80 * GIB, 64);
  int32_t A = m(&f, 5 * MIB, 0), B = m(&f, 5 * MIB, 0), C = m(&f, 5 * MIB, 0);
  /* A B C [5 MiB free] */
  fr(&f, A);
  g_assert_cmpint(f.a.free_count, ==, 2);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 10 * MIB);
  fr(&f, C); /* C merges with the free tail: [A free] B [10 MiB free] */
  g_assert_cmpint(f.a.free_count, ==, 2);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 15 * MIB);
  empty(&f); /* B pins the segment */
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 20 * MIB);
  g_assert_cmpint(ST(&f).num_device_free, ==, 0);
  /* a 10 MiB request takes the 10 MiB hole whole (best fit), not a new segment */
  int32_t D = m(&f, 10 * MIB, 0);
  g_assert_cmpint(baddr(&f, D), ==, baddr(&f, B) + 5 * MIB);
  fr(&f, D);
  fr(&f, B); /* merges with both neighbours */
  g_assert_cmpint(f.a.free_count, ==, 1);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 0);
  g_assert_cmpint(f.a.blocks[f.a.order[0]].size, ==, 20 * MIB);
  empty(&f);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 0);
  g_assert_cmpint(ST(&f).segments, ==, 0);
  g_assert_cmpint(ST(&f).num_device_free, ==, 1);
  /* different segments never merge, even when their addresses touch */
  int32_t P = m(&f, 20 * MIB, 0), Q = m(&f, 20 * MIB, 0);
  g_assert_cmpint(baddr(&f, Q), ==, baddr(&f, P) + 20 * MIB);
  fr(&f, P);
  fr(&f, Q);
  g_assert_cmpint(f.a.free_count, ==, 2);
  fx_clear(&f);
}

static void test_reset_peaks(void) {
  g_test_summary("reset_peaks: the high-water marks restart from what is held now");
  Fx f;
  fx_init(&f, NULL, 80 * GIB, 64);
  int32_t A = m(&f, 30 * MIB, 0), B = m(&f, 40 * MIB, 0);
  fr(&f, B); /* 70 MiB was the peak; 30 allocated, 70 reserved (B is cached) */
  g_assert_cmpint(ST(&f).allocated_bytes_peak, ==, 70 * MIB);
  ptsim_alloc_reset_peaks(&f.a);
  g_assert_cmpint(ST(&f).allocated_bytes_peak, ==, 30 * MIB);
  g_assert_cmpint(ST(&f).requested_bytes_peak, ==, 30 * MIB);
  g_assert_cmpint(ST(&f).reserved_bytes_peak, ==, 70 * MIB);
  int32_t C = m(&f, 10 * MIB, 0); /* from B's cached segment: no new reserve */
  g_assert_cmpint(ST(&f).allocated_bytes_peak, ==, 40 * MIB);
  g_assert_cmpint(ST(&f).reserved_bytes_peak, ==, 70 * MIB);
  fr(&f, C);
  fr(&f, A);
  fx_clear(&f);
}

static void test_max_split_size(void) {
  g_test_summary("max_split_size: oversize blocks are not split, small requests skip them, "
                 "oversize requests accept < 20 MiB slack; release of oversize blocks first");
  PtsimAllocOptions o;
  ptsim_alloc_options_init(&o);
  o.max_split_size_bytes = 40 * MIB;
  Fx f;
  fx_init(&f, &o, 80 * GIB, 64);
  int32_t X = m(&f, 100 * MIB, 0);
  g_assert_cmpint(ST(&f).oversize_segments, ==, 1);
  g_assert_cmpint(ST(&f).oversize_allocations, ==, 1);
  fr(&f, X);
  g_assert_cmpint(ST(&f).oversize_allocations, ==, 0);
  /* 30 MiB < max_split: may not take the 100 MiB block */
  int32_t a = m(&f, 30 * MIB, 0);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 130 * MIB);
  /* 50 MiB >= max_split: 100 >= 50 + 20, too much slack */
  int32_t b = m(&f, 50 * MIB, 0);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 180 * MIB);
  /* 90 MiB: 100 < 90 + 20, served whole and unsplit */
  int32_t c = m(&f, 90 * MIB, 0);
  g_assert_cmpint(bsize(&f, c), ==, 100 * MIB);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 180 * MIB);
  g_assert_cmpint(ST(&f).requested_bytes, ==, 170 * MIB);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 0);
  fr(&f, a);
  fr(&f, b);
  fr(&f, c);
  fx_clear(&f);

  /* the same 50 MiB request without max_split_size splits the 100 MiB block */
  fx_init(&f, NULL, 80 * GIB, 64);
  fr(&f, m(&f, 100 * MIB, 0));
  int32_t d = m(&f, 50 * MIB, 0);
  g_assert_cmpint(bsize(&f, d), ==, 50 * MIB);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 100 * MIB);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 50 * MIB);
  fx_clear(&f);

  /* max_non_split_rounding 100 MiB: a 50 MiB request may now take it */
  o.max_non_split_rounding_bytes = 100 * MIB;
  fx_init(&f, &o, 80 * GIB, 64);
  fr(&f, m(&f, 100 * MIB, 0));
  int32_t e = m(&f, 50 * MIB, 0);
  g_assert_cmpint(bsize(&f, e), ==, 100 * MIB);
  g_assert_cmpint(ST(&f).num_device_alloc, ==, 1);
  fx_clear(&f);
  o.max_non_split_rounding_bytes = 20 * MIB;

  /* release_available_cached_blocks: capacity 250 MiB; 100 and 120 MiB
   * cached; 45 MiB -> 46 MiB segment would pass 250: the smallest cached
   * oversize block >= 45 MiB (the 100) is freed, nothing else, no retry */
  fx_init(&f, &o, 250 * MIB, 64);
  int32_t p = m(&f, 100 * MIB, 0), q = m(&f, 120 * MIB, 0);
  fr(&f, p);
  fr(&f, q);
  int32_t r = m(&f, 45 * MIB, 0);
  g_assert_cmpint(bsize(&f, r), ==, 46 * MIB); /* oversize: not split */
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 166 * MIB);
  g_assert_cmpint(ST(&f).num_device_free, ==, 1);
  g_assert_cmpint(ST(&f).num_alloc_retries, ==, 0);
  fx_clear(&f);

  /* no single block is large enough: 60 then 50 MiB freed (110 >= 100) */
  fx_init(&f, &o, 150 * MIB, 64);
  p = m(&f, 50 * MIB, 0);
  q = m(&f, 60 * MIB, 0);
  int32_t other = m(&f, 20 * MIB, 1); /* another stream's block is left alone */
  fr(&f, other);
  fr(&f, p);
  fr(&f, q);
  r = m(&f, 100 * MIB, 0);
  g_assert_cmpint(ST(&f).num_device_free, ==, 2);
  g_assert_cmpint(ST(&f).num_alloc_retries, ==, 0);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 120 * MIB);
  fx_clear(&f);
}

static void test_oom_retry(void) {
  g_test_summary("Slow path: cudaMalloc against capacity, then free every unsplit cached "
                 "segment and retry (counted), then OOM; split segments stay pinned");
  Fx f;
  fx_init(&f, NULL, 60 * MIB, 64);
  int32_t a = m(&f, 30 * MIB, 0);
  int32_t b = m(&f, 20 * MIB, 0);
  fr(&f, a);
  /* 40 MiB: nothing cached fits, 50 + 40 > 60; the 30 MiB segment is
   * released and the retry succeeds */
  int32_t c = m(&f, 40 * MIB, 0);
  g_assert_cmpint(ST(&f).num_alloc_retries, ==, 1);
  g_assert_cmpint(ST(&f).num_device_free, ==, 1);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 60 * MIB);
  g_assert_cmpint(ST(&f).num_ooms, ==, 0);
  /* nothing more can be had */
  g_assert_cmpint(ptsim_alloc_malloc(&f.a, 10 * MIB, 0), ==, PTSIM_ALLOC_ERR_OOM);
  g_assert_cmpint(ST(&f).num_ooms, ==, 1);
  g_assert_cmpint(ST(&f).num_alloc_retries, ==, 2);
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, 0);
  fr(&f, b);
  fr(&f, c);
  fx_clear(&f);

  /* fragmentation OOM: a 5 MiB tensor pins a 20 MiB segment; 15 MiB is
   * reserved but unusable for a 16 MiB request at a 30 MiB capacity */
  fx_init(&f, NULL, 30 * MIB, 64);
  int32_t pin = m(&f, 5 * MIB, 0);
  g_assert_cmpint(ptsim_alloc_malloc(&f.a, 16 * MIB, 0), ==, PTSIM_ALLOC_ERR_OOM);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 20 * MIB);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 15 * MIB);
  g_assert_cmpint(ST(&f).num_device_free, ==, 0);
  fr(&f, pin);
  /* once unpinned, best fit carves 16 MiB from the coalesced 20 MiB */
  m(&f, 16 * MIB, 0);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 20 * MIB);
  g_assert_cmpint(ST(&f).num_device_alloc, ==, 1);
  fx_clear(&f);

  /* bad handles and arguments change nothing */
  fx_init(&f, NULL, 60 * MIB, 4);
  g_assert_cmpint(ptsim_alloc_free(&f.a, 0), ==, PTSIM_ALLOC_ERR_HANDLE);
  g_assert_cmpint(ptsim_alloc_malloc(&f.a, -1, 0), ==, PTSIM_ALLOC_ERR_ARGS);
  g_assert_cmpint(ptsim_alloc_malloc(&f.a, 1, -1), ==, PTSIM_ALLOC_ERR_ARGS);
  int32_t h = m(&f, 1 * MIB, 0); /* segment + split rest: 2 slots used */
  g_assert_cmpint(ptsim_alloc_malloc(&f.a, 1 * MIB, 0), ==, PTSIM_ALLOC_ERR_NO_BLOCKS);
  fr(&f, h);
  g_assert_cmpint(ptsim_alloc_free(&f.a, h), ==, PTSIM_ALLOC_ERR_HANDLE);
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, 0);
  fx_clear(&f);
}

/* The GC sequence: A and B (60 MiB each) on stream 0; A is freed early,
 * two stream-1 mallocs age it, then B is freed; a 70 MiB request misses. */
static void gc_sequence(Fx *f) {
  int32_t A = m(f, 60 * MIB, 0); /* large-pool search 1 */
  int32_t B = m(f, 60 * MIB, 0); /* search 2 */
  fr(f, A);                      /* A cached at search 2 */
  m(f, 30 * MIB, 1);             /* search 3 */
  m(f, 30 * MIB, 1);             /* search 4 */
  fr(f, B);                      /* B cached at search 4 */
  m(f, 70 * MIB, 0);             /* search 5: miss; reserved 180 MiB */
}

static void test_gc_threshold(void) {
  g_test_summary("garbage_collection_threshold: with a memory fraction, a miss above "
                 "threshold x allowed frees the oldest unsplit cached blocks first");
  PtsimAllocOptions o;
  ptsim_alloc_options_init(&o);
  o.memory_fraction = 0.5;              /* allowed: 200 MiB of 400 */
  o.garbage_collection_threshold = 0.8; /* goal 160 MiB */
  Fx f;
  fx_init(&f, &o, 400 * MIB, 64);
  gc_sequence(&f);
  /* 180 > 160: target 20 MiB; ages A 3, B 1, average 2: A goes (60 >= 20) */
  g_assert_cmpint(ST(&f).num_gc_frees, ==, 1);
  g_assert_cmpint(ST(&f).num_alloc_retries, ==, 0);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 190 * MIB);
  /* B is still cached: a 60 MiB request reuses it */
  int64_t before = ST(&f).num_device_alloc;
  m(&f, 60 * MIB, 0);
  g_assert_cmpint(ST(&f).num_device_alloc, ==, before);
  fx_clear(&f);

  /* a low threshold (goal 60 MiB) collects on earlier misses too: A at
   * the first stream-1 miss (120 > 60), B at the 70 MiB miss */
  o.garbage_collection_threshold = 0.3;
  fx_init(&f, &o, 400 * MIB, 64);
  gc_sequence(&f);
  g_assert_cmpint(ST(&f).num_gc_frees, ==, 2);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 130 * MIB);
  fx_clear(&f);

  /* without a memory fraction the threshold does nothing */
  o.memory_fraction = 0.0;
  fx_init(&f, &o, 400 * MIB, 64);
  gc_sequence(&f);
  g_assert_cmpint(ST(&f).num_gc_frees, ==, 0);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 250 * MIB);
  fx_clear(&f);

  /* the fraction alone caps cudaMalloc: 200 MiB allowed of 400 */
  o.garbage_collection_threshold = 0.0;
  o.memory_fraction = 0.5;
  fx_init(&f, &o, 400 * MIB, 64);
  m(&f, 150 * MIB, 0);
  g_assert_cmpint(ptsim_alloc_malloc(&f.a, 60 * MIB, 0), ==, PTSIM_ALLOC_ERR_OOM);
  fx_clear(&f);
}

/* The "N +- 1" pattern: each step allocates a slightly larger tensor, then
 * frees the previous one. */
static int64_t growing_pattern(Fx *f, int steps) {
  int32_t prev = -1;
  for (int i = 0; i < steps; i++) {
    int32_t h = m(f, (50 + i) * MIB, 0);
    if (prev >= 0) fr(f, prev);
    prev = h;
  }
  return ST(f).reserved_bytes_peak;
}

static void test_expandable(void) {
  g_test_summary("expandable_segments: one growing segment per stream and pool mapped in "
                 "20 MiB / 2 MiB pages; less reserved than the default for a growing pattern; "
                 "empty_cache unmaps whole free pages inside a pinned segment");
  PtsimAllocOptions o;
  ptsim_alloc_options_init(&o);
  o.expandable_segments = 1;
  Fx f, g;
  fx_init(&f, NULL, 80 * GIB, 256);
  fx_init(&g, &o, 80 * GIB, 256);
  int64_t plain = growing_pattern(&f, 20);
  int64_t exp = growing_pattern(&g, 20);
  g_test_message("growing pattern: reserved peak %" G_GINT64_FORMAT
                 " MiB default, %" G_GINT64_FORMAT " MiB expandable",
                 plain / MIB, exp / MIB);
  /* default: every step a new segment, 50 + ... + 69 MiB rounded to 2 MiB */
  g_assert_cmpint(plain, >=, 1190 * MIB);
  g_assert_cmpint(exp, <=, 200 * MIB);
  g_assert_cmpint(exp % (20 * MIB), ==, 0);
  g_assert_cmpint(ST(&g).segments, ==, 1);
  fx_clear(&f);
  fx_clear(&g);

  /* page mapping by hand: 30 MiB maps 2 pages (40 MiB); a second 30 MiB
   * uses the 10 MiB free tail plus one more page, and takes it whole */
  fx_init(&g, &o, 80 * GIB, 64);
  int32_t A = m(&g, 30 * MIB, 0);
  int64_t base = baddr(&g, A);
  g_assert_cmpint(ST(&g).reserved_bytes, ==, 40 * MIB);
  g_assert_cmpint(ST(&g).num_device_alloc, ==, 1);
  int32_t B = m(&g, 30 * MIB, 0);
  g_assert_cmpint(baddr(&g, B), ==, baddr(&g, A) + 30 * MIB);
  g_assert_cmpint(ST(&g).reserved_bytes, ==, 60 * MIB);
  g_assert_cmpint(ST(&g).inactive_split_bytes, ==, 0); /* not counted for expandable */
  /* the large pool splits at >= 512 B left: 19 MiB + 512 in a 20 MiB page */
  int32_t C = m(&g, 19 * MIB, 0);
  g_assert_cmpint(bsize(&g, C), ==, 19 * MIB);
  g_assert_cmpint(ST(&g).reserved_bytes, ==, 80 * MIB);
  /* small pool: its own segment, 2 MiB pages */
  int32_t s = m(&g, 4 * KIB, 0);
  g_assert_cmpint(ST(&g).reserved_bytes, ==, 82 * MIB);
  g_assert_cmpint(ST(&g).segments, ==, 2);
  /* free A; empty_cache unmaps page [0, 20) of it and keeps [20, 30) */
  fr(&g, A);
  empty(&g);
  g_assert_cmpint(ST(&g).reserved_bytes, ==, 62 * MIB);
  g_assert_cmpint(ST(&g).num_device_free, ==, 1); /* C's 1 MiB tail is no whole page */
  fr(&g, s);
  fr(&g, B);
  fr(&g, C);
  empty(&g);
  g_assert_cmpint(ST(&g).reserved_bytes, ==, 0);
  /* the freed range is mapped again from the lowest address */
  int32_t D = m(&g, 50 * MIB, 0);
  g_assert_cmpint(ST(&g).reserved_bytes, ==, 60 * MIB);
  g_assert_cmpint(baddr(&g, D), ==, base);
  g_assert_cmpint(ST(&g).segments, ==, 2); /* reserved ranges are kept */
  fx_clear(&g);

  /* pinned segment: default keeps 100 MiB reserved for one 10 MiB tensor,
   * expandable gives back all pages but the first */
  fx_init(&f, NULL, 80 * GIB, 64);
  fx_init(&g, &o, 80 * GIB, 64);
  fr(&f, m(&f, 100 * MIB, 0));
  fr(&g, m(&g, 100 * MIB, 0));
  m(&f, 10 * MIB, 0);
  m(&g, 10 * MIB, 0);
  empty(&f);
  empty(&g);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 100 * MIB);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 90 * MIB);
  g_assert_cmpint(ST(&g).reserved_bytes, ==, 20 * MIB);
  fx_clear(&f);
  fx_clear(&g);
}

static void test_check_detects(void) {
  g_test_summary("ptsim_alloc_check reports broken links, tiling, overlap, unmerged "
                 "neighbours, an unsorted free set and wrong counters");
  Fx f;
  fx_init(&f, NULL, 80 * GIB, 64);
  int32_t a = m(&f, 5 * MIB, 0), b = m(&f, 5 * MIB, 0);
  m(&f, 5 * MIB, 0);
  int32_t d = m(&f, 30 * MIB, 1);
  fr(&f, a); /* free set: a (5 MiB), the 5 MiB tail */
  PtsimAllocator saved = f.a;
  gsize bytes = (gsize)ptsim_alloc_storage_slots(64) * sizeof(PtsimAllocBlock);
  g_autofree PtsimAllocBlock *copy = g_memdup2(f.blocks, bytes); /* the order too */
#define RESTORE() (f.a = saved, memcpy(f.blocks, copy, bytes))
  f.blocks[b].prev = d; /* links no longer mutual: -1 or -2 by slot order */
  g_assert_cmpint(ptsim_alloc_check(&f.a), <=, -1);
  g_assert_cmpint(ptsim_alloc_check(&f.a), >=, -2);
  RESTORE();
  f.blocks[b].size += 512;
  g_assert_cmpint(ptsim_alloc_check(&f.a), <, 0);
  RESTORE();
  f.blocks[d].segment_addr = f.blocks[a].segment_addr + 10 * MIB;
  f.blocks[d].addr = f.blocks[d].segment_addr;
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, -8);
  RESTORE();
  f.blocks[b].state = PTSIM_ALLOC_BLOCK_FREE; /* a free neighbour left unmerged */
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, -9);
  RESTORE();
  int32_t t = f.a.order[0];
  f.a.order[0] = f.a.order[1];
  f.a.order[1] = t;
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, -12);
  RESTORE();
  f.a.stats.allocated_bytes += 512;
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, -13);
  RESTORE();
  f.a.stats.inactive_split_bytes = 0;
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, -16);
  RESTORE();
  f.a.stats.reserved_bytes_peak = 0;
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, -15);
  RESTORE();
#undef RESTORE
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, 0);
  fx_clear(&f);
}

/* ---- random streams ---- */

typedef struct {
  const char *name;
  int64_t max_split;
  int32_t divisions;
  double fraction, gc;
  int32_t expandable;
} Config;

static const Config configs[] = {
    {"default", 0, 0, 0.0, 0.0, 0},
    {"max_split", 64 * MIB, 0, 0.0, 0.0, 0},
    {"divisions", 0, 4, 0.0, 0.0, 0},
    {"gc", 0, 0, 0.9, 0.6, 0},
    {"all", 64 * MIB, 8, 0.9, 0.6, 0},
    {"expandable", 0, 0, 0.0, 0.0, 1},
    {"expandable+max_split", 64 * MIB, 2, 0.0, 0.0, 1},
};

static void config_options(const Config *c, PtsimAllocOptions *o) {
  ptsim_alloc_options_init(o);
  o->max_split_size_bytes = c->max_split;
  ptsim_alloc_options_set_divisions(o, c->divisions);
  o->memory_fraction = c->fraction;
  o->garbage_collection_threshold = c->gc;
  o->expandable_segments = c->expandable;
}

/* A size drawn from a mix: small, medium, large up to 300 MiB. */
static int64_t draw_size(GRand *r) {
  switch (g_rand_int_range(r, 0, 4)) {
  case 0:
    return g_rand_int_range(r, 1, (gint32)MIB + 1);
  case 1:
    return g_rand_int_range(r, (gint32)MIB, (gint32)(10 * MIB));
  case 2:
    return g_rand_int_range(r, (gint32)(10 * MIB), (gint32)(80 * MIB));
  default:
    return (int64_t)g_rand_int_range(r, 1, 300) * MIB + g_rand_int_range(r, 0, 4096);
  }
}

/* Runs `steps` random events; returns the final stats.  check: run
 * ptsim_alloc_check after every step. */
static void random_run(const Config *c, guint32 seed, int steps, int check, PtsimAllocStats *out) {
  PtsimAllocOptions o;
  config_options(c, &o);
  Fx f;
  fx_init(&f, &o, 3 * GIB, 8192);
  GRand *r = g_rand_new_with_seed(seed);
  int32_t live[2048];
  int nlive = 0;
  for (int i = 0; i < steps; i++) {
    int u = g_rand_int_range(r, 0, 100);
    if (u < 1) {
      ptsim_alloc_empty_cache(&f.a);
    } else if (u < 52 && nlive < 2048) {
      int32_t h = ptsim_alloc_malloc(&f.a, draw_size(r), g_rand_int_range(r, 0, 3));
      if (h >= 0)
        live[nlive++] = h;
      else
        g_assert_cmpint(h, ==, PTSIM_ALLOC_ERR_OOM);
    } else if (nlive > 0) {
      int k = g_rand_int_range(r, 0, nlive);
      g_assert_cmpint(ptsim_alloc_free(&f.a, live[k]), ==, 0);
      live[k] = live[--nlive];
    }
    if (check) {
      int32_t rc = ptsim_alloc_check(&f.a);
      if (rc != 0) g_test_message("%s seed %u step %d: check %d", c->name, seed, i, rc);
      g_assert_cmpint(rc, ==, 0);
    }
  }
  g_assert_cmpint(ptsim_alloc_check(&f.a), ==, 0);
  /* free everything: all cached; empty_cache releases every byte */
  while (nlive > 0) g_assert_cmpint(ptsim_alloc_free(&f.a, live[--nlive]), ==, 0);
  g_assert_cmpint(ST(&f).allocated_bytes, ==, 0);
  g_assert_cmpint(ST(&f).inactive_split_bytes, ==, 0);
  empty(&f);
  g_assert_cmpint(ST(&f).reserved_bytes, ==, 0);
  ptsim_alloc_stats(&f.a, out);
  g_rand_free(r);
  fx_clear(&f);
}

static void test_random_invariants(void) {
  g_test_summary("Random alloc/free/empty_cache streams under every option set keep every "
                 "invariant after every step, and return all memory at the end");
  for (size_t c = 0; c < G_N_ELEMENTS(configs); c++) {
    for (guint32 seed = 1; seed <= 3; seed++) {
      PtsimAllocStats st;
      random_run(&configs[c], seed, 3000, 1, &st);
      g_test_message("%s seed %u: peak alloc %" G_GINT64_FORMAT
                     " MiB, peak reserved %" G_GINT64_FORMAT " MiB, ooms %" G_GINT64_FORMAT
                     ", retries %" G_GINT64_FORMAT,
                     configs[c].name, seed, st.allocated_bytes_peak / MIB,
                     st.reserved_bytes_peak / MIB, st.num_ooms, st.num_alloc_retries);
      g_assert_cmpint(st.allocated_bytes_peak, <=, st.reserved_bytes_peak);
    }
  }
}

static void test_deterministic(void) {
  g_test_summary("The same event stream gives identical stats twice");
  for (size_t c = 0; c < G_N_ELEMENTS(configs); c++) {
    PtsimAllocStats s1, s2;
    random_run(&configs[c], 42, 4000, 0, &s1);
    random_run(&configs[c], 42, 4000, 0, &s2);
    g_assert_cmpmem(&s1, sizeof s1, &s2, sizeof s2);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/alloc/round-size", test_round_size);
  g_test_add_func("/alloc/segment-size", test_segment_size);
  g_test_add_func("/alloc/large-request-tail", test_large_tail);
  g_test_add_func("/alloc/one-mib-boundary", test_one_mib_boundary);
  g_test_add_func("/alloc/medium-carves-20mib", test_medium_carves_20mib);
  g_test_add_func("/alloc/small-rounding", test_small_rounding);
  g_test_add_func("/alloc/streams-not-shared", test_streams_not_shared);
  g_test_add_func("/alloc/coalesce", test_coalesce);
  g_test_add_func("/alloc/reset-peaks", test_reset_peaks);
  g_test_add_func("/alloc/max-split-size", test_max_split_size);
  g_test_add_func("/alloc/oom-retry", test_oom_retry);
  g_test_add_func("/alloc/gc-threshold", test_gc_threshold);
  g_test_add_func("/alloc/expandable-segments", test_expandable);
  g_test_add_func("/alloc/check-detects-corruption", test_check_detects);
  g_test_add_func("/alloc/random-invariants", test_random_invariants);
  g_test_add_func("/alloc/deterministic", test_deterministic);
  return g_test_run();
}

/* alloc_state.c — the caching allocator's state as plain words, slot
 * labels left out, and its monotone counters moved on: what the replay's
 * periodic shortcut (lifetimes_int.h) compares between two moments and
 * what it adds when it skips repeats.  Contract in alloc.h.
 *
 * Why the words decide the future.  malloc, free and the slow path read
 * blocks by address (segments are chains in address order, the free set is
 * ordered by (pool, stream, size, address)), the counters, next_addr and
 * the expandable segments in the order they were reserved; slot indices
 * are only labels.  The one exception is release_all, which visits cached
 * blocks in slot order: with expandable segments an unmap needs two unused
 * slots, so which unmaps starve could depend on the labels.  starved_unmaps
 * is among the words, so a stretch with a starved unmap never compares
 * equal.  The free-block searches of the GC enter as ages (searches since
 * a block was cached), the only way GC reads them.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Siblings: alloc.c,
 * alloc_rules.c, alloc_check.c, alloc_int.h. */
#include "alloc_int.h"

#define RECORD 7 /* words per block */
#define HEAD 2   /* words per segment head while sorting: address, slot */

PTSIM_HD int64_t ptsim_alloc_state_words(int32_t capacity_blocks) {
  return PTSIM_ALLOC_STATE_HEADER + (RECORD + HEAD) * (int64_t)capacity_blocks;
}

/* Heap sort of n segment heads (HEAD words each) by address (unique). */
PTSIM_HD static void state_sift(int64_t *r, int64_t n, int64_t k) {
  for (;;) {
    int64_t c = 2 * k + 1;
    if (c >= n) return;
    if (c + 1 < n && r[(c + 1) * HEAD] > r[c * HEAD]) c += 1;
    if (r[k * HEAD] >= r[c * HEAD]) return;
    for (int32_t w = 0; w < HEAD; w++) {
      int64_t t = r[k * HEAD + w];
      r[k * HEAD + w] = r[c * HEAD + w];
      r[c * HEAD + w] = t;
    }
    k = c;
  }
}

PTSIM_HD static void state_sort(int64_t *r, int64_t n) {
  for (int64_t k = n / 2 - 1; k >= 0; k--) state_sift(r, n, k);
  for (int64_t end = n - 1; end > 0; end--) {
    for (int32_t w = 0; w < HEAD; w++) {
      int64_t t = r[w];
      r[w] = r[end * HEAD + w];
      r[end * HEAD + w] = t;
    }
    state_sift(r, end, 0);
  }
}

PTSIM_HD int64_t ptsim_alloc_state(const PtsimAllocator *a, int64_t *words) {
  const PtsimAllocStats *st = &a->stats;
  int64_t *h = words, *r = words + PTSIM_ALLOC_STATE_HEADER, n = 0, segments = 0;
  /* the segment heads, sorted, past the records' room; then each segment's
   * blocks in address order along its chain */
  int64_t *heads = r + RECORD * (int64_t)a->capacity_blocks;
  for (int32_t k = 0; k < PTSIM_ALLOC_STATE_HEADER; k++) h[k] = 0;
  h[0] = a->next_addr;
  h[1] = st->allocated_bytes;
  h[2] = st->requested_bytes;
  h[3] = st->active_bytes;
  h[4] = st->reserved_bytes;
  h[5] = st->inactive_split_bytes;
  h[6] = st->allocations;
  h[7] = st->segments;
  h[8] = st->oversize_allocations;
  h[9] = st->oversize_segments;
  h[10] = a->free_count;
  h[11] = a->unused_count;
  h[12] = a->starved_unmaps;
  h[13] = a->num_expandable;
  for (int32_t e = 0; e < a->num_expandable; e++) h[16 + e] = a->blocks[a->expandable[e]].addr;
  for (int32_t s = 0; s < a->high_water; s++) {
    const PtsimAllocBlock *b = &a->blocks[s];
    if (b->state == PTSIM_ALLOC_BLOCK_UNUSED || b->prev != NO_BLOCK) continue;
    heads[segments * HEAD] = b->addr;
    heads[segments * HEAD + 1] = s;
    segments += 1;
  }
  state_sort(heads, segments);
  for (int64_t g = 0; g < segments; g++) {
    for (int32_t s = (int32_t)heads[g * HEAD + 1]; s != NO_BLOCK; s = a->blocks[s].next) {
      const PtsimAllocBlock *b = &a->blocks[s];
      int64_t *o = r + n * RECORD;
      o[0] = b->addr;
      o[1] = b->size;
      o[2] = b->requested;
      o[3] = b->segment_addr;
      o[4] = b->segment_size;
      o[5] = ((int64_t)b->stream << 32) | ((int64_t)b->expandable << 16) | ((int64_t)b->pool << 8) |
             (int64_t)b->state;
      o[6] = b->state == PTSIM_ALLOC_BLOCK_FREE ? a->searches[b->pool] - b->gc_base_ : 0;
      n += 1;
    }
  }
  h[14] = n;
  h[15] = segments;
  return PTSIM_ALLOC_STATE_HEADER + RECORD * n;
}

PTSIM_HD void ptsim_alloc_counters(const PtsimAllocator *a, PtsimAllocCounters *out) {
  const PtsimAllocStats *st = &a->stats;
  out->num_device_alloc = st->num_device_alloc;
  out->num_device_free = st->num_device_free;
  out->num_alloc_retries = st->num_alloc_retries;
  out->num_ooms = st->num_ooms;
  out->num_gc_frees = st->num_gc_frees;
  out->searches[0] = a->searches[0];
  out->searches[1] = a->searches[1];
}

PTSIM_HD void ptsim_alloc_repeat(PtsimAllocator *a, const PtsimAllocCounters *before,
                                 int64_t times) {
  PtsimAllocStats *st = &a->stats;
  int64_t grew[2];
  st->num_device_alloc += times * (st->num_device_alloc - before->num_device_alloc);
  st->num_device_free += times * (st->num_device_free - before->num_device_free);
  st->num_alloc_retries += times * (st->num_alloc_retries - before->num_alloc_retries);
  st->num_ooms += times * (st->num_ooms - before->num_ooms);
  st->num_gc_frees += times * (st->num_gc_frees - before->num_gc_frees);
  for (int32_t pool = 0; pool < 2; pool++) {
    grew[pool] = times * (a->searches[pool] - before->searches[pool]);
    a->searches[pool] += grew[pool];
  }
  /* a cached block keeps its age */
  if (grew[0] == 0 && grew[1] == 0) return;
  for (int32_t s = 0; s < a->high_water; s++) {
    PtsimAllocBlock *b = &a->blocks[s];
    if (b->state == PTSIM_ALLOC_BLOCK_FREE) b->gc_base_ += grew[b->pool];
  }
}

PTSIM_HD int32_t ptsim_alloc_snapshot(const PtsimAllocator *a, PtsimAllocator *copy,
                                      PtsimAllocBlock *blocks, int32_t room) {
  if (a->high_water > room) return -1;
  *copy = *a;
  for (int32_t s = 0; s < a->high_water; s++) blocks[s] = a->blocks[s];
  copy->blocks = blocks;
  copy->order = NULL; /* the free set stays the allocator's: the copy is for reading */
  return 0;
}

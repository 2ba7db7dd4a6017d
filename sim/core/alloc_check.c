/* alloc_check.c — the caching allocator's invariant checker and read-only
 * queries; the contract is in alloc.h, the invariants listed at the top of
 * alloc.c.  Tests run the checker after every operation; the emulation
 * itself never calls it.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Siblings: alloc.c,
 * alloc_rules.c, alloc_int.h. */
#include "alloc_int.h"

/* ---- queries ---- */

PTSIM_HD void ptsim_alloc_stats(const PtsimAllocator *a, PtsimAllocStats *out) { *out = a->stats; }

PTSIM_HD const PtsimAllocBlock *ptsim_alloc_block(const PtsimAllocator *a, int32_t h) {
  if (h < 0 || h >= a->high_water || a->blocks[h].state != PTSIM_ALLOC_BLOCK_ALLOCATED) return NULL;
  return &a->blocks[h];
}

PTSIM_HD int32_t ptsim_alloc_check(const PtsimAllocator *a) {
  const PtsimAllocBlock *B = a->blocks;
  int64_t allocated = 0, requested = 0, reserved = 0, inactive = 0;
  int64_t allocations = 0, segments = 0, cached = 0, in_use = 0, walked = 0;
  for (int32_t s = 0; s < a->high_water; s++) {
    const PtsimAllocBlock *b = &B[s];
    if (b->state == PTSIM_ALLOC_BLOCK_UNUSED) continue;
    in_use += 1;
    if (b->prev != NO_BLOCK && (b->prev < 0 || b->prev >= a->high_water || B[b->prev].next != s))
      return -1;
    if (b->next != NO_BLOCK && (b->next < 0 || b->next >= a->high_water || B[b->next].prev != s))
      return -2;
    if (b->size <= 0 || b->size % PTSIM_ALLOC_MIN_BLOCK != 0) return -3;
    if (b->state == PTSIM_ALLOC_BLOCK_ALLOCATED) {
      allocated += b->size;
      requested += b->requested;
      allocations += 1;
      if (b->requested > b->size) return -3;
    } else if (b->state == PTSIM_ALLOC_BLOCK_FREE) {
      cached += 1;
      if (!b->expandable && is_split(b)) inactive += b->size;
    }
    if (b->state != PTSIM_ALLOC_BLOCK_UNMAPPED && b->expandable) reserved += b->size;
    if (b->prev != NO_BLOCK) continue;
    /* a segment head: walk the segment */
    segments += 1;
    if (b->addr != b->segment_addr) return -4;
    if (!b->expandable) reserved += b->segment_size;
    int64_t at = b->addr;
    for (int32_t t = s; t != NO_BLOCK; t = B[t].next) {
      const PtsimAllocBlock *c = &B[t];
      walked += 1;
      if (walked > a->high_water) return -5;
      if (c->state == PTSIM_ALLOC_BLOCK_UNUSED || c->addr != at) return -5;
      if (c->stream != b->stream || c->pool != b->pool || c->expandable != b->expandable ||
          c->segment_addr != b->segment_addr || c->segment_size != b->segment_size)
        return -6;
      if (c->next != NO_BLOCK) {
        int32_t d = B[c->next].state;
        if (c->state == PTSIM_ALLOC_BLOCK_FREE && d == PTSIM_ALLOC_BLOCK_FREE) return -9;
        if (c->state == PTSIM_ALLOC_BLOCK_UNMAPPED && d == PTSIM_ALLOC_BLOCK_UNMAPPED) return -9;
      }
      if (c->expandable) {
        int64_t page = page_size(c->pool);
        int mapped = c->state != PTSIM_ALLOC_BLOCK_UNMAPPED;
        /* a mapped/unmapped boundary lies on a page boundary */
        if (c->next != NO_BLOCK && mapped != (B[c->next].state != PTSIM_ALLOC_BLOCK_UNMAPPED) &&
            (c->addr + c->size - c->segment_addr) % page != 0)
          return -19;
      }
      at += c->size;
    }
    if (at != b->segment_addr + b->segment_size) return -7;
  }
  if (walked != in_use) return -5;
  if (in_use + a->unused_count != a->capacity_blocks) return -5;
  /* segments do not overlap */
  for (int32_t s = 0; s < a->high_water; s++) {
    if (B[s].state == PTSIM_ALLOC_BLOCK_UNUSED || B[s].prev != NO_BLOCK) continue;
    for (int32_t t = s + 1; t < a->high_water; t++) {
      if (B[t].state == PTSIM_ALLOC_BLOCK_UNUSED || B[t].prev != NO_BLOCK) continue;
      int64_t s0 = B[s].segment_addr, s1 = s0 + B[s].segment_size;
      int64_t t0 = B[t].segment_addr, t1 = t0 + B[t].segment_size;
      if (s0 < t1 && t0 < s1) return -8;
    }
  }
  /* the free set */
  if ((int64_t)a->free_count != cached) return -10;
  for (int32_t k = 0; k < a->free_count; k++) {
    int32_t s = a->order[k];
    if (s < 0 || s >= a->high_water || B[s].state != PTSIM_ALLOC_BLOCK_FREE) return -11;
    if (k > 0) {
      const PtsimAllocBlock *p = &B[a->order[k - 1]];
      if (!key_less(p, B[s].pool, B[s].stream, B[s].size, B[s].addr)) return -12;
    }
  }
  const PtsimAllocStats *st = &a->stats;
  if (allocated != st->allocated_bytes || st->allocated_bytes > st->allocated_bytes_peak)
    return -13;
  if (requested != st->requested_bytes || st->requested_bytes > st->requested_bytes_peak)
    return -14;
  if (reserved != st->reserved_bytes || st->reserved_bytes > st->reserved_bytes_peak) return -15;
  if (inactive != st->inactive_split_bytes || inactive > st->inactive_split_bytes_peak) return -16;
  if (allocations != st->allocations || segments != st->segments) return -17;
  if (st->allocated_bytes > st->reserved_bytes || st->reserved_bytes > a->limit_bytes) return -18;
  return 0;
}

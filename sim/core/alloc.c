/* alloc.c — the caching-allocator emulation; the contract is in alloc.h,
 * the rules in shared/reference/pytorch_caching_allocator.md ("A<n>" below
 * names its sections).
 *
 * Layout inside the caller's slots:
 *
 *   segment   one cudaMalloc (or one reserved expandable range): a chain of
 *             blocks linked by prev/next in address order that tiles
 *             [segment_addr, segment_addr + segment_size) exactly.
 *   free set  every cached (FREE) block, sorted by (pool, stream, size,
 *             addr): the slots in order[], an int32 array in the tail of
 *             the caller's storage (contiguous, so that a shift is one
 *             memmove).  Keys are unique since
 *             cached blocks never overlap.  lower_bound(pool, stream, size, 0)
 *             is PyTorch's best fit (A6).
 *   unused    slots holding no block: [high_water, capacity) plus a chain
 *             through link_ below high_water.
 *
 * Merges keep the lower-address block's slot and splits keep the front in
 * the original slot, so the first block of a segment never changes slot
 * (expandable[] relies on it) and a handle is the front of its block.
 *
 * Invariants (ptsim_alloc_check; its return codes in brackets): links are
 * mutual [-1..-3]; a segment is tiled exactly [-4..-7]; segments do not
 * overlap [-8]; cached neighbours are merged [-9]; the free set is sorted
 * and holds exactly the cached blocks [-10..-12]; the counters equal their
 * sums [-13..-17]; allocated <= reserved <= limit [-18]; expandable page
 * boundaries [-19].
 *
 * inactive_split_bytes is kept incrementally: a cached block's neighbours
 * can only change by merging it away, so its "split" state is fixed while
 * it sits in the free set; add on insert, subtract on removal.
 *
 * Siblings: alloc_rules.c (options and the size rules), alloc_check.c (the
 * invariant checker and queries), alloc_state.c (the state as words, for
 * the replay's periodic shortcut), alloc_int.h (helpers they share).
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#include "alloc.h"

#include <string.h>

#include "alloc_int.h"

/* Unused slots one malloc may need: a segment, a mapped piece, a split rest. */
#define SLOTS_PER_MALLOC 3

/* ---- small helpers ---- */

PTSIM_HD static int gc_enabled(const PtsimAllocator *a) {
  return a->opts.memory_fraction > 0.0 && a->opts.garbage_collection_threshold > 0.0;
}

/* ---- slots ---- */

PTSIM_HD static int32_t slot_take(PtsimAllocator *a) {
  int32_t s;
  if (a->unused_head != NO_BLOCK) {
    s = a->unused_head;
    a->unused_head = a->blocks[s].link_;
  } else if (a->high_water < a->capacity_blocks) {
    s = a->high_water;
    a->high_water += 1;
  } else {
    return NO_BLOCK;
  }
  a->unused_count -= 1;
  PtsimAllocBlock *b = &a->blocks[s];
  b->addr = 0;
  b->size = 0;
  b->requested = 0;
  b->segment_addr = 0;
  b->segment_size = 0;
  b->stream = 0;
  b->pool = 0;
  b->state = PTSIM_ALLOC_BLOCK_UNUSED;
  b->expandable = 0;
  b->prev = NO_BLOCK;
  b->next = NO_BLOCK;
  b->gc_base_ = 0;
  b->link_ = NO_BLOCK;
  return s;
}

PTSIM_HD static void slot_give(PtsimAllocator *a, int32_t s) {
  a->blocks[s].state = PTSIM_ALLOC_BLOCK_UNUSED;
  a->blocks[s].link_ = a->unused_head;
  a->unused_head = s;
  a->unused_count += 1;
}

/* A new block of segment `like` after block `after` (same segment), covering
 * [addr, addr+size).  The caller has ensured a slot is unused. */
PTSIM_HD static int32_t insert_after(PtsimAllocator *a, int32_t after, int64_t addr, int64_t size,
                                     int32_t state) {
  int32_t s = slot_take(a);
  PtsimAllocBlock *b = &a->blocks[s];
  const PtsimAllocBlock *o = &a->blocks[after];
  b->addr = addr;
  b->size = size;
  b->segment_addr = o->segment_addr;
  b->segment_size = o->segment_size;
  b->stream = o->stream;
  b->pool = o->pool;
  b->expandable = o->expandable;
  b->state = state;
  b->prev = after;
  b->next = o->next;
  if (o->next != NO_BLOCK) a->blocks[o->next].prev = s;
  a->blocks[after].next = s;
  return s;
}

/* Absorbs block hi (the next neighbour of lo) into lo and frees hi's slot. */
PTSIM_HD static void absorb_next(PtsimAllocator *a, int32_t lo, int32_t hi) {
  PtsimAllocBlock *l = &a->blocks[lo];
  PtsimAllocBlock *h = &a->blocks[hi];
  l->size += h->size;
  l->next = h->next;
  if (h->next != NO_BLOCK) a->blocks[h->next].prev = lo;
  slot_give(a, hi);
}

/* ---- the sorted free set ----
 *
 * A merge or a split changes one cached block into another whose key is
 * near: instead of a removal and an insertion (two shifts of the set's
 * tail), the element is rewritten in place and moved to its new position
 * (set_settle), shifting only what lies between. */

/* First position in [lo, hi) whose block does not sort before the key. */
PTSIM_HD static int32_t set_bound_in(const PtsimAllocator *a, int32_t lo, int32_t hi, int32_t pool,
                                     int32_t stream, int64_t size, int64_t addr) {
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (key_less(&a->blocks[a->order[mid]], pool, stream, size, addr))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* First position whose block is not below (pool, stream, size) with any
 * address: PyTorch's best fit.  The same search as set_bound_in with
 * address 0 (every block's address is above it), one test per step:
 * a step's comparison is the branch that goes either way, the others
 * are noise to the predictor. */
PTSIM_HD static int32_t set_best_fit(const PtsimAllocator *a, int32_t pool, int32_t stream,
                                     int64_t size) {
  int32_t lo = 0, hi = a->free_count;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    const PtsimAllocBlock *x = &a->blocks[a->order[mid]];
    int below = x->pool != pool       ? x->pool < pool
                : x->stream != stream ? x->stream < stream
                                      : x->size < size;
    if (below)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* First position whose block does not sort before the key. */
PTSIM_HD static int32_t set_lower_bound(const PtsimAllocator *a, int32_t pool, int32_t stream,
                                        int64_t size, int64_t addr) {
  return set_bound_in(a, 0, a->free_count, pool, stream, size, addr);
}

/* Position of cached block s. */
PTSIM_HD static int32_t set_find(const PtsimAllocator *a, int32_t s) {
  const PtsimAllocBlock *b = &a->blocks[s];
  return set_lower_bound(a, b->pool, b->stream, b->size, b->addr);
}

/* What caching block s means besides its place in the set. */
PTSIM_HD static void set_cached(PtsimAllocator *a, int32_t s) {
  PtsimAllocBlock *b = &a->blocks[s];
  b->state = PTSIM_ALLOC_BLOCK_FREE;
  b->gc_base_ = a->searches[b->pool];
  if (!b->expandable && is_split(b)) {
    a->stats.inactive_split_bytes += b->size;
    bump_peak(a->stats.inactive_split_bytes, &a->stats.inactive_split_bytes_peak);
  }
}

/* Block s leaves the set's accounting (its element is the caller's). */
PTSIM_HD static void set_uncached(PtsimAllocator *a, int32_t s) {
  const PtsimAllocBlock *b = &a->blocks[s];
  if (!b->expandable && is_split(b)) a->stats.inactive_split_bytes -= b->size;
}

PTSIM_HD static void set_insert(PtsimAllocator *a, int32_t s) {
  const PtsimAllocBlock *b = &a->blocks[s];
  int32_t pos = set_lower_bound(a, b->pool, b->stream, b->size, b->addr);
  ptsim_hd_memmove(&a->order[pos + 1], &a->order[pos],
                   (size_t)(a->free_count - pos) * sizeof(int32_t));
  a->order[pos] = s;
  a->free_count += 1;
  set_cached(a, s);
}

/* Removes the cached block at position pos of the free set (its state is
 * left to the caller). */
PTSIM_HD static void set_remove_at(PtsimAllocator *a, int32_t pos) {
  set_uncached(a, a->order[pos]);
  ptsim_hd_memmove(&a->order[pos], &a->order[pos + 1],
                   (size_t)(a->free_count - pos - 1) * sizeof(int32_t));
  a->free_count -= 1;
}

/* Removes cached block s from the free set (its state is left to the caller). */
PTSIM_HD static void set_remove(PtsimAllocator *a, int32_t s) { set_remove_at(a, set_find(a, s)); }

/* Element pos now names block s (not otherwise in the set), whose key may
 * sort elsewhere: moves it there.  The rest of the set is sorted. */
PTSIM_HD static void set_settle(PtsimAllocator *a, int32_t pos, int32_t s) {
  const PtsimAllocBlock *b = &a->blocks[s];
  int32_t t;
  const PtsimAllocBlock *before = pos > 0 ? &a->blocks[a->order[pos - 1]] : NULL;
  if (before && key_less(b, before->pool, before->stream, before->size, before->addr)) {
    t = set_bound_in(a, 0, pos, b->pool, b->stream, b->size, b->addr);
    ptsim_hd_memmove(&a->order[t + 1], &a->order[t], (size_t)(pos - t) * sizeof(int32_t));
  } else if (pos + 1 < a->free_count &&
             key_less(&a->blocks[a->order[pos + 1]], b->pool, b->stream, b->size, b->addr)) {
    t = set_bound_in(a, pos + 1, a->free_count, b->pool, b->stream, b->size, b->addr) - 1;
    ptsim_hd_memmove(&a->order[pos], &a->order[pos + 1], (size_t)(t - pos) * sizeof(int32_t));
  } else {
    t = pos;
  }
  a->order[t] = s;
}

/* should_split (A5): small pool or expandable: >= 512 B left; large pool:
 * request below max_split_size and more than 1 MiB left. */
PTSIM_HD static int should_split(const PtsimAllocator *a, const PtsimAllocBlock *b, int64_t size) {
  int64_t remaining = b->size - size;
  if (b->pool == PTSIM_ALLOC_POOL_SMALL || a->opts.expandable_segments)
    return remaining >= PTSIM_ALLOC_MIN_BLOCK;
  return size < a->max_split_bytes && remaining > PTSIM_ALLOC_SMALL_SIZE;
}

/* ---- init ---- */

/* The order of the free set takes the tail of the storage: one int32 per
 * block slot. */
PTSIM_HD static int32_t block_slots(int32_t storage_slots) {
  return (int32_t)((int64_t)storage_slots * (int64_t)sizeof(PtsimAllocBlock) /
                   (int64_t)(sizeof(PtsimAllocBlock) + sizeof(int32_t)));
}

PTSIM_HD int64_t ptsim_alloc_storage_slots(int64_t blocks) {
  int64_t per = (int64_t)sizeof(PtsimAllocBlock), extra = (int64_t)sizeof(int32_t);
  return (blocks * (per + extra) + per - 1) / per;
}

PTSIM_HD int32_t ptsim_alloc_init(PtsimAllocator *a, const PtsimAllocOptions *opts,
                                  double capacity_bytes, PtsimAllocBlock *storage,
                                  int32_t capacity_blocks) {
  if (a == NULL || storage == NULL) return PTSIM_ALLOC_ERR_ARGS;
  int32_t slots = block_slots(capacity_blocks);
  if (slots < SLOTS_PER_MALLOC) return PTSIM_ALLOC_ERR_ARGS;
  /* NaN fails both comparisons */
  if (!(capacity_bytes >= 0.0 && capacity_bytes <= PTSIM_ALLOC_MAX_CAPACITY_BYTES))
    return PTSIM_ALLOC_ERR_ARGS;
  if (opts != NULL)
    a->opts = *opts;
  else
    ptsim_alloc_options_init(&a->opts);
  if (!ptsim_alloc_options_valid(&a->opts)) return PTSIM_ALLOC_ERR_ARGS;
  a->capacity_bytes = (int64_t)capacity_bytes;
  a->limit_bytes = a->capacity_bytes;
  if (a->opts.memory_fraction > 0.0) {
    int64_t allowed = (int64_t)(a->opts.memory_fraction * (double)a->capacity_bytes);
    if (allowed < a->limit_bytes) a->limit_bytes = allowed;
  }
  a->max_split_bytes = a->opts.max_split_size_bytes > 0 ? a->opts.max_split_size_bytes : INT64_MAX;
  a->next_addr = FIRST_ADDR;
  a->searches[0] = 0;
  a->searches[1] = 0;
  a->blocks = storage;
  a->capacity_blocks = slots;
  a->order = (int32_t *)(void *)(storage + slots);
  a->high_water = 0;
  a->unused_head = NO_BLOCK;
  a->unused_count = slots;
  a->free_count = 0;
  a->starved_unmaps = 0;
  a->num_expandable = 0;
  a->divided = 0;
  for (int32_t i = 0; i < PTSIM_ALLOC_DIVISION_INTERVALS; i++)
    a->divided |= a->opts.roundup_power2_divisions[i] > 1;
  for (int32_t i = 0; i < PTSIM_ALLOC_MAX_EXPANDABLE; i++) a->expandable[i] = NO_BLOCK;
  PtsimAllocStats *st = &a->stats;
  st->allocated_bytes = st->allocated_bytes_peak = 0;
  st->requested_bytes = st->requested_bytes_peak = 0;
  st->active_bytes = st->active_bytes_peak = 0;
  st->reserved_bytes = st->reserved_bytes_peak = 0;
  st->inactive_split_bytes = st->inactive_split_bytes_peak = 0;
  st->allocations = st->segments = 0;
  st->oversize_allocations = st->oversize_segments = 0;
  st->num_device_alloc = st->num_device_free = 0;
  st->num_alloc_retries = st->num_ooms = st->num_gc_frees = 0;
  return 0;
}

/* ---- reserved memory ---- */

PTSIM_HD static void reserve(PtsimAllocator *a, int64_t bytes) {
  a->stats.reserved_bytes += bytes;
  bump_peak(a->stats.reserved_bytes, &a->stats.reserved_bytes_peak);
  a->stats.num_device_alloc += 1;
}

/* release_block: cudaFree a whole cached, unsplit, non-expandable segment. */
PTSIM_HD static void release_segment(PtsimAllocator *a, int32_t s) {
  PtsimAllocBlock *b = &a->blocks[s];
  set_remove(a, s);
  a->stats.reserved_bytes -= b->size;
  a->stats.segments -= 1;
  if (b->size >= a->max_split_bytes) a->stats.oversize_segments -= 1;
  a->stats.num_device_free += 1;
  slot_give(a, s);
}

/* Merges unmapped block s with unmapped neighbours (expandable). */
PTSIM_HD static int32_t merge_unmapped(PtsimAllocator *a, int32_t s) {
  int32_t n = a->blocks[s].next;
  if (n != NO_BLOCK && a->blocks[n].state == PTSIM_ALLOC_BLOCK_UNMAPPED) absorb_next(a, s, n);
  int32_t p = a->blocks[s].prev;
  if (p != NO_BLOCK && a->blocks[p].state == PTSIM_ALLOC_BLOCK_UNMAPPED) {
    absorb_next(a, p, s);
    s = p;
  }
  return s;
}

/* unmap_block (A11): gives the whole pages inside cached expandable block s
 * back; the slivers before and after stay cached.  Skipped when no two
 * slots are unused. */
PTSIM_HD static void unmap_pages(PtsimAllocator *a, int32_t s) {
  PtsimAllocBlock *b = &a->blocks[s];
  int64_t page = page_size(b->pool);
  int64_t base = b->segment_addr;
  int64_t lo = base + round_up(b->addr - base, page);
  int64_t hi = base + round_down(b->addr + b->size - base, page);
  if (hi <= lo) return;
  if (a->unused_count < 2) {
    a->starved_unmaps += 1;
    return;
  }
  int64_t end = b->addr + b->size;
  set_remove(a, s);
  int32_t mid = s;
  if (lo > b->addr) { /* keep the head sliver cached in s */
    b->size = lo - b->addr;
    mid = insert_after(a, s, lo, hi - lo, PTSIM_ALLOC_BLOCK_UNMAPPED);
    set_insert(a, s);
  } else {
    b->size = hi - lo;
    b->state = PTSIM_ALLOC_BLOCK_UNMAPPED;
  }
  if (end > hi) {
    int32_t tail = insert_after(a, mid, hi, end - hi, PTSIM_ALLOC_BLOCK_FREE);
    set_insert(a, tail);
  }
  merge_unmapped(a, mid);
  a->stats.reserved_bytes -= hi - lo;
  a->stats.num_device_free += 1;
}

/* release_cached_blocks (A7, A11): every unsplit cached segment is freed,
 * every cached expandable block loses its whole pages.  O(slots). */
PTSIM_HD static void release_all(PtsimAllocator *a) {
  for (int32_t s = 0; s < a->high_water; s++) {
    const PtsimAllocBlock *b = &a->blocks[s];
    if (b->state != PTSIM_ALLOC_BLOCK_FREE) continue;
    if (b->expandable)
      unmap_pages(a, s);
    else if (!is_split(b))
      release_segment(a, s);
  }
}

PTSIM_HD void ptsim_alloc_empty_cache(PtsimAllocator *a) { release_all(a); }

PTSIM_HD void ptsim_alloc_reset_peaks(PtsimAllocator *a) {
  PtsimAllocStats *st = &a->stats;
  st->allocated_bytes_peak = st->allocated_bytes;
  st->requested_bytes_peak = st->requested_bytes;
  st->active_bytes_peak = st->active_bytes;
  st->reserved_bytes_peak = st->reserved_bytes;
  st->inactive_split_bytes_peak = st->inactive_split_bytes;
}

/* release_available_cached_blocks (A7): only with max_split_size set.  The
 * smallest cached oversize block of this stream with size >= max(request,
 * max_split_size), else oversize blocks from the largest down until the
 * freed total reaches that size.  Returns 1 when enough was freed. */
PTSIM_HD static int release_oversize(PtsimAllocator *a, int32_t pool, int32_t stream,
                                     int64_t size) {
  if (a->max_split_bytes == INT64_MAX || a->opts.expandable_segments) return 0;
  int64_t key = imax(size, a->max_split_bytes);
  int32_t pos = set_lower_bound(a, pool, stream, key, 0);
  if (pos < a->free_count) {
    int32_t s = a->order[pos];
    const PtsimAllocBlock *b = &a->blocks[s];
    if (b->pool == pool && b->stream == stream && !is_split(b)) {
      release_segment(a, s);
      return 1;
    }
  }
  int64_t released = 0;
  while (released < key && pos > 0) {
    int32_t s = a->order[pos - 1];
    const PtsimAllocBlock *b = &a->blocks[s];
    if (b->pool != pool || b->stream != stream || b->size < a->max_split_bytes) break;
    pos -= 1;
    if (is_split(b)) continue;
    released += b->size;
    release_segment(a, s);
  }
  return released >= key;
}

/* garbage_collect_cached_blocks (A8): free unsplit large cached segments
 * whose age (searches of the large pool since they were cached) is at least
 * the average, pass after pass, until the reclaimed bytes reach
 * reserved - threshold x allowed or no candidate is left. */
PTSIM_HD static void garbage_collect(PtsimAllocator *a) {
  double goal = a->opts.garbage_collection_threshold * (double)a->limit_bytes;
  if ((double)a->stats.reserved_bytes <= goal) return;
  double target = (double)a->stats.reserved_bytes - goal;
  int64_t now = a->searches[PTSIM_ALLOC_POOL_LARGE];
  double reclaimed = 0.0;
  for (;;) {
    int64_t total_age = 0, count = 0;
    for (int32_t k = 0; k < a->free_count; k++) {
      const PtsimAllocBlock *b = &a->blocks[a->order[k]];
      if (b->pool != PTSIM_ALLOC_POOL_LARGE || b->expandable || is_split(b)) continue;
      total_age += now - b->gc_base_;
      count += 1;
    }
    if (count == 0 || reclaimed >= target) return;
    double average = (double)total_age / (double)count;
    int freed = 0;
    int32_t k = 0;
    while (k < a->free_count) {
      int32_t s = a->order[k];
      const PtsimAllocBlock *b = &a->blocks[s];
      if (b->pool == PTSIM_ALLOC_POOL_LARGE && !b->expandable && !is_split(b) &&
          (double)(now - b->gc_base_) >= average) {
        reclaimed += (double)b->size;
        release_segment(a, s);
        a->stats.num_gc_frees += 1;
        freed = 1;
        continue; /* position k now holds the next block */
      }
      k += 1;
    }
    if (!freed) return;
  }
}

/* ---- finding a block ---- */

/* Size an expandable cached block can grow to: itself plus an unmapped
 * range right after it (A6, step 3). */
PTSIM_HD static int64_t expandable_size(const PtsimAllocator *a, int32_t s) {
  const PtsimAllocBlock *b = &a->blocks[s];
  int64_t n = b->size;
  if (b->next != NO_BLOCK && a->blocks[b->next].state == PTSIM_ALLOC_BLOCK_UNMAPPED)
    n += a->blocks[b->next].size;
  return n;
}

/* get_free_block (A6): best fit on the same stream with the max_split_size
 * filters.  Returns a slot or -1; the block stays in the free set, at
 * position *at, for hand_out to take. */
PTSIM_HD static int32_t get_free_block(PtsimAllocator *a, int32_t pool, int32_t stream,
                                       int64_t size, int32_t *at) {
  if (gc_enabled(a)) a->searches[pool] += 1;
  int32_t pos = set_best_fit(a, pool, stream, size);
  if (pos >= a->free_count) return NO_BLOCK;
  int32_t s = a->order[pos];
  const PtsimAllocBlock *b = &a->blocks[s];
  if (b->pool != pool || b->stream != stream) return NO_BLOCK;
  if (b->expandable) {
    while (pos + 1 < a->free_count) {
      int32_t t = a->order[pos + 1];
      const PtsimAllocBlock *c = &a->blocks[t];
      if (c->pool != pool || c->stream != stream || !c->expandable) break;
      if (expandable_size(a, t) >= expandable_size(a, s)) break;
      pos += 1;
      s = t;
    }
    b = &a->blocks[s];
  }
  if (size < a->max_split_bytes && b->size >= a->max_split_bytes) return NO_BLOCK;
  if (size >= a->max_split_bytes && b->size >= size + a->opts.max_non_split_rounding_bytes)
    return NO_BLOCK;
  *at = pos;
  return s;
}

/* ---- getting memory from the device ---- */

/* alloc_block, plain (A7): a new unsplit segment of alloc_size, or -1 when
 * it would pass the limit. */
PTSIM_HD static int32_t new_segment(PtsimAllocator *a, int32_t pool, int32_t stream,
                                    int64_t alloc_size) {
  if (a->stats.reserved_bytes + alloc_size > a->limit_bytes) return NO_BLOCK;
  int32_t s = slot_take(a);
  PtsimAllocBlock *b = &a->blocks[s];
  b->addr = a->next_addr;
  b->size = alloc_size;
  b->segment_addr = b->addr;
  b->segment_size = alloc_size;
  b->stream = stream;
  b->pool = pool;
  b->state = PTSIM_ALLOC_BLOCK_ALLOCATED; /* not cached: about to be handed out */
  a->next_addr += round_up(alloc_size, PTSIM_ALLOC_ROUND_LARGE);
  reserve(a, alloc_size);
  a->stats.segments += 1;
  if (alloc_size >= a->max_split_bytes) a->stats.oversize_segments += 1;
  return s;
}

/* Reserves a new expandable range for (stream, pool): 1 1/8 x capacity,
 * whole pages, one unmapped block.  Returns its first slot or -1. */
PTSIM_HD static int32_t new_expandable(PtsimAllocator *a, int32_t pool, int32_t stream,
                                       int64_t size) {
  if (a->num_expandable >= PTSIM_ALLOC_MAX_EXPANDABLE) return NO_BLOCK;
  int64_t page = page_size(pool);
  int64_t virt = round_up(imax(a->capacity_bytes + a->capacity_bytes / 8, size), page);
  if (virt <= 0) virt = page;
  int32_t s = slot_take(a);
  PtsimAllocBlock *b = &a->blocks[s];
  b->addr = a->next_addr;
  b->size = virt;
  b->segment_addr = b->addr;
  b->segment_size = virt;
  b->stream = stream;
  b->pool = pool;
  b->expandable = 1;
  b->state = PTSIM_ALLOC_BLOCK_UNMAPPED;
  a->next_addr += round_up(virt, PTSIM_ALLOC_LARGE_BUFFER);
  a->expandable[a->num_expandable] = s;
  a->num_expandable += 1;
  a->stats.segments += 1;
  return s;
}

/* try_allocate_expandable_block (A11): the lowest-address unmapped range of
 * this stream and pool that, with the cached block just before it, holds
 * `size`; maps the missing pages and merges them with cached neighbours.
 * Returns the resulting block (not in the free set) or -1. */
PTSIM_HD static int32_t grow_expandable(PtsimAllocator *a, int32_t pool, int32_t stream,
                                        int64_t size) {
  int32_t u = NO_BLOCK;
  int64_t before = 0;
  for (int32_t e = 0; e < a->num_expandable && u == NO_BLOCK; e++) {
    int32_t s = a->expandable[e];
    if (a->blocks[s].pool != pool || a->blocks[s].stream != stream) continue;
    for (; s != NO_BLOCK; s = a->blocks[s].next) {
      const PtsimAllocBlock *b = &a->blocks[s];
      if (b->state != PTSIM_ALLOC_BLOCK_UNMAPPED) continue;
      int64_t prev_free = 0;
      if (b->prev != NO_BLOCK && a->blocks[b->prev].state == PTSIM_ALLOC_BLOCK_FREE)
        prev_free = a->blocks[b->prev].size;
      if (prev_free + b->size >= size) {
        u = s;
        before = prev_free;
        break;
      }
    }
  }
  if (u == NO_BLOCK) {
    u = new_expandable(a, pool, stream, size);
    if (u == NO_BLOCK) return NO_BLOCK;
    before = 0;
  }
  int64_t map = round_up(size - before, page_size(pool));
  if (map > a->blocks[u].size) map = a->blocks[u].size;
  if (a->stats.reserved_bytes + map > a->limit_bytes) return NO_BLOCK;
  PtsimAllocBlock *ub = &a->blocks[u];
  if (map < ub->size)
    insert_after(a, u, ub->addr + map, ub->size - map, PTSIM_ALLOC_BLOCK_UNMAPPED);
  ub = &a->blocks[u];
  ub->size = map;
  ub->state = PTSIM_ALLOC_BLOCK_ALLOCATED; /* not cached: about to be handed out */
  reserve(a, map);
  int32_t m = u;
  int32_t n = ub->next;
  if (n != NO_BLOCK && a->blocks[n].state == PTSIM_ALLOC_BLOCK_FREE) {
    set_remove(a, n);
    absorb_next(a, m, n);
  }
  int32_t p = a->blocks[m].prev;
  if (p != NO_BLOCK && a->blocks[p].state == PTSIM_ALLOC_BLOCK_FREE) {
    set_remove(a, p);
    absorb_next(a, p, m);
    a->blocks[p].state = PTSIM_ALLOC_BLOCK_ALLOCATED;
    m = p;
  }
  return m;
}

PTSIM_HD static int32_t alloc_block(PtsimAllocator *a, int32_t pool, int32_t stream, int64_t size,
                                    int64_t alloc_size) {
  if (a->opts.expandable_segments) return grow_expandable(a, pool, stream, size);
  return new_segment(a, pool, stream, alloc_size);
}

/* ---- malloc and free ---- */

/* alloc_found_block (A5): hands out the front of block s, splitting off
 * the rest when should_split says so.  at: s's position in the free set,
 * or -1 when it is not cached (a new segment); the rest takes its place. */
PTSIM_HD static void hand_out(PtsimAllocator *a, int32_t s, int64_t size, int64_t requested,
                              int32_t at) {
  PtsimAllocBlock *b = &a->blocks[s];
  int split = should_split(a, b, size);
  if (at >= 0 && !split) set_remove_at(a, at);
  if (at >= 0 && split) set_uncached(a, s);
  if (split) {
    int32_t rest = insert_after(a, s, b->addr + size, b->size - size, PTSIM_ALLOC_BLOCK_FREE);
    a->blocks[s].size = size;
    if (at >= 0) {
      set_settle(a, at, rest);
      set_cached(a, rest);
    } else {
      set_insert(a, rest);
    }
  }
  b = &a->blocks[s];
  b->state = PTSIM_ALLOC_BLOCK_ALLOCATED;
  b->requested = requested;
  PtsimAllocStats *st = &a->stats;
  st->allocated_bytes += b->size;
  bump_peak(st->allocated_bytes, &st->allocated_bytes_peak);
  st->active_bytes = st->allocated_bytes;
  st->active_bytes_peak = st->allocated_bytes_peak;
  st->requested_bytes += requested;
  bump_peak(st->requested_bytes, &st->requested_bytes_peak);
  st->allocations += 1;
  if (b->size >= a->max_split_bytes) st->oversize_allocations += 1;
}

PTSIM_HD int32_t ptsim_alloc_malloc(PtsimAllocator *a, int64_t size_bytes, int32_t stream) {
  if (size_bytes < 0 || stream < 0 || size_bytes > PTSIM_ALLOC_MAX_REQUEST_BYTES)
    return PTSIM_ALLOC_ERR_ARGS;
  if (a->unused_count < SLOTS_PER_MALLOC) return PTSIM_ALLOC_ERR_NO_BLOCKS;
  /* without power-2 divisions (the default) a request rounds to 512 B */
  int64_t size = a->divided ? ptsim_alloc_round_size(&a->opts, size_bytes)
                            : round_up(size_bytes > 0 ? size_bytes : 1, PTSIM_ALLOC_MIN_BLOCK);
  int32_t pool = size <= PTSIM_ALLOC_SMALL_SIZE ? PTSIM_ALLOC_POOL_SMALL : PTSIM_ALLOC_POOL_LARGE;
  int32_t at = -1;
  int32_t s = get_free_block(a, pool, stream, size, &at);
  if (s == NO_BLOCK) {
    int64_t alloc_size = ptsim_alloc_segment_size(size); /* a miss: what to reserve */
    if (gc_enabled(a)) garbage_collect(a);
    s = alloc_block(a, pool, stream, size, alloc_size);
    if (s == NO_BLOCK && release_oversize(a, pool, stream, size))
      s = alloc_block(a, pool, stream, size, alloc_size);
    if (s == NO_BLOCK) {
      release_all(a);
      a->stats.num_alloc_retries += 1;
      if (a->unused_count >= SLOTS_PER_MALLOC) s = alloc_block(a, pool, stream, size, alloc_size);
    }
    if (s == NO_BLOCK) {
      a->stats.num_ooms += 1;
      return PTSIM_ALLOC_ERR_OOM;
    }
  }
  hand_out(a, s, size, size_bytes, at);
  return s;
}

PTSIM_HD int32_t ptsim_alloc_malloc_free(PtsimAllocator *a, int64_t size_bytes, int32_t stream,
                                         int64_t *addr) {
  if (size_bytes < 0 || stream < 0 || size_bytes > PTSIM_ALLOC_MAX_REQUEST_BYTES)
    return PTSIM_ALLOC_ERR_ARGS;
  if (a->unused_count < SLOTS_PER_MALLOC) return PTSIM_ALLOC_ERR_NO_BLOCKS;
  int32_t s = NO_BLOCK, at = -1;
  int64_t size = 0;
  /* GC ages cached blocks, and an expandable block may grow into its
   * unmapped neighbour: those take the two calls */
  if (!gc_enabled(a) && !a->opts.expandable_segments) {
    size = a->divided ? ptsim_alloc_round_size(&a->opts, size_bytes)
                      : round_up(size_bytes > 0 ? size_bytes : 1, PTSIM_ALLOC_MIN_BLOCK);
    int32_t pool = size <= PTSIM_ALLOC_SMALL_SIZE ? PTSIM_ALLOC_POOL_SMALL : PTSIM_ALLOC_POOL_LARGE;
    s = get_free_block(a, pool, stream, size, &at);
  }
  if (s == NO_BLOCK) {
    int32_t h = ptsim_alloc_malloc(a, size_bytes, stream);
    if (h < 0) return h;
    *addr = a->blocks[h].addr;
    return ptsim_alloc_free(a, h);
  }
  /* A cached block serves it: malloc splits off the rest (or takes it
   * whole) and free merges it back, leaving every block as it was (its
   * neighbours are not cached: cached neighbours are merged).  What
   * remains are the peaks the two calls pass through. */
  const PtsimAllocBlock *b = &a->blocks[s];
  PtsimAllocStats *st = &a->stats;
  int64_t counted = !b->expandable && is_split(b) ? b->size : 0;
  int64_t handed = b->size;
  if (should_split(a, b, size)) {
    handed = size;
    /* the rest, cached in a split segment, while the front is out */
    bump_peak(st->inactive_split_bytes - counted + (b->size - size),
              &st->inactive_split_bytes_peak);
  }
  bump_peak(st->allocated_bytes + handed, &st->allocated_bytes_peak);
  st->active_bytes_peak = st->allocated_bytes_peak;
  bump_peak(st->requested_bytes + size_bytes, &st->requested_bytes_peak);
  *addr = b->addr;
  return 0;
}

PTSIM_HD int32_t ptsim_alloc_free(PtsimAllocator *a, int32_t h) {
  if (h < 0 || h >= a->high_water || a->blocks[h].state != PTSIM_ALLOC_BLOCK_ALLOCATED)
    return PTSIM_ALLOC_ERR_HANDLE;
  PtsimAllocBlock *b = &a->blocks[h];
  PtsimAllocStats *st = &a->stats;
  st->allocated_bytes -= b->size;
  st->active_bytes = st->allocated_bytes;
  st->requested_bytes -= b->requested;
  st->allocations -= 1;
  if (b->size >= a->max_split_bytes) st->oversize_allocations -= 1;
  b->requested = 0;
  b->state = PTSIM_ALLOC_BLOCK_FREE; /* not in the set yet */
  int32_t n = b->next, p = b->prev;
  int n_free = n != NO_BLOCK && a->blocks[n].state == PTSIM_ALLOC_BLOCK_FREE;
  int p_free = p != NO_BLOCK && a->blocks[p].state == PTSIM_ALLOC_BLOCK_FREE;
  /* the merged block takes the element of a cached neighbour (the
   * previous one's when both are cached) */
  if (n_free && p_free) set_remove(a, n);
  if (n_free || p_free) {
    int32_t keep = p_free ? p : n;
    int32_t at = set_find(a, keep);
    set_uncached(a, keep);
    if (n_free) absorb_next(a, h, n);
    int32_t s = h;
    if (p_free) {
      absorb_next(a, p, h);
      s = p;
    }
    set_settle(a, at, s);
    set_cached(a, s);
    return 0;
  }
  set_insert(a, h);
  return 0;
}

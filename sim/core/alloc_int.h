/* alloc_int.h — what the allocator's source files share and nobody else
 * sees: address constants and small helpers (sqlite's xInt.h pattern).  The
 * public contract is alloc.h; the files are alloc.c (blocks, the free set,
 * malloc and free), alloc_rules.c (options and size rules),
 * alloc_check.c (invariants and queries) and alloc_state.c (the state as
 * words).
 *
 * Core: pure C, PTSIM_HD, no allocation, no I/O. */
#ifndef PTSIM_ALLOC_INT_H
#define PTSIM_ALLOC_INT_H

#include "alloc.h"

#define MIB ((int64_t)1048576)
#define NO_BLOCK ((int32_t)-1)
/* Address of the first segment (2 MiB-aligned, away from 0). */
#define FIRST_ADDR ((int64_t)1 << 32)

static inline PTSIM_HD int64_t round_up(int64_t x, int64_t m) { return ((x + m - 1) / m) * m; }

static inline PTSIM_HD int64_t round_down(int64_t x, int64_t m) { return (x / m) * m; }

static inline PTSIM_HD int64_t imax(int64_t x, int64_t y) { return x > y ? x : y; }

/* floor(log2(x)) for x >= 1, in six halvings (every malloc asks). */
static inline PTSIM_HD int32_t log2_floor(int64_t x) {
  uint64_t v = (uint64_t)x;
  int32_t r = 0;
  for (int32_t shift = 32; shift > 0; shift >>= 1)
    if (v >> shift) {
      v >>= shift;
      r += shift;
    }
  return r;
}

static inline PTSIM_HD int is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

static inline PTSIM_HD void bump_peak(int64_t cur, int64_t *peak) {
  if (cur > *peak) *peak = cur;
}

/* Page size of an expandable segment of this pool (A11). */
static inline PTSIM_HD int64_t page_size(int32_t pool) {
  return pool == PTSIM_ALLOC_POOL_SMALL ? PTSIM_ALLOC_SMALL_BUFFER : PTSIM_ALLOC_LARGE_BUFFER;
}

static inline PTSIM_HD int is_split(const PtsimAllocBlock *b) {
  return b->prev != NO_BLOCK || b->next != NO_BLOCK;
}

/* 1 when block x sorts before the key (pool, stream, size, addr).  One
 * expression rather than a return per field: the searches branch once per
 * step on its value (the comparison that goes either way), not once per
 * field. */
static inline PTSIM_HD int key_less(const PtsimAllocBlock *x, int32_t pool, int32_t stream,
                                    int64_t size, int64_t addr) {
  return x->pool != pool       ? x->pool < pool
         : x->stream != stream ? x->stream < stream
         : x->size != size     ? x->size < size
                               : x->addr < addr;
}

#endif /* PTSIM_ALLOC_INT_H */

/* alloc.h — an emulation of PyTorch's CUDA caching allocator, in storage the
 * caller provides.
 *
 * What it is: the allocator's bookkeeping, replayed on synthetic addresses.
 * Requests are rounded (512 B, optionally power-of-two divisions), routed to
 * the small (<= 1 MiB) or large pool, served best-fit from the cached free
 * blocks of the same stream (ordered by pool, stream, size, address), and on
 * a miss from a new "cudaMalloc" segment (2 MiB, 20 MiB, or the request
 * rounded up to 2 MiB) checked against a device capacity.  Blocks are split
 * and coalesced as the reference describes; the slow path frees oversize
 * cached blocks (max_split_size set), then every unsplit cached segment,
 * then reports out-of-memory.  Options: max_split_size, max_non_split
 * rounding, roundup_power2_divisions per interval, garbage_collection
 * threshold with a memory fraction, expandable segments (one growing
 * segment per stream and pool, mapped in 2 MiB / 20 MiB pages).  The rules
 * and their sources are in shared/reference/pytorch_caching_allocator.md
 * (sections A1-A12); alloc.c says which section each function follows.
 *
 * What it is not: a real allocator (no memory behind the addresses), and
 * not the whole of PyTorch's: no CUDA-graph private pools, no cross-stream
 * recordStream (so a free is reusable at once and active == allocated), no
 * free-memory callbacks, no cudaMallocAsync backend.  With expandable
 * segments the oversize release step (release_available_cached_blocks) and
 * the garbage collector skip expandable blocks (the reference notes their
 * mix was buggy and that GC excludes them); the other steps apply.
 *
 * State: a PtsimAllocator plus an array of PtsimAllocBlock the caller owns
 * (a local array, a g_new block, device memory) and keeps alive as long as
 * the allocator.  Every block (allocated, cached free, or an unmapped range
 * of an expandable segment) is one slot; a handle is a slot index.  The
 * sorted free set's order (one int32 per slot) takes the tail of the same
 * array, so no other storage is needed: capacity_blocks slots of storage
 * hold capacity_blocks x 20/21 blocks (sizeof(PtsimAllocBlock) is 80).  A
 * malloc needs at most 3 unused slots; without them it fails with
 * PTSIM_ALLOC_ERR_NO_BLOCKS and changes nothing.
 *
 * Sizes and addresses are int64_t bytes.  Costs: malloc hit O(log n + n)
 * (binary searches, then one memmove of part of the order of the n cached
 * free blocks: a split's rest takes its block's element, a merge the
 * cached neighbour's), free likewise; a miss with expandable segments
 * walks the stream's segment, O(its blocks); the slow path and
 * empty_cache O(slots).  Measured (-O2, bench/): ~30 ns per operation
 * on the replays of lifetimes.c (hundreds of cached blocks); a treap in
 * the slots (tried) was 15-35% slower than the sorted array there.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O. */
#ifndef PTSIM_ALLOC_H
#define PTSIM_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include "hd.h"

/* ---- constants of the reference (A1) ---- */
#define PTSIM_ALLOC_MIN_BLOCK ((int64_t)512)            /* kMinBlockSize */
#define PTSIM_ALLOC_SMALL_SIZE ((int64_t)1048576)       /* kSmallSize: 1 MiB */
#define PTSIM_ALLOC_SMALL_BUFFER ((int64_t)2097152)     /* kSmallBuffer: 2 MiB */
#define PTSIM_ALLOC_MIN_LARGE_ALLOC ((int64_t)10485760) /* kMinLargeAlloc: 10 MiB */
#define PTSIM_ALLOC_LARGE_BUFFER ((int64_t)20971520)    /* kLargeBuffer: 20 MiB */
#define PTSIM_ALLOC_ROUND_LARGE ((int64_t)2097152)      /* kRoundLarge: 2 MiB */
#define PTSIM_ALLOC_DIVISION_INTERVALS 16               /* 1 MiB .. 32 GiB and up */
/* Expandable segments that may exist at once (one per stream and pool is
 * the usual case; a new one is only reserved when no range of the old ones
 * fits). */
#define PTSIM_ALLOC_MAX_EXPANDABLE 64

/* ---- bounds of the emulation (not the reference's), in bytes ---- */
/* The largest request malloc takes (larger: PTSIM_ALLOC_ERR_ARGS): 2^56 B =
 * 64 PiB, past any device, and so far below INT64_MAX (2^63) that rounding
 * it up to a segment and adding it to the counters stays in range. */
#define PTSIM_ALLOC_MAX_REQUEST_BYTES ((int64_t)1 << 56)
/* The largest capacity init takes, compared as a double (NaN fails too):
 * just below INT64_MAX (9.22e18), so that the cast to int64 is defined. */
#define PTSIM_ALLOC_MAX_CAPACITY_BYTES 9.0e18
/* For a caller that holds sizes as doubles (lifetimes.c): a tensor of this
 * many bytes or more is out of memory without asking malloc.  Past any
 * device, and below INT64_MAX with room to spare, so that the cast of any
 * smaller size to int64 is defined. */
#define PTSIM_ALLOC_OOM_BYTES 4e18

/* ---- return codes (handles are >= 0) ---- */
#define PTSIM_ALLOC_ERR_OOM (-1)       /* malloc: device capacity exhausted */
#define PTSIM_ALLOC_ERR_NO_BLOCKS (-2) /* fewer than 3 unused block slots */
#define PTSIM_ALLOC_ERR_ARGS (-3)      /* bad options, size < 0, stream < 0 */
#define PTSIM_ALLOC_ERR_HANDLE (-4)    /* free: not an allocated block */

/* Pools (A2). */
#define PTSIM_ALLOC_POOL_SMALL 0
#define PTSIM_ALLOC_POOL_LARGE 1

/* Block states. */
#define PTSIM_ALLOC_BLOCK_UNUSED 0    /* slot holds no block */
#define PTSIM_ALLOC_BLOCK_ALLOCATED 1 /* handed out */
#define PTSIM_ALLOC_BLOCK_FREE 2      /* cached: in the free set */
#define PTSIM_ALLOC_BLOCK_UNMAPPED 3  /* expandable segment: no pages behind it */

/* PYTORCH_CUDA_ALLOC_CONF, as plain numbers (parsing is the shell's job). */
typedef struct {
  /* max_split_size_mb in bytes; 0 = unlimited (the default), else >= 20 MiB.
   * Blocks of at least this size are never split, and requests below it
   * never take them (A5, A6, A12). */
  int64_t max_split_size_bytes;
  /* max_non_split_rounding_mb in bytes (default 20 MiB, minimum 20 MiB): the
   * slack an oversize request may accept from an oversize cached block. */
  int64_t max_non_split_rounding_bytes;
  /* roundup_power2_divisions per interval: element i applies to sizes in
   * [2^(20+i), 2^(21+i)) (element 0 also below 1 MiB, element 15 also
   * above).  0 or 1 = off; otherwise a power of two (A3). */
  int32_t roundup_power2_divisions[PTSIM_ALLOC_DIVISION_INTERVALS];
  /* garbage_collection_threshold in (0, 1); 0 = off.  Only acts when
   * memory_fraction is set too (A8). */
  double garbage_collection_threshold;
  /* torch.cuda.set_per_process_memory_fraction in (0, 1]; 0 = not set.  The
   * allowed maximum is fraction x capacity. */
  double memory_fraction;
  /* expandable_segments:True (A11). */
  int32_t expandable_segments;
} PtsimAllocOptions;

/* One block: a range of one segment.  The caller reads the fields before
 * the ones ending in _; those are the allocator's own. */
typedef struct {
  int64_t addr;         /* first byte (synthetic device address) */
  int64_t size;         /* bytes, a multiple of 512 */
  int64_t requested;    /* bytes the caller asked for (allocated), else 0 */
  int64_t segment_addr; /* the segment's first byte */
  int64_t segment_size; /* the segment's bytes (virtual size when expandable) */
  int32_t stream;       /* the stream that allocated the segment */
  int32_t pool;         /* PTSIM_ALLOC_POOL_* */
  int32_t state;        /* PTSIM_ALLOC_BLOCK_* */
  int32_t expandable;   /* 1: part of an expandable segment */
  int32_t prev, next;   /* address neighbours in the segment, -1 none */
  int64_t gc_base_;     /* private: pool's free-block searches when cached */
  int32_t link_;        /* private: next unused slot while unused */
} PtsimAllocBlock;

/* The counters of torch.cuda.memory_stats() that this emulation keeps
 * (A10), all pools together.  _peak is the high-water mark since init
 * or the last ptsim_alloc_reset_peaks. */
typedef struct {
  int64_t allocated_bytes, allocated_bytes_peak;           /* block sizes handed out */
  int64_t requested_bytes, requested_bytes_peak;           /* sizes asked for */
  int64_t active_bytes, active_bytes_peak;                 /* == allocated (no recordStream) */
  int64_t reserved_bytes, reserved_bytes_peak;             /* segments (mapped pages) */
  int64_t inactive_split_bytes, inactive_split_bytes_peak; /* cached, in split
                                                      non-expandable segments */
  int64_t allocations;                                     /* blocks handed out now */
  int64_t segments;             /* segments now (expandable: reserved ranges) */
  int64_t oversize_allocations; /* allocated blocks >= max_split_size now */
  int64_t oversize_segments;    /* segments >= max_split_size now */
  int64_t num_device_alloc;     /* cudaMalloc calls (expandable: page maps) */
  int64_t num_device_free;      /* cudaFree calls (expandable: page unmaps) */
  int64_t num_alloc_retries;    /* slow path reached "free all and retry" */
  int64_t num_ooms;             /* mallocs that failed for capacity */
  int64_t num_gc_frees;         /* segments freed by the garbage collector */
} PtsimAllocStats;

typedef struct {
  PtsimAllocOptions opts;
  int64_t capacity_bytes;  /* device memory cudaMalloc may take */
  int64_t limit_bytes;     /* min(capacity, fraction x capacity) */
  int64_t max_split_bytes; /* effective max_split_size (INT64_MAX: unlimited) */
  int64_t next_addr;       /* bump counter of virtual addresses */
  int64_t searches[2];     /* free-block searches per pool (GC ages) */
  PtsimAllocBlock *blocks; /* caller's storage (transfer none) */
  int32_t *order;          /* the sorted free set: slots, in the storage's tail */
  int32_t capacity_blocks; /* block slots (the storage less the order's tail) */
  int32_t high_water;      /* slots [0, high_water) have been used */
  int32_t unused_head;     /* chain of unused slots below high_water, -1 */
  int32_t unused_count;    /* slots not holding a block, all of them */
  int32_t free_count;      /* elements of the sorted free set */
  int64_t starved_unmaps;  /* page unmaps skipped for want of two unused slots
                              (the one outcome that depends on slot order) */
  int32_t num_expandable;  /* entries of expandable[] */
  int32_t divided;         /* some interval has roundup_power2_divisions > 1 */
  int32_t expandable[PTSIM_ALLOC_MAX_EXPANDABLE]; /* first block of each
                                                     expandable segment */
  PtsimAllocStats stats;
} PtsimAllocator;

/* Defaults: no max_split_size, 20 MiB non-split rounding, no power-2
 * divisions, no GC, no fraction, no expandable segments. */
PTSIM_HD void ptsim_alloc_options_init(PtsimAllocOptions *opts);

/* Sets every interval of roundup_power2_divisions to `divisions`. */
PTSIM_HD void ptsim_alloc_options_set_divisions(PtsimAllocOptions *opts, int32_t divisions);

/* 1 when every option is within its range (what ptsim_alloc_init accepts):
 * max_split_size 0 or at least 20 MiB, non-split rounding at least 20 MiB,
 * divisions 0, 1 or a power of two, GC threshold in [0, 1), fraction in
 * [0, 1]. */
PTSIM_HD int ptsim_alloc_options_valid(const PtsimAllocOptions *opts);

/* Storage slots (the capacity_blocks of ptsim_alloc_init) that hold
 * exactly `blocks` blocks besides the free set's order. */
PTSIM_HD int64_t ptsim_alloc_storage_slots(int64_t blocks);

/* Makes an empty allocator over storage[0..capacity_blocks).  opts may be
 * NULL (defaults).  capacity_bytes: device memory available to the
 * allocator (HBM minus context and non-PyTorch buffers); fractional bytes
 * are dropped.  Returns 0, or PTSIM_ALLOC_ERR_ARGS (NULL a or storage,
 * capacity_blocks < 3, capacity_bytes < 0 or not finite, an option out of
 * its range); the allocator is unusable then. */
PTSIM_HD int32_t ptsim_alloc_init(PtsimAllocator *a, const PtsimAllocOptions *opts,
                                  double capacity_bytes, PtsimAllocBlock *storage,
                                  int32_t capacity_blocks);

/* Allocates size_bytes on stream (>= 0).  Size 0 is served as 512 B
 * (PyTorch itself never calls its allocator for 0 bytes; callers replaying
 * real traces should skip them).  Returns a handle (>= 0, the block's slot),
 * or PTSIM_ALLOC_ERR_OOM (num_ooms counted; the cache may have been released
 * on the way, as PyTorch does), PTSIM_ALLOC_ERR_NO_BLOCKS (nothing changed),
 * PTSIM_ALLOC_ERR_ARGS (size < 0 or > PTSIM_ALLOC_MAX_REQUEST_BYTES, stream
 * < 0). */
PTSIM_HD int32_t ptsim_alloc_malloc(PtsimAllocator *a, int64_t size_bytes, int32_t stream);

/* Frees a handle from ptsim_alloc_malloc; its memory is cached and
 * reusable at once by the same stream.  The handle is invalid afterwards
 * (its slot may be reused).  Returns 0 or PTSIM_ALLOC_ERR_HANDLE (nothing
 * changed). */
PTSIM_HD int32_t ptsim_alloc_free(PtsimAllocator *a, int32_t handle);

/* ptsim_alloc_malloc then, at once, ptsim_alloc_free of the block: a
 * tensor that lives between two others' (a collective's output reduced at
 * once).  The same state, counters and peaks as the two calls, handles
 * aside; without moving a block when a cached one serves it (the common
 * case).  *addr: the block's address.  Returns 0 or malloc's error code
 * (nothing was allocated then). */
PTSIM_HD int32_t ptsim_alloc_malloc_free(PtsimAllocator *a, int64_t size_bytes, int32_t stream,
                                         int64_t *addr);

/* torch.cuda.empty_cache(): cudaFree every cached segment that is one whole
 * free block; with expandable segments, unmap every whole free page. */
PTSIM_HD void ptsim_alloc_empty_cache(PtsimAllocator *a);

/* torch.cuda.reset_peak_memory_stats(): every _peak counter becomes its
 * current value, so later peaks are those of what follows. */
PTSIM_HD void ptsim_alloc_reset_peaks(PtsimAllocator *a);

/* Copies the counters. */
PTSIM_HD void ptsim_alloc_stats(const PtsimAllocator *a, PtsimAllocStats *out);

/* The block behind a handle, or NULL when the handle is not allocated.
 * (transfer none) */
PTSIM_HD const PtsimAllocBlock *ptsim_alloc_block(const PtsimAllocator *a, int32_t handle);

/* Checks every invariant: each segment is tiled exactly by its blocks
 * (contiguous, linked both ways, same stream and pool); no two segments
 * overlap; no two neighbouring cached blocks (nor unmapped ranges) were
 * left unmerged; the free set holds exactly the cached blocks, sorted by
 * (pool, stream, size, address); the counters equal sums over the blocks;
 * allocated <= reserved <= limit.  Returns 0, or a negative number naming
 * the first broken invariant (see alloc.c).  O(slots + segments^2). */
PTSIM_HD int32_t ptsim_alloc_check(const PtsimAllocator *a);

/* ---- the state, for a replay that skips what repeats (alloc_state.c) ---- */

/* Words before the blocks in ptsim_alloc_state's output. */
#define PTSIM_ALLOC_STATE_HEADER (16 + PTSIM_ALLOC_MAX_EXPANDABLE)

/* The most words ptsim_alloc_state writes for an allocator over
 * capacity_blocks slots. */
PTSIM_HD int64_t ptsim_alloc_state_words(int32_t capacity_blocks);

/* Writes what decides the allocator's future, slot labels left out, and
 * returns the words written: the current counters, the next address, the
 * expandable segments' addresses, and every block (address, size,
 * request, segment, stream, pool, kind, age in free-block searches when
 * cached) in address order, segment by segment (the words past the
 * returned count are scratch).  Two allocators (or one at two moments) with
 * the same words and options answer every later malloc, free and
 * empty_cache alike, handles aside (the block at the same address); the
 * peaks and the counters that only grow (PtsimAllocCounters) are not in
 * the words.  O(slots + segments log segments). */
PTSIM_HD int64_t ptsim_alloc_state(const PtsimAllocator *a, int64_t *words);

/* A copy of the allocator as it is (its fields, and blocks [0, high_water)
 * into `blocks`: slot labels and all), in O(high_water) with no sorting,
 * for ptsim_alloc_state to read later (it gives on the copy the words it
 * gave on the allocator then); nothing else may use the copy.  Returns 0,
 * or -1 (nothing copied) when more than `room` slots have been used. */
PTSIM_HD int32_t ptsim_alloc_snapshot(const PtsimAllocator *a, PtsimAllocator *copy,
                                      PtsimAllocBlock *blocks, int32_t room);

/* The counters that only grow. */
typedef struct {
  int64_t num_device_alloc, num_device_free, num_alloc_retries, num_ooms, num_gc_frees;
  int64_t searches[2]; /* free-block searches per pool (the GC's clock) */
} PtsimAllocCounters;

PTSIM_HD void ptsim_alloc_counters(const PtsimAllocator *a, PtsimAllocCounters *out);

/* For a run whose state words at `before` equal those now: as if what
 * happened since `before` happened `times` more times.  The counters that
 * only grow grow by `times` x their growth since; cached blocks keep their
 * ages; the peaks stay (a repeat revisits the values already seen). */
PTSIM_HD void ptsim_alloc_repeat(PtsimAllocator *a, const PtsimAllocCounters *before,
                                 int64_t times);

/* ---- the rules, exposed for tests ---- */

/* round_size (A3): 512 B minimum and multiple, or the next power-2
 * division when the size's interval has divisions > 1 and
 * size > 512 x divisions. */
PTSIM_HD int64_t ptsim_alloc_round_size(const PtsimAllocOptions *opts, int64_t size_bytes);

/* roundup_power2_next_division (A3): size itself when a power of two, else
 * size rounded up to a multiple of floor_pow2(size) / divisions
 * (2 x floor_pow2(size) when that step is 0).  1200, 4 -> 1280. */
PTSIM_HD int64_t ptsim_alloc_next_division(int64_t size_bytes, int32_t divisions);

/* get_allocation_size (A4): the segment a miss of this rounded size
 * cudaMallocs: 2 MiB (<= 1 MiB), 20 MiB (< 10 MiB), else rounded to 2 MiB. */
PTSIM_HD int64_t ptsim_alloc_segment_size(int64_t rounded_bytes);

#endif /* PTSIM_ALLOC_H */

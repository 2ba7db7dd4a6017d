/* sharding.c — a pass over FSDP units on three streams; the rules are in
 * sharding.h.
 *
 * One walk over the units in pass order keeps when each stream is free:
 * the compute stream (the end of unit i-1's compute, and of i-2's for the
 * two-units-gathered limit), the communication stream and the replicas'
 * all-reduce stream.  With equal units the forward is exactly
 * g + c + (n-1) max(c, g) with prefetch (g all-gather, c compute), and
 * n (g + c) without; the tests check both. */
#include "sharding.h"

static PTSIM_HD double shard_max(double a, double b) { return a > b ? a : b; }

static PTSIM_HD const PtsimShardUnit *shard_unit(const PtsimShardPass *p, int64_t i, int64_t n) {
  if (i == 0 && p->has_first) return &p->first;
  if (i == n - 1 && p->has_last) return &p->last;
  return i - (p->has_first ? 1 : 0) < p->count ? &p->middle : &p->other;
}

PTSIM_HD double ptsim_sharding_pass_s(const PtsimShardPass *pass, int32_t prefetch,
                                      int32_t backward) {
  int64_t n = pass->count + pass->other_count + (pass->has_first ? 1 : 0) +
              (pass->has_last ? 1 : 0),
          i;
  double comm = 0.0, replicas = 0.0, done = 0.0, landed = 0.0;
  if (n <= 0) return 0.0;
  if (shard_unit(pass, 0, n)->gather_s > 0.0) comm = landed = shard_unit(pass, 0, n)->gather_s;
  for (i = 0; i < n; i++) {
    const PtsimShardUnit *u = shard_unit(pass, i, n);
    const PtsimShardUnit *next = i + 1 < n ? shard_unit(pass, i + 1, n) : (const PtsimShardUnit *)0;
    double end = shard_max(done, landed) + u->compute_s, reduced = 0.0;
    double next_landed = 0.0;
    /* prefetched: issued with this unit's compute, after unit i-1 is freed */
    if (prefetch && next && next->gather_s > 0.0) {
      comm = shard_max(comm, done) + next->gather_s;
      next_landed = comm;
    }
    if (backward && u->reduce_s > 0.0) {
      comm = shard_max(comm, end) + u->reduce_s;
      reduced = comm;
    }
    if (!prefetch && next && next->gather_s > 0.0) {
      comm = shard_max(comm, end) + next->gather_s;
      next_landed = comm;
    }
    if (backward && u->replicate_s > 0.0) replicas = shard_max(replicas, reduced) + u->replicate_s;
    done = end;
    landed = next_landed;
  }
  return shard_max(done, shard_max(comm, replicas));
}

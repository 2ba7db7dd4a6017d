/* sharding.h — the time of one forward or backward pass over a chunk's
 * FSDP units: each unit's compute on the compute stream, its all-gather
 * and reduce-scatter on the communication stream, exposed only where the
 * compute waits for them.
 *
 * Streams (Megatron-FSDP's docs/runtime_schedule.md and PyTorch FSDP2's
 * implicit prefetch, which these rules follow):
 *   compute        unit i starts when unit i-1 is done and its all-gather
 *                  has landed
 *   communication  all-gathers and reduce-scatters run one at a time in the
 *                  order they are issued: one NCCL communicator serialises
 *                  them even from separate CUDA streams
 *   replicas       HSDP's all-reduce of a reduced shard over the replicas
 *                  (another communicator): after its reduce-scatter, one at
 *                  a time
 * Prefetch: the all-gather of unit i+1 is issued with unit i's compute, so
 * in backward it comes before unit i's reduce-scatter; at most two units
 * are gathered at once, so it waits for unit i-1 to be freed (its compute
 * done).  Without prefetch it is issued when unit i's compute (and, in
 * backward, its reduce-scatter) is done, and is exposed in full.
 * Boundary: a pass starts with idle communication streams and ends when
 * its compute and every collective it issued are done, so a backward's
 * trailing reduce-scatter delays what follows on the stage; with one
 * communicator the next forward's first all-gather would wait for it
 * anyway.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.  Sibling:
 * sharding.c.  Not here: which units exist and what their collectives
 * cost (plan.h, workload.c). */
#ifndef PTSIM_SHARDING_H
#define PTSIM_SHARDING_H

#include <stdint.h>
#include "hd.h"

/* One unit of a pass; 0 for a collective it does not run. */
typedef struct {
  double compute_s;   /* its forward, or its backward (input + weight gradients) */
  double gather_s;    /* all-gather of its parameters before the compute */
  double reduce_s;    /* reduce-scatter of its gradients after the compute */
  double replicate_s; /* all-reduce of the reduced shard over the replicas */
} PtsimShardUnit;

/* A pass's units in the order it runs them: `first` (when has_first),
 * `count` copies of `middle`, `other_count` copies of `other` (a model
 * with two kinds of layer: dense and MoE), `last` (when has_last). */
typedef struct {
  PtsimShardUnit first, middle, other, last;
  int32_t has_first, has_last;
  int64_t count, other_count;
} PtsimShardPass;

/* Seconds from the pass's start until its compute and collectives are
 * done (the rules above); `backward`: reduce-scatters follow the compute
 * and the prefetched all-gather is issued before them.  Never fails;
 * an empty pass takes 0. */
PTSIM_HD double ptsim_sharding_pass_s(const PtsimShardPass *pass, int32_t prefetch,
                                      int32_t backward);

#endif /* PTSIM_SHARDING_H */

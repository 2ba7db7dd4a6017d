/* batch.h — many layouts at once: the per-job summary a sweep ranks by, and
 * the one function that fills it, shared by the CPU and the GPU.
 *
 * ptsim_batch_evaluate_one() runs the whole pipeline of one job — plan,
 * memory estimate, workload, engine — on caller-given scratch.  The CPU batch
 * (batch_cpu.c) calls it in a loop; the CUDA kernel (cuda/batch.cu) calls
 * exactly the same function, one thread per job, compiled from the same
 * source by nvcc.  With --fmad=false the two agree to the last bit where the
 * arithmetic is the same IEEE sequence (the core uses no libm); the tests
 * accept 1e-9 relative.
 *
 * Scratch per job (ptsim_batch_scratch_bytes), 16-byte aligned pieces:
 *
 *   | PtsimPlan | PtsimWorkload | PtsimMemoryEstimate | PtsimTimeResult |
 *   | Monte-Carlo samples | engine scratch |
 *
 * The four structs are kilobytes each (PTSIM_MAX_STAGES entries), too big
 * for a GPU thread's stack, so they live here rather than as locals.
 *
 * Core module: pure C, PTSIM_HD, no allocation, no I/O.
 * Not here: the GError wrappers (batch_cpu.h for the CPU, gpu.h for the GPU). */
#ifndef PTSIM_BATCH_H
#define PTSIM_BATCH_H

#include <stdint.h>
#include "hd.h"
#include "job.h"
#include "kernel_table.h"

/* status: the job's schedule could not be built or the engine failed
 * (a schedule or PTSIM_ENGINE_ERR_* code, negative).  */
#define PTSIM_BATCH_OK 0

/* What settled a result's `runs` verdict. */
typedef enum {
  PTSIM_RUNS_FROM_NONE = 0,     /* nothing yet: runs = -1 */
  PTSIM_RUNS_FROM_RULE = 1,     /* within the 80% rule: runs, as no measured layout
                                 * under it ran out of memory (the seed's finding) */
  PTSIM_RUNS_FROM_FLOOR = 2,    /* held_floor_bytes + context/NCCL exceed the GPU */
  PTSIM_RUNS_FROM_ALLOCATOR = 3 /* the caching-allocator emulation of both phases */
} PtsimRunsFrom;

/* One job's result.  Memory fields are those of the peak stage (the
 * estimate's, PTSIM_CE_LAST_STAGE); time fields are the engine's and are 0
 * when status != 0 (the memory fields are filled even then). */
typedef struct {
  int32_t status;         /* 0 ok, else the schedule / engine error code */
  int32_t fits;           /* usage_fraction <= settings.memory_threshold */
  int64_t peak_stage;     /* index of the stage with the largest total */
  double total_bytes;     /* per-GPU bytes of the peak stage */
  double usage_fraction;  /* total_bytes / hw.memory_bytes */
  double step_s;          /* one training step */
  double tokens_per_s;    /* gbs * seq / step_s */
  double tflops_per_gpu;  /* Megatron-LM's formula */
  double mfu;             /* against the dense bf16 peak */
  double bubble_fraction; /* 1 - mean stage busy / pipeline end */
  /* Communication the compute stream waits for, as engine.h reports it:
   * tp, cp, ep (busiest stage), pp (its transfer waits), dp (the step's
   * tail), indexed by PtsimCommKind (tp, cp, pp, dp, ep). */
  double exposed_comm_s[5];
  /* The caching-allocator emulation (filled by the shell, not by
   * ptsim_batch_evaluate_*): device peak of the worst stage (reserved +
   * context/NCCL) and whether an allocation failed; 0 / -1 when not run. */
  double alloc_device_peak_bytes;
  int32_t alloc_oom;
  /* What the emulation must hold at once on the stage holding the most:
   * weights, gradients, optimizer states and saved activations (the
   * estimate's terms without its input-ids, logits and embedding-dropout
   * ones, which the replay allocates differently).  A floor of the
   * emulation's allocated peak: with the context and NCCL buffers on top,
   * more than the GPU's memory means the layout does not run. */
  double held_floor_bytes;
  /* The `runs` verdict (lifetimes.h): 1 runs, 0 does not, -1 not settled,
   * and what settled it (PtsimRunsFrom).  ptsim_batch_evaluate_* settles
   * only the 80% rule's side (fits: runs); the shell settles the rest. */
  int32_t runs, runs_from;
  /* Monte-Carlo step-time percentiles (0 without samples). */
  double step_p50_s, step_p90_s, step_p99_s;
} PtsimBatchResult;

/* How a layout is run: Monte-Carlo sampling (engine.h's PtsimJitter per
 * sample: sample k of layout i draws from stream (seed, i * samples + k);
 * an MoE layout with ep > 1 also draws the sample's expert load, its token
 * distribution (workload.h), from a stream of its own and rebuilds its
 * workload for it), and whether the deterministic run may take the
 * engine's periodic shortcut (it gives the same result; --no-shortcut
 * checks that). */
typedef struct {
  int32_t samples;           /* 0: deterministic only */
  double sigma;              /* lognormal sigma of every item's duration */
  double straggler_rate;     /* probability an item is a straggler */
  double straggler_slowdown; /* a straggler's duration factor */
  uint64_t seed;
  int32_t no_shortcut; /* 1: the deterministic run simulates every event */
} PtsimMonteCarlo;

#define PTSIM_BATCH_MAX_SAMPLES 4096

/* Scratch bytes ptsim_batch_evaluate_one needs for this job (a multiple of
 * 16).  Never negative: a job whose schedule cannot be built needs only the
 * fixed part, and evaluate_one reports the schedule error in status. */
PTSIM_HD int64_t ptsim_batch_scratch_bytes(const PtsimJob *job);

/* Evaluates one validated job into *out.  TABLES (TABLE_COUNT of them;
 * NULL: none) are the measured kernel tables the batch's profiles use,
 * job->hw.kernel_table the 1-based index of the job's (the shell's
 * registry, kernel_registry.h; one copy per profile beside the batch,
 * never inside each job).  scratch must be 8-byte aligned
 * (16 is better) and at least ptsim_batch_scratch_bytes(job) bytes; when it
 * is smaller, out->status is PTSIM_ENGINE_ERR_SCRATCH and nothing else is
 * computed.  Never fails otherwise: engine errors go to out->status. */
PTSIM_HD void ptsim_batch_evaluate_one(const PtsimJob *job, const PtsimKernelTable *tables,
                                       int32_t table_count, void *scratch, int64_t scratch_bytes,
                                       PtsimBatchResult *out);

/* The same with Monte-Carlo samples (mc NULL or samples 0: as above);
 * `index` is the layout's index in the whole sweep, which picks its random
 * streams, so results do not depend on how a sweep is split into batches. */
PTSIM_HD int64_t ptsim_batch_scratch_bytes_mc(const PtsimJob *job, const PtsimMonteCarlo *mc);
PTSIM_HD void ptsim_batch_evaluate_mc(const PtsimJob *job, const PtsimMonteCarlo *mc,
                                      const PtsimKernelTable *tables, int32_t table_count,
                                      uint64_t index, void *scratch, int64_t scratch_bytes,
                                      PtsimBatchResult *out);

/* The same, the engine's recorded orders kept in `cache` (NULL: none;
 * ptsim_engine_cache_init, one per thread): the same bytes, faster for
 * layouts that share a schedule shape (engine.h). */
PTSIM_HD void ptsim_batch_evaluate_cached(const PtsimJob *job, const PtsimMonteCarlo *mc,
                                          const PtsimKernelTable *tables, int32_t table_count,
                                          uint64_t index, void *scratch, int64_t scratch_bytes,
                                          void *cache, PtsimBatchResult *out);

#endif /* PTSIM_BATCH_H */

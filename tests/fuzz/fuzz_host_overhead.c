/* fuzz_host_overhead.c — a host-overhead file (host_overhead.c:
 * hw_profiles/software/host_overhead.ini as every job reads it): an
 * accepted one holds every cost finite and in its range, and the host
 * time of a Megatron-LM test model built with it stays finite and
 * non-negative. */
static void load_plan(void);
#define FUZZ_TARGET_INIT load_plan()
#include <math.h>
#include "fuzz_common.h"
#include "host_overhead.h"
#include "host_time.h"
#include "job_build.h"

static PtsimPlan plan;

static void load_plan(void) {
  const char *flags[] = {"--megatron-args",
                         "--num-layers 4 --hidden-size 512 --num-attention-heads 8 "
                         "--seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 4 "
                         "--global-batch-size 32 --bf16 --vocab-size 50257 "
                         "--tensor-model-parallel-size 2 --sequence-parallel "
                         "--use-distributed-optimizer --log-params-norm --log-num-zeros-in-grad",
                         "--gpus",
                         "8",
                         "--hw",
                         "h100-80g",
                         NULL};
  PtsimJob job;
  g_assert(ptsim_job_build_from_flags(flags, &job, NULL, NULL));
  ptsim_plan_build(&job, &plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  PtsimHostCosts c;
  if (!ptsim_host_costs_load_data((const char *)data, size, "fuzz", &c, NULL)) return 0;
  const double *v = &c.op_s;
  for (size_t i = 0; i < sizeof c / sizeof(double); i++) g_assert(isfinite(v[i]) && v[i] >= 0.0);
  g_assert(c.mta_chunk_elements >= 1.0 && c.mta_blocks >= 1.0 && c.mta_tensors_norm >= 1.0 &&
           c.mta_tensors_copy >= 1.0 && c.mta_tensors_adam >= 1.0);
  plan.job.settings.host.costs = c;
  PtsimHostLaunches n;
  ptsim_host_layer_launches(&plan, 0, &n);
  for (int backward = 0; backward < 2; backward++) {
    double t = ptsim_host_layer_pass_s(&plan.job.settings.host, &n, backward, 0);
    g_assert(isfinite(t) && t >= 0.0);
  }
  double opt = ptsim_host_optimizer_s(&plan, 0);
  g_assert(isfinite(opt) && opt >= 0.0);
  return 0;
}

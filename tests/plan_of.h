/* plan_of.h — tests' shortcut from a job to its plan (core/plan.h), built
 * as the commands build it.  Header-only; the plan is heap-allocated (it is
 * kilobytes), free it with g_free (g_autofree). */
#ifndef PTSIM_TEST_PLAN_OF_H
#define PTSIM_TEST_PLAN_OF_H

#include <glib.h>
#include "memory.h"
#include "plan.h"
#include "simulate.h"
#include "workload.h"

/* (transfer full) */
static inline PtsimPlan *plan_of(const PtsimJob *job) {
  PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(job, plan);
  return plan;
}

/* The layers the plan gives pipeline stage `stage`. */
static inline int64_t stage_layers_of(const PtsimJob *job, int64_t stage) {
  g_autofree PtsimPlan *plan = plan_of(job);
  return plan->stage_layers[stage];
}

/* The commands' steps, each from the job's plan. */
static inline void estimate_of(const PtsimJob *job, PtsimCrossEntropyConvention ce,
                               PtsimMemoryEstimate *out) {
  g_autofree PtsimPlan *plan = plan_of(job);
  ptsim_memory_estimate(plan, ce, out);
}

static inline void workload_of(const PtsimJob *job, const PtsimCostParams *params,
                               PtsimWorkload *out) {
  g_autofree PtsimPlan *plan = plan_of(job);
  ptsim_workload_build(plan, params, out);
}

static inline gboolean simulate_of(const PtsimJob *job, PtsimTrace *trace, PtsimTimeResult *out,
                                   GError **error) {
  g_autofree PtsimPlan *plan = plan_of(job);
  return ptsim_simulate(plan, trace, out, error);
}

static inline gboolean simulate_allocator_of(const PtsimJob *job, int32_t steps,
                                             const PtsimAllocOptions *opts, const PtsimTrace *trace,
                                             double step_s, const char *timeline_path,
                                             PtsimAllocResult *out, GError **error) {
  g_autofree PtsimPlan *plan = plan_of(job);
  return ptsim_simulate_allocator(plan, steps, opts, trace, step_s, timeline_path, out, error);
}

#endif /* PTSIM_TEST_PLAN_OF_H */

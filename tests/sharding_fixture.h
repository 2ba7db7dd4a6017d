/* sharding_fixture.h — the tiny models of the sharding tests
 * (test_sharding.c, test_sharding_experts.c): test_memory.c's L2 h64
 * hffn256 a4 k4 v1000, SwiGLU, RMSNorm, untied, on an H100 profile, and
 * its mixture-of-experts variant (both layers MoE).  Test-only helpers,
 * static: each test binary includes it once. */
#ifndef PTSIM_TESTS_SHARDING_FIXTURE_H
#define PTSIM_TESTS_SHARDING_FIXTURE_H

#include <string.h>

#include <glib.h>

#include "config.h"
#include "job_validate.h"
#include "names.h"

/* The tiny model on an H100 profile, the layout at its defaults. */
static void tiny_base(PtsimJob *job, const char *name) {
  PtsimModel *m = &job->model;
  memset(job, 0, sizeof *job);
  g_strlcpy(m->name, name, sizeof m->name);
  m->num_layers = 2;
  m->hidden_size = 64;
  m->ffn_hidden_size = 256;
  m->num_attention_heads = m->num_query_groups = 4;
  m->vocab_size = 1000;
  m->activation = PTSIM_ACTIVATION_SWIGLU;
  m->norm = PTSIM_NORM_RMSNORM;
  g_assert_true(ptsim_hardware_load("h100-80g", &job->hw, NULL));
  ptsim_job_init_defaults(job);
}

/* The tiny model with both layers MoE, `experts` experts of width 128,
 * top-2, on `gpus` GPUs (tp pp cp 1) with `ep` in mode `sharding`; FALSE
 * (and the message in *error) when validation refuses it. */
static gboolean tiny_experts_job(PtsimJob *job, int64_t experts, int64_t gpus, int64_t ep,
                                 const char *sharding, int64_t shard_size, PtsimFsdpImpl impl,
                                 GError **error) {
  PtsimModel *m = &job->model;
  PtsimLayout *l = &job->layout;
  PtsimSettings *run = &job->settings;
  tiny_base(job, "tiny-moe");
  m->num_experts = experts;
  m->moe_router_topk = 2;
  m->moe_ffn_hidden_size = 128;
  m->moe_layers[0] = 3; /* layers 0 and 1 */
  l->gpus = gpus;
  l->ep = ep;
  l->mbs = 1;
  l->gbs = 8 * gpus;
  l->seq = 128;
  run->fsdp_impl = impl;
  int mode = -1;
  g_assert_true(ptsim_names_parse(PTSIM_NAMES_SHARDING, sharding, &mode));
  return ptsim_layout_set_sharding(l, 8, mode, shard_size, error) && ptsim_job_validate(job, error);
}

#endif /* PTSIM_TESTS_SHARDING_FIXTURE_H */

/* test_memory_fujii2024.c — the seed's closed form as ptsim offers it
 * (sim/core/memory_fujii2024.c, `ptsim memory --estimator fujii2024`): the
 * reference's worked examples (shared/reference/memory_estimate_fujii2024.md)
 * to 0.1%, its equation 1.2 re-written here as an oracle to 1e-12, the
 * terms put on the stages that hold them, and the models it does not
 * describe refused. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "memory_fujii2024.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static void set_model(PtsimModel *m, int64_t L, int64_t h, int64_t f, int64_t a, int64_t k,
                      int64_t v) {
  memset(m, 0, sizeof *m);
  g_strlcpy(m->name, "llama", sizeof m->name);
  m->num_layers = L;
  m->hidden_size = h;
  m->ffn_hidden_size = f;
  m->num_attention_heads = a;
  m->num_query_groups = k;
  m->vocab_size = v;
  m->activation = PTSIM_ACTIVATION_SWIGLU;
  m->norm = PTSIM_NORM_RMSNORM;
}

static void llama8b(PtsimModel *m) { set_model(m, 32, 4096, 14336, 32, 8, 128256); }
static void llama70b(PtsimModel *m) { set_model(m, 80, 8192, 28672, 64, 8, 128256); }

/* The reference's assumptions: bf16, flash attention, SP, the distributed
 * optimizer, fp32 grads, 1F1B, m = 8p microbatches. */
static void set_job(PtsimJob *job, const PtsimModel *m, int64_t tp, int64_t cp, int64_t pp,
                    int64_t dp, int64_t mbs, int64_t seq) {
  memset(job, 0, sizeof *job);
  job->model = *m;
  g_strlcpy(job->hw.name, "test-80g", sizeof job->hw.name);
  job->hw.memory_bytes = 80.0 * GIB;
  PtsimLayout *l = &job->layout;
  PtsimSettings *run = &job->settings;
  l->tp = tp;
  l->cp = cp;
  l->pp = pp;
  l->dp = dp;
  l->gpus = tp * cp * pp * dp;
  l->vp = 1;
  l->mbs = mbs;
  l->gbs = mbs * dp * 8 * pp;
  l->seq = seq;
  l->sp = tp > 1;
  l->distributed_optimizer = 1;
  l->schedule = PTSIM_SCHEDULE_1F1B;
  run->fp32_grad_accumulation = 1;
  run->flash_attention = 1;
  run->transformer_engine = 1;
  run->precision = PTSIM_PRECISION_BF16;
  run->memory_threshold = 0.8;
  run->main_params_bytes = run->exp_avg_bytes = run->exp_avg_sq_bytes = 4;
  l->optimizer_instances = 1;
}

static int32_t closed_form(const PtsimJob *job, PtsimCrossEntropyConvention ce,
                           PtsimMemoryEstimate *est) {
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(job, plan);
  return ptsim_memory_fujii2024(plan, ce, est);
}

/* Equation 1.2, first stage, bytes; with_ce: the 4(1 + v/h) term.  With p =
 * 1 the author's script puts the LM head and final norm (h v/t + h) on the
 * single stage too (1.3). */
static double oracle(const PtsimModel *m, const PtsimLayout *l, int with_ce) {
  double s = (double)l->seq, b = (double)l->mbs, h = (double)m->hidden_size;
  double hf = (double)m->ffn_hidden_size, L = (double)m->num_layers;
  double a = (double)m->num_attention_heads, k = (double)m->num_query_groups;
  double v = (double)m->vocab_size, t = (double)l->tp, p = (double)l->pp;
  double d = (double)l->dp, c = (double)l->cp;
  double params = h * v / t + (2.0 * L / p) * h * h * ((1.0 + k / a + 1.5 * hf / h) / t + 1.0 / h);
  if (l->pp == 1) params += h * v / t + h;
  double term1 = (6.0 + 12.0 / (d * c)) * params;
  double term2 =
      s * b * h / (t * c) *
      ((12.0 + 4.0 * k / a + 8.0 * hf / h) * L + 8.0 * p + (with_ce ? 4.0 * (1.0 + v / h) : 0.0));
  return term1 + term2;
}

static void assert_rel(double got, double want, double rel) {
  g_assert_cmpfloat_with_epsilon(got, want, fabs(want) * rel);
}

/* Llama-3.1-8B, tp1 cp4 pp2 dp1 mbs1 seq 32768: 75.15 GiB with the CE term
 * only when p = 1 (here on stage 1), 79.19 GiB with it on every stage;
 * Llama-3.1-70B, tp8 cp2 pp4 dp2 mbs2 seq 8192: 44.60 / 45.12 GiB (the
 * reference's worked examples, computed from its formula). */
static void test_worked_examples(void) {
  g_test_summary("the reference's worked examples: 8B 75.15 / 79.19 GiB, 70B 44.60 / 45.12 GiB");
  PtsimModel m;
  PtsimJob job;
  PtsimMemoryEstimate est;
  llama8b(&m);
  set_job(&job, &m, 1, 4, 2, 1, 1, 32768);
  g_assert_cmpint(closed_form(&job, PTSIM_CE_LAST_STAGE, &est), ==, 0);
  assert_rel(est.stages[0].total_bytes / GIB, 75.15, 1e-3);
  g_assert_cmpint(est.peak_stage, ==, 0);
  g_assert_cmpint(closed_form(&job, PTSIM_CE_EVERY_STAGE, &est), ==, 0);
  assert_rel(est.stages[0].total_bytes / GIB, 79.19, 1e-3);
  llama70b(&m);
  set_job(&job, &m, 8, 2, 4, 2, 2, 8192);
  g_assert_cmpint(closed_form(&job, PTSIM_CE_LAST_STAGE, &est), ==, 0);
  assert_rel(est.stages[0].total_bytes / GIB, 44.60, 1e-3);
  g_assert_cmpint(closed_form(&job, PTSIM_CE_EVERY_STAGE, &est), ==, 0);
  assert_rel(est.stages[0].total_bytes / GIB, 45.12, 1e-3);
  assert_rel(est.usage_fraction, est.total_bytes / (80.0 * GIB), 1e-12);
}

/* Stage 0 is the equation, both conventions, on layouts with and without
 * pp, tp, cp and dp. */
static void test_equation(void) {
  g_test_summary("stage 0 is equation 1.2 to 1e-12 on several Llama layouts, both conventions");
  static const int64_t layouts[][6] = {
      /* tp cp pp dp mbs seq */
      {1, 1, 1, 8, 1, 8192}, {2, 1, 4, 4, 1, 4096},  {4, 2, 2, 2, 2, 8192},
      {8, 1, 8, 1, 1, 4096}, {2, 4, 1, 1, 1, 32768}, {1, 2, 4, 16, 4, 2048},
  };
  PtsimModel models[2];
  llama8b(&models[0]);
  llama70b(&models[1]);
  for (guint mi = 0; mi < 2; mi++)
    for (guint li = 0; li < G_N_ELEMENTS(layouts); li++) {
      const int64_t *x = layouts[li];
      PtsimJob job;
      PtsimMemoryEstimate est;
      set_job(&job, &models[mi], x[0], x[1], x[2], x[3], x[4], x[5]);
      g_assert_cmpint(closed_form(&job, PTSIM_CE_EVERY_STAGE, &est), ==, 0);
      assert_rel(est.stages[0].total_bytes, oracle(&models[mi], &job.layout, 1), 1e-12);
      g_assert_cmpint(closed_form(&job, PTSIM_CE_LAST_STAGE, &est), ==, 0);
      assert_rel(est.stages[0].total_bytes, oracle(&models[mi], &job.layout, x[2] == 1), 1e-12);
    }
}

/* The other stages, Llama-3.1-8B tp2 pp4 dp1 mbs1 seq 4096, CE on the last
 * stage: s b h/t = 4096 x 4096 / 2 = 8388608; a layer 2h^2((1 + 1/4 +
 * 1.5 x 3.5)/2 + 1/4096) = 33554432 x 3.250244 = 109060096 parameters and
 * 8388608 x (12 + 1 + 28) = 343932928 activation bytes a microbatch; 8
 * layers a stage; in flight 4 - i.
 *   stage 1: 8 x 109060096 parameters x (6 + 12) B
 *            + 8 x 343932928 x 3 microbatches
 *   stage 3: (8 x 109060096 + 4096 x 128256 / 2 + 4096) x 18 B
 *            + 8 x 343932928 x 1 + 4 x 8388608 x (1 + 128256/4096) */
static void test_stages(void) {
  g_test_summary("every stage holds the closed form's terms that are its own: layers, in-flight "
                 "microbatches p - i, the LM head and the logits on the last");
  PtsimModel m;
  PtsimJob job;
  PtsimMemoryEstimate est;
  llama8b(&m);
  set_job(&job, &m, 2, 1, 4, 1, 1, 4096);
  g_assert_cmpint(closed_form(&job, PTSIM_CE_LAST_STAGE, &est), ==, 0);
  g_assert_cmpint(est.num_stages, ==, 4);
  double layers = 8.0 * 109060096.0;
  assert_rel(est.stages[1].parameters, layers, 1e-12);
  assert_rel(est.stages[1].total_bytes, layers * 18.0 + 8.0 * 343932928.0 * 3.0, 1e-12);
  assert_rel(est.stages[3].parameters, layers + 4096.0 * 128256.0 / 2.0 + 4096.0, 1e-12);
  assert_rel(est.stages[3].total_bytes,
             (layers + 4096.0 * 128256.0 / 2.0 + 4096.0) * 18.0 + 8.0 * 343932928.0 +
                 4.0 * 8388608.0 * (1.0 + 128256.0 / 4096.0),
             1e-12);
  g_assert_cmpfloat(est.stages[2].logits_bytes, ==, 0.0);
  g_assert_cmpfloat(est.stages[3].input_ids_bytes, ==, 0.0);
  /* without the distributed optimizer the reference's 18 B a parameter */
  job.layout.distributed_optimizer = 0;
  job.layout.dp = 2;
  job.layout.gpus = 16;
  g_assert_cmpint(closed_form(&job, PTSIM_CE_LAST_STAGE, &est), ==, 0);
  assert_rel(est.stages[1].optimizer_bytes, layers * 12.0, 1e-12);
}

static void test_refuses(void) {
  g_test_summary("models the closed form does not describe are refused: MoE, MLA, a GELU MLP");
  PtsimModel m;
  PtsimJob job;
  PtsimMemoryEstimate est;
  llama8b(&m);
  m.activation = PTSIM_ACTIVATION_GELU;
  set_job(&job, &m, 1, 1, 1, 8, 1, 4096);
  g_assert_cmpint(closed_form(&job, PTSIM_CE_LAST_STAGE, &est), ==, PTSIM_FUJII2024_ERR_MLP);
  llama8b(&m);
  m.multi_latent_attention = 1;
  set_job(&job, &m, 1, 1, 1, 8, 1, 4096);
  g_assert_cmpint(closed_form(&job, PTSIM_CE_LAST_STAGE, &est), ==, PTSIM_FUJII2024_ERR_MLA);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/memory-fujii2024/worked-examples", test_worked_examples);
  g_test_add_func("/memory-fujii2024/equation", test_equation);
  g_test_add_func("/memory-fujii2024/stages", test_stages);
  g_test_add_func("/memory-fujii2024/refuses", test_refuses);
  return g_test_run();
}

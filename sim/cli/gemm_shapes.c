/* gemm_shapes.c — the GEMMs of one job as validate/short_run/gemm_bench
 * reads them (`ptsim validate --emit-gemm-shapes`); see gemm_shapes.h. */
#include "gemm_shapes.h"

#include "names.h"
#include "output.h"
#include "plan.h"

static void shape(GString *out, const char *name, int64_t m, int64_t n, int64_t k, int64_t count) {
  if (m < 1 || n < 1 || k < 1 || count < 1) return;
  g_string_append_printf(out,
                         "%s %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                         " %" G_GINT64_FORMAT "\n",
                         name, m, n, k, count);
}

/* One GEMM C(m,n) = A(m,k) B(k,n) and its two backward GEMMs, as
 * workload.c prices them: input gradient (m,k,n), weight gradient (k,n,m). */
static void shape3(GString *out, const char *name, int64_t m, int64_t n, int64_t k,
                   int64_t fwd_count, int64_t bwd_count) {
  g_autofree char *f = g_strconcat(name, "_fwd", NULL);
  g_autofree char *d = g_strconcat(name, "_dgrad", NULL);
  g_autofree char *w = g_strconcat(name, "_wgrad", NULL);
  shape(out, f, m, n, k, fwd_count);
  shape(out, d, m, k, n, bwd_count);
  shape(out, w, k, n, m, bwd_count);
}

gboolean ptsim_gemm_shapes_write(const char *path, const PtsimJob *job, GError **error) {
  const PtsimModel *m = &job->model;
  const PtsimLayout *l = &job->layout;
  const PtsimSettings *run = &job->settings;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  ptsim_plan_build(job, plan);
  int64_t t = l->tp, h = m->hidden_size;
  int64_t T = plan->tokens; /* tokens one CP rank holds */
  int64_t q = m->num_attention_heads * plan->head_dim, kv = m->num_query_groups * plan->head_dim;
  int64_t fc1 = (m->activation == PTSIM_ACTIVATION_SWIGLU ? 2 : 1) * m->ffn_hidden_size;
  int64_t mb = plan->num_microbatches;
  int64_t layers = plan->stage_layers[0] > 0 ? plan->stage_layers[0] : m->num_layers / l->pp;
  int64_t bwd = layers * mb;
  int64_t fwd = bwd * (run->recompute == PTSIM_RECOMPUTE_FULL ? 2 : 1);
  g_autoptr(GString) out = g_string_new(NULL);
  g_string_append_printf(
      out,
      "# ptsim gemm shapes v1: one GEMM per line, \"name m n k count\":\n"
      "#   C(m,n) = A(m,k) B(k,n) in the job's precision (%s); count = calls per training\n"
      "#   step on one GPU of pipeline stage 0 (lm_head: of the last stage); '#' starts a\n"
      "#   comment.  Job: %s, tp %" G_GINT64_FORMAT " pp %" G_GINT64_FORMAT " cp %" G_GINT64_FORMAT
      " dp %" G_GINT64_FORMAT ", mbs %" G_GINT64_FORMAT " seq %" G_GINT64_FORMAT
      " gbs %" G_GINT64_FORMAT ", recompute %s\n",
      ptsim_names_get(PTSIM_NAMES_PRECISION, run->precision), m->name, l->tp, l->pp, l->cp, l->dp,
      l->mbs, l->seq, l->gbs, ptsim_names_get(PTSIM_NAMES_RECOMPUTE, run->recompute));
  shape3(out, "qkv", T, (q + 2 * kv) / t, h, fwd, bwd);
  shape3(out, "proj", T, h, q / t, fwd, bwd);
  shape3(out, "fc1", T, fc1 / t, h, fwd, bwd);
  shape3(out, "fc2", T, h, m->ffn_hidden_size / t, fwd, bwd);
  shape3(out, "lm_head", T, m->vocab_size / t, h, mb, mb);
  return ptsim_output_write(path, out->str, out->len, error);
}

/* test_pipeline_layout_format.c — the Megatron-LM layout string of a split
 * (ptsim_pipeline_layout_format, sim/io/pipeline_layout.c): hand-derived
 * strings, and the parser reading every formatted split back as the same
 * virtual stages. */
#include <string.h>

#include <glib.h>

#include "job.h"
#include "pipeline_layout.h"
#include "plan.h"
#include "sweep.h"

static PtsimLayout layout(int64_t pp, int64_t vp) {
  PtsimLayout l;
  memset(&l, 0, sizeof l);
  l.pp = pp;
  l.vp = vp;
  l.schedule = vp > 1 ? PTSIM_SCHEDULE_INTERLEAVED : PTSIM_SCHEDULE_1F1B;
  return l;
}

static void test_hand(void) {
  g_test_summary("the strings of splits derived by hand");
  /* 61 layers on 8 stages (ptsim_sweep_split): the middle six take
   * ceil(61/8) = 8, the ends the 61 - 6 x 8 = 13 left, the first
   * ceil(13/2) = 7 and the last 6 */
  PtsimLayout l = layout(8, 1);
  g_assert_true(ptsim_sweep_split(61, 8, 1, &l.first_stage_layers, &l.last_stage_layers));
  g_assert_cmpint(l.first_stage_layers, ==, 7);
  g_autofree char *a = ptsim_pipeline_layout_format(&l, 61, 0);
  g_assert_cmpstr(a, ==, "Et*7|(t*8|)*6t*6L");
  /* 30 layers, pp 4 x vp 2, embedding and loss each a layer's slot:
   * (30 + 2) / 8 = 4 a virtual stage, the first and the last 3 */
  l = layout(4, 2);
  l.account_embedding = l.account_loss = 1;
  g_autofree char *b = ptsim_pipeline_layout_format(&l, 30, 0);
  g_assert_cmpstr(b, ==, "Et*3|(t*4|)*6t*3L");
  /* DeepSeek-V3's (pipeline_layout.h): 61 layers, pp 16 x vp 2, the
   * embedding one slot and the loss two: (61 + 3) / 32 = 2 a virtual
   * stage, the first 1, the last 0, with its MTP layer */
  l = layout(16, 2);
  l.account_embedding = 1;
  l.account_loss = 2;
  g_autofree char *c = ptsim_pipeline_layout_format(&l, 61, 1);
  g_assert_cmpstr(c, ==, "Et|(t*2|)*30mL");
  /* even splits have none: 32 layers on 4 stages, on 4 x 2 */
  l = layout(4, 1);
  g_assert_null(ptsim_pipeline_layout_format(&l, 32, 0));
  l = layout(4, 2);
  g_assert_null(ptsim_pipeline_layout_format(&l, 32, 0));
  /* one middle stage is not a group: 10 layers on 3 stages, 3 4 3 */
  l = layout(3, 1);
  l.first_stage_layers = l.last_stage_layers = 3;
  g_autofree char *d = ptsim_pipeline_layout_format(&l, 10, 0);
  g_assert_cmpstr(d, ==, "Et*3|t*4|t*3L");
}

/* A random split of pp x vp virtual stages: the sweep's uneven ends, an
 * accounted embedding and loss, or runs of virtual stages; FALSE when the
 * draw gives none. */
static gboolean random_split(GRand *rand, PtsimLayout *l, int64_t *layers) {
  int64_t pp = g_rand_int_range(rand, 1, 17), vp = g_rand_int_range(rand, 1, 5), n = pp * vp;
  *l = layout(pp, vp);
  switch (g_rand_int_range(rand, 0, 3)) {
  case 0: /* uneven first/last stages, as the sweep enumerates them */
    *layers = g_rand_int_range(rand, (gint32)pp, 200);
    return ptsim_sweep_split(*layers, pp, vp, &l->first_stage_layers, &l->last_stage_layers);
  case 1: { /* embedding and loss in the split (Megatron: vp > 1, or one stage each) */
    int64_t per = g_rand_int_range(rand, 2, 6);
    l->account_embedding = g_rand_int_range(rand, 0, 3);
    l->account_loss = g_rand_int_range(rand, 0, 3);
    *layers = per * n - l->account_embedding - l->account_loss;
    return *layers >= 1 && (l->account_embedding || l->account_loss);
  }
  default: { /* runs: up to PTSIM_LAYOUT_RUNS of them */
    int64_t at = 0;
    *layers = 0;
    while (at < n && l->vstage_runs < PTSIM_LAYOUT_RUNS) {
      int32_t count = (int32_t)MIN(g_rand_int_range(rand, 1, 5), n - at);
      if (l->vstage_runs == PTSIM_LAYOUT_RUNS - 1) count = (int32_t)(n - at);
      int32_t each = g_rand_int_range(rand, 1, 6);
      l->vstage_run_count[l->vstage_runs] = count;
      l->vstage_run_layers[l->vstage_runs++] = each;
      at += count;
      *layers += (int64_t)count * each;
    }
    return TRUE;
  }
  }
}

static void test_round_trip(void) {
  g_test_summary("parse(format(split)) is the split, virtual stage by virtual stage, for "
                 "random splits with vp > 1, uneven ends, embedding and loss accounted, runs");
  g_autoptr(GRand) rand = g_rand_new_with_seed(25);
  int formatted = 0;
  for (int trial = 0; trial < 20000; trial++) {
    PtsimLayout l;
    int64_t layers, mtp = g_rand_int_range(rand, 0, 3);
    if (!random_split(rand, &l, &layers)) continue;
    int32_t want[PTSIM_MAX_VSTAGES], got[PTSIM_MAX_VSTAGES];
    if (ptsim_plan_split_vstages(&l, layers, want) != 0) continue;
    int64_t n = l.pp * l.vp;
    g_autofree char *text = ptsim_pipeline_layout_format(&l, layers, mtp);
    gboolean even = TRUE;
    for (int64_t k = 1; k < n; k++) even = even && want[k] == want[0];
    g_assert_true(even == (text == NULL));
    if (!text) continue;
    formatted++;
    g_autoptr(GError) error = NULL;
    if (ptsim_pipeline_layout_stages(text, &error) != n)
      g_error("%s: not %" G_GINT64_FORMAT " stages (pp %" G_GINT64_FORMAT ")", text, n, l.pp);
    PtsimLayout back = layout(l.pp, 1);
    if (!ptsim_pipeline_layout_apply(text, layers, mtp, &back, &error))
      g_error("%s (pp %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " layers): %s", text, l.pp, layers,
              error->message);
    g_assert_cmpint(back.vp, ==, l.vp);
    g_assert_cmpint(ptsim_plan_split_vstages(&back, layers, got), ==, 0);
    for (int64_t k = 0; k < n; k++)
      if (got[k] != want[k])
        g_error("%s: virtual stage %" G_GINT64_FORMAT " has %d layers, the split %d", text, k,
                got[k], want[k]);
  }
  g_assert_cmpint(formatted, >, 5000);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/pipeline_layout/format/hand", test_hand);
  g_test_add_func("/pipeline_layout/format/round_trip", test_round_trip);
  return g_test_run();
}

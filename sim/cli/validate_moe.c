/* validate_moe.c — the MoE rows of the published suite; see validate_moe.h. */
#include <string.h>
#include "validate_moe.h"
#include "workload.h"

static void add(GPtrArray *args, const char *flag, const char *value) {
  g_ptr_array_add(args, g_strdup(flag));
  if (value) g_ptr_array_add(args, g_strdup(value));
}

void ptsim_validate_moe_args(const PtsimRunCsv *csv, const PtsimRun *run, GPtrArray *args) {
  static const struct {
    const char *column, *flag;
  } plain[] = {{"ep", "--ep"},
               {"etp", "--etp"},
               {"pipeline_layout", "--pipeline-model-parallel-layout"},
               {"recompute", "--recompute"},
               {"precision", "--precision"},
               {"dispatcher", "--moe-token-dispatcher-type"}};
  for (size_t i = 0; i < G_N_ELEMENTS(plain); i++) {
    const char *cell = ptsim_run_csv_cell(csv, run, plain[i].column);
    if (cell && *cell) add(args, plain[i].flag, cell);
  }
  const char *modules = ptsim_run_csv_cell(csv, run, "recompute_modules");
  if (modules && *modules) {
    g_auto(GStrv) words = g_strsplit(modules, " ", -1);
    g_autofree char *joined = g_strjoinv(",", words);
    add(args, "--recompute-modules", joined);
  }
  const char *settings = ptsim_run_csv_cell(csv, run, "ptsim_settings");
  g_auto(GStrv) words = g_strsplit(settings ? settings : "", " ", -1);
  for (char **w = words; *w; w++)
    if (**w) g_ptr_array_add(args, g_strdup(*w));
}

double ptsim_validate_moe_flops(const PtsimRunCsv *csv, const PtsimRun *run, const PtsimJob *job,
                                const char **convention) {
  const PtsimModel *m = &job->model;
  const char *formula = ptsim_run_csv_cell(csv, run, "flops_formula");
  *convention = formula && *formula ? formula : "megatron";
  if (!formula || strcmp(formula, "megatron-core-0.9") != 0)
    return ptsim_workload_megatron_flops(job);
  /* core_v0.9 training.py: 12 B s L h^2 ((1 + k/a + s/h) p + ffn/h x top-k x
   * gated + fs/h x gated + V/(2 L h)), p the query projection over h */
  double B = (double)job->layout.gbs, s = (double)job->layout.seq, L = (double)m->num_layers;
  double h = (double)m->hidden_size, gated = m->activation == PTSIM_ACTIVATION_SWIGLU ? 1.5 : 1.0;
  double p =
      (double)(m->num_attention_heads *
               (m->kv_channels > 0 ? m->kv_channels : m->hidden_size / m->num_attention_heads)) /
      h;
  double topk = m->num_experts > 0 ? (double)m->moe_router_topk : 1.0;
  return 12.0 * B * s * L * h * h *
         ((1.0 + (double)m->num_query_groups / (double)m->num_attention_heads + s / h) * p +
          (double)m->ffn_hidden_size / h * topk * gated +
          (double)m->moe_shared_expert_size / h * gated + (double)m->vocab_size / (2.0 * L * h));
}

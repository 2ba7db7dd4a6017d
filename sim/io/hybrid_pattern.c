/* hybrid_pattern.c — a hybrid model's pattern and Mamba-2 sizes
 * (hybrid_pattern.h). */
#include "hybrid_pattern.h"

#include <string.h>
#include "config.h"
#include "mamba.h"

/* What each of Megatron-LM's other symbols is, for the refusal. */
static const char *unsupported_symbol(char c) {
  switch (c) {
  case 'G':
    return "G (a gated delta net layer) is not modelled";
  case 'D':
    return "D (DeepSeek sparse attention) is not modelled";
  case '+':
    return "+ (an MLA attention layer) is not modelled";
  case '|':
    return "| (pipeline stage boundaries) is not modelled: give the stages with --pp, "
           "--decoder-first/last-pipeline-num-layers";
  case '/':
    return "/ (multi-token prediction layers) is not modelled";
  default:
    return NULL;
  }
}

gboolean ptsim_hybrid_pattern_parse(const char *text, const char *where, PtsimModel *m,
                                    GError **error) {
  size_t n = strlen(text), i;
  if (n == 0 || n > PTSIM_MAX_LAYERS) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: a hybrid pattern of %zu layers: expected 1 to %d symbols M * - E", where, n,
                PTSIM_MAX_LAYERS);
    return FALSE;
  }
  for (i = 0; i < n; i++) {
    char c = text[i];
    if (c == PTSIM_HYBRID_MAMBA || c == PTSIM_HYBRID_ATTENTION || c == PTSIM_HYBRID_MLP ||
        c == PTSIM_HYBRID_MOE)
      continue;
    const char *why = unsupported_symbol(c);
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: '%c' at position %zu of the hybrid pattern: %s", where, c, i + 1,
                why ? why : "expected M (Mamba), * (attention), - (MLP) or E (MoE)");
    return FALSE;
  }
  memset(m->hybrid_pattern, 0, sizeof m->hybrid_pattern);
  memcpy(m->hybrid_pattern, text, n);
  m->num_layers = (int64_t)n;
  memset(m->moe_layers, 0, sizeof m->moe_layers);
  for (i = 0; i < n; i++)
    if (text[i] == PTSIM_HYBRID_MOE) m->moe_layers[i / 64] |= (uint64_t)1 << (i % 64);
  return TRUE;
}

gboolean ptsim_hybrid_model_load(const PtsimIniFile *ini, PtsimModel *m, GError **error) {
  const char *g = "model";
  const char *keys[4] = {"mamba_state_dim", "mamba_head_dim", "mamba_num_groups",
                         "mamba_num_heads"};
  int64_t *fields[4] = {&m->mamba_state_dim, &m->mamba_head_dim, &m->mamba_num_groups,
                        &m->mamba_num_heads};
  g_autofree char *text = g_key_file_get_value(ini->kf, g, "hybrid_override_pattern", NULL);
  for (int k = 0; k < 4; k++) {
    if (!g_key_file_has_key(ini->kf, g, keys[k], NULL)) continue;
    if (text == NULL) {
      g_autofree char *where = ptsim_ini_where(ini, g, keys[k]);
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s: [model] %s needs hybrid_override_pattern (a hybrid model)", where, keys[k]);
      return FALSE;
    }
    if (!ptsim_ini_int(ini, g, keys[k], 1, PTSIM_CONFIG_INT_MAX, FALSE, fields[k], error))
      return FALSE;
  }
  if (text == NULL) return TRUE;
  g_autofree char *where = ptsim_ini_where(ini, g, "hybrid_override_pattern");
  g_autofree char *label = g_strdup_printf("%s: [model] hybrid_override_pattern", where);
  int64_t layers = m->num_layers;
  if (!ptsim_hybrid_pattern_parse(g_strstrip(text), label, m, error)) return FALSE;
  if (layers != m->num_layers) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: %" G_GINT64_FORMAT " layers, num_layers = %" G_GINT64_FORMAT
                ": expected one symbol per layer",
                label, (gint64)m->num_layers, (gint64)layers);
    return FALSE;
  }
  return TRUE;
}

#define model_invalid(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_INVALID, __VA_ARGS__), FALSE)

gboolean ptsim_hybrid_model_check(const PtsimModel *m, GError **error) {
  const int64_t max = PTSIM_CONFIG_INT_MAX;
  int64_t sizes[4] = {m->mamba_state_dim, m->mamba_head_dim, m->mamba_num_groups,
                      m->mamba_num_heads};
  int given = 0;
  for (int k = 0; k < 4; k++) {
    if (sizes[k] < 0 || sizes[k] > max)
      return model_invalid("model %s: a Mamba size (state %" G_GINT64_FORMAT
                           ", head %" G_GINT64_FORMAT ", groups %" G_GINT64_FORMAT
                           ", heads %" G_GINT64_FORMAT ") out of range 1 to %" G_GINT64_FORMAT,
                           m->name, (gint64)sizes[0], (gint64)sizes[1], (gint64)sizes[2],
                           (gint64)sizes[3], (gint64)max);
    given |= sizes[k] != 0;
  }
  if (!ptsim_model_is_hybrid(m)) {
    if (given)
      return model_invalid("model %s: Mamba sizes without a hybrid pattern "
                           "(hybrid_override_pattern): no layer would use them",
                           m->name);
    return TRUE;
  }
  size_t n = strnlen(m->hybrid_pattern, sizeof m->hybrid_pattern);
  if (n == sizeof m->hybrid_pattern || (int64_t)n != m->num_layers)
    return model_invalid("model %s: the hybrid pattern has %zu layers, num_layers %" G_GINT64_FORMAT
                         ": expected them equal",
                         m->name, n, (gint64)m->num_layers);
  for (size_t i = 0; i < n; i++) {
    char c = m->hybrid_pattern[i];
    if (c != PTSIM_HYBRID_MAMBA && c != PTSIM_HYBRID_ATTENTION && c != PTSIM_HYBRID_MLP &&
        c != PTSIM_HYBRID_MOE)
      return model_invalid("model %s: symbol '%c' in the hybrid pattern: expected M * - E", m->name,
                           c);
    if (c == PTSIM_HYBRID_MOE && m->num_experts == 0)
      return model_invalid("model %s: layer %zu of the hybrid pattern is E (MoE) but the model "
                           "has no experts (num_experts)",
                           m->name, i);
  }
  PtsimMambaDims d;
  ptsim_mamba_dims(m, &d);
  if (m->mamba_num_heads == 0 && (2 * m->hidden_size) % d.headdim != 0)
    return model_invalid("model %s: 2 x hidden_size %" G_GINT64_FORMAT
                         " is not a multiple of the Mamba head dim %" G_GINT64_FORMAT
                         " (Megatron-LM asserts it; or give mamba_num_heads)",
                         m->name, (gint64)(2 * m->hidden_size), (gint64)d.headdim);
  if (d.nheads < 1 || d.nheads % d.ngroups != 0)
    return model_invalid("model %s: %" G_GINT64_FORMAT " Mamba heads are not a multiple of "
                         "its %" G_GINT64_FORMAT " groups (Megatron-LM asserts it)",
                         m->name, (gint64)d.nheads, (gint64)d.ngroups);
  return TRUE;
}

gboolean ptsim_hybrid_job_check(const PtsimJob *job, GError **error) {
  const PtsimModel *m = &job->model;
  PtsimMambaDims d;
  ptsim_mamba_dims(m, &d);
  if (ptsim_hybrid_count(m, 0, m->num_layers, PTSIM_HYBRID_MAMBA) > 0 &&
      (d.nheads % job->layout.tp != 0 || d.ngroups % job->layout.tp != 0))
    return model_invalid("--tp %" G_GINT64_FORMAT " does not divide the %" G_GINT64_FORMAT
                         " Mamba heads and %" G_GINT64_FORMAT
                         " groups of model %s (Megatron-LM asserts both)",
                         (gint64)job->layout.tp, (gint64)d.nheads, (gint64)d.ngroups, m->name);
  return TRUE;
}

gboolean ptsim_hybrid_simulation_check(const PtsimJob *job, GError **error) {
  const PtsimSettings *run = &job->settings;
  const char *what = NULL;
  if (!ptsim_model_is_hybrid(&job->model)) return TRUE;
  /* what the hybrid layers' time and replay (workload_mamba.c,
   * lifetimes_hybrid.c) do not model */
  if (job->layout.sharding != PTSIM_SHARDING_NONE)
    what = "ZeRO-2/3 sharding (--sharding): its units are transformer layers";
  else if (run->torch_layers != PTSIM_TORCH_LAYERS_NONE)
    what = "PyTorch's own layers (torchtitan): Mamba layers are Megatron-LM's MambaMixer";
  else if (run->lora_rank > 0)
    what = "LoRA adapters: their targets are a transformer layer's linears";
  else if (run->offload_modules != 0)
    what = "activation offloading (--offload-modules): its modules are a transformer layer's";
  else if (run->recompute == PTSIM_RECOMPUTE_SELECTIVE_OP)
    what = "torch's per-op recomputation";
  else if (run->moe_ep_comm_overlap)
    what = "--overlap-moe-expert-parallel-comm: its pairing splits a transformer MoE layer";
  if (!what) return TRUE;
  return model_invalid("model %s is a hybrid model (hybrid_override_pattern): %s is not modelled "
                       "with its Mamba layers; `ptsim memory` gives its analytical memory estimate",
                       job->model.name, what);
}

/* megatron_hybrid.c — Megatron-LM's hybrid-model flags into the model:
 * --hybrid-layer-pattern (and --hybrid-override-pattern, which Megatron
 * forwards to it), --mamba-state-dim, --mamba-head-dim, --mamba-num-groups,
 * --mamba-num-heads (megatron/training/arguments.py and
 * core/transformer/transformer_config.py at d98e8a64; hybrid_pattern.h
 * checks the pattern; '|' stage separators give the pipeline split when
 * the segments are equal).  The same fields a model .ini's
 * hybrid_override_pattern and mamba_* keys fill. */
#include <string.h>

#include "config.h"
#include "hybrid_pattern.h"
#include "megatron_said.h"

#define parse_error(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, __VA_ARGS__), FALSE)

gboolean ptsim_megatron_resolve_hybrid(const Said *s, PtsimModel *m, GError **error) {
  const FlagId sizes[4] = {F_MAMBA_STATE_DIM, F_MAMBA_HEAD_DIM, F_MAMBA_NUM_GROUPS,
                           F_MAMBA_NUM_HEADS};
  int64_t *fields[4] = {&m->mamba_state_dim, &m->mamba_head_dim, &m->mamba_num_groups,
                        &m->mamba_num_heads};
  if (!GIVEN(s, F_HYBRID_PATTERN)) return TRUE; /* the sizes alone: no Mamba layer uses them */
  for (int k = 0; k < 4; k++) {
    if (!GIVEN(s, sizes[k])) continue;
    if (s->i[sizes[k]] < 1 || s->i[sizes[k]] > PTSIM_CONFIG_INT_MAX)
      return parse_error("%s %" G_GINT64_FORMAT " is out of range: expected 1 to %" G_GINT64_FORMAT,
                         ptsim_megatron_flag_name(sizes[k]), (gint64)s->i[sizes[k]],
                         (gint64)PTSIM_CONFIG_INT_MAX);
    *fields[k] = s->i[sizes[k]];
  }
  /* '|' separates pipeline stages (virtual ones when there are more
   * segments than --pipeline-model-parallel-size): segments of one length
   * are the even split, read as the pattern without them (the layout:
   * ptsim_megatron_resolve_hybrid_job); unequal ones are not modelled */
  g_auto(GStrv) segments = g_strsplit(s->word[F_HYBRID_PATTERN], "|", -1);
  guint k = g_strv_length(segments);
  for (guint i = 1; i < k; i++)
    if (strlen(segments[i]) != strlen(segments[0]))
      return parse_error("--hybrid-layer-pattern %s: pipeline segments of %zu and %zu layers; "
                         "ptsim models segments ('|') of equal length only",
                         s->word[F_HYBRID_PATTERN], strlen(segments[0]), strlen(segments[i]));
  g_autofree char *joined = g_strjoinv("", segments);
  return ptsim_hybrid_pattern_parse(joined, "--hybrid-layer-pattern", m, error);
}

gboolean ptsim_megatron_resolve_hybrid_job(const Said *s, PtsimJob *job, GError **error) {
  PtsimLayout *l = &job->layout;
  if (!GIVEN(s, F_HYBRID_PATTERN) || !strchr(s->word[F_HYBRID_PATTERN], '|')) return TRUE;
  g_auto(GStrv) segments = g_strsplit(s->word[F_HYBRID_PATTERN], "|", -1);
  int64_t k = (int64_t)g_strv_length(segments);
  /* Megatron-LM's rules (arguments.py, hybrid_layer_allocation.py) */
  if (GIVEN(s, F_LAYERS_PER_VSTAGE) || GIVEN(s, F_VSTAGES_PER_RANK) || l->first_stage_layers ||
      l->last_stage_layers)
    return parse_error("--hybrid-layer-pattern with '|' gives the pipeline split: drop the "
                       "virtual-stage and --decoder-first/last-pipeline-num-layers flags "
                       "(Megatron-LM refuses them)");
  if (k % l->pp != 0)
    return parse_error("--hybrid-layer-pattern has %" G_GINT64_FORMAT " pipeline segments, not a "
                       "multiple of --pipeline-model-parallel-size %" G_GINT64_FORMAT,
                       (gint64)k, (gint64)l->pp);
  l->vp = k / l->pp;
  return TRUE;
}

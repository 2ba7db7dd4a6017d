/* megatron_hybrid.c — Megatron-LM's hybrid-model flags into the model:
 * --hybrid-layer-pattern (and --hybrid-override-pattern, which Megatron
 * forwards to it), --mamba-state-dim, --mamba-head-dim, --mamba-num-groups,
 * --mamba-num-heads (megatron/training/arguments.py and
 * core/transformer/transformer_config.py at d98e8a64; hybrid_pattern.h
 * checks the pattern).  The same fields a model .ini's
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
  return ptsim_hybrid_pattern_parse(s->word[F_HYBRID_PATTERN], "--hybrid-layer-pattern", m, error);
}

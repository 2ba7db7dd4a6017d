/* pipeline_layout.c — --pipeline-model-parallel-layout; see pipeline_layout.h. */
#include "pipeline_layout.h"

#include <string.h>

#include "config.h"
#include "numbers.h"

#define FLAG "--pipeline-model-parallel-layout"
/* Longest unrolled layout: 128 ranks x 16 chunks of a few characters. */
#define MAX_UNROLLED (1 << 20)

static gboolean bad(GError **error, const char *text, const char *why) {
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, FLAG " '%s': %s", text, why);
  return FALSE;
}

/* The repeat count after '*' at *p (advanced past it) into *n: 1 without a
 * '*', else digits through the strict parser, from 1 to MAX_UNROLLED. */
static gboolean repeat(const char **p, const char *text, int64_t *n, GError **error) {
  *n = 1;
  if (**p != '*') return TRUE;
  const char *start = ++*p;
  while (g_ascii_isdigit(**p)) (*p)++;
  g_autofree char *digits = g_strndup(start, (gsize)(*p - start));
  if (ptsim_number_parse_int64(digits, n) && *n >= 1 && *n <= MAX_UNROLLED) return TRUE;
  g_autofree char *why = g_strdup_printf("'*%s': expected a repeat count from 1 to %d", digits,
                                         MAX_UNROLLED);
  return bad(error, text, why);
}

/* Megatron's unrolling, in its order: commas go, groups "(...)*n" repeat
 * their text, then characters "x*n" repeat.  Every repetition adds at
 * least one character, so the work is bounded by MAX_UNROLLED. */
static gboolean unroll(const char *text, GString *out, GError **error) {
  g_autoptr(GString) grouped = g_string_new(NULL);
  for (const char *p = text; *p;) {
    if (*p == ',' || *p == ' ') {
      p++;
    } else if (*p == '(') {
      const char *close = strchr(p, ')');
      if (!close || memchr(p + 1, '(', (gsize)(close - p - 1)))
        return bad(error, text, "a '(' without its ')' (groups do not nest)");
      g_autoptr(GString) group = g_string_new(NULL);
      for (const char *g = p + 1; g < close; g++)
        if (*g != ',' && *g != ' ') g_string_append_c(group, *g);
      p = close + 1;
      int64_t n;
      if (!repeat(&p, text, &n, error)) return FALSE;
      if (group->len == 0) return bad(error, text, "an empty group '()'");
      for (int64_t i = 0; i < n && grouped->len < MAX_UNROLLED; i++)
        g_string_append_len(grouped, group->str, (gssize)group->len);
    } else {
      g_string_append_c(grouped, *p++);
    }
    if (grouped->len >= MAX_UNROLLED) return bad(error, text, "too long once unrolled");
  }
  for (const char *p = grouped->str; *p;) {
    if (!strchr("Etm|L", *p))
      return bad(error, text, "expected E, t, m, L, '|', '(...)*n' or 'x*n'");
    char c = *p++;
    int64_t n;
    if (!repeat(&p, text, &n, error)) return FALSE;
    for (int64_t i = 0; i < n && out->len < MAX_UNROLLED; i++) g_string_append_c(out, c);
    if (out->len >= MAX_UNROLLED) return bad(error, text, "too long once unrolled");
  }
  return TRUE;
}

gboolean ptsim_pipeline_layout_parse(const char *text, int64_t pp, int64_t num_layers,
                                     PtsimPipelineLayout *out, GError **error) {
  g_autoptr(GString) flat = g_string_new(NULL);
  memset(out, 0, sizeof *out);
  if (!unroll(text, flat, error)) return FALSE;
  if (flat->len == 0) /* g_strsplit would give no stages at all */
    return bad(error, text, "an empty layout: expected E, t, m, L, '|', '(...)*n' or 'x*n'");
  /* every stage but the first and the last holds a transformer layer, so
   * more stages than layers + 2 cannot be right: refused before splitting
   * what may be a million '|' ("(|*4096)*256") */
  int64_t bars = 0;
  for (gsize i = 0; i < flat->len; i++) bars += flat->str[i] == '|';
  if (bars + 1 > num_layers + 2) {
    g_autofree char *why = g_strdup_printf("%" G_GINT64_FORMAT " stages for %" G_GINT64_FORMAT
                                           " transformer layers: every stage but the first and "
                                           "the last needs one",
                                           (gint64)(bars + 1), (gint64)num_layers);
    return bad(error, text, why);
  }
  if (strchr(flat->str, 'm'))
    return bad(error, text, "multi-token-prediction layers ('m') are not modelled yet");
  g_auto(GStrv) stages = g_strsplit(flat->str, "|", -1);
  int64_t n = (int64_t)g_strv_length(stages), t = 0;
  if (pp < 1 || n % pp != 0) {
    g_autofree char *why = g_strdup_printf("%" G_GINT64_FORMAT " stages are not a multiple of the "
                                           "%" G_GINT64_FORMAT " pipeline ranks",
                                           (gint64)n, (gint64)pp);
    return bad(error, text, why);
  }
  int64_t vp = n / pp;
  g_autofree int64_t *count = g_new0(int64_t, n);
  for (int64_t i = 0; i < n; i++) {
    for (const char *c = stages[i]; *c; c++) {
      if (*c == 't') count[i]++;
      if ((*c == 'E' && (i != 0 || c != stages[i])) || (*c == 'L' && (i != n - 1 || c[1])))
        return bad(error, text, "'E' must open the first stage and 'L' close the last");
    }
    t += count[i];
  }
  if (stages[0][0] != 'E' || !g_str_has_suffix(stages[n - 1], "L"))
    return bad(error, text, "'E' must open the first stage and 'L' close the last");
  if (t != num_layers) {
    g_autofree char *why = g_strdup_printf("%" G_GINT64_FORMAT " transformer layers ('t'), but "
                                           "--num-layers is %" G_GINT64_FORMAT,
                                           (gint64)t, (gint64)num_layers);
    return bad(error, text, why);
  }
  out->vp = vp;
  if (vp == 1) {
    /* per rank: the middle ranks must agree; the ends may differ */
    int64_t mid = pp > 2 ? count[1] : -1;
    for (int64_t s = 0; s < pp; s++) {
      if (count[s] == 0)
        return bad(error, text, "a pipeline rank without transformer layers is not modelled");
      if (s > 0 && s < pp - 1 && count[s] != mid)
        return bad(error, text,
                   "the middle pipeline ranks differ: ptsim models an even split with "
                   "other first and last ranks only");
    }
    if (pp == 1) return TRUE;
    if (pp == 2 && count[0] == count[1]) return TRUE;
    out->first_stage_layers = count[0] != mid ? count[0] : 0;
    out->last_stage_layers = count[pp - 1] != mid ? count[pp - 1] : 0;
    return TRUE;
  }
  /* several chunks: all alike but the very first and last, which may hold
   * fewer (the embedding's and the loss's slots) */
  int64_t u = n > 2 ? count[1] : MAX(count[0], count[n - 1]);
  for (int64_t i = 1; i < n - 1; i++)
    if (count[i] != u) goto uneven;
  if (count[0] > u || count[n - 1] > u) goto uneven;
  out->account_embedding = (int)(u - count[0]);
  out->account_loss = (int)(u - count[n - 1]);
  return TRUE;
uneven:
  return bad(error, text,
             "with virtual stages ptsim models equal stages, the first and the last "
             "with fewer layers at most (--account-for-embedding/loss-in-pipeline-"
             "split)");
}

gboolean ptsim_pipeline_layout_apply(const char *text, int64_t num_layers, PtsimLayout *l,
                                     GError **error) {
  PtsimPipelineLayout p;
  if (!ptsim_pipeline_layout_parse(text, l->pp, num_layers, &p, error)) return FALSE;
  l->vp = p.vp;
  l->first_stage_layers = p.first_stage_layers;
  l->last_stage_layers = p.last_stage_layers;
  l->account_embedding = p.account_embedding;
  l->account_loss = p.account_loss;
  return TRUE;
}

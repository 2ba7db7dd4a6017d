/* pipeline_layout.c — --pipeline-model-parallel-layout; see pipeline_layout.h. */
#include "pipeline_layout.h"

#include <string.h>

#include "config.h"
#include "numbers.h"
#include "plan.h"

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

/* The split of `count` (n virtual stages' layers) into the layout's
 * fields: Megatron's flags when they say it (one chunk per rank: an even
 * split with other first and last ranks; several: equal chunks, fewer in
 * the very first and last), else runs of equal virtual stages. */
static gboolean split_of(const char *text, const int64_t *count, int64_t n, int64_t pp,
                         PtsimPipelineLayout *out, GError **error) {
  int64_t vp = n / pp, mid = n > 2 ? count[1] : -1, u;
  gboolean middle_equal = TRUE, ends_filled = count[0] > 0 && count[n - 1] > 0;
  for (int64_t i = 1; i < n - 1; i++) middle_equal = middle_equal && count[i] == mid;
  if (vp == 1 && middle_equal && ends_filled) {
    if (pp == 1 || (pp == 2 && count[0] == count[1])) return TRUE;
    out->first_stage_layers = count[0] != mid ? count[0] : 0;
    out->last_stage_layers = count[pp - 1] != mid ? count[pp - 1] : 0;
    return TRUE;
  }
  u = n > 2 ? mid : MAX(count[0], count[n - 1]);
  if (vp > 1 && middle_equal && count[0] <= u && count[n - 1] <= u) {
    out->account_embedding = (int)(u - count[0]); /* the slots the ends leave empty */
    out->account_loss = (int)(u - count[n - 1]);
    return TRUE;
  }
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || count[i] != count[i - 1]) {
      if (out->runs == PTSIM_LAYOUT_RUNS) {
        g_autofree char *why = g_strdup_printf("more than %d runs of equal virtual stages",
                                               PTSIM_LAYOUT_RUNS);
        return bad(error, text, why);
      }
      out->run_layers[out->runs++] = (int32_t)count[i];
    }
    out->run_count[out->runs - 1]++;
  }
  return TRUE;
}

/* Where the MTP layers' virtual stage `at` of n (pp ranks) may be, as
 * Megatron places them (pipeline_parallel_layer_layout.py
 * validate_layer_layout: the last virtual stage of its rank) and ptsim
 * models them: with the loss (the last), or apart on the one before it,
 * the loss's then holding 'L' alone (the decoder's layers come first). */
static gboolean mtp_placed(const char *text, int64_t at, int64_t n, int64_t pp,
                           PtsimPipelineLayout *out, GError **error) {
  if (at == n - 1) return TRUE;
  if (at / pp != n / pp - 1)
    return bad(error, text,
               "multi-token-prediction layers ('m') on a virtual stage that is "
               "not the last of its pipeline rank: Megatron builds them in a "
               "rank's last one");
  if (at != n - 2)
    return bad(error, text,
               "multi-token-prediction layers ('m') with empty virtual stages "
               "between them and the loss ('L'): ptsim models them with the "
               "loss or on the virtual stage just before it");
  out->mtp_apart = 1;
  return TRUE;
}

gboolean ptsim_pipeline_layout_parse(const char *text, int64_t pp, int64_t num_layers,
                                     int64_t mtp_layers, PtsimPipelineLayout *out, GError **error) {
  g_autoptr(GString) flat = g_string_new(NULL);
  memset(out, 0, sizeof *out);
  if (!unroll(text, flat, error)) return FALSE;
  if (flat->len == 0) /* g_strsplit would give no stages at all */
    return bad(error, text, "an empty layout: expected E, t, m, L, '|', '(...)*n' or 'x*n'");
  /* every stage but the first and the last holds a transformer layer, so
   * more stages than layers + 2 cannot be right: refused before splitting
   * what may be a million '|' ("(|*4096)*256") */
  int64_t bars = 0, mtp = 0;
  for (gsize i = 0; i < flat->len; i++) {
    bars += flat->str[i] == '|';
    mtp += flat->str[i] == 'm';
  }
  if (bars + 1 > num_layers + 2 + (mtp > 0)) {
    g_autofree char *why = g_strdup_printf("%" G_GINT64_FORMAT " stages for %" G_GINT64_FORMAT
                                           " transformer layers: every stage but the first and "
                                           "the last needs one",
                                           (gint64)(bars + 1), (gint64)num_layers);
    return bad(error, text, why);
  }
  /* Megatron's validate_layer_layout: as many 'm' as --mtp-num-layers */
  if (mtp != mtp_layers) {
    g_autofree char *why = g_strdup_printf("%" G_GINT64_FORMAT " multi-token-prediction layers "
                                           "('m'), but --mtp-num-layers is %" G_GINT64_FORMAT,
                                           (gint64)mtp, (gint64)mtp_layers);
    return bad(error, text, why);
  }
  g_auto(GStrv) stages = g_strsplit(flat->str, "|", -1);
  int64_t n = (int64_t)g_strv_length(stages), t = 0, mtp_stage = -1;
  gboolean seen_mtp = FALSE;
  if (pp < 1 || pp > PTSIM_MAX_STAGES || n % pp != 0) {
    g_autofree char *why = g_strdup_printf("%" G_GINT64_FORMAT " stages are not a multiple of the "
                                           "%" G_GINT64_FORMAT " pipeline ranks",
                                           (gint64)n, (gint64)pp);
    return bad(error, text, why);
  }
  out->vp = n / pp;
  g_autofree int64_t *count = g_new0(int64_t, n);
  for (int64_t i = 0; i < n; i++) {
    for (const char *c = stages[i]; *c; c++) {
      if (*c == 't') count[i]++;
      if ((*c == 'E' && (i != 0 || c != stages[i])) || (*c == 'L' && (i != n - 1 || c[1])))
        return bad(error, text, "'E' must open the first stage and 'L' close the last");
      if (*c == 't' && seen_mtp)
        return bad(error, text,
                   "a transformer layer ('t') after a multi-token-prediction "
                   "layer ('m'): the decoder's layers come first");
      seen_mtp = seen_mtp || *c == 'm';
      if (*c == 'm' && mtp_stage >= 0 && mtp_stage != i)
        return bad(error, text,
                   "multi-token-prediction layers ('m') on two virtual stages: "
                   "Megatron builds them all in one");
      if (*c == 'm') mtp_stage = i;
    }
    t += count[i];
  }
  if (mtp_stage >= 0 && !mtp_placed(text, mtp_stage, n, pp, out, error)) return FALSE;
  if (stages[0][0] != 'E' || !g_str_has_suffix(stages[n - 1], "L"))
    return bad(error, text, "'E' must open the first stage and 'L' close the last");
  if (t != num_layers) {
    g_autofree char *why = g_strdup_printf("%" G_GINT64_FORMAT " transformer layers ('t'), but "
                                           "--num-layers is %" G_GINT64_FORMAT,
                                           (gint64)t, (gint64)num_layers);
    return bad(error, text, why);
  }
  for (int64_t i = 1; i < n - 1; i++)
    if (count[i] == 0 && !(out->mtp_apart && i == n - 2)) {
      g_autofree char *why = g_strdup_printf("virtual stage %" G_GINT64_FORMAT " has no "
                                             "transformer layer: ptsim models one at least in "
                                             "every stage but the first and the last",
                                             (gint64)i);
      return bad(error, text, why);
    }
  return split_of(text, count, n, pp, out, error);
}

gboolean ptsim_pipeline_layout_apply(const char *text, int64_t num_layers, int64_t mtp_layers,
                                     PtsimLayout *l, GError **error) {
  PtsimPipelineLayout p;
  if (!ptsim_pipeline_layout_parse(text, l->pp, num_layers, mtp_layers, &p, error)) return FALSE;
  ptsim_pipeline_layout_set(&p, l);
  return TRUE;
}

void ptsim_pipeline_layout_set(const PtsimPipelineLayout *p0, PtsimLayout *l) {
  const PtsimPipelineLayout p = *p0;
  l->vp = p.vp;
  l->first_stage_layers = p.first_stage_layers;
  l->last_stage_layers = p.last_stage_layers;
  l->account_embedding = p.account_embedding;
  l->account_loss = p.account_loss;
  l->vstage_runs = p.runs;
  l->mtp_apart = p.mtp_apart;
  for (int32_t r = 0; r < PTSIM_LAYOUT_RUNS; r++) {
    l->vstage_run_count[r] = r < p.runs ? p.run_count[r] : 0;
    l->vstage_run_layers[r] = r < p.runs ? p.run_layers[r] : 0;
  }
}

int64_t ptsim_pipeline_layout_stages(const char *text, GError **error) {
  g_autoptr(GString) flat = g_string_new(NULL);
  if (!unroll(text, flat, error)) return -1;
  int64_t bars = 0;
  for (gsize i = 0; i < flat->len; i++) bars += flat->str[i] == '|';
  return bars + 1;
}

/* The string is built for every uneven row a sweep writes: into a stack
 * buffer with its digits by hand (printf and GString were 10% of a CSV
 * row's time).  The longest: every one of PTSIM_MAX_VSTAGES virtual stages
 * distinct, "t*NNNNNN|" each, plus "E", "m*N" and "L". */
#define FORMAT_MAX (PTSIM_MAX_VSTAGES * 12 + 32)

static char *put_number(char *at, int64_t v) {
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) > 0);
  while (n > 0) *at++ = digits[--n];
  return at;
}

/* "t*k" for k layers ("t" for one, nothing for none); the same for 'm'. */
static char *put_layers(char *at, char what, int64_t k) {
  if (k >= 1) *at++ = what;
  if (k > 1) {
    *at++ = '*';
    at = put_number(at, k);
  }
  return at;
}

char *ptsim_pipeline_layout_format(const PtsimLayout *l, int64_t num_layers, int64_t mtp_layers) {
  int32_t count[PTSIM_MAX_VSTAGES];
  char text[FORMAT_MAX], *at = text;
  if (ptsim_plan_split_vstages(l, num_layers, count) != 0) return NULL;
  int64_t n = l->pp * (l->vp > 0 ? l->vp : 1), i = 1;
  /* apart: the MTP layers close the virtual stage before the loss's,
   * which holds 'L' alone */
  int64_t mtp_at = l->mtp_apart && mtp_layers > 0 && n >= 2 ? n - 2 : n - 1;
  gboolean even = TRUE;
  for (int64_t k = 1; k < n; k++) even = even && count[k] == count[0];
  if (even) return NULL;
  /* every virtual stage but the last ends in its '|'; equal middle
   * neighbours are one group "(t*k|)*r" */
  *at++ = 'E';
  at = put_layers(at, 't', count[0]);
  if (mtp_at == 0) at = put_layers(at, 'm', mtp_layers);
  if (n > 1) *at++ = '|';
  while (i < n - 1 && i < mtp_at) {
    int64_t run = 1;
    while (i + run < n - 1 && i + run < mtp_at && count[i + run] == count[i]) run++;
    if (run > 1) *at++ = '(';
    at = put_layers(at, 't', count[i]);
    *at++ = '|';
    if (run > 1) {
      *at++ = ')';
      *at++ = '*';
      at = put_number(at, run);
    }
    i += run;
  }
  if (mtp_at > 0 && mtp_at < n - 1) { /* the MTP layers' own virtual stage */
    at = put_layers(at, 't', count[mtp_at]);
    at = put_layers(at, 'm', mtp_layers);
    *at++ = '|';
  }
  if (n > 1) at = put_layers(at, 't', count[n - 1]);
  if (mtp_at == n - 1 && n > 1) at = put_layers(at, 'm', mtp_layers);
  *at++ = 'L';
  return g_strndup(text, (gsize)(at - text));
}

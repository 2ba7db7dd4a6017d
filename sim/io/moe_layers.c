/* moe_layers.c — --moe-layer-freq into a layer bitmap; see moe_layers.h.
 *
 * Grammar (Python's list arithmetic restricted to what the flag uses):
 *   expr := term ('+' term)*
 *   term := atom ('*' count)*
 *   atom := '[' bit (',' bit)* ']' | '(' expr ')'
 * Lists are built as byte arrays, capped at PTSIM_MAX_LAYERS + 1 entries
 * (anything longer is wrong anyway). */
#include "moe_layers.h"

#include <string.h>
#include "config.h"

#define CAP (PTSIM_MAX_LAYERS + 1)

typedef struct {
  const char *p;
  const char *why; /* the first error */
} Parser;

static void skip(Parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t') ps->p++;
}

static gboolean fail(Parser *ps, const char *why) {
  if (!ps->why) ps->why = why;
  return FALSE;
}

static gboolean expr(Parser *ps, GByteArray *out, int depth);

static gboolean count(Parser *ps, int64_t *n) {
  skip(ps);
  if (!g_ascii_isdigit(*ps->p)) return fail(ps, "'*' needs a count");
  *n = 0;
  while (g_ascii_isdigit(*ps->p)) {
    *n = *n * 10 + (*ps->p++ - '0');
    if (*n > CAP) *n = CAP;
  }
  return TRUE;
}

static gboolean atom(Parser *ps, GByteArray *out, int depth) {
  skip(ps);
  if (*ps->p == '(') {
    ps->p++;
    if (depth > 16) return fail(ps, "parentheses nested too deeply");
    if (!expr(ps, out, depth + 1)) return FALSE;
    skip(ps);
    if (*ps->p != ')') return fail(ps, "a '(' without its ')'");
    ps->p++;
    return TRUE;
  }
  if (*ps->p != '[') return fail(ps, "expected a list such as [0] or [1], or '('");
  ps->p++;
  for (;;) {
    guint8 bit;
    skip(ps);
    if (*ps->p != '0' && *ps->p != '1') return fail(ps, "list entries must be 0 (dense) or 1 (MoE)");
    bit = (guint8)(*ps->p++ - '0');
    if (out->len < CAP) g_byte_array_append(out, &bit, 1);
    skip(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p == ']') {
      ps->p++;
      return TRUE;
    }
    return fail(ps, "expected ',' or ']' in a list");
  }
}

static gboolean term(Parser *ps, GByteArray *out, int depth) {
  g_autoptr(GByteArray) a = g_byte_array_new();
  if (!atom(ps, a, depth)) return FALSE;
  for (;;) {
    int64_t n, i;
    skip(ps);
    if (*ps->p != '*') break;
    ps->p++;
    if (!count(ps, &n)) return FALSE;
    g_autoptr(GByteArray) rep = g_byte_array_new();
    for (i = 0; i < n && rep->len < CAP; i++) g_byte_array_append(rep, a->data, MIN(a->len, CAP - rep->len));
    g_byte_array_set_size(a, 0);
    g_byte_array_append(a, rep->data, rep->len);
  }
  g_byte_array_append(out, a->data, MIN(a->len, CAP > out->len ? CAP - out->len : 0));
  return TRUE;
}

static gboolean expr(Parser *ps, GByteArray *out, int depth) {
  if (!term(ps, out, depth)) return FALSE;
  for (;;) {
    skip(ps);
    if (*ps->p != '+') return TRUE;
    ps->p++;
    if (!term(ps, out, depth)) return FALSE;
  }
}

static void set_bits(const guint8 *layers, int64_t n, uint64_t *bits) {
  memset(bits, 0, sizeof(uint64_t) * PTSIM_LAYER_WORDS);
  for (int64_t i = 0; i < n && i < PTSIM_MAX_LAYERS; i++)
    if (layers[i]) bits[i / 64] |= (uint64_t)1 << (i % 64);
}

gboolean ptsim_moe_layers_parse(const char *text, int64_t num_layers, const char *where,
                                uint64_t *bits, GError **error) {
  int64_t freq;
  if (num_layers < 1 || num_layers > PTSIM_MAX_LAYERS) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s: a mixture-of-experts model has 1 to %d layers in ptsim (num_layers %"
                G_GINT64_FORMAT ")", where, PTSIM_MAX_LAYERS, (gint64)num_layers);
    return FALSE;
  }
  if (!strchr(text, '[')) {
    if (!ptsim_config_parse_int64(text, &freq) || freq < 1) {
      g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                  "%s '%s' is not allowed: expected a positive integer N (every N-th layer is "
                  "MoE) or a list such as \"([0]*3+[1]*58)\"", where, text);
      return FALSE;
    }
    memset(bits, 0, sizeof(uint64_t) * PTSIM_LAYER_WORDS);
    for (int64_t i = 0; i < num_layers; i += freq) bits[i / 64] |= (uint64_t)1 << (i % 64);
    return TRUE;
  }
  Parser ps = {text, NULL};
  g_autoptr(GByteArray) layers = g_byte_array_new();
  gboolean ok = expr(&ps, layers, 0);
  skip(&ps);
  if (ok && *ps.p) ok = fail(&ps, "unexpected text after the expression");
  if (!ok) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s '%s': %s (at '%s')", where, text, ps.why, ps.p);
    return FALSE;
  }
  if ((int64_t)layers->len != num_layers) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "%s '%s' lists %s%u layers; expected num_layers = %" G_GINT64_FORMAT
                " (Megatron-LM asserts the pattern's length)",
                where, text, layers->len >= CAP ? "more than " : "",
                layers->len >= CAP ? PTSIM_MAX_LAYERS : layers->len, (gint64)num_layers);
    return FALSE;
  }
  set_bits(layers->data, num_layers, bits);
  return TRUE;
}

void ptsim_moe_layers_from(int64_t first_dense, int64_t num_layers, uint64_t *bits) {
  memset(bits, 0, sizeof(uint64_t) * PTSIM_LAYER_WORDS);
  for (int64_t i = first_dense; i < num_layers && i < PTSIM_MAX_LAYERS; i++)
    bits[i / 64] |= (uint64_t)1 << (i % 64);
}

char *ptsim_moe_layers_format(const uint64_t *bits, int64_t num_layers) {
  GString *out = g_string_new("(");
  int64_t i = 0;
  while (i < num_layers) {
    int bit = (int)((bits[i / 64] >> (i % 64)) & 1u);
    int64_t run = 1;
    while (i + run < num_layers && (int)((bits[(i + run) / 64] >> ((i + run) % 64)) & 1u) == bit) run++;
    g_string_append_printf(out, "%s[%d]*%" G_GINT64_FORMAT, i ? "+" : "", bit, (gint64)run);
    i += run;
  }
  g_string_append_c(out, ')');
  return g_string_free(out, FALSE);
}

/* megatron_window.c — Megatron-LM's sliding-window attention flags
 * (--window-size, --window-attn-skip-freq: megatron/training/arguments.py
 * and megatron/core/transformer/utils.py is_layer_window_attention at
 * d98e8a64) into the model's window_size and window_layers. */
#include <string.h>

#include "config.h"
#include "megatron_said.h"
#include "moe_layers.h"
#include "numbers.h"

#define parse_error(...) \
  (g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, __VA_ARGS__), FALSE)
#define NOTE(s, ...) \
  ptsim_megatron_add((s)->diag ? (s)->diag->notes : NULL, g_strdup_printf(__VA_ARGS__))

/* "128,0", "(128, 0)" or "[128,0]": argparse's tuple of two integers. */
static gboolean window_pair(const char *text, int64_t *left, int64_t *right, GError **error) {
  g_autofree char *own = g_strdup(text);
  g_strdelimit(own, "()[]", ' ');
  g_auto(GStrv) parts = g_strsplit(own, ",", -1);
  if (g_strv_length(parts) != 2 || !ptsim_number_parse_int64(g_strstrip(parts[0]), left) ||
      !ptsim_number_parse_int64(g_strstrip(parts[1]), right))
    return parse_error("--window-size '%s' is not allowed: expected two integers LEFT,RIGHT "
                       "(tokens before and after each query; -1: unbounded), such as 128,0",
                       text);
  return TRUE;
}

/* Layers 1..L that are windowed: an integer N windows every layer but each
 * N-th; a list such as "[1,1,1,0]*3" names them (1: windowed). */
static gboolean windowed_layers(const char *text, int64_t layers, int64_t *out, GError **error) {
  int64_t n = 0;
  if (!strchr(text, '[')) {
    if (!ptsim_number_parse_int64(text, &n) || n < 1)
      return parse_error("--window-attn-skip-freq '%s' is not allowed: expected a positive "
                         "integer N (every N-th layer attends to the whole sequence) or a list "
                         "such as \"[1,1,1,0]*3\"",
                         text);
    *out = layers - layers / n;
    return TRUE;
  }
  uint64_t bits[PTSIM_LAYER_WORDS];
  if (!ptsim_moe_layers_parse(text, layers, "--window-attn-skip-freq", bits, error)) return FALSE;
  *out = 0;
  for (int w = 0; w < PTSIM_LAYER_WORDS; w++)
    for (uint64_t b = bits[w]; b; b &= b - 1) (*out)++;
  return TRUE;
}

gboolean ptsim_megatron_resolve_window(const Said *s, PtsimModel *m, GError **error) {
  int64_t left = 0, right = 0;
  if (!GIVEN(s, F_WINDOW_SIZE)) {
    if (GIVEN(s, F_WINDOW_SKIP_FREQ))
      NOTE(s, "--window-attn-skip-freq without --window-size: no layer is windowed");
    return TRUE;
  }
  if (!window_pair(s->word[F_WINDOW_SIZE], &left, &right, error)) return FALSE;
  if (right != 0 && right != -1)
    return parse_error("--window-size %s: a window of %" G_GINT64_FORMAT
                       " tokens after each query is not a causal language model's; ptsim prices "
                       "causal attention (RIGHT must be 0)",
                       s->word[F_WINDOW_SIZE], (gint64)right);
  if (left < 0) return TRUE; /* unbounded on the left: the full causal prefix */
  if (left == 0)
    return parse_error("--window-size %s: a query that sees only itself is no attention ptsim "
                       "prices; give LEFT >= 1 (or -1: unbounded)",
                       s->word[F_WINDOW_SIZE]);
  m->window_size = left;
  m->window_layers = m->num_layers;
  return !GIVEN(s, F_WINDOW_SKIP_FREQ) ||
         windowed_layers(s->word[F_WINDOW_SKIP_FREQ], m->num_layers, &m->window_layers, error);
}

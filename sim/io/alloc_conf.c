/* alloc_conf.c — see alloc_conf.h. */
#include <string.h>
#include "alloc_conf.h"
#include "config.h"
#include "numbers.h"

#define MIB (1024 * 1024)
/* Sizes in MB up to 2^30 (a PiB): n * MIB stays far inside int64. */
#define MB_MAX ((gint64)1 << 30)
/* Divisions fit the options' int32 and stay powers of two. */
#define DIVISIONS_MAX ((gint64)1 << 30)

static gboolean bad(GError **error, const char *key, const char *value, const char *allowed) {
  g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "--alloc-conf %s:%s: %s", key,
              value, allowed);
  return FALSE;
}

static gboolean is_power_of_two(gint64 v) { return v > 0 && (v & (v - 1)) == 0; }

/* "[256:1,512:2,>:8]": interval i covers sizes from 2^i MiB. */
static gboolean parse_division_list(const char *value, PtsimAllocOptions *opts, GError **error) {
  g_autofree char *inner = g_strndup(value + 1, strlen(value) - 2);
  g_auto(GStrv) parts = g_strsplit(inner, ",", -1);
  int next = 0;
  for (char **p = parts; *p; p++) {
    g_auto(GStrv) kv = g_strsplit(*p, ":", 2);
    gint64 divisions, mb;
    if (!kv[0] || !kv[1] || !ptsim_number_parse_int64(kv[1], &divisions) ||
        (divisions > 1 && !is_power_of_two(divisions)) || divisions < 0 ||
        divisions > DIVISIONS_MAX)
      return bad(error, "roundup_power2_divisions", value,
                 "expected [MB:N,...,>:N] with N 0 or a power of two");
    if (strcmp(kv[0], ">") == 0) {
      for (int i = next; i < PTSIM_ALLOC_DIVISION_INTERVALS; i++)
        opts->roundup_power2_divisions[i] = (int32_t)divisions;
      continue;
    }
    if (!ptsim_number_parse_int64(kv[0], &mb) || !is_power_of_two(mb) || mb > MB_MAX)
      return bad(error, "roundup_power2_divisions", value,
                 "interval sizes must be powers of two (MB)");
    int index = 0;
    while (((gint64)1 << index) < mb) index++;
    if (index >= PTSIM_ALLOC_DIVISION_INTERVALS)
      return bad(error, "roundup_power2_divisions", value, "interval size too large");
    opts->roundup_power2_divisions[index] = (int32_t)divisions;
    next = index + 1;
  }
  return TRUE;
}

static gboolean apply(const char *key, const char *value, PtsimAllocOptions *opts, GError **error) {
  gint64 n;
  double d;
  g_autofree char *what = g_strdup_printf("--alloc-conf %s", key);
  if (strcmp(key, "max_split_size_mb") == 0) {
    if (!ptsim_number_int64(what, value, 20, MB_MAX, &n, error)) return FALSE;
    opts->max_split_size_bytes = n * MIB;
  } else if (strcmp(key, "max_non_split_rounding_mb") == 0) {
    if (!ptsim_number_int64(what, value, 20, MB_MAX, &n, error)) return FALSE;
    opts->max_non_split_rounding_bytes = n * MIB;
  } else if (strcmp(key, "roundup_power2_divisions") == 0) {
    if (value[0] == '[' && value[strlen(value) - 1] == ']')
      return parse_division_list(value, opts, error);
    if (!ptsim_number_parse_int64(value, &n) || n < 0 || n > DIVISIONS_MAX ||
        (n > 1 && !is_power_of_two(n)))
      return bad(error, key, value, "expected 0, a power of two up to 2^30, or [MB:N,...]");
    ptsim_alloc_options_set_divisions(opts, (int32_t)n);
  } else if (strcmp(key, "garbage_collection_threshold") == 0) {
    const PtsimRange open_unit = {0.0, 1.0, FALSE, FALSE};
    if (!ptsim_number_double(what, value, open_unit, &d, error)) return FALSE;
    opts->garbage_collection_threshold = d;
    /* GC acts only under a memory fraction; the emulation's capacity is the fraction. */
    if (opts->memory_fraction == 0.0) opts->memory_fraction = 1.0;
  } else if (strcmp(key, "expandable_segments") == 0) {
    if (strcmp(value, "True") != 0 && strcmp(value, "False") != 0)
      return bad(error, key, value, "expected True or False");
    opts->expandable_segments = strcmp(value, "True") == 0;
  } else {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "--alloc-conf: unknown key '%s'; known: max_split_size_mb, "
                "max_non_split_rounding_mb, roundup_power2_divisions, "
                "garbage_collection_threshold, expandable_segments",
                key);
    return FALSE;
  }
  return TRUE;
}

gboolean ptsim_alloc_conf_parse(const char *text, PtsimAllocOptions *opts, GError **error) {
  /* Split on commas outside brackets. */
  GString *item = g_string_new(NULL);
  int depth = 0;
  gboolean ok = TRUE;
  for (const char *c = text;; c++) {
    if (*c == '[') depth++;
    if (*c == ']') depth--;
    if ((*c == ',' && depth == 0) || *c == '\0') {
      char *colon = strchr(item->str, ':');
      if (item->len > 0) {
        if (!colon) {
          g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                      "--alloc-conf '%s': expected key:value", item->str);
          ok = FALSE;
          break;
        }
        *colon = '\0';
        if (!apply(g_strstrip(item->str), g_strstrip(colon + 1), opts, error)) {
          ok = FALSE;
          break;
        }
      }
      g_string_truncate(item, 0);
      if (*c == '\0') break;
      continue;
    }
    g_string_append_c(item, *c);
  }
  g_string_free(item, TRUE);
  return ok;
}

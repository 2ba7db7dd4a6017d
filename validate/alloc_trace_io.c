/* alloc_trace_io.c — reading the allocator event trace and replaying it;
 * the format is in alloc_trace_io.h.  Shell module (GLib). */
#include "alloc_trace_io.h"
#include "input.h"

#include <string.h>
#include "config.h"
#include "numbers.h"

/* The domain name keeps its dashes (clang-format 14 would space them). */
/* clang-format off */
G_DEFINE_QUARK(ptsim-alloc-trace-error-quark, ptsim_alloc_trace_error)
/* clang-format on */

void ptsim_alloc_trace_free(PtsimAllocTrace *trace) {
  if (trace == NULL) return;
  g_free(trace->name);
  if (trace->events != NULL) g_array_unref(trace->events);
  if (trace->observed_reserved != NULL) g_array_unref(trace->observed_reserved);
  g_free(trace);
}

/* Per ID: its dense index and, while live, the line that allocated it. */
typedef struct {
  int32_t index;
  int32_t live_line; /* 0 when not live */
} IdState;

static gboolean parse_nonneg(const char *text, int64_t max, int64_t *out) {
  int64_t v;
  if (!ptsim_number_parse_int64(text, &v) || v < 0 || v > max) return FALSE;
  *out = v;
  return TRUE;
}

/* What a comment is: 1 with *bytes when its text (after '#') is exactly
 * "reserved N", -1 when it is "reserved" and one number that is not a
 * byte count ("# reserved -5", "# reserved 1e9": a broken observation, not
 * a remark to skip), 0 for any other comment. */
static int parse_observation(const char *comment, int64_t *bytes) {
  g_auto(GStrv) w = g_strsplit_set(comment, " \t\r\v\f", -1);
  const char *f[3];
  int nf = 0;
  for (int k = 0; w[k] != NULL; k++) {
    if (w[k][0] == '\0') continue;
    if (nf == 3) break;
    f[nf++] = w[k];
  }
  if (nf != 2 || strcmp(f[0], "reserved") != 0) return 0;
  if (parse_nonneg(f[1], G_MAXINT64, bytes)) return 1;
  /* "# reserved for later" stays a remark; a number that is not a byte
   * count is a broken observation. */
  return g_ascii_isdigit(f[1][0]) || f[1][0] == '-' || f[1][0] == '+' ? -1 : 0;
}

static void observe(PtsimAllocTrace *t, int64_t bytes) {
  if (t->events->len == 0) return; /* nothing to attach it to */
  if (t->observed_reserved == NULL)
    t->observed_reserved = g_array_new(FALSE, FALSE, sizeof(int64_t));
  int64_t none = -1;
  while (t->observed_reserved->len < t->events->len) g_array_append_val(t->observed_reserved, none);
  int64_t *slot = &g_array_index(t->observed_reserved, int64_t, t->events->len - 1);
  if (*slot < 0) t->num_observed += 1;
  *slot = bytes;
}

/* Parses one line's fields into ev; ids resolves and tracks lifetimes. */
static gboolean parse_line(char **f, int nf, int32_t line, GHashTable *ids, int32_t *num_ids,
                           int32_t *live, const char *name, PtsimAllocEvent *ev, GError **error) {
  memset(ev, 0, sizeof *ev);
  ev->line = line;
  const char *kw = f[0];
  if (strcmp(kw, "empty_cache") == 0) {
    if (nf != 1) goto arity;
    ev->kind = PTSIM_ALLOC_EVENT_EMPTY_CACHE;
    return TRUE;
  }
  if (strcmp(kw, "alloc") == 0) {
    if (nf != 4) goto arity;
    int64_t size, stream;
    if (!parse_nonneg(f[2], (int64_t)1 << 56, &size)) {
      g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_PARSE,
                  "%s:%d: size '%s' is not a byte count (an integer from 0 to 2^56)", name, line,
                  f[2]);
      return FALSE;
    }
    if (!parse_nonneg(f[3], G_MAXINT32, &stream)) {
      g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_PARSE,
                  "%s:%d: stream '%s' is not an integer from 0 to %d", name, line, f[3],
                  G_MAXINT32);
      return FALSE;
    }
    IdState *st = g_hash_table_lookup(ids, f[1]);
    if (st == NULL) {
      st = g_new0(IdState, 1);
      st->index = (*num_ids)++;
      g_hash_table_insert(ids, g_strdup(f[1]), st);
    } else if (st->live_line != 0) {
      g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_PARSE,
                  "%s:%d: alloc of '%s', which is still live (allocated at line %d)", name, line,
                  f[1], st->live_line);
      return FALSE;
    }
    st->live_line = line;
    *live += 1;
    ev->kind = PTSIM_ALLOC_EVENT_ALLOC;
    ev->id = st->index;
    ev->size_bytes = size;
    ev->stream = (int32_t)stream;
    return TRUE;
  }
  if (strcmp(kw, "free") == 0) {
    if (nf != 2) goto arity;
    IdState *st = g_hash_table_lookup(ids, f[1]);
    if (st == NULL || st->live_line == 0) {
      g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_PARSE,
                  "%s:%d: free of '%s', which is not live (%s)", name, line, f[1],
                  st == NULL ? "never allocated" : "already freed");
      return FALSE;
    }
    st->live_line = 0;
    *live -= 1;
    ev->kind = PTSIM_ALLOC_EVENT_FREE;
    ev->id = st->index;
    return TRUE;
  }
  g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_PARSE,
              "%s:%d: unknown event '%s' (expected alloc, free or empty_cache)", name, line, kw);
  return FALSE;
arity:
  g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_PARSE,
              "%s:%d: '%s' takes %s, got %d field%s", name, line, kw,
              strcmp(kw, "alloc") == 0  ? "ID SIZE STREAM"
              : strcmp(kw, "free") == 0 ? "ID"
                                        : "no fields",
              nf - 1, nf - 1 == 1 ? "" : "s");
  return FALSE;
}

PtsimAllocTrace *ptsim_alloc_trace_parse(const char *text, gssize len, const char *name,
                                         GError **error) {
  g_return_val_if_fail(text != NULL, NULL);
  if (name == NULL) name = "(trace)";
  g_autofree char *copy = len < 0 ? g_strdup(text) : g_strndup(text, (gsize)len);
  g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
  g_autoptr(GHashTable) ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(PtsimAllocTrace) t = g_new0(PtsimAllocTrace, 1);
  t->name = g_strdup(name);
  t->events = g_array_new(FALSE, TRUE, sizeof(PtsimAllocEvent));
  int32_t live = 0;
  for (int32_t i = 0; lines[i] != NULL; i++) {
    char *l = lines[i];
    char *hash = strchr(l, '#');
    int64_t observed = -1;
    if (hash != NULL) {
      *hash = '\0';
      int kind = parse_observation(hash + 1, &observed);
      if (kind < 0) {
        g_strchomp(hash + 1);
        g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_PARSE,
                    "%s:%d: '#%s': an observation is '# reserved N' with N a byte count "
                    "(an integer from 0 to 2^63-1)",
                    name, i + 1, hash + 1);
        return NULL;
      }
      if (kind == 0) observed = -1;
    }
    g_auto(GStrv) raw = g_strsplit_set(l, " \t\r\v\f", -1);
    char *f[5]; /* the first five fields; nf counts them all */
    int nf = 0;
    for (int k = 0; raw[k] != NULL; k++) {
      if (raw[k][0] == '\0') continue;
      if (nf < 5) f[nf] = raw[k];
      nf += 1;
    }
    if (nf == 0) {
      if (observed >= 0) observe(t, observed);
      continue;
    }
    if (i >= G_MAXINT32 - 1) {
      g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_PARSE,
                  "%s: more than %d lines", name, G_MAXINT32 - 1);
      return NULL;
    }
    PtsimAllocEvent ev;
    if (!parse_line(f, nf, i + 1, ids, &t->num_ids, &live, name, &ev, error)) return NULL;
    g_array_append_val(t->events, ev);
    if (live > t->max_live) t->max_live = live;
    if (observed >= 0) observe(t, observed);
  }
  if (t->observed_reserved != NULL) {
    int64_t none = -1;
    while (t->observed_reserved->len < t->events->len)
      g_array_append_val(t->observed_reserved, none);
  }
  return g_steal_pointer(&t);
}

PtsimAllocTrace *ptsim_alloc_trace_load(const char *path, GError **error) {
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) local = NULL;
  if (!ptsim_input_read(path, "allocator trace", PTSIM_INPUT_MAX_TABLE, &text, &len, &local)) {
    g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_NOT_FOUND, "%s",
                local->message);
    return NULL;
  }
  return ptsim_alloc_trace_parse(text, (gssize)len, path, error);
}

gboolean ptsim_alloc_trace_replay(const PtsimAllocTrace *trace, const PtsimAllocOptions *opts,
                                  double capacity_bytes, int64_t *reserved_after,
                                  PtsimAllocReplay *out, GError **error) {
  g_return_val_if_fail(trace != NULL && out != NULL, FALSE);
  /* Blocks: each live tensor, a cached block or unmapped range between two
   * of them, and whole cached segments; start generous, double on refusal
   * (a replay is deterministic, so restarting gives the same result). */
  int64_t want = 2 * (int64_t)trace->max_live + 1024;
  g_autofree int32_t *handles = g_new(int32_t, trace->num_ids > 0 ? trace->num_ids : 1);
  for (;;) {
    int64_t slots = ptsim_alloc_storage_slots(want); /* the free set's order besides */
    int32_t cap = slots > G_MAXINT32 ? G_MAXINT32 : (int32_t)slots;
    g_autofree PtsimAllocBlock *blocks = g_new(PtsimAllocBlock, cap);
    PtsimAllocator a;
    if (ptsim_alloc_init(&a, opts, capacity_bytes, blocks, cap) != 0) {
      g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_REPLAY,
                  "%s: allocator options or capacity out of range", trace->name);
      return FALSE;
    }
    int32_t rc = ptsim_alloc_replay(&a, (const PtsimAllocEvent *)(void *)trace->events->data,
                                    (int64_t)trace->events->len, handles, trace->num_ids,
                                    reserved_after, out);
    if (rc == 0) return TRUE;
    int line = out->error_event >= 0
                   ? g_array_index(trace->events, PtsimAllocEvent, out->error_event).line
                   : 0;
    if (rc != PTSIM_ALLOC_ERR_NO_BLOCKS || cap == G_MAXINT32) {
      g_set_error(error, PTSIM_ALLOC_TRACE_ERROR, PTSIM_ALLOC_TRACE_ERROR_REPLAY,
                  "%s:%d: the emulator refused this event (code %d)", trace->name, line, rc);
      return FALSE;
    }
    want *= 2;
  }
}

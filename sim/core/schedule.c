/* schedule.c — per-stage orders of GPipe, 1F1B, interleaved 1F1B and ZB-H1
 * (the V-shaped ones in schedule_vshape.c), and the uniform-cost reference
 * simulator; see schedule.h for the orders and the dependency rules. */
#include "schedule.h"

/* A (stage, chunk) word fits 16 bits (schedule.h; and is never NONE: a
 * stage 127 has at most 514 / 128 chunks). */
typedef char schedule_words_fit[((PTSIM_MAX_STAGES - 1) << PTSIM_VSTAGE_CHUNK_BITS |
                                 ((1 << PTSIM_VSTAGE_CHUNK_BITS) - 1)) <= 0xffff
                                    ? 1
                                    : -1];

/* ---- virtual stages ---- */

/* The (stage, chunk) word of chunk c of stage s. */
PTSIM_HD static uint16_t vstage_word(int32_t s, int32_t c) {
  return (uint16_t)((uint32_t)s << PTSIM_VSTAGE_CHUNK_BITS | (uint32_t)c);
}

/* Puts virtual stage vs on chunk c of stage s, after the one on chunk
 * `before_c` of stage `before_s` (before_s < 0: vs is the first); a
 * placement calls it for vs = 0, 1, ... in model order. */
PTSIM_HD static void place(PtsimVstages *t, int32_t vs, int32_t s, int32_t c, int32_t before_s,
                           int32_t before_c) {
  int32_t at = s * t->v + c;
  t->vstage[at] = (uint16_t)vs;
  t->next[at] = (uint16_t)PTSIM_VSTAGE_NONE;
  if (before_s < 0) {
    t->prev[at] = (uint16_t)PTSIM_VSTAGE_NONE;
    return;
  }
  t->prev[at] = vstage_word(before_s, before_c);
  t->next[before_s * t->v + before_c] = vstage_word(s, c);
}

PTSIM_HD int32_t ptsim_schedule_vstages(PtsimSchedule kind, int32_t p, int32_t v,
                                        PtsimVstages *out) {
  int32_t s, c, vs = 0, before_s = -1, before_c = 0;
  out->p = p;
  out->v = v;
  out->count = 0;
  out->first_stage = 0;
  out->last_stage = p - 1;
  if (p < 1 || v < 1) return PTSIM_SCHEDULE_ERR_ARGS;
  if (p > PTSIM_MAX_STAGES || (int64_t)p * (int64_t)v > PTSIM_MAX_VSTAGES ||
      v > 1 << PTSIM_VSTAGE_CHUNK_BITS)
    return PTSIM_SCHEDULE_ERR_VSTAGES;
  out->count = p * v;
  if (ptsim_schedule_is_vshape((int32_t)kind) && v == 2) {
    /* a V: down through chunk 0 of stages 0..p-1, back up through chunk 1
     * of p-1..0, so stage 0 holds the last virtual stage too */
    out->last_stage = 0;
    for (s = 0; s < p; s++) {
      place(out, vs++, s, 0, before_s, before_c);
      before_s = s;
      before_c = 0;
    }
    for (s = p - 1; s >= 0; s--) {
      place(out, vs++, s, 1, before_s, before_c);
      before_s = s;
      before_c = 1;
    }
    return 0;
  }
  for (c = 0; c < v; c++)
    for (s = 0; s < p; s++) {
      place(out, vs++, s, c, before_s, before_c);
      before_s = s;
      before_c = c;
    }
  return 0;
}

/* ---- checks ---- */

/* The interleaved schedule's group size: `group`, or Megatron's default p. */
PTSIM_HD static int32_t group_of(int32_t p, int32_t group) { return group > 0 ? group : p; }

PTSIM_HD int32_t ptsim_schedule_check(PtsimSchedule kind, int32_t p, int32_t m, int32_t v,
                                      int32_t group) {
  int32_t g = group_of(p, group);
  if (p < 1 || m < 1 || v < 1) return PTSIM_SCHEDULE_ERR_ARGS;
  if (kind != PTSIM_SCHEDULE_1F1B && kind != PTSIM_SCHEDULE_GPIPE &&
      kind != PTSIM_SCHEDULE_INTERLEAVED && kind != PTSIM_SCHEDULE_ZB_H1 &&
      !ptsim_schedule_is_vshape((int32_t)kind))
    return PTSIM_SCHEDULE_ERR_KIND;
  if (ptsim_schedule_is_vshape((int32_t)kind)) {
    if (v != 2) return PTSIM_SCHEDULE_ERR_V_SHAPE;
  } else if (kind != PTSIM_SCHEDULE_INTERLEAVED && v != 1) {
    return PTSIM_SCHEDULE_ERR_VIRTUAL;
  }
  if (p > PTSIM_MAX_STAGES || (int64_t)m * (int64_t)v > PTSIM_SCHEDULE_MAX_VIRTUAL_MB)
    return PTSIM_SCHEDULE_ERR_TOO_LARGE;
  if ((int64_t)p * (int64_t)v > PTSIM_MAX_VSTAGES || v > 1 << PTSIM_VSTAGE_CHUNK_BITS)
    return PTSIM_SCHEDULE_ERR_VSTAGES;
  /* Megatron-LM's forward_backward_pipelining_with_interleaving: g in
   * [p, m], and a last group of g or of p at least */
  if (kind == PTSIM_SCHEDULE_INTERLEAVED && (g < p || g > m || (m % g != 0 && m % g < p)))
    return PTSIM_SCHEDULE_ERR_DIVISIBLE;
  if (ptsim_schedule_is_vshape((int32_t)kind)) return ptsim_schedule_vshape_check(kind, p, m, v);
  return 0;
}

PTSIM_HD int32_t ptsim_schedule_num_items(PtsimSchedule kind, int32_t p, int32_t m, int32_t v,
                                          int32_t group) {
  int32_t rc = ptsim_schedule_check(kind, p, m, v, group);
  if (rc != 0) return rc;
  if (ptsim_schedule_is_vshape((int32_t)kind)) return 6 * m; /* F, B, W per chunk */
  return kind == PTSIM_SCHEDULE_ZB_H1 ? 3 * m : 2 * m * v;
}

PTSIM_HD static int32_t min_i32(int32_t x, int32_t y) { return x < y ? x : y; }

/* Warm-up forwards of `stage` (forwards before its first backward), or an
 * error code.  GPipe: m. */
PTSIM_HD static int32_t warmup_items(PtsimSchedule kind, int32_t p, int32_t m, int32_t v,
                                     int32_t group, int32_t stage) {
  int32_t rc = ptsim_schedule_check(kind, p, m, v, group);
  if (rc != 0) return rc;
  if (stage < 0 || stage >= p) return PTSIM_SCHEDULE_ERR_ARGS;
  switch (kind) {
  case PTSIM_SCHEDULE_GPIPE:
    return m;
  case PTSIM_SCHEDULE_ZBV:
  case PTSIM_SCHEDULE_DUALPIPEV:
    return 0; /* unused: their orders are phase lists (schedule_vshape.c) */
  case PTSIM_SCHEDULE_INTERLEAVED:
    /* Megatron-LM get_pp_rank_microbatches: two per later stage, plus
     * (v-1) groups of g so every chunk is primed. */
    return min_i32((p - stage - 1) * 2 + (v - 1) * group_of(p, group), m * v);
  case PTSIM_SCHEDULE_1F1B:
  case PTSIM_SCHEDULE_ZB_H1:
  default:
    return min_i32(p - stage - 1, m);
  }
}

/* ---- building orders ---- */

PTSIM_HD static void put(PtsimScheduleItem *out, int32_t *n, int32_t kind, int32_t mb,
                         int32_t chunk) {
  out[*n].kind = kind;
  out[*n].microbatch = mb;
  out[*n].chunk = chunk;
  *n += 1;
}

/* Interleaved: virtual microbatch k -> microbatch and forward chunk, as
 * Megatron-LM's get_schedule_table lists them (schedule.h): groups of g,
 * then the last group of r = m - G*g from virtual microbatch G*g*v. */
typedef struct {
  int32_t m, v, g, last_at, last_mb, last_size;
} Groups;

PTSIM_HD static void groups_of(int32_t p, int32_t m, int32_t v, int32_t group, Groups *out) {
  int32_t whole;
  out->m = m;
  out->v = v;
  out->g = group_of(p, group);
  whole = (m - 1) / out->g; /* G: the groups before the last */
  out->last_mb = whole * out->g;
  out->last_size = m - out->last_mb;
  out->last_at = out->last_mb * v;
}

PTSIM_HD static void virtual_item(const Groups *t, int32_t k, int32_t *mb, int32_t *chunk) {
  int32_t q;
  if (t->v == 1) { /* one chunk: the microbatches in order */
    *mb = k;
    *chunk = 0;
    return;
  }
  if (k >= t->last_at) {
    k -= t->last_at;
    q = k / t->last_size;
    *chunk = q;
    *mb = t->last_mb + (k - q * t->last_size);
    return;
  }
  q = k / t->g;
  *chunk = q % t->v;
  *mb = (q / t->v) * t->g + (k - q * t->g);
}

PTSIM_HD static int32_t build_gpipe(int32_t m, PtsimScheduleItem *out) {
  int32_t n = 0, k;
  for (k = 0; k < m; k++) put(out, &n, PTSIM_SCHEDULE_ITEM_FORWARD, k, 0);
  for (k = m - 1; k >= 0; k--) put(out, &n, PTSIM_SCHEDULE_ITEM_BACKWARD, k, 0);
  return n;
}

/* The forward (backward: 0) of virtual microbatch k. */
PTSIM_HD static void put_virtual(PtsimScheduleItem *out, int32_t *n, const Groups *t, int32_t k,
                                 int32_t forward) {
  int32_t mb, chunk;
  virtual_item(t, k, &mb, &chunk);
  if (forward)
    put(out, n, PTSIM_SCHEDULE_ITEM_FORWARD, mb, chunk);
  else
    put(out, n, PTSIM_SCHEDULE_ITEM_BACKWARD, mb, t->v - 1 - chunk);
}

/* 1F1B and interleaved share one shape over virtual microbatches: w
 * forwards, then (F(w+k), B(k)) pairs, then the remaining backwards.  For
 * 1F1B, v = 1 and the mapping is the identity. */
PTSIM_HD static int32_t build_one_f_one_b(const Groups *t, int32_t w, PtsimScheduleItem *out) {
  int32_t total = t->m * t->v, n = 0, k;
  for (k = 0; k < w; k++) put_virtual(out, &n, t, k, 1);
  for (k = 0; k < total - w; k++) {
    put_virtual(out, &n, t, k + w, 1);
    put_virtual(out, &n, t, k, 0);
  }
  for (k = total - w; k < total; k++) put_virtual(out, &n, t, k, 0);
  return n;
}

PTSIM_HD static int32_t build_zb_h1(int32_t m, int32_t stage, int32_t w, PtsimScheduleItem *out) {
  int32_t n = 0, k, weights = 0;
  for (k = 0; k < w; k++) put(out, &n, PTSIM_SCHEDULE_ITEM_FORWARD, k, 0);
  for (k = 0; k < m; k++) {
    if (k < m - w) put(out, &n, PTSIM_SCHEDULE_ITEM_FORWARD, k + w, 0);
    put(out, &n, PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT, k, 0);
    if (k >= stage) {
      put(out, &n, PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT, weights, 0);
      weights += 1;
    }
  }
  for (; weights < m; weights++) put(out, &n, PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT, weights, 0);
  return n;
}

PTSIM_HD int32_t ptsim_schedule_build(PtsimSchedule kind, int32_t p, int32_t m, int32_t v,
                                      int32_t group, int32_t stage, PtsimScheduleItem *out,
                                      int32_t capacity) {
  int32_t n = ptsim_schedule_num_items(kind, p, m, v, group);
  int32_t w;
  Groups t;
  if (n < 0) return n;
  if (stage < 0 || stage >= p || out == 0) return PTSIM_SCHEDULE_ERR_ARGS;
  if (capacity < n) return PTSIM_SCHEDULE_ERR_CAPACITY;
  w = warmup_items(kind, p, m, v, group, stage);
  groups_of(p, m, v, group, &t);
  switch (kind) {
  case PTSIM_SCHEDULE_GPIPE:
    return build_gpipe(m, out);
  case PTSIM_SCHEDULE_ZB_H1:
    return build_zb_h1(m, stage, w, out);
  case PTSIM_SCHEDULE_ZBV:
  case PTSIM_SCHEDULE_DUALPIPEV:
    return ptsim_schedule_vshape_build(kind, p, m, stage, out);
  case PTSIM_SCHEDULE_1F1B:
  case PTSIM_SCHEDULE_INTERLEAVED:
  default:
    return build_one_f_one_b(&t, w, out);
  }
}

/* ---- closed form ---- */

PTSIM_HD static int32_t max_i32(int32_t x, int32_t y) { return x > y ? x : y; }

/* ZB-H1 after the warm-up is a run of groups g = 0..m-1: F(g+w) while
 * g < m-w, then B(g), then W(g-s) once g >= s.  Where group g starts: */
PTSIM_HD static int32_t zb_group_start(const PtsimScheduleShape *sh, int32_t g) {
  int32_t steady = sh->m - sh->warmup;
  return sh->warmup + g + min_i32(g, steady) + max_i32(0, g - sh->stage);
}

PTSIM_HD int32_t ptsim_schedule_shape(PtsimSchedule kind, int32_t p, int32_t m, int32_t v,
                                      int32_t group, int32_t stage, PtsimScheduleShape *out) {
  int32_t n = ptsim_schedule_num_items(kind, p, m, v, group), r, steady;
  Groups t;
  if (n < 0) return n;
  if (stage < 0 || stage >= p || out == 0) return PTSIM_SCHEDULE_ERR_ARGS;
  out->kind = (int32_t)kind;
  out->p = p;
  out->m = m;
  out->v = v;
  out->stage = stage;
  out->items = n;
  out->warmup = warmup_items(kind, p, m, v, group, stage);
  groups_of(p, m, v, group, &t);
  out->group = t.g;
  out->last_group_at = t.last_at;
  out->last_group_mb = t.last_mb;
  out->last_group_size = t.last_size;
  out->recip_group = ptsim_schedule_recip(t.g);
  out->recip_v = ptsim_schedule_recip(v);
  out->recip_last_group = ptsim_schedule_recip(t.last_size);
  /* Group sizes change only at g = m-w (no more F) and g = s (W's begin):
   * three runs of constant size, some possibly empty. */
  steady = m - out->warmup;
  out->run_group[0] = 0;
  out->run_group[1] = min_i32(min_i32(stage, m), steady);
  out->run_group[2] = max_i32(min_i32(stage, m), steady);
  for (r = 0; r < 3; r++) {
    int32_t g = out->run_group[r];
    out->run_index[r] = zb_group_start(out, g);
    out->run_size[r] = 1 + (g < steady) + (g >= stage);
  }
  out->tail = zb_group_start(out, m);
  return 0;
}

PTSIM_HD static void set_item(PtsimScheduleItem *out, int32_t kind, int32_t mb, int32_t chunk) {
  out->kind = kind;
  out->microbatch = mb;
  out->chunk = chunk;
}

PTSIM_HD static void zb_item_at(const PtsimScheduleShape *sh, int32_t i, PtsimScheduleItem *out) {
  int32_t r, g, off, size;
  if (i < sh->warmup) {
    set_item(out, PTSIM_SCHEDULE_ITEM_FORWARD, i, 0);
    return;
  }
  if (i >= sh->tail) { /* the remaining W's, in order */
    set_item(out, PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT, i - 2 * sh->m, 0);
    return;
  }
  r = i >= sh->run_index[2] ? 2 : i >= sh->run_index[1] ? 1 : 0;
  size = sh->run_size[r];
  off = i - sh->run_index[r];
  /* constant divisors: multiplications, not divisions */
  g = size == 3 ? off / 3 : size == 2 ? off / 2 : off;
  off -= g * size;
  g += sh->run_group[r];
  if (g < sh->m - sh->warmup) {
    if (off == 0) {
      set_item(out, PTSIM_SCHEDULE_ITEM_FORWARD, g + sh->warmup, 0);
      return;
    }
    off -= 1;
  }
  if (off == 0)
    set_item(out, PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT, g, 0);
  else
    set_item(out, PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT, g - sh->stage, 0);
}

PTSIM_HD void ptsim_schedule_item_at(const PtsimScheduleShape *sh, int32_t i,
                                     PtsimScheduleItem *out) {
  int32_t g = sh->group, m = sh->m, v = sh->v, w = sh->warmup, total = m * v, k, q, chunk, mb;
  int32_t forward;
  if (ptsim_schedule_is_vshape(sh->kind)) {
    ptsim_schedule_vshape_item_at(sh, i, out);
    return;
  }
  if (sh->kind == PTSIM_SCHEDULE_GPIPE) {
    if (i < m)
      set_item(out, PTSIM_SCHEDULE_ITEM_FORWARD, i, 0);
    else
      set_item(out, PTSIM_SCHEDULE_ITEM_BACKWARD, 2 * m - 1 - i, 0);
    return;
  }
  if (sh->kind == PTSIM_SCHEDULE_ZB_H1) {
    zb_item_at(sh, i, out);
    return;
  }
  /* 1F1B and interleaved, over virtual microbatches (build_one_f_one_b) */
  forward = i < w || (i < 2 * total - w && ((i - w) & 1) == 0);
  if (forward)
    k = i < w ? i : (i - w) / 2 + w;
  else
    k = i < 2 * total - w ? (i - w) / 2 : i - total;
  if (v == 1) {
    set_item(out, forward ? PTSIM_SCHEDULE_ITEM_FORWARD : PTSIM_SCHEDULE_ITEM_BACKWARD, k, 0);
    return;
  }
  /* virtual_item with the shape's groups, two divisions as multiplies */
  if (k >= sh->last_group_at) {
    k -= sh->last_group_at;
    chunk = ptsim_schedule_div(k, sh->recip_last_group);
    mb = sh->last_group_mb + (k - chunk * sh->last_group_size);
  } else {
    int32_t qv;
    q = ptsim_schedule_div(k, sh->recip_group);
    qv = ptsim_schedule_div(q, sh->recip_v);
    chunk = q - qv * v;
    mb = qv * g + (k - q * g);
  }
  set_item(out, forward ? PTSIM_SCHEDULE_ITEM_FORWARD : PTSIM_SCHEDULE_ITEM_BACKWARD, mb,
           forward ? chunk : v - 1 - chunk);
}

PTSIM_HD int32_t ptsim_schedule_index_of(const PtsimScheduleShape *sh, int32_t item_kind,
                                         int32_t mb, int32_t chunk) {
  int32_t g = sh->group, m = sh->m, v = sh->v, w = sh->warmup, total = m * v, k, c;
  int32_t forward = item_kind == PTSIM_SCHEDULE_ITEM_FORWARD;
  int32_t weight = item_kind == PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT;
  if (mb < 0 || mb >= m || chunk < 0 || chunk >= v) return -1;
  if (ptsim_schedule_is_vshape(sh->kind))
    return ptsim_schedule_vshape_index_of(sh, item_kind, mb, chunk);
  if (sh->kind == PTSIM_SCHEDULE_ZB_H1) {
    int32_t steady = m - w;
    if (forward) return mb < w ? mb : zb_group_start(sh, mb - w);
    if (!weight) return zb_group_start(sh, mb) + (mb < steady);
    if (mb + sh->stage < m)
      return zb_group_start(sh, mb + sh->stage) + (mb + sh->stage < steady) + 1;
    return 2 * m + mb;
  }
  if (weight) return -1;
  if (sh->kind == PTSIM_SCHEDULE_GPIPE) return forward ? mb : 2 * m - 1 - mb;
  c = forward ? chunk : v - 1 - chunk; /* the forward chunk of the virtual microbatch */
  if (v == 1)
    k = mb;
  else if (mb >= sh->last_group_mb)
    k = sh->last_group_at + c * sh->last_group_size + (mb - sh->last_group_mb);
  else {
    int32_t qg = ptsim_schedule_div(mb, sh->recip_group);
    k = qg * g * v + c * g + (mb - qg * g);
  }
  if (forward) return k < w ? k : w + 2 * (k - w);
  return k < total - w ? w + 2 * k + 1 : total + k;
}

PTSIM_HD int32_t ptsim_schedule_last_index(const PtsimScheduleShape *sh, int32_t item_kind) {
  int32_t m = sh->m, w = sh->warmup, k = m * sh->v - 1;
  int32_t forward = item_kind == PTSIM_SCHEDULE_ITEM_FORWARD;
  if (ptsim_schedule_is_vshape(sh->kind)) return ptsim_schedule_vshape_last_index(sh, item_kind);
  if (sh->kind == PTSIM_SCHEDULE_GPIPE) return forward ? m - 1 : 2 * m - 1;
  if (sh->kind == PTSIM_SCHEDULE_ZB_H1)
    return ptsim_schedule_index_of(sh,
                                   forward ? PTSIM_SCHEDULE_ITEM_FORWARD
                                           : PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT,
                                   m - 1, 0);
  /* 1F1B and interleaved: virtual microbatches in order, a B last */
  if (!forward) return sh->items - 1;
  return k < w ? k : w + 2 * (k - w);
}

PTSIM_HD void ptsim_schedule_steady(const PtsimScheduleShape *sh, int32_t phase,
                                    PtsimScheduleSteady *out) {
  int32_t m = sh->m, v = sh->v, w = sh->warmup;
  out->lo = out->hi = 0;
  out->period = 1;
  out->shift = 0;
  if (sh->kind == PTSIM_SCHEDULE_GPIPE) {
    if (phase < 0 || phase > 1) return;
    out->lo = phase == 0 ? 0 : m;
    out->hi = phase == 0 ? m : 2 * m;
    out->shift = phase == 0 ? 1 : -1;
    return;
  }
  if (phase != 0 || ptsim_schedule_is_vshape(sh->kind)) return; /* no shortcut (schedule.h) */
  if (sh->kind == PTSIM_SCHEDULE_ZB_H1) {
    if (sh->stage >= m - w) return;
    out->lo = zb_group_start(sh, sh->stage);
    out->hi = zb_group_start(sh, m - w);
    out->period = 3;
    out->shift = 1;
    return;
  }
  out->lo = w;
  out->hi = 2 * m * v - w;
  out->period = v == 1 ? 2 : 2 * sh->group * v;
  out->shift = v == 1 ? 1 : sh->group;
  /* Virtual microbatch k + g*v is k moved by g while k + g*v lies in the
   * whole groups (all of them when the last group has g too): the pair of
   * F(w+j) and B(j) repeats while w + j + g*v < E, i.e. up to item 2E - w. */
  if (v > 1 && sh->last_group_size != sh->group) {
    int32_t end = 2 * sh->last_group_at - w;
    out->hi = end > out->lo ? end : out->lo;
  }
}

PTSIM_HD void ptsim_schedule_count_inflight(const PtsimScheduleItem *items, int32_t n,
                                            int32_t *peak_until_backward,
                                            int32_t *peak_until_weight) {
  int32_t held_b = 0, held_w = 0, peak_b = 0, peak_w = 0, i;
  for (i = 0; i < n; i++) {
    switch (items[i].kind) {
    case PTSIM_SCHEDULE_ITEM_FORWARD:
      held_b += 1;
      held_w += 1;
      break;
    case PTSIM_SCHEDULE_ITEM_BACKWARD:
      held_b -= 1;
      held_w -= 1;
      break;
    case PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT:
      held_b -= 1;
      break;
    case PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT:
      held_w -= 1;
      break;
    default:
      break;
    }
    if (held_b > peak_b) peak_b = held_b;
    if (held_w > peak_w) peak_w = held_w;
  }
  if (peak_until_backward != 0) *peak_until_backward = peak_b;
  if (peak_until_weight != 0) *peak_until_weight = peak_w;
}

/* ---- the uniform simulator ---- */

/* finish[] layout: [what][stage][chunk][microbatch], what 0 = F, 1 = B
 * (BACKWARD or BACKWARD_INPUT), 2 = W; -1 = not finished yet. */
PTSIM_HD static int64_t finish_index(int32_t what, int32_t p, int32_t m, int32_t v, int32_t stage,
                                     int32_t chunk, int32_t mb) {
  return (((int64_t)what * p + stage) * v + chunk) * m + mb;
}

/* When the dependency of `it` on `stage` finished: 0 when it has none, -1
 * when it has not finished yet. */
PTSIM_HD static PtsimTime dependency_done(const PtsimTime *finish, const PtsimVstages *t, int32_t m,
                                          int32_t stage, const PtsimScheduleItem *it) {
  int32_t p = t->p, v = t->v, mb = it->microbatch, from_stage = stage;
  PtsimScheduleItem from;
  if (it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT)
    return finish[finish_index(1, p, m, v, stage, it->chunk, mb)];
  if (ptsim_schedule_input(t, stage, it, &from_stage, &from) == PTSIM_SCHEDULE_INPUT_NONE) return 0;
  return finish[finish_index(from.kind == PTSIM_SCHEDULE_ITEM_FORWARD ? 0 : 1, p, m, v, from_stage,
                             from.chunk, mb)];
}

PTSIM_HD int32_t ptsim_schedule_simulate_orders(const PtsimVstages *t, int32_t m,
                                                const PtsimScheduleItem *orders,
                                                int32_t order_stride, const int32_t *counts,
                                                PtsimTime t_f, PtsimTime t_b, PtsimTime t_w,
                                                PtsimTime *finish, int64_t finish_len,
                                                PtsimScheduleSimResult *out) {
  int32_t p = t != 0 ? t->p : 0, v = t != 0 ? t->v : 0;
  int32_t pos[PTSIM_MAX_STAGES];
  int32_t held_b[PTSIM_MAX_STAGES], held_w[PTSIM_MAX_STAGES];
  int32_t worklist[PTSIM_MAX_STAGES];
  unsigned char listed[PTSIM_MAX_STAGES];
  PtsimTime stage_free[PTSIM_MAX_STAGES], busy[PTSIM_MAX_STAGES];
  int32_t top = 0, s, i;
  int64_t need, e;
  PtsimTime step = 0;
  int32_t rc = 0;

  if (p < 1 || m < 1 || v < 1 || orders == 0 || counts == 0 || finish == 0 || out == 0 || t_f < 0 ||
      t_b < 0 || t_w < 0 || (t->count != 0 && t->count != p * v))
    return PTSIM_SCHEDULE_ERR_ARGS;
  if (p > PTSIM_MAX_STAGES || (int64_t)m * v > PTSIM_SCHEDULE_MAX_VIRTUAL_MB)
    return PTSIM_SCHEDULE_ERR_TOO_LARGE;
  if (t->count == 0) return PTSIM_SCHEDULE_ERR_VSTAGES; /* not filled: too many */
  need = 3 * (int64_t)p * m * v;
  if (finish_len < need) return PTSIM_SCHEDULE_ERR_CAPACITY;
  for (s = 0; s < p; s++) {
    if (counts[s] < 0 || counts[s] > order_stride) return PTSIM_SCHEDULE_ERR_ARGS;
    for (i = 0; i < counts[s]; i++) {
      const PtsimScheduleItem *it = &orders[(int64_t)s * order_stride + i];
      if (it->kind < PTSIM_SCHEDULE_ITEM_FORWARD ||
          it->kind > PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT || it->microbatch < 0 ||
          it->microbatch >= m || it->chunk < 0 || it->chunk >= v)
        return PTSIM_SCHEDULE_ERR_ARGS;
    }
  }
  for (e = 0; e < need; e++) finish[e] = -1;
  for (s = 0; s < p; s++) {
    pos[s] = 0;
    held_b[s] = 0;
    held_w[s] = 0;
    stage_free[s] = 0;
    busy[s] = 0;
    out->peak_inflight[s] = 0;
    out->peak_inflight_weight[s] = 0;
    worklist[top++] = p - 1 - s; /* stage 0 on top */
    listed[p - 1 - s] = 1;
  }

  /* Each stage runs as far as its dependencies allow; a stage that made
   * progress wakes its two ring neighbours, which hold the virtual stages
   * next to its own (looped: F goes to s+1, or p-1 -> 0 for the next chunk;
   * B goes to s-1, or 0 -> p-1; a V-shaped placement feeds those or the
   * stage itself, which runs on).  Every wake-up either runs an item or
   * costs O(1), so the whole run is O(items). */
  while (top > 0) {
    int32_t progressed = 0;
    s = worklist[--top];
    listed[s] = 0;
    while (pos[s] < counts[s]) {
      const PtsimScheduleItem *it = &orders[(int64_t)s * order_stride + pos[s]];
      PtsimTime ready = dependency_done(finish, t, m, s, it);
      PtsimTime start, cost;
      int32_t what;
      if (ready < 0) break;
      start = ready > stage_free[s] ? ready : stage_free[s];
      switch (it->kind) {
      case PTSIM_SCHEDULE_ITEM_FORWARD:
        cost = t_f;
        what = 0;
        held_b[s] += 1;
        held_w[s] += 1;
        break;
      case PTSIM_SCHEDULE_ITEM_BACKWARD:
        cost = t_b + t_w;
        what = 1;
        held_b[s] -= 1;
        held_w[s] -= 1;
        break;
      case PTSIM_SCHEDULE_ITEM_BACKWARD_INPUT:
        cost = t_b;
        what = 1;
        held_b[s] -= 1;
        break;
      case PTSIM_SCHEDULE_ITEM_BACKWARD_WEIGHT:
      default:
        cost = t_w;
        what = 2;
        held_w[s] -= 1;
        break;
      }
      stage_free[s] = start + cost;
      busy[s] += cost;
      finish[finish_index(what, p, m, v, s, it->chunk, it->microbatch)] = stage_free[s];
      if (it->kind == PTSIM_SCHEDULE_ITEM_BACKWARD)
        finish[finish_index(2, p, m, v, s, it->chunk, it->microbatch)] = stage_free[s];
      if (held_b[s] > out->peak_inflight[s]) out->peak_inflight[s] = held_b[s];
      if (held_w[s] > out->peak_inflight_weight[s]) out->peak_inflight_weight[s] = held_w[s];
      pos[s] += 1;
      progressed = 1;
    }
    if (progressed && p > 1) {
      int32_t next = (s + 1) % p, prev = (s + p - 1) % p;
      if (!listed[next]) {
        worklist[top++] = next;
        listed[next] = 1;
      }
      if (!listed[prev]) {
        worklist[top++] = prev;
        listed[prev] = 1;
      }
    }
  }

  out->num_stages = p;
  out->busy_time = 0;
  for (s = 0; s < p; s++) {
    if (pos[s] < counts[s]) rc = PTSIM_SCHEDULE_ERR_DEADLOCK;
    out->stage_end[s] = stage_free[s];
    if (stage_free[s] > step) step = stage_free[s];
    if (busy[s] > out->busy_time) out->busy_time = busy[s];
  }
  out->step_time = step;
  out->bubble_fraction = step > 0 ? 1.0 - (double)out->busy_time / (double)step : 0.0;
  return rc;
}

PTSIM_HD int32_t ptsim_schedule_simulate_uniform(PtsimSchedule kind, int32_t p, int32_t m,
                                                 int32_t v, int32_t group, PtsimTime t_f,
                                                 PtsimTime t_b, PtsimTime t_w,
                                                 const PtsimScheduleScratch *scratch,
                                                 PtsimScheduleSimResult *out) {
  int32_t counts[PTSIM_MAX_STAGES];
  int32_t n = ptsim_schedule_num_items(kind, p, m, v, group);
  int32_t s;
  PtsimVstages placement;
  if (n < 0) return n;
  if (scratch == 0 || scratch->orders == 0 || out == 0) return PTSIM_SCHEDULE_ERR_ARGS;
  ptsim_schedule_vstages(kind, p, v, &placement); /* fits: checked with n */
  if (scratch->order_stride < n) return PTSIM_SCHEDULE_ERR_CAPACITY;
  for (s = 0; s < p; s++) {
    counts[s] = ptsim_schedule_build(kind, p, m, v, group, s,
                                     scratch->orders + (int64_t)s * scratch->order_stride,
                                     scratch->order_stride);
    if (counts[s] < 0) return counts[s];
  }
  return ptsim_schedule_simulate_orders(&placement, m, scratch->orders, scratch->order_stride,
                                        counts, t_f, t_b, t_w, scratch->finish, scratch->finish_len,
                                        out);
}

PTSIM_HD const char *ptsim_schedule_strerror(int32_t code) {
  switch (code) {
  case 0:
    return "ok";
  case PTSIM_SCHEDULE_ERR_ARGS:
    return "bad argument (p, m, v >= 1; stage in 0..p-1; buffers)";
  case PTSIM_SCHEDULE_ERR_KIND:
    return "unknown pipeline schedule";
  case PTSIM_SCHEDULE_ERR_VIRTUAL:
    return "virtual stages (vp > 1) need the interleaved schedule";
  case PTSIM_SCHEDULE_ERR_DIVISIBLE:
    return "interleaved schedule needs a microbatch group size (pp by default) from pp to the "
           "microbatches whose last group has pp microbatches at least";
  case PTSIM_SCHEDULE_ERR_TOO_LARGE:
    return "pipeline too large (pp <= 128, microbatches * vp <= 65536)";
  case PTSIM_SCHEDULE_ERR_CAPACITY:
    return "buffer too small";
  case PTSIM_SCHEDULE_ERR_DEADLOCK:
    return "schedule deadlocks";
  case PTSIM_SCHEDULE_ERR_VSTAGES:
    return "too many virtual stages (pp * vp <= 514)";
  case PTSIM_SCHEDULE_ERR_V_SHAPE:
    return "the V-shaped schedules run two chunks per stage (vp 2) and need microbatches >= "
           "2 pp - 1 (zbv) or >= 2 pp (dualpipev)";
  default:
    return "unknown error";
  }
}

/* remedies.c — what would make a layout run; see remedies.h.  Each move is
 * one change a user types (a flag and its value); a layout reached by
 * moves is validated as the command validates it, then predicted as
 * `ptsim predict` predicts it. */
#include "remedies.h"

#include <string.h>
#include "job_validate.h"
#include "lifetimes.h"
#include "memory.h"
#include "names.h"
#include "plan.h"
#include "simulate.h"
#include "sweep.h"
#include "sweep_rows.h"
#include "topology.h"
#include "units.h"

#define MAX_DEPTH 3         /* changes on the job's GPUs */
#define MORE_GPUS_DEPTH 2   /* changes besides --gpus when more GPUs are needed */
#define MORE_GPUS_FACTOR 64 /* the most GPUs tried: 64 x the job's */
#define ENOUGH 3            /* fewer answers than this: one change more is searched */

/* A layout reached by moves, and the flags that reach it. */
typedef struct {
  PtsimJob job;
  PtsimAllocOptions alloc;
  int n;
  PtsimRemedyChange changes[PTSIM_REMEDY_CHANGES_MAX];
} State;

typedef enum {
  MOVE_PP,
  MOVE_TP,
  MOVE_CP,
  MOVE_SELECTIVE,
  MOVE_FULL,
  MOVE_INFLIGHT,
  MOVE_SHARDING,
  MOVE_FP8_GATHER,
  MOVE_EXPANDABLE,
  MOVE_MBS,
  MOVES
} Move;

typedef struct {
  const char *alloc_conf;
  PtsimPlan *plan;
  PtsimMemoryEstimate *memory;
  PtsimAllocResult *alloc;
  PtsimTimeResult *step;
  GHashTable *seen; /* layout keys */
  PtsimRemedies *out;
  GArray *found; /* PtsimRemedy */
} Search;

/* Sets FLAG to VALUE among the state's changes (a flag changed twice, as
 * --pp 2 then --pp 4, is one change of the command line). */
static gboolean set_change(State *s, const char *flag, const char *value, int drop) {
  int i;
  for (i = 0; i < s->n && strcmp(s->changes[i].flag, flag) != 0; i++) {
  }
  if (i == s->n) {
    if (s->n == PTSIM_REMEDY_CHANGES_MAX) return FALSE;
    s->n++;
  }
  g_strlcpy(s->changes[i].flag, flag, sizeof s->changes[i].flag);
  g_strlcpy(s->changes[i].value, value, sizeof s->changes[i].value);
  s->changes[i].drop = drop;
  return TRUE;
}

static gboolean set_int(State *s, const char *flag, int64_t value) {
  char text[32];
  g_snprintf(text, sizeof text, "%" G_GINT64_FORMAT, value);
  return set_change(s, flag, text, 0);
}

/* The data-parallel size halves for a doubled model-parallel size on the
 * same GPUs; dp (and the experts' edp) are derived again. */
static gboolean take_from_dp(PtsimLayout *l) {
  if (l->dp % 2 != 0) return FALSE;
  l->dp = 0;
  l->edp = 0;
  return TRUE;
}

/* pp doubled, with Megatron's uneven first/last stages when it does not
 * divide the layers (the sweep's split); interleaving kept when the split
 * allows it. */
static gboolean move_pp(State *s) {
  PtsimLayout *l = &s->job.layout;
  int64_t layers = s->job.model.num_layers, pp = l->pp * 2, vp = l->vp, first, last;
  if (l->vstage_runs > 0 || l->mtp_apart || pp > layers || pp > PTSIM_MAX_STAGES ||
      !take_from_dp(l))
    return FALSE; /* a layout's own split (runs, the MTP stage apart): not re-split here */
  if (!ptsim_sweep_split(layers, pp, vp, &first, &last)) {
    if (vp == 1 || !ptsim_sweep_split(layers, pp, 1, &first, &last)) return FALSE;
    vp = 1;
    l->schedule = PTSIM_SCHEDULE_1F1B;
    set_int(s, "--vp", 1);
  }
  gboolean was_uneven = l->first_stage_layers > 0 || l->last_stage_layers > 0;
  l->pp = pp;
  l->vp = vp;
  l->first_stage_layers = first;
  l->last_stage_layers = last;
  set_int(s, "--pp", pp);
  if (first > 0 || last > 0)
    return set_int(s, "--decoder-first-pipeline-num-layers", first) &&
           set_int(s, "--decoder-last-pipeline-num-layers", last);
  if (was_uneven)
    return set_change(s, "--decoder-first-pipeline-num-layers", "", 1) &&
           set_change(s, "--decoder-last-pipeline-num-layers", "", 1);
  return TRUE;
}

static gboolean move_tp(State *s) {
  PtsimLayout *l = &s->job.layout;
  if (l->tp * 2 > ptsim_topology_domain_size(&s->job.hw) || !take_from_dp(l)) return FALSE;
  /* sequence parallelism on, said on the command line (a Megatron-LM
   * input's default is off, ptsim's on: the flag makes them agree) */
  if (l->tp == 1 && !set_change(s, "--sp", "", 0)) return FALSE;
  if (l->tp == 1) l->sp = 1;
  if (l->etp == l->tp) l->etp = 0;
  l->tp *= 2;
  return set_int(s, "--tp", l->tp);
}

static gboolean move_cp(State *s) {
  PtsimLayout *l = &s->job.layout;
  if (l->seq % (4 * l->cp) != 0 || !take_from_dp(l)) return FALSE;
  l->cp *= 2;
  return set_int(s, "--cp", l->cp);
}

static gboolean move_recompute(State *s, PtsimRecompute to) {
  PtsimSettings *run = &s->job.settings;
  if (to == PTSIM_RECOMPUTE_SELECTIVE ? run->recompute != PTSIM_RECOMPUTE_NONE
                                      : run->recompute == PTSIM_RECOMPUTE_FULL)
    return FALSE;
  run->recompute = to;
  return set_change(s, "--recompute", to == PTSIM_RECOMPUTE_FULL ? "full" : "selective", 0);
}

/* Fewer microbatches in flight: 1F1B instead of GPipe (pp held, not all),
 * or the interleaved schedule's groups back to pp microbatches. */
static gboolean move_inflight(State *s) {
  PtsimLayout *l = &s->job.layout;
  if (l->schedule == PTSIM_SCHEDULE_GPIPE) {
    l->schedule = PTSIM_SCHEDULE_1F1B;
    return set_change(s, "--schedule", "1f1b", 0);
  }
  if (l->schedule == PTSIM_SCHEDULE_INTERLEAVED && l->microbatch_group > l->pp) {
    l->microbatch_group = 0;
    return set_int(s, "--microbatch-group-size", l->pp);
  }
  return FALSE;
}

/* One step deeper: ddp -> zero1 (the distributed optimizer) -> zero2 ->
 * fsdp; only where there is more than one rank to shard over. */
static gboolean move_sharding(State *s) {
  static const char *const order[] = {"ddp", "zero1", "zero2", "fsdp"};
  PtsimLayout *l = &s->job.layout;
  const char *now = ptsim_layout_sharding_word(l);
  g_autoptr(GError) error = NULL;
  if (l->dp * l->cp < 2) return FALSE;
  for (int i = 0; i < 3; i++)
    if (strcmp(now, order[i]) == 0) {
      if (!ptsim_layout_set_sharding(l, ptsim_topology_domain_size(&s->job.hw), i + 1, -1, &error))
        return FALSE;
      return set_change(s, "--sharding", order[i + 1], 0);
    }
  return FALSE;
}

static gboolean move_fp8_gather(State *s) {
  PtsimSettings *run = &s->job.settings;
  if (run->precision != PTSIM_PRECISION_FP8 || run->fp8_param_gather ||
      !s->job.layout.distributed_optimizer)
    return FALSE;
  run->fp8_param_gather = 1;
  return set_change(s, "--fp8-param-gather", "", 0);
}

static gboolean move_expandable(State *s, const char *alloc_conf) {
  if (s->alloc.expandable_segments) return FALSE;
  s->alloc.expandable_segments = 1;
  g_autofree char *conf = alloc_conf && alloc_conf[0]
                              ? g_strdup_printf("%s,expandable_segments:True", alloc_conf)
                              : g_strdup("expandable_segments:True");
  return set_change(s, "--alloc-conf", conf, 0);
}

static gboolean move_mbs(State *s) {
  PtsimLayout *l = &s->job.layout;
  if (l->mbs < 2 || l->mbs % 2 != 0) return FALSE;
  l->mbs /= 2;
  return set_int(s, "--mbs", l->mbs);
}

static gboolean apply(State *s, Move m, const char *alloc_conf) {
  switch (m) {
  case MOVE_PP:
    return move_pp(s);
  case MOVE_TP:
    return move_tp(s);
  case MOVE_CP:
    return move_cp(s);
  case MOVE_SELECTIVE:
    return move_recompute(s, PTSIM_RECOMPUTE_SELECTIVE);
  case MOVE_FULL:
    return move_recompute(s, PTSIM_RECOMPUTE_FULL);
  case MOVE_INFLIGHT:
    return move_inflight(s);
  case MOVE_SHARDING:
    return move_sharding(s);
  case MOVE_FP8_GATHER:
    return move_fp8_gather(s);
  case MOVE_EXPANDABLE:
    return move_expandable(s, alloc_conf);
  case MOVE_MBS:
    return move_mbs(s);
  default:
    return FALSE;
  }
}

/* What tells two layouts apart, as text (the moves touch nothing else). */
static char *key_of(const State *s) {
  const PtsimLayout *l = &s->job.layout;
  const PtsimSettings *run = &s->job.settings;
  return g_strdup_printf("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                         " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                         " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT
                         " %" G_GINT64_FORMAT " %d %d %s %d %d %d",
                         l->gpus, l->tp, l->pp, l->cp, l->dp, l->vp, l->mbs, l->first_stage_layers,
                         l->last_stage_layers, l->microbatch_group, (int)l->schedule,
                         (int)run->recompute, ptsim_layout_sharding_word(l), run->fp8_param_gather,
                         s->alloc.expandable_segments, l->sp);
}

/* Predicts S as `ptsim predict` does; TRUE when it runs (R filled). */
static gboolean runs(Search *se, const State *s, PtsimRemedy *r) {
  const PtsimJob *job = &s->job;
  g_autoptr(GError) error = NULL;
  ptsim_plan_build(job, se->plan);
  ptsim_memory_estimate(se->plan, PTSIM_CE_LAST_STAGE, se->memory);
  if (ptsim_memory_held_floor_bytes(se->memory) + ptsim_lifetimes_outside_bytes(job) >
      job->hw.memory_bytes)
    return FALSE;
  se->out->emulated++;
  if (!ptsim_simulate_allocator_with(se->plan, PTSIM_LIFETIMES_STEPS, &s->alloc, FALSE, NULL, 0.0,
                                     NULL, se->alloc, &error) ||
      !se->alloc->runs || !ptsim_simulate_with(se->plan, NULL, FALSE, se->step, &error))
    return FALSE;
  memset(r, 0, sizeof *r);
  r->n_changes = s->n;
  memcpy(r->changes, s->changes, sizeof r->changes);
  r->gpus = job->layout.gpus;
  r->step_s = se->step->step_s;
  r->tokens_per_s = se->step->tokens_per_s;
  r->peak_stage = se->alloc->peak_stage;
  r->device_peak_bytes = se->alloc->stages[se->alloc->peak_stage].device_peak_bytes;
  r->capacity_bytes = job->hw.memory_bytes;
  return TRUE;
}

/* The layouts one move from FRONTIER: those that run into se->found, the
 * others into NEXT. */
static void expand(Search *se, const GArray *frontier, GArray *next) {
  for (guint i = 0; i < frontier->len; i++)
    for (int m = 0; m < MOVES; m++) {
      State t = g_array_index(frontier, State, i);
      g_autoptr(GError) error = NULL;
      if (!apply(&t, (Move)m, se->alloc_conf) || !ptsim_job_validate(&t.job, &error)) continue;
      char *key = key_of(&t);
      if (!g_hash_table_add(se->seen, key)) continue;
      se->out->tried++;
      PtsimRemedy r;
      if (runs(se, &t, &r))
        g_array_append_val(se->found, r);
      else
        g_array_append_val(next, t);
    }
}

/* Breadth-first from SEED, at most DEPTH more moves; the depth of the
 * answer (0: none). */
static int search_from(Search *se, const State *seed, int depth) {
  g_autoptr(GArray) frontier = g_array_new(FALSE, FALSE, sizeof(State));
  g_array_append_val(frontier, *seed);
  int found_at = 0;
  for (int d = 1; d <= depth && frontier->len > 0; d++) {
    g_autoptr(GArray) next = g_array_new(FALSE, FALSE, sizeof(State));
    expand(se, frontier, next);
    if (found_at == 0 && se->found->len > 0) found_at = d;
    if (found_at > 0 && (se->found->len >= ENOUGH || d > found_at)) break;
    g_array_remove_range(frontier, 0, frontier->len);
    g_array_append_vals(frontier, next->data, next->len);
  }
  return found_at;
}

static gint by_step(gconstpointer a, gconstpointer b) {
  const PtsimRemedy *x = a, *y = b;
  return x->step_s < y->step_s ? -1 : x->step_s > y->step_s ? 1 : 0;
}

/* A remedy whose changes include all of another's with fewer (the same
 * flag, the same value) adds nothing: it goes. */
static gboolean includes(const PtsimRemedy *big, const PtsimRemedy *small) {
  for (int i = 0; i < small->n_changes; i++) {
    gboolean in = FALSE;
    for (int k = 0; k < big->n_changes && !in; k++)
      in = strcmp(big->changes[k].flag, small->changes[i].flag) == 0 &&
           strcmp(big->changes[k].value, small->changes[i].value) == 0;
    if (!in) return FALSE;
  }
  return TRUE;
}

static void drop_dominated(GArray *found) {
  for (guint i = found->len; i > 0; i--) {
    const PtsimRemedy *r = &g_array_index(found, PtsimRemedy, i - 1);
    for (guint k = 0; k < found->len; k++) {
      const PtsimRemedy *q = &g_array_index(found, PtsimRemedy, k);
      if (k != i - 1 && q->n_changes < r->n_changes && includes(r, q)) {
        g_array_remove_index(found, i - 1);
        break;
      }
    }
  }
}

void ptsim_remedies_find(const PtsimJob *job, const PtsimAllocOptions *alloc,
                         const char *alloc_conf, PtsimRemedies *out) {
  memset(out, 0, sizeof *out);
  out->found = g_array_new(FALSE, FALSE, sizeof(PtsimRemedy));
  out->searched = TRUE;
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autofree PtsimMemoryEstimate *memory = g_new0(PtsimMemoryEstimate, 1);
  g_autofree PtsimAllocResult *alloc_result = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimTimeResult *step = g_new0(PtsimTimeResult, 1);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GArray) found = g_array_new(FALSE, FALSE, sizeof(PtsimRemedy));
  Search se = {alloc_conf, plan, memory, alloc_result, step, seen, out, found};
  g_autofree State *seed = g_new0(State, 1);
  seed->job = *job;
  seed->alloc = *alloc;
  g_hash_table_add(seen, key_of(seed));
  out->gpus = job->layout.gpus;
  out->depth = search_from(&se, seed, MAX_DEPTH);
  /* Nothing on these GPUs: the fewest more, the extra ones as data
   * parallelism (pipeline parallelism is one of the moves). */
  for (int64_t k = 2; out->depth == 0 && k <= MORE_GPUS_FACTOR; k *= 2) {
    g_autofree State *more = g_new0(State, 1);
    g_autoptr(GError) error = NULL;
    *more = *seed;
    more->job.layout.gpus = job->layout.gpus * k;
    more->job.layout.dp = 0;
    more->job.layout.edp = 0;
    set_int(more, "--gpus", more->job.layout.gpus);
    if (!ptsim_job_validate(&more->job, &error)) continue;
    int d = search_from(&se, more, MORE_GPUS_DEPTH);
    if (d > 0) {
      out->depth = d + 1;
      out->gpus = more->job.layout.gpus;
    }
  }
  drop_dominated(found);
  g_array_sort(found, by_step);
  g_array_append_vals(out->found, found->data, MIN(found->len, PTSIM_REMEDIES_SHOWN));
}

void ptsim_remedies_clear(PtsimRemedies *r) {
  if (r->found) g_array_unref(r->found);
  memset(r, 0, sizeof *r);
}

/* The flags a remedy's command line leaves out of the user's words. */
static gboolean dropped(const PtsimRemedy *r, const char *flag, gsize len) {
  gboolean layout = FALSE, sharding = FALSE;
  for (int i = 0; i < r->n_changes; i++) {
    const char *f = r->changes[i].flag;
    if (strlen(f) == len && strncmp(f, flag, len) == 0) return TRUE;
    sharding |= strcmp(f, "--sharding") == 0;
    layout |= strcmp(f, "--tp") == 0 || strcmp(f, "--pp") == 0 || strcmp(f, "--cp") == 0 ||
              strcmp(f, "--gpus") == 0;
  }
  /* --sharding says what the optimizer switches said */
  if (sharding && ((len == 23 && strncmp(flag, "--distributed-optimizer", 23) == 0) ||
                   (len == 26 && strncmp(flag, "--no-distributed-optimizer", 26) == 0)))
    return TRUE;
  /* derived again from the new sizes */
  return layout && ((len == 4 && strncmp(flag, "--dp", 4) == 0) ||
                    (len == 7 && strncmp(flag, "--nodes", 7) == 0));
}

void ptsim_remedy_append_word(GString *out, const char *word) {
  gboolean plain = word[0] != '\0';
  for (const char *c = word; *c; c++)
    plain &= g_ascii_isalnum(*c) || strchr("-_./=:,+@%", *c) != NULL;
  g_string_append_c(out, ' ');
  if (plain) {
    g_string_append(out, word);
  } else {
    g_autofree char *quoted = g_shell_quote(word);
    g_string_append(out, quoted);
  }
}

char *ptsim_remedy_command(const PtsimRemedy *r, const char *command, const char *const *words) {
  GString *out = g_string_new(command);
  for (gsize i = 0; words && words[i]; i++) {
    const char *w = words[i];
    if (g_str_has_prefix(w, "--")) {
      const char *eq = strchr(w, '=');
      gsize len = eq ? (gsize)(eq - w) : strlen(w);
      if (dropped(r, w, len)) {
        /* its value, when given as the next word */
        if (!eq && words[i + 1] && !g_str_has_prefix(words[i + 1], "--")) i++;
        continue;
      }
    }
    ptsim_remedy_append_word(out, w);
  }
  for (int i = 0; i < r->n_changes; i++) {
    if (r->changes[i].drop) continue;
    ptsim_remedy_append_word(out, r->changes[i].flag);
    if (r->changes[i].value[0]) ptsim_remedy_append_word(out, r->changes[i].value);
  }
  return g_string_free(out, FALSE);
}

static void add_int(GPtrArray *w, const char *flag, int64_t v) {
  g_ptr_array_add(w, g_strdup(flag));
  g_ptr_array_add(w, g_strdup_printf("%" G_GINT64_FORMAT, v));
}

char **ptsim_remedy_layout_words(const PtsimJob *job, const char *const *extra) {
  const PtsimLayout *l = &job->layout;
  GPtrArray *w = g_ptr_array_new();
  g_ptr_array_add(w, g_strdup("--model"));
  g_ptr_array_add(w, g_strdup(job->model.name));
  g_ptr_array_add(w, g_strdup("--hw"));
  g_ptr_array_add(w, g_strdup(job->hw.name));
  add_int(w, "--gpus", l->gpus);
  add_int(w, "--seq", l->seq);
  add_int(w, "--gbs", l->gbs);
  add_int(w, "--tp", l->tp);
  add_int(w, "--pp", l->pp);
  add_int(w, "--cp", l->cp);
  if (l->vp > 1) add_int(w, "--vp", l->vp);
  add_int(w, "--mbs", l->mbs);
  g_ptr_array_add(w, g_strdup("--recompute"));
  g_ptr_array_add(w,
                  g_strdup(ptsim_names_get(PTSIM_NAMES_RECOMPUTE, (int)job->settings.recompute)));
  g_ptr_array_add(w, g_strdup("--schedule"));
  g_ptr_array_add(w, g_strdup(ptsim_names_get(PTSIM_NAMES_SCHEDULE, (int)l->schedule)));
  if (l->first_stage_layers > 0)
    add_int(w, "--decoder-first-pipeline-num-layers", l->first_stage_layers);
  if (l->last_stage_layers > 0)
    add_int(w, "--decoder-last-pipeline-num-layers", l->last_stage_layers);
  if (job->model.num_experts > 0) {
    add_int(w, "--ep", l->ep);
    add_int(w, "--etp", l->etp);
  }
  if (l->sharding != PTSIM_SHARDING_NONE || !l->distributed_optimizer) {
    g_ptr_array_add(w, g_strdup("--sharding"));
    g_ptr_array_add(w, g_strdup(ptsim_layout_sharding_word(l)));
    if (strcmp(ptsim_layout_sharding_word(l), "hsdp") == 0)
      add_int(w, "--hsdp-shard-size", ptsim_sweep_shard_group(l));
  }
  for (gsize i = 0; extra && extra[i]; i++) g_ptr_array_add(w, g_strdup(extra[i]));
  g_ptr_array_add(w, NULL);
  return (char **)g_ptr_array_free(w, FALSE);
}

/* ---- the answer, as text and JSON ---- */

static void append_flags(GString *out, const PtsimRemedy *r) {
  for (int i = 0; i < r->n_changes; i++) {
    const PtsimRemedyChange *c = &r->changes[i];
    g_string_append_printf(out, "%s%s%s%s%s", i ? " " : "", c->drop ? "no " : "", c->flag,
                           c->value[0] ? " " : "", c->value);
  }
}

void ptsim_remedies_write_text(GString *out, const PtsimRemedies *rs, const PtsimJob *job,
                               const char *const *words) {
  if (!rs->searched) return;
  g_string_append(out, "\nwhat would make it run ");
  if (rs->found->len == 0) {
    g_string_append_printf(out,
                           "(%" G_GUINT64_FORMAT " layouts tried, %" G_GUINT64_FORMAT
                           " through the allocator emulation): nothing with up to %d changes "
                           "on %" G_GINT64_FORMAT
                           " GPUs, nor with up to %d more on up to %" G_GINT64_FORMAT " GPUs\n",
                           rs->tried, rs->emulated, MAX_DEPTH, job->layout.gpus, MORE_GPUS_DEPTH,
                           job->layout.gpus * MORE_GPUS_FACTOR);
    return;
  }
  g_string_append_printf(out,
                         "(the fewest changes that run, each re-predicted: the allocator "
                         "emulation's runs verdict and the simulated step; fastest first; "
                         "%" G_GUINT64_FORMAT " layouts tried, %" G_GUINT64_FORMAT " emulated)",
                         rs->tried, rs->emulated);
  if (rs->gpus != job->layout.gpus)
    g_string_append_printf(out,
                           ":\nnothing on %" G_GINT64_FORMAT " GPUs runs with up to %d changes; "
                           "%" G_GINT64_FORMAT " GPUs do",
                           job->layout.gpus, MAX_DEPTH, rs->gpus);
  g_string_append(out, ":\n");
  for (guint i = 0; i < rs->found->len; i++) {
    const PtsimRemedy *r = &g_array_index(rs->found, PtsimRemedy, i);
    g_string_append_printf(out, "%3u. ", i + 1);
    append_flags(out, r);
    g_string_append_printf(
        out,
        ": step %.4f s, %.0f tokens/s per GPU (%.0f for the job's %" G_GINT64_FORMAT
        " GPUs), device peak %.2f GiB of %.2f at stage %" G_GINT64_FORMAT "\n",
        r->step_s, r->tokens_per_s / (double)r->gpus, r->tokens_per_s, r->gpus,
        r->device_peak_bytes / PTSIM_GIB_BYTES, r->capacity_bytes / PTSIM_GIB_BYTES, r->peak_stage);
    g_autofree char *command = ptsim_remedy_command(r, "ptsim predict", words);
    g_string_append_printf(out, "     %s\n", command);
  }
}

void ptsim_remedies_write_json(PtsimJson *json, const PtsimRemedies *rs) {
  if (!rs->searched) return;
  ptsim_json_begin_object(json, "remedies");
  ptsim_json_int(json, "moves", rs->depth); /* one per doubling or switch */
  ptsim_json_int(json, "gpus", rs->gpus);
  ptsim_json_int(json, "layouts_tried", (int64_t)rs->tried);
  ptsim_json_int(json, "layouts_emulated", (int64_t)rs->emulated);
  ptsim_json_begin_array(json, "layouts");
  for (guint i = 0; i < rs->found->len; i++) {
    const PtsimRemedy *r = &g_array_index(rs->found, PtsimRemedy, i);
    ptsim_json_begin_object(json, NULL);
    ptsim_json_begin_array(json, "flags");
    for (int c = 0; c < r->n_changes; c++) {
      if (r->changes[c].drop) continue;
      ptsim_json_string(json, NULL, r->changes[c].flag);
      if (r->changes[c].value[0]) ptsim_json_string(json, NULL, r->changes[c].value);
    }
    ptsim_json_end_array(json);
    ptsim_json_begin_array(json, "drops");
    for (int c = 0; c < r->n_changes; c++)
      if (r->changes[c].drop) ptsim_json_string(json, NULL, r->changes[c].flag);
    ptsim_json_end_array(json);
    ptsim_json_int(json, "gpus", r->gpus);
    ptsim_json_double(json, "step_s", r->step_s);
    ptsim_json_double(json, "tokens_per_s", r->tokens_per_s);
    ptsim_json_double(json, "tokens_per_s_per_gpu", r->tokens_per_s / (double)r->gpus);
    ptsim_json_double(json, "device_peak_bytes", r->device_peak_bytes);
    ptsim_json_int(json, "peak_stage", r->peak_stage);
    ptsim_json_end_object(json);
  }
  ptsim_json_end_array(json);
  ptsim_json_end_object(json);
}

/* sweep_settle.c — the `runs` verdict of the layouts a sweep ranks first:
 * the caching-allocator emulation of the fastest that may run, and the
 * ranking it follows; see sweep.h ("the runs verdict").  Enumeration and
 * evaluation are sweep.c's; what is printed, sim/cli/sweep_table.c's.
 *
 * Every pipeline stage of an emulated layout is one work item on a thread
 * pool, the costliest first, so that two threads share even one layout's
 * stages.  The fastest `top` that may run are settled as one stream of
 * work, not in rounds: a layout found not to run makes room for the next
 * candidate at once, while the others' stages go on.  The best per group
 * is one such stream too: each group walks its candidates on its own. */
#include <stdlib.h>
#include "lifetimes.h"
#include "simulate.h"
#include "sweep.h"

/* The verdict of an emulated layout into its result. */
static void allocator_verdict(const PtsimAllocResult *alloc, PtsimBatchResult *r) {
  r->alloc_device_peak_bytes = alloc->stages[alloc->peak_stage].device_peak_bytes;
  r->alloc_oom = !alloc->fits;
  r->runs = alloc->runs;
  r->runs_from = PTSIM_RUNS_FROM_ALLOCATOR;
}

void ptsim_sweep_allocator_one(const PtsimJob *job, gboolean every_item, PtsimBatchResult *r) {
  g_autofree PtsimAllocResult *alloc = g_new0(PtsimAllocResult, 1);
  g_autofree PtsimPlan *plan = g_new0(PtsimPlan, 1);
  g_autoptr(GError) error = NULL;
  if (r->status != 0) return;
  ptsim_plan_build(job, plan);
  if (!ptsim_simulate_allocator_with(plan, PTSIM_LIFETIMES_STEPS, NULL, every_item, NULL, 0.0, NULL,
                                     alloc, &error))
    return;
  allocator_verdict(alloc, r);
}

/* ---- the emulation of many layouts, stage by stage ---- */

/* A layout whose stages are being replayed. */
typedef struct {
  guint index; /* into jobs and results */
  PtsimPlan plan;
  PtsimAllocResult alloc;
  gint remaining; /* stages not replayed yet */
  gint failed;    /* a stage could not be emulated: no verdict */
} Emulation;

typedef struct {
  Emulation *layout;
  gint64 stage;
  double cost; /* items x layers: the replay's allocations, roughly */
} StageTask;

typedef struct {
  const PtsimJob *jobs;
  PtsimBatchResult *results;
  gboolean every_item;
  GThreadPool *pool; /* NULL: one thread, each stage replayed when launched */
  GAsyncQueue *done; /* Emulations whose stages are all replayed */
  guint launched;
} Settle;

static void stage_worker(gpointer data, gpointer user_data) {
  Settle *st = user_data;
  StageTask *t = data;
  Emulation *e = t->layout;
  g_autoptr(GError) error = NULL;
  if (!ptsim_simulate_allocator_stage(&e->plan, t->stage, PTSIM_LIFETIMES_STEPS, NULL,
                                      st->every_item, &e->alloc.stages[t->stage], &error))
    g_atomic_int_set(&e->failed, 1);
  if (g_atomic_int_dec_and_test(&e->remaining)) g_async_queue_push(st->done, e);
  g_free(t);
}

/* The costliest first, so that no long stage starts last. */
static gint by_cost(gconstpointer a, gconstpointer b, gpointer user_data) {
  const StageTask *x = a, *y = b;
  (void)user_data;
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  if (x->layout->index != y->layout->index) return x->layout->index < y->layout->index ? -1 : 1;
  return (x->stage > y->stage) - (x->stage < y->stage);
}

static void settle_open(Settle *st, const PtsimJob *jobs, PtsimBatchResult *results, guint threads,
                        gboolean every_item) {
  st->jobs = jobs;
  st->results = results;
  st->every_item = every_item;
  st->done = g_async_queue_new();
  st->launched = 0;
  if (threads == 0) threads = g_get_num_processors();
  st->pool = threads > 1 ? g_thread_pool_new(stage_worker, st, (gint)threads, TRUE, NULL) : NULL;
  if (st->pool) g_thread_pool_set_sort_function(st->pool, by_cost, NULL);
}

static void settle_close(Settle *st) {
  if (st->pool) g_thread_pool_free(st->pool, FALSE, TRUE);
  g_async_queue_unref(st->done);
}

/* Starts the emulation of layout i (its stages queued); it arrives in
 * st->done when all are replayed. */
static void launch(Settle *st, guint i) {
  Emulation *e = g_new0(Emulation, 1);
  e->index = i;
  st->launched += 1;
  ptsim_plan_build(&st->jobs[i], &e->plan);
  if (e->plan.schedule_items < 0) {
    e->failed = 1;
    g_async_queue_push(st->done, e);
    return;
  }
  e->remaining = (gint)e->plan.num_stages;
  for (gint64 s = 0; s < e->plan.num_stages; s++) {
    StageTask *t = g_new(StageTask, 1);
    t->layout = e;
    t->stage = s;
    t->cost = (double)e->plan.schedule_items * (double)e->plan.chunk_layers[s];
    if (st->pool)
      g_thread_pool_push(st->pool, t, NULL);
    else
      stage_worker(t, st);
  }
}

/* Waits for an emulation and writes its verdict; returns its layout. */
static guint finish_one(Settle *st) {
  Emulation *e = g_async_queue_pop(st->done);
  guint i = e->index;
  if (!e->failed) {
    ptsim_simulate_allocator_close(&e->plan, PTSIM_LIFETIMES_STEPS, &e->alloc);
    allocator_verdict(&e->alloc, &st->results[i]);
  }
  g_free(e);
  return i;
}

void ptsim_sweep_run_allocator(const PtsimJob *jobs, PtsimBatchResult *results, const guint *idx,
                               guint n, guint threads, gboolean every_item) {
  Settle st;
  guint pending = 0;
  settle_open(&st, jobs, results, threads, every_item);
  for (guint k = 0; k < n; k++)
    if (results[idx[k]].status == 0) {
      launch(&st, idx[k]);
      pending++;
    }
  for (; pending > 0; pending--) finish_one(&st);
  settle_close(&st);
}

/* ---- the ranking ---- */

gdouble ptsim_sweep_rank_key(const PtsimJob *job, const PtsimBatchResult *r) {
  return r->tokens_per_s / (double)job->layout.gpus;
}

int ptsim_sweep_rank_class(const PtsimBatchResult *r) {
  if (r->status != 0) return 3;
  return r->runs == 1 ? 0 : r->runs < 0 ? 1 : 2;
}

typedef struct {
  gint cls;
  gdouble key;
  guint index;
} RankEntry;

static gint by_rank(gconstpointer a, gconstpointer b) {
  const RankEntry *x = a, *y = b;
  if (x->cls != y->cls) return x->cls - y->cls;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

void ptsim_sweep_sort_ranked(const PtsimJob *jobs, const PtsimBatchResult *results, guint *idx,
                             guint n, gboolean by_class) {
  g_autofree RankEntry *entries = g_new(RankEntry, MAX(n, 1));
  for (guint k = 0; k < n; k++) {
    guint i = idx[k];
    entries[k].cls = by_class ? ptsim_sweep_rank_class(&results[i]) : 0;
    entries[k].key = ptsim_sweep_rank_key(&jobs[i], &results[i]);
    entries[k].index = i;
  }
  qsort(entries, n, sizeof *entries, by_rank);
  for (guint k = 0; k < n; k++) idx[k] = entries[k].index;
}

/* ---- the fastest that may run ---- */

/* Launches what the first `top` candidates that may run (those in flight
 * counted as may run) still need; returns how many it launched. */
static guint launch_needed(Settle *st, const GArray *candidates, guint8 *launched, guint top) {
  guint kept = 0, started = 0;
  for (guint k = 0; k < candidates->len && kept < top; k++) {
    guint i = g_array_index(candidates, guint, k);
    if (st->results[i].runs == 0) continue;
    kept++;
    if (launched[k] || st->results[i].runs_from == PTSIM_RUNS_FROM_ALLOCATOR) continue;
    launched[k] = 1;
    launch(st, i);
    started++;
  }
  return started;
}

guint ptsim_sweep_settle_top(const PtsimJob *jobs, PtsimBatchResult *results, guint n, guint top,
                             guint threads, gboolean every_item) {
  g_autoptr(GArray) candidates = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++)
    if (results[i].status == 0 && results[i].runs != 0) g_array_append_val(candidates, i);
  ptsim_sweep_sort_ranked(jobs, results, (guint *)candidates->data, candidates->len, FALSE);
  g_autofree guint8 *launched = g_new0(guint8, MAX(candidates->len, 1));
  Settle st;
  settle_open(&st, jobs, results, threads, every_item);
  /* The fastest `top` that may run must all be settled by the emulation;
   * one that turns out not to run makes room for the next.  Verdicts only
   * ever rule a candidate out, so what is launched is what rounds of
   * "settle the first top not yet ruled out" would settle, no more. */
  guint pending = launch_needed(&st, candidates, launched, top);
  while (pending > 0) {
    guint i = finish_one(&st);
    pending--;
    if (results[i].runs == 0) pending += launch_needed(&st, candidates, launched, top);
  }
  guint emulated = st.launched;
  settle_close(&st);
  return emulated;
}

/* ---- the best that runs per group ---- */

/* Walks group g's candidates from next[g]: a layout that runs is the best,
 * one that does not is passed, one in doubt is launched (the walk goes on
 * when its verdict comes).  Returns whether it launched one. */
static gboolean group_walk(Settle *st, const GArray *members, guint *next, guint *best,
                           guint *in_flight) {
  while (*next < members->len && *best == G_MAXUINT) {
    guint i = g_array_index(members, guint, *next);
    if (st->results[i].runs == 1) {
      *best = i;
    } else if (st->results[i].runs < 0) {
      *in_flight = i;
      launch(st, i);
      return TRUE;
    } else {
      *next += 1; /* does not run */
    }
  }
  return FALSE;
}

guint ptsim_sweep_settle_groups(const PtsimJob *jobs, PtsimBatchResult *results,
                                GArray *const *members, guint n_groups, guint *best, guint threads,
                                gboolean every_item) {
  g_autofree guint *next = g_new0(guint, MAX(n_groups, 1));
  g_autofree guint *in_flight = g_new(guint, MAX(n_groups, 1));
  g_autoptr(GHashTable) group_of = g_hash_table_new(g_direct_hash, g_direct_equal);
  guint pending = 0;
  Settle st;
  settle_open(&st, jobs, results, threads, every_item);
  for (guint g = 0; g < n_groups; g++) {
    best[g] = G_MAXUINT;
    if (group_walk(&st, members[g], &next[g], &best[g], &in_flight[g])) {
      g_hash_table_insert(group_of, GUINT_TO_POINTER(in_flight[g]), GUINT_TO_POINTER(g));
      pending++;
    }
  }
  /* Verdicts come in any order, each group's walk depends on its own only:
   * the layouts emulated, and so the results, are the same on any number
   * of threads (what rounds of one candidate per group gave). */
  while (pending > 0) {
    guint i = finish_one(&st);
    guint g = GPOINTER_TO_UINT(g_hash_table_lookup(group_of, GUINT_TO_POINTER(i)));
    g_hash_table_remove(group_of, GUINT_TO_POINTER(i));
    pending--;
    if (results[i].runs < 0) next[g]++; /* its emulation failed: no verdict, the next */
    if (group_walk(&st, members[g], &next[g], &best[g], &in_flight[g])) {
      g_hash_table_insert(group_of, GUINT_TO_POINTER(in_flight[g]), GUINT_TO_POINTER(g));
      pending++;
    }
  }
  guint emulated = st.launched;
  settle_close(&st);
  return emulated;
}

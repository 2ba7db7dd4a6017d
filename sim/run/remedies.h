/* remedies.h — what would make a layout that does not run run: the few
 * changes a user can make to the command line (more pp, tp or cp, selective
 * or full recompute, a schedule holding fewer microbatches in flight, a
 * deeper data-parallel sharding, fp8 parameter gathering, expandable
 * segments, a smaller micro-batch), each re-predicted as `ptsim predict`
 * predicts it: the caching-allocator emulation for the `runs` verdict and
 * the simulated step for the time.
 *
 * The search is breadth-first by the number of changes (one, then two,
 * then three): the answer is the layouts with the fewest changes that run
 * (and, when fewer than three do, those with one change more), ranked by
 * step time, fastest first.  When nothing on the job's GPUs runs, the
 * smallest power-of-two multiple of the GPUs that runs is searched the same
 * way (the extra GPUs as data or pipeline parallelism).  Layouts whose
 * held floor (memory.h: what the emulation must hold) plus the context and
 * NCCL buffers exceed the GPU are settled without the emulation.
 *
 * Shell module (GLib). */
#ifndef PTSIM_REMEDIES_H
#define PTSIM_REMEDIES_H

#include <glib.h>
#include "alloc.h"
#include "job.h"
#include "json_writer.h"

#define PTSIM_REMEDY_CHANGES_MAX 8
#define PTSIM_REMEDIES_SHOWN 5

/* One change of the command line: a flag and its new value ("" for a
 * switch); drop: the flag is only taken away (the value it set is derived
 * again, as an even split is). */
typedef struct {
  char flag[48];
  char value[96];
  int drop;
} PtsimRemedyChange;

/* One layout that runs, and how to get it. */
typedef struct {
  int n_changes;
  PtsimRemedyChange changes[PTSIM_REMEDY_CHANGES_MAX];
  int64_t gpus;
  double step_s;
  double tokens_per_s; /* the job's */
  double device_peak_bytes;
  double capacity_bytes;
  int64_t peak_stage;
} PtsimRemedy;

typedef struct {
  GArray *found;     /* PtsimRemedy, fastest first (at most PTSIM_REMEDIES_SHOWN) */
  guint64 tried;     /* layouts looked at */
  guint64 emulated;  /* of them, replayed through the allocator emulation */
  int depth;         /* changes of the answer (0: none found) */
  int64_t gpus;      /* the GPUs the answer needs (the job's when it fits them) */
  gboolean searched; /* the search ran (the layout does not run) */
} PtsimRemedies;

/* Searches what makes JOB (validated; it does not run) run.  ALLOC: the
 * emulation's options the job was predicted with, ALLOC_CONF their text
 * (NULL: none), for the --alloc-conf a change writes. */
void ptsim_remedies_find(const PtsimJob *job, const PtsimAllocOptions *alloc,
                         const char *alloc_conf, PtsimRemedies *out);
void ptsim_remedies_clear(PtsimRemedies *r);

/* The command line of remedy R: WORDS (a command's arguments after its
 * name, NULL-terminated; NULL: none) without the flags R changes (and
 * --dp, --nodes, which it derives again), then R's flags.  (transfer full) */
char *ptsim_remedy_command(const PtsimRemedy *r, const char *command, const char *const *words);
/* " WORD" onto OUT, shell-quoted unless plain (a layout string's '|'). */
void ptsim_remedy_append_word(GString *out, const char *word);

/* The predict words of JOB's model, hardware and layout as a sweep
 * enumerates them (--model --hw --gpus --seq --gbs --tp --pp --cp --vp
 * --mbs --recompute --schedule, the uneven split, --ep --etp, --sharding),
 * then EXTRA (NULL-terminated, may be NULL): the sweep's settings.
 * (transfer full: a NULL-terminated GStrv) */
char **ptsim_remedy_layout_words(const PtsimJob *job, const char *const *extra);

/* The answer under "what would make it run", each remedy with its command
 * line (ptsim_remedy_command on WORDS); nothing when not searched. */
void ptsim_remedies_write_text(GString *out, const PtsimRemedies *rs, const PtsimJob *job,
                               const char *const *words);
/* The answer as the "remedies" object (nothing when not searched). */
void ptsim_remedies_write_json(PtsimJson *json, const PtsimRemedies *rs);

#endif /* PTSIM_REMEDIES_H */

/* progress.h — a long command's progress on stderr: the sweep's layouts,
 * validate's cases and inputs.  One rule for all of them: shown only when
 * stderr is a terminal, only once the command has run a second, at most
 * one update a second (the last always), rewritten in place ("\r"), so
 * that stdout (tables, CSV, JSON) is never touched and a fast command
 * prints nothing. */
#ifndef PTSIM_PROGRESS_H
#define PTSIM_PROGRESS_H

#include <glib.h>

typedef struct {
  gint64 start_us, last_us;
  gboolean shown;   /* a line is on the terminal */
  gboolean closed;  /* the last line was written */
  const char *unit; /* what is counted: "layouts", "cases", "inputs" */
  const char *what; /* a prefix ("validate: ") or "" */
  guint64 total;    /* when the callback's is 0 (a streamed sweep's) */
  guint64 offset;   /* a shard's first layout: streamed callbacks count from it */
} PtsimProgress;

/* Starts the clock; TOTAL as above (0: the callbacks give it). */
void ptsim_progress_init(PtsimProgress *p, const char *what, const char *unit, guint64 total);

/* Whether a line is due now (FINAL: the last one, due whenever one was
 * shown): a terminal, past the first second, a second since the last. */
gboolean ptsim_progress_due(PtsimProgress *p, gboolean final);

/* "42 s", "3 min 05 s", "2 h 07 min" */
void ptsim_progress_append_duration(GString *out, double seconds);

/* DONE of TOTAL (0: p->total) with a bar, the rate and the time left;
 * the line ends once done reaches the total.  The signature of
 * PtsimSweepProgress (USER_DATA: the PtsimProgress). */
void ptsim_progress_show(guint64 done, guint64 total, gpointer user_data);

/* Ends a line left open (a command that stopped short of its total). */
void ptsim_progress_end(PtsimProgress *p);

#endif /* PTSIM_PROGRESS_H */

/* progress.c — progress lines on stderr; see progress.h.  (Moved from the
 * sweep command, whose line it was, so that validate shows the same.) */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

/* A terminal redraws in place, but a line a second is all a person reads. */
#define EVERY_US G_USEC_PER_SEC

void ptsim_progress_init(PtsimProgress *p, const char *what, const char *unit, guint64 total) {
  p->start_us = g_get_monotonic_time();
  p->last_us = 0;
  p->shown = p->closed = FALSE;
  p->what = what ? what : "";
  p->unit = unit;
  p->total = total;
  p->offset = 0;
}

gboolean ptsim_progress_due(PtsimProgress *p, gboolean final) {
  if (p->closed || !isatty(STDERR_FILENO)) return FALSE;
  gint64 now = g_get_monotonic_time();
  if (!p->shown && now - p->start_us < G_USEC_PER_SEC) return FALSE;
  if (p->shown && !final && now - p->last_us < EVERY_US) return FALSE;
  p->shown = TRUE;
  p->last_us = now;
  return TRUE;
}

void ptsim_progress_append_duration(GString *out, double seconds) {
  guint64 s = (guint64)(seconds + 0.5);
  if (s < 60)
    g_string_append_printf(out, "%" G_GUINT64_FORMAT " s", s);
  else if (s < 3600)
    g_string_append_printf(out, "%" G_GUINT64_FORMAT " min %02" G_GUINT64_FORMAT " s", s / 60,
                           s % 60);
  else
    g_string_append_printf(out, "%" G_GUINT64_FORMAT " h %02" G_GUINT64_FORMAT " min", s / 3600,
                           s % 3600 / 60);
}

void ptsim_progress_show(guint64 done, guint64 total, gpointer user_data) {
  PtsimProgress *p = user_data;
  if (total == 0) { /* streaming: the run's own count */
    done = done >= p->offset ? done - p->offset : 0;
    total = p->total;
  }
  if (!ptsim_progress_due(p, total > 0 && done >= total)) return;
  double seconds = (double)(g_get_monotonic_time() - p->start_us) * 1e-6;
  g_autoptr(GString) line = g_string_new("\r");
  g_string_append(line, p->what);
  double rate = seconds > 0.0 ? (double)done / seconds : 0.0;
  if (total > 0 && done <= total) {
    int width = 30, filled = (int)((guint64)width * done / total);
    g_string_append_printf(line, "[%.*s%*s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " %s", filled,
                           "##############################", width - filled, "", done, total,
                           p->unit);
  } else {
    g_string_append_printf(line, "%" G_GUINT64_FORMAT " %s", done, p->unit);
  }
  g_string_append_printf(line, ", %.0f/s", rate);
  if (total > 0 && done < total && rate > 0.0) {
    g_string_append(line, ", ETA ");
    ptsim_progress_append_duration(line, (double)(total - done) / rate);
  }
  g_string_append(line, "\033[K"); /* clear what a longer line left */
  if (total > 0 && done >= total) {
    g_string_append_c(line, '\n');
    p->closed = TRUE;
  }
  fputs(line->str, stderr);
  fflush(stderr);
}

void ptsim_progress_end(PtsimProgress *p) {
  if (p->shown && !p->closed && isatty(STDERR_FILENO)) fputc('\n', stderr);
  p->closed = TRUE;
}

/* output_session.h — what one ptsim command writes, as a whole: no two of
 * its outputs on one file, its temporaries removed when it is interrupted
 * (SIGINT, SIGTERM, SIGHUP), and every file it wrote taken back when it
 * fails: a new file removed, a replaced one restored (a hard link to the
 * old file is kept beside it until the command ends).  The temporaries are
 * named ".NAME.ptsim-HOST-PID.XXXXXX" (HOST: 8 hex digits of the host's
 * name), so the next command writing in that folder removes those a
 * killed ptsim (kill -9, a power cut) left, and only those: ptsim's own on
 * this host whose process is gone.
 *
 * Shell module (GLib, POSIX).  The session is the command line's
 * (sim/cli/main.c): a library caller that never begins one gets output.h's
 * policy alone.  Used by output.c and the figure writer (plots/plot.c). */
#ifndef PTSIM_OUTPUT_SESSION_H
#define PTSIM_OUTPUT_SESSION_H

#include <glib.h>

/* Starts the session: claims, the journal and the signal handlers. */
void ptsim_output_session_begin(void);

/* Ends it: SUCCEEDED keeps what was written (the kept old files go),
 * otherwise every file written is taken back.  Returns EXIT_CODE. */
int ptsim_output_session_end(int exit_code);

/* ---- for writers (output.c, plot.c) ---- */

/* Whether a session is running. */
gboolean ptsim_output_session_active(void);

/* Claims TARGET (the file an output replaces or creates) for output PATH:
 * fails (PTSIM_OUTPUT_ERROR_REFUSED) when another output of this command
 * claimed it.  No-op without a session. */
gboolean ptsim_output_session_claim(const char *path, const char *target, GError **error);

/* A temporary's path for a file named BASE in DIR, in ptsim's naming, for
 * g_mkstemp (it ends in XXXXXX).  Removes the stale ones in DIR first (once
 * per folder and command).  (transfer full) */
char *ptsim_output_temp_template(const char *dir, const char *base);

/* Temporaries the signal handlers remove; TMP must stay allocated until it
 * is forgotten. */
void ptsim_output_session_track(const char *tmp);
void ptsim_output_session_forget(const char *tmp);

/* Before TMP is renamed over TARGET (EXISTS: an old file is there):
 * journals it, keeping the old file by a hard link (a file system without
 * them: not journaled, the new file stays whatever happens); FALSE (errno
 * set) when no name for the link can be made.  TRUE without a session. */
gboolean ptsim_output_session_replacing(const char *target, gboolean exists);

/* Whether read-only files may be replaced (--force). */
void ptsim_output_set_force(gboolean force);
gboolean ptsim_output_force(void);

#endif /* PTSIM_OUTPUT_SESSION_H */

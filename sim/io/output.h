/* output.h — the one policy for every file ptsim writes (CSV, JSON, TSV,
 * gnuplot scripts and figures' data, traces, profiles) and for stdout.
 *
 * Shell module (GLib, POSIX).  The policy:
 *   - "-" means standard output;
 *   - a symbolic link is written through: its target is replaced, the link
 *     stays (a link to a missing file is refused);
 *   - only regular files are replaced: a directory, a device (/dev/full), a
 *     FIFO or a socket is refused with an error naming the path, never
 *     replaced by a regular file;
 *   - a file this command read as input (input.h) is never an output, nor
 *     the file standard output or standard error is redirected to
 *     (`--csv /dev/stdout > rep.txt` would replace the report);
 *   - a read-only file is replaced only with --force (ptsim_output_set_force);
 *   - a file is written whole to a temporary beside it and renamed over the
 *     target, so a failed write leaves the old file (or none), never half a
 *     file; a new file gets mode 0666 less the umask, a replaced one keeps
 *     its mode;
 *   - every write is checked, standard output included: a full disk or a
 *     closed pipe is an error naming the path;
 *   - within a command's session (output_session.h): no two outputs on one
 *     file, temporaries removed on SIGINT/SIGTERM/SIGHUP and by the next
 *     run in that folder, every file written taken back when it fails.
 * Errors are PTSIM_OUTPUT_ERROR: REFUSED (the path is not one ptsim may
 * write: exit 2, bad input) or WRITE (writing failed: exit 1).
 *
 * Not here: what is written (report.h, plot.h, the commands). */
#ifndef PTSIM_OUTPUT_H
#define PTSIM_OUTPUT_H

#include <glib.h>

#define PTSIM_OUTPUT_ERROR (ptsim_output_error_quark())
GQuark ptsim_output_error_quark(void);

typedef enum {
  PTSIM_OUTPUT_ERROR_REFUSED, /* not a regular file, an input, a dangling link */
  PTSIM_OUTPUT_ERROR_WRITE    /* creating, writing or renaming failed */
} PtsimOutputError;

/* The exit code an error means: 2 for a refused path (and any non-output
 * error the caller passes on), 1 for a failed write. */
int ptsim_output_exit_code(const GError *error);

/* A new file's mode before the umask: read and write for all, as other
 * tools create files (the umask, 022 most often, takes the rest away). */
#define PTSIM_OUTPUT_NEW_FILE_MODE 0666

/* Checks PATH against the policy without writing: call it for every output
 * before the work, so that a refused path costs nothing and leaves nothing. */
gboolean ptsim_output_check(const char *path, GError **error);

/* Writes DATA (LEN bytes) to PATH by the policy. */
gboolean ptsim_output_write(const char *path, const char *data, gsize len, GError **error);

/* Writes DATA to standard output and flushes it; error names "standard
 * output". */
gboolean ptsim_output_stdout(const char *data, gsize len, GError **error);

/* A file written in pieces (a streamed sweep's CSV): the same policy, the
 * rename at commit.  abort (or free without commit) removes the temporary. */
typedef struct PtsimOutput PtsimOutput;
PtsimOutput *ptsim_output_open(const char *path, GError **error);
gboolean ptsim_output_append(PtsimOutput *out, const char *data, gsize len, GError **error);
/* Renames into place and frees OUT, whatever the result. */
gboolean ptsim_output_commit(PtsimOutput *out, GError **error);
void ptsim_output_abort(PtsimOutput *out);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimOutput, ptsim_output_abort)

#endif /* PTSIM_OUTPUT_H */

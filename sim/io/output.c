/* output.c — the output policy; see output.h for what it promises.
 *
 * One resolution step (resolve) decides, for a path, the file that will be
 * replaced and whether the policy allows it; the whole-file writer, the
 * streamed writer and the stale-figure remover all start from it, so the
 * rules cannot drift apart between writers. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"
#include "output_session.h"

/* The domain name keeps its dashes (clang-format 14 would space them). */
/* clang-format off */
G_DEFINE_QUARK(ptsim-output-error-quark, ptsim_output_error)
/* clang-format on */

int ptsim_output_exit_code(const GError *error) {
  return error && g_error_matches(error, PTSIM_OUTPUT_ERROR, PTSIM_OUTPUT_ERROR_WRITE) ? 1 : 2;
}

static gboolean is_stdout(const char *path) { return strcmp(path, "-") == 0; }

static const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

static gboolean refuse(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);
static gboolean refuse(GError **error, const char *format, ...) {
  va_list args;
  va_start(args, format);
  char *message = g_strdup_vprintf(format, args);
  va_end(args);
  g_set_error_literal(error, PTSIM_OUTPUT_ERROR, PTSIM_OUTPUT_ERROR_REFUSED, message);
  g_free(message);
  return FALSE;
}

static gboolean write_failed(GError **error, const char *path, const char *step, int saved) {
  g_set_error(error, PTSIM_OUTPUT_ERROR, PTSIM_OUTPUT_ERROR_WRITE, "%s: %s failed: %s", path, step,
              g_strerror(saved));
  return FALSE;
}

/* The file a chain of symbolic links ends at, or NULL when it ends
 * nowhere (a missing file, a loop).  (transfer full) */
static char *follow_links(const char *path) {
  char *current = g_strdup(path);
  for (int hops = 0; hops < 40; hops++) {
    struct stat st;
    if (lstat(current, &st) != 0) break;
    if (!S_ISLNK(st.st_mode)) return current;
    char *link = g_file_read_link(current, NULL);
    if (!link) break;
    char *next = link;
    if (!g_path_is_absolute(link)) {
      g_autofree char *dir = g_path_get_dirname(current);
      next = g_build_filename(dir, link, NULL);
      g_free(link);
    }
    g_free(current);
    current = next;
  }
  g_free(current);
  return NULL;
}

/* "standard output" or "standard error" when ST is the regular file one of
 * them is redirected to, else NULL. */
static const char *same_file_as_stream(const struct stat *st) {
  static const int fds[] = {STDOUT_FILENO, STDERR_FILENO};
  static const char *const names[] = {"standard output", "standard error"};
  for (gsize i = 0; i < G_N_ELEMENTS(fds); i++) {
    struct stat fst;
    if (fstat(fds[i], &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_dev == st->st_dev &&
        fst.st_ino == st->st_ino)
      return names[i];
  }
  return NULL;
}

/* The file PATH's output replaces (*target, transfer full: the link's
 * target for a link), whether it exists, and its mode. */
static gboolean resolve(const char *path, char **target, gboolean *exists, mode_t *mode,
                        GError **error) {
  struct stat st;
  *exists = FALSE;
  *mode = 0;
  if (path[0] == '\0') return refuse(error, "an empty output path");
  if (lstat(path, &st) != 0) {
    /* a path the user got wrong is bad input, not a failed write */
    if (errno == ENOTDIR)
      return refuse(error, "%s: a part of the path before its last is a file, not a folder", path);
    if (errno == ELOOP || errno == ENAMETOOLONG)
      return refuse(error, "%s: %s", path, g_strerror(errno));
    if (errno != ENOENT) return write_failed(error, path, "looking up", errno);
    g_autofree char *dir = g_path_get_dirname(path);
    struct stat dst;
    if (stat(dir, &dst) != 0 || !S_ISDIR(dst.st_mode))
      return refuse(error, "%s: the folder %s does not exist", path, dir);
    *target = g_strdup(path);
    return TRUE;
  }
  if (S_ISLNK(st.st_mode)) {
    char *resolved = follow_links(path);
    if (resolved == NULL && stat(path, &st) != 0 && errno == ELOOP)
      return refuse(error,
                    "%s is a loop of symbolic links; ptsim writes through links only "
                    "to existing files",
                    path);
    if (resolved == NULL || stat(resolved, &st) != 0) {
      g_free(resolved);
      return refuse(error,
                    "%s is a symbolic link to a missing file; ptsim writes through links "
                    "only to existing files",
                    path);
    }
    *target = resolved;
  } else {
    *target = g_strdup(path);
  }
  if (!S_ISREG(st.st_mode)) {
    g_free(*target);
    *target = NULL;
    return refuse(error,
                  "%s is %s; ptsim replaces only regular files (or writes '-', "
                  "standard output)",
                  path, kind_of(st.st_mode));
  }
  if (ptsim_input_was_read(*target)) {
    g_free(*target);
    *target = NULL;
    return refuse(error,
                  "%s is an input of this command; ptsim does not overwrite its inputs: "
                  "choose another output name",
                  path);
  }
  const char *stream = same_file_as_stream(&st);
  if (stream) {
    g_free(*target);
    *target = NULL;
    return refuse(error,
                  "%s is the file this command's %s goes to; writing it would replace what "
                  "is written there: give another path, or '-' for standard output",
                  path, stream);
  }
  if (((st.st_mode & 0222) == 0 || access(*target, W_OK) != 0) && !ptsim_output_force()) {
    g_free(*target);
    *target = NULL;
    return refuse(error, "%s is read-only; ptsim replaces a read-only file only with --force",
                  path);
  }
  *exists = TRUE;
  *mode = st.st_mode & 07777;
  return TRUE;
}

gboolean ptsim_output_check(const char *path, GError **error) {
  g_return_val_if_fail(path != NULL, FALSE);
  if (is_stdout(path)) return TRUE;
  g_autofree char *target = NULL;
  gboolean exists;
  mode_t mode;
  return resolve(path, &target, &exists, &mode, error);
}

gboolean ptsim_output_stdout(const char *data, gsize len, GError **error) {
  errno = 0; /* stdio need not set it: EIO stands in then */
  if ((len > 0 && fwrite(data, 1, len, stdout) != len) || fflush(stdout) != 0 || ferror(stdout))
    return write_failed(error, "standard output", "writing", errno ? errno : EIO);
  return TRUE;
}

/* ---- the temporary beside the target, renamed at the end ---- */

struct PtsimOutput {
  char *path;   /* as the user gave it, for messages */
  char *target; /* the file replaced at commit; NULL: standard output */
  char *tmp;    /* the temporary beside it */
  int fd;
  gboolean replace_existing;
};

static void output_free(PtsimOutput *out) {
  if (out->fd >= 0) close(out->fd);
  if (out->tmp) g_unlink(out->tmp);
  ptsim_output_session_forget(out->tmp);
  g_free(out->path);
  g_free(out->target);
  g_free(out->tmp);
  g_free(out);
}

PtsimOutput *ptsim_output_open(const char *path, GError **error) {
  g_return_val_if_fail(path != NULL, NULL);
  PtsimOutput *out = g_new0(PtsimOutput, 1);
  out->fd = -1;
  out->path = g_strdup(path);
  if (is_stdout(path)) return out;
  mode_t mode;
  if (!resolve(path, &out->target, &out->replace_existing, &mode, error)) {
    output_free(out);
    return NULL;
  }
  if (!ptsim_output_session_claim(path, out->target, error)) {
    output_free(out);
    return NULL;
  }
  g_autofree char *dir = g_path_get_dirname(out->target);
  g_autofree char *base = g_path_get_basename(out->target);
  out->tmp = ptsim_output_temp_template(dir, base);
  out->fd = g_mkstemp_full(out->tmp, O_RDWR | O_CLOEXEC, PTSIM_OUTPUT_NEW_FILE_MODE);
  if (out->fd >= 0) ptsim_output_session_track(out->tmp);
  if (out->fd < 0) {
    int saved = errno;
    g_clear_pointer(&out->tmp, g_free);
    write_failed(error, path, "creating a file beside it", saved);
    output_free(out);
    return NULL;
  }
  /* mkstemp honours the umask only on what it was given: a new file gets
   * 0666 less the umask, a replaced one keeps its own mode. */
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(out->fd, out->replace_existing ? mode : (PTSIM_OUTPUT_NEW_FILE_MODE & ~mask)) != 0) {
    write_failed(error, path, "setting the mode of", errno);
    output_free(out);
    return NULL;
  }
  return out;
}

gboolean ptsim_output_append(PtsimOutput *out, const char *data, gsize len, GError **error) {
  g_return_val_if_fail(out != NULL, FALSE);
  if (!out->target) {
    errno = 0;
    if (len > 0 && fwrite(data, 1, len, stdout) != len)
      return write_failed(error, "standard output", "writing", errno ? errno : EIO);
    return TRUE;
  }
  while (len > 0) {
    ssize_t n = write(out->fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return write_failed(error, out->path, "writing", errno);
    data += n;
    len -= (gsize)n;
  }
  return TRUE;
}

gboolean ptsim_output_commit(PtsimOutput *out, GError **error) {
  g_return_val_if_fail(out != NULL, FALSE);
  gboolean ok = TRUE;
  if (!out->target) {
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout))
      ok = write_failed(error, "standard output", "writing", errno ? errno : EIO);
  } else {
    /* A replaced file must not come back empty after a crash: sync first. */
    if (out->replace_existing && fsync(out->fd) != 0)
      ok = write_failed(error, out->path, "writing", errno);
    int fd = out->fd;
    out->fd = -1;
    if (close(fd) != 0 && ok) ok = write_failed(error, out->path, "writing", errno);
    /* the command may fail later: the old file is kept until it ends */
    if (ok && !ptsim_output_session_replacing(out->target, out->replace_existing))
      ok = write_failed(error, out->path, "keeping the old file beside", errno);
    if (ok && g_rename(out->tmp, out->target) != 0)
      ok = write_failed(error, out->path, "renaming the finished file to", errno);
    if (ok) { /* in place: nothing to remove */
      ptsim_output_session_forget(out->tmp);
      g_clear_pointer(&out->tmp, g_free);
    }
  }
  output_free(out);
  return ok;
}

void ptsim_output_abort(PtsimOutput *out) {
  if (out) output_free(out);
}

gboolean ptsim_output_write(const char *path, const char *data, gsize len, GError **error) {
  g_return_val_if_fail(path != NULL, FALSE);
  if (is_stdout(path)) return ptsim_output_stdout(data, len, error);
  PtsimOutput *out = ptsim_output_open(path, error);
  if (!out) return FALSE;
  if (!ptsim_output_append(out, data, len, error)) {
    ptsim_output_abort(out);
    return FALSE;
  }
  return ptsim_output_commit(out, error);
}

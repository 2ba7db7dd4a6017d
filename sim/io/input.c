/* input.c — capped whole-file reads and the set of files read; see input.h.
 *
 * The set holds (device, inode) pairs, not names: "./m.tsv", "m.tsv" and a
 * link to it are one file.  It is process-wide (a command reads its inputs
 * and then writes its outputs) and guarded by a mutex, since sweeps load
 * profiles from worker threads. */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static GMutex read_lock;
static GHashTable *read_files; /* "dev:ino" -> NULL, set semantics */
static GHashTable *digests;    /* "dev:ino" -> "NAME sha256:HEX" of a file read whole */
/* The calling thread's capture (ptsim_input_capture_begin): "dev:ino" ->
 * its digest line, or NULL when none is open. */
static _Thread_local GHashTable *capture;

static char *file_key(const struct stat *st) {
  return g_strdup_printf("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, (guint64)st->st_dev,
                         (guint64)st->st_ino);
}

static void remember(const struct stat *st) {
  g_mutex_lock(&read_lock);
  if (!read_files) read_files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_add(read_files, file_key(st));
  g_mutex_unlock(&read_lock);
}

/* What a whole file's bytes were, by its base name: a shard made on another
 * machine names the same profile by another folder. */
static void remember_digest(const struct stat *st, const char *path, const guchar *data,
                            gsize len) {
  g_autofree char *name = g_path_get_basename(path);
  g_autofree char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, data, len);
  g_mutex_lock(&read_lock);
  if (!digests) digests = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  char *line = g_strdup_printf("%s sha256:%s", name, sum);
  if (capture) g_hash_table_replace(capture, file_key(st), g_strdup(line));
  g_hash_table_replace(digests, file_key(st), line);
  g_mutex_unlock(&read_lock);
}

static gint compare_lines(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* TABLE's digest lines, sorted.  (transfer full: g_strfreev) */
static char **sorted_lines(GHashTable *table) {
  GPtrArray *lines = g_ptr_array_new();
  if (table) {
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, table);
    while (g_hash_table_iter_next(&it, NULL, &value)) g_ptr_array_add(lines, g_strdup(value));
  }
  g_ptr_array_sort(lines, compare_lines);
  g_ptr_array_add(lines, NULL);
  return (char **)g_ptr_array_free(lines, FALSE);
}

char **ptsim_input_digests(void) {
  g_mutex_lock(&read_lock);
  char **lines = sorted_lines(digests);
  g_mutex_unlock(&read_lock);
  return lines;
}

void ptsim_input_capture_begin(void) {
  g_clear_pointer(&capture, g_hash_table_unref);
  capture = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
}

char **ptsim_input_capture_end(void) {
  char **lines = sorted_lines(capture);
  g_clear_pointer(&capture, g_hash_table_unref);
  return lines;
}

void ptsim_input_capture_note(const char *path) {
  struct stat st;
  if (!capture || !path || g_stat(path, &st) != 0) return;
  g_autofree char *key = file_key(&st);
  g_mutex_lock(&read_lock);
  const char *line = digests ? g_hash_table_lookup(digests, key) : NULL;
  if (line) g_hash_table_replace(capture, g_steal_pointer(&key), g_strdup(line));
  g_mutex_unlock(&read_lock);
}

gboolean ptsim_input_was_read(const char *path) {
  struct stat st;
  if (path == NULL || stat(path, &st) != 0) return FALSE;
  g_autofree char *key = file_key(&st);
  g_mutex_lock(&read_lock);
  gboolean seen = read_files && g_hash_table_contains(read_files, key);
  g_mutex_unlock(&read_lock);
  return seen;
}

static gboolean fail_errno(const char *what, const char *path, int saved, GError **error) {
  g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "%s %s: %s", what, path,
              saved == ENOENT ? "no such file" : g_strerror(saved));
  return FALSE;
}

/* Whether ST is the pipe this process already holds: standard input's, or
 * one named by /dev/fd/N (a shell's <(...)).  Such a pipe has a writer;
 * any other FIFO may have none and would block forever. */
static gboolean held_pipe(const char *path, const struct stat *st) {
  struct stat in;
  if (fstat(STDIN_FILENO, &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino)
    return TRUE;
  return g_str_has_prefix(path, "/dev/fd/") || g_str_has_prefix(path, "/proc/self/fd/");
}

static const char *special_kind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/* Opens PATH for reading without blocking on a FIFO that has no writer:
 * a regular file, or a pipe this process holds; a directory, a device, a
 * FIFO or a socket is refused naming it.  The fd (blocking again) and its
 * stat, or -1. */
static int open_input(const char *path, const char *what, struct stat *st, GError **error) {
  int fd = g_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0) {
    fail_errno(what, path, errno, error);
    return -1;
  }
  if (fstat(fd, st) != 0) {
    int saved = errno;
    close(fd);
    fail_errno(what, path, saved, error);
    return -1;
  }
  if (S_ISDIR(st->st_mode)) {
    close(fd);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_ISDIR, "%s %s: is a directory, expected a file",
                what, path);
    return -1;
  }
  if (!S_ISREG(st->st_mode) && !(S_ISFIFO(st->st_mode) && held_pipe(path, st))) {
    close(fd);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                "%s %s: is %s; ptsim reads regular files (or a pipe on standard input, "
                "/dev/stdin)",
                what, path, special_kind(st->st_mode));
    return -1;
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

gboolean ptsim_input_read(const char *path, const char *what, gsize max_bytes, char **contents,
                          gsize *length, GError **error) {
  g_return_val_if_fail(path != NULL && what != NULL && contents != NULL, FALSE);
  struct stat st;
  int fd = open_input(path, what, &st, error);
  if (fd < 0) return FALSE;
  /* Regular files say their size; a pipe is read up to the cap. */
  gsize cap_plus_one = max_bytes + 1;
  gsize want = S_ISREG(st.st_mode) && (guint64)st.st_size < cap_plus_one
                   ? (gsize)st.st_size + 1
                   : MIN(cap_plus_one, (gsize)1 << 20);
  GByteArray *buf = g_byte_array_sized_new((guint)MIN(want, (gsize)G_MAXUINT));
  gsize used = 0;
  for (;;) {
    if (used == max_bytes + 1) break;
    gsize room = MIN((gsize)1 << 20, max_bytes + 1 - used);
    g_byte_array_set_size(buf, (guint)(used + room));
    ssize_t got = read(fd, buf->data + used, room);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int saved = errno;
      close(fd);
      g_byte_array_unref(buf);
      return fail_errno(what, path, saved, error);
    }
    if (got == 0) break;
    used += (gsize)got;
  }
  close(fd);
  if (used > max_bytes) {
    g_byte_array_unref(buf);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                "%s %s: larger than the %" G_GSIZE_FORMAT " MiB a %s may have", what, path,
                max_bytes >> 20, what);
    return FALSE;
  }
  g_byte_array_set_size(buf, (guint)(used + 1));
  buf->data[used] = '\0';
  if (S_ISREG(st.st_mode)) {
    remember(&st);
    remember_digest(&st, path, buf->data, used);
  }
  if (length) *length = used;
  *contents = (char *)g_byte_array_free(buf, FALSE);
  return TRUE;
}

FILE *ptsim_input_open_stream(const char *path, const char *what, GError **error) {
  g_return_val_if_fail(path != NULL && what != NULL, NULL);
  struct stat st;
  int fd = open_input(path, what, &st, error);
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, "r");
  if (!f) {
    int saved = errno;
    close(fd);
    fail_errno(what, path, saved, error);
    return NULL;
  }
  if (S_ISREG(st.st_mode)) remember(&st);
  return f;
}

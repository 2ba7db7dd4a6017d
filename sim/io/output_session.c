/* output_session.c — one command's outputs as a whole; see
 * output_session.h.
 *
 * The signal handler may run at any point of the command, on any thread:
 * it reads only fixed arrays whose entries are complete before their slot
 * is marked used, and calls only unlink, rename, signal and raise. */
#define _XOPEN_SOURCE 700 /* sigaction, kill, realpath */
#include "output_session.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"

/* A command writes a handful of files (a sweep: its CSV and three figures
 * of three files each); past this many, what is left is not tracked. */
#define SLOTS 256

static volatile sig_atomic_t active;
static gboolean force;
static char *temps[SLOTS]; /* lent by the writers */
static volatile sig_atomic_t temp_used[SLOTS];

typedef struct {
  char *target; /* the file written */
  char *backup; /* the old file's hard link; NULL: the file is new */
} Entry;
static Entry journal[SLOTS];
static volatile sig_atomic_t journal_len;

static GHashTable *written;      /* target's identity -> NULL: written by this command */
static GHashTable *cleaned_dirs; /* folders whose stale temporaries were removed */
static char host_tag[16];

void ptsim_output_set_force(gboolean on) { force = on; }
gboolean ptsim_output_force(void) { return force; }
gboolean ptsim_output_session_active(void) { return active != 0; }

static void remove_temps(void) {
  for (int i = 0; i < SLOTS; i++)
    if (temp_used[i]) unlink(temps[i]);
}

/* Takes back every file written, the last first. */
static void undo(void) {
  for (sig_atomic_t i = journal_len; i > 0; i--) {
    const Entry *e = &journal[i - 1];
    if (e->backup)
      rename(e->backup, e->target);
    else
      unlink(e->target);
  }
}

static void on_signal(int sig) {
  remove_temps();
  undo();
  signal(sig, SIG_DFL); /* then die of it, as without a handler */
  raise(sig);
}

void ptsim_output_session_begin(void) {
  static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
  guint hash = g_str_hash(g_get_host_name());
  g_snprintf(host_tag, sizeof host_tag, "%08x", hash);
  written = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  cleaned_dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (gsize i = 0; i < G_N_ELEMENTS(signals); i++) {
    struct sigaction old;
    /* a signal ignored by the caller (nohup) stays ignored */
    if (sigaction(signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(signals[i], &sa, NULL);
  }
  active = 1;
}

int ptsim_output_session_end(int exit_code) {
  if (!active) return exit_code;
  if (exit_code != 0) undo();
  for (sig_atomic_t i = 0; i < journal_len; i++) {
    if (exit_code == 0 && journal[i].backup) unlink(journal[i].backup);
    g_free(journal[i].target);
    g_free(journal[i].backup);
  }
  journal_len = 0;
  active = 0;
  g_clear_pointer(&written, g_hash_table_unref);
  g_clear_pointer(&cleaned_dirs, g_hash_table_unref);
  return exit_code;
}

/* A file's identity: its folder's real path and its name (the target is
 * past its links already), the same before and after it is written. */
static char *identity(const char *target) {
  g_autofree char *dir = g_path_get_dirname(target);
  g_autofree char *base = g_path_get_basename(target);
  g_autofree char *real = realpath(dir, NULL);
  return g_build_filename(real ? real : dir, base, NULL);
}

gboolean ptsim_output_session_claim(const char *path, const char *target, GError **error) {
  if (!active) return TRUE;
  g_autofree char *id = identity(target);
  if (g_hash_table_contains(written, id)) {
    g_set_error(error, PTSIM_OUTPUT_ERROR, PTSIM_OUTPUT_ERROR_REFUSED,
                "%s: this command wrote that file already (two outputs on one path: give "
                "each output a file of its own)",
                path);
    return FALSE;
  }
  g_hash_table_add(written, g_steal_pointer(&id));
  return TRUE;
}

/* Removes DIR's temporaries of ptsim processes of this host that are gone. */
static void remove_stale(const char *dir) {
  g_autofree char *mark = g_strdup_printf(".ptsim-%s-", host_tag);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    const char *at = name[0] == '.' ? strstr(name, mark) : NULL;
    if (!at) continue;
    char *end = NULL;
    guint64 pid = g_ascii_strtoull(at + strlen(mark), &end, 10);
    if (!end || *end != '.' || strlen(end) != 7 || pid == 0 || pid > G_MAXINT32) continue;
    if ((pid_t)pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_unlink(path);
  }
}

char *ptsim_output_temp_template(const char *dir, const char *base) {
  if (!host_tag[0]) g_snprintf(host_tag, sizeof host_tag, "%08x", g_str_hash(g_get_host_name()));
  if (active && !g_hash_table_contains(cleaned_dirs, dir)) {
    remove_stale(dir);
    g_hash_table_add(cleaned_dirs, g_strdup(dir));
  }
  return g_strdup_printf("%s/.%s.ptsim-%s-%d.XXXXXX", dir, base, host_tag, (int)getpid());
}

void ptsim_output_session_track(const char *tmp) {
  for (int i = 0; i < SLOTS; i++)
    if (!temp_used[i]) {
      temps[i] = (char *)tmp;
      temp_used[i] = 1;
      return;
    }
}

void ptsim_output_session_forget(const char *tmp) {
  for (int i = 0; i < SLOTS; i++)
    if (temp_used[i] && temps[i] == tmp) {
      temp_used[i] = 0;
      temps[i] = NULL;
      return;
    }
}

gboolean ptsim_output_session_replacing(const char *target, gboolean exists) {
  if (!active || journal_len == SLOTS) return TRUE;
  Entry e = {g_strdup(target), NULL};
  if (exists) {
    g_autofree char *dir = g_path_get_dirname(target);
    g_autofree char *base = g_path_get_basename(target);
    e.backup = ptsim_output_temp_template(dir, base);
    /* a free name: mkstemp's, which link cannot take over */
    int fd = g_mkstemp(e.backup);
    if (fd < 0) {
      int saved = errno;
      g_free(e.target);
      g_free(e.backup);
      errno = saved;
      return FALSE;
    }
    close(fd);
    g_unlink(e.backup);
    if (link(target, e.backup) != 0) {
      /* a file system without hard links: the old file cannot be kept, and
       * a failure leaves the new one (never nothing) */
      g_free(e.target);
      g_free(e.backup);
      return TRUE;
    }
  }
  journal[journal_len] = e;
  journal_len = journal_len + 1;
  return TRUE;
}

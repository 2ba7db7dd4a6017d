/* launcher.c — the GPU count of a launch command; see launcher.h. */
#include "launcher.h"

#include <string.h>

#include "config.h"
#include "numbers.h"

/* The options that carry a count, each with its spellings. */
typedef enum {
  O_NPROC,
  O_NNODES,
  O_NODES,
  O_TASKS_PER_NODE,
  O_GPUS_PER_NODE,
  O_TASKS,
  O_NP,
  O_DS_GPUS,
  O_DS_NODES,
  O_COUNT
} Opt;

static const struct {
  const char *name;
  Opt opt;
} spellings[] = {
    {"--nproc_per_node", O_NPROC},
    {"--nproc-per-node", O_NPROC},
    {"--nnodes", O_NNODES},
    {"-N", O_NODES},
    {"--nodes", O_NODES},
    {"--ntasks-per-node", O_TASKS_PER_NODE},
    {"--gpus-per-node", O_GPUS_PER_NODE},
    {"--ntasks", O_TASKS},
    {"-np", O_NP},
    {"--num_gpus", O_DS_GPUS},
    {"--num-gpus", O_DS_GPUS},
    {"--num_nodes", O_DS_NODES},
    {"--num-nodes", O_DS_NODES},
};

typedef struct {
  int64_t v[O_COUNT];
  char *said[O_COUNT]; /* how it was written */
  gboolean standalone, mpi, srun;
  char *unread; /* the first count that is no number ("--nodes 'your_own_num_nodes'") */
} Seen;

/* *out: the count VALUE gives, or 0 (with seen->unread) when it is no
 * number at all: a template's placeholder (#SBATCH --nodes=NUM_NODES) or
 * torchrun's "--nproc_per_node gpu" say nothing ptsim can count. */
static gboolean count_of(Seen *seen, const char *word, const char *value, int64_t *out,
                         GError **error) {
  if (strchr(value, ':')) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE,
                "launcher %s %s: an elastic node range; give --gpus", word, value);
    return FALSE;
  }
  if (value[0] != '-' && !g_ascii_isdigit(value[0])) {
    if (!seen->unread) seen->unread = g_strdup_printf("%s '%s' is not a count", word, value);
    return TRUE;
  }
  /* bounded like a .ini size, so that a product of two counts cannot
   * overflow before job validation refuses it by range */
  g_autofree char *what = g_strdup_printf("launcher %s", word);
  return ptsim_number_int64(what, value, 1, PTSIM_CONFIG_INT_MAX, out, error);
}

/* Reads the counting options of WORDS (later ones win). */
static gboolean scan(GPtrArray *words, Seen *seen, GError **error) {
  for (guint i = 0; i < words->len; i++) {
    const char *w = words->pdata[i];
    g_autofree char *base = g_path_get_basename(w);
    if (strcmp(base, "mpirun") == 0 || strcmp(base, "mpiexec") == 0) seen->mpi = TRUE;
    if (strcmp(base, "srun") == 0 || strcmp(base, "sbatch") == 0) seen->srun = TRUE;
    if (strcmp(w, "--standalone") == 0) seen->standalone = TRUE;
    const char *eq = strchr(w, '=');
    gsize len = eq ? (gsize)(eq - w) : strlen(w);
    for (size_t k = 0; k < G_N_ELEMENTS(spellings); k++) {
      Opt o = spellings[k].opt;
      const char *value = NULL;
      if (strlen(spellings[k].name) == len && strncmp(w, spellings[k].name, len) == 0)
        value = eq ? eq + 1 : (i + 1 < words->len ? words->pdata[++i] : NULL);
      else if (strcmp(w, "-n") == 0 && o == O_TASKS && i + 1 < words->len)
        value = words->pdata[++i]; /* srun -n, mpirun -n: tasks in all */
      if (!value) continue;
      int64_t v = 0;
      if (!count_of(seen, spellings[k].name, value, &v, error)) return FALSE;
      if (v == 0) break;
      seen->v[o] = v;
      g_free(seen->said[o]);
      seen->said[o] =
          g_strdup_printf("%s %s", o == O_TASKS && strcmp(w, "-n") == 0 ? "-n" : spellings[k].name,
                          value);
      break;
    }
  }
  return TRUE;
}

static gboolean var_count(const PtsimShellScript *script, const char *name, int64_t *out) {
  g_autofree char *v = script ? ptsim_shell_script_var(script, name) : NULL;
  return v && ptsim_number_parse_int64(v, out) && *out > 0 && *out <= PTSIM_CONFIG_INT_MAX;
}

gboolean ptsim_launcher_gpus(GPtrArray *launcher, const PtsimShellScript *script, int64_t *gpus,
                             char **how, GError **error) {
  Seen seen;
  memset(&seen, 0, sizeof seen);
  gboolean ok = (!script || scan(script->sbatch, &seen, error)) && scan(launcher, &seen, error);
  int64_t n = 0, m = 0;
  int64_t per = seen.v[O_TASKS_PER_NODE] > 0 ? seen.v[O_TASKS_PER_NODE] : seen.v[O_GPUS_PER_NODE];
  Opt per_opt = seen.v[O_TASKS_PER_NODE] > 0 ? O_TASKS_PER_NODE : O_GPUS_PER_NODE;
  *gpus = 0;
  *how = NULL;
  if (ok && seen.v[O_NPROC] > 0) {
    int64_t nodes = seen.standalone ? 1 : (seen.v[O_NNODES] > 0 ? seen.v[O_NNODES] : 1);
    *gpus = seen.v[O_NPROC] * nodes;
    *how = g_strdup_printf("torchrun %s%s%s", seen.said[O_NPROC], seen.said[O_NNODES] ? " " : "",
                           seen.said[O_NNODES] ? seen.said[O_NNODES] : "");
  } else if (ok && (seen.v[O_NODES] > 0 || seen.v[O_TASKS] > 0 || seen.v[O_TASKS_PER_NODE] > 0) &&
             (seen.v[O_TASKS] > 0 || per > 0) && !seen.mpi) {
    /* srun -N M alone says no count: the variables below may */
    if (seen.v[O_TASKS] > 0) {
      *gpus = seen.v[O_TASKS];
      *how = g_strdup_printf("srun %s", seen.said[O_TASKS]);
    } else if (per > 0) {
      int64_t nodes = seen.v[O_NODES] > 0 ? seen.v[O_NODES] : 1;
      *gpus = per * nodes;
      *how = g_strdup_printf("srun %s%s%s", seen.said[O_NODES] ? seen.said[O_NODES] : "",
                             seen.said[O_NODES] ? " " : "", seen.said[per_opt]);
    }
  } else if (ok && seen.mpi && (seen.v[O_NP] > 0 || seen.v[O_TASKS] > 0)) {
    *gpus = seen.v[O_NP] > 0 ? seen.v[O_NP] : seen.v[O_TASKS];
    *how = g_strdup_printf("mpirun %s", seen.said[seen.v[O_NP] > 0 ? O_NP : O_TASKS]);
  } else if (ok && seen.v[O_DS_GPUS] > 0) {
    *gpus = seen.v[O_DS_GPUS] * (seen.v[O_DS_NODES] > 0 ? seen.v[O_DS_NODES] : 1);
    *how = g_strdup_printf("deepspeed %s", seen.said[O_DS_GPUS]);
  } else if (ok && var_count(script, "WORLD_SIZE", &n)) {
    *gpus = n;
    *how = g_strdup_printf("WORLD_SIZE=%" G_GINT64_FORMAT, (gint64)n);
  } else if (ok && var_count(script, "GPUS_PER_NODE", &n) &&
             (var_count(script, "NNODES", &m) || var_count(script, "NUM_NODES", &m))) {
    *gpus = n * m;
    *how = g_strdup_printf("GPUS_PER_NODE=%" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " nodes",
                           (gint64)n, (gint64)m);
  } else if (ok) {
    g_autofree char *first = launcher->len ? g_path_get_basename(launcher->pdata[0]) : NULL;
    *how = g_strdup_printf("%s%s%s, no WORLD_SIZE, GPUS_PER_NODE or NNODES%s%s",
                           first ? "launcher '" : "no launcher", first ? first : "",
                           first ? "' without a GPU count" : "", seen.unread ? "; " : "",
                           seen.unread ? seen.unread : "");
  }
  for (int o = 0; o < O_COUNT; o++) g_free(seen.said[o]);
  g_free(seen.unread);
  return ok;
}

/* Options of the launchers and wrappers that run a training script
 * (torchrun / torch.distributed.run and .launch, srun, mpirun, deepspeed,
 * nsys profile), with how many values each takes, for a command where
 * they stand among the script's flags. */
static const struct {
  const char *name;
  int values;
} launcher_flags[] = {
    {"--nproc_per_node", 1},
    {"--nproc-per-node", 1},
    {"--nnodes", 1},
    {"--node_rank", 1},
    {"--node-rank", 1},
    {"--master_addr", 1},
    {"--master-addr", 1},
    {"--master_port", 1},
    {"--master-port", 1},
    {"--rdzv_backend", 1},
    {"--rdzv-backend", 1},
    {"--rdzv_endpoint", 1},
    {"--rdzv-endpoint", 1},
    {"--rdzv_id", 1},
    {"--rdzv-id", 1},
    {"--rdzv_conf", 1},
    {"--rdzv-conf", 1},
    {"--standalone", 0},
    {"--max_restarts", 1},
    {"--max-restarts", 1},
    {"--monitor_interval", 1},
    {"--monitor-interval", 1},
    {"--start_method", 1},
    {"--start-method", 1},
    {"--redirects", 1},
    {"--tee", 1},
    {"--log_dir", 1},
    {"--log-dir", 1},
    {"--local_addr", 1},
    {"--local-addr", 1},
    {"--role", 1},
    {"--run_path", 0},
    {"--run-path", 0},
    {"--no_python", 0},
    {"--no-python", 0},
    {"--use_env", 0},
    {"--use-env", 0},
    {"--local_rank", 1},
    {"--local-rank", 1},
    {"--nodes", 1},
    {"--ntasks", 1},
    {"--ntasks-per-node", 1},
    {"--gpus-per-node", 1},
    {"--gpus-per-task", 1},
    {"--cpus-per-task", 1},
    {"--container-image", 1},
    {"--container-mounts", 1},
    {"--container-workdir", 1},
    {"--container-name", 1},
    {"--no-container-mount-home", 0},
    {"--mpi", 1},
    {"--export", 1},
    {"--account", 1},
    {"--partition", 1},
    {"--time", 1},
    {"--job-name", 1},
    {"--output", 1},
    {"--error", 1},
    {"--exclusive", 0},
    {"--num_gpus", 1},
    {"--num-gpus", 1},
    {"--num_nodes", 1},
    {"--num-nodes", 1},
    {"--hostfile", 1},
    {"--include", 1},
    {"--exclude", 1},
    {"--launcher", 1},
    {"--trace", 1},
    {"--capture-range", 1},
    {"--cuda-memory-usage", 1},
    {"--force-overwrite", 1},
    {"--stats", 1},
};

gboolean ptsim_launcher_flag(const char *name, gsize len, int *values) {
  for (size_t k = 0; k < G_N_ELEMENTS(launcher_flags); k++)
    if (strlen(launcher_flags[k].name) == len && strncmp(launcher_flags[k].name, name, len) == 0) {
      *values = launcher_flags[k].values;
      return TRUE;
    }
  return FALSE;
}

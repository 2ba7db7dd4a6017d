/* megatron_case.h — one of Megatron-LM's functional test cases: what it ran
 * (its flags, environment, test type) and what its runs measured on A100
 * and H100, for `ptsim validate --megatron-cases`.
 *
 * Two sources, one struct:
 *   a case folder of a Megatron-LM checkout,
 *     tests/functional_tests/test_cases/<family>/<case>/: model_config.yaml
 *     (ENV_VARS, MODEL_ARGS, TEST_TYPE, MODE) beside
 *     golden_values_<environment>_<platform>.json (per metric, per step:
 *     "mem-allocated-bytes", "mem-max-allocated-bytes", "iteration-time");
 *   ptsim's record of a case (tests/data/megatron_cases/: an INI file per
 *     case, written by validate/megatron_cases_import.py; its README has
 *     the keys), which carries the same facts already summarised.
 *
 * HELD OUT: golden values measured on GB200 and GB300 are the independent
 * test of hardware ptsim was not tuned on.  No file or folder whose name
 * contains "gb200" or "gb300" (any case) is ever opened here: the names
 * are filtered before anything is read.  Only the platforms dgx_a100 and
 * dgx_h100 are read at all (not the dgxa100_dracooci clusters, not the
 * "_2nd" files of a resumed second run).
 *
 * Per platform one file: the one giving more of the three quantities
 * below, the "dev" environment's (Megatron-LM's current container) on a
 * tie, else "lts".  What a file gives (ptsim_megatron_golden_summarize):
 *   peak allocated    the largest "mem-max-allocated-bytes" (torch's
 *                     max_memory_allocated, cumulative since the start);
 *   steady allocated  the median "mem-allocated-bytes": Megatron logs it
 *                     after each step, after the optimizer step, when only
 *                     what persists between steps is allocated;
 *   iteration time    the median "iteration-time" (s) of the steady logged
 *                     steps.  Each value is Megatron's average over the
 *                     --log-interval steps up to it (default 100), and
 *                     steps 1 and 2 are warm-up (megatron_log.h: the first
 *                     is several times slower): a value counts when the
 *                     first step it averages is 3 or later.  The files
 *                     keep every 1st or 5th step, so "the first logged
 *                     value" is not a warm-up marker here.
 * Values that are not numbers ("nan": steps between two logged ones) are
 * skipped.
 *
 * The flags become a command line as Megatron-LM's harness
 * (tests/functional_tests/shell_test_utils/_run_training.sh) builds it: a
 * plain `true` is the bare flag, a sequence its items, anything else
 * "--flag value"; an empty string drops the flag.  The harness also sets
 * NCCL_PROTO=simple, NCCL_ALGO=Ring, NCCL_NVLS_ENABLE=0 and
 * NCCL_COLLNET_ENABLE=0 unless the case sets them
 * (ptsim_megatron_case_effective_env).
 *
 * Shell module (GLib).  Errors: G_FILE_ERROR for a file or folder that
 * cannot be read (input.h), PTSIM_YAML_ERROR for one that is not YAML,
 * G_KEY_FILE_ERROR for a record that is not one (naming the file). */
#ifndef PTSIM_MEGATRON_CASE_H
#define PTSIM_MEGATRON_CASE_H

#include <glib.h>
#include <stdint.h>
#include "yaml_doc.h"

/* TRUE when NAME (a file or folder name, or a path) names GB200 / GB300
 * data: never opened. */
gboolean ptsim_megatron_case_held_out(const char *name);

/* The entries of folder DIR in name order, the held-out ones left out
 * (never opened).  (transfer full) (element-type filename); NULL with
 * ERROR set when DIR cannot be read. */
GPtrArray *ptsim_megatron_case_list_dir(const char *dir, GError **error);

/* What one platform's golden values say. */
typedef struct {
  char *platform;              /* "dgx_a100" | "dgx_h100" */
  char *environment;           /* "dev" | "lts" */
  char *source;                /* the golden values file (relative to the checkout when recorded) */
  double peak_allocated_bytes; /* NAN: not measured */
  double steady_allocated_bytes; /* NAN: not measured */
  double iteration_time_s;       /* NAN: no steady logged step */
  int64_t time_steps;            /* steady logged steps behind iteration_time_s */
} PtsimMegatronMeasured;

typedef struct {
  char *family;      /* the folder above the case: gpt, moe, mixtral, bert, ... */
  char *name;        /* the case's folder name */
  char *config;      /* its model_config.yaml (relative to the checkout when recorded) */
  char *commit;      /* Megatron-LM commit of a record; NULL when read from a checkout */
  char *test_type;   /* TEST_TYPE ("regular", "ckpt-resume", ...); "" when absent */
  char *mode;        /* MODE; "pretraining" when absent */
  GPtrArray *flags;  /* (element-type utf8) MODEL_ARGS' keys in order ("--num-layers") */
  GPtrArray *values; /* (element-type utf8) their values as words; NULL element: bare flag */
  GPtrArray *env_keys, *env_values; /* ENV_VARS in order (element-type utf8) */
  int64_t gpus;                     /* -1: unknown (no recipe read or none names the case) */
  char *gpus_from;                  /* what gave it ("recipes/h100/gpt.yaml: 1 node x 8 GPUs") */
  char *unread;                     /* not NULL: why the config could not be read as a case */
  GPtrArray *measured;              /* (element-type PtsimMegatronMeasured) by platform name */
} PtsimMegatronCase;

void ptsim_megatron_case_free(PtsimMegatronCase *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimMegatronCase, ptsim_megatron_case_free)

/* Reads the case folder DIR (model_config.yaml and its A100 / H100 golden
 * values); its family is the parent folder's name.  A config that is not
 * the mapping of a case (no MODEL_ARGS, a key that is not a --flag, a value
 * that is a mapping) comes back with `unread` set, not as an error; an
 * unreadable or malformed file is an error.  (transfer full) */
PtsimMegatronCase *ptsim_megatron_case_read_dir(const char *dir, GError **error);

/* Reads one of ptsim's records (an INI file).  (transfer full) */
PtsimMegatronCase *ptsim_megatron_case_read_record(const char *path, GError **error);

/* The same readers on text in memory (NAME in messages; what the fuzz
 * targets drive): a model_config.yaml without its golden values (family
 * "", name NAME), and a record. */
PtsimMegatronCase *ptsim_megatron_case_parse_config(const char *text, gsize len, const char *name,
                                                    GError **error);
PtsimMegatronCase *ptsim_megatron_case_parse_record(const char *text, gsize len, const char *name,
                                                    GError **error);

/* Fills *out from a golden values document (its metrics by step) of a run
 * that logged every LOG_INTERVAL steps. */
void ptsim_megatron_golden_summarize(const PtsimYamlDoc *doc, int64_t log_interval,
                                     PtsimMegatronMeasured *out);

/* The case's flags as a Megatron-LM command line, each value shell-quoted
 * when it needs it (e.g. "${DATA_PATH}/...": kept, not expanded).
 * (transfer full) */
char *ptsim_megatron_case_command(const PtsimMegatronCase *c);

/* The value of environment variable KEY the run had: the case's ENV_VARS,
 * else the harness's default, else NULL.  (transfer none) */
const char *ptsim_megatron_case_effective_env(const PtsimMegatronCase *c, const char *key);

/* The harness's defaults: {name, value}, what _run_training.sh exports
 * (`export X="${X:-default}"`) before the case's own ENV_VARS, at the
 * Megatron-LM commit the records name. */
#define PTSIM_MEGATRON_HARNESS_ENV 6
extern const char *const ptsim_megatron_harness_env[PTSIM_MEGATRON_HARNESS_ENV][2];

#endif /* PTSIM_MEGATRON_CASE_H */

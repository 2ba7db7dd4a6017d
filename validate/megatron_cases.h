/* megatron_cases.h — ptsim against Megatron-LM's functional test cases
 * (`ptsim validate --megatron-cases PATH [--recipes DIR]`): each case
 * read (megatron_case.h), sorted in or out of scope, turned into a job
 * through the Megatron-LM flag reader, predicted, and compared with what
 * its runs measured on A100 and H100.
 *
 * PATH is a case folder (it holds model_config.yaml), any folder above
 * case folders (Megatron-LM's tests/functional_tests/test_cases, or one
 * family of it), a record of ptsim's (*.ini) or a folder of records
 * (tests/data/megatron_cases/cases).  Every file or folder whose name says
 * GB200 or GB300 is skipped before it is opened (held out,
 * megatron_case.h).  The GPU counts come from the recipes folder
 * (megatron_recipes.h): RECIPES_DIR, else the first ancestor X of PATH
 * with X/tests/test_utils/recipes or X/test_utils/recipes; a record
 * carries its own.
 *
 * In scope: GPT, mixture-of-experts and hybrid Mamba pretraining
 * (families gpt, moe, mixtral, hybrid) from scratch -- TEST_TYPE regular, or ckpt-resume, whose
 * golden values are its first run (the harness's first run never loads
 * a checkpoint; the resumed run is the "_2nd" file, not read).  Out of
 * scope, each with its reason and counted: inference and RL modes,
 * encoder models (bert, t5), multimodal models
 * (multimodal-llava, mimo), NeMo runs (gpt-nemo), tooling (common), runs
 * that start from a checkpoint (frozen-start, frozen-resume), release
 * runs (multi-node, from a checkpoint; no recipe here gives their nodes),
 * checkpoint-consistency tests.  A case in scope without A100 or H100
 * golden values is counted as unmeasured.
 *
 * Each measured platform is one row: dgx_a100 on a100-80g, dgx_h100 on
 * h100-80g (--hw overrides), the recipe's GPU count (8, the harness's
 * GPUS_PER_NODE default, when no recipe names the case: said in
 * `assumed`), the case's flags with the user's --megatron-args after them
 * and the other job options on top.  Predicted for the stage of the rank
 * that logs, world_size - 1: the last pipeline stage (Megatron's rank
 * order puts pp outermost):
 *   peak allocated    the allocator emulation's allocated peak, and the
 *                     analytical estimate's total;
 *   steady allocated  the emulation's allocated bytes after the last
 *                     replayed step's optimizer step, and the estimate's
 *                     weights + gradients + optimizer states;
 *   iteration time    the discrete-event simulation's step time.
 * The environment (ENV_VARS and the harness's defaults): what ptsim
 * models is applied (PYTORCH_CUDA_ALLOC_CONF: the emulation's settings;
 * NVTE_FLASH_ATTN=0 with NVTE_FUSED_ATTN=0: unfused attention;
 * NCCL_NVLS_ENABLE=0 or NCCL_ALGO Ring / ^NVLS: the profile's NVLS off;
 * NCCL_PROTO=simple and CUDA_DEVICE_MAX_CONNECTIONS=1: as ptsim models
 * collectives and the host's in-order issue), what it
 * does not is listed per row and counted.
 *
 * Shell module (GLib).  Errors: unreadable or malformed inputs
 * (PTSIM_YAML_ERROR, G_KEY_FILE_ERROR, G_FILE_ERROR).  A case ptsim
 * refuses is a row with its reason, never an error. */
#ifndef PTSIM_MEGATRON_CASES_H
#define PTSIM_MEGATRON_CASES_H

#include <glib.h>
#include <stdint.h>
#include "job_options.h"
#include "megatron_case.h"

typedef enum {
  PTSIM_CASE_COMPARED,     /* predicted and compared */
  PTSIM_CASE_REFUSED,      /* in scope, but ptsim cannot build or run it (reason) */
  PTSIM_CASE_OUT_OF_SCOPE, /* not GPT / MoE pretraining from scratch (reason) */
  PTSIM_CASE_UNMEASURED    /* in scope, no golden values on dgx_a100 or dgx_h100 */
} PtsimCaseStatus;

/* The quantities compared (prediction vs measurement). */
typedef enum {
  PTSIM_CASE_PEAK_EMULATION,   /* peak allocated: allocator emulation */
  PTSIM_CASE_PEAK_ESTIMATE,    /* peak allocated: analytical estimate */
  PTSIM_CASE_STEADY_EMULATION, /* allocated after the optimizer step: emulation */
  PTSIM_CASE_STEADY_ESTIMATE,  /* the same: weights + grads + optimizer states */
  PTSIM_CASE_TIME,             /* iteration time */
  PTSIM_CASE_QUANTITIES
} PtsimCaseQuantity;

/* A quantity's key in outputs and in the ratchet ("peak_emulation", ...). */
const char *ptsim_case_quantity_key(PtsimCaseQuantity q);
/* The quantity of KEY; -1 when none. */
int ptsim_case_quantity_of(const char *key);

/* One case on one platform (or one case, when not compared). */
typedef struct {
  PtsimCaseStatus status;
  char *family, *name;    /* the case */
  char *platform;         /* "dgx_a100" | "dgx_h100"; "" when none */
  char *environment;      /* "dev" | "lts"; "" when none */
  char *source;           /* the golden values file; else the config */
  char *commit;           /* the record's Megatron-LM commit; "" from a checkout */
  char *reason;           /* not NULL unless COMPARED */
  char *command;          /* the Megatron-LM command line read: the case's flags, then
                             what its environment and the user's --megatron-args add */
  char *hw;               /* the profile predicted on; "" when none */
  int64_t gpus;           /* -1: none */
  char *assumed;          /* what ptsim assumed ("" none) */
  GPtrArray *unmodelled;  /* (element-type utf8) flags not modelled: "--flag (effect)" */
  GPtrArray *env_applied; /* (element-type utf8) "KEY=VALUE: what ptsim did with it" */
  GPtrArray *env_ignored; /* (element-type utf8) "KEY=VALUE" ptsim does not model */
  double measured[PTSIM_CASE_QUANTITIES];  /* the peaks share one measurement; NAN: none */
  double predicted[PTSIM_CASE_QUANTITIES]; /* NAN: none */
  int64_t stage;                           /* the stage predicted (-1: none) */
  int runs; /* the emulation's `runs` verdict over every stage (-1: none) */
  /* what the row was made from (transfer none: valid while the cases are) */
  const PtsimMegatronCase *kase;
  const PtsimMegatronMeasured *run; /* NULL when none */
} PtsimCaseRow;

void ptsim_case_row_free(PtsimCaseRow *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimCaseRow, ptsim_case_row_free)

/* Relative error of quantity Q of R, (predicted - measured) / measured;
 * NAN when either is unknown or R was not compared. */
double ptsim_case_row_error(const PtsimCaseRow *r, PtsimCaseQuantity q);

/* Reads the cases at PATH (see above) into CASES (element-type
 * PtsimMegatronCase, in path order); *recipes_used (may be NULL) receives
 * the recipes folder read (NULL: none; transfer full). */
gboolean ptsim_megatron_cases_read(const char *path, const char *recipes_dir, GPtrArray *cases,
                                   char **recipes_used, GError **error);

/* Rows of every case (element-type PtsimCaseRow, transfer full), each
 * measured platform predicted with USER's job options on top (may be
 * NULL).  Never fails: what cannot be compared is a row with a reason. */
GPtrArray *ptsim_megatron_cases_predict(GPtrArray *cases, const PtsimJobOptions *user);

/* Error statistics of quantity Q over the compared rows of PLATFORM and
 * FAMILY (NULL: any). */
typedef struct {
  size_t n;                      /* rows with both values */
  double median_abs;             /* median |error| (a fraction); NAN when n = 0 */
  double median;                 /* median signed error; NAN when n = 0 */
  double worst;                  /* the error of largest magnitude; NAN when n = 0 */
  const PtsimCaseRow *worst_row; /* (transfer none) */
} PtsimCaseStats;

void ptsim_megatron_cases_stats(GPtrArray *rows, const char *platform, const char *family,
                                PtsimCaseQuantity q, PtsimCaseStats *out);

/* The report: text, JSON or CSV (format: "text" | "json" | "csv"). */
void ptsim_megatron_cases_write(GString *out, GPtrArray *rows, const char *format,
                                const char *recipes_used);

#endif /* PTSIM_MEGATRON_CASES_H */

/* megatron_flags.h — every flag Megatron-LM's pretrain_gpt.py parser knows,
 * with how many values it takes and what ptsim does with it.
 *
 * Shell module (GLib).  The table (megatron_flags.c) was transcribed from
 * the parser Megatron-LM builds at commit d98e8a64 (2026-08-22, core_v0.19)
 * -- arguments.py plus the dataclass-generated flags -- together with flags
 * of older releases that launch scripts still carry, each sorted into one
 * class:
 *
 *   MODELLED    read by megatron_args.c and turned into the job
 *   NO_EFFECT   accepted silently: no effect on step time or memory
 *               (paths, logging, learning rate, initialisation, checkpoints,
 *               and switches that only matter with a refused feature)
 *   UNMODELLED  changes time or memory in a way ptsim does not model: the
 *               caller warns, naming the flag and `effect` (the direction)
 *   REFUSED     turns on a feature ptsim does not model yet (FSDP, latent
 *               MoE, other architectures): an error, unless its value is
 *               `effect` (the value that leaves the feature off)
 *
 * Not here: what a modelled flag means (megatron_args.c). */
#ifndef PTSIM_MEGATRON_FLAGS_H
#define PTSIM_MEGATRON_FLAGS_H

#include <glib.h>

typedef enum {
  PTSIM_MEGATRON_SWITCH, /* store_true/store_false: no value */
  PTSIM_MEGATRON_VALUE,  /* one value */
  PTSIM_MEGATRON_LIST,   /* nargs '+' or '*': every value up to the next --flag */
  PTSIM_MEGATRON_THREE   /* nargs 3 (--rampup-batch-size) */
} PtsimMegatronArity;

typedef enum {
  PTSIM_MEGATRON_MODELLED,
  PTSIM_MEGATRON_NO_EFFECT,
  PTSIM_MEGATRON_UNMODELLED,
  PTSIM_MEGATRON_REFUSED
} PtsimMegatronClass;

typedef struct {
  const char *name; /* "--flag" */
  PtsimMegatronArity arity;
  PtsimMegatronClass klass;
  const char *effect; /* UNMODELLED: the effect and its direction; REFUSED: the
                         value that is accepted (NULL: none) */
} PtsimMegatronFlag;

/* The flag named by the LEN bytes at NAME, or NULL when Megatron-LM has no
 * such flag.  An --moe-* flag the table does not list (another release's)
 * is UNMODELLED. */
const PtsimMegatronFlag *ptsim_megatron_flag_find(const char *name, gsize len);

/* The known flags closest to the LEN bytes at NAME ("--a or --b"), a typo
 * away (edit distance at most a quarter of the name, '_' as '-', or each
 * '-'-separated part abbreviated: --use-dist-optimizer); NULL when none is.  (transfer full) */
char *ptsim_megatron_flag_closest(const char *name, gsize len);

/* The whole table, sorted by name (bytewise).  (transfer none) */
const PtsimMegatronFlag *ptsim_megatron_flags(gsize *count);

#endif /* PTSIM_MEGATRON_FLAGS_H */

/* launcher.h — how many GPUs a launch command starts.
 *
 * Shell module (GLib).  Megatron-LM takes its world size from the
 * environment its launcher sets (WORLD_SIZE, arguments.py), so a command
 * line says the GPU count only through the launcher in front of the
 * script.  Read, in this order (the first that says wins):
 *   torchrun / python -m torch.distributed.run|launch:
 *       --nproc_per_node|--nproc-per-node N [x --nnodes M] (--standalone: 1 node)
 *   srun, and #SBATCH directives of a script:
 *       -N|--nodes M x --ntasks-per-node N (or --gpus-per-node N), or -n|--ntasks N
 *   mpirun / mpiexec: -np|-n N
 *   deepspeed: --num_gpus N [x --num_nodes M]
 *   variables the script (or a VAR=value prefix) sets: WORLD_SIZE, else
 *       GPUS_PER_NODE x NNODES|NUM_NODES
 * Not here: Megatron-LM's own flags (megatron_args.c). */
#ifndef PTSIM_LAUNCHER_H
#define PTSIM_LAUNCHER_H

#include <glib.h>
#include <stdint.h>

#include "shell_script.h"

/* LAUNCHER: the words in front of the script (may be empty); SCRIPT: the
 * run that gave them (its variables and #SBATCH words; may be NULL).
 * *gpus: the count, 0 when nothing says it; *how: what said it
 * ("torchrun --nproc_per_node 8 --nnodes 2") or, when nothing did, what was
 * read ("launcher 'python', no WORLD_SIZE, GPUS_PER_NODE or NNODES").
 * A value that is no number at all (a template's "#SBATCH --nodes=NUM_NODES",
 * torchrun's "--nproc_per_node gpu") counts nothing; *how names it when
 * nothing else gave the count.
 * Errors (PTSIM_CONFIG_ERROR_PARSE): a number that is not a positive
 * integer, an elastic --nnodes range.  (transfer full *how) */
gboolean ptsim_launcher_gpus(GPtrArray *launcher, const PtsimShellScript *script, int64_t *gpus,
                             char **how, GError **error);

/* TRUE when the LEN bytes at NAME are an option of a launcher or wrapper
 * (torchrun, srun, mpirun, deepspeed, nsys), not of the training script;
 * *values: how many values it takes. */
gboolean ptsim_launcher_flag(const char *name, gsize len, int *values);

#endif /* PTSIM_LAUNCHER_H */

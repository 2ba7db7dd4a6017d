/* edit_distance.h — the Levenshtein distance behind every "did you mean"
 * (unknown profile keys, Megatron-LM flags, torchtitan options). */
#ifndef PTSIM_EDIT_DISTANCE_H
#define PTSIM_EDIT_DISTANCE_H

#include <glib.h>

/* Insertions, deletions and substitutions turning A into B; with
 * FOLD_DASH, '_' and '-' are the same character (argparse's dest names
 * against the flags users type). */
size_t ptsim_edit_distance(const char *a, const char *b, gboolean fold_dash);

#endif

/* megatron_recipes.h — the GPU count of each Megatron-LM functional test
 * case, from the CI recipes (tests/test_utils/recipes/ of a checkout).
 *
 * A recipe is YAML: `spec` gives the family folder (`model`), `nodes` and
 * `gpus` (per node); `products` lists test cases (`test_case: [names]`),
 * each with its own products (environment, scope, platforms), which may
 * set `nodes` / `gpus` again (a scalar or a one-item list).  A case's GPU
 * count is nodes x gpus of the first recipe (in path order) naming it; a
 * later recipe giving another count is said in the `from` text.  Files
 * that are not test recipes (no spec.model: the build recipes) are
 * skipped.  Every *.yaml / *.yml under the folder is read, except files
 * and folders whose name says GB200 or GB300 (megatron_case.h: held out).
 *
 * Shell module (GLib).  Errors: a folder that cannot be listed, a file
 * that is not YAML (PTSIM_YAML_ERROR). */
#ifndef PTSIM_MEGATRON_RECIPES_H
#define PTSIM_MEGATRON_RECIPES_H

#include <glib.h>
#include <stdint.h>

typedef struct PtsimMegatronRecipes PtsimMegatronRecipes;

/* (transfer full) */
PtsimMegatronRecipes *ptsim_megatron_recipes_read_dir(const char *dir, GError **error);
void ptsim_megatron_recipes_free(PtsimMegatronRecipes *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimMegatronRecipes, ptsim_megatron_recipes_free)

/* The GPUs FAMILY/CASE runs on, -1 when no recipe names it; *from (may be
 * NULL) receives what said so, e.g. "h100/gpt.yaml: 1 node x 8 GPUs"
 * (transfer none). */
int64_t ptsim_megatron_recipes_gpus(const PtsimMegatronRecipes *r, const char *family,
                                    const char *case_name, const char **from);

/* Recipe files read. */
guint ptsim_megatron_recipes_files(const PtsimMegatronRecipes *r);

#endif /* PTSIM_MEGATRON_RECIPES_H */

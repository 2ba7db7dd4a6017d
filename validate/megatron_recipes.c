/* megatron_recipes.c — GPU counts from Megatron-LM's CI recipes; see
 * megatron_recipes.h. */
#include "megatron_recipes.h"

#include <string.h>
#include "megatron_case.h"
#include "yaml_doc.h"

typedef struct {
  int64_t gpus;
  char *from;
} Entry;

struct PtsimMegatronRecipes {
  GHashTable *cases; /* "family/case" -> Entry */
  guint files;
};

static void entry_free(gpointer p) {
  Entry *e = p;
  g_free(e->from);
  g_free(e);
}

void ptsim_megatron_recipes_free(PtsimMegatronRecipes *r) {
  if (!r) return;
  g_hash_table_unref(r->cases);
  g_free(r);
}

/* A positive integer scalar, or the first item of a sequence of them; -1
 * otherwise. */
static int64_t count_of(const PtsimYamlDoc *doc, int node) {
  if (ptsim_yaml_kind(doc, node) == PTSIM_YAML_SEQUENCE) node = ptsim_yaml_item(doc, node, 0);
  const char *t = ptsim_yaml_text(doc, node);
  guint64 v;
  if (!t || !g_ascii_string_to_unsigned(t, 10, 1, G_MAXINT32, &v, NULL)) return -1;
  return (int64_t)v;
}

static void note_case(PtsimMegatronRecipes *r, const char *family, const char *name, int64_t nodes,
                      int64_t gpus, const char *file) {
  g_autofree char *key = g_strdup_printf("%s/%s", family, name);
  Entry *old = g_hash_table_lookup(r->cases, key);
  if (old) {
    if (old->gpus != nodes * gpus && !strstr(old->from, "; other recipes")) {
      char *from = g_strdup_printf("%s; other recipes say otherwise (%s: %" G_GINT64_FORMAT
                                   " GPUs)",
                                   old->from, file, nodes * gpus);
      g_free(old->from);
      old->from = from;
    }
    return;
  }
  Entry *e = g_new0(Entry, 1);
  e->gpus = nodes * gpus;
  e->from = g_strdup_printf("%s: %" G_GINT64_FORMAT " node%s x %" G_GINT64_FORMAT " GPUs", file,
                            nodes, nodes == 1 ? "" : "s", gpus);
  g_hash_table_insert(r->cases, g_steal_pointer(&key), e);
}

/* One test_case entry of `products`: its names, and nodes / gpus from its
 * products when they set them. */
static void read_product(PtsimMegatronRecipes *r, const PtsimYamlDoc *doc, int product,
                         const char *family, int64_t nodes, int64_t gpus, const char *file) {
  int inner = ptsim_yaml_get(doc, product, "products");
  for (int j = 0; j < ptsim_yaml_count(doc, inner); j++) {
    int p = ptsim_yaml_item(doc, inner, j);
    int64_t n = count_of(doc, ptsim_yaml_get(doc, p, "nodes"));
    int64_t g = count_of(doc, ptsim_yaml_get(doc, p, "gpus"));
    if (n > 0) nodes = n;
    if (g > 0) gpus = g;
  }
  int names = ptsim_yaml_get(doc, product, "test_case");
  if (ptsim_yaml_kind(doc, names) == PTSIM_YAML_SCALAR) {
    note_case(r, family, ptsim_yaml_text(doc, names), nodes, gpus, file);
    return;
  }
  for (int j = 0; j < ptsim_yaml_count(doc, names); j++) {
    const char *name = ptsim_yaml_text(doc, ptsim_yaml_item(doc, names, j));
    if (name) note_case(r, family, name, nodes, gpus, file);
  }
}

static gboolean read_recipe(PtsimMegatronRecipes *r, const char *path, const char *shown,
                            GError **error) {
  g_autoptr(PtsimYamlDoc) doc = ptsim_yaml_load_file(path, error);
  if (!doc) return FALSE;
  int root = ptsim_yaml_root(doc);
  int spec = ptsim_yaml_get(doc, root, "spec");
  const char *family = ptsim_yaml_text(doc, ptsim_yaml_get(doc, spec, "model"));
  int64_t nodes = count_of(doc, ptsim_yaml_get(doc, spec, "nodes"));
  int64_t gpus = count_of(doc, ptsim_yaml_get(doc, spec, "gpus"));
  if (!family || gpus <= 0) return TRUE; /* not a test recipe */
  r->files++;
  int products = ptsim_yaml_get(doc, root, "products");
  for (int i = 0; i < ptsim_yaml_count(doc, products); i++)
    read_product(r, doc, ptsim_yaml_item(doc, products, i), family, nodes > 0 ? nodes : 1, gpus,
                 shown);
  return TRUE;
}

/* Every recipe under DIR, in name order; SHOWN is the path below the root. */
static gboolean read_tree(PtsimMegatronRecipes *r, const char *dir, const char *shown,
                          GError **error) {
  g_autoptr(GPtrArray) names = ptsim_megatron_case_list_dir(dir, error);
  if (!names) return FALSE;
  for (guint i = 0; i < names->len; i++) {
    const char *n = names->pdata[i];
    g_autofree char *path = g_build_filename(dir, n, NULL);
    g_autofree char *below = shown ? g_build_filename(shown, n, NULL) : g_strdup(n);
    gboolean ok = TRUE;
    if (g_file_test(path, G_FILE_TEST_IS_DIR))
      ok = read_tree(r, path, below, error);
    else if (g_str_has_suffix(n, ".yaml") || g_str_has_suffix(n, ".yml"))
      ok = read_recipe(r, path, below, error);
    if (!ok) return FALSE;
  }
  return TRUE;
}

PtsimMegatronRecipes *ptsim_megatron_recipes_read_dir(const char *dir, GError **error) {
  g_autoptr(PtsimMegatronRecipes) r = g_new0(PtsimMegatronRecipes, 1);
  r->cases = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, entry_free);
  if (!read_tree(r, dir, NULL, error)) return NULL;
  return g_steal_pointer(&r);
}

int64_t ptsim_megatron_recipes_gpus(const PtsimMegatronRecipes *r, const char *family,
                                    const char *case_name, const char **from) {
  g_autofree char *key = g_strdup_printf("%s/%s", family, case_name);
  const Entry *e = r ? g_hash_table_lookup(r->cases, key) : NULL;
  if (from) *from = e ? e->from : NULL;
  return e ? e->gpus : -1;
}

guint ptsim_megatron_recipes_files(const PtsimMegatronRecipes *r) { return r ? r->files : 0; }

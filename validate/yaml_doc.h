/* yaml_doc.h — one YAML document (or a JSON file: JSON is YAML) read with
 * libyaml, and the few accessors the readers of Megatron-LM's test cases
 * need: a mapping's value by key, its pairs in order, a sequence's items,
 * a scalar's text and whether it was written plain (unquoted).
 *
 * Shell module (GLib + libyaml).  Nodes are libyaml's: a node is an index
 * into the document (0: none); aliases are resolved by libyaml (an alias
 * is the anchored node itself); merge keys ("<<") are not expanded.  Only
 * the first document of a stream is read.  Lines are 1-based.
 *
 * Errors: a file that cannot be read, or is past PTSIM_INPUT_MAX_TEXT
 * (G_FILE_ERROR, input.h: the largest golden values file is 3 MB), or a
 * syntax error (PTSIM_YAML_ERROR_PARSE: "FILE:LINE:COLUMN: what libyaml
 * says"); an empty file is a document without a root (ptsim_yaml_root
 * returns 0).
 *
 * Not here: what the keys mean (megatron_case.h, megatron_recipes.h). */
#ifndef PTSIM_YAML_DOC_H
#define PTSIM_YAML_DOC_H

#include <glib.h>
#include <stdint.h>

#define PTSIM_YAML_ERROR (ptsim_yaml_error_quark())
GQuark ptsim_yaml_error_quark(void);

typedef enum {
  PTSIM_YAML_ERROR_PARSE /* not YAML */
} PtsimYamlError;

typedef struct PtsimYamlDoc PtsimYamlDoc;

typedef enum {
  PTSIM_YAML_NONE,
  PTSIM_YAML_SCALAR,
  PTSIM_YAML_SEQUENCE,
  PTSIM_YAML_MAPPING
} PtsimYamlKind;

/* Reads PATH (transfer full); NULL and *error on failure. */
PtsimYamlDoc *ptsim_yaml_load_file(const char *path, GError **error);
/* The same from LEN bytes of TEXT; NAME is used in messages. */
PtsimYamlDoc *ptsim_yaml_load_data(const char *text, gsize len, const char *name, GError **error);
void ptsim_yaml_free(PtsimYamlDoc *doc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimYamlDoc, ptsim_yaml_free)

/* The root node (0: an empty document). */
int ptsim_yaml_root(const PtsimYamlDoc *doc);
PtsimYamlKind ptsim_yaml_kind(const PtsimYamlDoc *doc, int node);
/* 1-based line where NODE starts (0 for node 0). */
int64_t ptsim_yaml_line(const PtsimYamlDoc *doc, int node);

/* A scalar's text (transfer none; NUL-terminated), NULL for other kinds. */
const char *ptsim_yaml_text(const PtsimYamlDoc *doc, int node);
/* TRUE when NODE is a scalar written without quotes (so `true` is YAML's
 * boolean and `"true"` a string). */
gboolean ptsim_yaml_plain(const PtsimYamlDoc *doc, int node);

/* Items of a sequence / pairs of a mapping (0 for other kinds). */
int ptsim_yaml_count(const PtsimYamlDoc *doc, int node);
/* Item I of a sequence (0 when out of range or not a sequence). */
int ptsim_yaml_item(const PtsimYamlDoc *doc, int node, int i);
/* Pair I of a mapping: its key and value nodes (0 when out of range). */
void ptsim_yaml_pair(const PtsimYamlDoc *doc, int node, int i, int *key, int *value);
/* The value of the first pair of MAPPING whose key is the scalar KEY (0:
 * none, or MAPPING is not a mapping). */
int ptsim_yaml_get(const PtsimYamlDoc *doc, int mapping, const char *key);

#endif /* PTSIM_YAML_DOC_H */

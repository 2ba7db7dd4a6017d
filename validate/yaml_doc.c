/* yaml_doc.c — a YAML document through libyaml's loader; see yaml_doc.h. */
#include "yaml_doc.h"

#include <string.h>
#include <yaml.h>
#include "input.h"

/* The domain name keeps its dashes (clang-format 14 would space them). */
/* clang-format off */
G_DEFINE_QUARK(ptsim-yaml-error-quark, ptsim_yaml_error)
/* clang-format on */

struct PtsimYamlDoc {
  yaml_document_t document;
  gboolean loaded;
};

void ptsim_yaml_free(PtsimYamlDoc *doc) {
  if (!doc) return;
  if (doc->loaded) yaml_document_delete(&doc->document);
  g_free(doc);
}

PtsimYamlDoc *ptsim_yaml_load_data(const char *text, gsize len, const char *name, GError **error) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    g_set_error(error, PTSIM_YAML_ERROR, PTSIM_YAML_ERROR_PARSE, "%s: libyaml: out of memory",
                name);
    return NULL;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  g_autoptr(PtsimYamlDoc) doc = g_new0(PtsimYamlDoc, 1);
  if (!yaml_parser_load(&parser, &doc->document)) {
    /* libyaml's marks are 0-based */
    const yaml_mark_t *m = parser.problem ? &parser.problem_mark : &parser.context_mark;
    g_set_error(error, PTSIM_YAML_ERROR, PTSIM_YAML_ERROR_PARSE, "%s:%zu:%zu: %s%s%s", name,
                m->line + 1, m->column + 1, parser.problem ? parser.problem : "not YAML",
                parser.context ? " " : "", parser.context ? parser.context : "");
    yaml_parser_delete(&parser);
    return NULL;
  }
  doc->loaded = TRUE;
  yaml_parser_delete(&parser);
  return g_steal_pointer(&doc);
}

PtsimYamlDoc *ptsim_yaml_load_file(const char *path, GError **error) {
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!ptsim_input_read(path, "YAML file", PTSIM_INPUT_MAX_TEXT, &text, &len, error)) return NULL;
  return ptsim_yaml_load_data(text, len, path, error);
}

static yaml_node_t *node_at(const PtsimYamlDoc *doc, int node) {
  if (!doc || node <= 0) return NULL;
  return yaml_document_get_node((yaml_document_t *)&doc->document, node);
}

int ptsim_yaml_root(const PtsimYamlDoc *doc) {
  return doc && yaml_document_get_root_node((yaml_document_t *)&doc->document) ? 1 : 0;
}

PtsimYamlKind ptsim_yaml_kind(const PtsimYamlDoc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  if (!n) return PTSIM_YAML_NONE;
  switch (n->type) {
  case YAML_SCALAR_NODE:
    return PTSIM_YAML_SCALAR;
  case YAML_SEQUENCE_NODE:
    return PTSIM_YAML_SEQUENCE;
  case YAML_MAPPING_NODE:
    return PTSIM_YAML_MAPPING;
  default:
    return PTSIM_YAML_NONE;
  }
}

int64_t ptsim_yaml_line(const PtsimYamlDoc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  return n ? (int64_t)n->start_mark.line + 1 : 0;
}

const char *ptsim_yaml_text(const PtsimYamlDoc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

gboolean ptsim_yaml_plain(const PtsimYamlDoc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  return n && n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

int ptsim_yaml_count(const PtsimYamlDoc *doc, int node) {
  const yaml_node_t *n = node_at(doc, node);
  if (!n) return 0;
  if (n->type == YAML_SEQUENCE_NODE)
    return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
  if (n->type == YAML_MAPPING_NODE)
    return (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
  return 0;
}

int ptsim_yaml_item(const PtsimYamlDoc *doc, int node, int i) {
  const yaml_node_t *n = node_at(doc, node);
  if (!n || n->type != YAML_SEQUENCE_NODE || i < 0 || i >= ptsim_yaml_count(doc, node)) return 0;
  return n->data.sequence.items.start[i];
}

void ptsim_yaml_pair(const PtsimYamlDoc *doc, int node, int i, int *key, int *value) {
  const yaml_node_t *n = node_at(doc, node);
  *key = *value = 0;
  if (!n || n->type != YAML_MAPPING_NODE || i < 0 || i >= ptsim_yaml_count(doc, node)) return;
  *key = n->data.mapping.pairs.start[i].key;
  *value = n->data.mapping.pairs.start[i].value;
}

int ptsim_yaml_get(const PtsimYamlDoc *doc, int mapping, const char *key) {
  int n = ptsim_yaml_kind(doc, mapping) == PTSIM_YAML_MAPPING ? ptsim_yaml_count(doc, mapping) : 0;
  for (int i = 0; i < n; i++) {
    int k, v;
    ptsim_yaml_pair(doc, mapping, i, &k, &v);
    const char *text = ptsim_yaml_text(doc, k);
    if (text && strcmp(text, key) == 0) return v;
  }
  return 0;
}

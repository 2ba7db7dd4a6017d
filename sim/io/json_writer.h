/* json_writer.h — a tiny streaming JSON writer over a GString.
 *
 * It only writes: keys in the order given, commas and nesting handled, strings
 * escaped, doubles printed with 17 significant digits (round-trip exact) and
 * non-finite values as null.  It is not a parser and does not validate that
 * keys are unique. */
#ifndef PTSIM_JSON_WRITER_H
#define PTSIM_JSON_WRITER_H

#include <glib.h>
#include <stdint.h>

#define PTSIM_JSON_MAX_DEPTH 32

typedef struct {
  GString *out; /* (transfer none) */
  int depth;
  gboolean has_items[PTSIM_JSON_MAX_DEPTH]; /* a comma is due at this level */
} PtsimJson;

void ptsim_json_init(PtsimJson *json, GString *out);
/* key may be NULL inside arrays and at the top level. */
void ptsim_json_begin_object(PtsimJson *json, const char *key);
void ptsim_json_end_object(PtsimJson *json);
void ptsim_json_begin_array(PtsimJson *json, const char *key);
void ptsim_json_end_array(PtsimJson *json);
void ptsim_json_int(PtsimJson *json, const char *key, int64_t value);
void ptsim_json_double(PtsimJson *json, const char *key, double value);
void ptsim_json_bool(PtsimJson *json, const char *key, gboolean value);
void ptsim_json_string(PtsimJson *json, const char *key, const char *value);
/* An absent object or value: null (never "", which reads as a string). */
void ptsim_json_null(PtsimJson *json, const char *key);

#endif /* PTSIM_JSON_WRITER_H */

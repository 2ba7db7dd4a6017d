/* toml.h — a strict reader of the TOML subset that training job configs use
 * (torchtitan's train_configs, one .toml per job): the key/value pairs of a file, each
 * with its table and line, for a reader that knows its own schema
 * (torchtitan.h).
 *
 * The subset, as TOML 1.0 spells it:
 *   [table] and [dotted.table] headers (bare keys, blanks around the dots);
 *   bare keys (A-Z a-z 0-9 _ -) on the left of '=';
 *   values: "basic strings" (escapes \" \\ \b \f \n \r \t \uXXXX
 *   \UXXXXXXXX), 'literal strings', decimal integers (sign, '_' between
 *   digits, no leading zeros), floats (fraction and/or exponent, e.g. 3e-4,
 *   1.5e-4), true / false, and arrays of one scalar type (they may span
 *   lines, with comments and a trailing comma), or of such arrays (two
 *   deep: torchtitan's module_fqns_per_model_part);
 *   '#' comments; LF or CRLF line ends; UTF-8.
 * Everything else TOML has is refused by name, at its line: inline tables,
 * arrays of tables, multi-line strings, dotted or quoted keys, dates and
 * times, hex/octal/binary integers, inf and nan, arrays three deep, mixed
 * arrays.  A key or table defined twice is an error (naming both lines), as
 * in TOML.  Why a reader of our own: Debian packages no C TOML library (toml++
 * and toml11 are C++), the subset is small, and a strict reader gives the
 * file:line errors ptsim promises; a C++ shim would add a compiler and a
 * dependency for features torchtitan's configs never use.
 *
 * Shell module (GLib).  Errors: one line, PTSIM_CONFIG_ERROR_PARSE, "FILE:
 * LINE: what is wrong (found '...'); what is allowed".  Not here: what any
 * key means (torchtitan.c). */
#ifndef PTSIM_TOML_H
#define PTSIM_TOML_H

#include <glib.h>
#include <stdint.h>

typedef enum {
  PTSIM_TOML_STRING,
  PTSIM_TOML_INTEGER,
  PTSIM_TOML_FLOAT,
  PTSIM_TOML_BOOL,
  PTSIM_TOML_ARRAY
} PtsimTomlType;

/* One value.  Arrays hold scalars of one type (item_type). */
typedef struct {
  PtsimTomlType type;
  char *string;            /* PTSIM_TOML_STRING: UTF-8, NUL-free */
  int64_t integer;         /* PTSIM_TOML_INTEGER */
  double number;           /* PTSIM_TOML_FLOAT */
  gboolean boolean;        /* PTSIM_TOML_BOOL */
  PtsimTomlType item_type; /* PTSIM_TOML_ARRAY: type of every item (STRING when empty; ARRAY:
                              arrays of scalars, each of its own item_type) */
  GPtrArray *items;        /* PTSIM_TOML_ARRAY: PtsimTomlValue* (owned) */
} PtsimTomlValue;

/* One "key = value" line of the file. */
typedef struct {
  char *table; /* "" at the top, else "a" or "a.b.c" */
  char *key;   /* the bare key */
  int line;    /* 1-based line of the key */
  PtsimTomlValue value;
} PtsimTomlEntry;

/* One [table] header of the file. */
typedef struct {
  char *name; /* "a.b.c" */
  int line;
} PtsimTomlTable;

/* A parsed file: entries and headers in file order. */
typedef struct {
  char *path;         /* as given, for messages */
  GPtrArray *entries; /* PtsimTomlEntry* (owned) */
  GPtrArray *tables;  /* PtsimTomlTable* (owned) */
} PtsimToml;

void ptsim_toml_free(PtsimToml *toml);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PtsimToml, ptsim_toml_free)

/* Parses TEXT (LEN bytes; NUL bytes are refused) read from PATH (used in
 * messages only).  (transfer full) or NULL with PTSIM_CONFIG_ERROR_PARSE. */
PtsimToml *ptsim_toml_parse(const char *path, const char *text, gsize len, GError **error);

/* Reads (input.h: capped, a folder named as such) and parses PATH.  A
 * file that cannot be read is PTSIM_CONFIG_ERROR_NOT_FOUND. */
PtsimToml *ptsim_toml_load(const char *path, GError **error);

/* The entry KEY of TABLE ("" for the top), or NULL.  (transfer none) */
const PtsimTomlEntry *ptsim_toml_lookup(const PtsimToml *toml, const char *table, const char *key);

/* The header line of TABLE, or 0 when the file has no such header. */
int ptsim_toml_table_line(const PtsimToml *toml, const char *table);

/* A config built by a reader of another form (torchtitan's Python
 * form, torchtitan_python.h): no entries, no headers.  (transfer full) */
PtsimToml *ptsim_toml_new(const char *path);

/* Appends KEY = a deep copy of VALUE to TABLE, at LINE (0: none); no
 * check for a key given twice (the caller's). */
void ptsim_toml_add(PtsimToml *toml, const char *table, const char *key, int line,
                    const PtsimTomlValue *value);

/* A deep copy of SRC into DST; what a value owns freed. */
void ptsim_toml_value_copy(PtsimTomlValue *dst, const PtsimTomlValue *src);
void ptsim_toml_value_clear(PtsimTomlValue *value);

/* The type's name as TOML users say it ("string", "integer", ...). */
const char *ptsim_toml_type_name(PtsimTomlType type);

#endif /* PTSIM_TOML_H */

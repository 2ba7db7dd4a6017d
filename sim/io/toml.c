/* toml.c — the strict TOML-subset reader; the subset and the contract are in
 * toml.h.
 *
 * One pass over the text with a cursor and a line counter; every failure
 * goes through fail(), which prefixes "PATH:LINE: ".  Tables and keys
 * already defined are kept in one hash set ("t" for a table, "t\x1fk" for a
 * key) to refuse redefinitions as TOML does.  Invariants: `line` is the
 * line of the cursor; a value never spans lines except an array. */
#include "toml.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "input.h"
#include "numbers.h"

#define SNIPPET_MAX 24

typedef struct {
  const char *path;
  const char *p, *end; /* cursor and end of the text */
  int line;            /* line of the cursor, 1-based */
  char *table;         /* current table ("" at the top) */
  GHashTable *defined; /* name -> GINT_TO_POINTER(line) */
  PtsimToml *out;
  GError **error;
} Parser;

/* ---- values and the result ---- */

static void value_clear(PtsimTomlValue *v) {
  g_clear_pointer(&v->string, g_free);
  g_clear_pointer(&v->items, g_ptr_array_unref);
}

static void value_free(gpointer data) {
  PtsimTomlValue *v = data;
  value_clear(v);
  g_free(v);
}

static void entry_free(gpointer data) {
  PtsimTomlEntry *e = data;
  g_free(e->table);
  g_free(e->key);
  value_clear(&e->value);
  g_free(e);
}

static void table_free(gpointer data) {
  PtsimTomlTable *t = data;
  g_free(t->name);
  g_free(t);
}

void ptsim_toml_free(PtsimToml *toml) {
  if (toml == NULL) return;
  g_free(toml->path);
  g_ptr_array_unref(toml->entries);
  g_ptr_array_unref(toml->tables);
  g_free(toml);
}

void ptsim_toml_value_clear(PtsimTomlValue *value) { value_clear(value); }

void ptsim_toml_value_copy(PtsimTomlValue *dst, const PtsimTomlValue *src) {
  *dst = *src;
  dst->string = g_strdup(src->string);
  if (src->items == NULL) return;
  dst->items = g_ptr_array_new_with_free_func(value_free);
  for (guint i = 0; i < src->items->len; i++) {
    PtsimTomlValue *item = g_new0(PtsimTomlValue, 1);
    ptsim_toml_value_copy(item, g_ptr_array_index(src->items, i));
    g_ptr_array_add(dst->items, item);
  }
}

PtsimToml *ptsim_toml_new(const char *path) {
  PtsimToml *out = g_new0(PtsimToml, 1);
  out->path = g_strdup(path);
  out->entries = g_ptr_array_new_with_free_func(entry_free);
  out->tables = g_ptr_array_new_with_free_func(table_free);
  return out;
}

void ptsim_toml_add(PtsimToml *toml, const char *table, const char *key, int line,
                    const PtsimTomlValue *value) {
  PtsimTomlEntry *e = g_new0(PtsimTomlEntry, 1);
  e->table = g_strdup(table);
  e->key = g_strdup(key);
  e->line = line;
  ptsim_toml_value_copy(&e->value, value);
  g_ptr_array_add(toml->entries, e);
}

const char *ptsim_toml_type_name(PtsimTomlType type) {
  switch (type) {
  case PTSIM_TOML_STRING:
    return "string";
  case PTSIM_TOML_INTEGER:
    return "integer";
  case PTSIM_TOML_FLOAT:
    return "float";
  case PTSIM_TOML_BOOL:
    return "boolean";
  case PTSIM_TOML_ARRAY:
    return "array";
  }
  return "?";
}

/* ---- errors ---- */

/* The text at the cursor, up to the line end, printable ("end of file"). */
static char *snippet(const Parser *P) {
  if (P->p >= P->end) return g_strdup("end of file");
  GString *s = g_string_new("");
  for (const char *q = P->p; q < P->end && *q != '\n' && *q != '\r' && s->len < SNIPPET_MAX; q++)
    g_string_append_c(s, g_ascii_isprint(*q) || (unsigned char)*q >= 0x80 ? *q : '?');
  if (s->len == 0) g_string_append(s, "end of line");
  return g_string_free(s, FALSE);
}

static gboolean fail(Parser *P, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean fail(Parser *P, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *what = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(P->error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_PARSE, "%s:%d: %s", P->path, P->line,
              what);
  return FALSE;
}

/* "WHAT (found '...'); ALLOWED" at the cursor. */
static gboolean fail_here(Parser *P, const char *what, const char *allowed) {
  g_autofree char *found = snippet(P);
  return fail(P, "%s (found '%s'); %s", what, found, allowed);
}

/* ---- the cursor ---- */

static gboolean at_end(const Parser *P) { return P->p >= P->end; }
static char peek(const Parser *P, size_t ahead) {
  return P->p + ahead < P->end ? P->p[ahead] : '\0';
}

static void skip_blanks(Parser *P) {
  while (!at_end(P) && (*P->p == ' ' || *P->p == '\t')) P->p++;
}

static void skip_comment(Parser *P) {
  if (!at_end(P) && *P->p == '#')
    while (!at_end(P) && *P->p != '\n' && *P->p != '\r') P->p++;
}

/* Consumes one line end (LF or CRLF); a lone CR is an error. */
static gboolean newline(Parser *P, gboolean *consumed) {
  *consumed = FALSE;
  if (at_end(P)) return TRUE;
  if (*P->p == '\r') {
    if (peek(P, 1) != '\n')
      return fail_here(P, "a carriage return without a line feed", "line ends are LF or CRLF");
    P->p++;
  }
  if (*P->p == '\n') {
    P->p++;
    P->line++;
    *consumed = TRUE;
  }
  return TRUE;
}

/* Blanks, an optional comment, then the end of the line or of the file. */
static gboolean end_of_line(Parser *P) {
  gboolean consumed;
  skip_blanks(P);
  skip_comment(P);
  if (at_end(P)) return TRUE;
  if (!newline(P, &consumed)) return FALSE;
  if (!consumed)
    return fail_here(P, "text after the value", "expected a comment ('#') or the end of the line");
  return TRUE;
}

static gboolean is_bare(char c) { return g_ascii_isalnum(c) || c == '_' || c == '-'; }

/* A bare key at the cursor.  (transfer full) or NULL. */
static char *bare_key(Parser *P, const char *where) {
  if (!at_end(P) && (*P->p == '"' || *P->p == '\'')) {
    fail_here(P, "quoted keys are outside the TOML subset ptsim reads",
              "write the key bare (letters, digits, '_', '-')");
    return NULL;
  }
  const char *start = P->p;
  while (!at_end(P) && is_bare(*P->p)) P->p++;
  if (P->p == start) {
    g_autofree char *allowed = g_strdup_printf("expected %s", where);
    fail_here(P, "no key", allowed);
    return NULL;
  }
  return g_strndup(start, (gsize)(P->p - start));
}

/* ---- strings ---- */

static gboolean control_char(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

/* \uXXXX or \UXXXXXXXX after the backslash and letter: appends the UTF-8. */
static gboolean unicode_escape(Parser *P, int digits, GString *s) {
  gunichar u = 0;
  for (int i = 0; i < digits; i++) {
    int d = g_ascii_xdigit_value(peek(P, (size_t)i));
    if (d < 0)
      return fail_here(P, "a \\u or \\U escape without its hex digits",
                       "expected \\uXXXX or \\UXXXXXXXX");
    u = u * 16 + (gunichar)d;
  }
  if (u == 0 || !g_unichar_validate(u))
    return fail_here(P, "an escape that is not a Unicode scalar value (or is NUL)",
                     "expected a code point from U+0001");
  char buf[8];
  g_string_append_len(s, buf, g_unichar_to_utf8(u, buf));
  P->p += digits;
  return TRUE;
}

/* A "basic" or 'literal' string; the cursor is on its opening quote. */
static gboolean string_value(Parser *P, PtsimTomlValue *v) {
  char quote = *P->p;
  if (peek(P, 1) == quote && peek(P, 2) == quote)
    return fail_here(P, "multi-line strings are outside the TOML subset ptsim reads",
                     "write the string on one line");
  P->p++;
  g_autoptr(GString) s = g_string_new("");
  for (;;) {
    if (at_end(P) || *P->p == '\n' || *P->p == '\r')
      return fail_here(P, "an unterminated string", "close it on the same line");
    char c = *P->p;
    if (c == quote) {
      P->p++;
      break;
    }
    if (control_char((unsigned char)c))
      return fail_here(P, "a control character inside a string",
                       "use an escape such as \\t or \\n");
    if (quote == '"' && c == '\\') {
      char e = peek(P, 1);
      P->p += 2;
      switch (e) {
      case '"':
        g_string_append_c(s, '"');
        break;
      case '\\':
        g_string_append_c(s, '\\');
        break;
      case 'b':
        g_string_append_c(s, '\b');
        break;
      case 'f':
        g_string_append_c(s, '\f');
        break;
      case 'n':
        g_string_append_c(s, '\n');
        break;
      case 'r':
        g_string_append_c(s, '\r');
        break;
      case 't':
        g_string_append_c(s, '\t');
        break;
      case 'u':
        if (!unicode_escape(P, 4, s)) return FALSE;
        break;
      case 'U':
        if (!unicode_escape(P, 8, s)) return FALSE;
        break;
      default:
        P->p -= 2;
        return fail_here(P, "an unknown escape",
                         "allowed: \\\" \\\\ \\b \\f \\n \\r \\t \\uXXXX \\UXXXXXXXX");
      }
      continue;
    }
    g_string_append_c(s, c);
    P->p++;
  }
  v->type = PTSIM_TOML_STRING;
  v->string = g_string_free(g_steal_pointer(&s), FALSE);
  return TRUE;
}

/* ---- numbers and booleans ---- */

/* Digits with '_' only between two digits, from *i; at least one digit. */
static gboolean digits(const char *t, size_t n, size_t *i) {
  size_t start = *i;
  while (*i < n && (g_ascii_isdigit(t[*i]) || t[*i] == '_')) {
    if (t[*i] == '_' &&
        (*i == start || *i + 1 >= n || !g_ascii_isdigit(t[*i + 1]) || !g_ascii_isdigit(t[*i - 1])))
      return FALSE;
    (*i)++;
  }
  return *i > start;
}

/* A decimal integer or float token (TOML's grammar, underscores removed
 * before conversion). */
static gboolean number_value(Parser *P, const char *t, size_t n, PtsimTomlValue *v) {
  static const char allowed[] =
      "expected a decimal integer (e.g. -1, 8192) or a float (e.g. 3e-4, 0.95)";
  size_t i = 0;
  gboolean is_float = FALSE;
  if (i < n && (t[i] == '+' || t[i] == '-')) i++;
  if (i + 1 < n && t[i] == '0' && strchr("xXoObB", t[i + 1]) && t[i + 1] != '\0')
    return fail_here(P, "hex, octal and binary integers are outside the TOML subset ptsim reads",
                     allowed);
  size_t int_start = i;
  if (!digits(t, n, &i)) return fail_here(P, "not a number", allowed);
  if (t[int_start] == '0' && i - int_start > 1)
    return fail_here(P, "a number with a leading zero", allowed);
  if (i < n && t[i] == '.') {
    i++;
    if (!digits(t, n, &i)) return fail_here(P, "a float without digits after '.'", allowed);
    is_float = TRUE;
  }
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    i++;
    if (i < n && (t[i] == '+' || t[i] == '-')) i++;
    if (!digits(t, n, &i)) return fail_here(P, "a float without exponent digits", allowed);
    is_float = TRUE;
  }
  if (i != n) return fail_here(P, "not a number", allowed);
  g_autoptr(GString) clean = g_string_sized_new(n);
  for (size_t k = 0; k < n; k++)
    if (t[k] != '_') g_string_append_c(clean, t[k]);
  /* the grammar is checked above; the one strict parser converts (finite,
   * no overflow) */
  if (is_float) {
    double d = 0;
    if (!ptsim_number_parse_double(clean->str, &d))
      return fail_here(P, "a float out of range", allowed);
    v->type = PTSIM_TOML_FLOAT;
    v->number = d;
  } else {
    int64_t x = 0;
    if (!ptsim_number_parse_int64(clean->str, &x))
      return fail_here(P, "an integer out of the 64-bit range", allowed);
    v->type = PTSIM_TOML_INTEGER;
    v->integer = x;
  }
  P->p += n;
  return TRUE;
}

/* A scalar that is not a string: boolean or number, refusing what TOML has
 * beyond the subset by name. */
static gboolean bare_value(Parser *P, PtsimTomlValue *v) {
  const char *start = P->p;
  size_t n = 0;
  while (start + n < P->end && !strchr(" \t\r\n,]#", start[n])) n++;
  if (n == 0) return fail_here(P, "no value", "expected a string, number, boolean or array");
  g_autofree char *tok = g_strndup(start, n);
  if (strcmp(tok, "true") == 0 || strcmp(tok, "false") == 0) {
    v->type = PTSIM_TOML_BOOL;
    v->boolean = tok[0] == 't';
    P->p += n;
    return TRUE;
  }
  const char *word = tok + (tok[0] == '+' || tok[0] == '-');
  if (strcmp(word, "inf") == 0 || strcmp(word, "nan") == 0)
    return fail_here(P, "inf and nan are outside the TOML subset ptsim reads",
                     "expected a finite number");
  if (strchr(tok, ':') || (n >= 5 && g_ascii_isdigit(tok[0]) && g_ascii_isdigit(tok[1]) &&
                           g_ascii_isdigit(tok[2]) && g_ascii_isdigit(tok[3]) && tok[4] == '-'))
    return fail_here(P, "dates and times are outside the TOML subset ptsim reads",
                     "expected a string, number, boolean or array");
  if (!g_ascii_isdigit(tok[0]) && tok[0] != '+' && tok[0] != '-')
    return fail_here(P, "not a value (a bare word)",
                     "strings need quotes: \"...\" or '...'; booleans are true or false");
  return number_value(P, start, n, v);
}

/* ---- arrays ---- */

/* Blanks, comments and line ends inside an array. */
static gboolean skip_array_space(Parser *P) {
  for (;;) {
    gboolean consumed;
    skip_blanks(P);
    skip_comment(P);
    if (!newline(P, &consumed)) return FALSE;
    if (!consumed) return TRUE;
  }
}

static gboolean scalar_value(Parser *P, PtsimTomlValue *v);

/* DEPTH 0: an array, whose items may be arrays of scalars (DEPTH 1):
 * torchtitan's module_fqns_per_model_part, list[list[str]]. */
static gboolean array_value(Parser *P, PtsimTomlValue *v, int depth) {
  int open_line = P->line;
  P->p++; /* '[' */
  v->type = PTSIM_TOML_ARRAY;
  v->item_type = PTSIM_TOML_STRING;
  v->items = g_ptr_array_new_with_free_func(value_free);
  for (;;) {
    if (!skip_array_space(P)) return FALSE;
    if (at_end(P)) break;
    if (*P->p == ']') break;
    if (*P->p == '[' && depth > 0)
      return fail_here(P,
                       "arrays nested more than two deep are outside the TOML subset ptsim "
                       "reads",
                       "expected scalar items");
    PtsimTomlValue *item = g_new0(PtsimTomlValue, 1);
    g_ptr_array_add(v->items, item);
    if (*P->p == '[' ? !array_value(P, item, depth + 1) : !scalar_value(P, item)) return FALSE;
    if (v->items->len == 1) {
      v->item_type = item->type;
    } else if (item->type != v->item_type) {
      g_autofree char *what = g_strdup_printf("an array mixing %ss and %ss",
                                              ptsim_toml_type_name(v->item_type),
                                              ptsim_toml_type_name(item->type));
      return fail(P, "%s; expected items of one type", what);
    }
    if (!skip_array_space(P)) return FALSE;
    if (!at_end(P) && *P->p == ',') {
      P->p++;
      continue;
    }
    if (at_end(P) || *P->p == ']') break;
    return fail_here(P, "an array item not followed by ',' or ']'", "separate items with commas");
  }
  if (at_end(P)) {
    P->line = open_line;
    return fail(P, "an array opened on this line is never closed; expected ']'");
  }
  P->p++; /* ']' */
  return TRUE;
}

static gboolean scalar_value(Parser *P, PtsimTomlValue *v) {
  if (at_end(P)) return fail_here(P, "no value", "expected a string, number, boolean or array");
  switch (*P->p) {
  case '"':
  case '\'':
    return string_value(P, v);
  case '{':
    return fail_here(P, "inline tables are outside the TOML subset ptsim reads",
                     "write a [table] header and its keys");
  default:
    return bare_value(P, v);
  }
}

static gboolean value(Parser *P, PtsimTomlValue *v) {
  if (!at_end(P) && *P->p == '[') return array_value(P, v, 0);
  return scalar_value(P, v);
}

/* ---- headers and key/value lines ---- */

static char *key_id(const char *table, const char *key) {
  return g_strconcat(table, "\x1f", key, NULL);
}

/* "a.b" when the key b of table a would also be the table a.b. */
static char *joined(const char *table, const char *key) {
  return table[0] ? g_strconcat(table, ".", key, NULL) : g_strdup(key);
}

static gboolean header(Parser *P) {
  P->p++; /* '[' */
  if (!at_end(P) && *P->p == '[')
    return fail_here(P, "arrays of tables ([[...]]) are outside the TOML subset ptsim reads",
                     "write a [table] header");
  g_autoptr(GString) name = g_string_new("");
  for (;;) {
    skip_blanks(P);
    g_autofree char *part = bare_key(P, "a table name inside [ ]");
    if (part == NULL) return FALSE;
    if (name->len) g_string_append_c(name, '.');
    g_string_append(name, part);
    skip_blanks(P);
    if (!at_end(P) && *P->p == '.') {
      P->p++;
      continue;
    }
    if (!at_end(P) && *P->p == ']') {
      P->p++;
      break;
    }
    return fail_here(P, "a table header not closed by ']'", "expected [name] or [dotted.name]");
  }
  gpointer first = g_hash_table_lookup(P->defined, name->str);
  if (first != NULL)
    return fail(P,
                "table [%s] is defined twice (first at line %d); TOML allows one header per table",
                name->str, GPOINTER_TO_INT(first));
  /* [a.b.c] after "b = ..." inside [a] (or "c = ..." inside [a.b]): every
   * prefix of the name must still be a table. */
  g_auto(GStrv) parts = g_strsplit(name->str, ".", -1);
  g_autoptr(GString) parent = g_string_new("");
  for (int i = 0; parts[i] != NULL; i++) {
    g_autofree char *as_key = key_id(parent->str, parts[i]);
    gpointer key_line = g_hash_table_lookup(P->defined, as_key);
    if (key_line != NULL)
      return fail(P, "table [%s] reuses the key '%s' (line %d) as a table", name->str, parts[i],
                  GPOINTER_TO_INT(key_line));
    if (parent->len) g_string_append_c(parent, '.');
    g_string_append(parent, parts[i]);
  }
  g_hash_table_insert(P->defined, g_strdup(name->str), GINT_TO_POINTER(P->line));
  PtsimTomlTable *t = g_new0(PtsimTomlTable, 1);
  t->name = g_strdup(name->str);
  t->line = P->line;
  g_ptr_array_add(P->out->tables, t);
  g_free(P->table);
  P->table = g_string_free(g_steal_pointer(&name), FALSE);
  return end_of_line(P);
}

static gboolean key_value(Parser *P) {
  int line = P->line;
  g_autofree char *key = bare_key(P, "a key, a [table] header or a comment");
  if (key == NULL) return FALSE;
  skip_blanks(P);
  if (!at_end(P) && *P->p == '.')
    return fail_here(P, "dotted keys are outside the TOML subset ptsim reads",
                     "write a [table] header and a bare key");
  if (at_end(P) || *P->p != '=') return fail_here(P, "a key without '='", "expected key = value");
  P->p++;
  skip_blanks(P);
  PtsimTomlEntry *e = g_new0(PtsimTomlEntry, 1);
  e->table = g_strdup(P->table);
  e->key = g_strdup(key);
  e->line = line;
  g_ptr_array_add(P->out->entries, e);
  if (!value(P, &e->value)) return FALSE;
  g_autofree char *id = key_id(P->table, key);
  gpointer first = g_hash_table_lookup(P->defined, id);
  if (first != NULL) {
    P->line = line;
    return fail(P, "key '%s'%s%s%s is defined twice (first at line %d)", key,
                P->table[0] ? " in [" : "", P->table, P->table[0] ? "]" : "",
                GPOINTER_TO_INT(first));
  }
  /* "k = ..." in [t] after a header [t.k] or [t.k.x] */
  g_autofree char *as_table = joined(P->table, key);
  g_autofree char *below = g_strconcat(as_table, ".", NULL);
  for (guint i = 0; i < P->out->tables->len; i++) {
    const PtsimTomlTable *t = g_ptr_array_index(P->out->tables, i);
    if (strcmp(t->name, as_table) == 0 || g_str_has_prefix(t->name, below)) {
      P->line = line;
      return fail(P, "key '%s' is already the table [%s] (line %d)", key, as_table, t->line);
    }
  }
  g_hash_table_insert(P->defined, g_steal_pointer(&id), GINT_TO_POINTER(line));
  return end_of_line(P);
}

/* NUL bytes and invalid UTF-8, named at their line. */
static gboolean check_bytes(Parser *P, const char *text, gsize len) {
  const char *bad = memchr(text, '\0', len);
  const char *invalid = NULL;
  if (!g_utf8_validate(text, (gssize)len, &invalid) && (bad == NULL || invalid < bad))
    bad = invalid;
  if (bad == NULL) return TRUE;
  for (const char *q = text; q < bad; q++)
    if (*q == '\n') P->line++;
  return fail(P, "%s",
              *bad == '\0' ? "a NUL byte; expected UTF-8 text"
                           : "bytes that are not UTF-8; expected UTF-8 text");
}

PtsimToml *ptsim_toml_parse(const char *path, const char *text, gsize len, GError **error) {
  g_return_val_if_fail(path != NULL && (text != NULL || len == 0), NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  g_autoptr(PtsimToml) out = g_new0(PtsimToml, 1);
  out->path = g_strdup(path);
  out->entries = g_ptr_array_new_with_free_func(entry_free);
  out->tables = g_ptr_array_new_with_free_func(table_free);
  Parser P = {path, text,         text + len,
              1,    g_strdup(""), g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
              out,  error};
  gboolean ok = check_bytes(&P, text ? text : "", len);
  P.line = 1;
  while (ok && !at_end(&P)) {
    gboolean consumed;
    skip_blanks(&P);
    skip_comment(&P);
    if (at_end(&P)) break;
    ok = newline(&P, &consumed);
    if (!ok || consumed) continue;
    ok = *P.p == '[' ? header(&P) : key_value(&P);
  }
  g_free(P.table);
  g_hash_table_unref(P.defined);
  return ok ? g_steal_pointer(&out) : NULL;
}

PtsimToml *ptsim_toml_load(const char *path, GError **error) {
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) local = NULL;
  if (!ptsim_input_read(path, "torchtitan config", PTSIM_INPUT_MAX_TEXT, &text, &len, &local)) {
    g_set_error(error, PTSIM_CONFIG_ERROR, PTSIM_CONFIG_ERROR_NOT_FOUND, "%s", local->message);
    return NULL;
  }
  return ptsim_toml_parse(path, text, len, error);
}

const PtsimTomlEntry *ptsim_toml_lookup(const PtsimToml *toml, const char *table, const char *key) {
  for (guint i = 0; i < toml->entries->len; i++) {
    const PtsimTomlEntry *e = g_ptr_array_index(toml->entries, i);
    if (strcmp(e->table, table) == 0 && strcmp(e->key, key) == 0) return e;
  }
  return NULL;
}

int ptsim_toml_table_line(const PtsimToml *toml, const char *table) {
  for (guint i = 0; i < toml->tables->len; i++) {
    const PtsimTomlTable *t = g_ptr_array_index(toml->tables, i);
    if (strcmp(t->name, table) == 0) return t->line;
  }
  return 0;
}

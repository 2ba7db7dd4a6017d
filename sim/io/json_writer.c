/* json_writer.c — see json_writer.h. */
#include <math.h>
#include "json_writer.h"

void ptsim_json_init(PtsimJson *json, GString *out) {
  json->out = out;
  json->depth = 0;
  json->has_items[0] = FALSE;
}

static void append_escaped(GString *out, const char *s) {
  g_string_append_c(out, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"':
      g_string_append(out, "\\\"");
      break;
    case '\\':
      g_string_append(out, "\\\\");
      break;
    case '\n':
      g_string_append(out, "\\n");
      break;
    case '\t':
      g_string_append(out, "\\t");
      break;
    case '\r':
      g_string_append(out, "\\r");
      break;
    default:
      if (*p < 0x20)
        g_string_append_printf(out, "\\u%04x", *p);
      else
        g_string_append_c(out, (char)*p);
    }
  }
  g_string_append_c(out, '"');
}

/* Comma, indentation and "key": for the next value at the current level. */
static void begin_value(PtsimJson *json, const char *key) {
  if (json->has_items[json->depth]) g_string_append_c(json->out, ',');
  if (json->depth > 0) {
    g_string_append_c(json->out, '\n');
    for (int i = 0; i < json->depth; i++) g_string_append(json->out, "  ");
  }
  json->has_items[json->depth] = TRUE;
  if (key) {
    append_escaped(json->out, key);
    g_string_append(json->out, ": ");
  }
}

static void open_level(PtsimJson *json, const char *key, char bracket) {
  begin_value(json, key);
  g_string_append_c(json->out, bracket);
  g_assert_cmpint(json->depth + 1, <, PTSIM_JSON_MAX_DEPTH);
  json->depth++;
  json->has_items[json->depth] = FALSE;
}

static void close_level(PtsimJson *json, char bracket) {
  g_assert_cmpint(json->depth, >, 0);
  gboolean had_items = json->has_items[json->depth];
  json->depth--;
  if (had_items) {
    g_string_append_c(json->out, '\n');
    for (int i = 0; i < json->depth; i++) g_string_append(json->out, "  ");
  }
  g_string_append_c(json->out, bracket);
  if (json->depth == 0) g_string_append_c(json->out, '\n');
}

void ptsim_json_begin_object(PtsimJson *json, const char *key) { open_level(json, key, '{'); }
void ptsim_json_end_object(PtsimJson *json) { close_level(json, '}'); }
void ptsim_json_begin_array(PtsimJson *json, const char *key) { open_level(json, key, '['); }
void ptsim_json_end_array(PtsimJson *json) { close_level(json, ']'); }

void ptsim_json_int(PtsimJson *json, const char *key, int64_t value) {
  begin_value(json, key);
  g_string_append_printf(json->out, "%" G_GINT64_FORMAT, (gint64)value);
}

void ptsim_json_double(PtsimJson *json, const char *key, double value) {
  begin_value(json, key);
  if (!isfinite(value)) {
    g_string_append(json->out, "null");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(json->out, g_ascii_formatd(buf, sizeof buf, "%.17g", value));
}

void ptsim_json_bool(PtsimJson *json, const char *key, gboolean value) {
  begin_value(json, key);
  g_string_append(json->out, value ? "true" : "false");
}

void ptsim_json_null(PtsimJson *json, const char *key) {
  begin_value(json, key);
  g_string_append(json->out, "null");
}

void ptsim_json_string(PtsimJson *json, const char *key, const char *value) {
  begin_value(json, key);
  append_escaped(json->out, value);
}

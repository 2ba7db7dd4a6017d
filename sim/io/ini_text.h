/* ini_text.h — the checks on an .ini file's bytes that GKeyFile does not
 * make: one encoding (UTF-8 without a byte-order mark), no NUL byte (GKeyFile
 * would cut a value short at it: "98\0 9.4" read as 98), and every section
 * and every key of a section given once (GKeyFile keeps the last silently,
 * where a typo or a pasted block should be an error, as unknown keys are).
 *
 * Shell module (GLib).  Errors: PTSIM_CONFIG_ERROR_PARSE, one line naming
 * FILE:LINE.  Not here: parsing the values (config.c, GKeyFile). */
#ifndef PTSIM_INI_TEXT_H
#define PTSIM_INI_TEXT_H

#include <glib.h>

/* Checks TEXT (LEN bytes, the file PATH as read) before GKeyFile reads it. */
gboolean ptsim_ini_text_check(const char *path, const char *text, gsize len, GError **error);

#endif /* PTSIM_INI_TEXT_H */

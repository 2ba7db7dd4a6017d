/* csv_writer.h — one CSV field as RFC 4180 quotes it: as it is, or in
 * double quotes with every quote doubled when it holds a comma, a quote or
 * a line break.  Every CSV ptsim writes quotes its text fields here; its
 * numbers need no quoting.  Sibling: csv_writer.c. */
#ifndef PTSIM_CSV_WRITER_H
#define PTSIM_CSV_WRITER_H

#include <glib.h>

/* Appends TEXT to OUT as one CSV field (no separator). */
void ptsim_csv_append_text(GString *out, const char *text);

#endif /* PTSIM_CSV_WRITER_H */

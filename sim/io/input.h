/* input.h — reading a user's input file whole, with a size cap, and the
 * record of which files this process read (so that no output replaces one).
 *
 * Shell module (GLib, POSIX).  Every reader of a user's file (.ini,
 * Megatron-LM arguments and logs, run CSVs, allocator traces, the tables
 * `ptsim plot` reads) goes through ptsim_input_read: a directory, a missing
 * file or one past its cap is one clear error naming the path, and
 * /dev/zero or a runaway log stops at the cap instead of filling memory.
 *
 * Not here: writing (output.h), parsing (each reader). */
#ifndef PTSIM_INPUT_H
#define PTSIM_INPUT_H

#include <glib.h>
#include <stdio.h>

/* Caps, in bytes.  Text the user writes by hand (an .ini, a launch script)
 * is small; logs, CSVs and traces can be long runs' worth of lines. */
#define PTSIM_INPUT_MAX_TEXT ((gsize)16 << 20) /* 16 MiB */
#define PTSIM_INPUT_MAX_TABLE ((gsize)2 << 30) /* 2 GiB */

/* Reads PATH whole into *contents (NUL-terminated; transfer full) and
 * *length (may be NULL).  WHAT names the input in messages ("model file",
 * "Megatron-LM log").  Errors, G_FILE_ERROR with one line naming WHAT and
 * PATH: no such file (NOENT), a directory (ISDIR), a device, a FIFO or a
 * socket (INVAL: only regular files are read, and a pipe this process holds
 * -- standard input's, /dev/fd/N -- since a FIFO without a writer blocks
 * forever and a device never ends), unreadable (ACCES, ...), more than
 * MAX_BYTES (FAILED, the cap in the message).  A regular file
 * read is remembered for ptsim_input_was_read. */
gboolean ptsim_input_read(const char *path, const char *what, gsize max_bytes, char **contents,
                          gsize *length, GError **error);

/* Opens PATH for a reader that streams it (a file too long to hold, read
 * a line at a time, each line bounded by the reader): the same errors as
 * ptsim_input_read but for the cap, and a regular file is remembered the
 * same way.  (transfer full: fclose) */
FILE *ptsim_input_open_stream(const char *path, const char *what, GError **error);

/* TRUE when PATH (links followed) is a file this process read with
 * ptsim_input_read or opened with ptsim_input_open_stream. */
gboolean ptsim_input_was_read(const char *path);

/* The regular files this process read whole with ptsim_input_read, one
 * "NAME sha256:HEX" each (NAME: the base name), sorted: what a result was
 * made from (a sweep's shard files record it).  Streamed inputs are not
 * in it.  (transfer full: g_strfreev) */
char **ptsim_input_digests(void);

/* The same for one call of a library in a process that read other files
 * before (a Python session's earlier models): the files the calling thread
 * reads whole from _begin to _end, which returns their lines as
 * ptsim_input_digests does and closes the capture.  A reader that keeps a
 * file's contents for the whole process (read once) calls _note with the
 * file each time it serves them, so that the file counts as read. */
void ptsim_input_capture_begin(void);
char **ptsim_input_capture_end(void);
void ptsim_input_capture_note(const char *path);

#endif /* PTSIM_INPUT_H */

/* kernel_tables_int.h — the columns of each kernel table file, shared by
 * the reader (kernel_tables.c) and the schema (kernel_tables_schema.c).
 *
 * Every file has exactly its documented columns in the documented order
 * (hw_profiles/kernels/README.md); each column is one of the types below.
 * A word column's words are in the order of the core enum it fills
 * (kernel_table.h), so a word's index is its value. */
#ifndef PTSIM_KERNEL_TABLES_INT_H
#define PTSIM_KERNEL_TABLES_INT_H

#include <glib.h>
#include "kernel_table.h"

typedef enum {
  PTSIM_KERNEL_COL_GPU,    /* the GPU the row was measured on */
  PTSIM_KERNEL_COL_WORD,   /* one of `words` */
  PTSIM_KERNEL_COL_INT,    /* a whole number in [lo, hi] */
  PTSIM_KERNEL_COL_NUM,    /* a number in (lo, hi] */
  PTSIM_KERNEL_COL_SERIES, /* the name of the source's sweep */
  PTSIM_KERNEL_COL_SOURCE, /* a key of sources.csv */
  PTSIM_KERNEL_COL_MARKER, /* how the value was taken from the source */
  PTSIM_KERNEL_COL_NOTE    /* free text, may be empty */
} PtsimKernelColumnType;

/* The values a row's logic (kernel_tables.c) reads besides the key. */
typedef enum {
  PTSIM_KERNEL_F_NONE = -1,
  PTSIM_KERNEL_F_GROUPS = 0,
  PTSIM_KERNEL_F_M,
  PTSIM_KERNEL_F_N,
  PTSIM_KERNEL_F_K,
  PTSIM_KERNEL_F_TFLOPS,
  PTSIM_KERNEL_F_MASK,
  PTSIM_KERNEL_F_WINDOW,
  PTSIM_KERNEL_F_LAYOUT,
  PTSIM_KERNEL_F_SEQ,
  PTSIM_KERNEL_F_ROWS,
  PTSIM_KERNEL_F_COLS,
  PTSIM_KERNEL_F_BYTES,
  PTSIM_KERNEL_F_TIME_US,
  PTSIM_KERNEL_F_GBPS,
  PTSIM_KERNEL_F_COLLECTIVE,
  PTSIM_KERNEL_F_RANKS,
  PTSIM_KERNEL_F_NODES,
  PTSIM_KERNEL_F_BUSBW,
  PTSIM_KERNEL_F_EP_RANKS,
  PTSIM_KERNEL_F_BANDWIDTH,
  PTSIM_KERNEL_F_LATENCY,
  PTSIM_KERNEL_F_COUNT
} PtsimKernelField;

typedef struct {
  const char *name; /* the header's name for it */
  PtsimKernelColumnType type;
  const char *const *words; /* WORD: the allowed words, NULL-terminated */
  int slot;                 /* the curve key slot it fills, or -1 */
  PtsimKernelField field;   /* the row value it fills, or PTSIM_KERNEL_F_NONE */
  double lo, hi;            /* INT: [lo, hi]; NUM: (lo, hi] */
  gboolean optional;        /* an empty cell is allowed (slot: 0, field: absent) */
} PtsimKernelColumn;

typedef struct {
  PtsimKernelKind kind;
  const char *file;   /* "gemm.csv" */
  const char *x_name; /* what the curve's x is, for messages */
  const PtsimKernelColumn *columns;
  guint n_columns;
} PtsimKernelSchema;

/* The schema of KIND (0 <= kind < PTSIM_KERNEL_KIND_COUNT).  (transfer none) */
const PtsimKernelSchema *ptsim_kernel_schema(PtsimKernelKind kind);

/* The markers, NULL-terminated: read, plot, derived, 3rd-party. */
extern const char *const ptsim_kernel_markers[];

/* "a|b|c" for a NULL-terminated word list.  (transfer full) */
char *ptsim_kernel_words_allowed(const char *const *words);

#endif /* PTSIM_KERNEL_TABLES_INT_H */

/* scratch.h — how the core lays out the scratch memory its callers hand in
 * (the core allocates nothing): a module sizes its pieces and carves them
 * out of one buffer in order, each piece starting at a multiple of 8 bytes
 * (every piece holds int64, double or smaller scalars), and the batch's
 * per-layout structs at multiples of 16.  Sizing and carving both go
 * through ptsim_scratch_align, so they agree.
 *
 * Core header (plain C, PTSIM_HD). */
#ifndef PTSIM_SCRATCH_H
#define PTSIM_SCRATCH_H

#include <stdint.h>
#include "hd.h"

/* BYTES rounded up to a multiple of TO (a power of two). */
PTSIM_HD static inline int64_t ptsim_scratch_align(int64_t bytes, int64_t to) {
  return (bytes + to - 1) & ~(to - 1);
}

#endif /* PTSIM_SCRATCH_H */

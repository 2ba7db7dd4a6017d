/* hd.h — what lets core code compile for both CPU and GPU.
 *
 * Core files (memory, cost, schedule, engine, alloc) mark every function
 * PTSIM_HD.  Under nvcc it expands to __device__, so the CUDA batch
 * evaluator compiles the very same source the CPU path runs; under a C
 * compiler it expands to nothing.  The host's copy of the core is gcc's
 * alone (nvcc would only compile a second, unused one): host code in a .cu
 * file calls no core function, and what the host must know about a batch
 * (its scratch per thread) the C caller computes.  Core code keeps to the C/C++ common
 * subset: no GLib, no malloc, no VLAs, no compound literals, no designated
 * initialisers, explicit casts.
 *
 * ptsim_hd_memmove: the C library's memmove has no device version.
 *
 * This is not a portability layer for anything else. */
#ifndef PTSIM_HD_H
#define PTSIM_HD_H

#include <stddef.h>
#include <string.h>

#ifdef __CUDACC__
#define PTSIM_HD __device__
#else
#define PTSIM_HD
#endif

/* memmove(dst, src, n) on the host; on the device a byte loop in the
 * direction that overlapping ranges need. */
PTSIM_HD static inline void ptsim_hd_memmove(void *dst, const void *src, size_t n) {
#ifdef __CUDA_ARCH__
  unsigned char *d = (unsigned char *)dst;
  const unsigned char *s = (const unsigned char *)src;
  size_t i;
  if (d < s)
    for (i = 0; i < n; i++) d[i] = s[i];
  else
    for (i = n; i > 0; i--) d[i - 1] = s[i - 1];
#else
  memmove(dst, src, n);
#endif
}

#endif /* PTSIM_HD_H */

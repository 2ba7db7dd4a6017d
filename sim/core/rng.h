/* rng.h — the random numbers of Monte-Carlo runs: Philox4x32-10.
 *
 * A counter-based generator (Salmon, Moraes, Dror, Shaw, "Parallel random
 * numbers: as easy as 1, 2, 3", SC'11): 10 rounds of the Philox S-box over a
 * 128-bit counter with a 64-bit key.  One stream per (layout, sample): key =
 * seed, counter high words = the subsequence, so streams never overlap and
 * any stream can be drawn on any thread in any order.
 *
 * On the GPU (device code under nvcc) the same functions draw from cuRAND's
 * Philox4_32_10 generator (curand_init(seed, subsequence, 0)), as the sweep
 * issue asks; on the CPU from the implementation below.  The two are the
 * same algorithm family but not guaranteed bit-identical, so Monte-Carlo
 * results agree between CPU and GPU statistically, not exactly
 * (deterministic runs draw nothing).
 *
 * Normals: Box-Muller on two uniforms in (0, 1].
 * Core module: PTSIM_HD, header-only, no allocation. */
#ifndef PTSIM_RNG_H
#define PTSIM_RNG_H

#include <math.h>
#include <stdint.h>
#include "hd.h"

#if defined(__CUDACC__)
#include <curand_kernel.h>
#endif

typedef struct {
  uint32_t counter[4];
  uint32_t key[2];
  uint32_t out[4]; /* the current block of 4 outputs */
  int32_t used;    /* outputs of `out` consumed (4: draw a new block) */
#if defined(__CUDACC__)
  curandStatePhilox4_32_10_t curand;
#endif
} PtsimRng;

static PTSIM_HD inline void ptsim_rng_mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo) {
  uint64_t p = (uint64_t)a * (uint64_t)b;
  *hi = (uint32_t)(p >> 32);
  *lo = (uint32_t)p;
}

/* One Philox4x32-10 block: out = bijection(counter; key). */
static PTSIM_HD inline void ptsim_rng_block(const uint32_t counter[4], const uint32_t key[2],
                                            uint32_t out[4]) {
  uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  uint32_t k0 = key[0], k1 = key[1];
  int round;
  for (round = 0; round < 10; round++) {
    uint32_t hi0, lo0, hi1, lo1;
    ptsim_rng_mulhilo(0xD2511F53u, c0, &hi0, &lo0);
    ptsim_rng_mulhilo(0xCD9E8D57u, c2, &hi1, &lo1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

static PTSIM_HD inline void ptsim_rng_init(PtsimRng *r, uint64_t seed, uint64_t subsequence) {
  r->key[0] = (uint32_t)seed;
  r->key[1] = (uint32_t)(seed >> 32);
  r->counter[0] = r->counter[1] = 0;
  r->counter[2] = (uint32_t)subsequence;
  r->counter[3] = (uint32_t)(subsequence >> 32);
  r->used = 4;
#if defined(__CUDA_ARCH__)
  curand_init((unsigned long long)seed, (unsigned long long)subsequence, 0ULL, &r->curand);
#endif
}

/* Uniform in (0, 1]. */
static PTSIM_HD inline double ptsim_rng_uniform(PtsimRng *r) {
#if defined(__CUDA_ARCH__)
  return (double)curand_uniform_double(&r->curand);
#else
  if (r->used == 4) {
    ptsim_rng_block(r->counter, r->key, r->out);
    if (++r->counter[0] == 0) ++r->counter[1];
    r->used = 0;
  }
  return ((double)r->out[r->used++] + 1.0) / 4294967296.0;
#endif
}

/* Standard normal. */
static PTSIM_HD inline double ptsim_rng_normal(PtsimRng *r) {
#if defined(__CUDA_ARCH__)
  return (double)curand_normal_double(&r->curand);
#else
  double u1 = ptsim_rng_uniform(r), u2 = ptsim_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
#endif
}

#endif /* PTSIM_RNG_H */

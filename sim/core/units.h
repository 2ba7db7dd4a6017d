/* units.h — the unit conversions every layer shares, one home each:
 * simulated time is integer nanoseconds (PtsimTime, event_queue.h) and
 * results are seconds; memory is printed in GiB and MiB (2^30, 2^20 bytes:
 * ARCHITECTURE.md's conventions); rates in TFLOP/s.  Both directions of
 * the time conversion are here because x * 1e-9 and x / 1e9 round
 * differently, and each caller keeps the one it has always used.
 *
 * Core header (plain C, usable from every layer). */
#ifndef PTSIM_UNITS_H
#define PTSIM_UNITS_H

#define PTSIM_NS_PER_S 1e9
#define PTSIM_S_PER_NS 1e-9
#define PTSIM_MIB_BYTES 1048576.0    /* 2^20 */
#define PTSIM_GIB_BYTES 1073741824.0 /* 2^30 */
#define PTSIM_FLOPS_PER_TFLOPS 1e12

#endif /* PTSIM_UNITS_H */

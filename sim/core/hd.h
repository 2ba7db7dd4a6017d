/* hd.h — the one macro that lets core code compile for both CPU and GPU.
 *
 * Core files (memory, cost, schedule, engine, alloc) mark every function
 * PTSIM_HD.  Under nvcc it expands to __host__ __device__, so the CUDA batch
 * evaluator compiles the very same source the CPU path runs; under a C
 * compiler it expands to nothing.  Core code keeps to the C/C++ common
 * subset: no GLib, no malloc, no VLAs, no compound literals, no designated
 * initialisers, explicit casts.
 *
 * This is not a portability layer for anything else. */
#ifndef PTSIM_HD_H
#define PTSIM_HD_H

#ifdef __CUDACC__
#define PTSIM_HD __host__ __device__
#else
#define PTSIM_HD
#endif

#endif /* PTSIM_HD_H */

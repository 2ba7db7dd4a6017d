/* alloc_replay_cmd.h — `ptsim alloc-replay TRACE`: replays a plain-text
 * allocator trace (alloc_trace_io.h; validate/snapshot_to_trace.py writes
 * one from a PyTorch memory snapshot) through the caching-allocator
 * emulation and prints its peaks, fragmentation and first OOM; when the
 * trace carries "# reserved N" observations of the real allocator, also how
 * far the emulated reserved bytes are from them.
 *
 * Shell module.  Exit codes: 0 ok, 2 bad input (one line naming the file
 * and line, or the flag), 1 internal failure. */
#ifndef PTSIM_ALLOC_REPLAY_CMD_H
#define PTSIM_ALLOC_REPLAY_CMD_H

int ptsim_alloc_replay_main(int argc, char **argv);

#endif /* PTSIM_ALLOC_REPLAY_CMD_H */

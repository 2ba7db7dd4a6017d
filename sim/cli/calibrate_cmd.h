/* calibrate_cmd.h — `ptsim calibrate`: a hardware profile with its
 * [efficiency] group replaced by measured values (the file
 * validate/short_run/gemm_bench writes), checked by loading it back. */
#ifndef PTSIM_CALIBRATE_CMD_H
#define PTSIM_CALIBRATE_CMD_H

int ptsim_calibrate_main(int argc, char **argv);

#endif /* PTSIM_CALIBRATE_CMD_H */

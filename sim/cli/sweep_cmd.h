/* sweep_cmd.h — `ptsim sweep`: options, progress, the ranked table, CSV.
 * Also the default job (`ptsim` with no command), a small sweep. */
#ifndef PTSIM_SWEEP_CMD_H
#define PTSIM_SWEEP_CMD_H

int ptsim_sweep_main(int argc, char **argv);
int ptsim_sweep_default_job(void);

#endif /* PTSIM_SWEEP_CMD_H */

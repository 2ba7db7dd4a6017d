/* main.c — the ptsim command: subcommand dispatch only. */
#include <stdio.h>
#include <string.h>
#include "gpu.h"

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--version") == 0) {
    g_autofree char *gpu = ptsim_gpu_describe();
    printf("ptsim %s\n%s\n", PTSIM_VERSION, gpu);
    return 0;
  }
  return 0;
}

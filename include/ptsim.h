/* ptsim.h — the public C API of libptsim: load a model and a hardware
 * profile, build a job (from the flags `ptsim predict` takes, a Megatron-LM
 * command line or launch script, a torchtitan config), predict its step
 * time and memory, sweep every layout of a scenario.  The ptsim command is
 * built on it (sim/cli/main.c), and a binding (Python's) is meant to be a
 * thin layer over it.
 *
 * Same answers as the command: a job built here from the flags that
 * `ptsim predict` is given is the job the command builds, and
 * ptsim_api_result_json() returns the very bytes that
 * `ptsim predict --format json` (or `ptsim memory --format json`) prints; a
 * sweep's rows are the rows `ptsim sweep --csv FILE` writes, column for
 * column.  Errors carry the line the command prints after "ptsim COMMAND: ".
 *
 * Standalone: this header includes only standard C headers, and links
 * against libptsim alone (cc prog.c -lptsim).
 *
 * ---- Names ----
 * Every public name carries the word "api": functions ptsim_api_*, types
 * PtsimApi*, constants PTSIM_API_* (besides the version macros
 * PTSIM_VERSION_* and PTSIM_PUBLIC, the export mark).
 * The library's internal code uses ptsim_*, Ptsim* and PTSIM_* for its own
 * modules (ptsim_model_load, PtsimJob, ...), and the command and the tests
 * call some of them; the extra word keeps the two apart for good, so that
 * an internal module can be renamed or split without ever clashing with, or
 * being mistaken for, the contract, and a reader of the command sees at a
 * glance which calls go through it.  The style is the project's own (GLib's:
 * CamelCase types, lower_case functions).
 *
 * ---- Conventions (every function below) ----
 * Objects are opaque.  An object a function returns is the caller's, to
 * release with its _free function; every _free accepts NULL.  A string or
 * array an accessor returns belongs to the object it came from and lives
 * as long as it does.  Text is UTF-8 (JSON, messages), except paths, which
 * are the system's bytes.
 *
 * Flags are an argv-style array: the words of ptsim's command line after
 * the command's name, one element per word ("--tp", "8" or "--tp=8"),
 * terminated by NULL; an empty array ({NULL}) means every default.  They
 * are read as the command reads them (the locale's character set, as
 * GOption converts it: UTF-8 in a UTF-8 or C.UTF-8 locale).
 *
 * Errors: the last argument of a function that can fail is
 * `PtsimApiError **error`.  Pass NULL to ignore the reason, or the address
 * of a NULL pointer: on failure the function returns NULL (objects) or -1
 * (status) and sets *error to a new error that the caller frees.  Nothing
 * is printed, and no input makes a function crash or exit.
 *
 * Threads: no call's result depends on global state (there is no "last
 * error"; the one process-wide record, guarded, is the set of files read,
 * so that an output never overwrites an input of the same process):
 * calls on different objects may run at once on any threads, and so may
 * calls that only read one object (every function taking a const pointer:
 * a loaded model, hardware profile or job may serve many threads' jobs and
 * predictions at once).  A function taking a non-const pointer (the
 * _free functions) needs that object to itself.  Callbacks run on the
 * thread that called the function.
 *
 * Data: models and hardware profiles are looked up by name in the folder
 * $PTSIM_DATA_DIR when it is set, else in the installed data next to the
 * library (PREFIX/share/ptsim when libptsim is PREFIX/lib/libptsim.so), else
 * in the source tree it was built from; a name with a '/' or ending in
 * ".ini" is a file.
 *
 * ---- Stability ----
 * PTSIM_VERSION_MAJOR is the shared library's SONAME version
 * (libptsim.so.MAJOR): within one major version, functions and enum values
 * are only added, never changed or removed, the JSON documents only gain
 * keys, and a sweep row only gains columns, at its end. */
#ifndef PTSIM_H
#define PTSIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; the build takes the project's version from
 * these three lines (CMakeLists.txt). */
#define PTSIM_VERSION_MAJOR 0
#define PTSIM_VERSION_MINOR 1
#define PTSIM_VERSION_PATCH 0

#define PTSIM_VERSION_STRINGIFY_(x) #x
#define PTSIM_VERSION_STRINGIFY(x) PTSIM_VERSION_STRINGIFY_(x)
/* "MAJOR.MINOR.PATCH" */
#define PTSIM_VERSION_STRING                   \
  PTSIM_VERSION_STRINGIFY(PTSIM_VERSION_MAJOR) \
  "." PTSIM_VERSION_STRINGIFY(PTSIM_VERSION_MINOR) "." PTSIM_VERSION_STRINGIFY(PTSIM_VERSION_PATCH)
/* One number that orders versions: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define PTSIM_VERSION_NUMBER \
  (PTSIM_VERSION_MAJOR * 10000 + PTSIM_VERSION_MINOR * 100 + PTSIM_VERSION_PATCH)

/* Every public function is exported from the shared library. */
#if defined(__GNUC__)
#define PTSIM_PUBLIC __attribute__((visibility("default")))
#else
#define PTSIM_PUBLIC
#endif

/* ---- version of the library loaded ---- */

/* The library's PTSIM_VERSION_NUMBER, which may differ from the header's a
 * program was compiled with: a caller checks that the major versions agree
 * (ptsim_api_version() / 10000 == PTSIM_VERSION_MAJOR). */
PTSIM_PUBLIC int ptsim_api_version(void);

/* The library's PTSIM_VERSION_STRING ("0.1.0"); static storage. */
PTSIM_PUBLIC const char *ptsim_api_version_string(void);

/* ---- errors ---- */

typedef enum {
  /* The input is wrong: an unknown model, a bad flag or value, a layout that
   * cannot run, a malformed file.  The command exits 2. */
  PTSIM_API_ERROR_INPUT = 1,
  /* Something failed that the input does not explain (a write, a resource);
   * the command exits 1. */
  PTSIM_API_ERROR_INTERNAL = 2,
  /* The GPU path was asked for (--device gpu) and there is none usable:
   * not compiled in, no device, no driver.  The command exits 2. */
  PTSIM_API_ERROR_GPU_UNAVAILABLE = 3,
  /* A callback asked to stop (ptsim_api_sweep). */
  PTSIM_API_ERROR_STOPPED = 4
} PtsimApiErrorCode;

typedef struct PtsimApiError PtsimApiError;

/* What kind of failure. */
PTSIM_PUBLIC PtsimApiErrorCode ptsim_api_error_code(const PtsimApiError *error);

/* The message the command prints after "ptsim COMMAND: ": one line naming
 * the flag, file (file:line) or value and what is allowed (a sweep without
 * any valid layout adds its rejection reasons, one line each). */
PTSIM_PUBLIC const char *ptsim_api_error_message(const PtsimApiError *error);

/* The exit status the command gives this error: 2 for bad input and an
 * unusable GPU, 1 otherwise (a refused output path is bad input). */
PTSIM_PUBLIC int ptsim_api_error_exit_status(const PtsimApiError *error);

/* Warnings the inputs gave before the failure (a torchtitan config's), as
 * ptsim_api_job_diagnostic() gives them; the command prints them before
 * the error. */
PTSIM_PUBLIC size_t ptsim_api_error_diagnostic_count(const PtsimApiError *error);
PTSIM_PUBLIC const char *ptsim_api_error_diagnostic(const PtsimApiError *error, size_t i);

PTSIM_PUBLIC void ptsim_api_error_free(PtsimApiError *error);

/* ---- models and hardware profiles ---- */

typedef struct PtsimApiModel PtsimApiModel;
typedef struct PtsimApiHardware PtsimApiHardware;

/* A model: a name from the data folder's models/ ("llama3-70b") or an .ini
 * file, read and checked as --model reads it.  Errors: INPUT (unknown name,
 * missing file, a bad key or value, naming the file and line). */
PTSIM_PUBLIC PtsimApiModel *ptsim_api_model_load(const char *name_or_path, PtsimApiError **error);
/* Its name (the file's `name` key, else the file name without ".ini"). */
PTSIM_PUBLIC const char *ptsim_api_model_name(const PtsimApiModel *model);
PTSIM_PUBLIC void ptsim_api_model_free(PtsimApiModel *model);

/* A hardware profile: a name from hw_profiles/ ("h100-80g") or an .ini
 * file, as --hw reads it.  Errors: INPUT. */
PTSIM_PUBLIC PtsimApiHardware *ptsim_api_hardware_load(const char *name_or_path,
                                                       PtsimApiError **error);
PTSIM_PUBLIC const char *ptsim_api_hardware_name(const PtsimApiHardware *hw);
PTSIM_PUBLIC void ptsim_api_hardware_free(PtsimApiHardware *hw);

/* ---- jobs ---- */

typedef struct PtsimApiJob PtsimApiJob;

/* A job (model, hardware, layout, batch, settings), resolved and checked:
 * the job `ptsim predict FLAGS` and `ptsim memory FLAGS` build.  FLAGS are
 * the job's flags (everything `ptsim predict --help` lists but --format and
 * the prediction's own options, which ptsim_api_predict takes), e.g.
 *   {"--model", "llama3-70b", "--gpus", "64", "--tp", "8", "--pp", "4", NULL}
 * and the other inputs are flags too, with job flags on top of them:
 *   {"--megatron-args", "torchrun ... pretrain_gpt.py --tensor-model-parallel-size 8 ...", NULL}
 *   {"--megatron-args-file", "train_llama3_8b.sh", "--gpus", "64", NULL}
 *   {"--torchtitan", "llama3_8b.toml", "--gpus", "16", NULL}
 * MODEL and HW (each may be NULL) are loaded ones to use instead of --model
 * and --hw (giving both a loaded one and the flag is an error); they are
 * copied, so they may be freed at once.  Errors: INPUT (a flag, value,
 * file or layout, as the command says it). */
PTSIM_PUBLIC PtsimApiJob *ptsim_api_job_new(const char *const *flags, const PtsimApiModel *model,
                                            const PtsimApiHardware *hw, PtsimApiError **error);
PTSIM_PUBLIC void ptsim_api_job_free(PtsimApiJob *job);

/* What building the job found besides it, in the order found.  Each is a
 * line as the command prints it after its prefix: */
typedef enum {
  /* a warning about an input file (a torchtitan config's "warning:
   * FILE:LINE: ..."); the command prints "ptsim: LINE" */
  PTSIM_API_DIAGNOSTIC_INPUT = 1,
  /* what a Megatron-LM command line said: "warning: not modelled, so the
   * prediction may be off: ...", "not Megatron-LM flags, ignored: ...",
   * "note: ..."; the command prints "ptsim COMMAND: LINE" */
  PTSIM_API_DIAGNOSTIC_MEGATRON = 2
} PtsimApiDiagnosticKind;

PTSIM_PUBLIC size_t ptsim_api_job_diagnostic_count(const PtsimApiJob *job);
/* Line I (< the count; NULL past it); *kind (may be NULL) receives its kind. */
PTSIM_PUBLIC const char *ptsim_api_job_diagnostic(const PtsimApiJob *job, size_t i,
                                                  PtsimApiDiagnosticKind *kind);

/* ---- predictions ---- */

typedef struct PtsimApiResult PtsimApiResult;

/* The prediction `ptsim predict` makes: the analytical memory estimate, the
 * caching-allocator emulation and the simulated step.  OPTIONS (NULL: none)
 * are predict's own flags besides the job's and --format:
 *   --ce last-stage|every-stage    where the fp32 logits term is charged
 *   --alloc-conf CONF              PYTORCH_CUDA_ALLOC_CONF for the emulation
 *   --no-allocator                 no emulation (no allocator keys)
 *   --no-shortcut                  simulate every event (the same result)
 *   --trace FILE.json [--trace-steps N]   write a Perfetto trace
 *   --memory-timeline FILE.tsv     write allocated/reserved over time
 * Errors: INPUT (an option; a layout the engine cannot schedule; an output
 * path the policy refuses), INTERNAL (a failed write). */
PTSIM_PUBLIC PtsimApiResult *ptsim_api_predict(const PtsimApiJob *job, const char *const *options,
                                               PtsimApiError **error);

/* The analytical memory estimate alone, as `ptsim memory`; OPTIONS: --ce
 * only.  Errors: INPUT. */
PTSIM_PUBLIC PtsimApiResult *ptsim_api_memory(const PtsimApiJob *job, const char *const *options,
                                              PtsimApiError **error);

/* The whole result as `ptsim predict --format json` (or `ptsim memory
 * --format json`) prints it, byte for byte (newline-terminated UTF-8); its
 * length in *length when LENGTH is not NULL.  Keys are documented in
 * README.md. */
PTSIM_PUBLIC const char *ptsim_api_result_json(const PtsimApiResult *result, size_t *length);

/* The main numbers (NaN where the result has none: no time in a memory
 * result, no emulation with --no-allocator). */
PTSIM_PUBLIC double ptsim_api_result_step_s(const PtsimApiResult *result);       /* time.step_s */
PTSIM_PUBLIC double ptsim_api_result_tokens_per_s(const PtsimApiResult *result); /* whole job */
PTSIM_PUBLIC double ptsim_api_result_tflops_per_gpu(const PtsimApiResult *result);
PTSIM_PUBLIC double ptsim_api_result_mfu(const PtsimApiResult *result);
/* memory.total_bytes: the analytical estimate of the fullest stage */
PTSIM_PUBLIC double ptsim_api_result_memory_bytes(const PtsimApiResult *result);
/* memory.capacity_bytes: one GPU's memory */
PTSIM_PUBLIC double ptsim_api_result_capacity_bytes(const PtsimApiResult *result);
/* memory.allocator.device_peak_bytes: the emulation's peak, with the CUDA
 * context and NCCL buffers */
PTSIM_PUBLIC double ptsim_api_result_device_peak_bytes(const PtsimApiResult *result);

/* The verdicts: 1 yes, 0 no, -1 not computed.  fits: the analytical
 * estimate within the memory threshold (the 80% rule, memory.fits); runs:
 * the allocator emulation's verdict (memory.allocator.runs). */
PTSIM_PUBLIC int ptsim_api_result_fits(const PtsimApiResult *result);
PTSIM_PUBLIC int ptsim_api_result_runs(const PtsimApiResult *result);

PTSIM_PUBLIC void ptsim_api_result_free(PtsimApiResult *result);

/* ---- sweeps ---- */

/* One row of a sweep: N_COLUMNS names (the sweep CSV's header) and values
 * (the row's cells as the CSV writes them: numbers in C-locale text, words
 * as words), both valid during the call only.  Return 0 to go on, anything
 * else to stop the sweep (which then fails with PTSIM_API_ERROR_STOPPED). */
typedef int (*PtsimApiRowFn)(void *user_data, size_t n_columns, const char *const *names,
                             const char *const *values);

/* Every valid layout of the scenarios FLAGS name -- the flags of
 * `ptsim sweep` (lists such as {"--model", "llama3-8b,llama3-70b",
 * "--gpus", "64,128", NULL}, the job's settings, --device, --threads, --top,
 * --samples, --allocator, --in-memory-max, ...), except its outputs (--csv,
 * --format, --figures, --shard, --merge) -- evaluated, and handed to FN one
 * row at a time: the rows `ptsim sweep FLAGS --csv FILE` writes, in its
 * order (ranked; a sweep past --in-memory-max layouts streams them in
 * enumeration order, rank 0, without holding them).  FN runs on the
 * calling thread, between evaluations (which use --threads threads, or
 * the GPU).  Returns 0, or -1 on failure.  Errors: INPUT (a flag; no valid
 * layout, with the reasons), GPU_UNAVAILABLE (--device gpu without one),
 * STOPPED (FN said stop), INTERNAL. */
PTSIM_PUBLIC int ptsim_api_sweep(const char *const *flags, PtsimApiRowFn fn, void *user_data,
                                 PtsimApiError **error);

/* ---- a sweep split over machines: shards and their merge ---- */

/* One shard of the sweep FLAGS name (ptsim_api_sweep's flags): the K-th of
 * N contiguous slices of its valid layouts in enumeration order (1 <= K <=
 * N), evaluated and written to the shard file PATH -- the file
 * `ptsim sweep FLAGS --shard K/N --csv PATH` writes, byte for byte: its
 * made-by header (ptsim's version, the flags that change a result, the
 * SHA-256 of the models and profiles this call read) and every layout's
 * exact result.  PATH goes through the command's output policy (never an
 * input of this process; written whole or not at all).  Returns the
 * layouts written, or -1.  Errors: INPUT (a flag; K/N; no valid layout; a
 * refused path), GPU_UNAVAILABLE, INTERNAL (a failed write). */
PTSIM_PUBLIC long long ptsim_api_sweep_shard(const char *const *flags, unsigned k, unsigned n,
                                             const char *path, PtsimApiError **error);

/* The sweep FLAGS name with every layout's result taken from the shard
 * files SHARDS (NULL-terminated paths, any order, made by this function's
 * sibling or by the command) instead of evaluated: the rows handed to FN
 * (which may be NULL) as ptsim_api_sweep hands them, ranked as the one
 * run ranks them, and, when CSV is not NULL, written to that file as
 * `ptsim sweep FLAGS --merge SHARDS --csv CSV` writes it, byte for byte.
 * Errors: INPUT with the command's message (a shard not made by this very
 * sweep -- other flags, an edited profile, another ptsim --, naming the
 * file, its line and the first line that differs; a missing, repeated or
 * altered layout; no valid layout), STOPPED, INTERNAL. */
PTSIM_PUBLIC int ptsim_api_sweep_merge(const char *const *flags, const char *const *shards,
                                       const char *csv, PtsimApiRowFn fn, void *user_data,
                                       PtsimApiError **error);

/* ---- figures ---- */

/* The figure `ptsim plot KIND --from FROM --out OUT OPTIONS` draws, for the
 * kinds drawn from a file: "heatmap", "pareto", "scaling" (FROM: a sweep
 * CSV, `ptsim sweep --csv`) and "validation" (FROM: a runs CSV).  OPTIONS
 * (NULL: none) are the command's for these kinds: --facet cp|mbs (heatmap),
 * --y tokens|step (scaling), --view residual|parity and --held-out SOURCE,...
 * (validation), --size column|page|WxH, and --model, --hw, --gpus, --seq,
 * --gbs to pick one scenario of a sweep CSV (heatmap, pareto).  Writes OUT
 * (.pdf, .png or .svg), its gnuplot script and its data beside it (OUT with
 * .gp and .tsv for its ending), the very files the command writes, and runs
 * gnuplot.  Returns 0, or -1.  Errors: INPUT (a kind, option or malformed
 * file, naming FILE:LINE; no such scenario), INTERNAL (gnuplot not on PATH,
 * or failing: the message says which). */
PTSIM_PUBLIC int ptsim_api_plot(const char *kind, const char *from, const char *out,
                                const char *const *options, PtsimApiError **error);

#ifdef __cplusplus
}
#endif

#endif /* PTSIM_H */

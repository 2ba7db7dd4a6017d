/* gemm_bench.cu — measures what ptsim's cost model assumes about one GPU:
 * cuBLAS bf16 GEMM throughput at the exact shapes a layout produces, and
 * HBM copy bandwidth; fits the [efficiency] keys of a hardware profile.
 *
 * Standalone CUDA C (C subset; no ptsim code, no GLib).  Build:
 *   nvcc -O2 -o gemm_bench gemm_bench.cu -lcublas
 * Run:
 *   ptsim validate --emit-gemm-shapes shapes.txt --model llama3-8b --tp 2 ...
 *   ./gemm_bench shapes.txt --out calib.ini [--peak-tflops 989.4] [--hbm-gbps 3350]
 *
 * Shapes file: one GEMM per line, "name m n k count" (C(m,n) = A(m,k) B(k,n),
 * count = calls per training step, used only to weight the summary);
 * '#' starts a comment, blank lines are skipped.
 *
 * Method: every GEMM runs as cublasGemmEx, bf16 A, B, C, fp32 accumulate
 * (CUBLAS_COMPUTE_32F), column-major with no transposes; after --warmup
 * untimed calls, --iters calls are timed between two cudaEvents and the
 * mean is kept.  FLOPs = 2 m n k.  Efficiency = FLOP/s / peak.  The fit is
 * eff(F) = max F / (F + half) (F = FLOPs of one call), least squares in
 * eff: for each half on a log grid (1e6 .. 1e14 FLOPs, 400 points) the
 * best max has the closed form sum(e g) / sum(g g), g = F / (F + half);
 * the pair with the smallest squared error wins.  HBM: cudaMemcpy device
 * to device of --copy-mib MiB, bytes moved = 2 x size (read + write);
 * memory_efficiency = that rate / --hbm-gbps.
 *
 * Errors: every CUDA and cuBLAS call is checked and a failure prints
 * file:line and the call's message, exit 1.  Bad arguments or a bad shapes
 * line: one line naming it, exit 2.  No CUDA device: a clear message,
 * exit 2. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHAPES 256
#define NAME_MAX_LEN 64

#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) cublas_check((call), #call, __FILE__, __LINE__)

static void cuda_check(cudaError_t err, const char *what, const char *file, int line) {
  if (err == cudaSuccess) return;
  fprintf(stderr, "gemm_bench: %s:%d: %s: %s\n", file, line, what, cudaGetErrorString(err));
  exit(1);
}

static void cublas_check(cublasStatus_t st, const char *what, const char *file, int line) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  fprintf(stderr, "gemm_bench: %s:%d: %s: cuBLAS status %d\n", file, line, what, (int)st);
  exit(1);
}

typedef struct {
  char name[NAME_MAX_LEN];
  long long m, n, k, count;
  double seconds; /* mean per call */
  double flops;   /* 2 m n k */
  double eff;     /* achieved / peak */
} Shape;

typedef struct {
  const char *shapes_path;
  const char *out_path;
  double peak_tflops; /* 0: by device name */
  double hbm_gbps;    /* 0: by device name */
  int iters, warmup;
  long long copy_mib;
} Options;

static void usage(FILE *to) {
  fprintf(to, "usage: gemm_bench SHAPES.txt [--out FILE.ini] [--peak-tflops T] [--hbm-gbps G]\n"
              "                  [--iters N] [--warmup N] [--copy-mib M]\n"
              "SHAPES.txt: lines \"name m n k count\" (ptsim validate --emit-gemm-shapes)\n");
}

static int bad_arg(const char *what) {
  fprintf(stderr, "gemm_bench: %s (see --help)\n", what);
  return 2;
}

static int parse_options(int argc, char **argv, Options *o) {
  memset(o, 0, sizeof *o);
  o->iters = 20;
  o->warmup = 3;
  o->copy_mib = 1024;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      exit(0);
    } else if (strcmp(a, "--out") == 0 && v) {
      o->out_path = v, i++;
    } else if (strcmp(a, "--peak-tflops") == 0 && v) {
      o->peak_tflops = atof(v), i++;
      if (!(o->peak_tflops > 0)) return bad_arg("--peak-tflops: must be > 0");
    } else if (strcmp(a, "--hbm-gbps") == 0 && v) {
      o->hbm_gbps = atof(v), i++;
      if (!(o->hbm_gbps > 0)) return bad_arg("--hbm-gbps: must be > 0");
    } else if (strcmp(a, "--iters") == 0 && v) {
      o->iters = atoi(v), i++;
      if (o->iters < 1) return bad_arg("--iters: must be >= 1");
    } else if (strcmp(a, "--warmup") == 0 && v) {
      o->warmup = atoi(v), i++;
      if (o->warmup < 0) return bad_arg("--warmup: must be >= 0");
    } else if (strcmp(a, "--copy-mib") == 0 && v) {
      o->copy_mib = atoll(v), i++;
      if (o->copy_mib < 1) return bad_arg("--copy-mib: must be >= 1");
    } else if (a[0] == '-') {
      fprintf(stderr, "gemm_bench: unknown option or missing value: %s (see --help)\n", a);
      return 2;
    } else if (!o->shapes_path) {
      o->shapes_path = a;
    } else {
      fprintf(stderr, "gemm_bench: unexpected argument '%s'\n", a);
      return 2;
    }
  }
  if (!o->shapes_path) return bad_arg("no shapes file given");
  return 0;
}

/* Reads the shapes file; returns the count, or -1 after printing why. */
static int read_shapes(const char *path, Shape *shapes) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "gemm_bench: %s: cannot open\n", path);
    return -1;
  }
  char line[512];
  int n = 0, lineno = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char name[NAME_MAX_LEN];
    long long m, nn, k, count;
    char extra[2];
    int got = sscanf(line, "%63s %lld %lld %lld %lld %1s", name, &m, &nn, &k, &count, extra);
    if (got <= 0) continue; /* blank or comment */
    if (got != 5 || m < 1 || nn < 1 || k < 1 || count < 0 || m * nn > (1LL << 34) ||
        m * k > (1LL << 34) || k * nn > (1LL << 34)) {
      fprintf(stderr, "gemm_bench: %s:%d: want \"name m n k count\" with positive sizes\n", path,
              lineno);
      fclose(f);
      return -1;
    }
    if (n == MAX_SHAPES) {
      fprintf(stderr, "gemm_bench: %s:%d: more than %d shapes\n", path, lineno, MAX_SHAPES);
      fclose(f);
      return -1;
    }
    Shape *s = &shapes[n++];
    memset(s, 0, sizeof *s);
    memcpy(s->name, name, strlen(name) + 1); /* sscanf kept it under NAME_MAX_LEN */
    s->m = m, s->n = nn, s->k = k, s->count = count;
    s->flops = 2.0 * (double)m * (double)nn * (double)k;
  }
  fclose(f);
  if (n == 0) fprintf(stderr, "gemm_bench: %s: no shapes\n", path);
  return n > 0 ? n : -1;
}

/* Dense bf16 tensor peak and HBM bandwidth by device name (datasheets, SXM). */
static void defaults_for(const char *device, double *peak_tflops, double *hbm_gbps) {
  double peak = 0, hbm = 0;
  if (strstr(device, "H200"))
    peak = 989.4, hbm = 4800;
  else if (strstr(device, "H100"))
    peak = 989.4, hbm = 3350;
  else if (strstr(device, "A100") && strstr(device, "40GB"))
    peak = 312, hbm = 1555;
  else if (strstr(device, "A100"))
    peak = 312, hbm = 2039;
  if (*peak_tflops == 0) *peak_tflops = peak;
  if (*hbm_gbps == 0) *hbm_gbps = hbm;
}

static void fill(__nv_bfloat16 *p, size_t n) {
  /* Zero bytes would let some kernels skip work; a constant pattern does not. */
  CUDA_CHECK(cudaMemset(p, 0x3c, n * sizeof(__nv_bfloat16)));
}

static double time_gemm(cublasHandle_t h, Shape *s, const Options *o) {
  size_t a_n = (size_t)(s->m * s->k), b_n = (size_t)(s->k * s->n), c_n = (size_t)(s->m * s->n);
  __nv_bfloat16 *A = NULL, *B = NULL, *C = NULL;
  CUDA_CHECK(cudaMalloc((void **)&A, a_n * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMalloc((void **)&B, b_n * sizeof(__nv_bfloat16)));
  CUDA_CHECK(cudaMalloc((void **)&C, c_n * sizeof(__nv_bfloat16)));
  fill(A, a_n);
  fill(B, b_n);
  const float alpha = 1.0f, beta = 0.0f;
  int m = (int)s->m, n = (int)s->n, k = (int)s->k;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < o->warmup + o->iters; i++) {
    if (i == o->warmup) CUDA_CHECK(cudaEventRecord(start, 0));
    CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_16BF, m, B,
                              CUDA_R_16BF, k, &beta, C, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  }
  CUDA_CHECK(cudaEventRecord(stop, 0));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(A));
  CUDA_CHECK(cudaFree(B));
  CUDA_CHECK(cudaFree(C));
  return (double)ms / 1e3 / (double)o->iters;
}

/* Bytes per second of a device-to-device cudaMemcpy (read + write counted). */
static double copy_bandwidth(const Options *o) {
  size_t bytes = (size_t)o->copy_mib << 20;
  void *src = NULL, *dst = NULL;
  CUDA_CHECK(cudaMalloc(&src, bytes));
  CUDA_CHECK(cudaMalloc(&dst, bytes));
  CUDA_CHECK(cudaMemset(src, 1, bytes));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < o->warmup + o->iters; i++) {
    if (i == o->warmup) CUDA_CHECK(cudaEventRecord(start, 0));
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  }
  CUDA_CHECK(cudaEventRecord(stop, 0));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  return 2.0 * (double)bytes * (double)o->iters / ((double)ms / 1e3);
}

/* Least-squares fit of eff(F) = max F / (F + half); see the header. */
static void fit(const Shape *s, int n, double *best_max, double *best_half) {
  double best_sse = INFINITY;
  *best_max = NAN, *best_half = NAN;
  for (int g = 0; g <= 400; g++) {
    double half = pow(10.0, 6.0 + 8.0 * g / 400.0);
    double eg = 0, gg = 0;
    for (int i = 0; i < n; i++) {
      double x = s[i].flops / (s[i].flops + half);
      eg += s[i].eff * x;
      gg += x * x;
    }
    if (gg <= 0) continue;
    double mx = eg / gg;
    double sse = 0;
    for (int i = 0; i < n; i++) {
      double r = s[i].eff - mx * s[i].flops / (s[i].flops + half);
      sse += r * r;
    }
    if (sse < best_sse) best_sse = sse, *best_max = mx, *best_half = half;
  }
}

int main(int argc, char **argv) {
  Options o;
  int rc = parse_options(argc, argv, &o);
  if (rc) return rc;
  static Shape shapes[MAX_SHAPES];
  int n = read_shapes(o.shapes_path, shapes);
  if (n < 0) return 2;

  int devices = 0;
  cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    fprintf(stderr, "gemm_bench: no CUDA device available (%s); run this on a GPU machine\n",
            err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    return 2;
  }
  struct cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  defaults_for(prop.name, &o.peak_tflops, &o.hbm_gbps);
  if (o.peak_tflops == 0 || o.hbm_gbps == 0) {
    fprintf(stderr, "gemm_bench: unknown device '%s': give --peak-tflops and --hbm-gbps\n",
            prop.name);
    return 2;
  }
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));

  printf("# device %s, peak %.1f TFLOP/s bf16 dense, HBM %.0f GB/s\n", prop.name, o.peak_tflops,
         o.hbm_gbps);
  printf("%-16s %8s %8s %8s %8s %12s %10s %8s\n", "name", "m", "n", "k", "count", "time_s",
         "TFLOP/s", "eff");
  double step_s = 0;
  for (int i = 0; i < n; i++) {
    Shape *s = &shapes[i];
    s->seconds = time_gemm(handle, s, &o);
    s->eff = s->flops / s->seconds / (o.peak_tflops * 1e12);
    step_s += s->seconds * (double)s->count;
    printf("%-16s %8lld %8lld %8lld %8lld %12.6e %10.1f %8.3f\n", s->name, s->m, s->n, s->k,
           s->count, s->seconds, s->flops / s->seconds / 1e12, s->eff);
  }
  CUBLAS_CHECK(cublasDestroy(handle));
  double copy = copy_bandwidth(&o);
  double mem_eff = copy / (o.hbm_gbps * 1e9);
  double eff_max, half;
  fit(shapes, n, &eff_max, &half);
  printf("# GEMM time per step (sum of count x time): %.4f s\n", step_s);
  printf("# copy %.1f GB/s = %.3f of %.0f GB/s\n", copy / 1e9, mem_eff, o.hbm_gbps);
  printf("# fit: gemm_efficiency_max %.4f, gemm_half_gflops %.3f\n", eff_max, half / 1e9);

  FILE *out = o.out_path ? fopen(o.out_path, "w") : stdout;
  if (!out) {
    fprintf(stderr, "gemm_bench: %s: cannot write\n", o.out_path);
    return 2;
  }
  fprintf(out,
          "# Measured by validate/short_run/gemm_bench on %s from %s (%d shapes, %d iters).\n"
          "# Merge into a hardware profile's [efficiency] group (run_all.sh does).\n"
          "[efficiency]\n"
          "# least-squares fit of eff(F) = max F / (F + half) to the shapes' bf16 cuBLAS GEMMs\n"
          "gemm_efficiency_max = %.4f\n"
          "gemm_half_gflops = %.4f\n"
          "# device-to-device cudaMemcpy of %lld MiB: %.1f GB/s of %.0f\n"
          "memory_efficiency = %.4f\n",
          prop.name, o.shapes_path, n, o.iters, eff_max > 1 ? 1.0 : eff_max, half / 1e9, o.copy_mib,
          copy / 1e9, o.hbm_gbps, mem_eff > 1 ? 1.0 : mem_eff);
  if (o.out_path && fclose(out) != 0) {
    fprintf(stderr, "gemm_bench: %s: write failed\n", o.out_path);
    return 1;
  }
  return 0;
}

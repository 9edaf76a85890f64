/* skysift-cli convolve: the lesson's convolution demo, and convolution of
 * a FITS image with a kernel. */
#include "cli.h"
#include "sky-cpu.h"
#ifdef SKYSIFT_HAVE_CUDA
#include "sky-gpu.h"
#endif

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char convolve_usage[] =
  "Usage: skysift-cli convolve --demo [OPTIONS]\n"
  "       skysift-cli convolve IMAGE.fits (--kernel SPEC | --kernel-file K.fits) --out OUT.fits\n"
  "                            [OPTIONS]\n"
  "\n"
  "--demo runs the lesson's example: a 2048 x 2048 image of zeros with a one at\n"
  "every [8::16, 8::16], convolved with its 15 x 15 Gaussian, and the 1D\n"
  "convolution of the raveled image with the Gaussian's diagonal. It times both\n"
  "paths of the 2D case (separable and direct) and checks that they agree; on the\n"
  "GPU it times the kernel alone and with the transfers, and checks the GPU's\n"
  "results against the CPU's (numpy.allclose, rtol 1e-5, atol 1e-8).\n"
  "  --backend cpu|gpu|both  where to run the demo (default cpu; gpu and both\n"
  "                          run on the CPU, with a warning, without a usable GPU)\n"
  "  --dtype f32|f64         element type (default f64, the lesson's)\n"
  "  --mode full|same|valid  as scipy.signal.convolve2d (default full)\n"
  "  --path auto|direct|separable  (default auto: separable for rank-1 kernels)\n"
  "  --kernel SPEC           lesson, gauss:SIGMA[:SIZE] or box:SIZE\n"
  "  --kernel-file K.fits    any kernel, as a FITS image\n"
  "  --out OUT.fits          where to write the (2D) result (BITPIX -32 or -64); of\n"
  "                          an image, with its header: the WCS moved to the new\n"
  "                          pixels, the kernel and mode recorded, BUNIT where true\n"
  "  --out-1d OUT.fits       with --demo: where to write the 1D result (one row)\n"
  "  --repeat N              run N times, report the best time\n"
  "  --threads N             worker threads (default: every core)\n"
  "  --json FILE             write the timings and checks as JSON\n";

typedef struct {
  int demo, repeat, nthreads, f64;
  SkyConvolveMode mode;
  SkyConvolvePath path;
  const char *image, *kernel_spec, *kernel_file, *out, *out_1d, *json, *backend;
} ConvolveArgs;

static const char *
path_name (SkyConvolvePath path)
{
  return path == SKY_CONVOLVE_SEPARABLE ? "separable"
         : path == SKY_CONVOLVE_DIRECT  ? "direct"
                                        : "auto";
}

static int
parse_args (int argc, char **argv, ConvolveArgs *a)
{
  enum { O_DEMO = 256, O_BACKEND, O_DTYPE, O_MODE, O_PATH, O_KERNEL, O_KFILE, O_OUT, O_OUT_1D,
         O_REPEAT, O_THREADS, O_JSON, O_HELP };
  static const struct option options[] = {
    { "demo", no_argument, NULL, O_DEMO },
    { "backend", required_argument, NULL, O_BACKEND },
    { "dtype", required_argument, NULL, O_DTYPE },
    { "mode", required_argument, NULL, O_MODE },
    { "path", required_argument, NULL, O_PATH },
    { "kernel", required_argument, NULL, O_KERNEL },
    { "kernel-file", required_argument, NULL, O_KFILE },
    { "out", required_argument, NULL, O_OUT },
    { "out-1d", required_argument, NULL, O_OUT_1D },
    { "repeat", required_argument, NULL, O_REPEAT },
    { "threads", required_argument, NULL, O_THREADS },
    { "json", required_argument, NULL, O_JSON },
    { "help", no_argument, NULL, O_HELP },
    { NULL, 0, NULL, 0 },
  };
  int64_t v;
  int c, ret = 0;

  memset (a, 0, sizeof *a);
  a->repeat = 1;
  a->f64 = 1;
  a->backend = "cpu";
  opterr = 0; /* unknown options are reported below, in the tool's own words */
  while (ret == 0 && (c = getopt_long (argc, argv, "h", options, NULL)) != -1)
    {
      switch (c)
        {
        case O_DEMO: a->demo = 1; break;
        case O_BACKEND: a->backend = optarg; break;
        case O_KERNEL: a->kernel_spec = optarg; break;
        case O_KFILE: a->kernel_file = optarg; break;
        case O_OUT: a->out = optarg; break;
        case O_OUT_1D: a->out_1d = optarg; break;
        case O_JSON: a->json = optarg; break;
        case O_DTYPE:
          if (strcmp (optarg, "f32") == 0 || strcmp (optarg, "f64") == 0)
            a->f64 = strcmp (optarg, "f64") == 0;
          else
            {
              cli_error ("--dtype: '%s' is not f32 or f64", optarg);
              ret = CLI_EXIT_USAGE;
            }
          break;
        case O_MODE:
          if (sky_convolve_mode_parse (optarg, &a->mode) != SKY_OK)
            {
              cli_error ("--mode: %s", sky_last_error ());
              ret = CLI_EXIT_USAGE;
            }
          break;
        case O_PATH:
          if (strcmp (optarg, "auto") == 0)
            a->path = SKY_CONVOLVE_AUTO;
          else if (strcmp (optarg, "direct") == 0)
            a->path = SKY_CONVOLVE_DIRECT;
          else if (strcmp (optarg, "separable") == 0)
            a->path = SKY_CONVOLVE_SEPARABLE;
          else
            {
              cli_error ("--path: '%s' is not auto, direct or separable", optarg);
              ret = CLI_EXIT_USAGE;
            }
          break;
        case O_REPEAT:
          if ((ret = cli_parse_int ("--repeat", optarg, 1, 100000, &v)) == 0)
            a->repeat = (int) v;
          break;
        case O_THREADS:
          if ((ret = cli_parse_int ("--threads", optarg, 0, 256, &v)) == 0)
            a->nthreads = (int) v;
          break;
        case 'h':
        case O_HELP:
          fputs (convolve_usage, stdout);
          return -1;
        default:
          cli_error ("convolve: unknown option or missing value: %s", argv[optind - 1]);
          ret = CLI_EXIT_USAGE;
        }
    }
  if (ret == 0 && strcmp (a->backend, "cpu") != 0 && strcmp (a->backend, "gpu") != 0
      && strcmp (a->backend, "both") != 0)
    {
      cli_error ("--backend: '%s' is not cpu, gpu or both", a->backend);
      ret = CLI_EXIT_USAGE;
    }
  if (ret == 0 && !a->demo && strcmp (a->backend, "cpu") != 0)
    {
      cli_error ("convolve --backend %s: only --demo runs on the GPU; an image is convolved "
                 "on the CPU", a->backend);
      ret = CLI_EXIT_USAGE;
    }
  if (ret == 0 && a->demo && optind != argc)
    {
      cli_error ("convolve --demo takes no image");
      ret = CLI_EXIT_USAGE;
    }
  if (ret == 0 && !a->demo)
    {
      if (optind != argc - 1 || a->out == NULL
          || (a->kernel_spec == NULL) == (a->kernel_file == NULL))
        {
          cli_error ("convolve: give --demo, or one image, --out and one of --kernel and "
                     "--kernel-file");
          ret = CLI_EXIT_USAGE;
        }
      else
        a->image = argv[optind];
    }
  if (ret != 0)
    fputs ("Run 'skysift-cli convolve --help' for the options.\n", stderr);
  return ret;
}

/* Runs one 2D convolution repeat times; the best time in *ms. */
static int
time_2d (const ConvolveArgs *a, const void *in, int64_t nx, int64_t ny, const SkyKernel *k,
         SkyConvolvePath path, void *out, double *ms, SkyConvolvePath *used)
{
  *ms = INFINITY;
  for (int r = 0; r < a->repeat; r++)
    {
      double t0 = sky_now_ms (), t;
      int ret = a->f64 ? sky_cpu_convolve2d_f64 (in, nx, ny, k, a->mode, path, a->nthreads,
                                                 out, used)
                       : sky_cpu_convolve2d_f32 (in, nx, ny, k, a->mode, path, a->nthreads,
                                                 out, used);
      if (ret != SKY_OK)
        return ret;
      t = sky_now_ms () - t0;
      *ms = t < *ms ? t : *ms;
    }
  return SKY_OK;
}

/* numpy.allclose with rtol 1e-5, atol 1e-8; the largest difference too. */
static int
all_close (const void *a, const void *b, int64_t n, int f64, double *max_diff)
{
  int ok = 1;

  *max_diff = 0;
  for (int64_t i = 0; i < n; i++)
    {
      double x = f64 ? ((const double *) a)[i] : ((const float *) a)[i];
      double y = f64 ? ((const double *) b)[i] : ((const float *) b)[i];
      double d = fabs (x - y);
      *max_diff = d > *max_diff ? d : *max_diff;
      ok &= d <= 1e-8 + 1e-5 * fabs (y);
    }
  return ok;
}

/* The GPU's side of the demo: best-of-repeat times, after one warm-up run
 * (the first call pays for the module's load). */
typedef struct {
  int ran;
  double k2d, t2d, up2d, down2d, k1d, t1d;
  int path;
} DemoGpu;

#ifdef SKYSIFT_HAVE_CUDA
static int
demo_gpu (const ConvolveArgs *a, SkyGpu *gpu, const void *deltas, int64_t n, const SkyKernel *k,
          const void *diag, void *out_2d, void *out_1d, DemoGpu *g)
{
  SkyGpuConvolveTimes t;
  int path = a->path == SKY_CONVOLVE_DIRECT      ? SKY_GPU_CONVOLVE_DIRECT
             : a->path == SKY_CONVOLVE_SEPARABLE ? SKY_GPU_CONVOLVE_SEPARABLE
                                                 : SKY_GPU_CONVOLVE_AUTO;

  g->k2d = g->t2d = g->k1d = g->t1d = INFINITY;
  for (int r = 0; r <= a->repeat; r++)
    {
      int ret = a->f64 ? sky_gpu_convolve2d_f64 (gpu, deltas, n, n, k, a->mode, path, out_2d, &t)
                       : sky_gpu_convolve2d_f32 (gpu, deltas, n, n, k, a->mode, path, out_2d,
                                                 &t);
      if (ret != SKY_OK)
        return ret;
      if (r > 0 || a->repeat == 0)
        {
          if (t.kernel_ms < g->k2d)
            g->k2d = t.kernel_ms;
          if (t.total_ms < g->t2d)
            g->t2d = t.total_ms, g->up2d = t.upload_ms, g->down2d = t.download_ms;
        }
      g->path = t.path;
      ret = a->f64 ? sky_gpu_convolve1d_f64 (gpu, deltas, n * n, diag, 15, out_1d, &t)
                   : sky_gpu_convolve1d_f32 (gpu, deltas, n * n, diag, 15, out_1d, &t);
      if (ret != SKY_OK)
        return ret;
      if (r > 0)
        {
          g->k1d = t.kernel_ms < g->k1d ? t.kernel_ms : g->k1d;
          g->t1d = t.total_ms < g->t1d ? t.total_ms : g->t1d;
        }
    }
  g->ran = 1;
  return SKY_OK;
}
#endif

static int
run_demo (const ConvolveArgs *a)
{
  const int64_t n = 2048;
  size_t elem = a->f64 ? sizeof (double) : sizeof (float);
  int64_t out_nx, out_ny, x0, y0, n1d = n * n + 15 - 1;
  int swapped, ret = CLI_EXIT_FAILURE, agree_2d, agree_1d, agree_gpu_2d = 1, agree_gpu_1d = 1;
  int want_cpu = strcmp (a->backend, "gpu") != 0, want_gpu = strcmp (a->backend, "cpu") != 0;
  int gpu_ok = 0;
  char gpu_why[512] = "";
  SkyKernel k = { 0 };
  SkyConvolvePath used = SKY_CONVOLVE_AUTO, fast = a->path;
  void *deltas = NULL, *out_fast = NULL, *out_direct = NULL, *diag = NULL, *out_1d = NULL;
  void *out_1d_check = NULL, *gpu_2d = NULL, *gpu_1d = NULL;
  double t_fast, t_direct, t_1d = INFINITY, diff_2d, diff_1d, diff_g2d = 0, diff_g1d = 0;
  DemoGpu g = { 0 };
  ConvolveArgs cpu_args = *a;
#ifdef SKYSIFT_HAVE_CUDA
  SkyGpu *gpu = NULL;
#endif

  if (want_gpu)
    {
#ifdef SKYSIFT_HAVE_CUDA
      gpu_ok = sky_gpu_available (gpu_why, sizeof gpu_why) == SKY_OK;
#else
      snprintf (gpu_why, sizeof gpu_why, "this build has no GPU backend (built without CUDA)");
#endif
      /* As find does: no usable GPU, the CPU does the work, with a warning. */
      if (!gpu_ok && !want_cpu)
        {
          fprintf (stderr, "skysift-cli: warning: convolve --backend gpu: %s; running on the "
                   "CPU\n", gpu_why);
          want_cpu = 1;
        }
      if (!gpu_ok)
        printf ("GPU not used: %s; the CPU runs alone\n", gpu_why);
    }
  /* GPU alone: the CPU still computes the reference, once, untimed. */
  if (!want_cpu)
    cpu_args.repeat = 1;

  if (sky_kernel_lesson (&k) != SKY_OK
      || sky_convolve_geometry (n, n, &k, a->mode, &out_nx, &out_ny, &x0, &y0, &swapped)
           != SKY_OK)
    {
      cli_error ("%s", sky_last_error ());
      goto exit;
    }
  deltas = calloc ((size_t) (n * n), elem);
  out_fast = malloc ((size_t) (out_nx * out_ny) * elem);
  out_direct = malloc ((size_t) (out_nx * out_ny) * elem);
  diag = malloc (15 * elem);
  out_1d = malloc ((size_t) n1d * elem);
  out_1d_check = malloc ((size_t) n1d * elem);
  if (gpu_ok)
    {
      gpu_2d = malloc ((size_t) (out_nx * out_ny) * elem);
      gpu_1d = malloc ((size_t) n1d * elem);
    }
  if (!deltas || !out_fast || !out_direct || !diag || !out_1d || !out_1d_check
      || (gpu_ok && (!gpu_2d || !gpu_1d)))
    {
      cli_error ("convolve: out of memory");
      goto exit;
    }
  for (int64_t y = 8; y < n; y += 16)
    for (int64_t x = 8; x < n; x += 16)
      {
        if (a->f64)
          ((double *) deltas)[y * n + x] = 1.0;
        else
          ((float *) deltas)[y * n + x] = 1.0f;
      }
  for (int i = 0; i < 15; i++)
    {
      if (a->f64)
        ((double *) diag)[i] = k.values[i * 15 + i];
      else
        ((float *) diag)[i] = (float) k.values[i * 15 + i];
    }

  if (fast == SKY_CONVOLVE_DIRECT)
    fast = SKY_CONVOLVE_AUTO;
  if (time_2d (&cpu_args, deltas, n, n, &k, fast, out_fast, &t_fast, &used) != SKY_OK
      || time_2d (&cpu_args, deltas, n, n, &k, SKY_CONVOLVE_DIRECT, out_direct, &t_direct, NULL)
           != SKY_OK)
    {
      cli_error ("convolve: %s", sky_last_error ());
      goto exit;
    }
  for (int r = 0; r < cpu_args.repeat; r++)
    {
      double t0 = sky_now_ms (), t;
      ret = a->f64 ? sky_cpu_convolve1d_f64 (deltas, n * n, diag, 15, a->nthreads, out_1d)
                   : sky_cpu_convolve1d_f32 (deltas, n * n, diag, 15, a->nthreads, out_1d);
      t = sky_now_ms () - t0;
      t_1d = t < t_1d ? t : t_1d;
    }
  ret = CLI_EXIT_FAILURE;
  /* The 1D result checked against the same sum taken on one thread. */
  if (a->f64)
    sky_cpu_convolve1d_f64 (deltas, n * n, diag, 15, 1, out_1d_check);
  else
    sky_cpu_convolve1d_f32 (deltas, n * n, diag, 15, 1, out_1d_check);

  agree_2d = all_close (out_fast, out_direct, out_nx * out_ny, a->f64, &diff_2d);
  agree_1d = all_close (out_1d, out_1d_check, n1d, a->f64, &diff_1d);

#ifdef SKYSIFT_HAVE_CUDA
  if (gpu_ok)
    {
      if (sky_gpu_new (&gpu) != SKY_OK
          || demo_gpu (a, gpu, deltas, n, &k, diag, gpu_2d, gpu_1d, &g) != SKY_OK)
        {
          snprintf (gpu_why, sizeof gpu_why, "%s", sky_last_error ());
          if (!want_cpu)
            fprintf (stderr, "skysift-cli: warning: convolve --backend gpu: the GPU failed; the "
                     "CPU's results (timed once) stand alone\n");
          want_cpu = 1;
          printf ("GPU failed: %s; the CPU's results stand alone\n", gpu_why);
          g.ran = 0;
        }
      else
        {
          agree_gpu_2d = all_close (gpu_2d, out_fast, out_nx * out_ny, a->f64, &diff_g2d);
          agree_gpu_1d = all_close (gpu_1d, out_1d_check, n1d, a->f64, &diff_g1d);
        }
    }
#endif

  printf ("convolution demo: %lld x %lld zeros with a one every 16 pixels, the lesson's "
          "15 x 15 Gaussian, %s, mode %s (output %lld x %lld)\n",
          (long long) n, (long long) n, a->f64 ? "float64" : "float32",
          a->mode == SKY_CONVOLVE_FULL ? "full" : a->mode == SKY_CONVOLVE_SAME ? "same" : "valid",
          (long long) out_nx, (long long) out_ny);
  if (want_cpu)
    {
      printf ("  cpu 2D %-10s %9.3f ms%s\n", path_name (used), t_fast,
              a->repeat > 1 ? " (best of repeats)" : "");
      printf ("  cpu 2D direct     %9.3f ms\n", t_direct);
      printf ("  cpu 1D            %9.3f ms (%lld values with the kernel's 15-value diagonal)\n",
              t_1d, (long long) (n * n));
    }
  if (g.ran)
    {
      printf ("  gpu 2D %-10s %9.4f ms kernel, %.3f ms with transfers (upload %.3f, download "
              "%.3f)\n", path_name ((SkyConvolvePath) g.path), g.k2d, g.t2d, g.up2d, g.down2d);
      printf ("  gpu 1D            %9.4f ms kernel, %.3f ms with transfers\n", g.k1d, g.t1d);
    }
  printf ("  agree: %s (2D %s vs direct: max |diff| %.3g; 1D threads vs one: %.3g",
          agree_2d && agree_1d && agree_gpu_2d && agree_gpu_1d ? "yes" : "NO",
          path_name (used), diff_2d, diff_1d);
  if (g.ran)
    printf ("; GPU vs CPU: 2D %s (%.3g), 1D %s (%.3g)", agree_gpu_2d ? "yes" : "NO", diff_g2d,
            agree_gpu_1d ? "yes" : "NO", diff_g1d);
  printf ("; allclose rtol 1e-5, atol 1e-8)\n");

  if (a->json != NULL)
    {
      char text[2048], cpu_part[256] = "", gpu_part[512] = "";
      if (want_cpu)
        snprintf (cpu_part, sizeof cpu_part,
                  "  \"cpu_2d_ms\": %.6f,\n  \"cpu_2d_direct_ms\": %.6f,\n  \"cpu_1d_ms\": %.6f,\n",
                  t_fast, t_direct, t_1d);
      if (g.ran)
        snprintf (gpu_part, sizeof gpu_part,
                  "  \"gpu_path\": \"%s\",\n  \"gpu_2d_ms\": %.6f,\n"
                  "  \"gpu_2d_with_transfers_ms\": %.6f,\n  \"gpu_1d_ms\": %.6f,\n"
                  "  \"gpu_1d_with_transfers_ms\": %.6f,\n  \"max_abs_diff_gpu_2d\": %.6g,\n"
                  "  \"max_abs_diff_gpu_1d\": %.6g,\n",
                  path_name ((SkyConvolvePath) g.path), g.k2d, g.t2d, g.k1d, g.t1d, diff_g2d,
                  diff_g1d);
      snprintf (text, sizeof text,
                "{\n  \"demo\": \"lesson\",\n  \"shape\": [%lld, %lld],\n  \"out_shape\": "
                "[%lld, %lld],\n  \"dtype\": \"%s\",\n  \"mode\": \"%s\",\n  \"path\": \"%s\",\n"
                "  \"backend\": \"%s\",\n  \"repeat\": %d,\n%s%s"
                "  \"max_abs_diff_2d\": %.6g,\n  \"agree\": %s\n}\n",
                (long long) n, (long long) n, (long long) out_ny, (long long) out_nx,
                a->f64 ? "f64" : "f32",
                a->mode == SKY_CONVOLVE_FULL ? "full"
                : a->mode == SKY_CONVOLVE_SAME ? "same" : "valid",
                path_name (used), a->backend, a->repeat, cpu_part, gpu_part, diff_2d,
                agree_2d && agree_1d && agree_gpu_2d && agree_gpu_1d ? "true" : "false");
      if (sky_write_text (a->json, text) != SKY_OK)
        {
          cli_error ("%s", sky_last_error ());
          goto exit;
        }
    }
  if ((a->out != NULL
       && sky_fits_write_plane (a->out, out_nx, out_ny, a->f64 ? -64 : -32, out_fast) != SKY_OK)
      || (a->out_1d != NULL
          && sky_fits_write_plane (a->out_1d, n1d, 1, a->f64 ? -64 : -32, out_1d) != SKY_OK))
    {
      cli_error ("%s", sky_last_error ());
      goto exit;
    }
  ret = agree_2d && agree_1d && agree_gpu_2d && agree_gpu_1d ? 0 : CLI_EXIT_FAILURE;

exit:
#ifdef SKYSIFT_HAVE_CUDA
  sky_gpu_free (gpu);
#endif
  sky_kernel_clear (&k);
  free (deltas);
  free (out_fast);
  free (out_direct);
  free (diag);
  free (out_1d);
  free (out_1d_check);
  free (gpu_2d);
  free (gpu_1d);
  return ret;
}

static int
load_kernel (const ConvolveArgs *a, SkyKernel *k)
{
  double *values = NULL;
  int64_t kx, ky;
  int ret;

  if (a->kernel_spec != NULL)
    return sky_kernel_parse (k, a->kernel_spec);
  ret = sky_fits_read_plane_f64 (a->kernel_file, &kx, &ky, &values);
  if (ret == SKY_OK)
    {
      for (int64_t i = 0; i < kx * ky && ret == SKY_OK; i++)
        if (!isfinite (values[i]))
          ret = sky_fail (SKY_ERR_FORMAT, "%s: a kernel cannot have blank pixels",
                          a->kernel_file);
      if (ret == SKY_OK)
        ret = sky_kernel_from_values (k, (int) kx, (int) ky, values);
    }
  free (values);
  return ret;
}

static const char *
mode_name (SkyConvolveMode mode)
{
  return mode == SKY_CONVOLVE_FULL ? "full" : mode == SKY_CONVOLVE_SAME ? "same" : "valid";
}

/* The text of keyword key among the header's cards, without its quotes
 * and trailing blanks; "" if it is absent. */
static void
card_text (const char *cards, int ncards, const char *key, char *out, size_t size)
{
  size_t len = strlen (key);

  out[0] = '\0';
  for (int i = 0; i < ncards; i++)
    {
      const char *card = cards + 80 * (size_t) i, *q, *e;
      if (strncmp (card, key, len) != 0 || card[len] != ' ' || strncmp (card + 8, "= ", 2))
        continue;
      q = memchr (card + 10, '\'', 70);
      e = q != NULL ? memchr (q + 1, '\'', (size_t) (card + 80 - q - 1)) : NULL;
      if (e == NULL)
        continue;
      snprintf (out, size, "%.*s", (int) (e - q - 1), q + 1);
      for (len = strlen (out); len > 0 && out[len - 1] == ' '; len--)
        out[len - 1] = '\0';
      return;
    }
}

/* Writes out with the input's header: its WCS moved to the new pixel grid,
 * a BUNIT that is still true, and what was done. Output pixel i (0-based)
 * holds the kernel centred on input pixel i + x0 - (k - 1) / 2, so CRPIX
 * moves by (k - 1) / 2 - x0: by (k - 1) / 2 in full mode. A kernel of unit
 * sum keeps the image's unit and the sum of every source, so BUNIT and the
 * beam that defines a per-beam unit stay; any other scales the values by
 * its sum, and no FITS unit says that: BUNIT and the beam go, and HISTORY
 * says why. */
static int
write_convolved (const ConvolveArgs *a, const SkyKernel *k, int64_t out_nx, int64_t out_ny,
                 int64_t x0, int64_t y0, const void *out)
{
  char *cards = NULL, history[3][160], bunit[72] = "";
  const char *lines[3];
  int ncards = 0, hdu = 1, naxis = 2, nhistory = 0, ret;
  double ksum = 0;
  SkyPlaneHeader h = { 0 };

  for (int i = 0; i < k->nx * k->ny; i++)
    ksum += k->values[i];
  ret = sky_fits_read_header (a->image, &cards, &ncards, &hdu, &naxis);
  if (ret != SKY_OK)
    return ret;
  card_text (cards, ncards, "BUNIT", bunit, sizeof bunit);
  {
    SkyFitsKey keys[] = {
      { "SKYKERN", a->kernel_spec ? a->kernel_spec : a->kernel_file, 0,
        a->kernel_spec ? "convolved with this kernel (skysift-cli)" : "kernel file" },
      { "SKYKNX", NULL, k->nx, "kernel width in pixels" },
      { "SKYKNY", NULL, k->ny, "kernel height in pixels" },
      { "SKYKSUM", NULL, ksum, "sum of the kernel's values" },
      { "SKYMODE", mode_name (a->mode), 0, "convolution mode, as scipy.signal.convolve2d" },
      { "SKYSRC", a->image, 0, "the input image" },
      { "SKYHDU", NULL, hdu, "its HDU (1-based)" },
      { "SKYPLANE", NULL, 0, "its plane (0-based)" },
    };
    int unit_sum = fabs (ksum - 1.0) <= 1e-6;

    snprintf (history[nhistory++], sizeof history[0], "skysift convolve: %s mode, %d x %d kernel",
              mode_name (a->mode), k->nx, k->ny);
    if (!unit_sum && bunit[0])
      snprintf (history[nhistory++], sizeof history[0],
                "BUNIT '%.20s' and the beam left out: the kernel sums to %.6g", bunit, ksum);
    else if (bunit[0])
      snprintf (history[nhistory++], sizeof history[0],
                "BUNIT kept: the kernel sums to 1; the beam keys still define it");
    for (int i = 0; i < nhistory; i++)
      lines[i] = history[i];
    h.cards = cards;
    h.ncards = ncards;
    h.source_naxis = naxis;
    h.crpix_shift[0] = (k->nx - 1) / 2.0 - (double) x0;
    h.crpix_shift[1] = (k->ny - 1) / 2.0 - (double) y0;
    h.drop_unit = !unit_sum;
    h.keys = keys;
    h.nkeys = (int) (sizeof keys / sizeof keys[0]);
    h.history = lines;
    h.nhistory = nhistory;
    ret = sky_fits_write_plane_with_header (a->out, out_nx, out_ny, a->f64 ? -64 : -32, out,
                                            &h);
  }
  free (cards);
  return ret;
}

static int
run_image (const ConvolveArgs *a)
{
  SkyKernel k = { 0 };
  double *in = NULL;
  void *data = NULL, *out = NULL;
  int64_t nx, ny, out_nx, out_ny, x0, y0;
  int swapped, ret = CLI_EXIT_FAILURE;
  double ms;
  SkyConvolvePath used;

  if (load_kernel (a, &k) != SKY_OK || sky_fits_read_plane_f64 (a->image, &nx, &ny, &in) != SKY_OK
      || sky_convolve_geometry (nx, ny, &k, a->mode, &out_nx, &out_ny, &x0, &y0, &swapped)
           != SKY_OK)
    {
      cli_error ("%s", sky_last_error ());
      goto exit;
    }
  if (a->f64)
    data = in;
  else if ((data = malloc ((size_t) (nx * ny) * sizeof (float))) != NULL)
    for (int64_t i = 0; i < nx * ny; i++)
      ((float *) data)[i] = (float) in[i];
  out = malloc ((size_t) (out_nx * out_ny) * (a->f64 ? sizeof (double) : sizeof (float)));
  if (data == NULL || out == NULL)
    {
      cli_error ("%s: out of memory", a->image);
      goto exit;
    }
  if (time_2d (a, data, nx, ny, &k, a->path, out, &ms, &used) != SKY_OK
      || write_convolved (a, &k, out_nx, out_ny, x0, y0, out) != SKY_OK)
    {
      cli_error ("%s", sky_last_error ());
      goto exit;
    }
  printf ("convolved %s (%lld x %lld) with a %d x %d kernel, %s path, %s: %.3f ms -> %s "
          "(%lld x %lld)\n", a->image, (long long) nx, (long long) ny, k.nx, k.ny,
          path_name (used), a->f64 ? "float64" : "float32", ms, a->out, (long long) out_nx,
          (long long) out_ny);
  ret = 0;

exit:
  if (data != in)
    free (data);
  free (in);
  free (out);
  sky_kernel_clear (&k);
  return ret;
}

int
cli_convolve (int argc, char **argv)
{
  ConvolveArgs a;
  int ret = parse_args (argc, argv, &a);

  if (ret != 0)
    return ret < 0 ? 0 : ret;
  return a.demo ? run_demo (&a) : run_image (&a);
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
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

/* The demo's GPU part, where asked and usable: 1 when it ran; 0 with why
 * filled (and the CPU's results alone) when it did not. */
static int
demo_gpu (const ConvolveArgs *a, SkyConvolutionDemo *d, int gpu_ok, char *why, size_t why_size)
{
#ifdef SKYSIFT_HAVE_CUDA
  SkyGpu *gpu = NULL;
  int ret;

  if (!gpu_ok)
    return 0;
  ret = sky_gpu_new (&gpu);
  if (ret == SKY_OK)
    ret = sky_gpu_convolution_demo (gpu, d, a->path, a->repeat);
  sky_gpu_free (gpu);
  if (ret == SKY_OK)
    return 1;
  snprintf (why, why_size, "%s", sky_last_error ());
  d->gpu_ran = 0;
  return -1;
#else
  (void) a, (void) d, (void) gpu_ok, (void) why, (void) why_size;
  return 0;
#endif
}

static void
print_demo (const ConvolveArgs *a, const SkyConvolutionDemo *d, int want_cpu)
{
  printf ("convolution demo: %lld x %lld zeros with a one every %d pixels, the lesson's "
          "15 x 15 Gaussian, %s, mode %s (output %lld x %lld)\n",
          (long long) d->n, (long long) d->n, SKY_CONVOLUTION_DEMO_STEP,
          a->f64 ? "float64" : "float32", sky_convolve_mode_name (a->mode),
          (long long) d->out_nx, (long long) d->out_ny);
  if (want_cpu)
    {
      printf ("  cpu 2D %-10s %9.3f ms%s\n", sky_convolve_path_name (d->cpu_path), d->cpu_2d_ms,
              a->repeat > 1 ? " (best of repeats)" : "");
      printf ("  cpu 2D direct     %9.3f ms\n", d->cpu_2d_direct_ms);
      printf ("  cpu 1D            %9.3f ms (%lld values with the kernel's %d-value diagonal)\n",
              d->cpu_1d_ms, (long long) (d->n * d->n), d->ndiag);
    }
  if (d->gpu_ran)
    {
      printf ("  gpu 2D %-10s %9.4f ms kernel, %.3f ms with transfers (upload %.3f, download "
              "%.3f)\n", sky_convolve_path_name (d->gpu_path), d->gpu_2d_ms, d->gpu_2d_total_ms,
              d->gpu_2d_upload_ms, d->gpu_2d_download_ms);
      printf ("  gpu 1D            %9.4f ms kernel, %.3f ms with transfers\n", d->gpu_1d_ms,
              d->gpu_1d_total_ms);
    }
  printf ("  agree: %s (2D %s vs direct: max |diff| %.3g; 1D threads vs one: %.3g",
          sky_convolution_demo_agree (d) ? "yes" : "NO", sky_convolve_path_name (d->cpu_path),
          d->diff_2d, d->diff_1d);
  if (d->gpu_ran)
    printf ("; GPU vs CPU: 2D %s (%.3g), 1D %s (%.3g)", d->gpu_agree_2d ? "yes" : "NO",
            d->gpu_diff_2d, d->gpu_agree_1d ? "yes" : "NO", d->gpu_diff_1d);
  printf ("; allclose rtol 1e-5, atol 1e-8)\n");   /* SKY_ALLCLOSE_RTOL, _ATOL */
}

static int
write_demo_json (const ConvolveArgs *a, const SkyConvolutionDemo *d, int want_cpu)
{
  char text[2048], cpu_part[256] = "", gpu_part[512] = "";

  if (want_cpu)
    snprintf (cpu_part, sizeof cpu_part,
              "  \"cpu_2d_ms\": %.6f,\n  \"cpu_2d_direct_ms\": %.6f,\n  \"cpu_1d_ms\": %.6f,\n",
              d->cpu_2d_ms, d->cpu_2d_direct_ms, d->cpu_1d_ms);
  if (d->gpu_ran)
    snprintf (gpu_part, sizeof gpu_part,
              "  \"gpu_path\": \"%s\",\n  \"gpu_2d_ms\": %.6f,\n"
              "  \"gpu_2d_with_transfers_ms\": %.6f,\n  \"gpu_1d_ms\": %.6f,\n"
              "  \"gpu_1d_with_transfers_ms\": %.6f,\n  \"max_abs_diff_gpu_2d\": %.6g,\n"
              "  \"max_abs_diff_gpu_1d\": %.6g,\n",
              sky_convolve_path_name (d->gpu_path), d->gpu_2d_ms, d->gpu_2d_total_ms,
              d->gpu_1d_ms, d->gpu_1d_total_ms, d->gpu_diff_2d, d->gpu_diff_1d);
  snprintf (text, sizeof text,
            "{\n  \"demo\": \"lesson\",\n  \"shape\": [%lld, %lld],\n  \"out_shape\": "
            "[%lld, %lld],\n  \"dtype\": \"%s\",\n  \"mode\": \"%s\",\n  \"path\": \"%s\",\n"
            "  \"backend\": \"%s\",\n  \"repeat\": %d,\n%s%s"
            "  \"max_abs_diff_2d\": %.6g,\n  \"agree\": %s\n}\n",
            (long long) d->n, (long long) d->n, (long long) d->out_ny, (long long) d->out_nx,
            a->f64 ? "f64" : "f32", sky_convolve_mode_name (a->mode),
            sky_convolve_path_name (d->cpu_path), a->backend, a->repeat, cpu_part, gpu_part,
            d->diff_2d, sky_convolution_demo_agree (d) ? "true" : "false");
  return sky_write_text (a->json, text);
}

static int
run_demo (const ConvolveArgs *a)
{
  int ret = CLI_EXIT_FAILURE;
  int want_cpu = strcmp (a->backend, "gpu") != 0, want_gpu = strcmp (a->backend, "cpu") != 0;
  int gpu_ok = 0;
  char gpu_why[512] = "";
  SkyKernel k = { 0 };
  SkyConvolutionDemo d = { 0 };

  if (want_gpu)
    {
      gpu_ok = cli_gpu_usable (gpu_why, sizeof gpu_why);
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

  if (sky_kernel_lesson (&k) != SKY_OK
      || sky_convolution_demo_init (&d, &k, a->mode, a->f64, gpu_ok) != SKY_OK)
    {
      cli_error ("%s", sky_last_error ());
      goto exit;
    }
  /* GPU alone: the CPU still computes the reference, once. */
  if (sky_cpu_convolution_demo (&d, a->path, want_cpu ? a->repeat : 1, a->nthreads) != SKY_OK)
    {
      cli_error ("convolve: %s", sky_last_error ());
      goto exit;
    }
  if (demo_gpu (a, &d, gpu_ok, gpu_why, sizeof gpu_why) < 0)
    {
      if (!want_cpu)
        fprintf (stderr, "skysift-cli: warning: convolve --backend gpu: the GPU failed; the "
                 "CPU's results (timed once) stand alone\n");
      want_cpu = 1;
      printf ("GPU failed: %s; the CPU's results stand alone\n", gpu_why);
    }

  print_demo (a, &d, want_cpu);
  if (a->json != NULL && write_demo_json (a, &d, want_cpu) != SKY_OK)
    {
      cli_error ("%s", sky_last_error ());
      goto exit;
    }
  if ((a->out != NULL
       && sky_fits_write_plane (a->out, d.out_nx, d.out_ny, a->f64 ? -64 : -32, d.cpu_2d)
            != SKY_OK)
      || (a->out_1d != NULL
          && sky_fits_write_plane (a->out_1d, d.n1d, 1, a->f64 ? -64 : -32, d.cpu_1d) != SKY_OK))
    {
      cli_error ("%s", sky_last_error ());
      goto exit;
    }
  ret = sky_convolution_demo_agree (&d) ? 0 : CLI_EXIT_FAILURE;

exit:
  sky_convolution_demo_clear (&d);
  sky_kernel_clear (&k);
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
          sky_convolve_path_name (used), a->f64 ? "float64" : "float32", ms, a->out, (long long) out_nx,
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

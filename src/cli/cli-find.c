/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli find: load an image, run the four steps, report and export. */
#include "cli-find.h"
#include "sky-cpu.h"
#include "sky-runner.h"
#ifdef SKYSIFT_HAVE_CUDA
#include "cli-gpu.h"
#endif

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char find_usage[] =
  "Usage: skysift-cli find IMAGE.fits [OPTIONS]\n"
  "\n"
  "Kappa-sigma clips the background, keeps the pixels above a threshold,\n"
  "labels the connected sources and measures them.\n"
  "  --backend B          cpu (default), gpu, or both: run each and print one table\n"
  "                       of step times and speedups and whether the results agree\n"
  "                       (exit status 1 if they differ); without a usable GPU, or\n"
  "                       when it fails during the run, a warning and the CPU's\n"
  "                       results (the JSON's backend then says cpu)\n"
  "  --clip-kappa K       clip at median +- K sigma (default 3)\n"
  "  --max-iter N         at most N clipping passes (default 0: until stable)\n"
  "  --threshold T        source pixels are > T sigma (default 5)\n"
  "  --relative           ... > median + T sigma instead\n"
  "  --connectivity 4|8   pixel neighbourhood (default 4)\n"
  "  --hdu N              1-based HDU (default: the first with image data)\n"
  "  --plane N            0-based plane of a cube (default 0)\n"
  "  --csv FILE           write the source list as CSV\n"
  "  --ecsv FILE          ... as ECSV, with units and the run's provenance (astropy)\n"
  "  --regions FILE       ... as a DS9 region file, one labelled circle per source\n"
  "  --votable FILE       ... as a VOTable (TOPCAT, CARTA, astropy)\n"
  "  --json FILE          write the run summary as JSON\n"
  "  --repeat N           run N times, report each step's best time\n"
  "  --threads N          worker threads (default: every core)\n"
  "  --smooth KERNEL      clip and segment a copy smoothed by KERNEL (beam: the\n"
  "                       header's BMAJ, BMIN, BPA; lesson, gauss:SIGMA[:SIZE] or\n"
  "                       box:SIZE; scaled to unit sum): a matched filter; sources\n"
  "                       are measured on the image itself\n"
  "                       (local: image - background is filtered, and the levels\n"
  "                       are in units of its own noise, measured)\n"
  "\n"
  "  --method M           global (default): the lesson's one clipped threshold;\n"
  "                       local: subtract a background map and find islands\n"
  "                       against an rms map (CPU backend; the options below)\n"
  "  --seed-sigma S       local: an island needs a pixel above S rms (default 4.6)\n"
  "  --flood-sigma F      local: islands grow down to F rms (default 2.5)\n"
  "  --min-area N         local: islands and deblended parts have at least N\n"
  "                       pixels (default 1)\n"
  "  --deblend N,C        local: N levels, a part needs C of its island's flux\n"
  "                       (default 32,0.005; 0 for no deblending)\n"
  "  --deblend-sigma P    local: a deblended part rises P rms above the level it\n"
  "                       splits at (default 5)\n"
  "  --bkg-box N          local: background mesh of N pixels a side (default 64)\n"
  "  --bkg-filter N       local: median filter of N x N boxes, odd (default 3)\n"
  "  --bkg FILE --rms FILE  local: FITS maps of the image's size replacing the\n"
  "                       computed background and rms\n"
  "  --memory-limit SIZE  the global method on the CPU within SIZE bytes (K, M, G):\n"
  "                       a field whose whole-image run needs more is read and run\n"
  "                       in bands of rows, with the same catalogue\n"
  "  --gpu-memory-limit SIZE  the global method on --backend gpu (or both) within\n"
  "                       SIZE bytes of device memory (K, M, G): a field whose run\n"
  "                       needs more (or more than the device has free, limit or\n"
  "                       not) is read and run on it in bands of rows, with the\n"
  "                       same catalogue\n"
  "  --quiet              print nothing but errors\n";

typedef struct {
  SkyParams params;
  SkyLoadOptions load;
  const char *image, *csv, *json, *backend;
  const char *ecsv, *regions, *votable; /* catalogue files besides the CSV */
  const char *smooth;   /* kernel of the detection image, NULL for none */
  const char *bkg, *rms; /* the local method's given maps, NULL for none */
  SkyMethod method;
  double smooth_ms;
  int64_t memory_limit; /* bytes, 0 for none */
  int64_t gpu_memory_limit; /* device bytes, 0 for none */
  int repeat, quiet;
} FindArgs;

static int
parse_find_args (int argc, char **argv, FindArgs *a)
{
  enum { O_BACKEND = 256, O_KAPPA, O_MAXITER, O_THRESHOLD, O_RELATIVE, O_CONN,
         O_CSV, O_ECSV, O_REGIONS, O_VOTABLE, O_JSON, O_QUIET, O_SMOOTH,
         O_METHOD, O_SEED, O_FLOOD, O_MIN_AREA, O_DEBLEND, O_DEBLEND_SIGMA, O_BKG, O_RMS,
         O_BKG_BOX, O_BKG_FILTER, O_MEMORY_LIMIT, O_GPU_MEMORY_LIMIT };
  static const struct option options[] = {
    { "backend", required_argument, NULL, O_BACKEND },
    { "clip-kappa", required_argument, NULL, O_KAPPA },
    { "max-iter", required_argument, NULL, O_MAXITER },
    { "threshold", required_argument, NULL, O_THRESHOLD },
    { "relative", no_argument, NULL, O_RELATIVE },
    { "connectivity", required_argument, NULL, O_CONN },
    { "csv", required_argument, NULL, O_CSV },
    { "ecsv", required_argument, NULL, O_ECSV },
    { "regions", required_argument, NULL, O_REGIONS },
    { "votable", required_argument, NULL, O_VOTABLE },
    { "json", required_argument, NULL, O_JSON },
    { "quiet", no_argument, NULL, O_QUIET },
    { "smooth", required_argument, NULL, O_SMOOTH },
    { "method", required_argument, NULL, O_METHOD },
    { "seed-sigma", required_argument, NULL, O_SEED },
    { "flood-sigma", required_argument, NULL, O_FLOOD },
    { "min-area", required_argument, NULL, O_MIN_AREA },
    { "deblend", required_argument, NULL, O_DEBLEND },
    { "deblend-sigma", required_argument, NULL, O_DEBLEND_SIGMA },
    { "bkg", required_argument, NULL, O_BKG },
    { "bkg-box", required_argument, NULL, O_BKG_BOX },
    { "bkg-filter", required_argument, NULL, O_BKG_FILTER },
    { "rms", required_argument, NULL, O_RMS },
    { "memory-limit", required_argument, NULL, O_MEMORY_LIMIT },
    { "gpu-memory-limit", required_argument, NULL, O_GPU_MEMORY_LIMIT },
    CLI_IMAGE_OPTIONS,
    { NULL, 0, NULL, 0 },
  };
  int64_t v;
  int c, ret = 0;

  memset (a, 0, sizeof *a);
  sky_params_init (&a->params);
  a->backend = "cpu";
  a->repeat = 1;
  opterr = 0; /* unknown options are reported below, in the tool's own words */
  while (ret == 0 && (c = getopt_long (argc, argv, "h", options, NULL)) != -1)
    {
      switch (c)
        {
        case O_BACKEND: a->backend = optarg; break;
        case O_KAPPA: ret = cli_parse_double ("--clip-kappa", optarg, &a->params.clip_kappa); break;
        case O_THRESHOLD: ret = cli_parse_double ("--threshold", optarg, &a->params.threshold); break;
        case O_RELATIVE: a->params.relative = 1; break;
        case O_QUIET: a->quiet = 1; break;
        case O_SMOOTH:
          {
            SkyKernel k = { 0 };
            /* "beam" needs the image's header: checked once it is loaded. */
            if (strcmp (optarg, "beam") != 0 && sky_kernel_parse (&k, optarg) != SKY_OK)
              {
                cli_error ("--smooth: %s, or beam", sky_last_error ());
                ret = CLI_EXIT_USAGE;
              }
            sky_kernel_clear (&k);
            a->smooth = optarg;
          }
          break;
        case O_METHOD:
          /* "global" names the lesson's method by what it does. */
          if (strcmp (optarg, "global") == 0 || strcmp (optarg, "lesson") == 0)
            a->method = SKY_METHOD_LESSON;
          else if (strcmp (optarg, "local") == 0)
            a->method = SKY_METHOD_LOCAL;
          else
            {
              cli_error ("--method: '%s' is not one of global (or lesson), local", optarg);
              ret = CLI_EXIT_USAGE;
            }
          break;
        case O_SEED: ret = cli_parse_double ("--seed-sigma", optarg, &a->params.seed_sigma); break;
        case O_FLOOD:
          ret = cli_parse_double ("--flood-sigma", optarg, &a->params.flood_sigma);
          break;
        case O_MIN_AREA: ret = cli_parse_int ("--min-area", optarg, 1, INT64_MAX, &a->params.min_area); break;
        case O_DEBLEND: ret = cli_parse_deblend (optarg, &a->params); break;
        case O_DEBLEND_SIGMA:
          ret = cli_parse_double ("--deblend-sigma", optarg, &a->params.deblend_sigma);
          break;
        case O_BKG: a->bkg = optarg; break;
        case O_BKG_BOX:
          ret = cli_parse_int_to ("--bkg-box", optarg, 1, 65536, &a->params.bkg_box);
          break;
        case O_BKG_FILTER:
          ret = cli_parse_int_to ("--bkg-filter", optarg, 1, 1023, &a->params.bkg_filter);
          break;
        case O_RMS: a->rms = optarg; break;
        case O_MEMORY_LIMIT: ret = cli_parse_size ("--memory-limit", optarg, &a->memory_limit); break;
        case O_GPU_MEMORY_LIMIT:
          ret = cli_parse_size ("--gpu-memory-limit", optarg, &a->gpu_memory_limit);
          break;
        case O_CSV: a->csv = optarg; break;
        case O_ECSV: a->ecsv = optarg; break;
        case O_REGIONS: a->regions = optarg; break;
        case O_VOTABLE: a->votable = optarg; break;
        case O_JSON: a->json = optarg; break;
        case O_MAXITER:
          ret = cli_parse_int_to ("--max-iter", optarg, 0, 1000000, &a->params.max_iter);
          break;
        case O_CONN:
          if ((ret = cli_parse_int ("--connectivity", optarg, 4, 8, &v)) == 0)
            {
              if (v != 4 && v != 8)
                {
                  cli_error ("--connectivity: must be 4 or 8");
                  ret = CLI_EXIT_USAGE;
                }
              a->params.connectivity = (int) v;
            }
          break;
        default:
          if (!cli_shared_option (c, optarg, find_usage, &a->load, &a->repeat,
                                  &a->params.nthreads, &ret))
            return cli_unknown_option ("find", argv);
        }
    }
  if ((ret = cli_end_options (ret, "find", argc, argv, &a->image, &a->params)) != 0)
    return ret;
  if (strcmp (a->backend, "cpu") != 0 && strcmp (a->backend, "gpu") != 0
      && strcmp (a->backend, "both") != 0)
    {
      cli_error ("--backend: '%s' is not one of cpu, gpu, both", a->backend);
      return CLI_EXIT_USAGE;
    }
  if (a->method != SKY_METHOD_LOCAL && (a->bkg != NULL || a->rms != NULL))
    {
      cli_error ("--bkg, --rms: maps for the local method; add --method local");
      return CLI_EXIT_USAGE;
    }
  if (a->memory_limit > 0
      && (a->method != SKY_METHOD_LESSON || strcmp (a->backend, "cpu") != 0 || a->smooth != NULL))
    {
      cli_error ("--memory-limit: runs the global method on the CPU backend, without --smooth");
      return CLI_EXIT_USAGE;
    }
  if (a->gpu_memory_limit > 0
      && (a->method != SKY_METHOD_LESSON || strcmp (a->backend, "cpu") == 0 || a->smooth != NULL
          || a->memory_limit > 0))
    {
      cli_error ("--gpu-memory-limit: runs the global method on --backend gpu or both, without "
                 "--smooth or --memory-limit");
      return CLI_EXIT_USAGE;
    }
  if (a->smooth != NULL && a->method != SKY_METHOD_LOCAL && strcmp (a->backend, "cpu") != 0)
    {
      cli_error ("--smooth: detection on a smoothed image runs on the CPU backend only");
      return CLI_EXIT_USAGE;
    }
  return 0;
}

static void
print_summary (const FindArgs *a, const SkyImage *img, const SkyResult *res, double load_ms)
{
  const SkyClipStats *s = &res->stats;
  const char *unit = img->bunit[0] ? img->bunit : "(no unit)";
  int64_t order[10];
  const SkyStep *steps;
  int ntop, nsteps;

  printf ("image      %s (HDU %d", img->path, img->hdu);
  if (img->nplanes > 1)
    printf (", plane %lld of %lld", (long long) img->plane, (long long) img->nplanes);
  printf ("), %lld x %lld pixels, BITPIX %d, unit %s\n", (long long) img->nx,
          (long long) img->ny, img->bitpix, unit);
  printf ("blank      %lld pixels", (long long) img->nblank);
  if (img->ninf > 0)
    printf (" (%lld of them infinite)", (long long) img->ninf);
  printf ("\n");
  if (a->method == SKY_METHOD_LOCAL)
    {
      CliLocalArgs la = { a->bkg, a->rms, a->smooth, a->repeat };
      cli_print_local (&la, &a->params, res);
      goto top;
    }
  if (a->smooth != NULL)
    printf ("smoothed   detection on the image convolved with %s (unit sum), %.2f ms; "
            "sources measured on the image\n", a->smooth, a->smooth_ms);
  if (s->flat)
    printf ("clipped    flat: clipping left no spread (median %.6g); no background to measure\n",
            s->median);
  else
    printf ("clipped    median %.6g, sigma %.6g (%lld of %lld pixels kept, %d passes%s)\n",
            s->median, s->sigma, (long long) s->n, (long long) s->ninput, s->iterations,
            s->converged ? "" : ", stopped by --max-iter");
  if (isnan (res->threshold_value))
    printf ("threshold  none (flat image)\n");
  else
    printf ("threshold  pixel > %s%g sigma = %.6g\n", a->params.relative ? "median + " : "",
            a->params.threshold, res->threshold_value);
  printf ("sources    %lld (%d-connected)\n", (long long) res->nsources, a->params.connectivity);

top:
  /* The ten largest summed fluxes, largest first, as the lesson prints them. */
  ntop = sky_catalogue_top_sums (&res->catalogue, order, 10);
  if (ntop > 0)
    {
      printf ("largest summed fluxes (source: sum)\n");
      for (int k = 0; k < ntop; k++)
        printf ("  %6lld: %.6g\n", (long long) (order[k] + 1), res->catalogue.sum[order[k]]);
    }
  printf ("times (ms%s): load %.2f", a->repeat > 1 ? ", best of repeats" : "", load_ms);
  nsteps = sky_method_steps (res->method, &steps);
  for (int k = 0; k < nsteps; k++)
    printf (", %s %.2f", sky_step_name (steps[k]), res->times.ms[steps[k]]);
  printf (", %s steps %.2f\n", nsteps == 4 ? "four" : "all", res->times.total);
}

/* Writes the catalogue files asked for (CSV, ECSV, regions, VOTable) from
 * one export, so that every file holds the same sky positions and fluxes.
 * What the header lacks for them (a WCS, a beam) is a warning in the
 * summary, not an error: those columns stay out or empty and the files say
 * why. stderr stays for the one line of an error. */
static int
write_catalogues (const FindArgs *a, const SkyImage *img, const SkyResult *res,
                  const char *backend)
{
  const struct {
    const char *path;
    int (*write) (const char *path, const SkyExport *ex);
  } files[] = {
    { a->csv, sky_export_csv }, { a->ecsv, sky_export_ecsv },
    { a->regions, sky_export_regions }, { a->votable, sky_export_votable },
  };
  SkyRunInfo info = { 0 };
  SkyExport ex;
  int ret = 0;

  if (a->csv == NULL && a->ecsv == NULL && a->regions == NULL && a->votable == NULL)
    return 0;
  info.image = img;
  info.params = &a->params;
  info.backend = backend;
  info.smooth = a->smooth;
  if (sky_export_init (&ex, &info, res) != SKY_OK)
    {
      cli_error ("%s", sky_last_error ());
      sky_export_clear (&ex);
      return CLI_EXIT_FAILURE;
    }
  if (!a->quiet)
    {
      if (ex.wcs != NULL)
        {
          double eq = sky_wcs_equinox (ex.wcs);
          printf ("sky        %s, %s of each centroid (%s", sky_wcs_lng_name (ex.wcs),
                  sky_wcs_lat_name (ex.wcs), sky_wcs_frame (ex.wcs));
          if (isfinite (eq))
            printf (" %c%g", strncmp (sky_wcs_frame (ex.wcs), "FK4", 3) == 0 ? 'B' : 'J', eq);
          printf (", %s projection)\n", sky_wcs_projection (ex.wcs));
        }
      else
        printf ("sky        none: %s\n", ex.sky_note);
      if (ex.int_flux != NULL)
        printf ("beam       %.4g\" x %.4g\" = %.6g pixels: int_flux = sum_flux / %.6g, in Jy\n",
                img->bmaj * 3600, img->bmin * 3600, ex.beam_area, ex.beam_area);
      else
        printf ("int_flux   empty: %s\n", ex.flux_note);
      if (ex.wcs != NULL && ex.sky_note[0])
        printf ("sky        %s\n", ex.sky_note); /* centroids outside the projection */
    }
  for (size_t k = 0; k < sizeof files / sizeof files[0] && ret == 0; k++)
    if (files[k].path != NULL && files[k].write (files[k].path, &ex) != SKY_OK)
      {
        cli_error ("%s", sky_last_error ());
        ret = CLI_EXIT_FAILURE;
      }
  sky_export_clear (&ex);
  return ret;
}

/* The steps through the runner on backend (the CPU, or for the local
 * method also the GPU or both), repeat times; the result's times become
 * each step's best. Each repeat starts afresh (a benchmark
 * reuses no step), but its buffers come back from the runner's pool. 0, or
 * CLI_EXIT_FAILURE with the error printed. */
static int
run_steps (const FindArgs *a, const SkyImage *img, const SkyImage *detect,
           const CliLocalInputs *local, SkyBackend backend, SkyStages *st)
{
  SkyRunRequest req = { 0 };
  SkyStepTimes best = { 0 };

  req.image = img;
  req.detect = detect;
  req.params = &a->params;
  req.method = a->method;
  if (local != NULL)
    {
      req.background = local->background;
      req.rms = local->rms;
      req.filter = local->has_filter ? &local->filter : NULL;
    }
  req.backend = backend;
  req.until = SKY_STEP_MEASURE;
  req.gpu_repeat = a->repeat;
  /* The device takes its own repeats (a warm-up, then the best of them). */
  for (int r = 0; r < (backend == SKY_BACKEND_GPU ? 1 : a->repeat); r++)
    {
      sky_stages_clear (st);
      if (sky_run (&req, st) != SKY_OK)
        {
          cli_error ("%s: %s", a->image, sky_last_error ());
          return CLI_EXIT_FAILURE;
        }
      if (r == 0)
        best = st->result.times;
      else
        sky_step_times_min (&best, &st->result.times);
    }
  st->result.times = best;
  return 0;
}

/* The local method's device figures: each step's kernels (best of the
 * repeats after a warm-up), and with both whether each step agrees. */
static void
print_local_gpu (const SkyStages *st, const char *backend)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (st->method, &steps);

  printf ("gpu        kernels, best of %d after a warm-up (ms):", st->gpu_times.runs);
  for (int k = 0; k < nsteps; k++)
    if (st->gpu_steps & (1u << steps[k]))
      printf (" %s %.4f", sky_step_name (steps[k]), st->gpu_kernel.ms[steps[k]]);
    else
      printf (" %s on the CPU", sky_step_name (steps[k]));
  printf ("; all %.4f\n", st->gpu_kernel.total);
  if (st->backend != SKY_BACKEND_BOTH)
    return;
  printf ("check      --backend %s:", backend);
  for (int k = 0; k < nsteps; k++)
    printf (" %s %s", sky_step_name (steps[k]), st->agree[steps[k]] ? "agrees" : "DIFFERS");
  printf ("\n");
}

int
cli_find (int argc, char **argv)
{
  FindArgs a;
  SkyImage img, smoothed = { 0 };
  const SkyImage *detect = &img;
  SkyStages cpu = { 0 };
  CliLocalInputs local = { 0 };
  const SkyResult *res = &cpu.result;
  double start = sky_now_ms (), t0, load_ms = 0;
  int ret = parse_find_args (argc, argv, &a);
  int want_cpu, want_gpu, gpu_ok = 0, local_gpu = 0, tiled = 0, on_device = 0, gpu_tiled = 0;
  char gpu_why[512] = "";
#ifdef SKYSIFT_HAVE_CUDA
  CliGpuRun gpu_run = { 0 };
  SkyGpu *loaded = NULL;      /* the image read straight to this device */
  CliGpuLoad load_times = { 0 };
#endif
  const SkyResult *out = res;

  if (ret != 0)
    return ret < 0 ? 0 : ret;

  /* The device's limit holds for every allocation of the run (the file's
   * direct load too): the backend reads it from the environment. */
  if (a.gpu_memory_limit > 0)
    {
      char bytes[32];
      snprintf (bytes, sizeof bytes, "%lld", (long long) a.gpu_memory_limit);
      setenv ("SKYSIFT_GPU_MEMORY_LIMIT", bytes, 1);
    }

  /* Without a usable device, --backend gpu warns and finishes on the CPU,
   * and both runs the CPU; the summary says why the GPU did not run. */
  want_cpu = strcmp (a.backend, "gpu") != 0;
  want_gpu = strcmp (a.backend, "cpu") != 0;
  if (want_gpu)
    {
      gpu_ok = cli_gpu_usable (gpu_why, sizeof gpu_why);
      if (!gpu_ok)
        {
          fprintf (stderr, "skysift-cli: warning: --backend %s: no usable GPU (%s); %s\n",
                   a.backend, gpu_why, want_cpu ? "the CPU runs alone" : "running on the CPU");
          want_cpu = 1;
        }
    }

#ifdef SKYSIFT_HAVE_CUDA
  /* The GPU alone on the lesson's method: a field whose run does not fit
   * in the device's memory runs in bands of rows from its file; otherwise
   * the plane goes from the file to the device with no image in host
   * memory, where it can. */
  if (gpu_ok && !want_cpu && a.method == SKY_METHOD_LESSON && a.smooth == NULL
      && a.memory_limit == 0)
    {
      if ((ret = cli_gpu_find_tiled (a.image, &a.load, &a.params, a.gpu_memory_limit, &img,
                                     &gpu_run, &gpu_tiled, &load_ms))
          != 0)
        goto exit;
      if (!gpu_tiled)
        on_device = cli_gpu_load_direct (a.image, &a.load, a.params.nthreads, &loaded, &img,
                                         &load_ms, &load_times) == 0;
    }
#endif
  t0 = sky_now_ms ();
  if (a.memory_limit > 0)
    {
      /* A tiled run opens the image without its pixels: the load is the
       * header, and the steps read the pixels. */
      double t_run = 0;
      ret = cli_find_tiled (a.image, &a.load, &a.params, a.memory_limit, &img, &cpu.result,
                            &tiled);
      if (ret != 0)
        goto exit;
      t_run = cpu.result.times.total;
      load_ms = sky_now_ms () - t0 - t_run;
    }
  if (!tiled && !on_device && !gpu_tiled && sky_image_load (a.image, &a.load, &img) != SKY_OK)
    {
      cli_error ("%s", sky_last_error ());
      return CLI_EXIT_FAILURE;
    }
  if (!tiled && !on_device && !gpu_tiled)
    load_ms = sky_now_ms () - t0;

  ret = CLI_EXIT_FAILURE;
  if (a.method == SKY_METHOD_LOCAL)
    {
      /* The filter goes on image - background: the runner's detect step. */
      CliLocalArgs la = { a.bkg, a.rms, a.smooth, a.repeat };
      ret = cli_local_inputs (&la, &img, &local);
      if (ret != 0)
        goto exit;
      ret = CLI_EXIT_FAILURE;
    }
  else if (a.smooth != NULL)
    {
      SkyKernel k;
      t0 = sky_now_ms ();
      if (cli_find_kernel (&img, a.smooth, &k) != SKY_OK
          || sky_cpu_smooth (&img, &k, a.params.nthreads, &smoothed) != SKY_OK)
        {
          cli_error ("%s: --smooth %s: %s", a.image, a.smooth, sky_last_error ());
          sky_kernel_clear (&k);
          goto exit;
        }
      sky_kernel_clear (&k);
      a.smooth_ms = sky_now_ms () - t0;
      detect = &smoothed;
    }
  if (a.method == SKY_METHOD_LOCAL && gpu_ok)
    {
      /* The local method on the device through the runner: every step
       * there, or with both each step checked against the CPU's. */
      if (run_steps (&a, &img, detect, &local, want_cpu ? SKY_BACKEND_BOTH : SKY_BACKEND_GPU,
                     &cpu) != 0)
        goto exit;
      if (cpu.gpu_fault != NULL)
        {
          snprintf (gpu_why, sizeof gpu_why, "%s", cpu.gpu_fault);
          fprintf (stderr, "skysift-cli: warning: --backend %s: %s; the results are the CPU's\n",
                   a.backend, cpu.gpu_fault);
        }
      local_gpu = cpu.has_gpu;
      gpu_ok = 0;
      want_cpu = 1;   /* the results are the runner's, in cpu */
    }
  else if (want_cpu && !tiled
           && run_steps (&a, &img, detect, &local, SKY_BACKEND_CPU, &cpu) != 0)
    goto exit;
  if (a.method == SKY_METHOD_LESSON && want_cpu)
    cli_warn_global (&a.params, &img, res);

#ifdef SKYSIFT_HAVE_CUDA
  if (gpu_ok && want_cpu && a.method == SKY_METHOD_LESSON && a.smooth == NULL && !tiled)
    {
      /* Both backends, on a field the device cannot hold whole: the GPU's
       * run in bands, checked against the CPU's whole-image run. */
      SkyImage header = { 0 };
      double header_ms;
      int status = cli_gpu_find_tiled (a.image, &a.load, &a.params, a.gpu_memory_limit, &header,
                                       &gpu_run, &gpu_tiled, &header_ms);
      sky_image_clear (&header);
      if (status != 0)
        {
          ret = status;
          goto exit;
        }
      if (gpu_tiled)
        gpu_run.failed_checks = sky_result_compare (&img, res, &gpu_run.res, gpu_run.compare,
                                                    sizeof gpu_run.compare);
    }
  if (gpu_ok && a.method != SKY_METHOD_LOCAL && !gpu_tiled
      && cli_gpu_find (loaded, &img, &a.params, a.repeat, want_cpu ? res : NULL, &gpu_run) != 0)
    {
      /* The device failed during the run (out of memory, lost): the CPU
       * finishes the job, and the summary says why the GPU did not. */
      snprintf (gpu_why, sizeof gpu_why, "%s", sky_last_error ());
      fprintf (stderr, "skysift-cli: warning: --backend %s: the GPU failed during the run (%s); "
               "%s\n", a.backend, gpu_why,
               want_cpu ? "the results are the CPU's" : "finishing on the CPU");
      gpu_ok = 0;
      cli_gpu_clear (&gpu_run);
      if (loaded != NULL)
        {
          /* The pixels were only on the device: the CPU needs its own. */
          sky_image_clear (&img);
          if (sky_image_load (a.image, &a.load, &img) != SKY_OK)
            {
              cli_error ("%s", sky_last_error ());
              goto exit;
            }
        }
      if (!want_cpu && run_steps (&a, &img, detect, &local, SKY_BACKEND_CPU, &cpu) != 0)
        goto exit;
      want_cpu = 1;
    }
  if (gpu_ok && !want_cpu && a.method != SKY_METHOD_LOCAL)
    out = &gpu_run.res;
#endif

  if (!a.quiet)
    {
      print_summary (&a, &img, out, load_ms);
#ifdef SKYSIFT_HAVE_CUDA
      if (loaded != NULL)
        {
          const SkyGpuLoadTimes *lt = &load_times.times;
          printf ("load       file to device %.2f ms: header %.2f, device buffers %.2f, read, "
                  "copy up and convert %.2f (%lld chunks of %lld KiB, %d threads, %d "
                  "page-locked slots made before the load in %.2f ms)\n",
                  load_ms, load_ms - lt->buffers_ms - lt->ring_ms - lt->stream_ms,
                  lt->buffers_ms, lt->stream_ms + lt->ring_ms, (long long) lt->nchunks,
                  (long long) lt->chunk_bytes / 1024, lt->nthreads, lt->nslots,
                  load_times.prepare_ms);
        }
#endif
#ifdef SKYSIFT_HAVE_CUDA
      if (gpu_ok && want_cpu)
        cli_gpu_print_table (&gpu_run, res, &img, a.repeat);
      else if (gpu_ok && !gpu_tiled)
        cli_gpu_print_times (&gpu_run, &img, a.repeat);
      if (gpu_tiled)
        cli_gpu_print_tiled (&gpu_run);
#endif
      if (local_gpu)
        print_local_gpu (&cpu, a.backend);
      else if (want_gpu && !gpu_ok)
        printf ("gpu        unavailable: %s\n", gpu_why);
    }
  if (write_catalogues (&a, &img, out,
                        out == res && !(local_gpu && strcmp (a.backend, "gpu") == 0) ? "cpu"
                                                                                    : "gpu")
      != 0)
    goto exit;
  if (a.json != NULL)
    {
      /* What ran: a GPU that failed leaves the CPU's results. */
      SkyRunInfo info = { &img, &a.params,
                          (want_gpu && !gpu_ok && !local_gpu) ? "cpu" : a.backend, load_ms,
                          a.repeat, NULL, a.smooth, 0, sky_now_ms () - start };
      if (local_gpu)
        {
          info.gpu = &cpu.gpu_times;
          info.gpu_steps = cpu.gpu_steps;
        }
#ifdef SKYSIFT_HAVE_CUDA
      else if (gpu_ok)
        info.gpu = &gpu_run.times;
#endif
      if (sky_write_run_json (a.json, &info, out) != SKY_OK)
        {
          cli_error ("%s", sky_last_error ());
          goto exit;
        }
    }
  ret = 0;
  /* The local method on both backends: a step whose results differ breaks
   * the contract. */
  if (local_gpu && cpu.backend == SKY_BACKEND_BOTH && cpu.gpu_note != NULL)
    {
      cli_error ("%s: CPU and GPU results differ: %s", a.image, cpu.gpu_note);
      ret = CLI_EXIT_FAILURE;
    }
#ifdef SKYSIFT_HAVE_CUDA
  /* Both backends ran and disagree: the contract is broken, say so. */
  if (gpu_ok && want_cpu && gpu_run.failed_checks > 0)
    {
      cli_error ("%s: CPU and GPU results differ: %s", a.image, gpu_run.compare);
      ret = CLI_EXIT_FAILURE;
    }
#endif

exit:
#ifdef SKYSIFT_HAVE_CUDA
  cli_gpu_clear (&gpu_run);
  sky_gpu_free (loaded);
#endif
  sky_stages_clear (&cpu);
  cli_local_inputs_clear (&local);
  sky_image_clear (&smoothed);
  sky_image_clear (&img);
  return ret;
}

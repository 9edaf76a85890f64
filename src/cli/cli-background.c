/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli background: the background and rms maps of an image. */
#include "cli.h"
#include "sky-cpu.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char background_usage[] =
  "Usage: skysift-cli background IMAGE.fits [--out-bkg FILE] [--out-rms FILE] [OPTIONS]\n"
  "\n"
  "Estimates the background and its rms on a mesh of boxes, SExtractor's way\n"
  "(as SEP does): each box clipped, its background the histogram's mode\n"
  "(2.5 median - 1.5 mean; the median in crowded boxes), the mesh median-\n"
  "filtered and interpolated to every pixel with a bicubic spline. Blank\n"
  "pixels take no part. The maps are written as float32 FITS images with the\n"
  "input's header (WCS, unit, beam).\n"
  "  --out-bkg FILE     write the background map\n"
  "  --out-rms FILE     write the rms (noise) map\n"
  "  --bkg-box N        box side in pixels (default 64)\n"
  "  --bkg-filter N     median filter of the mesh, odd, in boxes (default 3; 1: none)\n"
  "  --hdu N            1-based HDU (default: the first with image data)\n"
  "  --plane N          0-based plane of a cube (default 0)\n"
  "  --json FILE        write the run summary as JSON\n"
  "  --repeat N         compute N times (new maps each time), report the best\n"
  "                     and median times\n"
  "  --reuse-maps       ... into the same maps every time (no fresh pages after\n"
  "                     the first, as a run reusing its buffers)\n"
  "  --threads N        worker threads (default: every core)\n"
  "  --quiet            print nothing but errors\n";

typedef struct {
  SkyParams params;
  SkyLoadOptions load;
  const char *image, *out_bkg, *out_rms, *json;
  int repeat, quiet, reuse_maps;
} BackgroundArgs;

static int
parse_args (int argc, char **argv, BackgroundArgs *a)
{
  enum { O_BKG = 256, O_RMS, O_BOX, O_FILTER, O_HDU, O_PLANE, O_JSON, O_REPEAT, O_THREADS,
         O_QUIET, O_REUSE, O_HELP };
  static const struct option options[] = {
    { "out-bkg", required_argument, NULL, O_BKG },
    { "out-rms", required_argument, NULL, O_RMS },
    { "bkg-box", required_argument, NULL, O_BOX },
    { "bkg-filter", required_argument, NULL, O_FILTER },
    { "hdu", required_argument, NULL, O_HDU },
    { "plane", required_argument, NULL, O_PLANE },
    { "json", required_argument, NULL, O_JSON },
    { "repeat", required_argument, NULL, O_REPEAT },
    { "threads", required_argument, NULL, O_THREADS },
    { "quiet", no_argument, NULL, O_QUIET },
    { "reuse-maps", no_argument, NULL, O_REUSE },
    { "help", no_argument, NULL, O_HELP },
    { NULL, 0, NULL, 0 },
  };
  int64_t v;
  int c, ret = 0;

  memset (a, 0, sizeof *a);
  sky_params_init (&a->params);
  a->repeat = 1;
  opterr = 0;
  while (ret == 0 && (c = getopt_long (argc, argv, "h", options, NULL)) != -1)
    {
      switch (c)
        {
        case O_BKG: a->out_bkg = optarg; break;
        case O_RMS: a->out_rms = optarg; break;
        case O_JSON: a->json = optarg; break;
        case O_QUIET: a->quiet = 1; break;
        case O_REUSE: a->reuse_maps = 1; break;
        case O_BOX:
          if ((ret = cli_parse_int ("--bkg-box", optarg, 1, 16384, &v)) == 0)
            a->params.bkg_box = (int) v;
          break;
        case O_FILTER:
          if ((ret = cli_parse_int ("--bkg-filter", optarg, 1, 1023, &v)) == 0)
            a->params.bkg_filter = (int) v;
          break;
        case O_HDU:
          if ((ret = cli_parse_int ("--hdu", optarg, 1, 100000, &v)) == 0)
            a->load.hdu = (int) v;
          break;
        case O_PLANE:
          if ((ret = cli_parse_int ("--plane", optarg, 0, INT64_MAX, &v)) == 0)
            a->load.plane = v;
          break;
        case O_REPEAT:
          if ((ret = cli_parse_int ("--repeat", optarg, 1, 100000, &v)) == 0)
            a->repeat = (int) v;
          break;
        case O_THREADS:
          if ((ret = cli_parse_int ("--threads", optarg, 0, 256, &v)) == 0)
            a->params.nthreads = (int) v;
          break;
        case 'h':
        case O_HELP:
          fputs (background_usage, stdout);
          return -1;
        default:
          cli_error ("background: unknown option or missing value: %s", argv[optind - 1]);
          fputs ("Run 'skysift-cli background --help' for the options.\n", stderr);
          return CLI_EXIT_USAGE;
        }
    }
  if (ret != 0)
    return ret;
  if (optind != argc - 1)
    {
      cli_error ("background: give exactly one image");
      fputs ("Run 'skysift-cli background --help' for the options.\n", stderr);
      return CLI_EXIT_USAGE;
    }
  a->image = argv[optind];
  if (sky_params_check (&a->params) != SKY_OK)
    {
      cli_error ("%s", sky_last_error ());
      return CLI_EXIT_USAGE;
    }
  return 0;
}

static int
compare_double (const void *x, const void *y)
{
  double a = *(const double *) x, b = *(const double *) y;
  return (a > b) - (a < b);
}

typedef struct {
  double mesh, maps, total; /* ms */
} BackgroundTimes;

/* The median of each time over the repeats (sorts the arrays). */
static BackgroundTimes
median_times (double *mesh, double *maps, double *total, int n)
{
  BackgroundTimes t;
  qsort (mesh, (size_t) n, sizeof *mesh, compare_double);
  qsort (maps, (size_t) n, sizeof *maps, compare_double);
  qsort (total, (size_t) n, sizeof *total, compare_double);
  t.mesh = n % 2 ? mesh[n / 2] : (mesh[n / 2 - 1] + mesh[n / 2]) / 2;
  t.maps = n % 2 ? maps[n / 2] : (maps[n / 2 - 1] + maps[n / 2]) / 2;
  t.total = n % 2 ? total[n / 2] : (total[n / 2 - 1] + total[n / 2]) / 2;
  return t;
}

static int
write_json (const BackgroundArgs *a, const SkyImage *img, const SkyBackgroundMesh *mesh,
            double load_ms, BackgroundTimes best, BackgroundTimes median)
{
  char *text = NULL;
  size_t size = 0;
  FILE *fp = open_memstream (&text, &size);
  int ret;

  if (fp == NULL)
    return sky_fail (SKY_ERR_MEMORY, "%s: no memory for the summary", a->json);
  fprintf (fp, "{\n  \"image\": \"");
  for (const char *s = img->path; *s; s++)
    {
      if (*s == '"' || *s == '\\')
        fputc ('\\', fp);
      if ((unsigned char) *s < 0x20)
        fprintf (fp, "\\u%04x", *s);
      else
        fputc (*s, fp);
    }
  fprintf (fp, "\",\n  \"hdu\": %d,\n  \"plane\": %lld,\n", img->hdu, (long long) img->plane);
  fprintf (fp, "  \"shape\": [%lld, %lld],\n  \"nblank\": %lld,\n", (long long) img->ny,
           (long long) img->nx, (long long) img->nblank);
  fprintf (fp, "  \"bkg_box\": %d,\n  \"bkg_filter\": %d,\n", mesh->box, mesh->filter);
  fprintf (fp, "  \"mesh\": [%lld, %lld],\n  \"mesh_filled\": %lld,\n", (long long) mesh->nby,
           (long long) mesh->nbx, (long long) mesh->nbad);
  fprintf (fp, "  \"global_back\": %.9g,\n  \"global_rms\": %.9g,\n", mesh->global_back,
           mesh->global_rms);
  fprintf (fp, "  \"repeat\": %d,\n  \"reuse_maps\": %s,\n  \"threads\": %d,\n", a->repeat,
           a->reuse_maps ? "true" : "false",
           a->params.nthreads > 0 ? a->params.nthreads : sky_default_threads ());
  fprintf (fp, "  \"times_ms\": {\"load\": %.4f, \"mesh\": %.4f, \"maps\": %.4f, "
           "\"total\": %.4f},\n", load_ms, best.mesh, best.maps, best.total);
  fprintf (fp, "  \"median_times_ms\": {\"mesh\": %.4f, \"maps\": %.4f, \"total\": %.4f}\n}\n",
           median.mesh, median.maps, median.total);
  if (fclose (fp) != 0)
    {
      free (text);
      return sky_fail (SKY_ERR_MEMORY, "%s: no memory for the summary", a->json);
    }
  ret = sky_write_text (a->json, text);
  free (text);
  return ret;
}

/* The image's NAXIS, from its header cards (2 when absent). */
static int
header_naxis (const SkyImage *img)
{
  for (int i = 0; img->header != NULL && i < img->nheader_cards; i++)
    {
      const char *card = img->header + 80 * (size_t) i;
      if (strncmp (card, "NAXIS   =", 9) == 0)
        return atoi (card + 10);
    }
  return 2;
}

/* A map as float32 FITS under the image's header (its WCS, unit, beam). */
static int
write_map (const char *path, const SkyImage *img, const SkyBackgroundMesh *mesh,
           const char *what, const float *data)
{
  char line[72];
  const char *history[1] = { line };
  SkyPlaneHeader h = { 0 };

  snprintf (line, sizeof line, "skysift %s map: SEP's mesh, box %d, filter %d", what,
            mesh->box, mesh->filter);
  h.cards = img->header;
  h.ncards = img->nheader_cards;
  h.source_naxis = header_naxis (img);
  h.history = history;
  h.nhistory = 1;
  return sky_fits_write_plane_with_header (path, img->nx, img->ny, -32, data, &h);
}

int
cli_background (int argc, char **argv)
{
  BackgroundArgs a;
  SkyImage img = { 0 };
  SkyBackgroundMesh mesh = { 0 };
  float *back = NULL, *rms = NULL;
  double *times = NULL, t0, load_ms;
  BackgroundTimes best = { INFINITY, INFINITY, INFINITY }, median;
  int ret, status = CLI_EXIT_FAILURE;
  size_t npix;

  if ((ret = parse_args (argc, argv, &a)) != 0)
    return ret < 0 ? 0 : ret;

  t0 = sky_now_ms ();
  if (sky_image_load (a.image, &a.load, &img) != SKY_OK)
    {
      cli_error ("%s", sky_last_error ());
      return CLI_EXIT_FAILURE;
    }
  load_ms = sky_now_ms () - t0;
  npix = (size_t) (img.nx * img.ny);
  times = malloc (3 * (size_t) a.repeat * sizeof (double));
  if (times == NULL)
    {
      cli_error ("%s: no memory", a.image);
      goto exit;
    }

  for (int r = 0; r < a.repeat; r++)
    {
      double t1, t2, t3;
      sky_background_mesh_clear (&mesh);
      if (!a.reuse_maps || back == NULL)
        {
          free (back);
          free (rms);
          back = rms = NULL;
        }
      /* By default each repeat makes new maps, as a caller would: their
       * first touch counts in the time (as it does in SEP's back() and
       * rms()). */
      t1 = sky_now_ms ();
      if (back == NULL)
        {
          back = sky_alloc_large (npix * sizeof (float));
          rms = sky_alloc_large (npix * sizeof (float));
        }
      if (back == NULL || rms == NULL)
        {
          cli_error ("%s: no memory for the maps of %lld x %lld pixels", a.image,
                     (long long) img.nx, (long long) img.ny);
          goto exit;
        }
      ret = sky_cpu_background_mesh (&img, &a.params, a.params.nthreads, &mesh);
      t2 = sky_now_ms ();
      if (ret == SKY_OK)
        ret = sky_cpu_background_rows (&mesh, 0, img.ny, a.params.nthreads, back, rms);
      t3 = sky_now_ms ();
      if (ret != SKY_OK)
        {
          cli_error ("%s: %s", a.image, sky_last_error ());
          goto exit;
        }
      times[r] = t2 - t1;
      times[a.repeat + r] = t3 - t2;
      times[2 * a.repeat + r] = t3 - t1;
      if (t3 - t1 < best.total)
        best = (BackgroundTimes) { t2 - t1, t3 - t2, t3 - t1 };
    }
  median = median_times (times, times + a.repeat, times + 2 * a.repeat, a.repeat);

  if ((a.out_bkg != NULL && write_map (a.out_bkg, &img, &mesh, "background", back) != SKY_OK)
      || (a.out_rms != NULL && write_map (a.out_rms, &img, &mesh, "rms", rms) != SKY_OK))
    {
      cli_error ("%s", sky_last_error ());
      goto exit;
    }
  if (a.json != NULL && write_json (&a, &img, &mesh, load_ms, best, median) != SKY_OK)
    {
      cli_error ("%s", sky_last_error ());
      goto exit;
    }

  if (!a.quiet)
    {
      const char *unit = img.bunit[0] ? img.bunit : "(no unit)";
      printf ("image      %s (HDU %d", img.path, img.hdu);
      if (img.nplanes > 1)
        printf (", plane %lld of %lld", (long long) img.plane, (long long) img.nplanes);
      printf ("), %lld x %lld pixels, unit %s, %lld blank\n", (long long) img.nx,
              (long long) img.ny, unit, (long long) img.nblank);
      printf ("mesh       %lld x %lld boxes of %d pixels, filter %d, %lld filled from "
              "neighbours\n", (long long) mesh.nbx, (long long) mesh.nby, mesh.box, mesh.filter,
              (long long) mesh.nbad);
      printf ("global     background %.7g, rms %.7g\n", mesh.global_back, mesh.global_rms);
      printf ("time       load %.2f ms, mesh %.2f ms, maps %.2f ms, total %.2f ms", load_ms,
              best.mesh, best.maps, best.total);
      if (a.repeat > 1)
        printf (" (best of %d; median total %.2f ms)", a.repeat, median.total);
      printf ("\n");
      if (a.out_bkg)
        printf ("background %s\n", a.out_bkg);
      if (a.out_rms)
        printf ("rms        %s\n", a.out_rms);
    }
  status = 0;

exit:
  sky_background_mesh_clear (&mesh);
  free (back);
  free (rms);
  free (times);
  sky_image_clear (&img);
  return status;
}

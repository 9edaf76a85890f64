/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli find --method local: background and rms maps (computed, or
 * given as FITS images), then the local method; and the global method's
 * warning when its one threshold cannot work on the image. */
#include "cli-find.h"
#include "sky-cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
cli_parse_deblend (const char *text, SkyParams *params)
{
  char levels[32];
  const char *comma = strchr (text, ',');
  int64_t n;
  int ret;

  if (comma == NULL)
    {
      /* "0" (or "1") alone turns deblending off. */
      if ((ret = cli_parse_int ("--deblend", text, 0, 1, &n)) != 0)
        return ret;
      params->deblend_nthresh = (int) n;
      return 0;
    }
  if ((size_t) (comma - text) >= sizeof levels)
    {
      cli_error ("--deblend: '%s' is not NTHRESH,MINCONT", text);
      return CLI_EXIT_USAGE;
    }
  memcpy (levels, text, (size_t) (comma - text));
  levels[comma - text] = '\0';
  if ((ret = cli_parse_int ("--deblend", levels, 0, 1024, &n)) != 0
      || (ret = cli_parse_double ("--deblend", comma + 1, &params->deblend_mincont)) != 0)
    return ret;
  params->deblend_nthresh = (int) n;
  return 0;
}

int
cli_find_kernel (const SkyImage *img, const char *spec, SkyKernel *k)
{
  if (strcmp (spec, "beam") == 0)
    return sky_kernel_beam (k, img);
  return sky_kernel_parse (k, spec);
}

/* A map the user gives in place of the computed one: a FITS image of the
 * same size. The pixels are handed over (malloc'ed). */
static int
load_map (const char *option, const char *path, const SkyImage *img, float **out)
{
  SkyImage map;

  if (sky_image_load (path, NULL, &map) != SKY_OK)
    {
      cli_error ("%s: %s", option, sky_last_error ());
      return CLI_EXIT_FAILURE;
    }
  if (map.nx != img->nx || map.ny != img->ny)
    {
      cli_error ("%s %s: the map is %lld x %lld pixels, the image %lld x %lld", option, path,
                 (long long) map.nx, (long long) map.ny, (long long) img->nx,
                 (long long) img->ny);
      sky_image_clear (&map);
      return CLI_EXIT_FAILURE;
    }
  *out = map.pixels;
  map.pixels = NULL;
  sky_image_clear (&map);
  return 0;
}

int
cli_local_inputs (const CliLocalArgs *a, const SkyImage *img, CliLocalInputs *in)
{
  memset (in, 0, sizeof *in);
  if ((a->bkg != NULL) != (a->rms != NULL))
    {
      cli_error ("--bkg and --rms go together: give both maps or neither");
      return CLI_EXIT_USAGE;
    }
  if (a->bkg != NULL)
    {
      int ret = load_map ("--bkg", a->bkg, img, &in->background);
      if (ret == 0)
        ret = load_map ("--rms", a->rms, img, &in->rms);
      if (ret != 0)
        {
          cli_local_inputs_clear (in);
          return ret;
        }
    }
  if (a->smooth != NULL)
    {
      if (cli_find_kernel (img, a->smooth, &in->filter) != SKY_OK)
        {
          cli_error ("%s: --smooth %s: %s", img->path, a->smooth, sky_last_error ());
          cli_local_inputs_clear (in);
          return CLI_EXIT_FAILURE;
        }
      in->has_filter = 1;
    }
  return 0;
}

void
cli_local_inputs_clear (CliLocalInputs *in)
{
  free (in->background);
  free (in->rms);
  sky_kernel_clear (&in->filter);
  memset (in, 0, sizeof *in);
}

void
cli_print_local (const CliLocalArgs *a, const SkyParams *p, const SkyResult *res)
{
  printf ("method     local: image - background, islands against the rms map\n");
  if (a->bkg != NULL)
    printf ("background given: %s, rms %s\n", a->bkg, a->rms);
  else
    printf ("background mesh of %d pixels, median filter of %d boxes\n", p->bkg_box,
            p->bkg_filter);
  if (a->smooth != NULL)
    printf ("filtered   detection on image - background convolved with %s (unit sum); its "
            "noise is %.4g times the rms map's\n", a->smooth, res->noise_scale);
  printf ("islands    %lld: seeds > %g rms, flooded down to > %g rms, at least %lld pixels "
          "(%d-connected)\n", (long long) res->nislands, p->seed_sigma, p->flood_sigma,
          (long long) p->min_area, p->connectivity);
  if (p->deblend_nthresh > 1)
    printf ("deblended  %lld islands split (%d levels, contrast %g)\n",
            (long long) res->ndeblended, p->deblend_nthresh, p->deblend_mincont);
  else
    printf ("deblended  no (--deblend 0)\n");
  printf ("sources    %lld\n", (long long) res->nsources);
}

void
cli_warn_global (const SkyParams *p, const SkyImage *img, const SkyResult *res)
{
  const SkyClipStats *s = &res->stats;
  int64_t largest = 0, nvalid = img->nx * img->ny - img->nblank;

  if (s->flat || isnan (res->threshold_value))
    return;
  for (int64_t i = 0; i < res->catalogue.n; i++)
    largest = res->catalogue.npix[i] > largest ? res->catalogue.npix[i] : largest;
  if (!p->relative && res->threshold_value < s->median)
    fprintf (stderr, "skysift-cli: warning: %s: the threshold %.6g lies below the clipped "
             "median %.6g: the image has a sky level, and the sky becomes a source; try "
             "--method local (or --relative)\n", img->path, res->threshold_value, s->median);
  else if (nvalid > 0 && 2 * largest > nvalid)
    fprintf (stderr, "skysift-cli: warning: %s: one source covers %.0f%% of the image: one "
             "threshold cannot follow its background; try --method local (or --relative)\n",
             img->path, 100.0 * largest / nvalid);
}

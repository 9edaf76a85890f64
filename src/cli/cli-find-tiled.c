/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli find --memory-limit: a field too large for the memory given
 * is left in its file and run in bands of rows (sky_cpu_run_tiled). */
#include "cli-find.h"
#include "sky-cpu.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bytes a pixel costs in a whole-image run: the image (4), mask (1),
 * labels (4), the labeller's bits and union-find (up to 2, with room), the
 * clip's buckets (a few percent): docs/design.md, "Memory". */
#define WHOLE_BYTES_PER_PIXEL 14
/* Bytes a pixel of a band costs: its pixels, mask and labels and the
 * labeller's tables. Half the limit goes to the band; the rest is for the
 * clip's chunks, the labels' join tables and the catalogue. */
#define BAND_BYTES_PER_PIXEL 12
/* Pixels each clipping thread reads at a time (4 MiB). */
#define CLIP_CHUNK ((int64_t) 1 << 20)

int
cli_parse_size (const char *option, const char *text, int64_t *bytes)
{
  char *end = NULL;
  double value;
  double unit = 1;

  errno = 0;
  value = strtod (text, &end);
  if (end != text && *end != '\0')
    {
      switch (*end)
        {
        case 'k': case 'K': unit = 1024.0; break;
        case 'm': case 'M': unit = 1048576.0; break;
        case 'g': case 'G': unit = 1073741824.0; break;
        case 't': case 'T': unit = 1099511627776.0; break;
        default: unit = 0; break;
        }
      end++;
      if (*end == 'i' || *end == 'I')
        end++;
      if (*end == 'b' || *end == 'B')
        end++;
    }
  if (end == text || *end != '\0' || unit == 0 || errno != 0 || !isfinite (value) || value <= 0
      || value * unit >= 9.2e18)
    {
      cli_error ("%s: '%s' is not a size (a number of bytes, or with K, M, G or T)", option,
                 text);
      return CLI_EXIT_USAGE;
    }
  *bytes = (int64_t) (value * unit);
  return 0;
}

static int
read_part (void *ctx, int64_t first, int64_t n, int nthreads, float *out, int64_t *ninf)
{
  return sky_plane_file_read (ctx, first, n, nthreads, out, ninf);
}

void
cli_plane_source (SkyPlaneFile *file, const SkyImage *img, SkyPixelSource *src)
{
  memset (src, 0, sizeof *src);
  src->nx = img->nx;
  src->ny = img->ny;
  src->read = read_part;
  src->ctx = file;
  src->chunk = CLIP_CHUNK;
}

int
cli_find_tiled (const char *image, const SkyLoadOptions *load, const SkyParams *params,
                int64_t limit, SkyImage *img, SkyResult *res, int *tiled)
{
  SkyPlaneFile *file = NULL;
  SkyPixelSource src;
  int64_t npixels, tile_rows, ninf = 0;

  int ret;

  *tiled = 0;
  if ((ret = sky_plane_file_open (image, load, img, &file)) != SKY_OK)
    {
      /* A compressed image (or a plane that is not there) goes to the
       * whole-image load, which reads it or says what is wrong. */
      if (ret == SKY_ERR_ARGUMENT)
        return 0;
      cli_error ("%s", sky_last_error ());
      return CLI_EXIT_FAILURE;
    }
  npixels = img->nx * img->ny;
  if (npixels <= limit / WHOLE_BYTES_PER_PIXEL)
    {
      /* It fits: the whole-image run, which is faster. */
      sky_plane_file_close (file);
      sky_image_clear (img);
      return 0;
    }
  tile_rows = limit / 2 / (img->nx * BAND_BYTES_PER_PIXEL);
  if (tile_rows < 1)
    {
      cli_error ("%s: --memory-limit %lld bytes cannot hold one band of rows of %lld pixels",
                 image, (long long) limit, (long long) img->nx);
      sky_plane_file_close (file);
      sky_image_clear (img);
      return CLI_EXIT_FAILURE;
    }
  cli_plane_source (file, img, &src);
  *tiled = 1;
  if (sky_cpu_run_tiled (&src, params, tile_rows, res, &ninf) != SKY_OK)
    {
      cli_error ("%s: %s", image, sky_last_error ());
      sky_plane_file_close (file);
      return CLI_EXIT_FAILURE;
    }
  img->nblank = npixels - res->stats.ninput;
  img->ninf = ninf;
  sky_plane_file_close (file);
  return 0;
}

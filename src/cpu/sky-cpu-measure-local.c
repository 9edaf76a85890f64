/* The local method's measures beside the common ones: the maps at the
 * peak, errors from the rms map, and the flags. One pass over the source
 * pixels; every measure is a per-source sum or OR, so tiles add up. */
#include "sky-cpu.h"

#include <math.h>
#include <stdlib.h>

static int
is_blank (const float *pixels, int64_t nx, int64_t ny, int64_t x, int64_t y)
{
  return x >= 0 && y >= 0 && x < nx && y < ny && isnan (pixels[y * nx + x]);
}

int
sky_cpu_measure_local (const SkyImage *img, const float *background, const float *rms,
                       const float *snr, const int32_t *labels, double seed_sigma,
                       const uint8_t *deblended, SkyCatalogue *cat)
{
  int64_t nx = img->nx, ny = img->ny;
  int ret = sky_catalogue_alloc_local (cat);

  if (ret != SKY_OK)
    return ret;
  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++)
      {
        int64_t i = y * nx + x;
        int32_t l = labels[i];
        uint32_t f = 0;

        if (l == 0)
          continue;
        if (isfinite (rms[i]))
          cat->sum_err[l - 1] += (double) rms[i] * rms[i];
        if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1)
          f |= SKY_FLAG_EDGE;
        if (img->nblank > 0
            && (is_blank (img->pixels, nx, ny, x - 1, y) || is_blank (img->pixels, nx, ny, x + 1, y)
                || is_blank (img->pixels, nx, ny, x, y - 1)
                || is_blank (img->pixels, nx, ny, x, y + 1)))
          f |= SKY_FLAG_BLANK;
        if (f != 0 && snr[i] > seed_sigma)
          f |= SKY_FLAG_TRUNCATED;
        cat->flags[l - 1] |= f;
      }
  for (int64_t k = 0; k < cat->n; k++)
    {
      int64_t p = (int64_t) cat->peak_y[k] * nx + cat->peak_x[k];
      cat->sum_err[k] = sqrt (cat->sum_err[k]);
      cat->background[k] = background[p];
      cat->rms[k] = rms[p];
      cat->peak_err[k] = rms[p];
      if (deblended != NULL && deblended[k + 1])
        cat->flags[k] |= SKY_FLAG_DEBLENDED;
    }
  return SKY_OK;
}

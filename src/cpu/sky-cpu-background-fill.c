/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unusable boxes (under half their pixels usable) take the mean of the
 * usable boxes nearest to them: every one at the least distance, summed in
 * raster order as SEP sums them; with none at all, background 0 and rms 1.
 *
 * SEP searches the whole mesh for every such box, which grows as the
 * square of the mesh where much of an image is blank (a mosaic's corners,
 * the outside of a primary beam). Here one exact squared Euclidean
 * distance transform of the mesh (Felzenszwalb and Huttenlocher's lower
 * envelope of parabolas, a pass down the columns and one along the rows)
 * gives every box its least squared distance D2; the usable boxes at
 * exactly that distance are the lattice points on that circle, found by
 * walking its rows. The least distance and the set are SEP's while D2 is
 * below 2^24 (SEP compares distances in float), a mesh under 2896 boxes a
 * side. */
#include "sky-cpu.h"
#include "sky-cpu-background-private.h"

#include <math.h>
#include <stdlib.h>

static int
usable (const SkyBackgroundMesh *m, int64_t x, int64_t y)
{
  return (double) m->back[y * m->nbx + x] > -1e30;
}

/* Squared distance from each box to the nearest usable one (-1 for none),
 * into d2 (nbx * nby). */
static int
distance_transform (const SkyBackgroundMesh *m, int64_t *d2)
{
  const int64_t nbx = m->nbx, nby = m->nby;
  const int64_t n = nbx > nby ? nbx : nby;
  int64_t *col = malloc ((size_t) n * sizeof *col);  /* a column, then a row's f(v) */
  int64_t *v = malloc ((size_t) n * sizeof *v);
  double *z = malloc ((size_t) (n + 1) * sizeof *z);
  int ret = SKY_OK;

  if (col == NULL || v == NULL || z == NULL)
    {
      ret = SKY_ERR_MEMORY;
      goto exit;
    }
  /* Down each column: the distance to the nearest usable box in it. */
  for (int64_t x = 0; x < nbx; x++)
    {
      int64_t last = -1;
      for (int64_t y = 0; y < nby; y++)
        {
          if (usable (m, x, y))
            last = y;
          col[y] = last < 0 ? -1 : y - last;
        }
      last = -1;
      for (int64_t y = nby - 1; y >= 0; y--)
        {
          if (usable (m, x, y))
            last = y;
          if (last >= 0 && (col[y] < 0 || last - y < col[y]))
            col[y] = last - y;
          d2[y * nbx + x] = col[y] < 0 ? -1 : col[y] * col[y];
        }
    }
  /* Along each row: the lower envelope of the parabolas (x - q)^2 + f(q)
   * over the columns q that have a usable box (z: where each takes over). */
  for (int64_t y = 0; y < nby; y++)
    {
      int64_t *f = d2 + y * nbx;
      int64_t k = -1, j = 0;
      for (int64_t q = 0; q < nbx; q++)
        {
          double s = -INFINITY;
          if (f[q] < 0)
            continue;
          while (k >= 0)
            {
              s = ((double) (f[q] + q * q) - (double) (f[v[k]] + v[k] * v[k]))
                  / (double) (2 * q - 2 * v[k]);
              if (s > z[k])
                break;
              k--;
            }
          k++;
          v[k] = q;
          z[k] = k == 0 ? -INFINITY : s;
          z[k + 1] = INFINITY;
        }
      if (k < 0)
        continue; /* no usable box in the whole mesh: left -1 */
      /* The row is overwritten as it is read: keep the envelope's f first. */
      for (int64_t i = 0; i <= k; i++)
        col[i] = f[v[i]];
      for (int64_t x = 0; x < nbx; x++)
        {
          while (z[j + 1] < (double) x)
            j++;
          f[x] = (x - v[j]) * (x - v[j]) + col[j];
        }
    }

exit:
  free (col);
  free (v);
  free (z);
  return ret;
}

int
sky_background_fill_bad (const SkyBackgroundMesh *m, float *back_out, float *rms_out)
{
  const int64_t nbx = m->nbx, nby = m->nby, nb = nbx * nby;
  int64_t *d2 = malloc ((size_t) nb * sizeof *d2);

  if (d2 == NULL || distance_transform (m, d2) != SKY_OK)
    {
      free (d2);
      return sky_fail (SKY_ERR_MEMORY, "no memory to fill a background mesh of %lld boxes",
                       (long long) nb);
    }
  for (int64_t py = 0; py < nby; py++)
    for (int64_t px = 0; px < nbx; px++)
      {
        const int64_t i = py * nbx + px, r2 = d2[i];
        float val = 0.0f, sval = 0.0f;
        int64_t nmin = 0;

        back_out[i] = m->back[i];
        rms_out[i] = m->rms[i];
        if (usable (m, px, py))
          continue;
        if (r2 < 0)
          {
            /* No usable box in the whole mesh. */
            back_out[i] = 0.0f;
            rms_out[i] = 1.0f;
            continue;
          }
        /* The usable boxes on the circle of squared radius r2, row by row
         * and left to right: SEP's order of summation. */
        for (int64_t dy = -sky_isqrt64 (r2); dy * dy <= r2; dy++)
          {
            int64_t dx = sky_isqrt64 (r2 - dy * dy), y = py + dy;
            if (dx * dx != r2 - dy * dy || y < 0 || y >= nby)
              continue;
            for (int side = 0; side < (dx == 0 ? 1 : 2); side++)
              {
                int64_t x = side == 0 ? px - dx : px + dx;
                if (x < 0 || x >= nbx || !usable (m, x, y))
                  continue;
                val += m->back[y * nbx + x];
                sval += m->rms[y * nbx + x];
                nmin++;
              }
          }
        back_out[i] = nmin ? val / (float) nmin : 0.0f;
        rms_out[i] = nmin ? sval / (float) nmin : 1.0f;
      }
  free (d2);
  return SKY_OK;
}

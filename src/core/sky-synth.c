/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A synthetic stand-in for the lesson's GMRT 150 MHz Galactic Center image
 * (beam-correlated noise, a bright extended centre, a diffuse band, shells,
 * blobs and a power-law population of point sources, as the test data's
 * make_gc_like.py draws them), made fast enough for 8192^2 scaling runs:
 * every compact component is evaluated only in its box, row bands run in
 * parallel, and the noise of each row comes from its own random stream so
 * that the image does not depend on the thread count.
 * The random draws differ from NumPy's; the statistics of the field do not. */
#include "sky-core.h"
#include "sky-output-private.h"

#include <fitsio.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BAND_ROWS 64          /* fixed, so band sums add up the same way on any thread count */
#define NOISE_RMS 0.0133      /* Jy/beam, measured on the lesson's image */
#define NOISE_SIGMA 1.2       /* px, the blur that correlates the noise like a beam */
#define NOISE_R 5             /* scipy's gaussian_filter radius: int (4 * 1.2 + 0.5) */
#define FWHM_TO_SIGMA 0.42466090014400953

/* ------------------------------------------------------- random numbers */

/* xoshiro256** seeded through splitmix64: small, fast, and any number of
 * independent streams can be cut from one (seed, stream) pair. */
typedef struct {
  uint64_t s[4];
} Rng;

static uint64_t
splitmix64 (uint64_t *x)
{
  uint64_t z = (*x += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

static void
rng_init (Rng *r, uint64_t seed, uint64_t stream)
{
  uint64_t x = seed;
  uint64_t mixed = splitmix64 (&x) ^ (stream * 0xD1B54A32D192ED03u);

  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64 (&mixed);
}

static uint64_t
rng_next (Rng *r)
{
  uint64_t *s = r->s;
  uint64_t x = s[1] * 5, result = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return result;
}

/* Uniform in [lo, hi) (or (hi, lo] when hi < lo, as NumPy allows). */
static double
rng_uniform (Rng *r, double lo, double hi)
{
  return lo + (hi - lo) * ((double) (rng_next (r) >> 11) * 0x1.0p-53);
}

/* Two normal deviates by Marsaglia's polar method: no sin or cos. */
static void
rng_normal_pair (Rng *r, float *a, float *b)
{
  double u, v, q;

  do
    {
      u = rng_uniform (r, -1.0, 1.0);
      v = rng_uniform (r, -1.0, 1.0);
      q = u * u + v * v;
    }
  while (q >= 1.0 || q == 0.0);
  q = sqrt (-2.0 * log (q) / q);
  *a = (float) (u * q);
  *b = (float) (v * q);
}

/* ----------------------------------------------------------- components */

/* One compact component: an elliptical Gaussian, or a ring when width > 0. */
typedef struct {
  double x, y, amp;
  double ux, uy, vx, vy;      /* (dx, dy) -> (u / sx, v / sy), rotation folded in */
  double radius, width;       /* a shell's ring */
  int64_t x0, x1, y0, y1;     /* its box, half-open, clipped to the image */
  const char *kind;           /* the truth row's kind; NULL: not listed */
  double truth_peak;
} Blob;

/* The box of make_gc_like.py's gaussian_blob: int (x0) - r .. int (x0) + r. */
static void
set_box (Blob *b, int64_t n, int64_t r)
{
  int64_t cx = (int64_t) b->x, cy = (int64_t) b->y;

  b->x0 = cx - r > 0 ? cx - r : 0;
  b->x1 = cx + r + 1 < n ? cx + r + 1 : n;
  b->y0 = cy - r > 0 ? cy - r : 0;
  b->y1 = cy + r + 1 < n ? cy + r + 1 : n;
}

static void
set_gaussian (Blob *b, int64_t n, double amp, double sx, double sy, double theta)
{
  double c = cos (theta), s = sin (theta);

  b->amp = b->truth_peak = amp;
  b->ux = c / sx, b->uy = s / sx;
  b->vx = -s / sy, b->vy = c / sy;
  set_box (b, n, (int64_t) (5 * fmax (sx, sy)) + 2);
}

/* Draws the components in the script's order and with its counts, which
 * scale with the area; *count gets how many. NULL when out of memory. */
static Blob *
make_blobs (int64_t n, uint64_t seed, size_t *count)
{
  double scale = n / 2048.0, c = n / 2.0, smin = 0.04, smax = 4.0;
  size_t npoint = (size_t) (260 * scale * scale), next = (size_t) (40 * scale * scale);
  size_t nshell = (size_t) (6 * scale * scale), k = 0;
  /* The centre's Gaussians: peak in Jy/beam and sigma in px at 2048. */
  static const double centre[4][2] = { { 1.85, 2.0 }, { 0.5, 8.0 }, { 0.12, 30.0 }, { 0.04, 90.0 } };
  Blob *b = calloc (npoint + next + nshell + 4, sizeof *b);
  Rng rng;

  if (b == NULL)
    return NULL;
  rng_init (&rng, seed, 0);

  /* Point sources, beam-shaped: N(>S) ~ S^-1.5 between 40 mJy and 4 Jy. */
  for (size_t i = 0; i < npoint; i++, k++)
    {
      double u = rng_uniform (&rng, 0, 1);
      double peak = smin * pow (1 - u * (1 - pow (smin / smax, 1.5)), -1 / 1.5);
      b[k].x = rng_uniform (&rng, 12, n - 12);
      b[k].y = rng_uniform (&rng, 12, n - 12);
      set_gaussian (&b[k], n, peak, 4 * FWHM_TO_SIGMA, 3 * FWHM_TO_SIGMA, M_PI / 6);
      b[k].kind = "point";
    }
  for (size_t i = 0; i < next; i++, k++)
    {
      double peak, sx, sy;
      b[k].x = rng_uniform (&rng, 40, n - 40);
      b[k].y = rng_uniform (&rng, 40, n - 40);
      peak = rng_uniform (&rng, 0.05, 0.4);
      sx = rng_uniform (&rng, 3, 12);
      sy = rng_uniform (&rng, 3, 12);
      set_gaussian (&b[k], n, peak, sx, sy, rng_uniform (&rng, 0, M_PI));
      b[k].kind = "extended";
    }
  /* The script evaluates shells over the whole image; beyond 5 widths of
   * the ring they are below a microjansky, so a box is enough. */
  for (size_t i = 0; i < nshell; i++, k++)
    {
      b[k].x = rng_uniform (&rng, 150, n - 150);
      b[k].y = rng_uniform (&rng, 150, n - 150);
      b[k].radius = rng_uniform (&rng, 15, 60);
      b[k].width = rng_uniform (&rng, 2, 4);
      b[k].amp = b[k].truth_peak = rng_uniform (&rng, 0.06, 0.15);
      set_box (&b[k], n, (int64_t) (b[k].radius + 5 * b[k].width) + 2);
      b[k].kind = "shell";
    }
  /* The bright centre: four nested Gaussians listed as one source. */
  for (int i = 0; i < 4; i++, k++)
    {
      double s = centre[i][1] * scale;
      b[k].x = b[k].y = c;
      set_gaussian (&b[k], n, centre[i][0], s, 0.7 * s, -40 * M_PI / 180);
    }
  b[k - 4].kind = "centre";
  b[k - 4].truth_peak = 2.86;
  *count = k;
  return b;
}

/* ---------------------------------------------------------- the field */

typedef struct {
  int64_t n;
  uint64_t seed;
  const Blob *blobs;
  size_t nblobs;
  float *diag;                /* the diffuse band, by x - y + n - 1 */
  float *sky, *noise, *work;  /* the three image-sized arrays */
  double *sums;               /* per band: noise sum, sum of squares */
  double median, gain;
  float w[2 * NOISE_R + 1];    /* the blur, normalised */
} Synth;

/* The rows [*y0, *y1) of a band. */
static void
band_rows (const Synth *s, int band, int64_t *y0, int64_t *y1)
{
  *y0 = (int64_t) band * BAND_ROWS;
  *y1 = *y0 + BAND_ROWS < s->n ? *y0 + BAND_ROWS : s->n;
}

static int64_t
reflect (int64_t i, int64_t n)
{
  /* scipy's 'reflect' mode (d c b a | a b c d | d c b a); NOISE_R < n. */
  return i < 0 ? -i - 1 : i >= n ? 2 * n - i - 1 : i;
}

/* The sky of one band: the diffuse band, the ripples around the centre and
 * the components whose box meets the band, in a fixed order. It is copied to
 * work too, where the median's selection may reorder it. */
static void
render_band (void *data, int band)
{
  Synth *s = data;
  int64_t n = s->n, y0, y1;
  double scale = n / 2048.0, c = n / 2.0;

  band_rows (s, band, &y0, &y1);
  for (int64_t y = y0; y < y1; y++)
    {
      float *row = s->sky + y * n;
      const float *diag = s->diag + (n - 1 - y);
      double dy = y - c;

      /* The ripples depend on the distance alone, so x and n - x share a
       * value: the right half and column 0 are computed, the rest mirrored.
       * It halves the cos and exp that dominate the sky's time. */
      for (int64_t x = n / 2; x <= n; x++)
        {
          int64_t xx = x < n ? x : 0;
          double dx = xx - c, rr = sqrt (dx * dx + dy * dy), v = 0;
          if (rr > 30 * scale)
            v = -0.03 * cos (rr / (9 * scale)) * exp (-rr / (250 * scale));
          row[xx] = (float) v;
        }
      for (int64_t x = 1; x < n / 2; x++)
        row[x] = row[n - x];
      for (int64_t x = 0; x < n; x++)
        row[x] += diag[x];
    }
  for (size_t i = 0; i < s->nblobs; i++)
    {
      const Blob *b = &s->blobs[i];
      int64_t ya = b->y0 > y0 ? b->y0 : y0, yb = b->y1 < y1 ? b->y1 : y1;

      for (int64_t y = ya; y < yb; y++)
        {
          float *row = s->sky + y * n;
          double dy = y - b->y;

          for (int64_t x = b->x0; x < b->x1; x++)
            {
              double dx = x - b->x, q;
              if (b->width > 0)
                {
                  double ring = (sqrt (dx * dx + dy * dy) - b->radius) / b->width;
                  q = ring * ring;
                }
              else
                {
                  double u = b->ux * dx + b->uy * dy, v = b->vx * dx + b->vy * dy;
                  q = u * u + v * v;
                }
              row[x] += (float) (b->amp * exp (-0.5 * q));
            }
        }
    }
  memcpy (s->work + y0 * n, s->sky + y0 * n, (size_t) ((y1 - y0) * n) * sizeof (float));
}

/* White noise blurred along rows: each row's deviates come from the stream
 * (seed, 1 + row), drawn into work (free after the median), then blurred
 * into noise. */
static void
noise_rows_band (void *data, int band)
{
  Synth *s = data;
  int64_t n = s->n, y0, y1;

  band_rows (s, band, &y0, &y1);
  for (int64_t y = y0; y < y1; y++)
    {
      float *white = s->work + y * n, *out = s->noise + y * n;
      Rng rng;

      rng_init (&rng, s->seed, 1 + (uint64_t) y);
      for (int64_t x = 0; x < n; x += 2)
        {
          float spare;
          rng_normal_pair (&rng, &white[x], x + 1 < n ? &white[x + 1] : &spare);
        }
      for (int64_t x = 0; x < n; x++)
        {
          float acc = 0;
          if (x >= NOISE_R && x < n - NOISE_R)
            for (int k = 0; k <= 2 * NOISE_R; k++)
              acc += s->w[k] * white[x + k - NOISE_R];
          else
            for (int k = 0; k <= 2 * NOISE_R; k++)
              acc += s->w[k] * white[reflect (x + k - NOISE_R, n)];
          out[x] = acc;
        }
    }
}

/* The blur along columns, noise -> work, with the band's sums for the rms. */
static void
noise_cols_band (void *data, int band)
{
  Synth *s = data;
  int64_t n = s->n, y0, y1;
  double sum = 0, sum2 = 0;

  band_rows (s, band, &y0, &y1);
  for (int64_t y = y0; y < y1; y++)
    {
      float *out = s->work + y * n;

      memset (out, 0, (size_t) n * sizeof (float));
      for (int k = 0; k <= 2 * NOISE_R; k++)
        {
          const float *in = s->noise + reflect (y + k - NOISE_R, n) * n;
          float w = s->w[k];
          for (int64_t x = 0; x < n; x++)
            out[x] += w * in[x];
        }
      for (int64_t x = 0; x < n; x++)
        sum += out[x], sum2 += (double) out[x] * out[x];
    }
  s->sums[2 * band] = sum;
  s->sums[2 * band + 1] = sum2;
}

/* An interferometer misses the zero spacing: the sky loses its median, then
 * the noise, scaled to the target rms, goes on top. */
static void
combine_band (void *data, int band)
{
  Synth *s = data;
  float median = (float) s->median, gain = (float) s->gain;
  int64_t y0, y1;

  band_rows (s, band, &y0, &y1);
  for (int64_t i = y0 * s->n; i < y1 * s->n; i++)
    s->sky[i] = (s->sky[i] - median) + gain * s->work[i];
}

/* The k-th smallest of v[0..n), by Hoare's selection with a median-of-three
 * pivot: expected O(n), and it leaves v[0..k) <= v[k]. */
static float
select_kth (float *v, int64_t n, int64_t k)
{
  int64_t lo = 0, hi = n - 1;

  while (hi > lo)
    {
      int64_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
      float t, pivot;

#define SWAP(a, b) (t = v[a], v[a] = v[b], v[b] = t)
      if (v[mid] < v[lo]) SWAP (mid, lo);
      if (v[hi] < v[lo]) SWAP (hi, lo);
      if (v[hi] < v[mid]) SWAP (hi, mid);
      pivot = v[mid];
      while (i <= j)
        {
          while (v[i] < pivot) i++;
          while (v[j] > pivot) j--;
          if (i <= j)
            {
              SWAP (i, j);
              i++, j--;
            }
        }
#undef SWAP
      if (k <= j)
        hi = j;
      else if (k >= i)
        lo = i;
      else
        break;                /* between j and i everything equals the pivot */
    }
  return v[k];
}

/* NumPy's median: the mean of the two middle values for an even count. */
static double
median_of (float *v, int64_t n)
{
  double upper = select_kth (v, n, n / 2);
  float lower = -INFINITY;

  if (n % 2)
    return upper;
  for (int64_t i = 0; i < n / 2; i++)
    lower = v[i] > lower ? v[i] : lower;
  return 0.5 * (lower + upper);
}

/* ------------------------------------------------------------- writing */

/* The injected sources as CSV. */
static void
write_truth (FILE *f, const Blob *b, size_t nblobs)
{
  fputs ("x_pix0,y_pix0,peak_jy_per_beam,kind\n", f);
  for (size_t i = 0; i < nblobs; i++)
    if (b[i].kind != NULL)
      fprintf (f, "%.3f,%.3f,%.5f,%s\n", b[i].x, b[i].y, b[i].truth_peak, b[i].kind);
}

/* A double in the fewest digits that read back exactly. */
static void
key_double (fitsfile *f, const char *key, double v, int *status)
{
  char text[32];

  snprintf (text, sizeof text, "%.15G", v);
  fits_write_key_dbl (f, key, v, strtod (text, NULL) == v ? -15 : -17, NULL, status);
}

/* The image and the header of make_gc_like.py. cfitsio's create_file would
 * refuse an existing file, and its extended filename syntax could misread
 * the name, so the placeholder goes and the disk-file variant takes its
 * place at once. Returns a cfitsio status. */
static int
write_fits (const char *tmp, const float *pixels, int64_t n, uint64_t seed)
{
  long axes[2] = { (long) n, (long) n };
  char line[FLEN_COMMENT];
  fitsfile *f = NULL;
  int status = 0, ignored = 0;

  unlink (tmp);
  if (fits_create_diskfile (&f, tmp, &status))
    return status;
  fits_create_img (f, FLOAT_IMG, 2, axes, &status);
  fits_write_key_str (f, "BUNIT", "JY/BEAM", NULL, &status);
  fits_write_key_str (f, "CTYPE1", "RA---SIN", NULL, &status);
  fits_write_key_str (f, "CTYPE2", "DEC--SIN", NULL, &status);
  key_double (f, "CRVAL1", 266.416833, &status);
  key_double (f, "CRVAL2", -29.007806, &status);
  key_double (f, "CRPIX1", n / 2.0 + 1, &status);
  key_double (f, "CRPIX2", n / 2.0 + 1, &status);
  key_double (f, "CDELT1", -5.0 / 3600, &status);
  key_double (f, "CDELT2", 5.0 / 3600, &status);
  fits_write_key_str (f, "CUNIT1", "deg", NULL, &status);
  fits_write_key_str (f, "CUNIT2", "deg", NULL, &status);
  fits_write_key_str (f, "RADESYS", "FK5", NULL, &status);
  key_double (f, "EQUINOX", 2000.0, &status);
  key_double (f, "BMAJ", 20.0 / 3600, &status);
  key_double (f, "BMIN", 15.0 / 3600, &status);
  key_double (f, "BPA", 30.0, &status);
  key_double (f, "RESTFRQ", 1.5e8, &status);
  fits_write_key_str (f, "OBJECT", "GC-LIKE", NULL, &status);
  fits_write_comment (f, "Synthetic stand-in for a GMRT 150 MHz Galactic Center image.", &status);
  snprintf (line, sizeof line, "skysift synth size=%" PRId64 " seed=%" PRIu64, n, seed);
  fits_write_comment (f, line, &status);
  fits_write_comment (f, "Made by skysift synth: make_gc_like.py's field, other random draws.",
                      &status);
  fits_write_img (f, TFLOAT, 1, (LONGLONG) n * n, (void *) pixels, &status);
  if (status)
    fits_delete_file (f, &ignored);
  else
    fits_close_file (f, &status);
  return status;
}

/* The pixels: sky, its median off, beam-correlated noise on. Needs sky,
 * noise and work allocated; leaves the image in sky. */
static void
make_image (Synth *s, int nthreads)
{
  int64_t n = s->n;
  int nbands = (int) ((n + BAND_ROWS - 1) / BAND_ROWS);
  double scale = n / 2048.0, sum = 0, sum2 = 0, wsum = 0, mean;

  /* The diffuse band depends on x - y only: one exp per diagonal. */
  for (int64_t t = 0; t < 2 * n - 1; t++)
    {
      double d = (t - (n - 1)) / sqrt (2.0) / (110.0 * scale);
      s->diag[t] = (float) (0.010 * exp (-0.5 * d * d));
    }
  sky_parallel_for (nbands, nthreads, render_band, s);
  s->median = median_of (s->work, n * n);

  for (int k = 0; k <= 2 * NOISE_R; k++)
    wsum += exp (-0.5 * (k - NOISE_R) * (k - NOISE_R) / (NOISE_SIGMA * NOISE_SIGMA));
  for (int k = 0; k <= 2 * NOISE_R; k++)
    s->w[k] = (float) (exp (-0.5 * (k - NOISE_R) * (k - NOISE_R) / (NOISE_SIGMA * NOISE_SIGMA))
                       / wsum);
  sky_parallel_for (nbands, nthreads, noise_rows_band, s);
  sky_parallel_for (nbands, nthreads, noise_cols_band, s);
  for (int b = 0; b < nbands; b++)
    sum += s->sums[2 * b], sum2 += s->sums[2 * b + 1];
  mean = sum / (double) (n * n);
  s->gain = NOISE_RMS / sqrt (sum2 / (double) (n * n) - mean * mean);
  sky_parallel_for (nbands, nthreads, combine_band, s);
}

/* ---------------------------------------------------------------- API */

void
sky_synth_options_init (SkySynthOptions *opts)
{
  opts->size = 2048;
  opts->seed = 20241203;
  opts->nthreads = 0;
}

int
sky_synth_write (const char *path, const char *truth_path, const SkySynthOptions *opts)
{
  SkySynthOptions defaults;
  Synth s = { 0 };
  SkyOutput fits, truth;
  int ret = SKY_OK, fstatus, fits_open = 0, truth_open = 0;
  size_t npix;

  if (opts == NULL)
    sky_synth_options_init (&defaults), opts = &defaults;
  if (path == NULL)
    return sky_fail (SKY_ERR_ARGUMENT, "synth: no output path");
  if (opts->size < 16 || opts->size > 65536)
    return sky_fail (SKY_ERR_ARGUMENT, "%s: size must be 16 to 65536 (got %" PRId64 ")",
                     path, opts->size);
  if (opts->nthreads < 0)
    return sky_fail (SKY_ERR_ARGUMENT, "%s: thread count must be 0 (all cores) or positive"
                     " (got %d)", path, opts->nthreads);
  s.n = opts->size;
  s.seed = opts->seed;
  npix = (size_t) (s.n * s.n);

  s.blobs = make_blobs (s.n, s.seed, &s.nblobs);
  s.diag = malloc ((size_t) (2 * s.n - 1) * sizeof *s.diag);
  s.sums = malloc ((size_t) (s.n / BAND_ROWS + 1) * 2 * sizeof *s.sums);
  if (s.blobs == NULL || s.diag == NULL || s.sums == NULL)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "%s: no memory for the field's components", path);
      goto exit;
    }

  /* The truth is known before the pixels, and a bad directory fails here,
   * before seconds of work; it is renamed into place after the image. */
  if (truth_path != NULL)
    {
      if ((ret = sky_output_open (&truth, truth_path)) != SKY_OK)
        goto exit;
      truth_open = 1;
      write_truth (truth.fp, s.blobs, s.nblobs);
    }
  if ((ret = sky_output_open_named (&fits, path)) != SKY_OK)
    goto exit;
  fits_open = 1;

  s.sky = malloc (npix * sizeof (float));
  s.noise = malloc (npix * sizeof (float));
  s.work = malloc (npix * sizeof (float));
  if (s.sky == NULL || s.noise == NULL || s.work == NULL)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "%s: no memory for three %" PRId64 " x %" PRId64
                      " float images", path, s.n, s.n);
      goto exit;
    }
  make_image (&s, opts->nthreads);

  /* Only the sky goes to disk: give the rest back before cfitsio buffers. */
  free (s.noise), s.noise = NULL;
  free (s.work), s.work = NULL;
  if ((fstatus = write_fits (fits.tmp_path, s.sky, s.n, s.seed)) != 0)
    {
      char why[FLEN_STATUS];
      fits_get_errstatus (fstatus, why);
      ret = sky_fail (SKY_ERR_IO, "%s: cannot write FITS (%s)", path, why);
      goto exit;
    }
  fits_open = 0;
  if ((ret = sky_output_close (&fits)) != SKY_OK)
    goto exit;
  /* Should this last step fail, the image stays: it is complete. */
  truth_open = 0;
  if (truth_path != NULL)
    ret = sky_output_close (&truth);

exit:
  if (fits_open)
    sky_output_abort (&fits, ret);
  if (truth_open)
    sky_output_abort (&truth, ret);
  free (s.sky);
  free (s.noise);
  free (s.work);
  free (s.diag);
  free (s.sums);
  free ((void *) s.blobs);
  return ret;
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* libskysift's C API (sky-api.h): handles over the core's images and the
 * runner's stages, for the Python package's ctypes layer. */
#include "sky-api-private.h"

#include "sky-cpu.h"
#include "sky-runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct SkyApiImage {
  SkyImage image;
  int borrowed;              /* the pixels are the caller's */
};

struct SkyApiRun {
  const SkyImage *image;     /* borrowed from the caller's SkyApiImage */
  SkyImage device_image;     /* the shape of a device run's image, no pixels */
  SkyParams params;
  SkyStages stages;          /* a runner's run */
  SkyResult own;             /* a device run's or a measure's result */
  int uses_stages;
  SkyGpuTimes gpu_times;
  const void *packed;        /* a device run's packed catalogue, or NULL */
  int gpu_ran;
  const char *backend;
};

int
sky_api_version (void)
{
  return SKY_API_VERSION;
}

/* --------------------------------------------------------------- images */

int
sky_api_image_load (const char *path, int hdu, int64_t plane, SkyApiImage **out)
{
  SkyLoadOptions opts = { hdu, plane };
  SkyApiImage *img = calloc (1, sizeof *img);
  int ret;

  *out = NULL;
  if (img == NULL)
    return sky_fail (SKY_ERR_MEMORY, "%s: out of memory", path);
  if ((ret = sky_image_load (path, &opts, &img->image)) != SKY_OK)
    {
      free (img);
      return ret;
    }
  *out = img;
  return SKY_OK;
}

#define SKY_API_COUNT_THREADS 4

typedef struct {
  const float *pixels;
  int64_t n, chunk;
  int64_t nblank[SKY_API_COUNT_THREADS], ninf[SKY_API_COUNT_THREADS];
} BlankCount;

static void
count_chunk (void *ctx, int task)
{
  BlankCount *c = ctx;
  int64_t from = task * c->chunk, to = from + c->chunk < c->n ? from + c->chunk : c->n;
  int64_t nblank = 0, ninf = 0;

  for (int64_t i = from; i < to; i++)
    {
      float v = c->pixels[i];
      nblank += !(fabsf (v) <= 3.40282347e38f);   /* NaN or Inf */
      ninf += fabsf (v) == INFINITY;
    }
  c->nblank[task] = nblank;
  c->ninf[task] = ninf;
}

static char *
copy_text (const char *s, size_t len)
{
  char *t = malloc (len + 1);

  if (t != NULL)
    {
      memcpy (t, s, len);
      t[len] = '\0';
    }
  return t;
}

int
sky_api_image_wrap (const float *pixels, int64_t nx, int64_t ny, const char *header,
                    int64_t header_len, const char *bunit, double bmaj, double bmin, double bpa,
                    const char *path, SkyApiImage **out, int64_t *ninf)
{
  SkyApiImage *img;
  BlankCount count = { 0 };
  int ntasks;

  *out = NULL;
  if (path == NULL)
    path = "array";
  if (nx <= 0 || ny <= 0 || nx > INT32_MAX || ny > INT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "%s: the image must be 2-D with both axes at least 1 "
                     "(got %lld x %lld)", path, (long long) ny, (long long) nx);
  if (header != NULL && header_len % 80 != 0)
    return sky_fail (SKY_ERR_FORMAT, "%s: header of %lld bytes is not 80-character cards",
                     path, (long long) header_len);
  if ((img = calloc (1, sizeof *img)) == NULL)
    return sky_fail (SKY_ERR_MEMORY, "%s: out of memory", path);
  img->borrowed = 1;
  img->image.nx = nx;
  img->image.ny = ny;
  img->image.pixels = (float *) pixels;
  img->image.hdu = 1;
  img->image.nplanes = 1;
  img->image.bitpix = -32;
  img->image.path = copy_text (path, strlen (path));
  if (header != NULL && header_len > 0)
    {
      img->image.header = copy_text (header, (size_t) header_len);
      img->image.nheader_cards = (int) (header_len / 80);
    }
  if (bunit != NULL)
    snprintf (img->image.bunit, sizeof img->image.bunit, "%s", bunit);
  if (isfinite (bmaj) && isfinite (bmin))
    {
      img->image.has_beam = 1;
      img->image.bmaj = bmaj;
      img->image.bmin = bmin;
      img->image.bpa = isfinite (bpa) ? bpa : 0;
    }
  if (img->image.path == NULL || (header_len > 0 && img->image.header == NULL))
    {
      sky_api_image_free (img);
      return sky_fail (SKY_ERR_MEMORY, "%s: out of memory", path);
    }

  /* The blanks, counted in one pass that a few threads share: memory
   * bound, so more threads would only add their start-up (this pass is
   * the one cost a call on an array has over the CLI's steps). */
  count.pixels = pixels;
  count.n = nx * ny;
  ntasks = count.n < (1 << 20) ? 1 : SKY_API_COUNT_THREADS;
  count.chunk = (count.n + ntasks - 1) / ntasks;
  sky_parallel_for (ntasks, ntasks, count_chunk, &count);
  for (int t = 0; t < ntasks; t++)
    {
      img->image.nblank += count.nblank[t];
      img->image.ninf += count.ninf[t];
    }
  if (ninf != NULL)
    *ninf = img->image.ninf;
  *out = img;
  return SKY_OK;
}

const float *
sky_api_image_pixels (const SkyApiImage *img, int64_t *nx, int64_t *ny)
{
  *nx = img->image.nx;
  *ny = img->image.ny;
  return img->image.pixels;
}

void
sky_api_image_free (SkyApiImage *img)
{
  if (img == NULL)
    return;
  if (img->borrowed)
    img->image.pixels = NULL;
  sky_image_clear (&img->image);
  free (img);
}

/* ----------------------------------------------------------------- runs */

void
sky_api_params_init (SkyApiParams *p)
{
  SkyParams d;

  sky_params_init (&d);
  p->clip_kappa = d.clip_kappa;
  p->max_iter = d.max_iter;
  p->threshold = d.threshold;
  p->relative = d.relative;
  p->connectivity = d.connectivity;
  p->nthreads = d.nthreads;
  p->bkg_box = d.bkg_box;
  p->bkg_filter = d.bkg_filter;
  p->seed_sigma = d.seed_sigma;
  p->flood_sigma = d.flood_sigma;
  p->min_area = d.min_area;
  p->deblend_nthresh = d.deblend_nthresh;
  p->deblend_mincont = d.deblend_mincont;
  p->deblend_sigma = d.deblend_sigma;
}

int
sky_api_core_params (const SkyApiParams *p, SkyParams *out)
{
  sky_params_init (out);
  out->clip_kappa = p->clip_kappa;
  out->max_iter = p->max_iter;
  out->threshold = p->threshold;
  out->relative = p->relative;
  out->connectivity = p->connectivity;
  out->nthreads = p->nthreads;
  out->bkg_box = p->bkg_box;
  out->bkg_filter = p->bkg_filter;
  out->seed_sigma = p->seed_sigma;
  out->flood_sigma = p->flood_sigma;
  out->min_area = p->min_area;
  out->deblend_nthresh = p->deblend_nthresh;
  out->deblend_mincont = p->deblend_mincont;
  out->deblend_sigma = p->deblend_sigma;
  return sky_params_check (out);
}

int
sky_api_params_check (const SkyApiParams *params)
{
  SkyParams p;

  return sky_api_core_params (params, &p);
}

static SkyApiRun *
run_new (void)
{
  return calloc (1, sizeof (SkyApiRun));
}

static int
method_from_name (const char *name)
{
  for (int m = 0; name != NULL && m < SKY_METHOD_COUNT; m++)
    if (strcmp (name, sky_method_name ((SkyMethod) m)) == 0)
      return m;
  return -1;
}

int
sky_api_run (const SkyApiImage *img, const SkyApiParams *params, const char *method,
             const char *backend, const char *until, const float *background,
             const float *rms, SkyApiRun **out)
{
  SkyRunRequest req = { 0 };
  SkyApiRun *run;
  int b = sky_backend_from_name (backend), m = method_from_name (method), ret;
  SkyStep step = sky_step_from_name (until ? until : "all");

  *out = NULL;
  if (m < 0)
    return sky_fail (SKY_ERR_ARGUMENT, "method: \"%s\" is not lesson or local",
                     method ? method : "");
  if ((background == NULL) != (rms == NULL))
    return sky_fail (SKY_ERR_ARGUMENT, "background and rms maps go together: give both or "
                     "neither");
  if (background != NULL && m != SKY_METHOD_LOCAL)
    return sky_fail (SKY_ERR_ARGUMENT, "background and rms maps are the local method's");
  if (b < 0)
    return sky_fail (SKY_ERR_ARGUMENT, "backend: \"%s\" is not cpu, gpu or both",
                     backend ? backend : "");
  if (step < 0)
    return sky_fail (SKY_ERR_ARGUMENT, "until: \"%s\" is not a step (clip, segment, label, "
                     "measure, all)", until);
  if ((run = run_new ()) == NULL)
    return sky_fail (SKY_ERR_MEMORY, "out of memory");
  if ((ret = sky_api_core_params (params, &run->params)) != SKY_OK)
    {
      free (run);
      return ret;
    }
  run->image = &img->image;
  run->uses_stages = 1;
  req.image = &img->image;
  req.params = &run->params;
  req.method = (SkyMethod) m;
  req.backend = (SkyBackend) b;
  req.until = step;
  req.background = background;
  req.rms = rms;
  if ((ret = sky_run (&req, &run->stages)) != SKY_OK)
    {
      sky_api_run_free (run);
      return ret;
    }
  run->gpu_ran = run->stages.has_gpu;
  run->backend = b == SKY_BACKEND_GPU && run->gpu_ran ? "gpu" : "cpu";
  *out = run;
  return SKY_OK;
}

static const SkyResult *
run_result (const SkyApiRun *run)
{
  return run->uses_stages ? &run->stages.result : &run->own;
}

int
sky_api_run_result (const SkyApiRun *run, SkyApiResult *out)
{
  const SkyResult *res = run_result (run);
  const SkyCatalogue *cat = &res->catalogue;
  const SkyStep *steps;
  int nsteps = sky_method_steps (res->method, &steps);

  /* The fields not named here start at 0 or NULL; the steps' and the
   * GPU's follow. */
  *out = (SkyApiResult) {
    .nx = res->nx, .ny = res->ny,
    .median = res->stats.median, .sigma = res->stats.sigma, .mean = res->stats.mean,
    .n = res->stats.n, .ninput = res->stats.ninput,
    .iterations = res->stats.iterations, .converged = res->stats.converged,
    .flat = res->stats.flat, .connectivity = run->params.connectivity,
    .threshold_value = res->threshold_value,
    .nsources = cat->n,
    .x = cat->x, .y = cat->y, .sum = cat->sum, .npix = cat->npix, .peak = cat->peak,
    .peak_x = cat->peak_x, .peak_y = cat->peak_y,
    .xmin = cat->xmin, .xmax = cat->xmax, .ymin = cat->ymin, .ymax = cat->ymax,
    .background = cat->background, .rms = cat->rms,
    .sum_err = cat->sum_err, .peak_err = cat->peak_err,
    .x_win = cat->x_win, .y_win = cat->y_win, .flags = cat->flags,
    .nislands = res->nislands, .mask = res->mask, .labels = res->labels,
  };
  out->nsteps = nsteps < 8 ? nsteps : 8;
  for (int k = 0; k < out->nsteps; k++)
    out->step_name[k] = sky_step_name (steps[k]);
  for (int k = 0; k < out->nsteps; k++)
    out->step_ms[k] = run->gpu_ran && run->uses_stages ? run->stages.gpu_kernel.ms[steps[k]]
                                                       : res->times.ms[steps[k]];
  out->total_ms = run->gpu_ran && run->uses_stages ? run->stages.gpu_kernel.total
                                                   : res->times.total;
  out->gpu_ran = run->gpu_ran;
  if (run->uses_stages && run->stages.has_gpu)
    {
      out->gpu_kernels_ms = run->stages.gpu_times.kernels;
      out->gpu_total_ms = run->stages.gpu_times.total;
    }
  else if (run->gpu_ran)
    {
      out->gpu_kernels_ms = run->gpu_times.kernels;
      out->gpu_total_ms = run->gpu_times.total;
    }
  out->backend = run->backend ? run->backend : "cpu";
  out->gpu_fault = run->uses_stages && run->stages.gpu_fault ? run->stages.gpu_fault : "";
  out->packed_catalogue = run->packed;
  return SKY_OK;
}

int
sky_api_run_write (const SkyApiRun *run, const char *format, const char *path)
{
  static const struct {
    const char *name;
    int (*write) (const char *path, const SkyExport *ex);
  } writers[] = {
    { "csv", sky_export_csv }, { "ecsv", sky_export_ecsv },
    { "regions", sky_export_regions }, { "votable", sky_export_votable },
  };
  SkyRunInfo info = { 0 };
  SkyExport ex;
  int ret;

  for (size_t k = 0; k < sizeof writers / sizeof writers[0]; k++)
    if (format != NULL && strcmp (format, writers[k].name) == 0)
      {
        info.image = run->image;
        info.params = &run->params;
        info.backend = run->backend ? run->backend : "cpu";
        ret = sky_export_init (&ex, &info, run_result (run));
        if (ret == SKY_OK)
          ret = writers[k].write (path, &ex);
        sky_export_clear (&ex);
        return ret;
      }
  return sky_fail (SKY_ERR_ARGUMENT, "format: \"%s\" is not csv, ecsv, regions or votable",
                   format ? format : "");
}

void
sky_api_run_free (SkyApiRun *run)
{
  if (run == NULL)
    return;
  sky_stages_clear (&run->stages);
  sky_result_clear (&run->own);
  free (run);
}

/* ---------------------------------------------------------------- steps */

int
sky_api_clip (const SkyApiImage *img, const SkyApiParams *params, double *median, double *sigma,
              int64_t *n, int32_t *iterations)
{
  SkyParams p;
  SkyClipStats stats = { 0 };
  int ret;

  if ((ret = sky_api_core_params (params, &p)) != SKY_OK
      || (ret = sky_cpu_clip (&img->image, &p, &stats)) != SKY_OK)
    return ret;
  *median = stats.median;
  *sigma = stats.sigma;
  *n = stats.n;
  *iterations = stats.iterations;
  return SKY_OK;
}

int
sky_api_segment (const SkyApiImage *img, double level, int32_t nthreads, uint8_t *mask)
{
  return sky_cpu_segment (&img->image, level, nthreads, mask);
}

int
sky_api_label (const uint8_t *mask, int64_t nx, int64_t ny, int32_t connectivity,
               int32_t nthreads, int32_t *labels, int64_t *nlabels)
{
  if (connectivity != 4 && connectivity != 8)
    return sky_fail (SKY_ERR_ARGUMENT, "connectivity: %d is not 4 or 8", connectivity);
  return sky_cpu_label (mask, nx, ny, connectivity, nthreads, labels, nlabels);
}

int
sky_api_background (const SkyApiImage *img, const SkyApiParams *params, float *background,
                    float *rms)
{
  SkyParams p;
  int ret;

  if ((ret = sky_api_core_params (params, &p)) != SKY_OK)
    return ret;
  return sky_cpu_background (&img->image, &p, p.nthreads, background, rms);
}

int
sky_api_measure (const SkyApiImage *img, const int32_t *labels, int64_t nlabels,
                 int32_t nthreads, SkyApiRun **out)
{
  SkyApiRun *run = run_new ();
  int ret;

  *out = NULL;
  if (run == NULL)
    return sky_fail (SKY_ERR_MEMORY, "out of memory");
  sky_params_init (&run->params);
  run->image = &img->image;
  run->own.nx = img->image.nx;
  run->own.ny = img->image.ny;
  run->own.nsources = nlabels;
  run->own.threshold_value = NAN;
  if ((ret = sky_cpu_measure (&img->image, labels, nlabels, nthreads, &run->own.catalogue))
      != SKY_OK)
    {
      sky_api_run_free (run);
      return ret;
    }
  run->backend = "cpu";
  *out = run;
  return SKY_OK;
}

/* ---------------------------------------------------------- convolution */

static int
make_kernel (const double *k, int32_t knx, int32_t kny, const char *mode, SkyKernel *kernel,
             SkyConvolveMode *m)
{
  int ret;

  if ((ret = sky_convolve_mode_parse (mode, m)) != SKY_OK)
    return ret;
  return sky_kernel_from_values (kernel, knx, kny, k);
}

int
sky_api_convolve2d_shape (int64_t nx, int64_t ny, int32_t knx, int32_t kny, const char *mode,
                          int64_t *out_nx, int64_t *out_ny)
{
  SkyKernel kernel = { knx, kny, NULL };
  SkyConvolveMode m;
  int64_t x0, y0;
  int swapped, ret;

  if ((ret = sky_convolve_mode_parse (mode, &m)) != SKY_OK)
    return ret;
  return sky_convolve_geometry (nx, ny, &kernel, m, out_nx, out_ny, &x0, &y0, &swapped);
}

int
sky_api_convolve2d (const void *in, int64_t nx, int64_t ny, const double *k, int32_t knx,
                    int32_t kny, const char *mode, int32_t f64, int32_t nthreads, void *out)
{
  SkyKernel kernel = { 0 };
  SkyConvolveMode m;
  SkyConvolvePath used;
  int ret;

  if ((ret = make_kernel (k, knx, kny, mode, &kernel, &m)) == SKY_OK)
    ret = f64 ? sky_cpu_convolve2d_f64 (in, nx, ny, &kernel, m, SKY_CONVOLVE_AUTO, nthreads, out,
                                        &used)
              : sky_cpu_convolve2d_f32 (in, nx, ny, &kernel, m, SKY_CONVOLVE_AUTO, nthreads, out,
                                        &used);
  sky_kernel_clear (&kernel);
  return ret;
}

int
sky_api_convolve1d (const void *a, int64_t n, const void *v, int64_t m, int32_t f64,
                    int32_t nthreads, void *out)
{
  return f64 ? sky_cpu_convolve1d_f64 (a, n, v, m, nthreads, out)
             : sky_cpu_convolve1d_f32 (a, n, v, m, nthreads, out);
}

/* ---------------------------------------------------------------- device */

int
sky_api_run_new_device (int64_t nx, int64_t ny, const SkyParams *params, SkyApiRun **out,
                        SkyResult **res, SkyGpuTimes **times)
{
  SkyApiRun *run = run_new ();

  if (run == NULL)
    return sky_fail (SKY_ERR_MEMORY, "out of memory");
  run->params = *params;
  run->device_image.nx = nx;
  run->device_image.ny = ny;
  run->image = &run->device_image;
  run->gpu_ran = 1;
  run->backend = "gpu";
  *res = &run->own;
  *times = &run->gpu_times;
  *out = run;
  return SKY_OK;
}

const SkyImage *
sky_api_image_core (const SkyApiImage *img)
{
  return &img->image;
}

void
sky_api_run_set_packed (SkyApiRun *run, const void *packed)
{
  run->packed = packed;
}

void
sky_api_run_set_image (SkyApiRun *run, const SkyImage *image)
{
  run->image = image;
}

/* sky-core.h: the image model, FITS loading, pipeline parameters and results,
 * catalogue writers and timing shared by every skysift backend.
 *
 * Plain C11 with no toolkit: the CPU and GPU backends, the CLI and the app all
 * stand on this header. Functions that can fail return an int status, SKY_OK
 * (0) on success; sky_last_error() then holds a one-line message for the
 * calling thread that names the file and the reason.
 */
#ifndef SKY_CORE_H
#define SKY_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ status */

enum {
  SKY_OK = 0,
  SKY_ERR_IO,          /* cannot open, read or write a file */
  SKY_ERR_FORMAT,      /* not FITS, damaged, or an unsupported layout */
  SKY_ERR_NO_IMAGE,    /* no HDU with image data, or not the one asked for */
  SKY_ERR_SIZE,        /* impossible or too large dimensions */
  SKY_ERR_MEMORY,      /* an allocation failed */
  SKY_ERR_EMPTY,       /* every pixel blank: nothing to measure */
  SKY_ERR_ARGUMENT,    /* a parameter out of its range */
  SKY_ERR_UNAVAILABLE, /* a backend or device that is not there */
};

/* A short fixed text for a status code, never NULL. */
const char *sky_status_string (int status);

/* The detailed message of the last failure on this thread ("" if none). */
const char *sky_last_error (void);

/* Records a failure for sky_last_error() and returns status, so that callers
 * can write `return sky_fail (SKY_ERR_IO, "%s: %s", path, why);`. */
int sky_fail (int status, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* ------------------------------------------------------------------- image */

/* An image plane in memory. Pixels are float32, row-major, nx columns by ny
 * rows; row 0 is the first row in the file (FITS y = 1), column 0 is FITS
 * x = 1. Blank pixels (BLANK, NaN, and +-Inf, which no statistic can use) are
 * stored as NaN: the NaN pattern is the blank mask, so every stage tests one
 * array and a comparison with a blank pixel is always false. */
typedef struct SkyImage {
  int64_t nx, ny;
  float *pixels;
  int64_t nblank;       /* NaN, BLANK and Inf pixels */
  int64_t ninf;         /* of those, the ones that were +-Inf in the file */

  char *path;           /* as given to the loader */
  int hdu;              /* 1-based HDU number the plane came from */
  int64_t plane;        /* 0-based plane of a cube, 0 for a 2D image */
  int64_t nplanes;      /* planes in that HDU (1 for a 2D image) */
  int bitpix;           /* BITPIX of the HDU (after decompression) */

  char bunit[72];       /* BUNIT, "" when absent */
  int has_beam;         /* BMAJ and BMIN were found */
  double bmaj, bmin, bpa; /* beam FWHM axes in degrees, position angle in deg */

  char *header;         /* the HDU's header cards, 80 chars each, for wcslib */
  int nheader_cards;
} SkyImage;

/* Which HDU and plane to load; zero-initialise for the defaults. */
typedef struct SkyLoadOptions {
  int hdu;              /* 1-based HDU number; 0: the first one with image data */
  int64_t plane;        /* 0-based plane of a cube (axes beyond the 2nd) */
} SkyLoadOptions;

/* Loads one image plane from a FITS file with cfitsio: BITPIX 8 to -64 with
 * BSCALE/BZERO applied, tile-compressed HDUs, degenerate axes dropped. The
 * file name is taken literally (no cfitsio filename syntax). Refuses sizes
 * that cannot fit in memory before allocating. opts may be NULL. On failure
 * *out is left empty and sky_last_error() says why, naming the file. */
int sky_image_load (const char *path, const SkyLoadOptions *opts, SkyImage *out);

/* Makes an image of nx by ny zero pixels with no header (tests, synth). */
int sky_image_alloc (SkyImage *img, int64_t nx, int64_t ny);

/* Counts blank pixels again after pixels were changed by hand. */
void sky_image_count_blanks (SkyImage *img);

/* Frees what the image owns and zeroes it; safe on a zeroed image. */
void sky_image_clear (SkyImage *img);

/* -------------------------------------------------------------- parameters */

typedef struct SkyParams {
  double clip_kappa;    /* clip at median +- kappa * sigma; default 3 */
  int max_iter;         /* clipping passes at most; 0 (default): until stable */
  double threshold;     /* source pixels are > threshold * sigma; default 5 */
  int relative;         /* 1: > median + threshold * sigma; default 0 */
  int connectivity;     /* 4 (default) or 8 */
  int nthreads;         /* worker threads; 0 (default): every online core */
} SkyParams;

/* The lesson's defaults: kappa 3 until stable, 5 sigma absolute, 4-connected. */
void sky_params_init (SkyParams *params);

/* SKY_OK, or SKY_ERR_ARGUMENT with a message naming the bad parameter. */
int sky_params_check (const SkyParams *params);

/* -------------------------------------------------------------- statistics */

/* The background after kappa-sigma clipping: median and population standard
 * deviation of the surviving pixels, how many survive, and how many passes
 * it took (the last pass is the one that clipped nothing). A flat image, or
 * one whose clipping leaves no spread, has sigma 0 and flat set: it has no
 * background to measure and so no sources. */
typedef struct SkyClipStats {
  double median;
  double sigma;
  double mean;
  int64_t n;            /* surviving pixels */
  int64_t ninput;       /* non-blank pixels that went in */
  int iterations;
  int converged;        /* 0 when max_iter stopped it first */
  int flat;
} SkyClipStats;

/* The pixel value a source pixel must exceed, or NAN for a flat image. */
double sky_threshold_value (const SkyParams *params, const SkyClipStats *stats);

/* --------------------------------------------------------------- catalogue */

/* Per-source measurements as parallel arrays, index i for label i + 1.
 * Centroids are intensity-weighted, 0-based (x = column, y = row); sums are
 * of pixel values in the image's unit, accumulated in double. */
typedef struct SkyCatalogue {
  int64_t n;
  double *x, *y;        /* centroid */
  double *sum;          /* summed pixel values */
  int64_t *npix;
  float *peak;          /* brightest pixel value */
  int32_t *peak_x, *peak_y;
  int32_t *xmin, *xmax, *ymin, *ymax; /* bounding box, inclusive */
} SkyCatalogue;

int sky_catalogue_alloc (SkyCatalogue *cat, int64_t n);
void sky_catalogue_clear (SkyCatalogue *cat);

/* Fills idx with the indices of the (up to) k largest sums, largest first,
 * and returns how many it filled. */
int sky_catalogue_top_sums (const SkyCatalogue *cat, int64_t *idx, int k);

/* ------------------------------------------------------------------ timing */

/* Monotonic wall clock in milliseconds. */
double sky_now_ms (void);

/* Times of one run of the four steps, in milliseconds. */
typedef struct SkyStepTimes {
  double clip, segment, label, measure;
  double total;         /* the four steps */
} SkyStepTimes;

/* Keeps, step by step, the smaller of best and t (best of N repeats). */
void sky_step_times_min (SkyStepTimes *best, const SkyStepTimes *t);

/* ------------------------------------------------------------------ result */

/* Everything one run of the pipeline produces. The mask and label image are
 * nx * ny, row-major like the image; labels are 1..nsources numbered in
 * raster order of each source's first pixel (as scipy.ndimage.label does),
 * 0 for background. */
typedef struct SkyResult {
  int64_t nx, ny;
  SkyClipStats stats;
  double threshold_value;  /* NAN when flat */
  uint8_t *mask;
  int32_t *labels;
  int64_t nsources;
  SkyCatalogue catalogue;
  SkyStepTimes times;
} SkyResult;

void sky_result_clear (SkyResult *res);

/* ----------------------------------------------------------------- writers */

/* Writes the catalogue as CSV with a header row:
 * source_id,x_centroid,y_centroid,sum_flux,npix,peak_flux,peak_x,peak_y,
 * xmin,xmax,ymin,ymax. The file is written beside its final name and renamed
 * into place, so a failure never leaves a partial file. */
int sky_write_catalogue_csv (const char *path, const SkyCatalogue *cat);

/* What a run's JSON summary holds besides the result. */
typedef struct SkyRunInfo {
  const SkyImage *image;
  const SkyParams *params;
  const char *backend;  /* "cpu" */
  double load_ms;
  int repeat;
} SkyRunInfo;

/* Writes the run summary as JSON (image, shape, nblank, clipped statistics,
 * threshold, nsources, times_ms.cpu), atomically like the CSV writer. */
int sky_write_run_json (const char *path, const SkyRunInfo *info, const SkyResult *res);

/* ------------------------------------------------------------------ memory */

/* Allocates a large buffer, on huge pages where available; free() frees it.
 * Contents are undefined. NULL when out of memory. */
void *sky_alloc_large (size_t size);

/* ----------------------------------------------------------------- threads */

/* Runs fn (ctx, task) for task = 0 .. ntasks - 1 on up to nthreads threads
 * (0: every online core) and returns when all are done. Tasks are handed
 * out in order, one at a time; the caller's thread works too. */
void sky_parallel_for (int ntasks, int nthreads, void (*fn) (void *ctx, int task), void *ctx);

/* Threads that sky_parallel_for uses for nthreads = 0: SKYSIFT_THREADS if
 * set, else the online cores. */
int sky_default_threads (void);

/* ------------------------------------------------------------------- synth */

typedef struct SkySynthOptions {
  int64_t size;         /* image is size x size; default 2048 */
  uint64_t seed;        /* default 20241203 */
  int nthreads;         /* 0: every online core */
} SkySynthOptions;

void sky_synth_options_init (SkySynthOptions *opts);

/* Writes a GC-like field as FITS (float32, Jy/beam, SIN WCS, beam keywords)
 * and, if truth_path is not NULL, the list of injected sources as CSV
 * (x_pix0,y_pix0,peak_jy_per_beam,kind). Both are written to temporary
 * names and renamed when complete; should the truth file's rename fail after
 * the image is in place, the image stays and the error names the truth path.
 * opts NULL means the defaults; size must be 16..65536 and nthreads >= 0,
 * else SKY_ERR_ARGUMENT. The field depends only on size and seed, not on the
 * thread count. Needs about 12 bytes of memory per pixel. */
int sky_synth_write (const char *path, const char *truth_path, const SkySynthOptions *opts);

#ifdef __cplusplus
}
#endif

#endif /* SKY_CORE_H */

/* SPDX-License-Identifier: GPL-3.0-or-later */
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

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
  SKY_ERR_CANCELLED,   /* the caller asked a run to stop */
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

/* A plane left in its file and read in parts, for an image larger than
 * memory allows: open fills img as sky_image_load does but for the pixels
 * (pixels NULL, nblank and ninf 0) and works only where the plane is
 * uncompressed (SKY_ERR_ARGUMENT otherwise); read converts n pixels from
 * pixel first on (raster order) into out exactly as the loader does, on
 * nthreads threads (0: every core), and adds the infinities to *ninf (if
 * not NULL). Each read reopens the file: a part is best a few MiB. */
typedef struct SkyPlaneFile SkyPlaneFile;
int sky_plane_file_open (const char *path, const SkyLoadOptions *opts, SkyImage *img,
                         SkyPlaneFile **out);
int sky_plane_file_read (SkyPlaneFile *f, int64_t first, int64_t n, int nthreads, float *out,
                         int64_t *ninf);
/* The same, calling each_block (if not NULL) with every block of at most
 * 4096 pixels of out as soon as it is converted, while it is still in the
 * core's first-level cache: a pass over the pixels that costs no trip to
 * memory. With nthreads > 1 it is called on several threads at once. */
typedef void (*SkyPixelBlockFunc) (void *user, const float *pixels, int64_t n);
int sky_plane_file_read_each (SkyPlaneFile *f, int64_t first, int64_t n, int nthreads,
                              float *out, int64_t *ninf, SkyPixelBlockFunc each_block,
                              void *user);
void sky_plane_file_close (SkyPlaneFile *f);

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
  int bkg_box;          /* background mesh box, pixels a side (1..16384); default 64 */
  int bkg_filter;       /* median filter of the mesh, boxes a side (odd); default 3,
                         * 1 for none */

  /* The local method's parameters (sky-cpu-local.c). */
  double seed_sigma;    /* local: islands need a pixel above this many rms; 4.6 */
  double flood_sigma;   /* local: islands hold the pixels above this many rms; 2.5 */
  int64_t min_area;     /* local: islands of fewer pixels are dropped; default 1 */
  int deblend_nthresh;  /* local: deblending levels; 32; 0 or 1: no deblending */
  double deblend_mincont; /* local: a branch's share of its island's flux; 0.005 */
  double deblend_sigma; /* local: a branch's peak rises this many rms above the
                         * level it splits at; default 5 */
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

/* The pixel value a source pixel must exceed, or NAN for a flat image.
 * sky_threshold_bound (below, for host and device) is its float bound. */
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

  /* The local method's measures (NULL for the global method): the
   * background and rms maps at the peak, the errors the rms map gives, and
   * SKY_FLAG_* bits. */
  float *background, *rms;
  double *sum_err;      /* sqrt (sum of rms^2 over the source's pixels) */
  double *peak_err;     /* the rms at the peak */
  double *x_win, *y_win; /* windowed centroid (SExtractor's XWIN, YWIN) */
  uint32_t *flags;
} SkyCatalogue;

enum {
  SKY_FLAG_EDGE = 1,       /* a pixel on the image's edge */
  SKY_FLAG_BLANK = 2,      /* a pixel next to a blank pixel */
  SKY_FLAG_DEBLENDED = 4,  /* split from a larger island by deblending */
  SKY_FLAG_TRUNCATED = 8,  /* the flood was cut above the seed level by the
                            * edge or by blank pixels: the bright part of
                            * the source may be missing */
};

/* Allocates the local method's columns of an allocated catalogue. */
int sky_catalogue_alloc_local (SkyCatalogue *cat);

int sky_catalogue_alloc (SkyCatalogue *cat, int64_t n);
void sky_catalogue_clear (SkyCatalogue *cat);

/* Fills idx with the indices of the (up to) k largest sums, largest first,
 * and returns how many it filled. */
int sky_catalogue_top_sums (const SkyCatalogue *cat, int64_t *idx, int k);

/* ------------------------------------------------------------------- steps */

/* The vocabulary of steps. A method (below) is an ordered list of them;
 * results, times, writers, the app's panel and the GPU's events are arrays
 * indexed by step, so a new step is one entry here and one in its
 * method's list. The values index arrays: keep them dense from 0. */
typedef enum SkyStep {
  SKY_STEP_INVALID = -2,  /* an unknown name */
  SKY_STEP_NONE = -1,     /* no step: nothing run yet */
  SKY_STEP_CLIP,          /* kappa-sigma clipped background statistics */
  SKY_STEP_SEGMENT,       /* the mask of pixels above the threshold */
  SKY_STEP_LABEL,         /* connected components of the mask */
  SKY_STEP_MEASURE,       /* the catalogue of the labelled sources */
  SKY_STEP_BACKGROUND,    /* local: background and rms maps on a mesh */
  SKY_STEP_DETECT,        /* local: (image - background) / rms, filtered or not */
  SKY_STEP_FLOOD,         /* local: seed-and-flood islands */
  SKY_STEP_DEBLEND,       /* local: islands split by multi-threshold deblending */
  SKY_STEP_COUNT
} SkyStep;

/* "clip", "segment", ...; "none" for SKY_STEP_NONE, "" for anything else. */
const char *sky_step_name (SkyStep step);

/* The step named name: "none" is SKY_STEP_NONE, "all" the last step of
 * every method (measure); SKY_STEP_INVALID for anything else or NULL. */
SkyStep sky_step_from_name (const char *name);

/* A way to find sources: an ordered list of steps, each reading what the
 * ones before it left. The lesson's method (the global one: one clipped
 * sigma, one threshold) is clip, segment, label, measure; the local one
 * (against background and rms maps) background, detect, flood, deblend,
 * measure. */
typedef enum SkyMethod {
  SKY_METHOD_LESSON,
  SKY_METHOD_LOCAL,
  SKY_METHOD_COUNT
} SkyMethod;

/* The method's steps in the order they run; returns how many. */
int sky_method_steps (SkyMethod method, const SkyStep **steps);

/* "lesson", "local"; "" for an unknown method. */
const char *sky_method_name (SkyMethod method);

/* ------------------------------------------------------------------ timing */

/* Monotonic wall clock in milliseconds. */
double sky_now_ms (void);

/* Times of one run of a method's steps in milliseconds, by step (0 for a
 * step the method does not have). */
typedef struct SkyStepTimes {
  double ms[SKY_STEP_COUNT];
  double total;         /* the steps together */
} SkyStepTimes;

/* Keeps, step by step, the smaller of best and t (best of N repeats). */
void sky_step_times_min (SkyStepTimes *best, const SkyStepTimes *t);

/* Times of one GPU run in milliseconds, from device events (src/gpu fills
 * them; plain data here so that the writers need no CUDA). */
typedef struct SkyGpuTimes {
  double upload;        /* image and parameters, pinned host to device */
  double ms[SKY_STEP_COUNT]; /* each step's kernels */
  double download;      /* statistics and catalogue (mask, labels if asked) */
  double kernels;       /* the steps, first kernel start to last end */
  double total;         /* upload start to download end, host waits included */
  /* How the figures above were taken: the best of `runs` runs after one
   * untimed warm-up run (sky_gpu_run_best), or 0: one run, cold or not. */
  int runs;
  /* The mask and labels brought home for a display after the timed runs,
   * DMA into page-locked memory; in no figure above (-1: none came). */
  double outputs;
} SkyGpuTimes;

/* ------------------------------------------------------------------ result */

/* Everything one run of the pipeline produces. The mask and label image are
 * nx * ny, row-major like the image; labels are 1..nsources numbered in
 * raster order of each source's first pixel (as scipy.ndimage.label does),
 * 0 for background. */
typedef struct SkyResult {
  SkyMethod method;     /* the steps that made it (0: the lesson's) */
  int64_t nx, ny;
  SkyClipStats stats;
  double threshold_value;  /* NAN when flat */
  uint8_t *mask;
  int32_t *labels;
  int64_t nsources;
  SkyCatalogue catalogue;
  SkyStepTimes times;

  /* The local method (NULL for the lesson's): the background and rms
   * maps the sources were found against, nx * ny each, owned. */
  float *background, *rms;
  double noise_scale;      /* the matched filter's noise over the map's; 1 unfiltered */
  int64_t nislands;        /* islands before deblending */
  int64_t ndeblended;      /* islands that deblending split */
} SkyResult;

void sky_result_clear (SkyResult *res);

/* Checks res against the reference ref (one backend's against another's,
 * the CPU's as a rule) as docs/contract.md says: statistics to 1e-6
 * relative with the same iteration and pixel counts, the same sources and
 * label numbers (the label images when both have them), centroids within
 * 1e-4 pixel, sums within 1e-6 relative, peaks, peak positions and boxes
 * exact. Returns the number of failed checks; what (if not NULL) gets
 * "agree" or the failed checks, each with its first difference, and says
 * when a pixel lies exactly on the threshold, the one allowed source of
 * difference. img is the image both ran on. */
int sky_result_compare (const SkyImage *img, const SkyResult *ref, const SkyResult *res,
                        char *what, size_t what_size);

/* ----------------------------------------------------------------- writers */

/* What a run's JSON summary holds besides the result. */
typedef struct SkyRunInfo {
  const SkyImage *image;
  const SkyParams *params;
  const char *backend;  /* "cpu" */
  double load_ms;
  int repeat;
  const SkyGpuTimes *gpu; /* NULL when no GPU ran; else times_ms.gpu */
  const char *smooth;   /* the detection image's kernel (params.smooth), NULL if none */
  /* The steps the GPU computed, a bit (1u << step) each, where it did not
   * run them all (the local method's background alone, the CPU the rest);
   * 0: the backend's. */
  unsigned gpu_steps;
  double wall_ms;       /* from the command's start to its outputs written (JSON
                         * excepted), as "wall_ms"; 0: not written */
} SkyRunInfo;

/* Writes the run summary as JSON (image, shape, nblank, clipped statistics,
 * threshold, nsources, times_ms.cpu, and times_ms.gpu when info->gpu is set;
 * backend "gpu" alone has no times_ms.cpu unless info->gpu_steps names the
 * steps the GPU ran, "gpu_steps", and the CPU the others), atomically like
 * the CSV writer. */
int sky_write_run_json (const char *path, const SkyRunInfo *info, const SkyResult *res);

/* -------------------------------------------------------- world coordinates */

/* The celestial systems skysift tells apart. A position is always named
 * after its own system: galactic positions are glon/glat, never RA/Dec. */
typedef enum SkyCoordSystem {
  SKY_COORD_EQUATORIAL,    /* ra, dec; the frame says ICRS, FK5, FK4... */
  SKY_COORD_GALACTIC,      /* glon, glat */
  SKY_COORD_ECLIPTIC,      /* elon, elat */
  SKY_COORD_SUPERGALACTIC, /* slon, slat */
  SKY_COORD_OTHER,         /* another celestial pair (e.g. helioprojective),
                            * named after its CTYPEs: hpln, hplt */
} SkyCoordSystem;

/* "equatorial", "galactic", "ecliptic", "supergalactic" or "other". */
const char *sky_coord_system_name (SkyCoordSystem system);

/* An image's world coordinate system, read with wcslib. Opaque. */
typedef struct SkyWcs SkyWcs;

/* Builds the WCS of img from its header cards (img->header) the way
 * astropy.wcs does (wcspih with every relaxation, the primary
 * representation, wcsfix, wcsset): any projection wcslib knows, CDELT with
 * PC or CROTA, or CD; celestial units made degrees. Axes beyond the second
 * stand at the image's plane. SKY_ERR_UNAVAILABLE where the image has no
 * celestial WCS (no header, no CTYPE, linear axes only), SKY_ERR_FORMAT
 * where wcslib refuses the header's; sky_last_error() then says why in a
 * line that names the image. Free with sky_wcs_free (NULL is fine). */
int sky_wcs_new (const SkyImage *img, SkyWcs **out);
void sky_wcs_free (SkyWcs *wcs);

/* Pixel to world: x, y are skysift's 0-based pixel coordinates (FITS pixel
 * x + 1, y + 1); lng, lat are degrees in the WCS's own system and frame,
 * lng in [0, 360). Where the projection has no world position for the
 * pixel (outside a SIN disc, say) both are NaN and the status is
 * SKY_ERR_ARGUMENT. wcslib keeps scratch state in the WCS, so one SkyWcs
 * must not be used by two threads at once: give each thread its own. */
int sky_wcs_pix2world (SkyWcs *wcs, double x, double y, double *lng, double *lat);

/* World to pixel, the inverse of sky_wcs_pix2world: lng, lat in degrees
 * in the WCS's own system, x, y skysift's 0-based pixels. NaN and
 * SKY_ERR_ARGUMENT where the projection has no pixel for the position
 * (the far side of a SIN or TAN sphere). Same threading rule. */
int sky_wcs_world2pix (SkyWcs *wcs, double lng, double lat, double *x, double *y);

/* The same for n pixels; returns how many had a world position. */
int64_t sky_wcs_pix2world_n (SkyWcs *wcs, int64_t n, const double *x, const double *y,
                             double *lng, double *lat);

SkyCoordSystem sky_wcs_system (const SkyWcs *wcs);

/* Column names of the two coordinates, lower case: "ra"/"dec",
 * "glon"/"glat", "elon"/"elat", "slon"/"slat", else the CTYPE's first four
 * letters ("hpln"/"hplt"). */
const char *sky_wcs_lng_name (const SkyWcs *wcs);
const char *sky_wcs_lat_name (const SkyWcs *wcs);

/* The reference frame: RADESYS for equatorial systems ("ICRS", "FK5",
 * "FK4", "FK4-NO-E", "GAPPT"; FITS defaults applied), else "galactic",
 * "ecliptic", "supergalactic", or the axis types ("HPLN/HPLT"). */
const char *sky_wcs_frame (const SkyWcs *wcs);

/* The equinox in years (2000.0 for FK5 J2000), NaN where the frame has
 * none (ICRS, galactic). */
double sky_wcs_equinox (const SkyWcs *wcs);

/* The projection code ("SIN", "TAN", "CAR"...) and CTYPE of image axis 0 or
 * 1 ("RA---SIN"). */
const char *sky_wcs_projection (const SkyWcs *wcs);
const char *sky_wcs_ctype (const SkyWcs *wcs, int axis);

/* The solid angle of one pixel at the reference point, in square degrees:
 * |det| of the celestial CDELT * PC (or CD) matrix. NaN where the image's
 * two axes are not the celestial pair. */
double sky_wcs_pixel_area (const SkyWcs *wcs);

/* Sexagesimal text, rounded once so that 59.995 s carries: right ascension
 * in degrees as "HH:MM:SS.ss" (wrapped to [0, 360)), declination as
 * "+DD:MM:SS.s" (sign always). "" for NaN. buf needs SKY_SEXAGESIMAL_SIZE
 * bytes; returns buf. */
#define SKY_SEXAGESIMAL_SIZE 16
char *sky_format_ra (double ra_deg, char *buf, size_t size);
char *sky_format_dec (double dec_deg, char *buf, size_t size);

/* "0.1.0": the version the files record as their software. */
const char *sky_version (void);

/* Writes s (NULL as "") as a JSON (and so YAML) double-quoted string:
 * quote and backslash escaped, control characters and DEL as \u00XX, other
 * bytes (UTF-8) as they are. Every JSON and ECSV writer quotes with it. */
void sky_put_quoted (FILE *fp, const char *s);

/* -------------------------------------------------------------- float bits */

/* Small numeric helpers that the CPU, the GPU's kernels and the app must
 * compute identically, so they are written once here, for host and device. */
#ifdef __CUDACC__
#define SKY_HOST_DEVICE __host__ __device__
#else
#define SKY_HOST_DEVICE
#endif

/* The largest float not above threshold_value t: for a float x, x > t
 * exactly when x > sky_threshold_bound (t), so the segmentation compares in
 * single precision and stays exact, on the CPU and on the GPU. */
static inline SKY_HOST_DEVICE float
sky_threshold_bound (double t)
{
  float f = (float) t;

  if ((double) f > t)
    f = nextafterf (f, -INFINITY);
  return f;
}

/* A float's bits (C11 defines reading the other member of a union; GCC,
 * clang and nvcc do so in C++ too). */
typedef union SkyFloatBits {
  float f;
  uint32_t u;
} SkyFloatBits;

/* An order-preserving map of a float to uint32, branch-free: negative floats
 * have all bits flipped, others the sign bit set; -0 sorts just below +0.
 * sky_key_float is its inverse. */
static inline SKY_HOST_DEVICE uint32_t
sky_float_key (float v)
{
  SkyFloatBits b;

  b.f = v;
  return b.u ^ ((uint32_t) ((int32_t) b.u >> 31) | 0x80000000u);
}

static inline SKY_HOST_DEVICE float
sky_key_float (uint32_t k)
{
  SkyFloatBits b;

  b.u = (k & 0x80000000u) ? (k ^ 0x80000000u) : ~k;
  return b.f;
}

/* The exact integer square root of v >= 0 (the background's fill measures
 * squared distances between boxes with it, on the CPU and the GPU). */
static inline SKY_HOST_DEVICE int64_t
sky_isqrt64 (int64_t v)
{
  int64_t r = (int64_t) sqrt ((double) v);
  while (r * r > v)
    r--;
  while ((r + 1) * (r + 1) <= v)
    r++;
  return r;
}

/* The k-th smallest of v[0..n-1], v reordered (quickselect, Hoare's
 * partition about the middle element): the background mesh's medians, which
 * the CPU and the GPU's kernels must pick the same way, value for value. */
static inline SKY_HOST_DEVICE float
sky_select_kth (float *v, int64_t n, int64_t k)
{
  int64_t lo = 0, hi = n - 1;

  while (lo < hi)
    {
      float pivot = v[lo + (hi - lo) / 2];
      int64_t i = lo, j = hi;
      while (i <= j)
        {
          while (v[i] < pivot)
            i++;
          while (v[j] > pivot)
            j--;
          if (i <= j)
            {
              float t = v[i];
              v[i++] = v[j];
              v[j--] = t;
            }
        }
      if (k <= j)
        hi = j;
      else if (k >= i)
        lo = i;
      else
        break;
    }
  return v[k];
}

/* ------------------------------------------------------------- convolution */

/* A convolution kernel: ny rows of nx values, row-major, in double. */
typedef struct SkyKernel {
  int nx, ny;
  double *values;
} SkyKernel;

/* How much of the full convolution to keep, as scipy.signal.convolve2d
 * defines it: full ((ny + ky - 1) x (nx + kx - 1)), same (the input's size,
 * centred: offset (k - 1) / 2), valid (only outputs that need no zero fill;
 * where the kernel is the larger in every axis the two swap roles). */
typedef enum {
  SKY_CONVOLVE_FULL,
  SKY_CONVOLVE_SAME,
  SKY_CONVOLVE_VALID,
} SkyConvolveMode;

/* Which way to convolve, on either backend: the separable path (rows then
 * columns) is taken automatically when the kernel is of rank 1
 * (sky_kernel_separate at SKY_KERNEL_RANK1_TOLERANCE), the direct one
 * otherwise. */
typedef enum {
  SKY_CONVOLVE_AUTO,
  SKY_CONVOLVE_DIRECT,
  SKY_CONVOLVE_SEPARABLE,
} SkyConvolvePath;

/* "auto", "direct" or "separable". */
const char *sky_convolve_path_name (SkyConvolvePath path);

/* A kernel counts as rank 1 when its outer-product factors reproduce every
 * element to this fraction of its largest: the lesson's Gaussian, built
 * through a square root, is rank 1 to about 1e-16. Both backends use it, so
 * they take the same path for the same kernel. */
#define SKY_KERNEL_RANK1_TOLERANCE 1e-12

/* The lesson's kernel: exp(-r^2 / 2) on a 15 x 15 grid spanning -2..2 in
 * both axes (np.linspace (-2, 2, 15)), not normalised. */
int sky_kernel_lesson (SkyKernel *k);

/* A circular Gaussian of sigma pixels on size x size pixels (size odd, or 0
 * for the smallest odd size reaching 4 sigma), of unit sum. */
int sky_kernel_gaussian (SkyKernel *k, double sigma, int size);

/* A size x size box of unit sum. */
int sky_kernel_box (SkyKernel *k, int size);

/* "lesson", "gauss:SIGMA[:SIZE]" or "box:SIZE"; a message names the spec. */
int sky_kernel_parse (SkyKernel *k, const char *spec);

/* The image's beam on its pixel grid: Gaussian sigmas of the major and
 * minor axes in pixels, and the major axis's angle from +x towards +y in
 * radians. SKY_ERR_ARGUMENT where the header has no beam or no celestial
 * WCS (sky_last_error says which). */
int sky_image_beam_pixels (const SkyImage *img, double *sigma_major, double *sigma_minor,
                           double *angle);

/* The image's beam as a kernel, for a matched filter: an elliptical
 * Gaussian of FWHM BMAJ by BMIN at position angle BPA (north through
 * east), in pixels by the WCS's pixel scale, out to 4 sigma of the major
 * axis; not normalised. SKY_ERR_ARGUMENT where the header has no beam or
 * no celestial WCS. */
int sky_kernel_beam (SkyKernel *k, const SkyImage *img);

/* Copies ny x nx values (row-major, double) into a new kernel. */
int sky_kernel_from_values (SkyKernel *k, int nx, int ny, const double *values);

/* Returns 1 and fills col (ny values) and row (nx values) when the kernel is
 * their outer product to within tolerance times its largest magnitude
 * (rank 1, like any Gaussian or box), else 0. */
int sky_kernel_separate (const SkyKernel *k, double tolerance, double *col, double *row);

void sky_kernel_clear (SkyKernel *k);

/* The output of convolving an nx x ny input with kernel k in mode: its size,
 * and where it starts in the full convolution's coordinates. For valid mode
 * with a larger kernel, *swapped is set: the kernel is then the input.
 * SKY_ERR_ARGUMENT where valid mode has no output (neither array contains
 * the other). */
int sky_convolve_geometry (int64_t nx, int64_t ny, const SkyKernel *k, SkyConvolveMode mode,
                           int64_t *out_nx, int64_t *out_ny, int64_t *x0, int64_t *y0,
                           int *swapped);

/* Writes text, or size bytes of data, to path atomically, like the
 * catalogue writers: a temporary beside it renamed into place, nothing
 * left on failure, and sky_last_error() naming path and the reason. */
int sky_write_text (const char *path, const char *text);
int sky_write_bytes (const char *path, const void *data, size_t size);

/* Parses "full", "same" or "valid". */
int sky_convolve_mode_parse (const char *text, SkyConvolveMode *mode);

/* "full", "same" or "valid". */
const char *sky_convolve_mode_name (SkyConvolveMode mode);

/* numpy.allclose (a, b) with its defaults: element by element
 * |a - b| <= SKY_ALLCLOSE_ATOL + SKY_ALLCLOSE_RTOL * |b| (b is the
 * reference; equal infinities are close, NaN never), over n values of
 * double where f64, else float. Returns 1 when every pair is close, else 0;
 * *first_far (if not NULL) gets the index of the first pair that is not
 * (-1 when none), *max_abs_diff (if not NULL) the largest |a - b|. */
#define SKY_ALLCLOSE_RTOL 1e-5
#define SKY_ALLCLOSE_ATOL 1e-8
int sky_allclose (const void *a, const void *b, int64_t n, int f64, int64_t *first_far,
                  double *max_abs_diff);

/* The lesson's convolution demo: an N x N image of zeros with a one at
 * every [FIRST::STEP, FIRST::STEP] convolved in 2D with a kernel (the
 * lesson's 15 x 15 Gaussian in the CLI), and the raveled image convolved
 * in 1D with the kernel's diagonal. The CLI and the app run the same demo:
 * sky_convolution_demo_init() makes the inputs, sky_cpu_convolution_demo()
 * (sky-cpu.h) the CPU's part, and the GPU's part is either
 * sky_gpu_convolution_demo() (sky-gpu.h) or a caller's own GPU run that
 * fills gpu_2d and gpu_1d, checked by sky_convolution_demo_check_gpu(). */
#define SKY_CONVOLUTION_DEMO_N 2048
#define SKY_CONVOLUTION_DEMO_FIRST 8
#define SKY_CONVOLUTION_DEMO_STEP 16

typedef struct SkyConvolutionDemo {
  int f64;                     /* elements are double, else float */
  SkyConvolveMode mode;
  SkyKernel kernel;            /* a copy, owned */
  int64_t n;                   /* the input is n x n */
  int64_t out_nx, out_ny;      /* the 2D output's size */
  int64_t x0, y0;              /* where it starts in the full convolution */
  void *deltas;                /* the input, n * n elements */
  void *diag;                  /* the kernel's diagonal, ndiag elements */
  int ndiag;
  int64_t n1d;                 /* the 1D output's length, n * n + ndiag - 1 */

  /* The CPU's part. Times in ms, the best of the repeats. */
  SkyConvolvePath cpu_path;    /* the path the first 2D run took */
  void *cpu_2d;                /* that run's output */
  void *cpu_2d_direct;         /* the direct path's output */
  void *cpu_1d;                /* the 1D output, on every thread */
  double cpu_2d_ms, cpu_2d_direct_ms, cpu_1d_ms;
  double diff_2d;              /* max |diff| of the 2D outputs */
  double diff_1d;              /* max |diff| of the 1D output against one thread's */
  int agree_2d, agree_1d;      /* sky_allclose of the same pairs */

  /* The GPU's part, where gpu_ran. Times in ms: the kernel alone, and
   * with the transfers (total = upload + kernel + download). */
  int gpu_ran;
  void *gpu_2d, *gpu_1d;       /* the outputs, as large as the CPU's */
  SkyConvolvePath gpu_path;
  double gpu_2d_ms, gpu_2d_total_ms, gpu_2d_upload_ms, gpu_2d_download_ms;
  double gpu_1d_ms, gpu_1d_total_ms;
  double gpu_diff_2d, gpu_diff_1d;  /* max |diff| against the CPU's outputs */
  int gpu_agree_2d, gpu_agree_1d;   /* sky_allclose against them */
} SkyConvolutionDemo;

/* Makes the demo's input for kernel k (copied), mode and element type,
 * and allocates the CPU's outputs, and the GPU's where with_gpu (else
 * gpu_2d and gpu_1d stay NULL). SKY_ERR_MEMORY, or as
 * sky_convolve_geometry() says; clear d in any case. */
int sky_convolution_demo_init (SkyConvolutionDemo *d, const SkyKernel *k, SkyConvolveMode mode,
                               int f64, int with_gpu);

/* Compares gpu_2d and gpu_1d with the CPU's outputs (sky_allclose), sets
 * gpu_ran and the GPU's diffs and agreement. */
void sky_convolution_demo_check_gpu (SkyConvolutionDemo *d);

/* Whether every check that ran agrees. */
int sky_convolution_demo_agree (const SkyConvolutionDemo *d);

void sky_convolution_demo_clear (SkyConvolutionDemo *d);

/* Writes an nx x ny plane as a FITS image, float32 (BITPIX -32, data is
 * float) or float64 (BITPIX -64, data is double), atomically. */
int sky_fits_write_plane (const char *path, int64_t nx, int64_t ny, int bitpix,
                          const void *data);

/* One keyword to add: text, or else value (a number). */
typedef struct SkyFitsKey {
  const char *name;
  const char *text;     /* NULL: the key is the number value */
  double value;
  const char *comment;
} SkyFitsKey;

/* The header a derived plane carries from its source image. */
typedef struct SkyPlaneHeader {
  const char *cards;        /* the source's cards (80 characters each, as
                             * sky_fits_read_header gives them); NULL: none */
  int ncards;
  int source_naxis;         /* the source's NAXIS: above 2, WCSAXES keeps
                             * the further axes' WCS (the plane's position) */
  double crpix_shift[2];    /* added to CRPIX1 and CRPIX2 (every alternate
                             * WCS): where the source's pixel grid lies on
                             * the new one */
  int drop_unit;            /* leave out BUNIT, BMAJ, BMIN and BPA */
  const SkyFitsKey *keys;   /* keys to add or replace */
  int nkeys;
  const char *const *history; /* HISTORY lines */
  int nhistory;
} SkyPlaneHeader;

/* sky_fits_write_plane with the source's header: every card but the
 * structure (SIMPLE, BITPIX, NAXISn, EXTEND...), the scaling (BSCALE,
 * BZERO, BLANK) and what the new data makes untrue (DATAMIN, DATAMAX,
 * CHECKSUM, DATASUM), CRPIXn moved by crpix_shift, then keys and history.
 * header NULL: a bare header. */
int sky_fits_write_plane_with_header (const char *path, int64_t nx, int64_t ny, int bitpix,
                                      const void *data, const SkyPlaneHeader *header);

/* The header of the HDU the loader would read from path (the first with
 * image data): *cards is ncards cards of 80 characters, free()d by the
 * caller; *hdu the 1-based HDU, *naxis its NAXIS. */
int sky_fits_read_header (const char *path, char **cards, int *ncards, int *hdu, int *naxis);

/* Reads the first image plane of a FITS file in double precision (for
 * float64 convolution), with the loader's HDU and shape rules. *data is
 * malloc'ed; NaN where blank. */
int sky_fits_read_plane_f64 (const char *path, int64_t *nx, int64_t *ny, double **data);

/* ------------------------------------------------------------------ memory */

/* Allocates a large buffer, on huge pages where available; free() frees it.
 * Contents are undefined. NULL when out of memory. */
void *sky_alloc_large (size_t size);

/* ----------------------------------------------------------------- threads */

/* Runs fn (ctx, task) for task = 0 .. ntasks - 1 on up to nthreads threads
 * (0: every online core) and returns when all are done. Tasks are handed
 * out in order, one at a time; the caller's thread works too. */
void sky_parallel_for (int ntasks, int nthreads, void (*fn) (void *ctx, int task), void *ctx);

/* Bands of whole rows as sky_parallel_for's tasks: how many bands of
 * rows_per_task rows cover ny rows, and the rows [*r0, *r1) of band task
 * (the last band may be short). */
static inline int
sky_row_bands (int64_t ny, int rows_per_task)
{
  return (int) ((ny + rows_per_task - 1) / rows_per_task);
}

static inline void
sky_row_band (int task, int rows_per_task, int64_t ny, int64_t *r0, int64_t *r1)
{
  *r0 = (int64_t) task * rows_per_task;
  *r1 = *r0 + rows_per_task < ny ? *r0 + rows_per_task : ny;
}

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

/* The rest of the public API, in headers of their own: the coordinate grid
 * and contours, and the catalogue's export and writers. */
#include "sky-geometry.h"
#include "sky-export.h"

#endif /* SKY_CORE_H */

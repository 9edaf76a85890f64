/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-cpu.h: the CPU backend, the reference every other backend is checked
 * against. Each step takes the previous step's result; all of them split
 * their work over row bands on nthreads threads (0: every online core). */
#ifndef SKY_CPU_H
#define SKY_CPU_H

#include "sky-core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Kappa-sigma clipping of the non-blank pixels around the median until a
 * pass clips nothing (or params->max_iter passes): keeps pixels with
 * median - kappa * sigma < x < median + kappa * sigma, sigma the population
 * standard deviation. The pixels are bucketed once by their top 12 bits;
 * every pass then works on the few buckets at its bounds and its median, so
 * no pass sorts or even reads the whole image. */
int sky_cpu_clip (const SkyImage *img, const SkyParams *params, SkyClipStats *stats);

/* Pixels read on demand, for an image too large to hold: read fills out
 * with n pixels from pixel first on (raster order, blanks NaN as the
 * loader makes them) on nthreads threads (0: every core), adds the
 * infinities it made NaN to *ninf (if not NULL) and returns a status. Each thread holds chunk pixels
 * at a time. */
typedef struct SkyPixelSource {
  int64_t nx, ny;
  int (*read) (void *ctx, int64_t first, int64_t n, int nthreads, float *out, int64_t *ninf);
  void *ctx;
  int64_t chunk;
} SkyPixelSource;

/* sky_cpu_clip on pixels read from src: the same statistics, bit for bit,
 * as on the image in memory with the same thread count (each thread reads
 * and sums its share in the same order). Memory stays small whatever the
 * image: a needed bucket is counted by its low key bits in one more read
 * (8 MiB a bucket while it lasts) rather than fetched, so the image is
 * read once per bucket window a pass needs. */
int sky_cpu_clip_source (const SkyPixelSource *src, const SkyParams *params,
                         SkyClipStats *stats);

/* mask[i] = 1 where pixels[i] > threshold_value, else 0 (blanks are 0, and a
 * NAN threshold, a flat image, gives an empty mask). mask holds nx * ny. */
int sky_cpu_segment (const SkyImage *img, double threshold_value, int nthreads, uint8_t *mask);

/* Connected components of the mask with 4- or 8-connectivity. labels
 * (nx * ny) gets 1..n in raster order of each component's first pixel,
 * exactly as scipy.ndimage.label numbers them, 0 elsewhere. Union-find over
 * provisional labels, one band per thread, bands joined along their edges. */
int sky_cpu_label (const uint8_t *mask, int64_t nx, int64_t ny, int connectivity, int nthreads,
                   int32_t *labels, int64_t *nlabels);

/* One pass over the source pixels: centroid, sum, pixel count, peak (first
 * in raster order on ties) and bounding box of labels 1..nlabels, into a
 * catalogue it allocates. */
int sky_cpu_measure (const SkyImage *img, const int32_t *labels, int64_t nlabels, int nthreads,
                     SkyCatalogue *cat);

/* Row y of the values to measure (nx floats): a pointer into an image, or
 * into buf (buf_floats floats, the thread's own) where they are made. */
typedef const float *(*SkyRowValues) (void *ctx, int64_t y, float *buf);

/* sky_cpu_measure on values made row by row (only rows that hold a source
 * pixel are asked for): an image that is never stored whole. */
int sky_cpu_measure_rows (int64_t nx, int64_t ny, SkyRowValues row, void *row_ctx,
                          int64_t buf_floats, const int32_t *labels, int64_t nlabels,
                          int nthreads, SkyCatalogue *cat);

/* sky_cpu_measure over label rows given one at a time, in raster order
 * from row 0 (rows without labels may be left out): for a run that never
 * holds the label image whole. The sums are made in the order
 * sky_cpu_measure makes them with the same nthreads, so the catalogue is
 * the same bit for bit. new allocates cat for nlabels; finish computes
 * the centroids and frees the stream; free alone drops it (on an error). */
typedef struct SkyMeasureStream SkyMeasureStream;
int sky_measure_stream_new (int64_t nx, int64_t ny, int64_t nlabels, int nthreads,
                            SkyCatalogue *cat, SkyMeasureStream **out);
void sky_measure_stream_row (SkyMeasureStream *s, int64_t y, const float *values,
                             const int32_t *labels);
void sky_measure_stream_finish (SkyMeasureStream *s);
void sky_measure_stream_free (SkyMeasureStream *s);

/* Labels of an image labelled a band of rows at a time, made the whole
 * image's: each band's labels (1..n in raster order within the band, as
 * sky_cpu_label gives them) become provisional ids after every earlier
 * band's, the first row of a band is joined to the last row of the band
 * above (union-find, the smaller id the root), and the roots are numbered
 * in id order, which is raster order of first pixels: sky_cpu_label's
 * numbers on the whole image. new: for nbands bands of rows nx wide;
 * add: the next band, in order, with its first and last rows' labels
 * (nx each; the same row for a band of one row) and its label count;
 * finish: the numbering (*nsources: the whole image's count); then
 * final[base (band) + local label] is a pixel's label in the whole image
 * (final[0] = 0), base (nbands) the count of provisional ids. Used by the
 * CPU's and the GPU's runs in bands alike. */
typedef struct SkyBandJoin SkyBandJoin;
int sky_band_join_new (int64_t nx, int64_t nbands, int connectivity, SkyBandJoin **out);
int sky_band_join_add (SkyBandJoin *j, const int32_t *first, const int32_t *last, int64_t n);
int sky_band_join_finish (SkyBandJoin *j, int64_t *nsources);
int64_t sky_band_join_base (const SkyBandJoin *j, int64_t band);
int64_t sky_band_join_count (const SkyBandJoin *j);
const int32_t *sky_band_join_final (const SkyBandJoin *j);
void sky_band_join_free (SkyBandJoin *j);

/* The lesson's four steps on an image read from src a band of tile_rows
 * rows at a time, for an image whose pixels, mask and labels do not fit in
 * memory together; res gets the statistics, threshold, sources and
 * catalogue of sky_cpu_run on the whole image with the same parameters,
 * bit for bit, but no mask or label image. The clip reads the image
 * several times (sky_cpu_clip_source); the segment step reads it, cuts
 * each band into a mask and labels it alone, and joins the labels of
 * neighbouring bands along their common edge (union-find over every
 * band's labels, roots numbered in order, which is raster order of first
 * pixels); the measure step reads it again, labels each band the same way
 * and measures its rows with the final labels (sky_measure_stream_*). The
 * times of the reads are in the steps that make them. *ninf (if not NULL)
 * gets the infinities read. */
int sky_cpu_run_tiled (const SkyPixelSource *src, const SkyParams *params, int64_t tile_rows,
                       SkyResult *res, int64_t *ninf);

/* Runs the four steps, timing each, into res, which must be zeroed or hold
 * an earlier result: its mask and label buffers are reused when the image
 * has the same size. The caller frees it with sky_result_clear. */
int sky_cpu_run (const SkyImage *img, const SkyParams *params, SkyResult *res);

/* The pipeline with detection and measurement apart: clip and segment run
 * on detect (a smoothed copy of img, say: a matched filter), label on its
 * mask, and measure on img, so fluxes and centroids are the image's own.
 * Both images must be the same size. sky_cpu_run (img) is detect = img. */
int sky_cpu_run_detect (const SkyImage *img, const SkyImage *detect, const SkyParams *params,
                        SkyResult *res);

/* A smoothed copy of img for detection: convolved ("same" mode) with k
 * scaled to unit sum, blank pixels counted as 0 and kept blank. out is
 * allocated; SKY_ERR_ARGUMENT if k sums to 0. */
int sky_cpu_smooth (const SkyImage *img, const SkyKernel *k, int nthreads, SkyImage *out);


/* 2D convolution of an nx x ny image (row-major) with zero fill, as
 * scipy.signal.convolve2d in the given mode (sky_convolve_geometry gives the
 * output's size; out must hold it). Accumulates in the element type. *used,
 * if not NULL, says which path ran. SKY_ERR_ARGUMENT for a separable path
 * asked of a kernel of higher rank. */
int sky_cpu_convolve2d_f32 (const float *in, int64_t nx, int64_t ny, const SkyKernel *kernel,
                            SkyConvolveMode mode, SkyConvolvePath path, int nthreads,
                            float *out, SkyConvolvePath *used);
int sky_cpu_convolve2d_f64 (const double *in, int64_t nx, int64_t ny, const SkyKernel *kernel,
                            SkyConvolveMode mode, SkyConvolvePath path, int nthreads,
                            double *out, SkyConvolvePath *used);

/* 1D full convolution as np.convolve: out (n + m - 1 values)[j] =
 * sum over k of a[j - k] * v[k]. */
int sky_cpu_convolve1d_f32 (const float *a, int64_t n, const float *v, int64_t m, int nthreads,
                            float *out);
int sky_cpu_convolve1d_f64 (const double *a, int64_t n, const double *v, int64_t m,
                            int nthreads, double *out);

/* ------------------------------------------------------- the local method */

/* Per island k (1..n; index 0 unused): its peak in rms, pixel count,
 * box (xmin, xmax, ymin, ymax at 4 k) and first pixel in raster order. */
typedef struct SkyIslands {
  int64_t n;
  float *peak;
  int64_t *area;
  int32_t *box;
  int64_t *first;
} SkyIslands;

void sky_islands_clear (SkyIslands *islands);

/* The detection image where a step reads it: stored whole (snr), or, where
 * it is the image over the maps unfiltered, made from them where asked:
 * (img - background) / rms, NaN where rms <= 0, the same floats. */
typedef struct SkySnrSource {
  int64_t nx;
  const float *snr;                  /* nx * ny, or NULL */
  const SkyImage *img;               /* with maps, where snr is NULL */
  const struct SkyLocalMaps *maps;
} SkySnrSource;

/* Columns x0 .. x1 - 1 of row y of the detection image into out; buf holds
 * 2 (x1 - x0) floats of scratch. */
void sky_snr_row (const SkySnrSource *src, int64_t y, int64_t x0, int64_t x1, float *buf,
                  float *out);

/* Seed-and-flood islands of a detection image in units of its rms (snr,
 * nx * ny, NaN where there is none): the connected pixels (4 or 8) with
 * snr > flood_sigma that hold a pixel with snr > seed_sigma and at least
 * min_area pixels. mask gets 1 on island pixels; labels 1..nislands in
 * raster order of each island's first pixel, 0 elsewhere; islands (if
 * not NULL) their measures, cleared with sky_islands_clear. */
int sky_cpu_flood (const float *snr, int64_t nx, int64_t ny, double seed_sigma, double flood_sigma,
                   int64_t min_area, int connectivity, int nthreads, uint8_t *mask,
                   int32_t *labels, int64_t *nislands, SkyIslands *islands);
/* The same on a detection image made where it is read. */
int sky_cpu_flood_source (const SkySnrSource *src, int64_t nx, int64_t ny, double seed_sigma,
                          double flood_sigma, int64_t min_area, int connectivity, int nthreads,
                          uint8_t *mask, int32_t *labels, int64_t *nislands,
                          SkyIslands *islands);

/* Multi-threshold deblending of the islands in labels (as sky_cpu_flood
 * gave them, with their measures) on the detection image snr: params->deblend_nthresh levels spaced exponentially
 * from params->flood_sigma to each island's peak; a split needs two parts
 * each with more than params->deblend_mincont of the island's summed snr
 * and params->min_area pixels, each rising params->deblend_sigma above
 * the level. Labels are renumbered in raster order of
 * first pixels, *nlabels becomes the source count, *nsplit the islands
 * that split, and *deblended (allocated, *nlabels + 1 bytes, by label) 1
 * for each source that came from a split. nthresh 0 or 1 splits nothing. */
int sky_cpu_deblend (const float *snr, int64_t nx, int64_t ny, const SkyParams *params,
                     const SkyIslands *islands, int32_t *labels, int64_t *nlabels,
                     int64_t *nsplit, uint8_t **deblended);
/* The same on a detection image made where it is read. */
int sky_cpu_deblend_source (const SkySnrSource *src, int64_t nx, int64_t ny,
                            const SkyParams *params, const SkyIslands *islands, int32_t *labels,
                            int64_t *nlabels, int64_t *nsplit, uint8_t **deblended);

/* Fills the local method's columns of cat (measured already by
 * sky_cpu_measure_rows on residual = img - background, the maps from
 * maps): background and rms at
 * the peak, peak_err (the rms there), sum_err (the root of the summed rms^2
 * over the source: exact for uncorrelated noise), the windowed centroid
 * (SExtractor's XWIN: a Gaussian window from the peak of window_sigma
 * pixels, or where that is 0 from the area of the pixels above 0.7 of the
 * peak that connect to it: the source's compact core) and the
 * SKY_FLAG_* bits (img gives the blanks, snr and seed_sigma the
 * truncation; snr NULL: (img - background) / rms); deblended (by label)
 * may be NULL. */
struct SkyLocalMaps;
int sky_cpu_measure_local (const SkyImage *img, const struct SkyLocalMaps *maps,
                           const float *snr, const int32_t *labels, double seed_sigma,
                           double window_sigma, const uint8_t *deblended, SkyCatalogue *cat,
                           int nthreads);

/* The local method's steps one by one (the runner calls them as entries
 * of its step list; sky_cpu_run_local below runs them in a row). What a
 * step leaves for the next besides res: */
typedef struct SkyLocalState {
  /* The background when computed here: its mesh, interpolated where a
   * step needs it (res->background and res->rms stay NULL: the whole maps
   * are 8 bytes a pixel that no step needs). */
  struct SkyBackgroundMesh *mesh;
  struct SkyBackgroundInterp *interp;
  SkyImage residual;    /* image - background, for the matched filter only */
  float *snr;           /* the filtered detection image in units of its
                         * noise; NULL unfiltered: made where it is read */
  SkyIslands islands;   /* from the flood, for the deblending */
  uint8_t *deblended;   /* by label: split by the deblending */
} SkyLocalState;

void sky_local_state_clear (SkyLocalState *ls);

/* background: ls->mesh and ls->interp, unless res->background and res->rms
 * are set already (given maps). */
int sky_cpu_local_background (const SkyImage *img, const SkyParams *params, SkyResult *res,
                              SkyLocalState *ls);
/* detect: with a filter, ls->snr (res->noise_scale measured, and
 * ls->residual its input); without, nothing to store: the later steps
 * make the snr from the image and the maps where they read it. */
int sky_cpu_local_detect (const SkyImage *img, const SkyParams *params, const SkyKernel *filter,
                          SkyResult *res, SkyLocalState *ls);
/* flood: res->mask, res->labels (allocated by the caller), res->nislands,
 * ls->islands. */
int sky_cpu_local_flood (const SkyImage *img, const SkyParams *params, SkyResult *res,
                         SkyLocalState *ls);
/* deblend: res->labels renumbered, res->nsources, res->ndeblended. */
int sky_cpu_local_deblend (const SkyImage *img, const SkyParams *params, SkyResult *res,
                           SkyLocalState *ls);
/* measure: res->catalogue on the residual, with the local columns. */
int sky_cpu_local_measure (const SkyImage *img, const SkyParams *params, SkyResult *res,
                           const SkyLocalState *ls);

/* The local method on img against background and rms maps (nx * ny each,
 * malloc'ed; res owns them from the call on, whatever it returns; both
 * NULL: the background mesh is computed and the whole maps made from it
 * for the caller, timed as times.background; the runner's steps make only
 * the mesh and interpolate it where they need it): the
 * detection image is img - background, convolved with filter when it is
 * not NULL (a matched filter: its noise over the map's is measured as the
 * clipped sigma of filtered / rms, and res->noise_scale keeps it), divided
 * by rms; then islands, deblending, and measurement on img - background.
 * Each step is a per-pixel map, the labelling, or a per-island or
 * per-source reduction (see each), the shapes a tiled run with halos needs.
 * res is cleared first; its times are by step (SKY_STEP_BACKGROUND...).
 * The caller frees res with sky_result_clear. */
int sky_cpu_run_local (const SkyImage *img, const SkyParams *params, const SkyKernel *filter,
                       float *background, float *rms, SkyResult *res);
/* ------------------------------------------------------------- background */

/* The background and its rms on a mesh, SExtractor's way as SEP implements
 * it (sep.Background with bw = bh = box, fw = fh = filter, fthresh 0):
 * boxes of box x box pixels from the top-left corner (the last column and
 * row of boxes take what is left), each box clipped at 2 sigma around its
 * mean, its pixels binned into a histogram that is clipped at 3 sigma around
 * its median until sigma settles, its background the mode estimate
 * 2.5 median - 1.5 mean (the median where |mean - median| >= 0.3 sigma: a
 * crowded box) and its rms the clipped sigma. A box with under half of its
 * pixels non-blank takes the mean of its nearest usable boxes. The mesh is
 * median-filtered over filter x filter boxes and interpolated to every pixel
 * with natural bicubic splines through the box centres. Blank pixels take no
 * part anywhere, and every pixel of the maps is finite. Like SEP's, the
 * rms map can ring below zero between crowded boxes (the spline overshoots
 * where neighbouring boxes differ a lot): a step that divides by it must
 * guard against rms <= 0.
 *
 * Work in tiles: a box's statistics depend only on its own pixels
 * (sky_cpu_background_box_row, one row of boxes at a time), the filter and
 * the splines only on the small mesh (sky_background_mesh_finish), and any
 * band of rows of the maps only on the finished mesh
 * (sky_cpu_background_rows), so a tiled run is the whole-image run. */
typedef struct SkyBackgroundMesh {
  int64_t nx, ny;             /* the image, in pixels */
  int box;                    /* box side in pixels */
  int filter;                 /* median filter side in boxes */
  int64_t nbx, nby;           /* boxes across and down */
  float *back, *rms;          /* nbx * nby, row-major; after the filter once finished */
  float *dback, *drms;        /* the splines' second derivatives down each column */
  int64_t nbad;               /* boxes filled in from their neighbours */
  float global_back;          /* median of the finished mesh (SEP's globalback) */
  float global_rms;           /* median of its rms (SEP's globalrms) */
} SkyBackgroundMesh;

/* Allocates an unfinished mesh for an nx x ny image (params->bkg_box,
 * params->bkg_filter); clear it with sky_background_mesh_clear. */
int sky_background_mesh_init (SkyBackgroundMesh *mesh, int64_t nx, int64_t ny,
                              const SkyParams *params);
void sky_background_mesh_clear (SkyBackgroundMesh *mesh);

/* The raw statistics of box row by (0-based) from its pixels: rows holds
 * the image rows by * box .. by * box + h - 1 (h = box, fewer for the last
 * row of boxes), mesh->nx floats each, NaN where blank. Fills row by of
 * mesh->back and mesh->rms, -1e30 for a box with under half its pixels
 * usable. Any number of rows may run at the same time. */
void sky_cpu_background_box_row (SkyBackgroundMesh *mesh, int64_t by, const float *rows);

/* Fills unusable boxes from their nearest neighbours, median-filters the
 * mesh (rows of boxes on nthreads threads), takes the global figures and
 * the splines' derivatives. */
int sky_background_mesh_finish (SkyBackgroundMesh *mesh, int nthreads);

/* The whole mesh of img: every box row on nthreads threads, then finished. */
int sky_cpu_background_mesh (const SkyImage *img, const SkyParams *params, int nthreads,
                             SkyBackgroundMesh *mesh);

/* Rows y0 .. y0 + nrows - 1 of the maps from a finished mesh, into
 * background and rms (nrows * mesh->nx floats each; either may be NULL). */
int sky_cpu_background_rows (const SkyBackgroundMesh *mesh, int64_t y0, int64_t nrows,
                             int nthreads, float *background, float *rms);

/* A finished mesh's maps at any pixels without the whole maps: where each
 * column falls between the nodes, and the spline along each row (values
 * and second derivatives at the nodes, 16 bytes a box a row), worked out
 * once; each pixel asked for then costs one cubic. */
typedef struct SkyBackgroundInterp {
  const SkyBackgroundMesh *mesh;  /* borrowed; outlives the interpolator */
  int64_t *start;                 /* nbx + 1: first column of each interval */
  float *dx, *cdx;                /* per column: offset from its left node, 1 - offset */
  float *ax, *bx;                 /* cdx^2 - 1 and dx^2 - 1 */
  float *nodes;                   /* per row: the spline along it, 4 * nbx floats */
} SkyBackgroundInterp;

int sky_background_interp_init (SkyBackgroundInterp *bi, const SkyBackgroundMesh *mesh);
void sky_background_interp_clear (SkyBackgroundInterp *bi);

/* Columns x0 .. x1 - 1 of row y of the maps into background and rms
 * (x1 - x0 floats each; either may be NULL), the values
 * sky_cpu_background_rows gives there to the bit. Any number of threads
 * at once. */
void sky_background_interp_row (const SkyBackgroundInterp *bi, int64_t y, int64_t x0,
                                int64_t x1, float *background, float *rms);

/* The local method's background and rms where a step needs them: the
 * whole maps (given), or else a finished mesh's interpolator. Either way a
 * window of them holds the same values to the bit. */
typedef struct SkyLocalMaps {
  int64_t nx;
  const float *background, *rms;    /* nx * ny each, or NULL */
  const SkyBackgroundInterp *interp; /* where the maps are NULL */
} SkyLocalMaps;

SkyLocalMaps sky_local_maps (const SkyResult *res, const SkyLocalState *ls);
/* Columns x0 .. x1 - 1 of rows y0 .. y1 - 1 into background and rms
 * ((x1 - x0) * (y1 - y0) floats each, row-major; either may be NULL). */
void sky_local_maps_window (const SkyLocalMaps *maps, int64_t x0, int64_t y0, int64_t x1,
                            int64_t y1, float *background, float *rms);

/* The background and rms maps of img, nx * ny floats each, caller-allocated
 * (either may be NULL). nthreads 0: every online core. */
int sky_cpu_background (const SkyImage *img, const SkyParams *params, int nthreads,
                        float *background, float *rms);

/* The CPU's part of the lesson's convolution demo (sky-core.h) on d, made
 * by sky_convolution_demo_init(): the 2D convolution on path (direct asks
 * for auto here, as the direct path always runs second), then on the
 * direct path, then the 1D convolution, each repeat times (the best time
 * kept); the 2D outputs are compared, and the 1D output with one thread's.
 * nthreads 0: every core. */
int sky_cpu_convolution_demo (SkyConvolutionDemo *d, SkyConvolvePath path, int repeat,
                              int nthreads);

#ifdef __cplusplus
}
#endif

#endif /* SKY_CPU_H */

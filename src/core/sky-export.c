/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A catalogue ready to export: sky positions through the image's WCS,
 * flux densities through its beam, and the columns and provenance every
 * format shares (sky-export-private.h). */
#include "sky-core.h"
#include "sky-export-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef SKYSIFT_VERSION
#define SKYSIFT_VERSION "unknown"
#endif

const char *
sky_version (void)
{
  return SKYSIFT_VERSION;
}

static const char *
image_name (const SkyImage *img)
{
  return img->path != NULL ? img->path : "the image";
}

/* The CPU's model name from /proc/cpuinfo, and the threads the run used. */
static void
describe_cpu (char *buf, size_t size, int nthreads)
{
  char line[256], model[160] = "";
  FILE *fp = fopen ("/proc/cpuinfo", "r");

  while (fp != NULL && fgets (line, sizeof line, fp) != NULL)
    {
      char *colon = strchr (line, ':');
      if (strncmp (line, "model name", 10) == 0 && colon != NULL)
        {
          colon += 1 + strspn (colon + 1, " \t");
          colon[strcspn (colon, "\n")] = '\0';
          snprintf (model, sizeof model, "%s", colon);
          break;
        }
    }
  if (fp != NULL)
    fclose (fp);
  if (nthreads <= 0)
    nthreads = sky_default_threads ();
  snprintf (buf, size, "%s (%d thread%s)", model[0] ? model : "CPU", nthreads,
            nthreads == 1 ? "" : "s");
}

/* Jy per unit of a per-beam image unit (as sky_unit_normalise writes it),
 * or 0 when the unit is not a flux density per beam. */
static double
jy_per_beam_scale (const char *unit)
{
  if (strcmp (unit, "Jy/beam") == 0)
    return 1.0;
  if (strcmp (unit, "mJy/beam") == 0)
    return 1e-3;
  if (strcmp (unit, "uJy/beam") == 0)
    return 1e-6;
  return 0.0;
}

static int
convert_positions (SkyExport *ex, const SkyCatalogue *cat)
{
  size_t count = cat->n > 0 ? (size_t) cat->n : 1;
  int64_t good;

  ex->lng = malloc (count * sizeof (double));
  ex->lat = malloc (count * sizeof (double));
  if (ex->lng == NULL || ex->lat == NULL)
    return sky_fail (SKY_ERR_MEMORY, "%s: no memory for the sky positions",
                     image_name (ex->image));
  good = sky_wcs_pix2world_n (ex->wcs, cat->n, cat->x, cat->y, ex->lng, ex->lat);
  if (good < cat->n)
    snprintf (ex->sky_note, sizeof ex->sky_note,
              "%s: %lld of %lld centroids lie where the %s projection has no world "
              "position; their %s and %s are left empty", image_name (ex->image),
              (long long) (cat->n - good), (long long) cat->n, sky_wcs_projection (ex->wcs),
              sky_wcs_lng_name (ex->wcs), sky_wcs_lat_name (ex->wcs));
  return SKY_OK;
}

/* int_flux = sum / beam area in pixels, where the unit, the beam and the
 * pixel scale all allow it; otherwise flux_note says which is missing. */
static int
convert_fluxes (SkyExport *ex, const SkyCatalogue *cat)
{
  const SkyImage *img = ex->image;
  double scale = jy_per_beam_scale (ex->unit);
  double pixel_area = ex->wcs != NULL ? sky_wcs_pixel_area (ex->wcs) : NAN;

  if (img->has_beam && isfinite (pixel_area))
    ex->beam_area = M_PI * img->bmaj * img->bmin / (4.0 * log (2.0)) / pixel_area;

  if (scale == 0)
    {
      if (img->bunit[0] == '\0')
        snprintf (ex->flux_note, sizeof ex->flux_note,
                  "%s has no BUNIT, so its pixels are not known to be Jy/beam: "
                  "int_flux is left empty", image_name (img));
      else
        snprintf (ex->flux_note, sizeof ex->flux_note,
                  "%s is in %s, not a flux density per beam (Jy/beam): int_flux is left "
                  "empty", image_name (img), img->bunit);
      return SKY_OK;
    }
  if (!img->has_beam)
    {
      snprintf (ex->flux_note, sizeof ex->flux_note,
                "%s has no beam (BMAJ, BMIN) in its header: int_flux is left empty",
                image_name (img));
      return SKY_OK;
    }
  if (!isfinite (ex->beam_area))
    {
      snprintf (ex->flux_note, sizeof ex->flux_note,
                "%s has no celestial pixel scale (CDELT or CD with a sky WCS): the beam "
                "area in pixels is unknown and int_flux is left empty", image_name (img));
      return SKY_OK;
    }

  ex->int_flux = malloc ((cat->n > 0 ? (size_t) cat->n : 1) * sizeof (double));
  if (ex->int_flux == NULL)
    return sky_fail (SKY_ERR_MEMORY, "%s: no memory for the fluxes", image_name (img));
  for (int64_t i = 0; i < cat->n; i++)
    ex->int_flux[i] = cat->sum[i] / ex->beam_area * scale;
  return SKY_OK;
}

int
sky_export_init (SkyExport *ex, const SkyRunInfo *info, const SkyResult *res)
{
  int ret;

  memset (ex, 0, sizeof *ex);
  ex->image = info->image;
  ex->params = info->params;
  ex->result = res;
  ex->backend = info->backend;
  ex->smooth = info->smooth;
  ex->beam_area = NAN;
  if (ex->image == NULL || ex->params == NULL)
    {
      ex->image = NULL;
      return SKY_OK; /* the pixel columns only */
    }
  if (info->backend != NULL && strcmp (info->backend, "cpu") == 0)
    describe_cpu (ex->device, sizeof ex->device, info->params->nthreads);
  if (!sky_unit_normalise (ex->image->bunit, ex->unit, sizeof ex->unit))
    snprintf (ex->unit_note, sizeof ex->unit_note,
              "%s: BUNIT '%s' is not a unit astropy or VOUnit can read, so the columns in "
              "the image unit carry none", image_name (ex->image), ex->image->bunit);
  else if (strcmp (ex->unit, ex->image->bunit) != 0 && ex->unit[0])
    snprintf (ex->unit_note, sizeof ex->unit_note, "BUNIT '%s' is written %s, as astropy "
              "and VOUnit spell it", ex->image->bunit, ex->unit);

  ret = sky_wcs_new (ex->image, &ex->wcs);
  if (ret == SKY_ERR_MEMORY)
    return ret;
  if (ret != SKY_OK)
    snprintf (ex->sky_note, sizeof ex->sky_note, "%s", sky_last_error ());
  else if ((ret = convert_positions (ex, &res->catalogue)) != SKY_OK)
    return ret;
  return convert_fluxes (ex, &res->catalogue);
}

void
sky_export_clear (SkyExport *ex)
{
  sky_wcs_free (ex->wcs);
  free (ex->lng);
  free (ex->lat);
  free (ex->int_flux);
  memset (ex, 0, sizeof *ex);
}

/* ------------------------------------------------------------- columns */

static void
add_column (SkyColumn *cols, int *n, SkyColumnId id, const char *name, SkyValueType type,
            const char *unit, const char *ucd, const char *description)
{
  SkyColumn *c = &cols[(*n)++];

  c->id = id;
  snprintf (c->name, sizeof c->name, "%s", name);
  c->type = type;
  snprintf (c->unit, sizeof c->unit, "%s", unit != NULL ? unit : "");
  c->ucd = ucd;
  snprintf (c->description, sizeof c->description, "%s", description);
}

/* UCDs of each system's coordinates. */
static void
position_ucds (SkyCoordSystem system, const char **lng, const char **lat)
{
  switch (system)
    {
    case SKY_COORD_EQUATORIAL:
      *lng = "pos.eq.ra;meta.main", *lat = "pos.eq.dec;meta.main";
      break;
    case SKY_COORD_GALACTIC:
      *lng = "pos.galactic.lon;meta.main", *lat = "pos.galactic.lat;meta.main";
      break;
    case SKY_COORD_ECLIPTIC:
      *lng = "pos.ecliptic.lon;meta.main", *lat = "pos.ecliptic.lat;meta.main";
      break;
    case SKY_COORD_SUPERGALACTIC:
      *lng = "pos.supergalactic.lon;meta.main", *lat = "pos.supergalactic.lat;meta.main";
      break;
    case SKY_COORD_OTHER:
    default:
      *lng = "pos.bodyrc.lon", *lat = "pos.bodyrc.lat";
      break;
    }
}

/* "FK5 J2000", "ICRS", "galactic". */
static void
frame_text (const SkyWcs *wcs, char *buf, size_t size)
{
  double eq = sky_wcs_equinox (wcs);

  if (sky_wcs_system (wcs) == SKY_COORD_EQUATORIAL && isfinite (eq))
    snprintf (buf, size, "%s %c%g", sky_wcs_frame (wcs),
              strncmp (sky_wcs_frame (wcs), "FK4", 3) == 0 ? 'B' : 'J', eq);
  else if (sky_wcs_system (wcs) == SKY_COORD_ECLIPTIC && isfinite (eq))
    snprintf (buf, size, "ecliptic J%g", eq);
  else
    snprintf (buf, size, "%s", sky_wcs_frame (wcs));
}

/* UCDs of the columns in the image unit, by what that unit says the
 * pixels hold. A sum of per-beam (or per-solid-angle) values is that
 * quantity not yet divided by the beam (or the pixel's solid angle):
 * stat.uncalib says so. An image whose unit says nothing gets stat.value:
 * no more is known. */
typedef struct {
  const char *sum, *peak, *rms, *sum_err, *peak_err;
} PixelUcds;

static PixelUcds
pixel_value_ucds (const char *unit)
{
  static const PixelUcds per_beam = { "phot.flux.density;stat.uncalib",
                                      "phot.flux.density;stat.max",
                                      "stat.stdev;phot.flux.density",
                                      "stat.error;phot.flux.density;stat.uncalib",
                                      "stat.error;phot.flux.density" };
  static const PixelUcds density_sb = { "phot.flux.density.sb;stat.uncalib",
                                        "phot.flux.density.sb;stat.max",
                                        "stat.stdev;phot.flux.density.sb",
                                        "stat.error;phot.flux.density.sb;stat.uncalib",
                                        "stat.error;phot.flux.density.sb" };
  static const PixelUcds flux_sb = { "phot.flux.sb;stat.uncalib", "phot.flux.sb;stat.max",
                                     "stat.stdev;phot.flux.sb",
                                     "stat.error;phot.flux.sb;stat.uncalib",
                                     "stat.error;phot.flux.sb" };
  static const PixelUcds counts = { "phot.count", "phot.count;stat.max",
                                    "stat.stdev;phot.count", "stat.error;phot.count",
                                    "stat.error;phot.count" };
  static const PixelUcds other = { "stat.value", "stat.value;stat.max", "stat.stdev",
                                   "stat.error", "stat.error" };
  const char *slash = strchr (unit, '/');
  size_t len = strlen (unit);

  if (len > 5 && strcmp (unit + len - 5, "/beam") == 0 && strstr (unit, "Jy") != NULL)
    return per_beam;
  if (slash != NULL && (strstr (slash, "sr") != NULL || strstr (slash, "arcsec2") != NULL))
    return strstr (unit, "Jy") != NULL ? density_sb : flux_sb;
  if (strcmp (unit, "count") == 0 || strcmp (unit, "adu") == 0 || strcmp (unit, "photon") == 0)
    return counts;
  return other;
}

/* The local method's noise columns: the same names, its own meaning. */
static int
local_columns (SkyColumn *cols, int n, const char *unit, PixelUcds ucds)
{
  add_column (cols, &n, SKY_COL_LOCAL_RMS, "local_rms", SKY_TYPE_DOUBLE, unit, ucds.rms,
              "Background noise: the rms map at the peak pixel (local method)");
  add_column (cols, &n, SKY_COL_SNR, "snr", SKY_TYPE_DOUBLE, NULL, "stat.snr",
              "Signal to noise: peak_flux (background subtracted) / local_rms");
  add_column (cols, &n, SKY_COL_BACKGROUND, "background", SKY_TYPE_DOUBLE, unit,
              "instr.skyLevel",
              "The background map at the peak pixel, subtracted from every measure");
  add_column (cols, &n, SKY_COL_SUM_ERR, "sum_flux_err", SKY_TYPE_DOUBLE, unit,
              ucds.sum_err,
              "Error of sum_flux: root of the summed rms map squared over the source's pixels "
              "(uncorrelated noise; beam-correlated noise makes it larger)");
  add_column (cols, &n, SKY_COL_PEAK_ERR, "peak_flux_err", SKY_TYPE_DOUBLE, unit,
              ucds.peak_err, "Error of peak_flux: the rms map at the peak");
  add_column (cols, &n, SKY_COL_X_WIN, "x_win", SKY_TYPE_DOUBLE, "pix",
              "pos.cartesian.x;instr.pixel",
              "Windowed centroid (SExtractor's XWIN), 0-based column: the position of the "
              "source's compact part around its peak");
  add_column (cols, &n, SKY_COL_Y_WIN, "y_win", SKY_TYPE_DOUBLE, "pix",
              "pos.cartesian.y;instr.pixel", "Windowed centroid, 0-based row");
  add_column (cols, &n, SKY_COL_FLAGS, "flags", SKY_TYPE_INT, NULL, "meta.code",
              "Bits: 1 a pixel on the image edge, 2 next to blank pixels, 4 split from a "
              "larger island by deblending, 8 cut by the edge or blanks above the seed level");
  return n;
}

int
sky_export_columns (const SkyExport *ex, SkyColumn *cols)
{
  const char *unit = ex->unit[0] ? ex->unit : NULL;
  PixelUcds ucds = pixel_value_ucds (ex->unit);
  int n = 0;

  add_column (cols, &n, SKY_COL_SOURCE_ID, "source_id", SKY_TYPE_INT, NULL, "meta.id;meta.main",
              "Label number: sources are numbered in raster order of their first pixel, "
              "as scipy.ndimage.label numbers them");
  add_column (cols, &n, SKY_COL_X, "x_centroid", SKY_TYPE_DOUBLE, "pix",
              "pos.cartesian.x;instr.pixel",
              "Intensity-weighted centroid, 0-based column (FITS pixel x - 1)");
  add_column (cols, &n, SKY_COL_Y, "y_centroid", SKY_TYPE_DOUBLE, "pix",
              "pos.cartesian.y;instr.pixel",
              "Intensity-weighted centroid, 0-based row (FITS pixel y - 1)");
  add_column (cols, &n, SKY_COL_SUM, "sum_flux", SKY_TYPE_DOUBLE, unit, ucds.sum,
              "Sum of the source's pixel values, in the image unit (the lesson's "
              "integrated flux, not divided by the beam area)");
  add_column (cols, &n, SKY_COL_NPIX, "npix", SKY_TYPE_INT, NULL, "meta.number;instr.pixel",
              "Number of pixels in the source");
  add_column (cols, &n, SKY_COL_PEAK, "peak_flux", SKY_TYPE_DOUBLE, unit, ucds.peak,
              "Brightest pixel value of the source");
  add_column (cols, &n, SKY_COL_PEAK_X, "peak_x", SKY_TYPE_INT, "pix",
              "pos.cartesian.x;instr.pixel;stat.max",
              "0-based column of the brightest pixel (the first in raster order on ties)");
  add_column (cols, &n, SKY_COL_PEAK_Y, "peak_y", SKY_TYPE_INT, "pix",
              "pos.cartesian.y;instr.pixel;stat.max", "0-based row of the brightest pixel");
  add_column (cols, &n, SKY_COL_XMIN, "xmin", SKY_TYPE_INT, "pix",
              "pos.cartesian.x;instr.pixel;stat.min", "Bounding box: first column, 0-based");
  add_column (cols, &n, SKY_COL_XMAX, "xmax", SKY_TYPE_INT, "pix",
              "pos.cartesian.x;instr.pixel;stat.max",
              "Bounding box: last column, 0-based, inclusive");
  add_column (cols, &n, SKY_COL_YMIN, "ymin", SKY_TYPE_INT, "pix",
              "pos.cartesian.y;instr.pixel;stat.min", "Bounding box: first row, 0-based");
  add_column (cols, &n, SKY_COL_YMAX, "ymax", SKY_TYPE_INT, "pix",
              "pos.cartesian.y;instr.pixel;stat.max",
              "Bounding box: last row, 0-based, inclusive");
  if (ex->image == NULL)
    return n;

  if (ex->wcs != NULL)
    {
      SkyCoordSystem system = sky_wcs_system (ex->wcs);
      const char *lng_ucd, *lat_ucd;
      char frame[64], text[200];

      position_ucds (system, &lng_ucd, &lat_ucd);
      frame_text (ex->wcs, frame, sizeof frame);
      if (system == SKY_COORD_EQUATORIAL)
        {
          snprintf (text, sizeof text, "Right ascension of the centroid (%s)", frame);
          add_column (cols, &n, SKY_COL_LNG, "ra", SKY_TYPE_DOUBLE, "deg", lng_ucd, text);
          snprintf (text, sizeof text, "Declination of the centroid (%s)", frame);
          add_column (cols, &n, SKY_COL_LAT, "dec", SKY_TYPE_DOUBLE, "deg", lat_ucd, text);
          snprintf (text, sizeof text, "Right ascension of the centroid (%s), HH:MM:SS.ss",
                    frame);
          add_column (cols, &n, SKY_COL_LNG_STR, "ra_str", SKY_TYPE_STRING, NULL, "pos.eq.ra",
                      text);
          snprintf (text, sizeof text, "Declination of the centroid (%s), +DD:MM:SS.s", frame);
          add_column (cols, &n, SKY_COL_LAT_STR, "dec_str", SKY_TYPE_STRING, NULL,
                      "pos.eq.dec", text);
        }
      else
        {
          static const char *const kind[] = { "", "Galactic", "Ecliptic", "Supergalactic", "" };
          const char *k = kind[system];
          snprintf (text, sizeof text, "%s%slongitude of the centroid (%s, %s)", k, k[0] ? " " : "",
                    sky_wcs_ctype (ex->wcs, 0), frame);
          add_column (cols, &n, SKY_COL_LNG, sky_wcs_lng_name (ex->wcs), SKY_TYPE_DOUBLE, "deg",
                      lng_ucd, text);
          snprintf (text, sizeof text, "%s%slatitude of the centroid (%s, %s)", k, k[0] ? " " : "",
                    sky_wcs_ctype (ex->wcs, 1), frame);
          add_column (cols, &n, SKY_COL_LAT, sky_wcs_lat_name (ex->wcs), SKY_TYPE_DOUBLE, "deg",
                      lat_ucd, text);
        }
    }

  add_column (cols, &n, SKY_COL_INT_FLUX, "int_flux", SKY_TYPE_DOUBLE, "Jy", "phot.flux.density",
              "Integrated flux density: sum_flux / beam area in pixels, the beam area being "
              "pi BMAJ BMIN / (4 ln 2) / pixel area; empty without a beam");
  if (ex->result->method == SKY_METHOD_LOCAL)
    return local_columns (cols, n, unit, ucds);
  add_column (cols, &n, SKY_COL_LOCAL_RMS, "local_rms", SKY_TYPE_DOUBLE, unit, ucds.rms,
              "Background noise: the kappa-sigma clipped sigma of the image");
  add_column (cols, &n, SKY_COL_SNR, "snr", SKY_TYPE_DOUBLE, NULL, "stat.snr",
              "Signal to noise: peak_flux / local_rms");
  return n;
}

int
sky_export_cell (const SkyExport *ex, const SkyColumn *col, int64_t i, char *buf, size_t size)
{
  const SkyCatalogue *cat = &ex->result->catalogue;
  double sigma = ex->result->stats.sigma, v;

  /* The local method's noise is the rms map at each source's peak. */
  if (cat->rms != NULL)
    sigma = cat->rms[i];

  switch (col->id)
    {
    case SKY_COL_SOURCE_ID: snprintf (buf, size, "%lld", (long long) (i + 1)); return 1;
    case SKY_COL_X: snprintf (buf, size, "%.6f", cat->x[i]); return 1;
    case SKY_COL_Y: snprintf (buf, size, "%.6f", cat->y[i]); return 1;
    case SKY_COL_SUM: snprintf (buf, size, "%.10g", cat->sum[i]); return 1;
    case SKY_COL_NPIX: snprintf (buf, size, "%lld", (long long) cat->npix[i]); return 1;
    case SKY_COL_PEAK: snprintf (buf, size, "%.9g", (double) cat->peak[i]); return 1;
    case SKY_COL_PEAK_X: snprintf (buf, size, "%d", cat->peak_x[i]); return 1;
    case SKY_COL_PEAK_Y: snprintf (buf, size, "%d", cat->peak_y[i]); return 1;
    case SKY_COL_XMIN: snprintf (buf, size, "%d", cat->xmin[i]); return 1;
    case SKY_COL_XMAX: snprintf (buf, size, "%d", cat->xmax[i]); return 1;
    case SKY_COL_YMIN: snprintf (buf, size, "%d", cat->ymin[i]); return 1;
    case SKY_COL_YMAX: snprintf (buf, size, "%d", cat->ymax[i]); return 1;
    case SKY_COL_LNG:
    case SKY_COL_LAT:
      /* 1e-9 degree is 3.6 microarcseconds. */
      v = col->id == SKY_COL_LNG ? ex->lng[i] : ex->lat[i];
      if (!isfinite (v))
        break;
      snprintf (buf, size, "%.9f", v);
      return 1;
    case SKY_COL_LNG_STR:
      return sky_format_ra (ex->lng[i], buf, size)[0] != '\0';
    case SKY_COL_LAT_STR:
      return sky_format_dec (ex->lat[i], buf, size)[0] != '\0';
    case SKY_COL_INT_FLUX:
      if (ex->int_flux == NULL || !isfinite (ex->int_flux[i]))
        break;
      snprintf (buf, size, "%.10g", ex->int_flux[i]);
      return 1;
    case SKY_COL_LOCAL_RMS:
      if (!(sigma > 0))
        break;
      snprintf (buf, size, "%.9g", sigma);
      return 1;
    case SKY_COL_SNR:
      if (!(sigma > 0))
        break;
      snprintf (buf, size, "%.6g", cat->peak[i] / sigma);
      return 1;
    case SKY_COL_BACKGROUND:
      if (cat->background == NULL || !isfinite (cat->background[i]))
        break;
      snprintf (buf, size, "%.9g", (double) cat->background[i]);
      return 1;
    case SKY_COL_SUM_ERR:
      if (cat->sum_err == NULL || !isfinite (cat->sum_err[i]))
        break;
      snprintf (buf, size, "%.6g", cat->sum_err[i]);
      return 1;
    case SKY_COL_PEAK_ERR:
      if (cat->peak_err == NULL || !isfinite (cat->peak_err[i]))
        break;
      snprintf (buf, size, "%.6g", cat->peak_err[i]);
      return 1;
    case SKY_COL_X_WIN:
    case SKY_COL_Y_WIN:
      if (cat->x_win == NULL)
        break;
      snprintf (buf, size, "%.6f", col->id == SKY_COL_X_WIN ? cat->x_win[i] : cat->y_win[i]);
      return 1;
    case SKY_COL_FLAGS:
      if (cat->flags == NULL)
        break;
      snprintf (buf, size, "%u", (unsigned) cat->flags[i]);
      return 1;
    }
  snprintf (buf, size, "%s", "");
  return 0;
}

static void
put_field (FILE *fp, const char *s, const char *special, int quote_empty)
{
  if ((s[0] != '\0' || !quote_empty) && strpbrk (s, special) == NULL)
    {
      fputs (s, fp);
      return;
    }
  fputc ('"', fp);
  for (; *s; s++)
    {
      if (*s == '"')
        fputc ('"', fp);
      fputc (*s, fp);
    }
  fputc ('"', fp);
}

void
sky_export_put_table (const SkyExport *ex, const SkyColumn *cols, int ncols, FILE *fp,
                      char separator, const char *special, int quote_empty,
                      const char *missing_double)
{
  char cell[128];

  for (int c = 0; c < ncols; c++)
    {
      if (c > 0)
        fputc (separator, fp);
      put_field (fp, cols[c].name, special, quote_empty);
    }
  fputc ('\n', fp);
  for (int64_t i = 0; i < ex->result->catalogue.n; i++)
    {
      for (int c = 0; c < ncols; c++)
        {
          if (!sky_export_cell (ex, &cols[c], i, cell, sizeof cell)
              && cols[c].type == SKY_TYPE_DOUBLE)
            snprintf (cell, sizeof cell, "%s", missing_double);
          if (c > 0)
            fputc (separator, fp);
          put_field (fp, cell, special, quote_empty);
        }
      fputc ('\n', fp);
    }
}

/* ------------------------------------------------------------ metadata */

static SkyMeta *
meta_add (SkyMeta *meta, int *n, const char *key, SkyValueType type, const char *unit,
          const char *description)
{
  SkyMeta *m = &meta[(*n)++];

  memset (m, 0, sizeof *m);
  m->key = key;
  m->type = type;
  m->unit = unit;
  m->description = description;
  return m;
}

static void
meta_string (SkyMeta *meta, int *n, const char *key, const char *value, const char *description)
{
  if (value != NULL && value[0])
    snprintf (meta_add (meta, n, key, SKY_TYPE_STRING, NULL, description)->text,
              sizeof meta->text, "%s", value);
}

static void
meta_int (SkyMeta *meta, int *n, const char *key, long long value, const char *description)
{
  snprintf (meta_add (meta, n, key, SKY_TYPE_INT, NULL, description)->text, sizeof meta->text,
            "%lld", value);
}

static void
meta_bool (SkyMeta *meta, int *n, const char *key, int value, const char *description)
{
  SkyMeta *m = meta_add (meta, n, key, SKY_TYPE_INT, NULL, description);
  m->is_bool = 1;
  snprintf (m->text, sizeof m->text, "%d", value != 0);
}

void
sky_format_double (double v, char *buf, size_t size)
{
  /* Plain decimals where they are short enough (2000, 0.0139), else the
   * exponent form, as Python's repr chooses. */
  int fixed = v == 0 || (fabs (v) >= 1e-4 && fabs (v) < 1e16);

  for (int digits = fixed ? 0 : 1; digits <= (fixed ? 22 : 17); digits++)
    {
      snprintf (buf, size, fixed ? "%.*f" : "%.*g", digits, v);
      if (strtod (buf, NULL) == v)
        return;
    }
  snprintf (buf, size, "%.17g", v);
}

static void
meta_double (SkyMeta *meta, int *n, const char *key, double value, const char *unit,
             const char *description)
{
  if (isfinite (value))
    sky_format_double (value, meta_add (meta, n, key, SKY_TYPE_DOUBLE, unit, description)->text,
                       sizeof meta->text);
}

/* The local method's provenance; the clipping items do not apply. */
static int
local_meta (const SkyExport *ex, SkyMeta *meta, int n)
{
  const SkyParams *p = ex->params;
  const SkyResult *res = ex->result;

  meta_string (meta, &n, "method", "local",
               "Detection method: local (image - background map, islands against an rms map)");
  meta_int (meta, &n, "bkg_box", p->bkg_box, "Background mesh box, pixels a side");
  meta_int (meta, &n, "bkg_filter", p->bkg_filter, "Median filter of the mesh, boxes a side");
  meta_double (meta, &n, "seed_sigma", p->seed_sigma, NULL,
               "An island holds a pixel above this many rms");
  meta_double (meta, &n, "flood_sigma", p->flood_sigma, NULL,
               "Islands hold the connected pixels above this many rms");
  meta_int (meta, &n, "min_area", p->min_area, "Fewest pixels of an island or deblended part");
  meta_int (meta, &n, "deblend_nthresh", p->deblend_nthresh,
            "Deblending levels (0 or 1: no deblending)");
  meta_double (meta, &n, "deblend_mincont", p->deblend_mincont, NULL,
               "A deblended part holds more than this fraction of its island's flux");
  meta_double (meta, &n, "deblend_sigma", p->deblend_sigma, NULL,
               "A deblended part rises this many rms above the level it splits at");
  meta_int (meta, &n, "connectivity", p->connectivity, "4 or 8-connected pixels");
  meta_string (meta, &n, "smooth", ex->smooth,
               "Matched filter of the detection image (beam: the header's beam)");
  meta_double (meta, &n, "noise_scale", res->noise_scale, NULL,
               "Noise of the detection image over the rms map's (the matched filter's; 1 "
               "without one)");
  meta_int (meta, &n, "nislands", res->nislands, "Islands before deblending");
  meta_int (meta, &n, "ndeblended", res->ndeblended, "Islands that deblending split");
  return n;
}

int
sky_export_meta (const SkyExport *ex, SkyMeta *meta)
{
  const SkyImage *img = ex->image;
  const SkyParams *p = ex->params;
  const SkyResult *res = ex->result;
  char date[32];
  time_t now = time (NULL);
  struct tm tm;
  int n = 0;

  gmtime_r (&now, &tm);
  strftime (date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  meta_string (meta, &n, "software", "skysift " SKYSIFT_VERSION, "What made this catalogue");
  meta_string (meta, &n, "date", date, "When the catalogue was written (UTC)");
  if (img != NULL)
    {
      meta_string (meta, &n, "image", img->path, "The FITS file the sources were found in");
      meta_int (meta, &n, "hdu", img->hdu, "1-based HDU of the image");
      meta_int (meta, &n, "plane", img->plane, "0-based plane of a cube (0 for a 2D image)");
      meta_int (meta, &n, "nx", img->nx, "Image width in pixels");
      meta_int (meta, &n, "ny", img->ny, "Image height in pixels");
      meta_string (meta, &n, "bunit", img->bunit, "The image unit (BUNIT) as the header has it");
    }
  meta_string (meta, &n, "backend", ex->backend, "Where the four steps ran");
  meta_string (meta, &n, "device", ex->device, "What ran them");
  if (p != NULL && res->method == SKY_METHOD_LOCAL)
    n = local_meta (ex, meta, n);
  else if (p != NULL)
    {
      meta_double (meta, &n, "clip_kappa", p->clip_kappa, NULL,
                   "Kappa-sigma clipping keeps median - kappa sigma < x < median + kappa sigma");
      meta_int (meta, &n, "max_iter", p->max_iter, "Clipping passes at most (0: until stable)");
      meta_double (meta, &n, "threshold_sigma", p->threshold, NULL,
                   "Source pixels are above this many clipped sigmas");
      meta_bool (meta, &n, "relative", p->relative,
                 "True: the threshold is median + threshold_sigma sigma");
      meta_int (meta, &n, "connectivity", p->connectivity, "4 or 8-connected pixels");
    }
  if (res->method != SKY_METHOD_LOCAL)
    {
      const char *unit = ex->unit[0] ? ex->unit : NULL;
      meta_double (meta, &n, "threshold", res->threshold_value, unit,
                   "The pixel value a source pixel exceeds");
      meta_double (meta, &n, "clip_median", res->stats.median, unit,
                   "Median of the clipped background");
      meta_double (meta, &n, "clip_sigma", res->stats.sigma, unit,
                   "Population standard deviation of the clipped background");
      meta_int (meta, &n, "clip_pixels", res->stats.n, "Background pixels left after clipping");
      meta_int (meta, &n, "clip_iterations", res->stats.iterations, "Clipping passes");
    }
  meta_int (meta, &n, "nsources", res->nsources, "Sources in the catalogue");
  if (img == NULL)
    return n;

  if (ex->wcs != NULL)
    {
      meta_string (meta, &n, "wcs_system", sky_coord_system_name (sky_wcs_system (ex->wcs)),
                   "Celestial system of the sky positions");
      meta_string (meta, &n, "wcs_frame", sky_wcs_frame (ex->wcs), "Reference frame");
      meta_double (meta, &n, "wcs_equinox", sky_wcs_equinox (ex->wcs), "yr",
                   "Equinox of the frame");
      meta_string (meta, &n, "wcs_ctype1", sky_wcs_ctype (ex->wcs, 0), "CTYPE1 of the image");
      meta_string (meta, &n, "wcs_ctype2", sky_wcs_ctype (ex->wcs, 1), "CTYPE2 of the image");
      meta_double (meta, &n, "pixel_area", sky_wcs_pixel_area (ex->wcs), "deg**2",
                   "Solid angle of a pixel at the reference point");
    }
  if (img->has_beam)
    {
      meta_double (meta, &n, "beam_major", img->bmaj, "deg", "Beam FWHM, major axis (BMAJ)");
      meta_double (meta, &n, "beam_minor", img->bmin, "deg", "Beam FWHM, minor axis (BMIN)");
      meta_double (meta, &n, "beam_pa", img->bpa, "deg", "Beam position angle (BPA)");
    }
  meta_double (meta, &n, "beam_area", ex->beam_area, "pixel",
               "Beam solid angle in pixels: pi BMAJ BMIN / (4 ln 2) / pixel_area");
  meta_string (meta, &n, "note_positions", ex->sky_note, "Why sky positions are missing");
  meta_string (meta, &n, "note_int_flux", ex->flux_note, "Why int_flux is empty");
  meta_string (meta, &n, "note_unit", ex->unit_note,
               "How the image unit was written, or why it was left out");
  return n;
}

/* -------------------------------------------------------------- quoting */

void
sky_put_quoted (FILE *fp, const char *s)
{
  fputc ('"', fp);
  for (; s != NULL && *s; s++)
    {
      unsigned char c = (unsigned char) *s;
      if (c == '"' || c == '\\')
        fprintf (fp, "\\%c", c);
      else if (c < 0x20 || c == 0x7f)
        fprintf (fp, "\\u%04x", c);
      else
        fputc (c, fp);
    }
  fputc ('"', fp);
}

void
sky_put_xml (FILE *fp, const char *s)
{
  for (; s != NULL && *s; s++)
    {
      unsigned char c = (unsigned char) *s;
      switch (c)
        {
        case '&': fputs ("&amp;", fp); break;
        case '<': fputs ("&lt;", fp); break;
        case '>': fputs ("&gt;", fp); break;
        case '"': fputs ("&quot;", fp); break;
        case '\'': fputs ("&apos;", fp); break;
        default:
          if (c >= 0x20 || c == '\t')
            fputc (c, fp);
        }
    }
}

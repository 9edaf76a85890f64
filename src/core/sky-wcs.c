/* SPDX-License-Identifier: GPL-3.0-or-later */
/* World coordinates of an image through wcslib: the header's WCS (any
 * projection wcslib knows), the celestial system it names, pixel to sky,
 * the pixel's solid angle, and sexagesimal text.
 *
 * The header is read the way astropy.wcs reads it (wcspih with every
 * relaxation, then wcsfix), so that both give the same positions. */
#include "sky-core.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wcslib/wcserr.h>
#include <wcslib/wcsfix.h>
#include <wcslib/wcshdr.h>
#include <wcslib/wcsmath.h>
#include <wcslib/wcs.h>
#include <wcslib/wcsutil.h>

#define SKY_WCS_MAX_AXES 9

struct SkyWcs {
  struct wcsprm *all;   /* what wcspih returned, freed with wcsvfree */
  int nwcs;
  struct wcsprm *wcs;   /* the primary representation, one of all[] */
  int naxis;            /* wcs->naxis */
  double pixel0[SKY_WCS_MAX_AXES]; /* FITS pixel of the loaded plane on axes 3.. */
  double *pixcrd, *imgcrd, *world; /* scratch for one coordinate of naxis */
  int *stat;

  SkyCoordSystem system;
  char lng_name[8], lat_name[8];
  char frame[72];
  double equinox;
  char projection[4];
  char ctype[2][72];
  double pixel_area;
};

/* The integer value of a header card, e.g. NAXIS3; 0 when absent. */
static long long
card_int (const char *header, int ncards, const char *key, int *found)
{
  size_t len = strlen (key);

  *found = 0;
  for (int i = 0; i < ncards; i++)
    {
      const char *card = header + 80 * (size_t) i;
      if (strncmp (card, key, len) == 0 && card[len] == ' ')
        {
          const char *eq = memchr (card, '=', 10);
          if (eq != NULL)
            {
              char value[81];
              size_t n = 80 - (size_t) (eq + 1 - card);
              memcpy (value, eq + 1, n);
              value[n] = '\0';
              *found = 1;
              return strtoll (value, NULL, 10);
            }
        }
    }
  return 0;
}

/* wcslib records each failure in a message of the struct that failed and
 * does not free every one of them with the WCS: drop them as they come. */
static void
clear_errors (struct wcsprm *wcs)
{
  wcserr_clear (&wcs->err);
  wcserr_clear (&wcs->lin.err);
  wcserr_clear (&wcs->cel.err);
  wcserr_clear (&wcs->cel.prj.err);
  wcserr_clear (&wcs->spc.err);
}

static const char *
image_name (const SkyImage *img)
{
  return img->path != NULL ? img->path : "image";
}

/* The names skysift gives to a pair of celestial axes. wcslib's axis types
 * are the CTYPE's first four letters without dashes ("RA", "GLON"). */
static void
name_system (SkyWcs *w)
{
  const struct wcsprm *wcs = w->wcs;
  const char *lng = wcs->lngtyp, *lat = wcs->lattyp;

  w->equinox = NAN;
  if (strcmp (lng, "RA") == 0)
    {
      w->system = SKY_COORD_EQUATORIAL;
      snprintf (w->lng_name, sizeof w->lng_name, "ra");
      snprintf (w->lat_name, sizeof w->lat_name, "dec");
      /* wcsset has already applied the FITS defaults: RADESYS from EQUINOX
       * (FK4 before 1984, else FK5), ICRS with neither. */
      snprintf (w->frame, sizeof w->frame, "%s", wcs->radesys[0] ? wcs->radesys : "ICRS");
      if (!undefined (wcs->equinox))
        w->equinox = wcs->equinox;
      else if (strncmp (w->frame, "FK4", 3) == 0)
        w->equinox = 1950.0;
      else if (strcmp (w->frame, "FK5") == 0)
        w->equinox = 2000.0;
      if (strcmp (w->frame, "ICRS") == 0)
        w->equinox = NAN; /* ICRS has no equinox, whatever the header says */
      return;
    }

  for (int i = 0; i < 4 && lng[i]; i++)
    w->lng_name[i] = (char) tolower ((unsigned char) lng[i]);
  for (int i = 0; i < 4 && lat[i]; i++)
    w->lat_name[i] = (char) tolower ((unsigned char) lat[i]);
  if (strcmp (lng, "GLON") == 0)
    {
      w->system = SKY_COORD_GALACTIC;
      snprintf (w->frame, sizeof w->frame, "galactic");
    }
  else if (strcmp (lng, "ELON") == 0)
    {
      w->system = SKY_COORD_ECLIPTIC;
      snprintf (w->frame, sizeof w->frame, "ecliptic");
      w->equinox = undefined (wcs->equinox) ? 2000.0 : wcs->equinox;
    }
  else if (strcmp (lng, "SLON") == 0)
    {
      w->system = SKY_COORD_SUPERGALACTIC;
      snprintf (w->frame, sizeof w->frame, "supergalactic");
    }
  else
    {
      /* Helioprojective, heliographic, planetary...: named after the axes. */
      w->system = SKY_COORD_OTHER;
      snprintf (w->frame, sizeof w->frame, "%s/%s", lng, lat);
    }
}

/* |det| of the celestial part of the pixel-to-intermediate matrix, CDELT
 * times PC, in degrees squared: wcsset has made a CD matrix or CROTA into
 * PC (with CDELT 1 for CD) and celestial units into degrees. NaN unless
 * the image's own two axes carry the celestial pair, as a solid angle per
 * pixel needs. */
static double
pixel_area (const struct wcsprm *wcs)
{
  int n = wcs->naxis, lng = wcs->lng, lat = wcs->lat;
  double m[2][2], det;

  if (n < 2)
    return NAN;
  for (int j = 2; j < n; j++)
    if (wcs->pc[lng * n + j] != 0 || wcs->pc[lat * n + j] != 0)
      return NAN;
  for (int j = 0; j < 2; j++)
    {
      m[0][j] = wcs->cdelt[lng] * wcs->pc[lng * n + j];
      m[1][j] = wcs->cdelt[lat] * wcs->pc[lat * n + j];
    }
  det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
  return det != 0 && isfinite (det) ? fabs (det) : NAN;
}

int
sky_wcs_new (const SkyImage *img, SkyWcs **out)
{
  SkyWcs *w = NULL;
  char *header = NULL;
  int naxes[SKY_WCS_MAX_AXES] = { 0 };
  int nreject = 0, status, found, hdr_naxis, ret = SKY_OK;
  int64_t plane;

  *out = NULL;
  if (img->header == NULL || img->nheader_cards <= 0)
    return sky_fail (SKY_ERR_UNAVAILABLE, "%s: no header: no world coordinates",
                     image_name (img));

  w = calloc (1, sizeof *w);
  /* wcspih does not change the header with ctrl >= 0, but takes char *. */
  header = malloc ((size_t) img->nheader_cards * 80 + 1);
  if (w == NULL || header == NULL)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "%s: out of memory", image_name (img));
      goto exit;
    }
  memcpy (header, img->header, (size_t) img->nheader_cards * 80);
  header[(size_t) img->nheader_cards * 80] = '\0';

  wcserr_enable (1);
  status = wcspih (header, img->nheader_cards, WCSHDR_all, 0, &nreject, &w->nwcs, &w->all);
  if (status != 0)
    {
      w->all = NULL;
      w->nwcs = 0;
      ret = sky_fail (SKY_ERR_FORMAT, "%s: wcslib cannot read the header (%s)",
                      image_name (img), wcshdr_errmsg[status > 0 && status <= 5 ? status : 4]);
      goto exit;
    }
  for (int i = 0; i < w->nwcs && w->wcs == NULL; i++)
    if (w->all[i].alt[0] == ' ' || w->all[i].alt[0] == '\0')
      w->wcs = &w->all[i];
  if (w->wcs == NULL)
    {
      ret = sky_fail (SKY_ERR_UNAVAILABLE,
                      "%s: the header has alternate world coordinates only (CTYPE1A...), "
                      "no primary ones: sky positions are left out", image_name (img));
      goto exit;
    }
  w->naxis = w->wcs->naxis;
  if (w->naxis < 2 || w->naxis > SKY_WCS_MAX_AXES)
    {
      ret = sky_fail (SKY_ERR_UNAVAILABLE, "%s: a WCS of %d axes is not an image's",
                      image_name (img), w->naxis);
      goto exit;
    }

  /* The image's own axis lengths, as astropy passes them to wcsfix. */
  hdr_naxis = (int) card_int (img->header, img->nheader_cards, "NAXIS", &found);
  for (int i = 0; i < w->naxis && i < hdr_naxis; i++)
    {
      char key[16];
      snprintf (key, sizeof key, "NAXIS%d", i + 1);
      naxes[i] = (int) card_int (img->header, img->nheader_cards, key, &found);
    }
  /* wcsfix's mending, the steps astropy's WCS.fix takes, called one by
   * one so that their messages stay in the WCS and clear_errors frees
   * them (wcsfixi's copies of them leaked). What each step mended or could
   * not is no concern here: wcsset below has the last word. */
  /* Each step's message is dropped before the next: a step that fails
   * overwrites the WCS's message without freeing the one before (a header
   * with a bad DATE-OBS made datfix's leak). */
  cdfix (w->wcs);
  clear_errors (w->wcs);
  datfix (w->wcs);
  clear_errors (w->wcs);
  obsfix (0, w->wcs);
  clear_errors (w->wcs);
  unitfix (0, w->wcs);
  clear_errors (w->wcs);
  spcfix (w->wcs);
  clear_errors (w->wcs);
  celfix (w->wcs);
  clear_errors (w->wcs);
  if (hdr_naxis >= w->naxis)
    cylfix (naxes, w->wcs);
  clear_errors (w->wcs);

  /* CTYPEs as the header has them, blanks trimmed, for the messages. */
  for (int i = 0; i < 2; i++)
    {
      size_t len;
      snprintf (w->ctype[i], sizeof w->ctype[i], "%s", w->wcs->ctype[i]);
      len = strlen (w->ctype[i]);
      while (len > 0 && w->ctype[i][len - 1] == ' ')
        w->ctype[i][--len] = '\0';
    }
  if (w->ctype[0][0] == '\0' && w->ctype[1][0] == '\0')
    {
      ret = sky_fail (SKY_ERR_UNAVAILABLE, "%s: the header has no world coordinates (no "
                      "CTYPE1, CTYPE2): sky positions are left out", image_name (img));
      goto exit;
    }
  status = wcsset (w->wcs);
  if (status != 0)
    {
      ret = sky_fail (SKY_ERR_FORMAT, "%s: wcslib cannot use the header's WCS (CTYPE1 '%s', "
                      "CTYPE2 '%s': %s): sky positions are left out", image_name (img),
                      w->ctype[0], w->ctype[1],
                      w->wcs->err != NULL && w->wcs->err->msg != NULL
                        ? w->wcs->err->msg : wcs_errmsg[status > 0 && status <= 14 ? status : 1]);
      goto exit;
    }
  if (w->wcs->lng < 0 || w->wcs->lat < 0)
    {
      ret = sky_fail (SKY_ERR_UNAVAILABLE,
                      "%s: the header's WCS is not celestial (CTYPE1 '%s', CTYPE2 '%s'): "
                      "sky positions are left out", image_name (img), w->ctype[0], w->ctype[1]);
      goto exit;
    }

  /* Axes beyond the second stand at the loaded plane (axis 3 fastest, as
   * the loader counts planes); WCS axes the data lack stand at pixel 1. */
  plane = img->plane;
  for (int i = 2; i < w->naxis; i++)
    {
      int64_t len = i < hdr_naxis && naxes[i] > 0 ? naxes[i] : 1;
      w->pixel0[i] = 1.0 + (double) (plane % len);
      plane /= len;
    }

  w->pixcrd = calloc ((size_t) w->naxis, sizeof (double));
  w->imgcrd = calloc ((size_t) w->naxis, sizeof (double));
  w->world = calloc ((size_t) w->naxis, sizeof (double));
  w->stat = calloc (1, sizeof (int));
  if (!w->pixcrd || !w->imgcrd || !w->world || !w->stat)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "%s: out of memory", image_name (img));
      goto exit;
    }
  name_system (w);
  snprintf (w->projection, sizeof w->projection, "%s", w->wcs->cel.prj.code);
  w->pixel_area = pixel_area (w->wcs);
  *out = w;
  w = NULL;

exit:
  free (header);
  sky_wcs_free (w);
  return ret;
}

void
sky_wcs_free (SkyWcs *w)
{
  if (w == NULL)
    return;
  if (w->all != NULL)
    {
      for (int i = 0; i < w->nwcs; i++)
        clear_errors (&w->all[i]);
      wcsvfree (&w->nwcs, &w->all);
    }
  free (w->pixcrd);
  free (w->imgcrd);
  free (w->world);
  free (w->stat);
  free (w);
}

int
sky_wcs_pix2world (SkyWcs *w, double x, double y, double *lng, double *lat)
{
  double phi, theta;

  *lng = *lat = NAN;
  if (!isfinite (x) || !isfinite (y))
    return sky_fail (SKY_ERR_ARGUMENT, "pixel (%g, %g) is not a position", x, y);
  memcpy (w->pixcrd, w->pixel0, (size_t) w->naxis * sizeof (double));
  w->pixcrd[0] = x + 1.0; /* skysift's 0-based pixels; FITS counts from 1 */
  w->pixcrd[1] = y + 1.0;
  if (wcsp2s (w->wcs, 1, w->naxis, w->pixcrd, w->imgcrd, &phi, &theta, w->world, w->stat) != 0
      || !isfinite (w->world[w->wcs->lng]) || !isfinite (w->world[w->wcs->lat]))
    {
      clear_errors (w->wcs);
      return sky_fail (SKY_ERR_ARGUMENT, "pixel (%g, %g) has no world coordinates "
                     "(outside the projection)", x, y);
    }
  *lng = w->world[w->wcs->lng];
  *lat = w->world[w->wcs->lat];
  return SKY_OK;
}

int
sky_wcs_world2pix (SkyWcs *w, double lng, double lat, double *x, double *y)
{
  double phi, theta;

  *x = *y = NAN;
  if (!isfinite (lng) || !isfinite (lat) || fabs (lat) > 90.0)
    return sky_fail (SKY_ERR_ARGUMENT, "(%g, %g) is not a sky position", lng, lat);
  /* The further axes at the plane's own world values, so that wcss2p
   * solves for the two celestial ones alone. */
  memcpy (w->pixcrd, w->pixel0, (size_t) w->naxis * sizeof (double));
  w->pixcrd[0] = w->wcs->crpix[0];
  w->pixcrd[1] = w->wcs->crpix[1];
  if (wcsp2s (w->wcs, 1, w->naxis, w->pixcrd, w->imgcrd, &phi, &theta, w->world, w->stat) != 0)
    clear_errors (w->wcs);
  w->world[w->wcs->lng] = lng;
  w->world[w->wcs->lat] = lat;
  if (wcss2p (w->wcs, 1, w->naxis, w->world, &phi, &theta, w->imgcrd, w->pixcrd, w->stat) != 0
      || !isfinite (w->pixcrd[0]) || !isfinite (w->pixcrd[1]))
    {
      clear_errors (w->wcs);
      return sky_fail (SKY_ERR_ARGUMENT, "(%g, %g) has no pixel position "
                       "(outside the projection)", lng, lat);
    }
  *x = w->pixcrd[0] - 1.0;
  *y = w->pixcrd[1] - 1.0;
  return SKY_OK;
}

int64_t
sky_wcs_pix2world_n (SkyWcs *w, int64_t n, const double *x, const double *y, double *lng,
                     double *lat)
{
  int64_t good = 0;

  for (int64_t i = 0; i < n; i++)
    good += sky_wcs_pix2world (w, x[i], y[i], &lng[i], &lat[i]) == SKY_OK;
  return good;
}

SkyCoordSystem
sky_wcs_system (const SkyWcs *w)
{
  return w->system;
}

const char *
sky_wcs_lng_name (const SkyWcs *w)
{
  return w->lng_name;
}

const char *
sky_wcs_lat_name (const SkyWcs *w)
{
  return w->lat_name;
}

const char *
sky_wcs_frame (const SkyWcs *w)
{
  return w->frame;
}

double
sky_wcs_equinox (const SkyWcs *w)
{
  return w->equinox;
}

const char *
sky_wcs_projection (const SkyWcs *w)
{
  return w->projection;
}

const char *
sky_wcs_ctype (const SkyWcs *w, int axis)
{
  return axis == 0 || axis == 1 ? w->ctype[axis] : "";
}

double
sky_wcs_pixel_area (const SkyWcs *w)
{
  return w->pixel_area;
}

const char *
sky_coord_system_name (SkyCoordSystem system)
{
  switch (system)
    {
    case SKY_COORD_EQUATORIAL: return "equatorial";
    case SKY_COORD_GALACTIC: return "galactic";
    case SKY_COORD_ECLIPTIC: return "ecliptic";
    case SKY_COORD_SUPERGALACTIC: return "supergalactic";
    case SKY_COORD_OTHER: default: return "other";
    }
}

/* ---------------------------------------------------------- sexagesimal */

char *
sky_format_ra (double ra_deg, char *buf, size_t size)
{
  long long cs, day = 24LL * 3600 * 100;

  if (!isfinite (ra_deg))
    {
      snprintf (buf, size, "%s", "");
      return buf;
    }
  ra_deg = fmod (ra_deg, 360.0);
  if (ra_deg < 0)
    ra_deg += 360.0;
  /* Round once, in hundredths of a second of time, so 59.999 s carries. */
  cs = llround (ra_deg / 15.0 * 3600.0 * 100.0) % day;
  snprintf (buf, size, "%02lld:%02lld:%02lld.%02lld", cs / 360000, cs / 6000 % 60,
            cs / 100 % 60, cs % 100);
  return buf;
}

char *
sky_format_dec (double dec_deg, char *buf, size_t size)
{
  long long ds;

  if (!isfinite (dec_deg))
    {
      snprintf (buf, size, "%s", "");
      return buf;
    }
  ds = llround (fabs (dec_deg) * 3600.0 * 10.0); /* tenths of an arcsecond */
  snprintf (buf, size, "%c%02lld:%02lld:%02lld.%lld", dec_deg < 0 ? '-' : '+', ds / 36000,
            ds / 600 % 60, ds / 10 % 60, ds % 10);
  return buf;
}

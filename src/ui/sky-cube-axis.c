/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A cube's plane as a world value, through wcslib as astropy.wcs reads the
 * header (wcspih, wcsset): wcsset makes spectral units SI (Hz, m/s, m),
 * which are then scaled for a person. */
#include "sky-cube-axis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <wcslib/wcs.h>
#include <wcslib/wcshdr.h>

/* NAXISn of the header's cards, 0 where absent. */
static gint64
header_naxis (const SkyImage *img, int n)
{
  char key[16];

  g_snprintf (key, sizeof key, "NAXIS%d", n);
  for (int i = 0; i < img->nheader_cards; i++)
    {
      const char *card = img->header + 80 * (gsize) i;
      size_t len = strlen (key);
      if (strncmp (card, key, len) == 0 && (card[len] == ' ' || card[len] == '='))
        {
          const char *eq = memchr (card, '=', 80);
          return eq ? g_ascii_strtoll (eq + 1, NULL, 10) : 0;
        }
    }
  return 0;
}

/* The axis that numbers the planes: the first after the two image axes
 * with more than one pixel (the loader drops degenerate ones). */
static int
plane_axis (const SkyImage *img, int naxis)
{
  for (int i = 3; i <= naxis; i++)
    if (header_naxis (img, i) > 1)
      return i - 1;
  return naxis >= 3 ? 2 : -1;
}

static void
scale_for_person (SkyPlaneWorld *w)
{
  static const struct { const char *unit; double factor; const char *shown; double from; } scales[] = {
    { "Hz", 1e9, "GHz", 1e9 }, { "Hz", 1e6, "MHz", 1e6 }, { "Hz", 1e3, "kHz", 1e3 },
    { "m/s", 1e3, "km/s", 0 },
    { "m", 1e-3, "mm", 1e-3 }, { "m", 1e-6, "µm", 1e-6 }, { "m", 1e-9, "nm", 0 },
  };

  w->shown = w->value;
  g_strlcpy (w->shown_unit, w->unit, sizeof w->shown_unit);
  for (gsize i = 0; i < G_N_ELEMENTS (scales); i++)
    if (g_str_equal (w->unit, scales[i].unit) && fabs (w->value) >= scales[i].from)
      {
        w->shown = w->value / scales[i].factor;
        g_strlcpy (w->shown_unit, scales[i].shown, sizeof w->shown_unit);
        break;
      }
}

gboolean
sky_cube_plane_world (const SkyImage *img, gint64 plane, SkyPlaneWorld *out)
{
  struct wcsprm *wcs = NULL;
  int nreject = 0, nwcs = 0, axis, stat = 0;
  gboolean ok = FALSE;

  memset (out, 0, sizeof *out);
  out->value = out->shown = NAN;
  g_strlcpy (out->text, "no WCS for the third axis", sizeof out->text);
  if (img->header == NULL || img->nheader_cards <= 0)
    return FALSE;
  if (wcspih (img->header, img->nheader_cards, WCSHDR_all, 0, &nreject, &nwcs, &wcs) != 0
      || nwcs < 1)
    return FALSE;
  /* An axis without CTYPE has only wcslib's default (the pixel number):
   * nothing to say about the plane. */
  if (wcs[0].naxis >= 3 && wcsset (&wcs[0]) == 0 && (axis = plane_axis (img, wcs[0].naxis)) >= 0
      && wcs[0].ctype[axis][0] != '\0' && wcs[0].ctype[axis][0] != ' ')
    {
      int n = wcs[0].naxis;
      double *pix = g_new0 (double, n), *imgcrd = g_new0 (double, n), *world = g_new0 (double, n);
      double phi, theta;

      for (int i = 0; i < n; i++)
        pix[i] = wcs[0].crpix[i];
      pix[axis] = (double) plane + 1;   /* FITS pixels count from 1 */
      if (wcsp2s (&wcs[0], 1, n, pix, imgcrd, &phi, &theta, world, &stat) == 0 && stat == 0)
        {
          char *dash;
          g_strlcpy (out->type, wcs[0].ctype[axis], sizeof out->type);
          if ((dash = strchr (out->type, '-')) != NULL)
            *dash = '\0';
          g_strstrip (out->type);
          out->value = world[axis];
          g_strlcpy (out->unit, wcs[0].cunit[axis], sizeof out->unit);
          g_strstrip (out->unit);
          scale_for_person (out);
          g_snprintf (out->text, sizeof out->text, "%s %.8g%s%s", out->type,
                      out->shown, out->shown_unit[0] ? " " : "", out->shown_unit);
          ok = TRUE;
        }
      g_free (pix);
      g_free (imgcrd);
      g_free (world);
    }
  wcsvfree (&nwcs, &wcs);
  return ok;
}

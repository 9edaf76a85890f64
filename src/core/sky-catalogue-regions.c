/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The catalogue as a DS9 region file (version 4.2): one circle per source,
 * centred on its centroid, of the area of its pixels, labelled with its
 * source_id. DS9, CARTA and the regions package read it. */
#include "sky-core.h"
#include "sky-output-private.h"

#include <math.h>
#include <string.h>

/* The DS9 name of the WCS's frame, or NULL where DS9 has none (FK5 at
 * another equinox than J2000, supergalactic, solar systems...). */
static const char *
ds9_frame (const SkyWcs *wcs)
{
  const char *frame = sky_wcs_frame (wcs);
  double equinox = sky_wcs_equinox (wcs);

  switch (sky_wcs_system (wcs))
    {
    case SKY_COORD_EQUATORIAL:
      if (strcmp (frame, "ICRS") == 0)
        return "icrs";
      if (strcmp (frame, "FK5") == 0 && equinox == 2000.0)
        return "fk5";
      if (strcmp (frame, "FK4") == 0 && equinox == 1950.0)
        return "fk4";
      return NULL;
    case SKY_COORD_GALACTIC:
      return "galactic";
    case SKY_COORD_ECLIPTIC:
      return equinox == 2000.0 ? "ecliptic" : NULL;
    default:
      return NULL;
    }
}

/* DS9 parsers split lines at ';' before they look for '#', so a comment
 * must not hold one. */
static void
put_comment_text (FILE *fp, const char *s)
{
  for (; s != NULL && *s; s++)
    fputc (*s == ';' ? ',' : *s == '\n' ? ' ' : *s, fp);
}

static void
put_image_circle (FILE *fp, const char *prefix, double x, double y, double r, int64_t id)
{
  /* FITS pixel coordinates: skysift's 0-based x, y plus one. */
  fprintf (fp, "%scircle(%.6f,%.6f,%.4f) # text={%lld}\n", prefix, x + 1.0, y + 1.0, r,
           (long long) id);
}

int
sky_export_regions (const char *path, const SkyExport *ex)
{
  const SkyCatalogue *cat = &ex->result->catalogue;
  const char *frame = ex->wcs != NULL ? ds9_frame (ex->wcs) : NULL;
  double arcsec_per_pixel = ex->wcs != NULL ? sqrt (sky_wcs_pixel_area (ex->wcs)) * 3600 : NAN;
  SkyOutput out;
  int ret = sky_output_open (&out, path);

  if (ret != SKY_OK)
    return ret;
  fputs ("# Region file format: DS9 version 4.2\n", out.fp);
  fprintf (out.fp, "# skysift %s: %lld sources", sky_version (), (long long) cat->n);
  if (ex->image != NULL && ex->image->path != NULL)
    {
      fputs (" of ", out.fp);
      put_comment_text (out.fp, ex->image->path);
      fprintf (out.fp, " (HDU %d, plane %lld)", ex->image->hdu, (long long) ex->image->plane);
    }
  fputs (", circles of each source's pixel area on its centroid\n", out.fp);
  if (ex->wcs != NULL && frame == NULL)
    {
      fputs ("# DS9 has no frame for this image's ", out.fp);
      put_comment_text (out.fp, sky_wcs_frame (ex->wcs));
      fputs (" coordinates: 1-based pixels in the image frame\n", out.fp);
    }
  else if (ex->wcs == NULL && ex->sky_note[0])
    {
      fputs ("# ", out.fp);
      put_comment_text (out.fp, ex->sky_note);
      fputs (": 1-based pixels in the image frame\n", out.fp);
    }
  fputs ("global color=green dashlist=8 3 width=1 font=\"helvetica 10 normal roman\" select=1 "
         "highlite=1 dash=0 fixed=0 edit=1 move=1 delete=1 include=1 source=1\n", out.fp);
  fprintf (out.fp, "%s\n", frame != NULL ? frame : "image");

  for (int64_t i = 0; i < cat->n; i++)
    {
      double r = sqrt ((double) cat->npix[i] / M_PI);
      if (frame == NULL)
        put_image_circle (out.fp, "", cat->x[i], cat->y[i], r, i + 1);
      else if (!isfinite (ex->lng[i]) || !isfinite (ex->lat[i]))
        {
          /* No world position: this one in the image frame, and back. */
          put_image_circle (out.fp, "image;", cat->x[i], cat->y[i], r, i + 1);
          fprintf (out.fp, "%s\n", frame);
        }
      else if (isfinite (arcsec_per_pixel))
        fprintf (out.fp, "circle(%.9f,%+.9f,%.4f\") # text={%lld}\n", ex->lng[i], ex->lat[i],
                 r * arcsec_per_pixel, (long long) (i + 1));
      else
        fprintf (out.fp, "point(%.9f,%+.9f) # point=circle text={%lld}\n", ex->lng[i],
                 ex->lat[i], (long long) (i + 1));
    }
  return sky_output_close (&out);
}

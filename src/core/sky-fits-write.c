/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing a plane as a FITS image. cfitsio builds the file in memory and
 * the atomic output writes it out, so a FITS file is never half-written
 * either, and special files (/dev/stdout) work as for the catalogues. */
#include "sky-core.h"
#include "sky-output-private.h"

#include <fitsio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys the new file writes itself, or that its data makes untrue. */
static int
is_replaced_key (const char *card, int drop_unit)
{
  static const char *const exact[] = { "SIMPLE", "BITPIX", "NAXIS", "EXTEND", "XTENSION",
                                       "PCOUNT", "GCOUNT", "BSCALE", "BZERO", "BLANK",
                                       "DATAMIN", "DATAMAX", "CHECKSUM", "DATASUM", "END",
                                       "WCSAXES", "EXTNAME", NULL };
  static const char *const unit_keys[] = { "BUNIT", "BMAJ", "BMIN", "BPA", NULL };
  char key[9];
  size_t len = strcspn (card, " =");

  if (len > 8)
    len = 8;
  memcpy (key, card, len);
  key[len] = '\0';
  for (int i = 0; exact[i] != NULL; i++)
    if (strcmp (key, exact[i]) == 0)
      return 1;
  if (strncmp (key, "NAXIS", 5) == 0)
    return 1;
  /* The two lines on the FITS standard cfitsio writes in every new file. */
  if (strncmp (card, "COMMENT   FITS (Flexible Image Transport System) format", 55) == 0
      || strncmp (card, "COMMENT   and Astrophysics', volume 376, page 359;", 50) == 0)
    return 1;
  for (int i = 0; drop_unit && unit_keys[i] != NULL; i++)
    if (strcmp (key, unit_keys[i]) == 0)
      return 1;
  return 0;
}

/* Moves CRPIX1 and CRPIX2 of the primary and every alternate WCS. */
static void
shift_crpix (fitsfile *f, const double shift[2], int *status)
{
  for (int alt = 0; alt <= 26 && *status == 0; alt++)
    for (int axis = 0; axis < 2 && *status == 0; axis++)
      {
        char key[9];
        double crpix;
        snprintf (key, sizeof key, "CRPIX%d%c", axis + 1, alt ? 'A' + alt - 1 : '\0');
        if (fits_read_key (f, TDOUBLE, key, &crpix, NULL, status) == 0)
          {
            crpix += shift[axis];
            fits_update_key (f, TDOUBLE, key, &crpix, NULL, status);
          }
        else if (*status == KEY_NO_EXIST)
          *status = 0;
      }
}

static int
write_header (fitsfile *f, const SkyPlaneHeader *h, int *status)
{
  if (h->source_naxis > 2)
    fits_write_key (f, TINT, "WCSAXES", (void *) &h->source_naxis,
                    "the source's axes: its WCS gives the plane's position", status);
  for (int i = 0; i < h->ncards && h->cards != NULL && *status == 0; i++)
    {
      char card[81];
      memcpy (card, h->cards + 80 * i, 80);
      card[80] = '\0';
      if (!is_replaced_key (card, h->drop_unit))
        fits_write_record (f, card, status);
    }
  shift_crpix (f, h->crpix_shift, status);
  for (int i = 0; i < h->nkeys && *status == 0; i++)
    {
      const SkyFitsKey *k = &h->keys[i];
      if (k->text != NULL)
        fits_update_key_longstr (f, k->name, k->text, k->comment, status);
      else if (k->value == (double) (long long) k->value)
        {
          long long whole = (long long) k->value;
          fits_update_key (f, TLONGLONG, k->name, &whole, k->comment, status);
        }
      else
        fits_update_key (f, TDOUBLE, k->name, (void *) &k->value, k->comment, status);
    }
  for (int i = 0; i < h->nhistory && *status == 0; i++)
    fits_write_history (f, h->history[i], status);
  return *status;
}

int
sky_fits_write_plane_with_header (const char *path, int64_t nx, int64_t ny, int bitpix,
                                  const void *data, const SkyPlaneHeader *header)
{
  void *buffer = NULL;
  size_t size = 0;
  fitsfile *f = NULL;
  long long axes[2] = { nx, ny };
  LONGLONG header_start, data_start, data_end;
  int status = 0, ret;
  SkyOutput out;

  if (bitpix != FLOAT_IMG && bitpix != DOUBLE_IMG)
    return sky_fail (SKY_ERR_ARGUMENT, "%s: BITPIX must be -32 or -64 (got %d)", path, bitpix);
  if (fits_create_memfile (&f, &buffer, &size, 2880 * 64, realloc, &status)
      || fits_create_imgll (f, bitpix, 2, axes, &status)
      || (header != NULL && write_header (f, header, &status))
      || fits_write_img (f, bitpix == FLOAT_IMG ? TFLOAT : TDOUBLE, 1, nx * ny, (void *) data,
                         &status)
      || fits_flush_file (f, &status)
      || fits_get_hduaddrll (f, &header_start, &data_start, &data_end, &status))
    {
      char text[FLEN_STATUS];
      int ignored = 0;
      fits_get_errstatus (status, text);
      if (f != NULL)
        fits_close_file (f, &ignored);
      free (buffer);
      fits_clear_errmsg ();
      return sky_fail (SKY_ERR_IO, "%s: cannot make the FITS image (%s)", path, text);
    }

  /* Closing fills the padding; the data unit ends on a 2880-byte block. */
  fits_close_file (f, &status);
  data_end = (data_end + 2879) / 2880 * 2880;
  if (status != 0 || (size_t) data_end > size)
    {
      free (buffer);
      fits_clear_errmsg ();
      return sky_fail (SKY_ERR_IO, "%s: cannot make the FITS image (cfitsio status %d)", path,
                       status);
    }
  ret = sky_output_open (&out, path);
  if (ret == SKY_OK)
    {
      fwrite (buffer, 1, (size_t) data_end, out.fp);
      ret = sky_output_close (&out);
    }
  free (buffer);
  return ret;
}

int
sky_fits_write_plane (const char *path, int64_t nx, int64_t ny, int bitpix, const void *data)
{
  return sky_fits_write_plane_with_header (path, nx, ny, bitpix, data, NULL);
}

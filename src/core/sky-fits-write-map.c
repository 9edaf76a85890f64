/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing a map of an image (its background, its rms) as FITS: the plane
 * in float32 under the image's own header cards, so that the map carries
 * the image's WCS, unit and beam. Built in memory by cfitsio and written
 * out atomically, like every other output. */
#include "sky-core.h"
#include "sky-output-private.h"

#include <fitsio.h>
#include <stdlib.h>
#include <string.h>

/* Cards that describe the layout of the original data unit, not the sky:
 * cfitsio writes the map's own, and a checksum or data range would lie. */
static int
structural_card (const char *card)
{
  static const char *const exact[] = {
    "SIMPLE", "XTENSION", "BITPIX", "NAXIS", "EXTEND", "PCOUNT", "GCOUNT", "BSCALE",
    "BZERO", "BLANK", "END", "CHECKSUM", "DATASUM", "DATAMIN", "DATAMAX", "EXTNAME",
  };
  char key[9];
  size_t n = 0;

  while (n < 8 && card[n] != ' ' && card[n] != '=' && card[n] != '\0')
    {
      key[n] = card[n];
      n++;
    }
  key[n] = '\0';
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
    if (strcmp (key, exact[i]) == 0)
      return 1;
  /* NAXISn */
  return strncmp (key, "NAXIS", 5) == 0 && key[5] >= '0' && key[5] <= '9';
}

int
sky_fits_write_map (const char *path, const SkyImage *like, const float *data)
{
  void *buffer = NULL;
  size_t size = 0;
  fitsfile *f = NULL;
  long long axes[2] = { like->nx, like->ny };
  LONGLONG header_start, data_start, data_end;
  int status = 0, ret;
  SkyOutput out;

  if (fits_create_memfile (&f, &buffer, &size, 2880 * 64, realloc, &status) == 0)
    fits_create_imgll (f, FLOAT_IMG, 2, axes, &status);
  for (int i = 0; status == 0 && i < like->nheader_cards && like->header != NULL; i++)
    {
      char card[81];
      memcpy (card, like->header + 80 * (size_t) i, 80);
      card[80] = '\0';
      if (!structural_card (card))
        fits_write_record (f, card, &status);
    }
  if (status == 0)
    fits_write_img (f, TFLOAT, 1, like->nx * like->ny, (void *) data, &status);
  if (status == 0)
    fits_flush_file (f, &status);
  if (status == 0)
    fits_get_hduaddrll (f, &header_start, &data_start, &data_end, &status);
  if (status != 0)
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

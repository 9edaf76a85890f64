/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing a plane as a FITS image. cfitsio builds the file in memory and
 * the atomic output writes it out, so a FITS file is never half-written
 * either, and special files (/dev/stdout) work as for the catalogues. */
#include "sky-core.h"
#include "sky-output-private.h"

#include <fitsio.h>
#include <stdlib.h>

int
sky_fits_write_plane (const char *path, int64_t nx, int64_t ny, int bitpix, const void *data)
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

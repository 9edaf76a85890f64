/* Atomic output files (sky-output-private.h), shared by every writer. */
#include "sky-core.h"
#include "sky-output-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
sky_output_open (SkyOutput *out, const char *path)
{
  struct stat st;
  int fd;

  memset (out, 0, sizeof *out);
  out->path = path;
  if (stat (path, &st) == 0 && !S_ISREG (st.st_mode))
    {
      if (S_ISDIR (st.st_mode))
        return sky_fail (SKY_ERR_IO, "%s: is a directory", path);
      out->fp = fopen (path, "w");
      if (out->fp == NULL)
        return sky_fail (SKY_ERR_IO, "%s: %s", path, strerror (errno));
      return SKY_OK;
    }

  if (asprintf (&out->tmp_path, "%s.tmpXXXXXX", path) < 0)
    {
      out->tmp_path = NULL;
      return sky_fail (SKY_ERR_MEMORY, "%s: out of memory", path);
    }
  fd = mkstemp (out->tmp_path);
  if (fd < 0)
    {
      int err = errno;
      free (out->tmp_path);
      out->tmp_path = NULL;
      return sky_fail (SKY_ERR_IO, "%s: cannot create the file: %s", path, strerror (err));
    }
  fchmod (fd, 0644); /* mkstemp makes 0600; a catalogue is for sharing */
  out->fp = fdopen (fd, "w");
  if (out->fp == NULL)
    {
      int err = errno;
      close (fd);
      unlink (out->tmp_path);
      free (out->tmp_path);
      out->tmp_path = NULL;
      return sky_fail (SKY_ERR_IO, "%s: %s", path, strerror (err));
    }
  return SKY_OK;
}

int
sky_output_close (SkyOutput *out)
{
  int err = 0;

  if (ferror (out->fp))
    err = errno ? errno : EIO;
  if (fflush (out->fp) != 0 && err == 0)
    err = errno;
  if (out->tmp_path != NULL && err == 0 && fsync (fileno (out->fp)) != 0)
    err = errno;
  if (fclose (out->fp) != 0 && err == 0)
    err = errno;
  out->fp = NULL;

  if (out->tmp_path != NULL)
    {
      if (err == 0 && rename (out->tmp_path, out->path) != 0)
        err = errno;
      if (err != 0)
        unlink (out->tmp_path);
      free (out->tmp_path);
      out->tmp_path = NULL;
    }
  if (err != 0)
    return sky_fail (SKY_ERR_IO, "%s: writing failed: %s", out->path, strerror (err));
  return SKY_OK;
}

int
sky_output_abort (SkyOutput *out, int status)
{
  if (out->fp != NULL)
    fclose (out->fp);
  out->fp = NULL;
  if (out->tmp_path != NULL)
    {
      unlink (out->tmp_path);
      free (out->tmp_path);
      out->tmp_path = NULL;
    }
  return status;
}

int
sky_write_text (const char *path, const char *text)
{
  return sky_write_bytes (path, text, strlen (text));
}

int
sky_write_bytes (const char *path, const void *data, size_t size)
{
  SkyOutput out;
  int ret = sky_output_open (&out, path);

  if (ret != SKY_OK)
    return ret;
  if (size > 0)
    fwrite (data, 1, size, out.fp);   /* sky_output_close checks the stream */
  return sky_output_close (&out);
}

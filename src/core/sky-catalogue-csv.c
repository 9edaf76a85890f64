/* The catalogue as CSV: a header row, one row per source in label order,
 * empty fields where a value is missing. */
#include "sky-core.h"
#include "sky-export-private.h"
#include "sky-output-private.h"

#include <string.h>

/* RFC 4180 quoting, for the rare text that needs it. */
static void
put_field (FILE *fp, const char *s)
{
  if (strpbrk (s, ",\"\r\n") == NULL)
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

int
sky_export_csv (const char *path, const SkyExport *ex)
{
  SkyColumn cols[SKY_MAX_COLUMNS];
  int ncols = sky_export_columns (ex, cols);
  SkyOutput out;
  char cell[128];
  int ret = sky_output_open (&out, path);

  if (ret != SKY_OK)
    return ret;
  for (int c = 0; c < ncols; c++)
    {
      fputs (c ? "," : "", out.fp);
      put_field (out.fp, cols[c].name);
    }
  fputc ('\n', out.fp);
  for (int64_t i = 0; i < ex->result->catalogue.n; i++)
    {
      for (int c = 0; c < ncols; c++)
        {
          sky_export_cell (ex, &cols[c], i, cell, sizeof cell);
          fputs (c ? "," : "", out.fp);
          put_field (out.fp, cell);
        }
      fputc ('\n', out.fp);
    }
  return sky_output_close (&out);
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The catalogue as ECSV 1.0 (https://github.com/astropy/astropy-APEs,
 * APE 6): a YAML header in comment lines that gives each column its type,
 * unit and description and carries the run's provenance as metadata, then
 * the table, space-delimited. astropy's Table.read reads it with units. */
#include "sky-core.h"
#include "sky-export-private.h"
#include "sky-output-private.h"

#include <string.h>

static const char *
ecsv_datatype (SkyValueType type)
{
  switch (type)
    {
    case SKY_TYPE_INT: return "int64";
    case SKY_TYPE_DOUBLE: return "float64";
    case SKY_TYPE_STRING: default: return "string";
    }
}

/* A YAML scalar for one metadata item. PyYAML reads "1e-05" as a string,
 * so a float always has a point. */
static void
put_meta_value (FILE *fp, const SkyMeta *m)
{
  if (m->type == SKY_TYPE_STRING)
    sky_put_quoted (fp, m->text);
  else if (m->is_bool)
    fputs (m->text[0] == '1' ? "true" : "false", fp);
  else if (m->type == SKY_TYPE_DOUBLE && strpbrk (m->text, ".n") == NULL)
    {
      size_t mantissa = strcspn (m->text, "e");
      fprintf (fp, "%.*s.0%s", (int) mantissa, m->text, m->text + mantissa);
    }
  else
    fputs (m->text, fp);
}

int
sky_export_ecsv (const char *path, const SkyExport *ex)
{
  SkyColumn cols[SKY_MAX_COLUMNS];
  SkyMeta meta[SKY_MAX_META];
  int ncols = sky_export_columns (ex, cols);
  int nmeta = sky_export_meta (ex, meta);
  SkyOutput out;
  int ret = sky_output_open (&out, path);

  if (ret != SKY_OK)
    return ret;
  fputs ("# %ECSV 1.0\n# ---\n# datatype:\n", out.fp);
  for (int c = 0; c < ncols; c++)
    {
      fprintf (out.fp, "# - {name: %s", cols[c].name);
      if (cols[c].unit[0])
        {
          fputs (", unit: ", out.fp);
          sky_put_quoted (out.fp, cols[c].unit);
        }
      fprintf (out.fp, ", datatype: %s, description: ", ecsv_datatype (cols[c].type));
      sky_put_quoted (out.fp, cols[c].description);
      /* astropy keeps a VOTable's UCD as the column's meta["ucd"]. */
      fputs (", meta: {ucd: ", out.fp);
      sky_put_quoted (out.fp, cols[c].ucd);
      fputs ("}}\n", out.fp);
    }

  /* Flat keys, so that t.meta["clip_kappa"] reads as it looks; the unit
   * and meaning of each go in a YAML comment beside it. */
  fputs ("# meta:\n", out.fp);
  for (int k = 0; k < nmeta; k++)
    {
      fprintf (out.fp, "#   %s: ", meta[k].key);
      put_meta_value (out.fp, &meta[k]);
      fputs ("  # ", out.fp);
      if (meta[k].unit != NULL)
        fprintf (out.fp, "[%s] ", meta[k].unit);
      fprintf (out.fp, "%s\n", meta[k].description);
    }
  fputs ("# schema: astropy-2.0\n", out.fp);

  /* A missing value is "" (read back as masked). */
  sky_export_put_table (ex, cols, ncols, out.fp, ' ', " \t\"", 1, "");
  return sky_output_close (&out);
}

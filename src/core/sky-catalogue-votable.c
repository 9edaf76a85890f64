/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The catalogue as a VOTable 1.4 (TABLEDATA): the same columns as the CSV
 * with units and UCDs, the sky frame as a COOSYS, and the provenance as
 * PARAMs. TOPCAT, CARTA and astropy.io.votable read it. */
#include "sky-core.h"
#include "sky-export-private.h"
#include "sky-output-private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *
votable_datatype (SkyValueType type)
{
  switch (type)
    {
    case SKY_TYPE_INT: return "long";
    case SKY_TYPE_DOUBLE: return "double";
    case SKY_TYPE_STRING: default: return "char";
    }
}

/* The COOSYS of the WCS's frame: system and equinox, or 0 where the
 * VOTable vocabulary has no name for it. */
static int
coosys (const SkyWcs *wcs, const char **system, char *equinox, size_t size)
{
  const char *frame = sky_wcs_frame (wcs);
  double eq = sky_wcs_equinox (wcs);

  equinox[0] = '\0';
  switch (sky_wcs_system (wcs))
    {
    case SKY_COORD_EQUATORIAL:
      if (strcmp (frame, "ICRS") == 0)
        *system = "ICRS";
      else if (strncmp (frame, "FK4", 3) == 0)
        *system = "eq_FK4";
      else if (strcmp (frame, "FK5") == 0)
        *system = "eq_FK5";
      else if (strcmp (frame, "GAPPT") == 0)
        *system = "geo_app";
      else
        return 0;
      break;
    case SKY_COORD_ECLIPTIC: *system = "ecl_FK5"; break;
    case SKY_COORD_GALACTIC: *system = "galactic"; break;
    case SKY_COORD_SUPERGALACTIC: *system = "supergalactic"; break;
    default: return 0;
    }
  if (isfinite (eq) && strcmp (*system, "ICRS") != 0 && strcmp (*system, "galactic") != 0
      && strcmp (*system, "supergalactic") != 0 && strcmp (*system, "geo_app") != 0)
    snprintf (equinox, size, "%c%g", strcmp (*system, "eq_FK4") == 0 ? 'B' : 'J', eq);
  return 1;
}

static void
put_attribute (FILE *fp, const char *name, const char *value)
{
  if (value == NULL || value[0] == '\0')
    return;
  fprintf (fp, " %s=\"", name);
  sky_put_xml (fp, value);
  fputc ('"', fp);
}

static void
put_description (FILE *fp, const char *text)
{
  fputs ("<DESCRIPTION>", fp);
  sky_put_xml (fp, text);
  fputs ("</DESCRIPTION>", fp);
}

static void
put_param (FILE *fp, const SkyMeta *m)
{
  fputs ("   <PARAM", fp);
  put_attribute (fp, "name", m->key);
  if (m->type == SKY_TYPE_STRING)
    fputs (" datatype=\"char\" arraysize=\"*\"", fp);
  else
    fprintf (fp, " datatype=\"%s\"",
             m->is_bool ? "boolean" : m->type == SKY_TYPE_INT ? "long" : "double");
  put_attribute (fp, "unit", m->unit);
  put_attribute (fp, "value", m->is_bool ? (m->text[0] == '1' ? "T" : "F") : m->text);
  fputc ('>', fp);
  put_description (fp, m->description);
  fputs ("</PARAM>\n", fp);
}

int
sky_export_votable (const char *path, const SkyExport *ex)
{
  SkyColumn cols[SKY_MAX_COLUMNS];
  SkyMeta meta[SKY_MAX_META];
  int ncols = sky_export_columns (ex, cols);
  int nmeta = sky_export_meta (ex, meta);
  const char *system = NULL;
  char equinox[32] = "", cell[128];
  int has_coosys = ex->wcs != NULL && coosys (ex->wcs, &system, equinox, sizeof equinox);
  SkyOutput out;
  int ret = sky_output_open (&out, path);

  if (ret != SKY_OK)
    return ret;
  fputs ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<VOTABLE version=\"1.4\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n"
         "  xmlns=\"http://www.ivoa.net/xml/VOTable/v1.3\"\n"
         "  xsi:schemaLocation=\"http://www.ivoa.net/xml/VOTable/v1.3 "
         "http://www.ivoa.net/xml/VOTable/v1.4\">\n"
         " <RESOURCE type=\"results\">\n  ", out.fp);
  put_description (out.fp, "Sources found by skysift: kappa-sigma clipped background, "
                           "pixels above a threshold, connected pixels labelled and measured");
  fputc ('\n', out.fp);
  if (has_coosys)
    {
      fputs ("  <COOSYS ID=\"skysift_frame\"", out.fp);
      put_attribute (out.fp, "system", system);
      put_attribute (out.fp, "equinox", equinox);
      fputs ("/>\n", out.fp);
    }
  fprintf (out.fp, "  <TABLE name=\"sources\" nrows=\"%lld\">\n",
           (long long) ex->result->catalogue.n);
  for (int k = 0; k < nmeta; k++)
    put_param (out.fp, &meta[k]);
  for (int c = 0; c < ncols; c++)
    {
      fputs ("   <FIELD", out.fp);
      put_attribute (out.fp, "name", cols[c].name);
      put_attribute (out.fp, "ID", cols[c].name);
      fprintf (out.fp, " datatype=\"%s\"", votable_datatype (cols[c].type));
      if (cols[c].type == SKY_TYPE_STRING)
        fputs (" arraysize=\"*\"", out.fp);
      /* VOUnit spells astropy's pix as pixel. */
      put_attribute (out.fp, "unit", strcmp (cols[c].unit, "pix") == 0 ? "pixel" : cols[c].unit);
      put_attribute (out.fp, "ucd", cols[c].ucd);
      if (has_coosys && (cols[c].id == SKY_COL_LNG || cols[c].id == SKY_COL_LAT))
        fputs (" ref=\"skysift_frame\"", out.fp);
      fputc ('>', out.fp);
      put_description (out.fp, cols[c].description);
      fputs ("</FIELD>\n", out.fp);
    }
  fputs ("   <DATA><TABLEDATA>\n", out.fp);
  for (int64_t i = 0; i < ex->result->catalogue.n; i++)
    {
      fputs ("    <TR>", out.fp);
      for (int c = 0; c < ncols; c++)
        {
          sky_export_cell (ex, &cols[c], i, cell, sizeof cell);
          fputs ("<TD>", out.fp);
          sky_put_xml (out.fp, cell);
          fputs ("</TD>", out.fp);
        }
      fputs ("</TR>\n", out.fp);
    }
  fputs ("   </TABLEDATA></DATA>\n  </TABLE>\n </RESOURCE>\n</VOTABLE>\n", out.fp);
  return sky_output_close (&out);
}

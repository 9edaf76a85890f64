/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The source table's filter (sky-source-filter.h). */
#include "sky-source-filter.h"
#include "sky-ui-error.h"

#include <math.h>
#include <string.h>

void
sky_source_filter_init (SkySourceFilter *filter)
{
  filter->min_area = 0;
  filter->min_snr = 0;
  filter->min_flux = -INFINITY;
  filter->no_edge = FALSE;
  filter->no_flags = FALSE;
}

gboolean
sky_source_filter_is_empty (const SkySourceFilter *filter)
{
  return filter->min_area <= 1 && !(filter->min_snr > 0) && filter->min_flux == -INFINITY
         && !filter->no_edge && !filter->no_flags;
}

static gboolean
on_edge (const SkyRun *run, gint64 i)
{
  const SkyCatalogue *cat = &run->catalogue;
  return cat->xmin[i] == 0 || cat->ymin[i] == 0 || cat->xmax[i] == run->image->image.nx - 1
         || cat->ymax[i] == run->image->image.ny - 1;
}

gboolean
sky_source_filter_passes (const SkySourceFilter *filter, const SkyRun *run, gint64 i)
{
  const SkyCatalogue *cat = &run->catalogue;
  double noise = cat->rms ? cat->rms[i] : run->stats.sigma;

  if (cat->npix[i] < filter->min_area || cat->sum[i] < filter->min_flux)
    return FALSE;
  if (filter->min_snr > 0 && !(cat->peak[i] / noise >= filter->min_snr))
    return FALSE;
  if (filter->no_edge && on_edge (run, i))
    return FALSE;
  if (filter->no_flags && ((cat->flags && cat->flags[i] != 0) || on_edge (run, i)))
    return FALSE;
  return TRUE;
}

static gboolean
parse_bool (const char *value, gboolean *out)
{
  if (g_str_equal (value, "on") || g_str_equal (value, "true") || g_str_equal (value, "1"))
    *out = TRUE;
  else if (g_str_equal (value, "off") || g_str_equal (value, "false") || g_str_equal (value, "0"))
    *out = FALSE;
  else
    return FALSE;
  return TRUE;
}

gboolean
sky_source_filter_parse (SkySourceFilter *filter, const char *text, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  SkySourceFilter f;

  sky_source_filter_init (&f);
  if (parts[0] != NULL && parts[1] == NULL && g_str_equal (g_strstrip (parts[0]), "none"))
    {
      *filter = f;
      return TRUE;
    }
  for (int i = 0; parts[i]; i++)
    {
      char *part = g_strstrip (parts[i]), *eq = strchr (part, '='), *end;
      const char *key = part, *value;
      gboolean keep_out, ok;
      double v;

      if (*part == '\0')
        continue;
      if (eq == NULL)
        goto bad;
      *eq = '\0';
      value = eq + 1;
      v = g_ascii_strtod (value, &end);
      ok = end != value && *end == '\0' && isfinite (v);
      if (g_str_equal (key, "area") && ok && v >= 0 && v <= G_MAXINT64 / 2)
        f.min_area = (gint64) ceil (v);
      else if (g_str_equal (key, "snr") && ok && v >= 0)
        f.min_snr = v;
      else if (g_str_equal (key, "flux") && ok)
        f.min_flux = v;
      else if (g_str_equal (key, "edge") && parse_bool (value, &keep_out))
        f.no_edge = !keep_out;
      else if (g_str_equal (key, "flags") && parse_bool (value, &keep_out))
        f.no_flags = !keep_out;
      else
        {
          *eq = '=';
          goto bad;
        }
      continue;
    bad:
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_ARGUMENT,
                   "“%s” is not area=PIXELS, snr=N, flux=SUM, edge=on|off or flags=on|off",
                   part);
      return FALSE;
    }
  *filter = f;
  return TRUE;
}

char *
sky_source_filter_to_string (const SkySourceFilter *filter)
{
  GString *out = g_string_new (NULL);
  char num[G_ASCII_DTOSTR_BUF_SIZE];

  if (filter->min_area > 1)
    g_string_append_printf (out, ",area=%" G_GINT64_FORMAT, filter->min_area);
  if (filter->min_snr > 0)
    g_string_append_printf (out, ",snr=%s", g_ascii_dtostr (num, sizeof num, filter->min_snr));
  if (filter->min_flux > -INFINITY)
    g_string_append_printf (out, ",flux=%s", g_ascii_dtostr (num, sizeof num, filter->min_flux));
  if (filter->no_edge)
    g_string_append (out, ",edge=off");
  if (filter->no_flags)
    g_string_append (out, ",flags=off");
  if (out->len == 0)
    g_string_append (out, ",none");
  {
    char *text = g_strdup (out->str + 1);   /* past the first comma */
    g_string_free (out, TRUE);
    return text;
  }
}

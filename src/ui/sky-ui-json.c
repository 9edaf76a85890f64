/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sky-ui-json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sky-core.h"

void
sky_ui_json_string (GString *out, const char *s)
{
  char *text = NULL;
  size_t size = 0;
  FILE *fp = open_memstream (&text, &size);

  if (fp != NULL)
    {
      sky_put_quoted (fp, s);
      fclose (fp);
    }
  g_string_append (out, text != NULL ? text : "\"\"");
  free (text);
}

void
sky_ui_json_number (GString *out, double v)
{
  if (isfinite (v))
    g_string_append_printf (out, "%.17g", v);
  else
    g_string_append (out, "null");
}

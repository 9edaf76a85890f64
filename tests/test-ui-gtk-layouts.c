/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Counts the text layouts that GTK measures, by the start of their text:
 * how many times a label's text is laid out (shaped, broken into lines)
 * is what its size costs the main loop. GtkLabel measures through
 * pango_layout_get_size; this program defines that function, so the
 * toolkit's calls come here first and go on to Pango's. */
#include <dlfcn.h>

#include "test-ui-gtk.h"

static char *counted_prefix;
static guint counted;
static guint seen;

void
pango_layout_get_size (PangoLayout *layout, int *width, int *height)
{
  static void (*pango_get_size) (PangoLayout *, int *, int *);

  if (pango_get_size == NULL)
    pango_get_size = (void (*) (PangoLayout *, int *, int *)) dlsym (RTLD_NEXT,
                                                                     "pango_layout_get_size");
  seen++;
  if (counted_prefix != NULL && g_str_has_prefix (pango_layout_get_text (layout), counted_prefix))
    counted++;
  pango_get_size (layout, width, height);
}

/* From now on, counts the layouts measured whose text starts with prefix. */
void
layouts_count_start (const char *prefix)
{
  g_free (counted_prefix);
  counted_prefix = g_strdup (prefix);
  counted = 0;
  seen = 0;
}

/* How many were counted since layouts_count_start; fails the test where
 * no layout at all came here (the toolkit measuring text another way: the
 * count would say nothing). */
guint
layouts_count_stop (void)
{
  g_clear_pointer (&counted_prefix, g_free);
  if (seen == 0)
    g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC,
                         "no text layout was measured through pango_layout_get_size: "
                         "the count cannot see this toolkit's labels");
  return counted;
}

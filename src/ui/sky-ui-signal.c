/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The app's signals: all of one kind, declared in one line each. */
#include "sky-ui-signal.h"

guint
sky_ui_signal_new (gpointer klass, const char *name, guint n_params, ...)
{
  va_list params;
  guint id;

  va_start (params, n_params);
  id = g_signal_new_valist (name, G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, NULL, NULL, NULL,
                            NULL, G_TYPE_NONE, n_params, params);
  va_end (params);
  return id;
}

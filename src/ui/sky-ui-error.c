/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The app's GError domain and its codes from the core's statuses. */
#include "sky-ui-error.h"

G_DEFINE_QUARK (sky-ui-error-quark, sky_ui_error)

SkyUiError
sky_ui_error_from_status (int status)
{
  if (status >= SKY_ERR_IO && status <= SKY_ERR_CANCELLED)
    return (SkyUiError) status;
  return SKY_UI_ERROR_FAILED;
}

GError *
sky_ui_error_new_from_status (int status)
{
  return g_error_new_literal (SKY_UI_ERROR, sky_ui_error_from_status (status), sky_last_error ());
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-contour-dialog.h: contour levels as a person types them; Enter or
 * Apply emits levels-chosen with the text, which the window reads as
 * app.contours does. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SKY_TYPE_CONTOUR_DIALOG (sky_contour_dialog_get_type ())
G_DECLARE_FINAL_TYPE (SkyContourDialog, sky_contour_dialog, SKY, CONTOUR_DIALOG, GtkWindow)

SkyContourDialog *sky_contour_dialog_new (GtkWindow *parent);
/* The entry, and what it holds when the dialog opens. */
GtkEntry *sky_contour_dialog_get_entry (SkyContourDialog *self);
void sky_contour_dialog_set_text (SkyContourDialog *self, const char *text);

G_END_DECLS

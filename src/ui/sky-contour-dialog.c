/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyContourDialog: an entry for contour levels. It only passes the text
 * on: reading it, and refusing what it cannot read, is the window's. */
#include "sky-contour-dialog.h"
#include "sky-ui-signal.h"

struct _SkyContourDialog {
  GtkWindow parent_instance;
  GtkEntry *entry;
};

G_DEFINE_FINAL_TYPE (SkyContourDialog, sky_contour_dialog, GTK_TYPE_WINDOW)

enum { LEVELS_CHOSEN, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
choose (SkyContourDialog *self)
{
  g_signal_emit (self, signals[LEVELS_CHOSEN], 0, gtk_editable_get_text (GTK_EDITABLE (self->entry)));
}

static void
on_entry_activate (GtkEntry *entry, SkyContourDialog *self)
{
  choose (self);
}

static void
on_apply_clicked (GtkButton *button, SkyContourDialog *self)
{
  choose (self);
}

GtkEntry *
sky_contour_dialog_get_entry (SkyContourDialog *self)
{
  return self->entry;
}

void
sky_contour_dialog_set_text (SkyContourDialog *self, const char *text)
{
  gtk_editable_set_text (GTK_EDITABLE (self->entry), text);
}

static void
sky_contour_dialog_class_init (SkyContourDialogClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/skysift/SkySift/ui/sky-contour-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, SkyContourDialog, entry);
  gtk_widget_class_bind_template_callback (widget_class, on_entry_activate);
  gtk_widget_class_bind_template_callback (widget_class, on_apply_clicked);

  /* (text): the levels as typed. */
  signals[LEVELS_CHOSEN] = sky_ui_signal_new (klass, "levels-chosen", 1, G_TYPE_STRING);
}

static void
sky_contour_dialog_init (SkyContourDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

SkyContourDialog *
sky_contour_dialog_new (GtkWindow *parent)
{
  return g_object_new (SKY_TYPE_CONTOUR_DIALOG, "transient-for", parent, "destroy-with-parent",
                       TRUE, NULL);
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The window menu's Frames submenu (as DS9's Frame menu) and its one
 * window action, opening an image into a new frame. */
#include "sky-window-private.h"
#include "sky-window-frames.h"

static void
on_frame_open (GSimpleAction *action, GVariant *param, gpointer self)
{
  sky_window_open_dialog_into (self, TRUE);
}

static GtkWidget *
find_menu_button (GtkWidget *widget)
{
  if (GTK_IS_MENU_BUTTON (widget))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_menu_button (c);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static void
menu_item (GMenu *menu, const char *label, const char *action)
{
  g_menu_append (menu, label, action);
}

/* A Frames submenu in the window's menu, after its first section (the
 * files), as DS9's Frame menu. */
void
sky_window_frames_add_menu (SkyWindow *self)
{
  GtkWidget *titlebar = gtk_window_get_titlebar (GTK_WINDOW (self));
  GtkWidget *button = titlebar ? find_menu_button (titlebar) : NULL;
  GMenuModel *model = button ? gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (button)) : NULL;
  g_autoptr (GMenu) frames = g_menu_new ();
  g_autoptr (GMenu) files = g_menu_new ();
  g_autoptr (GMenu) modes = g_menu_new ();
  g_autoptr (GMenu) locks = g_menu_new ();
  g_autoptr (GMenu) cube = g_menu_new ();
  g_autoptr (GMenu) section = g_menu_new ();
  GSimpleAction *open = g_simple_action_new ("frame-open", NULL);

  g_signal_connect (open, "activate", G_CALLBACK (on_frame_open), self);
  g_action_map_add_action (G_ACTION_MAP (self), G_ACTION (open));
  g_object_unref (open);
  if (!G_IS_MENU (model))
    return;
  menu_item (files, "Open in a _New Frame…", "win.frame-open");
  menu_item (files, "_Delete the Frame", "app.frame-delete");
  menu_item (files, "Ne_xt Frame", "app.frame-next");
  menu_item (files, "_Previous Frame", "app.frame-previous");
  menu_item (modes, "_Single", "app.frame-mode::single");
  menu_item (modes, "_Tile", "app.frame-mode::tile");
  menu_item (modes, "_Blink", "app.frame-mode::blink");
  menu_item (locks, "Lock _None", "app.frame-lock::none");
  menu_item (locks, "Lock on _Image Pixels", "app.frame-lock::image");
  menu_item (locks, "Lock on the Sky (_WCS)", "app.frame-lock::wcs");
  menu_item (cube, "_Play the Cube", "app.cube-play-toggle");
  g_menu_append_section (frames, NULL, G_MENU_MODEL (files));
  g_menu_append_section (frames, "Show", G_MENU_MODEL (modes));
  g_menu_append_section (frames, "Lock", G_MENU_MODEL (locks));
  g_menu_append_section (frames, NULL, G_MENU_MODEL (cube));
  g_menu_append_submenu (section, "_Frames", G_MENU_MODEL (frames));
  g_menu_insert_section (G_MENU (model), 1, NULL, G_MENU_MODEL (section));
}


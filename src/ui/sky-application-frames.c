/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The application's actions for frames and the cube animator, on D-Bus
 * with the others (org.gtk.Actions), each with its state:
 *   frame-new (s)        opens PATH (or PATH[HDU], PATH[HDU,PLANE], as app.open
 *                        reads it) into a new frame, which becomes current;
 *                        state: the number of frames
 *   frame (i)            makes frame N (from 1) current; state: the current one
 *   frame-next, frame-previous, frame-delete
 *   frame-mode (s)       single, tile or blink; state: the mode
 *   blink-interval (d)   seconds between blinks
 *   frame-lock (s)       none, image or wcs; state: the lock
 *   cube-play (b)        play or pause the current frame's cube
 *   cube-interval (d)    seconds between planes while playing
 *   cube-step (i)        +1 the next plane, -1 the previous (wrapping)
 * The planes themselves are app.plane's. */
#include "sky-application.h"
#include "sky-window.h"
#include "sky-window-frames.h"
#include "sky-window-script.h"

static SkyWindow *
window_of (gpointer app)
{
  return SKY_WINDOW (sky_application_get_window (SKY_APPLICATION (app)));
}

static void
action_frame_new (GSimpleAction *action, GVariant *param, gpointer app)
{
  SkyWindow *window = window_of (app);
  g_autofree char *path = NULL;
  gint64 plane;
  int hdu;

  /* The path as app.open reads it. */
  sky_application_split_path (g_variant_get_string (param, NULL), &path, &hdu, &plane);
  sky_window_frame_new (window, path, hdu, plane);
  gtk_window_present (GTK_WINDOW (window));
}

static void
action_frame (GSimpleAction *action, GVariant *param, gpointer app)
{
  const char *name = g_action_get_name (G_ACTION (action));
  SkyWindow *window = window_of (app);

  if (g_str_equal (name, "frame"))
    sky_window_frame_switch (window, g_variant_get_int32 (param));
  else if (g_str_equal (name, "frame-next"))
    sky_window_frame_step (window, 1);
  else if (g_str_equal (name, "frame-previous"))
    sky_window_frame_step (window, -1);
  else if (g_str_equal (name, "frame-delete"))
    sky_window_frame_delete (window);
  else if (g_str_equal (name, "frame-mode"))
    sky_window_set_frame_mode (window, g_variant_get_string (param, NULL));
  else if (g_str_equal (name, "frame-lock"))
    sky_window_set_frame_lock (window, g_variant_get_string (param, NULL));
  else if (g_str_equal (name, "blink-interval"))
    sky_window_set_blink_interval (window, g_variant_get_double (param));
  else if (g_str_equal (name, "cube-play"))
    sky_window_set_cube_play (window, g_variant_get_boolean (param));
  else if (g_str_equal (name, "cube-interval"))
    sky_window_set_cube_interval (window, g_variant_get_double (param));
  else if (g_str_equal (name, "cube-step"))
    sky_window_cube_step (window, g_variant_get_int32 (param));
  else
    g_assert_not_reached ();
}

/* A boolean action toggled from a menu's check item has no parameter. */
static void
action_toggle (GSimpleAction *action, GVariant *param, gpointer app)
{
  g_autoptr (GVariant) state = g_action_get_state (G_ACTION (action));
  g_autoptr (GVariant) flipped = g_variant_ref_sink (
    g_variant_new_boolean (!g_variant_get_boolean (state)));

  g_action_activate (G_ACTION (action), flipped);
}

static const GActionEntry frame_actions[] = {
  { "frame-new", action_frame_new, "s", "0", NULL },
  { "frame", action_frame, "i", "0", NULL },
  { "frame-next", action_frame, NULL, NULL, NULL },
  { "frame-previous", action_frame, NULL, NULL, NULL },
  { "frame-delete", action_frame, NULL, NULL, NULL },
  { "frame-mode", action_frame, "s", "'single'", NULL },
  { "blink-interval", action_frame, "d", "0.5", NULL },
  { "frame-lock", action_frame, "s", "'none'", NULL },
  { "cube-play", action_frame, "b", "false", NULL },
  { "cube-interval", action_frame, "d", "0.5", NULL },
  { "cube-step", action_frame, "i", NULL, NULL },
};

void
sky_application_frames_add_actions (SkyApplication *self)
{
  GSimpleAction *toggle;

  g_action_map_add_action_entries (G_ACTION_MAP (self), frame_actions,
                                   G_N_ELEMENTS (frame_actions), self);
  /* The menu's check item for the player. */
  toggle = g_simple_action_new ("cube-play-toggle", NULL);
  g_signal_connect_swapped (toggle, "activate", G_CALLBACK (action_toggle),
                            g_action_map_lookup_action (G_ACTION_MAP (self), "cube-play"));
  g_action_map_add_action (G_ACTION_MAP (self), G_ACTION (toggle));
  g_object_unref (toggle);
}

static void
sync_state (SkyApplication *self, const char *name, GVariant *state)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), name);
  g_autoptr (GVariant) sunk = g_variant_ref_sink (state);
  g_autoptr (GVariant) old = g_action_get_state (action);

  if (old == NULL || !g_variant_equal (old, sunk))
    g_simple_action_set_state (G_SIMPLE_ACTION (action), sunk);
}

void
sky_application_frames_sync (SkyApplication *self, GtkWindow *window)
{
  SkyWindow *w = SKY_WINDOW (window);

  sync_state (self, "frame-new", g_variant_new_int32 (sky_window_get_frame_count (w)));
  sync_state (self, "frame", g_variant_new_int32 (sky_window_get_frame (w)));
  sync_state (self, "frame-mode", g_variant_new_string (sky_window_get_frame_mode (w)));
  sync_state (self, "frame-lock", g_variant_new_string (sky_window_get_frame_lock (w)));
  sync_state (self, "blink-interval", g_variant_new_double (sky_window_get_blink_interval (w)));
  sync_state (self, "cube-play", g_variant_new_boolean (sky_window_get_cube_play (w)));
  sync_state (self, "cube-interval", g_variant_new_double (sky_window_get_cube_interval (w)));
}

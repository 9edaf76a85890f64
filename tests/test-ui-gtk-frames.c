/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The widget tests of frames and the cube animator, through the widgets a
 * person uses: the menu's Frames submenu, a click on a tile, the
 * animator's buttons and slider; and the window menu's items, each one
 * usable. */
#include "test-ui-gtk.h"
#include "sky-window-frames.h"

/* Whether model (or a section or submenu in it) has an item for action. */
static gboolean
menu_has_action (GMenuModel *model, const char *action)
{
  for (int i = 0; i < g_menu_model_get_n_items (model); i++)
    {
      g_autofree char *name = NULL;
      g_autoptr (GMenuLinkIter) links = g_menu_model_iterate_item_links (model, i);
      GMenuModel *linked;

      if (g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_ACTION, "s", &name)
          && g_str_equal (name, action))
        return TRUE;
      while (g_menu_link_iter_get_next (links, NULL, &linked))
        {
          gboolean found = menu_has_action (linked, action);
          g_object_unref (linked);
          if (found)
            return TRUE;
        }
    }
  return FALSE;
}

static GtkWidget *
find_menu_button (GtkWidget *widget)
{
  if (GTK_IS_MENU_BUTTON (widget))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_menu_button (c);
      if (found)
        return found;
    }
  return NULL;
}

/* Whether the window has the action name ("win.…": in its action map or
 * installed by its class), and its parameter type. */
static gboolean
window_action (GtkWidget *window, const char *name, const GVariantType **parameter)
{
  GtkWidgetClass *klass = GTK_WIDGET_GET_CLASS (window);
  const char *installed, *property;
  GType owner;

  if (G_IS_ACTION_GROUP (window)
      && g_action_group_has_action (G_ACTION_GROUP (window), name + strlen ("win.")))
    {
      g_assert_true (g_action_group_get_action_enabled (G_ACTION_GROUP (window),
                                                        name + strlen ("win.")));
      *parameter = g_action_group_get_action_parameter_type (G_ACTION_GROUP (window),
                                                             name + strlen ("win."));
      return TRUE;
    }
  /* GTK 4.8 writes every out argument: none may be NULL. */
  for (guint i = 0;
       gtk_widget_class_query_action (klass, i, &owner, &installed, parameter, &property); i++)
    if (g_str_equal (installed, name))
      return TRUE;
  return FALSE;
}

/* Fails, naming the item, where an item of model would be greyed out or
 * would not work: its action missing or disabled, or a target that does not
 * fit the action's parameter (GTK disables an item for an action with a
 * parameter but no target). */
static void
check_menu_items (GMenuModel *model, GtkWidget *window)
{
  for (int i = 0; i < g_menu_model_get_n_items (model); i++)
    {
      g_autofree char *name = NULL;
      g_autofree char *label = NULL;
      g_autoptr (GVariant) target = NULL;
      g_autoptr (GMenuLinkIter) links = g_menu_model_iterate_item_links (model, i);
      GMenuModel *linked;

      g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_LABEL, "s", &label);
      if (g_menu_model_get_item_attribute (model, i, G_MENU_ATTRIBUTE_ACTION, "s", &name))
        {
          const GVariantType *parameter = NULL;

          if (g_str_has_prefix (name, "app."))
            {
              const char *bare = name + strlen ("app.");

              if (!g_action_group_has_action (G_ACTION_GROUP (app), bare))
                g_error ("menu item “%s”: no action %s", label, name);
              if (!g_action_group_get_action_enabled (G_ACTION_GROUP (app), bare))
                g_error ("menu item “%s”: %s is disabled", label, name);
              parameter = g_action_group_get_action_parameter_type (G_ACTION_GROUP (app), bare);
            }
          else if (!window_action (window, name, &parameter))
            g_error ("menu item “%s”: no action %s", label, name);
          target = g_menu_model_get_item_attribute_value (model, i, G_MENU_ATTRIBUTE_TARGET, NULL);
          if (target == NULL && parameter != NULL)
            g_error ("menu item “%s”: %s takes a %s but the item has no target", label, name,
                     g_variant_type_peek_string (parameter));
          if (target != NULL && (parameter == NULL || !g_variant_is_of_type (target, parameter)))
            g_error ("menu item “%s”: its target %s does not fit %s", label,
                     g_variant_get_type_string (target), name);
        }
      while (g_menu_link_iter_get_next (links, NULL, &linked))
        {
          check_menu_items (linked, window);
          g_object_unref (linked);
        }
    }
}

/* Activates the menu's check item for setting (app.toggle-SETTING) twice:
 * each time the setting's script action and the check item's state flip
 * together. */
static void
check_toggle (Fixture *f, GMenuModel *model, const char *setting)
{
  g_autofree char *toggle = g_strconcat ("toggle-", setting, NULL);
  g_autofree char *item = g_strconcat ("app.", toggle, NULL);

  g_assert_true (menu_has_action (model, item));
  for (int round = 0; round < 2; round++)
    {
      g_autoptr (GVariant) before = g_action_group_get_action_state (G_ACTION_GROUP (app), setting);
      g_autoptr (GVariant) shown = NULL;
      g_autoptr (GVariant) checked = NULL;

      activate (toggle, NULL);
      wait_idle (f, toggle);
      shown = g_action_group_get_action_state (G_ACTION_GROUP (app), setting);
      checked = g_action_group_get_action_state (G_ACTION_GROUP (app), toggle);
      g_assert_cmpint (g_variant_get_boolean (shown), ==, !g_variant_get_boolean (before));
      g_assert_cmpint (g_variant_get_boolean (checked), ==, g_variant_get_boolean (shown));
    }
}

static GMenuModel *
window_menu (Fixture *f)
{
  GtkWidget *button;
  GMenuModel *model;

  open_image (f, &field);
  button = find_menu_button (gtk_window_get_titlebar (GTK_WINDOW (f->window)));
  g_assert_nonnull (button);
  model = gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (button));
  g_assert_nonnull (model);
  return model;
}

/* Every item of the window menu can be used (no item greyed out by a
 * parameter it lacks), and the View section's check items toggle the grid
 * and the magnifier as their script actions do. */
void
test_menu_actions (Fixture *f)
{
  GMenuModel *model = window_menu (f);

  check_menu_items (model, GTK_WIDGET (f->window));
  check_toggle (f, model, "grid");
  check_toggle (f, model, "magnifier");
}

/* The View menu's Scale and Histogram check item. In a case of its own:
 * a window that showed both the magnifier and the scale dialog, once
 * destroyed, makes GTK 4.8 warn about a dead window when the next main
 * window of the same process opens (the app quits with its main window,
 * so only these tests open a second one). */
void
test_menu_scale_toggle (Fixture *f)
{
  check_toggle (f, window_menu (f), "scale-dialog");
}

/* The view in the frames' grid that is not the window's own (frame 1's,
 * with frame 2 current and two frames tiled). */
static GtkWidget *
other_tile (Fixture *f)
{
  GtkWidget *grid = gtk_widget_get_parent (GTK_WIDGET (f->view));

  for (GtkWidget *c = gtk_widget_get_first_child (grid); c; c = gtk_widget_get_next_sibling (c))
    if (SKY_IS_IMAGE_VIEW (c) && c != GTK_WIDGET (f->view) && gtk_widget_get_visible (c))
      return c;
  return NULL;
}

static void
click_widget (GtkWidget *widget)
{
  GListModel *controllers = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) c = g_list_model_get_item (controllers, i);
      if (GTK_IS_GESTURE_CLICK (c))
        {
          g_signal_emit_by_name (c, "pressed", 1, 10.0, 10.0);
          g_signal_emit_by_name (c, "released", 1, 10.0, 10.0);
          g_object_unref (controllers);
          return;
        }
    }
  g_object_unref (controllers);
  g_error ("the tile has no click gesture");
}

static gboolean
frame_one_current (gpointer window)
{
  return sky_window_get_frame (window) == 1;
}

void
test_frames_menu_tiles (Fixture *f)
{
  GtkWidget *button, *tile;
  GMenuModel *model;
  Picture *pic;
  g_autofree char *json = NULL;

  open_image (f, &field);
  button = find_menu_button (gtk_window_get_titlebar (GTK_WINDOW (f->window)));
  g_assert_nonnull (button);
  model = gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (button));
  for (const char *const *a = (const char *const[]) { "win.frame-open", "app.frame-delete",
                                                      "app.frame-next", "app.frame-previous",
                                                      "app.frame-mode", "app.frame-lock",
                                                      "app.cube-play-toggle", NULL }; *a; a++)
    if (!menu_has_action (model, *a))
      g_error ("the window menu has no item for %s", *a);
  g_assert_true (g_action_group_has_action (G_ACTION_GROUP (f->window), "frame-open"));

  sky_window_frame_new (f->window, orient_west.path, 0, 0);
  wait_idle (f, "a second frame");
  g_assert_cmpint (sky_window_get_frame_count (f->window), ==, 2);
  g_assert_cmpint (sky_window_get_frame (f->window), ==, 2);
  g_assert_nonnull (strstr (gtk_label_get_text (f->window->subtitle_label), "frame 2 of 2"));
  g_assert_null (other_tile (f));   /* single: only the current frame's view */

  g_assert_true (sky_window_set_frame_mode (f->window, "tile"));
  wait_frames (f);
  tile = other_tile (f);
  g_assert_nonnull (tile);
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (f->view), "current-frame"));
  /* Side by side, the same size. */
  g_assert_cmpint (gtk_widget_get_width (tile), ==, gtk_widget_get_width (GTK_WIDGET (f->view)));
  g_assert_cmpint (gtk_widget_get_width (tile) * 2, <=,
                   gtk_widget_get_width (gtk_widget_get_parent (tile)));
  /* The window's view draws frame 2 (orient_west: its bright pixel). */
  pic = render_view (f);
  picture_free (pic);
  /* The readout follows the pointer over frame 1's tile: its pixel, and
   * the frame named. */
  g_signal_emit_by_name (tile, "pointer-moved", TRUE, 40.5, 60.5);
  {
    const char *readout = gtk_label_get_text (f->window->readout_label);
    if (strstr (readout, "x    41  y    61 (FITS, from 1)") == NULL
        || strstr (readout, "(frame 1)") == NULL)
      g_error ("the readout over frame 1's tile says: %s", readout);
  }
  g_signal_emit_by_name (tile, "pointer-moved", FALSE, 0.0, 0.0);
  g_assert_cmpstr (gtk_label_get_text (f->window->readout_label), ==, "");

  /* A click on frame 1's tile makes it current, its image the window's. */
  click_widget (tile);
  iterate_until (frame_one_current, f->window, "frame 1 made current by a click");
  wait_idle (f, "frame 1 shown");
  g_assert_cmpint (sky_window_get_frame (f->window), ==, 1);
  g_assert_cmpstr (sky_window_get_image_path (f->window), ==, field.path);
  json = state_json ();
  g_assert_nonnull (strstr (json, "\"current\": 1"));
  g_assert_true (sky_window_set_frame_mode (f->window, "single"));
  wait_frames (f);
  g_assert_null (other_tile (f));
}

void
test_cube_animator (Fixture *f)
{
  Image cube = { write_cube ("cube-animator.fits", 40, 30, 4), 40, 30 };
  GtkWidget *overlay, *bar, *forward = NULL, *slider = NULL;
  GtkLabel *label = NULL;
  int buttons = 0;

  open_image (f, &field);
  overlay = gtk_widget_get_parent (gtk_widget_get_parent (GTK_WIDGET (f->view)));
  bar = gtk_widget_get_next_sibling (overlay);
  g_assert_nonnull (bar);
  g_assert_false (gtk_widget_get_visible (bar));   /* no cube, no animator */

  open_image (f, &cube);
  g_assert_true (gtk_widget_get_visible (bar));
  for (GtkWidget *c = gtk_widget_get_first_child (bar); c; c = gtk_widget_get_next_sibling (c))
    {
      if (GTK_IS_BUTTON (c) && !GTK_IS_TOGGLE_BUTTON (c) && ++buttons == 2)
        forward = c;
      if (GTK_IS_SCALE (c))
        slider = c;
      if (GTK_IS_LABEL (c))
        label = GTK_LABEL (c);
    }
  g_assert_nonnull (forward);
  g_assert_nonnull (slider);
  g_assert_nonnull (label);

  g_signal_emit_by_name (forward, "clicked");
  wait_idle (f, "the next plane");
  g_assert_cmpfloat (state_number ("plane"), ==, 1);
  g_assert_cmpfloat (gtk_range_get_value (GTK_RANGE (slider)), ==, 1);
  gtk_range_set_value (GTK_RANGE (slider), 3);
  wait_idle (f, "plane 3 from the slider");
  g_assert_cmpfloat (state_number ("plane"), ==, 3);
  g_assert_cmpfloat (gtk_spin_button_get_value (f->window->plane_spin), ==, 3);
  /* The cube has no WCS on its third axis: the label says the plane alone. */
  g_assert_cmpstr (gtk_label_get_text (label), ==, "Plane 3 of 0–3");
  g_signal_emit_by_name (forward, "clicked");
  wait_idle (f, "the next plane wraps");
  g_assert_cmpfloat (state_number ("plane"), ==, 0);

  open_image (f, &field);
  g_assert_false (gtk_widget_get_visible (bar));
  g_free (cube.path);
}

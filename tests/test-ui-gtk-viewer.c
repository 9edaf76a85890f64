/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The viewer's tools, driven through their actions: the header window
 * (every card, searched, copied), catalogues and region files over the
 * image and their cross-match with the sources (the truth list of the
 * GC-like field counted as score_catalogue.py counts it). */
#include "test-ui-gtk.h"

#include <stdarg.h>

/* The window's state JSON's value for key inside the overlays array's
 * entry k (0-based), as a number. */
static double
overlay_number (int k, const char *key)
{
  g_autofree char *json = state_json ();
  const char *at = state_field (json, "overlays");
  g_autofree char *needle = g_strdup_printf ("\"%s\": ", key);

  for (int i = 0; i <= k; i++)
    {
      at = strstr (at, i == 0 ? "{" : "}, {");
      if (at == NULL)
        g_error ("no overlay %d in %s", k, json);
      at++;
    }
  at = strstr (at, needle);
  if (at == NULL)
    g_error ("no %s in overlay %d of %s", key, k, json);
  return g_ascii_strtod (at + strlen (needle), NULL);
}

static gboolean
header_has_text (gpointer data)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (app), "header");
  return strstr (g_variant_get_string (state, NULL), data) != NULL;
}

static gboolean
count_header_frame (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  return --*(int *) data > 0 ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static gboolean
header_frames_done (gpointer data)
{
  return *(int *) data <= 0;
}

static GtkWidget *
find_button (GtkWidget *root, const char *label)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w; w = gtk_widget_get_next_sibling (w))
    {
      GtkWidget *found;
      if (GTK_IS_BUTTON (w) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (w)), label) == 0)
        return w;
      if ((found = find_button (w, label)) != NULL)
        return found;
    }
  return NULL;
}

/* app.header opens the window with every card of the HDU, the action's
 * state is the header; a search keeps the cards that hold it (any case),
 * highlighted; Copy puts the cards shown on the clipboard. */
void
test_header_window (Fixture *f)
{
  g_autoptr (GVariant) state = NULL;
  g_auto (GStrv) cards = NULL;
  g_autofree char *shown = NULL;
  GtkTextBuffer *buffer;
  GtkTextIter a, b;
  int ncards = 0, nmatch = 0;

  open_image (f, &field);
  {
    g_auto (GStrv) accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app),
                                                                   "app.header('')");
    g_assert_nonnull (accels[0]);
    g_assert_cmpstr (accels[0], ==, "<Control>h");
  }
  activate ("header", g_variant_new_string (""));
  iterate_until (header_has_text, (gpointer) "NAXIS1  =", "the header in app.header's state");
  g_assert_nonnull (f->window->header_window);
  assert_state ("header_window", "true");
  state = g_action_group_get_action_state (G_ACTION_GROUP (app), "header");
  cards = g_strsplit (g_variant_get_string (state, NULL), "\n", -1);
  for (int i = 0; cards[i] && *cards[i]; i++)
    {
      g_autofree char *folded = g_utf8_casefold (cards[i], -1);
      g_assert_cmpuint (strlen (cards[i]), <=, 80);
      ncards++;
      nmatch += strstr (folded, "naxis") != NULL;
    }
  /* Every card of the file's header is there, in order, END last. */
  {
    fitsfile *fp = NULL;
    int status = 0, nkeys = 0, more = 0;
    char card[FLEN_CARD];
    fits_open_diskfile (&fp, field.path, READONLY, &status);
    fits_get_hdrspace (fp, &nkeys, &more, &status);
    g_assert_cmpint (ncards, ==, nkeys + 1);
    for (int i = 0; i < nkeys; i++)
      {
        fits_read_record (fp, i + 1, card, &status);
        g_strchomp (card);
        g_assert_cmpstr (cards[i], ==, card);
      }
    fits_close_file (fp, &status);
    g_assert_cmpint (status, ==, 0);
  }
  g_assert_true (g_str_has_prefix (cards[ncards - 1], "END"));
  g_assert_cmpfloat (state_number ("header_shown"), ==, ncards);

  activate ("header", g_variant_new_string ("naxis"));
  iterate_until (app_idle, NULL, "the search");
  g_assert_cmpint (nmatch, >=, 3);   /* NAXIS, NAXIS1, NAXIS2 */
  g_assert_cmpfloat (state_number ("header_shown"), ==, nmatch);
  buffer = gtk_text_view_get_buffer (f->window->header_view);
  gtk_text_buffer_get_bounds (buffer, &a, &b);
  shown = gtk_text_buffer_get_text (buffer, &a, &b, FALSE);
  {
    g_auto (GStrv) lines = g_strsplit (shown, "\n", -1);
    for (int i = 0; lines[i] && *lines[i]; i++)
      g_assert_true (g_str_has_prefix (lines[i], "NAXIS"));
  }
  /* The match is highlighted: the first card's first five characters. */
  {
    GtkTextTag *tag = gtk_text_tag_table_lookup (gtk_text_buffer_get_tag_table (buffer),
                                                 "match");
    GtkTextIter at;
    gtk_text_buffer_get_iter_at_offset (buffer, &at, 2);
    g_assert_true (gtk_text_iter_has_tag (&at, tag));
    gtk_text_buffer_get_iter_at_offset (buffer, &at, 6);
    g_assert_false (gtk_text_iter_has_tag (&at, tag));
  }
  {
    int frames = 3;
    gtk_widget_add_tick_callback (f->window->header_window, count_header_frame, &frames, NULL);
    iterate_until (header_frames_done, &frames, "three frames of the header window");
  }
  save_widget_picture (f->window->header_window, "header-window.png");

  /* Another image: the window shows its header, still searched. */
  open_image (f, &orient_west);
  {
    g_autofree char *want = g_strdup_printf ("%d", ORIENT_NX);
    GtkTextIter c, d;
    g_autofree char *now = NULL;
    gtk_text_buffer_get_bounds (buffer, &c, &d);
    now = gtk_text_buffer_get_text (buffer, &c, &d, FALSE);
    g_assert_nonnull (strstr (now, "NAXIS1"));
    g_assert_nonnull (strstr (now, want));
    g_assert_cmpfloat (state_number ("header_shown"), ==, nmatch);
    g_free (shown);
    shown = g_steal_pointer (&now);
  }

  /* The clipboard holds what the window shows (its content as this
   * process offers it: under Xvfb no other client reads it back). */
  g_signal_emit_by_name (find_button (f->window->header_window, "_Copy"), "clicked");
  {
    GdkContentProvider *content =
      gdk_clipboard_get_content (gtk_widget_get_clipboard (f->window->header_window));
    GValue value = G_VALUE_INIT;
    g_autoptr (GError) error = NULL;
    g_assert_nonnull (content);
    g_value_init (&value, G_TYPE_STRING);
    g_assert_true (gdk_content_provider_get_value (content, &value, &error));
    g_assert_no_error (error);
    g_assert_cmpstr (g_value_get_string (&value), ==, shown);
    g_value_unset (&value);
  }
}

/* A path under the shared data folder, or NULL (the test skipped). */
static char *
shared_path (const char *first, ...)
{
  const char *why = NULL, *dir = sky_test_shared_data (&why);
  va_list args;
  GString *path;

  if (dir == NULL)
    {
      g_test_skip (why);
      return NULL;
    }
  path = g_string_new (dir);
  va_start (args, first);
  for (const char *part = first; part; part = va_arg (args, const char *))
    g_string_append_printf (path, "/%s", part);
  va_end (args);
  if (!g_file_test (path->str, G_FILE_TEST_EXISTS))
    {
      g_autofree char *msg = g_strdup_printf ("%s is not among the shared files", path->str);
      g_test_skip (msg);
      g_string_free (path, TRUE);
      return NULL;
    }
  return g_string_free (path, FALSE);
}

/* score_catalogue.py's JSON for the CLI's catalogue of the GC-like field
 * against its truth, radius 2 pixels. */
static char *
score_with_python (const char *image, const char *truth, const char *score)
{
  g_autofree char *csv = sky_test_tmp_path ("gc_like_cli.csv");
  g_autofree char *out = NULL, *err = NULL;
  int status;
  const char *cli = g_getenv ("SKYSIFT_CLI");
  const char *find[] = { cli, "find", image, "--csv", csv, NULL };
  const char *py[] = { "/usr/bin/python3", score, csv, truth, "--radius", "2", NULL };
  g_autoptr (GError) error = NULL;

  g_assert_nonnull (cli);
  g_assert_true (g_spawn_sync (NULL, (char **) find, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                               &err, &status, &error));
  g_assert_no_error (error);
  g_assert_cmpint (status, ==, 0);
  g_clear_pointer (&err, g_free);
  g_assert_true (g_spawn_sync (NULL, (char **) py, NULL, 0, NULL, NULL, &out, &err, &status, &error));
  g_assert_no_error (error);
  if (status != 0)
    g_error ("score_catalogue.py: %s", err);
  return g_steal_pointer (&out);
}

static double
json_number (const char *json, const char *key)
{
  g_autofree char *needle = g_strdup_printf ("\"%s\": ", key);
  const char *at = strstr (json, needle);
  g_assert_nonnull (at);
  return g_ascii_strtod (at + strlen (needle), NULL);
}

/* Counts the picture's cyan pixels (the first overlay's colour, (0, 217,
 * 255), alone or blended half with the grey under a line's edge) in the
 * square of half-side half around (x, y). */
static gboolean
cyanish (Rgb c)
{
  return c.r < 120 && c.g > 140 && c.b > 170 && c.b - c.r > 90;
}

static int
colour_near (const Picture *pic, double x, double y, int half, const int rgb[3])
{
  (void) rgb;
  int n = 0;
  for (int dy = -half; dy <= half; dy++)
    for (int dx = -half; dx <= half; dx++)
      {
        int px = (int) floor (x) + dx, py = (int) floor (y) + dy;
        if (px >= 0 && py >= 0 && px < pic->width && py < pic->height
            && cyanish (pixel (pic, px, py)))
          n++;
      }
  return n;
}

/* The truth list of gc_like_2048 over the image after Run All, with the
 * radius at 10" (2 pixels of 5"): matched, only ours and only theirs are
 * score_catalogue.py's nmatched, ndet - nmatched and truth - nmatched; the
 * truth's squares are drawn in the first overlay colour. */
void
test_overlay_truth (Fixture *f)
{
  g_autofree char *truth = shared_path ("gc_like_2048_truth.csv", NULL);
  g_autofree char *image = truth ? shared_path ("gc_like_2048.fits", NULL) : NULL;
  g_autofree char *score = NULL, *tools = NULL, *json = NULL;
  g_autoptr (Picture) pic = NULL;
  static const int cyan[3] = { 0, 217, 255 };
  const SkyOverlayEntry *e;
  double ndet, nmatched;
  int ntruth = 0, drawn = 0;

  if (image == NULL)
    return;
  tools = g_path_get_dirname (truth);
  score = g_build_filename (tools, "..", "tools", "score_catalogue.py", NULL);
  if (!g_file_test (score, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("no ../shared/tools/score_catalogue.py");
      return;
    }
  json = score_with_python (image, truth, score);
  ndet = json_number (json, "ndet");
  nmatched = json_number (json, "nmatched");
  {
    g_autofree char *text = NULL;
    g_assert_true (g_file_get_contents (truth, &text, NULL, NULL));
    for (const char *p = text; (p = strchr (p, '\n')) != NULL; p++)
      ntruth += p[1] != '\0';
  }

  open_image (f, &(Image) { image, 2048, 2048 });
  click (f, "app.run", "'all'");
  wait_idle (f, "run all on gc_like_2048.fits");
  activate ("match-radius", g_variant_new_double (10.0));
  activate ("overlay", g_variant_new_string (truth));
  wait_idle (f, "the truth list drawn");
  g_test_message ("score_catalogue.py: %s; truth rows %d", json, ntruth);
  g_assert_cmpfloat (overlay_number (0, "n"), ==, ntruth);
  g_assert_cmpfloat (overlay_number (0, "on_image"), ==, ntruth);
  g_assert_cmpfloat (state_number ("nsources"), ==, ndet);
  g_assert_cmpfloat (overlay_number (0, "matched"), ==, nmatched);
  g_assert_cmpfloat (overlay_number (0, "only_ours"), ==, ndet - nmatched);
  g_assert_cmpfloat (overlay_number (0, "only_theirs"), ==, ntruth - nmatched);
  assert_state ("match_radius_unit", "\"arcsec\"");

  /* A square in the overlay's colour around each of the first rows. */
  pic = render_view (f);
  e = g_ptr_array_index (f->window->overlays->entries, 0);
  for (int i = 0; i < 20; i++)
    {
      double x, y;
      sky_image_view_image_to_widget (f->view, e->px[i] + 0.5, e->py[i] + 0.5, &x, &y);
      drawn += colour_near (pic, (x + 5) * pic->scale, y * pic->scale, 3, cyan) > 0;
    }
  g_assert_cmpint (drawn, >=, 18);
  save_widget_picture (GTK_WIDGET (f->window), "overlay-truth.png");

  /* At 4x on the brightest truth source: squares and diamonds apart. */
  activate ("zoom", g_variant_new_double (4));
  activate ("pan", g_variant_new ("(dd)", e->px[0] + 1, e->py[0] + 1));
  wait_idle (f, "zoomed on the first truth source");
  save_widget_picture (GTK_WIDGET (f->window), "overlay-truth-4x.png");

  /* A wider radius can only match more; "" clears the overlays. */
  activate ("match-radius", g_variant_new_double (20.0));
  wait_idle (f, "the wider radius");
  g_assert_cmpfloat (overlay_number (0, "matched"), >=, nmatched);
  g_assert_cmpfloat (gtk_spin_button_get_value (f->window->match_radius_spin), ==, 20);
  /* The Pipeline panel's radius, as a person sets it. */
  gtk_spin_button_set_value (f->window->match_radius_spin, 10);
  wait_idle (f, "the radius back at 10 from its control");
  g_assert_cmpfloat (state_number ("match_radius"), ==, 10);
  g_assert_cmpfloat (overlay_number (0, "matched"), ==, nmatched);
  activate ("match-radius", g_variant_new_double (-1));
  assert_state ("last_error", "\"That is not a match radius");
  activate ("overlay", g_variant_new_string (""));
  wait_idle (f, "the overlays cleared");
  assert_state ("overlays", "[]");

  /* The CLI's DS9 regions of the same image, fk5 circles on each centroid:
   * through the WCS back onto every source, all matched. */
  {
    g_autofree char *reg = sky_test_tmp_path ("gc_like_cli.reg");
    const char *argv[] = { g_getenv ("SKYSIFT_CLI"), "find", image, "--quiet", "--regions", reg,
                           NULL };
    g_autoptr (GError) error = NULL;
    int status;
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                 NULL, NULL, NULL, &status, &error));
    g_assert_no_error (error);
    g_assert_cmpint (status, ==, 0);
    activate ("overlay", g_variant_new_string (reg));
    wait_idle (f, "the CLI's regions drawn");
    g_assert_cmpfloat (overlay_number (0, "n"), ==, ndet);
    g_assert_cmpfloat (overlay_number (0, "matched"), ==, ndet);
    g_assert_cmpfloat (overlay_number (0, "only_ours"), ==, 0);
    g_assert_cmpfloat (overlay_number (0, "only_theirs"), ==, 0);
    /* Each circle's centre is its source's centroid, to a thousandth of a
     * pixel (the file's positions have nine decimals of a degree). */
    e = g_ptr_array_index (f->window->overlays->entries, 0);
    for (gint64 i = 0; i < e->overlay.n; i++)
      {
        g_assert_cmpfloat_with_epsilon (e->px[i], f->window->run->catalogue.x[i], 1e-3);
        g_assert_cmpfloat_with_epsilon (e->py[i], f->window->run->catalogue.y[i], 1e-3);
      }
  }

  /* An ellipse at 30 degrees in fk5 and in galactic coordinates on Sgr A*
   * (the image's reference point, north up): on the pixels, 30 degrees
   * and astropy's regions' angle for the galactic one, whose north is
   * turned against the image's. */
  {
    g_autofree char *reg = sky_test_tmp_path ("angles.reg");
    g_autofree char *text = NULL, *out = NULL, *err = NULL;
    double l, b, want;
    int status;
    const char *py[] = { "/usr/bin/python3", "-c",
      "import sys, astropy.units as u\n"
      "from astropy.io import fits\nfrom astropy.wcs import WCS\n"
      "from astropy.coordinates import SkyCoord\nimport regions\n"
      "w = WCS(fits.getheader(sys.argv[1]))\n"
      "c = SkyCoord(266.416833 * u.deg, -29.007806 * u.deg, frame='fk5').galactic\n"
      "e = regions.EllipseSkyRegion(c, 20 * u.arcsec, 10 * u.arcsec, angle=30 * u.deg)\n"
      "print(repr(c.l.deg), repr(c.b.deg), repr(e.to_pixel(w).angle.to_value(u.deg)))\n", image, NULL };
    g_autoptr (GError) error = NULL;
    g_assert_true (g_spawn_sync (NULL, (char **) py, NULL, 0, NULL, NULL, &out, &err, &status,
                                 &error));
    g_assert_no_error (error);
    if (status != 0)
      g_error ("astropy regions: %s", err);
    g_assert_cmpint (sscanf (out, "%lf %lf %lf", &l, &b, &want), ==, 3);
    text = g_strdup_printf ("fk5\nellipse(266.416833,-29.007806,20\",10\",30)\n"
                            "galactic\nellipse(%.10f,%.10f,20\",10\",30)\n", l, b);
    g_assert_true (g_file_set_contents (reg, text, -1, NULL));
    activate ("overlay", g_variant_new_string (""));
    activate ("overlay", g_variant_new_string (reg));
    wait_idle (f, "the ellipses drawn");
    e = g_ptr_array_index (f->window->overlays->entries, 0);
    g_test_message ("ellipse at 30 deg: fk5 %.6f on the pixels, galactic %.6f (astropy's "
                    "regions %.6f)", e->pangle[0], e->pangle[1], want);
    g_assert_cmpfloat_with_epsilon (e->pangle[0], 30.0, 1e-4);
    g_assert_cmpfloat_with_epsilon (e->pangle[1], want, 0.01);
  }
}

/* SExtractor's catalogue of the SEP image (no sky WCS: pixel columns,
 * FITS 1-based) over that image, every row on it and drawn. */
void
test_overlay_sextractor (Fixture *f)
{
  g_autofree char *cat = shared_path ("external", "sep_image_sextractor.cat", NULL);
  g_autofree char *image = cat ? shared_path ("external", "sep_image.fits", NULL) : NULL;
  g_autoptr (Picture) pic = NULL;
  static const int cyan[3] = { 0, 217, 255 };
  const SkyOverlayEntry *e;
  int drawn = 0;

  if (image == NULL)
    return;
  open_image (f, &(Image) { image, 256, 256 });
  activate ("overlay", g_variant_new_string (cat));
  wait_idle (f, "the SExtractor catalogue drawn");
  e = g_ptr_array_index (f->window->overlays->entries, 0);
  g_assert_cmpint (e->overlay.n, >, 50);
  g_assert_cmpfloat (overlay_number (0, "n"), ==, e->overlay.n);
  g_assert_cmpfloat (overlay_number (0, "on_image"), ==, e->overlay.n);
  assert_state ("match_radius_unit", "\"pixel\"");
  {
    g_autofree char *json = state_json ();
    g_assert_nonnull (strstr (json, "\"x_column\": \"X_IMAGE\""));
  }
  pic = render_view (f);
  for (gint64 i = 0; i < e->overlay.n; i++)
    {
      double x, y;
      sky_image_view_image_to_widget (f->view, e->px[i] + 0.5, e->py[i] + 0.5, &x, &y);
      drawn += colour_near (pic, (x + 5) * pic->scale, y * pic->scale, 3, cyan) > 0;
    }
  save_widget_picture (GTK_WIDGET (f->window), "overlay-sextractor.png");
  g_test_message ("SExtractor rows drawn: %d of %" G_GINT64_FORMAT, drawn, e->overlay.n);
  g_assert_cmpint (drawn, >=, e->overlay.n * 9 / 10);
}

/* A region file with each shape in image and sky frames over the test
 * field, a second overlay in the second colour; a bad file is refused in
 * a dialog naming it and the reason, and the overlays stay. */
void
test_overlay_regions (Fixture *f)
{
  g_autofree char *reg = sky_test_tmp_path ("shapes.reg");
  g_autofree char *bad = sky_test_tmp_path ("bad.reg");
  g_autoptr (Picture) pic = NULL;
  static const int cyan[3] = { 0, 217, 255 };
  double x, y;

  g_assert_true (g_file_set_contents (reg,
    "# Region file format: DS9 version 4.1\nimage\n"
    "circle(41,61,12) # text={bright}\nellipse(113,29,10,5,30)\nbox(125,93,14,8,0)\n"
    "polygon(60,90,85,90,72,110)\npoint(20,20)\n# text(140,110) text={label}\n", -1, NULL));
  g_assert_true (g_file_set_contents (bad, "image\ncircle(1,2)\n", -1, NULL));
  open_image (f, &field);
  activate ("overlay", g_variant_new_string (reg));
  wait_idle (f, "the regions drawn");
  g_assert_cmpfloat (overlay_number (0, "n"), ==, 6);
  pic = render_view (f);
  /* The circle of radius 12 pixels around (40, 60): its rightmost point. */
  sky_image_view_image_to_widget (f->view, 40 + 0.5 + (f->flip ? -12 : 12), 60 + 0.5, &x, &y);
  g_assert_cmpint (colour_near (pic, x * pic->scale, y * pic->scale, 2, cyan), >, 0);
  save_widget_picture (GTK_WIDGET (f->window), "overlay-regions.png");

  activate ("overlay", g_variant_new_string (bad));
  wait_idle (f, "the bad region file");
  {
    g_autofree char *json = state_json ();
    g_assert_nonnull (strstr (json, "circle needs 3 arguments, it has 2"));
    g_assert_nonnull (strstr (state_field (json, "last_error"), "bad.reg"));
  }
  g_assert_cmpuint (f->window->overlays->entries->len, ==, 1);
}

/* The first widget under root whose tooltip starts with prefix, or NULL. */
static GtkWidget *
tooltip_under (GtkWidget *root, const char *prefix)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w; w = gtk_widget_get_next_sibling (w))
    {
      const char *tip = gtk_widget_get_tooltip_text (w);
      GtkWidget *found;
      if (tip != NULL && g_str_has_prefix (tip, prefix))
        return w;
      if ((found = tooltip_under (w, prefix)) != NULL)
        return found;
    }
  return NULL;
}

static GtkWidget *
find_by_tooltip (GtkWidget *root, const char *prefix)
{
  GtkWidget *found = tooltip_under (root, prefix);
  if (found == NULL)
    g_error ("no widget with a tooltip starting “%s”", prefix);
  return found;
}

static gboolean
on_image_edge (const SkyRun *run, gint64 i)
{
  const SkyCatalogue *cat = &run->catalogue;
  return cat->xmin[i] == 0 || cat->ymin[i] == 0 || cat->xmax[i] == run->image->image.nx - 1
         || cat->ymax[i] == run->image->image.ny - 1;
}

static GtkWidget *label_root;

/* A label under label_root whose text starts with data. */
static gboolean
label_under (GtkWidget *root, const char *prefix)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w; w = gtk_widget_get_next_sibling (w))
    if ((GTK_IS_LABEL (w) && g_str_has_prefix (gtk_label_get_text (GTK_LABEL (w)), prefix))
        || label_under (w, prefix))
      return TRUE;
  return FALSE;
}

static gboolean
label_shown (gpointer prefix)
{
  return label_under (label_root, prefix);
}

/* The source table's filters through app.source-filter, counted here from
 * the catalogue; a filter it cannot take is refused by name; Go to N
 * selects source N and centres the view on it, and a number past the
 * last is said in the status line. */
void
test_source_filters (Fixture *f)
{
  g_autoptr (GError) error = NULL;
  const SkyCatalogue *cat;
  const SkyRun *run;
  gint64 want = 0, want_edge = 0, edge = 0;
  GtkEditable *go;

  if (!open_gc_like (f))
    return;
  click (f, "app.run", "'all'");
  wait_idle (f, "run all on gc_like_2048.fits");
  activate ("panel", g_variant_new_string ("sources"));
  label_root = GTK_WIDGET (f->window->sources);
  run = f->window->run;
  cat = &run->catalogue;
  for (gint64 i = 0; i < cat->n; i++)
    {
      gboolean keep = cat->npix[i] >= 5 && cat->peak[i] / run->stats.sigma >= 10
                      && cat->sum[i] >= 1.0;
      want += keep;
      want_edge += keep && !on_image_edge (run, i);
      edge += on_image_edge (run, i);
    }
  g_test_message ("%" G_GINT64_FORMAT " sources; area >= 5, snr >= 10, sum >= 1: %"
                  G_GINT64_FORMAT ", and off the edge: %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT
                  " touch it)", cat->n, want, want_edge, edge);
  g_assert_cmpint (want, >, 0);
  g_assert_cmpint (want, <, cat->n);

  g_assert_cmpfloat (state_number ("listed"), ==, cat->n);
  activate ("source-filter", g_variant_new_string ("area=5,snr=10,flux=1"));
  wait_idle (f, "the filter");
  g_assert_cmpfloat (state_number ("listed"), ==, want);
  assert_state ("source_filter", "\"area=5,snr=10,flux=1\"");
  /* The markers follow: a source left out has none to click, one listed
   * has. */
  {
    gint64 kept = -1, left = -1;
    double x, y;
    for (gint64 i = 0; i < cat->n; i++)
      {
        gboolean keep = cat->npix[i] >= 5 && cat->peak[i] / run->stats.sigma >= 10
                        && cat->sum[i] >= 1.0;
        if (keep && kept < 0)
          kept = i;
        if (!keep && left < 0)
          left = i;
      }
    sky_image_view_image_to_widget (f->view, cat->x[kept] + 0.5, cat->y[kept] + 0.5, &x, &y);
    g_assert_cmpint (sky_image_view_overlay_pick (f->view, x, y), ==, kept);
    sky_image_view_image_to_widget (f->view, cat->x[left] + 0.5, cat->y[left] + 0.5, &x, &y);
    g_assert_cmpint (sky_image_view_overlay_pick (f->view, x, y), !=, left);
  }
  /* The table's own rows say so too, in its summary. */
  {
    g_autofree char *prefix = g_strdup_printf ("%" G_GINT64_FORMAT " listed of %" G_GINT64_FORMAT
                                               " sources", want, cat->n);
    iterate_until (label_shown, prefix, "the table's summary of the rows listed");
  }
  /* The controls show it. */
  g_assert_cmpfloat (gtk_spin_button_get_value (GTK_SPIN_BUTTON (
    find_by_tooltip (GTK_WIDGET (f->window->sources), "List sources of at least"))), ==, 5);
  activate ("source-filter", g_variant_new_string ("area=5,snr=10,flux=1,edge=off"));
  wait_idle (f, "the filter off the edge");
  g_assert_cmpfloat (state_number ("listed"), ==, want_edge);
  wait_frames (f);
  save_widget_picture (GTK_WIDGET (f->window), "source-filters.png");

  activate ("source-filter", g_variant_new_string ("snr=ten"));
  assert_state ("last_error", "\"That is not a source filter: “snr=ten” is not");
  g_assert_cmpfloat (state_number ("listed"), ==, want_edge);
  activate ("source-filter", g_variant_new_string ("none"));
  wait_idle (f, "no filter");
  g_assert_cmpfloat (state_number ("listed"), ==, cat->n);

  /* Go to 42: selected, and the view's centre on its centroid. */
  go = GTK_EDITABLE (find_by_tooltip (GTK_WIDGET (f->window->sources), "A source's number"));
  gtk_editable_set_text (go, "42");
  g_signal_emit_by_name (go, "activate");
  wait_idle (f, "go to 42");
  g_assert_cmpfloat (state_number ("selected"), ==, 42);
  g_assert_cmpfloat_with_epsilon (f->view->cx, cat->x[41] + 0.5, 1e-9);
  g_assert_cmpfloat_with_epsilon (f->view->cy, cat->y[41] + 0.5, 1e-9);
  {
    g_autofree char *past = g_strdup_printf ("%" G_GINT64_FORMAT, cat->n + 1);
    gtk_editable_set_text (go, past);
  }
  g_signal_emit_by_name (go, "activate");
  g_assert_true (g_str_has_prefix (gtk_label_get_text (f->window->status_label),
                                   "Go to: there is no source"));
  g_assert_cmpfloat (state_number ("selected"), ==, 42);

  /* An image with a source on its left edge and one inside: edge=off and
   * flags=off (the edge is the global method's only flag) list one. */
  {
    g_autofree float *pixels = noise (64, 48, 7);
    g_autofree char *path = NULL;
    pixels[20 * 64 + 0] = 100;
    pixels[20 * 64 + 30] = 100;
    path = write_fits ("edge.fits", pixels, 64, 48, -1);
    open_image (f, &(Image) { path, 64, 48 });
    click (f, "app.run", "'all'");
    wait_idle (f, "run all on edge.fits");
    g_assert_cmpfloat (state_number ("nsources"), ==, 2);
    activate ("source-filter", g_variant_new_string ("edge=off"));
    wait_idle (f, "edge=off");
    g_assert_cmpfloat (state_number ("listed"), ==, 1);
    activate ("source-filter", g_variant_new_string ("flags=off"));
    wait_idle (f, "flags=off");
    g_assert_cmpfloat (state_number ("listed"), ==, 1);
    activate ("source-filter", g_variant_new_string ("edge=on,flags=on"));
    wait_idle (f, "edge=on");
    g_assert_cmpfloat (state_number ("listed"), ==, 2);
  }
}

/* The Pipeline panel's Smooth, typed as a person does: gc_like_2048 with
 * the beam finds the sources skysift-cli find --smooth beam finds, with
 * its clipped sigma and summed fluxes; a kernel that does not parse is
 * refused by name and leaves the results; none brings the image's own
 * detection back. */
void
test_smooth_detection (Fixture *f)
{
  g_autofree char *image = shared_path ("gc_like_2048.fits", NULL);
  g_autofree char *json_path = sky_test_tmp_path ("smooth-beam.json");
  g_autofree char *json = NULL, *err = NULL;
  g_autoptr (GError) error = NULL;
  const char *cli = g_getenv ("SKYSIFT_CLI");
  double nsources, sigma, top;
  int status;

  if (image == NULL)
    return;
  {
    const char *argv[] = { cli, "find", image, "--smooth", "beam", "--json", json_path, NULL };
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                 NULL, NULL, &err, &status, &error));
    g_assert_no_error (error);
    g_assert_cmpint (status, ==, 0);
    g_assert_true (g_file_get_contents (json_path, &json, NULL, NULL));
  }
  nsources = json_number (json, "nsources");
  sigma = json_number (json, "std");
  top = g_ascii_strtod (strstr (json, "\"top_sum_flux\": [") + 17, NULL);

  open_image (f, &(Image) { image, 2048, 2048 });
  gtk_editable_set_text (GTK_EDITABLE (f->window->smooth_entry), "beam");
  g_signal_emit_by_name (f->window->smooth_entry, "activate");
  click (f, "app.run", "'all'");
  wait_idle (f, "run all smoothed by the beam");
  g_test_message ("CLI --smooth beam: %g sources, sigma %.10g; the app: %g, %.10g", nsources,
                  sigma, state_number ("nsources"), state_number ("sigma"));
  assert_state ("smoothed", "\"beam\"");
  g_assert_cmpfloat (state_number ("nsources"), ==, nsources);
  g_assert_cmpfloat_with_epsilon (state_number ("sigma") / sigma, 1.0, 1e-12);
  {
    const SkyCatalogue *cat = &f->window->run->catalogue;
    double best = 0;
    for (gint64 i = 0; i < cat->n; i++)
      best = MAX (best, cat->sum[i]);
    g_assert_cmpfloat_with_epsilon (best / top, 1.0, 1e-12);
  }
  wait_frames (f);
  save_widget_picture (GTK_WIDGET (f->window), "smooth-beam.png");

  /* A threshold move keeps the smoothed copy and its clip: the CLI's
   * sources at 10 sigma on it. */
  {
    g_autofree char *json10 = NULL;
    const char *argv[] = { cli, "find", image, "--smooth", "beam", "--threshold", "10",
                           "--json", json_path, NULL };
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                 NULL, NULL, NULL, &status, &error));
    g_assert_no_error (error);
    g_assert_cmpint (status, ==, 0);
    g_assert_true (g_file_get_contents (json_path, &json10, NULL, NULL));
    activate ("threshold", g_variant_new_double (10.0));
    wait_idle (f, "the threshold at 10 sigma, smoothed");
    assert_state ("smoothed", "\"beam\"");
    g_assert_cmpfloat (state_number ("nsources"), ==, json_number (json10, "nsources"));
    g_assert_true (f->window->run->stages.kept >= SKY_STEP_CLIP);
    activate ("threshold", g_variant_new_double (5.0));
    wait_idle (f, "the threshold back at 5 sigma");
    g_assert_cmpfloat (state_number ("nsources"), ==, nsources);
  }

  /* Another kernel cancelled as its run starts: the field, the state and
   * the status line are back at the results shown. */
  gtk_editable_set_text (GTK_EDITABLE (f->window->smooth_entry), "gauss:2");
  g_signal_emit_by_name (f->window->smooth_entry, "activate");
  activate ("cancel", NULL);
  wait_idle (f, "the smoothing cancelled");
  assert_state ("smooth", "\"beam\"");
  assert_state ("smoothed", "\"beam\"");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (f->window->smooth_entry)), ==, "beam");
  g_assert_nonnull (strstr (gtk_label_get_text (f->window->status_label), "smoothed by beam"));
  g_assert_cmpfloat (state_number ("nsources"), ==, nsources);

  gtk_editable_set_text (GTK_EDITABLE (f->window->smooth_entry), "gauss:wide");
  g_signal_emit_by_name (f->window->smooth_entry, "activate");
  assert_state ("last_error", "\"That is not a smoothing kernel: --smooth gauss:wide");
  assert_state ("smooth", "\"beam\"");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (f->window->smooth_entry)), ==, "beam");

  activate ("smooth", g_variant_new_string (""));
  wait_idle (f, "no smoothing");
  assert_state ("smoothed", "\"\"");
  g_assert_cmpfloat (state_number ("nsources"), ==, 344);
}

/* "key=value": the state's key starts with value (for iterate_until). */
static gboolean
state_is_cb (gpointer data)
{
  g_auto (GStrv) kv = g_strsplit (data, "=", 2);
  g_autofree char *json = state_json ();
  return g_str_has_prefix (state_field (json, kv[0]), kv[1]);
}

/* Population standard deviation of img's pixels in [x0, x1) x [y0, y1). */
static double
region_std (const SkyImage *img, int x0, int y0, int x1, int y1)
{
  double s = 0, s2 = 0;
  int n = 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        double v = img->pixels[(gsize) y * img->nx + x];
        s += v;
        s2 += v * v;
        n++;
      }
  return sqrt (s2 / n - (s / n) * (s / n));
}

/* Smoothing the picture for the eye (app.display smooth=, the Pipeline
 * panel's drop-down): the view draws a copy whose noise is a Gaussian of
 * sigma 2's 1 / (2 sqrt(pi) 2) = 0.14 of the image's, while the image, its
 * sources and the readout keep the image's own pixels; none brings them
 * back. */
void
test_display_smooth (Fixture *f)
{
  SkyImageData *shown;
  double noise_image, noise_shown;
  gint64 nsources;

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  nsources = (gint64) state_number ("nsources");
  activate ("display", g_variant_new_string ("smooth=gauss:2"));
  iterate_until (state_is_cb, (gpointer) "display_smoothed=\"gauss:2\"", "the smoothed picture");
  wait_idle (f, "the smoothed picture drawn");
  shown = sky_image_view_get_display_image (f->view);
  g_assert_nonnull (shown);
  g_assert_true (f->window->image != shown);
  /* A corner without sources: noise alone. */
  noise_image = region_std (&f->window->image->image, 130, 5, 155, 25);
  noise_shown = region_std (&shown->image, 130, 5, 155, 25);
  g_test_message ("noise in the image %.3f, in the picture %.3f (ratio %.3f)", noise_image,
                  noise_shown, noise_shown / noise_image);
  g_assert_cmpfloat (noise_shown / noise_image, <, 0.25);
  g_assert_cmpfloat (noise_shown / noise_image, >, 0.08);
  g_assert_cmpfloat (state_number ("nsources"), ==, nsources);
  assert_state ("smoothed", "\"\"");
  g_assert_true (f->view->run == f->window->run);
  wait_frames (f);
  save_widget_picture (GTK_WIDGET (f->window), "display-smooth.png");

  activate ("display", g_variant_new_string ("smooth=none"));
  wait_idle (f, "the picture as it is");
  g_assert_null (sky_image_view_get_display_image (f->view));
  assert_state ("display_smoothed", "\"\"");

  /* The drop-down does the same. */
  gtk_drop_down_set_selected (f->window->picture_smooth_dropdown, 3);
  iterate_until (state_is_cb, (gpointer) "display_smoothed=\"gauss:4\"", "the drop-down's σ 4");
  assert_state ("display_smooth", "\"gauss:4\"");

  /* The next image is smoothed in its turn. */
  open_image (f, &orient_west);
  iterate_until (state_is_cb, (gpointer) "display_smoothed=\"gauss:4\"",
                 "the next image's picture smoothed");
  shown = sky_image_view_get_display_image (f->view);
  g_assert_nonnull (shown);
  g_assert_cmpint (shown->image.nx, ==, ORIENT_NX);
  g_assert_cmpint (shown->image.ny, ==, ORIENT_NY);
}

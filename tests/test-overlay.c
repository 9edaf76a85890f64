/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Overlays: catalogues (CSV, ECSV, VOTable, SExtractor ASCII) and DS9
 * region files read by the names and units the field writes, bad files
 * refused naming the file and the reason, frames converted, and the
 * one-to-one cross-match. No display, no GTK. */
#include "sky-test-util.h"
#include "sky-overlay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *
write_file (const char *name, const char *text)
{
  char *path = sky_test_tmp_path (name);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static void
load_ok (const char *name, const char *text, int prefer_sky, SkyOverlay *o)
{
  g_autofree char *path = write_file (name, text);
  int status = sky_overlay_load (path, prefer_sky, o);
  if (status != SKY_OK)
    g_error ("%s: %s", name, sky_last_error ());
}

/* The file is refused, the message naming it and containing why. */
static void
assert_refused (const char *name, const char *text, const char *why)
{
  g_autofree char *path = write_file (name, text);
  SkyOverlay o;

  g_assert_cmpint (sky_overlay_load (path, 1, &o), !=, SKY_OK);
  g_assert_cmpint (o.n, ==, 0);
  g_assert_null (o.path);
  if (strstr (sky_last_error (), path) == NULL || strstr (sky_last_error (), why) == NULL)
    g_error ("message \"%s\" should name %s and say \"%s\"", sky_last_error (), path, why);
}

/* ------------------------------------------------------------ tables */

static void
test_csv_pixels (void)
{
  SkyOverlay o;

  load_ok ("pixels.csv", "x_pix0,y_pix0,peak_jy_per_beam,kind\n"
           "1356.652,481.703,0.04141,point\n720.259,743.419,0.07049,point\n", 1, &o);
  g_assert_false (o.is_regions);
  g_assert_cmpint (o.n, ==, 2);
  g_assert_cmpint (o.shapes[0].frame, ==, SKY_FRAME_PIXEL);
  g_assert_cmpfloat (o.shapes[0].x, ==, 1356.652);
  g_assert_cmpfloat (o.shapes[1].y, ==, 743.419);
  g_assert_cmpstr (o.x_column, ==, "x_pix0");
  sky_overlay_clear (&o);
}

/* Sky columns win over pixel ones where the image has a WCS, and lose
 * where it has none. */
static void
test_csv_prefers_sky (void)
{
  const char *text = "source_id,x_centroid,y_centroid,ra,dec\n1,10.5,20.25,266.4,-29.0\n";
  SkyOverlay o;

  load_ok ("both.csv", text, 1, &o);
  g_assert_cmpint (o.shapes[0].frame, ==, SKY_FRAME_EQUATORIAL);
  g_assert_cmpfloat (o.shapes[0].x, ==, 266.4);
  sky_overlay_clear (&o);
  load_ok ("both.csv", text, 0, &o);
  g_assert_cmpint (o.shapes[0].frame, ==, SKY_FRAME_PIXEL);
  g_assert_cmpfloat (o.shapes[0].y, ==, 20.25);
  sky_overlay_clear (&o);
}

/* Vizier's RAJ2000/DEJ2000 as sexagesimal text (RA in hours), quoted
 * cells, an empty position skipped. */
static void
test_csv_sexagesimal (void)
{
  SkyOverlay o;

  load_ok ("vizier.csv", "Name,RAJ2000,DEJ2000\n\"Sgr A*, the centre\",17 45 40.04,-29 00 28.1\n"
           "b,17:45:40.04,-29:00:28.1\nempty,,\n", 1, &o);
  g_assert_cmpint (o.n, ==, 2);
  for (int i = 0; i < 2; i++)
    {
      g_assert_cmpfloat_with_epsilon (o.shapes[i].x, 15 * (17 + 45 / 60.0 + 40.04 / 3600), 1e-9);
      g_assert_cmpfloat_with_epsilon (o.shapes[i].y, -(29 + 0 / 60.0 + 28.1 / 3600), 1e-9);
    }
  sky_overlay_clear (&o);
}

/* ECSV: the units from the YAML header, RA in hourangle; GLON/GLAT upper
 * case, tab-separated. */
static void
test_ecsv_units_and_galactic (void)
{
  SkyOverlay o;

  load_ok ("hours.ecsv", "# %ECSV 1.0\n# ---\n"
           "# - {name: RA, unit: hourangle, datatype: float64}\n"
           "# - {name: DEC, unit: deg, datatype: float64}\n"
           "# - {name: flux, unit: Jy, datatype: float64}\n"
           "RA DEC flux\n17.5 -29.5 1.0\n", 1, &o);
  g_assert_cmpint (o.n, ==, 1);
  g_assert_cmpfloat_with_epsilon (o.shapes[0].x, 262.5, 1e-12);
  g_assert_cmpfloat (o.shapes[0].y, ==, -29.5);
  sky_overlay_clear (&o);

  load_ok ("gal.tsv", "GLON\tGLAT\n359.944\t-0.046\n", 1, &o);
  g_assert_cmpint (o.shapes[0].frame, ==, SKY_FRAME_GALACTIC);
  g_assert_cmpfloat (o.shapes[0].x, ==, 359.944);
  sky_overlay_clear (&o);
}

/* SExtractor's ASCII_HEAD catalogue of the shared SEP image: X_IMAGE and
 * Y_IMAGE are FITS pixels, counted from 1. */
static void
test_sextractor (void)
{
  const char *why;
  const char *data = sky_test_shared_data (&why);
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  SkyOverlay o;
  int rows = 0;

  if (data == NULL)
    {
      g_test_skip (why);
      return;
    }
  path = g_build_filename (data, "external", "sep_image_sextractor.cat", NULL);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  for (char *l = text; l && *l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    rows += *l != '#' && *l != '\n';
  g_assert_cmpint (sky_overlay_load (path, 0, &o), ==, SKY_OK);
  g_assert_cmpint (o.n, ==, rows);
  g_assert_cmpstr (o.x_column, ==, "X_IMAGE");
  g_assert_cmpfloat_with_epsilon (o.shapes[0].x, 165.1449 - 1, 1e-9);
  g_assert_cmpfloat_with_epsilon (o.shapes[0].y, 24.0084 - 1, 1e-9);
  sky_overlay_clear (&o);
}

static void
test_votable (void)
{
  const char *head = "<?xml version=\"1.0\"?>\n<VOTABLE version=\"1.4\" "
                     "xmlns=\"http://www.ivoa.net/xml/VOTable/v1.3\"><RESOURCE><TABLE>\n";
  g_autofree char *by_name = g_strconcat (head,
    "<FIELD name=\"id\" datatype=\"int\"/><FIELD name=\"ra\" datatype=\"double\" unit=\"deg\"/>"
    "<FIELD name=\"dec\" datatype=\"double\" unit=\"deg\"/>\n<DATA><TABLEDATA>\n"
    "<TR><TD>1</TD><TD>266.5</TD><TD>-29.25</TD></TR>\n"
    "<TR><TD>2</TD><TD></TD><TD></TD></TR>\n"
    "<TR><TD>3</TD><TD>10</TD><TD>20</TD></TR>\n</TABLEDATA></DATA></TABLE></RESOURCE></VOTABLE>\n",
    NULL);
  g_autofree char *by_ucd = g_strconcat (head,
    "<FIELD name=\"RA_hms\" datatype=\"char\" arraysize=\"*\" ucd=\"pos.eq.ra;meta.main\"/>"
    "<FIELD name=\"Decl\" datatype=\"char\" arraysize=\"*\" ucd=\"pos.eq.dec;meta.main\"/>\n"
    "<DATA><TABLEDATA><TR><TD>17:45:40.04</TD><TD>-29:00:28.1</TD></TR></TABLEDATA></DATA>"
    "</TABLE></RESOURCE></VOTABLE>\n", NULL);
  g_autofree char *binary = g_strconcat (head,
    "<FIELD name=\"ra\" datatype=\"double\"/><FIELD name=\"dec\" datatype=\"double\"/>"
    "<DATA><BINARY><STREAM encoding=\"base64\">AAAA</STREAM></BINARY></DATA></TABLE>"
    "</RESOURCE></VOTABLE>\n", NULL);
  SkyOverlay o;

  load_ok ("names.xml", by_name, 1, &o);
  g_assert_cmpint (o.n, ==, 2);
  g_assert_cmpfloat (o.shapes[0].x, ==, 266.5);
  g_assert_cmpfloat (o.shapes[1].y, ==, 20);
  sky_overlay_clear (&o);
  load_ok ("ucds.vot", by_ucd, 1, &o);
  g_assert_cmpint (o.n, ==, 1);
  g_assert_cmpfloat_with_epsilon (o.shapes[0].x, 15 * (17 + 45 / 60.0 + 40.04 / 3600), 1e-9);
  sky_overlay_clear (&o);
  assert_refused ("binary.xml", binary, "only TABLEDATA is read");
  assert_refused ("broken.xml", "<?xml version=\"1.0\"?>\n<VOTABLE><TABLE>\n",
                  "not well-formed XML");
}

/* The CLI's own CSV, ECSV, VOTable and region file of the GC-like field
 * read back: the same sources at the same sky positions in each, and the
 * CSV's pixel columns where sky ones are not wanted. */
static void
test_cli_catalogues (void)
{
  const char *why;
  const char *data = sky_test_shared_data (&why);
  const char *cli = g_getenv ("SKYSIFT_CLI");
  const char *ext[] = { "csv", "ecsv", "xml", "reg" };
  const char *opt[] = { "--csv", "--ecsv", "--votable", "--regions" };
  g_autofree char *image = NULL;
  char *paths[4];
  SkyOverlay o[4], pixels;
  int status;

  if (data == NULL || cli == NULL)
    {
      g_test_skip (data == NULL ? why : "SKYSIFT_CLI is not set");
      return;
    }
  image = g_build_filename (data, "gc_like_2048.fits", NULL);
  for (int k = 0; k < 4; k++)
    {
      g_autofree char *name = g_strdup_printf ("cli.%s", ext[k]);
      paths[k] = sky_test_tmp_path (name);
    }
  {
    const char *argv[] = { cli, "find", image, "--quiet", opt[0], paths[0], opt[1], paths[1],
                           opt[2], paths[2], opt[3], paths[3], NULL };
    g_autoptr (GError) error = NULL;
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                 NULL, NULL, NULL, &status, &error));
    g_assert_no_error (error);
    g_assert_cmpint (status, ==, 0);
  }
  for (int k = 0; k < 4; k++)
    if (sky_overlay_load (paths[k], 1, &o[k]) != SKY_OK)
      g_error ("%s", sky_last_error ());
  g_assert_cmpint (o[0].n, >, 100);
  for (int k = 0; k < 4; k++)
    {
      g_assert_cmpint (o[k].n, ==, o[0].n);
      g_assert_cmpint (o[k].shapes[0].frame, ==, SKY_FRAME_EQUATORIAL);
      for (gint64 i = 0; i < o[0].n; i += 17)
        {
          g_assert_cmpfloat_with_epsilon (o[k].shapes[i].x, o[0].shapes[i].x, 1e-9);
          g_assert_cmpfloat_with_epsilon (o[k].shapes[i].y, o[0].shapes[i].y, 1e-9);
        }
    }
  g_assert_cmpstr (o[2].x_column, ==, "ra");
  g_assert_cmpint (o[3].shapes[0].kind, ==, SKY_SHAPE_CIRCLE);
  g_assert_cmpint (sky_overlay_load (paths[0], 0, &pixels), ==, SKY_OK);
  g_assert_cmpstr (pixels.x_column, ==, "x_centroid");
  g_assert_cmpint (pixels.shapes[0].frame, ==, SKY_FRAME_PIXEL);
  sky_overlay_clear (&pixels);
  for (int k = 0; k < 4; k++)
    {
      sky_overlay_clear (&o[k]);
      g_free (paths[k]);
    }
}

/* ----------------------------------------------------------- regions */

static void
test_regions_shapes (void)
{
  SkyOverlay o;

  load_ok ("shapes.reg",
           "# Region file format: DS9 version 4.1\n"
           "global color=green font=\"helvetica 10 normal roman\"\n"
           "fk5\n"
           "circle(17:45:40.04,-29:00:28.1,3\") # color=red text={Sgr A*}\n"
           "ellipse(266.4,-29.0,10\",5\",30)\n"
           "box(266.4,-29.0,1',30\",45)\n"
           "galactic;point(359.944,-0.046) # point=x\n"
           "image\n"
           "polygon(10,10,20,10,20,30)\n"
           "-circle(101,51,20)\n"
           "# text(50,60) text={a label}\n"
           "text(5,6,{inline})\n"
           "# vector(1,1,10,0) vector=1\n"
           "icrs; circle(266.5, -29.1, 0.01)\n", 0, &o);
  g_assert_true (o.is_regions);
  g_assert_cmpint (o.n, ==, 9);
  g_assert_cmpint (o.nskipped, ==, 1);
  g_assert_cmpint (o.shapes[0].kind, ==, SKY_SHAPE_CIRCLE);
  g_assert_cmpint (o.shapes[0].frame, ==, SKY_FRAME_EQUATORIAL);
  g_assert_cmpfloat_with_epsilon (o.shapes[0].x, 15 * (17 + 45 / 60.0 + 40.04 / 3600), 1e-9);
  g_assert_cmpfloat (o.shapes[0].a, ==, 3.0);
  g_assert_cmpstr (o.shapes[0].text, ==, "Sgr A*");
  g_assert_cmpint (o.shapes[1].kind, ==, SKY_SHAPE_ELLIPSE);
  g_assert_cmpfloat (o.shapes[1].b, ==, 5.0);
  g_assert_cmpfloat (o.shapes[1].angle, ==, 30.0);
  g_assert_cmpint (o.shapes[2].kind, ==, SKY_SHAPE_BOX);
  g_assert_cmpfloat (o.shapes[2].a, ==, 60.0);
  g_assert_cmpint (o.shapes[3].kind, ==, SKY_SHAPE_POINT);
  g_assert_cmpint (o.shapes[3].frame, ==, SKY_FRAME_GALACTIC);
  g_assert_cmpint (o.shapes[4].kind, ==, SKY_SHAPE_POLYGON);
  g_assert_cmpint (o.shapes[4].nvertices, ==, 3);
  g_assert_cmpfloat (o.shapes[4].vx[0], ==, 9.0);   /* image pixels count from 1 */
  g_assert_cmpfloat (o.shapes[5].x, ==, 100.0);
  g_assert_true (o.shapes[5].exclude);
  g_assert_cmpint (o.shapes[6].kind, ==, SKY_SHAPE_TEXT);
  g_assert_cmpstr (o.shapes[6].text, ==, "a label");
  g_assert_cmpstr (o.shapes[7].text, ==, "inline");
  g_assert_cmpint (o.shapes[8].frame, ==, SKY_FRAME_EQUATORIAL);
  g_assert_cmpfloat (o.shapes[8].a, ==, 36.0);      /* a bare size is degrees */
  sky_overlay_clear (&o);
}

/* The region file the CLI writes reads back: one circle per source. */
static void
test_regions_roundtrip (void)
{
  SkyOverlay o;

  load_ok ("cli.reg", "# Region file format: DS9 version 4.2\n# skysift: 2 sources\n"
           "global color=green dashlist=8 3 width=1\nfk5\n"
           "circle(267.371809927,-30.408062040,5.6419\") # text={1}\n"
           "circle(267.342027219,-30.408988351,3.9894\") # text={2}\n", 0, &o);
  g_assert_cmpint (o.n, ==, 2);
  g_assert_cmpfloat (o.shapes[1].x, ==, 267.342027219);
  g_assert_cmpfloat (o.shapes[1].a, ==, 3.9894);
  g_assert_cmpstr (o.shapes[1].text, ==, "2");
  sky_overlay_clear (&o);
}

/* -------------------------------------------------------- bad input */

static void
test_bad_input (void)
{
  g_autofree char *missing = sky_test_tmp_path ("missing.csv");
  SkyOverlay o;

  g_assert_cmpint (sky_overlay_load (missing, 1, &o), ==, SKY_ERR_IO);
  g_assert_nonnull (strstr (sky_last_error (), missing));
  g_assert_nonnull (strstr (sky_last_error (), "No such file"));
  assert_refused ("empty.csv", "", "the file is empty");
  assert_refused ("nocols.csv", "name,flux\na,1\n", "no position columns");
  assert_refused ("notnum.csv", "ra,dec\n266.4,-29\nabc,-29\n", "line 3: \"abc\" is not a number");
  assert_refused ("short.csv", "id,ra,dec\n1,266.4\n", "too few");
  assert_refused ("pole.csv", "ra,dec\n10,95\n", "beyond the poles");
  assert_refused ("unit.ecsv", "# %ECSV 1.0\n# ---\n# - {name: ra, unit: Jy}\n"
                  "# - {name: dec, unit: deg}\nra dec\n1 2\n", "not an angle");
  {
    g_autofree char *bin = sky_test_tmp_path ("binary.csv");
    g_assert_true (g_file_set_contents (bin, "ra,dec\n\0\1\2", 10, NULL));
    g_assert_cmpint (sky_overlay_load (bin, 1, &o), ==, SKY_ERR_FORMAT);
    g_assert_nonnull (strstr (sky_last_error (), bin));
    g_assert_nonnull (strstr (sky_last_error (), "binary data"));
  }
  assert_refused ("shape.reg", "image\nstar(1,2,3)\n", "line 2: unknown shape \"star\"");
  assert_refused ("fk4.reg", "fk4\ncircle(1,2,3)\n", "the fk4 frame is not read");
  assert_refused ("noframe.reg", "circle(1,2,3)\n", "before any frame");
  assert_refused ("args.reg", "image\ncircle(1,2)\n", "circle needs 3 arguments, it has 2");
  assert_refused ("coord.reg", "fk5\ncircle(1x,2,3\")\n", "\"1x\" is not a coordinate");
  assert_refused ("size.reg", "fk5\ncircle(1,2,3q)\n", "\"3q\" is not a size");
}

/* --------------------------------------------------- frames, pixels */

static void
test_frames (void)
{
  double l, b, ra, dec;

  /* Sgr A* in FK5 J2000, galactic from astropy: (359.94425114, -0.04615922). */
  sky_frame_convert (SKY_FRAME_EQUATORIAL, SKY_FRAME_GALACTIC, 266.416833, -29.007806, &l, &b);
  g_assert_cmpfloat_with_epsilon (l, 359.94425114, 1e-7);
  g_assert_cmpfloat_with_epsilon (b, -0.04615922, 1e-7);
  sky_frame_convert (SKY_FRAME_GALACTIC, SKY_FRAME_EQUATORIAL, l, b, &ra, &dec);
  g_assert_cmpfloat_with_epsilon (ra, 266.416833, 1e-9);
  g_assert_cmpfloat_with_epsilon (dec, -29.007806, 1e-9);
}

/* world2pix inverts pix2world on the GC-like field's SIN header, a
 * galactic position lands where its equatorial one does, and the far side
 * of the SIN sphere has no pixel. */
static void
test_to_pixel (void)
{
  const char *why;
  const char *data = sky_test_shared_data (&why);
  g_autofree char *path = NULL;
  SkyImage img = { 0 };
  SkyWcs *wcs = NULL;
  double lng, lat, x, y, l, b;

  if (data == NULL)
    {
      g_test_skip (why);
      return;
    }
  path = g_build_filename (data, "gc_like_2048.fits", NULL);
  g_assert_cmpint (sky_image_load (path, NULL, &img), ==, SKY_OK);
  g_assert_cmpint (sky_wcs_new (&img, &wcs), ==, SKY_OK);
  g_assert_cmpint (sky_wcs_pix2world (wcs, 1356.652, 481.703, &lng, &lat), ==, SKY_OK);
  g_assert_cmpint (sky_overlay_to_pixel (wcs, SKY_FRAME_EQUATORIAL, lng, lat, &x, &y), ==,
                   SKY_OK);
  g_assert_cmpfloat_with_epsilon (x, 1356.652, 1e-6);
  g_assert_cmpfloat_with_epsilon (y, 481.703, 1e-6);
  sky_frame_convert (SKY_FRAME_EQUATORIAL, SKY_FRAME_GALACTIC, lng, lat, &l, &b);
  g_assert_cmpint (sky_overlay_to_pixel (wcs, SKY_FRAME_GALACTIC, l, b, &x, &y), ==, SKY_OK);
  g_assert_cmpfloat_with_epsilon (x, 1356.652, 1e-6);
  g_assert_cmpfloat_with_epsilon (y, 481.703, 1e-6);
  g_assert_cmpint (sky_overlay_to_pixel (wcs, SKY_FRAME_EQUATORIAL, 86.4, 29.0, &x, &y), !=,
                   SKY_OK);
  g_assert_true (isnan (x));
  /* 5" pixels. */
  g_assert_cmpfloat_with_epsilon (sky_wcs_pixels_per_arcsec (wcs), 0.2, 1e-9);
  g_assert_cmpint (sky_overlay_to_pixel (NULL, SKY_FRAME_GALACTIC, l, b, &x, &y), ==,
                   SKY_ERR_UNAVAILABLE);
  sky_wcs_free (wcs);
  sky_image_clear (&img);
}

/* ------------------------------------------------------ cross-match */

static void
test_crossmatch (void)
{
  /* a0 is nearest b1, a1 nearer b1 still: a1-b1 pairs first and a0 falls
   * to b0; a2 is exactly at the radius of b2 (matched); a3 NaN; b3 far. */
  const double ax[] = { 0.0, 1.2, 10.0, NAN }, ay[] = { 0.0, 0.0, 10.0, 0.0 };
  const double bx[] = { -1.5, 1.0, 12.0, 50.0 }, by[] = { 0.0, 0.0, 10.0, 50.0 };
  int64_t ma[4], mb[4];

  g_assert_cmpint (sky_crossmatch (ax, ay, 4, bx, by, 4, 2.0, ma, mb), ==, 3);
  g_assert_cmpint (ma[0], ==, 0);
  g_assert_cmpint (ma[1], ==, 1);
  g_assert_cmpint (ma[2], ==, 2);
  g_assert_cmpint (ma[3], ==, -1);
  g_assert_cmpint (mb[3], ==, -1);
  g_assert_cmpint (mb[0], ==, 0);
  /* Radius 1: only a1-b1 (0.2 apart). */
  g_assert_cmpint (sky_crossmatch (ax, ay, 4, bx, by, 4, 1.0, ma, mb), ==, 1);
  g_assert_cmpint (sky_crossmatch (ax, ay, 0, bx, by, 4, 1.0, ma, mb), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/overlay/csv/pixels", test_csv_pixels);
  g_test_add_func ("/overlay/csv/sky-before-pixels", test_csv_prefers_sky);
  g_test_add_func ("/overlay/csv/sexagesimal", test_csv_sexagesimal);
  g_test_add_func ("/overlay/ecsv/units-and-galactic", test_ecsv_units_and_galactic);
  g_test_add_func ("/overlay/sextractor", test_sextractor);
  g_test_add_func ("/overlay/votable", test_votable);
  g_test_add_func ("/overlay/cli-catalogues", test_cli_catalogues);
  g_test_add_func ("/overlay/regions/shapes", test_regions_shapes);
  g_test_add_func ("/overlay/regions/cli-roundtrip", test_regions_roundtrip);
  g_test_add_func ("/overlay/bad-input", test_bad_input);
  g_test_add_func ("/overlay/frames", test_frames);
  g_test_add_func ("/overlay/to-pixel", test_to_pixel);
  g_test_add_func ("/overlay/crossmatch", test_crossmatch);
  return g_test_run ();
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift [FILE]: the desktop app. */
#include "sky-application.h"

int
main (int argc, char **argv)
{
  g_autoptr (SkyApplication) app = sky_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
/* libskysift links cfitsio statically (so that the Python package needs no
 * cfitsio where it is installed), and Debian's libcfitsio.a carries its
 * network driver, which calls libcurl. skysift takes file names literally
 * (sky_image_load) and never opens a URL, so rather than drag libcurl and
 * its dozen libraries along, these entry points answer that the network is
 * not there: curl_easy_init gives no handle, and cfitsio reports that it
 * cannot open the URL. Hidden, so they never stand in for a real libcurl
 * that another part of the process loads. */
#include <stddef.h>

#define SKY_CURL_HIDDEN __attribute__ ((visibility ("hidden")))
#define SKY_CURLE_FAILED_INIT 2

SKY_CURL_HIDDEN void *curl_easy_init (void);
SKY_CURL_HIDDEN int curl_easy_setopt (void *handle, int option, ...);
SKY_CURL_HIDDEN int curl_easy_perform (void *handle);
SKY_CURL_HIDDEN void curl_easy_cleanup (void *handle);
SKY_CURL_HIDDEN int curl_global_init (long flags);
SKY_CURL_HIDDEN void curl_global_cleanup (void);

void *
curl_easy_init (void)
{
  return NULL;
}

int
curl_easy_setopt (void *handle, int option, ...)
{
  (void) handle, (void) option;
  return SKY_CURLE_FAILED_INIT;
}

int
curl_easy_perform (void *handle)
{
  (void) handle;
  return SKY_CURLE_FAILED_INIT;
}

void
curl_easy_cleanup (void *handle)
{
  (void) handle;
}

int
curl_global_init (long flags)
{
  (void) flags;
  return SKY_CURLE_FAILED_INIT;
}

void
curl_global_cleanup (void)
{
}

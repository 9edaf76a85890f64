#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A big float32 field made by tiling a smaller one, streamed row by row.

  bench/tile-fits.py SMALL.fits OUT.fits --times 2

OUT is SMALL repeated --times over in x and in y (an image of 32768^2
from `skysift-cli synth --size 16384` with --times 2), written a row band
at a time so that the memory used stays that of a few rows whatever the
size: `skysift-cli synth` holds the whole image and more while it makes
one. The header is SMALL's with NAXIS1 and NAXIS2 changed (the WCS then
describes only the first tile: this is a field for timing, not for sky
positions). Only 2-D images of BITPIX -32 without BSCALE/BZERO.
"""
import argparse
import os

import numpy as np
from astropy.io import fits


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("small")
    ap.add_argument("out")
    ap.add_argument("--times", type=int, default=2)
    args = ap.parse_args()
    with fits.open(args.small, memmap=True) as hdul:
        hdu = hdul[0]
        if hdu.header["BITPIX"] != -32 or hdu.header["NAXIS"] != 2:
            raise SystemExit(f"{args.small}: only 2-D BITPIX -32 images")
        header = hdu.header.copy()
        ny, nx = hdu.data.shape
        header["NAXIS1"] = nx * args.times
        header["NAXIS2"] = ny * args.times
        data = hdu.data
        tmp = args.out + ".part"
        with open(tmp, "wb") as out:
            out.write(header.tostring().encode("ascii"))
            band = 256
            for _ in range(args.times):
                for y0 in range(0, ny, band):
                    rows = np.asarray(data[y0:y0 + band], dtype=">f4")
                    out.write(np.tile(rows, (1, args.times)).tobytes())
            size = out.tell()
            out.write(b"\0" * ((-size) % 2880))
        os.replace(tmp, args.out)


if __name__ == "__main__":
    main()

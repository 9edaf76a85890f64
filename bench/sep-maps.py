#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Write SEP's background and rms maps of a FITS image as FITS images, for
`skysift-cli find --method local --bkg BKG.fits --rms RMS.fits`.

usage: sep-maps.py IMAGE.fits BKG.fits RMS.fits [--box 64] [--filter 3]
"""
import argparse

import numpy as np
import sep
from astropy.io import fits


def sep_maps(data, box=64, filt=3):
    data = np.ascontiguousarray(data, dtype=np.float32)
    bkg = sep.Background(data, mask=~np.isfinite(data), bw=box, bh=box, fw=filt, fh=filt)
    return bkg.back().astype(np.float32), bkg.rms().astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("image"), ap.add_argument("bkg"), ap.add_argument("rms")
    ap.add_argument("--box", type=int, default=64), ap.add_argument("--filter", type=int, default=3)
    a = ap.parse_args()
    data = fits.getdata(a.image).squeeze()
    back, rms = sep_maps(data, a.box, a.filter)
    fits.writeto(a.bkg, back, overwrite=True)
    fits.writeto(a.rms, rms, overwrite=True)


if __name__ == "__main__":
    main()

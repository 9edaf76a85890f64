#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The device loader and the CuPy path on a GPU machine, from a folder that
# holds a CUDA build's bin/ (skysift-cli, test-gpu, test-gpu-load) with
# its libraries in lib/, the shared test images in data/, the package's
# wheel in wheel/, tests/python, and bench/ and examples/ beside this
# script (its `run`):
#
#   1. test-gpu-load: the device's image against the host reader's, bit for bit
#   2. bench-gpu-load.py: find --backend gpu, file to catalogue, the device
#      load against the host load, on gc_like_2048, a 32768^2 field and
#      8192^2 fields of BITPIX -32, -64, 16 and 32 (bitpix-fields.py)
#   3. the Python package: python-gpu-profile.py, bench-python.py --gpu,
#      examples/lesson.py, then pytest tests/python
#   4. test-gpu-faults.py, compute-sanitizer on test-gpu-load, and test-gpu
#      (the lesson's steps against the CPU), as time allows
#
# scripts/gpu-load-pack makes that folder as a tarball.
#
# usage: run [OUT]   (OUT defaults to $OUT, the folder that comes back)
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${OUT:-/tmp/gpu-load-out}}
mkdir -p "$out"
deadline=$(( $(date +%s) + ${GPU_LOAD_DEVICE_BUDGET:-560} ))
left () {
  local cap=$1 rest=$(( deadline - $(date +%s) ))
  [ "$rest" -lt "$cap" ] && cap=$rest
  [ "$cap" -lt 1 ] && cap=1
  echo "$cap"
}
export SKYSIFT_SHARED_DATA="$here/data" PYTHONUNBUFFERED=1
# The CLI's libraries for it alone: the machine's Python keeps its own.
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/lib exec %s/bin/skysift-cli "$@"\n' "$here" "$here" \
  > "$here/bin/cli"
chmod +x "$here/bin/cli"
export SKYSIFT_CLI="$here/bin/cli"

echo "== $(date -u +%FT%TZ) $(hostname), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

echo "== test-gpu-load"
LD_LIBRARY_PATH="$here/lib" timeout "$(left 120)" "$here/bin/test-gpu-load" --tap \
  > "$out/test-gpu-load.tap" 2>&1
echo "exit $?: $(grep -c '^ok' "$out/test-gpu-load.tap") ok, $(grep -c '^not ok' \
  "$out/test-gpu-load.tap") not ok"; grep -E '^not ok|^# gpu-load|skip' "$out/test-gpu-load.tap" | head

echo "== bench-gpu-load"
python3 "$here/bench/big-field.py" 32768 32768 /tmp/field-32768.fits
LD_LIBRARY_PATH="$here/lib" timeout "$(left 200)" python3 "$here/bench/bench-gpu-load.py" \
  --cli "$here/bin/skysift-cli" --rounds 5 --record "$out/bigdata.md" "$here/data/gc_like_2048.fits"
LD_LIBRARY_PATH="$here/lib" timeout "$(left 200)" python3 "$here/bench/bench-gpu-load.py" \
  --cli "$here/bin/skysift-cli" --rounds 3 --record "$out/bigdata.md" /tmp/field-32768.fits
python3 "$here/bench/bitpix-fields.py" 8192 /tmp/bitpix
LD_LIBRARY_PATH="$here/lib" timeout "$(left 150)" python3 "$here/bench/bench-gpu-load.py" \
  --cli "$here/bin/skysift-cli" --rounds 3 --record "$out/bigdata.md" /tmp/bitpix/*.fits
rm -rf /tmp/bitpix
for way in device host; do
  export SKYSIFT_GPU_LOAD=$way
  LD_LIBRARY_PATH="$here/lib" /usr/bin/time -f "$way: peak RSS %M KiB, wall %e s" \
    "$here/bin/skysift-cli" find /tmp/field-32768.fits --backend gpu --quiet \
    --csv /tmp/c.csv 2>&1 | tail -1 | tee -a "$out/bigdata.md"
  unset SKYSIFT_GPU_LOAD
done
rm -f /tmp/field-32768.fits

echo "== python"
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$here"/wheel/*.whl
export PYTHONPATH=/tmp/site
cd "$here"
timeout "$(left 60)" python3 bench/python-gpu-profile.py data/gc_like_2048.fits | tee "$out/profile.txt"
timeout "$(left 120)" python3 bench/bench-python.py --gpu --image data/gc_like_2048.fits \
  --cli "$SKYSIFT_CLI" --rounds 20 --record "$out/python.json" | tail -25
timeout "$(left 90)" python3 examples/lesson.py data/gc_like_2048.fits --repeat 10 \
  --json "$out/lesson.json" | tail -12
timeout "$(left 120)" python3 -m pytest -q -p no:cacheprovider tests/python 2>&1 | tail -5

echo "== test-gpu-faults.py"
timeout "$(left 120)" python3 tests/test-gpu-faults.py > "$out/test-gpu-faults.tap" 2>&1
echo "exit $?: $(grep -c '^ok' "$out/test-gpu-faults.tap") ok, $(grep -c '^not ok' \
  "$out/test-gpu-faults.tap") not ok"; grep -E '^not ok' "$out/test-gpu-faults.tap" | head

echo "== compute-sanitizer test-gpu-load (a float, an 8-byte and a 2-byte case)"
san=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -n "$san" ]; then
  for c in f32-scaled i64-unsigned i16-scaled; do
    LD_LIBRARY_PATH="$here/lib" timeout "$(left 100)" "$san" --tool memcheck --error-exitcode 9 \
      "$here/bin/test-gpu-load" -p /gpu-load/same-as-host/$c.fits > /tmp/sanitize.txt 2>&1
    echo "$c: exit $?, $(grep -c 'ERROR SUMMARY: 0 errors' /tmp/sanitize.txt) clean summary" \
      | tee -a "$out/sanitize.txt"
    tail -3 /tmp/sanitize.txt >> "$out/sanitize.txt"
  done
else
  echo "no compute-sanitizer here"
fi

echo "== test-gpu"
LD_LIBRARY_PATH="$here/lib" timeout "$(left 300)" "$here/bin/test-gpu" --tap > "$out/test-gpu.tap" 2>&1
echo "exit $?: $(grep -c '^ok' "$out/test-gpu.tap") ok, $(grep -c '^not ok' "$out/test-gpu.tap") not ok"
grep -E '^not ok' "$out/test-gpu.tap" | head
echo "== done $(date -u +%FT%TZ)"

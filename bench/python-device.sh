#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The Python package's CuPy path on a GPU machine, from the folder that
# scripts/python-gpu-pack makes (bin/ with skysift-cli, test-gpu and
# test-gpu-local of a CUDA build and their libraries in lib/, data/, the
# wheel in wheel/, tests/, bench/, examples/), this script being its `run`:
#
#   1. the wheel installed with pip --no-index --no-deps, pytest tests/python
#   2. python-gpu-profile.py, bench-python.py --gpu, examples/lesson.py, twice
#      (figures as JSON and text under OUT)
#   3. test-gpu (the lesson's steps against the CPU), test-gpu-local and
#      test-gpu-faults.py, as time allows
#
# usage: run [OUT]   (OUT defaults to $OUT, the folder that comes back)
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${OUT:-/tmp/python-device-out}}
mkdir -p "$out"
deadline=$(( $(date +%s) + ${PYTHON_DEVICE_BUDGET:-560} ))
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

echo "== $(date -u +%FT%TZ) $(hostname), $(nproc) cores"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm \
  --format=csv,noheader
python3 -c "import sys, numpy, cupy; print('Python', sys.version.split()[0], 'NumPy', \
numpy.__version__, 'CuPy', cupy.__version__)"

echo "== install"
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$here"/wheel/*.whl
export PYTHONPATH=/tmp/site
cd "$here"
python3 -c "import skysift; print(skysift.__file__, len(skysift.find('data/gc_like_2048.fits', \
table=False)['npix']))"

echo "== pytest tests/python"
timeout "$(left 150)" python3 -m pytest -q -p no:cacheprovider -rs tests/python \
  > "$out/pytest.txt" 2>&1
echo "exit $?"; tail -4 "$out/pytest.txt"; grep -E "^FAILED|Error" "$out/pytest.txt" | head

# Twice each, in separate processes: a process's host speed varies on the
# VM by more than the call's overhead (the figures of each are kept).
for k in 1 2; do
  echo "== profile ($k)"
  timeout "$(left 60)" python3 bench/python-gpu-profile.py data/gc_like_2048.fits \
    >> "$out/profile.txt"; tail -3 "$out/profile.txt"
  echo "== bench-python --gpu ($k)"
  timeout "$(left 120)" python3 bench/bench-python.py --gpu --image data/gc_like_2048.fits \
    --cli "$SKYSIFT_CLI" --record "$out/python$k.json" | tail -10
  echo "== lesson.py ($k)"
  timeout "$(left 120)" python3 examples/lesson.py data/gc_like_2048.fits --repeat 10 \
    --json "$out/lesson$k.json" >> "$out/lesson.txt" 2>&1
  echo "exit $?"; tail -5 "$out/lesson.txt"
done

for t in test-gpu test-gpu-local; do
  echo "== $t"
  LD_LIBRARY_PATH="$here/lib" timeout "$(left 200)" "$here/bin/$t" --tap > /tmp/$t.tap 2>&1
  echo "exit $?: $(grep -c '^ok' /tmp/$t.tap) ok, $(grep -c '^not ok' /tmp/$t.tap) not ok"
  grep -E '^not ok' /tmp/$t.tap | head
  { echo "# $t"; cat /tmp/$t.tap; } >> "$out/tests.tap"
done
echo "== test-gpu-faults.py"
timeout "$(left 100)" python3 tests/test-gpu-faults.py > /tmp/faults.tap 2>&1
echo "exit $?: $(grep -c '^ok' /tmp/faults.tap) ok, $(grep -c '^not ok' /tmp/faults.tap) not ok"
{ echo "# test-gpu-faults.py"; cat /tmp/faults.tap; } >> "$out/tests.tap"
echo "== done $(date -u +%FT%TZ)"

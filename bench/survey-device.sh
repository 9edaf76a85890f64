#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# skysift.survey on a GPU machine, from the folder scripts/survey-device-pack
# makes (this script is its `run`): the Python package with a CUDA build of
# libskysift, skysift-cli (its libraries in lib/, used by it alone), and
# Debian 12's pure-Python dask, distributed, tornado, partd, locket, tblib
# and zict unpacked from their .debs (deps/), on the machine's own Python
# and NumPy (its msgpack, psutil, cloudpickle, toolz, PyYAML, click...).
#
#   run check [OUT]   versions; whether dask.distributed starts a local
#                     cluster there; a 4-image survey on the GPU workers
#   run test [OUT]    tests/test_survey.py (pytest), the GPU test included
#   run bench [OUT]   bench-survey.py: 200 fields of 2048^2, a shell loop of
#                     skysift-cli (CPU, GPU) against the survey on CPU
#                     workers and on the GPU worker(s), 3 interleaved rounds
#   run all [OUT]     the three in turn
#
# OUT defaults to $OUT (the device tool's folder that comes back).
set -u
here=$(cd "$(dirname "$0")" && pwd)
what=${1:-all}
out=${2:-${OUT:-/tmp/survey-device-out}}
mkdir -p "$out"
export PYTHONPATH="$here/site:$here/deps${PYTHONPATH:+:$PYTHONPATH}"
export SKYSIFT_CLI="$here/bin/skysift-cli"
export PYTHONUNBUFFERED=1
# distributed 2022.12 reads GPU names through pynvml as bytes; the GPU machine's newer pynvml
# gives str, and its scheduler then fails to start. The survey pins GPUs itself
# (CUDA_VISIBLE_DEVICES per worker) and needs none of NVML's dashboard figures.
export DASK_DISTRIBUTED__DIAGNOSTICS__NVML=${DASK_DISTRIBUTED__DIAGNOSTICS__NVML:-False}
py=${PYTHON:-python3}
status=0
# The device tool stops a command at 600 s: each phase gets at most what is
# left of SURVEY_DEVICE_BUDGET seconds (the benchmark writes its record
# after every round, so a cut run still brings its finished rounds back).
deadline=$(( $(date +%s) + ${SURVEY_DEVICE_BUDGET:-570} ))
left () {
  local cap=$1 rest=$(( deadline - $(date +%s) ))
  [ "$rest" -lt "$cap" ] && cap=$rest
  [ "$cap" -lt 1 ] && cap=1
  echo "$cap"
}

check () {
  echo "== check: $(date -u +%FT%TZ) on $(hostname), $(nproc) cores"
  nvidia-smi -L || true
  echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-<unset>}"
  timeout "$(left 120)" "$py" "$here/bench/survey-device-check.py"
  case $? in
    0) ;;
    3) echo "distributed runs here with its NVML diagnostics off: the rest runs so"
       export DASK_DISTRIBUTED__DIAGNOSTICS__NVML=False ;;
    *) return 1 ;;
  esac
  rm -rf /tmp/survey-check && mkdir -p /tmp/survey-check/in
  for k in 1 2 3 4; do "$SKYSIFT_CLI" synth /tmp/survey-check/in/f$k.fits --size 1024 --seed $k \
    >/dev/null || return 1; done
  timeout "$(left 120)" "$py" -m skysift.survey /tmp/survey-check/in/*.fits \
    --out /tmp/survey-check/out --no-progress --backend gpu --format parquet || return 1
  "$py" -c "import json; d = json.load(open('/tmp/survey-check/out/survey.json')); \
print([(i['name'], i['backend'], i['cuda_visible_devices'], i['gpu_fault']) for i in d['images']])"
}

tests () {
  echo "== test: $(date -u +%FT%TZ)"
  ( cd "$here/tests" && timeout "$(left 240)" "$py" -m pytest -q -p no:cacheprovider -rs \
      test_survey.py )
}

bench () {
  echo "== bench: $(date -u +%FT%TZ)"
  timeout "$(left 600)" "$py" "$here/bench/bench-survey.py" --cli "$SKYSIFT_CLI" \
    --dir /tmp/survey-bench \
    --count 200 --size 2048 --workers 16 --gpu --gpu-tasks 1,2 --rounds 3 \
    --record "$out/survey-gpu-bench.json"
}

# check runs in this shell (not a pipeline's subshell): what it exports
# holds for the test and the benchmark.
case $what in
  check) check > >(tee "$out/survey-check.log") 2>&1; status=$? ;;
  test) tests 2>&1 | tee "$out/survey-test.log"; status=${PIPESTATUS[0]} ;;
  bench) bench 2>&1 | tee "$out/survey-bench.log"; status=${PIPESTATUS[0]} ;;
  all)
    check > >(tee "$out/survey-check.log") 2>&1; status=$?
    if [ "$status" -ne 0 ]; then
      echo "survey-device: dask.distributed or the survey does not run here (log above):" \
        "the GPU figures are blocked"
      exit "$status"
    fi
    tests 2>&1 | tee "$out/survey-test.log"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    bench 2>&1 | tee "$out/survey-bench.log"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    ;;
  *) echo "usage: $0 [check|test|bench|all] [OUT]" >&2; exit 2 ;;
esac
exit "$status"

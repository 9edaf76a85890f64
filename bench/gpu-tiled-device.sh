#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The GPU's runs in bands of rows on a GPU machine, from a folder that
# scripts/gpu-pack made (this script copied into it): tests/test-gpu-tiled.py;
# on a 32768^2 field the whole-image run, then the same with most of the
# device's memory held by another process (the run goes to bands by itself)
# and --backend both --gpu-memory-limit 2G; then a 65536^2 field (2^32
# pixels, past what a whole-image run takes) on the GPU in bands against the
# CPU under --memory-limit 8G. Every catalogue is compared byte for byte.
#
# Usage: PACK/gpu-tiled-device.sh [OUT] [DIR]   (DIR holds the fields;
# SKYSIFT_TILED_MID and SKYSIFT_TILED_BIG change the sizes, for a dry run)
set -uo pipefail
pack=$(cd "$(dirname "$0")" && pwd)
out=${1:-$pack/out}
dir=${2:-/tmp/skysift-gpu-tiled}
cli=$pack/bin/skysift-cli
export LD_LIBRARY_PATH="$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
mkdir -p "$out" "$dir"
mid=${SKYSIFT_TILED_MID:-32768}   # smaller for a dry run
big=${SKYSIFT_TILED_BIG:-65536}
status=0

same () {
  if cmp -s "$1" "$2"; then echo "CSV: the same as $(basename "$2")"; else echo "CSV: DIFFERS from $(basename "$2")"; status=1; fi
}

echo "== tests/test-gpu-tiled.py"
SKYSIFT_CLI=$cli python3 "$pack/tests/test-gpu-tiled.py" > "$out/test-gpu-tiled.log" 2>&1 || status=1
grep -v '^ok' "$out/test-gpu-tiled.log" | head -30
echo "tap: $(grep -c '^ok' "$out/test-gpu-tiled.log") ok, $(grep -c '^not ok' "$out/test-gpu-tiled.log") not ok"

f=$dir/synth-$mid.fits
[ -f "$f" ] || "$cli" synth "$f" --size $mid > /dev/null
cat "$f" > /dev/null
echo "== $mid^2, whole image on the device"
"$cli" find "$f" --backend gpu --csv "$dir/whole.csv" | grep -E "^sources|^gpu|^times"

echo "== $mid^2 with all but about 8 GiB of the device's memory held by another process"
python3 -c "
import torch, time
free, total = torch.cuda.mem_get_info()
x = torch.empty(free - (8 << 30), dtype=torch.uint8, device='cuda')
print('held', x.numel() >> 20, 'MiB of', total >> 20, flush=True)
time.sleep(120)" > "$dir/hold.log" 2>&1 &
hold=$!
for _ in $(seq 60); do grep -q held "$dir/hold.log" && break; sleep 1; done
cat "$dir/hold.log"
nvidia-smi --query-gpu=memory.used,memory.free --format=csv,noheader
"$cli" find "$f" --backend gpu --csv "$dir/auto.csv" --json "$out/auto-$mid.json" |
  grep -E "^sources|^gpu|^times"
same "$dir/auto.csv" "$dir/whole.csv"
kill "$hold"; wait "$hold" 2> /dev/null

echo "== $mid^2, --backend both --gpu-memory-limit 2G"
"$cli" find "$f" --backend both --gpu-memory-limit 2G --csv "$dir/both.csv" |
  grep -E "^results|^gpu bands|^  four"
same "$dir/both.csv" "$dir/whole.csv"
rm -f "$f"

g=$dir/synth-$big.fits
echo "== $big^2 (2^32 pixels): the field"
s0=$SECONDS
[ -f "$g" ] || "$cli" synth "$g" --size $big > /dev/null
echo "synth $((SECONDS - s0)) s"
cat "$g" > /dev/null
echo "== $big^2 on the GPU (bands: a whole-image run takes up to 2^32 - 1 pixels)"
python3 "$pack/run-rss.py" "$out/g$big.rss" "$cli" find "$g" --backend gpu --csv "$dir/g$big.csv" \
  --json "$out/g$big.json" | grep -E "^sources|^gpu|^times|^clipped"
cat "$out/g$big.rss"
echo "== $big^2 on the CPU under --memory-limit 8G"
python3 "$pack/run-rss.py" "$out/c$big.rss" "$cli" find "$g" --memory-limit 8G \
  --csv "$dir/c$big.csv" --json "$out/c$big.json" | grep -E "^sources|^times|^clipped"
cat "$out/c$big.rss"
same "$dir/g$big.csv" "$dir/c$big.csv"
rm -f "$g"
exit $status

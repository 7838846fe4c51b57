#!/usr/bin/env bash
# samples/demo.sh: installs what is missing, builds profopt, records the pipeline simulator
# (a main process and two forked data-loader workers) with profopt-record, and analyzes it:
# the report is in out/demo/report/index.html.
# Environment: PROFOPT_BUILD_DIR (default build/), PROFOPT_DEMO_DIR (default out/demo).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PROFOPT_BUILD_DIR:-$root/build}
out=${PROFOPT_DEMO_DIR:-$root/out/demo}

"$root/tests/lib/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null

mkdir -p "$out"
rm -rf "$out/trace"
# Each batch waits 30 ms on simulated I/O in a worker; a step computes for about 10 ms.
# Two workers cannot keep up: the report should find the loop input-bound, blame the
# load stage, and predict what more workers would buy on this machine.
echo "== Recording profopt-sim: 2 data-loader workers, 300 steps, slow loading =="
"$build/bin/profopt-record" -o "$out/trace" -- \
	"$build/bin/profopt-sim" --workers 2 --steps 300 --batch-size 32 \
	--load-ms 30 --preprocess-ms 2 --collate-ms 1 --h2d-ms 1 \
	--forward-ms 3 --backward-ms 4 --optimizer-ms 1 --kernels 8 --gpu-ms 6 --seed 1

if [ -x "$build/bin/profopt-analyze" ]; then
	echo "== Analyzing =="
	"$build/bin/profopt-analyze" "$out/trace" -o "$out/report" --force
	echo "Open $out/report/index.html in a browser; report.pdf is beside it."
else
	echo "== Recorded events (profopt-analyze is not built yet) =="
	babeltrace2 "$out/trace" | sed -E 's/.* (profopt:[a-z_]+):.*vpid = ([0-9]+).*/\2 \1/' |
		sort | uniq -c | sort -k2,2n -k3
fi

#!/usr/bin/env bash
# run.sh BIN_DIR CHECK_REPORT_PY: records an input-bound profopt-sim run, analyses it and
# checks the HTML, SVG and PDF report it produces. Run next to a session daemon.
set -u
bin=$1
check=$2
work=$(mktemp -d /tmp/profopt-e2e-report.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Slow loading in two workers: the training loop waits for data.
timeout -k 10 300 "$bin/profopt-record" -o "$work/trace" -- "$bin/profopt-sim" --workers 2 \
	--steps 40 --load-ms 8 --forward-ms 1 --backward-ms 1 --kernels 4 --gpu-ms 1 \
	>"$work/record.log" 2>&1 || { cat "$work/record.log"; exit 1; }
timeout 300 "$bin/profopt-analyze" "$work/trace" -o "$work/out" >"$work/analyze.log" 2>&1 ||
	{ cat "$work/analyze.log"; exit 1; }

status=0
/usr/bin/python3 "$check" --output-dir "$work/out" outputs recorded || status=1
/usr/bin/python3 "$check" --output-dir "$work/out" chromium recorded
case $? in
0 | 77) ;;
*) status=1 ;;
esac
exit $status

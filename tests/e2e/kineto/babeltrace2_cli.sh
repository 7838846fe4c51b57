#!/usr/bin/env bash
# babeltrace2_cli.sh PLUGIN_DIR DATA_DIR: the plugin "profopt" gives source.profopt.kineto to
# the babeltrace2 command line: a trace prints as profopt's events, and sink.ctf.fs writes
# it as a CTF trace that profopt-analyze reads like a recording (the converter).
set -u
plugins=$1 data=$2
bin=$(dirname "$(dirname "$(dirname "$plugins")")")/bin
work=$(mktemp -d /tmp/profopt-kineto-bt.XXXXXX)
trap 'rm -rf "$work"' EXIT
sample=$data/mi250-train/amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz
source=(--plugin-path="$plugins" -c source.profopt.kineto -p "inputs=[\"$sample\"]")
babeltrace2 "${source[@]}" >"$work/text" 2>&1 || { echo "FAIL babeltrace2:"; tail "$work/text"; exit 1; }
for event in profopt:step_begin profopt:stage_end profopt:gpu_kernel profopt:gpu_launch profopt:gpu_device; do
	grep -q "$event:" "$work/text" || { echo "FAIL no $event in babeltrace2's text"; exit 1; }
done
babeltrace2 "${source[@]}" -c sink.ctf.fs -p "path=\"$work/ctf\"" >"$work/convert" 2>&1 ||
	{ echo "FAIL sink.ctf.fs:"; tail "$work/convert"; exit 1; }
"$bin/profopt-analyze" --json-only -o "$work/from-json" "$sample" >"$work/a.out" 2>&1 &&
	"$bin/profopt-analyze" --json-only -o "$work/from-ctf" "$work/ctf" >"$work/b.out" 2>&1 ||
	{ echo "FAIL profopt-analyze:"; tail "$work/a.out" "$work/b.out"; exit 1; }
sed -n '/^Steps/,/^Findings/p' "$work/a.out" >"$work/a.steps"
sed -n '/^Steps/,/^Findings/p' "$work/b.out" >"$work/b.steps"
if ! cmp -s "$work/a.steps" "$work/b.steps"; then
	echo "FAIL the CTF conversion is analysed otherwise than the JSON:"; diff "$work/a.steps" "$work/b.steps"; exit 1
fi
echo "ok   babeltrace2 text, sink.ctf.fs conversion analysed alike"
echo "2 passed, 0 failed"

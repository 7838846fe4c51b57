#!/usr/bin/env bash
# babeltrace2_cli.sh PLUGIN_DIR DATA_DIR: the plugin "profopt" gives source.profopt.kineto to
# the babeltrace2 command line: a trace prints as profopt's events, and sink.ctf.fs writes
# it as a CTF trace that profopt-analyze reads like a recording (the converter), stack
# samples made of python_function calls included.
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
# the converter, on a trace of GPU work and on one of Python calls (stack samples: arrays)
convert() { # convert NAME FILE: the CTF conversion of FILE is analysed as FILE is
	local name=$1 file=$2
	babeltrace2 --plugin-path="$plugins" -c source.profopt.kineto -p "inputs=[\"$file\"]" \
		-c sink.ctf.fs -p "path=\"$work/$name.ctf\"" >"$work/$name.convert" 2>&1 ||
		{ echo "FAIL $name: sink.ctf.fs:"; tail "$work/$name.convert"; exit 1; }
	"$bin/profopt-analyze" --json-only -o "$work/$name.from-json" "$file" >"$work/$name.a" 2>&1 &&
		"$bin/profopt-analyze" --json-only -o "$work/$name.from-ctf" "$work/$name.ctf" \
			>"$work/$name.b" 2>&1 ||
		{ echo "FAIL $name: profopt-analyze:"; tail "$work/$name.a" "$work/$name.b"; exit 1; }
	sed -n '/^Steps/,/^Findings/p' "$work/$name.a" >"$work/$name.a.steps"
	sed -n '/^Steps/,/^Findings/p' "$work/$name.b" >"$work/$name.b.steps"
	if ! cmp -s "$work/$name.a.steps" "$work/$name.b.steps"; then
		echo "FAIL $name: the CTF conversion is analysed otherwise than the JSON:"
		diff "$work/$name.a.steps" "$work/$name.b.steps"
		exit 1
	fi
}
convert mi250 "$sample"
convert python "$(ls "$data"/python-stacks/*.pt.trace.json)"
grep -q '^Hotspots' "$work/python.b" || { echo "FAIL python: no hotspots from the CTF"; exit 1; }
echo "ok   babeltrace2 text, sink.ctf.fs conversion analysed alike (GPU work, Python calls)"
echo "3 passed, 0 failed"

#!/usr/bin/env bash
# analyze.sh BIN_DIR EXPECT [TRAIN ARGS...]: records samples/pytorch/train.py, runs
# profopt-analyze on the trace and checks that summary.json has the expected finding:
# EXPECT is input-bound (with preprocess as its stage or cause), leak
# (host-memory-growth in the main process), or leak-line (the same, recorded with
# PROFOPT_PYTHON_MEMORY=1: the finding names train.py's line that keeps the tensors).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bin=$1 expect=$2
shift 2
work=$(mktemp -d /tmp/profopt-e2e-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
train=("$root/samples/pytorch/train.py" "$@")
[ "$expect" = leak-line ] && export PROFOPT_PYTHON_MEMORY=1
if [ -x "$bin/profopt-record" ]; then
	# Next to a private daemon: tests run in parallel, and a daemon profopt-record
	# started in the shared namespace would be stopped under another test's feet.
	"$root/tests/lib/with-sessiond.sh" "$bin/profopt-record" -o "$work/trace" -- \
		/usr/bin/python3 "${train[@]}" >"$work/record.log" 2>&1 ||
		{ cat "$work/record.log"; exit 1; }
else
	"$root/tests/lib/with-sessiond.sh" "$here/record.sh" "$work/trace" \
		/usr/bin/python3 "${train[@]}" || exit 1
fi
"$bin/profopt-analyze" "$work/trace" -o "$work/report" >"$work/analyze.log" 2>&1 || {
	cat "$work/analyze.log"; exit 1; }

leak_line=$(grep -n "leaked.append" "$root/samples/pytorch/train.py" | cut -d: -f1)
/usr/bin/python3 - "$expect" "$work/report/summary.json" "train.py:$leak_line" <<'PY'
import json, sys
expect, path, leak_line = sys.argv[1], sys.argv[2], sys.argv[3]
summary = json.load(open(path))
findings = summary.get("findings", [])
ids = [f.get("id") for f in findings]
print("verdict:", summary.get("verdict"), "findings:", ids)
def mentions_preprocess(finding):
    evidence = finding.get("evidence", {})
    return "preprocess" in (str(evidence.get("stage")), str(evidence.get("cause")))
if expect == "input-bound":
    ok = any(f.get("id") == "input-bound" and mentions_preprocess(f) for f in findings)
    print(("ok   " if ok else "FAIL ") + "input-bound with preprocess as its stage or cause")
else:
    growth = [f for f in findings if f.get("id") == "host-memory-growth"]
    ok = bool(growth) and growth[0]["evidence"].get("process_role") == "main"
    print(("ok   " if ok else "FAIL ") + "host-memory-growth found in the main process")
    if expect == "leak-line":
        line = growth[0]["evidence"].get("python_line") if growth else None
        good = line == leak_line and leak_line in growth[0]["recommendations"][0]["action"]
        print(("ok   " if good else "FAIL ") + f"the finding names {leak_line}: {line}")
        ok = ok and good
sys.exit(0 if ok else 1)
PY

#!/usr/bin/env bash
# A one-letter change to an event name in the trace's metadata (profopt:gpu_activity becomes
# profopt:gpu_activitx) used to drop every GPU record without a word. The analysis goes on
# without them and its result says so: an unknown-profopt-events warning in summary.json,
# naming the class and the count, and no GPU made up from nothing.
set -u
bin=$1
work=$(mktemp -d /tmp/profopt-unknown-events.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
failed=0 passed=0
check() { # check TEXT COMMAND...
	local text=$1
	shift
	if "$@"; then passed=$((passed + 1)); echo "ok   $text"; else failed=$((failed + 1)); echo "FAIL $text"; fi
}

"$bin/profopt-record" -o "$work/trace" -- "$bin/profopt-sim" --workers 1 --steps 30 \
	--load-ms 1 --forward-ms 1 --kernels 4 --gpu-ms 2 >/dev/null 2>&1 ||
	{ echo "FAIL record"; exit 1; }
/usr/bin/python3 - "$work/trace" <<'PY' || { echo "FAIL no metadata names profopt:gpu_activity"; exit 1; }
import glob, sys
changed = 0
for path in glob.glob(sys.argv[1] + "/**/metadata", recursive=True):
    data = open(path, "rb").read()
    changed += data.count(b'"profopt:gpu_activity"')
    open(path, "wb").write(data.replace(b'"profopt:gpu_activity"', b'"profopt:gpu_activitx"'))
sys.exit(0 if changed else 1)
PY
analyzer "$work/trace" -o "$work/report" -q
check "the damaged trace still analyses (exit $?)" [ -f "$work/report/summary.json" ]
/usr/bin/python3 - "$work/report/summary.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
warnings = [w["text"] for w in summary["trace"]["warnings"] if w["code"] == "unknown-profopt-events"]
print("warnings:", warnings)
# 30 steps of 4 kernels and one host-to-device copy each.
ok = bool(warnings) and "profopt:gpu_activitx" in warnings[0] and "150 events" in warnings[0]
print(("ok   " if ok else "FAIL ") + "an unknown-profopt-events warning names the class and its 150 events")
gpus = summary.get("gpu") or []
print(("ok   " if not gpus else "FAIL ") + f"no GPU without its records: {len(gpus)}")
sys.exit(0 if ok and not gpus else 1)
PY
check "summary.json says what was ignored" [ $? -eq 0 ]
valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

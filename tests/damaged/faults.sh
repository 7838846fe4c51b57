#!/usr/bin/env bash
# faults.sh BIN_DIR [user|pid]: the faults of make_faults.py through profopt-analyze, in a
# recording with per-user buffers (the default: one trace directory for every process) or
# per-process ones (--buffers pid), each checked for its exit status, its one-line
# message, trace.partial, trace.warnings, trace.missing_windows, its step count against
# the undamaged trace, the packets --salvage kept, and no leftover files (no staging
# directory, no report after an error, no scratch copy of --salvage) or change to the
# trace itself.
set -u
bin=$1
layout=${2:-user}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/profopt-faults.XXXXXX)
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir "$work/tmp" && chmod 1777 "$work/tmp"
export PROFOPT_DECODE_LIMITS="cpu=10,mem=1024,wall=30" TMPDIR=$work/tmp
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $layout $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $layout $*"; }
# What a trace directory holds: names, sizes, modes and times of its entries.
digest() { find "$1" -printf '%P %s %m %T@\n' | sort | md5sum; }

buffers=()
[ "$layout" = pid ] && buffers=(--buffers pid)
"$bin/profopt-record" "${buffers[@]}" -o "$work/trace" -- "$bin/profopt-sim" --workers 2 \
	--steps 400 --load-ms 1 --forward-ms 2 >"$work/record.log" 2>&1 ||
	{ cat "$work/record.log"; exit 1; }
"$bin/profopt-analyze" --json-only -o "$work/undamaged" "$work/trace" >/dev/null 2>&1 ||
	{ echo "the undamaged trace does not analyse"; exit 1; }
/usr/bin/python3 "$here/make_faults.py" "$work/trace" "$work/faults" || exit 1

nobody=$(id -u nobody 2>/dev/null || echo 65534)
count=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' \
	"$work/faults/cases.json")
for i in $(seq 0 $((count - 1))); do
	eval "$(/usr/bin/python3 - "$work/faults/cases.json" "$i" <<'PY'
import json, shlex, sys
case = json.load(open(sys.argv[1]))[int(sys.argv[2])]
print("name=%s want=%d as_nobody=%d args=(%s)" % (
    shlex.quote(case["name"]), case["status"], int(case["as_nobody"]),
    " ".join(shlex.quote(a) for a in case["args"])))
PY
)"
	dir="$work/faults/$name" out="$work/out/$name"
	mkdir -p "$work/out" && chmod 777 "$work/out"
	if [ "$as_nobody" -eq 1 ]; then
		if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
			ok "$name: not run (needs root and setpriv to act as an unprivileged user)"
			continue
		fi
		chmod -R o+rX "$work/faults/$name" && chmod o-r "$(find "$dir" -name metadata | head -n 1)"
		setpriv --reuid="$nobody" --regid="$nobody" --clear-groups \
			timeout 120 "$bin/profopt-analyze" --json-only -o "$out" "$dir" \
			>"$work/stdout" 2>"$work/stderr"
	else
		before=$(digest "$dir")
		timeout 120 "$bin/profopt-analyze" --json-only "${args[@]}" -o "$out" "$dir" \
			>"$work/stdout" 2>"$work/stderr"
	fi
	status=$?
	if [ "$status" -ne "$want" ]; then
		fail "$name: exit $status, want $want: $(head -c 300 "$work/stderr")"
		continue
	fi
	if ls -a "$work/out" | grep -q '\.profopt-'; then
		fail "$name: a staging directory was left behind"
		continue
	fi
	if [ -n "$(ls -A "$work/tmp")" ]; then
		fail "$name: scratch files were left behind: $(ls -A "$work/tmp")"
		rm -rf "${work:?}/tmp/"*
		continue
	fi
	if [ "$as_nobody" -eq 0 ] && [ "$(digest "$dir")" != "$before" ]; then
		fail "$name: the trace directory changed"
		continue
	fi
	if /usr/bin/python3 - "$work/faults/cases.json" "$i" "$out" "$work/stderr" \
		"$work/undamaged/summary.json" <<'PY'; then
import json, os, re, sys
case = json.load(open(sys.argv[1]))[int(sys.argv[2])]
out, stderr, undamaged = sys.argv[3], open(sys.argv[4]).read(), sys.argv[5]
problems = []
if case["status"] != 0:
    lines = [l for l in stderr.splitlines() if l]
    if len(lines) != 1 or not lines[0].startswith("profopt-analyze: "):
        problems.append("want one profopt-analyze line, got %r" % stderr[:300])
    elif not re.search(case["message"], lines[0]):
        problems.append("message %r does not match %r" % (lines[0], case["message"]))
    if os.path.exists(out):
        problems.append("an output directory was written")
else:
    summary = json.load(open(os.path.join(out, "summary.json")))
    trace = summary["trace"]
    codes = [w["code"] for w in trace["warnings"]]
    kinds = [w["kind"] for w in trace["missing_windows"]]
    if case["partial"] is not None and trace["partial"] != case["partial"]:
        problems.append("partial is %s" % trace["partial"])
    problems += ["no %s warning (%s)" % (c, codes) for c in case["warnings"] if c not in codes]
    problems += ["no %s window (%s)" % (k, kinds) for k in case["missing"] if k not in kinds]
    steps, before = summary["steps"]["count"], json.load(open(undamaged))["steps"]["count"]
    if case["steps"] == "same" and steps != before:
        problems.append("%d steps, the undamaged trace has %d" % (steps, before))
    if case["steps"] == "fewer" and not steps < before:
        problems.append("%d steps, not fewer than %d" % (steps, before))
    if case["steps"] == "most" and not before / 2 < steps <= before:
        problems.append("%d steps, want over half of %d" % (steps, before))
    if case["kept_all_but"] is not None:
        texts = [w["text"] for w in trace["warnings"] if w["code"] == "salvaged-streams"]
        kept = re.search(r" keeps (\d+) of (\d+) packets", texts[0]) if texts else None
        if not kept or int(kept.group(2)) - int(kept.group(1)) != case["kept_all_but"]:
            problems.append("want all but %d packets kept: %s" % (case["kept_all_but"], texts))
for p in problems:
    print("     " + p)
sys.exit(1 if problems else 0)
PY
		ok "$name: exit $status$( [ "$status" -ne 0 ] && echo ": $(head -c 200 "$work/stderr")")"
	else
		fail "$name"
	fi
done

echo "$layout: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

#!/usr/bin/env bash
# shares.sh BIN 3.X: records shares.py (a pure-Python loop of designed CPU costs that
# measures them itself) on CPython 3.X under profopt-record --stacks and checks the analysis
# against that truth, as e2e.stacks.c_truth does for C: libprofopt's reader sampled every
# thread (stacks_threads "all"); the loading functions' total shares of the load stage
# within 5 points, each named with its file and first line; forward and the second
# thread's preprocess spans each in their own function. When the loop shared its core and
# the samples came from POSIX CPU timers, the shares are reported, not judged (as in
# e2e.stacks.c_truth). Exits 77 (skip) where CPython 3.X is not installed.
set -eu
bin=$1 version=$2
here=$(cd "$(dirname "$0")" && pwd)
status=0
python=$("$here/../../lib/python-version.sh" "$version" -c 'import sys; print(sys.executable)') ||
	status=$?
if [[ $status -ne 0 ]]; then
	echo "$python"
	exit "$status"
fi
work=$(mktemp -d /tmp/profopt-shares.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$bin/profopt-record" --stacks=1000 -o "$work/trace" -- "$python" "$here/shares.py" 100 \
	"$work/truth.json" >/dev/null
"$bin/profopt-analyze" "$work/trace" -o "$work/report" >"$work/stdout"

/usr/bin/python3 - "$work" "$here/shares.py" <<'PY'
import json, re, sys
work, source = sys.argv[1], sys.argv[2]
summary = json.load(open(f"{work}/report/summary.json"))
truth = json.load(open(f"{work}/truth.json"))
lines = {name: number for number, text in enumerate(open(source), 1)
         for name in re.findall(r"^def (\w+)\(seed\):", text)}
config = summary["run"]["config"]
groups = {(g["role"], g["stage"]): g for g in summary.get("hotspots", [])}
failures = []

def functions(stage):
    group = groups.get(("main", stage))
    if not group:
        failures.append(f"no hotspots for main {stage}: {sorted(groups)}")
        return {}
    return {f["function"]: f for f in group["functions"]}

python = truth["python"]
if config.get("stacks_threads") != "all":
    failures.append(f"CPython {python}: the samples are not libprofopt's reader's "
                    f"(stacks_threads {config.get('stacks_threads')!r}, stacks_timer "
                    f"{config.get('stacks_timer')!r})")
else:
    print(f"ok CPython {python}: libprofopt's reader sampled every thread "
          f"({config.get('stacks_timer')})")
load = functions("load")
loading = ("decode_record", "augment_record", "normalize_record")
total_ns = sum(truth[f"{name}_ns"] for name in loading)
shared = truth["loop_wall_ns"] > truth["loop_cpu_ns"] * 1.25
alone = not shared or config.get("stacks_timer") == "counter"
if shared:
    print(f"note the loop shared its core ({truth['loop_cpu_ns'] / 1e6:.0f} ms of CPU in "
          f"{truth['loop_wall_ns'] / 1e6:.0f} ms), sampled by {config.get('stacks_timer')}: "
          "the shares are " + ("judged" if alone else "reported, not judged"))
for name in loading:
    designed = 100.0 * truth[f"{name}_ns"] / total_ns
    got = load.get(name)
    if not got:
        failures.append(f"load: no {name}")
    elif abs(got["total_pct"] - designed) > 5 and alone:
        failures.append(f"load: {name} {got['total_pct']}% against {designed:.1f}%")
    elif not got["file"].endswith("shares.py") or got["line"] != lines[name]:
        failures.append(f"{name} at {got['file']}:{got['line']}, not shares.py:{lines[name]}")
    else:
        judged = "ok" if abs(got["total_pct"] - designed) <= 5 else "note (not judged)"
        print(f"{judged} load: {name} {got['total_pct']}% against {designed:.1f}% measured "
              f"({got['file'].split('/')[-1]}:{got['line']})")
for stage, name in (("forward", "forward_pass"), ("preprocess", "resize_record")):
    got = functions(stage).get(name)
    if not got or got["total_pct"] < 90:
        failures.append(f"{stage}: {name} {got and got['total_pct']}%, not 90% or more")
    else:
        print(f"ok {stage}: {name} {got['total_pct']}%")
if "resize_record" in load and load["resize_record"]["total_pct"] > 2:
    failures.append(f"the other thread's resize_record in load: {load['resize_record']}")
if failures:
    print(open(f"{work}/stdout").read())
    print("\n".join(failures))
    sys.exit(1)
PY

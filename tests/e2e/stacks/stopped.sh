#!/usr/bin/env bash
# stopped.sh BIN PROGRAM: records PROGRAM (takeover_c.c: it installs its own SIGURG handler
# in the middle of its run) under profopt-record --stacks and checks that the result says
# the sampling stopped: the trace quality warning stacks-stopped, with the run's
# configuration's stacks_stopped, and that samples were taken before it.
set -eu
bin=$1 program=$2
work=$(mktemp -d /tmp/profopt-stacks-stopped.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$bin/profopt-record" --stacks=1000 -o "$work/trace" -- "$program" 2>"$work/stderr" >/dev/null
"$bin/profopt-analyze" "$work/trace" -o "$work/report" >"$work/stdout"

/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
summary = json.load(open(f"{work}/report/summary.json"))
stderr = open(f"{work}/stderr").read()
warnings = {w["code"]: w["text"] for w in summary["trace"].get("warnings", [])}
config = summary["run"]["config"]
failures = []
if "stacks-stopped" not in warnings:
    failures.append(f"no stacks-stopped warning: {sorted(warnings)}")
if "SIGURG" not in config.get("stacks_stopped", ""):
    failures.append(f"run config stacks_stopped: {config.get('stacks_stopped')!r}")
if "function samples stopped" not in stderr:
    failures.append(f"stderr: {stderr!r}")
if not summary.get("hotspots"):
    failures.append("no samples before the stop")
print("warning:", warnings.get("stacks-stopped"))
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok the result says the sampling stopped")
PY

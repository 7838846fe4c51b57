#!/usr/bin/env bash
# run.sh BIN PROGRAM SOURCE: records PROGRAM (stacks_c.c: a C loop of designed CPU costs
# that measures them itself) under profopt-record --stacks and checks the analysis against
# that truth: the loading functions' self shares of the load stage within 5 points, each
# named with its source file and first line; forward and the second thread's preprocess
# spans each in their own function; the reports name the dominant function. When the loop
# shared its core with other programs (its wall time a quarter more than its CPU time) and
# the samples came from POSIX CPU timers (where the kernel refused perf counters), they
# drift (docs/sampling.md, Limits): the shares are then reported, not judged.
set -eu
bin=$1 program=$2 source=$3
work=$(mktemp -d /tmp/profopt-stacks-c.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$bin/profopt-record" --stacks=1000 -o "$work/trace" -- "$program" 150 "$work/truth.json" \
	>/dev/null
"$bin/profopt-analyze" "$work/trace" -o "$work/report" >"$work/stdout"

/usr/bin/python3 - "$work" "$source" "$(dirname "$0")/../../lib" <<'PY'
import html, sys
sys.path.insert(0, sys.argv[3])
from designed_shares import Designed
work, source = sys.argv[1], sys.argv[2]
run = Designed(work, source, r"static int64_t (\w+)\(uint32_t seed\)")
run.check("self")
summary, failures, alone = run.summary, run.failures, run.alone
for finding in summary["findings"]:
    evidence = finding.get("evidence", {})
    if alone and evidence.get("hotspot_function", "decode_record") != "decode_record":
        failures.append(f"{finding['id']} names {evidence['hotspot_function']}")
page = html.unescape(open(f"{work}/report/index.html").read())
if "decode_record" not in page:
    failures.append("index.html does not name decode_record")
print(open(f"{work}/stdout").read())
if failures:
    print("\n".join(failures))
    sys.exit(1)
PY

#!/usr/bin/env bash
# profopt-analyze --partial and --merge (docs/distributed.md, "Many hosts"):
# - 64 ranks on 16 hosts, each host's partial summary designed (tests/lib/synth_partials.py:
#   rank 5 enters every all-reduce 12 ms late, host h's clock runs h * 7 ms ahead): the
#   merge names rank 5, cause input, 12 ms lost per step, each host's offset to 0.1 ms;
# - a partial sampled every 2 step numbers merged with ones sampled every step: every
#   partial is read at the larger stride, half the steps matched, the same answers;
# - what is not a partial summary is refused with one line naming the file (exit 3) and
#   nothing is written: a summary.json, a cut file, a rank given twice, a missing file, a
#   directory without partial.json; --merge without -o and --partial with --baseline are
#   usage errors (exit 2); --partial on a trace without ranks says so (exit 3);
# - ranks missing (6 of world size 8): the job is incomplete, never "no straggler".
# The merge's agreement with an analysis of the same traces together is
# workload.ddp_two_hosts's; its time and memory at 64 to 1,024 ranks are bench/merge.sh's.
set -u
bin=$1
source_dir=$2
work=$(mktemp -d /tmp/profopt-merge.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
synth=$source_dir/tests/lib/synth_partials.py

/usr/bin/python3 "$synth" "$work/parts" 64 --ranks-per-host 4 --straggler 5 --late-ms 12 \
	--offset-ms 7 --steps 300 || exit 1
expect_exit 0 "64 ranks in 16 partials merged" --merge -o "$work/r" "$work"/parts/*.json
/usr/bin/python3 - "$work/r/summary.json" 300 1 <<'PY' && ok "the designed straggler, loss and clocks" || fail "the merged job differs from its design"
import json, sys
summary = json.load(open(sys.argv[1]))
d, steps, stride = summary["distributed"], int(sys.argv[2]), int(sys.argv[3])
s = d["straggler"] or {}
problems = []
if summary["schema"] != "profopt.merged/1":
    problems.append("schema %s" % summary["schema"])
if [r["rank"] for r in d["ranks"]] != list(range(64)):
    problems.append("ranks %s" % [r["rank"] for r in d["ranks"]])
if (s.get("rank"), s.get("cause"), s.get("chronic")) != (5, "input", True):
    problems.append("straggler %s" % s)
if abs(d["lost_ms_per_step"] - 12) > 0.1:
    problems.append("lost %s ms per step, designed 12" % d["lost_ms_per_step"])
offsets = [h["offset_ms"] for h in d["hosts"]]
if len(offsets) != 16 or any(abs(o - 7 * h) > 0.1 for h, o in enumerate(offsets)):
    problems.append("offsets %s" % offsets)
if d["matched_steps"] != steps // stride or d["step_stride"] != stride:
    problems.append("matched %s steps at stride %s" % (d["matched_steps"], d["step_stride"]))
if [f["id"] for f in summary["findings"]] != ["rank-straggler"]:
    problems.append("findings %s" % [f["id"] for f in summary["findings"]])
print("\n".join(problems) or "straggler %s, %s ms lost, %d clocks" % (s, d["lost_ms_per_step"], len(offsets)))
sys.exit(1 if problems else 0)
PY
[ -s "$work/out" ] && fail "-q printed: $(head -c 300 "$work/out")" || ok "-q: nothing on stdout"

# One partial sampled every 2 step numbers: the merge reads all at stride 2.
/usr/bin/python3 - "$work/parts/host0003.json" <<'PY'
import json, sys
part = json.load(open(sys.argv[1]))
part["sample_stride"] = 2
part["collectives"] = [c for c in part["collectives"] if c[3] % 2 == 0]
for rank in part["ranks"]:
    rank["walls"] = [w for w in rank["walls"] if w[0] % 2 == 0]
json.dump(part, open(sys.argv[1], "w"))
PY
expect_exit 0 "a partial sampled every 2 steps" --merge -o "$work/r2" "$work"/parts/*.json
/usr/bin/python3 - "$work/r2/summary.json" 300 2 <<'PY' && ok "stride 2: half the steps, the same answers" || fail "stride 2"
import json, sys
d = json.load(open(sys.argv[1]))["distributed"]
ok = d["step_stride"] == 2 and d["matched_steps"] == 150 and d["straggler"]["rank"] == 5
print(d["step_stride"], d["matched_steps"], d["straggler"])
sys.exit(0 if ok else 1)
PY

# Ranks missing (6 of world size 8; rank 6, not in the data, enters every all-reduce 12 ms
# late): the job is said to be incomplete, with the wait every present rank shares, never
# "no straggler"; exit 0 (docs/distributed.md, "Ranks missing").
/usr/bin/python3 "$synth" "$work/six" 8 --straggler 6 --late-ms 12 --steps 200 || exit 1
rm "$work/six/host0006.json" "$work/six/host0007.json"
analyzer --merge -o "$work/r6" "$work"/six/*.json >"$work/out6" 2>"$work/err"
[ $? -eq 0 ] && ok "6 of 8 ranks merged (0)" || fail "6 of 8 ranks: $(cat "$work/err")"
contains "$work/out6" "No straggler can be ruled out: ranks 6 and 7 missing (6 of world size 8 in the data)" \
	"the text says the job is incomplete"
grep -q "No straggler:" "$work/out6" && fail "the text claims no straggler" || ok "no \"No straggler:\" claim"
/usr/bin/python3 - "$work/r6/summary.json" <<'PY' && ok "summary.json: incomplete, 13 ms shared per collective, a warning" || fail "summary.json of the incomplete job"
import json, sys
summary = json.load(open(sys.argv[1]))
d = summary["distributed"]
got = (d["complete"], d["ranks_present"], d["world_size"], d["missing_rank_count"], d["missing_ranks"],
       d["straggler"], [w["code"] for w in summary["warnings"]])
print(got, d["shared_collective_ms_per_collective"])
sys.exit(0 if got == (False, 6, 8, 2, [6, 7], None, ["ranks-missing"]) and
         abs(d["shared_collective_ms_per_collective"] - 13) < 0.1 else 1)
PY
# a straggler among the present ranks is named, and said to be of the present ranks only
/usr/bin/python3 "$synth" "$work/six1" 8 --straggler 1 --late-ms 12 --steps 200 || exit 1
rm "$work/six1/host0006.json" "$work/six1/host0007.json"
analyzer --merge -o "$work/r61" "$work"/six1/*.json >"$work/out61" 2>"$work/err"
contains "$work/out61" "Straggler: rank 1 (chronic)" "rank 1 named among the present ranks"
contains "$work/out61" "Of the present ranks only: ranks 6 and 7 missing" "and said to be of the present ranks only"
contains "$work/r61/summary.json" "Of the present ranks only: ranks 6 and 7 missing" "the finding says so too"

# What is not a partial summary.
mkdir "$work/nothing"
echo '{"schema": "profopt.summary/1"}' >"$work/summary.json"
head -c 5000 "$work/parts/host0000.json" >"$work/cut.json"
expect_exit 3 "a summary.json" --merge -o "$work/bad1" "$work/summary.json"
contains "$work/err" "$work/summary.json: not a partial summary" "the summary.json is named"
expect_exit 3 "a cut partial" --merge -o "$work/bad2" "$work/parts/host0001.json" "$work/cut.json"
contains "$work/err" "$work/cut.json" "the cut file is named"
expect_exit 3 "a rank twice" --merge -o "$work/bad3" "$work/parts/host0001.json" \
	"$work/parts/host0001.json"
contains "$work/err" "rank 4 is also in" "the repeated rank is named"
expect_exit 3 "a missing file" --merge -o "$work/bad4" "$work/missing.json"
expect_exit 3 "a directory without partial.json" --merge -o "$work/bad5" "$work/nothing"
contains "$work/err" "$work/nothing/partial.json" "the directory's partial.json is named"
for n in 1 2 3 4 5; do
	[ -e "$work/bad$n" ] && fail "refused merge $n left $work/bad$n" || ok "refused merge $n wrote nothing"
done
expect_exit 2 "--merge without -o" --merge "$work/parts/host0001.json"
expect_exit 2 "--partial with --baseline" --partial --baseline "$work/summary.json" -o "$work/p" \
	"$source_dir/tests/data/traces/main-loading"
expect_exit 3 "--partial on a trace without ranks" --partial -o "$work/p" \
	"$source_dir/tests/data/traces/main-loading"
contains "$work/err" "no process of the trace said its rank" "the trace without ranks is named"
[ -e "$work/p" ] && fail "--partial without ranks left $work/p" || ok "--partial without ranks wrote nothing"
valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

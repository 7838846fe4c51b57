#!/usr/bin/env bash
# profopt-analyze --merge refuses a partial summary whose numbers break their ranges or each
# other, with one line naming the file and the member (exit 3), and writes nothing
# (docs/robustness.md, "Partial summaries a merge refuses"): an origin_ns near 2^63, a
# recording of 2^20, a mean step of 1e300 or below 0, world sizes of 0 and of 1 with 4
# ranks, a world size another partial contradicts, a category of 1e300, a member given
# twice, a collective of a rank the partial does not hold, a collective that ends before it
# begins. A world size of -1 (unknown) is accepted. And --merge -o DIR refuses a DIR that
# holds one of its partials (exit 2), however it is reached (a directory, a link to it, a
# link to the file), instead of deleting it with --force.
set -u
bin=$1
source_dir=$2
work=$(mktemp -d /tmp/profopt-merge-damage.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/lib.sh"
failed=0 passed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

/usr/bin/python3 "$source_dir/tests/lib/synth_partials.py" "$work/parts" 8 --ranks-per-host 4 \
	--straggler 1 --late-ms 10 --steps 100 || exit 1
good=$work/parts/host0000.json other=$work/parts/host0001.json
expect_exit 0 "the designed partials" --merge -o "$work/r0" "$good" "$other"

# damaged NAME MEMBER PYTHON: a copy of host0000.json changed by PYTHON (on `part`, the
# parsed file; or on `text` for what JSON's parsers differ on), merged with host0001.json:
# refused with exit 3, one line naming the file and MEMBER, and nothing written.
n=0
damaged() {
	local name=$1 member=$2 code=$3 file=$work/$1.json
	n=$((n + 1))
	/usr/bin/python3 - "$good" "$file" "$code" <<'PY' || { fail "$name: not made"; return; }
import json, sys
text = open(sys.argv[1]).read()
part = json.loads(text)
exec(sys.argv[3])
open(sys.argv[2], "w").write(text if text != open(sys.argv[1]).read() else json.dumps(part))
PY
	expect_exit 3 "$name" --merge -o "$work/bad$n" "$file" "$other"
	contains "$work/err" "$file: not a valid partial summary: $member" "$name: the file and $member named"
	[ -e "$work/bad$n" ] && fail "$name: $work/bad$n written" || ok "$name: nothing written"
}
damaged origin origin_ns 'part["origin_ns"] = "9223372036854775000"'
damaged origin-sign origin_ns 'part["origin_ns"] = "-5"'
damaged recording "ranks[0].recording" 'part["ranks"][0]["recording"] = 2 ** 20'
damaged mean-huge "ranks[0].mean_step_ns" 'part["ranks"][0]["mean_step_ns"] = 1e300'
damaged mean-negative "ranks[0].mean_step_ns" 'part["ranks"][0]["mean_step_ns"] = -40e6'
damaged world-0 "ranks[0].world_size is 0" 'part["ranks"][0]["world_size"] = 0'
damaged world-1 "ranks[1].rank is 1, not below its world_size 1" '
for r in part["ranks"]: r["world_size"] = 1'
damaged world-differs "ranks[2].world_size is 16" 'part["ranks"][2]["world_size"] = 16'
damaged steady "ranks[0].steady_steps" 'part["ranks"][0]["steady_steps"] = 1000'
damaged category "ranks[0].category_mean_ns.forward" 'part["ranks"][0]["category_mean_ns"]["forward"] = 1e300'
damaged duplicate 'ranks[0] has the member "recording" twice' '
text = text.replace("\"recording\":0", "\"recording\":0,\"recording\":1", 1)'
damaged foreign-rank "collectives[0]" 'part["collectives"][0][0] = 7'
damaged backwards "collectives[0]" 'part["collectives"][0][5] = part["collectives"][0][4] - 1'
damaged stride "sample_stride is 3" 'part["sample_stride"] = 3'
# the other partial disagrees on the world size: the second file is named
/usr/bin/python3 - "$other" "$work/world16.json" <<'PY'
import json, sys
part = json.load(open(sys.argv[1]))
for r in part["ranks"]:
    r["world_size"] = 16
json.dump(part, open(sys.argv[2], "w"))
PY
expect_exit 3 "world sizes 8 and 16" --merge -o "$work/bad-w" "$good" "$work/world16.json"
contains "$work/err" "$work/world16.json: not a valid partial summary: ranks[0].world_size is 16, but $good gives 8" \
	"the world size another partial contradicts"
# world size -1: not known, accepted
/usr/bin/python3 - "$good" "$work/unknown.json" <<'PY'
import json, sys
part = json.load(open(sys.argv[1]))
for r in part["ranks"]:
    r["world_size"] = -1
json.dump(part, open(sys.argv[2], "w"))
PY
expect_exit 0 "world size -1 (unknown)" --merge -o "$work/r-unknown" "$work/unknown.json" "$other"

# -o DIR holding a partial: refused, the partial kept, whatever the spelling.
expect_exit 0 "a report directory" --merge -o "$work/host0" "$other"
cp "$good" "$work/host0/partial.json"
ln -s host0 "$work/link0"
ln -s "$work/host0/partial.json" "$work/file-link.json"
expect_exit 2 "-o DIR --force DIR" --merge -o "$work/host0" --force "$work/host0" "$other"
contains "$work/err" "the output directory $work/host0 holds the partial summary $work/host0" \
	"the output directory and the partial named"
expect_exit 2 "-o LINK --force DIR/partial.json" --merge -o "$work/link0" --force \
	"$work/host0/partial.json" "$other"
expect_exit 2 "-o DIR --force LINK-TO-FILE" --merge -o "$work/host0" --force \
	"$work/file-link.json" "$other"
expect_exit 2 "-o DIR/. --force" --merge -o "$work/host0/." --force "$work/link0" "$other"
cmp -s "$good" "$work/host0/partial.json" && ok "the partial is still there" ||
	fail "the partial in the output directory was lost"
valgrind_verdict || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

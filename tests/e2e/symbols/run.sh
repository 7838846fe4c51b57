#!/usr/bin/env bash
# run.sh BIN HOST PLUGIN PLUGIN_SOURCE: records HOST leaking from PLUGIN (opened with dlopen)
# under profopt-record --heap and checks that the leak is named by the library, the function
# and the source line, in the findings and in summary.json.
set -eu
bin=$1 host=$2 plugin=$3 source=$4
work=$(mktemp -d /tmp/profopt-symbols.XXXXXX)
trap 'rm -rf "$work"' EXIT
line=$(grep -n 'malloc(bytes)' "$source" | cut -d: -f1)
library=$(basename "$plugin")

"$bin/profopt-record" --heap -o "$work/trace" -- "$host" "$plugin" 200 >/dev/null
"$bin/profopt-analyze" "$work/trace" -o "$work/report" >"$work/stdout"

python3 - "$work/report/summary.json" "$library" "$line" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
library, line = sys.argv[2], int(sys.argv[3])
want = f"{library}+0x"
where = f"(plugin_keep_buffer at leak_plugin.c:{line})"
findings = {f["id"]: f for f in summary["findings"]}
growth = findings.get("host-memory-growth") or findings.get("unfreed-allocations")
assert growth, f"no memory finding: {sorted(findings)}"
text = json.dumps(growth)
assert want in text and where in text, f"site not named as {want}... {where}: {text}"
action = f"free or reuse what plugin_keep_buffer in {library} allocates (leak_plugin.c:{line})"
actions = [r["action"] for f in findings.values() for r in f.get("recommendations", [])]
assert action in actions, f"no recommendation '{action}': {actions}"
sites = [s for s in summary["memory"]["sites"] if s.get("symbol") == "plugin_keep_buffer"]
assert sites, "no site with symbol plugin_keep_buffer"
site = sites[0]
assert site["object"].endswith("/" + library), site
assert site["offset"].startswith("0x") and site["ip"].startswith("0x"), site
assert site["source_file"].endswith("leak_plugin.c") and site["source_line"] == line, site
assert site["live_bytes"] >= 150 * 256 * 1024, site
print("ok:", growth["id"], growth["summary"])
PY

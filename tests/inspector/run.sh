#!/usr/bin/env bash
# MCP Inspector CLI check for the specd MCP stdio server.
#
#   usage: tests/inspector/run.sh <path-to-binary> [extra server args...]
#
# Starts `<binary> serve --db <tmpdir>/step<N>/specd.db [extra args...]` under
# the pinned @modelcontextprotocol/inspector CLI (one server process and store
# per step, the steps at once) and
# checks tools/list and a few tools/call results, including that the client
# (TypeScript MCP SDK) raises no outputSchema / structuredContent complaint.
# See README.md. Exits non-zero if any step fails.
#
# Env:
#   SPECD_INSPECTOR_OPTIONAL=1   exit 0 with a notice when node/npx is missing
#   SPECD_INSPECTOR_JSON=node    parse JSON with node even when jq is present
#   SPECD_INSPECTOR_TIMEOUT=N    seconds per inspector call (default 120)
set -euo pipefail

case ${BASH_SOURCE[0]} in
  */*) HERE=${BASH_SOURCE[0]%/*} ;;
  *) HERE=. ;;
esac
HERE=$(cd "$HERE" && pwd)

if [ $# -lt 1 ]; then
  echo "usage: $0 <path-to-binary> [extra server args...]" >&2
  exit 2
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npx >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "${SPECD_INSPECTOR_OPTIONAL:-}" = "1" ]; then
    echo "inspector check skipped: node not found"
    exit 0
  fi
  echo "FAIL inspector check: node not found (node, npm and npx are required; set SPECD_INSPECTOR_OPTIONAL=1 to skip)" >&2
  exit 1
fi

# --- the server binary, as an absolute path --------------------------------
BIN=$1
shift
EXTRA=("$@")
case $BIN in
  */*) ;;
  *) BIN=$(command -v -- "$BIN" || true) ;;
esac
if [ -z "$BIN" ] || [ ! -f "$BIN" ] || [ ! -x "$BIN" ]; then
  echo "FAIL inspector check: server binary '${1:-$BIN}' not found or not executable" >&2
  exit 1
fi
case $BIN in
  */*) BIN="$(cd "${BIN%/*}/" && pwd)/${BIN##*/}" ;;
esac

# --- dependencies (pinned by package.json + package-lock.json) -------------
INSPECTOR="$HERE/node_modules/.bin/mcp-inspector"
if [ ! -x "$INSPECTOR" ] || [ "$HERE/package-lock.json" -nt "$HERE/node_modules/.package-lock.json" ]; then
  npm_log=$(mktemp "${TMPDIR:-/tmp}/specd-inspector-npm.XXXXXX")
  if ! (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) >"$npm_log" 2>&1; then
    cat "$npm_log" >&2
    rm -f "$npm_log"
    echo "FAIL inspector check: npm ci failed in $HERE" >&2
    exit 1
  fi
  rm -f "$npm_log"
fi
if [ ! -x "$INSPECTOR" ]; then
  echo "FAIL inspector check: $INSPECTOR missing after npm ci" >&2
  exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/specd-inspector.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

TIMEOUT=()
if command -v timeout >/dev/null 2>&1; then
  TIMEOUT=(timeout "${SPECD_INSPECTOR_TIMEOUT:-120}")
fi

JSON_TOOL=node
if [ "${SPECD_INSPECTOR_JSON:-}" != "node" ] && command -v jq >/dev/null 2>&1; then
  JSON_TOOL=jq
fi

# What the inspector / SDK client prints (on stderr, exit 1) when it rejects a
# result, e.g.
#   Failed to call tool health: MCP error -32602: Structured content does not
#     match the tool's output schema: data must have required property 'meta'
#   Failed to call tool health: MCP error -32600: Tool health has an output
#     schema but did not return structured content
#   Failed to list tools: [ { "code": "invalid_value", ... "outputSchema", "type" ... } ]
#   Failed to connect to MCP server: Server's protocol version is not supported: ...
# The server's own stderr is piped away by the inspector and never shows here.
COMPLAINT_RE='schema|invalid|error|warn|fail|does not match|structured content|not supported'

# --- JSON checks: print one line per problem, nothing when fine -------------
# kinds: list | ok | err [error_code]
JQ_CHECK='
. as $r
| def textok: ((($r.content // [])[0] // {}) as $c
    | ($c.type == "text") and (($c.text // "") | try fromjson catch "\u0000") == $r.structuredContent);
  def sc: $r.structuredContent;
  if ($r | type) != "object" then "output is not a JSON object"
  elif $kind == "list" then
    ( ("health", "server") as $t
      | ([($r.tools // [])[] | select(.name == $t)] | first) as $tool
      | if $tool == null then "tool \($t) is not listed"
        elif ($tool.outputSchema.type? // null) != "object" then "tool \($t) declares no outputSchema of type object"
        else empty end )
  else
    ( if $kind == "ok" then
        (if ($r.isError // false) != false then "isError is \($r.isError)" else empty end)
      else
        (if $r.isError != true then "isError is \($r.isError | tostring), want true" else empty end)
      end ),
    ( if (sc | type) != "object" then "structuredContent is missing (\(sc | type))"
      else
        ( if $kind == "ok" and sc.success != true then "structuredContent.success is \(sc.success), want true"
          elif $kind == "err" and sc.success != false then "structuredContent.success is \(sc.success), want false"
          else empty end ),
        ( if $kind == "err" and $code != "" and (sc.data.error_code? // null) != $code
          then "structuredContent.data.error_code is \(sc.data.error_code? // null), want \($code)" else empty end ),
        ( if textok | not then "content[0].text is not the JSON of structuredContent" else empty end )
      end )
  end'

NODE_CHECK='
const fs = require("fs");
const [kind, file, code = ""] = process.argv.slice(1);
const out = [];
const canon = (v) => Array.isArray(v) ? v.map(canon)
  : (v && typeof v === "object") ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v;
const same = (a, b) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));
let r;
try { r = JSON.parse(fs.readFileSync(file, "utf8")); } catch (e) { r = undefined; }
if (!r || typeof r !== "object" || Array.isArray(r)) {
  out.push("output is not a JSON object");
} else if (kind === "list") {
  for (const t of ["health", "server"]) {
    const tool = (r.tools || []).find((x) => x && x.name === t);
    if (!tool) out.push(`tool ${t} is not listed`);
    else if (!tool.outputSchema || tool.outputSchema.type !== "object") out.push(`tool ${t} declares no outputSchema of type object`);
  }
} else {
  if (kind === "ok" && (r.isError ?? false) !== false) out.push(`isError is ${r.isError}`);
  if (kind === "err" && r.isError !== true) out.push(`isError is ${r.isError ?? null}, want true`);
  const sc = r.structuredContent;
  if (!sc || typeof sc !== "object" || Array.isArray(sc)) {
    out.push(`structuredContent is missing (${sc === undefined ? "absent" : JSON.stringify(sc)})`);
  } else {
    if (kind === "ok" && sc.success !== true) out.push(`structuredContent.success is ${sc.success}, want true`);
    if (kind === "err" && sc.success !== false) out.push(`structuredContent.success is ${sc.success}, want false`);
    const ec = sc.data && typeof sc.data === "object" ? sc.data.error_code : undefined;
    if (kind === "err" && code !== "" && ec !== code) out.push(`structuredContent.data.error_code is ${ec ?? null}, want ${code}`);
    const c = (r.content || [])[0] || {};
    let txt;
    try { txt = JSON.parse(c.text); } catch (e) { txt = Symbol("unparseable"); }
    if (c.type !== "text" || !same(txt, sc)) out.push("content[0].text is not the JSON of structuredContent");
  }
}
if (out.length) console.log(out.join("\n"));
'

json_check() { # kind file [code]
  if [ "$JSON_TOOL" = jq ]; then
    if ! jq -e . "$2" >/dev/null 2>&1; then
      echo "output is not valid JSON"
      return
    fi
    jq -r --arg kind "$1" --arg code "${3:-}" "$JQ_CHECK" "$2"
  else
    node -e "$NODE_CHECK" "$@"
  fi
}

# --- steps -------------------------------------------------------------------
PASSED=0
FAILED=0
DIAGNOSED=""
STEP=0
TOTAL=5

show() { # file label: print the first lines of a captured stream, indented
  if [ -s "$1" ]; then
    echo "    --- $2"
    head -n 40 "$1" | sed 's/^/    | /'
  fi
}

# step <label> <kind> <error_code|-> -- <inspector method args...>
# Starts one step in the background (each on a store of its own); its
# verdict goes to $WORK/step<N>.report, printed in order by finish.
step() {
  STEP=$((STEP + 1))
  run_step "$STEP" "$@" >"$WORK/step$STEP.report" 2>&1 &
}

run_step() {
  local n=$1 label=$2 kind=$3 code=$4
  shift 5
  local out="$WORK/step$n.out" err="$WORK/step$n.err" rc=0
  ${TIMEOUT[@]+"${TIMEOUT[@]}"} "$INSPECTOR" --cli "$BIN" serve --db "$WORK/step$n/specd.db" ${EXTRA[@]+"${EXTRA[@]}"} "$@" \
    </dev/null >"$out" 2>"$err" || rc=$?

  local problems=""
  if [ "$rc" -ne 0 ]; then
    problems="inspector exited $rc"
    [ "$rc" -eq 124 ] && problems="inspector timed out"
  fi
  local complaints
  complaints=$(grep -Ei "$COMPLAINT_RE" "$err" | awk '!seen[$0]++' || true)
  if [ -n "$complaints" ]; then
    problems="${problems:+$problems; }client complaint on stderr: $(printf '%s' "$complaints" | head -n 3 | tr '\n' ' ')"
  fi
  if [ "$rc" -eq 0 ]; then
    local found
    [ "$code" = "-" ] && code=""
    found=$(json_check "$kind" "$out" "$code" || echo "JSON check could not run")
    if [ -n "$found" ]; then
      problems="${problems:+$problems; }$(printf '%s' "$found" | paste -sd ';' - | sed 's/;/; /g')"
    fi
  fi

  if [ -z "$problems" ]; then
    echo "PASS [$n/$TOTAL] $label"
  else
    echo "FAIL [$n/$TOTAL] $label: $problems"
    show "$err" "inspector stderr"
    show "$out" "inspector stdout"
  fi
}

# finish waits for the steps, prints their verdicts in order and counts them.
finish() {
  wait
  local n
  for n in $(seq 1 "$STEP"); do
    cat "$WORK/step$n.report"
    if head -n 1 "$WORK/step$n.report" | grep -q '^PASS '; then
      PASSED=$((PASSED + 1))
    else
      FAILED=$((FAILED + 1))
      if [ -z "$DIAGNOSED" ] && grep -q "Connection closed" "$WORK/step$n.err" 2>/dev/null; then
        # The inspector hides the server's stderr: run the server once alone.
        DIAGNOSED=1
        ${TIMEOUT[@]+"${TIMEOUT[@]}"} "$BIN" serve --db "$WORK/specd.db" ${EXTRA[@]+"${EXTRA[@]}"} \
          </dev/null >/dev/null 2>"$WORK/server.err" || echo "    server exited $? when run alone with empty stdin"
        show "$WORK/server.err" "server stderr (run alone with empty stdin)"
      fi
    fi
  done
}

echo "inspector check: ${BIN##*/} serve --db <tmp>/step<N>/specd.db${EXTRA[*]:+ ${EXTRA[*]}} (json: $JSON_TOOL)"

step "tools/list lists health and server with outputSchema, no client complaint" list - -- \
  --method tools/list
step "tools/call health action=liveness succeeds" ok - -- \
  --method tools/call --tool-name health --tool-arg action=liveness
step "tools/call server action=schema tool_name=health succeeds" ok - -- \
  --method tools/call --tool-name server --tool-arg action=schema --tool-arg tool_name=health
step "tools/call health action=nope is an UNKNOWN_ACTION error result, no client complaint" err UNKNOWN_ACTION -- \
  --method tools/call --tool-name health --tool-arg action=nope
step "tools/call server action=schema tool_name=nosuch is an error result" err - -- \
  --method tools/call --tool-name server --tool-arg action=schema --tool-arg tool_name=nosuch

finish
echo "inspector: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]

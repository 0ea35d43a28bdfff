#!/usr/bin/env bash
# The monitoring kit (Receiver/monitoring/) against the real thing:
#   1. promtool check rules and promtool test rules (alerts.yml, alerts.test.yml: each alert firing and not);
#   2. a postback-receiver on 127.0.0.1 (port 0: it prints the port), sent postbacks with curl (Apple's valid
#      development example, twice: a duplicate; a bad signature; a kid it has no key for; a body over 16 KiB; a 404);
#   3. Debian's prometheus scraping it every second, with alerts.yml loaded;
#   4. every alert expression and every dashboard query evaluated through /api/v1/query: each must return a series.
#
# An alert expression is a condition (`A > 0.01`, `up == 0 or on (job, instance) (B > 0 and on (job, instance) C == 0)`)
# and returns nothing while it does not fire, so its operands are evaluated instead: the expression is split at its
# top-level comparison (== != > < >= <=) and set (and or unless) operators, parentheses that enclose a whole operand
# are removed and it is split again; every operand that is not a number must return a series (a metric name or
# label value the receiver does not export returns none, and fails). The expressions are taken from Prometheus's
# /api/v1/rules (what it loaded from alerts.yml), whose rules must also evaluate without error. Dashboard queries
# are evaluated whole, with $job = the scrape job. Then the alerts the traffic must fire (PostbackReceiverUnknownKid,
# DevelopmentKeysTrusted) and not fire (NotReady, ServerErrors, InvalidQuotaNear, the relay's three) are checked in
# /api/v1/alerts.
#
# The receiver: $POSTBACK_RECEIVER if set (CI: the release build), else the debug build (built here, as e2e.sh does).
# Needs promtool and prometheus (Debian: apt-get install prometheus), curl and python3. Traffic only to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
monitoring="$repo/Receiver/monitoring"

for tool in promtool prometheus curl python3; do
    command -v "$tool" > /dev/null || { echo "monitoring.sh: $tool not found (apt-get install prometheus curl python3)" >&2; exit 1; }
done

echo "-- promtool check rules, promtool test rules"
promtool check rules "$monitoring/alerts.yml"
(cd "$monitoring" && promtool test rules alerts.test.yml)

receiver="${POSTBACK_RECEIVER:-}"
if [ -z "$receiver" ]; then
    swift build --package-path Receiver --product postback-receiver
    receiver="$(swift build --package-path Receiver --show-bin-path)/postback-receiver"
fi
[ -x "$receiver" ] || { echo "monitoring.sh: no receiver binary at $receiver" >&2; exit 1; }

work="$(mktemp -d)"
receiver_pid=""
prometheus_pid=""
stop() {
    if [ -n "$prometheus_pid" ]; then kill "$prometheus_pid" 2> /dev/null || true; wait "$prometheus_pid" 2> /dev/null || true; fi
    if [ -n "$receiver_pid" ]; then kill "$receiver_pid" 2> /dev/null || true; wait "$receiver_pid" 2> /dev/null || true; fi
    rm -rf "$work"
}
trap stop EXIT

fail() {
    echo "monitoring.sh: FAIL: $*" >&2
    for log in "$work/receiver.err" "$work/prometheus.log"; do
        [ -f "$log" ] && { echo "--- last lines of $log" >&2; tail -n 20 "$log" >&2; }
    done
    exit 1
}

# The receiver: Apple's development keys allowed (Apple's development example is then valid), no fixture key (the
# fixtures' postbacks then name a kid it does not know: unknown-key); a relay destination on a loopback port nothing
# listens on (its deliveries are retried: the relay's series exist and the relay alerts do not fire).
closed_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$receiver" --host 127.0.0.1 --port 0 --state "$work/state.sqlite" --allow-development \
    --forward "http://127.0.0.1:$closed_port/postbacks" \
    > "$work/receiver.out" 2> "$work/receiver.err" &
receiver_pid=$!
port=""
for _ in $(seq 1 300); do
    port="$(sed -n 's/^postback-receiver: listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$work/receiver.out" 2> /dev/null || true)"
    [ -n "$port" ] && break
    kill -0 "$receiver_pid" 2> /dev/null || fail "the receiver exited before listening"
    sleep 0.1
done
[ -n "$port" ] || fail "the receiver did not print its port"
echo "-- receiver on 127.0.0.1:$port"

aak="http://127.0.0.1:$port/.well-known/appattribution/report-attribution/"
skan="http://127.0.0.1:$port/.well-known/skadnetwork/report-attribution/"
post() { # URL FILE EXPECTED-STATUS
    local status
    status="$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$2" "$1")"
    [ "$status" = "$3" ] || fail "POST $2 to $1: answered $status, expected $3"
}
send_postbacks() {
    post "$aak" Fixtures/valid/apple/postback-development-valid.json 200        # valid (development key)
    post "$aak" Fixtures/valid/apple/postback-development-valid.json 200        # duplicate
    post "$aak" Fixtures/invalid/apple/postback-production-bad-signature.json 200
    post "$aak" Fixtures/valid/postback/t2-index1-fine-value.json 200           # unknown-key: no fixture key loaded
    for f in Fixtures/valid/skadnetwork-apple/*.json; do post "$skan" "$f" 200; done
    head -c 20000 /dev/zero | tr '\0' 'x' > "$work/big.json"
    post "$aak" "$work/big.json" 413
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/nothing-here")" = 404 ] || fail "no 404"
    [ "$(curl -s "http://127.0.0.1:$port/healthz")" = ok ] || fail "/healthz did not answer ok"
}
send_postbacks

# Prometheus: a free port on 127.0.0.1, a scrape and a rule evaluation every second, a throw-away TSDB.
prometheus_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat > "$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $monitoring/alerts.yml
scrape_configs:
  - job_name: postback-receiver
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
mkdir "$work/tsdb"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$prometheus_port" > "$work/prometheus.log" 2>&1 &
prometheus_pid=$!
api="http://127.0.0.1:$prometheus_port"
echo "-- prometheus $(prometheus --version 2>&1 | sed -n '1s/^prometheus, version \([^ ]*\).*/\1/p') on 127.0.0.1:$prometheus_port"

query() { curl -s --fail --get --data-urlencode "query=$1" "$api/api/v1/query"; }
scrapes() { # how many successful scrapes of the receiver Prometheus has in the last minute
    query 'sum_over_time(up{job="postback-receiver"}[1m])' 2> /dev/null \
        | python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(int(float(r[0]["value"][1])) if r else 0)' 2> /dev/null \
        || echo 0
}
for _ in $(seq 1 120); do
    kill -0 "$prometheus_pid" 2> /dev/null || fail "prometheus exited"
    [ "$(scrapes)" -ge 2 ] && break
    sleep 0.5
done
[ "$(scrapes)" -ge 2 ] || fail "prometheus did not scrape the receiver twice in 60 s"
# More traffic between scrapes, so rates and increases are not only zero; then a few more scrapes and rule rounds.
send_postbacks
for _ in $(seq 1 60); do [ "$(scrapes)" -ge 6 ] && break; sleep 0.5; done
[ "$(scrapes)" -ge 6 ] || fail "prometheus stopped scraping the receiver"
sleep 2

echo "-- every alert operand and dashboard query returns a series"
API="$api" DASHBOARD="$monitoring/dashboard.json" python3 - <<'PY' || fail "queries (above)"
import json, os, re, sys, urllib.parse, urllib.request

api = os.environ["API"]

def get(path, **params):
    url = f"{api}{path}" + ("?" + urllib.parse.urlencode(params) if params else "")
    with urllib.request.urlopen(url, timeout=30) as answer:
        body = json.load(answer)
    if body.get("status") != "success":
        raise RuntimeError(f"{path} {params}: {body}")
    return body["data"]

def series(expr):
    data = get("/api/v1/query", query=expr)
    if data["resultType"] == "scalar":
        return [data["result"]]
    return data["result"]

COMPARISON = ("==", "!=", ">=", "<=", ">", "<")
SET_OPERATORS = ("and", "or", "unless")
MODIFIERS = re.compile(r"^\s*(?:bool\b\s*)?(?:(?:on|ignoring)\s*\([^)]*\)\s*)?(?:(?:group_left|group_right)\b\s*(?:\([^)]*\))?\s*)?")

def split_top_level(expr):
    """The operands of expr's top-level comparison and set operators (expr itself when it has none)."""
    parts, depth, start, i, quote = [], 0, 0, 0, None
    while i < len(expr):
        c = expr[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'`":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            op = next((o for o in COMPARISON if expr.startswith(o, i)), None)
            if op is None:
                word = re.match(r"[A-Za-z_]+", expr[i:])
                previous = expr[i - 1] if i else " "
                if word and word.group(0) in SET_OPERATORS and not re.match(r"[\w:]", previous):
                    op = word.group(0)
            if op:
                parts.append(expr[start:i])
                i += len(op)
                start = i + MODIFIERS.match(expr[i:]).end()
                i = start
                continue
        i += 1
    parts.append(expr[start:])
    return [p.strip() for p in parts]

def enclosed(expr):
    """expr without parentheses around the whole of it, if there are."""
    while expr.startswith("(") and expr.endswith(")"):
        depth = 0
        for i, c in enumerate(expr):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(expr) - 1:
                return expr
        expr = expr[1:-1].strip()
    return expr

def operands(expr):
    expr = enclosed(expr.strip())
    parts = split_top_level(expr)
    if len(parts) == 1:
        return [expr]
    return [leaf for part in parts for leaf in operands(part)]

def is_number(expr):
    try:
        float(expr)
        return True
    except ValueError:
        return False

failures, checked = [], 0
rules = [rule for group in get("/api/v1/rules")["groups"] for rule in group["rules"]]
if len(rules) < 7:
    failures.append(f"Prometheus loaded {len(rules)} rules from alerts.yml, expected 7 or more")
for rule in rules:
    if rule.get("health") != "ok":
        failures.append(f"rule {rule['name']}: health {rule.get('health')} {rule.get('lastError', '')}")
    for operand in operands(rule["query"]):
        if is_number(operand):
            continue
        found = series(operand)
        checked += 1
        print(f"  {len(found):3d} series  alert {rule['name']}: {operand}")
        if not found:
            failures.append(f"alert {rule['name']}: no series for {operand}")

dashboard = json.load(open(os.environ["DASHBOARD"]))
def panels(items):
    for panel in items:
        yield panel
        yield from panels(panel.get("panels", []))
targets = [(p["title"], t["expr"]) for p in panels(dashboard["panels"]) for t in p.get("targets", [])]
# Its shape (no Grafana here to import it into): unique panel ids, a grid position each, every query with a refId
# and the data source the dashboard declares as its import input.
ids = [p.get("id") for p in panels(dashboard["panels"])]
inputs = {f"${{{i['name']}}}" for i in dashboard.get("__inputs", []) if i.get("type") == "datasource"}
if len(ids) != len(set(ids)) or None in ids:
    failures.append(f"dashboard.json: panel ids missing or repeated: {ids}")
for panel in panels(dashboard["panels"]):
    if not {"h", "w", "x", "y"} <= set(panel.get("gridPos", {})):
        failures.append(f"dashboard {panel.get('title')}: no gridPos")
    for target in panel.get("targets", []):
        if not target.get("refId") or target.get("datasource", {}).get("uid") not in inputs:
            failures.append(f"dashboard {panel.get('title')}: a query without refId or the declared data source")
if len(targets) < 10:
    failures.append(f"dashboard.json has {len(targets)} queries, expected 10 or more")
for title, expr in targets:
    concrete = expr.replace("$job", "postback-receiver")
    if "$" in concrete:
        failures.append(f"dashboard {title}: a variable this check does not know in {expr}")
        continue
    found = series(concrete)
    checked += 1
    print(f"  {len(found):3d} series  dashboard {title}: {expr}")
    if not found:
        failures.append(f"dashboard {title}: no series for {expr}")

# The alerts this traffic makes: an unknown kid and the development keys fire; the receiver is up, stores everything and is far from its
# quota. (No `for:` on PostbackReceiverUnknownKid, so it fires at its first evaluation with the postback counted.)
alerts = {a["labels"]["alertname"]: a["state"] for a in get("/api/v1/alerts")["alerts"]}
print(f"  alerts: {alerts or 'none'}")
if alerts.get("PostbackReceiverUnknownKid") != "firing":
    failures.append("PostbackReceiverUnknownKid is not firing after a postback with a kid the receiver has no key for")
# It runs with --allow-development (Apple's development example is among the postbacks): that alert fires too.
if alerts.get("PostbackReceiverDevelopmentKeysTrusted") != "firing":
    failures.append("PostbackReceiverDevelopmentKeysTrusted is not firing on a receiver run with --allow-development")
for name in ("PostbackReceiverNotReady", "PostbackReceiverServerErrors", "PostbackReceiverInvalidQuotaNear",
             "PostbackReceiverNoPostbacks", "PostbackReceiverInvalidSignatureSurge", "PostbackReceiverRelayBehind",
             "PostbackReceiverRelayNearHorizon", "PostbackReceiverRelayDead", "PostbackReceiverLogLinesDropped",
             "PostbackReceiverSignatureDisagreement"):
    if name in alerts:
        failures.append(f"{name} is {alerts[name]} against a healthy receiver")

for failure in failures:
    print(f"FAIL: {failure}", file=sys.stderr)
print(f"  {checked} queries, {len(failures)} failures")
sys.exit(1 if failures else 0)
PY

kill -TERM "$receiver_pid"
status=0
wait "$receiver_pid" || status=$?
receiver_pid=""
[ "$status" = 0 ] || fail "the receiver exited $status on SIGTERM"
echo "ok: monitoring kit: rules checked and tested; every alert operand and dashboard query returns a series from a live receiver"

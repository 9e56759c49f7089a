#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The agent's page (docs/page.md) in real Chromium, against the real agent: `$BIN daemon` with
# a tokens file and no Kubernetes, a Service `billing` made by a config rule out of a
# systemd-unit-named cgroup (system.slice/billing-worker.service) that runs hot2 (build_report)
# first and spin (checkout_loop) after. tests/page/e2e.mjs drives Debian's /usr/bin/chromium with
# playwright-core (installed from the npm registry into /var/cache/slideops-test/npm, pinned by
# tests/page/package-lock.json) and checks, as a user would see it:
#
#  1. a wrong token is refused in words; the operator signs in (an HttpOnly, SameSite=Strict
#     cookie; no token in the URL, script or storage); the server tab says Ready to profile,
#     lists the runtimes of real processes and the busiest processes;
#  2. the Service tab: its questions (unavailable ones greyed with the reason), 30 s by default,
#     the threads snapshot, the plan following the duration; a "Finding out why" link's note;
#  3. a 10 s capture with its progress card; a second one from another tab is refused with
#     "a capture is already running on this server"; the flame graph opens by itself;
#     downloads of the pprof file (gzip magic) and the collapsed stacks (lines);
#  4. the capture is in Past profiles; the workload changes; a second capture (the card comes
#     back after a reload); the two are compared: in the differential flame graph's data the
#     new hot function grew and the old one shrank; the difffolded download;
#  5. a threads snapshot ("Take a 5 second snapshot") and its threads table; it does not
#     compare with a CPU profile (the agent's message; Compare stays disabled for the two);
#     delete behind the page's dialog; the Profiles page and its filters; sign out;
#  6. a Viewer sees no Capture and no Delete, and forged POSTs (with and without the CSRF
#     header) are refused (403); an admin sees Remove the profiler behind a dialog (cancelled);
#  7. a page on another port of 127.0.0.1 (the same site) posts to the agent with the
#     operator's cookie, by a form and by fetch: 403, and no capture starts;
#  8. last, the admin removes the profiler (confirmed): the agent stops by itself (exit 0), the
#     profiles are gone, the audit trail keeps the removal.
# In every flow: no console error, no page error, no request off the agent's origin, and every
# answer of 400 or above one the flow meant to get. Then the audit trail holds the three captures,
# the downloads and the deletion.
#
# Under ASan (MEM_FACTOR > 1) the same routes run with curl instead of the browser (asan_flow).
#
# SCREENSHOTS=1 also writes docs/img/performance-tab.png, profile.png and compare.png.
# timeout: 240
. "$(dirname "$0")/lib.sh"
need_root
need_bin
# A missing tool fails the test, never skips it: every machine of this kind has them.
for c in curl flock node npm; do
	command -v "$c" >/dev/null 2>&1 || fail "command not found: $c"
done

VIEWER=viewer-token-0123456789abcdef
OPERATOR=operator-token-0123456789abcdef
ADMIN=admin-token-0123456789abcdef
NPM_CACHE=/var/cache/slideops-test/npm
PAGE_TEST=$REPO_ROOT/tests/page
HOT2=$(workload hot2) || exit 1
SPIN=$(workload spin) || exit 1

# --- Chromium (Debian's) and playwright-core (the npm registry's, pinned) --------------------------
if [ ! -x /usr/bin/chromium ]; then
	log "installing chromium"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
		>"$TMP/apt.log" 2>&1 || fail "cannot install chromium: $(tail -3 "$TMP/apt.log")"
fi
/usr/bin/chromium --version >/dev/null 2>&1 || fail "/usr/bin/chromium does not run"

want=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["packages"]["node_modules/playwright-core"]["version"])' \
	"$PAGE_TEST/package-lock.json") || fail "cannot read tests/page/package-lock.json"
mkdir -p "$NPM_CACHE" || fail "cannot create $NPM_CACHE"
(
	flock 9
	have=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
		"$NPM_CACHE/node_modules/playwright-core/package.json" 2>/dev/null)
	if [ "$have" != "$want" ] || ! cmp -s "$PAGE_TEST/package-lock.json" "$NPM_CACHE/package-lock.json"; then
		log "installing playwright-core $want into $NPM_CACHE"
		cp "$PAGE_TEST/package.json" "$PAGE_TEST/package-lock.json" "$NPM_CACHE/" &&
			(cd "$NPM_CACHE" && npm ci --no-audit --no-fund --loglevel=error) >"$TMP/npm.log" 2>&1 ||
			{ cat "$TMP/npm.log" >&2; exit 1; }
	fi
) 9>"$NPM_CACHE.lock" || fail "cannot install playwright-core $want (npm ci in $NPM_CACHE)"

# --- the Service: hot2 in a unit's cgroup, named billing by a config rule ---------------------------
cg=$(cg_make_unit billing-worker.service)
hot_pid=$(cg_run "$cg" "$HOT2")
log "hot2 pid $hot_pid in $cg"

# --- the agent ---------------------------------------------------------------------------------------
agent_tokens vera "$VIEWER" viewer otto "$OPERATOR" operator ada "$ADMIN" admin
APORT=$(free_port)
STORE=$TMP/store
# continuous profiling on, 5 s windows: a cpu profile can be compared with the hour before
agent_yaml node-1 "$APORT" "$STORE" "" "" \
	'continuous: true' 'continuous_window_seconds: 5' \
	'services:' '  - name: billing' '    match:' '      unit: billing-worker.service' \
	>"$TMP/profiler.yaml"
wait_lock
agent_spawn "$TMP/profiler.yaml" "$TMP/daemon.log" || fail "the agent did not start: $(tail -5 "$DLOG")"
API=http://127.0.0.1:$APORT
log "agent (pid $DAEMON_PID) serving $API"

# The page is embedded and served with its Content-Security-Policy.
code=$(curl -s -o "$TMP/index.html" -D "$TMP/index.hdr" -w '%{http_code}' "$API/")
[ "$code" = 200 ] || fail "GET / answered $code"
grep -qi "^content-security-policy: default-src 'none'; script-src 'self'" "$TMP/index.hdr" ||
	fail "GET / has no Content-Security-Policy: $(cat "$TMP/index.hdr")"
curl -s -o "$TMP/app.js" "$API/ui/app.js" || fail "GET /ui/app.js failed"
curl -s -o "$TMP/app.css" "$API/ui/app.css" || fail "GET /ui/app.css failed"
for f in index.html app.js app.css; do
	cmp -s "$TMP/$f" "$REPO_ROOT/daemon/agent/page/$f" ||
		fail "the agent serves another $f than daemon/agent/page/$f (rebuild $BIN)"
done
wait_for "curl -sf -o /dev/null -H 'Authorization: Bearer $OPERATOR' '$API/v1/status?target=service:billing'" 15 ||
	fail "Service billing is not found: $(curl -s -H "Authorization: Bearer $OPERATOR" "$API/v1/status?target=service:billing")"

# --- under ASan: the routes the page uses, with curl ----------------------------------------------
# The plain pass has driven every flow in Chromium; under ASan the same routes run with curl and
# the page's cookie, so the agent's side of each (sessions, views, compare, the removal) runs
# under the sanitizers without the browser's minute.
asan_flow()
{
	local jar=$TMP/cookies csrf body id code origin="Origin: $API"
	C() { curl -s -m 30 -b "$jar" -c "$jar" -o "$TMP/body" -w '%{http_code}' "$@"; }
	code=$(C -H "$origin" -H 'Content-Type: application/json' -d "{\"token\": \"$OPERATOR\"}" "$API/v1/session")
	[ "$code" = 200 ] || fail "sign-in: HTTP $code $(cat "$TMP/body")"
	csrf=$(json_get "$TMP/body" 'd["csrf"]') || fail "sign-in: no csrf"
	for path in "/v1/session" "/v1/status?target=service:billing" "/v1/processes" \
		"/v1/plan?target=service:billing&question=cpu&duration=10"; do
		code=$(C "$API$path")
		[ "$code" = 200 ] || fail "GET $path: HTTP $code $(cat "$TMP/body")"
	done
	body='{"target": "service:billing", "question": "cpu", "duration": 10}'
	code=$(C -H "$origin" -H 'Content-Type: application/json' -d "$body" "$API/v1/captures")
	[ "$code" = 403 ] || fail "a capture without the CSRF header: HTTP $code, not 403"
	code=$(C -H "Origin: http://127.0.0.1:1" -H "X-SlideOps-CSRF: $csrf" -d "$body" "$API/v1/captures")
	[ "$code" = 403 ] || fail "a capture from another origin: HTTP $code, not 403"
	code=$(C -H "$origin" -H "X-SlideOps-CSRF: $csrf" -H 'Content-Type: application/json' -d "$body" "$API/v1/captures")
	[ "$code" = 202 ] || fail "capture: HTTP $code $(cat "$TMP/body")"
	wait_for "[ \"\$(C '$API/v1/captures/current')\" = 200 ] && grep -q '\"state\": *\"done\"' '$TMP/body'" 60 ||
		fail "the capture did not finish: $(cat "$TMP/body")"
	id=$(json_get "$TMP/body" 'd["profile_id"]') || fail "no profile id"
	for path in "/v1/profiles/$id" "/v1/profiles/$id/flamegraph" "/v1/profiles/$id/download?format=pprof" \
		"/v1/profiles/$id/download?format=collapsed" "/v1/compare?base=$id&new=$id" \
		"/v1/compare?base=$id&new=$id&format=collapsed" "/v1/profiles?service=billing&question=cpu"; do
		code=$(C "$API$path")
		[ "$code" = 200 ] || fail "GET $path: HTTP $code $(head -c 300 "$TMP/body")"
	done
	code=$(C -X DELETE -H "$origin" -H "X-SlideOps-CSRF: $csrf" "$API/v1/profiles/$id")
	[ "$code" = 200 ] || fail "DELETE the profile: HTTP $code"
	code=$(C -X DELETE -H "$origin" -H "X-SlideOps-CSRF: $csrf" "$API/v1/session")
	[ "$code" = 200 ] || fail "sign-out: HTTP $code"
	code=$(C "$API/v1/status")
	[ "$code" = 401 ] || fail "after sign-out: HTTP $code, not 401"
	rm -f "$jar"
	code=$(C -H "$origin" -H 'Content-Type: application/json' -d "{\"token\": \"$ADMIN\"}" "$API/v1/session")
	csrf=$(json_get "$TMP/body" 'd["csrf"]') || fail "admin sign-in: HTTP $code"
	code=$(C -H "$origin" -H "X-SlideOps-CSRF: $csrf" -H 'Content-Type: application/json' -d '{}' "$API/v1/remove")
	[ "$code" = 200 ] || fail "remove: HTTP $code $(cat "$TMP/body")"
}

# --- the browser test ----------------------------------------------------------------------------------
# e2e.mjs asks for the workload to change (SWITCH_CMD) by a file; this shell does it, so the new
# process is started and cleaned up by lib.sh like the first.
switch_workload()
{
	kill -KILL "$hot_pid" 2>/dev/null
	wait_for "[ ! -e /proc/$hot_pid ]" 5 || fail "hot2 ($hot_pid) did not exit"
	spin_pid=$(cg_run "$cg" "$SPIN")
	log "hot2 replaced by spin (pid $spin_pid) in $cg"
	sleep 1.5 # the agent follows the Service: spin is in its filter within a second
}

mkdir -p "$TMP/e2e"
export BASE=$API OPERATOR_TOKEN=$OPERATOR VIEWER_TOKEN=$VIEWER ADMIN_TOKEN=$ADMIN SERVICE=billing
export HOT_BEFORE=build_report HOT_AFTER=checkout_loop PW_MODULES=$NPM_CACHE/node_modules
export SYMBOLS_FILE=$SPIN OUT=$TMP/e2e IMG_DIR=$REPO_ROOT/docs/img SCREENSHOTS=${SCREENSHOTS:-0}
export SWITCH_CMD="touch '$TMP/switch.req'; for i in \$(seq 200); do [ -e '$TMP/switch.done' ] && exit 0; sleep 0.1; done; echo 'the workload was not switched' >&2; exit 1"
t0=$(date +%s%N)
if [ "$MEM_FACTOR" -gt 1 ]; then
	asan_flow
else
	node "$PAGE_TEST/e2e.mjs" &
	node_pid=$!
	echo "$node_pid" >>"$LIB_STATE/pids"
	while kill -0 "$node_pid" 2>/dev/null; do
		if [ -e "$TMP/switch.req" ] && [ ! -e "$TMP/switch.done" ]; then
			switch_workload
			touch "$TMP/switch.done"
		fi
		sleep 0.1
	done
	wait "$node_pid"
	rc=$?
	log "e2e.mjs exited $rc after $((($(date +%s%N) - t0) / 1000000)) ms"
	[ "$rc" = 0 ] || fail "the browser test failed (above)"
fi
# its last step removed the profiler: the agent stops by itself, the profiles are gone
wait_for "! kill -0 $DAEMON_PID 2>/dev/null" 20 || fail "the agent did not stop after the removal"
wait "$DAEMON_PID"
DAEMON_RC=$?
[ "$DAEMON_RC" = 0 ] || fail "the agent exited $DAEMON_RC after the removal"
[ ! -e "$STORE/profiles" ] || fail "the removal left $STORE/profiles: $(ls -A "$STORE/profiles")"

# --- what the agent recorded -------------------------------------------------------------------------------
audit_count() # PYTHON-CONDITION on r: the number of audit lines that satisfy it
{
	"$PYTHON" -c '
import json, sys
print(sum(bool(eval(sys.argv[2], {"r": json.loads(l)})) for l in open(sys.argv[1])))' "$STORE/audit.log" "$1"
}
want=3
[ "$MEM_FACTOR" -gt 1 ] && want=1	# asan_flow captures once
n=$(audit_count 'r["what"] == "capture" and r["result"] == "accepted"')
[ "$n" = "$want" ] || fail "the audit trail holds $n accepted captures, not $want: $(cat "$STORE/audit.log")"
n=$(audit_count 'r["who"] == "otto" and r["what"] == "download" and r["result"] == "ok"')
[ "$n" -ge 2 ] || fail "the audit trail holds $n downloads by otto, not 2"
n=$(audit_count 'r["who"] == "otto" and r["what"] == "delete" and r["result"] == "ok" and not r["target"].startswith("symbols/")')
[ "$n" = 1 ] || fail "the audit trail holds $n deletions of profiles by otto, not 1"
if [ "$MEM_FACTOR" -eq 1 ]; then # the page's Debug symbols panel: one refused, one kept, deleted
	n=$(audit_count 'r["who"] == "otto" and r["what"] == "upload"')
	[ "$n" = 2 ] || fail "the audit trail holds $n uploads by otto, not 2"
	n=$(audit_count 'r["who"] == "otto" and r["what"] == "delete" and r["target"].startswith("symbols/")')
	[ "$n" = 1 ] || fail "the audit trail holds $n deletions of uploads by otto, not 1"
fi
n=$(audit_count 'r["who"] == "ada" and r["what"] == "remove" and r["result"] == "ok"')
[ "$n" = 1 ] || fail "the audit trail holds $n removals by ada, not 1"
if grep -q "$OPERATOR\|$VIEWER\|$ADMIN" "$STORE/audit.log" "$DLOG"; then
	fail "a token is in the audit trail or the agent's log"
fi
log "ok"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Stripped binaries and uploaded debug symbols (issue 19, docs/symbols.md), against the real
# agent and the real CLI:
#   - a C program (tests/workloads/spin.c, hot function checkout_loop) built with symbols and a
#     build id, its debug file kept aside (objcopy --only-keep-debug) and stripped, runs in a
#     container: the profile's card names the binary with its share and build id, and its
#     frames are addresses
#   - the three refusals of an upload, in the seed's words (a tar file, a binary without build
#     id, the stripped binary), and a richer upload is never replaced by a poorer one
#   - a wrong build's debug file names nothing
#   - after the upload of spin.debug the profile taken BEFORE it names checkout_loop (page
#     summary, collapsed download, pprof read by go tool pprof), and a new capture names it too
#   - the upload deleted: addresses again; the unstripped build uploaded instead names it again
#   - a 1 GB upload streams with the agent's peak RSS bounded; more than 1 GB is refused
#   - every upload and deletion is in the audit trail
#   - a Go program linked internally with -B=gobuildid, stripped, in a container: named from
#     its .gopclntab (so never on the card), and its debug file is matched by its GNU build id
#   - the CLI: symbols upload / list / delete on the local store, and a CLI capture of the
#     stripped program names checkout_loop from it
. "$(dirname "$0")/lib.sh"

need_root
need_cmd curl objcopy strip readelf tar flock timeout
need_bin
need_go
# -ldflags=-B=gobuildid needs Go 1.21+; Debian 12 has 1.19 (make deps installs Go 1.23 from
# bookworm-backports)
GO_BUILDID=/usr/lib/go-1.23/bin/go
[ -x "$GO_BUILDID" ] || fail "no Go 1.23 at $GO_BUILDID (make deps installs golang-1.23-go)"

VIEWER=viewer-$RANDOM$RANDOM$RANDOM
OPERATOR=operator-$RANDOM$RANDOM$RANDOM
WL=$(cd "$LIB_DIR/../workloads" && pwd)

# --- the programs: built with symbols, debug file aside, stripped ----------------------------
build_c() # OUT [CFLAGS...]: spin built -O2 -g with a build id
{
	local out=$1
	shift
	cc -O2 -g -Wall -D_GNU_SOURCE -I"$WL" "$@" "$WL/spin.c" -o "$out" ||
		fail "cannot build spin"
}
build_id() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1; }

build_c "$TMP/spin.full" -Wl,--build-id=sha1
objcopy --only-keep-debug "$TMP/spin.full" "$TMP/spin.debug" || fail "objcopy --only-keep-debug"
strip -o "$TMP/spin" "$TMP/spin.full" || fail "strip"
readelf -SW "$TMP/spin" | grep -q '\.symtab' && fail "the stripped spin still has .symtab"
BID=$(build_id "$TMP/spin")
[ -n "$BID" ] && [ "$BID" = "$(build_id "$TMP/spin.debug")" ] ||
	fail "spin and spin.debug do not share a build id ($BID)"
# Another build of the same program (another build id), and one without a build id.
build_c "$TMP/other.full" -Wl,--build-id=sha1 -DSPIN_VARIANT=1 -fno-inline
objcopy --only-keep-debug "$TMP/other.full" "$TMP/other.debug" || fail "objcopy other"
[ "$(build_id "$TMP/other.debug")" != "$BID" ] || fail "the variant has the same build id"
build_c "$TMP/noid" -Wl,--build-id=none
[ -z "$(build_id "$TMP/noid")" ] || fail "noid has a build id"
# A poorer file of the same build: its symbol table names only main.
strip --keep-symbol=main -o "$TMP/spin.poor" "$TMP/spin.full" || fail "strip --keep-symbol"
(cd "$TMP" && tar cf "$TMP/spin.tar" spin.debug) || fail "tar"
log "spin build $BID, $(stat -c %s "$TMP/spin.debug") bytes of debug file"

# --- the agent ----------------------------------------------------------------------------
STORE=$TMP/store
APORT=$(free_port)
agent_tokens vera "$VIEWER" viewer otto "$OPERATOR" operator
agent_yaml node-sym "$APORT" "$STORE" >"$TMP/profiler.yaml"
wait_lock
agent_spawn "$TMP/profiler.yaml" "$TMP/daemon.log" ||
	fail "the agent did not start: $(tail -5 "$DLOG")"
API=http://127.0.0.1:$APORT

upload() # FILE [NAME]: POST /v1/symbols as the operator; prints the status code
{
	curl -s -o "$TMP/body" -w '%{http_code}' -X POST -H "Authorization: Bearer $OPERATOR" \
		-H "Content-Type: application/octet-stream" -T "$1" \
		"$API/v1/symbols?name=${2:-$(basename "$1")}"
}
cpu_capture() # TARGET: one 10 s cpu capture through the API to its end; the profile's id in $ID
{
	api_capture "$OPERATOR" "{\"target\": \"$1\", \"question\": \"cpu\", \"duration\": 10}"
	ID=$PROFILE_ID
}
collapsed() # ID: the profile's collapsed download into $TMP/c.ID
{
	[ "$(api "$VIEWER" GET "/v1/profiles/$1/download?format=collapsed")" = 200 ] ||
		fail "download $1: $(cat "$TMP/body")"
	cp "$TMP/body" "$TMP/c.$1"
}
named() # ID: true when the profile's stacks name checkout_loop
{
	collapsed "$1"
	grep -q 'checkout_loop' "$TMP/c.$1"
}
summary() # ID: GET /v1/profiles/ID into $TMP/p.ID
{
	[ "$(api "$VIEWER" GET "/v1/profiles/$1")" = 200 ] || fail "GET profile $1"
	cp "$TMP/body" "$TMP/p.$1"
}
refused() # FILE MESSAGE: an upload refused with 422 and exactly MESSAGE
{
	local code
	code=$(upload "$1")
	[ "$code" = 422 ] || fail "upload of $(basename "$1"): HTTP $code, want 422: $(cat "$TMP/body")"
	[ "$(json_get "$TMP/body" 'd["error"]')" = "$2" ] ||
		fail "upload of $(basename "$1"): '$(cat "$TMP/body")', want '$2'"
	log "refused $(basename "$1"): $2"
}

# --- the stripped program in a container -------------------------------------------------------
cg=$(cg_make_unit sym-spin.service) || exit 1
make_busybox_rootfs "$TMP/root" "$TMP/spin" || exit 1
pid=$(ns_container_run "$TMP/root" "$cg" /usr/local/bin/spin) || exit 1
need_own_ns "$pid" spin pid mnt
log "stripped spin pid $pid in a container"

cpu_capture "pid:$pid"
P1=$ID
summary "$P1"
"$PYTHON" - "$TMP/p.$P1" "$BID" <<'PY' || fail "the card of $P1 is wrong: $(cat "$TMP/p.$P1")"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
card = [b for b in s["stripped_binaries"] if b["path"] == "/usr/local/bin/spin"]
assert card, s["stripped_binaries"]
assert card[0]["build_id"] == sys.argv[2], card
assert card[0]["share"] >= 50, card
assert s.get("build_ids") is True
# runtimes and system libraries are never listed
assert not [b for b in s["stripped_binaries"] if "libc" in b["path"] or "ld-linux" in b["path"]]
print("card: %s %.1f%% build %s" % (card[0]["path"], card[0]["share"], card[0]["build_id"][:12]))
PY
named "$P1" && fail "the stripped profile names checkout_loop before any upload"
grep -q 'spin+0x' "$TMP/c.$P1" || fail "no spin+0x... frames in $P1: $(head -3 "$TMP/c.$P1")"

# --- refusals, wrong build, poorer file ----------------------------------------------------------
refused "$TMP/spin.tar" "this is not an ELF binary or debug file"
refused "$TMP/noid" "the file has no build id, so SlideOps cannot tell which build it names"
refused "$TMP/spin" "the file is stripped too"
code=$(upload "$TMP/other.debug")
[ "$code" = 201 ] || fail "upload other.debug: HTTP $code $(cat "$TMP/body")"
named "$P1" && fail "a debug file of another build named spin's frames"
log "another build's debug file names nothing"

# --- the right debug file: the earlier profile is named -------------------------------------------
code=$(upload "$TMP/spin.debug")
[ "$code" = 201 ] || fail "upload spin.debug: HTTP $code $(cat "$TMP/body")"
[ "$(json_get "$TMP/body" 'd["upload"]["build_id"]')" = "$BID" ] || fail "upload: $(cat "$TMP/body")"
NFUNCS=$(json_get "$TMP/body" 'd["upload"]["functions"]')
[ "$NFUNCS" -ge 3 ] || fail "spin.debug named only $NFUNCS functions"
code=$(upload "$TMP/spin.poor")
[ "$code" = 409 ] || fail "a poorer upload: HTTP $code, want 409: $(cat "$TMP/body")"
log "a poorer file of the same build was refused: $(json_get "$TMP/body" 'd["error"]')"
[ "$(api "$VIEWER" GET /v1/symbols)" = 200 ] || fail "GET /v1/symbols"
"$PYTHON" - "$TMP/body" "$BID" "$NFUNCS" <<'PY' || fail "the list is wrong: $(cat "$TMP/body")"
import json, sys
u = {x["build_id"]: x for x in json.load(open(sys.argv[1]))["uploads"]}
assert u[sys.argv[2]]["file_name"] == "spin.debug" and u[sys.argv[2]]["functions"] == int(sys.argv[3]), u
assert len(u) == 2, u
PY
named "$P1" || fail "profile $P1 (before the upload) does not name checkout_loop: $(head -3 "$TMP/c.$P1")"
summary "$P1"
"$PYTHON" - "$TMP/p.$P1" <<'PY' || fail "the summary of $P1 is not named: $(cat "$TMP/p.$P1")"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
assert not [b for b in s["stripped_binaries"] if b["path"] == "/usr/local/bin/spin"], s["stripped_binaries"]
assert "checkout_loop" in d["profile"]["answer"], d["profile"]["answer"]
assert s["top_functions"][0]["name"] == "checkout_loop", s["top_functions"]
print(d["profile"]["answer"])
PY
[ "$(api "$VIEWER" GET "/v1/profiles/$P1/download?format=pprof")" = 200 ] || fail "pprof download"
cp "$TMP/body" "$TMP/p1.pb.gz"
"$GO" tool pprof -top "$TMP/p1.pb.gz" >"$TMP/pprof.top" 2>&1 || fail "go tool pprof: $(tail -3 "$TMP/pprof.top")"
grep -q 'checkout_loop' "$TMP/pprof.top" || fail "go tool pprof does not show checkout_loop: $(head -20 "$TMP/pprof.top")"
[ "$(api "$VIEWER" GET "/v1/profiles/$P1/flamegraph")" = 200 ] && grep -q checkout_loop "$TMP/body" ||
	fail "the flame graph of $P1 does not name checkout_loop"
log "profile $P1, taken before the upload, names checkout_loop (summary, collapsed, pprof, flame graph)"

cpu_capture "pid:$pid"
P2=$ID
STORED=$(ls -d "$STORE"/profiles/"$P2")
grep -q checkout_loop "$STORED/profile.collapsed" ||
	fail "the new capture $P2 was not named when it was taken"
log "new capture $P2 named at capture time"

# --- delete, then the unstripped build instead -----------------------------------------------------
[ "$(api "$OPERATOR" DELETE "/v1/symbols/$BID")" = 200 ] || fail "DELETE: $(cat "$TMP/body")"
[ "$(api "$VIEWER" DELETE "/v1/symbols/$BID")" = 403 ] || fail "a viewer may delete uploads"
named "$P1" && fail "profile $P1 is still named after the upload was deleted"
code=$(upload "$TMP/spin.full" spin)
[ "$code" = 201 ] || fail "upload of the unstripped build: HTTP $code $(cat "$TMP/body")"
named "$P1" || fail "the unstripped build's upload does not name $P1"
log "the unstripped build names $P1 again"

# --- 1 GB streams; more is refused -------------------------------------------------------------------
truncate -s 1000M "$TMP/pad" || fail "truncate"
objcopy --add-section .pad="$TMP/pad" --set-section-flags .pad=noload,readonly "$TMP/other.debug" \
	"$TMP/big.debug" || fail "objcopy --add-section"
rm -f "$TMP/pad"
SIZE=$(stat -c %s "$TMP/big.debug")
[ "$SIZE" -gt 1000000000 ] && [ "$SIZE" -le 1073741824 ] || fail "big.debug is $SIZE bytes"
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$DAEMON_PID/status"; }
before=$(hwm)
code=$(upload "$TMP/big.debug")
[ "$code" = 201 ] || fail "the 1 GB upload: HTTP $code $(cat "$TMP/body")"
after=$(hwm)
log "1 GB upload ($SIZE bytes): agent peak RSS $before -> $after kB"
# 64 MiB of ring and the symbol table; ASan's shadow and quarantine on top (MEM_FACTOR, lib.sh)
[ $((after - before)) -lt $((102400 * (MEM_FACTOR + 1))) ] ||
	fail "the 1 GB upload raised the agent's peak RSS by $((after - before)) kB"
truncate -s 1025M "$TMP/huge" || fail "truncate"
code=$(upload "$TMP/huge")
[ "$code" = 413 ] || fail "a 1025 MB upload: HTTP $code $(cat "$TMP/body")"
rm -f "$TMP/big.debug" "$TMP/huge"
[ -z "$(find "$STORE" -size +100M)" ] || fail "the upload was stored: $(find "$STORE" -size +100M)"

# --- the audit trail ----------------------------------------------------------------------------------
AUDIT=$STORE/audit.log
"$PYTHON" - "$AUDIT" "$BID" <<'PY' || fail "the audit trail is wrong: $(grep -E 'upload|symbols' "$AUDIT")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
up = [r for r in rows if r["what"] == "upload"]
assert len([r for r in up if r["result"] == "refused"]) >= 5, up
assert len([r for r in up if r["result"] == "ok"]) >= 4, up
dl = [r for r in rows if r["what"] == "delete" and r["target"] == "symbols/" + sys.argv[2]]
assert [r for r in dl if r["result"] == "ok" and r["who"] == "otto"], dl
den = [r for r in rows if r["what"] == "delete" and r["target"].endswith(sys.argv[2])]
assert [r for r in den if r["result"] == "denied" and r["who"] == "vera"], den
PY

# --- Go: named from .gopclntab, its debug file matched by the GNU build id --------------------------
GO=$GO_BUILDID go_build hot -ldflags=-B=gobuildid
GBID=$(build_id "$TMP/hot")
[ -n "$GBID" ] || fail "go build -ldflags=-B=gobuildid wrote no GNU build id"
objcopy --only-keep-debug "$TMP/hot" "$TMP/hot.debug" || fail "objcopy hot"
strip "$TMP/hot" || fail "strip hot"
make_busybox_rootfs "$TMP/goroot" "$TMP/hot" || exit 1
cg2=$(cg_make_unit sym-go.service) || exit 1
gpid=$(ns_container_run "$TMP/goroot" "$cg2" /usr/local/bin/hot) || exit 1
cpu_capture "pid:$gpid"
G1=$ID
collapsed "$G1"
grep -q 'main.hotLoop' "$TMP/c.$G1" || fail "the stripped Go program is not named: $(head -3 "$TMP/c.$G1")"
summary "$G1"
"$PYTHON" -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; assert not s["stripped_binaries"], s["stripped_binaries"]' \
	"$TMP/p.$G1" || fail "a stripped Go binary is on the card: $(cat "$TMP/p.$G1")"
code=$(upload "$TMP/hot.debug")
[ "$code" = 201 ] || fail "upload hot.debug: HTTP $code $(cat "$TMP/body")"
[ "$(json_get "$TMP/body" 'd["upload"]["build_id"]')" = "$GBID" ] || fail "hot.debug: $(cat "$TMP/body")"
log "stripped Go named from .gopclntab, not on the card; hot.debug matched build $GBID"

agent_stop TERM

# --- the CLI and its local store -------------------------------------------------------------------
printf 'store_dir: %s\n' "$TMP/clistore" >"$TMP/cli.yaml"
"$BIN" symbols upload "$TMP/spin.tar" --config "$TMP/cli.yaml" >"$TMP/cli.out" 2>&1 &&
	fail "the CLI accepted a tar file"
grep -q 'this is not an ELF binary or debug file' "$TMP/cli.out" || fail "CLI refusal: $(cat "$TMP/cli.out")"
"$BIN" symbols upload "$TMP/spin.debug" --config "$TMP/cli.yaml" >"$TMP/cli.out" 2>&1 ||
	fail "symbols upload: $(cat "$TMP/cli.out")"
"$BIN" symbols list --config "$TMP/cli.yaml" >"$TMP/cli.out" 2>&1 || fail "symbols list"
grep -q "^$BID .*spin.debug" "$TMP/cli.out" || fail "symbols list: $(cat "$TMP/cli.out")"
OUT=$TMP/cliout
wait_lock
timeout -k 5 60 "$BIN" capture --pid "$pid" --question cpu --duration 3 --out "$OUT" \
	--config "$TMP/cli.yaml" </dev/null >"$TMP/capture.out" 2>&1 || fail "CLI capture: $(tail -5 "$TMP/capture.out")"
grep -q checkout_loop "$OUT/profile.collapsed" || fail "the CLI capture does not name checkout_loop"
"$BIN" symbols delete "$BID" --config "$TMP/cli.yaml" >"$TMP/cli.out" 2>&1 || fail "symbols delete"
"$BIN" symbols list --config "$TMP/cli.yaml" | grep -q "$BID" && fail "the upload is still listed"
log "CLI: upload, list, a capture named from the local store, delete"

log "PASS: stripped binaries, uploads by build id, names back in time"

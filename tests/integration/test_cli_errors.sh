#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# `capture` refuses what it cannot do with a non-zero exit and a one-line reason (SPEC 5): the
# last line of stderr is non-empty and says what is wrong.
. "$(dirname "$0")/lib.sh"

need_root
need_cmd setpriv timeout
need_bin

failures=0

# expect_refusal NAME PATTERN CMD...: CMD exits non-zero within 30 s, and the last line of its
# stderr is non-empty and matches the extended regular expression PATTERN.
expect_refusal()
{
	local name=$1 pattern=$2 rc last
	shift 2
	timeout -k 5 30 "$@" >"$TMP/$name.stdout" 2>"$TMP/$name.stderr"
	rc=$?
	last=$(tail -n 1 "$TMP/$name.stderr")
	if [ "$rc" -eq 0 ]; then
		log "$name: exited 0, expected a refusal"
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		log "$name: still running after 30 s"
	elif [ -z "$last" ]; then
		log "$name: exited $rc with no reason on stderr (last line empty)"
	elif ! grep -qE -- "$pattern" <<<"$last"; then
		log "$name: exited $rc, but the reason '$last' does not match /$pattern/"
	else
		log "$name: ok (exit $rc): $last"
		return 0
	fi
	sed 's/^/    stderr: /' "$TMP/$name.stderr" >&2
	failures=$((failures + 1))
}

# Arguments: each names what is wrong.
expect_refusal unknown-question 'bogus-question.*cpu|cpu.*bogus-question' \
	"$BIN" capture --server --question bogus-question --duration 5 --out "$TMP/o1"
expect_refusal duration-0 '[Dd]uration' \
	"$BIN" capture --server --question cpu --duration 0 --out "$TMP/o2"
expect_refusal duration-61 '[Dd]uration' \
	"$BIN" capture --server --question cpu --duration 61 --out "$TMP/o3"
expect_refusal unwritable-out '/proc/foo' \
	"$BIN" capture --server --question cpu --duration 1 --out /proc/foo
[ ! -e "$TMP/o1" ] && [ ! -e "$TMP/o2" ] && [ ! -e "$TMP/o3" ] ||
	{ log "a refused capture created its --out directory"; failures=$((failures + 1)); }

# An unprivileged user with no capabilities: the reason names what is missing.
chmod 755 "$LIB_STATE" "$TMP"
mkdir -m 777 "$TMP/nobody"
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
bin=$BIN
if ! "${nobody[@]}" test -x "$BIN"; then	# e.g. a build tree under a private home
	cp "$BIN" "$TMP/nobody/slideops-profiler"
	bin=$TMP/nobody/slideops-profiler
fi
expect_refusal unprivileged 'CAP_[A-Z_]+|root' \
	"${nobody[@]}" "$bin" capture --server --question cpu --duration 1 --out "$TMP/nobody/out"

[ "$failures" -eq 0 ] || fail "$failures case(s) failed"
log "ok"

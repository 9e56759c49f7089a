#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Runtime detection (SPEC 5 `check`, 8) on real processes of real languages, some of them in
# their own pid+mount namespaces, through `slideops-profiler check --pid PID --json`
# (.processes[0].runtime/.version/.display):
#
#   on the host                                              expected display
#     /usr/bin/python3.11 (Debian, libpython linked in)      CPython 3.11
#     a pyenv CPython 3.12 or 3.13 (libpython3.X.so)         CPython 3.12 / 3.13
#     java Main.java (OpenJDK 17)                            JVM (Java 17)
#     hotgo built by `go build`, and with -ldflags='-s -w'   Go 1.19 (both)
#     node -e 'setInterval(...)'                             Node.js 20
#     ruby -e 'sleep'                                        Ruby 3.1
#     $OUTPUT/workloads/spin (C)                             native
#   in a container (own pid, mount, net namespaces; busybox root; its files only)
#     hotgo stripped, spin, node, and a JVM whose JDK is  Go 1.19, native, Node.js 20,
#     copied into the container's root                       JVM (Java 17)
#
# The expected versions come from the toolchains themselves (`go env GOVERSION`, node's
# process.versions, RUBY_VERSION, the JDK's java.specification.version), so the test stays
# right when the machine's versions move; ENVIRONMENT.md lists the ones above.
. "$(dirname "$0")/lib.sh"

need_root
need_bin

PY311=/usr/bin/python3.11
JAVA_HOME_HOST=$(dirname "$(dirname "$(readlink -f "$(command -v java 2>/dev/null || echo /usr/bin/java)")")")

# The runtimes this test is about are part of the machine (ENVIRONMENT.md); the two that
# Debian does not preinstall are installed as the environment notes say.
install_pkg()
{
	log "installing $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >"$TMP/apt.log" 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >"$TMP/apt.log" 2>&1; } ||
		fail "apt-get install $* failed: $(tail -3 "$TMP/apt.log")"
}
[ -x "$PY311" ] || install_pkg python3.11
command -v ruby >/dev/null 2>&1 || install_pkg ruby
command -v go >/dev/null 2>&1 || install_pkg golang-go
need_cmd java javac node ruby go

# --- expected versions, from the toolchains ------------------------------------------------
GO_VER=$(go env GOVERSION | sed -n 's/^go\([0-9]*\.[0-9]*\).*/\1/p')
NODE_VER=$(node -p 'process.versions.node.split(".")[0]')
RUBY_VER=$(ruby -e 'print RUBY_VERSION[/\A\d+\.\d+/]')
JAVA_VER=$(java -XshowSettings:properties -version 2>&1 |
	sed -n 's/^ *java\.specification\.version = \([0-9.]*\).*/\1/p' | sed 's/^1\.//')
for v in GO_VER NODE_VER RUBY_VER JAVA_VER; do
	[ -n "${!v}" ] || fail "cannot tell the expected version ($v)"
done
log "expected: Go $GO_VER, Node.js $NODE_VER, Ruby $RUBY_VER, Java $JAVA_VER"

PYENV_PY=
for d in /root/.pyenv/versions/3.13* /root/.pyenv/versions/3.12*; do
	if [ -x "$d/bin/python3" ]; then
		PYENV_PY=$d/bin/python3
		PYENV_VER=$(basename "$d" | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
		break
	fi
done

# --- workloads -----------------------------------------------------------------------------
SPIN=$OUTPUT/workloads/spin
if [ ! -x "$SPIN" ]; then
	SPIN=$TMP/spin
	cc -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE "$LIB_DIR/../workloads/spin.c" -o "$SPIN" \
		-lpthread || fail "cannot build workload spin"
fi

export GOCACHE=$TMP/gocache GOPATH=$TMP/gopath GO111MODULE=off GOFLAGS=
go build -o "$TMP/hotgo" "$LIB_DIR/../workloads/go/hotgo.go" >"$TMP/go.log" 2>&1 ||
	fail "go build failed: $(tail -3 "$TMP/go.log")"
go build -ldflags='-s -w' -o "$TMP/hotgo-stripped" "$LIB_DIR/../workloads/go/hotgo.go" \
	>"$TMP/go.log" 2>&1 || fail "go build -ldflags='-s -w' failed: $(tail -3 "$TMP/go.log")"
readelf -S "$TMP/hotgo-stripped" | grep -q '\.symtab' && fail "hotgo-stripped still has .symtab"
readelf -S "$TMP/hotgo" | grep -q '\.symtab' || fail "hotgo has no .symtab"

mkdir -p "$TMP/java"
cat >"$TMP/java/Main.java" <<'EOF'
public class Main {
	public static void main(String[] args) throws Exception {
		while (true)
			Thread.sleep(1000);
	}
}
EOF

# --- host processes ------------------------------------------------------------------------
cg=$(cg_make_unit runtime-detect.service) || exit 1

# wait_mapped PID REGEX: the runtime's library is mapped (the interpreter has started).
wait_mapped()
{
	wait_for "grep -qE '$2' /proc/$1/maps 2>/dev/null" 30 ||
		fail "pid $1 did not map $2 within 30 s"
}

# Rows: "pid|runtime|version|display|what".
ROWS=()
row() { ROWS+=("$1|$2|$3|$4|$5"); }

pid=$(cg_run "$cg" "$PY311" -c 'import time; time.sleep(600)') || exit 1
row "$pid" python 3.11 "CPython 3.11" "Debian $PY311"

if [ -n "$PYENV_PY" ]; then
	pid=$(cg_run "$cg" "$PYENV_PY" -c 'import time; time.sleep(600)') || exit 1
	wait_mapped "$pid" "libpython$PYENV_VER"
	row "$pid" python "$PYENV_VER" "CPython $PYENV_VER" "pyenv $PYENV_PY"
else
	log "row skipped: no pyenv CPython 3.12/3.13 under /root/.pyenv/versions (CI loses this row)"
fi

pid=$(cg_run "$cg" java "$TMP/java/Main.java") || exit 1
wait_mapped "$pid" '/libjvm\.so'
row "$pid" java "$JAVA_VER" "JVM (Java $JAVA_VER)" "java Main.java"

pid=$(cg_run "$cg" "$TMP/hotgo") || exit 1
row "$pid" go "$GO_VER" "Go $GO_VER" "go build (unstripped)"
pid=$(cg_run "$cg" "$TMP/hotgo-stripped") || exit 1
row "$pid" go "$GO_VER" "Go $GO_VER" "go build -ldflags='-s -w'"

pid=$(cg_run "$cg" node -e 'setInterval(() => {}, 1000)') || exit 1
row "$pid" node "$NODE_VER" "Node.js $NODE_VER" "node -e"

pid=$(cg_run "$cg" ruby -e 'sleep 600') || exit 1
wait_mapped "$pid" 'libruby'
row "$pid" ruby "$RUBY_VER" "Ruby $RUBY_VER" "ruby -e"

pid=$(cg_run "$cg" "$SPIN") || exit 1
row "$pid" native "" native "C program spin"

# --- containers ----------------------------------------------------------------------------
# own_ns PID: it really is in its own pid and mount namespaces.
own_ns()
{
	[ "$(readlink "/proc/$1/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] ||
		fail "pid $1 is not in its own pid namespace"
	[ "$(readlink "/proc/$1/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
		fail "pid $1 is not in its own mount namespace"
}

# Their own unit cgroup: runtime detection does not depend on the owner, and a cgroup of its
# own keeps other tests' cleanup (cgroup.kill of a shared kubepods.slice) away from them.
ccg=$(cg_make_unit runtime-detect-containers.service) || exit 1

make_busybox_rootfs "$TMP/root-go" "$TMP/hotgo-stripped" || exit 1
pid=$(ns_container_run "$TMP/root-go" "$ccg" /usr/local/bin/hotgo-stripped) || exit 1
own_ns "$pid"
row "$pid" go "$GO_VER" "Go $GO_VER" "container: go build -ldflags='-s -w'"

make_busybox_rootfs "$TMP/root-spin" "$SPIN" || exit 1
pid=$(ns_container_run "$TMP/root-spin" "$ccg" /usr/local/bin/spin) || exit 1
own_ns "$pid"
row "$pid" native "" native "container: C program spin"

make_busybox_rootfs "$TMP/root-node" "$(readlink -f "$(command -v node)")" || exit 1
pid=$(ns_container_run "$TMP/root-node" "$ccg" /usr/local/bin/node -e 'setInterval(() => {}, 1000)') ||
	exit 1
own_ns "$pid"
row "$pid" node "$NODE_VER" "Node.js $NODE_VER" "container: node"

# A JVM whose JDK exists only inside the container: its `release` file is found through
# /proc/PID/root at the path libjvm.so has in the container, not on the host. The JDK is
# copied (not bind-mounted: the container's root is a non-recursive bind) with the
# configuration its links point to and the libraries its ELF files need.
jroot=$TMP/root-java
make_busybox_rootfs "$jroot" || exit 1
CJH=/opt/jdk-in-container
mkdir -p "$jroot$CJH" "$jroot/app"
cp -a "$JAVA_HOME_HOST/." "$jroot$CJH/" || fail "cannot copy $JAVA_HOME_HOST"
find "$JAVA_HOME_HOST/" -type l -lname '/etc/*' -printf '%l\n' | xargs -r dirname | sort -u |
	while read -r d; do
		mkdir -p "$jroot$d" && cp -aL "$d/." "$jroot$d/" 2>/dev/null
	done
# One ldd over all of the JDK's ELF files; its own libraries (libjvm.so, found through
# $ORIGIN) stay where the copy has them.
for lib in $(find "$JAVA_HOME_HOST/bin/java" "$JAVA_HOME_HOST/lib" \( -name java -o -name '*.so' \) -print0 |
	xargs -0 ldd 2>/dev/null |
	awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' | sort -u); do
	case $lib in "$JAVA_HOME_HOST"/* | /usr/lib/jvm/*) continue ;; esac
	[ -e "$jroot$lib" ] && continue
	mkdir -p "$jroot$(dirname "$lib")"
	cp -L "$lib" "$jroot$lib" || fail "cannot copy $lib"
done
javac -d "$jroot/app" "$TMP/java/Main.java" || fail "javac failed"
pid=$(ns_container_run "$jroot" "$ccg" "$CJH/bin/java" -cp /app Main) || exit 1
own_ns "$pid"
wait_mapped "$pid" "$CJH/lib/server/libjvm\\.so"
[ -e "$CJH" ] && fail "$CJH exists on the host: the row would not show reading through the root"
row "$pid" java "$JAVA_VER" "JVM (Java $JAVA_VER)" "container: JVM with its JDK at $CJH"

# --- check each one ------------------------------------------------------------------------
failed=0
for r in "${ROWS[@]}"; do
	IFS='|' read -r pid runtime version display what <<<"$r"
	kill -0 "$pid" 2>/dev/null || fail "$what (pid $pid) is no longer running"
	out=$TMP/check.$pid.json
	timeout -k 5 30 "$BIN" check --pid "$pid" --json >"$out" 2>"$TMP/check.$pid.stderr"
	rc=$?
	got_pid=$(json_get "$out" 'd["processes"][0]["pid"]') ||
		fail "check --pid $pid --json (exit $rc) printed no processes[0]: $(head -c 300 "$out") $(tail -3 "$TMP/check.$pid.stderr")"
	got_display=$(json_get "$out" 'd["processes"][0]["display"]') || exit 1
	got_runtime=$(json_get "$out" 'd["processes"][0]["runtime"]') || exit 1
	got_version=$(json_get "$out" 'd["processes"][0]["version"]') || exit 1
	if [ "$got_pid" = "$pid" ] && [ "$got_display" = "$display" ] &&
	   [ "$got_runtime" = "$runtime" ] && [ "$got_version" = "$version" ]; then
		log "ok   $what: $got_display"
	else
		log "FAIL $what (pid $got_pid/$pid): got runtime=$got_runtime version=$got_version display='$got_display', want runtime=$runtime version=$version display='$display'"
		failed=$((failed + 1))
	fi
done
[ "$failed" -eq 0 ] || fail "$failed of ${#ROWS[@]} processes detected wrongly"
log "all ${#ROWS[@]} processes detected right"

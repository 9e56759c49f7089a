#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The DaemonSet image (Dockerfile), built for real by Debian's dockerd from a Debian 12 base
# made here: nothing comes from a registry.
#
#  - Its own containerd and dockerd (sockets and exec-root in /run/slideops-test-docker,
#    `--iptables=false --ip6tables=false --bridge=none`, containers under this test's own
#    memory cgroup), stopped at exit. The data-root is kept in /var/cache/slideops-test, so a
#    second run (CI runs the suite twice) finds every layer built and takes seconds. A registry
#    is unreachable on purpose (the daemons' proxy is a closed port): a pull fails the test.
#  - The base: `debootstrap --variant=minbase bookworm`, with the dpkg and apt settings of
#    Debian's official images, cached as a tarball (built once per machine, under flock) and
#    `docker import`ed as slideops-test/debian:12.
#  - `docker build --network host --build-arg BASE=slideops-test/debian:12` (RUN steps reach the
#    Debian mirror) with no async-profiler. In the image: `version` prints what the host
#    binary prints; the binary is /opt/slideops/profiler/slideops-profiler and ldd finds all
#    its libraries; entrypoint + cmd are the DaemonSet's command, and the default command is the
#    daemon reading the manifest's config path (missing here: exit 2 naming it, on a read-only
#    root with no capabilities); the manifest's image tag is that version; no async-profiler.
#  - async-profiler from a local HTTP server (a stand-in tarball): with its sha256, its
#    lib/libasyncProfiler.so is /opt/slideops/async-profiler/lib/libasyncProfiler.so in the
#    image and only the last layers were built again; with a wrong sha256 the build fails on
#    the checksum and tags nothing.
#
# Prints the time of each step. The first run on a machine (debootstrap, two apt-get installs,
# the compile) takes a few minutes; later runs take seconds.

# timeout: 1200
. "$(dirname "$0")/lib.sh"
need_root
need_cmd flock tar gzip sha256sum
DOCKERD=/usr/sbin/dockerd
DOCKER=/usr/bin/docker	# docker.io's client: the same API version as its daemon
for c in "$DOCKERD" "$DOCKER"; do
	[ -x "$c" ] || fail "$c not found (apt-get install docker.io; make test installs it)"
done
CONTAINERD=$(command -v containerd) || fail "containerd not found (apt-get install docker.io; make test installs it)"

: "${TEST_CACHE:=/var/cache/slideops-test}"
RUN_DIR=/run/slideops-test-docker
BASE_IMAGE=slideops-test/debian:12
# The base tarball's recipe: a new one is made (and imported) when this changes.
BASE_RECIPE=minbase-bookworm-v2
BASE_TAR=$TEST_CACHE/debian-12-$BASE_RECIPE.tar
IMAGE=slideops/profiler:test
BIN_IN_IMAGE=/opt/slideops/profiler/slideops-profiler
AP_HOME=/opt/slideops/async-profiler
AP_IN_IMAGE=$AP_HOME/lib/libasyncProfiler.so
CONTEXT=$TMP/context	# the copy of the repository that is built
DAEMONSET=$CONTEXT/manifests/daemonset.yaml

[ -x "$BIN" ] || fail "$BIN is missing (make all)"
mkdir -p "$TEST_CACHE" || fail "cannot create $TEST_CACHE"

# --- timings ---------------------------------------------------------------------------------
T_START=$(date +%s%N)
T_LAP=$T_START
TIMINGS=
secs() { printf '%d.%d s' $(($1 / 1000000000)) $(($1 % 1000000000 / 100000000)); }
lap()
{
	local now
	now=$(date +%s%N)
	TIMINGS="$TIMINGS, $1 $(secs $((now - T_LAP)))"
	log "$1: $(secs $((now - T_LAP)))"
	T_LAP=$now
}

# --- the daemons -------------------------------------------------------------------------------
# One run at a time owns the data-root and RUN_DIR (the EXIT trap that stops the daemons is set
# only once the lock is held).
exec 8>"$TEST_CACHE/docker.lock"
flock -w 240 8 || fail "another test_image run held $TEST_CACHE/docker.lock for 4 min"

# ours PID: PID is alive and one of this test's daemons or their shims (its command line names
# RUN_DIR), so a pid reused by another process is never touched.
ours()
{
	[ -n "$1" ] && [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF "$RUN_DIR/"
}

gone() { [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

stop_pid()
{
	ours "$1" || return 0
	[ -n "${LEFTOVER:-}" ] && log "stopping leftover $(tr '\0' ' ' <"/proc/$1/cmdline" | cut -c1-100)"
	kill -TERM "$1" 2>/dev/null
	wait_for "gone $1" 20 || { log "pid $1 ignored SIGTERM for 20 s: SIGKILL"; kill -KILL "$1"; }
	wait "$1" 2>/dev/null
	wait_for "gone $1" 5
}

cg_mounts() { awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/self/mounts | sort -u; }

# Records in RUN_DIR/cgroups, for each hierarchy, the first directory of CG_PARENT that is not
# there yet: runc makes it and what is below, docker_stop removes it all.
cg_record()
{
	local h path part
	for h in $(cg_mounts); do
		path=$h
		local IFS=/
		for part in $CG_PARENT; do
			[ -n "$part" ] || continue
			path=$path/$part
			[ -d "$path" ] || { echo "$path"; break; }
		done
		unset IFS
	done >"$RUN_DIR/cgroups"
}

# Stops dockerd, then containerd, then any shim left; unmounts what they left mounted; removes
# the containers' cgroups and RUN_DIR. Also run at start, for what a killed run left behind.
docker_stop()
{
	local p m d
	stop_pid "$(cat "$RUN_DIR/dockerd.pid" 2>/dev/null)"
	stop_pid "$(cat "$RUN_DIR/containerd.pid" 2>/dev/null)"
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		ours "$p" && LEFTOVER=1 stop_pid "$p"
	done
	for m in $(awk -v r="$RUN_DIR/" -v d="$TEST_CACHE/docker/" -v c="$TEST_CACHE/containerd/" \
		'index($2, r) == 1 || index($2, d) == 1 || index($2, c) == 1 { print $2 }' \
		/proc/self/mounts | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	if [ -f "$RUN_DIR/cgroups" ]; then
		while read -r d; do
			[ -d "$d" ] || continue
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
			[ -d "$d" ] && log "cgroup $d is still there"
		done <"$RUN_DIR/cgroups"
	fi
	rm -rf --one-file-system "$RUN_DIR"
}

image_cleanup()
{
	local rc=$?
	[ "${BASHPID:-$$}" = "$LIB_MAIN_PID" ] || return 0
	docker_stop
	(exit "$rc")
	cleanup
}
trap image_cleanup EXIT

# The containers' cgroups, below this test's own memory cgroup (memory cgroups may only be made
# there on these machines), at the same path in every other hierarchy. Absolute: BuildKit makes
# a relative parent absolute anyway.
CG_PARENT=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
CG_PARENT=${CG_PARENT%/}/slideops-test-docker
LEFTOVER=1 docker_stop
mkdir -p "$RUN_DIR" "$TEST_CACHE/docker" || fail "cannot create $RUN_DIR"
cg_record

# A closed port as proxy: a registry pull by either daemon fails at once (localhost, such as
# the async-profiler server below, is never proxied).
NOREG="HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY= http_proxy= https_proxy= no_proxy="

cat >"$TMP/containerd.toml" <<EOF
version = 2
root = "$TEST_CACHE/containerd"
state = "$RUN_DIR/containerd"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.opt"]
[grpc]
  address = "$RUN_DIR/containerd.sock"
EOF
# Its own containerd: dockerd would use a system one at /run/containerd/containerd.sock.
# shellcheck disable=SC2086
env $NOREG "$CONTAINERD" --config "$TMP/containerd.toml" --address "$RUN_DIR/containerd.sock" \
	--root "$TEST_CACHE/containerd" --state "$RUN_DIR/containerd" </dev/null >"$TMP/containerd.log" 2>&1 8>&- &
echo $! >"$RUN_DIR/containerd.pid"
echo $! >>"$LIB_STATE/pids"
wait_for "[ -S '$RUN_DIR/containerd.sock' ] || gone $!" 20 && [ -S "$RUN_DIR/containerd.sock" ] ||
	fail "containerd did not start: $(tail -5 "$TMP/containerd.log")"

# The build cache is collected above 3 GB (the base and one full build keep about 0.7 GB; each
# change of the sources adds a compile of about 30 MB).
cat >"$TMP/daemon.json" <<'EOF'
{
  "features": {"buildkit": true},
  "builder": {"gc": {"enabled": true, "defaultKeepStorage": "3GB"}}
}
EOF
# shellcheck disable=SC2086
env $NOREG "$DOCKERD" --config-file "$TMP/daemon.json" \
	--data-root "$TEST_CACHE/docker" --exec-root "$RUN_DIR/exec" \
	--host "unix://$RUN_DIR/docker.sock" --pidfile "$RUN_DIR/dockerd.pid" \
	--containerd "$RUN_DIR/containerd.sock" --cgroup-parent "$CG_PARENT" \
	--iptables=false --ip6tables=false --bridge=none --ip-forward=false \
	</dev/null >"$TMP/dockerd.log" 2>&1 8>&- &
DOCKERD_PID=$!
echo "$DOCKERD_PID" >>"$LIB_STATE/pids"

export DOCKER_HOST=unix://$RUN_DIR/docker.sock DOCKER_BUILDKIT=1 DOCKER_CONFIG=$TMP/docker-config
D() { "$DOCKER" "$@"; }
wait_for "D version >/dev/null 2>&1 || gone $DOCKERD_PID" 30 &&
	D version >/dev/null 2>&1 || fail "dockerd did not answer on $DOCKER_HOST: $(tail -5 "$TMP/dockerd.log")"
log "dockerd $(D version -f '{{.Server.Version}}') on $DOCKER_HOST, data-root $TEST_CACHE/docker"
lap "daemons"

# The guard works: a pull fails at once, on the closed proxy port.
if out=$(timeout 30 "$DOCKER" pull slideops-test/no-such-image:0 2>&1); then
	fail "docker pull reached a registry: $out"
fi
case $out in
*proxyconnect*127.0.0.1:9*) ;;
*) fail "docker pull did not fail on the closed proxy port: $out" ;;
esac
wait_for "grep -q 'images/create returned error' '$TMP/dockerd.log'" 5 ||
	fail "dockerd did not log the refused pull: $(tail -3 "$TMP/dockerd.log")"
PULLS_FROM=$(($(wc -l <"$TMP/dockerd.log") + 1))

# no_pull [BUILDLOG...]: nothing tried a registry since that check, in dockerd's log (pulls) or
# in the build logs (BuildKit resolving an image).
no_pull()
{
	local l
	l=$({ tail -n +"$PULLS_FROM" "$TMP/dockerd.log"; cat "$@" </dev/null; } 2>/dev/null |
		grep -E 'proxyconnect|registry-1\.docker\.io' | head -3)
	[ -z "$l" ] || fail "something tried to pull from a registry: $l"
}

# --- the base image --------------------------------------------------------------------------
make_base_tar()
{
	local root
	need_cmd debootstrap
	root=$(mktemp -d "$TEST_CACHE/rootfs.XXXXXX") || fail "mktemp in $TEST_CACHE"
	echo "$root" >>"$LIB_STATE/dirs"
	log "debootstrap --variant=minbase bookworm (once per machine, about a minute)"
	debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian \
		>"$TMP/debootstrap.log" 2>&1 ||
		fail "debootstrap failed: $(tail -5 "$TMP/debootstrap.log")"
	# What Debian's official images set (debuerreotype): dpkg without fsync, no docs, man
	# pages or translations, no package caches kept in layers.
	echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
	printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
		'path-exclude /usr/share/man/*' 'path-exclude /usr/share/groff/*' \
		'path-exclude /usr/share/info/*' 'path-exclude /usr/share/lintian/*' \
		'path-exclude /usr/share/locale/*' 'path-include /usr/share/locale/locale.alias' \
		>"$root/etc/dpkg/dpkg.cfg.d/docker"
	printf '%s\n' \
		'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
		'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };' \
		'Dir::Cache::pkgcache "";' 'Dir::Cache::srcpkgcache "";' \
		>"$root/etc/apt/apt.conf.d/docker-clean"
	echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
	# Their sources too: the point and security updates, as a build on debian:12-slim gets.
	rm -f "$root/etc/apt/sources.list"
	printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' \
		'Suites: bookworm bookworm-updates' 'Components: main' \
		'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' '' \
		'Types: deb' 'URIs: http://deb.debian.org/debian-security' \
		'Suites: bookworm-security' 'Components: main' \
		'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
		>"$root/etc/apt/sources.list.d/debian.sources"
	rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
	tar -C "$root" --numeric-owner -cf "$BASE_TAR.tmp" . || fail "cannot write $BASE_TAR.tmp"
	mv "$BASE_TAR.tmp" "$BASE_TAR"
	rm -rf --one-file-system "$root"
}

if [ "$(D image inspect -f '{{index .Config.Labels "slideops.test.base"}}' "$BASE_IMAGE" 2>/dev/null)" = "$BASE_RECIPE" ]; then
	log "base image $BASE_IMAGE is in the daemon"
else
	(
		# Other tests may share the tarball: it is made under its own lock.
		flock -w 240 9 || fail "another run held $TEST_CACHE/rootfs.lock for 4 min"
		[ -s "$BASE_TAR" ] || make_base_tar
	) 9>"$TEST_CACHE/rootfs.lock" || exit 1
	D import --change "LABEL slideops.test.base=$BASE_RECIPE" --change 'CMD ["bash"]' \
		"$BASE_TAR" "$BASE_IMAGE" >"$TMP/import.out" 2>&1 ||
		fail "docker import $BASE_TAR: $(cat "$TMP/import.out")"
	log "imported $BASE_TAR as $BASE_IMAGE"
fi
lap "base image"

# --- the image, without async-profiler -----------------------------------------------------------
# build TAG LOG [ARG...]: docker build of the repository (its copy in CONTEXT) with the local
# base; the plain progress (every step, CACHED or run) goes to LOG.
build()
{
	local tag=$1 out=$2
	shift 2
	D build --progress plain --network host --build-arg "BASE=$BASE_IMAGE" "$@" -t "$tag" \
		"$CONTEXT" >"$out" 2>&1
}

# step_cached LOG TEXT: every build step whose title contains TEXT was taken from the cache.
step_cached()
{
	local ids id
	ids=$(grep -F "$2" "$1" | sed -n 's/^#\([0-9]*\) \[.*/\1/p' | sort -u)
	[ -n "$ids" ] || fail "no step '$2' in $1"
	for id in $ids; do
		grep -qx "#$id CACHED" "$1" || return 1
	done
}

# slow_steps LOG: the steps of a build that ran for a second or more, with their time.
slow_steps()
{
	awk '/^#[0-9]+ \[/ { id = $1; sub(/^#[0-9]+ /, ""); if (!(id in title)) title[id] = substr($0, 1, 70) }
	     /^#[0-9]+ DONE [0-9.]+s$/ { t = $3; sub(/s$/, "", t)
		if (t + 0 >= 1) printf "  %6.1f s  %s\n", t, title[$1] }' "$1"
}

# The three builds use one copy of the repository, taken now: the tree may be edited meanwhile,
# and the async-profiler builds must see the sources the first one compiled. Same contents, so
# the same cache keys as a build of the repository itself.
mkdir -p "$CONTEXT"
tar -C "$REPO_ROOT" --exclude=./.git --exclude='./.output*' --exclude=./out -cf - . |
	tar -C "$CONTEXT" -xf - || fail "cannot copy $REPO_ROOT to $CONTEXT"

build "$IMAGE" "$TMP/build.log" ||
	{ no_pull "$TMP/build.log"; fail "docker build without async-profiler failed: $(tail -25 "$TMP/build.log")"; }
no_pull "$TMP/build.log"
if step_cached "$TMP/build.log" '] RUN make'; then
	log "built $IMAGE (every step cached)"
else
	log "built $IMAGE (compiled: sources or Dockerfile changed); steps of 1 s or more:"
	slow_steps "$TMP/build.log" >&2
fi
lap "docker build"

# --- what is in the image ------------------------------------------------------------------------
want=$("$BIN" version) || fail "$BIN version failed"
got=$(D run --rm --network none "$IMAGE" version 2>"$TMP/version.err") ||
	fail "docker run $IMAGE version: $(cat "$TMP/version.err")"
[ "$got" = "$want" ] || fail "the image's version is '$got', the host binary's '$want'"
log "docker run $IMAGE version: $got"

D run --rm --network none --entrypoint /bin/sh "$IMAGE" -c '
	set -e
	test -f "$1" && test -x "$1" || { echo "$1 is not an executable file"; exit 1; }
	ldd "$1" >/tmp/ldd || { cat /tmp/ldd; echo "ldd $1 failed"; exit 1; }
	if grep "not found" /tmp/ldd; then echo "libraries missing in the image"; exit 1; fi
	test ! -e "$2" || { echo "$2 is there without ASYNC_PROFILER_URL"; exit 1; }
	' sh "$BIN_IN_IMAGE" "$AP_HOME" >"$TMP/inside.out" 2>&1 ||
	fail "in the image: $(cat "$TMP/inside.out")"

# Entrypoint + cmd = the DaemonSet's command; its image tag = the version. The manifest writes
# the command as a flow sequence of double-quoted strings (JSON).
"$PYTHON" - "$DAEMONSET" "$(D image inspect -f '{{json .Config.Entrypoint}}' "$IMAGE")" \
	"$(D image inspect -f '{{json .Config.Cmd}}' "$IMAGE")" "${want##* }" <<'PY' >"$TMP/manifest.out" 2>&1
import json, re, sys
text = open(sys.argv[1]).read()
entrypoint, cmd, version = json.loads(sys.argv[2]) or [], json.loads(sys.argv[3]) or [], sys.argv[4]
m = re.search(r"^\s*command:\s*(\[[^\]]*\])", text, re.M)
if not m:
    sys.exit("no `command: [...]` in %s" % sys.argv[1])
command = json.loads(m.group(1))
if entrypoint + cmd != command:
    sys.exit("image entrypoint %r + cmd %r != the DaemonSet's command %r" % (entrypoint, cmd, command))
images = re.findall(r"^\s*image:\s*(\S+)", text, re.M)
if images != ["slideops/profiler:" + version]:
    sys.exit("the DaemonSet runs %r, not slideops/profiler:%s" % (images, version))
print("entrypoint + cmd = %s; the DaemonSet runs slideops/profiler:%s" % (" ".join(command), version))
PY
rc=$?
[ "$rc" -eq 0 ] || fail "$(cat "$TMP/manifest.out")"
log "$(cat "$TMP/manifest.out")"

# The default command, as the DaemonSet runs it (read-only root, no capabilities): the daemon
# reads the manifest's config path, which only the ConfigMap provides.
D run --rm --network none --read-only --cap-drop ALL "$IMAGE" >"$TMP/default.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q '/etc/slideops/profiler.yaml' "$TMP/default.out" ||
	fail "default command: exit $rc (want 2, the missing /etc/slideops/profiler.yaml): $(cat "$TMP/default.out")"
log "image $(D image inspect -f '{{.Size}}' "$IMAGE" | awk '{ printf "%.0f MB", $1 / 1e6 }'); checks passed"
lap "image checks"

# --- async-profiler from a build argument ----------------------------------------------------------
# A stand-in tarball as async-profiler ships it: one top-level directory with lib/.
AP_DIR=async-profiler-0.0-linux-x64
mkdir -p "$TMP/ap/$AP_DIR/lib" "$TMP/www"
echo "slideops test stand-in for libasyncProfiler.so" >"$TMP/ap/$AP_DIR/lib/libasyncProfiler.so"
tar -C "$TMP/ap" --owner=0 --group=0 --mtime=@0 -cf - "$AP_DIR" | gzip -n >"$TMP/www/ap.tar.gz"
AP_SHA=$(sha256sum "$TMP/www/ap.tar.gz" | cut -d' ' -f1)

"$PYTHON" -u -m http.server --bind 127.0.0.1 --directory "$TMP/www" 0 \
	</dev/null >"$TMP/http.log" 2>&1 8>&- &
HTTP_PID=$!
echo "$HTTP_PID" >>"$LIB_STATE/pids"
wait_for "grep -q ' port [0-9]' '$TMP/http.log'" 10 || fail "http.server did not start: $(cat "$TMP/http.log")"
AP_URL=http://127.0.0.1:$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$TMP/http.log" | head -1)/ap.tar.gz

build "$IMAGE-ap" "$TMP/build-ap.log" --build-arg "ASYNC_PROFILER_URL=$AP_URL" \
	--build-arg "ASYNC_PROFILER_SHA256=$AP_SHA" ||
	{ no_pull "$TMP/build-ap.log"; fail "docker build with async-profiler failed: $(tail -25 "$TMP/build-ap.log")"; }
no_pull "$TMP/build-ap.log"
grep -q '"GET /ap.tar.gz HTTP/1.[01]" 200' "$TMP/http.log" ||
	fail "the build did not download $AP_URL: $(cat "$TMP/http.log")"
for step in '] RUN make' '] RUN apt-get update' '] COPY --from=build'; do
	step_cached "$TMP/build-ap.log" "$step" ||
		fail "step '$step' was built again for async-profiler (only the last layers should be)"
done
got=$(D run --rm --network none --entrypoint cat "$IMAGE-ap" "$AP_IN_IMAGE" 2>&1) ||
	fail "no $AP_IN_IMAGE in $IMAGE-ap: $got"
[ "$got" = "$(cat "$TMP/ap/$AP_DIR/lib/libasyncProfiler.so")" ] ||
	fail "$AP_IN_IMAGE in the image is not the served file: $got"
log "with ASYNC_PROFILER_URL and its sha256: $AP_IN_IMAGE is the served file"
lap "async-profiler build"

BAD_SHA=$(printf 'not the tarball' | sha256sum | cut -d' ' -f1)
D image rm -f "$IMAGE-badsha" >/dev/null 2>&1
if build "$IMAGE-badsha" "$TMP/build-bad.log" --build-arg "ASYNC_PROFILER_URL=$AP_URL" \
	--build-arg "ASYNC_PROFILER_SHA256=$BAD_SHA"; then
	fail "the build with a wrong ASYNC_PROFILER_SHA256 succeeded"
fi
grep -q 'computed checksum did NOT match' "$TMP/build-bad.log" ||
	fail "the build with a wrong sha256 failed, but not on the checksum: $(tail -15 "$TMP/build-bad.log")"
D image inspect "$IMAGE-badsha" >/dev/null 2>&1 && fail "the failed build tagged $IMAGE-badsha"
no_pull "$TMP/build-bad.log"
log "with a wrong sha256: the build fails on the checksum"
kill "$HTTP_PID" && wait "$HTTP_PID" 2>/dev/null
lap "wrong sha256 build"

# Old images whose tag moved on: their layers stay in the build cache while it is used.
D image prune -f >/dev/null 2>&1
TIMINGS="${TIMINGS#, }, total $(secs $(($(date +%s%N) - T_START)))"
log "timings: $TIMINGS"

# The DaemonSet image: Debian 12 with the binary at /opt/slideops/profiler/slideops-profiler.
#
#   DOCKER_BUILDKIT=1 docker build -t slideops/profiler:0.1.0 .
#
# Build arguments (docs/daemon.md, "Building the image"):
#   BASE                   the Debian 12 image to start from (default debian:12-slim)
#   ASYNC_PROFILER_URL     an async-profiler linux tarball (for the JVM memory questions);
#   ASYNC_PROFILER_SHA256  its sha256, checked before it is unpacked into
#                          /opt/slideops/async-profiler. Without a URL the image has no
#                          async-profiler and builds as well.
# No `# syntax=` line: the Dockerfile frontend built into the daemon is used, so nothing is
# pulled from a registry but BASE.
ARG BASE=debian:12-slim

# The build dependencies, shared by the compile and the async-profiler download.
FROM ${BASE} AS deps
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	make gcc libc6-dev clang bpftool libbpf-dev libelf-dev libdw-dev libyaml-dev \
	libcurl4-openssl-dev libjansson-dev libwebsockets-dev zlib1g-dev libmicrohttpd-dev pkg-config \
	ca-certificates curl \
	&& rm -rf /var/lib/apt/lists/*

# Only the binary (`make install` builds nothing else); .dockerignore sends only its sources.
FROM deps AS build
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" install DESTDIR=/out

# async-profiler, when asked for: downloaded, checked against its sha256, unpacked (its one
# top-level directory stripped) into /out/async-profiler. /out stays empty without a URL.
FROM deps AS async-profiler
ARG ASYNC_PROFILER_URL=""
ARG ASYNC_PROFILER_SHA256=""
RUN set -e; mkdir -p /out; \
	if [ -n "$ASYNC_PROFILER_URL" ]; then \
		if [ -z "$ASYNC_PROFILER_SHA256" ]; then \
			echo "ASYNC_PROFILER_URL needs ASYNC_PROFILER_SHA256" >&2; exit 1; \
		fi; \
		curl -fsSL "$ASYNC_PROFILER_URL" -o /tmp/ap.tgz; \
		echo "$ASYNC_PROFILER_SHA256  /tmp/ap.tgz" | sha256sum -c -; \
		mkdir /out/async-profiler; \
		tar -xzf /tmp/ap.tgz -C /out/async-profiler --strip-components=1 --no-same-owner; \
		test -f /out/async-profiler/lib/libasyncProfiler.so || \
			{ echo "no lib/libasyncProfiler.so in $ASYNC_PROFILER_URL" >&2; exit 1; }; \
		rm /tmp/ap.tgz; \
	fi

FROM ${BASE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	libelf1 libdw1 libyaml-0-2 libcurl4 libjansson4 libwebsockets17 zlib1g libmicrohttpd12 libstdc++6 \
	ca-certificates \
	&& rm -rf /var/lib/apt/lists/*
COPY --from=build /out/opt/slideops /opt/slideops
# Last, so a new async-profiler rebuilds only this layer.
COPY --from=async-profiler /out/ /opt/slideops/
# The DaemonSet's command (manifests/daemonset.yaml) is this entrypoint and command.
ENTRYPOINT ["/opt/slideops/profiler/slideops-profiler"]
CMD ["daemon", "--config", "/etc/slideops/profiler.yaml"]

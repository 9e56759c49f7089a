# The DaemonSet image: the binary at /opt/slideops/profiler/slideops-profiler on Debian 12.
# Build: docker build -t slideops/profiler:0.1.0 .
# async-profiler (for JVM memory questions) comes from a build argument, verified by sha256;
# the image builds without it.
ARG BASE=debian:12-slim

FROM ${BASE} AS build
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	make gcc clang llvm bpftool libbpf-dev libelf-dev libdw-dev libyaml-dev libcurl4-openssl-dev \
	libjansson-dev libcmocka-dev zlib1g-dev libmicrohttpd-dev pkg-config ca-certificates \
	&& rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make all && make install DESTDIR=/out

FROM ${BASE}
ARG ASYNC_PROFILER_URL=""
ARG ASYNC_PROFILER_SHA256=""
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	libelf1 libdw1 libyaml-0-2 libcurl4 libjansson4 zlib1g libmicrohttpd12 libstdc++6 ca-certificates curl \
	&& rm -rf /var/lib/apt/lists/*
COPY --from=build /out/opt/slideops /opt/slideops
RUN if [ -n "$ASYNC_PROFILER_URL" ]; then \
		curl -fsSL "$ASYNC_PROFILER_URL" -o /tmp/ap.tgz && \
		echo "$ASYNC_PROFILER_SHA256  /tmp/ap.tgz" | sha256sum -c - && \
		mkdir -p /opt/slideops/async-profiler && \
		tar -xzf /tmp/ap.tgz -C /opt/slideops/async-profiler --strip-components=1 && \
		rm /tmp/ap.tgz; \
	fi
ENTRYPOINT ["/opt/slideops/profiler/slideops-profiler"]
CMD ["daemon", "--config", "/etc/slideops/profiler.yaml"]

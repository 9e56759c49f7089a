# SPDX-License-Identifier: Apache-2.0
#
# slideops-profiler: one Makefile for the BPF objects, skeletons, the binary, the tests,
# the fuzz targets and the benchmarks. All build output goes to $(OUTPUT).
#
#   make run      install missing packages, build, profile this server for 10 s
#   make test     install missing packages, build, run every test
#   make test SANITIZE=1   the same under ASan/UBSan (output in .output-san/)
#   make fuzz FUZZ_SECONDS=60   build and run every libFuzzer target
#   make bench    side-by-side overhead measurement (see docs/benchmarks.md)

OUTPUT ?= .output
ifeq ($(SANITIZE),1)
OUTPUT := .output-san
endif
ifdef O
OUTPUT := $(O)
endif

CLANG ?= clang
CC ?= cc
BPFTOOL ?= bpftool
ARCH ?= $(shell uname -m | sed 's/x86_64/x86/' | sed 's/aarch64/arm64/')
VMLINUX_H ?= bpf/vmlinux.h
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

BIN := $(OUTPUT)/slideops-profiler

# Parallel jobs for the builds of build, test and fuzz (the tests themselves run one at a time:
# integration tests profile the whole machine).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# Debian packages the build and the tests need. `make deps` installs the missing ones.
DEB_PKGS := clang llvm bpftool libbpf-dev libelf-dev libdw-dev libyaml-dev \
	libcurl4-openssl-dev libjansson-dev libcmocka-dev zlib1g-dev \
	libmicrohttpd-dev pkg-config libclang-rt-14-dev golang-go util-linux iproute2 \
	busybox-static python3 procps docker.io debootstrap clang-format libwebsockets-dev chromium \
	golang-1.23-go g++ rustc
# golang-1.23-go comes from bookworm-backports (Debian's own Go, 1.19, cannot write a GNU build
# id when it links internally: -ldflags=-B=gobuildid needs Go 1.21+; tests/integration/
# test_symbols.sh). `make deps` adds that suite to apt's sources when no source names it.
BACKPORTS_SOURCES := /etc/apt/sources.list.d/slideops-backports.sources

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# The folders of sources, bottom layer first (docs/architecture.md).
SRC_DIRS := base cgroups symbols profile runtimes runtimes/go runtimes/python runtimes/jvm runtimes/node \
	daemon daemon/collectors daemon/capture daemon/agent
LIB_SRCS := $(foreach d,$(SRC_DIRS),$(filter-out daemon/main.c,$(wildcard $(d)/*.c)))
# The page's files are embedded in the binary by an assembler file (daemon/agent/page_assets.S).
PAGE_FILES := $(wildcard daemon/agent/page/*)
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/obj/%.o,$(LIB_SRCS)) $(OUTPUT)/obj/daemon/agent/page_assets.o
MAIN_OBJ := $(OUTPUT)/obj/daemon/main.o

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))

PKGS := libelf libdw zlib jansson yaml-0.1 libcurl libmicrohttpd libwebsockets
LIBBPF_A ?= $(shell for d in /usr/lib/$$(gcc -print-multiarch) /usr/lib64 /usr/lib; do \
	[ -f $$d/libbpf.a ] && echo $$d/libbpf.a && break; done)

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-I. -I$(OUTPUT) -fno-omit-frame-pointer
# C++ names are demangled with libstdc++'s __cxa_demangle (a weak reference: keep the library even
# under --as-needed).
LDLIBS += $(LIBBPF_A) $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm \
	-Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined
ifeq ($(SANITIZE),1)
CFLAGS += $(SAN_FLAGS)
LDFLAGS += $(SAN_FLAGS)
endif

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -I. -Ibpf

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(OUTPUT)/workloads/%,$(WORKLOAD_SRCS))
FUZZ_SECONDS ?= 30

# A test or fuzz target of module M (tests/unit/test_M.c) links the objects of the folder that
# holds M.c and of the layers below it (docs/architecture.md): "each test against only its
# module" and what it may use. daemon/ is the top of the graph (it wires every other module), so
# its tests link everything.
mod_dir = $(patsubst %/,%,$(dir $(firstword $(wildcard $(addsuffix /$(1).c,$(SRC_DIRS))))))
LAYER_base := base
LAYER_cgroups := cgroups base
LAYER_symbols := symbols base
LAYER_profile := profile base
LAYER_runtimes := runtimes runtimes/go runtimes/python runtimes/jvm runtimes/node cgroups symbols profile base
LAYER_runtimes/go := $(LAYER_runtimes)
LAYER_runtimes/python := $(LAYER_runtimes)
LAYER_runtimes/jvm := $(LAYER_runtimes)
LAYER_runtimes/node := $(LAYER_runtimes)
dir_objs = $(patsubst %.c,$(OUTPUT)/obj/%.o,$(wildcard $(addsuffix /*.c,$(1))))
mod_objs = $(if $(filter daemon%,$(call mod_dir,$(1))),$(LIB_OBJS),\
	$(sort $(call dir_objs,$(LAYER_$(call mod_dir,$(1))))))

.DELETE_ON_ERROR:
.SECONDARY:
.SECONDEXPANSION:
.PHONY: all deps build run test check-layers unit integration fuzz bench clean vmlinux install format \
	format-check

# bench/unwind_bench.c and bench/naming_bench.c link the profiler's objects: built with
# everything, so they cannot rot.
UNWIND_BENCH := $(OUTPUT)/bench/unwind_bench
NAMING_BENCH := $(OUTPUT)/bench/naming_bench

all: $(BIN) $(WORKLOAD_BINS) $(UNWIND_BENCH) $(NAMING_BENCH)

deps:
	$(Q)missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d || \
			printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\n%s\n%s\n' \
			bookworm-backports 'Components: main' \
			'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' >$(BACKPORTS_SOURCES); \
		echo "  DEPS     installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) all

# The main job: a short whole-server CPU profile with its answer and flame graph.
RUN_OUT ?= out/server-cpu
run: build
	$(Q)$(BIN) capture --server --question cpu --duration 10 --out $(RUN_OUT)

test: build
	$(Q)$(MAKE) --no-print-directory check-layers format-check
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(UNIT_BINS)
	$(Q)$(MAKE) --no-print-directory unit integration

# The layer rule of docs/architecture.md: an include against it fails with the offending line.
check-layers:
	$(Q)tests/lint/check_layers.sh
	$(Q)tests/lint/check_opens.sh

unit: $(UNIT_BINS)
	$(Q)fail=0; for t in $(UNIT_BINS); do \
		echo "  UNIT     $$t"; $$t || fail=1; \
	done; exit $$fail

# Under ASan test_image is left out: the image it builds runs `make install` inside Docker, the
# same plain build in both passes, so the sanitizers would watch nothing of ours.
INTEGRATION_TESTS := $(if $(filter 1,$(SANITIZE)),$(filter-out test_image,$(basename $(notdir \
	$(wildcard tests/integration/test_*.sh)))))
integration: $(BIN) $(WORKLOAD_BINS)
	$(Q)OUTPUT=$(abspath $(OUTPUT)) BIN=$(abspath $(BIN)) tests/integration/run.sh $(INTEGRATION_TESTS)

# -max_len of each target: FUZZ_MAXLEN_<name> (FUZZ_MAXLEN_pprof=...), else FUZZ_MAXLEN; large
# enough to reach the size-driven paths (libFuzzer's own default follows the corpus).
FUZZ_MAXLEN ?= 1048576
fuzz:
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) $(FUZZ_BINS)
	$(Q)$(foreach n,$(FUZZ_BINS:$(OUTPUT)/fuzz/fuzz_%=%),ml_$(n)=$(or $(FUZZ_MAXLEN_$(n)),$(FUZZ_MAXLEN));) \
	for f in $(FUZZ_BINS); do \
		n=$$(basename $$f); mkdir -p $(OUTPUT)/corpus/$$n; eval ml=\$$ml_$${n#fuzz_}; \
		echo "  FUZZ     $$n ($(FUZZ_SECONDS) s, -max_len=$$ml)"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=$$ml -print_final_stats=1 $(OUTPUT)/corpus/$$n \
			$$( [ -d tests/fuzz/corpus/$$n ] && echo tests/fuzz/corpus/$$n ) 2>&1 | tail -3 || exit 1; \
	done

bench: build
	$(Q)BIN=$(abspath $(BIN)) OUTPUT=$(abspath $(OUTPUT)) bench/run.sh
	$(Q)BIN=$(abspath $(BIN)) OUTPUT=$(abspath $(OUTPUT)) bench/wall.sh

vmlinux:
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $(VMLINUX_H)

$(UNWIND_BENCH) $(NAMING_BENCH): $(OUTPUT)/bench/%: bench/%.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

install: $(BIN)
	install -D -m 0755 $(BIN) $(DESTDIR)/opt/slideops/profiler/slideops-profiler

# The C sources clang-format owns (.clang-format); bpf/vmlinux.h is generated; tests/ keeps its
# tables laid out by hand, a row a line (clang-format 14 puts each field of a broken row on a
# line of its own, and its AlignArrayOfStructures crashes on this tree).
FORMAT_SRCS = $$(git ls-files '*.c' '*.h' | grep -v -e vmlinux.h -e '^tests/')

format:
	clang-format -i $(FORMAT_SRCS)

# Reports the files `make format` would change (one clang-format run over all of them), changing
# nothing; fails if any.
format-check:
	$(Q)out=$$(clang-format --dry-run $(FORMAT_SRCS) 2>&1); \
	files=$$(printf '%s\n' "$$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: .*/\1/p' | sort -u); \
	for f in $$files; do echo "  FORMAT   $$f: $$(printf '%s\n' "$$out" | grep -c "^$$f:") places"; done; \
	n=$$(printf '%s' "$$files" | grep -c .); echo "  FORMAT   $$n files would change"; [ $$n -eq 0 ]

clean:
	rm -rf .output .output-san out

$(BIN): $(MAIN_OBJ) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H) | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $(@:.o=.d) -MT $@ -c $< -o $(@:.o=.tmp.o)
	$(Q)$(BPFTOOL) gen object $@ $(@:.o=.tmp.o)

$(OUTPUT)/%.skel.h: $(OUTPUT)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# Each BPF program bpf/<p>.bpf.c has exactly one owner, daemon/collectors/<p>.c, the only
# includer of <p>.skel.h (STYLE 6): it waits for its skeleton (libbpf-bootstrap's rule).
COLLECTOR_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/obj/daemon/collectors/%.o,$(BPF_SRCS))
$(COLLECTOR_OBJS): $(OUTPUT)/obj/daemon/collectors/%.o: $(OUTPUT)/%.skel.h

$(OUTPUT)/obj/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUTPUT)/obj/%.o: %.S $(PAGE_FILES)
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -c $< -o $@

$(OUTPUT)/tests/test_%: tests/unit/test_%.c $$(call mod_objs,$$*)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP $(LDFLAGS) $^ $(LDLIBS) -lcmocka -o $@

# Fuzz targets are compiled with clang and libFuzzer; their module is compiled alongside.
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -I. -I$(OUTPUT) -fsanitize=fuzzer,address,undefined
# A fuzz target compiles its module's sources with clang and libFuzzer. daemon/ wires every
# other module, so its fuzz targets compile only the pure parser they fuzz (listed here).
FUZZ_SRCS_api_parse := daemon/agent/api_parse.c daemon/capture/question.c
FUZZ_SRCS_web_parse := daemon/agent/web_parse.c
FUZZ_SRCS_config := daemon/config.c base/text.c cgroups/rules.c cgroups/owner.c base/proc.c
FUZZ_SRCS_kube := daemon/agent/kube_parse.c
FUZZ_SRCS_request := daemon/agent/request.c daemon/capture/question.c
FUZZ_SRCS_pycode := runtimes/python/py_code.c runtimes/python/py_offsets.c runtimes/python/py_linetable.c
FUZZ_SRCS_jvm_vmstructs := runtimes/jvm/jvm_vmstructs.c symbols/elf_file.c symbols/procmaps.c
FUZZ_SRCS_jvm_attach := runtimes/jvm/jvm_attach.c $(FUZZ_SRCS_jvm_vmstructs)
fuzz_srcs = $(if $(FUZZ_SRCS_$(1)),$(FUZZ_SRCS_$(1)) $(wildcard base/*.c),\
	$(patsubst $(OUTPUT)/obj/%.o,%.c,$(call mod_objs,$(1))))
# Each source is compiled once for all the targets that link it (fuzzer-no-link: the targets'
# own main comes from libFuzzer at the link).
FUZZ_OBJ_CFLAGS := $(filter-out -fsanitize=%,$(FUZZ_CFLAGS)) -fsanitize=fuzzer-no-link,address,undefined
fuzz_objs = $(patsubst %.c,$(OUTPUT)/fuzzobj/%.o,$(call fuzz_srcs,$(1)))
$(OUTPUT)/fuzzobj/%.o: %.c
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_OBJ_CFLAGS) -MMD -MP -c $< -o $@
$(OUTPUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $$(call fuzz_objs,$$*)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT)/workloads/%: tests/workloads/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE $(WORKLOAD_CFLAGS_$*) $< -o $@ -lpthread \
		$(WORKLOAD_LDFLAGS_$*)

$(OUTPUT)/bpf:
	$(Q)mkdir -p $@

-include $(shell find $(OUTPUT) -name '*.d' 2>/dev/null)

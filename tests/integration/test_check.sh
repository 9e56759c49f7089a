#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# `check` is the Performance tab on the command line (SPEC 5): ready or not and why, the
# target, its runtimes, kernel, processor, every question with available/unavailable and the
# reason, and the languages table; --json prints the same as one document. Checked:
#   - check (root, whole server): text and JSON agree, every field has its type, exit 0
#   - check --unit billing-worker.service with two spin processes: "native × 2 processes",
#     both pids with runtime native; the questions a Service may ask are no longer "not offered
#     for a whole server"
#   - check without the privileges (setpriv: nobody, no capabilities; capsh: root without
#     CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN): "Cannot profile right now:" naming what is missing,
#     every question unavailable, exit 1
#   - check --unit nosuch.service: exit 1, one line listing the units seen
. "$(dirname "$0")/lib.sh"

need_root
need_cmd setpriv timeout
need_bin

UNIT=billing-worker.service
SPIN=$OUTPUT/workloads/spin
if [ ! -x "$SPIN" ]; then
	SPIN=$TMP/spin
	cc -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE "$LIB_DIR/../workloads/spin.c" -o "$SPIN" \
		-lpthread || fail "cannot build workload spin"
fi
unit_cg=$(cg_make_unit "$UNIT") || exit 1
spin1=$(cg_run "$unit_cg" "$SPIN") || exit 1
spin2=$(cg_run "$unit_cg" "$SPIN") || exit 1
log "spin pids $spin1 $spin2 in $unit_cg"

failures=0
bad() { log "$*"; failures=$((failures + 1)); }

# run_check NAME EXPECTED_RC CMD...: runs CMD (a check) into $TMP/NAME.{stdout,stderr}.
run_check()
{
	local name=$1 want=$2 rc
	shift 2
	timeout -k 5 30 "$@" >"$TMP/$name.stdout" 2>"$TMP/$name.stderr"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		sed 's/^/    stdout: /' "$TMP/$name.stdout" >&2
		sed 's/^/    stderr: /' "$TMP/$name.stderr" >&2
		bad "$name: '$*' exited $rc, expected $want"
		return 1
	fi
	return 0
}

# verify NAME MODE [PIDS]: checks $TMP/NAME-text.stdout against $TMP/NAME-json.stdout.
# MODE: server (root, whole server), unit (root, --unit with processes PIDS), unready-all
# (no capabilities at all), unready-some (root without CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN).
verify()
{
	"$PYTHON" - "$TMP/$1-text.stdout" "$TMP/$1-json.stdout" "$2" "${3:-}" "$UNIT" \
		"$(uname -r)" "$(getconf _NPROCESSORS_ONLN)" "$(uname -m)" <<'EOF'
import json, re, sys
text_path, json_path, mode, pids, unit, release, ncpu, machine = sys.argv[1:]
pids = sorted(int(p) for p in pids.split())
errors = []
def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond
def is_str(v): return isinstance(v, str)
def is_int(v): return isinstance(v, int) and not isinstance(v, bool)
def is_bool(v): return isinstance(v, bool)
def typed(obj, where, fields):
    if not check(isinstance(obj, dict), "%s is not an object: %r" % (where, obj)):
        return False
    ok = True
    for k, pred in fields.items():
        if not check(k in obj, "%s has no field %r" % (where, k)):
            ok = False
        elif not check(pred(obj[k]), "%s.%s has the wrong type or value: %r" % (where, k, obj[k])):
            ok = False
    return ok

text = open(text_path).read()
raw = open(json_path).read()
try:
    d = json.loads(raw)		# one document, nothing else
except ValueError as e:
    print("  --json is not one JSON document: %s: %r" % (e, raw[:200]))
    sys.exit(1)

ready = mode in ("server", "unit")
typed(d, "check", {
    "ready": lambda v: v is ready,
    "message": is_str, "reasons": lambda v: isinstance(v, list) and all(is_str(r) for r in v),
    "target": lambda v: isinstance(v, dict), "target_description": is_str,
    "processes": lambda v: isinstance(v, list), "runtimes": lambda v: isinstance(v, list),
    "kernel": is_str, "processor": is_str,
    "questions": lambda v: isinstance(v, list), "languages": lambda v: isinstance(v, list) and v,
})
if errors:
    print("\n".join("  " + e for e in errors))
    sys.exit(1)

# --- ready, message, reasons ---------------------------------------------------------------
CAPS = ["CAP_BPF", "CAP_PERFMON", "CAP_SYS_PTRACE", "CAP_CHECKPOINT_RESTORE"]
if ready:
    check(d["message"] == "Ready to profile", "message %r" % d["message"])
    check(d["reasons"] == [], "reasons while ready: %r" % d["reasons"])
else:
    check(d["message"].startswith("Cannot profile right now: "), "message %r" % d["message"])
    check(d["reasons"], "not ready but no reasons")
    check(d["message"] == "Cannot profile right now: " + "; ".join(d["reasons"]),
          "message %r is not the reasons joined: %r" % (d["message"], d["reasons"]))
    m = re.search(r"\(missing: ([A-Z_, ]+)\)", d["message"])
    missing = m.group(1).split(", ") if m else []
    for cap in CAPS:
        check(cap in d["message"], "message does not name %s: %r" % (cap, d["message"]))
    # CAP_SYS_ADMIN stands in for CAP_BPF, CAP_PERFMON and CAP_CHECKPOINT_RESTORE.
    want = CAPS if mode == "unready-all" else ["CAP_BPF", "CAP_PERFMON"]
    check(missing == want, "missing capabilities %r, expected %r" % (missing, want))

# --- target, processes, runtimes -----------------------------------------------------------
if mode == "unit":
    want_target = {"kind": "unit", "description": "Unit " + unit}
else:
    want_target = {"kind": "server", "description": "this server"}
check(d["target"] == want_target, "target %r, expected %r" % (d["target"], want_target))
check(d["target_description"] == want_target["description"],
      "target_description %r" % d["target_description"])
for i, p in enumerate(d["processes"]):
    typed(p, "processes[%d]" % i, {"pid": is_int, "runtime": is_str, "version": is_str,
                                  "display": is_str})
for i, r in enumerate(d["runtimes"]):
    if typed(r, "runtimes[%d]" % i, {"text": is_str, "display": is_str,
                                     "processes": lambda v: is_int(v) and v >= 1}):
        want = r["display"] if r["processes"] == 1 else \
            "%s \u00d7 %d processes" % (r["display"], r["processes"])
        check(r["text"] == want, "runtimes[%d].text %r, expected %r" % (i, r["text"], want))
        n = sum(1 for p in d["processes"] if p.get("display") == r["display"])
        check(n == r["processes"], "runtimes[%d] counts %d processes, processes[] has %d"
              % (i, r["processes"], n))
# Kernel threads have no runtime: never listed, whoever runs check (kthreadd is pid 2).
kthreads = [p.get("pid") for p in d["processes"] if p.get("pid") == 2]
check(not kthreads, "processes lists kernel threads (kthreadd, pid 2) as %r"
      % [p for p in d["processes"] if p.get("pid") == 2])
check(sum(r.get("processes", 0) for r in d["runtimes"]) == len(d["processes"]),
      "the runtimes do not add up to the processes")
if mode == "unit":
    got = sorted(p.get("pid") for p in d["processes"])
    check(got == pids, "processes %r, expected the unit's %r" % (got, pids))
    check(all(p.get("runtime") == "native" and p.get("display") == "native"
              for p in d["processes"]), "the unit's spin processes are not native: %r"
          % d["processes"])
    check(d["runtimes"] == [{"text": "native \u00d7 2 processes", "display": "native",
                             "processes": 2}], "runtimes %r" % d["runtimes"])
if mode == "server":
    check(any(r.get("display") == "native" for r in d["runtimes"]),
          "no native runtime on the whole server: %r" % d["runtimes"])
    check(set(pids) <= {p.get("pid") for p in d["processes"]},
          "the spin processes %r are not among the server's processes" % pids)

# --- kernel, processor ---------------------------------------------------------------------
want_kernel = "Linux " + re.split(r"[-+]", release)[0]
check(d["kernel"] == want_kernel, "kernel %r, expected %r" % (d["kernel"], want_kernel))
check(re.match(r"^Linux \d+\.\d+(\.\d+)?$", d["kernel"]), "kernel %r is not Linux X.Y.Z" % d["kernel"])
want_cpus = "%s CPU%s" % (ncpu, "" if ncpu == "1" else "s")
check(re.match(r"^.+ \(%s, %s\)$" % (re.escape(machine), want_cpus), d["processor"]),
      "processor %r does not end in (%s, %s)" % (d["processor"], machine, want_cpus))

# --- questions -----------------------------------------------------------------------------
IDS = ["cpu", "wall", "threads", "locks", "memory-growth", "memory-held", "memory-alloc"]
TEXTS = ["What is using the CPU", "Where time goes, including waiting",
         "What every thread is doing right now", "What is waiting on locks",
         "Where memory grows", "What is holding memory", "Where memory is allocated"]
NOT_YET = "not available in this build yet"
NO_GO = ("memory in use is read from a runtime's own profiler (Go's heap profile), and the "
         "target runs no Go program; use Where memory grows (memory-growth) instead")
NOT_SERVER = ("not offered for a whole server: it is read from inside one runtime at a time; "
              "capture it from the Service instead")
qs = d["questions"]
check([q.get("id") for q in qs] == IDS, "question ids %r" % [q.get("id") for q in qs])
check([q.get("text") for q in qs] == TEXTS, "question texts %r" % [q.get("text") for q in qs])
for i, q in enumerate(qs):
    typed(q, "questions[%d]" % i, {"available": is_bool})
    if q.get("available"):
        # docs: "reason" is a string, absent when the question is available (not null)
        check("reason" not in q, "questions[%d] (%s) is available but has a field reason: %r"
              % (i, q.get("id"), q.get("reason")))
    else:
        check(is_str(q.get("reason")) and q.get("reason"),
              "questions[%d] (%s) is unavailable without a reason" % (i, q.get("id")))
# Which questions this build implements moves as their issues land: cpu always is; the others
# are either available or "not available in this build yet", never anything else.
for q in qs:
    qid = q.get("id")
    if not ready:
        wants = [(False, "the server is not ready to profile")]
    elif qid == "cpu":
        wants = [(True, None)]
    elif qid in ("memory-held", "memory-alloc") and mode == "server":
        wants = [(False, NOT_SERVER)]
    elif qid in ("memory-held", "memory-alloc"):
        # the unit runs a native program: Go's own profiler is what these read
        wants = [(False, NO_GO)]
    else:
        wants = [(True, None), (False, NOT_YET)]
    got = (q.get("available"), q.get("reason"))
    check(got in wants, "question %s: %r, expected %s" % (qid, got, " or ".join(map(repr, wants))))

# --- languages -----------------------------------------------------------------------------
for i, l in enumerate(d["languages"]):
    typed(l, "languages[%d]" % i, {"language": lambda v: is_str(v) and v, "versions": is_str,
                                  "how": is_str, "test": is_str})
check(any("Native" in l.get("language", "") for l in d["languages"]),
      "no native row in languages: %r" % [l.get("language") for l in d["languages"]])

# --- the text output says the same ---------------------------------------------------------
lines = text.split("\n")
def line_index(line):
    try:
        return lines.index(line)
    except ValueError:
        check(False, "the text has no line %r" % line)
        return -1
check(lines[0] == d["message"], "first line %r, expected the message %r" % (lines[0], d["message"]))
line_index("Target: " + d["target_description"])
rt = ", ".join(r["text"] for r in d["runtimes"]) if d["runtimes"] else "none found"
if mode == "unit":
    line_index("Runtimes: " + rt)
else:
    # Text and JSON come from two runs: on a whole server, processes come and go in between.
    check([l for l in lines if re.match(r"^Runtimes: (.*, )?native( \u00d7 \d+ processes)?(, |$)", l)],
          "the text has no line 'Runtimes: ... native ...'")
line_index("Kernel: " + d["kernel"])
line_index("Processor: " + d["processor"])
qi = line_index("What do you want to know?")
if qi >= 0:
    for k, q in enumerate(qs):
        ln = lines[qi + 1 + k] if qi + 1 + k < len(lines) else ""
        f = ln.split()
        check(f[:1] == [q["id"]], "question line %d is %r, expected %s" % (k, ln, q["id"]))
        check(q["text"] in ln, "question line %r lacks %r" % (ln, q["text"]))
        status = "available" if q["available"] else "unavailable: " + q["reason"]
        check(ln.endswith(" " + status), "question line %r does not end in %r" % (ln, status))
li = line_index("Which languages can be profiled?")
if li >= 0:
    body = "\n".join(lines[li + 1:])
    for l in d["languages"]:
        check(l["language"] in body and l["versions"] in body,
              "the languages table lacks %r (%r)" % (l["language"], l["versions"]))
for e in errors:
    print("  " + e)
if not errors:
    print("  %s: %s; runtimes: %s" % (mode, d["message"], rt))
sys.exit(1 if errors else 0)
EOF
}

# --- root: the whole server, then the unit -------------------------------------------------
if run_check server-text 0 "$BIN" check && run_check server-json 0 "$BIN" check --json; then
	verify server server "$spin1 $spin2" || bad "server: check output is wrong (above)"
fi
if run_check unit-text 0 "$BIN" check --unit "$UNIT" &&
   run_check unit-json 0 "$BIN" check --unit "$UNIT" --json; then
	verify unit unit "$spin1 $spin2" || bad "unit: check output is wrong (above)"
	grep -qx 'Runtimes: native × 2 processes' "$TMP/unit-text.stdout" ||
		bad "unit: no line 'Runtimes: native × 2 processes': $(grep Runtimes "$TMP/unit-text.stdout")"
fi

# --- without the privileges ----------------------------------------------------------------
chmod 755 "$LIB_STATE" "$TMP"
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all)
bin=$BIN
if ! "${nobody[@]}" test -x "$BIN"; then	# e.g. a build tree under a private home
	cp "$BIN" "$TMP/slideops-profiler"
	chmod 755 "$TMP/slideops-profiler"
	bin=$TMP/slideops-profiler
fi
if run_check nobody-text 1 "${nobody[@]}" "$bin" check &&
   run_check nobody-json 1 "${nobody[@]}" "$bin" check --json; then
	verify nobody unready-all || bad "nobody: check output is wrong (above)"
	[ ! -s "$TMP/nobody-text.stderr" ] || bad "nobody: check printed on stderr: $(head -2 "$TMP/nobody-text.stderr")"
fi
if command -v capsh >/dev/null 2>&1; then
	# root, but without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (which stands in for both)
	somecaps=(capsh '--drop=cap_bpf,cap_perfmon,cap_sys_admin' --)
	if run_check somecaps-text 1 "${somecaps[@]}" -c "exec '$bin' check" &&
	   run_check somecaps-json 1 "${somecaps[@]}" -c "exec '$bin' check --json"; then
		verify somecaps unready-some || bad "somecaps: check output is wrong (above)"
	fi
else
	log "capsh not installed: the partly privileged case is not run"
fi

# --- an unknown target ---------------------------------------------------------------------
if run_check unknown 1 "$BIN" check --unit nosuch.service; then
	[ ! -s "$TMP/unknown.stdout" ] || bad "unknown: check printed on stdout: $(head -2 "$TMP/unknown.stdout")"
	[ "$(wc -l <"$TMP/unknown.stderr")" -eq 1 ] || bad "unknown: stderr is not one line"
	grep -qE '^slideops-profiler: no process of Unit nosuch\.service is running; units seen on this server: (.*, )?billing-worker\.service(, .*)?$' \
		"$TMP/unknown.stderr" || bad "unknown: stderr: $(cat "$TMP/unknown.stderr")"
fi
if run_check unknown-json 1 "$BIN" check --unit nosuch.service --json; then
	[ ! -s "$TMP/unknown-json.stdout" ] || bad "unknown-json: check --json printed on stdout"
fi

[ "$failures" -eq 0 ] || fail "$failures case(s) failed"
log "ok"

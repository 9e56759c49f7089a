#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Helpers of bench/run.sh (`make bench`).

  report.py watch ROOT_PID OUT.json
      Every 0.5 s, read the BPF programs held open by ROOT_PID and its descendants
      (/proc/PID/fd -> anon_inode:bpf-prog, /proc/PID/fdinfo: prog_id, run_time_ns, run_cnt;
      kernel.bpf_stats_enabled must be 1), keep the last value per program id, and write them
      to OUT.json when ROOT_PID is gone or on SIGTERM.

  report.py report RUNS_DIR DURATION OUT.md
      Read every run under RUNS_DIR (NAME.I/), take the median per profiler and print, and
      write, the Markdown tables.

  report.py python RUNS_DIR DURATION
      The Python row of bench/python.sh (runs WORKLOAD-PROFILER.I/): print its Markdown table.

  report.py jvm RUNS_DIR DURATION
      The JVM row of bench/jvm.sh (runs WORKLOAD-PROFILER.I/): print its Markdown table.
"""
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time


# ---------------------------------------------------------------------------------------------
# watch


def _ppids():
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
            out[int(d)] = int(s[s.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return out


def _descendants(root):
    ppid = _ppids()
    kids = {}
    for p, pp in ppid.items():
        kids.setdefault(pp, []).append(p)
    seen, todo = set(), [root]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(kids.get(p, []))
    return seen


def _prog_names():
    try:
        out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True,
                             timeout=5).stdout
        return {p["id"]: p.get("name", "") for p in json.loads(out or "[]")}
    except (OSError, ValueError, subprocess.SubprocessError):
        return {}


def watch(root, out_path):
    progs = {}  # id -> {name, run_time_ns, run_cnt}
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))

    def sample():
        new = []
        for pid in _descendants(root):
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if "bpf-prog" not in os.readlink(f"/proc/{pid}/fd/{fd}"):
                        continue
                    with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                        info = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
                    pid_ = int(info["prog_id"])
                except (OSError, KeyError, ValueError):
                    continue
                rec = progs.get(pid_)
                if rec is None:
                    rec = progs[pid_] = {"name": "", "run_time_ns": 0, "run_cnt": 0}
                    new.append(pid_)
                rec["run_time_ns"] = max(rec["run_time_ns"], int(info.get("run_time_ns", 0)))
                rec["run_cnt"] = max(rec["run_cnt"], int(info.get("run_cnt", 0)))
        if new:
            names = _prog_names()
            for i in new:
                progs[i]["name"] = names.get(i, "")

    while not stop[0] and os.path.exists(f"/proc/{root}"):
        sample()
        time.sleep(0.5)
    with open(out_path, "w") as f:
        json.dump({str(k): v for k, v in progs.items()}, f, indent=1)


# ---------------------------------------------------------------------------------------------
# report


def _gnu_time(path):
    """'%U %S %M %e' on the last line (GNU time may print 'Command exited ...' first)."""
    try:
        with open(path) as f:
            lines = [l for l in f.read().splitlines() if re.match(r"^[\d.]+ [\d.]+ \d+ [\d.]+$", l)]
        u, s, m, e = lines[-1].split()
        return float(u) + float(s), int(m) / 1024.0, float(e)
    except (OSError, IndexError, ValueError):
        return None


def _read_float(path):
    try:
        with open(path) as f:
            return float(f.read().strip())
    except (OSError, ValueError):
        return None


def _burners(d):
    """The figures of each workload process of run D: its burn.I line (burn.c, pyburn.py)
    'burn iters=N wall=S cpu=S rate=R' as a dict of floats."""
    out = []
    for name in sorted(os.listdir(d)):
        if name.startswith("burn."):
            with open(os.path.join(d, name)) as f:
                out.append(dict((k, float(v)) for k, v in
                                re.findall(r"(iters|wall|cpu|rate)=([\d.]+)", f.read())))
    return out


def _burn_rate(d):
    rates = [b["rate"] for b in _burners(d) if "rate" in b]
    return sum(rates) if rates else None


def _stat(d):
    """Whole-machine busy and steal CPU seconds between stat.0 and stat.1 (/proc/stat 'cpu')."""
    try:
        v = []
        for n in ("stat.0", "stat.1"):
            with open(os.path.join(d, n)) as f:
                v.append([int(x) for x in f.read().split()[1:]])
        hz = os.sysconf("SC_CLK_TCK")
        delta = [b - a for a, b in zip(*v)]
        user, nice, system, idle, iowait, irq, softirq, steal = (delta + [0] * 8)[:8]
        return (user + nice + system + irq + softirq) / hz, steal / hz
    except (OSError, ValueError):
        return None, None


def _burn_rate_cpu(d):
    """Iterations per CPU second of the workload processes together: steadier than the wall
    rate when other load takes CPU time from them, and still charged with the sampling
    interrupts (they run in the interrupted task's time)."""
    bs = [b for b in _burners(d) if "iters" in b and "cpu" in b]
    cpu = sum(b["cpu"] for b in bs)
    return sum(b["iters"] for b in bs) / cpu if cpu else None


def _burn_cpu(d):
    return sum(b.get("cpu", 0.0) for b in _burners(d))


def _py_frames(path):
    """The median number of Python frames in the samples of bench/pyburn.py's loop (from
    <module> to hot, root first in profile.collapsed), or None without such samples."""
    depths = []
    try:
        with open(path) as f:
            for line in f:
                stack, _, n = line.rstrip("\n").rpartition(" ")
                frames = stack.split(";")
                if "hot" in frames and "<module>" in frames:
                    d = frames.index("hot") - frames.index("<module>") + 1
                    depths += [d] * min(int(n), 1000)
    except (OSError, ValueError):
        return None
    return statistics.median(depths) if depths else None


def _run(d, name, duration):
    r = {"cpu": None, "bpf": 0.0, "bpf_cnt": 0, "rss": None, "ttr": None, "rate": _burn_rate(d),
         "wall": None, "samples": None, "ok": os.path.exists(os.path.join(d, "ok")),
         "burn_cpu": _burn_cpu(d), "rate_cpu": _burn_rate_cpu(d)}
    r["busy"], r["steal"] = _stat(d)
    try:
        with open(os.path.join(d, "bpf.json")) as f:
            for p in json.load(f).values():
                r["bpf"] += p["run_time_ns"] / 1e9
                r["bpf_cnt"] += p["run_cnt"]
    except (OSError, ValueError):
        pass
    t0 = _gnu_time(os.path.join(d, "time.0"))
    if t0:
        r["cpu"], r["rss"], r["wall"] = t0
    if name == "perf":
        t1 = _gnu_time(os.path.join(d, "time.1"))
        se, re_ = _read_float(os.path.join(d, "sleep_end")), _read_float(os.path.join(d, "record_end"))
        if t0 and t1:
            r["cpu"] = t0[0] + t1[0]
            r["rss"] = max(t0[1], t1[1])
            r["ttr"] = (re_ - se if se and re_ else 0.0) + t1[2]
        r["samples"] = _read_float(os.path.join(d, "samples"))
    elif name == "bpftrace":
        se, ee = _read_float(os.path.join(d, "bt_end")), _read_float(os.path.join(d, "exit_end"))
        if se and ee:
            r["ttr"] = ee - se
        r["samples"] = r["bpf_cnt"] or None
        # bpftrace's own count of samples: not needed, run_cnt of the profile program is it.
    elif name == "ours":
        try:
            with open(os.path.join(d, "out", "summary.json")) as f:
                s = json.load(f)
            r["ttr"] = s.get("time_to_result_seconds")
            r["samples"] = s.get("sample_count")
        except (OSError, ValueError):
            pass
        r["pyframes"] = _py_frames(os.path.join(d, "out", "profile.collapsed"))
    if r["busy"] is not None:
        r["other"] = r["busy"] - r["burn_cpu"] - (r["cpu"] or 0.0)
    else:
        r["other"] = None
    return r


def _median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def _fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


MED_KEYS = ("cpu", "bpf", "bpf_cnt", "rss", "ttr", "rate", "wall", "samples", "burn_cpu", "busy",
            "steal", "other", "pyframes", "rate_cpu")


def _medians(runs_dir, names, duration):
    """{run name: medians over its repeats} for the runs NAME.I/ under RUNS_DIR; a run's
    profiler is the part of NAME after the last '-' ("py10-ours" -> "ours")."""
    runs = {}
    for ent in sorted(os.listdir(runs_dir)):
        m = re.match(r"^([\w-]+)\.(\d+)$", ent)
        if m and m.group(1) in names:
            runs.setdefault(m.group(1), []).append(
                _run(os.path.join(runs_dir, ent), m.group(1).rsplit("-", 1)[-1], duration))
    med = {}
    for name, rs in runs.items():
        m = med[name] = {k: _median([r.get(k) for r in rs]) for k in MED_KEYS}
        m["n"] = len(rs)
        m["ok"] = all(r["ok"] for r in rs)
        m["total"] = m["cpu"] + (m["bpf"] or 0.0) if m["cpu"] is not None else None
    return med


def _md_table(header, rows):
    """A Markdown table: the first column left-aligned, the others right-aligned."""
    out = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _ratio(m, total):
    return (m["total"] / total) if (total and m["total"] is not None) else None


def _slowdown(m, base_rate):
    return ((1 - m["rate"] / base_rate) * 100) if (base_rate and m["rate"]) else None


def report(runs_dir, duration, out_md):
    order = ["baseline", "ours", "perf", "bpftrace"]
    med = _medians(runs_dir, order, duration)
    base_rate = med.get("baseline", {}).get("rate")
    perf_total = med.get("perf", {}).get("total")
    labels = {
        "ours": "slideops-profiler",
        "perf": "perf record -F 99 -a -g + perf script",
        "bpftrace": "bpftrace profile:hz:99 kstack,ustack,comm",
        "baseline": "none (baseline)",
    }
    names = [n for n in order if n in med]
    lines = []
    lines.append(f"Whole-server capture of {duration:g} s at 99 Hz, 2 burn processes (one per core); "
                 f"median of {max((m['n'] for m in med.values()), default=0)} run(s).")
    lines.append("")
    rows = []
    for name in names:
        m = med[name]
        if name == "baseline":
            rows.append([labels[name]] + ["-"] * 6 +
                        [f"0.0 (rate {_fmt(base_rate and base_rate / 1e6, '.1f')} M it/s)"])
            continue
        bpf = "n/a (in-kernel, not measured)" if name == "perf" else _fmt(m["bpf"], ".3f")
        rows.append([labels[name] + ("" if m["ok"] else " (FAILED)"), _fmt(m["cpu"], ".3f"), bpf,
                     _fmt(m["total"], ".3f"), _fmt(_ratio(m, perf_total), ".3f"),
                     _fmt(m["rss"], ".1f"), _fmt(m["ttr"], ".3f"),
                     _fmt(_slowdown(m, base_rate), ".1f")])
    lines += _md_table(["profiler", "CPU s (user+sys)", "BPF prog CPU s", "total CPU s",
                        "ratio to perf", "peak RSS MB", "time-to-result s",
                        "workload slowdown %"], rows)
    lines.append("")
    lines.append("Details (medians):")
    lines.append("")
    rows = []
    for name in names:
        m = med[name]
        nsrun = (m["bpf"] * 1e9 / m["bpf_cnt"]) if m["bpf_cnt"] else None
        # the slowdown as CPU seconds: what the 2 burners lost over the capture, in every form
        lost = ((1 - m["rate"] / base_rate) * 2 * duration) if (base_rate and m["rate"]) else None
        rows.append([labels[name], _fmt(m["wall"], ".2f"), _fmt(m["samples"], ".0f"),
                     _fmt(m["bpf_cnt"] or None, ".0f"), _fmt(nsrun, ".0f"),
                     _fmt(m["rate"] and m["rate"] / 1e6, ".1f"), _fmt(lost, ".2f"),
                     _fmt(m["burn_cpu"], ".2f"), _fmt(m["busy"], ".2f"), _fmt(m["other"], ".2f"),
                     _fmt(m["steal"], ".2f")])
    lines += _md_table(["profiler", "wall s", "samples", "BPF runs", "BPF ns/run",
                        "burn rate M it/s", "workload lost CPU s", "burners CPU s",
                        "machine busy CPU s", "other CPU s", "steal s"], rows)
    lines.append("")
    lines.append("workload lost CPU s = workload slowdown x 2 cores x the duration: everything the "
                 "profiler took from the workload during the capture, its in-kernel sampling "
                 "included (the only figure that shows perf's).")
    lines.append("")
    lines.append("other CPU s = machine busy - burners - the profiler's user+sys (/proc/stat): the "
                 "bench's own watcher, anything else running, and the in-kernel sampling work "
                 "not charged to the burners; large values mean a noisy run.")
    o = med.get("ours")
    if o:
        lines.append("")
        lines.append("Targets (slideops-profiler):")
        lines.append("")
        ratio = _ratio(o, perf_total)

        def verdict(ok):
            return "n/a" if ok is None else ("met" if ok else "NOT met")

        lines.append(f"- CPU at most a tenth of perf's: ratio {_fmt(ratio, '.3f')} -> "
                     f"{verdict(None if ratio is None else ratio <= 0.1)}")
        lines.append(f"- time-to-result <= 1 s: {_fmt(o['ttr'], '.3f')} s -> "
                     f"{verdict(None if o['ttr'] is None else o['ttr'] <= 1.0)}")
        lines.append(f"- peak RSS <= 32 MB: {_fmt(o['rss'], '.1f')} MB -> "
                     f"{verdict(None if o['rss'] is None else o['rss'] <= 32)}")
        per_cpu = (o["total"] / duration * 100 / 2) if o["total"] is not None else None
        lines.append(f"- overhead while sampling (SPEC 9: about 1% of one CPU): "
                     f"{_fmt(o['total'] and o['total'] / duration * 100, '.2f')}% of one CPU "
                     f"({_fmt(per_cpu, '.2f')}% of the 2-core machine)")
    text = "\n".join(lines) + "\n"
    with open(out_md, "w") as f:
        f.write(text)
    sys.stdout.write(text)


def python(runs_dir, duration):
    """The Python row (bench/python.sh): per workload, baseline, ours and perf."""
    workloads = ["native", "py10", "py50"]
    names = [f"{w}-{p}" for w in workloads for p in ("baseline", "ours", "perf")]
    med = _medians(runs_dir, names, duration)
    labels = {"native": "bench/burn.c (no Python)", "py10": "bench/pyburn.py, 10 frames",
              "py50": "bench/pyburn.py, 50 frames"}
    rows = []
    for w in workloads:
        base, perf = med.get(f"{w}-baseline"), med.get(f"{w}-perf")
        perf_total = perf and perf["total"]
        for p in ("ours", "perf"):
            m = med.get(f"{w}-{p}")
            if not m:
                continue
            nsrun = (m["bpf"] * 1e9 / m["bpf_cnt"]) if m["bpf_cnt"] else None
            rows.append([labels[w], "slideops-profiler" if p == "ours" else "perf record + script",
                         _fmt(m["cpu"], ".3f"),
                         "n/a" if p == "perf" else _fmt(m["bpf"], ".3f"),
                         _fmt(m["total"], ".3f"), _fmt(_ratio(m, perf_total), ".3f"),
                         _fmt(m["bpf_cnt"] or None, ".0f"), _fmt(nsrun, ".0f"),
                         _fmt(m["pyframes"], ".0f") if p == "ours" else "-",
                         _fmt(base and base["rate"] and base["rate"] / 1e6, ".2f"),
                         _fmt(m["rate"] and m["rate"] / 1e6, ".2f"),
                         _fmt(_slowdown(m, base and base["rate"]), ".1f")
                         + ("" if m["ok"] else " (FAILED)"),
                         _fmt(base and base["rate_cpu"] and base["rate_cpu"] / 1e6, ".2f"),
                         _fmt(m["rate_cpu"] and m["rate_cpu"] / 1e6, ".2f"),
                         _fmt(base and base["rate_cpu"] and m["rate_cpu"] and
                              (1 - m["rate_cpu"] / base["rate_cpu"]) * 100, ".1f")])
    reps = max((m["n"] for m in med.values()), default=0)
    lines = [f"Whole-server capture of {duration:g} s at 99 Hz, 2 workload processes (one per "
             f"core); median of {reps} run(s).", ""]
    lines += _md_table(["workload", "profiler", "CPU s (user+sys)", "BPF prog CPU s",
                        "total CPU s", "ratio to perf", "BPF runs", "BPF ns/run",
                        "Python frames/sample", "baseline M it/s", "M it/s",
                        "workload slowdown %", "baseline M it/CPU s", "M it/CPU s",
                        "slowdown per CPU s %"], rows)
    lines.append("")
    lines.append("BPF ns/run: both cores run the workload, so every run of the sampler is a sample "
                 "of it; Python frames/sample: the median depth of the named Python stacks in "
                 "our profile.collapsed (<module> to hot); M it/CPU s: the workload's "
                 "iterations per CPU second it got (the sampling interrupts included), steadier "
                 "than per wall second when other processes take CPU time from it.")
    sys.stdout.write("\n".join(lines) + "\n")


def _java_frame(f):
    """Whether a frame of profile.collapsed is a named Java method (JavaBurn's, the JDK's)."""
    return f.startswith(("JavaBurn.", "java.", "jdk.", "sun."))


def _java_frames(path):
    """The median number of named Java frames in the samples of bench/JavaBurn.java's loop
    (stacks with a JavaBurn frame, in profile.collapsed), or None without such samples."""
    depths = []
    try:
        with open(path) as f:
            for line in f:
                stack, _, n = line.rstrip("\n").rpartition(" ")
                frames = stack.split(";")
                if any(x.startswith("JavaBurn.") for x in frames):
                    depths += [sum(1 for x in frames if _java_frame(x))] * min(int(n), 1000)
    except (OSError, ValueError):
        return None
    return statistics.median(depths) if depths else None


def jvm(runs_dir, duration):
    """The JVM row (bench/jvm.sh): per workload, baseline, ours and perf."""
    workloads = ["native", "java10", "java50"]
    profs = ("baseline", "ours", "perf")
    names = [f"{w}-{p}" for w in workloads for p in profs]
    med = _medians(runs_dir, names, duration)
    # Java frames per sample: not one of _medians' keys; the median over the repeats here
    jframes = {}
    for ent in sorted(os.listdir(runs_dir)):
        m = re.match(r"^([\w-]+)\.(\d+)$", ent)
        if m and m.group(1) in names and m.group(1).endswith("-ours"):
            jframes.setdefault(m.group(1), []).append(
                _java_frames(os.path.join(runs_dir, ent, "out", "profile.collapsed")))
    labels = {"native": "bench/burn.c (no JVM)", "java10": "bench/JavaBurn.java, 10 frames",
              "java50": "bench/JavaBurn.java, 50 frames"}
    nat = med.get("native-ours")
    nat_ns = (nat["bpf"] * 1e9 / nat["bpf_cnt"]) if nat and nat["bpf_cnt"] else None
    rows = []
    for w in workloads:
        base, perf = med.get(f"{w}-baseline"), med.get(f"{w}-perf")
        perf_total = perf and perf["total"]
        for p in ("ours", "perf"):
            m = med.get(f"{w}-{p}")
            if not m:
                continue
            nsrun = (m["bpf"] * 1e9 / m["bpf_cnt"]) if m["bpf_cnt"] else None
            jf = _median(jframes.get(f"{w}-{p}", []))
            rows.append([labels[w], "slideops-profiler" if p == "ours" else "perf record + script",
                         _fmt(m["cpu"], ".3f"),
                         "n/a" if p == "perf" else _fmt(m["bpf"], ".3f"),
                         _fmt(m["total"], ".3f"), _fmt(_ratio(m, perf_total), ".3f"),
                         _fmt(m["bpf_cnt"] or None, ".0f"), _fmt(nsrun, ".0f"),
                         _fmt(nsrun - nat_ns, "+.0f") if (p == "ours" and w != "native" and
                                                          nsrun is not None and nat_ns) else "-",
                         _fmt(jf, ".0f") if p == "ours" else "-",
                         _fmt(base and base["rate"] and base["rate"] / 1e6, ".2f"),
                         _fmt(m["rate"] and m["rate"] / 1e6, ".2f"),
                         _fmt(_slowdown(m, base and base["rate"]), ".1f")
                         + ("" if m["ok"] else " (FAILED)"),
                         _fmt(base and base["rate_cpu"] and base["rate_cpu"] / 1e6, ".2f"),
                         _fmt(m["rate_cpu"] and m["rate_cpu"] / 1e6, ".2f"),
                         _fmt(base and base["rate_cpu"] and m["rate_cpu"] and
                              (1 - m["rate_cpu"] / base["rate_cpu"]) * 100, ".1f")])
    reps = max((m["n"] for m in med.values()), default=0)
    lines = [f"Whole-server capture of {duration:g} s at 99 Hz, 2 workload processes (one per "
             f"core); median of {reps} run(s).", ""]
    lines += _md_table(["workload", "profiler", "CPU s (user+sys)", "BPF prog CPU s",
                        "total CPU s", "ratio to perf", "BPF runs", "BPF ns/run",
                        "BPF ns/run vs native", "Java frames/sample", "baseline M it/s",
                        "M it/s", "workload slowdown %", "baseline M it/CPU s", "M it/CPU s",
                        "slowdown per CPU s %"], rows)
    lines.append("")
    lines.append("BPF ns/run: both cores run the workload, so every run of the sampler is a sample "
                 "of it; vs native: against our native-only capture (burn.c) of the same run; "
                 "Java frames/sample: the median number of named Java frames in our "
                 "profile.collapsed's stacks of JavaBurn; the JVMs' rates are over the measured "
                 "window only (after a warm-up for the JIT), their CPU seconds the loop "
                 "thread's; perf names no JIT frame (no perf map: its Java frames are "
                 "[unknown]).")
    sys.stdout.write("\n".join(lines) + "\n")


def main(argv):
    if len(argv) == 4 and argv[1] == "watch":
        watch(int(argv[2]), argv[3])
    elif len(argv) == 5 and argv[1] == "report":
        report(argv[2], float(argv[3]), argv[4])
    elif len(argv) == 4 and argv[1] == "python":
        python(argv[2], float(argv[3]))
    elif len(argv) == 4 and argv[1] == "jvm":
        jvm(argv[2], float(argv[3]))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

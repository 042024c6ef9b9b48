#!/usr/bin/env python3
"""Structural check of a `d9prof export --format chrome` file.

usage: check_chrome.py TRACE.json SAMPLES POLLS

Valid JSON in the Trace Event Format's object form; every X slice has
dur >= 0; on each thread the poll slices are in time order and do not
overlap; every flow start has its end (same id) and vice versa, the
start at a wake instant and the end at a poll slice of the same time,
thread and category (DevTools binds flows so); every "sf" names a
stackFrames id whose parent chain ends at a root (no dangling parent, no
cycle); on each thread all X slices (polls, parks, off-CPU) nest, none
crossing another's end, as Perfetto's slice tracks need; the CPU
profiles (ph "P": a Profile, then ProfileChunks) are one per thread,
their nodes defined once with the parent before the child, every sample
a defined node with its time delta, and hold SAMPLES samples in all;
the poll slices number POLLS. Prints one line per fact; exit 1 on the first
failure class found (all are reported).
"""
import json
import sys

EPS = 0.0015  # us: times are written with ns precision, three decimals


def main():
    path, want_samples, want_polls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(path) as f:
        doc = json.load(f)
    bad = []
    ev = doc.get("traceEvents")
    frames = doc.get("stackFrames")
    if not isinstance(ev, list) or not isinstance(frames, dict):
        print("not the object form: traceEvents list and stackFrames dict wanted")
        return 1
    if doc.get("displayTimeUnit") != "ns":
        bad.append("displayTimeUnit is not ns")

    # stack frames: every parent defined, every chain ends
    for k, fr in frames.items():
        if "name" not in fr:
            bad.append(f"stack frame {k} has no name")
    ended = {}

    def chain_ends(k):
        seen = []
        while k is not None:
            if k in ended:
                break
            if k not in frames or k in seen:
                for s in seen:
                    ended[s] = False
                return False
            seen.append(k)
            p = frames[k].get("parent")
            k = None if p is None else str(p)
        ok = ended.get(k, True) if k is not None else True
        for s in seen:
            ended[s] = ok
        return ok

    polls = {}
    slices = {}
    samples = 0
    flows = {}
    nflows = 0
    badsf = set()
    at = set()  # (ph, tid, ts, cat) of the events flows may bind to
    profiles = {}  # id -> [tid, node ids, samples]
    for e in ev:
        ph = e.get("ph")
        if "sf" in e and str(e["sf"]) not in badsf and not chain_ends(str(e["sf"])):
            badsf.add(str(e["sf"]))
            bad.append(f"sf {e['sf']} is undefined or its parent chain does not end")
        if ph == "X":
            if not (e.get("dur", -1) >= 0):
                bad.append(f"slice with dur < 0: {e}")
            slices.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
            if e.get("cat") == "task":
                polls.setdefault(e["tid"], []).append((e["ts"], e["dur"], e["args"]["poll"]))
                at.add(("X", e["tid"], e["ts"], "task"))
        elif ph == "i":
            at.add(("i", e["tid"], e["ts"], e.get("cat")))
        elif ph == "P":
            pid = e.get("id")
            data = e.get("args", {}).get("data", {})
            if e.get("name") == "Profile":
                if pid in profiles:
                    bad.append(f"profile {pid} started twice")
                if not isinstance(data.get("startTime"), int):
                    bad.append(f"profile {pid}: no integer startTime")
                profiles[pid] = [e["tid"], set(), 0]
                continue
            p = profiles.get(pid)
            if p is None or p[0] != e["tid"]:
                bad.append(f"chunk of profile {pid} without its Profile on its thread")
                continue
            cp = data.get("cpuProfile", {})
            for nd in cp.get("nodes", []):
                if nd["id"] in p[1]:
                    bad.append(f"profile {pid}: node {nd['id']} defined twice")
                if "parent" in nd and nd["parent"] not in p[1]:
                    bad.append(f"profile {pid}: node {nd['id']} before its parent {nd['parent']}")
                if not nd.get("callFrame", {}).get("functionName"):
                    bad.append(f"profile {pid}: node {nd['id']} has no functionName")
                p[1].add(nd["id"])
            sm, dt = cp.get("samples", []), data.get("timeDeltas", [])
            if len(sm) != len(dt):
                bad.append(f"profile {pid}: {len(sm)} samples, {len(dt)} time deltas")
            if any(n not in p[1] for n in sm):
                bad.append(f"profile {pid}: a sample names an undefined node")
            if any(d < 0 for d in dt):
                bad.append(f"profile {pid}: samples out of time order")
            p[2] += len(sm)
            samples += len(sm)
        elif ph in ("s", "f"):
            key = (e.get("cat"), e.get("name"), e.get("id"))
            d = flows.setdefault(key, [0, 0])
            d[0 if ph == "s" else 1] += 1
            if ph == "f" and e.get("bp") != "e":
                bad.append(f"flow end without bp e: {e}")
    unbound = 0
    for e in ev:
        if e.get("ph") == "s" and ("i", e["tid"], e["ts"], e.get("cat")) not in at:
            unbound += 1
        elif e.get("ph") == "f" and ("X", e["tid"], e["ts"], e.get("cat")) not in at:
            unbound += 1
    if unbound:
        bad.append(f"{unbound} flow ends have no event of their time, thread and category")
    ptids = [p[0] for p in profiles.values()]
    if len(set(ptids)) != len(ptids):
        bad.append("a thread has two profiles")
    for key, (s, f) in flows.items():
        nflows += 1
        if s != 1 or f != 1:
            bad.append(f"flow {key}: {s} start(s), {f} end(s)")
    npolls = 0
    for tid, ps in polls.items():
        npolls += len(ps)
        for a, b in zip(ps, ps[1:]):
            if b[0] < a[0]:
                bad.append(f"thread {tid}: poll {b[2]} starts before poll {a[2]}")
            elif b[0] < a[0] + a[1] - EPS:
                bad.append(f"thread {tid}: poll {b[2]} overlaps poll {a[2]}")
    for tid, v in slices.items():
        v.sort(key=lambda x: (x[0], -x[1]))
        open_ = []
        for a, b, n in v:
            while open_ and open_[-1][1] <= a + EPS:
                open_.pop()
            if open_ and b > open_[-1][1] + EPS:
                bad.append(f"thread {tid}: {n} at {a} crosses the end of {open_[-1][2]} "
                           f"at {open_[-1][0]}..{open_[-1][1]}")
            open_.append((a, b, n))
    if samples != want_samples:
        bad.append(f"{samples} profile samples, the trace has {want_samples} samples")
    if npolls != want_polls:
        bad.append(f"{npolls} poll slices, 'd9prof polls' lists {want_polls}")
    print(f"{len(ev)} events: {npolls} polls on {len(polls)} threads, {samples} samples "
          f"in {len(profiles)} profiles, "
          f"{nflows} flows, {len(frames)} stack frames")
    for b in bad[:20]:
        print("BAD:", b)
    if len(bad) > 20:
        print(f"... and {len(bad) - 20} more")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

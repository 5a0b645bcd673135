#!/usr/bin/env python3
"""Wait for one job of bench/hub.sh to end, printing progress now and then.

Usage: hub_job.py <api base url> <api token file> <job id> <snapshot out file> [pid ...]
Env: PROGRESS_S (seconds between progress lines on stderr, default 15), POLL_S (default 0.25),
TIMEOUT_S (default 3600). RESTART_SEED_AT_PCT=n (with SEED_ARGV_FILE, the seed's command line NUL
separated, SEED_LOG and SEED_PID_FILE): once the seed has n% of the model, kill -9 it (the first
pid) and start it again with the same command line, its log appended, its new pid written to
SEED_PID_FILE; the download must then resume with a Range request.
Prints "<s from start to terminal> <s from start to the seed placement staged> <status> <max VmRSS
KiB of each pid ...>" on stdout; the start is this process's start (right after the POST).
"""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

api, token_file, job_id, out = sys.argv[1:5]
pids = sys.argv[5:]
token = open(token_file).read().strip()
progress_s = float(os.environ.get("PROGRESS_S", "15"))
poll_s = float(os.environ.get("POLL_S", "0.25"))
timeout_s = float(os.environ.get("TIMEOUT_S", "3600"))
rss = [0] * len(pids)
url = f"{api}/api/v1/model-distribution/jobs?job_id={job_id}"


def sample():
    for i, pid in enumerate(pids):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss[i] = max(rss[i], int(line.split()[1]))
        except OSError:
            pass


def snapshot():
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


restart_pct = float(os.environ.get("RESTART_SEED_AT_PCT", "0"))


def restart_seed(pct):
    os.kill(int(pids[0]), signal.SIGKILL)
    argv = open(os.environ["SEED_ARGV_FILE"], "rb").read().split(b"\0")[:-1]
    time.sleep(1)
    log = open(os.environ["SEED_LOG"], "ab")
    log.write(b"\n---- hub bench: seed killed (-9) at %.0f%%, started again ----\n" % pct)
    log.flush()
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    with open(os.environ["SEED_PID_FILE"], "w") as f:
        f.write(str(proc.pid))
    pids[0] = str(proc.pid)
    print("hub: seed killed with -9 at %.0f%% and started again (pid %d)" % (pct, proc.pid),
          file=sys.stderr, flush=True)


t0 = time.monotonic()
seed_s = None
last_print = t0
while True:
    sample()
    snap = snapshot()
    now = time.monotonic()
    for p in snap.get("placements", []):
        if p.get("role") == "seed" and p.get("state") == "staged" and seed_s is None:
            seed_s = now - t0
        if (p.get("role") == "seed" and restart_pct > 0
                and 100.0 * p.get("staged_bytes", 0) / (p.get("total_bytes") or 1) >= restart_pct):
            restart_seed(100.0 * p["staged_bytes"] / p["total_bytes"])
            restart_pct = 0
    status = snap["status"]
    if status in ("completed", "failed", "canceled") or now - t0 > timeout_s:
        break
    if now - last_print >= progress_s:
        last_print = now
        parts = []
        for p in snap.get("placements", []):
            total = p.get("total_bytes") or 1
            parts.append("%s %s %s %.0f%%" % (p["node_id"], p.get("role", "?"), p["state"],
                                              100.0 * p.get("staged_bytes", 0) / total))
        print("hub: %5.0f s %s: %s; load %s" % (now - t0, status, ", ".join(parts),
              open("/proc/loadavg").read().split()[0]), file=sys.stderr, flush=True)
    time.sleep(poll_s)
job_s = time.monotonic() - t0
with open(out, "w") as f:
    json.dump(snap, f, indent=1)
print("%.3f %.3f %s %s" % (job_s, seed_s if seed_s is not None else -1, snap["status"],
                           " ".join(str(r) for r in rss)))

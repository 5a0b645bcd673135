#!/usr/bin/env python3
"""POST one distribution job, wait until it ends, and report how long it took.

Usage: stage_job.py <api base url> <job json file> [pid ...]
Env: POLL_S, seconds between status probes (default 0.02).
Prints "<seconds from POST to completed> <max VmRSS KiB of each pid ...>" on stdout; exits 1 (the
snapshot on stderr) when the job fails. One process for the whole wait: polling through a fresh
curl and python per probe cost the machine under test a good part of a core.
"""
import json
import os
import sys
import time
import urllib.request

api, body_file, pids = sys.argv[1], sys.argv[2], sys.argv[3:]
body = open(body_file, "rb").read()
job_id = json.loads(body)["job_id"]
status_url = f"{api}/api/v1/model-distribution/jobs?job_id={job_id}"
rss = [0] * len(pids)


def sample():
    for i, pid in enumerate(pids):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss[i] = max(rss[i], int(line.split()[1]))
                        break
        except OSError:
            pass


start = time.monotonic()
req = urllib.request.Request(f"{api}/api/v1/model-distribution/jobs", data=body, method="POST",
                             headers={"content-type": "application/json"})
urllib.request.urlopen(req).read()
while True:
    sample()
    snap = json.load(urllib.request.urlopen(status_url))
    if snap["status"] == "completed":
        elapsed = time.monotonic() - start
        break
    if snap["status"] in ("failed", "canceled"):
        print(f"job {job_id} {snap['status']}: {json.dumps(snap)}", file=sys.stderr)
        sys.exit(1)
    time.sleep(float(os.environ.get("POLL_S", "0.02")))
sample()
print(elapsed, *rss)

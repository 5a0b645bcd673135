#!/usr/bin/env python3
"""Per-link timeline of a fan-out run: what each node's shaped link carried every 100 ms.

  linkline.py sample OUT.csv IFACE...   every 100 ms, append "time tx rx tx rx ..." of the host-side
                                        interfaces (until SIGTERM); needs nothing but /sys
  linkline.py report OUT.csv T0 T1 RATE_BPS SVG TITLE
                                        the job ran from T0 to T1 (epoch seconds): print each link's
                                        first byte, last byte, use (bytes over what the link could
                                        carry from its first byte to the job's end) and idle share,
                                        and draw SVG, one row
                                        per node (the seed's uplink first, then each follower's
                                        downlink, with what the follower relayed as a line)

The interfaces are the bridge ends of the nodes' veths, so a host-side tx is what the node
received and a host-side rx what it sent. A 100 ms bin is idle when its link carried less than
IDLE_SHARE (1%) of what the link's rate allows in it: control traffic (Postgres, the node link) is
a few KiB. A link's idle share counts the idle bins from its first busy bin to the job's end, over
all bins in that span; the tail after a follower's last byte, while others still copy, counts.
"""
import signal
import sys
import time

BIN = 0.1
IDLE_SHARE = 0.01


def sample(out, ifaces):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    files = [(f"/sys/class/net/{i}/statistics/tx_bytes", f"/sys/class/net/{i}/statistics/rx_bytes") for i in ifaces]

    def read(path):
        with open(path) as f:
            return f.read().strip()

    with open(out, "w", buffering=1) as f:
        f.write("time " + " ".join(f"{i}.tx {i}.rx" for i in ifaces) + "\n")
        nxt = time.time()
        while not stop:
            row = [f"{time.time():.4f}"]
            for tx, rx in files:
                row += [read(tx), read(rx)]
            f.write(" ".join(row) + "\n")
            nxt += BIN
            time.sleep(max(0.0, nxt - time.time()))


def load(csv):
    with open(csv) as f:
        head = f.readline().split()
        rows = [[float(x) for x in line.split()] for line in f if line.strip()]
    return head, rows


def bins(rows, col, t0, t1):
    """Bytes per 100 ms bin on column col over [t0, t1): each sample delta spread over its bins."""
    n = max(1, int(round((t1 - t0) / BIN)))
    out = [0.0] * n
    for a, b in zip(rows, rows[1:]):
        ta, tb, d = a[0], b[0], b[col] - a[col]
        if tb <= t0 or ta >= t1 or tb <= ta:
            continue
        # spread d uniformly over [ta, tb] (samples are 100 ms apart, so at most two bins)
        lo, hi = max(ta, t0), min(tb, t1)
        i = int((lo - t0) / BIN)
        while lo < hi and i < n:
            edge = min(hi, t0 + (i + 1) * BIN)
            out[i] += d * (edge - lo) / (tb - ta)
            lo, i = edge, i + 1
    return out


def report(csv, t0, t1, rate_bps, svg, title):
    head, rows = load(csv)
    cap = rate_bps / 8 * BIN  # bytes a link can carry in one bin
    ifaces = [h[:-3] for h in head[1::2]]
    links = []  # (label, received-or-sent bins, relayed bins or None)
    for k, name in enumerate(ifaces):
        tx_col, rx_col = 1 + 2 * k, 2 + 2 * k
        if k == 0:
            links.append(("seed sent", bins(rows, rx_col, t0, t1), None))
        else:
            links.append((f"node {k} received", bins(rows, tx_col, t0, t1), bins(rows, rx_col, t0, t1)))
    print(f"  per-link timeline ({BIN * 1000:.0f} ms bins, idle < {IDLE_SHARE:.0%} of the link): {svg}")
    print(f"  {'link':<18} {'first byte':>10} {'last byte':>10} {'MiB':>7} {'used':>6} {'idle':>6}  longest idle")
    worst = 0.0
    stats = []
    for label, b, _ in links:
        busy = [i for i, v in enumerate(b) if v >= IDLE_SHARE * cap]
        if not busy:
            stats.append(None)
            print(f"  {label:<18} {'-':>10}")
            continue
        first, last = busy[0], busy[-1]
        span = len(b) - first
        idle = [i for i in range(first, len(b)) if b[i] < IDLE_SHARE * cap]
        share = len(idle) / span
        run = longest = 0
        for i in range(first, len(b)):
            run = run + 1 if b[i] < IDLE_SHARE * cap else 0
            longest = max(longest, run)
        stats.append((first, share))
        if label != "seed sent":
            worst = max(worst, share)
        used = sum(b[first:]) / (cap * span)
        print(f"  {label:<18} {first * BIN:>9.1f}s {(last + 1) * BIN:>9.1f}s {sum(b) / 2**20:>7.0f} {used:>6.0%} {share:>6.1%}  {longest * BIN:.1f} s")
    print(f"linkline worst_follower_idle={worst:.3f} (target <= 0.10) svg={svg}")
    draw(svg, title, links, stats, cap, t1 - t0)


def draw(svg, title, links, stats, cap, dur):
    W, LEFT, RIGHT, ROW, GAP, TOP = 1000, 130, 20, 46, 8, 40
    plot_w = W - LEFT - RIGHT
    H = TOP + len(links) * (ROW + GAP) + 40
    n = len(links[0][1])
    bw = plot_w / n
    e = []
    e.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">')
    e.append(f'<rect width="{W}" height="{H}" fill="white"/>')
    e.append(f'<text x="{LEFT}" y="18" font-size="14">{title}</text>')
    e.append(f'<text x="{LEFT}" y="33" fill="#555">blue: bytes per 100 ms as a share of the link rate; red: idle bin after the link\'s first byte; orange line: bytes the follower sent on (relayed)</text>')
    for r, ((label, b, relay), st) in enumerate(zip(links, stats)):
        y0 = TOP + r * (ROW + GAP)
        e.append(f'<rect x="{LEFT}" y="{y0}" width="{plot_w}" height="{ROW}" fill="#f4f4f4"/>')
        e.append(f'<text x="{LEFT - 6}" y="{y0 + ROW / 2 - 2}" text-anchor="end">{label}</text>')
        if st:
            e.append(f'<text x="{LEFT - 6}" y="{y0 + ROW / 2 + 12}" text-anchor="end" fill="#a00">idle {st[1]:.0%}</text>')
        first = st[0] if st else n
        for i, v in enumerate(b):
            x = LEFT + i * bw
            if i >= first and v < IDLE_SHARE * cap:
                e.append(f'<rect x="{x:.2f}" y="{y0}" width="{bw:.2f}" height="{ROW}" fill="#f3b0b0"/>')
            h = min(1.0, v / cap) * ROW
            if h > 0.3:
                e.append(f'<rect x="{x:.2f}" y="{y0 + ROW - h:.2f}" width="{bw:.2f}" height="{h:.2f}" fill="#3a6fc4"/>')
        if relay:
            pts = " ".join(f"{LEFT + (i + 0.5) * bw:.1f},{y0 + ROW - min(1.0, v / cap) * ROW:.1f}" for i, v in enumerate(relay))
            e.append(f'<polyline points="{pts}" fill="none" stroke="#e08a00" stroke-width="1"/>')
    yb = TOP + len(links) * (ROW + GAP)
    step = 1 if dur <= 15 else 2 if dur <= 30 else 5 if dur <= 80 else 10
    t = 0
    while t <= dur + 1e-9:
        x = LEFT + t / BIN * bw
        e.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{yb}" stroke="#ccc" stroke-width="0.5"/>')
        e.append(f'<text x="{x:.1f}" y="{yb + 14}" text-anchor="middle">{t} s</text>')
        t += step
    e.append("</svg>")
    with open(svg, "w") as f:
        f.write("\n".join(e) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "sample":
        sample(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "report":
        report(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6], sys.argv[7])
    else:
        sys.exit(__doc__)

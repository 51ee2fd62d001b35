#!/usr/bin/env python3
"""Plots `hanson-bench --scenario soak` runs: server memory, open fds, trade p99 and the
database's size per sample, one line per run.

    python3 tools/soak-plot.py OUT.png sqlite.jsonl "postgres, before the fix=pg.jsonl"

Each input is the bench's standard output (its JSON lines; other lines are skipped),
optionally named LABEL=PATH (else the backend names the line).
Needs matplotlib (pip install matplotlib).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def samples(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            if row.get("scenario") == "soak" and "sample" in row:
                rows.append(row)
    return rows


def database_mib(row):
    if row.get("db_bytes") is not None:
        return (row["db_bytes"] + (row.get("wal_bytes") or 0)) / 2**20
    if row.get("database_bytes") is not None:
        return row["database_bytes"] / 2**20
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, runs = sys.argv[1], sys.argv[2:]
    panels = [
        ("server RssAnon (MiB)", lambda r: (r.get("rss_anon_kib") or 0) / 1024),
        ("server VmRSS (MiB)", lambda r: (r.get("rss_kib") or 0) / 1024),
        ("open fds", lambda r: r.get("fds")),
        ("trade p99 (ms)", lambda r: r.get("p99_ms")),
        ("database + WAL (MiB)", database_mib),
        ("webhook backlog (trades)", lambda r: r.get("webhook_backlog_trades")),
    ]
    fig, axes = plt.subplots(3, 2, figsize=(12, 10), sharex=True)
    for run in runs:
        label, _, path = run.rpartition("=")
        rows = samples(path)
        if not rows:
            continue
        label = label or rows[0].get("backend", path)
        minutes = [r["minute"] for r in rows]
        for ax, (title, value) in zip(axes.flat, panels):
            ax.plot(minutes, [value(r) for r in rows], marker=".", label=label)
    for ax, (title, _) in zip(axes.flat, panels):
        ax.set_title(title)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("minutes")
    axes.flat[0].legend()
    fig.suptitle("hanson-bench --scenario soak")
    fig.tight_layout()
    fig.savefig(out, dpi=80)


if __name__ == "__main__":
    main()

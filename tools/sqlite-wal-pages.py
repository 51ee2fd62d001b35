#!/usr/bin/env python3
"""The distinct pages each SQLite commit wrote, by b-tree (docs/performance.md, "The pages a
SQLite group commit writes"). Reads a copy of a database and its WAL taken together in the
middle of a run, groups the WAL's current frames by commit, and names each page with dbstat
(SQLite built with SQLITE_ENABLE_DBSTAT_VTAB, as Debian's and Python's are):

  hanson-bench --scenario many_markets --duration 6 --database-url sqlite:///tmp/x.db &
  sleep 9; cp /tmp/x.db /tmp/snap.db; cp /tmp/x.db-wal /tmp/snap.db-wal
  python3 tools/sqlite-wal-pages.py /tmp/snap.db
"""
import collections
import sqlite3
import struct
import sys

db = sys.argv[1]
wal = open(db + "-wal", "rb").read()
_magic, _version, page_size, _checkpoint, salt1, salt2, _c1, _c2 = struct.unpack(">8I", wal[:32])
frames = []
offset = 32
while offset + 24 + page_size <= len(wal):
    page, commit_size, frame_salt1, frame_salt2 = struct.unpack(">4I", wal[offset:offset + 16])
    # Frames left from before the WAL last started over carry other salts.
    if (frame_salt1, frame_salt2) != (salt1, salt2):
        break
    frames.append((page, commit_size))
    offset += 24 + page_size

owner = dict((page, name) for name, page in sqlite3.connect(db).execute("SELECT name, pageno FROM dbstat"))
commits, pages = [], set()
for page, commit_size in frames:
    pages.add(page)
    if commit_size:  # the last frame of a commit holds the database's size
        commits.append(pages)
        pages = set()
if not commits:
    sys.exit("no whole commit in the WAL")
by_tree = collections.Counter(owner.get(page, "?") for c in commits for page in c)
print(f"{len(commits)} commits, {sum(map(len, commits)) / len(commits):.1f} distinct pages a commit")
for name, count in by_tree.most_common():
    print(f"  {name:40s} {count / len(commits):6.1f}")

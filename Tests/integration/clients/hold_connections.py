"""Holds control connections open as an unprivileged user would (stdlib only: it runs under Debian's
/usr/bin/python3 as a user that cannot read the test's virtual environment).

usage: hold_connections.py SOCKET COUNT WAIT_SEC first|all [silent]

Opens COUNT connections without sending anything; then the first admitted one ("first") or every
admitted one ("all") calls GetStatus once and stays idle. Prints one JSON line once all are open:
  {"admitted": N, "refused": M, "refusal": "<the first error reply a refused connection got>"}
then waits up to WAIT_SEC seconds for the daemon to close the admitted ones (with "silent": only
those that never called) and prints:
  {"closed_after": [seconds since connecting, per connection that never called],
   "caller_closed_after": [seconds since its call, per connection that called], "still_open": N,
   "callers_open": N}
"""
import json
import select
import socket
import sys
import time

path, count, wait, callers = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
until_silent_closed = sys.argv[5:] == ["silent"]
opened = []
for _ in range(count):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    opened.append((s, time.monotonic()))
# A refused connection gets its answer at once and is closed; an admitted one stays silent.
time.sleep(0.5)
readable, _, _ = select.select([s for s, _ in opened], [], [], 0)
admitted, refused, refusal = [], 0, None
for s, since in opened:
    if s in readable:
        data = s.recv(65536)
        refused += 1
        if refusal is None:
            refusal = data.rstrip(b"\0").decode()
        s.close()
    else:
        admitted.append((s, since))

called = set()
for index, (s, since) in enumerate(admitted):
    if callers == "first" and index > 0:
        break
    s.sendall(b'{"method":"io.syncd.Manager.GetStatus"}\0')
    reply = b""
    while not reply.endswith(b"\0"):
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("syncd closed the connection instead of answering GetStatus")
        reply += chunk
    admitted[index] = (s, time.monotonic())
    called.add(s)
print(json.dumps({"admitted": len(admitted), "refused": refused, "refusal": refusal}), flush=True)

open_ = dict(admitted)
closed_after, caller_closed_after = [], []
deadline = time.monotonic() + wait
while any(s not in called or not until_silent_closed for s in open_) and time.monotonic() < deadline:
    readable, _, _ = select.select(list(open_), [], [], max(0.0, deadline - time.monotonic()))
    for s in readable:
        if s.recv(65536) == b"":
            elapsed = time.monotonic() - open_.pop(s)
            (caller_closed_after if s in called else closed_after).append(elapsed)
            s.close()
print(json.dumps({"closed_after": closed_after, "caller_closed_after": caller_closed_after,
                  "still_open": len(open_), "callers_open": len([s for s in open_ if s in called])}), flush=True)

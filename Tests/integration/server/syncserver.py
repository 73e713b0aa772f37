#!/usr/bin/env python3
"""A small HTTP/1.1 server for syncd's integration tests: dynamic collections and faults.

Collections are served at /<name> with ETag and Last-Modified (conditional GET gives 304),
optionally paginated with RFC 8288 Link headers. Writable collections accept json-server-like
POST /<name>, PUT /<name>/<id>, DELETE /<name>/<id>, GET /<name>/<id>.

The tests steer it through /_control:
  PUT    /_control/collections/<name>   body = JSON array (or any bytes with ?raw=1)
  PUT    /_control/faults/<name>        body = JSON fault description (see Fault below)
  DELETE /_control/faults/<name>
  PUT    /_control/release/<name>       lets the request a "hold" fault keeps waiting go on
  PUT    /_control/options/<name>       {"perPage": 2, "wrapper": "data", "noValidators": true,
                                         "nextLink": URL, "delay": seconds, "etagBytes": n,
                                         "writeDelay": seconds, "serverIds": true, "dropMembers": [names],
                                         "knownMembers": [names] (a POST with another member: 400 "Unknown field"),
                                         "byToken": {TOKEN: [records]},  (records per bearer token, else 401)
                                         "paging": "offset" (with perPage: ?limit=&offset=, the limit capped
                                         at perPage), "links": false (no Link headers),
                                         "extra": {members}  (added to the wrapper object of every page),
                                         "extraHeaders": {name: value}  (added to every page)}
  GET    /_control/requests             every request seen, as JSON
  DELETE /_control/requests             forget them
  PUT    /_control/expire/<name>        {"before": N} (optional, default: the log's sequence number, so every
                                        token but the current one): a sync token below N answers 410 from now on
  GET    /_control/changes/<name>       {"seq": S, "expiredBefore": N, "log": [[seq, id], ...]}

Sync tokens (options {"syncTokens": true, "perPage": n}), a change feed in the style of Google's
calendar API (syncd.conf(5), "# Google sync token"). Every collection keeps a change log: each record
that a PUT /_control/collections/<name> adds or changes (compared by its "id" and its JSON) and each
one it drops gets the next sequence number, as do POST, PUT and DELETE of the collection's records; so
a test just sets new records. With "syncTokens" on, GET /<name> answers
    {"items": [records], "nextPageToken": "P"}       a page with more after it
    {"items": [records], "nextSyncToken": "S"}       the last page; S is the log's sequence number
("items" is "wrapper" when set, "extra" members are added). GET /<name>?syncToken=S answers the records
changed since S, each once (in the order of its last change), a record deleted meanwhile as
{"id": ID, "status": "cancelled"}; its last page carries the new nextSyncToken. Both are paged by
"perPage" (default: one page) with ?pageToken=P (which stands for the whole request; a syncToken next to
it is ignored). A token below the expiry floor (PUT /_control/expire/<name>) answers 410
{"error": {"code": 410, "message": "Sync token is no longer valid, a full sync is required.", ...}},
one that is not a number or above the log's sequence 400; no ETag, no 304.
Standard library only.
"""
import argparse
import base64
import email.utils
import gzip
import hashlib
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.collections = {}   # name -> {"raw": bytes | None, "records": list | None, "modified": float}
        self.faults = {}        # name -> fault dict
        self.gates = {}         # name -> threading.Event a "hold" fault waits on until /_control/release/<name>
        self.options = {}       # name -> options dict
        self.requests = []
        self.changes = {}       # name -> {"seq": int, "log": [[seq, key, id]], "expiredBefore": int}

    def set_records(self, name, records):
        before = (self.collections.get(name) or {}).get("records") or []
        self.collections[name] = {"raw": None, "records": records, "modified": time.time()}
        self.note_differences(name, before, records)

    def change_log(self, name):
        return self.changes.setdefault(name, {"seq": 0, "log": [], "expiredBefore": 0})

    def note_change(self, name, ident):
        """Gives the record `ident` (added, changed or deleted) the collection's next sequence number."""
        log = self.change_log(name)
        log["seq"] += 1
        log["log"].append([log["seq"], json.dumps(ident), ident])

    def note_differences(self, name, before, after):
        """Notes each record of `after` that `before` lacks or holds otherwise, then each one only `before` has."""
        old = {json.dumps(r.get("id")): json.dumps(r, sort_keys=True) for r in before if isinstance(r, dict)}
        new = set()
        for record in after if isinstance(after, list) else []:
            if not isinstance(record, dict):
                continue
            key = json.dumps(record.get("id"))
            new.add(key)
            if old.get(key) != json.dumps(record, sort_keys=True):
                self.note_change(name, record.get("id"))
        for record in before:
            if isinstance(record, dict) and json.dumps(record.get("id")) not in new:
                self.note_change(name, record.get("id"))

    def body_of(self, name):
        c = self.collections[name]
        if c["raw"] is not None:
            return c["raw"]
        return json.dumps(c["records"], separators=(",", ":")).encode()


STATE = State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "syncserver/1"

    def log_message(self, fmt, *args):  # quiet
        pass

    # --- helpers -----------------------------------------------------------------------
    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status, body=b"", headers=None, content_type="application/json"):
        self.send_response(status)
        if body or status not in (204, 304):
            self.send_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            if isinstance(v, list):
                for item in v:
                    self.send_header(k, item)
            else:
                self.send_header(k, v)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(body)

    def _record(self, body=b""):
        with STATE.lock:
            STATE.requests.append({
                "time": time.time(), "method": self.command, "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode("utf-8", "replace"),
            })

    # --- control -------------------------------------------------------------------------
    def _control(self):
        parts = urlsplit(self.path)
        segs = [s for s in parts.path.split("/") if s][1:]
        body = self._read_body() if self.command in ("PUT", "POST") else b""
        q = parse_qs(parts.query)
        with STATE.lock:
            if segs == ["requests"]:
                if self.command == "DELETE":
                    STATE.requests.clear()
                    return self._send(204)
                return self._send(200, json.dumps(STATE.requests).encode())
            if len(segs) == 2 and segs[0] == "collections":
                name = segs[1]
                if self.command == "GET":
                    c = STATE.collections.get(name)
                    return self._send(200, json.dumps(c["records"] if c else None).encode())
                if "raw" in q:
                    STATE.collections[name] = {"raw": body, "records": None, "modified": time.time()}
                else:
                    STATE.set_records(name, json.loads(body))
                return self._send(204)
            if len(segs) == 2 and segs[0] == "expire":
                log = STATE.change_log(segs[1])
                log["expiredBefore"] = json.loads(body or b"{}").get("before", log["seq"])
                return self._send(204)
            if len(segs) == 2 and segs[0] == "changes":
                log = STATE.change_log(segs[1])
                entries = [[seq, ident] for seq, _, ident in log["log"]]
                return self._send(200, json.dumps({"seq": log["seq"], "expiredBefore": log["expiredBefore"], "log": entries}).encode())
            if len(segs) == 2 and segs[0] == "release":
                # Lets the request a "hold" fault keeps waiting go on.
                STATE.gates.setdefault(segs[1], threading.Event()).set()
                return self._send(204)
            if len(segs) == 2 and segs[0] == "faults":
                if self.command == "DELETE":
                    STATE.faults.pop(segs[1], None)
                else:
                    STATE.faults[segs[1]] = json.loads(body)
                    if STATE.faults[segs[1]].get("kind") == "hold":
                        STATE.gates[segs[1]] = threading.Event()
                return self._send(204)
            if len(segs) == 2 and segs[0] == "options":
                STATE.options[segs[1]] = json.loads(body)
                return self._send(204)
        self._send(404, b'{"error":"unknown control path"}')

    # --- faults --------------------------------------------------------------------------
    def _apply_fault(self, name, body=b""):
        """Returns True when a fault answered the request. A fault may be limited to one HTTP "method",
        to request bodies containing "bodyContains", and with "itemOnly" to the item URLs (/<name>/<id>)."""
        item = len([s for s in urlsplit(self.path).path.split("/") if s]) > 1
        with STATE.lock:
            fault = STATE.faults.get(name)
            if fault and fault.get("method") and fault["method"] != self.command:
                fault = None
            if fault and fault.get("itemOnly") and not item:
                fault = None
            if fault and fault.get("bodyContains") and fault["bodyContains"].encode() not in body:
                fault = None
            if fault and fault.get("times") is not None:
                if fault["times"] <= 0:
                    fault = None
                else:
                    fault["times"] -= 1
        if not fault:
            return False
        page = fault.get("page")
        if page is not None:
            q = parse_qs(urlsplit(self.path).query)
            if int(q.get("page", ["1"])[0]) != page:
                return False
        kind = fault["kind"]
        if kind == "delay":
            # A slow but whole answer: waits, then the request is served as usual.
            time.sleep(fault.get("seconds", 1))
            return False
        if kind == "hold":
            # Like delay, but until the test says (PUT /_control/release/<name>): no race with the test's own steps.
            with STATE.lock:
                gate = STATE.gates.setdefault(name, threading.Event())
            gate.wait(fault.get("seconds", 60))
            return False
        if kind == "status":
            headers = {}
            if "retryAfter" in fault:
                headers["Retry-After"] = str(fault["retryAfter"])
            body = fault.get("body", "").encode()
            self._send(fault["status"], body, headers, fault.get("contentType", "text/html"))
        elif kind == "body":
            # A 200 with an arbitrary body (HTML error page, invalid JSON, invalid UTF-8 via "hex").
            body = bytes.fromhex(fault["hex"]) if "hex" in fault else fault["body"].encode()
            self._send(fault.get("status", 200), body, {}, fault.get("contentType", "application/json"))
        elif kind == "truncate":
            body = STATE.body_of(name)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
        elif kind == "gzip":
            # The listing gzip-compressed (Content-Encoding: gzip), without its last "cut" bytes: 8 cuts exactly the
            # CRC-32 and length trailer; Content-Length announces the bytes sent, so the cut is not seen by HTTP.
            # "badCRC" flips the CRC-32's first byte; "encoding" names another encoding and sends the listing as is.
            body = gzip.compress(STATE.body_of(name))
            body = body[: len(body) - fault.get("cut", 0)]
            if fault.get("badCRC"):
                body = body[:-8] + bytes([body[-8] ^ 0xFF]) + body[-7:]
            if fault.get("encoding"):
                body = STATE.body_of(name)
            self._send(200, body, {"Content-Encoding": fault.get("encoding", "gzip")})
        elif kind == "stall":
            body = STATE.body_of(name)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:1])
            self.wfile.flush()
            time.sleep(fault.get("seconds", 10))
            self.close_connection = True
        elif kind == "huge":
            # Streams `bytes` of a valid-looking array without Content-Length (chunked-free: close-delimited).
            total = fault["bytes"]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            pad = b"a" * 4000
            sent = 0
            n = 0
            try:
                self.wfile.write(b"[")
                while sent < total:
                    chunk = b'{"id":%d,"pad":"%s"},' % (n, pad)
                    self.wfile.write(chunk)
                    sent += len(chunk)
                    n += 1
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif kind == "bigRecord":
            # A valid listing whose second record is about `bytes` long, generated as it is sent.
            total = fault["bytes"]
            pad = b"a" * 65536
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(b'[{"id":1,"title":"small"},{"id":2,"pad":""}]') + total // len(pad) * len(pad)))
            self.end_headers()
            try:
                self.wfile.write(b'[{"id":1,"title":"small"},{"id":2,"pad":"')
                for _ in range(total // len(pad)):
                    self.wfile.write(pad)
                self.wfile.write(b'"}]')
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif kind == "redirect":
            # Redirects to fault["to"] (a path or an absolute URL) with the given status.
            self._send(fault.get("status", 302), b"", {"Location": fault["to"]}, "text/plain")
        elif kind == "echo":
            # A server that repeats the request in its error: "echo": "headers" (default) is a debug page listing
            # the request's headers, Authorization first; "token" a gateway's JSON naming the bearer token, as
            # sent or "encoding": "percent" / "quote" (Python's default, keeping "/") / "base64" / "base64-header"
            # (of the whole header value, "Bearer TOKEN"); "redirect" a redirect to fault["to"] + quote(token).
            auth = self.headers.get("Authorization", "")
            token = auth.split(" ", 1)[1] if " " in auth else auth
            if fault.get("echo") == "redirect":
                self._send(fault.get("status", 302), b"", {"Location": fault["to"] + quote(token)}, "text/plain")
                return True
            if fault.get("echo") == "token":
                if fault.get("encoding") == "percent":
                    token = quote(token, safe="")
                elif fault.get("encoding") == "quote":
                    token = quote(token)
                elif fault.get("encoding") == "base64":
                    token = base64.b64encode(token.encode()).decode()
                elif fault.get("encoding") == "base64-header":
                    token = base64.b64encode(auth.encode()).decode()
                body = json.dumps({"detail": f"invalid token {token}"}).encode()
                content_type = "application/json"
            else:
                headers = sorted(self.headers.items(), key=lambda item: item[0].lower() != "authorization")
                lines = [f"{k}: {v}" for k, v in headers] + [f"{self.command} {self.path} {self.request_version}"]
                body = ("<pre>" + "\n".join(lines) + "</pre>").encode()
                content_type = "text/html"
            self._send(fault.get("status", 500), body, {}, content_type)
        elif kind == "drop":
            self.close_connection = True
        else:
            self._send(500, b"unknown fault kind")
        return True

    # --- collections -----------------------------------------------------------------------
    def _serve_collection(self, name):
        with STATE.lock:
            if name not in STATE.collections:
                return self._send(404, b"<html><body>Not Found</body></html>", content_type="text/html")
            body = STATE.body_of(name)
            modified = STATE.collections[name]["modified"]
            options = dict(STATE.options.get(name, {}))
            records = STATE.collections[name]["records"]
        headers = {}
        q = parse_qs(urlsplit(self.path).query)
        if options.get("syncTokens") and records is not None:
            return self._serve_sync_tokens(name, options, q)
        if "byToken" in options:
            # Each bearer token gets its own account's records; any other request is refused.
            auth = self.headers.get("Authorization", "")
            token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
            if token not in options["byToken"]:
                return self._send(401, b'{"detail":"unknown token"}')
            records = options["byToken"][token]
            body = json.dumps(records, separators=(",", ":")).encode()
        per = options.get("perPage")
        if per and records is not None and options.get("paging") == "offset":
            # Limit/offset pages (DRF's LimitOffsetPagination): a larger limit is capped at perPage.
            limit = min(int(q.get("limit", [str(per)])[0]), per)
            offset = int(q.get("offset", ["0"])[0])
            body = json.dumps(records[offset: offset + limit], separators=(",", ":")).encode()
            if offset + limit < len(records) and options.get("links", True):
                headers["Link"] = f'</{name}?limit={limit}&offset={offset + limit}>; rel="next"'
        elif per and records is not None:
            page = int(q.get("page", ["1"])[0])
            chunk = records[(page - 1) * per: page * per]
            if page * per < len(records) and options.get("links", True):
                nxt = f"/{name}?page={page + 1}" if options.get("relativeLinks", True) else \
                    f"http://{self.headers.get('Host')}/{name}?page={page + 1}"
                headers["Link"] = f'<{nxt}>; rel="next", </{name}?page=1>; rel="first"'
            body = json.dumps(chunk, separators=(",", ":")).encode()
        if options.get("nextLink") and "Link" not in headers and not q.get("page"):
            # A next page the test chooses (another host, a file: URL), on the first page only.
            headers["Link"] = f'<{options["nextLink"]}>; rel="next"'
        if options.get("delay"):
            time.sleep(options["delay"])
        if options.get("wrapper") and records is not None:
            body = json.dumps({"meta": {"count": len(records)}, options["wrapper"]: json.loads(body),
                               **options.get("extra", {})}).encode()
        headers.update(options.get("extraHeaders", {}))
        etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
        if options.get("etagBytes"):
            etag = '"' + "e" * options["etagBytes"] + '"'
        last_modified = email.utils.formatdate(modified, usegmt=True)
        if not options.get("noValidators"):
            headers["ETag"] = etag
            headers["Last-Modified"] = last_modified
            if self.headers.get("If-None-Match") == etag:
                return self._send(304, headers=headers)
        self._send(200, body, headers)

    def _serve_sync_tokens(self, name, options, q):
        """A page of the listing or of the changes since ?syncToken= (see the module's description)."""
        with STATE.lock:
            log = STATE.change_log(name)
            current, floor, entries = log["seq"], log["expiredBefore"], list(log["log"])
            records = list(STATE.collections[name]["records"])
        if "pageToken" in q:
            try:
                since, upto, offset = json.loads(base64.urlsafe_b64decode(q["pageToken"][0].encode()))
            except Exception:
                return self._send(400, json.dumps({"error": {"code": 400, "message": "Invalid page token value."}}).encode())
        else:
            token = q.get("syncToken", [None])[0]
            if token is not None and (not token.isdigit() or int(token) > current):
                return self._send(400, json.dumps({"error": {"code": 400, "message": "Invalid sync token value."}}).encode())
            since, upto, offset = (None if token is None else int(token)), current, 0
        if since is not None and since < floor:
            gone = {"error": {"code": 410, "message": "Sync token is no longer valid, a full sync is required.",
                              "errors": [{"domain": "calendar", "reason": "fullSyncRequired",
                                          "message": "Sync token is no longer valid, a full sync is required."}]}}
            return self._send(410, json.dumps(gone).encode())
        if since is None:
            items = records
        else:
            latest = {}
            for seq, key, ident in entries:
                if since < seq <= upto:
                    latest.pop(key, None)
                    latest[key] = ident
            by_key = {json.dumps(r.get("id")): r for r in records if isinstance(r, dict)}
            items = [by_key.get(key) or {"id": ident, "status": "cancelled"} for key, ident in latest.items()]
        per = options.get("perPage") or max(len(items), 1)
        document = {options.get("wrapper", "items"): items[offset: offset + per], **options.get("extra", {})}
        if offset + per < len(items):
            document["nextPageToken"] = base64.urlsafe_b64encode(json.dumps([since, upto, offset + per]).encode()).decode()
        else:
            document["nextSyncToken"] = str(upto)
        if options.get("delay"):
            time.sleep(options["delay"])
        self._send(200, json.dumps(document).encode(), dict(options.get("extraHeaders", {})))

    def _find(self, records, ident):
        for i, r in enumerate(records):
            if str(r.get("id")) == ident:
                return i
        return None

    def _write(self, name, ident):
        body = self._read_body()
        self._record(body)
        with STATE.lock:
            delay = STATE.options.get(name, {}).get("writeDelay")
        if delay:
            time.sleep(delay)   # a slow write: recorded on arrival, applied and answered after the delay
        with STATE.lock:
            lose = STATE.faults.get(name, {}).get("kind") == "lose-answer" and \
                STATE.faults[name].get("method", self.command) == self.command
        if lose:
            # Apply the change, then drop the connection before answering (a lost answer).
            STATE.faults.pop(name, None)
            self._apply_write(name, ident, body, answer=False)
            self.close_connection = True
            return
        with STATE.lock:
            fault = STATE.faults.get(name, {})
            gateway = fault.get("kind") == "store-then-status" and fault.get("method", self.command) == self.command
            if gateway:
                STATE.faults.pop(name, None)
        if gateway:
            # A gateway in front of a server that stored the change: the server's answer is replaced by an error
            # such as a 502 or 504 (the gateway gave up waiting, or the connection to it broke).
            self._apply_write(name, ident, body, answer=False)
            return self._send(fault.get("status", 502), b"<html><body>Bad Gateway</body></html>", content_type="text/html")
        if self._apply_fault(name, body):
            return
        self._apply_write(name, ident, body)

    def _apply_write(self, name, ident, body, answer=True):
        send = self._send if answer else (lambda *a, **k: None)
        with STATE.lock:
            c = STATE.collections.setdefault(name, {"raw": None, "records": [], "modified": time.time()})
            records = c["records"]
            if self.command == "POST" and ident is None:
                record = json.loads(body)
                known = STATE.options.get(name, {}).get("knownMembers")
                unknown = [m for m in record if known is not None and m not in known]
                if unknown:
                    # A server with a fixed schema that assigns the IDs itself (Elasticsearch-like, strict DRF).
                    return send(400, json.dumps({"error": f"Unknown field [{unknown[0]}]"}).encode())
                for member in STATE.options.get(name, {}).get("dropMembers", []):
                    record.pop(member, None)      # a server that keeps only the fields it knows
                if STATE.options.get(name, {}).get("serverIds"):
                    # The server assigns its own integer IDs, whatever the client sent.
                    record["id"] = 1 + max([1000] + [r["id"] for r in records if isinstance(r.get("id"), int)])
                if "id" not in record:
                    record["id"] = str(uuid.uuid4())
                if self._find(records, str(record["id"])) is not None:
                    return send(409, json.dumps({"error": "duplicate id"}).encode())
                records.append(record)
                c["modified"] = time.time()
                STATE.note_change(name, record["id"])
                return send(201, json.dumps(record).encode())
            index = self._find(records, ident) if ident is not None else None
            item_etag = None
            if index is not None:
                item_etag = '"' + hashlib.sha1(json.dumps(records[index], sort_keys=True).encode()).hexdigest()[:12] + '"'
                wanted = self.headers.get("If-Match")
                if wanted and wanted != item_etag and self.command in ("PUT", "DELETE"):
                    return send(412, b'{"error":"precondition failed"}')
            if self.command == "GET":
                if index is None:
                    return send(404, b'{"error":"not found"}')
                return send(200, json.dumps(records[index]).encode(), {"ETag": item_etag})
            if self.command == "PUT":
                if index is None:
                    return send(404, b'{"error":"not found"}')
                record = json.loads(body)
                records[index] = record
                c["modified"] = time.time()
                STATE.note_change(name, record.get("id"))
                return send(200, json.dumps(record).encode())
            if self.command == "DELETE":
                if index is None:
                    return send(404, b'{"error":"not found"}')
                STATE.note_change(name, records[index].get("id"))
                del records[index]
                c["modified"] = time.time()
                return send(200, b"{}")
        send(405, b'{"error":"method not allowed"}')

    def _route(self):
        path = urlsplit(self.path).path
        if path.startswith("/_control/"):
            return self._control()
        segs = [s for s in path.split("/") if s]
        if not segs:
            self._record()
            return self._send(200, b'{"service":"syncserver"}')
        name = segs[0]
        if self.command in ("GET", "HEAD") and len(segs) == 1:
            self._record()
            if self._apply_fault(name):
                return
            return self._serve_collection(name)
        return self._write(name, unquote(segs[1]) if len(segs) > 1 else None)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _route


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", help="write the bound port here once listening")
    parser.add_argument("--seed", help="JSON file: {collection: [records]} to start with")
    args = parser.parse_args()
    if args.seed:
        with open(args.seed) as f:
            for name, records in json.load(f).items():
                STATE.set_records(name, records)
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(port))
        import os
        os.rename(args.port_file + ".tmp", args.port_file)
    print(f"syncserver listening on http://{args.host}:{port}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

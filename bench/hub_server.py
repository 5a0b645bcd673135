#!/usr/bin/env python3
"""A stand-in for the Hugging Face hub, for bench/hub.sh: one gated repo served from a folder.

Two listeners, as the real hub and its CDN:
  hub  GET /api/models/<org>/<name>/revision/<rev>   {"id", "sha", "private", "gated", "siblings"}
       GET /api/models/<org>/<name>/tree/<rev>?recursive=true[&cursor=...]
            a JSON array of {"type", "oid", "size", "path"[, "lfs": {"oid", "size", "pointerSize"}]},
            PAGE_SIZE entries a page, the next page in `Link: <...>; rel="next"`
       GET|HEAD /<org>/<name>/resolve/<rev>/<path>
            small (non-LFS) files: 200 with the bytes (ETag = git blob id, X-Repo-Commit);
            LFS files: 302 to the CDN with a signed query (X-Repo-Commit, X-Linked-Etag,
            X-Linked-Size), as huggingface.co does
       Every route but /_bench/stats answers 401 (X-Error-Code: GatedRepo) without
       `Authorization: Bearer <token>`: the repo is gated.
  cdn  GET|HEAD /repos/<sha256>?X-Amz-Expires=..&X-Amz-Signature=..
            the bytes, sendfile-streamed, with Accept-Ranges, a strong ETag, Last-Modified,
            `Range: bytes=a-b | a- | -n` (206 + Content-Range, 416 outside) and If-Range;
            403 without a valid signature. A request carrying Authorization is counted as a
            leaked token (the hub's token must never reach the CDN).
  GET /_bench/stats on the hub: bytes of file content each listener sent, requests, leaks.

Files over 10 MB, and *.safetensors, are LFS; their SHA-256 is read from the --sums file
(sha256sum's output) when given, else computed at start. Python 3 standard library only.
"""
import argparse
import base64
import email.utils
import hashlib
import hmac
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LFS_THRESHOLD = 10 * 1000 * 1000


class Repo:
    def __init__(self, folder, repo_id, commit, sums_file):
        self.folder = os.path.abspath(folder)
        self.repo_id = repo_id
        self.commit = commit
        self.mtime = int(time.time())
        sums = {}
        if sums_file:
            with open(sums_file) as f:
                for line in f:
                    digest, name = line.rstrip("\n").split(None, 1)
                    sums[name.lstrip("*")] = digest
        self.files = {}  # path -> dict(size, lfs, sha256, oid, pointer_size)
        self.by_sha = {}
        for dirpath, dirnames, filenames in os.walk(self.folder):
            dirnames.sort()
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, self.folder)
                size = os.path.getsize(full)
                lfs = size > LFS_THRESHOLD or rel.endswith(".safetensors")
                entry = {"full": full, "size": size, "lfs": lfs}
                if lfs:
                    sha = sums.get(rel) or file_sha256(full)
                    pointer = ("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n"
                               % (sha, size)).encode()
                    entry.update(sha256=sha, oid=git_blob_id(pointer), pointer_size=len(pointer))
                    self.by_sha[sha] = entry
                else:
                    with open(full, "rb") as f:
                        entry["oid"] = git_blob_id(f.read())
                self.files[rel] = entry

    def revisions(self):
        return {"main": self.commit, self.commit: self.commit}

    def tree_entries(self):
        dirs = set()
        for p in self.files:
            parts = p.split("/")
            for i in range(1, len(parts)):
                dirs.add("/".join(parts[:i]))
        out = [{"type": "directory", "oid": "0" * 40, "size": 0, "path": d} for d in sorted(dirs)]
        for p, e in sorted(self.files.items()):
            item = {"type": "file", "oid": e["oid"], "size": e["size"], "path": p}
            if e["lfs"]:
                item["lfs"] = {"oid": e["sha256"], "size": e["size"], "pointerSize": e["pointer_size"]}
            out.append(item)
        return out


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def git_blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.d = {"hub_bytes": 0, "cdn_bytes": 0, "hub_requests": 0, "cdn_requests": 0,
                  "hub_unauthorized": 0, "cdn_token_leaks": 0, "cdn_range_requests": 0,
                  "resolve_requests": 0, "api_requests": 0, "cdn_bad_signature": 0}

    def add(self, key, n=1):
        with self.lock:
            self.d[key] += n

    def snapshot(self):
        with self.lock:
            return dict(self.d)


def parse_range(header, size):
    """(start, end) inclusive for one `bytes=` range, None for no/ignored range, 'bad' for 416."""
    if not header:
        return None
    m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", header)
    if not m or (m.group(1) == "" and m.group(2) == ""):
        return None  # several ranges or garbage: serve the whole file, as RFC 9110 allows
    if m.group(1) == "":
        n = int(m.group(2))
        if n == 0:
            return "bad"
        return (max(0, size - n), size - 1)
    start = int(m.group(1))
    end = int(m.group(2)) if m.group(2) else size - 1
    if start >= size or end < start:
        return "bad"
    return (start, min(end, size - 1))


def make_handler(kind, repo, token, stats, secret, cdn_base, hub_base, page_size):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "bench-hub/1"

        def log_message(self, fmt, *args):  # quiet; the bench reads the stats instead
            if os.environ.get("HUB_LOG"):
                sys.stderr.write("%s %s\n" % (kind, fmt % args))

        # --- helpers ---------------------------------------------------------------------------
        def send_json(self, status, obj, headers=()):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def error(self, status, code, message):
            hdrs = [("X-Error-Message", message)]
            if code:
                hdrs.append(("X-Error-Code", code))
            self.send_json(status, {"error": message}, hdrs)

        def send_file(self, entry, etag, extra=(), counter="cdn_bytes"):
            size = entry["size"]
            rng = parse_range(self.headers.get("Range"), size)
            if rng is not None and self.headers.get("If-Range") is not None:
                if_range = self.headers.get("If-Range").strip()
                if if_range != etag and if_range != self.last_modified():
                    rng = None  # changed since: the whole file
            if rng == "bad":
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if rng is None:
                start, end, status = 0, size - 1, 200
            else:
                start, end = rng
                status = 206
                if kind == "cdn":
                    stats.add("cdn_range_requests")
            length = end - start + 1 if size else 0
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(length))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", self.last_modified())
            if status == 206:
                self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            if self.command == "HEAD" or length == 0:
                return
            self.wfile.flush()
            sock = self.connection
            with open(entry["full"], "rb") as f:
                offset, left = start, length
                while left > 0:
                    n = os.sendfile(sock.fileno(), f.fileno(), offset, min(left, 8 << 20))
                    if n == 0:
                        raise ConnectionError("file shrank while served")
                    offset += n
                    left -= n
                    stats.add(counter, n)

        def last_modified(self):
            return email.utils.formatdate(repo.mtime, usegmt=True)

        def authorized(self):
            return hmac.compare_digest(self.headers.get("Authorization", ""), "Bearer " + token)

        # --- routes ----------------------------------------------------------------------------
        def do_HEAD(self):
            self.do_GET()

        def do_GET(self):
            try:
                if kind == "hub":
                    self.hub()
                else:
                    self.cdn()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def hub(self):
            url = urllib.parse.urlsplit(self.path)
            path = url.path
            if path == "/_bench/stats":
                return self.send_json(200, stats.snapshot())
            stats.add("hub_requests")
            if path.startswith("/api/models/"):
                stats.add("api_requests")
                return self.api(path[len("/api/models/"):], url.query)
            parts = path[1:].split("/", 4)  # org, name, resolve, rev, file
            if len(parts) < 5 or parts[2] != "resolve":
                return self.error(404, "RepoNotFound", "Repository not found")
            stats.add("resolve_requests")
            if not self.access(parts[0] + "/" + parts[1]):
                return
            commit = repo.revisions().get(urllib.parse.unquote(parts[3]))
            if commit is None:
                return self.error(404, "RevisionNotFound", "Invalid rev id: " + parts[3])
            rel = urllib.parse.unquote(parts[4])
            entry = repo.files.get(rel)
            if entry is None:
                return self.error(404, "EntryNotFound", "Entry not found")
            if entry["lfs"]:
                expires = str(int(time.time()) + 3600)
                sig = hmac.new(secret, (entry["sha256"] + expires).encode(), "sha256").hexdigest()
                location = "%s/repos/%s?X-Amz-Expires=%s&X-Amz-Signature=%s" % (
                    cdn_base, entry["sha256"], expires, sig)
                self.send_response(302)
                self.send_header("Location", location)
                self.send_header("X-Repo-Commit", commit)
                self.send_header("X-Linked-Etag", '"%s"' % entry["sha256"])
                self.send_header("X-Linked-Size", str(entry["size"]))
                self.send_header("ETag", '"%s"' % entry["oid"])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_file(entry, '"%s"' % entry["oid"], [("X-Repo-Commit", commit)], "hub_bytes")

        def access(self, repo_id):
            if repo_id != repo.repo_id:
                # The hub does not tell an anonymous caller whether a repo exists.
                self.error(404 if self.authorized() else 401, "RepoNotFound", "Repository not found")
                return False
            if not self.authorized():
                stats.add("hub_unauthorized")
                self.error(401, "GatedRepo",
                           "Access to model %s is restricted. You must have access to it and be"
                           " authenticated to access it. Please log in." % repo_id)
                return False
            return True

        def api(self, rest, query):
            parts = rest.split("/", 3)  # org, name, revision|tree, rev
            if len(parts) < 4:
                return self.error(404, None, "Sorry, we can't find the page you are looking for.")
            if not self.access(parts[0] + "/" + parts[1]):
                return
            rev = urllib.parse.unquote(parts[3])
            commit = repo.revisions().get(rev)
            if commit is None:
                return self.error(404, "RevisionNotFound", "Invalid rev id: " + rev)
            if parts[2] == "revision":
                return self.send_json(200, {
                    "_id": hashlib.md5(repo.repo_id.encode()).hexdigest()[:24],
                    "id": repo.repo_id, "modelId": repo.repo_id, "author": repo.repo_id.split("/")[0],
                    "sha": commit, "private": False, "gated": "manual", "disabled": False,
                    "lastModified": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(repo.mtime)),
                    "library_name": "transformers", "tags": ["safetensors"],
                    "siblings": [{"rfilename": p} for p in sorted(repo.files)]})
            if parts[2] != "tree":
                return self.error(404, None, "Sorry, we can't find the page you are looking for.")
            q = urllib.parse.parse_qs(query)
            if q.get("recursive", ["false"])[0] not in ("true", "1"):
                return self.error(400, None, "bench hub lists recursively only")
            entries = repo.tree_entries()
            start = 0
            if "cursor" in q:
                try:
                    start = int(base64.urlsafe_b64decode(q["cursor"][0].encode()).decode())
                except Exception:
                    return self.error(400, None, "Invalid cursor")
            page = entries[start:start + page_size]
            headers = []
            if start + page_size < len(entries):
                cursor = base64.urlsafe_b64encode(str(start + page_size).encode()).decode()
                headers.append(("Link", '<%s/api/models/%s/tree/%s?recursive=true&cursor=%s>; rel="next"'
                                % (hub_base, repo.repo_id, parts[3], urllib.parse.quote(cursor))))
            self.send_json(200, page, headers)

        def cdn(self):
            stats.add("cdn_requests")
            if self.headers.get("Authorization"):
                stats.add("cdn_token_leaks")
            url = urllib.parse.urlsplit(self.path)
            m = re.fullmatch(r"/repos/([0-9a-f]{64})", url.path)
            entry = repo.by_sha.get(m.group(1)) if m else None
            if entry is None:
                return self.error(404, None, "NoSuchKey")
            q = urllib.parse.parse_qs(url.query)
            expires = q.get("X-Amz-Expires", [""])[0]
            want = hmac.new(secret, (entry["sha256"] + expires).encode(), "sha256").hexdigest()
            if (not hmac.compare_digest(q.get("X-Amz-Signature", [""])[0], want)
                    or not expires.isdigit() or int(expires) < time.time()):
                stats.add("cdn_bad_signature")
                return self.error(403, None, "AccessDenied: signature does not match or expired")
            self.send_file(entry, '"%s"' % entry["sha256"])

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--sums", help="sha256sum output for the folder's files (else hashed at start)")
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--hub-port", type=int, required=True)
    ap.add_argument("--cdn-port", type=int, required=True)
    ap.add_argument("--page-size", type=int, default=2)
    a = ap.parse_args()
    with open(a.token_file) as f:
        token = f.read().strip()
    repo = Repo(a.model_dir, a.repo, a.commit, a.sums)
    stats = Stats()
    secret = os.urandom(32)
    hub_base = "http://%s:%d" % (a.host, a.hub_port)
    cdn_base = "http://%s:%d" % (a.host, a.cdn_port)
    servers = []
    for kind, port in (("hub", a.hub_port), ("cdn", a.cdn_port)):
        s = ThreadingHTTPServer((a.host, port),
                                make_handler(kind, repo, token, stats, secret, cdn_base, hub_base,
                                             a.page_size))
        s.daemon_threads = True
        servers.append(s)
    for s in servers[1:]:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("hub %s cdn %s: %s at %s, %d files" % (hub_base, cdn_base, a.repo, a.commit, len(repo.files)),
          file=sys.stderr, flush=True)
    try:
        servers[0].serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

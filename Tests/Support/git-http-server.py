#!/usr/bin/env python3
"""A loopback smart-HTTP git server for sortedvault's git helper tests.

Usage: python3 git-http-server.py --project-root DIR --introspect URL --client-id ID
           --client-secret-file FILE --port-file FILE

Serves `git http-backend` (CGI) for the repositories under DIR on 127.0.0.1 only. Every request
must carry HTTP Basic credentials whose password is an access token the OAuth2 provider's RFC 7662
introspection endpoint says is active; anything else gets 401 with a Basic challenge, which is what
makes git ask its credential helpers. When it listens it writes its port to --port-file
(atomically). Counters at GET /test/stats: {"accepted": n, "rejected": n}.
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import threading
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATS = {"accepted": 0, "rejected": 0}
LOCK = threading.Lock()


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--project-root", required=True)
    p.add_argument("--introspect", required=True)
    p.add_argument("--client-id", required=True)
    p.add_argument("--client-secret-file", required=True)
    p.add_argument("--port-file", required=True)
    return p.parse_args()


ARGS = parse_args()
with open(ARGS.client_secret_file) as f:
    CLIENT_SECRET = f.read().strip()


def token_is_active(token):
    """Asks the provider (RFC 7662) whether the access token is active now."""
    body = urllib.parse.urlencode({"token": token}).encode()
    request = urllib.request.Request(ARGS.introspect, data=body, method="POST")
    credentials = base64.b64encode(("%s:%s" % (ARGS.client_id, CLIENT_SECRET)).encode()).decode()
    request.add_header("Authorization", "Basic " + credentials)
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read()).get("active") is True
    except Exception:  # the provider down or confused: fail closed
        return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/test/stats":
            with LOCK:
                body = json.dumps(STATS).encode()
            return self.answer(200, [("Content-Type", "application/json")], body)
        self.git()

    def do_POST(self):
        self.git()

    def answer(self, status, headers, body):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authorized(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return None
        try:
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except Exception:
            return None
        return user if password and token_is_active(password) else None

    def git(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        user = self.authorized()
        with LOCK:
            STATS["accepted" if user else "rejected"] += 1
        if not user:
            return self.answer(401, [("WWW-Authenticate", 'Basic realm="sortedvault test"')], b"token required\n")
        path, _, query = self.path.partition("?")
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": ARGS.project_root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": urllib.parse.unquote(path),
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": user,
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        result = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=environment)
        head, _, payload = result.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = result.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.answer(status, headers, payload)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
temporary = ARGS.port_file + ".tmp"
with open(temporary, "w") as f:
    f.write(str(server.server_address[1]))
os.rename(temporary, ARGS.port_file)
print("READY port=%d" % server.server_address[1], flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)

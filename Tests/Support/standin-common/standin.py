"""What the GoTrue and Firebase Auth stand-ins share: state on disk, test controls, JWTs, the server.

Each stand-in is one script (gotrue-standin/gotrue.py, firebase-standin/firebase.py) that builds an
`App` with its own routes and calls `serve(app)`. Nothing here knows either protocol.

Test controls (loopback only, the same paths and bodies as oauth-provider/provider.py):
  GET  /test/stats         counters: token_requests {password, refresh_token, other}, refresh_responses
                           {"<status>": n}, refresh_tokens {token id: refresh requests made with it}
                           (a token id is a hash, as oauth-provider/provider.py's), revocations, signups
  POST /test/delay         {"seconds": x}  hold every refresh answer x s after its state is committed
                           (never more than 600 s); a new value applies to answers already held
  POST /test/fail          {"count": n, "status": 503}  answer the next n token requests (password and
                           refresh) with that status and the server's own error shape, unprocessed
  POST /test/revoke-all    revoke every session / refresh token (what each server does for it: see its doc)
  POST /test/disable-user  {"email": e}  ban (GoTrue) / disable (Firebase) that user
  POST /test/enable-user   {"email": e}  undo it
  POST /test/delete-user   {"email": e}  delete the user and its sessions

State lives in STATE_DIR/state.json, rewritten atomically (os.replace) after every change, so a
restart with the same state dir keeps every token valid (the "provider down, provider back" tests).
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import secrets
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MAX_BODY = 64 * 1024  # both upstream servers cap bodies too; ours are tiny


def parse_args(description, extra=None):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--state-dir", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--access-token-seconds", type=int, default=3600)
    p.add_argument("--quiet", action="store_true", help="do not log requests to stderr")
    if extra:
        extra(p)
    return p.parse_args()


# ---- JWTs -------------------------------------------------------------------------------------

def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _compact(header: dict, claims: dict) -> bytes:
    h = b64url(json.dumps(header, separators=(",", ":")).encode())
    c = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{h}.{c}".encode("ascii")


def hs256_jwt(claims: dict, secret: bytes) -> str:
    signing_input = _compact({"alg": "HS256", "typ": "JWT"}, claims)
    signature = hmac.new(secret, signing_input, hashlib.sha256).digest()
    return signing_input.decode("ascii") + "." + b64url(signature)


def hs256_verify(token: str, secret: bytes):
    """The claims of a well-signed HS256 JWT (no time checks), or None."""
    try:
        h, c, s = token.split(".")
        header = json.loads(b64url_decode(h))
        if header.get("alg") != "HS256":
            return None
        expected = hmac.new(secret, f"{h}.{c}".encode("ascii"), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, b64url_decode(s)):
            return None
        claims = json.loads(b64url_decode(c))
        return claims if isinstance(claims, dict) else None
    except (ValueError, UnicodeDecodeError):
        return None


def rs256_jwt(claims: dict, private_key, kid: str) -> str:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    signing_input = _compact({"alg": "RS256", "kid": kid, "typ": "JWT"}, claims)
    signature = private_key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    return signing_input.decode("ascii") + "." + b64url(signature)


# ---- passwords ------------------------------------------------------------------------------

def hash_password(password: str) -> str:
    salt = secrets.token_hex(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt), 20_000).hex()
    return f"{salt}${digest}"


def check_password(password: str, stored: str) -> bool:
    salt, digest = stored.split("$", 1)
    candidate = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt), 20_000).hex()
    return hmac.compare_digest(candidate, digest)


# ---- state and controls ---------------------------------------------------------------------

class Store:
    """A JSON document under one lock, saved atomically after each change."""

    def __init__(self, state_dir: str, initial: dict):
        self.path = os.path.join(state_dir, "state.json")
        self.lock = threading.RLock()
        if os.path.exists(self.path):
            with open(self.path) as f:
                self.data = json.load(f)
        else:
            self.data = initial
            self.save()

    def save(self):
        tmp = f"{self.path}.{os.getpid()}.{threading.get_ident()}"
        with open(tmp, "w") as f:
            json.dump(self.data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


class Controls:
    """Counters and fault injection, shared by both stand-ins (mirrors provider.py)."""

    def __init__(self):
        self.lock = threading.Lock()
        # Notified whenever the delay changes, so answers already held see the new value.
        self.delay_changed = threading.Condition(self.lock)
        self.stats = {
            "token_requests": {"password": 0, "refresh_token": 0, "other": 0},
            "refresh_responses": {},
            "refresh_tokens": {},
            "revocations": 0,
            "signups": 0,
        }
        self.delay = 0.0
        self.fail_count = 0
        self.fail_status = 503

    def count(self, key, sub=None):
        with self.lock:
            if sub is None:
                self.stats[key] += 1
            else:
                self.stats[key][sub] = self.stats[key].get(sub, 0) + 1

    def refresh_presented(self, token):
        """Counts one refresh request made with `token`, by its id: a hash, never the token."""
        if not isinstance(token, str):
            return
        used = hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:16]
        with self.lock:
            self.stats["refresh_tokens"][used] = self.stats["refresh_tokens"].get(used, 0) + 1

    def take_failure(self):
        """The status to fail this token request with, or None."""
        with self.lock:
            if self.fail_count > 0:
                self.fail_count -= 1
                return self.fail_status
            return None

    def refresh_answered(self, status, failed):
        """Counts the answer, then holds it until the delay has passed since now, re-reading the
        delay whenever a test changes it (as provider.py's `_hold`)."""
        since = time.monotonic()
        with self.delay_changed:
            key = str(status)
            self.stats["refresh_responses"][key] = self.stats["refresh_responses"].get(key, 0) + 1
            while not failed:
                left = min(self.delay, 600.0) - (time.monotonic() - since)
                if left <= 0:
                    return
                self.delay_changed.wait(left)

    def handle(self, method, path, body, user_control):
        """Answers /test/…; `user_control(action, email)` does revoke-all/disable/enable/delete."""
        if path == "/test/stats" and method == "GET":
            with self.lock:
                return 200, json.loads(json.dumps(self.stats))
        if method != "POST":
            return 405, {"error": "method_not_allowed"}
        data = parse_json_object(body) or {}
        if path == "/test/delay":
            with self.lock:
                self.delay = max(0.0, float(data.get("seconds", 0) or 0))
                self.delay_changed.notify_all()
                return 200, {"delay": self.delay}
        if path == "/test/fail":
            with self.lock:
                self.fail_count = max(0, int(data.get("count", 1)))
                self.fail_status = int(data.get("status", 503))
                return 200, {"count": self.fail_count, "status": self.fail_status}
        action = {"/test/revoke-all": "revoke-all", "/test/disable-user": "disable",
                  "/test/enable-user": "enable", "/test/delete-user": "delete"}.get(path)
        if action is None:
            return 404, {"error": "not_found"}
        return user_control(action, data.get("email"))


def parse_json_object(body: bytes):
    try:
        data = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


# ---- HTTP -------------------------------------------------------------------------------------

class Request:
    def __init__(self, method, target, headers, body):
        parts = urlsplit(target)
        self.method = method
        self.path = parts.path
        self.query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self.headers = headers
        self.body = body

    def header(self, name):
        return self.headers.get(name)


class Response:
    def __init__(self, status, body=None, headers=None):
        self.status = status
        self.headers = dict(headers or {})
        if body is None:
            self.payload = b""
        else:
            self.payload = json.dumps(body, separators=(",", ":")).encode()  # as Go and Google write it
            self.headers.setdefault("Content-Type", "application/json")


def serve(name, args, app, on_bound=None):
    """Runs `app(request) -> Response` on 127.0.0.1 until SIGTERM; writes STATE_DIR/port when ready.

    `on_bound(port)` runs once the port is known (the issuers name it)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _handle(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self.send_error(413)
                return
            body = self.rfile.read(length) if length else b""
            response = app(Request(self.command, self.path, self.headers, body))
            self.send_response(response.status)
            for key, value in response.headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(response.payload)))
            self.end_headers()
            self.wfile.write(response.payload)

        do_GET = do_POST = do_PUT = do_DELETE = _handle

        def log_request(self, code="-", size="-"):
            if not args.quiet:
                route = self.path.split("?", 1)[0]  # never log query strings (they hold keys)
                print(f"{name}: {self.command} {route} {code}", file=sys.stderr, flush=True)

        def log_message(self, format, *a):
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True  # a restart binds the same port at once

        def handle_error(self, request, client_address):
            print(f"{name}: connection error: {sys.exc_info()[1]!r}", file=sys.stderr, flush=True)

    server = Server(("127.0.0.1", args.port), Handler)
    port = server.server_address[1]
    if on_bound:
        on_bound(port)
    state_dir = os.path.abspath(args.state_dir)
    tmp = os.path.join(state_dir, f".port.{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, os.path.join(state_dir, "port"))

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    print(f"READY port={port}", flush=True)
    while not stop.wait(1.0):
        pass
    server.shutdown()
    server.server_close()
    print(f"{name}: stopped", file=sys.stderr, flush=True)

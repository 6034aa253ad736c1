#!/usr/bin/env python3
"""A real OAuth2 provider for sortedvault's tests: Django + django-oauth-toolkit (DOT).

Usage: .venv/bin/python3 Tests/Support/oauth-provider/provider.py --state-dir DIR
           [--port N] [--access-token-seconds S] [--device-interval S]

Listens on 127.0.0.1 only. When ready it writes the port to DIR/port (atomically) and prints
"READY port=N". State (users, client, tokens) lives in DIR/provider.sqlite3, so a restart with
the same state dir keeps every token valid.

Fixtures: user "ada" / "correct horse battery"; confidential client "sorted-app" with secret
"sorted-app-secret" (stored hashed, as DOT does by default), grant type password (+ refresh);
a second confidential client "sorted-other" / "sorted-other-secret" (another audience).

OpenID Connect is on: issuer http://127.0.0.1:PORT/o, discovery at
/o/.well-known/openid-configuration, keys at /o/.well-known/jwks.json, an RSA signing key made at
first start (kept in DIR/oidc-key.pem, so a restart keeps it). With scope `openid`, the password
grant and every refresh answer carry an RS256 `id_token` (`sub` is ada's user id).

Browser sign-in: the public client "sorted-cli" (no secret) has the authorization-code grant with
PKCE required; like the desktop clients of large providers, it accepts any http://127.0.0.1:PORT/PATH
(or http://localhost:PORT/PATH) redirect (RFC 8252 §7.3 loopback, with any path: the CLI's listener picks a random one). GET
/o/authorize/ shows Django's real login form (/accounts/login/, ada / correct horse battery) and then
DOT's consent page; with scope `openid` the code's token answer carries an id token with the
request's nonce.

Device sign-in (RFC 8628): the public client "sorted-device" has DOT's device grant. POST
/o/device-authorization/ answers a device code, the user code and verification_uri
http://127.0.0.1:PORT/o/device/ (verification_uri_complete carries ?user_code=…), polling every
--device-interval seconds (DEVICE_FLOW_INTERVAL, 5 unless given); the user signs in there, enters
the code and accepts or denies on DOT's own pages. A poll of a code past its expiry answers
expired_token (DOT checks expiry only when the code is entered; this provider checks it at every
poll, as RFC 8628 §3.5 asks).

Endpoints: DOT's POST /o/token/, /o/revoke_token/, /o/introspect/ (the client authenticates
with HTTP Basic or client_secret_post), plus loopback test controls:
  GET  /test/stats       counters (see STATS below)
  POST /test/rotate-key  a new RSA signing key (new kid); the old one stays in the JWKS as
                         inactive (OIDC_RSA_PRIVATE_KEYS_INACTIVE) and signs nothing more
  POST /test/oidc        {"discovery_padding": bytes, "discovery_delay": s, "discovery_issuer": str}
                         pad the discovery document, hold it, or make it name another issuer
  POST /test/delay       {"seconds": x}  hold every refresh_token answer x s after it is committed;
                         a new value applies to answers already held too, so 0 releases them
  POST /test/fail        {"count": n, "status": 503}  answer the next n /o/token/ requests with
                         that status and {"error": "temporarily_unavailable"}, unprocessed
  POST /test/revoke-all  delete every access and refresh token
  POST /test/revocation  {"down": bool}  answer /o/revoke_token/ with 503 temporarily_unavailable,
                         unprocessed, until turned off again
  GET  /test/tokens      {"access": n, "refresh": n}: the access tokens DOT holds and the refresh
                         tokens it has not revoked (revoking deletes an access token)
STATS, besides the counters: "refresh_tokens" {token id: refresh_token requests made with it},
"revoked" {token id: revocations answered 200}, "issued" [token ids of every sign-in and refresh answer];
a token id is the first 16 hex digits of the token's SHA-256 (no token ever leaves in clear).
and a protected resource, as an app's API would be:
  GET  /api/me           {"username": ...} for a bearer token DOT accepts (scope read), else 403
  POST /test/trickle     {"count": n, "interval": s, "bytes": k}  answer the next n /o/token/
                         requests with a 503 whose body comes one byte every s seconds, k bytes in
                         all (headers at once): a provider that is slow but never silent
  POST /test/nonce       {"mode": "other" | "missing" | ""}  id tokens from now on carry another
                         nonce than the request's, or none (a provider that mixes sign-ins up)
  POST /test/device      {"slow_down": n, "expire": bool}  answer the next n device-code polls
                         with slow_down, unprocessed; expire every pending device code now
                         (GET /test/stats lists "device_polls": each poll's time.monotonic())
"""
import argparse
import hashlib
import json
import os
import signal
import socketserver
import sys
import threading
import time
import warnings
from urllib.parse import parse_qs
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer

CLIENT_ID = "sorted-app"
CLI_CLIENT_ID = "sorted-cli"
DEVICE_CLIENT_ID = "sorted-device"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
CLIENT_SECRET = "sorted-app-secret"
OTHER_CLIENT_ID = "sorted-other"
OTHER_CLIENT_SECRET = "sorted-other-secret"
USERNAME = "ada"
PASSWORD = "correct horse battery"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--state-dir", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--access-token-seconds", type=int, default=3600)
    p.add_argument("--device-interval", type=int, default=5)
    p.add_argument("--quiet", action="store_true", help="do not log requests to stderr")
    return p.parse_args()


ARGS = parse_args()
STATE_DIR = os.path.abspath(ARGS.state_dir)
os.makedirs(STATE_DIR, exist_ok=True)

# DOT warns (DeprecationWarning) whenever the password grant is used (RFC 9700); the tests use
# that grant on purpose.
warnings.filterwarnings("ignore", category=DeprecationWarning)

from django.conf import settings  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402


# ---- OpenID Connect signing keys ----------------------------------------------------------------

KEY_FILE = os.path.join(STATE_DIR, "oidc-key.pem")
INACTIVE_KEYS_FILE = os.path.join(STATE_DIR, "oidc-keys-inactive.json")


def _new_rsa_pem():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _write_private(path, text):
    tmp = f"{path}.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _load_keys():
    if not os.path.exists(KEY_FILE):
        _write_private(KEY_FILE, _new_rsa_pem())
    with open(KEY_FILE) as f:
        active = f.read()
    inactive = []
    if os.path.exists(INACTIVE_KEYS_FILE):
        with open(INACTIVE_KEYS_FILE) as f:
            inactive = json.load(f)
    return active, inactive


ACTIVE_KEY, INACTIVE_KEYS = _load_keys()

settings.configure(
    DEBUG=False,
    SECRET_KEY="sortedvault-test-provider-not-a-secret",
    ALLOWED_HOSTS=["127.0.0.1", "localhost"],
    ROOT_URLCONF=__name__,
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "django.contrib.sessions", "oauth2_provider"],
    MIDDLEWARE=[
        "django.middleware.common.CommonMiddleware",  # enforces ALLOWED_HOSTS
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
    ],
    LOGIN_URL="/accounts/login/",
    # The login form and a plain base for DOT's consent page (no stylesheet from the network).
    TEMPLATES=[{
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "OPTIONS": {
            "context_processors": ["django.template.context_processors.request",
                                   "django.contrib.auth.context_processors.auth"],
            "loaders": [
                ("django.template.loaders.locmem.Loader", {
                    "registration/login.html": (
                        "<!doctype html><title>Sign in</title><h1>Sign in</h1>"
                        "<form method=post id=login>{% csrf_token %}{{ form.as_p }}"
                        "<input type=hidden name=next value=\"{{ next }}\">"
                        "<input type=submit id=signin value=\"Sign in\"></form>"),
                    "oauth2_provider/base.html": (
                        "<!doctype html><title>Authorize</title>{% block content %}{% endblock %}"),
                }),
                "django.template.loaders.app_directories.Loader",
            ],
        },
    }],
    USE_TZ=True,
    TIME_ZONE="UTC",
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    DATABASES={
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.path.join(STATE_DIR, "provider.sqlite3"),
            # Threads write concurrently: take the write lock at BEGIN and wait for it.
            "OPTIONS": {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    },
    # Real salted PBKDF2 (for the user's password and the hashed client secret), with fewer
    # rounds than Django's 1,000,000 so that each token request does not burn ~0.25 s of CPU.
    PASSWORD_HASHERS=[f"{__name__}.TestPBKDF2PasswordHasher"],
    # Quiet: no Django/DOT log records on stderr (the request handler logs one line a request).
    LOGGING={
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"null": {"class": "logging.NullHandler"}},
        "root": {"handlers": ["null"]},
        "loggers": {"django": {"handlers": ["null"], "propagate": False}},
    },
    OAUTH2_PROVIDER={
        "SCOPES": {"openid": "OpenID Connect", "read": "Read secrets", "write": "Write secrets"},
        "DEFAULT_SCOPES": ["read", "write"],
        "ACCESS_TOKEN_EXPIRE_SECONDS": ARGS.access_token_seconds,
        "REFRESH_TOKEN_EXPIRE_SECONDS": None,
        "ROTATE_REFRESH_TOKEN": True,
        "REFRESH_TOKEN_REUSE_PROTECTION": True,
        "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
        "CLIENT_SECRET_HASHER": "default",
        "OAUTH2_GRANT_TYPES_SUPPORTED": ["password", "refresh_token", "authorization_code",
                                         "urn:ietf:params:oauth:grant-type:device_code"],
        "DEVICE_FLOW_INTERVAL": ARGS.device_interval,
        "PKCE_REQUIRED": True,
        "OAUTH2_VALIDATOR_CLASS": f"{__name__}.TestValidator",
        "OIDC_ENABLED": True,
        "OIDC_RSA_PRIVATE_KEY": ACTIVE_KEY,
        "OIDC_RSA_PRIVATE_KEYS_INACTIVE": INACTIVE_KEYS,
        "OIDC_SERVER_CLASS": f"{__name__}.PasswordIDTokenServer",
        "ID_TOKEN_EXPIRE_SECONDS": ARGS.access_token_seconds,
    },
)

import django  # noqa: E402

django.setup()


# ---- a migrated template database -------------------------------------------------------------
# `migrate` on a fresh SQLite file takes about 2.5 of a fresh start's 3.8 s, and the suite starts a
# provider some hundred times. A fresh state dir therefore starts from a copy of a database migrated
# once (with the fixtures' user and clients), kept in the checkout's .build/test-cache and named by
# what shapes it: this file, Django's and DOT's versions. `migrate` still runs (a no-op on the copy),
# so a stale template could not go unnoticed.

def _template_path():
    import oauth2_provider
    key = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as source:
        key.update(source.read())
    key.update(("django " + django.get_version() + " dot " + oauth2_provider.__version__).encode())
    here = os.path.abspath(__file__)  # REPOSITORY/Tests/Support/oauth-provider/provider.py
    repository = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(here))))
    return os.path.join(repository, ".build", "test-cache", "oauth-provider-%s.sqlite3" % key.hexdigest()[:16])


def _sqlite_copy(source, target):
    """`source` copied through SQLite's backup API (consistent while another connection has it
    open), to a temporary file renamed into place: a reader sees the whole copy or none."""
    import sqlite3
    temporary = "%s.%d.tmp" % (target, os.getpid())
    with sqlite3.connect(source) as src, sqlite3.connect(temporary) as dst:
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE")
    os.replace(temporary, target)


TEMPLATE = _template_path()
DATABASE = settings.DATABASES["default"]["NAME"]
FRESH_DATABASE = not os.path.exists(DATABASE)
if FRESH_DATABASE and os.path.exists(TEMPLATE):
    _sqlite_copy(TEMPLATE, DATABASE)
    FRESH_DATABASE = False

from django.contrib.auth.hashers import PBKDF2PasswordHasher  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import close_old_connections, transaction  # noqa: E402
from django.http import JsonResponse, StreamingHttpResponse  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402
from oauth2_provider.decorators import protected_resource  # noqa: E402
from oauth2_provider.models import AccessToken, Application, RefreshToken, get_device_grant_model  # noqa: E402
from datetime import datetime, timedelta, timezone as dt_timezone  # noqa: E402
from django.urls import include  # noqa: E402
from oauth2_provider.settings import oauth2_settings  # noqa: E402
from oauth2_provider.views import (  # noqa: E402
    ConnectDiscoveryInfoView, IntrospectTokenView, JwksInfoView, RevokeTokenView, TokenView,
)
from oauthlib.oauth2.rfc6749.grant_types import ResourceOwnerPasswordCredentialsGrant  # noqa: E402
from oauthlib.openid import Server as OpenIDServer  # noqa: E402
from oauthlib.openid.connect.core.grant_types.base import GrantTypeBase as OpenIDGrantTypeBase  # noqa: E402


class TestPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 20_000  # same algorithm name; verification reads the rounds from the hash


class PasswordGrantWithIDToken(OpenIDGrantTypeBase):
    """The password grant with an id token when `openid` is asked for. oauthlib's OpenID server adds
    id tokens to the code, implicit, hybrid and refresh grants only; an app that signs its users in
    with a password still gets one from most real providers."""

    def __init__(self, request_validator=None, **kwargs):
        self.proxy_target = ResourceOwnerPasswordCredentialsGrant(request_validator=request_validator, **kwargs)
        self.register_token_modifier(self._add_id_token)

    # oauthlib calls a password-grant token modifier with the token only; the id token needs the
    # request too, so it is kept per thread for the duration of the call.
    def create_token_response(self, request, token_handler):
        PASSWORD_GRANT_CALL.args = (token_handler, request)
        try:
            return self.proxy_target.create_token_response(request, token_handler)
        finally:
            PASSWORD_GRANT_CALL.args = None

    def _add_id_token(self, token):
        token_handler, request = PASSWORD_GRANT_CALL.args
        return self.add_id_token(token, token_handler, request)


PASSWORD_GRANT_CALL = threading.local()


from oauth2_provider.oauth2_validators import OAuth2Validator  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402


class TestValidator(OAuth2Validator):
    """DOT's validator, with the desktop-client redirect rule for sorted-cli and the nonce control."""

    def validate_redirect_uri(self, client_id, redirect_uri, request, *args, **kwargs):
        if client_id == CLI_CLIENT_ID:
            parts = urlsplit(redirect_uri)
            return (parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost") and "@" not in parts.netloc
                    and "#" not in redirect_uri and not parts.query and parts.path.startswith("/"))
        return super().validate_redirect_uri(client_id, redirect_uri, request, *args, **kwargs)

    def get_default_redirect_uri(self, client_id, request, *args, **kwargs):
        return None if client_id == CLI_CLIENT_ID else super().get_default_redirect_uri(client_id, request, *args, **kwargs)

    def validate_device_code(self, client_id, code, request, *args, **kwargs):
        """oauthlib 4 asks the validator for the device code's state, which DOT 3.4.1's does not
        answer yet; DOT's token view has already answered every state but approved."""
        from oauthlib.oauth2.rfc8628.grant_types import DeviceCodeGrant

        model = get_device_grant_model()
        grant = model.objects.filter(device_code=code, client_id=client_id).first()
        if grant is None:
            return None
        if grant.is_expired():
            return DeviceCodeGrant.DEVICE_CODE_EXPIRED
        if grant.status == grant.DENIED:
            return DeviceCodeGrant.DEVICE_CODE_DENIED
        if grant.status != grant.AUTHORIZED:
            return DeviceCodeGrant.DEVICE_CODE_PENDING
        request.user = grant.user
        request.scopes = grant.scope.split()
        return DeviceCodeGrant.DEVICE_CODE_AUTHORIZED

    def finalize_id_token(self, id_token, token, token_handler, request):
        with LOCK:
            mode = CONTROL.get("nonce_mode") or ""
        if mode == "other":
            id_token["nonce"] = "not-the-nonce-of-this-sign-in"
        elif mode == "missing":
            id_token.pop("nonce", None)
            request.nonce = None
        return super().finalize_id_token(id_token, token, token_handler, request)


class PasswordIDTokenServer(OpenIDServer):
    def __init__(self, request_validator, *args, **kwargs):
        super().__init__(request_validator, *args, **kwargs)
        self.password_grant = PasswordGrantWithIDToken(request_validator)
        self._grant_types["password"] = self.password_grant


# ---- test-control state -------------------------------------------------------------------

LOCK = threading.Lock()
STATS = {
    "token_requests": {"password": 0, "refresh_token": 0, "other": 0},
    "refresh_responses": {},
    "revocations": 0,
    "refresh_tokens": {},
    "revoked": {},
    "issued": [],
}
# Notified whenever CONTROL["delay"] changes, so answers already held see the new value.
DELAY_CHANGED = threading.Condition(LOCK)
CONTROL = {"revocation_down": False, "delay": 0.0, "fail_count": 0, "fail_status": 503, "trickle_count": 0, "trickle_interval": 2.0, "trickle_bytes": 30}


def _token_id(token):
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:16]


def _form_field(request, name):
    try:
        return parse_qs(request.body.decode("utf-8", "replace")).get(name, [""])[0]
    except Exception:
        return ""


def _hold(seconds_since):
    """Holds the answer until CONTROL["delay"] seconds have passed since `seconds_since` (monotonic),
    re-reading the delay whenever a test changes it; never longer than 600 s."""
    with DELAY_CHANGED:
        while True:
            left = min(CONTROL["delay"], 600.0) - (time.monotonic() - seconds_since)
            if left <= 0:
                return
            DELAY_CHANGED.wait(left)


def _grant_type(request):
    try:
        return parse_qs(request.body.decode("utf-8", "replace")).get("grant_type", [""])[0]
    except Exception:
        return ""


_dot_token = TokenView.as_view()
_dot_revoke = RevokeTokenView.as_view()
_dot_introspect = IntrospectTokenView.as_view()  # authenticates the client by Basic or body


from oauth2_provider.views.device import DeviceAuthorizationView  # noqa: E402


class DeviceAuthorization(DeviceAuthorizationView):
    """DOT's device authorization view. The oauthlib installed beside DOT 3.4.1 adds `scope` to the
    answer, which DOT's DeviceCodeResponse does not take (a 500); it is left out."""

    def create_device_authorization_response(self, request):
        headers, response, status = super().create_device_authorization_response(request)
        if status == 200 and isinstance(response, dict):
            response.pop("scope", None)
        return headers, response, status


def _device_poll(request):
    """Records a device-code poll; answers slow_down when the control asks for it, else marks an
    expired code expired (so that DOT answers expired_token) and lets DOT answer."""
    with LOCK:
        STATS["device_polls"].append(time.monotonic())
        if CONTROL["slow_down_count"] > 0:
            CONTROL["slow_down_count"] -= 1
            return JsonResponse({"error": "slow_down"}, status=400)
    code = request.POST.get("device_code", "")
    grant = get_device_grant_model().objects.filter(device_code=code).first()
    if grant is not None:
        grant.is_expired()
    return None


@csrf_exempt
def token(request):
    grant = _grant_type(request) if request.method == "POST" else ""
    if grant == DEVICE_GRANT:
        early = _device_poll(request)
        if early is not None:
            return early
    with LOCK:
        if request.method == "POST":
            key = grant if grant in ("password", "refresh_token") else "other"
            STATS["token_requests"][key] += 1
            if grant == "refresh_token":
                used = _token_id(_form_field(request, "refresh_token"))
                STATS["refresh_tokens"][used] = STATS["refresh_tokens"].get(used, 0) + 1
        fail = None
        if CONTROL["fail_count"] > 0:
            CONTROL["fail_count"] -= 1
            fail = CONTROL["fail_status"]
        trickle = None
        if CONTROL["trickle_count"] > 0:
            CONTROL["trickle_count"] -= 1
            trickle = (CONTROL["trickle_interval"], CONTROL["trickle_bytes"])
    if trickle is not None:
        return StreamingHttpResponse(_trickle(*trickle), status=503, content_type="application/json")
    if fail is not None:
        response = JsonResponse({"error": "temporarily_unavailable"}, status=fail)
    else:
        response = _dot_token(request)  # DOT commits the rotated tokens before returning
        if grant in ("password", "refresh_token") and response.status_code == 200:
            body = json.loads(response.content)
            with LOCK:
                STATS["issued"] += [_token_id(body[k]) for k in ("access_token", "refresh_token") if k in body]
    if grant == "refresh_token":
        answered = time.monotonic()
        with LOCK:
            code = str(response.status_code)
            STATS["refresh_responses"][code] = STATS["refresh_responses"].get(code, 0) + 1
            delay = CONTROL["delay"]
        if fail is None and delay > 0:
            close_old_connections()
            _hold(answered)
    return response


def _trickle(interval, count):
    """One space every `interval` seconds, `count` in all: each chunk is flushed on its own."""
    for _ in range(count):
        yield b" "
        time.sleep(interval)


@csrf_exempt
def revoke(request):
    down = False
    if request.method == "POST":
        with LOCK:
            STATS["revocations"] += 1
            down = CONTROL["revocation_down"]
    if down:
        return JsonResponse({"error": "temporarily_unavailable"}, status=503)
    response = _dot_revoke(request)
    if request.method == "POST" and response.status_code == 200:
        revoked = _token_id(_form_field(request, "token"))
        with LOCK:
            STATS["revoked"][revoked] = STATS["revoked"].get(revoked, 0) + 1
    return response


# ---- OpenID Connect documents -------------------------------------------------------------------

STATS.update({"discovery_requests": 0, "jwks_requests": 0})
CONTROL.update({"discovery_padding": 0, "discovery_delay": 0.0, "discovery_issuer": None})
_dot_discovery = ConnectDiscoveryInfoView.as_view()


def discovery(request):
    with LOCK:
        STATS["discovery_requests"] += 1
        padding, delay, issuer = CONTROL["discovery_padding"], CONTROL["discovery_delay"], CONTROL["discovery_issuer"]
    response = _dot_discovery(request)
    if response.status_code == 200:
        data = json.loads(response.content)
        # DOT's OpenID document omits RFC 7009 revocation; real providers (Google, Keycloak…) list it.
        data["revocation_endpoint"] = request.build_absolute_uri("/o/revoke_token/")
        data["device_authorization_endpoint"] = request.build_absolute_uri("/o/device-authorization/")
        if padding:
            data["x_padding"] = "x" * padding
        if issuer:
            data["issuer"] = issuer
        response = JsonResponse(data)
    if delay > 0:
        close_old_connections()
        time.sleep(delay)
    return response


_dot_jwks = JwksInfoView.as_view()


def jwks(request):
    with LOCK:
        STATS["jwks_requests"] += 1
    return _dot_jwks(request)


def _loopback_only(view):
    @csrf_exempt
    def wrapped(request):
        if request.META.get("REMOTE_ADDR") not in ("127.0.0.1", "::1"):
            return JsonResponse({"error": "forbidden"}, status=403)
        return view(request)

    return wrapped


def _json_body(request):
    try:
        data = json.loads(request.body or b"{}")
        return data if isinstance(data, dict) else {}
    except ValueError:
        return {}


@_loopback_only
def test_stats(request):
    with LOCK:
        return JsonResponse(json.loads(json.dumps(STATS)))


@_loopback_only
def test_delay(request):
    if request.method != "POST":
        return JsonResponse({"error": "method_not_allowed"}, status=405)
    seconds = float(_json_body(request).get("seconds", 0) or 0)
    with DELAY_CHANGED:
        CONTROL["delay"] = max(0.0, seconds)
        DELAY_CHANGED.notify_all()
        return JsonResponse({"delay": CONTROL["delay"]})


@_loopback_only
def test_revocation(request):
    if request.method != "POST":
        return JsonResponse({"error": "method_not_allowed"}, status=405)
    with LOCK:
        CONTROL["revocation_down"] = bool(_json_body(request).get("down", False))
        return JsonResponse({"down": CONTROL["revocation_down"]})


@_loopback_only
def test_tokens(request):
    return JsonResponse({"access": AccessToken.objects.count(),
                         "refresh": RefreshToken.objects.filter(revoked__isnull=True).count()})


@_loopback_only
def test_fail(request):
    if request.method != "POST":
        return JsonResponse({"error": "method_not_allowed"}, status=405)
    body = _json_body(request)
    with LOCK:
        CONTROL["fail_count"] = max(0, int(body.get("count", 1)))
        CONTROL["fail_status"] = int(body.get("status", 503))
        return JsonResponse({"count": CONTROL["fail_count"], "status": CONTROL["fail_status"]})


@_loopback_only
def test_trickle(request):
    if request.method != "POST":
        return JsonResponse({"error": "method_not_allowed"}, status=405)
    body = _json_body(request)
    with LOCK:
        CONTROL["trickle_count"] = max(0, int(body.get("count", 1)))
        CONTROL["trickle_interval"] = max(0.0, float(body.get("interval", 2.0)))
        CONTROL["trickle_bytes"] = max(1, int(body.get("bytes", 30)))
        return JsonResponse({"count": CONTROL["trickle_count"]})


@_loopback_only
def test_revoke_all(request):
    if request.method != "POST":
        return JsonResponse({"error": "method_not_allowed"}, status=405)
    with transaction.atomic():
        refresh = RefreshToken.objects.all().delete()[0]
        access = AccessToken.objects.all().delete()[0]
    return JsonResponse({"deleted_refresh_tokens": refresh, "deleted_access_tokens": access})


@_loopback_only
def test_rotate_key(request):
    global ACTIVE_KEY, INACTIVE_KEYS
    if request.method != "POST":
        return JsonResponse({"error": "method_not_allowed"}, status=405)
    with LOCK:
        INACTIVE_KEYS = [ACTIVE_KEY] + INACTIVE_KEYS
        ACTIVE_KEY = _new_rsa_pem()
        _write_private(INACTIVE_KEYS_FILE, json.dumps(INACTIVE_KEYS))
        _write_private(KEY_FILE, ACTIVE_KEY)
        settings.OAUTH2_PROVIDER["OIDC_RSA_PRIVATE_KEY"] = ACTIVE_KEY
        settings.OAUTH2_PROVIDER["OIDC_RSA_PRIVATE_KEYS_INACTIVE"] = INACTIVE_KEYS
        oauth2_settings.reload()
    from oauth2_provider.utils import jwk_from_pem

    return JsonResponse({"kid": jwk_from_pem(ACTIVE_KEY).thumbprint(), "inactive": len(INACTIVE_KEYS)})


@_loopback_only
def test_nonce(request):
    if request.method != "POST":
        return JsonResponse({"error": "method_not_allowed"}, status=405)
    with LOCK:
        CONTROL["nonce_mode"] = str(_json_body(request).get("mode") or "")
        return JsonResponse({"mode": CONTROL["nonce_mode"]})


STATS.update({"device_polls": []})
CONTROL.update({"slow_down_count": 0})


@_loopback_only
def test_device(request):
    if request.method != "POST":
        return JsonResponse({"error": "method_not_allowed"}, status=405)
    body = _json_body(request)
    with LOCK:
        CONTROL["slow_down_count"] = max(0, int(body.get("slow_down", 0)))
    expired = 0
    if body.get("expire"):
        model = get_device_grant_model()
        expired = model.objects.filter(status=model.AUTHORIZATION_PENDING).update(
            expires=datetime.now(tz=dt_timezone.utc) - timedelta(seconds=1))
    return JsonResponse({"slow_down": CONTROL["slow_down_count"], "expired": expired})


@_loopback_only
def test_oidc(request):
    if request.method != "POST":
        return JsonResponse({"error": "method_not_allowed"}, status=405)
    body = _json_body(request)
    with LOCK:
        CONTROL["discovery_padding"] = max(0, int(body.get("discovery_padding", 0)))
        CONTROL["discovery_delay"] = max(0.0, float(body.get("discovery_delay", 0) or 0))
        CONTROL["discovery_issuer"] = body.get("discovery_issuer") or None
        return JsonResponse({k: CONTROL[k] for k in ("discovery_padding", "discovery_delay", "discovery_issuer")})


# ---- a protected resource ------------------------------------------------------------------------

STATS.update({"api_requests": 0})


@protected_resource(scopes=["read"])
def api_me(request):
    """Who the bearer token belongs to: DOT checks the token (known, not expired, not revoked, scope
    read) before this runs and answers 403 otherwise."""
    with LOCK:
        STATS["api_requests"] += 1
    return JsonResponse({"username": request.resource_owner.username})


from django.contrib.auth.views import LoginView  # noqa: E402

urlpatterns = [
    path("api/me", api_me),
    path("accounts/login/", LoginView.as_view()),
    path("o/token/", token),
    path("o/device-authorization/", DeviceAuthorization.as_view()),
    path("o/revoke_token/", revoke),
    path("o/introspect/", _dot_introspect),
    path("o/.well-known/openid-configuration", discovery),
    path("o/.well-known/jwks.json", jwks),
    # DOT's own routes under their namespace, so that the discovery document can name them; the
    # routes above come first and win.
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("test/rotate-key", test_rotate_key),
    path("test/oidc", test_oidc),
    path("test/stats", test_stats),
    path("test/delay", test_delay),
    path("test/fail", test_fail),
    path("test/revoke-all", test_revoke_all),
    path("test/revocation", test_revocation),
    path("test/tokens", test_tokens),
    path("test/trickle", test_trickle),
    path("test/nonce", test_nonce),
    path("test/device", test_device),
]


# ---- database ---------------------------------------------------------------------------------

def prepare_database():
    call_command("migrate", verbosity=0, interactive=False, skip_checks=True)
    with transaction.atomic():
        user = User.objects.filter(username=USERNAME).first()
        if user is None:
            user = User.objects.create_user(USERNAME, password=PASSWORD)
        for name, client_id, secret in [("sortedvault tests", CLIENT_ID, CLIENT_SECRET),
                                        ("another app", OTHER_CLIENT_ID, OTHER_CLIENT_SECRET)]:
            if Application.objects.filter(client_id=client_id).exists():
                continue
            # Saved in plaintext here; DOT's ClientSecretField hashes it on save (make_password),
            # and authenticates clients with check_password against the hash.
            Application.objects.create(
                name=name,
                client_id=client_id,
                client_secret=secret,
                hash_client_secret=True,
                client_type=Application.CLIENT_CONFIDENTIAL,
                authorization_grant_type=Application.GRANT_PASSWORD,
                redirect_uris="",
                user=user,
                algorithm=Application.RS256_ALGORITHM,  # id tokens signed with the OIDC RSA key
            )
        if not Application.objects.filter(client_id=CLI_CLIENT_ID).exists():
            # A public client: no secret, PKCE required (PKCE_REQUIRED), consent asked every time.
            Application.objects.create(
                name="sortedvault CLI",
                client_id=CLI_CLIENT_ID,
                client_secret="",
                client_type=Application.CLIENT_PUBLIC,
                authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
                redirect_uris="http://127.0.0.1/callback",
                skip_authorization=False,
                user=user,
                algorithm=Application.RS256_ALGORITHM,
            )
        if not Application.objects.filter(client_id=DEVICE_CLIENT_ID).exists():
            # A public client with the device grant (RFC 8628): a CLI on a machine without a browser.
            Application.objects.create(
                name="sortedvault on a headless machine",
                client_id=DEVICE_CLIENT_ID,
                client_secret="",
                client_type=Application.CLIENT_PUBLIC,
                authorization_grant_type=Application.GRANT_DEVICE_CODE,
                redirect_uris="",
                user=user,
            )


# ---- HTTP server ------------------------------------------------------------------------------

class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True  # SO_REUSEADDR: a restart can bind the same port at once

    def handle_error(self, request, client_address):
        # e.g. the client was killed while its answer was held: one line, no traceback.
        print(f"provider: connection error: {sys.exc_info()[1]!r}", file=sys.stderr, flush=True)


class QuietServerHandler(ServerHandler):
    def log_exception(self, exc_info):
        print(f"provider: error: {exc_info[1]!r}", file=sys.stderr, flush=True)


class TerseRequestHandler(WSGIRequestHandler):
    def log_request(self, code="-", size="-"):
        if not ARGS.quiet:
            route = self.path.split("?", 1)[0]  # never log query strings (could hold tokens)
            print(f"provider: {self.command} {route} {code}", file=sys.stderr, flush=True)

    def log_message(self, format, *args):
        pass

    def handle(self):
        # wsgiref's handle() with our ServerHandler (terse errors).
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536:
            self.send_error(414)
            return
        if not self.parse_request():
            return
        handler = QuietServerHandler(self.rfile, self.wfile, self.get_stderr(), self.get_environ(),
                                     multithread=True)
        handler.request_handler = self
        handler.run(self.server.get_app())


def main():
    prepare_database()
    if FRESH_DATABASE and not os.path.exists(TEMPLATE):
        os.makedirs(os.path.dirname(TEMPLATE), mode=0o700, exist_ok=True)
        _sqlite_copy(DATABASE, TEMPLATE)
    from django.core.wsgi import get_wsgi_application

    app = get_wsgi_application()
    server = ThreadingWSGIServer(("127.0.0.1", ARGS.port), TerseRequestHandler)
    server.set_app(app)
    port = server.server_address[1]
    # The page where the user enters the code is this server's, whose port is known only now.
    settings.OAUTH2_PROVIDER["OAUTH_DEVICE_VERIFICATION_URI"] = f"http://127.0.0.1:{port}/o/device/"
    settings.OAUTH2_PROVIDER["OAUTH_DEVICE_VERIFICATION_URI_COMPLETE"] = f"http://127.0.0.1:{port}/o/device/?user_code={{user_code}}"
    oauth2_settings.reload()

    tmp = os.path.join(STATE_DIR, f".port.{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, os.path.join(STATE_DIR, "port"))

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
    print("provider: stopped", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()

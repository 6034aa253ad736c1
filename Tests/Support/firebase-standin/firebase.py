#!/usr/bin/env python3
"""A stand-in for Firebase Auth's REST API (identitytoolkit v1 + securetoken v1), for sortedvault's tests.

Usage: .venv/bin/python3 Tests/Support/firebase-standin/firebase.py --state-dir DIR [--port N]
           [--access-token-seconds S] [--rotate-refresh-tokens] [--legacy-email-errors] [--quiet]

Reached through the Auth emulator's URL scheme (the real host becomes the first path segment):
  POST /identitytoolkit.googleapis.com/v1/accounts:signUp?key=K              JSON {email, password, returnSecureToken}
  POST /identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=K  JSON {email, password, returnSecureToken}
  POST /securetoken.googleapis.com/v1/token?key=K   form or JSON {grant_type: refresh_token, refresh_token}
  GET  /www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com   the id tokens' keys
Listens on 127.0.0.1 only; writes DIR/port and prints "READY port=N". The Web API key is in DIR/api-key,
the project id in DIR/project-id. User ada@example.com / "correct horse battery" exists.
Refresh tokens do not rotate (securetoken answers the one it was given) unless --rotate-refresh-tokens.
Test controls as in standin-common/standin.py: /test/revoke-all revokes every user's refresh tokens
(as the Admin SDK's revokeRefreshTokens: TOKEN_EXPIRED), /test/disable-user (USER_DISABLED),
/test/delete-user (USER_NOT_FOUND). POST /test/enroll-mfa {"email": e} gives that user a second factor:
signInWithPassword then answers as identitytoolkit does for such a user (200 with mfaPendingCredential
and mfaInfo, no idToken; docs: "Multi-factor authentication" of the REST reference).
"""
import os
import secrets
import sys
import time
import uuid
from urllib.parse import parse_qs

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "standin-common"))
import standin  # noqa: E402
from standin import Response  # noqa: E402

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402


def _extra(p):
    p.add_argument("--rotate-refresh-tokens", action="store_true",
                   help="answer a new refresh token on each refresh (the old one stays valid)")
    p.add_argument("--legacy-email-errors", action="store_true",
                   help="EMAIL_NOT_FOUND / INVALID_PASSWORD instead of INVALID_LOGIN_CREDENTIALS")


ARGS = standin.parse_args(__doc__.splitlines()[0], _extra)
os.makedirs(ARGS.state_dir, exist_ok=True)
PROJECT_ID = "sortedvault-test"
PROJECT_NUMBER = "1234567890"
IDENTITYTOOLKIT = "/identitytoolkit.googleapis.com/v1/"
SECURETOKEN = "/securetoken.googleapis.com/v1/token"
JWKS_PATH = "/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"


def _new_user(email, password):
    return {"localId": uuid.uuid4().hex[:28], "email": email, "password": standin.hash_password(password),
            "disabled": False, "validSince": 0.0, "lastLoginAt": None}


def _initial_state():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    ada = _new_user("ada@example.com", "correct horse battery")
    api_key = "AIzaSy" + secrets.token_urlsafe(25)[:33]
    return {"api_key": api_key, "signing_key": pem, "kid": secrets.token_hex(20),
            "users": {ada["localId"]: ada}, "refresh_tokens": {}}


STORE = standin.Store(ARGS.state_dir, _initial_state())
CONTROLS = standin.Controls()
SIGNING_KEY = serialization.load_pem_private_key(STORE.data["signing_key"].encode(), password=None)
for name, value in (("api-key", STORE.data["api_key"]), ("project-id", PROJECT_ID)):
    with open(os.path.join(ARGS.state_dir, name), "w") as f:
        f.write(value)


# ---- errors: Google's error object ------------------------------------------------------------

class GoogleError(Exception):
    def __init__(self, message, code=400, status=None, reason="invalid"):
        super().__init__(message)
        self.message, self.code, self.status, self.reason = message, code, status, reason

    def response(self):
        body = {"code": self.code, "message": self.message,
                "errors": [{"message": self.message, "domain": "global", "reason": self.reason}]}
        if self.status:
            body["status"] = self.status
        return Response(self.code, {"error": body})


def identitytoolkit_error(message):
    # The REST reference's error example: code, message, errors[] (no status).
    return GoogleError(message)


def securetoken_error(message):
    # securetoken answers carry the canonical status too: {"code":400,"message":"TOKEN_EXPIRED","status":"INVALID_ARGUMENT"}
    return GoogleError(message, status="INVALID_ARGUMENT")


# ---- tokens -----------------------------------------------------------------------------------

def id_token(user, auth_time):
    now = int(time.time())
    claims = {
        "iss": f"https://securetoken.google.com/{PROJECT_ID}", "aud": PROJECT_ID, "auth_time": int(auth_time),
        "user_id": user["localId"], "sub": user["localId"], "iat": now, "exp": now + ARGS.access_token_seconds,
        "email": user["email"], "email_verified": False,
        "firebase": {"identities": {"email": [user["email"]]}, "sign_in_provider": "password"},
    }
    return standin.rs256_jwt(claims, SIGNING_KEY, STORE.data["kid"])


def new_refresh_token(user, auth_time):
    token = "AMf-vB" + secrets.token_urlsafe(96)
    STORE.data["refresh_tokens"][token] = {"localId": user["localId"], "issued_at": time.time(), "auth_time": auth_time}
    return token


def public_jwks():
    numbers = SIGNING_KEY.public_key().public_numbers()

    def b64int(n):
        return standin.b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))

    return {"keys": [{"kty": "RSA", "alg": "RS256", "use": "sig", "kid": STORE.data["kid"],
                      "n": b64int(numbers.n), "e": b64int(numbers.e)}]}


# ---- handlers -------------------------------------------------------------------------------

def find_user_by_email(email):
    return next((u for u in STORE.data["users"].values() if u["email"] == email), None)


def json_body(request):
    data = standin.parse_json_object(request.body)
    if data is None:
        raise GoogleError("Invalid JSON payload received.", status="INVALID_ARGUMENT")
    return data


def sign_up(request):
    body = json_body(request)
    email, password = body.get("email"), body.get("password")
    CONTROLS.count("signups")
    if not email:
        raise identitytoolkit_error("MISSING_EMAIL")
    if "@" not in email:
        raise identitytoolkit_error("INVALID_EMAIL")
    if not password:
        raise identitytoolkit_error("MISSING_PASSWORD")
    if len(password) < 6:
        raise identitytoolkit_error("WEAK_PASSWORD : Password should be at least 6 characters")
    with STORE.lock:
        if find_user_by_email(email):
            raise identitytoolkit_error("EMAIL_EXISTS")
        user = _new_user(email, password)
        STORE.data["users"][user["localId"]] = user
        now = time.time()
        answer = {"kind": "identitytoolkit#SignupNewUserResponse", "idToken": id_token(user, now), "email": email,
                  "refreshToken": new_refresh_token(user, now), "expiresIn": str(ARGS.access_token_seconds),
                  "localId": user["localId"]}
        STORE.save()
    return Response(200, answer)


def sign_in_with_password(request):
    body = json_body(request)
    email, password = body.get("email"), body.get("password")
    if email is None:
        raise identitytoolkit_error("MISSING_EMAIL")
    if not password:
        raise identitytoolkit_error("MISSING_PASSWORD")
    with STORE.lock:
        user = find_user_by_email(email)
        if user is None:
            raise identitytoolkit_error("EMAIL_NOT_FOUND" if ARGS.legacy_email_errors else "INVALID_LOGIN_CREDENTIALS")
        if user["disabled"]:
            raise identitytoolkit_error("USER_DISABLED")
        if not standin.check_password(password, user["password"]):
            raise identitytoolkit_error("INVALID_PASSWORD" if ARGS.legacy_email_errors else "INVALID_LOGIN_CREDENTIALS")
        if user.get("mfaEnrolled"):
            return Response(200, {"localId": user["localId"], "email": email,
                                  "mfaPendingCredential": secrets.token_urlsafe(32),
                                  "mfaInfo": [{"mfaEnrollmentId": "mfa-" + user["localId"], "displayName": "phone",
                                               "phoneInfo": "+*******1234", "enrolledAt": "2026-01-01T00:00:00Z"}]})
        now = time.time()
        user["lastLoginAt"] = now
        answer = {"kind": "identitytoolkit#VerifyPasswordResponse", "localId": user["localId"], "email": email,
                  "displayName": "", "idToken": id_token(user, now), "registered": True,
                  "refreshToken": new_refresh_token(user, now), "expiresIn": str(ARGS.access_token_seconds)}
        STORE.save()
    return Response(200, answer)


def securetoken_params(request):
    """Form (the reference's Content-Type) or JSON; JSON also takes the proto's camelCase names."""
    content_type = (request.header("Content-Type") or "").split(";")[0].strip().lower()
    if content_type == "application/json":
        body = json_body(request)
        return body.get("grant_type", body.get("grantType")), body.get("refresh_token", body.get("refreshToken"))
    form = {k: v[0] for k, v in parse_qs(request.body.decode("utf-8", "replace"), keep_blank_values=True).items()}
    return form.get("grant_type"), form.get("refresh_token")


def grant_token(request):
    grant_type, presented = securetoken_params(request)
    if not grant_type:
        raise securetoken_error("MISSING_GRANT_TYPE")
    if grant_type != "refresh_token":
        raise securetoken_error("INVALID_GRANT_TYPE")
    if not presented:
        raise securetoken_error("MISSING_REFRESH_TOKEN")
    CONTROLS.refresh_presented(presented)
    with STORE.lock:
        record = STORE.data["refresh_tokens"].get(presented)
        if record is None:
            raise securetoken_error("INVALID_REFRESH_TOKEN")
        user = STORE.data["users"].get(record["localId"])
        if user is None:
            raise securetoken_error("USER_NOT_FOUND")
        if user["disabled"]:
            raise securetoken_error("USER_DISABLED")
        if record["issued_at"] < user["validSince"]:
            raise securetoken_error("TOKEN_EXPIRED")
        token = presented
        if ARGS.rotate_refresh_tokens:
            token = new_refresh_token(user, record["auth_time"])
            STORE.save()
        idt = id_token(user, record["auth_time"])
    return Response(200, {"access_token": idt, "expires_in": str(ARGS.access_token_seconds), "token_type": "Bearer",
                          "refresh_token": token, "id_token": idt, "user_id": user["localId"],
                          "project_id": PROJECT_NUMBER})


def user_control(action, email):
    with STORE.lock:
        data = STORE.data
        if action == "revoke-all":  # Admin SDK revokeRefreshTokens: validSince = now for every user
            now = time.time()
            for user in data["users"].values():
                user["validSince"] = now
            STORE.save()
            return 200, {"revoked_users": len(data["users"])}
        user = find_user_by_email(email)
        if user is None:
            return 404, {"error": "no such user"}
        if action in ("disable", "enable"):
            user["disabled"] = action == "disable"
        else:
            del data["users"][user["localId"]]
        STORE.save()
        return 200, {"email": email, "action": action}


def api_key_refusal(request):
    """Google's API front end: the Web API key in ?key= (or the X-Goog-Api-Key header)."""
    key = request.query.get("key") or request.header("X-Goog-Api-Key")
    if not key:
        return GoogleError("Method doesn't allow unregistered callers (callers without established identity). "
                           "Please use API Key or other form of API consumer identity to call this API.",
                           code=403, status="PERMISSION_DENIED", reason="forbidden").response()
    if not secrets.compare_digest(key.encode(), STORE.data["api_key"].encode()):
        return GoogleError("API key not valid. Please pass a valid API key.", status="INVALID_ARGUMENT",
                           reason="badRequest").response()
    return None


def app(request):
    if request.path == "/test/enroll-mfa" and request.method == "POST":
        with STORE.lock:
            user = find_user_by_email(json_body(request).get("email"))
            if user is None:
                return Response(404, {"error": "no such user"})
            user["mfaEnrolled"] = True
            STORE.save()
        return Response(200, {"enrolled": True})
    if request.path.startswith("/test/"):
        status, body = CONTROLS.handle(request.method, request.path, request.body, user_control)
        return Response(status, body)
    if request.method == "GET" and request.path == JWKS_PATH:
        return Response(200, public_jwks())
    routes = {IDENTITYTOOLKIT + "accounts:signUp": (sign_up, None),
              IDENTITYTOOLKIT + "accounts:signInWithPassword": (sign_in_with_password, "password"),
              SECURETOKEN: (grant_token, "refresh_token")}
    handler, kind = routes.get(request.path, (None, None))
    if handler is None or request.method != "POST":
        return GoogleError("Not Found", code=404, status="NOT_FOUND", reason="notFound").response()
    refused = api_key_refusal(request)
    if refused:
        return refused
    failed = None
    if kind:
        CONTROLS.count("token_requests", kind)
        failed = CONTROLS.take_failure()
    if failed is not None:
        response = GoogleError("The service is currently unavailable.", code=failed, status="UNAVAILABLE",
                               reason="backendError").response()
    else:
        try:
            response = handler(request)
        except GoogleError as e:
            response = e.response()
    if kind == "refresh_token":
        CONTROLS.refresh_answered(response.status, failed is not None)
    return response


if __name__ == "__main__":
    standin.serve("firebase", ARGS, app)

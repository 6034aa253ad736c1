#!/usr/bin/env python3
"""A stand-in for Supabase Auth (GoTrue v2.196.0) behind Supabase's API gateway, for sortedvault's tests.

Usage: .venv/bin/python3 Tests/Support/gotrue-standin/gotrue.py --state-dir DIR [--port N]
           [--access-token-seconds S] [--reuse-interval S] [--error-format current|legacy] [--quiet]

Listens on 127.0.0.1 only; writes DIR/port and prints "READY port=N" when ready. The anon key (the
`apikey` every request needs) is in DIR/anon-key. User ada@example.com / "correct horse battery" exists.

Routes (paths and behaviour from supabase/auth v2.196.0, see docs/stand-ins.md for each source line):
  POST /auth/v1/signup                          {"email","password"} (autoconfirm: answers a session)
  POST /auth/v1/token?grant_type=password       {"email","password"}
  POST /auth/v1/token?grant_type=refresh_token  {"refresh_token"}; the body is read as JSON only
  GET  /auth/v1/user                            Authorization: Bearer <access token>
  POST /auth/v1/logout?scope=global|local|others  Authorization: Bearer <access token> → 204
  GET  /auth/v1/authorize?provider=github&redirect_to=URL&code_challenge=C&code_challenge_method=s256
       the PKCE flow (no apikey: the gateway lets authorize and callback through, as Supabase's does):
       302 to a stand-in for GitHub (/github/login/oauth/authorize), which approves at once as the
       GitHub user ada@example.com and sends the browser to /auth/v1/callback, which 302s to
       redirect_to with ?code=AUTH_CODE (or &code= after its own query)
  POST /auth/v1/token?grant_type=pkce           {"auth_code","code_verifier"}: S256 checked; once only
plus the test controls of standin-common/standin.py. /test/revoke-all deletes every session (so
refresh → refresh_token_not_found, bearer → session_not_found); /test/disable-user bans the user.
"""
import base64
import hashlib
import os
import re
import secrets
import sys
import time
import uuid
from datetime import datetime, timezone

sys.dont_write_bytecode = True  # no __pycache__ in the worktree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "standin-common"))
import standin  # noqa: E402
from standin import Response  # noqa: E402


def _extra(p):
    p.add_argument("--reuse-interval", type=int, default=0,
                   help="GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL (GoTrue's default 0; hosted Supabase 10)")
    p.add_argument("--error-format", choices=["current", "legacy"], default="current",
                   help="legacy: GoTrue before error codes (v2.145): refresh errors as invalid_grant")


ARGS = standin.parse_args(__doc__.splitlines()[0], _extra)
os.makedirs(ARGS.state_dir, exist_ok=True)
PASSWORD_USER = ("ada@example.com", "correct horse battery")
API_VERSION_2024 = "2024-01-01"


def _now_iso(t=None):
    return datetime.fromtimestamp(t if t is not None else time.time(), timezone.utc).isoformat().replace("+00:00", "Z")


def _initial_state():
    secret = secrets.token_hex(32)
    anon = standin.hs256_jwt({"iss": "supabase-demo", "role": "anon", "exp": 4102444800}, secret.encode())
    ada = _new_user(*PASSWORD_USER)
    return {"jwt_secret": secret, "anon_key": anon, "users": {ada["id"]: ada}, "sessions": {}, "refresh_tokens": {}}


def _new_user(email, password):
    now = _now_iso()
    return {"id": str(uuid.uuid4()), "email": email, "password": standin.hash_password(password),
            "created_at": now, "confirmed_at": now, "banned_until": None, "last_sign_in_at": None}


STORE = standin.Store(ARGS.state_dir, _initial_state())
CONTROLS = standin.Controls()
with open(os.path.join(ARGS.state_dir, "anon-key"), "w") as f:
    f.write(STORE.data["anon_key"])
SECRET = STORE.data["jwt_secret"].encode()
ISSUER = ["http://127.0.0.1/auth/v1"]  # GOTRUE_JWT_ISSUER: set to the real base URL once bound


# ---- errors ---------------------------------------------------------------------------------

class HTTPError(Exception):
    """apierrors.HTTPError; `oauth` marks the refresh-grant errors that were OAuthError before v2.145."""

    def __init__(self, status, code, msg, oauth=False):
        super().__init__(msg)
        self.status, self.code, self.msg, self.oauth = status, code, msg, oauth


def error_response(request, e):
    # internal/api/errors.go handleResponseErrorHTTP: the 2024-01-01 shape when the client asks for it.
    if ARGS.error_format == "legacy":
        if e.oauth:  # apierrors.OAuthError, always 400 (handleResponseErrorOAuth)
            return Response(400, {"error": "invalid_grant", "error_description": e.msg})
        return Response(e.status, {"code": e.status, "msg": e.msg})
    headers = {"x-sb-error-code": e.code}
    if (request.header("X-Supabase-Api-Version") or "") >= API_VERSION_2024:
        headers["X-Supabase-Api-Version"] = API_VERSION_2024
        return Response(e.status, {"code": e.code, "message": e.msg}, headers)
    return Response(e.status, {"code": e.status, "error_code": e.code, "msg": e.msg}, headers)


def bad_request(code, msg, oauth=False):
    return HTTPError(400, code, msg, oauth)


# ---- model ------------------------------------------------------------------------------------

def user_json(user):
    return {
        "id": user["id"], "aud": "authenticated", "role": "authenticated", "email": user["email"],
        "email_confirmed_at": user["confirmed_at"], "phone": "", "confirmed_at": user["confirmed_at"],
        "last_sign_in_at": user["last_sign_in_at"], "app_metadata": {"provider": "email", "providers": ["email"]},
        "user_metadata": {}, "identities": [], "created_at": user["created_at"], "updated_at": user["created_at"],
        "is_anonymous": False, **({"banned_until": user["banned_until"]} if user["banned_until"] else {}),
    }


def is_banned(user):
    return user["banned_until"] is not None and user["banned_until"] > _now_iso()


def new_refresh_token(session_id, user_id, parent):
    data = STORE.data
    token = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(12))  # legacy format
    data["refresh_tokens"][token] = {"session_id": session_id, "user_id": user_id, "parent": parent,
                                     "revoked": False, "updated_at": time.time(), "seq": len(data["refresh_tokens"])}
    return token


def token_response(user, session_id, refresh_token):
    """tokens.AccessTokenResponse with an access token like GenerateAccessToken's."""
    now = int(time.time())
    exp = now + ARGS.access_token_seconds
    claims = {
        "iss": ISSUER[0], "sub": user["id"], "aud": "authenticated", "exp": exp,
        "iat": now, "email": user["email"], "phone": "", "app_metadata": {"provider": "email", "providers": ["email"]},
        "user_metadata": {}, "role": "authenticated", "aal": "aal1",
        "amr": [{"method": "password", "timestamp": now}], "session_id": session_id, "is_anonymous": False,
    }
    return {"access_token": standin.hs256_jwt(claims, SECRET), "token_type": "bearer",
            "expires_in": ARGS.access_token_seconds, "expires_at": exp, "refresh_token": refresh_token,
            "user": user_json(user)}


def issue_session(user):
    session_id = str(uuid.uuid4())
    STORE.data["sessions"][session_id] = {"user_id": user["id"], "created_at": time.time()}
    user["last_sign_in_at"] = _now_iso()
    return token_response(user, session_id, new_refresh_token(session_id, user["id"], None))


def find_user_by_email(email):
    return next((u for u in STORE.data["users"].values() if u["email"] == email), None)


# ---- handlers -------------------------------------------------------------------------------

def json_params(request):
    """retrieveRequestParams (internal/api/helpers.go): the body is JSON, whatever its Content-Type."""
    data = standin.parse_json_object(request.body)
    if data is None:
        text = request.body.decode("utf-8", "replace").lstrip()
        reason = (f"invalid character '{text[0]}' looking for beginning of value" if text
                  else "unexpected end of JSON input")  # encoding/json's words for the usual cases
        raise bad_request("bad_json", f"Could not parse request body as JSON: {reason}")
    return data


def signup(request):
    params = json_params(request)
    email, password = params.get("email") or "", params.get("password") or ""
    if not password:
        raise bad_request("validation_failed", "Signup requires a valid password")
    if not email or "@" not in email:
        raise bad_request("validation_failed", "Unable to validate email address: invalid format")
    CONTROLS.count("signups")
    with STORE.lock:
        if find_user_by_email(email):  # Mailer.Autoconfirm: signup.go answers 422 user_already_exists
            raise HTTPError(422, "user_already_exists", "User already registered")
        user = _new_user(email, password)
        STORE.data["users"][user["id"]] = user
        answer = issue_session(user)
        STORE.save()
    return Response(200, answer)


def password_grant(request):
    params = json_params(request)
    email, password = params.get("email") or "", params.get("password") or ""
    if not email:
        raise bad_request("validation_failed", "missing email or phone")
    with STORE.lock:
        user = find_user_by_email(email)
        if user is None or not standin.check_password(password, user["password"]):
            raise bad_request("invalid_credentials", "Invalid login credentials")
        if is_banned(user):
            raise bad_request("user_banned", "User is banned")
        answer = issue_session(user)
        STORE.save()
    return Response(200, answer)


LEGACY_TOKEN = re.compile(r"^[a-z0-9]{12}$")


def refresh_grant(request):
    """tokens.Service.RefreshTokenGrant (internal/tokens/service.go), legacy 12-character tokens."""
    params = json_params(request)
    presented = params.get("refresh_token")
    CONTROLS.refresh_presented(presented)
    if not isinstance(presented, str) or not LEGACY_TOKEN.match(presented):  # RefreshTokenGrantParams.Validate
        raise bad_request("validation_failed", "Refresh token is not valid")
    with STORE.lock:
        data = STORE.data
        token = data["refresh_tokens"].get(presented)
        if token is None:
            raise bad_request("refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found", oauth=True)
        user = data["users"][token["user_id"]]
        if is_banned(user):
            raise bad_request("user_banned", "Invalid Refresh Token: User Banned", oauth=True)
        if token["session_id"] not in data["sessions"]:
            del data["refresh_tokens"][presented]
            STORE.save()
            raise bad_request("session_not_found", "Invalid Refresh Token: No Valid Session Found", oauth=True)
        issued = None
        if token["revoked"]:
            active = [t for t, r in data["refresh_tokens"].items()
                      if r["session_id"] == token["session_id"] and not r["revoked"]]
            active.sort(key=lambda t: data["refresh_tokens"][t]["seq"])
            if active and data["refresh_tokens"][active[-1]]["parent"] == presented:
                issued = active[-1]  # the client lost the answer to its last refresh: hand it back
            elif time.time() > token["updated_at"] + ARGS.reuse_interval:
                for record in data["refresh_tokens"].values():  # RevokeTokenFamily (by session)
                    if record["session_id"] == token["session_id"] and not record["revoked"]:
                        record["revoked"], record["updated_at"] = True, time.time()
                STORE.save()  # storage.NewCommitWithError: the revocation is committed with the error
                raise bad_request("refresh_token_already_used", "Invalid Refresh Token: Already Used", oauth=True)
        if issued is None:  # GrantRefreshTokenSwap
            token["revoked"], token["updated_at"] = True, time.time()
            issued = new_refresh_token(token["session_id"], user["id"], presented)
        answer = token_response(user, token["session_id"], issued)
        STORE.save()
    return Response(200, answer)


def authenticated(request):
    """requireAuthentication (internal/api/auth.go): (user, session id) from the bearer access token."""
    match = re.match(r"^(?i:bearer) (\S+)$", request.header("Authorization") or "")
    if not match:
        raise HTTPError(401, "no_authorization", "This endpoint requires a valid Bearer token")
    claims = standin.hs256_verify(match.group(1), SECRET)
    if claims is None:
        raise HTTPError(403, "bad_jwt", "invalid JWT: unable to parse or verify signature, token signature is invalid")
    if not isinstance(claims.get("exp"), int) or claims["exp"] < time.time():
        raise HTTPError(403, "bad_jwt", "invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired")
    with STORE.lock:
        user = STORE.data["users"].get(claims.get("sub"))
        if user is None:
            raise HTTPError(403, "user_not_found", "User from sub claim in JWT does not exist")
        session_id = claims.get("session_id")
        if session_id and session_id not in STORE.data["sessions"]:
            raise HTTPError(403, "session_not_found", "Session from session_id claim in JWT does not exist")
        if is_banned(user):
            raise HTTPError(403, "user_banned", "User is banned")
        return user, session_id


def get_user(request):
    user, _ = authenticated(request)
    return Response(200, user_json(user))


def logout(request):
    scope = request.query.get("scope", "")
    if scope not in ("", "global", "local", "others"):
        raise bad_request("validation_failed", f'Unsupported logout scope "{scope}"')
    user, session_id = authenticated(request)
    CONTROLS.count("revocations")
    with STORE.lock:
        data = STORE.data
        if scope == "local" and session_id:
            doomed = {session_id}
        elif scope == "others" and session_id:
            doomed = {s for s, r in data["sessions"].items() if r["user_id"] == user["id"] and s != session_id}
        else:
            doomed = {s for s, r in data["sessions"].items() if r["user_id"] == user["id"]}
        for s in doomed:  # models.LogoutSession / Logout: the session and its refresh tokens go
            data["sessions"].pop(s, None)
        data["refresh_tokens"] = {t: r for t, r in data["refresh_tokens"].items() if r["session_id"] not in doomed}
        STORE.save()
    return Response(204)


def user_control(action, email):
    with STORE.lock:
        data = STORE.data
        if action == "revoke-all":
            count = len(data["sessions"])
            data["sessions"], data["refresh_tokens"] = {}, {}
            STORE.save()
            return 200, {"deleted_sessions": count}
        user = find_user_by_email(email)
        if user is None:
            return 404, {"error": "no such user"}
        if action == "disable":
            user["banned_until"] = "2999-01-01T00:00:00Z"
        elif action == "enable":
            user["banned_until"] = None
        else:
            del data["users"][user["id"]]
            data["sessions"] = {s: r for s, r in data["sessions"].items() if r["user_id"] != user["id"]}
            data["refresh_tokens"] = {t: r for t, r in data["refresh_tokens"].items() if r["user_id"] != user["id"]}
        STORE.save()
        return 200, {"email": email, "action": action}


def pkce_authorize(request):
    """api/external.go ExternalProviderRedirect with a PKCE challenge: a flow state, then the provider."""
    q = request.query
    if q.get("provider") != "github":
        raise bad_request("validation_failed", "Unsupported provider: provider is not enabled")
    challenge, method = q.get("code_challenge", ""), q.get("code_challenge_method", "").lower()
    if not challenge or method not in ("s256", "plain"):
        raise bad_request("validation_failed", "PKCE flow requires code_challenge_method and code_challenge")
    flow_id = str(uuid.uuid4())
    with STORE.lock:
        STORE.data.setdefault("flow_states", {})[flow_id] = {
            "challenge": challenge, "method": method, "redirect_to": q.get("redirect_to", ""), "auth_code": None}
        STORE.save()
    return Response(302, None, {"Location": f"/github/login/oauth/authorize?state={flow_id}"})


def pkce_callback(request):
    """GitHub approved: the flow state gets an auth code and the browser goes back to redirect_to."""
    flow_id = request.query.get("state", "")
    with STORE.lock:
        state = STORE.data.get("flow_states", {}).get(flow_id)
        if state is None:
            raise HTTPError(404, "flow_state_not_found", "invalid flow state, no valid flow state found")
        state["auth_code"] = str(uuid.uuid4())
        STORE.save()
    target = state["redirect_to"]
    return Response(302, None, {"Location": target + ("&" if "?" in target else "?") + "code=" + state["auth_code"]})


def pkce_grant(request):
    """token.go PKCE(): the flow state by auth_code, the verifier against the challenge, once."""
    params = json_params(request)
    code, verifier = params.get("auth_code") or "", params.get("code_verifier") or ""
    if not code or not verifier:
        raise bad_request("validation_failed", "invalid request: both auth code and code verifier should be non-empty")
    with STORE.lock:
        states = STORE.data.get("flow_states", {})
        flow_id = next((k for k, v in states.items() if v["auth_code"] == code), None)
        if flow_id is None:
            raise HTTPError(404, "flow_state_not_found", "invalid flow state, no valid flow state found")
        state = states.pop(flow_id)
        if state["method"] == "s256":
            computed = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        else:
            computed = verifier
        if not secrets.compare_digest(computed, state["challenge"]):
            STORE.save()
            raise bad_request("bad_code_verifier", "code challenge does not match previously saved code verifier")
        user = find_user_by_email("ada@example.com")  # the GitHub user the stand-in for GitHub approves as
        answer = issue_session(user)
        STORE.save()
    return Response(200, answer)


def gateway(request):
    """Supabase's Kong gateway (key-auth plugin): the anon key in the `apikey` header or query."""
    key = request.header("apikey") or request.query.get("apikey")
    if not key:
        return Response(401, {"message": "No API key found in request"})
    if not secrets.compare_digest(key.encode(), STORE.data["anon_key"].encode()):
        return Response(401, {"message": "Invalid authentication credentials"})
    return None


def app(request):
    if request.path.startswith("/test/"):
        status, body = CONTROLS.handle(request.method, request.path, request.body, user_control)
        return Response(status, body)
    route = (request.method, request.path)
    try:
        if route == ("GET", "/auth/v1/authorize"):
            return pkce_authorize(request)
        if route == ("GET", "/github/login/oauth/authorize"):
            flow_id = request.query.get("state", "")
            return Response(302, None, {"Location": f"/auth/v1/callback?code=github-code&state={flow_id}"})
        if route == ("GET", "/auth/v1/callback"):
            return pkce_callback(request)
    except HTTPError as e:
        return error_response(request, e)
    refused = gateway(request)
    if refused:
        return refused
    grant = request.query.get("grant_type", "")
    try:
        if route == ("POST", "/auth/v1/token"):
            if grant == "pkce":
                return guarded(request, pkce_grant)
            kind = grant if grant in ("password", "refresh_token") else "other"
            CONTROLS.count("token_requests", kind)
            failed = CONTROLS.take_failure()
            if failed is not None:
                response = error_response(request, HTTPError(failed, "unexpected_failure", "stand-in /test/fail"))
            elif kind == "password":
                response = guarded(request, password_grant)
            elif kind == "refresh_token":
                response = guarded(request, refresh_grant)
            else:  # token.go Token(): unknown grant
                raise bad_request("invalid_credentials", "unsupported_grant_type")
            if kind == "refresh_token":
                CONTROLS.refresh_answered(response.status, failed is not None)
            return response
        if route == ("POST", "/auth/v1/signup"):
            return signup(request)
        if route == ("GET", "/auth/v1/user"):
            return get_user(request)
        if route == ("POST", "/auth/v1/logout"):
            return logout(request)
        raise HTTPError(404, "not_found", "Not Found")
    except HTTPError as e:
        return error_response(request, e)


def guarded(request, handler):
    try:
        return handler(request)
    except HTTPError as e:
        return error_response(request, e)


if __name__ == "__main__":
    standin.serve("gotrue", ARGS, app, on_bound=lambda port: ISSUER.__setitem__(0, f"http://127.0.0.1:{port}/auth/v1"))

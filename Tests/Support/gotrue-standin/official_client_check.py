#!/usr/bin/env python3
"""The official Supabase Auth client (PyPI supabase-auth, pinned in scripts/install-deps) against the stand-in.

Usage: .venv/bin/python3 Tests/Support/gotrue-standin/official_client_check.py --url http://127.0.0.1:PORT
           --anon-key-file STATE_DIR/anon-key
The stand-in must run with --reuse-interval 0 (the default). Signs up, signs in, refreshes, reads the
user, provokes every refresh error the stand-in claims to give, and signs out, asserting each step as
the client understands it. Prints one line per step; exits 1 on the first disagreement.
"""
import argparse
import base64
import json
import sys
import time
import uuid

import httpx
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError


def claims_of(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def check(condition, what):
    if not condition:
        print(f"DISAGREE: {what}", flush=True)
        sys.exit(1)
    print(f"ok: {what}", flush=True)


def api_error(call):
    """The AuthApiError the official client raises for `call`, or None."""
    try:
        call()
    except AuthApiError as e:
        return e
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--anon-key-file", required=True)
    args = p.parse_args()
    with open(args.anon_key_file) as f:
        anon_key = f.read().strip()
    auth_url = args.url + "/auth/v1"

    def client():
        return SyncGoTrueClient(url=auth_url, headers={"apikey": anon_key},
                                auto_refresh_token=False, persist_session=False)

    # Sign up (autoconfirm: a session straight away) and sign in.
    email = f"check-{uuid.uuid4().hex[:8]}@example.com"
    signed_up = client().sign_up({"email": email, "password": "a long test password"})
    check(signed_up.session is not None and signed_up.user.email == email, "sign_up answers a session for the new user")
    gotrue = client()
    signed_in = gotrue.sign_in_with_password({"email": email, "password": "a long test password"})
    session = signed_in.session
    check(session is not None and session.token_type == "bearer", "sign_in_with_password answers a bearer session")
    claims = claims_of(session.access_token)
    check(claims["sub"] == signed_in.user.id and claims.get("session_id") and claims["exp"] > time.time(),
          "the access token is a JWT with sub = user id, session_id, a future exp")
    check(session.expires_at == claims["exp"], "expires_at equals the token's exp")

    wrong = api_error(lambda: client().sign_in_with_password({"email": email, "password": "wrong"}))
    check(wrong is not None and wrong.code == "invalid_credentials" and wrong.status == 400,
          "a wrong password is invalid_credentials (400)")

    # Refresh: rotation.
    first_refresh = session.refresh_token
    refreshed = gotrue.refresh_session()
    check(refreshed.session.refresh_token != first_refresh, "refresh_session rotates the refresh token")
    check(claims_of(refreshed.session.access_token)["session_id"] == claims["session_id"],
          "the refreshed access token keeps the session")
    again = client().refresh_session(first_refresh)
    check(again.session.refresh_token == refreshed.session.refresh_token,
          "the parent of the active token is answered with the active token (a lost answer)")
    second = gotrue.refresh_session()
    reused = api_error(lambda: client().refresh_session(first_refresh))
    check(reused is not None and reused.code == "refresh_token_already_used",
          "a token rotated two steps ago is refresh_token_already_used")
    family = api_error(lambda: client().refresh_session(second.session.refresh_token))
    check(family is not None and family.code == "refresh_token_already_used",
          "after a reuse the whole session's tokens are revoked")
    unknown = api_error(lambda: client().refresh_session("abcdefghijkl"))
    check(unknown is not None and unknown.code == "refresh_token_not_found" and unknown.status == 400,
          "an unknown refresh token is refresh_token_not_found (400)")

    # The user, and sign-out with scope local.
    gotrue = client()
    session = gotrue.sign_in_with_password({"email": email, "password": "a long test password"}).session
    user = gotrue.get_user()
    check(user is not None and user.user.id == claims["sub"] and user.user.email == email, "get_user answers the user")
    gotrue.sign_out({"scope": "local"})
    check(gotrue.get_session() is None, "sign_out (local) succeeds and forgets the session")
    gone = api_error(lambda: client().refresh_session(session.refresh_token))
    check(gone is not None and gone.code == "refresh_token_not_found", "after sign_out the refresh token is not found")
    stale = api_error(lambda: client().get_user(session.access_token))
    check(stale is not None and stale.code == "session_not_found" and stale.status == 403,
          "after sign_out the access token's session is session_not_found (403)")

    # A banned user.
    session = client().sign_in_with_password({"email": email, "password": "a long test password"}).session
    httpx.post(args.url + "/test/disable-user", json={"email": email}).raise_for_status()
    banned = api_error(lambda: client().refresh_session(session.refresh_token))
    check(banned is not None and banned.code == "user_banned", "a banned user's refresh is user_banned")
    httpx.post(args.url + "/test/enable-user", json={"email": email}).raise_for_status()

    # The gateway: no apikey.
    bare = SyncGoTrueClient(url=auth_url, headers={}, auto_refresh_token=False, persist_session=False)
    nokey = api_error(lambda: bare.sign_in_with_password({"email": email, "password": "a long test password"}))
    check(nokey is not None and nokey.status == 401, "without the apikey header the gateway answers 401")
    print("official client agrees", flush=True)


if __name__ == "__main__":
    main()

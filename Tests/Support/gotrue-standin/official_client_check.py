#!/usr/bin/env python3
"""The official Supabase Auth client (PyPI supabase-auth, pinned in scripts/install-deps) against the stand-in.

Usage: .venv/bin/python3 Tests/Support/gotrue-standin/official_client_check.py --url http://127.0.0.1:PORT
           --anon-key-file STATE_DIR/anon-key
The stand-in must run with --reuse-interval 0 (the default). Signs up, signs in, refreshes, reads the
user, provokes every refresh error the stand-in claims to give, and signs out, asserting each step as
the client understands it. For each refresh error the assertion is what the client itself does with
its stored session when it recovers an expired one (`initialize`): supabase-auth keeps the session
and retries on an AuthRetryableError (no answer, 502/503/504) and removes it on any other error. So
an error the stand-in answers in the wrong class shows as a session kept or lost, whatever its code.
Prints one line per step; exits 1 on the first disagreement.
"""
import argparse
import base64
import json
import sys
import time
import uuid

import httpx
from supabase_auth import SyncGoTrueClient, SyncMemoryStorage
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


STORAGE_KEY = "official-client-check"


def recovered(auth_url, anon_key, session):
    """Hands `session`, made expired, to a client that stores sessions, as an app restarting would, and
    lets the client recover it (refreshing it, as it must). Returns the client and its storage."""
    storage = SyncMemoryStorage()
    expired = session.model_copy(update={"expires_at": int(time.time()) - 60})
    storage.set_item(STORAGE_KEY, expired.model_dump_json())
    gotrue = SyncGoTrueClient(url=auth_url, headers={"apikey": anon_key}, storage=storage, storage_key=STORAGE_KEY,
                              auto_refresh_token=True, persist_session=True)
    gotrue.initialize()
    return gotrue, storage


def stored_refresh_token(storage):
    raw = storage.get_item(STORAGE_KEY)
    return json.loads(raw)["refresh_token"] if raw else None


def session_removed(auth_url, anon_key, session):
    """Whether the official client dropped `session` when refreshing it failed."""
    _, storage = recovered(auth_url, anon_key, session)
    return storage.get_item(STORAGE_KEY) is None


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

    wrongly = client()
    wrong = api_error(lambda: wrongly.sign_in_with_password({"email": email, "password": "wrong"}))
    check(wrong is not None and wrongly.get_session() is None, "a wrong password is refused and the client holds no session")
    check(wrong.code == "invalid_credentials" and wrong.status == 400,
          "a wrong password is 400 invalid_credentials (the code sortedvault's password sign-in reports)")
    taken = api_error(lambda: client().sign_up({"email": email, "password": "a long test password"}))
    check(taken is not None and taken.code == "user_already_exists",
          "signing up an existing e-mail is user_already_exists (session login --flow password --create reports it)")

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

    # Each refresh error, as the client handles it.
    check(session_removed(auth_url, anon_key, session.model_copy(update={"refresh_token": first_refresh})),
          "a token rotated two steps ago: the client drops its session")
    check(session_removed(auth_url, anon_key, second.session),
          "after that reuse, the session's active token too: the client drops its session")
    check(session_removed(auth_url, anon_key, session.model_copy(update={"refresh_token": "abcdefghijkl"})),
          "an unknown refresh token: the client drops its session")

    # A failure the client counts as transient: it keeps the session, and its own retry refreshes it.
    live = client().sign_in_with_password({"email": email, "password": "a long test password"}).session
    httpx.post(args.url + "/test/fail", json={"count": 1, "status": 503}).raise_for_status()
    retrying, storage = recovered(auth_url, anon_key, live)
    check(stored_refresh_token(storage) == live.refresh_token, "a 503: the client keeps its session")
    for _ in range(1000):  # the client's retry timer; a wait for it, not a bound on it
        if stored_refresh_token(storage) not in (None, live.refresh_token):
            break
        time.sleep(0.02)
    check(stored_refresh_token(storage) not in (None, live.refresh_token), "after the 503 the client's own retry refreshes the session")
    if retrying._refresh_token_timer:
        retrying._refresh_token_timer.cancel()

    # The user, and sign-out with scope local.
    gotrue = client()
    session = gotrue.sign_in_with_password({"email": email, "password": "a long test password"}).session
    user = gotrue.get_user()
    check(user is not None and user.user.id == claims["sub"] and user.user.email == email, "get_user answers the user")
    gotrue.sign_out({"scope": "local"})
    check(gotrue.get_session() is None, "sign_out (local) succeeds and forgets the session")
    check(session_removed(auth_url, anon_key, session), "after sign_out: the client drops a copy of the session it finds")
    stale = api_error(lambda: client().get_user(session.access_token))
    check(stale is not None, "after sign_out the access token is refused (an API error, not a transient one)")

    # A banned user.
    session = client().sign_in_with_password({"email": email, "password": "a long test password"}).session
    httpx.post(args.url + "/test/disable-user", json={"email": email}).raise_for_status()
    check(session_removed(auth_url, anon_key, session), "a banned user's refresh: the client drops its session")
    httpx.post(args.url + "/test/enable-user", json={"email": email}).raise_for_status()

    # The gateway: no apikey.
    bare = SyncGoTrueClient(url=auth_url, headers={}, auto_refresh_token=False, persist_session=False)
    nokey = api_error(lambda: bare.sign_in_with_password({"email": email, "password": "a long test password"}))
    check(nokey is not None and nokey.status == 401, "without the apikey header the gateway answers 401")
    # The PKCE flow (sign_in_with_oauth, then exchange_code_for_session), through the stand-in's GitHub.
    pkce = SyncGoTrueClient(url=auth_url, headers={"apikey": anon_key}, storage=SyncMemoryStorage(), flow_type="pkce",
                            auto_refresh_token=False, persist_session=True)
    redirect = "http://127.0.0.1:9/callback"
    started = pkce.sign_in_with_oauth({"provider": "github", "options": {"redirect_to": redirect}})
    location = started.url
    for _ in range(5):
        if location.startswith(redirect):
            break
        answer = httpx.get(location if location.startswith("http") else args.url + location, follow_redirects=False)
        check(answer.status_code == 302, f"the authorize chain redirects ({answer.status_code})")
        location = answer.headers["location"]
    code = httpx.URL(location).params.get("code")
    check(location.startswith(redirect) and code, "the browser comes back to redirect_to with a code")
    exchanged = pkce.exchange_code_for_session({"auth_code": code})
    check(exchanged.session is not None and exchanged.user.email == "ada@example.com",
          "exchange_code_for_session (grant_type=pkce, the stored verifier) answers a session for the GitHub user")
    replayed = api_error(lambda: pkce.exchange_code_for_session({"auth_code": code, "code_verifier": "x" * 43}))
    check(replayed is not None, "a used code is refused")
    print("official client agrees", flush=True)


if __name__ == "__main__":
    main()

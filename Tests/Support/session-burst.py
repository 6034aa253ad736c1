"""Many concurrent org.sortedvault.session.AutoLogin calls from one process, for the single-flight test.

Usage: session-burst.py SOCKET SERVICE ACCOUNT CALLS GO_FILE
Opens CALLS connections first, prints READY, waits until GO_FILE exists, then sends one AutoLogin on
every connection at once (one thread each) and prints a JSON list of {"outcome", "token", "error"}.
Speaks varlink directly (NUL-terminated JSON) so that nothing but the socket is between it and the daemon.
"""
import base64
import json
import os
import socket
import sys
import threading
import time


def call(sock, service, account):
    message = {"method": "org.sortedvault.session.AutoLogin", "parameters": {"service": service, "account": account}}
    sock.sendall(json.dumps(message).encode() + b"\0")
    data = b""
    while not data.endswith(b"\0"):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the daemon closed the connection")
        data += chunk
    reply = json.loads(data[:-1])
    if "error" in reply:
        return {"outcome": None, "token": None, "error": reply["error"]}
    parameters = reply.get("parameters", {})
    grant = parameters.get("grant") or {}
    token = grant.get("accessToken")  # base64 of the token's bytes, like every secret on the wire
    if token is not None:
        token = base64.b64decode(token, validate=True).decode()
    return {"outcome": parameters.get("outcome"), "token": token, "error": None}


def main():
    path, service, account, calls, go_file = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    sockets = []
    for _ in range(calls):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(60)
        s.connect(path)
        sockets.append(s)
    print("READY", flush=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(go_file):
        if time.monotonic() > deadline:
            sys.exit("no go signal within 60 s")
        time.sleep(0.001)
    results = [None] * calls

    def run(index):
        try:
            results[index] = call(sockets[index], service, account)
        except Exception as error:  # reported, and the test fails on it
            results[index] = {"outcome": None, "token": None, "error": repr(error)}

    threads = [threading.Thread(target=run, args=(i,)) for i in range(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps(results), flush=True)


if __name__ == "__main__":
    main()

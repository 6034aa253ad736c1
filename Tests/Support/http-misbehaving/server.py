"""An HTTP/1.1 server on 127.0.0.1 that breaks the rules a provider client must hold against, for
the transport's tests. Writes STATE_DIR/port once it listens.

  /redirect          307 to /landing on this server (a client must not follow it)
  /landing           counts the requests that reached it (GET /stats tells)
  /big-body?n=N      200 with N bytes of body and its Content-Length
  /big-chunked?n=N   200 with N bytes of body in chunks, no Content-Length
  /big-headers?n=N   200 with one header of N bytes
  /echo              200 with the request's method, path, headers and body length as JSON
  /stats             {"landing": count}
"""
import argparse
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

landing = 0
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"{}", headers=()):
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        global landing
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        n = int(parse_qs(url.query).get("n", ["0"])[0])
        if url.path == "/redirect":
            port = self.server.server_address[1]
            self.answer(307, headers=[("Location", f"http://127.0.0.1:{port}/landing")])
        elif url.path == "/landing":
            with lock:
                landing += 1
            self.answer(200, b'{"access_token":"followed"}')
        elif url.path == "/big-body":
            self.answer(200, b"x" * n)
        elif url.path == "/big-chunked":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            sent = 0
            while sent < n:
                piece = min(4096, n - sent)
                self.wfile.write(b"%x\r\n" % piece + b"x" * piece + b"\r\n")
                sent += piece
            self.wfile.write(b"0\r\n\r\n")
        elif url.path == "/big-headers":
            self.answer(200, headers=[("X-Padding", "y" * n)])
        elif url.path == "/echo":
            answer = {"method": self.command, "path": self.path, "bodyLength": len(body),
                      "headers": {key.lower(): value for key, value in self.headers.items()}}
            self.answer(200, json.dumps(answer).encode())
        elif url.path == "/stats":
            with lock:
                self.answer(200, json.dumps({"landing": landing}).encode())
        else:
            self.answer(404)

    do_GET = do_POST = handle_any


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--state-dir", required=True)
    arguments = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_file = os.path.join(arguments.state_dir, "port")
    with open(port_file + ".tmp", "w") as file:
        file.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()

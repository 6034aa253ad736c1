"""A small varlink client of the sortedvault daemon, standard library only.

    client = SortedVaultClient()                  # $XDG_RUNTIME_DIR/sortedvault/socket
    client.store("com.sorted.api", "ada", b"s3cret")
    secret = client.retrieve("com.sorted.api", "ada")   # bytes

Varlink is NUL-terminated JSON over a Unix stream socket (docs/protocol.md); secrets travel as base64.
The daemon identifies this process from the kernel (SO_PEERCRED), so there is nothing to log in with;
this client checks the daemon the same way before it sends anything (trust.py), and starts it when
none answers, as every sortedvault client does (by running `sortedvault status`, see start_daemon).
Errors are `SortedVaultError` subclasses whose text names the daemon's error and what to do, never a
secret. Python strings cannot be wiped: the receive buffer is zeroed after use, the decoded secret is
the caller's to drop.
"""

import base64
import json
import os
import shutil
import socket
import subprocess

from . import trust

VAULT = "org.sortedvault.vault"
#: The daemon caps frames at 1 MiB; a reply over that is refused rather than buffered without end.
MAX_REPLY_BYTES = 1 << 20


def default_socket_path():
    """The daemon's socket: $SORTEDVAULT_SOCKET, else $XDG_RUNTIME_DIR/sortedvault/socket."""
    explicit = os.environ.get("SORTEDVAULT_SOCKET")
    if explicit:
        return explicit
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if not runtime or not runtime.startswith("/"):
        raise Unavailable("XDG_RUNTIME_DIR is not set, so the sortedvault socket cannot be found: "
                          "set it (a login session does) or set SORTEDVAULT_SOCKET")
    return os.path.join(runtime, "sortedvault", "socket")


class SortedVaultError(Exception):
    """A failed call. `error` is the varlink error name (or None for a transport failure)."""

    def __init__(self, message, error=None, parameters=None):
        super().__init__(message)
        self.error = error
        self.parameters = parameters or {}


class NotFound(SortedVaultError):
    pass


class Locked(SortedVaultError):
    pass


class PermissionDenied(SortedVaultError):
    pass


class InvalidParameter(SortedVaultError):
    pass


class Unavailable(SortedVaultError):
    pass


class ForeignSocket(PermissionDenied):
    """The socket is not served by this user's own daemon (trust.py); nothing was sent to it."""


_ERRORS = {
    VAULT + ".NotFound": NotFound,
    VAULT + ".Locked": Locked,
    VAULT + ".PermissionDenied": PermissionDenied,
    VAULT + ".InvalidParameter": InvalidParameter,
}


def _describe(name, parameters):
    """A message for a varlink error reply: what happened and what to do. Parameters never hold secrets."""
    short = name.rsplit(".", 1)[-1]
    if short == "NotFound":
        return "no item for service %r and account %r" % (parameters.get("service"), parameters.get("account"))
    if short == "Locked":
        return parameters.get("reason") or "the vault is locked: unlock it with `sortedvault unlock`"
    if short == "PermissionDenied":
        return ("the vault's access policy does not allow this program to %s %r: add a rule to "
                "~/.config/sortedvault/policy/access.toml" % (parameters.get("operation"), parameters.get("service")))
    if short == "InvalidParameter":
        return "the vault refused %s: %s" % (parameters.get("parameter"), parameters.get("reason"))
    detail = parameters.get("reason")
    return "the vault answered %s%s" % (name, ": %s" % detail if detail else "")


class SortedVaultClient:
    """One connection per call: keyring calls are rare, and a fresh connection survives daemon restarts."""

    def __init__(self, socket_path=None, timeout=30.0, autostart=True):
        self.socket_path = socket_path or default_socket_path()
        self.timeout = timeout
        self.autostart = autostart

    def store(self, service, account, secret):
        encoded = base64.b64encode(secret).decode("ascii")
        self.call(VAULT + ".Store", {"service": service, "account": account, "secret": encoded})

    def retrieve(self, service, account):
        """The secret's exact bytes; raises NotFound when there is no such item."""
        reply = self.call(VAULT + ".Retrieve", {"service": service, "account": account})
        try:
            return base64.b64decode(reply["secret"], validate=True)
        except (KeyError, TypeError, ValueError):
            raise SortedVaultError("the daemon sent a malformed Retrieve reply") from None

    def delete(self, service, account):
        self.call(VAULT + ".Delete", {"service": service, "account": account})

    def list(self, service=None):
        """Item metadata (dicts with service, account, label, …), never secrets."""
        reply = self.call(VAULT + ".List", {"service": service} if service is not None else {})
        return reply.get("items", [])

    def call(self, method, parameters):
        """Sends one varlink call and returns its reply parameters, or raises the mapped error."""
        request = json.dumps({"method": method, "parameters": parameters}).encode("utf-8") + b"\0"
        buffer = bytearray()
        try:
            with self.connect() as connection:
                connection.sendall(request)
                while b"\0" not in buffer:
                    chunk = connection.recv(65536)
                    if not chunk:
                        raise Unavailable("the daemon at %s closed the connection before answering: "
                                          "it stopped or refused this program; check its log" % self.socket_path)
                    buffer += chunk
                    if len(buffer) > MAX_REPLY_BYTES:
                        raise SortedVaultError("the daemon's reply is over %d bytes; refusing it" % MAX_REPLY_BYTES)
            end = buffer.index(b"\0")
            try:
                reply = json.loads(bytes(buffer[:end]))
            except ValueError:
                raise SortedVaultError("the daemon sent a reply that is not JSON") from None
        except socket.timeout:
            raise Unavailable("the daemon at %s did not answer in %g s" % (self.socket_path, self.timeout)) from None
        finally:
            buffer[:] = bytes(len(buffer))  # the reply may hold a secret: wipe what we can
            request = None
        if not isinstance(reply, dict):
            raise SortedVaultError("the daemon sent a malformed reply")
        if "error" in reply:
            name = str(reply["error"])
            parameters = reply.get("parameters") if isinstance(reply.get("parameters"), dict) else {}
            raise _ERRORS.get(name, SortedVaultError)(_describe(name, parameters), name, parameters)
        parameters = reply.get("parameters", {})
        return parameters if isinstance(parameters, dict) else {}

    def connect(self):
        """A connection to this user's own daemon, started first when none answers (if `autostart`)."""
        connection = self.connect_if_running()
        if connection is None and self.autostart:
            trouble = start_daemon(self.socket_path, self.timeout)
            connection = self.connect_if_running()
            if connection is None:
                raise Unavailable("no sortedvault daemon answers at %s, and %s" % (self.socket_path, trouble))
        if connection is None:
            raise Unavailable("no sortedvault daemon answers at %s: start it with `sortedvault daemon` "
                              "(or any sortedvault command, which starts it)" % self.socket_path)
        return connection

    def connect_if_running(self):
        """A trusted connection, or None when nothing listens at the socket; raises ForeignSocket when
        something does that is not this user's daemon (trust.py), before a byte is sent."""
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.settimeout(self.timeout)
            try:
                connection.connect(self.socket_path)
            except (FileNotFoundError, ConnectionRefusedError):
                connection.close()
                return None
            except PermissionError:
                raise PermissionDenied("not allowed to connect to %s: the daemon belongs to another user"
                                       % self.socket_path) from None
            reason = trust.distrust(connection, self.socket_path)
            if reason is not None:
                raise ForeignSocket(trust.refusal(self.socket_path, reason))
            return connection
        except BaseException:
            connection.close()
            raise


def start_daemon(socket_path, timeout):
    """Starts the daemon the way every sortedvault client does: `sortedvault status` starts it on demand
    (the same vault, policy and socket the CLI would use); the caller then connects again. Returns what
    went wrong, in words that end an error message, for when no daemon answers even then."""
    program = shutil.which("sortedvault")
    if program is None:
        return ("the `sortedvault` command is not on PATH to start one: install sortedvault (see its README), "
                "or start its daemon with `sortedvault daemon`")
    try:
        result = subprocess.run([program, "status", "--socket", socket_path], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "`%s status` did not start it in %g s" % (program, timeout)
    except OSError as error:
        return "%s could not be run to start it (%s)" % (program, error.strerror)
    said = result.stderr.decode("utf-8", "replace").strip()
    return "`%s status` did not start it (exit %d)%s" % (program, result.returncode, ": " + said if said else "")

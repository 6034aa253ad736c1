"""Whether a connected socket is served by this user's own daemon, checked before anything is sent.

The same two checks as the Swift clients (Sources/VaultWireClient/SocketTrust.swift), in the same words:
the process serving this very connection runs as our effective uid (the kernel's SO_PEERCRED, so no
race with the path), and the socket's directory is a real directory owned by us and writable by
nobody else, so no one else could have put the socket there or swap it later. A secret sent to a
socket another user planted (in a shared directory, or through SORTEDVAULT_SOCKET) is a secret given away.
"""

import os
import socket
import stat
import struct

_UCRED = struct.Struct("3i")  # struct ucred { pid_t pid; uid_t uid; gid_t gid; }


def distrust(connection, path):
    """None when the connected socket can be trusted, else what is wrong, in words for an error message."""
    me = os.geteuid()
    try:
        raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
        _, uid, _ = _UCRED.unpack(raw)
    except (OSError, struct.error) as error:
        return "the kernel did not say who serves it (%s)" % (getattr(error, "strerror", None) or error)
    uid &= 0xFFFFFFFF
    if uid != me:
        return "it is served by a process of uid %d, not by you (uid %d)" % (uid, me)
    directory = directory_of(path)
    try:
        info = os.lstat(directory)
    except OSError as error:
        return "its directory %s cannot be inspected (%s)" % (directory, error.strerror)
    if not stat.S_ISDIR(info.st_mode):
        return "its directory %s is a symbolic link or not a directory" % directory
    if info.st_uid != me:
        return "its directory %s belongs to uid %d, not to you (uid %d)" % (directory, info.st_uid, me)
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "its directory %s is writable by others (mode %o)" % (directory, stat.S_IMODE(info.st_mode))
    return None


def refusal(path, reason):
    """The whole message a client gives when it refuses a socket."""
    return ("refusing to use the socket %s: %s. Another user may have put it there; nothing was sent. "
            "Use a socket in a directory only you can write to (the default is $XDG_RUNTIME_DIR/sortedvault/socket)"
            % (path, reason))


def directory_of(path):
    """The directory part of `path` ("." for a bare name), as SocketTrust.directory(of:) reads it."""
    trimmed = path
    while len(trimmed) > 1 and trimmed.endswith("/"):
        trimmed = trimmed[:-1]
    slash = trimmed.rfind("/")
    if slash < 0:
        return "."
    if slash == 0:
        return "/"
    return trimmed[:slash]

"""The `keyring` backend: keyring's (service, username) is sortedvault's (service, account).

Installed with `pip install ./clients/python`; keyring finds it through the `keyring.backends` entry
point and prefers it (priority 9, above Secret Service's 5), so `keyring set/get/del`, pip, twine and
poetry use it with no D-Bus session at all. When no daemon answers, the first call starts one as every
sortedvault client does (client.start_daemon); without sortedvault installed the call fails saying so.
A socket that something other than this user's own daemon serves makes the backend not viable (it is
never chosen because of it) and every call refuse it before sending anything (trust.py). Force it with
`PYTHON_KEYRING_BACKEND=sortedvault_keyring.backend.SortedVaultKeyring`.

keyring's names go through names.py: names the vault accepts are stored as they are, the rest (the
empty username, control characters…) in a reversible encoding, so keyring's whole contract holds.

Errors become keyring's exceptions: a locked vault is `KeyringLocked`, a refused or failed write
`PasswordSetError`, deleting what is not there `PasswordDeleteError`, anything else `KeyringError`.
Their text says what happened and what to do; it never holds the secret.
"""

from keyring import credentials, errors
from keyring.backend import KeyringBackend

try:  # keyring >= 23 ships its own classproperty; older ones used jaraco.classes
    from keyring.compat import properties
except ImportError:  # pragma: no cover
    from jaraco.classes import properties

from . import names
from .client import Locked, NotFound, SortedVaultClient, SortedVaultError, default_socket_path


class SortedVaultKeyring(KeyringBackend):
    """Secrets in the sortedvault daemon, over its Unix socket."""

    @properties.classproperty
    def priority(cls):
        path = default_socket_path()  # raises with a reason when XDG_RUNTIME_DIR is unset
        # Only a look at who serves the socket: no call, no start. A socket that fails the check raises
        # ForeignSocket (not viable); no daemon at all is fine, the first call starts it.
        connection = SortedVaultClient(path, timeout=5.0, autostart=False).connect_if_running()
        if connection is not None:
            connection.close()
        return 9

    def _client(self):
        try:
            return SortedVaultClient()
        except SortedVaultError as error:
            raise errors.NoKeyringError(str(error)) from None

    def get_password(self, service, username):
        try:
            secret = self._client().retrieve(names.encode(service), names.encode(username))
        except NotFound:
            return None
        except Locked as error:
            raise errors.KeyringLocked(str(error)) from None
        except SortedVaultError as error:
            raise errors.KeyringError(str(error)) from None
        text = _utf8(secret)
        if text is None:
            raise errors.KeyringError("the item %r/%r holds bytes that are not UTF-8 text, which keyring cannot "
                                      "return: read it with `sortedvault retrieve`" % (service, username))
        return text

    def set_password(self, service, username, password):
        self._validate_username(username)
        try:
            self._client().store(names.encode(service), names.encode(username), password.encode("utf-8"))
        except Locked as error:
            raise errors.KeyringLocked(str(error)) from None
        except SortedVaultError as error:
            raise errors.PasswordSetError("cannot store the password: %s" % error) from None

    def delete_password(self, service, username):
        try:
            self._client().delete(names.encode(service), names.encode(username))
        except NotFound as error:
            raise errors.PasswordDeleteError("cannot delete: %s" % error) from None
        except Locked as error:
            raise errors.KeyringLocked(str(error)) from None
        except SortedVaultError as error:
            raise errors.PasswordDeleteError("cannot delete the password: %s" % error) from None

    def get_credential(self, service, username):
        """With a username, that item; without one, the service's first item (as other backends do)."""
        if username is None:
            try:
                stored = names.encode(service)
                items = self._client().list(stored)
            except Locked as error:
                raise errors.KeyringLocked(str(error)) from None
            except SortedVaultError as error:
                raise errors.KeyringError(str(error)) from None
            accounts = sorted(names.decode(item.get("account", "")) for item in items if item.get("service") == stored)
            if not accounts:
                return None
            username = accounts[0]
        password = self.get_password(service, username)
        if password is None:
            return None
        return credentials.SimpleCredential(username, password)


def _utf8(data):
    """`data` as text, or None. The failed decode's exception holds `data` (the secret): it ends here,
    so no exception raised later carries it as its `__context__`."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None

"""sortedvault for Python: a varlink client of the daemon and a `keyring` backend over it."""

from .client import Locked, NotFound, SortedVaultClient, SortedVaultError, default_socket_path

__all__ = ["SortedVaultClient", "SortedVaultError", "NotFound", "Locked", "default_socket_path"]

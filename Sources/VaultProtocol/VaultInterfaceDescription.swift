/// The varlink interface description of `org.sortedvault.vault`: the API contract. It is byte for
/// byte the committed `interfaces/org.sortedvault.vault.varlink` (a test keeps them equal).
public enum VaultInterfaceDescription {
    public static let name = "org.sortedvault.vault"

    public static let text = #"""
# The sortedvault item API: store, retrieve, delete and list secrets keyed by
# service and account, and lock or unlock the vault. Every call is checked
# against the daemon's access policy for the caller's kernel-reported uid, gid
# and executable. Secrets travel as standard base64 in the parameter `secret`.
interface org.sortedvault.vault

# An item's metadata; never its secret. Times are seconds since 1970-01-01 UTC.
type Item (
  service: string,
  account: string,
  label: ?string,
  attributes: [string]string,
  created: float,
  modified: float,
  expires: ?float
)

# Inserts or replaces the item. `secret` is base64 (at most 512 KiB decoded).
method Store(
  service: string,
  account: string,
  secret: string,
  label: ?string,
  attributes: ?[string]string,
  expires: ?float
) -> ()

# The item's secret (base64) and metadata.
method Retrieve(service: string, account: string) -> (secret: string, item: Item)

# Removes the item and scrubs its ciphertext from the data files.
method Delete(service: string, account: string) -> ()

# Metadata of the items the caller may list, optionally of one service only.
method List(service: ?string) -> (items: []Item)

# The daemon's state. Never returns secrets. `items` counts the items of the
# vault file the caller may list; sortedvault's own records are counted apart:
# stored logins (org.sortedvault.session) and revocations queued for a provider.
# While the vault is locked their names are sealed, so `items` counts every
# stored record and `logins` and `queuedRevocations` are null. Items kept in the
# desktop keyring (backend = "secret-service") are not counted: use List.
method Status() -> (
  locked: bool,
  keySources: []string,
  items: int,
  logins: ?int,
  queuedRevocations: ?int,
  version: string,
  autoLockMinutes: int
)

# Unlocks the vault. Without a passphrase the daemon asks the vault's
# non-interactive key sources again — it re-reads the key file, asks the desktop
# keyring — as after a Lock or an auto-lock; Locked says why none did. With a
# passphrase: one attempt, throttled per calling process (TooManyAttempts while
# it must wait or has another attempt in flight). Key derivation runs one at a
# time, off the serving path: other clients keep being served meanwhile.
method Unlock(passphrase: ?string) -> ()

# Forgets the keys; item calls then fail with Locked until Unlock.
method Lock() -> ()

# Re-wraps the master key under a new passphrase; items are not re-encrypted.
method ChangePassphrase(old: string, new: string) -> ()

# No item for that service and account, or it expired.
error NotFound (service: string, account: string)

# The vault is locked: call Unlock first. `reason` says what is locked (the
# vault, or the desktop keyring behind the secret-service backend) and what to do.
error Locked (reason: ?string)

# The access policy does not allow this caller to do this.
error PermissionDenied (operation: string, service: ?string)

# A parameter is missing, has the wrong type, or breaks a limit.
error InvalidParameter (parameter: string, reason: string)

# The passphrase did not unlock the vault.
error WrongPassphrase ()

# Too many failed unlocks: wait before trying again.
error TooManyAttempts (retryAfterSeconds: float)

# A stored record failed its integrity check.
error IntegrityFailure (reason: string)

# The store failed; `reason` says what to do.
error StorageFailure (reason: string)

# The daemon cannot do this in its current configuration.
error Unsupported (reason: string)
"""#
}

// What an app needs to keep its users signed in, in one import: the login API and its results
// (VaultSession), the socket client (VaultClient), names and errors (VaultCore), secure memory
// (VaultCrypto). The wire, the daemon and the CLI's core stay out of an app's namespace.
@_exported import VaultClient
@_exported import VaultCore
@_exported import VaultCrypto
@_exported import VaultSession

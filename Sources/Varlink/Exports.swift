// JSON lives in its own module so that non-socket code (the OAuth2 client) can parse bounded JSON
// without depending on the socket protocol; varlink users keep seeing `JSONValue` through this module.
@_exported import BoundedJSON

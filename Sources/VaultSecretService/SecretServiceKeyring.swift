import CSecretLoader
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import NIOPosix
import VaultCore
import VaultCrypto

/// The user's desktop keyring — gnome-keyring, KeePassXC, KWallet — through the freedesktop Secret
/// Service API and libsecret. The thin layer that ``SecretServiceTokenStore`` and
/// ``SecretServiceKeySource`` share.
///
/// ```swift
/// let keyring = SecretServiceKeyring(threadPool: pool)
/// switch await keyring.availability() { case .available: …; case .unavailable(let error): print(error.reason) }
/// ```
///
/// It tells apart what libsecret blurs, each as its own `VaultError`:
/// - no session bus, or no provider on it → `.unavailable`, with a reason saying which and what to do;
/// - a locked collection → `.locked` (libsecret would pop up a prompt, or report "nothing found");
/// - no such item → `.notFound`, only after the collection was seen unlocked.
///
/// Lock state is always read fresh over D-Bus (search results and the collection's `Locked`
/// property), never from a proxy's property cache, which goes stale without a GLib main loop.
/// It never prompts: a daemon has no one to show a prompt to.
public struct SecretServiceKeyring: Sendable {
    let threadPool: NIOThreadPool

    /// The keyring calls run on `threadPool`, one at a time (``SecretServiceCalls``).
    public init(threadPool: NIOThreadPool) {
        self.threadPool = threadPool
    }

    /// Whether the default collection can be used now.
    public enum Availability: Sendable, Equatable {
        case available
        case locked(VaultError)
        case unavailable(VaultError)
    }

    /// Connects and reads the default collection's lock state. Does not prompt, does not unlock.
    public func availability() async -> Availability {
        do {
            return try await SecretServiceCalls.run(on: threadPool) {
                let session = try Session.open()
                let collection = try session.defaultCollection()
                return try session.isLocked(collection) ? .locked(SecretServiceErrors.locked(collection)) : .available
            }
        } catch let error as VaultError {
            return error.code == .locked ? .locked(error) : .unavailable(error)
        } catch {
            return .unavailable(VaultError(.unavailable, "the Secret Service failed: \(error)"))
        }
    }

    /// Locks the default collection, as the screen locker or a keyring manager would.
    public func lockDefaultCollection() async throws {
        try await SecretServiceCalls.run(on: threadPool) {
            let session = try Session.open()
            try session.lock([try session.defaultCollection()])
        }
    }
}

/// One connection to the Secret Service for the length of an operation, on ``SecretServiceCalls``.
///
/// libsecret keeps one shared `SecretService` per process; after a failure that suggests the provider
/// went away, it is dropped (`secret_service_disconnect`) so the next operation connects afresh.
final class Session {
    let service: UnsafeMutablePointer<SVSecretService>

    private init(service: UnsafeMutablePointer<SVSecretService>) { self.service = service }
    deinit { sv_g_object_unref(service) }

    /// Connects to the session bus, then to the Secret Service with an encrypted transfer session.
    static func open() throws -> Session {
        do {
            let bus = try withGError { sv_g_bus_get_sync(SV_G_BUS_TYPE_SESSION, nil, $0) }
            if let bus { sv_g_object_unref(UnsafeMutableRawPointer(bus)) }
        } catch let error as GLibError {
            throw SecretServiceErrors.noSessionBus(error.message)
        }
        do {
            let service = try withGError { sv_secret_service_get_sync(SV_SECRET_SERVICE_OPEN_SESSION, nil, $0) }
            guard let service else { throw SecretServiceErrors.noProvider(detail: "libsecret returned no service") }
            return Session(service: service)
        } catch let error as GLibError {
            sv_secret_service_disconnect()
            if SecretServiceErrors.meansNoProvider(error) { throw SecretServiceErrors.noProvider(detail: error.message) }
            throw SecretServiceErrors.map(error, doing: "connect to the Secret Service")
        }
    }

    /// Runs a libsecret call, mapping its `GError` to a ``VaultError``.
    func call<T>(_ what: String, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> T) throws -> T {
        do {
            return try withGError(body)
        } catch let error as GLibError {
            if SecretServiceErrors.meansNoProvider(error) || SecretServiceErrors.meansGone(error) { sv_secret_service_disconnect() }
            throw SecretServiceErrors.map(error, doing: what)
        }
    }

    /// The D-Bus path of the collection the `default` alias points at.
    func defaultCollection() throws -> String {
        let path = try call("read the default collection") { sv_secret_service_read_alias_dbus_path_sync(service, "default", nil, $0) }
        guard let path else { throw SecretServiceErrors.noDefaultCollection }
        defer { sv_g_free(path) }
        return String(cString: path)
    }

    /// The collection's `Locked` property, read with a D-Bus call (not from a cache).
    func isLocked(_ collectionPath: String) throws -> Bool {
        let proxy = UnsafeMutableRawPointer(service).assumingMemoryBound(to: SVGDBusProxy.self)
        let connection = sv_g_dbus_proxy_get_connection(proxy)
        var parts: [OpaquePointer?] = [sv_g_variant_new_string("org.freedesktop.Secret.Collection"), sv_g_variant_new_string("Locked")]
        let parameters = sv_g_variant_new_tuple(&parts, 2)
        let reply = try call("read whether the keyring is locked") {
            sv_g_dbus_connection_call_sync(connection, sv_g_dbus_proxy_get_name(proxy), collectionPath, "org.freedesktop.DBus.Properties",
                                        "Get", parameters, nil, SV_G_DBUS_CALL_FLAGS_NONE, -1, nil, $0)
        }
        guard let reply else { throw VaultError.storageFailure("the Secret Service gave no lock state for \(collectionPath)") }
        defer { sv_g_variant_unref(reply) }
        let boxed = sv_g_variant_get_child_value(reply, 0)!
        defer { sv_g_variant_unref(boxed) }
        let value = sv_g_variant_get_variant(boxed)!
        defer { sv_g_variant_unref(value) }
        guard sv_g_variant_classify(value) == SV_G_VARIANT_CLASS_BOOLEAN else {
            throw VaultError.storageFailure("the Secret Service's Locked property is not a boolean")
        }
        return sv_g_variant_get_boolean(value) != 0
    }

    /// Items matching `attributes` (and the schema's name, unless the schema says not to), split by
    /// lock state as the service reports it now.
    func search(_ schema: UnsafePointer<SVSecretSchema>?, _ attributes: [String: String]) throws -> (unlocked: [String], locked: [String]) {
        let table = GLibBridge.stringTable(attributes)
        defer { sv_g_hash_table_unref(table) }
        var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        let ok = try call("search the keyring") {
            sv_secret_service_search_for_dbus_paths_sync(service, schema, table, nil, &unlocked, &locked, $0)
        }
        let result = (GLibBridge.takeStrings(unlocked), GLibBridge.takeStrings(locked))
        guard ok != 0 else { throw VaultError.storageFailure("the keyring search was refused (attributes outside the schema)") }
        return result
    }

    /// The secrets of unlocked items, by item path. Never unlocks (so never prompts).
    func secrets(of paths: [String]) throws -> [String: SecureBytes] {
        guard !paths.isEmpty else { return [:] }
        let table = try GLibBridge.withStringVector(paths) { vector in
            try call("read secrets from the keyring") { sv_secret_service_get_secrets_for_dbus_paths_sync(service, vector, nil, $0) }
        }
        guard let table else { return [:] }
        defer { sv_g_hash_table_unref(table) }  // unreferences the SecretValues: libsecret wipes their buffers
        return GLibBridge.entries(of: table) { GLibBridge.secureBytes(of: OpaquePointer($0)) }
    }

    /// An item's label, attributes and the service's own creation and modification times (seconds).
    func details(of path: String) throws -> ItemDetails {
        let item = try call("read an item of the keyring") { sv_secret_item_new_for_dbus_path_sync(service, path, SV_SECRET_ITEM_NONE, nil, $0) }
        guard let item else { throw VaultError.storageFailure("the keyring item \(path) could not be read") }
        defer { sv_g_object_unref(item) }
        let label = sv_secret_item_get_label(item).map { raw in
            defer { sv_g_free(raw) }
            return String(cString: raw)
        } ?? ""
        let attributes: [String: String] = sv_secret_item_get_attributes(item).map { table in
            defer { sv_g_hash_table_unref(table) }
            return GLibBridge.strings(of: table)
        } ?? [:]
        return ItemDetails(path: path, label: label, attributes: attributes,
                           created: Date(timeIntervalSince1970: TimeInterval(sv_secret_item_get_created(item))),
                           modified: Date(timeIntervalSince1970: TimeInterval(sv_secret_item_get_modified(item))))
    }

    /// Creates an item in `collectionPath` and returns its path. Never replaces: callers delete the
    /// old item after the new one exists, so a crash leaves two copies rather than none.
    func create(in collectionPath: String, schema: UnsafePointer<SVSecretSchema>, attributes: [String: String], label: String,
                secret: SecureBytes, contentType: String) throws -> String {
        let collection = try call("open the keyring collection") {
            sv_secret_collection_new_for_dbus_path_sync(service, collectionPath, SV_SECRET_COLLECTION_NONE, nil, $0)
        }
        guard let collection else { throw VaultError.storageFailure("the keyring collection \(collectionPath) could not be opened") }
        defer { sv_g_object_unref(collection) }
        let table = GLibBridge.stringTable(attributes)
        defer { sv_g_hash_table_unref(table) }
        let value = GLibBridge.secretValue(secret, contentType: contentType)
        defer { sv_secret_value_unref(UnsafeMutableRawPointer(value)) }
        let item = try call("store an item in the keyring") {
            sv_secret_item_create_sync(collection, schema, table, label, value, SV_SECRET_ITEM_CREATE_NONE, nil, $0)
        }
        guard let item else { throw VaultError.storageFailure("the keyring refused the item (attributes outside the schema)") }
        defer { sv_g_object_unref(item) }
        let proxy = UnsafeMutableRawPointer(item).assumingMemoryBound(to: SVGDBusProxy.self)
        return String(cString: sv_g_dbus_proxy_get_object_path(proxy))
    }

    func delete(_ path: String) throws {
        _ = try call("delete an item from the keyring") { sv_secret_service_delete_item_dbus_path_sync(service, path, nil, $0) }
    }

    func lock(_ paths: [String]) throws {
        var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        _ = try GLibBridge.withStringVector(paths) { vector in
            try call("lock the keyring") { sv_secret_service_lock_dbus_paths_sync(service, vector, nil, &locked, $0) }
        }
        _ = GLibBridge.takeStrings(locked)
    }
}

/// What the Secret Service says about one item, secret aside.
struct ItemDetails {
    let path: String
    let label: String
    let attributes: [String: String]
    let created: Date
    let modified: Date
}

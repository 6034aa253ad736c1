import CSecretLoader
import FoundationEssentials
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Small bridges between Swift values and the GLib types libsecret takes. Everything here runs inside
/// ``SecretServiceCalls``.
enum GLibBridge {
    /// A new `GHashTable` of owned UTF-8 strings, as libsecret's attribute tables are.
    static func stringTable(_ entries: [String: String]) -> OpaquePointer {
        let table = sv_g_hash_table_new_full(sv_g_str_hash, sv_g_str_equal, sv_g_free, sv_g_free)!
        for (key, value) in entries {
            sv_g_hash_table_insert(table, sv_g_strdup(key), sv_g_strdup(value))
        }
        return table
    }

    /// The entries of a `GHashTable` whose keys and values are UTF-8 strings.
    static func strings(of table: OpaquePointer) -> [String: String] {
        entries(of: table) { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
    }

    /// The entries of a `GHashTable` with UTF-8 string keys, each value read by `value`.
    static func entries<Value>(of table: OpaquePointer, _ value: (gpointer) -> Value) -> [String: Value] {
        var result: [String: Value] = [:]
        var iterator = GHashTableIter()
        sv_g_hash_table_iter_init(&iterator, table)
        var key: gpointer?
        var entry: gpointer?
        while sv_g_hash_table_iter_next(&iterator, &key, &entry) != 0 {
            guard let key, let entry else { continue }
            result[String(cString: key.assumingMemoryBound(to: CChar.self))] = value(entry)
        }
        return result
    }

    /// The strings of a NULL-terminated `gchar**`, which is then freed.
    static func takeStrings(_ vector: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
        guard let vector else { return [] }
        defer { sv_g_strfreev(vector) }
        var result: [String] = []
        var index = 0
        while let element = vector[index] {
            result.append(String(cString: element))
            index += 1
        }
        return result
    }

    /// Runs `body` with a NULL-terminated `const gchar**` of `strings`.
    static func withStringVector<T>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<gchar>?>) throws -> T) rethrows -> T {
        let copies = strings.map { UnsafePointer(sv_g_strdup($0)) } + [nil]
        defer { copies.forEach { sv_g_free(UnsafeMutableRawPointer(mutating: $0)) } }
        var vector = copies
        return try vector.withUnsafeMutableBufferPointer { try body($0.baseAddress!) }
    }

    /// A `SecretValue` holding a copy of `secret` in a buffer that is wiped when libsecret frees it.
    static func secretValue(_ secret: SecureBytes, contentType: String) -> OpaquePointer {
        let count = secret.count
        let block = malloc(WipedBuffer.headerBytes + max(count, 1))!
        block.storeBytes(of: count, as: Int.self)
        let payload = block + WipedBuffer.headerBytes
        secret.withUnsafeBytes { raw in
            if let base = raw.baseAddress, count > 0 { payload.copyMemory(from: base, byteCount: count) }
        }
        return sv_secret_value_new_full(payload.assumingMemoryBound(to: gchar.self), gssize(count), contentType, WipedBuffer.free)
    }

    /// Copies a `SecretValue`'s bytes into secure memory. libsecret's own buffer (secure memory on its
    /// side) is wiped when the value is unreferenced.
    static func secureBytes(of value: OpaquePointer) -> SecureBytes {
        var length: gsize = 0
        guard let bytes = sv_secret_value_get(value, &length) else { return SecureBytes(copying: []) }
        return SecureBytes(copying: UnsafeRawBufferPointer(start: UnsafeRawPointer(bytes), count: Int(length)))
    }
}

/// The destroy function for secret buffers we hand to libsecret: zeroes, then frees.
enum WipedBuffer {
    static let headerBytes = 16

    static let free: GDestroyNotify = { pointer in
        guard let pointer else { return }
        let block = pointer - headerBytes
        let count = block.load(as: Int.self)
        explicit_bzero(pointer, max(count, 1))
        Glibc.free(block)
    }
}

/// A `GError` taken over from a libsecret or GIO call: read once, then freed.
struct GLibError: Error {
    let domain: GQuark
    let code: Int32
    let message: String
    /// The D-Bus error name, when the error came from the other side of the bus.
    let remoteName: String?

    /// Takes ownership of `error` and frees it.
    init(taking error: UnsafeMutablePointer<GError>) {
        domain = error.pointee.domain
        code = error.pointee.code
        remoteName = sv_g_dbus_error_get_remote_error(error).map { name in
            defer { sv_g_free(name) }
            return String(cString: name)
        }
        if sv_g_dbus_error_is_remote_error(error) != 0 { sv_g_dbus_error_strip_remote_error(error) }
        message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        sv_g_error_free(error)
    }
}

/// Calls a GLib function that reports failure through a `GError**`, and throws it as ``GLibError``.
func withGError<T>(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> T) throws -> T {
    var error: UnsafeMutablePointer<GError>?
    let result = body(&error)
    if let error { throw GLibError(taking: error) }
    return result
}

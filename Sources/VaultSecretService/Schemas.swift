import CSecretLoader

/// The libsecret schemas sortedvault stores under. libsecret adds the schema's name as the
/// `xdg:schema` attribute, and silently refuses (a warning, no error) attributes a schema does not
/// declare — so every attribute we write is listed here.
enum Schemas {
    /// Items of ``SecretServiceTokenStore``: `service` and `account` as plain attributes, so that
    /// `secret-tool lookup service S account A` finds them; `sortedvault` holds the rest of the
    /// metadata as JSON (label, attributes, dates).
    nonisolated(unsafe) static let item = make("org.sortedvault.Item", [ItemAttributes.service, ItemAttributes.account, ItemAttributes.metadata])
    /// The same attributes, matched without the schema name: a lookup by service and account also
    /// finds items other tools stored (`secret-tool store service S account A`).
    nonisolated(unsafe) static let itemLookup = make("org.sortedvault.Item", [ItemAttributes.service, ItemAttributes.account, ItemAttributes.metadata],
                                                     flags: SV_SECRET_SCHEMA_DONT_MATCH_NAME)
    /// The key-encryption key of a vault whose key source is `secret-service`.
    nonisolated(unsafe) static let vaultKey = make("org.sortedvault.VaultKey", [vaultKeyID])
    static let vaultKeyID = "vault-key-id"

    private static func make(_ name: String, _ attributes: [String], flags: SVSecretSchemaFlags = SV_SECRET_SCHEMA_NONE) -> UnsafePointer<SVSecretSchema> {
        let table = sv_g_hash_table_new_full(sv_g_str_hash, sv_g_str_equal, sv_g_free, nil)!
        defer { sv_g_hash_table_unref(table) }
        for attribute in attributes {
            // The value is the attribute type as a pointer-sized integer: SECRET_SCHEMA_ATTRIBUTE_STRING is 0.
            sv_g_hash_table_insert(table, sv_g_strdup(attribute), gpointer(bitPattern: Int(SV_SECRET_SCHEMA_ATTRIBUTE_STRING.rawValue)))
        }
        return UnsafePointer(sv_secret_schema_newv(name, flags, table))
    }
}

/// The attribute names of a token-store item.
enum ItemAttributes {
    static let service = "service"
    static let account = "account"
    static let metadata = "sortedvault"
    /// Set by libsecret on items stored with a schema.
    static let schema = "xdg:schema"
}

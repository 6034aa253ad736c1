import VaultCrypto

/// `org.sortedvault.vault` (interfaces/org.sortedvault.vault.varlink): one type per method, its
/// `Item` type, and its error names. Times are seconds since 1970-01-01 UTC.
public enum VaultInterface {
    public static let name = "org.sortedvault.vault"

    /// Every secret parameter of every call of the interface, for a server that must divert them
    /// from the frame before it knows the method.
    public static let callSecrets = Store.requestSecrets.merging(Unlock.requestSecrets).merging(ChangePassphrase.requestSecrets)

    /// An item's metadata; never its secret.
    public struct Item: WireCodable, Equatable {
        public var service: String
        public var account: String
        public var label: String?
        public var attributes: [String: String]
        public var created: Double
        public var modified: Double
        public var expires: Double?

        public init(service: String, account: String, label: String? = nil, attributes: [String: String] = [:],
                    created: Double, modified: Double, expires: Double? = nil) {
            self.service = service
            self.account = account
            self.label = label
            self.attributes = attributes
            self.created = created
            self.modified = modified
            self.expires = expires
        }

        public init(from parameters: WireParameters) throws(WireParameterError) {
            service = try parameters.string("service")
            account = try parameters.string("account")
            label = try parameters.optionalString("label")
            attributes = try parameters.optionalStringMap("attributes") ?? [:]
            created = try parameters.double("created")
            modified = try parameters.double("modified")
            expires = try parameters.optionalDouble("expires")
        }

        public func encodeMembers(to writer: inout WireWriter) {
            writer.field("service", service)
            writer.field("account", account)
            writer.field("label", label)
            writer.field("attributes", attributes)
            writer.field("created", created)
            writer.field("modified", modified)
            writer.field("expires", expires)
        }
    }

    /// The `service` and `account` of an item call.
    public struct ItemName: WireCodable, Equatable {
        public var service: String
        public var account: String

        public init(service: String, account: String) {
            self.service = service
            self.account = account
        }

        public init(from parameters: WireParameters) throws(WireParameterError) {
            service = try parameters.string("service")
            account = try parameters.string("account")
        }

        public func encodeMembers(to writer: inout WireWriter) {
            writer.field("service", service)
            writer.field("account", account)
        }
    }

    /// `Store(service, account, secret, label?, attributes?, expires?) -> ()`.
    public enum Store: VarlinkMethod {
        public static let name = VaultInterface.name + ".Store"
        public static var requestSecrets: SecretLimits { SecretLimits(["secret": WireLimits.secretBytes]) }
        public typealias Reply = NoParameters

        public struct Request: WireCodable, Equatable {
            public var service: String
            public var account: String
            public var secret: SecureBytes
            public var label: String?
            public var attributes: [String: String]?
            public var expires: Double?
            /// Keep the replaced item's label, attributes and expiry where this call gives none.
            public var keep: Bool?

            public init(service: String, account: String, secret: SecureBytes, label: String? = nil,
                        attributes: [String: String]? = nil, expires: Double? = nil, keep: Bool? = nil) {
                self.service = service
                self.account = account
                self.secret = secret
                self.label = label
                self.attributes = attributes
                self.expires = expires
                self.keep = keep
            }

            public init(from parameters: WireParameters) throws(WireParameterError) {
                service = try parameters.string("service")
                account = try parameters.string("account")
                secret = try parameters.secret("secret")
                label = try parameters.optionalString("label")
                attributes = try parameters.optionalStringMap("attributes")
                expires = try parameters.optionalDouble("expires")
                keep = try parameters.optionalBool("keep")
            }

            public func encodeMembers(to writer: inout WireWriter) {
                writer.field("service", service)
                writer.field("account", account)
                writer.secretField("secret", secret)
                writer.field("label", label)
                if let attributes, !attributes.isEmpty { writer.field("attributes", attributes) }
                writer.field("expires", expires)
                if let keep { writer.field("keep", keep) }
            }
        }
    }

    /// `Retrieve(service, account) -> (secret, item)`.
    public enum Retrieve: VarlinkMethod {
        public static let name = VaultInterface.name + ".Retrieve"
        public static var replySecrets: SecretLimits { SecretLimits(["secret": WireLimits.secretBytes]) }
        public typealias Request = ItemName

        public struct Reply: WireCodable, Equatable {
            public var secret: SecureBytes
            public var item: Item

            public init(secret: SecureBytes, item: Item) {
                self.secret = secret
                self.item = item
            }

            public init(from parameters: WireParameters) throws(WireParameterError) {
                secret = try parameters.secret("secret")
                guard let item = try parameters.nested("item") else { throw WireParameterError("item", "is missing") }
                self.item = try Item(from: item)
            }

            public func encodeMembers(to writer: inout WireWriter) {
                writer.secretField("secret", secret)
                writer.key("item")
                writer.beginObject()
                item.encodeMembers(to: &writer)
                writer.endObject()
            }
        }
    }

    /// `Delete(service, account) -> ()`.
    public enum Delete: VarlinkMethod {
        public static let name = VaultInterface.name + ".Delete"
        public typealias Request = ItemName
        public typealias Reply = NoParameters
    }

    /// `List(service?) -> (items)`.
    public enum List: VarlinkMethod {
        public static let name = VaultInterface.name + ".List"

        public struct Request: WireCodable, Equatable {
            public var service: String?

            public init(service: String? = nil) { self.service = service }

            public init(from parameters: WireParameters) throws(WireParameterError) {
                service = try parameters.optionalString("service")
            }

            public func encodeMembers(to writer: inout WireWriter) { writer.field("service", service) }
        }

        public struct Reply: WireCodable, Equatable {
            public var items: [Item]

            public init(items: [Item]) { self.items = items }

            public init(from parameters: WireParameters) throws(WireParameterError) {
                var items: [Item] = []
                for item in try parameters.array("items") { items.append(try Item(from: item)) }
                self.items = items
            }

            public func encodeMembers(to writer: inout WireWriter) {
                writer.key("items")
                writer.beginArray()
                for item in items {
                    writer.beginObject()
                    item.encodeMembers(to: &writer)
                    writer.endObject()
                }
                writer.endArray()
            }
        }
    }
}

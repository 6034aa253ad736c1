import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// The discovery documents and key sets of the providers a vault logs in to, fetched on first use
/// and kept, so that verifying an id token usually needs no request.
///
/// ```swift
/// let cache = OIDCProviderCache(fetcher: HTTPDocumentFetcher(), clock: SystemClock())
/// let token = try await cache.verifyIDToken(idToken, issuer: issuer, clientID: "sorted-app")
/// ```
///
/// Freshness: a discovery document is kept for ``maximumAge``, a key set likewise. When a token names
/// a key id the cached set lacks (the provider rotated its key), the set is fetched again at once, but
/// at most once per ``keyRefetchInterval`` per issuer, so a flood of tokens with made-up key ids cannot
/// turn the vault into a tool that hammers the provider. Concurrent callers share one fetch. Time comes
/// from the injected clock. Nothing here is secret: the documents are public.
public actor OIDCProviderCache {
    /// The largest discovery document or key set a fetcher may return, in bytes.
    public static let maximumDocumentBytes = 64 * 1024

    public nonisolated let maximumAge: TimeInterval
    public nonisolated let keyRefetchInterval: TimeInterval
    private let fetcher: any OIDCDocumentFetcher
    private let clock: any VaultClock
    private var entries: [String: Entry] = [:]

    private struct Entry {
        var discovery: Stamped<OIDCDiscoveryDocument>?
        var keys: Stamped<JSONWebKeySet>?
        /// When the key set was last requested (successfully or not), for the refetch limit.
        var lastKeyFetch: Date?
        var discoveryInFlight: Task<OIDCDiscoveryDocument, any Error>?
        var keysInFlight: Task<JSONWebKeySet, any Error>?
    }

    private struct Stamped<Value> {
        let value: Value
        let fetchedAt: Date
    }

    /// - Parameters:
    ///   - maximumAge: how long a fetched document is used before it is fetched again (default 1 h).
    ///   - keyRefetchInterval: the least time between two key-set fetches caused by an unknown key id
    ///     (default 60 s).
    public init(fetcher: some OIDCDocumentFetcher, clock: some VaultClock,
                maximumAge: TimeInterval = 3600, keyRefetchInterval: TimeInterval = 60) {
        self.fetcher = fetcher
        self.clock = clock
        self.maximumAge = maximumAge
        self.keyRefetchInterval = keyRefetchInterval
    }

    /// Verifies `idToken` as issued by `issuer` to `clientID` (carrying `nonce` when given: the
    /// sign-in's), fetching what is missing or stale.
    ///
    /// Throws ``OIDCError``; ``OIDCError/Code/isTransient`` tells "could not ask the provider" apart
    /// from "the token is refused".
    public func verifyIDToken(_ idToken: SecureBytes, issuer: URL, clientID: String,
                              nonce: SecureBytes? = nil) async throws(OIDCError) -> VerifiedIDToken {
        let keys = try await keySet(for: issuer)
        // Only what the provider announces: a provider that signs with RS256 alone never has an
        // ES256 token accepted in its name.
        let announced = try await discovery(for: issuer).idTokenSigningAlgorithms.compactMap(JWSAlgorithm.init(rawValue:))
        let verifier = IDTokenVerifier(issuer: issuer, clientID: clientID, algorithms: Set(announced), nonce: nonce)
        do {
            return try verifier.verify(idToken, keys: keys, now: clock.now)
        } catch where error.code == .unknownKey && mayRefetchKeys(issuer) {
            return try verifier.verify(idToken, keys: try await keySet(for: issuer, forceFetch: true), now: clock.now)
        }
    }

    /// The issuer's discovery document, from the cache while it is younger than ``maximumAge``.
    public func discovery(for issuer: URL) async throws(OIDCError) -> OIDCDiscoveryDocument {
        let key = issuer.absoluteString
        if let cached = entries[key]?.discovery, isFresh(cached.fetchedAt) { return cached.value }
        let task = entries[key]?.discoveryInFlight ?? Task {
            let url = try OIDCDiscoveryDocument.discoveryURL(forIssuer: issuer)
            return try OIDCDiscoveryDocument(parsing: try await self.get(url), expectedIssuer: issuer)
        }
        entries[key, default: Entry()].discoveryInFlight = task
        defer { entries[key]?.discoveryInFlight = nil }
        let document = try await Self.value(of: task)
        entries[key]?.discovery = Stamped(value: document, fetchedAt: clock.now)
        return document
    }

    /// The issuer's key set, from the cache while it is younger than ``maximumAge`` unless `forceFetch`.
    public func keySet(for issuer: URL, forceFetch: Bool = false) async throws(OIDCError) -> JSONWebKeySet {
        let key = issuer.absoluteString
        if !forceFetch, let cached = entries[key]?.keys, isFresh(cached.fetchedAt) { return cached.value }
        let document = try await discovery(for: issuer)
        let task = entries[key]?.keysInFlight ?? Task {
            try JSONWebKeySet(parsing: try await self.get(document.jwksURI), from: document.jwksURI)
        }
        entries[key, default: Entry()].keysInFlight = task
        entries[key]?.lastKeyFetch = clock.now
        defer { entries[key]?.keysInFlight = nil }
        let keys = try await Self.value(of: task)
        entries[key]?.keys = Stamped(value: keys, fetchedAt: clock.now)
        return keys
    }

    /// Forgets everything cached for `issuer` (for example after the user changed its settings).
    public func forget(_ issuer: URL) {
        entries[issuer.absoluteString] = nil
    }

    private func mayRefetchKeys(_ issuer: URL) -> Bool {
        guard let last = entries[issuer.absoluteString]?.lastKeyFetch else { return true }
        return clock.now.timeIntervalSince(last) >= keyRefetchInterval
    }

    private func isFresh(_ fetchedAt: Date) -> Bool {
        let age = clock.now.timeIntervalSince(fetchedAt)
        return age >= 0 && age < maximumAge
    }

    /// One GET through the fetcher: 200 with a body under the cap, or the matching error.
    private func get(_ url: URL) async throws(OIDCError) -> [UInt8] {
        let answer: (status: Int, body: [UInt8])
        do {
            answer = try await fetcher.fetch(url)
        } catch let error as OIDCError {
            throw error
        } catch {
            throw OIDCError(.discoveryUnreachable, "the provider could not be reached at \(url.absoluteString) (\(error)): check the network; the login is kept and tried again later")
        }
        switch answer.status {
        case 200:
            guard answer.body.count <= Self.maximumDocumentBytes else { throw .documentTooLarge(url, limit: Self.maximumDocumentBytes) }
            return answer.body
        case 429, 500...599:
            throw OIDCError(.discoveryUnreachable, "the provider answered HTTP \(answer.status) at \(url.absoluteString): it is unavailable for now; the login is kept and tried again later")
        default:
            throw .malformedDocument(url, "the provider answered HTTP \(answer.status)")
        }
    }

    private static func value<T>(of task: Task<T, any Error>) async throws(OIDCError) -> T {
        do {
            return try await task.value
        } catch let error as OIDCError {
            throw error
        } catch {
            throw OIDCError(.discoveryUnreachable, "the provider could not be asked (\(error)): try again later")
        }
    }
}

import NIOSSL
import PostgresNIO
import VaultCore

/// postgres-nio's errors in the vault's words. The text names the failure and what to do; it never
/// carries a statement's bound values (they may be ciphertext or keyed hashes, useless to a reader).
enum DatabaseErrors {
    static func noAnswer(within limit: Duration) -> VaultError {
        // A write abandoned here may still commit on the server: say so, so nobody assumes it did not.
        VaultError(.unavailable,
                   "the database did not answer within \(seconds(limit)), so a write may or may not have been applied: check that PostgreSQL is running and reachable from this host, then read the item again")
    }

    static func translate(_ error: any Error) -> any Error {
        switch error {
        case is VaultError, is CancellationError:
            return error
        case let error as PostgresTransactionError:
            if let inner = error.closureError ?? error.beginError ?? error.commitError { return translate(inner) }
            return VaultError.storageFailure("a database transaction failed and was rolled back; try again")
        case let error as PSQLError:
            return translate(error)
        default:
            if let reason = tlsReason(error) { return VaultError(.unavailable, reason) }
            return VaultError(.unavailable, "the database could not be reached (\(type(of: error))); check that PostgreSQL is running and reachable")
        }
    }

    private static func translate(_ error: PSQLError) -> VaultError {
        guard error.code == .server else {
            if let reason = error.underlying.flatMap(tlsReason) { return VaultError(.unavailable, reason) }
            return VaultError(.unavailable,
                              "the database connection failed (\(error.code)); check that PostgreSQL is running and reachable and that the settings name the right socket or host")
        }
        let state = error.serverInfo?[.sqlState] ?? "?"
        let message = error.serverInfo?[.message] ?? "no message"
        switch state {
        case "57014", "55P03", "57P01", "57P02", "57P03", "53300":
            // Cancelled by statement_timeout, lock_timeout, shut down, or out of connections: passing.
            return VaultError(.unavailable, "the database did not complete the call (SQLSTATE \(state): \(message)); try again")
        case "28P01", "28000":
            return VaultError(.permissionDenied, "the database refused the login (\(message)); check the user and the password file")
        default:
            return VaultError.storageFailure("the database refused a statement (SQLSTATE \(state): \(message))")
        }
    }

    /// A TLS failure, said as what to check: the certificate's names, or who signed it.
    private static func tlsReason(_ error: any Error) -> String? {
        switch error {
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return "the database server's TLS certificate does not name the host in the settings (for an IP address, the certificate needs it as an IP subject alternative name), so the connection was refused: connect by the name the certificate was made for, or give the server a certificate that names this host"
        case NIOSSLError.handshakeFailed(let reason):
            return "the TLS handshake with the database server failed (\(reason)), so the connection was refused: check that the server's certificate is signed by the CA in ca_file (or, without ca_file, by one of this system's CAs) and has not expired"
        case let error as NIOSSLError:
            return "TLS with the database server failed (\(error)), so the connection was refused: check its certificate and the ca_file setting"
        default:
            return nil
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let (whole, fraction) = duration.components
        if fraction == 0 { return "\(whole) s" }
        return "\(Double(whole) + Double(fraction) / 1e18) s"
    }
}

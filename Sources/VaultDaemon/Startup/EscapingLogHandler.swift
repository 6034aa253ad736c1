import AccessLogFile
import Logging

/// A `LogHandler` that escapes the message and every metadata value (``LogText``) before the
/// handler it wraps writes them: a newline in a program's path cannot forge a line in the daemon's
/// log or the journal, and no control sequence reaches a terminal that shows it.
///
/// ```swift
/// LoggingSystem.bootstrap { EscapingLogHandler(wrapping: StreamLogHandler.standardError(label: $0)) }
/// ```
public struct EscapingLogHandler: LogHandler {
    private var wrapped: any LogHandler

    public init(wrapping handler: any LogHandler) {
        wrapped = handler
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue.mapValues(Self.escaped) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue.map(Self.escaped) }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: LogText.escaped(event.message.description))
        event.metadata = event.metadata?.mapValues(Self.escaped)
        wrapped.log(event: event)
    }

    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): return .string(LogText.escaped(text))
        case .stringConvertible(let convertible): return .string(LogText.escaped(convertible.description))
        case .array(let values): return .array(values.map(escaped))
        case .dictionary(let values): return .dictionary(values.mapValues(escaped))
        }
    }
}

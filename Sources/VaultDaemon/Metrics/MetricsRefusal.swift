import NIOConcurrencyHelpers
import NIOCore

/// How many metrics connections are open, against ``MetricsServer/maxConnections``.
final class ConnectionSlots: Sendable {
    private let open = NIOLockedValueBox(0)
    private let limit: Int

    init(_ limit: Int) {
        self.limit = limit
    }

    /// Takes a slot for a new connection; false when all are taken.
    func take() -> Bool {
        open.withLockedValue { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    /// Gives back the slot of a connection that closed.
    func give() {
        open.withLockedValue { $0 -= 1 }
    }
}

/// A metrics connection over ``MetricsServer/maxConnections``: answered 503 at once, without
/// reading its request, and closed, so it holds its descriptor for no longer than that.
final class MetricsRefusal: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private static let answer: [UInt8] = {
        let body = "too many metrics connections are open; try again later\n"
        return Array(("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      + "Content-Length: \(body.utf8.count)\r\nRetry-After: 5\r\nConnection: close\r\n\r\n" + body).utf8)
    }()

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(bytes: Self.answer))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

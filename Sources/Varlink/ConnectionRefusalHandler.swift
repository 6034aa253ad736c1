import NIOCore

/// Answers a refused connection (over a limit, or not admitted) with one error reply, then closes it.
///
/// It closes only its output at first and drains what the client already sent: a full close with
/// unread bytes in the socket makes the kernel send RST, and the client could lose the reply. The
/// connection is closed for good when the client closes, or after `drainTimeout` at the latest.
final class ConnectionRefusalHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let reason: VarlinkError
    private let drainTimeout: TimeAmount
    private var drained = 0
    private static let maximumDrainBytes = 1 << 20

    init(reason: VarlinkError = .connectionLimitReached, drainTimeout: TimeAmount = .seconds(2)) {
        self.reason = reason
        self.drainTimeout = drainTimeout
    }

    func channelActive(context: ChannelHandlerContext) {
        let bytes = VarlinkMessage.encodeError(reason)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(bytes: bytes))).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
        }
        context.eventLoop.scheduleTask(in: drainTimeout) { channel.close(promise: nil) }
        context.read()
    }

    /// Discards what the client sends, up to a bound, while it reads the refusal.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        drained += unwrapInboundIn(data).readableBytes
        if drained > Self.maximumDrainBytes { context.close(promise: nil) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.read()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event { context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

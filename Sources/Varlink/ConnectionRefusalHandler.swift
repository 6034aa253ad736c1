import NIOCore

/// Answers a connection over the limits with one error reply, then closes it.
final class ConnectionRefusalHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let reason: VarlinkError

    init(reason: VarlinkError = .connectionLimitReached) {
        self.reason = reason
    }

    func channelActive(context: ChannelHandlerContext) {
        let bytes = VarlinkMessage.encodeError(reason)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes))).whenComplete { [channel = context.channel] _ in
            channel.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

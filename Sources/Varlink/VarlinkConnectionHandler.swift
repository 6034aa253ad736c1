import Logging
import NIOCore

/// Serves one connection: answers its calls one at a time, in order, and writes the replies.
///
/// The pipeline before it does the rest with NIO's pieces: a `ByteToMessageHandler` with
/// ``VarlinkFrameDecoder`` splits the frames, and an `IdleStateHandler` reports a connection on
/// which no call came in and no reply went out for the idle timeout.
///
/// Reading is manual (`autoRead` off) and bounded by bytes, not by messages: the handler asks for
/// more only while no frame waits for its turn, and only while the channel is writable. A frame is
/// parsed only when its call starts, so a client that pipelines, or sends a frame that never ends,
/// costs at most one read of frames plus one frame in the decoder; the rest stays in its own
/// socket buffers.
///
/// A client that sends its requests and then shuts down its writing side (`shutdown(SHUT_WR)`,
/// `socat`, `printf … | nc -U`) gets an answer to every complete request before the close.
/// Every method runs on the channel's event loop.
final class VarlinkConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = VarlinkFrameDecoder.InboundOut
    typealias OutboundOut = ByteBuffer

    private let dispatcher: VarlinkDispatcher
    private let maxDepth: Int
    private let peer: PeerCredentials
    private let liveToken: LiveHandlerCount.Token
    private var sink: ReplySink?
    private var executor: EventLoopTaskExecutor?
    /// Frames (or the error that ends the connection) waiting for their turn.
    private var pending = CircularBuffer<VarlinkFrameDecoder.InboundOut>()
    /// The call being answered in a task; the next waits for it.
    private var handlerTask: Task<Void, Never>?
    /// The client shut down its writing side: answer what is decoded, then close.
    private var inputClosed = false
    /// Closing or closed: nothing more is read, answered or written.
    private var isClosing = false
    /// The last reply written, so that a close waits for it to reach the socket.
    private var lastWrite: EventLoopFuture<Void>?

    init(dispatcher: VarlinkDispatcher, maxDepth: Int, peer: PeerCredentials, liveToken: LiveHandlerCount.Token) {
        self.dispatcher = dispatcher
        self.maxDepth = maxDepth
        self.liveToken = liveToken
        self.peer = peer
    }

    /// The handlers of a connection, in pipeline order.
    static func pipeline(dispatcher: VarlinkDispatcher, configuration: VarlinkServerConfiguration, peer: PeerCredentials,
                         allocator: ByteBufferAllocator, liveToken: LiveHandlerCount.Token) -> [any ChannelHandler] {
        [
            ByteToMessageHandler(VarlinkFrameDecoder(maxFrameBytes: configuration.maxFrameBytes, allocator: allocator)),
            // After the decoder: only whole calls count as activity, not a frame sent a byte at a time.
            IdleStateHandler(allTimeout: TimeAmount(configuration.idleTimeout)),
            VarlinkConnectionHandler(dispatcher: dispatcher, maxDepth: configuration.maxDepth, peer: peer, liveToken: liveToken),
        ]
    }

    func handlerAdded(context: ChannelHandlerContext) {
        sink = ReplySink(channel: context.channel)
        // One executor per connection: handler tasks prefer the connection's own loop.
        executor = EventLoopTaskExecutor(context.eventLoop)
    }

    /// The channel closed (NIO removes every handler then): nothing the handler holds may keep the
    /// channel alive.
    func handlerRemoved(context: ChannelHandlerContext) {
        stopServing()
        sink = nil
        executor = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        context.read()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopServing()
        context.fireChannelInactive()
    }

    /// The connection is gone: no more replies, the call in progress cancelled, the waiting frames
    /// zeroed and dropped.
    private func stopServing() {
        isClosing = true
        sink?.markClosed()
        handlerTask?.cancel()
        dropPending()
    }

    private func dropPending() {
        while let next = pending.popFirst() {
            if case .success(let frame) = next { frame.wipeStorage() }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        pending.append(unwrapInboundIn(data))
        serveNext(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        readIfReady(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let event as ChannelEvent where event == .inputClosed:
            inputClosed = true
            serveNext(context: context)
        case let event as IdleStateHandler.IdleStateEvent where event == .all:
            // A call in progress is not idle, unless its client stopped reading its replies.
            if handlerTask == nil || !context.channel.isWritable {
                dispatcher.logger.debug("Closing idle connection", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
                context.close(promise: nil)
            }
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        serveNext(context: context)
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: - The pipeline of calls

    /// Answers the waiting calls one after the other, until one needs a task, the channel stops
    /// being writable, or none is left; then reads on, or closes after a half-close.
    private func serveNext(context: ChannelHandlerContext) {
        while handlerTask == nil, !isClosing, context.channel.isWritable, let next = pending.popFirst() {
            let call: VarlinkCall
            switch next.flatMap(parse) {
            case .success(let parsed): call = parsed
            case .failure(let error): return refuseAndClose(error, context: context)
            }
            let callContext = VarlinkCallContext(peer: peer, sink: sink!, more: call.more, oneway: call.oneway)
            switch dispatcher.dispatch(call, context: callContext) {
            case .now(let result): write(result, of: call, context: context)
            case .later(let work): start(call, work, context: context)
            }
        }
        if inputClosed, pending.isEmpty, handlerTask == nil, !isClosing {
            closeAfterWrites(context: context)
        }
        readIfReady(context: context)
    }

    /// Parses a frame where it lies (secret parameters go from there straight into the interface's
    /// secure memory), then zeroes it.
    private func parse(_ frame: ByteBuffer) -> Result<VarlinkCall, VarlinkError> {
        defer { frame.wipeStorage() }
        return frame.withUnsafeReadableBytes { VarlinkMessage.decodeCall($0, maxDepth: maxDepth, secrets: dispatcher.secretParameters) }
    }

    private func readIfReady(context: ChannelHandlerContext) {
        guard pending.isEmpty, !inputClosed, !isClosing, context.channel.isWritable else { return }
        context.read()
    }

    /// Answers a broken or oversized message, after the replies before it, and closes.
    private func refuseAndClose(_ error: VarlinkError, context: ChannelHandlerContext) {
        dispatcher.logger.info("Closing connection after an error", metadata: [
            "uid": "\(peer.uid)", "pid": "\(peer.pid)", "error": .string(error.name),
        ])
        dropPending()
        lastWrite = context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: VarlinkMessage.encodeError(error))))
        closeAfterWrites(context: context)
    }

    /// Closes once the replies already written have reached the socket (a plain close would drop them).
    private func closeAfterWrites(context: ChannelHandlerContext) {
        isClosing = true
        let channel = context.channel
        if let lastWrite {
            lastWrite.whenComplete { _ in channel.close(promise: nil) }
        } else {
            channel.close(promise: nil)
        }
    }

    private func start(_ call: VarlinkCall, _ work: @escaping @Sendable () async -> Result<VarlinkReply, VarlinkError>,
                       context: ChannelHandlerContext) {
        dispatcher.logger.debug("Call", metadata: [
            "method": .string(call.method), "uid": "\(peer.uid)", "pid": "\(peer.pid)",
        ])
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        handlerTask = Task(executorPreference: executor) {
            let result = await work()
            eventLoop.execute {
                loopBound.value.handler.finish(call, result, context: loopBound.value.context)
            }
        }
    }

    private func finish(_ call: VarlinkCall, _ result: Result<VarlinkReply, VarlinkError>, context: ChannelHandlerContext) {
        handlerTask = nil
        guard !isClosing else { return }
        write(result, of: call, context: context)
        serveNext(context: context)
    }

    private func write(_ result: Result<VarlinkReply, VarlinkError>, of call: VarlinkCall, context: ChannelHandlerContext) {
        guard !call.oneway else { return }
        switch result {
        case .success(let reply):
            let (buffer, isSensitive) = reply.frame(allocator: context.channel.allocator, continues: false)
            let write = context.writeAndFlush(wrapOutboundOut(buffer))
            // A reply with secrets is zeroed once the channel is done with it, written or not.
            if isSensitive { write.whenComplete { _ in buffer.wipeStorage() } }
            lastWrite = write
        case .failure(let error):
            lastWrite = context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: VarlinkMessage.encodeError(error))))
        }
    }
}

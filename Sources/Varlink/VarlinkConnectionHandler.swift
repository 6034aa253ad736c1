import Logging
import NIOCore

/// Serves one connection: splits frames, handles calls one at a time in order, writes replies,
/// and applies backpressure and the idle timeout.
///
/// Reading is manual (`autoRead` off): the handler asks for more bytes only while fewer than
/// `maxPendingRequests` calls wait and the channel is writable, so a client that pipelines
/// without reading fills only its own socket buffers. Every method runs on the channel's event loop.
final class VarlinkConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Pending {
        case call(VarlinkCall)
        /// A broken message: answer with this error after the calls before it, then close.
        case fatal(VarlinkError)
    }

    private let dispatcher: VarlinkDispatcher
    private let configuration: VarlinkServerConfiguration
    private let peer: PeerCredentials
    private var frames: FrameBuffer
    private var pending: [Pending] = []
    private var sink: ReplySink?
    private var context: ChannelHandlerContext?
    private var handlerTask: Task<Void, Never>?
    private var isBusy = false
    /// Set after a fatal message: nothing more is parsed or read.
    private var isStopped = false
    private var isClosed = false
    private var idleTimer: Scheduled<Void>?

    init(dispatcher: VarlinkDispatcher, configuration: VarlinkServerConfiguration, peer: PeerCredentials, allocator: ByteBufferAllocator) {
        self.dispatcher = dispatcher
        self.configuration = configuration
        self.peer = peer
        self.frames = FrameBuffer(allocator: allocator)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.sink = ReplySink(channel: context.channel)
    }

    func channelActive(context: ChannelHandlerContext) {
        updateIdleTimer()
        context.read()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        sink?.markClosed()
        handlerTask?.cancel()
        idleTimer?.cancel()
        idleTimer = nil
        pending.removeAll()
        frames.wipe()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        guard !isStopped, !isClosed else {
            incoming.withUnsafeMutableReadableBytes { bytes in
                for index in bytes.indices { bytes[index] = 0 }
            }
            return
        }
        frames.append(&incoming)
        parseFrames()
        startNextCall()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        readIfReady()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        updateIdleTimer()
        startNextCall()
        readIfReady()
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: - The pipeline of calls

    private func parseFrames() {
        while !isStopped, pending.count < configuration.maxPendingRequests {
            let maxDepth = configuration.maxDepth
            let next = frames.nextFrame(maxBytes: configuration.maxFrameBytes) { frame in
                VarlinkMessage.decodeCall(frame, maxDepth: maxDepth)
            }
            switch next {
            case .frame(.success(let call)):
                pending.append(.call(call))
            case .frame(.failure(let error)):
                pending.append(.fatal(error))
                stopReading()
            case .tooLarge:
                pending.append(.fatal(.frameTooLarge(limit: configuration.maxFrameBytes)))
                stopReading()
            case .needMore:
                return
            }
        }
    }

    private func stopReading() {
        isStopped = true
        frames.wipe()
    }

    private func readIfReady() {
        guard let context, !isStopped, !isClosed, pending.count < configuration.maxPendingRequests,
              context.channel.isWritable
        else { return }
        context.read()
    }

    private func startNextCall() {
        guard let context, let sink, !isBusy, !isClosed, context.channel.isWritable, !pending.isEmpty else {
            updateIdleTimer()
            return
        }
        switch pending.removeFirst() {
        case .fatal(let error):
            dispatcher.logger.info("Closing connection after a malformed message", metadata: [
                "uid": "\(peer.uid)", "pid": "\(peer.pid)", "error": .string(error.name),
            ])
            let bytes = VarlinkMessage.encodeError(error)
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes))).whenComplete { [channel = context.channel] _ in
                channel.close(promise: nil)
            }
            isClosed = true
            pending.removeAll()
        case .call(let call):
            isBusy = true
            updateIdleTimer()
            dispatcher.logger.debug("Call", metadata: [
                "method": .string(call.method), "uid": "\(peer.uid)", "pid": "\(peer.pid)",
            ])
            let callContext = VarlinkCallContext(peer: peer, sink: sink, more: call.more, oneway: call.oneway)
            let dispatcher = self.dispatcher
            let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            let executor = self.taskExecutor(for: eventLoop)
            handlerTask = Task(executorPreference: executor) {
                let result = await dispatcher.dispatch(call, context: callContext)
                eventLoop.execute {
                    loopBoundSelf.value.finish(call, result)
                }
            }
        }
    }

    private var cachedExecutor: EventLoopTaskExecutor?

    /// One executor per connection, made on first use.
    private func taskExecutor(for eventLoop: any EventLoop) -> EventLoopTaskExecutor {
        if let cachedExecutor { return cachedExecutor }
        let executor = EventLoopTaskExecutor(eventLoop)
        cachedExecutor = executor
        return executor
    }

    private func finish(_ call: VarlinkCall, _ result: Result<[String: JSONValue], VarlinkError>) {
        isBusy = false
        handlerTask = nil
        guard let context, !isClosed else { return }
        if !call.oneway {
            let bytes: [UInt8]
            switch result {
            case .success(let parameters): bytes = VarlinkMessage.encodeReply(parameters)
            case .failure(let error): bytes = VarlinkMessage.encodeError(error)
            }
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
        }
        parseFrames()
        startNextCall()
        readIfReady()
    }

    // MARK: - Idle timeout

    /// Runs the idle timer while no call is being handled, or while the client is not reading
    /// (a stalled stream counts as idle).
    private func updateIdleTimer() {
        guard let context, !isClosed else { return }
        let shouldRun = !isBusy || !context.channel.isWritable
        if shouldRun, idleTimer == nil {
            let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
            let timeout = TimeAmount(configuration.idleTimeout)
            idleTimer = context.eventLoop.scheduleTask(in: timeout) {
                loopBoundSelf.value.idleTimerFired()
            }
        } else if !shouldRun, let timer = idleTimer {
            timer.cancel()
            idleTimer = nil
        }
    }

    private func idleTimerFired() {
        idleTimer = nil
        guard let context, !isClosed else { return }
        if !isBusy || !context.channel.isWritable {
            dispatcher.logger.debug("Closing idle connection", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
            context.close(promise: nil)
        } else {
            updateIdleTimer()
        }
    }
}

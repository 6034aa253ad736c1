import Logging
import NIOCore

/// Serves one connection: splits frames, handles calls one at a time in order, writes replies,
/// and applies backpressure and the idle timeout.
///
/// Reading is manual (`autoRead` off) and bounded by bytes, not by messages: the handler reads
/// only while no complete frame waits in its buffer and the partial frame there is within
/// `maxFrameBytes`, and only while the channel is writable. A frame is parsed only when its call
/// starts, so a client that pipelines, or sends a frame that never ends, costs at most one frame
/// of buffer plus the call being handled; the rest stays in its own socket buffers.
///
/// A client that sends its requests and then shuts down its writing side (`shutdown(SHUT_WR)`,
/// `socat`, `printf … | nc -U`) gets an answer to every complete request before the close.
/// Every method runs on the channel's event loop.
final class VarlinkConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let dispatcher: VarlinkDispatcher
    private let configuration: VarlinkServerConfiguration
    private let peer: PeerCredentials
    private let liveToken: LiveHandlerCount.Token
    private var frames: FrameBuffer
    private var sink: ReplySink?
    private var context: ChannelHandlerContext?
    private var handlerTask: Task<Void, Never>?
    private var isBusy = false
    /// A frame too large to buffer: answered with this error after the calls before it, then closed.
    private var oversized: VarlinkError?
    /// The client shut down its writing side: answer what is buffered, then close.
    private var inputClosed = false
    private var isClosed = false
    private var idleTimer: Scheduled<Void>?
    /// When the last call answered on the loop came in: such a call never makes the connection busy,
    /// so the idle timer checks this before it closes.
    private var lastCallOnLoop: NIODeadline?
    /// The last reply written, so that a close waits for it to reach the socket.
    private var lastWrite: EventLoopFuture<Void>?

    init(dispatcher: VarlinkDispatcher, configuration: VarlinkServerConfiguration, peer: PeerCredentials,
         allocator: ByteBufferAllocator, liveToken: LiveHandlerCount.Token) {
        self.dispatcher = dispatcher
        self.liveToken = liveToken
        self.configuration = configuration
        self.peer = peer
        self.frames = FrameBuffer(allocator: allocator)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        self.sink = ReplySink(channel: context.channel)
    }

    /// The channel closed (NIO removes every handler then): drop the context. The context holds this
    /// handler, so while the handler held its context neither was ever freed, nor the pipeline and
    /// channel behind them: about 4.6 KiB per connection, for the daemon's lifetime.
    func handlerRemoved(context: ChannelHandlerContext) {
        stopServing()
        self.context = nil
        sink = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        updateIdleTimer()
        context.read()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopServing()
        context.fireChannelInactive()
    }

    /// The connection is gone: no more replies, the call in progress cancelled, the buffer wiped.
    private func stopServing() {
        isClosed = true
        sink?.markClosed()
        handlerTask?.cancel()
        idleTimer?.cancel()
        idleTimer = nil
        frames.wipe()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        guard oversized == nil, !isClosed else {
            incoming.withUnsafeMutableReadableBytes { bytes in
                for index in bytes.indices { bytes[index] = 0 }
            }
            return
        }
        frames.append(&incoming)
        checkFrameSize()
        startNextCall()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        readIfReady()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, case .inputClosed = event {
            inputClosed = true
            startNextCall()
        }
        context.fireUserInboundEventTriggered(event)
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

    /// A partial frame already over the limit can never become a valid message: drop its bytes at
    /// once (they are not kept while earlier calls finish) and remember to answer it.
    private func checkFrameSize() {
        guard oversized == nil, !frames.hasCompleteFrame, frames.bufferedBytes > configuration.maxFrameBytes else { return }
        oversized = .frameTooLarge(limit: configuration.maxFrameBytes)
        frames.wipe()
    }

    private func readIfReady() {
        guard let context, oversized == nil, !inputClosed, !isClosed, context.channel.isWritable,
              !frames.hasCompleteFrame, frames.bufferedBytes <= configuration.maxFrameBytes
        else { return }
        context.read()
    }

    /// Starts the next buffered call. Calls the interface answers on the loop (``VarlinkInterface/handleOnLoop(_:context:)``)
    /// are answered here, one after the other, until one needs a task or the buffer holds no whole frame.
    private func startNextCall() {
        while let context, let sink, !isBusy, !isClosed, context.channel.isWritable {
            let maxDepth = configuration.maxDepth
            let secrets = dispatcher.secretParameters
            let next = frames.nextFrame(maxBytes: configuration.maxFrameBytes) { frame in
                VarlinkMessage.decodeCall(frame, maxDepth: maxDepth, secrets: secrets)
            }
            switch next {
            case .frame(.success(let call)):
                if answerOnLoop(call, context: context, sink: sink) { continue }
                start(call, context: context, sink: sink)
                return
            case .frame(.failure(let error)):
                refuseAndClose(error, context: context)
                return
            case .tooLarge:
                refuseAndClose(.frameTooLarge(limit: configuration.maxFrameBytes), context: context)
                return
            case .needMore:
                if let oversized {
                    refuseAndClose(oversized, context: context)
                } else if inputClosed {
                    closeAfterWrites(context: context)
                } else {
                    updateIdleTimer()
                    readIfReady()
                }
                return
            }
        }
        updateIdleTimer()
    }

    /// The fast path: true when the interface answered `call` here, on the loop, and the reply is written.
    private func answerOnLoop(_ call: VarlinkCall, context: ChannelHandlerContext, sink: ReplySink) -> Bool {
        let callContext = VarlinkCallContext(peer: peer, sink: sink, more: call.more, oneway: call.oneway)
        guard let result = dispatcher.dispatchOnLoop(call, context: callContext) else { return false }
        lastCallOnLoop = .now()
        write(result, of: call, context: context)
        return true
    }

    /// Answers a broken or oversized message, after the replies before it, and closes.
    private func refuseAndClose(_ error: VarlinkError, context: ChannelHandlerContext) {
        dispatcher.logger.info("Closing connection after an error", metadata: [
            "uid": "\(peer.uid)", "pid": "\(peer.pid)", "error": .string(error.name),
        ])
        frames.wipe()
        lastWrite = context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: VarlinkMessage.encodeError(error))))
        closeAfterWrites(context: context)
    }

    /// Closes once the replies already written have reached the socket (a plain close would drop them).
    private func closeAfterWrites(context: ChannelHandlerContext) {
        isClosed = true
        let channel = context.channel
        if let lastWrite {
            lastWrite.whenComplete { _ in channel.close(promise: nil) }
        } else {
            channel.close(promise: nil)
        }
    }

    private func start(_ call: VarlinkCall, context: ChannelHandlerContext, sink: ReplySink) {
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

    private var cachedExecutor: EventLoopTaskExecutor?

    /// One executor per connection, made on first use.
    private func taskExecutor(for eventLoop: any EventLoop) -> EventLoopTaskExecutor {
        if let cachedExecutor { return cachedExecutor }
        let executor = EventLoopTaskExecutor(eventLoop)
        cachedExecutor = executor
        return executor
    }

    private func finish(_ call: VarlinkCall, _ result: Result<VarlinkReply, VarlinkError>) {
        isBusy = false
        handlerTask = nil
        guard let context, !isClosed else { return }
        write(result, of: call, context: context)
        startNextCall()
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
        if let lastCallOnLoop, case let idleUntil = lastCallOnLoop + TimeAmount(configuration.idleTimeout), idleUntil > .now() {
            let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
            idleTimer = context.eventLoop.scheduleTask(deadline: idleUntil) {
                loopBoundSelf.value.idleTimerFired()
            }
            return
        }
        if !isBusy || !context.channel.isWritable {
            dispatcher.logger.debug("Closing idle connection", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
            context.close(promise: nil)
        } else {
            updateIdleTimer()
        }
    }
}

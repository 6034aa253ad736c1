import NIOCore
import NIOHTTP1

/// One connection of the metrics endpoint: `GET /metrics` (or `HEAD`) is answered with the scrape,
/// any other target 404, any other method 405; a request with a body is refused (400) and the
/// connection closed, and so is one naming another `Host` (421, ``MetricsHostCheck``). NIOHTTP1's server pipeline (with its pipelining assistance) hands it one
/// request at a time and answers malformed or oversized heads with 400 itself.
final class MetricsHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// A scrape's request is a line and a few headers; this leaves room for proxies' additions.
    static let maxHeaderBytes = 8 * 1024

    private let scrape: @Sendable () async -> [UInt8]
    private let hosts: MetricsHostCheck
    private var request: HTTPRequestHead?
    private var refused = false

    init(hosts: MetricsHostCheck, scrape: @escaping @Sendable () async -> [UInt8]) {
        self.hosts = hosts
        self.scrape = scrape
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
            refused = false
        case .body:
            guard !refused else { return }
            refused = true
            respond(context, status: .badRequest, body: Array("a scrape has no body\n".utf8), keepAlive: false)
        case .end:
            guard let head = request, !refused else { return }
            request = nil
            answer(context, head)
        }
    }

    private func answer(_ context: ChannelHandlerContext, _ head: HTTPRequestHead) {
        guard hosts.admits(head) else {
            respond(context, status: .misdirectedRequest,
                    body: Array("this endpoint answers only requests for its own address or localhost (Host)\n".utf8), keepAlive: false)
            return
        }
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == "/metrics" else {
            respond(context, status: .notFound, body: Array("not found: the metrics are at GET /metrics\n".utf8), keepAlive: head.isKeepAlive)
            return
        }
        guard head.method == .GET || head.method == .HEAD else {
            respond(context, status: .methodNotAllowed, body: Array("only GET /metrics is served\n".utf8), keepAlive: head.isKeepAlive,
                    extra: [("Allow", "GET, HEAD")])
            return
        }
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        let scrape = scrape
        let keepAlive = head.isKeepAlive, isHead = head.method == .HEAD
        loop.makeFutureWithTask { await scrape() }.whenSuccess { text in
            let (handler, context) = bound.value
            handler.respond(context, status: .ok, body: text, keepAlive: keepAlive, headOnly: isHead,
                            contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
    }

    private func respond(_ context: ChannelHandlerContext, status: HTTPResponseStatus, body: [UInt8], keepAlive: Bool,
                         headOnly: Bool = false, contentType: String = "text/plain; charset=utf-8", extra: [(String, String)] = []) {
        guard context.channel.isActive else { return }
        var headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", "\(body.count)"),
                                   ("Connection", keepAlive ? "keep-alive" : "close")])
        headers.add(contentsOf: extra)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if !headOnly {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        if !keepAlive {
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
        }
    }

    /// A malformed or oversized request (NIOHTTP1's error handler has answered it 400): nothing more
    /// is read from this connection.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}

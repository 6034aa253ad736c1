import NIOCore
import NIOPosix
import Varlink
import VaultAPI
import VaultCore

extension VaultClient {
    /// The reply frames of a call made with `more: true`, read on NIO's event loop: a stream that
    /// lasts for hours holds no thread while it waits. The connection is opened, checked
    /// (``SocketTrust``) and the call sent as every other call is, on the pool; then the socket is
    /// handed to the event loop. Each stream has a connection of its own.
    func openStream<M: VarlinkMethod & SendableMetatype>(_ method: M.Type, _ request: M.Request) async throws
        -> NIOAsyncChannel<VarlinkFrameDecoder.InboundOut, ByteBuffer> where M.Request: Sendable {
        let path = socketPath
        let timeout = self.timeout
        let descriptor = try await threadPool.runIfActive { () throws -> Int32 in
            let connection: WireConnection
            do throws(VarlinkClientError) {
                connection = try Self.connect(path, timeout: timeout)
            } catch {
                throw Self.vaultError(error, socketPath: path)
            }
            do throws(TransportFailure) {
                try connection.send(VarlinkWire.encodeCall(M.self, request, more: true))
            } catch {
                throw Self.vaultError(error == .timedOut ? .timedOut : .connectionClosed, socketPath: path)
            }
            return connection.detachDescriptor()
        }
        return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).withConnectedSocket(descriptor) { channel in
            channel.eventLoop.makeCompletedFuture {
                let frames = VarlinkFrameDecoder(maxFrameBytes: WireConnection.maximumReplyBytes, allocator: channel.allocator)
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(frames))
                return try NIOAsyncChannel<VarlinkFrameDecoder.InboundOut, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    }
}

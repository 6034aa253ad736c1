import NIOCore
import NIOPosix

// Starts and stops one event loop thread, as a NIO client must before it can connect.
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let value = try group.next().submit { 42 }.wait()
print("hello \(value)")
try group.syncShutdownGracefully()

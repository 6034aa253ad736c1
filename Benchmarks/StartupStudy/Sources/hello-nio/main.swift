import NIOCore
import NIOPosix

// Links NIOCore and NIOPosix and uses a ByteBuffer, without starting an event loop.
var buffer = ByteBufferAllocator().buffer(capacity: 64)
buffer.writeString("hello")
print(buffer.readString(length: buffer.readableBytes) ?? "")
print(System.coreCount > 0 ? "cores" : "none")

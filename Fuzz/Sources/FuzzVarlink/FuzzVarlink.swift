import BoundedJSON
import FuzzSupport
import NIOCore
@_spi(Benchmarks) import Varlink
import VaultCrypto

/// The varlink server's read path: NUL framing (``VarlinkFrameDecoder``) and call decoding, with and
/// without secret parameters diverted into secure memory. Contract: no crash; frames come out
/// exactly as the NUL-split input, in order, and none over the limit; a decoded call encodes to a
/// frame that decodes to the same call.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVarlink(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (selector, input) = split(data, size)
    // The selector chooses where the input is cut into reads, as a socket would deliver it.
    let chunk = max(1, Int(selector))
    let maxBytes = 4096
    var decoder = VarlinkFrameDecoder(maxFrameBytes: maxBytes, allocator: ByteBufferAllocator())
    var buffer = ByteBuffer()
    var received: [[UInt8]] = []
    var tooLarge = false
    var offset = 0
    reading: while offset < input.count {
        buffer.writeBytes(input[offset..<min(input.count, offset + chunk)])
        offset += chunk
        while let next = decoder.decode(buffer: &buffer) {
            switch next {
            case .success(let frame): received.append(Array(frame.readableBytesView))
            case .failure: tooLarge = true; break reading
            }
        }
    }
    // The pieces between NULs; the last one is what no NUL has ended yet.
    let pieces = input.split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
    let expected = Array(pieces.dropLast())
    if tooLarge {
        require(received.elementsEqual(expected.prefix(received.count)), "frames before an oversized one differ from the input")
        require(pieces[received.count].count > maxBytes, "a frame within the limit was refused as too large")
    } else {
        require(received == expected, "frames differ from the NUL-split input")
    }
    for frame in received {
        require(frame.count <= maxBytes, "a frame over the limit was handed out")
        check(frame)
    }
    return 0
}

let secrets = VarlinkSecretParameters(paths: ["secret"]) { _, raw in SecureBytes(copying: raw) }

private func check(_ frame: [UInt8]) {
    frame.withUnsafeBytes { raw in
        let plain = VarlinkMessage.decodeCall(raw, maxDepth: 64)
        let diverted = VarlinkMessage.decodeCall(raw, maxDepth: 64, secrets: secrets)
        switch (plain, diverted) {
        case (.success(let call), .success(let divertedCall)):
            require(call.method == divertedCall.method, "diverting secrets changed the method")
            require(divertedCall.parameters["secret"] == nil || divertedCall.secrets["secret"] == nil,
                    "a diverted secret also stayed a parameter")
            var again = VarlinkMessage.encodeCall(call.method, call.parameters, more: call.more, oneway: call.oneway)
            require(again.last == 0, "an encoded call does not end in NUL")
            again.removeLast()
            guard case .success(let reread) = again.withUnsafeBytes({ VarlinkMessage.decodeCall($0, maxDepth: 64) }) else {
                fatalError("fuzz contract broken: an encoded call does not decode")
            }
            require(reread.method == call.method && reread.parameters == call.parameters
                    && reread.more == call.more && reread.oneway == call.oneway, "encoding a call and decoding it changed it")
        case (.failure, _), (_, .failure):
            break
        }
    }
}

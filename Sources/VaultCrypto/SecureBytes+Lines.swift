extension SecureBytes {
    /// Calls `body` with each line of the bytes and its number, counting from 1: the lines end at
    /// LF, which is not part of them, and a last line without one is a line too (so a final LF ends
    /// the last line, it does not start an empty one). Empty lines are passed on like any other.
    /// With `droppingCarriageReturns`, a CR just before a line's end is not part of it either (a
    /// CRLF file); without it, the line keeps it.
    ///
    /// ```swift
    /// try contents.forEachLine(droppingCarriageReturns: true) { (number: Int, line: UnsafeRawBufferPointer) throws(KeyFileError) in
    ///     if line.isEmpty { return }                       // skipped, still counted
    ///     keys.append(try Key(text: SecureBytes(copying: line), line: number))
    /// }
    /// ```
    ///
    /// `line` points into this secure memory: use it only inside `body`, and copy what must outlive
    /// the call into another `SecureBytes`, never into a `String` or an `Array`. The first error
    /// `body` throws ends the walk, and is rethrown.
    public func forEachLine<Failure: Error>(
        droppingCarriageReturns: Bool = false,
        _ body: (_ number: Int, _ line: UnsafeRawBufferPointer) throws(Failure) -> Void
    ) throws(Failure) {
        var failure: Failure?
        withUnsafeBytes { bytes in
            var start = 0, number = 0
            while start < bytes.count {
                number += 1
                var end = start
                while end < bytes.count, bytes[end] != 0x0A { end += 1 }
                var last = end
                if droppingCarriageReturns, last > start, bytes[last - 1] == 0x0D { last -= 1 }
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<last])
                start = end + 1
                do throws(Failure) {
                    try body(number, line)
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
    }
}

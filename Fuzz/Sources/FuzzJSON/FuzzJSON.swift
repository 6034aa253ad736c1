import BoundedJSON
import FuzzSupport

/// BoundedJSON's parser, which reads every varlink frame, provider answer, docker input and sealed
/// record. Contract: no crash, no input deeper than the limit accepted, and what parses writes
/// out as JSON that parses back to the same value (and writes out to the same bytes).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = bytes(data, size)
    for maxDepth in [JSONValue.defaultMaxDepth, 4] {
        guard let value = try? JSONValue.parse(input, maxDepth: maxDepth) else { continue }
        require(depth(of: value) <= maxDepth, "a value nested deeper than maxDepth \(maxDepth) was accepted")
        let written = value.serialized()
        let reparsed: JSONValue
        do { reparsed = try JSONValue.parse(written, maxDepth: maxDepth) } catch {
            fatalError("fuzz contract broken: the writer's output does not parse (\(error))")
        }
        require(reparsed == value, "writing and parsing again changed the value")
        require(reparsed.serialized() == written, "writing is not stable")
    }
    return 0
}

/// Arrays and objects count one level each; scalars none.
private func depth(of value: JSONValue) -> Int {
    switch value {
    case .array(let items): 1 + (items.map(depth(of:)).max() ?? 0)
    case .object(let members): 1 + (members.values.map(depth(of:)).max() ?? 0)
    default: 0
    }
}

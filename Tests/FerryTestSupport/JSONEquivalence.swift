import FerryRecords

/// Whether two JSON values are the same value: objects compare as unordered maps, integers
/// exactly (any size), other numbers by their double's bit pattern (so -0.0 ≠ 0.0).
public func jsonEquivalent(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.string(let x), .string(let y)): return Array(x.utf8) == Array(y.utf8)
    case (.number(let x), .number(let y)):
        if x.isInteger && y.isInteger { return normalizedInteger(x.text) == normalizedInteger(y.text) }
        return x.doubleValue.bitPattern == y.doubleValue.bitPattern
    case (.array(let x), .array(let y)):
        return x.count == y.count && zip(x, y).allSatisfy { jsonEquivalent($0, $1) }
    case (.object(let x), .object(let y)):
        guard x.count == y.count else { return false }
        for member in x.members {
            guard let other = y[member.key], jsonEquivalent(member.value, other) else { return false }
        }
        return true
    default: return false
    }
}

private func normalizedInteger(_ text: String) -> String {
    var s = Substring(text)
    var negative = false
    if s.first == "-" { negative = true; s = s.dropFirst() }
    while s.count > 1 && s.first == "0" { s = s.dropFirst() }
    return (negative && s != "0" ? "-" : "") + s
}

/// Splits bytes into lines (without the newline), skipping a final empty piece.
public func lines(of bytes: [UInt8]) -> [[UInt8]] {
    var result = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
    if result.last?.isEmpty == true { result.removeLast() }
    return result
}

/// The repository's `Samples/` folder, found from this source file's location.
public func samplesDirectory(file: StaticString = #filePath) -> String {
    var path = "\(file)"
    for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
    return path + "/Samples"
}

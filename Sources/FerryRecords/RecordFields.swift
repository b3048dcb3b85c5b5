/// A record's fields in document order, looked up by name: names compare by their bytes, as JSON
/// keys do ("é" U+00E9 and "e" + U+0301 are two names, though equal as Swift strings).
///
/// Records hold a handful of fields, so an ordered array with linear lookup is both faster than a
/// dictionary and keeps the input's order for a faithful round trip.
public struct RecordFields: Hashable, Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// A field and its name.
    public struct Entry: Hashable, Sendable {
        public var name: String
        public var field: RecordField
        public init(name: String, field: RecordField) {
            self.name = name
            self.field = field
        }
    }

    /// The fields in order.
    public var entries: [Entry]

    public init(_ entries: [Entry] = []) { self.entries = entries }

    public init(dictionaryLiteral elements: (String, RecordField)...) {
        entries = elements.map { Entry(name: $0.0, field: $0.1) }
    }

    public var startIndex: Int { entries.startIndex }
    public var endIndex: Int { entries.endIndex }
    public subscript(position: Int) -> Entry { entries[position] }

    /// The field named `name`. Setting `nil` removes it; setting a new name appends it.
    public subscript(name: String) -> RecordField? {
        get {
            for entry in entries where ExactName.same(entry.name, name) { return entry.field }
            return nil
        }
        set {
            if let index = entries.firstIndex(where: { ExactName.same($0.name, name) }) {
                if let newValue { entries[index].field = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append(Entry(name: name, field: newValue))
            }
        }
    }

    /// The index of the field named `name`.
    public func index(of name: String) -> Int? { entries.firstIndex { ExactName.same($0.name, name) } }
}

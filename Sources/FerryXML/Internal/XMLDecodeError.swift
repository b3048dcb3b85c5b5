/// A problem in one record, found by ``RecordXMLDecoder``: the reader turns the node (and the
/// attribute, if any) into a line and column.
struct XMLDecodeError: Error {
    var code: XMLFormatError.Code
    var message: String
    /// The element the problem is in (or a text node).
    var node: XMLNodeRef
    /// The attribute the problem is in, when it is in one.
    var attribute: String?
}

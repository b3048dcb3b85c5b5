/// Where an element's start tag begins in the input, and where the element ends.
struct XMLMark {
    /// Byte offset of the `<` of the start tag.
    var offset: Int
    /// 1-based line of the `<`.
    var line: Int
    /// 1-based column of the `<`, in characters.
    var column: Int
    /// Byte offset just past the element's last `>`; -1 until the scanner has seen it.
    var end = -1
}

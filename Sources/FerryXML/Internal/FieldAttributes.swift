/// The attributes a value element carries when it is a field rather than a list item: the field's
/// `name` (short form only), its `type` when it is not the element's standard tag, and
/// `untyped="true"` when the field had no type tag.
struct FieldAttributes {
    var name: String?
    var type: String?
    var untyped = false

    var needsEscape: Bool {
        (name.map(XMLTextEscaping.needsEscape) ?? false) || (type.map(XMLTextEscaping.needsEscape) ?? false)
    }
}

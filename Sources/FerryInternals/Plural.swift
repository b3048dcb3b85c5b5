/// Counts in messages and summaries: "1 record", "2 records", "0 records".
package enum Plural {
    /// `count` and `noun`, the noun in its plural (`plural`, or `noun` + "s") unless `count` is 1.
    package static func count(_ count: some BinaryInteger, _ noun: String, plural: String? = nil) -> String {
        "\(count) " + (count == 1 ? noun : plural ?? noun + "s")
    }
}

@testable import FerryPredicate
import Testing

@Suite("Case folding shortcuts")
struct CaseFoldingTests {
    @Test("The scalars listed as folding into ASCII letters are exactly those that do")
    func foldsIntoASCIIIsExact() {
        // Every cased scalar lies below U+20000, so this range covers them all.
        var mismatches: [String] = []
        for value in UInt32(0x80)..<UInt32(0x20000) {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let folded = String(scalar).uppercased().lowercased()
            let producesASCIILetter = folded.unicodeScalars.contains { $0.value < 0x80 && ($0.properties.isAlphabetic) }
            if producesASCIILetter != StringMatching.foldsIntoASCII(value) {
                mismatches.append(String(value, radix: 16))
            }
        }
        #expect(mismatches.isEmpty, "scalars misclassified: \(mismatches)")
    }

    @Test("The ASCII search answers without folding only when folding could not change the answer",
          arguments: [
            ("Hello there", "hello", true), ("say HELLO", "hello", true), ("help", "hello", false),
            ("ｆｕｌｌｗｉｄｔｈ hello", "hello", true), ("ｆｕｌｌｗｉｄｔｈ", "full", false),
            ("\u{FB01}nance", "fi", nil), ("stra\u{DF}e", "ss", nil), ("e\u{301}hello", "hello", nil),
            ("日本語 hello", "hello", true), ("Zürich", "zu", false),
          ] as [(String, String, Bool?)])
    func asciiSearch(text: String, needle: String, expected: Bool?) {
        #expect(StringMatching.asciiContainsFolded(text, needle: Array(needle.utf8)) == expected)
    }
}

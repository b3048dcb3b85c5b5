import FerryInternals
import Testing
@testable import FerryArchive
import FerryTestSupport

@Suite("SHA-256")
struct SHA256Tests {
    @Test("Digests match the FIPS 180-4 examples", arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func fipsVectors(message: String, expected: String) {
        #expect(SHA256.hexDigest(of: Array(message.utf8)) == expected)
    }

    @Test("A million a's digest to the FIPS value")
    func millionAs() {
        #expect(SHA256.hexDigest(of: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("Feeding bytes in pieces of every size gives the same digest", arguments: [1, 3, 55, 56, 63, 64, 65, 127, 1000])
    func chunked(pieceSize: Int) {
        var random = SeededRandom(seed: 7)
        let bytes = (0..<5000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        var hasher = SHA256()
        var index = 0
        while index < bytes.count {
            let end = min(bytes.count, index + pieceSize)
            hasher.update(Array(bytes[index..<end]))
            index = end
        }
        #expect(hasher.finalizeHex() == SHA256.hexDigest(of: bytes))
    }

    @Test("Digests agree with sha256sum at lengths around block boundaries", arguments: [0, 1, 55, 56, 64, 119, 120, 4097, 100_003])
    func agreesWithSha256sum(length: Int) throws {
        let scratch = try ScratchDirectory()
        var random = SeededRandom(seed: UInt64(length) + 1)
        let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        try writeFile(scratch.file("data"), bytes)
        let result = try runTool("sha256sum", [scratch.file("data")])
        #expect(result.status == 0)
        #expect(String(result.output.prefix(64)) == SHA256.hexDigest(of: bytes))
    }
}

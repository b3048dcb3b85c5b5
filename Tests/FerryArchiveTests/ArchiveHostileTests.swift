import Testing
import FerryArchive
import FerryCompression
import FerryIO
import FerryRecords
import FerryTestSupport

/// Python that rewrites a Ferry archive (argv[1]) into a hostile one (argv[2]) for case argv[3].
private let hostileBuilder = #"""
import gzip, hashlib, io, json, sys, tarfile
src, out, case = sys.argv[1], sys.argv[2], sys.argv[3]
raw = gzip.decompress(open(src, 'rb').read())
members = []
with tarfile.open(fileobj=io.BytesIO(raw)) as t:
    for info in t.getmembers():
        members.append((info, t.extractfile(info).read()))
def entry(name, kind=tarfile.REGTYPE, data=b'', link=''):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data)
    info.linkname = link
    return (info, data)
extra = {
    'traversal': [entry('../evil', data=b'pwned')],
    'deep-traversal': [entry('records/../../evil', data=b'pwned')],
    'absolute': [entry(sys.argv[4] if len(sys.argv) > 4 else '/tmp/evil', data=b'pwned')],
    'symlink': [entry('records/link', tarfile.SYMTYPE, link='../../outside'), entry('records/link/evil', data=b'pwned')],
    'hardlink': [entry('records/hard', tarfile.LNKTYPE, link='manifest.json')],
    'device': [entry('records/dev', tarfile.CHRTYPE)],
    'fifo': [entry('records/fifo', tarfile.FIFOTYPE)],
    'unlisted': [entry('assets/unlisted', data=b'x')],
}.get(case, [])
if case == 'schema':
    manifest = json.loads(members[0][1])
    kind = sorted(manifest['schema'])[0]
    field = sorted(manifest['schema'][kind]['fields'])[0]
    tag = sorted(manifest['schema'][kind]['fields'][field])[0]
    manifest['schema'][kind]['fields'][field][tag] += 1
    data = json.dumps(manifest).encode()
    info = tarfile.TarInfo('manifest.json'); info.size = len(data)
    members[0] = (info, data)
    print(kind + '.' + field)
if case == 'bomb':
    zeros = bytes(40 << 20)
    manifest = json.loads(members[0][1])
    manifest['members'].append({"path": "assets/zeros", "kind": "asset", "size": len(zeros), "sha256": hashlib.sha256(zeros).hexdigest()})
    data = json.dumps(manifest).encode()
    info = tarfile.TarInfo('manifest.json'); info.size = len(data)
    members[0] = (info, data)
    extra = [entry('assets/zeros', data=zeros)]
buffer = io.BytesIO()
with tarfile.open(fileobj=buffer, mode='w', format=tarfile.PAX_FORMAT) as t:
    for i, (info, data) in enumerate(members):
        t.addfile(info, io.BytesIO(data))
        if i == 0:
            for info2, data2 in extra:
                t.addfile(info2, io.BytesIO(data2) if info2.isreg() else None)
tar = bytearray(buffer.getvalue())
if case == 'flip':
    with tarfile.open(fileobj=io.BytesIO(bytes(tar))) as t:
        target = [i for i in t.getmembers() if i.name.startswith('records/')][0]
    tar[target.offset_data + 10] ^= 0x20
    print(target.name)
if case == 'truncate-tar':
    open(out, 'wb').write(bytes(tar[: len(tar) * 2 // 3]))
else:
    open(out, 'wb').write(gzip.compress(bytes(tar), 9))
"""#

@Suite("Hostile archives are refused")
struct ArchiveHostileTests {
    /// A valid archive, then a hostile copy of it for `hostileCase`; returns the hostile path and
    /// what the builder printed.
    static func hostile(_ hostileCase: String, in scratch: ScratchDirectory, extra: [String] = []) throws -> (String, String) {
        var generator = RecordGenerator(seed: 5)
        let records = (0..<50).map { _ in generator.record() }
        let good = scratch.file("good.tar.gz")
        _ = try ArchiveRoundTripTests.writeArchive(records, to: good)
        let bad = scratch.file("bad.tar.gz")
        let result = try runTool("python3", ["-c", hostileBuilder, good, bad, hostileCase] + extra)
        if result.status != 0 { throw ToolFailure(message: result.error) }
        return (bad, result.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Extracts `archive` into `scratch/target` and returns the error.
    static func extractionError(_ archive: String, in scratch: ScratchDirectory,
                                configuration: ArchiveReader.Configuration = .init()) -> ArchiveError? {
        do {
            try ArchiveReader(path: archive, configuration: configuration).extract(to: scratch.file("target"))
            return nil
        } catch let error as ArchiveError {
            return error
        } catch {
            Issue.record("expected an ArchiveError, found \(error)")
            return nil
        }
    }

    /// Everything in `scratch` outside `target/` must be what the test put there.
    static func expectNothingOutsideTarget(_ scratch: ScratchDirectory, allowed: Set<String> = []) {
        let outside = scratch.listing().filter { !$0.hasPrefix("target") }
        #expect(Set(outside).subtracting(allowed).subtracting(["good.tar.gz", "bad.tar.gz"]).isEmpty, "\(outside)")
    }

    @Test("Members whose names escape the target are refused before anything is written",
          arguments: ["traversal", "deep-traversal", "absolute"])
    func pathTraversal(hostileCase: String) throws {
        let scratch = try ScratchDirectory()
        let (archive, _) = try Self.hostile(hostileCase, in: scratch, extra: [scratch.file("abs-evil")])
        let error = try #require(Self.extractionError(archive, in: scratch))
        #expect(error.code == .unsafePath)
        #expect(error.member != nil && error.offset != nil)
        #expect(error.description.contains("unsafe path"))
        Self.expectNothingOutsideTarget(scratch)
        #expect(!FileSystem.exists(scratch.file("evil")) && !FileSystem.exists(scratch.file("abs-evil")))
        #expect(throws: ArchiveError.self) { try ArchiveVerifier().verify(path: archive) }
    }

    @Test("Links, devices and FIFOs are refused", arguments: ["symlink", "hardlink", "device", "fifo"])
    func linksAndDevices(hostileCase: String) throws {
        let scratch = try ScratchDirectory()
        let (archive, _) = try Self.hostile(hostileCase, in: scratch)
        let error = try #require(Self.extractionError(archive, in: scratch))
        #expect(error.code == .unsupportedMemberType)
        #expect(error.member?.hasPrefix("records/") == true)
        #expect(!scratch.listing().contains { $0.hasPrefix("target/records/") })
        Self.expectNothingOutsideTarget(scratch)
    }

    @Test("A symlink already in the target directory is never written through")
    func existingSymlinkInTarget() throws {
        let scratch = try ScratchDirectory()
        let (archive, _) = try Self.hostile("none", in: scratch)
        _ = try runTool("mkdir", ["-p", scratch.file("target"), scratch.file("outside")])
        _ = try runTool("ln", ["-s", scratch.file("outside"), scratch.file("target/records")])
        let error = try #require(Self.extractionError(archive, in: scratch))
        #expect(error.code == .unsafePath)
        #expect(scratch.listing().filter { $0.hasPrefix("outside/") }.isEmpty)
    }

    @Test("A gzip bomb stops at the ratio limit and its member is never written")
    func gzipBomb() throws {
        let scratch = try ScratchDirectory()
        let (archive, _) = try Self.hostile("bomb", in: scratch)
        // 40 MiB of zeros at about 1000:1; the ratio limit is set below that (ordinary records
        // compress far less than 200:1).
        let error = try #require(Self.extractionError(archive, in: scratch, configuration: .init(
            gzip: GzipSource.Configuration(maximumRatio: 200))))
        #expect(error.code == .decompressionFailed)
        #expect(error.member == "assets/zeros")
        #expect((error.underlying as? CompressionError)?.code == .ratioLimitExceeded)
        #expect(!FileSystem.exists(scratch.file("target/assets/zeros")))
        // The per-member and total limits stop it too, before any of its bytes are inflated.
        let limited = try #require(Self.extractionError(archive, in: scratch, configuration: .init(
            gzip: .unlimited, maximumMemberBytes: 1 << 20)))
        #expect(limited.code == .limitExceeded && limited.member == "assets/zeros")
        let total = try #require(Self.extractionError(archive, in: scratch, configuration: .init(
            gzip: .unlimited, maximumTotalBytes: 4 << 20)))
        #expect(total.code == .limitExceeded)
    }

    @Test("A truncated gzip archive fails naming the member and offset")
    func truncatedGzip() throws {
        let scratch = try ScratchDirectory()
        let (archive, _) = try Self.hostile("none", in: scratch)
        let bytes = try fileBytes(archive)
        try writeFile(archive, Array(bytes.prefix(bytes.count * 2 / 3)))
        let error = try #require(Self.extractionError(archive, in: scratch))
        #expect(error.code == .decompressionFailed)
        #expect((error.underlying as? CompressionError)?.code == .truncated)
        #expect(error.member != nil && error.offset != nil)
    }

    @Test("A truncated tar stream fails naming the member and offset")
    func truncatedTar() throws {
        let scratch = try ScratchDirectory()
        let (archive, _) = try Self.hostile("truncate-tar", in: scratch)
        let error = try #require(Self.extractionError(archive, in: scratch))
        #expect(error.code == .truncated, "\(error)")
        #expect(error.member != nil && (error.offset ?? 0) > 0, "\(error)")
        #expect(throws: ArchiveError.self) { try ArchiveVerifier().verify(path: archive) }
    }

    @Test("A manifest whose field schema disagrees with the records fails verification")
    func schemaMismatch() throws {
        let scratch = try ScratchDirectory()
        let (archive, field) = try Self.hostile("schema", in: scratch)
        do {
            _ = try ArchiveVerifier().verify(path: archive)
            Issue.record("expected verification to fail")
        } catch let failure as ArchiveError {
            #expect(failure.code == .countMismatch)
            #expect(failure.member == "manifest.json")
            #expect(failure.description.contains(field), "\(failure)")
        }
    }

    @Test("A flipped byte in a member is a checksum mismatch naming that member")
    func flippedByte() throws {
        let scratch = try ScratchDirectory()
        let (archive, member) = try Self.hostile("flip", in: scratch)
        #expect(try runTool("gzip", ["-t", archive]).status == 0) // the gzip layer is intact
        let error = try #require(Self.extractionError(archive, in: scratch))
        #expect(error.member == member)
        // extract decodes records members as verify does: the flip may break a record first.
        #expect([ArchiveError.Code.checksumMismatch, .invalidRecord].contains(error.code))
        #expect(!FileSystem.exists(scratch.file("target/" + member)))
        do {
            _ = try ArchiveVerifier().verify(path: archive)
            Issue.record("expected verification to fail")
        } catch let failure as ArchiveError {
            #expect(failure.member == member)
            #expect([ArchiveError.Code.checksumMismatch, .invalidRecord].contains(failure.code))
        }
    }

    @Test("A flipped byte in the compressed stream is refused")
    func flippedCompressedByte() throws {
        let scratch = try ScratchDirectory()
        let (archive, _) = try Self.hostile("none", in: scratch)
        var bytes = try fileBytes(archive)
        bytes[bytes.count / 2] ^= 0x55
        try writeFile(archive, bytes)
        #expect(throws: ArchiveError.self) { try ArchiveVerifier().verify(path: archive) }
    }

    @Test("Members not in the manifest are refused, and an archive without one fails verification")
    func unlistedAndMissingManifest() throws {
        let scratch = try ScratchDirectory()
        let (archive, _) = try Self.hostile("unlisted", in: scratch)
        let error = try #require(Self.extractionError(archive, in: scratch))
        #expect(error.code == .unexpectedMember && error.member == "assets/unlisted")

        let plain = scratch.file("plain.tar.gz")
        try writeFile(scratch.file("a.txt"), Array("hello".utf8))
        _ = try runTool("tar", ["czf", plain, "a.txt"], in: scratch.path)
        let reader = try ArchiveReader(path: plain)
        #expect(try reader.nextRecord() == nil)
        #expect(reader.skippedMembers.map(\.path) == ["a.txt"])
        do {
            _ = try ArchiveVerifier().verify(path: plain)
            Issue.record("expected verification to fail")
        } catch let failure as ArchiveError {
            #expect(failure.code == .missingManifest)
        }
    }

    @Test("A records member whose counts differ from the manifest fails verification")
    func countMismatch() throws {
        let scratch = try ScratchDirectory()
        let root = scratch.file("src")
        _ = try runTool("mkdir", ["-p", root + "/records/private"])
        try writeFile(root + "/records/private/_defaultZone.ndjson", Array("{\"recordName\":\"a\",\"recordType\":\"T\"}\n".utf8))
        try runPython(pythonManifestBuilder + "\n" + #"""
zones = [{"database": "private", "zoneID": {"zoneName": "_defaultZone"}, "path": "records/private/_defaultZone.ndjson",
          "recordCount": 2, "recordTypes": {"T": 2}}]
json.dump(manifest(".", [("records/private/_defaultZone.ndjson", "records")], zones), open("manifest.json", "w"))
"""#, in: root)
        let archive = scratch.file("counts.tgz")
        _ = try runTool("tar", ["czf", archive, "manifest.json", "records"], in: root)
        do {
            _ = try ArchiveVerifier().verify(path: archive)
            Issue.record("expected a count mismatch")
        } catch let failure as ArchiveError {
            #expect(failure.code == .countMismatch && failure.member == "records/private/_defaultZone.ndjson")
        }
    }
}

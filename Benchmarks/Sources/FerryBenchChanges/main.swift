// ferry-bench-changes: converts the shared benchmark's change events to Ferry's change-log
// format, untimed, before `ferry-bench replay` times `ferry replay` on them.
//
//   ferry-bench-changes [--checkpoint-every N] INPUT OUTPUT
//
// INPUT is `gen_records.py --changes` output (- is standard input; gzip is recognized), OUTPUT the
// change log (- is standard output; a file appears only when the conversion succeeded).
// See BenchChangeConverter.swift for the mapping.
import FerryChangeLog
import FerryCompression
import FerryIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String, status: Int32) -> Never {
    let text = "ferry-bench-changes: \(message)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(status)
}

let usage = "usage: ferry-bench-changes [--checkpoint-every N] INPUT OUTPUT"
var arguments = Array(CommandLine.arguments.dropFirst())
var checkpointEvery = 1000
var paths: [String] = []
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--checkpoint-every":
        guard let value = arguments.first.flatMap({ Int($0) }), value > 0 else {
            fail("--checkpoint-every expects a positive number", status: 2)
        }
        checkpointEvery = value
        arguments.removeFirst()
    case "-h", "--help":
        print(usage)
        exit(0)
    case _ where argument.hasPrefix("--"): fail("unknown option \(argument)\n\(usage)", status: 2)
    default: paths.append(argument)
    }
}
guard paths.count == 2 else { fail(usage, status: 2) }

let output: OutputFile
do {
    output = try OutputFile(path: paths[1])
} catch {
    fail("\(error)", status: 1)
}
do {
    let source = try Compression.openInput(try InputFile(path: paths[0]))
    try BenchChangeConverter.convert(from: source, to: ChangeLogWriter(sink: output), checkpointEvery: checkpointEvery)
} catch {
    output.abandon()
    fail("\(error)", status: 1)
}

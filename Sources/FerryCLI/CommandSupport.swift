import ArgumentParser
import FerryIO
import FerryKit

// What the commands share besides numbers (NumberOptions.swift): options that name FerryKit's
// values, the checks of paths, and how FerryKit's errors and summaries reach the terminal.

extension RecordFormat: ExpressibleByArgument {}
extension StoreWriter.Mode: ExpressibleByArgument {}
extension StoreReplayer.Configuration.TransactionUnit: ExpressibleByArgument {}

/// What to do with bad input (`--on-error`).
enum ErrorMode: String, CaseIterable, ExpressibleByArgument {
    case fail, skip
}

/// Runs a FerryKit check from `validate()`: its usage error becomes argument-parser's, which
/// prints the command's usage.
func usage<T>(_ body: () throws(FerryError) -> T) throws -> T {
    do {
        return try body()
    } catch where error.kind == .usage {
        throw ValidationError(error.message)
    }
}

/// Usage error unless every input (other than `-`) is an existing file or folder, and `-` is
/// named at most once.
func checkInputsExist(_ inputs: [String]) throws {
    if inputs.filter({ $0 == "-" }).count > 1 {
        throw ValidationError("standard input (-) can be read only once")
    }
    for input in inputs where input != "-" && !FileSystem.exists(input) && !FileSystem.isDirectory(input) {
        throw ValidationError("no such input: \(input)")
    }
}

/// The field names of a `--keys` list (comma-separated, spaces around names ignored, empty items
/// dropped), or `nil` without `--keys`.
///
/// - Throws: a usage error for a list that names no field: it would keep no field, or be ignored.
func keyList(_ text: String?) throws -> [String]? {
    guard let text else { return nil }
    let names = text.split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty }
    guard !names.isEmpty else {
        throw ValidationError("--keys expects field names separated by commas, found '\(text)'")
    }
    return names
}

/// Prints a command's `--json` summary line: on stdout, or on stderr when the command's output
/// goes to stdout (`-`), so that the output stays what it is.
func writeSummary(_ json: String, outputIsStdout: Bool) {
    if outputIsStdout { StandardError.write(json + "\n") } else { print(json) }
}

/// `ferry: TEXT` on stderr: how commands say FerryKit's notes and warnings.
func note(_ text: String) {
    StandardError.write("ferry: \(text)\n")
}

extension String {
    var trimmed: String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}

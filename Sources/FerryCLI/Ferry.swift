import ArgumentParser
import FerryIO
import FerryInternals
import FerryKit

/// The `ferry` command: moves CloudKit-shaped records between formats.
public struct Ferry: ParsableCommand {
    /// The command's name, help and subcommands.
    public static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Move CloudKit-shaped records between formats and stores.",
        discussion: """
        Exit codes: 0 success, 1 data error (bad input, failed check, a failed write to standard \
        output), 2 usage error; ferry diff exits as diff(1) does: 0 identical, 1 different, 2 usage \
        error, unreadable input or failed write.

        Examples:
          ferry convert export.ndjson messages.ndjson --type Message
          cat export.ndjson | ferry convert - - --zone Chats --limit 10 | jq .
          ferry convert responses/ all.ndjson --on-error skip --rejects bad.ndjson
          ferry convert export.ndjson export.xml
          ferry convert export.ndjson store.tar.gz && ferry verify store.tar.gz
          ferry convert export.ndjson - \\
              --where 'count > 50 AND text CONTAINS[c] "hello"'
          ferry predicate check 'text BEGINSWITH "a" OR count > 5' --cloudkit
          ferry replay history.ndjson --out state.ndjson
          ferry inspect Samples/chat.ndjson --json
          ferry convert export.ndjson chat.sqlite && ferry query chat.sqlite \\
              --type Message --limit 10
        """,
        version: FerryVersion.current,
        subcommands: [Convert.self, Inspect.self, Verify.self, Extract.self, Validate.self, PredicateCommand.self,
                      Replay.self, Diff.self, Query.self, Fetch.self, Index.self, Serve.self, Pull.self, Push.self]
    )

    /// The root command (argument-parser makes it while parsing).
    public init() {}

    /// Runs the command line: parses `arguments`, runs the command, and exits with Ferry's codes
    /// (0 ok, 1 data error, 2 usage error).
    public static func main(_ arguments: [String]? = nil) -> Never {
        TemporaryFiles.installSignalHandlers()
        ProcessMemory.keepFreedMemoryForReuse()
        ProcessMemory.reclaimAtExit()
        if arguments == nil, let problem = nonUTF8Argument() {
            // Swift would repair the bytes into U+FFFD: a predicate would then test for that, a
            // path name another file.
            StandardError.write("ferry: argument \(problem.index): \(problem.message) at byte \(problem.offset + 1) "
                                + "(Ferry reads paths, predicates and values as UTF-8)\n")
            Syscall.exit(2)
        }
        Syscall.exit(execute(arguments))
    }

    /// The first command-line argument whose bytes are not UTF-8, with what is wrong and where.
    static func nonUTF8Argument() -> (index: Int, offset: Int, message: String)? {
        for (index, argument) in Syscall.commandLineArgumentBytes().enumerated().dropFirst() {
            let found = argument.withUnsafeBufferPointer { bytes in
                bytes.baseAddress.flatMap { UTF8Check.firstProblem($0, from: 0, to: bytes.count) }
            }
            if let found { return (index, found.offset, found.problem.message) }
        }
        return nil
    }

    /// Runs the command line in this process and returns the exit code instead of exiting;
    /// messages go to stderr, help and reports to stdout.
    ///
    /// What went to standard output through `print` is flushed before the code is returned: a
    /// write that failed (a full disk, a closed pipe) makes a successful run exit 1 (`diff`: 2,
    /// its code for trouble), with a message.
    public static func execute(_ arguments: [String]? = nil) -> Int32 {
        var command: (any ParsableCommand)?
        let code = run(arguments, parsed: &command)
        guard let failure = StandardOutput.flush() else { return code }
        StandardError.write("ferry: cannot write to standard output: \(failure)\n")
        return max(code, command is Diff ? 2 : 1)
    }

    /// Whether commands check their options in `validate()`: off only while ``parse(_:)`` looks
    /// for a parse error behind a usage error.
    @TaskLocal static var validatesOptions = true

    /// ``parseAsRoot(_:)``, reporting an unknown option before the command's own checks.
    ///
    /// argument-parser validates a command before it reports an unknown option whose value it
    /// could take as a positional argument (`convert in out --levle 9`, where `9` becomes one more
    /// path): the command then said `no such input: out`. A command line that fails is parsed
    /// again without the commands' checks, and a parse error found that way is the one shown.
    static func parse(_ arguments: [String]?) throws -> any ParsableCommand {
        do {
            return try parseAsRoot(arguments)
        } catch let first {
            do {
                _ = try $validatesOptions.withValue(false) { try parseAsRoot(arguments) }
            } catch {
                throw error
            }
            throw first
        }
    }

    private static func run(_ arguments: [String]?, parsed: inout (any ParsableCommand)?) -> Int32 {
        do {
            var command = try parse(arguments)
            parsed = command
            do {
                try command.run()
            } catch let error as ValidationError {
                // argument-parser shows the root's usage for an error it did not see while
                // parsing: a usage error found while running shows the subcommand's, as one
                // from its validate() does.
                StandardError.write(usageMessage(error, for: type(of: command)) + "\n")
                return 2
            } catch let error as FerryError where error.kind == .usage {
                // FerryKit's usage errors (files that clash, a format it cannot tell) likewise.
                StandardError.write(usageMessage(ValidationError(error.message), for: type(of: command)) + "\n")
                return 2
            }
            return 0
        } catch let failure as FerryError {
            StandardError.write("ferry: " + failure.message + "\n")
            return failure.exitCode
        } catch let failure as CommandFailure {
            if !failure.message.isEmpty {
                StandardError.write("ferry: " + failure.message + "\n")
            }
            return failure.exitCode
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                StandardError.write(fullMessage(for: error) + "\n")
                return 2
            }
            let message = fullMessage(for: error)
            if code == .success {
                print(message)
                return 0
            }
            if !message.isEmpty { StandardError.write(message + "\n") }
            return code.rawValue == 64 ? 2 : code.rawValue
        }
    }
}

/// A usage error's message as argument-parser prints one found while parsing `command`: the
/// message, the subcommand's usage line and where its help is.
func usageMessage(_ error: ValidationError, for command: any ParsableCommand.Type) -> String {
    let words = commandWords(of: command) ?? ["ferry"]
    return "Error: \(error.message)\nUsage: \(Ferry.usageString(for: command))\n"
        + "  See '\(words.joined(separator: " ")) --help' for more information."
}

/// The words that run `command` (`["ferry", "predicate", "eval"]`), or `nil` when it is not one
/// of `parent`'s commands.
private func commandWords(of command: any ParsableCommand.Type, under parent: any ParsableCommand.Type = Ferry.self) -> [String]? {
    if parent == command { return [parent._commandName] }
    for subcommand in parent.configuration.subcommands {
        if let words = commandWords(of: command, under: subcommand) { return [parent._commandName] + words }
    }
    return nil
}

/// A failure that ends a command with a message and an exit code (1 for data errors) which
/// FerryKit does not raise: a failed check (`diff`, `verify`, `validate`), a predicate that does
/// not parse. FerryKit's own errors (``FerryError``) are mapped where the command runs.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var exitCode: Int32 = 1

    var description: String { message }
}

/// Unbuffered writes to standard error.
enum StandardError {
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = Syscall.writeAll(2, UnsafeRawBufferPointer($0)) }
    }

    static var isTerminal: Bool { FileSystem.isTerminal(2) }
}

/// Standard output as `print` writes it: buffered by the C library, which records a failed write.
enum StandardOutput {
    /// Flushes standard output; when a write to it failed, now or earlier, clears the failure and
    /// returns its description.
    static func flush() -> String? {
        let error = Syscall.flushStandardOutput()
        return error == 0 ? nil : Syscall.errorDescription(error)
    }
}

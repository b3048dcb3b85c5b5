@testable import FerryCLI
import Testing

/// One command's help discussion, as the tests see it.
struct CommandDiscussion: Sendable, CustomTestStringConvertible {
    /// The command line that shows it, such as `ferry predicate check`.
    var path: String
    var discussion: String

    var testDescription: String { path }

    /// Every command and subcommand of `ferry`, hidden ones included, parents first.
    static let all: [CommandDiscussion] = {
        var found: [CommandDiscussion] = []
        var pending = [(path: "ferry", configuration: Ferry.configuration)]
        while !pending.isEmpty {
            let (path, configuration) = pending.removeFirst()
            found.append(CommandDiscussion(path: path, discussion: configuration.discussion))
            pending += configuration.subcommands.map { (path + " " + $0._commandName, $0.configuration) }
        }
        return found
    }()

    /// The lines that continue a paragraph on a new line instead of on the same one.
    ///
    /// A paragraph is the text between blank lines; lines indented by at least one space are
    /// example lines, kept line by line and not counted. Every other line must start a paragraph:
    /// argument-parser wraps each line to the terminal on its own, so a newline inside a paragraph
    /// shows as a ragged break.
    var brokenLines: [String] {
        var broken: [String] = []
        var inParagraph = false
        for line in discussion.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy(\.isWhitespace) {
                inParagraph = false
            } else if line.first == " " || line.first == "\t" {
                continue
            } else if inParagraph {
                broken.append(String(line))
            } else {
                inParagraph = true
            }
        }
        return broken
    }
}

@Suite("ferry --help")
struct HelpTests {
    @Test("the command list reaches every command and subcommand")
    func everyCommandIsListed() {
        let paths = CommandDiscussion.all.map(\.path)
        for path in ["ferry", "ferry convert", "ferry inspect", "ferry replay", "ferry diff", "ferry predicate check"] {
            #expect(paths.contains(path))
        }
    }

    @Test("a discussion's paragraphs are one line each, so the help wraps them to the terminal",
          arguments: CommandDiscussion.all)
    func paragraphsAreOneLine(_ command: CommandDiscussion) {
        #expect(command.brokenLines.isEmpty,
                "\(command.path): a paragraph continues on a new line (end the source line with \\ inside the string literal)")
    }

    @Test("a paragraph broken inside is found; examples and single-line paragraphs are not")
    func brokenLinesRule() {
        let discussion = """
        One paragraph \
        on one line.
        A second line of the same paragraph.

        Examples:
          ferry convert a.ndjson b.ndjson
          ferry inspect b.ndjson

        Exit codes: 0, 1, 2.
        """
        let command = CommandDiscussion(path: "test", discussion: discussion)
        #expect(command.brokenLines == ["A second line of the same paragraph."])
    }

    @Test("every command that runs something shows examples, each fitting an 80-column terminal",
          arguments: CommandDiscussion.all)
    func examplesFit(_ command: CommandDiscussion) {
        let lines = command.discussion.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "Examples:") else {
            Issue.record("\(command.path): no Examples: in its discussion")
            return
        }
        let examples = lines[(start + 1)...].prefix { $0.first == " " }
        #expect(!examples.isEmpty, "\(command.path): Examples: lists nothing")
        // argument-parser wraps a longer line at column 0, which breaks copying the command.
        for line in examples where line.count > 80 {
            Issue.record("\(command.path): an example line of \(line.count) columns (at most 80; continue it with \\): \(line)")
        }
    }
}

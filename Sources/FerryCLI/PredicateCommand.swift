import ArgumentParser
import FerryInternals
import FerryKit

/// `ferry predicate …`: NSPredicate format strings checked, printed, evaluated and translated.
struct PredicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "predicate",
        abstract: "Check, format, evaluate and translate NSPredicate format strings.",
        discussion: """
        Ferry parses the whole NSPredicate format-string language, prints Apple's canonical text, \
        evaluates predicates on records or JSON, and says before any network call what CloudKit's \
        query API would reject. See Docs/PredicateLanguage.md.

        Examples:
          ferry predicate check 'text CONTAINS[c] "hello" OR count > 5' --cloudkit
          ferry predicate check --batch --cloudkit queries.txt
          ferry predicate format '%K == %@' --args '["name", "Zoë"]'
          ferry predicate eval 'tags CONTAINS "x"' --object '{"tags": ["x", "y"]}'
          ferry predicate filterby 'count >= 3 AND name BEGINSWITH "A"'
          ferry predicate split --cloudkit '(a == 1 OR b == 2) AND c > 3'
        """,
        subcommands: [Check.self, Format.self, Eval.self, FilterBy.self, Split.self]
    )
}

/// Options shared by the predicate commands.
struct PredicateInput: ParsableArguments {
    @Option(help: ArgumentHelp("Format arguments as a JSON array: %K takes a key path string, %@ any value.", valueName: "JSON"))
    var args: String?

    func arguments() throws -> [JSONValue]? {
        guard let args else { return nil }
        do {
            guard case .array(let items) = try JSONValue(parsing: args) else {
                throw ValidationError("--args expects a JSON array, found another JSON value")
            }
            return items
        } catch let error as RecordFormatError {
            throw ValidationError("--args is not valid JSON: \(error)")
        }
    }
}

/// The CloudKit schema options shared by `check` and `split`.
struct CloudKitSchemaOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A CloudKit schema (.ckdb) to check fields, types and indexes against.", valueName: "FILE"))
    var schema: String?

    @Option(name: .customLong("record-type"), help: "The record type queried (for --schema checks).")
    var recordType: String?

    /// The parsed schema, or `nil` without `--schema`.
    func load() throws -> CloudKitSchema? {
        guard let schema else { return nil }
        let text = String(decoding: try InputFile(path: schema).readAll(limit: 64 << 20), as: UTF8.self)
        do {
            return try CloudKitSchema(parsing: text)
        } catch {
            throw CommandFailure(message: "\(schema):\(error.rendered())", exitCode: 1)
        }
    }
}

/// Writes CloudKit findings to stderr as `error: line:column: message [rule]` (and `warning: …`).
func writeFindings(reasons: [CloudKitValidation.Finding], warnings: [CloudKitValidation.Finding] = []) {
    for reason in reasons { StandardError.write("error: \(reason.span): \(reason.message) [\(reason.rule.rawValue)]\n") }
    for warning in warnings { StandardError.write("warning: \(warning.span): \(warning.message) [\(warning.rule.rawValue)]\n") }
}

func parsePredicate(_ text: String, arguments: [JSONValue]?) throws -> RecordPredicate {
    do {
        return try RecordPredicate(parsing: text, arguments: arguments)
    } catch {
        throw CommandFailure(message: error.rendered())
    }
}

extension PredicateCommand {
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a predicate (exit 0 valid, 1 invalid); --cloudkit also checks what CKQuery accepts.",
            discussion: """
            Diagnostics go to stderr as `error: line:column: message [rule]`; with --json a result \
            object goes to stdout. With --batch, each line of the input (a file, or - / nothing for \
            stdin) is one predicate and each result is one JSON line: {"line", "ok", "canonical", \
            "cloudkit": {"accepted", "reasons": [{"rule", "message", "line", "column"}], "warnings", \
            "filterBy", "split"}, "errors"}. "split" is the number of queries `ferry predicate split` \
            would rewrite a rejected predicate as, when it can.

            Examples:
              ferry predicate check --cloudkit 'ANY {"red", "green"} = favoriteColor'
              ferry predicate check --cloudkit 'ANY relatedRecords IN %@' \\
                  --args '[[…300 references…]]'
              ferry predicate check --batch --cloudkit queries.txt
              ferry predicate check --cloudkit --schema app.ckdb \\
                  --record-type Message 'count > 3' --sort count
            """
        )

        @Argument(help: "The predicate, or with --batch the file of predicates (- for stdin).")
        var predicate: String?

        @Flag(help: "Also check the rules of CloudKit's query API.")
        var cloudkit = false

        @OptionGroup var cloudKitSchema: CloudKitSchemaOptions

        @Option(name: .customLong("sort"), help: "Sort keys the query will use (repeatable; need SORTABLE).")
        var sortKeys: [String] = []

        @Flag(help: "Read one predicate per line and print one JSON result per line.")
        var batch = false

        @Flag(help: "Print the result as JSON on stdout.")
        var json = false

        @Flag(help: "Print nothing, not even with --json or --batch; only the exit code tells (0 accepted, 1 rejected).")
        var quiet = false

        @OptionGroup var input: PredicateInput

        func validate() throws {

            guard Ferry.validatesOptions else { return }
            if !batch && predicate == nil { throw ValidationError("expected a PREDICATE") }
            try checkInputsExist((batch ? [predicate ?? "-"] : []) + (cloudKitSchema.schema.map { [$0] } ?? []))
        }

        func run() throws {
            let arguments = try input.arguments()
            let parsedSchema = try cloudKitSchema.load()
            if batch {
                let source = try InputFile(path: predicate ?? "-")
                let bytes = try source.readAll(limit: 1 << 30)
                var failures = 0
                // Lines end at LF or CRLF; a line that is not UTF-8 is a failed check, not repaired.
                for (index, var line) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
                    if line.last == 0x0D { line = line.dropLast() }
                    var result: JSONObject
                    if let problem = line.withUnsafeBufferPointer({ buffer in
                        buffer.baseAddress.flatMap { UTF8Check.firstProblem($0, from: 0, to: buffer.count) }
                    }) {
                        result = ["ok": .bool(false), "canonical": .null, "warnings": .array([]), "errors": .array([
                            findingJSON(rule: PredicateError.Code.syntax.rawValue, message: problem.problem.message, line: 1,
                                        column: problem.offset + 1)])]
                    } else {
                        let trimmed = String(decoding: line, as: UTF8.self).trimmed
                        if trimmed.isEmpty { continue }
                        result = check(trimmed, arguments: arguments, schema: parsedSchema)
                    }
                    if result["ok"] != .bool(true) { failures += 1 }
                    result.members.insert(.init(key: "line", value: .number(JSONNumber(Int64(index + 1)))), at: 0)
                    if !quiet { print(JSONValue.object(result).compactText) }
                }
                if failures > 0 { throw CommandFailure(message: "", exitCode: 1) }
                return
            }
            let result = check(predicate!, arguments: arguments, schema: parsedSchema)
            if quiet {
            } else if json {
                print(JSONValue.object(result).compactText)
            } else if let canonical = result["canonical"]?.stringValue {
                print(canonical)
            }
            if result["ok"] != .bool(true) { throw CommandFailure(message: "", exitCode: 1) }
        }

        /// Checks one predicate; prints diagnostics to stderr unless producing JSON.
        private func check(_ text: String, arguments: [JSONValue]?, schema: CloudKitSchema?) -> JSONObject {
            var result = JSONObject()
            let quiet = json || batch || self.quiet
            let predicate: RecordPredicate
            do {
                predicate = try RecordPredicate(parsing: text, arguments: arguments)
            } catch {
                if !quiet { StandardError.write(error.rendered() + "\n") }
                result.append(key: "ok", value: .bool(false))
                result.append(key: "canonical", value: .null)
                result.append(key: "warnings", value: .array([]))
                result.append(key: "errors", value: .array([findingJSON(rule: error.code.rawValue, message: error.message, line: error.line, column: error.column)]))
                return result
            }
            var ok = true
            result.append(key: "canonical", value: .string(predicate.predicateFormat))
            let backtracking = predicate.backtrackingPatterns.map { found in
                (message: "MATCHES \"\(found.pattern)\" repeats a group that itself repeats: a string it does not match can take time "
                    + "exponential in its length (write the group without the inner repetition, or anchor what it may match)",
                 span: found.span)
            }
            result.append(key: "warnings", value: .array(backtracking.map {
                findingJSON(rule: "backtracking", message: $0.message, line: $0.span.line, column: $0.span.column)
            }))
            if !quiet { for warning in backtracking { StandardError.write("warning: \(warning.message)\n") } }
            if cloudkit || schema != nil {
                let recordType = cloudKitSchema.recordType
                let validation = predicate.validateForCloudKit(recordType: recordType, schema: schema, sortKeys: sortKeys)
                if !validation.isAccepted { ok = false }
                var cloud = JSONObject()
                cloud.append(key: "accepted", value: .bool(validation.isAccepted))
                cloud.append(key: "reasons", value: .array(validation.reasons.map { findingJSON(rule: $0.rule.rawValue, message: $0.message, line: $0.span.line, column: $0.span.column) }))
                cloud.append(key: "warnings", value: .array(validation.warnings.map { findingJSON(rule: $0.rule.rawValue, message: $0.message, line: $0.span.line, column: $0.span.column) }))
                if validation.isAccepted, let filter = try? predicate.cloudKitFilterBy() {
                    cloud.append(key: "filterBy", value: filter)
                }
                // A predicate rejected only for OR, NOT over a compound or long lists can be split.
                var split: [RecordPredicate]?
                if !validation.isAccepted {
                    split = try? predicate.splitForCloudKit(.init(recordType: recordType, schema: schema))
                    if let split { cloud.append(key: "split", value: .number(JSONNumber(Int64(split.count)))) }
                }
                result.append(key: "cloudkit", value: .object(cloud))
                if !quiet {
                    writeFindings(reasons: validation.reasons, warnings: validation.warnings)
                    if let split {
                        StandardError.write("note: ferry predicate split --cloudkit rewrites it as \(split.count) quer\(split.count == 1 ? "y" : "ies") CloudKit accepts\n")
                    }
                }
            }
            result.members.insert(.init(key: "ok", value: .bool(ok)), at: 0)
            result.append(key: "errors", value: .array([]))
            return result
        }
    }

    struct Format: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a predicate's canonical text (Apple's predicateFormat).",
            discussion: """
            Parses the predicate as NSPredicate(format:) does, with the --args substituted for %K \
            and %@, and prints it as Apple's predicateFormat prints it. The text parses back to the \
            same predicate. Exits 1, with the position and what was expected, when it does not \
            parse, and exits 1 naming the key when a %K argument holds a key the format language \
            cannot write (such as "a-b" or "my key": keys are letters, digits and _).

            Examples:
              ferry predicate format 'name=="Zoë"&&count>3'
              ferry predicate format '%K.%K CONTAINS[c] %@' \\
                  --args '["owner", "name", "ann"]'
            """
        )

        @Argument(help: "The predicate.")
        var predicate: String

        @OptionGroup var input: PredicateInput

        func run() throws {
            let parsed = try parsePredicate(predicate, arguments: try input.arguments())
            do {
                print(try parsed.canonicalText())
            } catch {
                throw CommandFailure(message: error.rendered())
            }
        }
    }

    struct Eval: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Evaluate a predicate on a JSON object or a record: prints true or false.",
            discussion: """
            The object may be a CloudKit record dictionary (keys name fields; system keys such as \
            recordType and creationDate work) or any JSON object (key paths walk nested objects). \
            Typed values: {"$date": "2024-05-01T12:00:00Z"}, {"$reference": "name"}, {"$location": [lat, lon]}. \
            Exits 1 when the predicate cannot be evaluated on the object (a type mismatch, say).

            Examples:
              ferry predicate eval 'tags CONTAINS "x"' --object '{"tags": ["x", "y"]}'
              ferry predicate eval 'count > $min' --var min=3 --object '{"count": 5}'
            """
        )

        @Argument(help: "The predicate.")
        var predicate: String

        @Option(help: ArgumentHelp("The object to evaluate against, as JSON.", valueName: "JSON"))
        var object: String

        @Option(name: .customLong("var"), help: ArgumentHelp("Bind $NAME to a JSON value (repeatable).", valueName: "NAME=JSON"))
        var variables: [String] = []

        @OptionGroup var input: PredicateInput

        func run() throws {
            let parsed = try parsePredicate(predicate, arguments: try input.arguments())
            var bindings: [String: JSONValue] = [:]
            for binding in variables {
                guard let equals = binding.firstIndex(of: "=") else {
                    throw ValidationError("--var expects NAME=JSON, found '\(binding)'")
                }
                var name = String(binding[..<equals])
                if name.hasPrefix("$") { name.removeFirst() }
                do {
                    bindings[name] = try JSONValue(parsing: String(binding[binding.index(after: equals)...]))
                } catch {
                    throw ValidationError("--var \(name): not valid JSON: \(error)")
                }
            }
            let value: JSONValue
            do {
                value = try JSONValue(parsing: object)
            } catch {
                throw ValidationError("--object is not valid JSON: \(error)")
            }
            do {
                let filter = try RecordFilter(parsed)
                // A CloudKit record dictionary evaluates as a record; anything else as plain JSON.
                if value["recordName"] != nil, value["fields"] != nil, let record = try? RecordJSON.decodeRecord(object) {
                    print(try filter.matches(record, variables: bindings))
                } else {
                    print(try filter.evaluate(value, variables: bindings))
                }
            } catch {
                throw CommandFailure(message: error.rendered(), exitCode: 1)
            }
        }
    }

    struct FilterBy: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "filterby",
            abstract: "Print the CloudKit Web Services query.filterBy JSON for a predicate CKQuery accepts.",
            discussion: """
            Prints the filterBy array of a records/query request body (one JSON line). Exits 1, \
            naming every reason with its position and rule on stderr, when CloudKit's query API \
            would reject the predicate: ferry predicate split rewrites many of those.

            Examples:
              ferry predicate filterby 'count >= 3 AND name BEGINSWITH "A"'
              ferry predicate filterby 'owner == %@' --args '[{"$reference": "u1"}]' | jq .
            """
        )

        @Argument(help: "The predicate.")
        var predicate: String

        @OptionGroup var input: PredicateInput

        func run() throws {
            let parsed = try parsePredicate(predicate, arguments: try input.arguments())
            let validation = parsed.validateForCloudKit()
            guard validation.isAccepted else {
                writeFindings(reasons: validation.reasons)
                throw CommandFailure(message: "", exitCode: 1)
            }
            do {
                print(try parsed.cloudKitFilterBy().compactText)
            } catch {
                throw CommandFailure(message: error.rendered(), exitCode: 1)
            }
        }
    }
}

extension PredicateCommand {
    struct Split: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rewrite a predicate CloudKit rejects for OR or long lists as queries it accepts.",
            discussion: """
            Prints, one per line, the queries whose union of results is exactly the predicate's: \
            OR becomes one query per disjunct of the disjunctive normal form, NOT is pushed down to \
            single comparisons, and lists longer than --batch (x IN %@, ANY x IN %@, ANY %@ IN x, \
            ANY {…} = x) become batches of at most --batch values. Results of the queries can \
            overlap: merge them by recordName. With --json each line is the query's filterBy JSON.

            Exits 1, naming every reason with its position and rule, when some part cannot be \
            rewritten into a form CloudKit accepts (e.g. NOT over an OR of ordering comparisons, \
            ENDSWITH), or when the split would need more than --max-queries queries.

            Examples:
              ferry predicate split --cloudkit '(a == 1 OR b == 2) AND c > 3'
              ferry predicate split --cloudkit 'ANY %@ IN relatedRecords' \\
                  --args '[[{"$reference": "r1"}, …]]'
              ferry predicate split --cloudkit --batch 50 \\
                  --json 'recordID IN %@ OR NOT (x == 1 AND y == 2)' --args '[[…]]'
            """
        )

        @Argument(help: "The predicate.")
        var predicate: String

        @Flag(help: "Split for CloudKit's query rules (required: the only rules split knows).")
        var cloudkit = false

        @Option(parsing: .unconditional, help: ArgumentHelp("The most values one list may hold in a query (1…250).", valueName: "N"))
        var batch = CloudKitValidation.recommendedListValues

        @Option(name: .customLong("max-queries"), parsing: .unconditional, help: ArgumentHelp("Fail rather than print more queries than this.", valueName: "N"))
        var maxQueries = 1000

        @Flag(help: "Print each query's CloudKit Web Services filterBy JSON, one per line.")
        var json = false

        @Flag(help: "No notes on stderr (how many queries, whether their results overlap).")
        var quiet = false

        @OptionGroup var cloudKitSchema: CloudKitSchemaOptions

        @OptionGroup var input: PredicateInput

        func validate() throws {

            guard Ferry.validatesOptions else { return }
            guard cloudkit else { throw ValidationError("split needs --cloudkit (CloudKit's query rules are the only ones it splits for)") }
            let limit = CloudKitValidation.maximumListValues
            guard (1...limit).contains(batch) else {
                throw ValidationError("--batch must be between 1 and \(limit) (CloudKit's limit of values per list), found \(batch)")
            }
            guard maxQueries >= 1 else { throw ValidationError("--max-queries must be at least 1, found \(maxQueries)") }
        }

        func run() throws {
            let parsed = try parsePredicate(predicate, arguments: try input.arguments())
            let configuration = CloudKitSplitter.Configuration(batchSize: batch, maximumQueries: maxQueries,
                                                               recordType: cloudKitSchema.recordType, schema: try cloudKitSchema.load())
            let queries: [RecordPredicate]
            do {
                queries = try parsed.splitForCloudKit(configuration)
            } catch {
                writeFindings(reasons: error.cloudKitReasons)
                let message = error.cloudKitReasons.isEmpty ? error.rendered() : "cannot split this predicate into queries CloudKit accepts"
                throw CommandFailure(message: message, exitCode: 1)
            }
            var lines: [String] = []
            for query in queries {
                if json {
                    do {
                        lines.append(try query.cloudKitFilterBy().compactText)
                    } catch {
                        throw CommandFailure(message: "\(query.predicateFormat): \(error.message)", exitCode: 1)
                    }
                } else {
                    lines.append(query.predicateFormat)
                }
            }
            for line in lines { print(line) }
            if quiet { return }
            if queries.isEmpty {
                StandardError.write("note: the predicate matches no record; no query is needed\n")
            } else if queries.count > 1 {
                StandardError.write("note: \(queries.count) queries; their results can overlap, so merge them by recordName\n")
            }
        }
    }
}

func findingJSON(rule: String, message: String, line: Int, column: Int) -> JSONValue {
    .object(["rule": .string(rule), "message": .string(message),
             "line": .number(JSONNumber(Int64(line))), "column": .number(JSONNumber(Int64(column)))])
}

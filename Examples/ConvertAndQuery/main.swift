// Converts a folder of saved CloudKit `records/query` responses into a Ferry store, then queries
// the store as CloudKit would: the messages counted above 50, highest count first.
//
//     swift run ferry-example-convert-and-query responses/ chat.sqlite
import FerryKit

let arguments = CommandLine.arguments
let folder = arguments.count > 1 ? arguments[1] : "responses"
let store = arguments.count > 2 ? arguments[2] : "responses.sqlite"

// Every file under the folder (gzip or not; one response per file, or one per line) into the store.
let statistics = try Conversion(configuration: .init(inputs: [folder], output: store)).run()
print("converted \(statistics.recordsOut) records into \(store)")

// One page of a query, decoded; `cursor` continues it.
let query = StoreQuery(recordTypes: ["Message"], predicate: try RecordPredicate(parsing: "count > 50"),
                       sortKeys: [StoreSortKey(key: "count", ascending: false)], limit: 10)
let page = try StoreQueries(path: store).page(query)
for record in page.records {
    let count = record[field: "count"]?.int64Value ?? 0, text = record[field: "text"]?.stringValue ?? ""
    print("\(record.recordName)  \(count)  \(text)")
}
print(page.cursor.map { "more: \($0)" } ?? "no more pages")

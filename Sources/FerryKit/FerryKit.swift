// FerryKit: what the `ferry` command does, as a library a Swift program imports alone.
//
// Open any input by path and recognize it (InputRecognizer, OpenedInput, RecordSources), create
// any output (RecordOutput, RecordFormat's registry), convert (Conversion), replay histories into
// a state file or a store (StateReplay, StoreReplay), inspect, compare and verify (Inspection,
// Comparison, Verification), query and fetch a store (StoreQueries). Every run throws one error
// type, FerryError: a usage error or a data error, with the message a user reads.
//
// The modules whose types FerryKit's API speaks in are re-exported, so `import FerryKit` is all a
// program needs: the record model, the pipeline's transform and statistics, predicates, gzip,
// XML, archives, change logs and the store.
@_exported import FerryArchive
@_exported import FerryChangeLog
@_exported import FerryCompression
@_exported import FerryIO
@_exported import FerryJSON
@_exported import FerryPipeline
@_exported import FerryPredicate
@_exported import FerryRecords
@_exported import FerryStore
@_exported import FerryXML

import ArgumentParser
import FerryIO
import FerryStore

// The checks of numeric options, one per kind, so that every command refuses a value the same
// way (exit 2, saying what was expected) before anything runs, and no value reaches arithmetic
// that would overflow or allocate without bound. Numeric options parse `.unconditional`ly, so
// that `--limit -5` reaches these checks instead of being taken for an option.

/// Usage error unless `value`, given to `option`, lies in `range`.
func checkNumber(_ value: Int, of option: String, in range: ClosedRange<Int>) throws {
    guard !range.contains(value) else { return }
    let expected = range.upperBound == .max ? "a number ≥ \(range.lowerBound)" : "a number from \(range.lowerBound) to \(range.upperBound)"
    throw ValidationError("\(option) expects \(expected), found \(value)")
}

/// Usage error unless `threads`, given to `--threads`, is from `minimum` to
/// ``Processors/maximumThreads``.
func checkThreads(_ threads: Int?, minimum: Int) throws {
    guard let threads else { return }
    try checkNumber(threads, of: "--threads", in: minimum...Processors.maximumThreads)
}

/// Usage error unless `seconds`, given to `--busy-timeout`, is a finite number from 0 to the
/// longest wait SQLite makes (``RecordStore/Configuration/maximumBusyTimeout``).
func checkBusyTimeout(_ seconds: Double) throws {
    let maximum = RecordStore.Configuration.maximumBusyTimeout
    guard seconds >= 0 && seconds <= maximum else {
        throw ValidationError("--busy-timeout expects seconds from 0 to \(Int(maximum)) (about 24 days), found \(seconds)")
    }
}

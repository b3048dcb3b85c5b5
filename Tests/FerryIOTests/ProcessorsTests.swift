import FerryIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct ProcessorsTests {
    @Test func availableIsBetweenOneAndOnline() {
        #expect(Processors.available >= 1)
        #expect(Processors.available <= Processors.online)
    }

    /// Outside the `ferry` program (which calls `reclaimAtExit()`), what is left for the exit is
    /// freed as usual: a test process or a library user does not accumulate it.
    @Test func leftForExitIsFreedUnlessTheProgramAskedToKeepIt() {
        final class Tracked {}
        weak var watched: Tracked?
        do {
            let object = Tracked()
            watched = object
            ProcessMemory.leaveForExit(object)
        }
        #expect(watched == nil)
    }

    #if canImport(Glibc)
    // glibc declares these only under _GNU_SOURCE, so the tests look them up by name.
    private typealias Affinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32

    private static func affinityCalls() throws -> (get: Affinity, set: Affinity) {
        let process = try #require(dlopen(nil, RTLD_NOW))
        defer { dlclose(process) }
        return (unsafeBitCast(try #require(dlsym(process, "sched_getaffinity")), to: Affinity.self),
                unsafeBitCast(try #require(dlsym(process, "sched_setaffinity")), to: Affinity.self))
    }

    /// The calling thread's mask (`cpu_set_t`, 1024 bits).
    private static func mask() throws -> [UInt8] {
        var mask = [UInt8](repeating: 0, count: 128)
        try #require(try affinityCalls().get(0, mask.count, &mask) == 0)
        return mask
    }

    /// The count is the affinity mask's, not the processors online.
    @Test func countsTheAffinityMask() throws {
        let allowed = try Self.mask().reduce(0) { $0 + $1.nonzeroBitCount }
        #expect(Processors.available == allowed)
    }

    /// A thread pinned to one core (what `taskset -c 0` does to a whole process) has one processor
    /// available. Only meaningful where more than one is allowed to begin with.
    @Test(.enabled(if: Processors.available > 1))
    func honoursPinning() throws {
        let calls = try Self.affinityCalls()
        var saved = try Self.mask()
        defer { _ = calls.set(0, saved.count, &saved) }
        let first = try #require(saved.indices.first { saved[$0] != 0 })
        var one = [UInt8](repeating: 0, count: 128)
        one[first] = 1 << UInt8(saved[first].trailingZeroBitCount)
        try #require(calls.set(0, one.count, &one) == 0)
        #expect(Processors.available == 1)
    }
    #endif
}

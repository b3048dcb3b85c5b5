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

    #if os(Linux)
    /// A thread pinned to one core (what `taskset -c 0` does to a whole process) has one processor
    /// available, however many are online.
    @Test func honoursTheAffinityMask() throws {
        // glibc declares these only under _GNU_SOURCE, so the test looks them up by name.
        typealias Affinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
        let process = try #require(dlopen(nil, RTLD_NOW))
        defer { dlclose(process) }
        let get = unsafeBitCast(try #require(dlsym(process, "sched_getaffinity")), to: Affinity.self)
        let set = unsafeBitCast(try #require(dlsym(process, "sched_setaffinity")), to: Affinity.self)

        var saved = [UInt8](repeating: 0, count: 128)  // cpu_set_t: 1024 bits
        try #require(get(0, saved.count, &saved) == 0)
        defer { _ = set(0, saved.count, &saved) }
        let allowed = saved.reduce(0) { $0 + $1.nonzeroBitCount }
        #expect(Processors.available == allowed)

        let first = try #require(saved.indices.first { saved[$0] != 0 })
        var one = [UInt8](repeating: 0, count: 128)
        one[first] = 1 << UInt8(saved[first].trailingZeroBitCount)
        try #require(set(0, one.count, &one) == 0)
        #expect(Processors.available == 1)
    }
    #endif
}

import FerryRecords

/// Orders the saves of one batch so parents and referenced records come before the records that
/// point at them; records in a cycle keep their history order and are reported.
enum DependencyOrder {
    /// Returns the indices of `saves` in dependency order, and the indices that were in cycles.
    static func order(_ saves: [RecordSummary]) -> (order: [Int], cyclic: [Int]) {
        struct Key: Hashable {
            var zone: ZoneKey
            var name: String
        }
        var positions: [Key: [Int]] = [:]
        for (i, save) in saves.enumerated() {
            positions[Key(zone: ZoneKey(save.zoneID ?? .default), name: save.recordName), default: []].append(i)
        }
        var successors = [[Int]](repeating: [], count: saves.count)
        var incoming = [Int](repeating: 0, count: saves.count)
        func edge(_ from: Int, _ to: Int) {
            successors[from].append(to)
            incoming[to] += 1
        }
        for list in positions.values where list.count > 1 {
            for k in 1..<list.count { edge(list[k - 1], list[k]) }
        }
        for (i, save) in saves.enumerated() {
            let zone = save.zoneID ?? .default
            var targets: Set<Int> = []
            for reference in save.references {
                let key = Key(zone: ZoneKey(reference.zoneID ?? zone), name: reference.recordName)
                for j in positions[key] ?? [] where j != i && !targets.contains(j) {
                    targets.insert(j)
                    edge(j, i)
                }
            }
        }
        // Kahn's algorithm, always taking the earliest ready save so unrelated saves keep their order.
        var ready = Heap()
        for i in saves.indices where incoming[i] == 0 { ready.push(i) }
        var order: [Int] = []
        order.reserveCapacity(saves.count)
        while let i = ready.pop() {
            order.append(i)
            for j in successors[i] {
                incoming[j] -= 1
                if incoming[j] == 0 { ready.push(j) }
            }
        }
        guard order.count < saves.count else { return (order, []) }
        let cyclic = saves.indices.filter { incoming[$0] > 0 }
        return (order + cyclic, cyclic)
    }

    /// A binary min-heap of indices.
    private struct Heap {
        var items: [Int] = []

        mutating func push(_ value: Int) {
            items.append(value)
            var i = items.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                if items[parent] <= items[i] { break }
                items.swapAt(parent, i)
                i = parent
            }
        }

        mutating func pop() -> Int? {
            guard let first = items.first else { return nil }
            let last = items.removeLast()
            if !items.isEmpty {
                items[0] = last
                var i = 0
                while true {
                    let l = 2 * i + 1, r = l + 1
                    var m = i
                    if l < items.count && items[l] < items[m] { m = l }
                    if r < items.count && items[r] < items[m] { m = r }
                    if m == i { break }
                    items.swapAt(m, i)
                    i = m
                }
            }
            return first
        }
    }
}

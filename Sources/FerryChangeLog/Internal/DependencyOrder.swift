/// Orders records so the records they point at (parents, references) come first, and finds the
/// records whose references form cycles.
enum DependencyOrder {
    /// Returns the indices of the nodes in dependency order, and the indices of the nodes that lie
    /// on reference cycles (or on paths between cycles), in index order.
    ///
    /// Node `i` is the record `keys[i]` and points at the records `targets[i]`; targets that are no
    /// node are ignored. Several nodes with one key (one record saved twice) keep their order.
    /// Among nodes free to go, the one with the lowest index goes first, so unrelated nodes keep
    /// their order; when only cycles are left, the lowest-index node on one goes next.
    static func order<Key: Hashable>(keys: [Key], targets: [[Key]]) -> (order: [Int], cyclic: [Int]) {
        let n = keys.count
        var positions: [Key: [Int]] = [:]
        for (i, key) in keys.enumerated() { positions[key, default: []].append(i) }
        var successors = [[Int]](repeating: [], count: n)
        var predecessors = [[Int]](repeating: [], count: n)
        func edge(_ from: Int, _ to: Int) {
            successors[from].append(to)
            predecessors[to].append(from)
        }
        for list in positions.values where list.count > 1 {
            for k in 1..<list.count { edge(list[k - 1], list[k]) }
        }
        for i in keys.indices {
            var seen: Set<Int> = []
            for target in targets[i] {
                for j in positions[target] ?? [] where j != i && seen.insert(j).inserted { edge(j, i) }
            }
        }
        var incoming = predecessors.map(\.count)
        var order: [Int] = []
        order.reserveCapacity(n)
        var ready = Heap()
        for i in keys.indices where incoming[i] == 0 { ready.push(i) }
        func drain() {
            while let i = ready.pop() {
                order.append(i)
                for j in successors[i] {
                    incoming[j] -= 1
                    if incoming[j] == 0 { ready.push(j) }
                }
            }
        }
        drain()
        guard order.count < n else { return (order, []) }

        // What is left is blocked by cycles. Trim the nodes that lead to no other blocked node: the
        // rest lie on cycles or between them.
        var isBlocked = incoming.map { $0 > 0 }
        var outgoing = [Int](repeating: 0, count: n)
        var trim: [Int] = []
        for i in keys.indices where isBlocked[i] {
            outgoing[i] = successors[i].reduce(0) { $0 + (isBlocked[$1] ? 1 : 0) }
            if outgoing[i] == 0 { trim.append(i) }
        }
        while let i = trim.popLast() {
            isBlocked[i] = false
            for p in predecessors[i] where isBlocked[p] {
                outgoing[p] -= 1
                if outgoing[p] == 0 { trim.append(p) }
            }
        }
        let cyclic = keys.indices.filter { isBlocked[$0] }
        // Break the cycles one node at a time, lowest index first.
        var next = 0
        while order.count < n {
            while incoming[cyclic[next]] <= 0 { next += 1 }
            incoming[cyclic[next]] = 0
            ready.push(cyclic[next])
            drain()
        }
        return (order, cyclic)
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

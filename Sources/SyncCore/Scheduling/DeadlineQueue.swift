// Which sources are due when, so that a timer firing or a deadline question costs O(log N) in the number
// of sources rather than a scan of all of them (docs/benchmarks.md, "Scale in sources").

/// A min-heap of (deadline, source) with lazy deletion: an entry counts only while it matches the source's
/// current deadline, and stale entries are dropped when they reach the top.
struct DeadlineQueue: Sendable {
    private struct Entry: Sendable {
        let instant: MonotonicInstant
        let name: String
    }

    private var heap: [Entry] = []
    private var current: [String: MonotonicInstant] = [:]

    /// The earliest current deadline.
    var earliest: MonotonicInstant? { heap.first?.instant }

    /// Records `name`'s deadline (nil: none).
    mutating func set(_ name: String, _ instant: MonotonicInstant?) {
        guard current[name] != instant else { return }
        current[name] = instant
        if let instant { push(Entry(instant: instant, name: name)) }
        dropStale()
    }

    /// Removes and returns the sources due at `now`, sorted by name.
    mutating func popDue(at now: MonotonicInstant) -> [String] {
        var due: Set<String> = []
        while let top = heap.first, top.instant <= now {
            pop()
            if current[top.name] == top.instant {
                current[top.name] = nil
                due.insert(top.name)
            }
        }
        dropStale()
        return due.sorted()
    }

    private mutating func dropStale() {
        while let top = heap.first, current[top.name] != top.instant { pop() }
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].instant < heap[parent].instant else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func pop() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].instant < heap[smallest].instant { smallest = left }
            if right < heap.count, heap[right].instant < heap[smallest].instant { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

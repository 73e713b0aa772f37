// Fleet recovery simulation: 10,000 daemons, one source each, all driven by
// the real `SourceScheduler` with a virtual clock, against one server that is
// down for 10 minutes (every request answers 503 without Retry-After).
//
// Build and run (see README.md):
//   swiftc -O Sources/SyncCore/Scheduling/*.swift bench/fleet/main.swift -o /tmp/fleet && /tmp/fleet
//
// Model
// - Each daemon starts at a uniformly random instant in the first
//   interval + randomizedDelay, so periodic refreshes are spread evenly by the
//   time the outage begins (t = 1800 s); daemons discover the outage when
//   their own periodic refresh fails, at random times during it.
// - A request's outcome is decided by the server state when it is sent; a
//   failure returns after 50 ms, a success after 200 ms.
// - Probes (the daemon's reachability probe, syncd.conf(5) [Network]
//   ReachabilityIntervalSec=30s): while a source is in backoff or error the
//   daemon sends a HEAD every 30 s; one that succeeds feeds
//   `.trigger(.probeRecovered)`. Probes count as server requests. Runs with
//   probes off show what the scheduler alone does (an exhausted source then
//   waits for its periodic trigger).
// - Recovery window: from the server's return until every daemon that saw a
//   failure has succeeded again ("affected"). The brief's literal reading
//   ("until every daemon has succeeded once") is also reported: it includes
//   daemons that never saw the outage and just wait for their next periodic
//   refresh, so it is about one interval long whatever the backoff does.

let fleetSize = 10_000
let outageStart: Int64 = 1_800
let outageLength: Int64 = 600
let outageEnd = outageStart + outageLength
let failureLatency = Duration.milliseconds(50)
let successLatency = Duration.milliseconds(200)
let probeInterval = Duration.seconds(30)

func seconds(_ instant: MonotonicInstant) -> Double { Double(instant.nanoseconds) / 1e9 }
func at(_ s: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: UInt64(s) * 1_000_000_000) }
func serverUp(_ instant: MonotonicInstant) -> Bool { !(instant >= at(outageStart) && instant < at(outageEnd)) }

/// A min-heap of timed events.
struct EventQueue {
    enum Kind: UInt8 { case wake, finish, probe, network }
    struct Entry { var time: UInt64; var daemon: Int32; var kind: Kind; var generation: UInt32 }
    private var heap: [Entry] = []
    var isEmpty: Bool { heap.isEmpty }

    mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if heap[parent].time <= heap[child].time { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    mutating func pop() -> Entry? {
        guard let first = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count && heap[left].time < heap[smallest].time { smallest = left }
                if right < heap.count && heap[right].time < heap[smallest].time { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}

struct Result {
    var name: String
    var buckets: [Int]           // requests (GET + HEAD) per second
    var getBuckets: [Int]        // refresh GETs per second
    var affected: Int
    var affectedRecoveredAt: Double
    var allRecoveredAt: Double
    var exhausted: Int           // sources that reached `error` during the outage
}

func simulate<J: JitterSource>(name: String, jitter: J, probes: Bool, synchronised: Bool, seed: UInt64,
                                   jitteredProbes: Bool = false) -> Result {
    var jitter = jitter
    var phases = SplitMix64Jitter(seed: seed)      // start-up times: randomness of the world, not of the daemon
    let settings = SchedulerSettings()
    var daemons = (0..<fleetSize).map { SourceScheduler(name: "d\($0)", settings: settings) }
    var generation = [UInt32](repeating: 0, count: fleetSize)
    var probing = [Bool](repeating: false, count: fleetSize)
    var inFlightUp = [Bool](repeating: false, count: fleetSize)
    var sawFailure = [Bool](repeating: false, count: fleetSize)
    var recoveredAt = [Double?](repeating: nil, count: fleetSize)   // first success after the outage
    var exhausted = Set<Int>()
    let horizon = outageEnd + 3 * 3600
    var buckets = [Int](repeating: 0, count: Int(horizon) + 1)
    var getBuckets = buckets
    var queue = EventQueue()

    func bucket(_ instant: MonotonicInstant) -> Int { Int(instant.nanoseconds / 1_000_000_000) }

    let spread = seconds(MonotonicInstant.zero + settings.interval + settings.randomizedDelay)
    for daemon in 0..<fleetSize {
        let startup = MonotonicInstant(nanoseconds: UInt64(phases.fraction() * spread * 1e9))
        queue.push(.init(time: startup.nanoseconds, daemon: Int32(daemon), kind: .wake, generation: UInt32.max))
    }

    if synchronised {
        // Every daemon sees the same network change one minute into the outage
        // (say, a site-wide VPN reconnect) and so fails in lockstep.
        for daemon in 0..<fleetSize {
            queue.push(.init(time: at(outageStart + 60).nanoseconds, daemon: Int32(daemon), kind: .network, generation: 0))
        }
    }
    var remainingAll = fleetSize
    while let event = queue.pop() {
        let now = MonotonicInstant(nanoseconds: event.time)
        if now > at(horizon) { break }
        let d = Int(event.daemon)
        var actions: [SchedulerAction] = []
        switch event.kind {
        case .wake where event.generation == UInt32.max:
            actions = daemons[d].handle(.trigger(.startup), at: now, jitter: &jitter)
        case .wake:
            guard event.generation == generation[d] else { continue }
            actions = daemons[d].handle(.tick, at: now, jitter: &jitter)
        case .finish:
            let up = inFlightUp[d]
            actions = daemons[d].handle(.refreshFinished(up ? .success : .failure(.transient, retryAfter: nil)),
                                        at: now, jitter: &jitter)
            if !up {
                sawFailure[d] = true
                if daemons[d].status.state == .error { exhausted.insert(d) }
            } else if now >= at(outageEnd) && recoveredAt[d] == nil {
                recoveredAt[d] = seconds(now)
                remainingAll -= 1
            }
        case .network:
            actions = daemons[d].handle(.trigger(.network), at: now, jitter: &jitter)
        case .probe:
            probing[d] = false
            let state = daemons[d].status.state
            guard state == .backoff || state == .error || state == .syncing else { break }
            if state != .syncing {
                buckets[bucket(now)] += 1
                if serverUp(now) { actions = daemons[d].handle(.trigger(.probeRecovered), at: now, jitter: &jitter) }
                if jitteredProbes, !serverUp(now) || actions.isEmpty, daemons[d].status.state != .idle {
                    probing[d] = true
                    let period = probeInterval * (0.5 + phases.fraction())
                    queue.push(.init(time: (now + period).nanoseconds, daemon: Int32(d), kind: .probe, generation: 0))
                }
            }
        }
        for _ in actions {
            buckets[bucket(now)] += 1
            getBuckets[bucket(now)] += 1
            let up = serverUp(now)
            inFlightUp[d] = up
            queue.push(.init(time: (now + (up ? successLatency : failureLatency)).nanoseconds,
                             daemon: Int32(d), kind: .finish, generation: 0))
        }
        // Sleep until the scheduler's next deadline, as the daemon does.
        if let deadline = daemons[d].nextDeadline() {
            generation[d] &+= 1
            if generation[d] == UInt32.max { generation[d] = 0 }
            queue.push(.init(time: max(deadline, now).nanoseconds, daemon: Int32(d), kind: .wake, generation: generation[d]))
        }
        let state = daemons[d].status.state
        if probes && !probing[d] && (state == .backoff || state == .error) {
            probing[d] = true
            // A jittered probe period is uniform in [0.5, 1.5] × 30 s (a suggestion for the daemon).
            let period = jitteredProbes ? probeInterval * (0.5 + phases.fraction()) : probeInterval
            queue.push(.init(time: (now + period).nanoseconds, daemon: Int32(d), kind: .probe, generation: 0))
        }
        if remainingAll == 0 { break }
    }
    // Unrecovered daemons (none expected) count as recovered at the horizon.
    let recovered = recoveredAt.map { $0 ?? Double(horizon) }
    let affectedRecovered = zip(sawFailure, recovered).filter { $0.0 }.map { $0.1 }
    return Result(name: name, buckets: buckets, getBuckets: getBuckets,
                  affected: affectedRecovered.count,
                  affectedRecoveredAt: affectedRecovered.max() ?? Double(outageEnd),
                  allRecoveredAt: recovered.max() ?? Double(outageEnd), exhausted: exhausted.count)
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}
func fixed(_ value: Double, _ digits: Int = 1) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale + 0.5))
    let whole = scaled / Int(scale), fraction = String(scaled % Int(scale))
    return digits == 0 ? "\(whole)" : "\(whole).\(String(repeating: "0", count: digits - fraction.count))\(fraction)"
}

/// Peak and mean over [from, to) in whole seconds.
/// The first whole second at or after `value` (`rounded(.up)` would need libm).
func ceilSeconds(_ value: Double) -> Int { Int(value) + (value > Double(Int(value)) ? 1 : 0) }

func window(_ buckets: [Int], from: Int, to: Int) -> (seconds: Int, total: Int, mean: Double, peak: Int) {
    let slice = buckets[from..<max(from + 1, to)]
    let total = slice.reduce(0, +)
    return (slice.count, total, Double(total) / Double(slice.count), slice.max() ?? 0)
}

let seed: UInt64 = 2026
var results: [Result] = []
for synchronised in [false, true] {
    for probes in [true, false] {
        let suffix = (probes ? "probes" : "no probes") + (synchronised ? ", sync" : "")
        // The shipped daemon draws each probe period from [0.5, 1.5] x ReachabilityIntervalSec.
        results.append(simulate(name: "(a) defaults, \(suffix)", jitter: SplitMix64Jitter(seed: seed ^ 0xA5),
                                probes: probes, synchronised: synchronised, seed: seed, jitteredProbes: true))
        results.append(simulate(name: "(b) no jitter f=1.0, \(suffix)", jitter: ConstantJitter(1.0),
                                probes: probes, synchronised: synchronised, seed: seed))
    }
}
results.append(simulate(name: "(c) jitter, fixed 30 s probes, sync", jitter: SplitMix64Jitter(seed: seed ^ 0xA5),
                        probes: true, synchronised: true, seed: seed, jitteredProbes: false))

print("Fleet: \(fleetSize) daemons, 1 source each; server down t=\(outageStart)..\(outageEnd) s (503, no Retry-After); seed \(seed)")
print("Requests = refresh GETs + probe HEADs, counted in 1 s buckets at the server.\n")
print("window A: from server return until every AFFECTED daemon (saw a failure) succeeded again")
print("window B: from server return until EVERY daemon succeeded once")
print("probes: reachability HEAD while failing, every 30 s x [0.5, 1.5) in (a) as shipped, every 30 s in (b) and (c); sync: all daemons get one network trigger at t=\(outageStart + 60) s")
print("error: daemons that used up MaxAttempts during the outage; steady: mean rate in the 15 min before it\n")
let header = [pad("scenario", 32), pad("affected", 8), pad("error", 6), pad("A len s", 8), pad("A mean/s", 9),
              pad("A peak/s", 9), pad("A pk/mn", 8), pad("B len s", 8), pad("B mean/s", 9), pad("B peak/s", 9),
              pad("B pk/mn", 8), pad("outage peak/s", 14), pad("steady/s", 9)]
print(header.joined(separator: " "))
for result in results {
    let a = window(result.buckets, from: Int(outageEnd), to: ceilSeconds(result.affectedRecoveredAt))
    let b = window(result.buckets, from: Int(outageEnd), to: ceilSeconds(result.allRecoveredAt))
    let outage = window(result.buckets, from: Int(outageStart), to: Int(outageEnd))
    let steady = window(result.buckets, from: Int(outageStart) - 900, to: Int(outageStart))
    let row = [pad(result.name, 32), pad("\(result.affected)", 8), pad("\(result.exhausted)", 6),
               pad("\(a.seconds)", 8), pad(fixed(a.mean), 9), pad("\(a.peak)", 9), pad(fixed(Double(a.peak) / a.mean, 2), 8),
               pad("\(b.seconds)", 8), pad(fixed(b.mean), 9), pad("\(b.peak)", 9), pad(fixed(Double(b.peak) / b.mean, 2), 8),
               pad("\(outage.peak)", 14), pad(fixed(steady.mean), 9)]
    print(row.joined(separator: " "))
}

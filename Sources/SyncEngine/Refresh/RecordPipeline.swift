internal import Glibc
import Synchronization
import SyncCore
import SyncStore

/// Scanned records handed to a second thread, which adds them to a `ListingWriter` (frames, hashes, writes
/// the cache file, stages the index) while the transfer's thread receives and scans the next bytes: a large
/// listing keeps two cores busy instead of one (docs/architecture.md, "Storing listings"; docs/benchmarks.md,
/// "Speed of the first sync and of the 304").
///
/// Records are copied into batches laid out as the cache file's bytes, each at most one chunk of the listing
/// and at most `batchBytes` (a batch also ends with its page, and a page's first batch may complete a chunk
/// the page before began); at most `inFlight` batches wait or are being added, so memory stays bounded
/// whatever the listing's size. The buffers are reused; one taken as a chunk's image is exchanged for the
/// writer's emptied one, of the same size.
/// The order is kept: one thread adds them, first in first out. The writer is used only by that thread
/// between the first batch handed over and `finish` or `drain`, and only by the caller outside that window.
/// A failure of the writer stops the pipeline: the `add` that hands the next batch over (which the transfer calls, so the transfer
/// stops too) or `finish` throws it. Without a thread (`pthread_create` failed) the batches are added on
/// the caller's thread, as without the pipeline.
final class RecordPipeline {
    /// One record of a batch: where its ID's and version's bytes end in the batch's `keys` (one after the other;
    /// the version's are empty when it has none), and where its body starts and ends in the batch's `image`.
    /// Plain values: no string is made, retained or released per record on either thread (each was a reference
    /// counted across the two cores, docs/benchmarks.md, "Third pass").
    private struct Entry {
        let idEnd: Int
        let versionEnd: Int
        let bodyStart: Int
        let end: Int
        let idIsInteger: Bool
        let hasVersion: Bool
    }

    /// Records and their bytes, owned by one side at a time: moved, never copied, so the buffers stay
    /// unique and emptying one keeps its capacity. A value, not an object: adding a record to the current
    /// batch retains and releases nothing (docs/benchmarks.md, "Third pass"). The first batch of a page
    /// grows as records come (a small page stays small); the others, made once the page proved large,
    /// take their size at once.
    ///
    /// `image` holds the records as the cache file will: each body after its separator (`\n` before the file's
    /// first record, `,\n` before the others). A batch that is a whole chunk becomes that chunk's file bytes as
    /// it is (`ListingWriter.add(image:records:record:)`): its records' bytes are copied once in user space, from
    /// libcurl's buffer to here, and from here go to the kernel (a chunk of 64 KiB or more; a smaller one passes
    /// through `CacheFileOutput`'s buffer). A batch that is not a whole chunk (cut by size, the end of a page,
    /// or completing a chunk the page before began) is added record by record, a second copy.
    private struct Batch: Sendable {
        var image: [UInt8] = []
        var keys: [UInt8] = []
        var records: [Entry] = []

        init(sized: Bool = false) {
            guard sized else { return }
            // Batches are cut before they would pass `batchBytes`, and a chunk's padding to a whole block
            // (`ListingWriter.add(image:...)`) takes less than 4 KiB more: the buffer never grows (a record larger
            // than that alone excepted), nor does the writer's, which it is exchanged with. A buffer that grew
            // would be copied, and would stay larger as it circulates.
            image.reserveCapacity(RecordPipeline.batchBytes + 4096)
            keys.reserveCapacity(8 << 10)
            records.reserveCapacity(ListingWriter.recordsPerChunk)
        }

        mutating func empty() {
            image.removeAll(keepingCapacity: true)
            keys.removeAll(keepingCapacity: true)
            records.removeAll(keepingCapacity: true)
        }

        /// Appends one record: its ID and version to `keys`, its separator and body to `image`, and its entry.
        mutating func append(_ record: ScannedRecord, preceded: Bool) {
            // The ID's and the version's bytes, not `record.id` or `record.version`: those would make a string
            // of them per record.
            let (idEnd, versionEnd, hasVersion) = record.withIDBytes { idBytes in
                record.withVersionBytes { version in
                    let (idEnd, versionEnd) = Batch.append(idBytes, version, to: &keys)
                    return (idEnd, versionEnd, version != nil)
                }
            }
            if preceded { image.append(0x2c) }
            image.append(0x0a)
            let bodyStart = image.count
            image.append(contentsOf: record.bytes)
            records.append(Entry(idEnd: idEnd, versionEnd: versionEnd, bodyStart: bodyStart, end: image.count,
                                 idIsInteger: record.idKind == .integer, hasVersion: hasVersion))
        }

        /// Appends an ID's and a version's bytes to `keys` (one access to the buffer); where each ends.
        private static func append(_ id: UnsafeRawBufferPointer, _ version: UnsafeRawBufferPointer?, to keys: inout [UInt8]) -> (Int, Int) {
            keys.append(contentsOf: id)
            let idEnd = keys.count
            if let version { keys.append(contentsOf: version) }
            return (idEnd, keys.count)
        }
    }

    /// What both threads use: the writer (only ever by one of them at a time, see above), the first
    /// failure, and the emptied batches to reuse.
    private final class Shared: @unchecked Sendable {
        let writer: ListingWriter
        let failure = Mutex<StoreError?>(nil)
        let spare = Mutex<[Batch]>([])
        init(writer: ListingWriter) { self.writer = writer }

        /// Adds the batch's records to the writer unless it failed before; records its failure. A batch that is
        /// a chunk's image is taken whole (its `image` then holds the writer's emptied buffer); otherwise its
        /// records are added one by one.
        func addAll(_ batch: inout Batch) {
            guard failure.withLock({ $0 == nil }) else { return }
            let records = batch.records
            let keys = batch.keys
            let failed: StoreError? = keys.withUnsafeBytes { (keys: UnsafeRawBufferPointer) -> StoreError? in
                // Record `index`'s ID starts where the record before it ends in `keys`.
                func id(_ index: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: keys[(index == 0 ? 0 : records[index - 1].versionEnd)..<records[index].idEnd])
                }
                func version(_ entry: Entry) -> UnsafeRawBufferPointer? {
                    entry.hasVersion ? UnsafeRawBufferPointer(rebasing: keys[entry.idEnd..<entry.versionEnd]) : nil
                }
                do throws(StoreError) {
                    let taken = try writer.add(image: &batch.image, records: records.count) { index in
                        let entry = records[index]
                        return ListingWriter.ImageRecord(id: id(index), idIsInteger: entry.idIsInteger, version: version(entry),
                                                         bodyLength: entry.end - entry.bodyStart)
                    }
                    if taken { return nil }
                } catch {
                    return error
                }
                return batch.image.withUnsafeBytes { image in
                    for (index, entry) in records.enumerated() {
                        do throws(StoreError) {
                            try writer.add(idBytes: id(index), idIsInteger: entry.idIsInteger, versionBytes: version(entry),
                                           body: UnsafeRawBufferPointer(rebasing: image[entry.bodyStart..<entry.end]))
                        } catch {
                            return error
                        }
                    }
                    return nil
                }
            }
            if let failed { failure.withLock { if $0 == nil { $0 = failed } } }
        }
    }

    /// A batch is handed over when it completes a chunk (`ListingWriter.recordsPerChunk` records of the listing),
    /// or before the record that would take it past this many bytes: a chunk of records over about 230 bytes on
    /// average is then handed over in parts, added record by record as before. Below the daemon's 128 KiB mmap
    /// threshold (`MemoryPolicy`), so the buffers are reused from the heap, and the chunk of a listing of
    /// 225-byte records (the benchmarks') fits in one. Larger batches would let larger records go as images,
    /// but each buffer circulates between the batches and the writer: all of them would grow to that size.
    static let batchBytes = 120 << 10
    /// Batches handed over and not yet added, at most: with the one being filled and one waiting for a slot,
    /// five buffers of `batchBytes` (0.6 MiB) besides the chunk the writer fills.
    static let inFlight = 3

    private let shared: Shared
    /// The thread's queue; nil until the first batch is handed over (a small listing never starts it) and
    /// when no thread could be started (the batches are then added on the caller's thread).
    private var worker: Worker?
    private var started = false
    private var current = Batch()
    /// Where the next record falls in the writer's chunks, as seen when this pipeline's first record came (the
    /// writer is the caller's then) and counted on since: where batches are cut and which separator comes first.
    /// Should it be wrong, the writer adds the batch record by record, to the same result.
    private var spot: (recordsLeft: Int, preceded: Bool)?
    private var sent = false
    private var sentAny = false
    /// Records handed over so far (scanned; the writer may not have added them all yet).
    private(set) var count = 0

    /// A pipeline into `writer`.
    init(writer: ListingWriter) {
        shared = Shared(writer: writer)
    }

    deinit {
        drain()
        worker?.stop()
    }

    /// Copies a record into the current batch; hands the batch over once it completes a chunk, or first when the
    /// record would take it past `batchBytes`.
    /// Throws the writer's failure once there is one.
    func add(_ record: ScannedRecord) throws(StoreError) {
        var spot = self.spot ?? shared.writer.nextChunkSpot
        if !current.records.isEmpty && current.image.count + record.bytes.count + 2 > RecordPipeline.batchBytes { try send() }
        current.append(record, preceded: spot.preceded)
        spot.preceded = true
        spot.recordsLeft -= 1
        let chunkEnds = spot.recordsLeft == 0
        if chunkEnds { spot.recordsLeft = ListingWriter.recordsPerChunk }
        self.spot = spot
        count += 1
        if chunkEnds { try send() }
    }

    /// Hands the current batch over (waiting while `inFlight` are pending) and starts a new one. The `last`
    /// batch of a listing that never filled one is added here: a small page starts no thread.
    private func send(last: Bool = false) throws(StoreError) {
        if let failure = shared.failure.withLock({ $0 }) { throw failure }
        guard !current.records.isEmpty else { return }
        if !started && !last {
            started = true
            worker = Worker.start(shared)
        }
        guard let worker else {
            shared.addAll(&current)
            current.empty()
            return
        }
        let batch = current
        current = shared.spare.withLock { $0.popLast() } ?? Batch(sized: true)
        worker.hand(batch)
        sent = true
        sentAny = true
    }

    /// Hands the last records over and waits until the writer added every record; throws its failure.
    func finish() throws(StoreError) {
        do {
            try send(last: true)
        } catch {
            drain()
            throw error
        }
        drain()
        // What the thread allocated and freed sits in an arena of its own, which the caller's later
        // allocations (the commit) do not reuse: given back, the peak stays where it was without the
        // pipeline (`syncd --once` on 1M records: about 30.7 instead of 31.5 MiB, docs/benchmarks.md).
        if sentAny { MemoryPolicy.returnFreedMemory() }
        if let failure = shared.failure.withLock({ $0 }) { throw failure }
    }

    /// Waits until the thread is done with every batch handed over (before the writer is used or rolled
    /// back on this thread). Idempotent.
    func drain() {
        guard sent, let worker else { return }
        worker.waitUntilIdle()
        sent = false
    }

    /// The second thread and its bounded queue: `slots` counts the batches that may still be handed over,
    /// `ready` the batches (and the stop request) waiting for the thread. Both waits sleep (futex).
    private final class Worker: @unchecked Sendable {
        let shared: Shared
        let pending = Mutex<[Batch?]>([])
        let slots = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        let ready = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

        init(shared: Shared) {
            self.shared = shared
            sem_init(slots, 0, UInt32(RecordPipeline.inFlight))
            sem_init(ready, 0, 0)
        }

        deinit {
            sem_destroy(slots)
            sem_destroy(ready)
            slots.deallocate()
            ready.deallocate()
        }

        /// A running worker, or nil when no thread could be started.
        static func start(_ shared: Shared) -> Worker? {
            let worker = Worker(shared: shared)
            do {
                try SystemThread.detached(name: "syncd-records") { worker.run() }
            } catch {
                return nil
            }
            return worker
        }

        private func run() {
            while true {
                retryingEINTR { sem_wait(ready) }
                guard var batch = pending.withLock({ $0.removeFirst() }) else { return }
                shared.addAll(&batch)
                batch.empty()
                shared.spare.withLock { $0.append(batch) }
                sem_post(slots)
            }
        }

        /// Queues `batch`, waiting while `inFlight` batches are queued or being added.
        func hand(_ batch: Batch) {
            while sem_wait(slots) != 0 {}
            pending.withLock { $0.append(batch) }
            sem_post(ready)
        }

        /// Returns once every batch handed over was added (all slots free again).
        func waitUntilIdle() {
            for _ in 0..<RecordPipeline.inFlight { while sem_wait(slots) != 0 {} }
            for _ in 0..<RecordPipeline.inFlight { sem_post(slots) }
        }

        /// Ends the thread once it has added what was handed over.
        func stop() {
            pending.withLock { $0.append(nil) }
            sem_post(ready)
        }
    }
}

// RecordScanner+Records: following the records path, buffering the current record,
// capturing member names, IDs and versions, and emitting records.
//
// Depths: the top-level container is at depth 1, so with a path of k tokens the
// records array is at depth k + 1 and a record's members are at depth k + 2.

extension RecordScanner {
    /// The depth of an open record's members.
    var recordDepth: Int { pathTokens.count &+ 2 }

    // MARK: Roles

    /// The role of the value about to start, in the current container.
    @inline(__always)
    mutating func roleOfNextValue() -> ValueRole {
        if depth == 0 {
            return pathTokens.isEmpty ? .recordsArray : .pathStep
        }
        guard containerIsArray[depth &- 1] else {
            let role = nextRole
            nextRole = .other
            return role
        }
        guard depth == matchedDepth else { return .other }
        if depth == pathTokens.count &+ 1 { return .record }
        // An array on the records path: only the element at the token's index continues it.
        let step = depth &- 1
        let index = pathElementCount[step]
        pathElementCount[step] = index &+ 1
        guard pathIndices[step] == index else { return .other }
        return depth == pathTokens.count ? .recordsArray : .pathStep
    }

    // MARK: Containers

    /// Opens an object or array whose first byte is at `i`.
    @inline(__always)
    mutating func openContainer(isArray: Bool, role: ValueRole, at i: Int) throws {
        if depth >= maxDepth {
            throw fail(.depthExceeded(maxDepth), atIndex: i)
        }
        switch role {
        case .other:
            break
        case .pathStep:
            // The next token must fit the container: an index for an array.
            if isArray && pathIndices[depth] == nil {
                throw fail(.pathNotFound(path: pathPointer), atIndex: i)
            }
            matchedDepth = depth &+ 1
        case .recordsArray:
            guard isArray else { throw fail(.notAnArray(path: pathPointer), atIndex: i) }
            matchedDepth = depth &+ 1
            recordsArray = .open
        case .record:
            guard !isArray else { throw fail(.recordNotObject(index: emitted), atIndex: i) }
            inRecord = true
            recordChunkStart = i
            recordStreamStart = chunkBase + Int64(i)
            versionStreamStart = -1
            recordSpansChunks = false
            if !recordBuffer.isEmpty { recordBuffer.removeAll(keepingCapacity: true) }
            idKeySeen = false
            // Tested first: assigning nil releases the old value, a call even when it is nil.
            if currentID != nil { currentID = nil }
            idStreamStart = -1
            if currentVersion != nil { currentVersion = nil }
            memberIndex = 0
        case .id, .idAndVersion:
            throw fail(.invalidID(index: emitted, reason: "ID must be a string or an integer"), atIndex: i)
        case .version:
            currentVersion = nil
            versionStreamStart = -1
        }
        containerIsArray[depth] = isArray
        depth &+= 1
        state = isArray ? .valueOrArrayEnd : .keyOrObjectEnd
    }

    /// Closes the current container with `b` (`]` or `}`) at `i`.
    mutating func closeContainer(
        _ b: UInt8, at i: Int, _ p: UnsafeBufferPointer<UInt8>,
        onRecord: (ScannedRecord) throws -> Void
    ) throws {
        guard containerIsArray[depth &- 1] == (b == UInt8(ascii: "]")) else {
            throw unexpected(b, at: i)
        }
        if inRecord && depth == recordDepth {
            try endRecord(p, at: i, onRecord: onRecord)
        } else if depth == matchedDepth {
            if depth == pathTokens.count &+ 1 {
                recordsArray = .closed
            } else if recordsArray == .notFound {
                throw fail(.pathNotFound(path: pathPointer), atIndex: i)
            }
            matchedDepth &-= 1
        }
        depth &-= 1
        state = .afterValue
    }

    /// Emits the record whose closing `}` is at `i`.
    mutating func endRecord(
        _ p: UnsafeBufferPointer<UInt8>, at i: Int,
        onRecord: (ScannedRecord) throws -> Void
    ) throws {
        inRecord = false
        // Size first: a record past the limit is refused for that whatever else is wrong with it, as it is
        // when a chunk ends inside it (`scan`).
        let size = (recordSpansChunks ? recordBuffer.count : -recordChunkStart) &+ i &+ 1
        guard size <= maxRecordBytes else { throw fail(.recordTooLarge(index: emitted, limit: maxRecordBytes), atIndex: i) }
        guard idKeySeen, currentID != nil || idStreamStart >= 0 else {
            throw fail(.missingID(index: emitted, field: idField), atIndex: i)
        }
        let index = emitted
        // An ID or a version that is its raw text lies in the record's bytes: no string is made for it.
        let id = idStreamStart < 0 ? ScannedRecord.IDSource.text(currentID ?? RecordID(key: "", kind: .string))
            : .range(Int(idStreamStart &- recordStreamStart)..<Int(idStreamEnd &- recordStreamStart), idStreamKind)
        let versionRange = versionStreamStart < 0 ? nil
            : Int(versionStreamStart &- recordStreamStart)..<Int(versionStreamEnd &- recordStreamStart)
        let version = currentVersion
        func record(_ bytes: UnsafeRawBufferPointer) -> ScannedRecord {
            ScannedRecord(index: index, idSource: id, version: version, versionRange: versionRange, bytes: bytes)
        }
        do {
            if recordSpansChunks {
                recordBuffer.append(contentsOf: UnsafeBufferPointer(rebasing: p[0...i]))
                try recordBuffer.withUnsafeBytes { bytes in
                    try onRecord(record(bytes))
                }
                // Flat memory: do not keep a huge record's buffer for the small ones after it.
                if recordBuffer.capacity > 1 << 20 { recordBuffer = [] }
            } else {
                let bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(p)[recordChunkStart...i])
                try onRecord(record(bytes))
            }
        } catch {
            failure = (error as? JSONScanError) ?? JSONScanError(kind: .callbackFailed, offset: chunkBase + Int64(i))
            throw error
        }
        emitted = index &+ 1
    }

    // MARK: Scalars

    /// Notes the role of the scalar starting at `i`; captures its text from `captureFrom`.
    @inline(__always)
    mutating func beginScalar(role: ValueRole, at i: Int, captureFrom: Int?) {
        scalarRole = role
        guard role != .other else { return }
        scalarStart = chunkBase + Int64(i)
        if let captureFrom, role == .id || role == .version || role == .idAndVersion {
            beginCapture(at: captureFrom, target: .none, limit: role == .version ? Int.max : maxIDBytes)
        }
    }

    /// Ends a scalar of `kind` (its text ends before `i` in `p`) and applies its role.
    @inline(__always)
    mutating func endScalar(_ kind: ScalarKind, _ p: UnsafeBufferPointer<UInt8>, at i: Int) throws {
        if scalarRole != .other {
            try applyScalarRole(kind, p, at: i)
        }
    }

    /// The kind of a scalar value.
    enum ScalarKind {
        case string, number, literal
    }

    /// The slow path of `endScalar`: records errors, IDs and versions.
    mutating func applyScalarRole(_ kind: ScalarKind, _ p: UnsafeBufferPointer<UInt8>, at i: Int) throws {
        let role = scalarRole
        scalarRole = .other
        if role == .version && inRecord {
            // The version's text is its raw bytes unless an escape or a chunk boundary made the capture
            // copy them: the record's bytes then hold it, and `endRecord` passes its range instead of a string.
            if capturing && captureDirect {
                capturing = false
                versionStreamStart = chunkBase &+ Int64(captureRunStart)
                versionStreamEnd = chunkBase &+ Int64(i)
                currentVersion = nil
                return
            }
            versionStreamStart = -1
        }
        var text: String?
        if capturing {
            capturing = false
            text = capturedText(p, upTo: i)
        }
        switch role {
        case .other:
            break
        case .pathStep:
            throw fail(.pathNotFound(path: pathPointer), at: scalarStart)
        case .recordsArray:
            throw fail(.notAnArray(path: pathPointer), at: scalarStart)
        case .record:
            throw fail(.recordNotObject(index: emitted), at: scalarStart)
        case .id, .idAndVersion:
            currentID = try makeID(kind, text: text)
            idStreamStart = -1
            if role == .idAndVersion {
                currentVersion = text
                versionStreamStart = -1
            }
        case .version:
            currentVersion = kind == .literal ? nil : text
        }
    }

    /// The ID for a scalar of `kind` with captured `text`, or the reason it is invalid.
    mutating func makeID(_ kind: ScalarKind, text: String?) throws -> RecordID {
        if let reason = idProblem(kind, isInteger: numberIsInteger, length: captureLength) {
            throw fail(.invalidID(index: emitted, reason: reason), at: scalarStart)
        }
        return RecordID(key: text ?? "", kind: kind == .string ? .string : .integer)
    }

    /// Why a scalar of `kind` (a number: `isInteger` or not) whose text is `length` bytes cannot be an ID, or
    /// nil: the rules of both `makeID` and the fast path (RecordScanner+Members.swift).
    @inline(__always)
    func idProblem(_ kind: ScalarKind, isInteger: Bool, length: Int) -> String? {
        if kind == .literal || (kind == .number && !isInteger) { return "ID must be a string or an integer" }
        if length > maxIDBytes { return "ID longer than \(maxIDBytes) bytes" }
        return length == 0 ? "empty ID" : nil
    }

    // MARK: Keys

    /// Starts a member name whose opening quote is at `i`, capturing it if it may be
    /// the records path key or a record's ID or version field.
    @inline(__always)
    mutating func beginKey(at i: Int) {
        stringIsKey = true
        state = .string
        if inRecord {
            if depth == recordDepth {
                beginCapture(at: i &+ 1, target: .recordKey, limit: maxFieldBytes)
            }
        } else if depth == matchedDepth && depth <= pathTokens.count {
            beginCapture(at: i &+ 1, target: .pathKey, limit: pathTokens[depth &- 1].count)
        }
    }

    /// Ends a captured member name whose closing quote is at `i`; sets `nextRole`.
    mutating func endKey(_ p: UnsafeBufferPointer<UInt8>, at i: Int) throws {
        capturing = false
        switch captureTarget {
        case .none:
            break
        case .pathKey:
            let step = depth &- 1
            guard capturedBytesEqual(p, upTo: i, pathTokens[step]) else { return }
            if pathKeySeen[step] {
                let name = RecordID(key: String(decoding: pathTokens[step], as: UTF8.self), kind: .string)
                throw fail(.syntax("duplicate key \(name.jsonLiteral)"), atIndex: i)
            }
            pathKeySeen[step] = true
            nextRole = depth == pathTokens.count ? .recordsArray : .pathStep
        case .recordKey:
            let isID = capturedBytesEqual(p, upTo: i, idFieldBytes)
            let isVersion = versionFieldBytes.map { capturedBytesEqual(p, upTo: i, $0) } ?? false
            if isID {
                if idKeySeen {
                    throw fail(.invalidID(index: emitted, reason: "ID field appears twice"), atIndex: i)
                }
                idKeySeen = true
                nextRole = isVersion ? .idAndVersion : .id
            } else if isVersion {
                nextRole = .version
            }
        }
    }

    // MARK: Capture

    /// Starts capturing the text that begins at `i` in the current chunk.
    @inline(__always)
    mutating func beginCapture(at i: Int, target: CaptureTarget, limit: Int) {
        capturing = true
        captureTarget = target
        captureDirect = true
        captureRunStart = i
        captureLength = 0
        captureLimit = limit
    }

    /// Appends the raw run `captureRunStart..<end` to the capture buffer.
    mutating func flushCaptureRun(_ p: UnsafeBufferPointer<UInt8>, upTo end: Int) {
        if captureDirect {
            capture.removeAll(keepingCapacity: true)
            captureDirect = false
        }
        guard captureRunStart >= 0, end > captureRunStart else { return }
        let count = end &- captureRunStart
        captureLength &+= count
        let room = captureLimit &- capture.count
        if room > 0 {
            capture.append(contentsOf: UnsafeBufferPointer(rebasing: p[captureRunStart..<(captureRunStart &+ min(count, room))]))
        }
    }

    /// Appends one decoded byte (from an escape) to the capture.
    mutating func appendCapture(_ byte: UInt8) {
        if captureDirect {
            capture.removeAll(keepingCapacity: true)
            captureDirect = false
        }
        captureLength &+= 1
        if capture.count < captureLimit { capture.append(byte) }
    }

    /// The captured text ending before `end`, or nil if it is longer than the limit;
    /// `captureLength` is then its full length.
    mutating func capturedText(_ p: UnsafeBufferPointer<UInt8>, upTo end: Int) -> String? {
        if captureDirect {
            captureLength = end &- captureRunStart
            guard captureLength <= captureLimit else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: p[captureRunStart..<end]), as: UTF8.self)
        }
        flushCaptureRun(p, upTo: end)
        guard captureLength <= captureLimit else { return nil }
        return String(decoding: capture, as: UTF8.self)
    }

    /// Whether the captured text ending before `end` is exactly `target`.
    @inline(__always)
    mutating func capturedBytesEqual(_ p: UnsafeBufferPointer<UInt8>, upTo end: Int, _ target: [UInt8]) -> Bool {
        if captureDirect {
            return Self.bytes(UnsafeBufferPointer(rebasing: p[captureRunStart..<end]), equal: target)
        }
        flushCaptureRun(p, upTo: end)
        captureRunStart = end
        return captureLength == target.count && capture == target
    }

    // MARK: Chunks

    /// Saves what the next chunk needs from this one: the open record's bytes and the
    /// pending capture run.
    mutating func endChunk(_ p: UnsafeBufferPointer<UInt8>) {
        if inRecord {
            recordBuffer.append(contentsOf: UnsafeBufferPointer(rebasing: p[recordChunkStart...]))
            recordSpansChunks = true
            recordChunkStart = 0
        }
        if capturing && captureRunStart >= 0 {
            flushCaptureRun(p, upTo: p.count)
            captureRunStart = 0
        }
    }
}

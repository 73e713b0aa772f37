import Foundation
import Synchronization

/// Runs a program to completion and returns its exit status and output.
func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                stdin: String? = nil, directory: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe(), err = Pipe(), input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    // Drain stderr on another thread so a chatty child cannot fill one pipe and stall.
    let errData = ErrorOutput()
    let errReader = Thread {
        errData.data.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() }
        errData.done.withLock { $0 = true }
    }
    errReader.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !errData.done.withLock({ $0 }) { usleep(1000) }
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self),
            String(decoding: errData.data.withLock { $0 }, as: UTF8.self))
}

private final class ErrorOutput: Sendable {
    let data = Mutex(Data())
    let done = Mutex(false)
}

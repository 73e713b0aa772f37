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

/// The one way a Swift test runs a program as another user (runuser(1)): the program must be the system's
/// (below /usr or /bin), because the checkout and the test's folders may lie below a directory that user
/// cannot enter (a clone under /root); the working directory must be a folder the test made for it.
/// Tests/integration/test_hermetic.py fails the suite when a test calls runuser, setpriv or su elsewhere;
/// `.ci/contributor-machine` runs every Swift suite again from below a 0700 directory.
func runAsAnotherUser(_ user: String, _ executable: String, _ arguments: [String],
                      directory: String) throws -> (status: Int32, stdout: String, stderr: String) {
    guard executable.hasPrefix("/usr/") || executable.hasPrefix("/bin/") else {
        throw AnotherUserError.notASystemProgram(executable)
    }
    return try runProcess("/usr/sbin/runuser", ["-u", user, "--", executable] + arguments, directory: directory)
}

/// Why `runAsAnotherUser` refused to run a program.
enum AnotherUserError: Error, CustomStringConvertible {
    case notASystemProgram(String)
    var description: String {
        switch self {
        case .notASystemProgram(let path):
            "runAsAnotherUser: \(path) is not a system program; another user may not reach the checkout "
                + "(it may lie below a 0700 directory): copy it into a folder made for the test first"
        }
    }
}

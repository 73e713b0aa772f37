import Foundation
import SyncCore
import Testing

/// The exit status of a start refused for the configuration (docs/syncd.8.md, EXIT STATUS): the units' RestartPreventExitStatus= names it.
@Suite("Start exit status")
struct StartExitStatusTests {
    @Test("the daemon exits with EX_CONFIG (78, sysexits(3)), which systemd does not restart")
    func daemon() {
        #expect(StartExitStatus.forConfigurationError(.daemon) == 78)
        #expect(StartExitStatus.configurationError == 78)
    }

    @Test("--check-config and --once report the configuration's problems with status 1, as documented")
    func checkConfigAndOnce() {
        #expect(StartExitStatus.forConfigurationError(.checkConfig) == 1)
        #expect(StartExitStatus.forConfigurationError(.once) == 1)
    }

    @Test("the status is the one both packaged units list in RestartPreventExitStatus=")
    func units() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for unit in ["syncd.service", "syncd.user.service"] {
            let text = try String(contentsOf: root.appendingPathComponent("packaging/systemd/\(unit)"), encoding: .utf8)
            let lines = text.split(separator: "\n").filter { $0.hasPrefix("RestartPreventExitStatus=") }
            #expect(lines == ["RestartPreventExitStatus=\(StartExitStatus.configurationError)"], "\(unit)")
        }
    }
}

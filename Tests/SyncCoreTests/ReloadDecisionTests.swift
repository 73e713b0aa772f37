import Testing
@testable import SyncCore

/// Which `[Daemon]` changes only a restart applies: such a reload is rejected whole (syncd.conf(5), DESCRIPTION).
@Suite("ReloadDecision")
struct ReloadDecisionTests {
    static let running = RestartSettings(account: "alice", stateDirectory: "/var/lib/syncd", cacheDirectory: "/var/cache/syncd",
                                         runtimeDirectory: "/run/syncd", controlGroup: "syncd", readGroup: "syncd-read")

    // Computed: key paths are not Sendable.
    static var keys: [(String, WritableKeyPath<RestartSettings, String>, String)] {
        [("Account=", \.account, "bob"), ("StateDirectory=", \.stateDirectory, "/srv/state"),
         ("CacheDirectory=", \.cacheDirectory, "/srv/cache"), ("RuntimeDirectory=", \.runtimeDirectory, "/run/other"),
         ("ControlGroup=", \.controlGroup, "staff"), ("ReadGroup=", \.readGroup, "readers")]
    }

    @Test func theSameSettingsNeedNoRestart() {
        #expect(ReloadDecision.changesNeedingRestart(from: Self.running, to: Self.running).isEmpty)
        #expect(ReloadDecision.rejection([], userMode: false) == nil)
    }

    @Test(arguments: 0..<6)
    func eachKeyAloneNeedsARestart(_ index: Int) {
        let (key, path, value) = Self.keys[index]
        var new = Self.running
        new[keyPath: path] = value
        let changes = ReloadDecision.changesNeedingRestart(from: Self.running, to: new)
        #expect(changes == [ReloadDecision.Change(key: key, old: Self.running[keyPath: path], new: value)])
        #expect(ReloadDecision.rejection(changes, userMode: false)
                == "\(key) changed from \(Self.running[keyPath: path]) to \(value), which only a restart applies; nothing of the "
                + "new configuration was applied: restart syncd to apply it (systemctl restart syncd)")
    }

    @Test func settingOrClearingReadGroupSaysNotSet() {
        var new = Self.running
        new.readGroup = ""
        #expect(ReloadDecision.changesNeedingRestart(from: Self.running, to: new)
                == [ReloadDecision.Change(key: "ReadGroup=", old: "syncd-read", new: "(not set)")])
        #expect(ReloadDecision.changesNeedingRestart(from: new, to: Self.running)
                == [ReloadDecision.Change(key: "ReadGroup=", old: "(not set)", new: "syncd-read")])
    }

    @Test func severalChangesAreListedInTheFilesOrder() {
        var new = Self.running
        new.controlGroup = "staff"
        new.account = "bob"
        new.cacheDirectory = "/srv/cache"
        let changes = ReloadDecision.changesNeedingRestart(from: Self.running, to: new)
        #expect(changes.map(\.key) == ["Account=", "CacheDirectory=", "ControlGroup="])
        #expect(ReloadDecision.rejection(changes, userMode: true)
                == "Account= changed from alice to bob, CacheDirectory= from /var/cache/syncd to /srv/cache and ControlGroup= "
                + "from syncd to staff, which only a restart applies; nothing of the new configuration was applied: restart "
                + "syncd to apply it (systemctl --user restart syncd)")
        new.account = "alice"
        #expect(ReloadDecision.rejection(ReloadDecision.changesNeedingRestart(from: Self.running, to: new), userMode: false)?
            .hasPrefix("CacheDirectory= changed from /var/cache/syncd to /srv/cache and ControlGroup= from syncd to staff, ") == true)
    }

    /// The kernel reads these as /x/state: the same folder, so a reload that only spells it so applies.
    @Test(arguments: ["/x/state/", "/x/./state", "/x//state", "//x/state//", "/x/state/.", "/./x/.//state/./"])
    func aDirectorySpelledAnotherWayIsTheSameFolder(_ spelled: String) {
        var old = Self.running
        (old.stateDirectory, old.cacheDirectory, old.runtimeDirectory) = ("/x/state", "/x/cache", "/x/run")
        var new = old
        new.stateDirectory = spelled
        new.cacheDirectory = spelled.replacingOccurrences(of: "state", with: "cache")
        new.runtimeDirectory = spelled.replacingOccurrences(of: "state", with: "run")
        #expect(ReloadDecision.changesNeedingRestart(from: old, to: new).isEmpty)
        #expect(ReloadDecision.changesNeedingRestart(from: new, to: old).isEmpty)
        // Another folder, spelled the same loose way, is still a change, shown as written.
        new.stateDirectory = spelled.replacingOccurrences(of: "state", with: "state2")
        #expect(ReloadDecision.changesNeedingRestart(from: old, to: new)
                == [ReloadDecision.Change(key: "StateDirectory=", old: "/x/state", new: new.stateDirectory)])
    }

    /// ".." and links are not resolved: "/x/link/.." is the folder above the link's target, which only a lookup says.
    @Test func dotDotIsNotResolvedLexically() {
        var old = Self.running
        old.stateDirectory = "/x/state"
        var new = old
        new.stateDirectory = "/x/link/../state"
        #expect(ReloadDecision.changesNeedingRestart(from: old, to: new).map(\.key) == ["StateDirectory="])
    }

    @Test func folderPathNormalisation() {
        #expect(FolderPath.normalized("/") == "/" && FolderPath.normalized("//") == "/" && FolderPath.normalized("/.") == "/")
        #expect(FolderPath.normalized("/var/tmp/") == "/var/tmp" && FolderPath.normalized("/a/../b") == "/a/../b")
        #expect(FolderPath.normalized("a//b/") == "a/b" && FolderPath.normalized("./") == ".")
    }

    /// Only directories are paths: an account or group spelled with a slash is another value.
    @Test func otherKeysAreComparedAsWritten() {
        var new = Self.running
        new.account = "alice/"
        #expect(ReloadDecision.changesNeedingRestart(from: Self.running, to: new).map(\.key) == ["Account="])
    }

    @Test func controlCharactersInValuesAreEscaped() {
        var new = Self.running
        new.stateDirectory = "/srv/\u{1b}]2;x\u{7}"
        let text = ReloadDecision.rejection(ReloadDecision.changesNeedingRestart(from: Self.running, to: new), userMode: false)
        #expect(text?.hasPrefix("StateDirectory= changed from /var/lib/syncd to /srv/\\x1b]2;x\\x07, ") == true)
    }
}

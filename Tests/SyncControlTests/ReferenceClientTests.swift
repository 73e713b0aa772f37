import Foundation
import Glibc
import Testing
@testable import SyncControl

/// The reference Python implementation (`pip install varlink`) against our server: a client
/// nobody here wrote. It fetches GetInterfaceDescription first and parses our IDL.
@Suite("Reference Varlink client", .serialized, .system)
struct ReferenceClientTests {
    static let script = #"""
        import json, sys, varlink
        out = {}
        with varlink.Client(address='unix:' + sys.argv[1]) as client:
            with client.open('org.varlink.service') as service:
                out['info'] = service.GetInfo()
                out['description'] = service.GetInterfaceDescription('io.syncd.Manager')['description']
            with client.open('io.syncd.Manager') as manager:
                out['status'] = manager.GetStatus()
                out['page'] = manager.List('posts', 0, 3)
                out['record'] = manager.Get('posts', '12345678900007')
                out['progress'] = [reply for reply in manager.Refresh('posts', True, _more=True)]
                try:
                    manager.Get('posts', 'missing')
                    out['error'] = None
                except varlink.VarlinkError as error:
                    out['error'] = [error.error(), error.parameters()]
        print(json.dumps(out))
        """#

    @Test func referenceClientTalksToTheServer() async throws {
        let fixture = try ControlServerFixture()
        let result = try await onThread { try runProcess("/usr/bin/env", ["python3", "-c", ReferenceClientTests.script, fixture.path]) }
        await fixture.stop()
        #expect(result.status == 0, "python3 failed (is the varlink package installed? pip install varlink): \(result.stderr)")
        let output = try JSONValue(parsing: result.stdout)
        #expect(output["info"]?["interfaces"] == ["org.varlink.service", "io.syncd.Manager"])
        #expect(output["description"]?.stringValue == ManagerInterface.description)
        // The Python client leaves out null members, so compare the decoded status.
        #expect(try ManagerStatus(json: #require(output["status"]?.objectValue)) == FakeControlHandler.status)
        #expect(output["page"]?["records"]?.arrayValue?.count == 3)
        #expect(output["page"]?["next"] == 3)
        #expect(output["record"]?["record"]?["id"] == .integer(12_345_678_900_007))
        #expect(output["progress"]?.arrayValue?.count == 4)
        #expect(output["progress"]?.arrayValue?.last?["result"] == "updated")
        #expect(output["error"] == ["io.syncd.Manager.NoSuchRecord", ["source": "posts", "id": "missing"]])
    }
}

/// Peer credentials decide: a caller running as `nobody` may only call GetStatus and
/// org.varlink.service. The caller is a real process started as nobody (`runAsAnotherUser`).
@Suite("Control access", .serialized, .system)
struct ControlAccessTests {
    static let unprivilegedScript = #"""
        import json, socket, sys
        def call(method, parameters=None):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            message = {'method': method}
            if parameters is not None:
                message['parameters'] = parameters
            s.sendall(json.dumps(message).encode() + b'\0')
            data = b''
            while not data.endswith(b'\0'):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            s.close()
            return json.loads(data[:-1])
        print(json.dumps({
            'status': call('io.syncd.Manager.GetStatus'),
            'info': call('org.varlink.service.GetInfo'),
            'list': call('io.syncd.Manager.List', {'source': 'posts'}),
            'bad': call('io.syncd.Manager.List', {'source': 1}),
            'reload': call('io.syncd.Manager.Reload'),
        }))
        """#

    /// Runs the script as `nobody` with Debian's python3 on the fixture's socket. Everything it needs is
    /// reachable by nobody wherever the checkout lies: the interpreter is the system's, the script is an
    /// argument, the socket's folder is made by the fixture in /tmp (0755) and is also its working
    /// directory (the test runner's may lie below a 0700 home).
    static func runAsNobody(_ fixture: ControlServerFixture) throws -> (status: Int32, stdout: String, stderr: String) {
        try runAsAnotherUser("nobody", "/usr/bin/python3", ["-c", unprivilegedScript, fixture.path],
                             directory: fixture.directory)
    }

    @Test  // needs root to run a client as nobody: make test runs as root; make check leaves this suite out
    func unprivilegedPeerMayOnlyReadStatus() async throws {
        let fixture = try ControlServerFixture(policy: AccessPolicy(controlGroup: "syncd-test-no-such-group"))
        let result = try await onThread {
            try ControlAccessTests.runAsNobody(fixture)
        }
        await fixture.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let output = try JSONValue(parsing: result.stdout)
        #expect(output["status"]?["error"] == nil)
        #expect(output["status"]?["parameters"] == .object(FakeControlHandler.status.json))
        #expect(output["info"]?["error"] == nil)
        #expect(output["list"]?["error"] == "io.syncd.Manager.PermissionDenied")
        // The refusal says who may (the groups by name), so the administrator knows whom to add where.
        #expect(output["list"]?["parameters"]?["needs"]
                == "root, the user syncd runs as, or membership in group \"syncd-test-no-such-group\" (ControlGroup=)")
        // Permission is checked before parameters: nothing about them leaks.
        #expect(output["bad"]?["error"] == "io.syncd.Manager.PermissionDenied")
        #expect(output["reload"]?["error"] == "io.syncd.Manager.PermissionDenied")
        #expect(output["reload"]?["parameters"]?["needs"] == "root or the user syncd runs as")
    }

    /// nobody (whose primary group is nogroup on Debian) as a member of the control group, then of the read group:
    /// either may list; neither may reload, which needs root or the daemon's user.
    @Test(arguments: [AccessPolicy(controlGroup: "nogroup"),
                      AccessPolicy(controlGroup: "syncd-test-no-such-group", readGroup: "nogroup")])
    // needs root to run a client as nobody: make test runs as root; make check leaves this suite out
    func aGroupMemberMayListButNotReload(policy: AccessPolicy) async throws {
        let fixture = try ControlServerFixture(policy: policy)
        let result = try await onThread {
            try ControlAccessTests.runAsNobody(fixture)
        }
        await fixture.stop()
        let output = try JSONValue(parsing: result.stdout)
        #expect(output["list"]?["error"] == nil)
        #expect(output["list"]?["parameters"]?["total"] == .int(FakeControlHandler.recordCount))
        #expect(output["reload"]?["error"] == "io.syncd.Manager.PermissionDenied")
        #expect(output["reload"]?["parameters"]?["needs"] == "root or the user syncd runs as")
    }

    @Test func rootAndTheDaemonUserArePrivileged() async throws {
        let policy = AccessPolicy(controlGroup: "syncd-test-no-such-group", daemonUID: 4242)
        #expect(policy.isPrivileged(PeerCredentials(uid: 0, gid: 0, pid: 1)))
        #expect(policy.isPrivileged(PeerCredentials(uid: 4242, gid: 4242, pid: 1)))
        #expect(!policy.isPrivileged(PeerCredentials(uid: 65534, gid: 65534, pid: 1)))
        #expect(!AccessPolicy(controlGroup: nil, daemonUID: 4242).isPrivileged(PeerCredentials(uid: 65534, gid: 65534, pid: 1)))
        #expect(AccessPolicy(controlGroup: "nogroup", daemonUID: 4242).isPrivileged(PeerCredentials(uid: 65534, gid: 1, pid: 1)))
        #expect(!AccessPolicy(controlGroup: "root", daemonUID: 4242).isPrivileged(PeerCredentials(uid: 65534, gid: 65534, pid: 1)))
        // Effective group of the peer counts even if the passwd entry says otherwise.
        #expect(AccessPolicy(controlGroup: "root", daemonUID: 4242).isPrivileged(PeerCredentials(uid: 65534, gid: 0, pid: 1)))
        // A uid without a passwd entry is only privileged through its effective group.
        #expect(!AccessPolicy(controlGroup: "nogroup", daemonUID: 4242).isPrivileged(PeerCredentials(uid: 777_777, gid: 1, pid: 1)))
    }

    @Test func readAndControlGroupsGiveTheirLevels() {
        // nobody (uid 65534) has nogroup as its passwd primary group.
        let nobody = PeerCredentials(uid: 65534, gid: 65534, pid: 1)
        #expect(AccessPolicy(controlGroup: "nogroup", readGroup: "root", daemonUID: 4242).level(of: nobody) == .control)
        #expect(AccessPolicy(controlGroup: "root", readGroup: "nogroup", daemonUID: 4242).level(of: nobody) == .reader)
        #expect(AccessPolicy(controlGroup: "root", readGroup: nil, daemonUID: 4242).level(of: nobody) == .anyone)
        // In both groups: the larger right.
        #expect(AccessPolicy(controlGroup: "nogroup", readGroup: "nogroup", daemonUID: 4242).level(of: nobody) == .control)
        #expect(AccessPolicy(controlGroup: "root", readGroup: "nogroup", daemonUID: 4242).level(of: PeerCredentials(uid: 0, gid: 0, pid: 1)) == .owner)
        // Readers are not privileged for the reserved connections, nor shown a server's own words.
        #expect(!AccessPolicy(controlGroup: "root", readGroup: "nogroup", daemonUID: 4242).isPrivileged(nobody))
        #expect(!AccessLevel.reader.seesServerText && AccessLevel.control.seesServerText)
    }

    @Test(arguments: [
        ("GetStatus", AccessLevel.anyone), ("List", .reader), ("Get", .reader), ("Watch", .reader), ("Changes", .reader),
        ("Refresh", .control), ("Put", .control), ("Delete", .control), ("ListOutbox", .control), ("RetryOutbox", .control),
        ("DropOutbox", .control), ("RestoreDiscarded", .control), ("ListConflicts", .control), ("Resolve", .control), ("Logout", .owner), ("Reload", .owner),
    ])
    func methodRules(method: String, needs: AccessLevel) {
        #expect(AccessPolicy.requiredLevel(for: "io.syncd.Manager." + method) == needs)
        for level in [AccessLevel.anyone, .reader, .control, .owner] {
            #expect(AccessPolicy.allows(method: "io.syncd.Manager." + method, level: level) == (level >= needs))
        }
    }

    @Test func everyMethodOfTheInterfaceHasARule() {
        #expect(AccessPolicy.allows(method: "org.varlink.service.GetInfo", level: .anyone))
        let ruled: Set<String> = ["GetStatus", "List", "Get", "Watch", "Changes", "Refresh", "Put", "Delete", "ListOutbox",
                                  "RetryOutbox", "DropOutbox", "RestoreDiscarded", "ListConflicts", "Resolve", "Logout", "Reload"]
        #expect(Set(ManagerInterface.methods).isSubset(of: ruled))
    }

    @Test func theRefusalNamesTheGroupsThatWouldAllowIt() {
        let policy = AccessPolicy(controlGroup: "syncd", readGroup: "syncd-read", daemonUID: 4242)
        #expect(policy.whoMay(.reader) == "root, the user syncd runs as, or membership in group \"syncd-read\" (ReadGroup=) "
                + "or group \"syncd\" (ControlGroup=)")
        #expect(policy.whoMay(.control) == "root, the user syncd runs as, or membership in group \"syncd\" (ControlGroup=)")
        #expect(policy.whoMay(.owner) == "root or the user syncd runs as")
    }
}

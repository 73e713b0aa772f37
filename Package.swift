// swift-tools-version:6.0
// The build's target list reads like the architecture (docs/architecture.md):
// C libraries behind system library targets, one C shim, a pure core, thin
// platform modules, two thin executables.
import PackageDescription

/// How both executables are linked, for a small resident set and a cheap start (docs/benchmarks.md, "Daemon
/// memory" and "Scale in sources"; syncctl starts for every command): lld with packed relative relocations
/// (DT_RELR, glibc >= 2.36: 5 KiB of relocations to read at start instead of 665 KiB, and the pages they
/// patch not written) and the C++ runtime linked statically (packaging/link/libstdc++.so says why).
let smallStart: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]),
    // Release only: there the Swift runtime is static too (make release); a debug build loads
    // libswiftCore.so, which brings libstdc++.so.6 anyway.
    .unsafeFlags(["-L", Context.packageDirectory + "/packaging/link"], .when(configuration: .release)),
]

let package = Package(
    name: "syncd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "syncd", targets: ["syncd"]),
        .executable(name: "syncctl", targets: ["syncctl"]),
    ],
    targets: [
        // System libraries (Debian: libsqlite3-dev, libcurl4-openssl-dev, zlib1g-dev for zlib.h in CShim; systemd is spoken to over its sockets, not through libsystemd).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // libcurl: headers only, no link: it is dlopened while in use (Sources/CShim/cshim_curl.c).
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // Typed one-line wrappers for what Swift cannot import (variadics, macros).
        .target(name: "CShim", dependencies: ["CSQLite", "CCurl"]),

        // Pure logic: no C imports, no I/O.
        .target(name: "SyncCore"),
        // Platform modules: system calls, errors and logging first, then storage, transport, control.
        .target(name: "SyncSystem", dependencies: ["SyncCore"]),
        .target(name: "SyncStore", dependencies: ["SyncCore", "SyncSystem", "CSQLite", "CShim"]),
        .target(name: "SyncRemote", dependencies: ["SyncCore", "SyncSystem", "CCurl", "CShim"]),
        // Varlink: the protocol, the client syncctl uses and the server the daemon runs.
        .target(name: "SyncControl", dependencies: ["SyncCore", "SyncSystem"]),
        // The refresh engine: pulls listings, pushes the outbox, publishes cache files; the network only
        // through `HTTPTransport`, so its tests script the server.
        .target(name: "SyncEngine", dependencies: ["SyncCore", "SyncSystem", "SyncStore", "SyncRemote", "CShim"]),
        .target(name: "SyncDaemon", dependencies: ["SyncCore", "SyncSystem", "SyncStore", "SyncRemote", "SyncEngine", "SyncControl", "CShim"]),
        // Executables, both linked with `smallStart`.
        .executableTarget(name: "syncd", dependencies: ["SyncDaemon"], linkerSettings: smallStart),
        .executableTarget(name: "syncctl", dependencies: ["SyncControl", "SyncCore"], linkerSettings: smallStart),

        .testTarget(name: "SyncCoreTests", dependencies: ["SyncCore"], exclude: ["Network/Fixtures"]),
        .testTarget(name: "SyncStoreTests", dependencies: ["SyncStore", "SyncCore"], exclude: ["Fixtures"]),
        .testTarget(name: "SyncRemoteTests", dependencies: ["SyncRemote", "SyncCore"]),
        .testTarget(name: "SyncSystemTests", dependencies: ["SyncSystem"]),
        .testTarget(name: "SyncEngineTests", dependencies: ["SyncEngine", "SyncStore", "SyncRemote", "SyncCore", "SyncSystem"]),
        .testTarget(name: "SyncDaemonTests", dependencies: ["SyncDaemon", "SyncEngine", "SyncStore", "SyncCore", "SyncSystem"]),
        .testTarget(name: "SyncControlTests", dependencies: ["SyncControl", "SyncCore", "SyncSystem"]),
    ],
    swiftLanguageModes: [.v6]
)

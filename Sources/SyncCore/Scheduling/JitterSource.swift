// Randomness for the scheduler is injected, so tests and the fleet simulation
// are deterministic and the daemon can use the system generator.

/// A source of random fractions for jittered delays.
public protocol JitterSource {
    /// The next fraction, uniform in [0, 1).
    mutating func fraction() -> Double
}

/// Deterministic jitter from a SplitMix64 generator (Steele, Lea, Flood:
/// "Fast splittable pseudorandom number generators", OOPSLA 2014), for tests
/// and the fleet simulation: the same seed gives the same sequence.
public struct SplitMix64Jitter: JitterSource, RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        self.state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The next fraction in [0, 1), from the top 53 bits (a `Double`'s precision).
    public mutating func fraction() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}

/// Jitter from the operating system's generator, for the daemon.
public struct SystemJitter: JitterSource, Sendable {
    private var generator = SystemRandomNumberGenerator()

    /// Creates a jitter source backed by `SystemRandomNumberGenerator`.
    public init() {}

    /// A fraction uniform in [0, 1).
    public mutating func fraction() -> Double {
        Double.random(in: 0..<1, using: &generator)
    }
}

/// The same fraction every time: jitter switched off, for simulations that
/// show what jitter buys (1.0 gives every delay its maximum, 0.0 its minimum).
public struct ConstantJitter: JitterSource, Sendable {
    /// The fraction returned on every call, clamped by users of it to [0, 1].
    public var value: Double

    /// Creates a source that always returns `value`.
    public init(_ value: Double) {
        self.value = value
    }

    /// Returns `value`.
    public mutating func fraction() -> Double {
        value
    }
}

/// The version of this build: `syncd --version`, `syncctl --version`, `GetInfo`, `GetStatus` and the
/// `User-Agent` all show this one constant.
public let syncdVersion = "1.0.0"

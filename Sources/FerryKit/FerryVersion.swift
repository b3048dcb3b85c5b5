/// Ferry's version.
public enum FerryVersion {
    /// The version, as `ferry --version` prints it and archive manifests record it.
    public static let current = "0.1.0"
}

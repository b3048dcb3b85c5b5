/// Telling whether two paths name one file.
extension FileSystem {
    /// Which file a path names: two paths name the same file exactly when their keys are equal.
    public enum FileKey: Hashable, Sendable {
        /// An existing file or folder: its device and inode (`stat`, following links), which hard
        /// links and symbolic links to it share.
        case existing(device: UInt64, inode: UInt64)
        /// A path where nothing is yet: its absolute path, with the folders on the way that exist
        /// resolved (links, `.`, `..`).
        case planned(String)
    }

    /// The key of the file `path` names (see ``FileKey``).
    public static func key(of path: String) -> FileKey {
        if let identity = Syscall.identity(path: path) {
            return .existing(device: identity.device, inode: identity.inode)
        }
        return .planned(resolvedPath(path))
    }

    /// `path` made absolute, its longest existing prefix resolved by `realpath`.
    private static func resolvedPath(_ path: String) -> String {
        if let resolved = Syscall.realPath(path) { return resolved }
        var parent = Substring(path)
        while parent.count > 1 && parent.last == "/" { parent = parent.dropLast() }
        guard let slash = parent.lastIndex(of: "/") else {
            return (Syscall.realPath(".") ?? ".") + "/" + parent
        }
        let name = parent[parent.index(after: slash)...]
        let folder = slash == parent.startIndex ? "/" : String(parent[..<slash])
        let resolved = resolvedPath(folder)
        return (resolved.hasSuffix("/") ? resolved : resolved + "/") + name
    }
}

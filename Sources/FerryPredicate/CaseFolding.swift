/// What the store's SQL prefilters need to know of the compiled filter's case folding, from its
/// one implementation (``StringMatching``), so that a prefilter never drops a record the filter
/// would keep.
package enum CaseFolding {
    /// Whether a scalar's full case folding (as `[c]` folds) produces ASCII letters: ß, İ, ı, ŉ,
    /// ſ, ǰ, ẖ–ẚ, the Kelvin sign, ﬀ–ﬆ.
    @inline(__always)
    package static func foldsIntoASCII(_ scalar: UInt32) -> Bool {
        StringMatching.foldsIntoASCII(scalar)
    }
}

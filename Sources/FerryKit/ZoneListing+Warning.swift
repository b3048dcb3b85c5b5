import FerryInternals
import FerryPipeline

extension ZoneListing {
    /// What a conversion says of a response that lists zones and holds no records: where it is,
    /// its shape and how many zones, and that `ferry inspect` describes them.
    public var warning: String {
        // A `zones/lookup` or `zones/modify` answer has the shape of a `zones/list` one.
        let shape = shape == "zones/list" ? "zones/list, zones/lookup or zones/modify" : shape
        return "\(source):\(line): a \(shape) response (\(Plural.count(response.entries.count, "zone"))) "
            + "holds no records; `ferry inspect` describes its zones"
    }
}

import FerryChangeLog
import FerryInternals
import FerryPipeline
import FerryRecords

extension StateReplay {
    /// What a replay did: counts, anomalies, tokens and time, with the summary `ferry replay`
    /// prints (``line``, ``json``) and the tokens it prints with `--tokens-only`.
    public struct Summary: Sendable {
        /// Events read (after ``Configuration/since``, and to ``Configuration/until``).
        public var eventCount: Int
        /// Events applied.
        public var appliedCount: Int
        /// Records in the state.
        public var recordCount: Int
        /// Zones in the state (deleted ones not counted).
        public var zoneCount: Int
        /// The anomalies met.
        public var anomalies: AnomalyReport
        /// Bytes of history read (decompressed).
        public var bytesRead: Int
        /// The tokens of every zone at the end.
        public var tokens: ReplayTokens
        /// Wall-clock seconds.
        public var seconds: Double
        /// Seconds per phase (`history`, then `checkAndWrite`).
        public var phaseSeconds: [(name: String, seconds: Double)]

        init(_ replayer: Replayer, seconds: Double, phases: [(String, Double)]) {
            eventCount = replayer.eventCount
            appliedCount = replayer.appliedCount
            recordCount = replayer.state.recordCount
            zoneCount = replayer.state.zoneIDs.count
            anomalies = replayer.anomalies
            bytesRead = replayer.bytesRead
            tokens = replayer.tokens
            self.seconds = seconds
            phaseSeconds = phases.map { (name: $0.0, seconds: $0.1) }
        }

        /// Events applied per second.
        public var eventsPerSecond: Double { seconds > 0 ? Double(eventCount) / seconds : 0 }

        /// `N events, M applied, R records in Z zones, S s, E events/s`.
        public var line: String {
            "\(Plural.count(eventCount, "event")), \(appliedCount) applied, \(Plural.count(recordCount, "record")) in "
                + "\(Plural.count(zoneCount, "zone")), \(format(seconds, 2)) s, \(format(eventsPerSecond, 0)) events/s"
        }

        /// The same as one JSON object, with the anomalies per kind, the phases and the last token.
        public var json: String {
            var counts = JSONObject()
            for kind in ReplayAnomaly.Kind.allCases where anomalies.count(of: kind) > 0 {
                counts.append(key: kind.rawValue, value: anomalies.count(of: kind).json)
            }
            var object: JSONObject = [
                "events": eventCount.json,
                "applied": appliedCount.json,
                "records": recordCount.json,
                "zones": zoneCount.json,
                "anomalies": anomalies.total.json,
                "anomalyCounts": .object(counts),
                "bytesIn": bytesRead.json,
                "seconds": .number(JSONNumber(text: format(seconds, 3))),
                "phaseSeconds": .object(JSONObject(phaseSeconds.map { .init(key: $0.name, value: .number(JSONNumber(text: format($0.seconds, 3)))) })),
                "eventsPerSecond": .number(JSONNumber(text: format(eventsPerSecond, 0))),
            ]
            if let last = tokens.lastCheckpoint { object.append(key: "lastToken", value: .string(last.syncToken)) }
            return JSONValue.object(object).compactText
        }

        /// The tokens as `--tokens-only --json` prints them (no record count: records were not read).
        public var tokensJSON: String {
            var tokens = tokens
            tokens.recordCount = nil
            return tokens.json()
        }

        /// The tokens as `--tokens-only` prints them: one line per zone, name, owner, token and
        /// flags, tab-separated; `-` for what is absent; then the database's token.
        public var tokensText: String {
            var text = ""
            for zone in tokens.zones {
                var line = [zone.zoneID.zoneName, zone.zoneID.ownerRecordName ?? "-", zone.syncToken ?? "-"]
                if zone.isDeleted { line.append("deleted") }
                if zone.moreComing { line.append("moreComing") }
                text += line.joined(separator: "\t") + "\n"
            }
            if let database = tokens.database {
                text += ["(database)", "-", database.syncToken].joined(separator: "\t") + (database.moreComing ? "\tmoreComing\n" : "\n")
            }
            return text
        }
    }
}

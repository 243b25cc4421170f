import TrafficGeoFeeds

/// What joining one source into another does, decided once for every store: a source an older
/// version filed a feed under (`FormerSourceNames`) is renamed to the feed's own name, or —
/// when that name already holds incidents — merged into it. The stores fetch the facts and
/// apply the plan with their own statements (`SourceNames` on SQLite, `adopt` on PostGIS).
///
/// The rule: of two copies of one incident (same feed id), the one changed last stays (on a tie,
/// the one already under the new name). Junction observations are filed per message under an
/// observer made of the source's name and the feed id (`JunctionLearningRun.observer`): the
/// staying copy's observations are filed under the new name, the other copy's are dropped, so
/// a junction is not counted twice — once under the old name and again when the feed is read
/// under the new one.
package struct SourceMergePlan: Sendable, Equatable {
    /// Incidents to delete: the copies that lost to their twin.
    package var losers: [Int64] = []
    /// Observers whose observations go (the losers'), removed before the renames.
    package var droppedObservers: [String] = []
    /// Observers to file under another name: the old source's staying incidents.
    package var renamedObservers: [(from: String, to: String)] = []

    /// An incident of either source: its store id, feed id and when it last changed (seconds).
    package struct Copy: Sendable {
        package var storeID: Int64
        package var externalID: String
        package var changed: Double

        package init(storeID: Int64, externalID: String, changed: Double) {
            self.storeID = storeID
            self.externalID = externalID
            self.changed = changed
        }
    }

    /// The plan for moving `moving` (the incidents of the source named `oldName`) under
    /// `newName`, whose incidents with the same feed ids are `twins` (by feed id).
    package init(oldName: String, newName: String, moving: [Copy], twins: [String: Copy]) {
        for copy in moving {
            let oldObserver = JunctionLearningRun.observer(source: oldName, externalID: copy.externalID)
            let newObserver = JunctionLearningRun.observer(source: newName, externalID: copy.externalID)
            if let twin = twins[copy.externalID] {
                if copy.changed > twin.changed {
                    losers.append(twin.storeID)
                    droppedObservers.append(newObserver)
                    renamedObservers.append((oldObserver, newObserver))
                } else {
                    losers.append(copy.storeID)
                    droppedObservers.append(oldObserver)
                }
            } else {
                renamedObservers.append((oldObserver, newObserver))
            }
        }
    }

    package static func == (a: SourceMergePlan, b: SourceMergePlan) -> Bool {
        a.losers == b.losers && a.droppedObservers == b.droppedObservers
            && a.renamedObservers.map { [$0.from, $0.to] } == b.renamedObservers.map { [$0.from, $0.to] }
    }
}

/// `text` with LIKE's wildcards escaped (escape character `\`), for both stores' LIKE patterns.
package enum LikePattern {
    package static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }
}

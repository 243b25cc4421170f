import TrafficGeoStore

/// The rows of batch queries (`--queries`): `qid,id,distance_m`, distances in full precision so
/// that they can be checked against an exact oracle.
public enum NeighbourRows {
    public static let header = "qid,id,distance_m\n"

    public static func line(qid: String, _ n: Neighbour) -> String {
        "\(CSVResultWriter.quote(qid)),\(CSVResultWriter.quote(n.id)),\(n.distance)\n"
    }
}

/// Reads samples out of a Prometheus text exposition (what a metrics endpoint answers).
public enum PrometheusText {
    /// The value of the sample written exactly as `series` (`name` or `name{label="value"}`), or nil
    /// when the scrape has no such line.
    public static func value(of series: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1).split(separator: " ").first ?? "")
        }
        return nil
    }
}

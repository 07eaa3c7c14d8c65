/// One action of a timeline page: its place, time and name, how it reads on
/// one line, what it changed, and the state after it.
///
/// `package`: the inspector builds these from a journal or a recording, and
/// ``TimelinePage`` renders them.
package struct TimelineStep: Sendable, Equatable {
  /// Its place in the source, from 1.
  package var index: Int
  /// Seconds since the first step; `nil` when the source has no time.
  package var seconds: Double?
  /// The action's case name (a JSON action's first key, or the string).
  package var name: String
  /// The action on one line.
  package var line: String
  /// What it changed, one `path: before, after` line each, in TestCore's notation.
  package var differences: [String]
  /// The state after this step, rendered (pretty JSON).
  package var state: String

  package init(
    index: Int, seconds: Double?, name: String, line: String, differences: [String], state: String
  ) {
    self.index = index
    self.seconds = seconds
    self.name = name
    self.line = line
    self.differences = differences
    self.state = state
  }
}

/// The timeline page: one self-contained HTML file showing a run's actions.
///
/// What it shows: the actions in order (index, time, name, one line each)
/// with a search box by action name; a step's differences and the state
/// after it, when the step is clicked; a chart of actions per second. The
/// URL fragment selects on load: `#step=3` selects step 3 and `#filter=add`
/// fills the search box (`#step=3&filter=add` both).
///
/// Self-contained: inline CSS and script, the system's fonts, no address of
/// any other file, and a Content-Security-Policy that lets the page load
/// nothing at all, so it works from `file://` and never reaches the network.
///
/// Every string given is data, never markup: in markup it is HTML-escaped;
/// in the page's JSON its `<`, `>`, `&`, U+2028 and U+2029 are `\u` escapes,
/// so no string can close the script element or open a comment in it.
///
/// Sized for 10,000 steps: the list is markup written here (the browser
/// lays it out once, with no script building it); one click handler serves
/// every step; the search shows and hides entries without rebuilding them.
/// The chart has at most ``maximumBars`` bars: a longer run gets wider
/// buckets, and the chart says how wide.
///
/// The stable ids and classes tests and tools read: `<li class="step"
/// data-index="N">` per step, `<pre id="diff">`, `<pre id="state">`,
/// `<svg id="rate">`, `<input id="filter">`, `<p id="omitted">`.
package enum TimelinePage {
  /// The most bars the chart draws.
  package static let maximumBars = 600

  /// The page for `steps`, in order, titled `title`; `omitted` is the
  /// number of steps left out of it (a line says so when it is not 0).
  package static func html(title: String, steps: [TimelineStep], omitted: Int) -> String {
    // Bytes, not String concatenation: 10,000 steps with their states are
    // megabytes, and escaping a byte at a time into one array is what
    // keeps that fast in a debug build too.
    var page: [UInt8] = []
    page.reserveCapacity(16_384 + steps.count * 512)
    page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n".utf8
    page += "<meta http-equiv=\"Content-Security-Policy\" content=\"\(policy)\">\n".utf8
    page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>".utf8
    appendHTML(title, to: &page)
    page += "</title>\n<style>\n\(style)</style>\n</head>\n<body>\n<header><h1>".utf8
    appendHTML(title, to: &page)
    page += "</h1>\n<p id=\"summary\">\(steps.count == 1 ? "1 step" : "\(steps.count) steps")</p>\n".utf8
    if omitted > 0 {
      page +=
        "<p id=\"omitted\">\(omitted) \(omitted == 1 ? "step was" : "steps were") left out of this page.</p>\n".utf8
    }
    page += "</header>\n<section id=\"chart\">\(rateChart(steps))</section>\n".utf8
    page +=
      """
      <main>
      <nav>
      <input id="filter" type="search" placeholder="Search by action name" aria-label="Search by action name" \
      autocomplete="off">
      <p id="shown"></p>
      <ol id="timeline" tabindex="0">

      """.utf8
    for step in steps {
      page += "<li class=\"step\" data-index=\"\(step.index)\" data-name=\"".utf8
      appendHTML(step.name, to: &page)
      page += "\"><span class=\"index\">\(step.index)</span><span class=\"time\">".utf8
      page += formatSeconds(step.seconds).utf8
      page += "</span><span class=\"name\">".utf8
      appendHTML(step.name, to: &page)
      page += "</span><code class=\"line\">".utf8
      appendHTML(step.line, to: &page)
      page += "</code></li>\n".utf8
    }
    page +=
      """
      </ol>
      </nav>
      <article>
      <h2 id="selected">Select a step to see what it changed</h2>
      <h3>Differences</h3>
      <pre id="diff"></pre>
      <h3>State after</h3>
      <pre id="state"></pre>
      </article>
      </main>
      <script id="steps" type="application/json">[
      """.utf8
    // One object per step, in the list's order: what the script shows
    // when a step is selected. `{"i":3,"d":["count: 2, 3"],"s":"{…}"}`
    for (position, step) in steps.enumerated() {
      page += "\(position == 0 ? "" : ",\n"){\"i\":\(step.index),\"d\":[".utf8
      for (number, difference) in step.differences.enumerated() {
        if number > 0 { page.append(UInt8(ascii: ",")) }
        appendScriptSafeJSON(difference, to: &page)
      }
      page += "],\"s\":".utf8
      appendScriptSafeJSON(step.state, to: &page)
      page.append(UInt8(ascii: "}"))
    }
    page += "]</script>\n<script>\n\(script)</script>\n</body>\n</html>\n".utf8
    return String(decoding: page, as: UTF8.self)
  }

  // MARK: - Escaping

  /// `text` for markup: an element's content or a quoted attribute's value.
  package static func escapeHTML(_ text: String) -> String {
    var bytes: [UInt8] = []
    appendHTML(text, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `text` as a JSON string literal that is safe inside a `<script>`
  /// element: besides JSON's own escapes, `<`, `>` and `&` are `\u` escapes
  /// (no `</script>`, no `<!--`), and so are U+2028 and U+2029 (line
  /// terminators to older JavaScript parsers).
  package static func scriptSafeJSON(_ text: String) -> String {
    var bytes: [UInt8] = []
    appendScriptSafeJSON(text, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func appendHTML(_ text: String, to out: inout [UInt8]) {
    var text = text
    text.withUTF8 { bytes in
      for byte in bytes {
        switch byte {
        case UInt8(ascii: "&"): out += "&amp;".utf8
        case UInt8(ascii: "<"): out += "&lt;".utf8
        case UInt8(ascii: ">"): out += "&gt;".utf8
        case UInt8(ascii: "\""): out += "&quot;".utf8
        case UInt8(ascii: "'"): out += "&#39;".utf8
        default: out.append(byte)
        }
      }
    }
  }

  private static func appendScriptSafeJSON(_ text: String, to out: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    func escape(_ value: UInt32, into out: inout [UInt8]) {
      out += "\\u".utf8
      for shift in stride(from: 12, through: 0, by: -4) { out.append(hex[Int(value >> UInt32(shift)) & 0xf]) }
    }
    out.append(UInt8(ascii: "\""))
    var text = text
    text.withUTF8 { bytes in
      var position = 0
      while position < bytes.count {
        let byte = bytes[position]
        switch byte {
        case UInt8(ascii: "\""): out += "\\\"".utf8
        case UInt8(ascii: "\\"): out += "\\\\".utf8
        case UInt8(ascii: "\n"): out += "\\n".utf8
        case UInt8(ascii: "\r"): out += "\\r".utf8
        case UInt8(ascii: "\t"): out += "\\t".utf8
        case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"), 0..<0x20, 0x7f:
          escape(UInt32(byte), into: &out)
        // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
        case 0xe2
        where position + 2 < bytes.count && bytes[position + 1] == 0x80
          && (bytes[position + 2] == 0xa8 || bytes[position + 2] == 0xa9):
          escape(bytes[position + 2] == 0xa8 ? 0x2028 : 0x2029, into: &out)
          position += 2
        default:
          out.append(byte)
        }
        position += 1
      }
    }
    out.append(UInt8(ascii: "\""))
  }

  // MARK: - Text

  /// `12.345 s`, or `-` without a time.
  package static func formatSeconds(_ seconds: Double?) -> String {
    guard let seconds, seconds.isFinite else { return "-" }
    let milliseconds = Int((abs(seconds) * 1_000).rounded())
    let fraction = String(milliseconds % 1_000)
    let sign = seconds < 0 && milliseconds > 0 ? "-" : ""
    return "\(sign)\(milliseconds / 1_000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
  }

  // MARK: - The chart

  /// The chart's buckets: how many seconds each spans, and how many steps
  /// started in each (with the first step of each, to select it); `nil`
  /// when no step has a time. One second each, unless the run is longer
  /// than ``maximumBars`` seconds.
  package static func rateBuckets(_ steps: [TimelineStep]) -> (width: Int, counts: [Int], firstSteps: [Int?])? {
    let timed = steps.compactMap { step in
      step.seconds.flatMap { $0.isFinite && $0 >= 0 ? (index: step.index, seconds: $0) : nil }
    }
    guard let last = timed.map(\.seconds).max() else { return nil }
    // Clamped to Int32.max seconds (68 years): a wild time cannot overflow
    // the arithmetic below, it only lands in the last bucket.
    let span = Int(min(last, Double(Int32.max))) + 1
    let width = (span + maximumBars - 1) / maximumBars
    let bucketCount = (span + width - 1) / width
    var counts = [Int](repeating: 0, count: bucketCount)
    var firstSteps = [Int?](repeating: nil, count: bucketCount)
    for step in timed {
      let bucket = min(Int(min(step.seconds, Double(Int32.max))) / width, bucketCount - 1)
      counts[bucket] += 1
      if firstSteps[bucket] == nil { firstSteps[bucket] = step.index }
    }
    return (width, counts, firstSteps)
  }

  /// An inline SVG bar chart of actions per second, or a line saying there
  /// is no time to chart.
  private static func rateChart(_ steps: [TimelineStep]) -> String {
    let plotWidth = 720.0
    let plotHeight = 100.0
    let left = 44.0
    let top = 10.0
    let open =
      "<svg id=\"rate\" role=\"img\" viewBox=\"0 0 \(Int(left + plotWidth + 8)) \(Int(top + plotHeight + 22))\" "
      + "width=\"\(Int(left + plotWidth + 8))\" height=\"\(Int(top + plotHeight + 22))\">"
    guard let buckets = rateBuckets(steps) else {
      let why = steps.isEmpty ? "No steps: no actions per second to chart." : "No step has a time: no rate to chart."
      return open
        + "<title>\(why)</title><text class=\"none\" x=\"\(Int(left))\" y=\"\(Int(top + 20))\">\(why)</text></svg>"
    }
    let (width, counts, firstSteps) = buckets
    let rates = counts.map { Double($0) / Double(width) }
    let highest = max(rates.max() ?? 0, 1e-9)
    let unit = width == 1 ? "one second" : "\(width) seconds"
    var svg = open + "<title>Actions per second, in buckets of \(unit)</title>"
    let barWidth = plotWidth / Double(counts.count)
    for (bucket, rate) in rates.enumerated() where counts[bucket] > 0 {
      let height = max(1, rate / highest * plotHeight)
      let start = bucket * width
      svg += "<rect class=\"bar\" x=\"\(decimal(left + Double(bucket) * barWidth))\" "
      svg += "y=\"\(decimal(top + plotHeight - height))\" width=\"\(decimal(max(barWidth * 0.9, 0.5)))\" "
      svg += "height=\"\(decimal(height))\" data-step=\"\(firstSteps[bucket] ?? 0)\">"
      svg += "<title>\(start) s to \(start + width) s: \(counts[bucket]) "
      svg += "\(counts[bucket] == 1 ? "action" : "actions")</title></rect>"
    }
    let bottom = top + plotHeight
    svg += "<line class=\"axis\" x1=\"\(Int(left))\" y1=\"\(Int(bottom))\" x2=\"\(Int(left + plotWidth))\" "
    svg += "y2=\"\(Int(bottom))\"/>"
    svg += "<text x=\"\(Int(left - 4))\" y=\"\(Int(top + 8))\" text-anchor=\"end\">\(decimal(highest))</text>"
    svg += "<text x=\"\(Int(left - 4))\" y=\"\(Int(bottom))\" text-anchor=\"end\">0</text>"
    svg += "<text x=\"\(Int(left))\" y=\"\(Int(bottom + 16))\">0 s</text>"
    svg += "<text x=\"\(Int(left + plotWidth))\" y=\"\(Int(bottom + 16))\" text-anchor=\"end\">"
    svg += "\(counts.count * width) s · actions per second\(width == 1 ? "" : ", per \(width) s bucket")</text>"
    return svg + "</svg>"
  }

  /// `x` with at most two decimals, for SVG coordinates.
  private static func decimal(_ x: Double) -> String {
    let hundredths = Int((x * 100).rounded())
    let whole = hundredths / 100
    let fraction = hundredths % 100
    if fraction == 0 { return "\(whole)" }
    return fraction % 10 == 0 ? "\(whole).\(fraction / 10)" : "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
  }
}

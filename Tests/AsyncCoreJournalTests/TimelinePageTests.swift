import AsyncCoreJournal
import AsyncCoreProcessTestSupport
import Foundation
import Testing

/// The timeline page's text, checked in Swift.
@Suite("The timeline page's HTML", .timeLimit(.minutes(5)))
struct TimelinePageTests {
  /// `count` steps: a name out of three in turn, 0.25 s apart, a count that
  /// goes up by one each step.
  static func steps(_ count: Int) -> [TimelineStep] {
    let names = ["increment", "tick", "rename"]
    return (1...max(count, 1)).prefix(count).map { index in
      TimelineStep(
        index: index, seconds: Double(index - 1) * 0.25, name: names[(index - 1) % names.count],
        line: #"{"\#(names[(index - 1) % names.count])":{"_0":\#(index)}}"#,
        differences: ["count: \(index - 1), \(index)"], state: "{\n  \"count\" : \(index)\n}")
    }
  }

  /// The page's embedded JSON, decoded: what its script shows per step.
  struct Embedded: Decodable, Equatable {
    var i: Int
    var d: [String]
    var s: String
  }

  func embedded(_ page: String) throws -> [Embedded] {
    let start = try #require(page.range(of: #"<script id="steps" type="application/json">"#))
    let end = try #require(page.range(of: "</script>", range: start.upperBound..<page.endIndex))
    return try JSONDecoder().decode([Embedded].self, from: Data(page[start.upperBound..<end.lowerBound].utf8))
  }

  func occurrences(of text: String, in page: String) -> Int {
    page.components(separatedBy: text).count - 1
  }

  @Test("the page loads nothing: no address, no external script, stylesheet, font or image, and a policy of none")
  func selfContained() {
    let page = TimelinePage.html(title: "Counter", steps: Self.steps(5), omitted: 0)
    for banned in ["http:", "https:", "//", "src=", "<link", "@import", "url(", "@font-face"] {
      #expect(!page.lowercased().contains(banned), "the page contains \(banned)")
    }
    #expect(page.contains(#"content="default-src 'none'; script-src 'unsafe-inline'"#))
    #expect(occurrences(of: "<script", in: page) == 2)
  }

  @Test("one entry per step, with its index, time, name and line, and the data the script shows for each")
  func oneEntryPerStep() throws {
    let steps = Self.steps(25)
    let page = TimelinePage.html(title: "Counter", steps: steps, omitted: 0)
    #expect(occurrences(of: #"<li class="step" "#, in: page) == 25)
    #expect(
      page.contains(
        #"<li class="step" data-index="4" data-name="increment"><span class="index">4</span>"#
          + #"<span class="time">0.750 s</span><span class="name">increment</span>"#
          + #"<code class="line">{&quot;increment&quot;:{&quot;_0&quot;:4}}</code></li>"#))
    #expect(try embedded(page) == steps.map { Embedded(i: $0.index, d: $0.differences, s: $0.state) })
    #expect(page.contains(#"<pre id="diff"></pre>"#) && page.contains(#"<pre id="state"></pre>"#))
    #expect(page.contains("<p id=\"summary\">25 steps</p>"))
  }

  @Test("hostile strings stay data: no string closes the script, opens a comment or adds markup, and all read back")
  func hostileStringsAreEscaped() throws {
    let hostile = "</script><script>alert(1)</script>"
    let quotes = #"a "quoted" 'name' & <b>bold</b>"#
    let emoji = "caf\u{e9} \u{1F600} \u{1F469}\u{200D}\u{1F4BB}"
    let separators = "line\u{2028}paragraph\u{2029}end <!-- not a comment --> \u{0}\u{7}\\"
    let big = "{\n  \"text\" : \"" + String(repeating: "</script>x", count: 1_024) + "\"\n}"
    let steps = [
      TimelineStep(
        index: 1, seconds: 0, name: quotes, line: hostile, differences: [hostile, separators], state: big),
      TimelineStep(index: 2, seconds: 0.5, name: emoji, line: emoji, differences: [], state: emoji),
    ]
    let page = TimelinePage.html(title: hostile + quotes, steps: steps, omitted: 0)

    #expect(occurrences(of: "<script", in: page.lowercased()) == 2)
    #expect(occurrences(of: "</script", in: page.lowercased()) == 2)
    #expect(!page.contains("<!--"))
    #expect(!page.contains("\u{2028}") && !page.contains("\u{2029}"))
    #expect(!page.contains("<b>"))
    #expect(page.contains("<code class=\"line\">&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</code>"))
    #expect(page.contains(#"data-name="a &quot;quoted&quot; &#39;name&#39; &amp; &lt;b&gt;bold&lt;/b&gt;""#))
    #expect(page.contains("<title>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;a &quot;quoted&quot;"))
    #expect(page.contains("<span class=\"name\">\(emoji)</span>"))
    #expect(big.utf8.count > 10_000)
    #expect(
      try embedded(page) == [
        Embedded(i: 1, d: [hostile, separators], s: big), Embedded(i: 2, d: [], s: emoji),
      ])
  }

  @Test("the JSON escaping turns <, >, &, U+2028, U+2029 and control characters into \\u escapes")
  func scriptSafeJSON() {
    #expect(
      TimelinePage.scriptSafeJSON("</script><!--&\u{2028}\u{2029}\u{1}\"\\\n")
        == #""\u003c/script\u003e\u003c!--\u0026\u2028\u2029\u0001\"\\\n""#)
    #expect(TimelinePage.scriptSafeJSON("\u{1F600}") == "\"\u{1F600}\"")
  }

  @Test("a line counts the steps left out, and there is none when none were")
  func omittedSteps() {
    let page = TimelinePage.html(title: "Counter", steps: Self.steps(3), omitted: 9_997)
    #expect(page.contains("<p id=\"omitted\">9997 steps were left out of this page.</p>"))
    let one = TimelinePage.html(title: "Counter", steps: Self.steps(3), omitted: 1)
    #expect(one.contains("<p id=\"omitted\">1 step was left out of this page.</p>"))
    #expect(!TimelinePage.html(title: "Counter", steps: Self.steps(3), omitted: 0).contains("id=\"omitted\""))
  }

  @Test("the chart counts steps in one-second buckets, a bar for each second that has some")
  func chartBuckets() throws {
    let buckets = try #require(TimelinePage.rateBuckets(Self.steps(25)))  // 0 to 6 s
    #expect(buckets.width == 1)
    #expect(buckets.counts == [4, 4, 4, 4, 4, 4, 1])
    #expect(buckets.firstSteps == [1, 5, 9, 13, 17, 21, 25])
    let page = TimelinePage.html(title: "Counter", steps: Self.steps(25), omitted: 0)
    #expect(page.contains("<svg id=\"rate\""))
    #expect(occurrences(of: "<rect class=\"bar\"", in: page) == 7)
    #expect(page.contains("<title>3 s to 4 s: 4 actions</title>"))
    #expect(page.contains("<title>6 s to 7 s: 1 action</title>"))
  }

  @Test("a run longer than the chart's bars gets wider buckets, and the chart says how wide")
  func chartWidensBucketsForLongRuns() throws {
    var steps = Self.steps(3)
    steps[1].seconds = 700
    steps[2].seconds = 1_999.5
    let buckets = try #require(TimelinePage.rateBuckets(steps))
    #expect(buckets.width == 4)
    #expect(buckets.counts.count == 500)
    #expect(buckets.counts[0] == 1 && buckets.counts[175] == 1 && buckets.counts[499] == 1)
    #expect(buckets.counts.reduce(0, +) == 3)
    let page = TimelinePage.html(title: "Long", steps: steps, omitted: 0)
    #expect(page.contains("<title>Actions per second, in buckets of 4 seconds</title>"))
    #expect(page.contains("2000 s · actions per second, per 4 s bucket"))
  }

  @Test("without a time on any step, the chart says there is no rate to chart, and the list shows no time")
  func chartWithoutTimes() {
    let steps = Self.steps(4).map { step in
      var step = step
      step.seconds = nil
      return step
    }
    #expect(TimelinePage.rateBuckets(steps) == nil)
    let page = TimelinePage.html(title: "Counter", steps: steps, omitted: 0)
    #expect(page.contains("No step has a time: no rate to chart.</text></svg>"))
    #expect(!page.contains("<rect"))
    #expect(page.contains("<span class=\"time\">-</span>"))
    #expect(TimelinePage.html(title: "Empty", steps: [], omitted: 0).contains("No steps: no actions per second"))
  }

  @Test("times read in seconds with milliseconds")
  func formatsSeconds() {
    #expect(TimelinePage.formatSeconds(0) == "0.000 s")
    #expect(TimelinePage.formatSeconds(1.25) == "1.250 s")
    #expect(TimelinePage.formatSeconds(62.0004) == "62.000 s")
    #expect(TimelinePage.formatSeconds(0.0999) == "0.100 s")
    #expect(TimelinePage.formatSeconds(nil) == "-")
    #expect(TimelinePage.formatSeconds(.nan) == "-")
  }

  // How long a page takes is the benchmark's to measure, not a test's: a
  // loaded machine exceeds any bound.
  @Test("10,000 steps make a page with 10,000 entries, the last one's data last")
  func tenThousandSteps() throws {
    let steps = Self.steps(10_000)
    let page = TimelinePage.html(title: "Many", steps: steps, omitted: 0)
    #expect(occurrences(of: #"<li class="step" "#, in: page) == 10_000)
    #expect(page.contains(#"<li class="step" data-index="10000" data-name="increment">"#))
    #expect(try embedded(page).last == Embedded(i: 10_000, d: ["count: 9999, 10000"], s: "{\n  \"count\" : 10000\n}"))
  }
}

/// The timeline page in headless Chromium: the DOM after its script ran.
@Suite("The timeline page in a browser", .timeLimit(.minutes(5)))
struct TimelinePageBrowserTests {
  /// The page for `steps`, written in `scratch`: its `file://` address.
  /// The page gets ``rowProbe`` after its own script.
  func writePage(in scratch: Scratch, steps: [TimelineStep]) throws -> String {
    let path = scratch.path + "/timeline.html"
    let page = TimelinePage.html(title: "Counter <25 steps>", steps: steps, omitted: 0)
    try #require(page.components(separatedBy: "</body>").count == 2)
    try page.replacingOccurrences(of: "</body>", with: Self.rowProbe + "</body>")
      .write(toFile: path, atomically: true, encoding: .utf8)
    return URL(fileURLWithPath: path).absoluteString
  }

  /// A test-only script, run after the page's: writes the index of each
  /// row the browser laid out as a box (what a person sees in the list,
  /// scrolled or not) into `<output id="laid-out">`. An attribute such as
  /// `hidden` hides nothing if a style overrides it.
  static let rowProbe = """
    <script>
    (function () {
      var shown = [];
      for (var row of document.querySelectorAll("#timeline li.step")) {
        if (getComputedStyle(row).display !== "none" && row.getBoundingClientRect().height > 0) {
          shown.push(row.dataset.index);
        }
      }
      var output = document.createElement("output");
      output.id = "laid-out";
      output.textContent = shown.join(" ");
      document.body.appendChild(output);
    })();
    </script>

    """

  /// The indices of the rows laid out as boxes, from ``rowProbe``.
  func laidOutRows(in dom: String) throws -> [Int] {
    try element(#"<output id="laid-out">"#, closing: "</output>", in: dom).split(separator: " ").map {
      try #require(Int($0))
    }
  }

  /// The browser, or `nil` with an issue recorded when it is required and missing.
  func browser() -> String? {
    guard let path = Browser.path else {
      Issue.record(Comment(rawValue: Browser.missing))
      return nil
    }
    return path
  }

  /// The DOM after the page's script ran, at `url`.
  func dom(_ browser: String, _ url: String, in scratch: Scratch) async throws -> String {
    let run = try await Browser.run(browser, ["--dump-dom"], url: url, in: scratch.path)
    #expect(!run.timedOut, "the browser did not end within its deadline")
    #expect(run.status == 0, "the browser exited with \(run.status): \(run.errors.suffix(2_000))")
    return run.output
  }

  /// The text of the element that starts with `opening`, up to `closing`.
  func element(_ opening: String, closing: String, in dom: String) throws -> String {
    let start = try #require(dom.range(of: opening), "no \(opening) in the DOM")
    let end = try #require(dom.range(of: closing, range: start.upperBound..<dom.endIndex))
    return String(dom[start.upperBound..<end.lowerBound])
  }

  /// Every step's entry in the DOM, in order, with its attributes.
  func entries(in dom: String) -> [Substring] {
    dom.split(separator: "<li ").dropFirst().filter { $0.hasPrefix(#"class="step""#) }
  }

  @Test(
    "Chromium shows one entry per step, and #step=3 puts step 3's differences and state in the page",
    .enabled(
      if: (Browser.path != nil && Environment.sanitizer == nil) || Browser.isRequired,
      "no chromium on PATH (set ASYNCCORE_REQUIRE_BROWSER=1 to fail instead), or under a sanitizer"))
  func domShowsStepsAndSelectedDiff() async throws {
    guard let browser = browser() else { return }
    let scratch = try Scratch()
    defer { scratch.remove() }
    var steps = TimelinePageTests.steps(25)
    // Text that would be markup if the page put it in as HTML.
    steps[2].differences = ["count: 2, 3", "items[2].title: \"<b>old</b>\", \"new\""]
    steps[7].line = "</script><script>document.title = 'taken'</script>"
    let url = try writePage(in: scratch, steps: steps)

    let dom = try await dom(browser, url + "#step=3", in: scratch)
    let entries = entries(in: dom)
    #expect(entries.count == 25)
    #expect(occurrences(of: #"class="step""#, in: dom) == 25)
    #expect(entries.first?.hasPrefix(#"class="step" data-index="1" "#) == true)
    #expect(
      entries.filter { $0.contains(#"aria-selected="true""#) }.map { $0.prefix(31) } == [
        #"class="step" data-index="3" dat"#
      ])
    #expect(
      try element(#"<pre id="diff">"#, closing: "</pre>", in: dom)
        == "count: 2, 3\nitems[2].title: \"&lt;b&gt;old&lt;/b&gt;\", \"new\"")
    #expect(try element(#"<pre id="state">"#, closing: "</pre>", in: dom) == "{\n  \"count\" : 3\n}")
    #expect(try element(#"<h2 id="selected">"#, closing: "</h2>", in: dom) == "Step 3: rename")
    let rows = try laidOutRows(in: dom)
    #expect(rows == Array(1...25), "without a search every row is shown")
    #expect(try element("<title>", closing: "</title>", in: dom) == "Counter &lt;25 steps&gt;")
    #expect(dom.contains(#"<svg id="rate""#))

    if let folder = Environment.string("ASYNCCORE_SCREENSHOT_DIR") {
      let screenshot = folder + "/timeline-escaping.png"
      unlink(screenshot)
      let run = try await Browser.run(
        browser, ["--screenshot=\(screenshot)", "--window-size=1200,800", "--hide-scrollbars"],
        url: url + "#step=3", in: scratch.path)
      #expect(!run.timedOut && run.status == 0, "the screenshot run: \(run.status): \(run.errors.suffix(2_000))")
      let png = contents(of: screenshot)
      #expect(png.starts(with: [0x89, 0x50, 0x4e, 0x47]), "\(screenshot) is not a PNG (\(png.count) bytes)")
      #expect(png.count > 1_000, "\(screenshot) has \(png.count) bytes")
    }
  }

  @Test(
    "Chromium hides the steps whose name does not match #filter=NAME: only the matching rows are laid out",
    .enabled(
      if: (Browser.path != nil && Environment.sanitizer == nil) || Browser.isRequired,
      "no chromium on PATH (set ASYNCCORE_REQUIRE_BROWSER=1 to fail instead), or under a sanitizer"))
  func filterFromFragment() async throws {
    guard let browser = browser() else { return }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let url = try writePage(in: scratch, steps: TimelinePageTests.steps(25))
    let dom = try await dom(browser, url + "#filter=TIC", in: scratch)
    let entries = entries(in: dom)
    #expect(entries.count == 25)
    let shown = entries.filter { !$0.prefix { $0 != ">" }.contains("hidden") }
    #expect(
      shown.map { String($0.prefix { $0 != ">" }) }
        == (0..<8).map { #"class="step" data-index="\#(3 * $0 + 2)" data-name="tick""# })
    #expect(try element(#"<p id="shown">"#, closing: "</p>", in: dom) == "8 of 25 steps match")
    // What a person sees: the 8 rows, and no box for the 17 others.
    let rows = try laidOutRows(in: dom)
    #expect(rows == (0..<8).map { 3 * $0 + 2 })
    #expect(dom.contains(#"<input id="filter""#))
  }

  @Test("a browser that does not end is killed at its deadline, and the run says it timed out")
  func hungBrowserIsKilledAtDeadline() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    // A stand-in that ignores its arguments and never ends, with a helper in its process group.
    let hung = scratch.path + "/hung-browser"
    let source = scratch.path + "/hung-browser.sh"
    let file = open(source, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
    try #require(file >= 0)
    let script = Array("#!/bin/sh\nsleep 300 &\nsleep 300\n".utf8)
    #expect(write(file, script, script.count) == script.count)
    close(file)
    // The executable is cp's copy: a file this process wrote could still be
    // open in a child another test forked meanwhile, not yet exec'd, and
    // exec would fail with ETXTBSY (close-on-exec does not close that gap).
    let copy = try spawn("/bin/cp", arguments: [source, hung])
    close(copy.input)
    close(copy.output)
    var status: Int32 = 0
    while waitpid(copy.pid, &status, 0) < 0, errno == EINTR {}
    try #require(status == 0 && access(hung, X_OK) == 0)
    // No bound on the time the run took: a loaded machine exceeds any. Had
    // the deadline not killed it, it would have ended by itself after 300 s,
    // with status 0 and not timed out.
    let run = try await Browser.run(hung, ["--dump-dom"], url: "file:///nothing.html", in: scratch.path, deadline: 1)
    #expect(run.timedOut)
    #expect(run.status == 128 + SIGKILL)
  }

  func occurrences(of text: String, in page: String) -> Int {
    page.components(separatedBy: text).count - 1
  }
}

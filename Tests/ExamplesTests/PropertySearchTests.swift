import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreNavigation
import AsyncCorePropertySearchExample
import AsyncCoreTesting
import Testing

@Suite("PropertySearch example", .hangDetector)
struct PropertySearchTests {
  /// The core's clock, which the fake API's latency runs on too.
  let clock = ManualClock()
  static let latency = Duration.milliseconds(500)
  /// A bound on each wait for an effect, generous for CI's sanitizer runs;
  /// a passing wait ends as soon as its action comes.
  static let timeout = Duration.seconds(30)

  static let leeds = FakePropertyAPI.catalogue.filter { $0.place == "Leeds" }
  static let parkRow = leeds[0]
  static let headingley = leeds[1]

  func makeStore(
    initialState: PropertySearch = PropertySearch(), isOffline: Bool = false
  ) -> TestCore<PropertySearch, PropertySearchAction> {
    let api = FakePropertyAPI(latency: Self.latency, clock: clock, isOffline: isOffline)
    return TestCore(
      initialState: initialState, dependencies: Dependencies { $0.propertyAPI = api }, clock: clock,
      timeout: Self.timeout, reducer: PropertySearch.reducer)
  }

  func makeCore(latency: Duration = PropertySearchTests.latency) -> Core<PropertySearch, PropertySearchAction> {
    let api = FakePropertyAPI(latency: latency, clock: clock)
    return Core(
      initialState: PropertySearch(), dependencies: Dependencies { $0.propertyAPI = api }, clock: clock,
      reducer: PropertySearch.reducer)
  }

  // MARK: - The flow, with the test core

  @Test("a place is searched with start- and end-loading; a number opens the detail over the results; back returns")
  func searchSelectBack() async {
    let store = makeStore()
    await search("Leeds", finding: Self.leeds, on: store)
    await store.send(.results(.select(number: 2)))
    await store.receive(.results(.delegate(.didSelect(propertyID: 43)))) {
      $0.stack = [.results(place: "Leeds"), .property(id: 43)]
      $0.detail = PropertyDetail(id: 43)
    }
    await store.receive(.detail(.startLoading)) { $0.detail?.isLoading = true }
    await answer()
    await store.receive(.detail(.endLoading(Self.headingley))) {
      $0.detail?.isLoading = false
      $0.detail?.property = Self.headingley
    }
    // Back: the detail goes, the results stay as they were, not reloaded.
    await store.send(.navigation(.pop)) {
      $0.stack = [.results(place: "Leeds")]
      $0.detail = nil
    }
    await store.send(.navigation(.pop)) {
      $0.stack = []
      $0.results = nil
    }
    await store.finish()
    #expect(clock.sleeperCount == 0)
  }

  @Test("an unknown place, the server offline and a number not in the list each give an error line")
  func errors() async {
    let store = makeStore()
    await store.send(.search(place: "Atlantis")) {
      $0.stack = [.results(place: "Atlantis")]
      $0.results = Results(place: "Atlantis")
    }
    await store.receive(.results(.startLoading)) { $0.results?.isLoading = true }
    await answer()
    let unknown = PropertyAPIError.unknownPlace("Atlantis").description
    #expect(unknown == "No homes found in \"Atlantis\". Try London, Leeds, Bath.")
    await store.receive(.results(.failed(unknown))) {
      $0.results?.isLoading = false
      $0.results?.error = unknown
    }
    await store.send(.results(.select(number: 1))) { $0.results?.error = "There is nothing to open here." }
    await search("Leeds", finding: Self.leeds, on: store)
    await store.send(.results(.select(number: 4))) { $0.results?.error = "There is no 4 in the list: type 1 to 3." }
    await store.send(.results(.select(number: 0))) { $0.results?.error = "There is no 0 in the list: type 1 to 3." }
    await store.finish()

    let offline = makeStore(isOffline: true)
    await offline.send(.search(place: "Leeds")) {
      $0.stack = [.results(place: "Leeds")]
      $0.results = Results(place: "Leeds")
    }
    await offline.receive(.results(.startLoading)) { $0.results?.isLoading = true }
    await answer()
    await offline.receive(.results(.failed(PropertyAPIError.offline.description))) {
      $0.results?.isLoading = false
      $0.results?.error = "The property server is not answering. Try again later."
    }
    await offline.finish()
  }

  @Test("back while the detail loads cancels its request; a new search while one runs cancels the first")
  func leavingCancelsTheRequest() async throws {
    let store = makeStore(
      initialState: PropertySearch(
        stack: [.results(place: "Leeds")], results: Results(place: "Leeds", properties: Self.leeds)))
    await store.send(.results(.select(number: 1)))
    await store.receive(.results(.delegate(.didSelect(propertyID: 42)))) {
      $0.stack = [.results(place: "Leeds"), .property(id: 42)]
      $0.detail = PropertyDetail(id: 42)
    }
    await store.receive(.detail(.startLoading)) { $0.detail?.isLoading = true }
    try await clock.waitForSleepers(atLeast: 1)  // the API is asked
    await store.send(.navigation(.pop)) {
      $0.stack = [.results(place: "Leeds")]
      $0.detail = nil
    }
    #expect(clock.sleeperCount == 0)  // cancelled: no answer will come

    await store.send(.search(place: "London")) {
      $0.stack = [.results(place: "London")]
      $0.results = Results(place: "London")
    }
    await store.receive(.results(.startLoading)) { $0.results?.isLoading = true }
    try await clock.waitForSleepers(atLeast: 1)
    await search("Bath", finding: FakePropertyAPI.catalogue.filter { $0.place == "Bath" }, on: store)
    await store.finish()  // London's search never answered
  }

  // MARK: - Deep links

  @Test(
    "links read into routes with DeepLinks; anything else is a DeepLinkError",
    arguments: [
      ("asynccore://search?place=Leeds", .success([.results(place: "Leeds")])),
      ("asynccore://property/42", .success([.property(id: 42)])),
      ("AsyncCore://search/property/42?place=new+york", .success([.results(place: "new york"), .property(id: 42)])),
      ("asynccore://", .success([])),
      ("asynccore://property/abc", .failure(.invalidParameter(name: "id", value: "abc", expected: "an integer"))),
      ("asynccore://search", .failure(.missingParameter("place"))),
      ("asynccore://favourites", .failure(.noMatchingRule(path: "favourites"))),
      ("https://property/42", .failure(.unknownScheme("https"))),
    ] as [(String, Result<[PropertyRoute], DeepLinkError>)])
  func links(link: String, expected: Result<[PropertyRoute], DeepLinkError>) {
    #expect(Result { () throws(DeepLinkError) in try PropertySearch.links.routes(for: link) } == expected)
  }

  @Test("a link opens its screen and loads it; a bad one shows its error and changes nothing until the next action")
  func openLinks() async {
    let store = makeStore()
    await store.send(.openLink("asynccore://property/42")) {
      $0.stack = [.property(id: 42)]
      $0.detail = PropertyDetail(id: 42)
    }
    await store.receive(.detail(.startLoading)) { $0.detail?.isLoading = true }
    await answer()
    await store.receive(.detail(.endLoading(Self.parkRow))) {
      $0.detail?.isLoading = false
      $0.detail?.property = Self.parkRow
    }
    await store.send(.openLink("asynccore://property/forty-two")) {
      $0.linkError = .invalidParameter(name: "id", value: "forty-two", expected: "an integer")
    }
    #expect(
      PropertySearchScreen(store.state).lines.last
        == "  ! That link opens nothing: the parameter \"id\" is \"forty-two\", not an integer.")
    await store.send(.navigation(.pop)) {
      $0.stack = []
      $0.detail = nil
      $0.linkError = nil
    }
    await store.send(.openLink("asynccore://search?place=Leeds")) {
      $0.stack = [.results(place: "Leeds")]
      $0.results = Results(place: "Leeds")
    }
    await store.receive(.results(.startLoading)) { $0.results?.isLoading = true }
    await answer()
    await store.receive(.results(.endLoading(Self.leeds))) {
      $0.results?.isLoading = false
      $0.results?.properties = Self.leeds
    }
    await store.finish()
  }

  @Test("a link to the results and a detail over them loads both at once; back shows the loaded results")
  func linkToTwoScreens() async throws {
    let core = makeCore()
    try await core.dispatch(.openLink("asynccore://search/property/43?place=Leeds"))
    let opened = await core.state
    #expect(opened.results?.isLoading == true && opened.detail?.isLoading == true)
    try await clock.waitForSleepers(atLeast: 2)
    await clock.advance(by: Self.latency)  // both answer
    try await core.waitUntilIdle()
    let state = await core.state
    #expect(state.stack == [.results(place: "Leeds"), .property(id: 43)])
    #expect(state.results == Results(place: "Leeds", properties: Self.leeds))
    #expect(state.detail == PropertyDetail(id: 43, property: Self.headingley))
    try await core.dispatch(.navigation(.pop))
    #expect(PropertySearchScreen(await core.state).lines[1] == "  3 homes in Leeds:")
    await core.shutdown()
  }

  // MARK: - Screens, input, options

  @Test("each screen is drawn from the state: the breadcrumb, then the top screen's lines")
  func screens() {
    let prompt = [
      "Search", "  Type a place (London, Leeds, Bath), or a link such as",
      "  asynccore://property/42. report FILE writes a bug report; q quits.",
    ]
    #expect(PropertySearchScreen(PropertySearch()).lines == prompt)
    var state = PropertySearch(stack: [.results(place: "Leeds")], results: Results(place: "Leeds", isLoading: true))
    #expect(
      PropertySearchScreen(state).lines == [
        "Search › Leeds", "  … searching Leeds", "  Type another place, back, or q.",
      ])
    state.results = Results(place: "Leeds", properties: Self.leeds, error: "no")
    #expect(
      PropertySearchScreen(state).lines == [
        "Search › Leeds",
        "  3 homes in Leeds:",
        "  1. Flat on Park Row · 2 bedrooms · £1,150 a month",
        "  2. Terrace in Headingley · 3 bedrooms · £1,400 a month",
        "  3. Studio by the Corn Exchange · studio · £850 a month",
        "  ! no",
        "  Type a number to open it, another place, back, or q.",
      ])
    state.stack.push(.property(id: 42))
    state.detail = PropertyDetail(id: 42, isLoading: true)
    #expect(PropertySearchScreen(state).lines[0...1] == ["Search › Leeds › #42", "  … loading #42"])
    state.detail = PropertyDetail(id: 42, property: Self.parkRow)
    #expect(
      PropertySearchScreen(state).lines == [
        "Search › Leeds › #42",
        "  Flat on Park Row, Leeds",
        "  2 bedrooms · £1,150 a month",
        "  A bright flat five minutes from the station.",
        "  Type back, another place, or q.",
      ])
    state = PropertySearch(stack: [.property(id: 9)], detail: PropertyDetail(id: 9, error: "There is no property #9."))
    #expect(
      PropertySearchScreen(state).lines == [
        "Search › #9", "  ! There is no property #9.", "  Type back, another place, or q.",
      ])
    #expect(PropertySearchScreen.grouped(1_234_567) == "1,234,567" && PropertySearchScreen.grouped(999) == "999")
    var cottage = Self.parkRow
    cottage.bedrooms = 1
    cottage.monthlyRent = 12_000
    #expect(PropertySearchScreen.facts(cottage) == "1 bedroom · £12,000 a month")
  }

  @Test("a typed line means what the screen shown asks for")
  func input() {
    let prompt = PropertySearch()
    let results = PropertySearch(stack: [.results(place: "Leeds")], results: Results(place: "Leeds"))
    let detail = PropertySearch(stack: [.property(id: 42)], detail: PropertyDetail(id: 42))
    #expect(PropertySearchInput(" Leeds ", on: prompt) == .send(.search(place: "Leeds")))
    #expect(PropertySearchInput(" 2", on: results) == .send(.results(.select(number: 2))))
    #expect(PropertySearchInput("New York", on: results) == .send(.search(place: "New York")))
    // A number opens a row of a results list; where none is shown it is no place either.
    #expect(
      PropertySearchInput("2", on: prompt)
        == .refused("? A number opens a home on a results list, and none is shown: type a place, a link, or q."))
    #expect(
      PropertySearchInput(" 9 ", on: detail)
        == .refused("? A number opens a home on a results list, and none is shown: type back, another place, or q."))
    #expect(PropertySearchInput("Back", on: prompt) == .refused(PropertySearchInput.nothingToGoBackTo))
    for state in [results, detail] { #expect(PropertySearchInput("Back", on: state) == .send(.navigation(.pop))) }
    for state in [prompt, results, detail] {
      #expect(PropertySearchInput("asynccore://property/7", on: state) == .send(.openLink("asynccore://property/7")))
      #expect(PropertySearchInput("q", on: state) == .quit)
      #expect(PropertySearchInput("quit", on: state) == .quit)
      #expect(PropertySearchInput(" \t", on: state) == .ignore)
    }
  }

  @Test("options: a latency, offline, links checked before anything runs, commands; anything else is refused")
  func options() throws {
    let defaults = try PropertySearchOptions(arguments: [])
    #expect(defaults.latency == .milliseconds(500) && !defaults.isOffline && defaults.lines == [])
    #expect(defaults.readsStandardInput && !defaults.showsHelp)
    let links = try PropertySearchOptions(arguments: ["asynccore://property/42", "--latency", "0", "--offline"])
    #expect(links.lines == ["asynccore://property/42"] && links.readsStandardInput)
    #expect(links.latency == .zero && links.isOffline)
    let commands = try PropertySearchOptions(arguments: ["asynccore://search?place=Bath", "1", "back"])
    #expect(commands.lines == ["asynccore://search?place=Bath", "1", "back"] && !commands.readsStandardInput)
    #expect(try PropertySearchOptions(arguments: ["--help"]).showsHelp)
    #expect(throws: PropertySearchOptions.Invalid.link(.noMatchingRule(path: "home"))) {
      try PropertySearchOptions(arguments: ["Leeds", "asynccore://home"])
    }
    #expect(
      throws: PropertySearchOptions.Invalid.option("--latency takes a number of seconds from 0 to 3600, not \"x\"")
    ) {
      try PropertySearchOptions(arguments: ["--latency", "x"])
    }
    #expect(throws: PropertySearchOptions.Invalid.option("--latency needs a value")) {
      try PropertySearchOptions(arguments: ["--latency"])
    }
    #expect(try PropertySearchOptions(arguments: ["--latency", "3600"]).latency == .seconds(3_600))
    #expect(
      throws: PropertySearchOptions.Invalid.option("--latency takes a number of seconds from 0 to 3600, not \"3601\"")
    ) {
      try PropertySearchOptions(arguments: ["--latency", "3601"])
    }
    #expect(throws: PropertySearchOptions.Invalid.option("unknown option --fast")) {
      try PropertySearchOptions(arguments: ["--fast"])
    }
    #expect(
      "\(PropertySearchOptions.Invalid.link(.unknownScheme("app")))"
        == "cannot open the link: the scheme \"app\" is not this app's")
  }

  // MARK: - The session

  @Test("a session over piped lines writes each screen once, in order, echoes the lines, and ends with bye")
  func session() async {
    let collector = Collector()
    let core = makeCore(latency: .zero)
    let session = PropertySearchSession(core: core, isTerminal: false, write: collector.write)
    let final = await session.run(lines: Self.lines(["Leeds", "9", "", "1", "back", "q", "London"]))
    #expect(final.stack == [.results(place: "Leeds")])
    #expect(core.hasShutDown && core.metrics.observers == 0)

    var state = PropertySearch()
    var expected = [PropertySearchScreen.title]
    func screen() { expected += PropertySearchScreen(state).lines }
    screen()
    expected.append("> Leeds")
    state = PropertySearch(stack: [.results(place: "Leeds")], results: Results(place: "Leeds", isLoading: true))
    screen()
    state.results = Results(place: "Leeds", properties: Self.leeds)
    screen()
    expected.append("> 9")
    state.results?.error = "There is no 9 in the list: type 1 to 3."
    screen()
    expected += ["> ", "> 1"]  // an empty line changes nothing
    state.results?.error = nil
    state.stack.push(.property(id: 42))
    state.detail = PropertyDetail(id: 42, isLoading: true)
    screen()
    state.detail = PropertyDetail(id: 42, property: Self.parkRow)
    screen()
    expected.append("> back")
    state.stack.pop()
    state.detail = nil
    screen()
    expected += ["> q", "bye: Search › Leeds"]
    let written = await collector.finish().joined()
    #expect(written == expected.joined(separator: "\n") + "\n")
  }

  @Test(
    "the same mistake twice prints its error twice, and back on the search prompt is refused: every command is answered"
  )
  func sessionAnswersEveryCommand() async {
    let collector = Collector()
    let core = makeCore(latency: .zero)
    let session = PropertySearchSession(core: core, isTerminal: false, write: collector.write)
    let badLink = "asynccore://property/x"
    let link = "asynccore://property/42"
    let commands = ["back", "back", "Leeds", "9", "9", badLink, badLink, "1", link, link, "q"]
    _ = await session.run(lines: Self.lines(commands))

    let written = transcript(await collector.finish())
    let noRow = "  ! \(Results.noRow(9, count: 3))"
    let opensNothing = "  ! That link opens nothing: the parameter \"id\" is \"x\", not an integer."
    let nothingToGoBackTo = "? There is no screen to go back to: type a place, a link, or q."
    #expect(reply(to: 0, in: written) == [nothingToGoBackTo])
    #expect(reply(to: 1, in: written) == [nothingToGoBackTo])
    #expect(reply(to: 3, in: written).contains(noRow))  // a new screen, showing the error
    #expect(reply(to: 4, in: written) == [noRow])  // the same screen: the error again
    #expect(reply(to: 5, in: written).last == opensNothing)
    #expect(reply(to: 6, in: written) == [opensNothing])
    // A link to the screen shown: nothing to do, and it says so.
    #expect(reply(to: 9, in: written) == ["  Nothing to do: that is the screen shown."])
  }

  @Test("a number typed on a detail screen searches nothing: it is answered with what that screen takes")
  func numberOnTheDetailScreen() async {
    let collector = Collector()
    let core = makeCore(latency: .zero)
    let session = PropertySearchSession(core: core, isTerminal: false, write: collector.write)
    let final = await session.run(lines: Self.lines(["Leeds", "1", "9", "q"]))
    #expect(final.stack == [.results(place: "Leeds"), .property(id: 42)])
    let written = transcript(await collector.finish())
    #expect(
      reply(to: 2, in: written) == [
        "? A number opens a home on a results list, and none is shown: type back, another place, or q."
      ])
  }

  @Test("on a terminal, a refused command's line is drawn under the screen, above the prompt")
  func terminalAnswersARefusedCommand() async {
    let collector = Collector()
    let session = PropertySearchSession(core: makeCore(latency: .zero), isTerminal: true, write: collector.write)
    _ = await session.run(lines: Self.lines(["back"]))
    let writes = await collector.finish()
    let screen = PropertySearchScreen(PropertySearch()).lines
    let nothingToGoBackTo = "? There is no screen to go back to: type a place, a link, or q."
    let clear = "\u{1B}[H\u{1B}[2J"
    #expect(writes.count == 3)  // the screen, the screen after back, bye
    #expect(
      writes.dropFirst().first
        == clear
        + ([PropertySearchScreen.title] + screen + [nothingToGoBackTo, "> "])
        .joined(separator: "\n"))
  }

  // MARK: - The program

  @Test("`printf 'Leeds\\n2\\nback\\n' | swift run PropertySearch` shows the results, the detail, back, and ends")
  func programWithPipedInput() async throws {
    let program = try ExampleProgram.start(
      "PropertySearch", arguments: ["--latency", "0.01"], input: "Leeds\n2\nback\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    #expect(lines.first == PropertySearchScreen.title)
    for line in [
      "> Leeds", "  … searching Leeds", "  2. Terrace in Headingley · 3 bedrooms · £1,400 a month", "> 2",
      "Search › Leeds › #43", "  Terrace in Headingley, Leeds", "> back",
    ] {
      #expect(lines.contains(line), "missing: \(line)")
    }
    #expect(lines.last == "bye: Search › Leeds")
  }

  @Test("links from the command line open their screens, then standard input is read; commands as arguments run")
  func programWithLinks() async throws {
    let detail = try ExampleProgram.start("PropertySearch", arguments: ["--latency", "0", "asynccore://property/42"])
    defer { detail.terminate() }
    let detailLines = await detail.allLines()
    #expect(await detail.exitStatus() == .exited(0))
    #expect(detailLines.contains("  Flat on Park Row, Leeds"))
    #expect(detailLines.suffix(2) == ["  Type back, another place, or q.", "bye: Search › #42"])

    let both = try ExampleProgram.start(
      "PropertySearch",
      arguments: ["--latency", "0", "asynccore://search/property/61?place=Bath", "back", "q"],
      input: "never read\n")
    defer { both.terminate() }
    let bothLines = await both.allLines()
    #expect(await both.exitStatus() == .exited(0))
    #expect(bothLines.contains("Search › Bath › #61"))
    #expect(bothLines.contains("  1. Georgian flat on the Circus · 2 bedrooms · £1,900 a month"))
    #expect(!bothLines.contains("> never read"))
    #expect(bothLines.last == "bye: Search › Bath")
  }

  @Test("a bad link on the command line prints its DeepLinkError and exits with status 2, having run nothing")
  func programRefusesABadLink() async throws {
    let program = try ExampleProgram.start(
      "PropertySearch", arguments: ["Leeds", "asynccore://property/abc"], input: "Leeds\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(2))
    #expect(lines == ["PropertySearch: cannot open the link: the parameter \"id\" is \"abc\", not an integer"])

    let offline = try ExampleProgram.start("PropertySearch", arguments: ["--offline", "--latency", "0", "Bath"])
    defer { offline.terminate() }
    let offlineLines = await offline.allLines()
    #expect(await offline.exitStatus() == .exited(0))
    #expect(
      offlineLines.suffix(3) == [
        "  ! The property server is not answering. Try again later.", "  Type another place, back, or q.",
        "bye: Search › Bath",
      ])
  }

  @Test(
    "a link's percent-decoded escape is shown as text, not obeyed: PropertySearch 'asynccore://search?place=%1b%5b2J'")
  func programEscapesALinksPlace() async throws {
    let program = try ExampleProgram.start(
      "PropertySearch", arguments: ["--latency", "0", "asynccore://search?place=%1b%5b2J"])
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    expectSafeToShow(lines)
    #expect(lines.contains("Search › \\u{1B}[2J"))
    #expect(lines.contains("  ! No homes found in \"\\u{1B}[2J\". Try London, Leeds, Bath."))
    #expect(lines.last == "bye: Search › \\u{1B}[2J")
  }

  @Test("Ctrl-C while a search runs ends the session at once, without its results: the bye line, status 0")
  func programSaysByeOnInterruptDuringASearch() async throws {
    // A request of an hour: the session could only end by not waiting for it.
    let rest = try await linesAfterInterrupt(
      "PropertySearch", arguments: ["--latency", "3600"], typing: "London\n", after: "  … searching London",
      bye: "bye: Search › London")
    #expect(!rest.contains { $0.contains("homes in London") })
  }

  @Test("typed control characters are echoed escaped, and a 200 KB line is echoed bounded")
  func programEscapesTypedLines() async throws {
    let long = String(repeating: "Leeds", count: 40_000)
    let program = try ExampleProgram.start(
      "PropertySearch", arguments: ["--latency", "0"], input: "\u{1B}[2J\u{202E}Leeds\n\(long)\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    expectSafeToShow(lines)
    #expect(lines.contains("> \\u{1B}[2J\\u{202E}Leeds"))
    #expect(lines.contains("> \(long.prefix(EchoLimit.input))…"))
    #expect(lines.joined().utf8.count < 5_000)
  }

  // MARK: - Helpers

  /// Searches `place` from any screen; the API finds `properties`.
  func search(
    _ place: String, finding properties: [Property], on store: TestCore<PropertySearch, PropertySearchAction>,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    await store.send(
      .search(place: place),
      assert: {
        $0.stack = [.results(place: place)]
        $0.results = Results(place: place)
        $0.detail = nil
      }, sourceLocation: sourceLocation)
    await store.receive(
      .results(.startLoading), assert: { $0.results?.isLoading = true }, sourceLocation: sourceLocation)
    await answer(sourceLocation: sourceLocation)
    await store.receive(
      .results(.endLoading(properties)),
      assert: {
        $0.results?.isLoading = false
        $0.results?.properties = properties
      }, sourceLocation: sourceLocation)
  }

  /// The API answers the request in flight.
  func answer(sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
      try await clock.waitForSleepers(atLeast: 1)
    } catch {
      Issue.record("gave up waiting for a request to the API", sourceLocation: sourceLocation)
    }
    await clock.advance(by: Self.latency)
  }

  static func lines(_ lines: [String]) -> AsyncStream<String> {
    AsyncStream { continuation in
      for line in lines { continuation.yield(line) }
      continuation.finish()
    }
  }
}

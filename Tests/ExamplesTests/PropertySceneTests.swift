import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreNavigation
import AsyncCorePropertySceneExample
import AsyncCorePropertySearchExample
import AsyncCoreTesting
import Testing

@Suite("PropertyScene example", .hangDetector)
struct PropertySceneTests {
  /// The core's clock, which both workers' latency runs on.
  let clock = ManualClock()
  static let latency = Duration.milliseconds(300)
  /// A bound on each wait for an effect, generous for CI's sanitizer runs.
  static let timeout = Duration.seconds(30)
  static let parkRow = FakePropertyAPI.catalogue.filter { $0.id == 42 }[0]

  func makeStore(
    _ logic: PropertyLogic = PropertyLogic(propertyID: 42), favourites: InMemoryFavourites? = nil,
    isOffline: Bool = false
  ) -> TestCore<PropertyLogic, PropertyLogicAction> {
    let favourites = favourites ?? InMemoryFavourites(latency: Self.latency, clock: clock)
    let workers = Dependencies { [clock] in
      $0.propertyAPI = FakePropertyAPI(latency: Self.latency, clock: clock, isOffline: isOffline)
      $0.favourites = favourites
    }
    return TestCore(
      initialState: logic, dependencies: workers, clock: clock, timeout: Self.timeout, reducer: PropertyLogic.reducer)
  }

  // MARK: - The logic, with the test core

  @Test("appearing loads the property, then whether it is saved; save goes through the favourites store and back")
  func loadAndSave() async {
    let favourites = InMemoryFavourites(latency: Self.latency, clock: clock)
    let store = makeStore(favourites: favourites)
    await appear(store, isFavourite: false)
    await store.send(.toggleFavourite) { $0.loading = .favourite }
    await store.send(.toggleFavourite)  // one request at a time: no change
    await answer()
    await store.receive(.favouriteSaved(true)) {
      $0.loading = nil
      $0.isFavourite = true
    }
    #expect(await favourites.saved == [42])
    await store.send(.toggleFavourite) { $0.loading = .favourite }
    await answer()
    await store.receive(.favouriteSaved(false)) {
      $0.loading = nil
      $0.isFavourite = false
    }
    #expect(await favourites.saved == [])
    await store.finish()
  }

  @Test("a saved property appears saved: the store is read as the scene appears")
  func appearsSaved() async {
    let store = makeStore(favourites: InMemoryFavourites(latency: Self.latency, clock: clock, saved: [42]))
    await appear(store, isFavourite: true)
    await store.finish()
  }

  @Test("the logic routes to the contact form and the viewings; back returns, and back from the property closes")
  func routes() async {
    let store = makeStore()
    await store.send(.contactTapped) { $0.error = PropertyLogic.notLoaded }  // not before it is loaded
    await appear(store, isFavourite: false, clearingError: true)
    await store.send(.contactTapped) { $0.route = .contact(title: "Flat on Park Row") }
    await store.send(.backTapped) { $0.route = .property }
    await store.send(.bookViewingTapped) { $0.route = .viewing(title: "Flat on Park Row") }
    await store.send(.backTapped) { $0.route = .property }
    await store.send(.backTapped) { $0.route = .closed }
    await store.finish()
  }

  @Test("an unknown property and an offline API each give an error; nothing can be saved then")
  func errors() async {
    let store = makeStore(PropertyLogic(propertyID: 999))
    await store.send(.onAppear) { $0.loading = .property }
    await answer()
    await store.receive(.failed(PropertyAPIError.notFound(id: 999).description)) {
      $0.loading = nil
      $0.error = "There is no property #999."
    }
    await store.send(.toggleFavourite) { $0.error = PropertyLogic.notLoaded }
    await store.finish()

    let offline = makeStore(isOffline: true)
    await offline.send(.onAppear) { $0.loading = .property }
    await answer()
    await offline.receive(.failed(PropertyAPIError.offline.description)) {
      $0.loading = nil
      $0.error = "The property server is not answering. Try again later."
    }
    await offline.finish()
  }

  // MARK: - Presenter, navigator, input, options

  @Test("the presenter maps the logic state to the display's lines")
  func presenter() {
    let facts = [
      "#42 Flat on Park Row, Leeds", "  2 bedrooms · £1,150 a month", "  A bright flat five minutes from the station.",
    ]
    let hint = "  Type save, contact, book, back, or q."
    var logic = PropertyLogic(propertyID: 42)
    let loading = ["#42", "  … loading", "  Type back or q."]
    #expect(PropertyPresenter.props(logic).lines == loading)  // before it appears: the same as loading
    logic.loading = .property
    #expect(PropertyPresenter.props(logic).lines == loading)
    logic.loading = nil
    logic.error = "no"
    #expect(PropertyPresenter.props(logic).lines == ["#42", "  ! no", "  Type back or q."])
    logic = PropertyLogic(propertyID: 42, property: Self.parkRow)
    #expect(PropertyPresenter.props(logic).lines == facts + ["  ☆ not in your favourites", hint])
    logic.loading = .favourite
    #expect(PropertyPresenter.props(logic).lines == facts + ["  ☆ saving to your favourites…", hint])
    logic.isFavourite = true
    #expect(PropertyPresenter.props(logic).lines == facts + ["  ★ removing from your favourites…", hint])
    logic.loading = nil
    logic.error = "disk full"
    #expect(PropertyPresenter.props(logic).lines == facts + ["  ★ in your favourites", "  ! disk full", hint])
    // A route is the navigator's: the props do not change with it.
    var routed = logic
    routed.route = .contact(title: "Flat on Park Row")
    #expect(PropertyPresenter.props(routed) == PropertyPresenter.props(logic))
    // What the display shows: the props, none while the navigator's screen covers them.
    #expect(PropertyPresenter.shown(logic) == PropertyPresenter.props(logic))
    #expect(PropertyPresenter.shown(routed) == nil)
    routed.route = .closed
    #expect(PropertyPresenter.shown(routed) == nil)
  }

  @Test("the navigator writes the screen each route opens")
  func navigator() async {
    let collector = Collector()
    let navigator = PropertyNavigator(write: collector.write)
    for route: PropertySceneRoute in [.property, .contact(title: "Loft"), .viewing(title: "Loft"), .closed] {
      navigator.navigate(to: route)
    }
    #expect(
      await collector.finish() == [
        "navigator › the property\n",
        "navigator › the contact form: a message to the agent letting Loft. back returns.\n",
        "navigator › viewings of Loft: Saturday 10:00, 11:30 or 14:00. back returns.\n",
        "navigator › the scene is closed\n",
      ])
  }

  @Test("a typed line is a view event, a quit, nothing, or not a command")
  func input() {
    #expect(PropertySceneInput(" Save ", on: .property) == .send(.toggleFavourite))
    #expect(PropertySceneInput("contact", on: .property) == .send(.contactTapped))
    #expect(PropertySceneInput("book\r", on: .property) == .send(.bookViewingTapped))
    #expect(PropertySceneInput("back", on: .property) == .send(.backTapped))
    #expect(PropertySceneInput("quit", on: .property) == .quit && PropertySceneInput("q", on: .property) == .quit)
    #expect(PropertySceneInput(" \t", on: .property) == .ignore)
    #expect(PropertySceneInput(" fly ", on: .property) == .unknown("fly"))
    #expect(
      PropertySceneInput.unknownLine("fly", on: .property)
        == "? \"fly\" is not a command: type save, contact, book, back, or q.")
  }

  @Test("over the contact form and the viewings only back acts; the property's commands are refused, saying why")
  func inputOnTheScreenShown() {
    let contact = PropertySceneRoute.contact(title: "Loft")
    let viewing = PropertySceneRoute.viewing(title: "Loft")
    for route in [contact, viewing] {
      #expect(PropertySceneInput(" Back ", on: route) == .send(.backTapped))
      #expect(PropertySceneInput("q", on: route) == .quit)
      #expect(PropertySceneInput("fly", on: route) == .unknown("fly"))
      for command in ["save", "contact", "book"] {
        #expect(
          PropertySceneInput(command.uppercased(), on: route)
            == .refused(PropertySceneInput.refusal(command, on: route)))
      }
    }
    #expect(
      PropertySceneInput.refusal("save", on: viewing)
        == "? save is not on the viewings screen: type back to return to the property, or q.")
    #expect(
      PropertySceneInput.refusal("book", on: contact)
        == "? book is not on the contact form: type back to return to the property, or q.")
    #expect(
      PropertySceneInput.unknownLine("fly", on: viewing)
        == "? \"fly\" is not a command on the viewings screen: type back to return to the property, or q.")
  }

  @Test("what a screen's lines say to type names exactly the commands that screen takes")
  func hintsNameWhatTheScreenTakes() {
    let commands = ["save", "contact", "book", "back"]
    for route in [PropertySceneRoute.property, .contact(title: "Loft"), .viewing(title: "Loft")] {
      let hint = PropertySceneInput.hint(on: route)
      let named = hint.split(whereSeparator: { !$0.isLetter }).map(String.init).filter(commands.contains)
      let taken = commands.filter { command in
        if case .send = PropertySceneInput(command, on: route) { return true }
        return false
      }
      #expect(Set(named) == Set(taken), "\(route): \(hint)")
      #expect(hint.hasSuffix("or q."))
      #expect(PropertySceneInput.unknownLine("fly", on: route).hasSuffix(": \(hint)"))
      for refused in commands where !taken.contains(refused) {
        #expect(PropertySceneInput.refusal(refused, on: route).hasSuffix(": \(hint)"))
      }
    }
  }

  @Test("options: the property as a number or a property link, commands; a bad link or one to a search is refused")
  func options() throws {
    let defaults = try PropertySceneOptions(arguments: [])
    #expect(defaults.propertyID == 42 && defaults.commands == [] && defaults.latency == .milliseconds(300))
    let link = try PropertySceneOptions(arguments: ["--latency", "0", "asynccore://property/43", "save", "q"])
    #expect(link.propertyID == 43 && link.commands == ["save", "q"] && link.latency == .zero)
    let number = try PropertySceneOptions(arguments: ["61", "--offline"])
    #expect(number.propertyID == 61 && number.isOffline && number.commands == [])
    #expect(try PropertySceneOptions(arguments: ["save", "7"]).commands == ["save", "7"])  // after a command, a command
    #expect(
      throws: PropertySceneOptions.Invalid.link(.invalidParameter(name: "id", value: "x", expected: "an integer"))
    ) {
      try PropertySceneOptions(arguments: ["asynccore://property/x"])
    }
    #expect(throws: PropertySceneOptions.Invalid.notAProperty("asynccore://search?place=Leeds")) {
      try PropertySceneOptions(arguments: ["asynccore://search?place=Leeds"])
    }
    #expect(throws: PropertySceneOptions.Invalid.option("unknown option --fast")) {
      try PropertySceneOptions(arguments: ["--fast"])
    }
    #expect(try PropertySceneOptions(arguments: ["--latency", "3600"]).latency == .seconds(3_600))
    #expect(
      throws: PropertySceneOptions.Invalid.option("--latency takes a number of seconds from 0 to 3600, not \"3601\"")
    ) {
      try PropertySceneOptions(arguments: ["--latency", "3601"])
    }
  }

  // MARK: - The session

  @Test(
    "a session draws props when they change or are uncovered, the navigator on each route, and ends when the scene closes"
  )
  func session() async {
    let collector = Collector()
    let favourites = InMemoryFavourites(latency: .zero, clock: clock)
    let workers = Dependencies { [clock] in
      $0.propertyAPI = FakePropertyAPI(latency: .zero, clock: clock)
      $0.favourites = favourites
    }
    let core = Core(
      initialState: PropertyLogic(propertyID: 42), dependencies: workers, clock: clock,
      reducer: PropertyLogic.reducer)
    let session = PropertySceneSession(core: core, isInteractive: false, write: collector.write)
    let final = await session.run(lines: Self.lines(["save", "contact", "back", "", "fly", "back", "never read"]))
    #expect(final.isFavourite && final.route == .closed)
    #expect(core.hasShutDown && core.metrics.observers == 0)
    #expect(await favourites.saved == [42])

    var logic = PropertyLogic(propertyID: 42)
    func props() -> String { PropertyPresenter.props(logic).lines.map { "\($0)\n" }.joined() }
    var expected = [PropertySceneSession.title + "\n", "navigator › the property\n", props()]
    logic = PropertyLogic(propertyID: 42, property: Self.parkRow)
    expected += [props(), "> save\n"]
    logic.loading = .favourite
    expected.append(props())
    logic.loading = nil
    logic.isFavourite = true
    expected += [props(), "> contact\n"]
    expected += [PropertyNavigator.line(for: .contact(title: "Flat on Park Row")) + "\n", "> back\n"]
    expected += ["navigator › the property\n", props()]  // uncovered, drawn again
    expected += ["> \n", "> fly\n", PropertySceneInput.unknownLine("fly", on: .property) + "\n"]
    expected += ["> back\n", "navigator › the scene is closed\n", "bye: #42 Flat on Park Row, in your favourites\n"]
    #expect(await collector.finish() == expected)
  }

  @Test("save while the viewings are shown is refused, not applied: a command acts only on the screen shown")
  func sessionActsOnlyOnTheScreenShown() async {
    let collector = Collector()
    let (core, favourites) = makeSessionCore()
    let session = PropertySceneSession(core: core, isInteractive: false, write: collector.write)
    let final = await session.run(lines: Self.lines(["book", "save", "book", "contact", "back", "save", "q"]))
    // One save, on the property's screen: the one typed over the viewings did nothing.
    #expect(final.isFavourite && final.route == .property)
    #expect(await favourites.saved == [42])

    let written = transcript(await collector.finish())
    let refused = { (command: String) in
      "? \(command) is not on the viewings screen: type back to return to the property, or q."
    }
    #expect(reply(to: 1, in: written) == [refused("save")])
    #expect(reply(to: 2, in: written) == [refused("book")])  // book twice
    #expect(reply(to: 3, in: written) == [refused("contact")])
    let property = PropertyPresenter.props(PropertyLogic(propertyID: 42, property: Self.parkRow)).lines
    #expect(reply(to: 4, in: written) == ["navigator › the property"] + property)
    #expect(reply(to: 5, in: written).contains("  ★ in your favourites"))
  }

  @Test("back from the contact form or the viewings shows the property again: the navigator's line, then its screen")
  func backShowsThePropertyAgain() async {
    let collector = Collector()
    let (core, _) = makeSessionCore()
    let session = PropertySceneSession(core: core, isInteractive: false, write: collector.write)
    _ = await session.run(lines: Self.lines(["contact", "back", "book", "back", "q"]))

    let written = transcript(await collector.finish())
    let property = PropertyPresenter.props(PropertyLogic(propertyID: 42, property: Self.parkRow)).lines
    // Covered, the property's screen draws nothing under the navigator's.
    #expect(reply(to: 0, in: written) == [PropertyNavigator.line(for: .contact(title: "Flat on Park Row"))])
    #expect(reply(to: 1, in: written) == ["navigator › the property"] + property)
    #expect(reply(to: 2, in: written) == [PropertyNavigator.line(for: .viewing(title: "Flat on Park Row"))])
    #expect(reply(to: 3, in: written) == ["navigator › the property"] + property)
  }

  @Test(
    "a word that is no command is answered with what the screen shown takes: over the viewings and the form, back or q")
  func sessionHintsWhatTheScreenTakes() async {
    let collector = Collector()
    let (core, _) = makeSessionCore()
    let session = PropertySceneSession(core: core, isInteractive: false, write: collector.write)
    _ = await session.run(lines: Self.lines(["book", "fly", "back", "contact", "fly", "back", "fly", "q"]))

    let written = transcript(await collector.finish())
    #expect(
      reply(to: 1, in: written) == [
        "? \"fly\" is not a command on the viewings screen: type back to return to the property, or q."
      ])
    #expect(
      reply(to: 4, in: written) == [
        "? \"fly\" is not a command on the contact form: type back to return to the property, or q."
      ])
    #expect(reply(to: 6, in: written) == ["? \"fly\" is not a command: type save, contact, book, back, or q."])
  }

  @Test("the same mistake twice prints its error twice: every command gets a visible answer")
  func sessionAnswersARepeatedMistake() async {
    let collector = Collector()
    let (core, favourites) = makeSessionCore(propertyID: 999)  // not in the catalogue: never loaded
    let session = PropertySceneSession(core: core, isInteractive: false, write: collector.write)
    _ = await session.run(lines: Self.lines(["save", "save", "book", "q"]))
    #expect(await favourites.saved == [])

    let written = transcript(await collector.finish())
    let notLoaded = "  ! \(PropertyLogic.notLoaded)"
    #expect(reply(to: 0, in: written) == ["#999", notLoaded, "  Type back or q."])  // the props changed
    #expect(reply(to: 1, in: written) == [notLoaded])  // they did not: the error again
    #expect(reply(to: 2, in: written) == [notLoaded])
  }

  // MARK: - The program

  @Test("`printf 'save\\ncontact\\nback\\n' | swift run PropertyScene` saves, opens the contact form, ends at the end")
  func programWithPipedInput() async throws {
    let program = try ExampleProgram.start(
      "PropertyScene", arguments: ["--latency", "0.01"], input: "save\ncontact\nback\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    #expect(lines.first == PropertySceneSession.title)
    for line in [
      "#42 Flat on Park Row, Leeds", "  ☆ saving to your favourites…", "  ★ in your favourites",
      "navigator › the contact form: a message to the agent letting Flat on Park Row. back returns.",
    ] {
      #expect(lines.contains(line), "missing: \(line)")
    }
    let saved = PropertyPresenter.props(PropertyLogic(propertyID: 42, property: Self.parkRow, isFavourite: true))
    #expect(
      Array(lines.suffix(7))
        == ["navigator › the property"] + saved.lines + ["bye: #42 Flat on Park Row, in your favourites"])
  }

  @Test("a property link and commands from the command line; a bad link exits with status 2 and its DeepLinkError")
  func programWithLinks() async throws {
    let program = try ExampleProgram.start(
      "PropertyScene", arguments: ["--latency", "0", "asynccore://property/61", "book", "back", "back"],
      input: "save\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    #expect(
      lines.contains(
        "navigator › viewings of Georgian flat on the Circus: Saturday 10:00, 11:30 or 14:00. back returns."))
    #expect(
      lines.suffix(2) == [
        "navigator › the scene is closed", "bye: #61 Georgian flat on the Circus, not in your favourites",
      ])

    let refused = try ExampleProgram.start("PropertyScene", arguments: ["asynccore://property/61/photos"])
    defer { refused.terminate() }
    #expect(await refused.allLines() == ["PropertyScene: cannot open the link: no rule matches the path \"photos\""])
    #expect(await refused.exitStatus() == .exited(2))
  }

  @Test("Ctrl-C during the first load ends the session at once, without the property: the bye line, status 0")
  func programSaysByeOnInterruptDuringTheFirstLoad() async throws {
    // A load of an hour: the session could only end by not waiting for it.
    let rest = try await linesAfterInterrupt(
      "PropertyScene", arguments: ["--latency", "3600"], after: "  … loading", bye: "bye: #42 not loaded")
    #expect(!rest.contains { $0.contains("Flat on Park Row") })
  }

  @Test("typed control characters are echoed escaped, and a 200 KB line bounded; so is a bad option")
  func programEscapesTypedLines() async throws {
    let long = String(repeating: "save", count: 50_000)
    let program = try ExampleProgram.start(
      "PropertyScene", arguments: ["--latency", "0"], input: "\u{1B}[2J\u{200B}fly\n\(long)\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    expectSafeToShow(lines)
    #expect(lines.contains("> \\u{1B}[2J\\u{200B}fly"))
    #expect(lines.contains(PropertySceneInput.unknownLine("\u{1B}[2J\u{200B}fly", on: .property)))
    #expect(
      PropertySceneInput.unknownLine("\u{1B}[2J\u{200B}fly", on: .property).contains("\"\\u{1B}[2J\\u{200B}fly\""))
    #expect(lines.contains("> \(long.prefix(EchoLimit.input))…"))
    #expect(lines.joined().utf8.count < 5_000)

    let refused = try ExampleProgram.start("PropertyScene", arguments: ["--latency", "\u{1B}[2J"])
    defer { refused.terminate() }
    #expect(
      await refused.allLines().first
        == "PropertyScene: --latency takes a number of seconds from 0 to 3600, not \"\\u{1B}[2J\"")
    #expect(await refused.exitStatus() == .exited(2))
  }

  // MARK: - Helpers

  /// The scene appears: the API answers, then the favourites store.
  func appear(
    _ store: TestCore<PropertyLogic, PropertyLogicAction>, isFavourite: Bool, clearingError: Bool = false,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    await store.send(
      .onAppear,
      assert: {
        $0.loading = .property
        if clearingError { $0.error = nil }
      }, sourceLocation: sourceLocation)
    await answer(sourceLocation: sourceLocation)  // the property
    await answer(sourceLocation: sourceLocation)  // whether it is saved
    await store.receive(
      .loaded(Self.parkRow, isFavourite: isFavourite),
      assert: {
        $0.loading = nil
        $0.property = Self.parkRow
        $0.isFavourite = isFavourite
      }, sourceLocation: sourceLocation)
  }

  /// The worker asked answers.
  func answer(sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
      try await clock.waitForSleepers(atLeast: 1)
    } catch {
      Issue.record("gave up waiting for a worker to be asked", sourceLocation: sourceLocation)
    }
    await clock.advance(by: Self.latency)
  }

  /// A core for a session, its workers answering at once.
  func makeSessionCore(propertyID: Int = 42) -> (Core<PropertyLogic, PropertyLogicAction>, InMemoryFavourites) {
    let favourites = InMemoryFavourites(latency: .zero, clock: clock)
    let workers = Dependencies { [clock] in
      $0.propertyAPI = FakePropertyAPI(latency: .zero, clock: clock)
      $0.favourites = favourites
    }
    let core = Core(
      initialState: PropertyLogic(propertyID: propertyID), dependencies: workers, clock: clock,
      reducer: PropertyLogic.reducer)
    return (core, favourites)
  }

  static func lines(_ lines: [String]) -> AsyncStream<String> {
    AsyncStream { continuation in
      for line in lines { continuation.yield(line) }
      continuation.finish()
    }
  }
}

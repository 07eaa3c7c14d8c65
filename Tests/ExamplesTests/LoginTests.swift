import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreLoginExample
import AsyncCoreTesting
import Testing

@Suite("Login example", .hangDetector)
struct LoginTests {
  /// The core's clock: the countdown.
  let clock = ManualClock()
  /// The fake network's: its latency. A clock of its own, so that an
  /// answer and a tick never come at the same time unless a test says so.
  let network = ManualClock()
  static let latency = Duration.milliseconds(800)
  static let phone = "555 0100"
  /// The codes the fake server sends, in turn.
  static let codes = ["424242", "515151"]
  /// A bound on each wait for an effect, generous for CI's sanitizer runs;
  /// a passing wait ends as soon as its action comes.
  static let timeout = Duration.seconds(30)

  func makeServer(
    latency: Duration = LoginTests.latency, deliver: @escaping @Sendable (SMS) async -> Void = { _ in }
  ) -> FakeOTPServer {
    FakeOTPServer(latency: latency, clock: network, codes: { Self.codes[$0 % Self.codes.count] }, deliver: deliver)
  }

  func makeStore(_ server: FakeOTPServer) -> TestCore<Login, LoginAction> {
    TestCore(
      initialState: Login(), dependencies: Dependencies { $0.otpServer = server }, clock: clock,
      timeout: Self.timeout, reducer: Login.reducer)
  }

  // MARK: - The flow, with the test core

  @Test(
    "a number is checked before anything is sent; a valid one is sent with a loading flag, and the code opens the code screen"
  )
  func phoneScreen() async throws {
    let server = makeServer()
    let store = makeStore(server)
    await store.send(.phone(.submit("12"))) {
      $0.phoneEntry.number = "12"
      $0.phoneEntry.error = "\"12\" has 2 digits: a phone number has 7 to 15."
    }
    await store.send(.phone(.submit("  \(Self.phone) "))) {
      $0.phoneEntry.number = Self.phone
      $0.phoneEntry.isLoading = true
      $0.phoneEntry.error = nil
    }
    await store.send(.phone(.submit("555 0199")))  // one request at a time: no change
    await answer()
    await store.receive(.phone(.codeSent(phone: Self.phone))) {
      $0.phoneEntry.isLoading = false
      $0.stack = [.code(phone: Self.phone)]
      $0.codeEntry = CodeEntry(phone: Self.phone, secondsLeft: 60)
    }
    await store.receive(.code(.startCountdown))
    #expect(await server.outbox == [SMS(to: Self.phone, text: "Your AsyncCore code is 424242")])
    await store.skipInFlightEffects()  // the countdown
    await store.finish()
  }

  @Test("the countdown ticks once a second; resend is refused until it ends, then sends a new code and starts it again")
  func countdownAndResend() async throws {
    let server = makeServer()
    let store = makeStore(server)
    await openCodeScreen(store)
    await tick(store, to: 59)
    await store.send(.code(.resend)) { $0.codeEntry?.error = CodeEntry.tooEarly }
    for second in (0...58).reversed() { await tick(store, to: second) }
    #expect(clock.sleeperCount == 0)  // the countdown has ended
    await store.send(.code(.resend)) {
      $0.codeEntry?.loading = .resending
      $0.codeEntry?.error = nil
    }
    await answer()
    await store.receive(.code(.codeResent)) {
      $0.codeEntry?.loading = nil
      $0.codeEntry?.secondsLeft = 60
    }
    #expect(await server.outbox.map(\.text) == ["Your AsyncCore code is 424242", "Your AsyncCore code is 515151"])
    await tick(store, to: 59)
    await store.send(.code(.resend)) { $0.codeEntry?.error = CodeEntry.tooEarly }
    await store.skipInFlightEffects()
    await store.finish()
  }

  @Test("a wrong code shows an error; the right one goes home, and the countdown ends with the code screen")
  func wrongThenRightCode() async throws {
    let store = makeStore(makeServer())
    await openCodeScreen(store)
    await store.send(.code(.submit("12 34"))) { $0.codeEntry?.error = CodeEntry.malformed("1234") }
    await store.send(.code(.submit("000000"))) {
      $0.codeEntry?.code = "000000"
      $0.codeEntry?.loading = .verifying
      $0.codeEntry?.error = nil
    }
    await answer()
    await store.receive(.code(.codeRejected)) {
      $0.codeEntry?.loading = nil
      $0.codeEntry?.error = CodeEntry.wrong("000000")
    }
    await store.send(.code(.submit("424242"))) {
      $0.codeEntry?.code = "424242"
      $0.codeEntry?.loading = .verifying
      $0.codeEntry?.error = nil
    }
    await answer()
    await store.receive(.code(.codeAccepted)) {
      $0.stack = [.home(phone: Self.phone)]
      $0.codeEntry = nil
    }
    #expect(store.state.signedInPhone == Self.phone)
    // Nothing left running: finish() records the countdown if it still were.
    await store.finish()
    #expect(clock.sleeperCount == 0 && network.sleeperCount == 0)
  }

  @Test("after three wrong codes the server gives the code up; its error is shown and the code no longer works")
  func tooManyWrongCodes() async throws {
    let store = makeStore(makeServer())
    await openCodeScreen(store)
    for attempt in 1...FakeOTPServer.maximumWrongAttempts {
      await store.send(.code(.submit("00000\(attempt)"))) {
        $0.codeEntry?.code = "00000\(attempt)"
        $0.codeEntry?.loading = .verifying
        $0.codeEntry?.error = nil
      }
      await answer()
      if attempt < FakeOTPServer.maximumWrongAttempts {
        await store.receive(.code(.codeRejected)) {
          $0.codeEntry?.loading = nil
          $0.codeEntry?.error = CodeEntry.wrong("00000\(attempt)")
        }
      } else {
        await store.receive(.code(.failed(OTPServerError.tooManyAttempts.description))) {
          $0.codeEntry?.loading = nil
          $0.codeEntry?.error = "Too many wrong codes: this one no longer works. Type resend for a new one."
        }
      }
    }
    await store.send(.code(.submit("424242"))) {
      $0.codeEntry?.code = "424242"
      $0.codeEntry?.loading = .verifying
      $0.codeEntry?.error = nil
    }
    await answer()
    await store.receive(.code(.failed(OTPServerError.noCode.description))) {
      $0.codeEntry?.loading = nil
      $0.codeEntry?.error = OTPServerError.noCode.description
    }
    #expect(store.state.stack == [.code(phone: Self.phone)])
    await store.skipInFlightEffects()
    await store.finish()
  }

  @Test("back from the code screen cancels its countdown and the request in flight; the number stays")
  func backCancelsTheCodeScreen() async throws {
    let store = makeStore(makeServer())
    await openCodeScreen(store)
    await store.send(.code(.submit("424242"))) {
      $0.codeEntry?.code = "424242"
      $0.codeEntry?.loading = .verifying
    }
    try await network.waitForSleepers(atLeast: 1)  // the server checks it
    await store.send(.navigation(.pop)) {
      $0.stack = []
      $0.codeEntry = nil
    }
    #expect(store.state.phoneEntry.number == Self.phone)
    await store.finish()  // both effects were cancelled: none answers
    #expect(clock.sleeperCount == 0 && network.sleeperCount == 0)
  }

  // MARK: - Screens, input, options

  @Test("each screen is drawn from the state: phone, loading, code with its countdown, error and SMS, home")
  func screens() {
    let header = [LoginScreen.title]
    var login = Login()
    #expect(
      LoginScreen(login).lines
        == header + [
          "Phone", "", "  Phone number:", "", "",
          "  Type a phone number, then Enter. report FILE writes a bug report; q quits.",
        ])
    login.phoneEntry = PhoneEntry(number: Self.phone, isLoading: true)
    #expect(LoginScreen(login).lines[3...4] == ["  Phone number: 555 0100", "  … sending a code to 555 0100"])
    login.phoneEntry = PhoneEntry(number: "12", error: "no")
    #expect(LoginScreen(login).lines[4] == "  ! no")

    login = Login(codeEntry: CodeEntry(phone: Self.phone, secondsLeft: 42), stack: [.code(phone: Self.phone)])
    let sms = SMS(to: Self.phone, text: "Your AsyncCore code is 424242")
    let code = LoginScreen(login, sms: sms)
    #expect(
      code.lines
        == header + [
          "Phone › Code", "",
          "  We sent a 6-digit code to 555 0100.",
          "  Resend in 0:42",
          "",
          "",
          "  [fake SMS to 555 0100] Your AsyncCore code is 424242",
          "  Type the code and press Enter, or resend, back, q.",
        ])
    #expect(code.countdownLine == 4)
    // An SMS to another number is not shown; the countdown reads m:ss.
    login.codeEntry?.secondsLeft = 60
    #expect(!LoginScreen(login, sms: SMS(to: "555 0199", text: "x")).lines.contains { $0.contains("fake SMS") })
    #expect(LoginScreen(login).lines[4] == "  Resend in 1:00")
    login.codeEntry?.secondsLeft = 0
    login.codeEntry?.error = CodeEntry.tooEarly
    #expect(LoginScreen(login).lines[4...5] == ["  No code? Type resend for a new one.", "  ! \(CodeEntry.tooEarly)"])
    login.codeEntry?.code = "000000"
    login.codeEntry?.loading = .verifying
    #expect(LoginScreen(login).lines[5] == "  … checking 000000")
    login.codeEntry?.loading = .resending
    #expect(LoginScreen(login).lines[5] == "  … sending a new code to 555 0100")

    login = Login(stack: [.home(phone: Self.phone)])
    #expect(
      LoginScreen(login).lines
        == header + ["Phone › Home", "", "  Welcome home! You are signed in as 555 0100.", "", "  q quits."])
    #expect(LoginScreen(login).countdownLine == nil)
  }

  @Test("a typed line means what the screen shown asks for")
  func input() {
    let phoneScreen = Login()
    let codeScreen = Login(codeEntry: CodeEntry(phone: Self.phone), stack: [.code(phone: Self.phone)])
    let home = Login(stack: [.home(phone: Self.phone)])
    #expect(LoginInput(" 555 0100 ", on: phoneScreen) == .send(.phone(.submit("555 0100"))))
    #expect(LoginInput("resend", on: phoneScreen) == .send(.phone(.submit("resend"))))
    #expect(LoginInput("424242", on: codeScreen) == .send(.code(.submit("424242"))))
    #expect(LoginInput(" Resend", on: codeScreen) == .send(.code(.resend)))
    #expect(LoginInput("back", on: codeScreen) == .send(.navigation(.pop)))
    #expect(LoginInput("424242", on: home) == .ignore)
    for state in [phoneScreen, codeScreen, home] {
      #expect(LoginInput("q", on: state) == .quit)
      #expect(LoginInput("quit", on: state) == .quit)
      #expect(LoginInput("  ", on: state) == .ignore)
    }
  }

  @Test(
    "phone numbers: 7 to 15 digits, with spaces, +, -, . and parentheses",
    arguments: [
      ("+1 (555) 010-0100", nil),
      ("555.0100", nil),
      ("", "Type a phone number first."),
      ("555 01", "\"555 01\" has 5 digits: a phone number has 7 to 15."),
      ("1234567890123456", "\"1234567890123456\" has 16 digits: a phone number has 7 to 15."),
      ("555-CALL-NOW", "\"555-CALL-NOW\" is not a phone number: it has \"C\" in it."),
      ("５５５０１００", "\"５５５０１００\" is not a phone number: it has \"５\" in it."),
    ] as [(String, String?)])
  func phoneNumbers(number: String, problem: String?) {
    #expect(PhoneEntry.problem(with: number) == problem)
  }

  @Test("options: a fixed code, a latency, a countdown; anything else is refused with what is wrong")
  func options() throws {
    let defaults = try LoginOptions(arguments: [])
    #expect(defaults.code == nil && defaults.latency == .seconds(1) && defaults.countdown == 60 && !defaults.showsHelp)
    #expect(try LoginOptions(arguments: ["--countdown", "3600"]).countdown == 3_600)
    for countdown in ["0", "3601", "1.5"] {
      #expect(
        throws: LoginOptions.Invalid(
          description: "--countdown takes a whole number of seconds from 1 to 3600, not \"\(countdown)\"")
      ) {
        try LoginOptions(arguments: ["--countdown", countdown])
      }
    }
    let options = try LoginOptions(arguments: ["--code", "424242", "--latency", "0.25"])
    #expect(options.code == "424242" && options.latency == .milliseconds(250) && !options.showsHelp)
    #expect(try LoginOptions(arguments: ["-h"]).showsHelp)
    #expect(throws: LoginOptions.Invalid(description: "--code takes 6 digits, not \"4242\"")) {
      try LoginOptions(arguments: ["--code", "4242"])
    }
    // Up to an hour: a request that lasts while the user presses Ctrl-C.
    #expect(try LoginOptions(arguments: ["--latency", "3600"]).latency == .seconds(3_600))
    for latency in ["-1", "3601"] {
      #expect(
        throws: LoginOptions.Invalid(
          description: "--latency takes a number of seconds from 0 to 3600, not \"\(latency)\"")
      ) {
        try LoginOptions(arguments: ["--latency", latency])
      }
    }
    #expect(throws: LoginOptions.Invalid(description: "--code needs a value")) {
      try LoginOptions(arguments: ["--code"])
    }
    #expect(throws: LoginOptions.Invalid(description: "unknown option --fast")) {
      try LoginOptions(arguments: ["--fast"])
    }
  }

  // MARK: - The display and the session

  @Test(
    "on a terminal a new screen is drawn whole; a countdown tick redraws its line alone, leaving the typing in place")
  func terminalDrawing() async {
    let collector = Collector()
    let display = LoginDisplay(isTerminal: true, write: collector.write)
    var login = Login(codeEntry: CodeEntry(phone: Self.phone), stack: [.code(phone: Self.phone)])
    await display.show(login)
    login.codeEntry?.secondsLeft = 59
    await display.show(login)
    login.codeEntry?.error = CodeEntry.tooEarly
    await display.show(login)
    await display.show(login)  // the same screen: nothing drawn
    await display.close("bye: not signed in")
    let writes = await collector.finish()
    let clear = "\u{1B}[H\u{1B}[2J"
    #expect(writes.count == 4)
    #expect(writes[0] == clear + (LoginScreen(Self.codeScreen(60)).lines + ["> "]).joined(separator: "\n"))
    #expect(writes[1] == "\u{1B}7\u{1B}[5;1H\u{1B}[2K  Resend in 0:59\u{1B}8")
    #expect(writes[2] == clear + (LoginScreen(login).lines + ["> "]).joined(separator: "\n"))
    #expect(writes[3] == "\r\u{1B}[Kbye: not signed in\n")

    // What a person sees: typing after the prompt stays while the countdown moves.
    var screen = VirtualScreen()
    // A terminal turns each \n into \r\n (the pseudo-terminal does it for the program).
    screen.feed((writes[0] + "4242" + writes[1]).replacing("\n", with: "\r\n").utf8)
    #expect(screen.lines == LoginScreen(Self.codeScreen(59)).lines + ["> 4242"])
  }

  @Test("on a pipe every screen is written whole, a countdown tick's too: never a line out of its screen")
  func pipeDrawing() async {
    let collector = Collector()
    let display = LoginDisplay(isTerminal: false, write: collector.write)
    await display.show(Self.codeScreen(60))
    await display.show(Self.codeScreen(59))
    await display.show(Self.codeScreen(59))  // the same screen: nothing written
    let writes = await collector.finish()
    let screen = { (seconds: Int) in LoginScreen(Self.codeScreen(seconds)).lines.joined(separator: "\n") }
    #expect(writes == [screen(60) + "\n", "\n" + screen(59) + "\n"])
  }

  @Test("after a line that changes nothing, the terminal's prompt is drawn again")
  func promptAfterAnUnchangedScreen() async {
    let collector = Collector()
    let display = LoginDisplay(isTerminal: true, write: collector.write)
    await display.show(Login())
    await display.lineRead()
    await display.lineHandled()  // nothing was drawn since the Enter
    await display.lineRead()
    await display.show(Login(phoneEntry: PhoneEntry(number: "12", error: "no")))
    await display.lineHandled()  // drawn already
    let writes = await collector.finish()
    #expect(writes.count == 3)
    #expect(writes[0] == writes[1])
  }

  @Test(
    "a session over piped lines draws each screen in order, ends home at the end of input, and leaves nothing running")
  func sessionToHome() async {
    let collector = Collector()
    let display = LoginDisplay(isTerminal: false, write: collector.write)
    let server = makeServer(latency: .zero, deliver: { await display.deliver($0) })
    let core = Core(
      initialState: Login(), dependencies: Dependencies { $0.otpServer = server }, clock: clock, reducer: Login.reducer)
    let final = await LoginSession(core: core, display: display)
      .run(lines: Self.lines(["555 0100", "", "000000", "424242"]))
    #expect(final.signedInPhone == Self.phone)

    // Each state's screen, as written on a pipe.
    let sms = SMS(to: Self.phone, text: "Your AsyncCore code is 424242")
    var code = Self.codeScreen(60)
    var screens = [Login(), Login(phoneEntry: PhoneEntry(number: Self.phone, isLoading: true))].map { LoginScreen($0) }
    screens.append(LoginScreen(code, sms: sms))
    code.codeEntry?.code = "000000"
    code.codeEntry?.loading = .verifying
    screens.append(LoginScreen(code, sms: sms))
    code.codeEntry?.loading = nil
    code.codeEntry?.error = CodeEntry.wrong("000000")
    screens.append(LoginScreen(code, sms: sms))
    code.codeEntry?.code = "424242"
    code.codeEntry?.loading = .verifying
    code.codeEntry?.error = nil
    screens.append(LoginScreen(code, sms: sms))
    screens.append(LoginScreen(final))
    let expected = screens.enumerated().map { ($0 == 0 ? "" : "\n") + $1.lines.joined(separator: "\n") + "\n" }
    #expect(await collector.finish() == expected + ["bye: signed in as 555 0100\n"])
    #expect(core.hasShutDown)
    #expect(core.metrics.observers == 0)
    #expect(clock.sleeperCount == 0)
  }

  @Test("the end of input on the code screen ends the session at once: the countdown is cancelled, not waited for")
  func sessionEndsDuringTheCountdown() async throws {
    let server = makeServer(latency: .zero)
    let collector = Collector()
    let core = Core(
      initialState: Login(), dependencies: Dependencies { $0.otpServer = server }, clock: clock, reducer: Login.reducer)
    let session = LoginSession(core: core, display: LoginDisplay(isTerminal: false, write: collector.write))
    let (lines, input) = AsyncStream.makeStream(of: String.self)
    let running = Task { await session.run(lines: lines) }
    input.yield(Self.phone)
    try await clock.waitForSleepers(atLeast: 1)  // the countdown runs
    input.finish()
    let final = await running.value
    #expect(final.codeEntry?.secondsLeft == 60)
    #expect(core.hasShutDown)
    #expect(clock.sleeperCount == 0)
    #expect(await collector.finish().last == "bye: not signed in\n")
  }

  // MARK: - The program

  @Test("`printf '555 0100\\n000000\\n424242\\n' | swift run Login --code 424242` goes home and ends with the input")
  func programWithPipedInput() async throws {
    let program = try ExampleProgram.start(
      "Login", arguments: ["--code", "424242", "--latency", "0.05"], input: "555 0100\n000000\n424242\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    #expect(lines.first == LoginScreen.title)
    for line in [
      "  … sending a code to 555 0100", "  [fake SMS to 555 0100] Your AsyncCore code is 424242",
      "  ! \(CodeEntry.wrong("000000"))", "  Welcome home! You are signed in as 555 0100.",
    ] {
      #expect(lines.contains(line), "missing: \(line)")
    }
    #expect(lines.last == "bye: signed in as 555 0100")
    // That ending cancels the countdown rather than waiting 60 seconds for
    // it is shown on a manual clock, where it cannot depend on the
    // machine's speed: `sessionEndsDuringTheCountdown` and `sessionToHome`.
  }

  @Test("`q` on the code screen quits at once, countdown running; a bad option exits with status 2")
  func programQuitsAndRefusesBadOptions() async throws {
    let program = try ExampleProgram.start("Login", arguments: ["--latency", "0"], input: "555 0100\nq\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    #expect(lines.contains("  Resend in 1:00"))
    #expect(lines.last == "bye: not signed in")

    let refused = try ExampleProgram.start("Login", arguments: ["--code", "12"])
    defer { refused.terminate() }
    let output = await refused.allLines()
    #expect(await refused.exitStatus() == .exited(2))
    #expect(output.first == "Login: --code takes 6 digits, not \"12\"")
  }

  @Test(
    "in a terminal: a person types a number, resend too early, a wrong code, then the code from the SMS, and gets home")
  func programInATerminal() async throws {
    // A random code and a 1-second network, as by default; an hour's
    // countdown, so that it still runs however slow the machine is.
    let program = try TerminalProgram.start("Login", arguments: ["--countdown", "3600"])
    defer { program.terminate() }
    let isPrompt: ([String]) -> Bool = { $0.last == ">" }

    try await program.waitForScreen("the phone screen") { $0 == LoginScreen(Login()).lines + [">"] }
    program.type("\(Self.phone)\n")
    let codeScreen = try await program.waitForScreen("the code screen with the SMS") { screen in
      isPrompt(screen) && screen.contains { $0.hasPrefix("  [fake SMS to 555 0100] Your AsyncCore code is ") }
    }
    #expect(program.transcript.contains("  … sending a code to 555 0100"))  // the loading indicator was drawn
    #expect(
      Array(codeScreen.prefix(4)) == [
        "AsyncCore · one-time password login", "Phone › Code", "", "  We sent a 6-digit code to 555 0100.",
      ])
    let smsLine = try #require(codeScreen.first(where: { $0.contains("[fake SMS to") }))
    let code = String(smsLine.suffix(CodeEntry.codeLength))
    try #require(code.allSatisfy({ $0.isNumber }), "no code at the end of \(smsLine)")

    program.type("resend\n")
    try await program.waitForScreen("resend refused") { isPrompt($0) && $0.contains("  ! \(CodeEntry.tooEarly)") }

    let wrong = code == "000000" ? "111111" : "000000"
    program.type("\(wrong)\n")
    try await program.waitForScreen("the wrong code's error") {
      isPrompt($0) && $0.contains("  ! \(CodeEntry.wrong(wrong))")
    }
    #expect(program.transcript.contains("  … checking \(wrong)"))

    // Half the code typed: the countdown ticks above it, and it stays.
    let prefix = String(code.prefix(2))
    program.type(prefix)
    let typing = try await program.waitForScreen("the typing") { $0.last == "> \(prefix)" }
    let countdown = try #require(typing.first(where: { $0.hasPrefix("  Resend in ") }))
    try await program.waitForScreen("the countdown ticking under the typing") { screen in
      screen.last == "> \(prefix)" && !screen.contains(countdown) && screen.contains { $0.hasPrefix("  Resend in ") }
    }
    program.type("\(code.dropFirst(2))\n")
    let home = Login(stack: [.home(phone: Self.phone)])
    try await program.waitForScreen("the home screen") { $0 == LoginScreen(home).lines + [">"] }

    program.type("q\n")
    #expect(try await program.exitStatus() == .exited(0))
    #expect(program.screen == LoginScreen(home).lines + ["> q", "bye: signed in as 555 0100"])
  }

  @Test("a typed number with escapes, and a 200 KB one, are shown escaped and bounded; so is a bad option")
  func programEscapesTypedNumbers() async throws {
    let long = String(repeating: "5", count: 200_000)
    let program = try ExampleProgram.start(
      "Login", arguments: ["--latency", "0"], input: "555\u{1B}[2J0100\n\(long)\n")
    defer { program.terminate() }
    let lines = await program.allLines()
    #expect(await program.exitStatus() == .exited(0))
    expectSafeToShow(lines)
    #expect(lines.contains("  Phone number: 555\\u{1B}[2J0100"))
    #expect(lines.contains("  ! \"555\\u{1B}[2J0100\" is not a phone number: it has \"\\u{1B}\" in it."))
    #expect(lines.contains("  Phone number: \(long.prefix(EchoLimit.input))…"))

    let refused = try ExampleProgram.start("Login", arguments: ["--code", "\u{1B}[2J"])
    defer { refused.terminate() }
    #expect(await refused.allLines().first == "Login: --code takes 6 digits, not \"\\u{1B}[2J\"")
    #expect(await refused.exitStatus() == .exited(2))
  }

  @Test("Ctrl-C once the first screen is drawn ends the session as q does: the bye line, status 0")
  func programSaysByeOnInterrupt() async throws {
    let program = try ExampleProgram.start("Login", keepingInputOpen: true)
    defer { program.terminate() }
    let lastLine = LoginScreen(Login()).lines.last
    var lines = program.output.makeAsyncIterator()
    var seen: [String] = []
    while let line = await lines.next() {
      seen.append(line)
      if line == lastLine { break }
    }
    try #require(seen.last == lastLine, "the program ended before its first screen: \(seen)")
    program.interrupt()
    var rest: [String] = []
    while let line = await lines.next() { rest.append(line) }
    let status = await program.exitStatus()
    #expect(status == .exited(0))
    #expect(rest == ["bye: not signed in"])
  }

  @Test("Ctrl-C while a request runs ends the session at once, without its answer: the bye line, status 0")
  func programSaysByeOnInterruptDuringARequest() async throws {
    // A request of an hour: the session could only end by not waiting for it.
    let rest = try await linesAfterInterrupt(
      "Login", arguments: ["--latency", "3600"], typing: "\(Self.phone)\n",
      after: "  … sending a code to \(Self.phone)", bye: "bye: not signed in")
    #expect(!rest.contains { $0.contains("We sent a 6-digit code") })
  }

  // MARK: - Helpers

  /// The code screen just opened, `secondsLeft` to go.
  static func codeScreen(_ secondsLeft: Int) -> Login {
    Login(
      phoneEntry: PhoneEntry(number: phone), codeEntry: CodeEntry(phone: phone, secondsLeft: secondsLeft),
      stack: [.code(phone: phone)])
  }

  /// From the phone screen to the code screen, its countdown started.
  func openCodeScreen(_ store: TestCore<Login, LoginAction>, sourceLocation: SourceLocation = #_sourceLocation) async {
    await store.send(
      .phone(.submit(Self.phone)),
      assert: {
        $0.phoneEntry.number = Self.phone
        $0.phoneEntry.isLoading = true
      }, sourceLocation: sourceLocation)
    await answer(sourceLocation: sourceLocation)
    await store.receive(
      .phone(.codeSent(phone: Self.phone)),
      assert: {
        $0.phoneEntry.isLoading = false
        $0.stack = [.code(phone: Self.phone)]
        $0.codeEntry = CodeEntry(phone: Self.phone)
      }, sourceLocation: sourceLocation)
    await store.receive(.code(.startCountdown), sourceLocation: sourceLocation)
  }

  /// One second passes: the countdown shows `secondsLeft`.
  func tick(
    _ store: TestCore<Login, LoginAction>, to secondsLeft: Int, sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    await waitForSleeper(on: clock, "the countdown", sourceLocation: sourceLocation)
    await clock.advance(by: .seconds(1))
    await store.receive(
      .code(.tick), assert: { $0.codeEntry?.secondsLeft = secondsLeft }, sourceLocation: sourceLocation)
  }

  /// The server answers the request in flight.
  func answer(sourceLocation: SourceLocation = #_sourceLocation) async {
    await waitForSleeper(on: network, "a request to the server", sourceLocation: sourceLocation)
    await network.advance(by: Self.latency)
  }

  /// Waits until a task sleeps on `clock`; the test's time limit cancels a
  /// wait that never ends, and it is recorded.
  func waitForSleeper(on clock: ManualClock, _ what: String, sourceLocation: SourceLocation) async {
    do {
      try await clock.waitForSleepers(atLeast: 1)
    } catch {
      Issue.record("gave up waiting for \(what) to sleep on its clock", sourceLocation: sourceLocation)
    }
  }

  static func lines(_ lines: [String]) -> AsyncStream<String> {
    AsyncStream { continuation in
      for line in lines { continuation.yield(line) }
      continuation.finish()
    }
  }
}

import AsyncCoreCounterExample
import AsyncCoreExampleSupport
import AsyncCoreLoginExample
import AsyncCoreNavigation
import AsyncCorePropertySearchExample
import Foundation
import Testing

/// The examples' states and actions as JSON, which a recording of them (a
/// bug report) is written in: each value of every case reads back equal.
@Suite("Examples' states and actions as JSON")
struct ExampleCodableTests {
  // MARK: - Counter

  static let counterActions: [CounterAction] = [.increment, .decrement, .setStep(-3), .reset]

  @Test("each Counter action, and a counter, read back equal from JSON")
  func counter() throws {
    #expect(Set(Self.counterActions.map(Self.caseName)).count == 4)
    try Self.expectRoundTrips(Self.counterActions)
    try Self.expectRoundTrips([Counter(), Counter(count: -7, step: 5)])
  }

  static func caseName(_ action: CounterAction) -> String {
    switch action {  // no default: a new case does not compile until it is listed above
    case .increment: "increment"
    case .decrement: "decrement"
    case .setStep: "setStep"
    case .reset: "reset"
    }
  }

  // MARK: - Login

  static let loginActions: [LoginAction] = [
    .phone(.submit("555 0100")), .phone(.codeSent(phone: "555 0100")), .phone(.failed("offline")),
    .code(.startCountdown), .code(.tick), .code(.submit("424242")), .code(.codeAccepted), .code(.codeRejected),
    .code(.resend), .code(.codeResent), .code(.failed("Too many wrong codes")),
    .navigation(.push(.code(phone: "555 0100"))), .navigation(.pop), .navigation(.popToRoot),
    .navigation(.replace(.home(phone: "555 0100"))), .navigation(.set([.code(phone: "1"), .home(phone: "1")])),
  ]

  static func caseName(_ action: LoginAction) -> String {
    switch action {
    case .phone(.submit): "phone.submit"
    case .phone(.codeSent): "phone.codeSent"
    case .phone(.failed): "phone.failed"
    case .code(.startCountdown): "code.startCountdown"
    case .code(.tick): "code.tick"
    case .code(.submit): "code.submit"
    case .code(.codeAccepted): "code.codeAccepted"
    case .code(.codeRejected): "code.codeRejected"
    case .code(.resend): "code.resend"
    case .code(.codeResent): "code.codeResent"
    case .code(.failed): "code.failed"
    case .navigation(let action): "navigation.\(navigationCaseName(action))"
    }
  }

  @Test("each Login action, and a login on each screen with each loading state, read back equal from JSON")
  func login() throws {
    #expect(Set(Self.loginActions.map(Self.caseName)).count == 16)
    try Self.expectRoundTrips(Self.loginActions)
    try Self.expectRoundTrips([
      Login(),
      Login(phoneEntry: PhoneEntry(number: "12", isLoading: false, error: "\"12\" has 2 digits")),
      Login(phoneEntry: PhoneEntry(number: "555 0100", isLoading: true)),
      Login(
        phoneEntry: PhoneEntry(number: "555 0100"),
        codeEntry: CodeEntry(phone: "555 0100", code: "424242", secondsLeft: 42, loading: .verifying),
        stack: [.code(phone: "555 0100")]),
      Login(
        codeEntry: CodeEntry(phone: "555 0100", secondsLeft: 0, loading: .resending, error: "wrong"),
        stack: [.code(phone: "555 0100")]),
      Login(stack: [.home(phone: "555 0100")]),
    ])
  }

  // MARK: - PropertySearch

  static let flat = FakePropertyAPI.catalogue[2]

  static let propertySearchActions: [PropertySearchAction] = [
    .search(place: "Leeds"), .openLink("asynccore://property/42"),
    .results(.startLoading), .results(.endLoading(FakePropertyAPI.catalogue)), .results(.failed("offline")),
    .results(.select(number: 2)), .results(.delegate(.didSelect(propertyID: 43))),
    .detail(.startLoading), .detail(.endLoading(flat)), .detail(.failed("There is no property #9.")),
    .navigation(.push(.property(id: 42))), .navigation(.pop), .navigation(.popToRoot),
    .navigation(.replace(.results(place: "Bath"))), .navigation(.set([.results(place: "Leeds"), .property(id: 42)])),
  ]

  static func caseName(_ action: PropertySearchAction) -> String {
    switch action {
    case .search: "search"
    case .openLink: "openLink"
    case .results(.startLoading): "results.startLoading"
    case .results(.endLoading): "results.endLoading"
    case .results(.failed): "results.failed"
    case .results(.select): "results.select"
    case .results(.delegate(.didSelect)): "results.delegate.didSelect"
    case .detail(.startLoading): "detail.startLoading"
    case .detail(.endLoading): "detail.endLoading"
    case .detail(.failed): "detail.failed"
    case .navigation(let action): "navigation.\(navigationCaseName(action))"
    }
  }

  /// A value of each case of the link error a property search holds.
  static let linkErrors: [DeepLinkError] = [
    .notALink("property/42"), .unknownScheme("https"), .badPercentEncoding("100%"), .noMatchingRule(path: "map"),
    .missingParameter("place"), .invalidParameter(name: "id", value: "forty-two", expected: "an integer"),
    .rejected(path: "listing/zz", reason: "BadCode()"),
  ]

  static func caseName(_ error: DeepLinkError) -> String {
    switch error {
    case .notALink: "notALink"
    case .unknownScheme: "unknownScheme"
    case .badPercentEncoding: "badPercentEncoding"
    case .noMatchingRule: "noMatchingRule"
    case .missingParameter: "missingParameter"
    case .invalidParameter: "invalidParameter"
    case .rejected: "rejected"
    }
  }

  @Test("each PropertySearch action, and a search on each screen with each link error, read back equal from JSON")
  func propertySearch() throws {
    #expect(Set(Self.propertySearchActions.map(Self.caseName)).count == 15)
    #expect(Set(Self.linkErrors.map(Self.caseName)).count == 7)
    try Self.expectRoundTrips(Self.propertySearchActions)
    let leeds = FakePropertyAPI.catalogue.filter { $0.place == "Leeds" }
    try Self.expectRoundTrips(
      [
        PropertySearch(),
        PropertySearch(stack: [.results(place: "Leeds")], results: Results(place: "Leeds", isLoading: true)),
        PropertySearch(
          stack: [.results(place: "Leeds"), .property(id: 42)], results: Results(place: "Leeds", properties: leeds),
          detail: PropertyDetail(id: 42, property: Self.flat)),
        PropertySearch(
          stack: [.property(id: 9)], detail: PropertyDetail(id: 9, error: "There is no property #9.")),
        PropertySearch(stack: [.results(place: "Atlantis")], results: Results(place: "Atlantis", error: "none")),
      ] + Self.linkErrors.map { PropertySearch(linkError: $0) })
  }

  // MARK: - The JSON a reader sees

  @Test("the JSON names each case and field as the source does")
  func readableJSON() throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let json = { (value: any Encodable) in String(decoding: try encoder.encode(value), as: UTF8.self) }
    #expect(try json(CounterAction.setStep(5)) == #"{"setStep":{"_0":5}}"#)
    #expect(try json(LoginAction.navigation(.pop)) == #"{"navigation":{"_0":{"pop":{}}}}"#)
    #expect(
      try json(PropertySearch(stack: [.property(id: 42)], linkError: .noMatchingRule(path: "map")))
        == #"{"linkError":{"noMatchingRule":{"path":"map"}},"stack":{"routes":[{"property":{"id":42}}]}}"#)
  }

  // MARK: - Helpers

  static func navigationCaseName<Route>(_ action: NavigationAction<Route>) -> String {
    switch action {
    case .push: "push"
    case .pop: "pop"
    case .popToRoot: "popToRoot"
    case .replace: "replace"
    case .set: "set"
    }
  }

  static func expectRoundTrips<Value: Codable & Equatable>(
    _ values: [Value], sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    for value in values {
      let data = try JSONEncoder().encode(value)
      let decoded = try JSONDecoder().decode(Value.self, from: data)
      #expect(decoded == value, "\(String(decoding: data, as: UTF8.self))", sourceLocation: sourceLocation)
    }
  }
}

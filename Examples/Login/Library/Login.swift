import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreNavigation

/// The screens over the phone screen, the root.
public enum LoginRoute: Hashable, Sendable, Codable {
  /// The code sent to `phone` is asked for.
  case code(phone: String)
  /// Signed in as `phone`.
  case home(phone: String)
}

/// The Core seed's one-time-password login: a phone screen, a code screen
/// with a countdown (60 seconds unless told), and a home screen, in one state.
///
/// ```swift
/// let core = Core(
///   initialState: Login(),
///   dependencies: Dependencies { $0.otpServer = FakeOTPServer(latency: .seconds(1)) },
///   reducer: Login.reducer)
/// try await core.dispatch(.phone(.submit("555 0100")))
/// ```
///
/// Where the user is lives in ``stack``: empty shows the phone screen,
/// then `.code` and `.home`. The code screen's state, ``codeEntry``, exists
/// while its route is on top; when it goes (back, or home), its effects,
/// the countdown among them, are cancelled.
public struct Login: Sendable, Equatable, Codable {
  /// The phone screen, always there (the root).
  public var phoneEntry: PhoneEntry
  /// The code screen, while `.code` is on top of the stack.
  public var codeEntry: CodeEntry?
  /// The screens over the phone screen.
  public var stack: RouteStack<LoginRoute>
  /// Seconds the code screen's countdown runs (`Login --countdown`).
  public let countdownLength: Int

  public init(
    phoneEntry: PhoneEntry = PhoneEntry(), codeEntry: CodeEntry? = nil, stack: RouteStack<LoginRoute> = [],
    countdownLength: Int = CodeEntry.countdownSeconds
  ) {
    self.phoneEntry = phoneEntry
    self.codeEntry = codeEntry
    self.stack = stack
    self.countdownLength = countdownLength
  }

  /// Whether a request runs, on whichever screen.
  public var isLoading: Bool { phoneEntry.isLoading || codeEntry?.isLoading == true }

  /// The number signed in, once home.
  public var signedInPhone: String? {
    if case .home(let phone)? = stack.top { phone } else { nil }
  }
}

/// Everything that happens in the login: each screen's actions, and
/// navigation.
public enum LoginAction: Sendable, Equatable, Codable {
  case phone(PhoneAction)
  case code(CodeAction)
  case navigation(NavigationAction<LoginRoute>)

  public static let phoneCase = ActionCase(embed: LoginAction.phone) {
    if case .phone(let action) = $0 { action } else { nil }
  }
  public static let codeCase = ActionCase(embed: LoginAction.code) {
    if case .code(let action) = $0 { action } else { nil }
  }
  public static let navigationCase = ActionCase(embed: LoginAction.navigation) {
    if case .navigation(let action) = $0 { action } else { nil }
  }
}

extension Login {
  /// The screens composed, with the coordinator that moves between them.
  ///
  /// As a Core-seed component commits its state and a navigation in one
  /// change, the coordinator reacts to what a screen's request reported
  /// (`.codeSent`, `.codeAccepted`) by changing the route in the same
  /// action: no observer sees the new route without the state that led
  /// to it.
  public static let reducer = Reduce<Login, LoginAction>.combine([
    .scope(state: \.phoneEntry, action: LoginAction.phoneCase, child: PhoneEntry.reducer),
    Reduce.combine([
      .scope(state: \.stack, action: LoginAction.navigationCase, child: RouteStack.reducer),
      Reduce { state, action in
        switch action {
        case .phone(.codeSent(let phone)):
          state.stack.push(.code(phone: phone))
        case .code(.codeAccepted):
          if case .code(let phone)? = state.stack.top { state.stack.replaceTop(with: .home(phone: phone)) }
        default:
          break
        }
        // Removed here, inside ifLet's parent, so that ifLet cancels the
        // screen's effects: the countdown, a request still running.
        if let entry = state.codeEntry, state.stack.top != .code(phone: entry.phone) { state.codeEntry = nil }
      },
    ])
    .ifLet(\.codeEntry, action: LoginAction.codeCase, then: CodeEntry.reducer),
    Reduce { state, _ in  // a code screen for a new code route, whose countdown starts as it opens
      guard state.codeEntry == nil, case .code(let phone)? = state.stack.top else { return .none }
      state.codeEntry = CodeEntry(phone: phone, countdownLength: state.countdownLength)
      return .send(.code(.startCountdown))
    },
  ])
}

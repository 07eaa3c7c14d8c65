import AsyncCore
import AsyncCoreExampleSupport
import AsyncCoreNavigation

/// The screen for a state: a breadcrumb of the route stack, then the top
/// screen's lines. A pure function of the state, so the session runs it
/// inside the core as a subscriber's selector (ReSwift's
/// `subscribe(self) { $0.select { … } }`): the display is called only
/// when the screen changed. What the user typed (a place, a link's values)
/// is shown escaped and bounded.
///
/// ```swift
/// PropertySearchScreen(PropertySearch(stack: [.results(place: "Leeds")], results: Results(place: "Leeds", isLoading: true))).lines
/// // ["Search › Leeds", "  … searching Leeds"]
/// ```
public struct PropertySearchScreen: Sendable, Equatable {
  /// The lines, breadcrumb first.
  public var lines: [String]
  /// The line of `lines` saying why the last command did nothing (a number
  /// not in the list, a link that opens nothing), or the request's error.
  public var errorLine: String?

  /// The program's title, written once as it starts (and at the top of a
  /// terminal's screen).
  public static let title = "PropertySearch · homes to rent in \(FakePropertyAPI.places.joined(separator: ", "))"

  /// `Search › Leeds › #42`: the root, then a label per route.
  public static func breadcrumb(_ stack: RouteStack<PropertyRoute>) -> String {
    let labels = stack.routes.map { route in
      switch route {
      case .results(let place): place.escapedForTerminal()
      case .property(let id): "#\(id)"
      }
    }
    return (["Search"] + labels).joined(separator: " › ")
  }

  public init(_ state: PropertySearch) {
    var lines = [Self.breadcrumb(state.stack)]
    var errorLine: String?
    switch state.stack.top {
    case nil:
      lines.append("  Type a place (\(FakePropertyAPI.places.joined(separator: ", "))), or a link such as")
      lines.append("  asynccore://property/42. report FILE writes a bug report; q quits.")
    case .results(let searched)?:
      let results = state.results ?? Results(place: searched)
      let place = searched.escapedForTerminal()
      if results.isLoading {
        lines.append("  … searching \(place)")
      } else if !results.properties.isEmpty {
        lines.append("  \(results.properties.count) homes in \(place):")
        for (index, property) in results.properties.enumerated() {
          lines.append("  \(index + 1). \(property.title) · \(Self.facts(property))")
        }
      }
      errorLine = Self.errorLine(results.error)
      lines += [errorLine].compactMap { $0 }
      lines.append(
        results.properties.isEmpty
          ? "  Type another place, back, or q." : "  Type a number to open it, another place, back, or q.")
    case .property(let id)?:
      let detail = state.detail ?? PropertyDetail(id: id)
      if detail.isLoading {
        lines.append("  … loading #\(id)")
      } else if let property = detail.property {
        lines.append("  \(property.title), \(property.place)")
        lines.append("  \(Self.facts(property))")
        lines.append("  \(property.summary)")
      }
      errorLine = Self.errorLine(detail.error)
      lines += [errorLine].compactMap { $0 }
      lines.append("  Type back, another place, or q.")
    }
    if let error = state.linkError {
      // Its text quotes the link's values.
      let line = "  ! That link opens nothing: \("\(error)".escapedForTerminal(limit: EchoLimit.message))."
      errorLine = line
      lines.append(line)
    }
    self.lines = lines
    self.errorLine = errorLine
  }

  /// `2 bedrooms · £1,150 a month`.
  public static func facts(_ property: Property) -> String {
    let rooms =
      switch property.bedrooms {
      case 0: "studio"
      case 1: "1 bedroom"
      case let count: "\(count) bedrooms"
      }
    return "\(rooms) · £\(grouped(property.monthlyRent)) a month"
  }

  /// `1,150`: thousands separated by commas.
  public static func grouped(_ number: Int) -> String {
    let digits = String(number.magnitude)
    var result = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
      result.append(digit)
    }
    return number < 0 ? "-" + result : result
  }

  private static func errorLine(_ error: String?) -> String? {
    error.map { "  ! \($0.escapedForTerminal(limit: EchoLimit.message))" }
  }
}

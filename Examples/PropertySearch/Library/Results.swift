import AsyncCore

/// The results screen of one place: loading, then the list or an error.
///
/// ```swift
/// await store.receive(.results(.startLoading)) { $0.results?.isLoading = true }
/// ```
///
/// It knows nothing of the detail screen: choosing a property only tells
/// its parent, through ``ResultsAction/delegate(_:)``.
public struct Results: Sendable, Equatable, Codable {
  /// The place searched.
  public let place: String
  /// What the API found, in the order listed.
  public var properties: [Property]
  /// Whether the search runs: the loading line.
  public var isLoading: Bool
  /// The API's error, or a number that is not in the list.
  public var error: String?

  public init(place: String, properties: [Property] = [], isLoading: Bool = false, error: String? = nil) {
    self.place = place
    self.properties = properties
    self.isLoading = isLoading
    self.error = error
  }
}

/// What happens on the results screen: ReSwift's start-loading,
/// end-loading and error actions, and a choice.
public enum ResultsAction: Sendable, Equatable, Codable {
  /// Searches the place; sent by the coordinator as the screen opens.
  case startLoading
  /// The API found these properties.
  case endLoading([Property])
  /// The API answered with an error.
  case failed(String)
  /// The user typed the number of a row (1 for the first).
  case select(number: Int)
  /// What the screen tells its parent; it ignores them itself.
  case delegate(Delegate)

  /// What the results screen tells its parent.
  public enum Delegate: Sendable, Equatable, Codable {
    /// The user chose this property.
    case didSelect(propertyID: Int)
  }
}

extension Results {
  /// The error for a number that is not a row.
  public static func noRow(_ number: Int, count: Int) -> String {
    count == 0 ? "There is nothing to open here." : "There is no \(number) in the list: type 1 to \(count)."
  }

  /// The results screen. Its search needs no cancel id: the coordinator's
  /// `ifLet` cancels it when the screen leaves.
  public static let reducer = Reduce<Results, ResultsAction> { state, action in
    switch action {
    case .startLoading:
      state.isLoading = true
      state.error = nil
      return .run { [place = state.place] send in
        await send(.endLoading(try await send.dependencies.propertyAPI.search(place: place)))
      } catch: { error, send in
        await send(.failed("\(error)"))
      }
    case .endLoading(let properties):
      state.isLoading = false
      state.properties = properties
      return .none
    case .failed(let message):
      state.isLoading = false
      state.error = message
      return .none
    case .select(let number):
      guard state.properties.indices.contains(number - 1) else {
        state.error = noRow(number, count: state.properties.count)
        return .none
      }
      state.error = nil
      return .send(.delegate(.didSelect(propertyID: state.properties[number - 1].id)))
    case .delegate:
      return .none
    }
  }
}

import AsyncCore

/// A cart: what each entity holds in the stores' tests.
package struct Cart: Codable, Sendable, Equatable {
  package var items: [String] = []

  package init(items: [String] = []) {
    self.items = items
  }
}

package enum CartAction: Codable, Sendable, Equatable {
  case add(String)
  case clear
}

package let cartReducer = Reduce<Cart, CartAction> { state, action in
  switch action {
  case .add(let item): state.items.append(item)
  case .clear: state.items = []
  }
  return .none
}

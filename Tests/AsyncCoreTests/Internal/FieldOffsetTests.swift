import Testing

@testable import AsyncCore

/// The one helper that reads and writes a field through its offset, which
/// selectors, `StateLens` and `ReadLens` share.
@Suite("Reading a field by its offset")
struct FieldOffsetTests {
  struct Inner: Equatable {
    var flag = false
    var name = "inner"
  }

  struct Root {
    var count = 7
    var title = "title"
    var inner = Inner()
    var computed: Int { count * 2 }
    var reference = Box()
  }

  final class Box {
    var value = 3
  }

  struct Empty {}

  @Test("a stored property, nested or not, is read at its offset")
  func readsStoredProperties() {
    let root = Root(count: 42, title: "hello", inner: Inner(flag: true, name: "deep"))
    #expect(FieldOffset(\Root.count)?.read(root) { $0 } == 42)
    #expect(FieldOffset(\Root.title)?.read(root) { $0 } == "hello")
    #expect(FieldOffset(\Root.inner.name)?.read(root) { $0 } == "deep")
    #expect(FieldOffset(\Root.inner)?.read(root) { $0 } == Inner(flag: true, name: "deep"))
  }

  @Test("a stored property is changed in place, and nothing beside it")
  func modifiesInPlace() throws {
    var root = Root()
    let name = try #require(FieldOffset(\Root.inner.name))
    let length = name.modify(&root) { value -> Int in
      value += "-changed"
      return value.count
    }
    #expect(length == 13)
    #expect(root.inner.name == "inner-changed")
    #expect(root.count == 7 && root.title == "title" && root.inner.flag == false)
  }

  @Test("a computed property, a path through a class, and an empty root have no offset")
  func noOffsetWhereNoInlineStorage() {
    #expect(FieldOffset(\Root.computed) == nil)
    #expect(FieldOffset(\Root.reference.value) == nil)
    #expect(FieldOffset(\Empty.self) == nil)
  }

  @Test("selectors and lenses read the same values through the offset and through the key path")
  func selectorsAndLensesAgree() {
    var root = Root(count: 5, title: "t", inner: Inner(flag: true, name: "n"))
    #expect(selector(\Root.inner.name)(root) == "n")
    #expect(selector(\Root.computed)(root) == 10)
    #expect(ReadLens(\Root.title).read(root) { $0 } == "t")
    #expect(ReadLens(\Root.computed).read(root) { $0 } == 10)
    let lens = StateLens(\Root.count)
    lens.modify(&root) { $0 += 1 }
    #expect(root.count == 6)
    #expect(lens.get(&root) == 6)
    #expect(StateLens(\Root.count).field != nil)
    #expect(ReadLens(\Root.computed).field == nil)
  }
}

// Until AsyncCoreSQLite is merged: the durable rows are not measured.

private let pending = "`SQLiteEntityStore` (AsyncCoreSQLite) is not in this build yet"

func durableEntityRounds(plan: EntityBenchPlan) async -> EntityDurableRounds {
  EntityDurableRounds(results: [], note: "The durable rows did not run: \(pending).") { report, _, _ in
    report.notMeasured(
      "entities on SQLite, \(grouped(plan.ids)) ids, one `dispatch` each", requirement: "≥ 0.5 × SQLite alone",
      why: pending)
  }
}

func durableEntityMemory(plan: EntityBenchPlan) async -> EntityMemoryRows {
  EntityMemoryRows(rows: [], note: "") { _ in }
}

func passiveEntityMemory(plan: EntityBenchPlan) async -> EntityMemoryRows {
  EntityMemoryRows(rows: [], note: "") { report in
    report.notMeasured("memory per passive entity", requirement: "≤ 64 B resident", why: pending)
  }
}

func entityActivation(plan: EntityBenchPlan, report: Report) async {
  report.notMeasured(
    "first `dispatch` to a passive entity (a snapshot and 10 records), p50", requirement: "≤ 2 × a raw read + decode",
    why: pending)
}

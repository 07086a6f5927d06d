test --diagnostics type=hint tests/golden/testrun/trees/checked

test --timeout soon tests/golden/testrun/trees/basic

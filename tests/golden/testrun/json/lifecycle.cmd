test --json tests/golden/testrun/trees/lifecycle/lifecycle_test.bt

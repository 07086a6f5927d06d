test --json tests/golden/testrun/trees/basic

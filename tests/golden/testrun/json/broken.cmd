test --json tests/golden/testrun/trees/broken

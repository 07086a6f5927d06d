test --filter Increment tests/golden/testrun/trees/basic

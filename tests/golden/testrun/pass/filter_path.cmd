test --filter arith tests/golden/testrun/trees/basic

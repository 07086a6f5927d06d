test --doc-examples tests/golden/testrun/trees/docs

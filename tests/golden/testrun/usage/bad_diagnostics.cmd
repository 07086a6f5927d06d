test --diagnostics colour=off tests/golden/testrun/trees/basic

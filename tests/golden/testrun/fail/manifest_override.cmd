test --diagnostics type=off tests/golden/testrun/trees/manifest
